/*
 * dist_rw_death — a cross-node reader-writer lock whose holder dies.
 *
 * --writer-died: the writer dies holding it; the next writer must keep readers out.
 *
 * A writer holds the rwlock's W word and has set WRITER (bit 63) in its R word
 * (core/global/rwlock.c). A writer that dies there leaves WRITER set. The next writer
 * gets W by recovery (RDLM_OWNER_DEAD) and adds WRITER to R: an add of bit 63 to a
 * word that has it clears it. Before rwlock.c looked at the bit it found, R then said
 * "no writer" while that writer was inside, and a reader on another node registered
 * and went in beside it.
 *
 * 3 processes forked by the parent join one context (standalone rendezvous on
 * 127.0.0.1, UCX TCP) on 2 virtual nodes: ranks 0 and 1 on node 0, rank 2 on node 1,
 * with leases at the job's own authority (RDLM_JOB_AUTHORITY=1, TTL TTL_MS). Rank 1,
 * the victim, takes rwlock "rw" exclusive; rank 0 (same node) asks for it exclusive,
 * and 300 ms later the victim kills itself (SIGKILL) holding it. Rank 0 gets it
 * (RDLM_OWNER_DEAD) and holds it HOLD_MS; once it is inside, rank 2 asks for it shared
 * and must get it only after rank 0 left. The parent checks: no reader inside beside
 * the writer, the statuses (rank 0 RDLM_OWNER_DEAD, rank 2 RDLM_OK, both releases
 * RDLM_OK), rank 0's token above the victim's. Either cross-node lock protocol
 * (RDLM_LOCK_AM=0: the remote-atomic queue).
 *
 * --reader-died: the victim takes "rw" shared and dies holding it, 300 ms after rank 2
 * (the other node) asked for it exclusive; rank 0, the victim's node-mate, stays idle.
 * The victim's node stays registered as a reader in R while its count of readers
 * counts the dead hold: rank 2 must get the lock (RDLM_OK: a dead reader is passed
 * over) once a process of the victim's node saw the death (core/global/rwlock.c,
 * rdlm_global_rw_sweep). Before, rank 2 waited until its timeout.
 *
 * --reader-died --one-node: the same with the three processes on one node (rank 2,
 * the writer, is then the victim's node-mate too). The writer got the local gate (the
 * dead hold was reset) but waited for good for the node's registration in R: the
 * repair did not run in a context of one node (an outside user's program, mpirun -np 2
 * on one machine, every run).
 *
 * --reader-died-join (run with RDLM_COHORT_BOUND=1): the same, but rank 0 reads once
 * before (so the node's joins reach the bound) and again 100 ms after the death, while
 * rank 2 waits for the readers to drain: its join re-checks R, finds WRITER and waits
 * behind the writer holding the gate the sweep needs. It must repair the count itself
 * first (dist_rw_reg.pml, code_bound_recheck_stalls); then rank 2 gets in, and rank 0
 * reads after it (not beside it).
 *
 * --reader-died-xy: the same as --reader-died, but rank 0, the victim's node-mate, asks
 * for it exclusive too, 100 ms after rank 2 (which then holds W and waits for the
 * victim's node to drain): rank 0 holds its node's gate in its local drain when the
 * victim dies, then waits in W behind rank 2, still holding the gate the sweep's
 * repair needs. It marks that wait (RDLM_NR_WAITING) so that the sweep repairs without
 * the gate; then rank 2 gets in, and rank 0 after it (not beside it), with a larger
 * token. Before, rank 2 waited until its timeout (dist_rw_reg.pml,
 * code_808e05e_xy_writers_stall).
 *
 * Exit: 0 pass, 1 fail.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdlm.h>

#include "procs.h"

#define NPROCS 3
#define VICTIM 1
#define WRITER 0
#define READER 2
#define TTL_MS "2000"
#define HOLD_MS 1500
#define ACQUIRE_TIMEOUT_NS 30000000000ull
#define PARENT_LIMIT_S 90.0

static int reader_died; /* --reader-died, --reader-died-join */
static int one_node;    /* --one-node */
static int mate_joins;  /* --reader-died-join */
static int mate_writes; /* --reader-died-xy */

/* What the parent reads. */
static struct shared {
    atomic_int writer_inside, overlaps, writer_done;
    int acquired[NPROCS], released[NPROCS];
    uint64_t token[NPROCS];
} * sh;

#define FAIL(...) procs_fail("dist_rw_death", rank, __VA_ARGS__)

/* The victim: take it exclusive (shared: --reader-died), let the writer queue, die
 * holding it. */
static void victim(unsigned rank, rdlm_ctx_h ctx, rdlm_rwlock_h rw)
{
    sh->acquired[rank] =
        reader_died ? rdlm_rwlock_read_acquire(rw, ACQUIRE_TIMEOUT_NS)
                    : rdlm_rwlock_write_acquire(rw, ACQUIRE_TIMEOUT_NS, &sh->token[rank]);
    if (sh->acquired[rank] != RDLM_OK)
        FAIL("acquire: %s", rdlm_status_str(sh->acquired[rank]));
    if (rdlm_ctx_barrier(ctx) != RDLM_OK ||
        (mate_joins && rdlm_ctx_barrier(ctx) != RDLM_OK))
        FAIL("barrier failed");
    usleep(300000); /* the writer queues meanwhile */
    raise(SIGKILL);
}

/* Rank 0 (rank 2: --reader-died; both: --reader-died-xy, rank 0 100 ms later): take
 * it exclusive after the victim, hold it HOLD_MS. */
static void writer(unsigned rank, rdlm_ctx_h ctx, rdlm_rwlock_h rw)
{
    if (rdlm_ctx_barrier(ctx) != RDLM_OK ||
        (mate_joins && rdlm_ctx_barrier(ctx) != RDLM_OK))
        FAIL("barrier failed");
    if (mate_writes && rank == WRITER)
        usleep(100000); /* rank 2 holds W and drains meanwhile */
    sh->acquired[rank] =
        rdlm_rwlock_write_acquire(rw, ACQUIRE_TIMEOUT_NS, &sh->token[rank]);
    printf("writer %u: %s, token %#llx\n", rank, rdlm_status_name(sh->acquired[rank]),
           (unsigned long long)sh->token[rank]);
    if (sh->acquired[rank] >= 0) {
        if (atomic_fetch_add(&sh->writer_inside, 1) != 0)
            atomic_fetch_add(&sh->overlaps, 1);
        usleep(HOLD_MS * 1000);
        atomic_fetch_sub(&sh->writer_inside, 1);
        sh->released[rank] = rdlm_rwlock_write_release(rw);
    }
    atomic_store(&sh->writer_done, 1);
}

/* Rank 2: once the writer is inside, take it shared; it must not get in beside it.
 * --reader-died: rank 0, idle until the writer is done; --reader-died-join: rank 0,
 * reads once before the writer starts and once 100 ms after the victim's death. */
static void reader(unsigned rank, rdlm_ctx_h ctx, rdlm_rwlock_h rw)
{
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (mate_joins) {
        if (rdlm_rwlock_read_acquire(rw, ACQUIRE_TIMEOUT_NS) != RDLM_OK ||
            rdlm_rwlock_read_release(rw) != RDLM_OK)
            FAIL("the first read failed");
        if (rdlm_ctx_barrier(ctx) != RDLM_OK)
            FAIL("barrier failed");
        usleep(400000); /* the victim died 100 ms ago, the writer drains */
    } else if (reader_died) {
        for (int i = 0; i < (int)PARENT_LIMIT_S * 100 && !atomic_load(&sh->writer_done);
             i++)
            usleep(10000);
        return;
    }
    for (int i = 0; !mate_joins && i < (int)PARENT_LIMIT_S * 100 &&
                    !atomic_load(&sh->writer_inside) && !atomic_load(&sh->writer_done);
         i++)
        usleep(10000);
    sh->acquired[rank] = rdlm_rwlock_read_acquire(rw, ACQUIRE_TIMEOUT_NS);
    if (atomic_load(&sh->writer_inside))
        atomic_fetch_add(&sh->overlaps, 1);
    printf("reader: %s%s\n", rdlm_status_name(sh->acquired[rank]),
           atomic_load(&sh->writer_inside) ? ", beside the writer" : "");
    if (sh->acquired[rank] >= 0)
        sh->released[rank] = rdlm_rwlock_read_release(rw);
}

static int child(unsigned rank, const char *rendezvous)
{
    rdlm_ctx_dist_info_t di;
    rdlm_rwlock_h rw;
    rdlm_ctx_h ctx;

    if (!one_node) {
        ctx = procs_join_two_nodes("dist_rw_death", rank, NPROCS, rendezvous, VICTIM, &di);
    } else if (procs_join(rank, NPROCS, rendezvous, &ctx) != RDLM_OK ||
               rdlm_ctx_dist_info(ctx, &di) != RDLM_OK || di.nodes != 1) {
        FAIL("no context of one node");
    }

    if (rdlm_rwlock_open(ctx, "rw", &rw) != RDLM_OK)
        FAIL("rdlm_rwlock_open failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        FAIL("barrier failed");
    if (rank == VICTIM)
        victim(rank, ctx, rw);
    else if (rank == (reader_died ? READER : WRITER) || mate_writes)
        writer(rank, ctx, rw);
    else
        reader(rank, ctx, rw);
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* --reader-died: 1 if the writer got it (RDLM_OK) and gave it back (and with
 * --reader-died-join rank 0 read after it, not beside it; with --reader-died-xy rank 0
 * wrote after it, with a larger token). */
static int checked_reader_died(void)
{
    if (mate_writes &&
        (atomic_load(&sh->overlaps) != 0 || sh->acquired[WRITER] != RDLM_OK ||
         sh->released[WRITER] != RDLM_OK || sh->token[WRITER] <= sh->token[READER])) {
        fprintf(
            stderr, "dist_rw_death: rank 0 wrote %s / %s with token %#llx after %#llx%s\n",
            rdlm_status_name(sh->acquired[WRITER]), rdlm_status_name(sh->released[WRITER]),
            (unsigned long long)sh->token[WRITER], (unsigned long long)sh->token[READER],
            atomic_load(&sh->overlaps) ? ", beside rank 2" : "");
        return 0;
    }
    if (mate_joins && (atomic_load(&sh->overlaps) != 0 || sh->acquired[WRITER] != RDLM_OK ||
                       sh->released[WRITER] != RDLM_OK)) {
        fprintf(
            stderr, "dist_rw_death: rank 0 read %s / %s, %s\n",
            rdlm_status_name(sh->acquired[WRITER]), rdlm_status_name(sh->released[WRITER]),
            atomic_load(&sh->overlaps) ? "beside the writer" : "want RDLM_OK / RDLM_OK");
        return 0;
    }
    if (sh->acquired[READER] == RDLM_OK && sh->released[READER] == RDLM_OK &&
        sh->token[READER] != 0)
        return 1;
    fprintf(stderr, "dist_rw_death: writer %s / %s (want RDLM_OK / RDLM_OK), token %#llx\n",
            rdlm_status_name(sh->acquired[READER]), rdlm_status_name(sh->released[READER]),
            (unsigned long long)sh->token[READER]);
    return 0;
}

/* 1 if the run went as it must (the file's comment). */
static int checked(void)
{
    int ok = 1;

    if (reader_died)
        return checked_reader_died();
    if (atomic_load(&sh->overlaps) != 0) {
        fprintf(stderr, "dist_rw_death: a reader got in beside the writer\n");
        ok = 0;
    }
    if (sh->acquired[WRITER] != RDLM_OWNER_DEAD || sh->released[WRITER] != RDLM_OK ||
        sh->acquired[READER] != RDLM_OK || sh->released[READER] != RDLM_OK) {
        fprintf(
            stderr,
            "dist_rw_death: writer %s / %s (want RDLM_OWNER_DEAD / RDLM_OK), "
            "reader %s / %s (want RDLM_OK / RDLM_OK)\n",
            rdlm_status_name(sh->acquired[WRITER]), rdlm_status_name(sh->released[WRITER]),
            rdlm_status_name(sh->acquired[READER]), rdlm_status_name(sh->released[READER]));
        ok = 0;
    }
    if (sh->token[WRITER] <= sh->token[VICTIM]) {
        fprintf(
            stderr, "dist_rw_death: writer's token %#llx not above the victim's %#llx\n",
            (unsigned long long)sh->token[WRITER], (unsigned long long)sh->token[VICTIM]);
        ok = 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    unsigned rank = NPROCS; /* the parent, for FAIL */
    int failed;

    one_node = argc == 3 && strcmp(argv[2], "--one-node") == 0;
    if ((argc != 2 && !one_node) ||
        (strcmp(argv[1], "--writer-died") != 0 && strcmp(argv[1], "--reader-died") != 0 &&
         strcmp(argv[1], "--reader-died-join") != 0 &&
         strcmp(argv[1], "--reader-died-xy") != 0) ||
        (one_node && strcmp(argv[1], "--reader-died") != 0))
        FAIL("usage: dist_rw_death --writer-died|--reader-died [--one-node]|"
             "--reader-died-join|--reader-died-xy");
    mate_joins = strcmp(argv[1], "--reader-died-join") == 0;
    mate_writes = strcmp(argv[1], "--reader-died-xy") == 0;
    reader_died = mate_joins || mate_writes || strcmp(argv[1], "--reader-died") == 0;
    setvbuf(stdout, NULL, _IONBF, 0); /* children end with _exit */
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("no shared memory");
    failed = !procs_run_leased("t-rw-death", one_node ? "1" : "2", TTL_MS, NPROCS, child,
                               VICTIM, PARENT_LIMIT_S, "dist_rw_death");
    failed |= !checked();
    procs_remove_segments("t-rw-death");
    printf("dist_rw_death %s%s: %s\n", argv[1], one_node ? " --one-node" : "",
           failed ? "FAILED" : "passed");
    return failed;
}
