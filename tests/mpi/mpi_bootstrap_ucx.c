/*
 * The MPI bootstrap driving a real transport, under mpirun (label: mpi).
 *
 * Default mode: every rank opens the UCX transport with rdlm_mpi_bootstrap_init
 * (MPI_COMM_WORLD), rank 0 registers a region, its packed key is allgathered through
 * the bootstrap, and then
 *
 *   mpi_env_reaches_every_rank               UCX_TLS as given by --expect-ucx-tls,
 *                                            and the transport's target-progress
 *                                            report as --expect-target-progress
 *   fadd_hammer_exact_and_distinct           ranks x iters fetch-adds on one word:
 *                                            final value exact, the old values
 *                                            (gathered through the bootstrap on
 *                                            rank 0) a permutation of 0..total-1
 *   cswap_increment_no_lost_update           CAS-retry increments: final value exact
 *   put_get_round_trip                       per-rank slots, read back by every rank
 *
 * Over UCX_TLS=tcp,self the atomics on rank 0's word run inside rank 0's progress, so
 * the bootstrap collectives rank 0 waits in must call the idle callback: without it
 * this test deadlocks (and then times out).
 *
 * --peer-skips-barrier: rank 1 does not enter one barrier. Every other rank must get
 * RDLM_ERR_TIMEOUT within the timeout (plus slack), having called the idle callback
 * meanwhile, and a later collective must be refused with the same status (the
 * bootstrap is out of step). Then rank 1 joins late, once every other rank gave up,
 * so the abandoned barrier completes and fini frees cleanly. With --idle-says-dead
 * the others' idle callback says after 20 calls that a process is dead: the barrier
 * must end at once with RDLM_ERR_PEER_DEAD (well before the timeout), and so must the
 * next collective.
 *
 * --out-of-step: rank 1 enters a barrier where every other rank enters an allgather of
 * 64 bytes per rank (as a rank stopped past its lease and resumed does in
 * rdlm_ctx_destroy). Open MPI reports the truncated message of that mismatch to
 * MPI_COMM_WORLD's error handler, which aborted the job (mpirun exited 16); now every
 * rank's call must return, with any status (which one is MPI's to say), and
 * MPI_COMM_WORLD's error handler must still be MPI_ERRORS_ARE_FATAL after it.
 *
 * Any failure: a message naming the rank, then MPI_Abort (never a hang in the others).
 * Exit 77 on every rank if the UCX backend is not compiled in or not usable here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "bootstrap_mpi.h"
#include "clock.h"
#include "tl_checks.h"
#include "transport.h"

#define SKIP_CODE 77

/* Offsets in rank 0's region. */
#define OFF_FADD 0
#define OFF_CSWAP 64
#define OFF_SLOTS 4096
#define MAX_RANKS 64
#define REGION_BYTES (OFF_SLOTS + MAX_RANKS * TL_CHECKS_SLOT_BYTES)

typedef struct opts {
    unsigned iters, timeout_sec;
    const char *expect_tls;     /* NULL: not checked */
    int expect_target_progress; /* -1: not checked */
    int peer_skips_barrier;
    int idle_says_dead; /* with peer_skips_barrier: idle says a process is dead */
    int out_of_step;
} opts_t;

static void die(void) __attribute__((noreturn));

/* A failing rank aborts the whole job: the others never hang. */
static void die(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* not reached */
}

/* fail() and CHECK_OK() outside the shared checks: the same FAIL line (rank set in
 * main). */
static tl_checks_t g_fail = {.prog = "mpi_bootstrap_ucx", .die = die};
#define fail(...) tl_checks_fail(&g_fail, __VA_ARGS__)
#define CHECK_OK(call) TL_CHECK_OK(&g_fail, call)

static void check_env(const tl_checks_t *t, const opts_t *o)
{
    /* rdlm's UCX reads RDLM_UCX_TLS before UCX_TLS (the tests set the former under
     * MPICH, whose own UCX hangs in MPI_Finalize with UCX_TLS=tcp,self). */
    const char *tls =
        getenv("RDLM_UCX_TLS") != NULL ? getenv("RDLM_UCX_TLS") : getenv("UCX_TLS");

    if (o->expect_tls != NULL && (tls == NULL || strcmp(tls, o->expect_tls) != 0))
        fail("RDLM_UCX_TLS/UCX_TLS is '%s' in this rank, expected '%s': mpirun did not "
             "forward it (use -x UCX_TLS)",
             tls ? tls : "(unset)", o->expect_tls);
    if (o->expect_target_progress >= 0 &&
        t->caps.amo_needs_target_progress != o->expect_target_progress)
        fail("transport reports amo_needs_target_progress=%d, expected %d (UCX_TLS=%s)",
             t->caps.amo_needs_target_progress, o->expect_target_progress,
             tls ? tls : "(unset)");
    tl_checks_barrier(t);
    if (t->rank == 0)
        printf("PASS mpi_env_reaches_every_rank (UCX_TLS=%s, needs_target_progress=%d)\n",
               tls ? tls : "(unset)", t->caps.amo_needs_target_progress);
}

static int run_transport(const opts_t *o, unsigned rank, unsigned n)
{
    tl_checks_t t = {.rank = rank,
                     .n = n,
                     .iters = o->iters,
                     .off_fadd = OFF_FADD,
                     .off_cswap = OFF_CSWAP,
                     .off_slots = OFF_SLOTS,
                     .prog = "mpi_bootstrap_ucx",
                     .die = die};
    rdlm_tl_bootstrap_t bs;
    rdlm_tl_params_t tp = {.thread_mode = RDLM_TL_THREAD_SINGLE};
    unsigned char *keys, mykey[RDLM_TL_RKEY_MAX] = {0};
    size_t klen = 0;
    rdlm_status_t st;

    if (n > MAX_RANKS)
        fail("at most %d ranks", MAX_RANKS);
    t.deadline = rdlm_clock_deadline((uint64_t)o->timeout_sec * 1000000000u);
    CHECK_OK(rdlm_mpi_bootstrap_init(MPI_COMM_WORLD, &bs));
    CHECK_OK(rdlm_mpi_bootstrap_set_timeout(&bs, o->timeout_sec * 1000));
    if (bs.rank != rank || bs.size != n)
        fail("bootstrap rank/size %u/%u, MPI says %u/%u", bs.rank, bs.size, rank, n);
    t.b = &bs;
    tp.bootstrap = &bs;
    st = rdlm_tl_open("ucx", &tp, &t.ctx);
    if (st == RDLM_ERR_UNSUPPORTED || st == RDLM_ERR_NOT_FOUND) {
        if (rank == 0)
            printf("SKIP: the ucx backend is not usable here (%s)\n", rdlm_status_name(st));
        rdlm_mpi_bootstrap_fini(&bs);
        MPI_Finalize();
        return SKIP_CODE;
    }
    CHECK_OK(st);
    t.idle = (rdlm_tl_idle_t){rdlm_tl_progress_idle, t.ctx};
    CHECK_OK(t.ctx->setup->query(t.ctx, &t.caps));
    if (t.caps.rank != rank || t.caps.size != n)
        fail("query: rank/size %u/%u, expected %u/%u", t.caps.rank, t.caps.size, rank, n);
    if (!(t.caps.flags & RDLM_TL_CAP_AMO64))
        fail("the ucx backend reports no 64-bit atomics");
    if (rank == 0)
        printf("caps: backend=%s ranks=%u atomics=%s needs_target_progress=%d\n",
               t.caps.backend, n, rdlm_tl_atomic_domain_str(t.caps.atomic_domain),
               t.caps.amo_needs_target_progress);
    check_env(&t, o);

    if (rank == 0) {
        CHECK_OK(t.ctx->mem->reg(t.ctx, NULL, REGION_BYTES, &t.mem));
        CHECK_OK(t.ctx->mem->rkey_pack(t.ctx, t.mem, mykey, sizeof(mykey), &klen));
    }
    keys = malloc((size_t)RDLM_TL_RKEY_MAX * n);
    if (keys == NULL)
        fail("out of memory");
    CHECK_OK(bs.allgather(bs.arg, mykey, keys, RDLM_TL_RKEY_MAX, &t.idle));
    CHECK_OK(t.ctx->mem->rkey_unpack(t.ctx, 0, keys, RDLM_TL_RKEY_MAX, &t.rk));
    t.active = rank != 0 || (t.caps.flags & RDLM_TL_CAP_LOOPBACK);
    t.writers = (t.caps.flags & RDLM_TL_CAP_LOOPBACK) ? n : n - 1;

    tl_checks_fadd_hammer(&t, o->iters ? o->iters : 1);
    tl_checks_cswap_increment(&t);
    tl_checks_put_get(&t);

    CHECK_OK(t.ctx->mem->rkey_release(t.ctx, t.rk));
    tl_checks_barrier(&t); /* nobody touches rank 0's region any more */
    if (rank == 0)
        CHECK_OK(t.ctx->mem->dereg(t.ctx, t.mem));
    t.ctx->setup->destroy(t.ctx); /* collective over the MPI bootstrap */
    rdlm_mpi_bootstrap_fini(&bs);
    free(keys);
    if (rank == 0)
        printf("mpi_bootstrap_ucx x%u: all ranks passed\n", n);
    return 0;
}

/* ---- --peer-skips-barrier -------------------------------------------------------------
 */

typedef struct idle_probe {
    uint64_t calls, last_ns, max_gap_ns;
} idle_probe_t;

static int idle_probe(void *arg)
{
    idle_probe_t *p = arg;
    uint64_t now = rdlm_clock_now_ns();

    if (p->calls > 0 && now - p->last_ns > p->max_gap_ns)
        p->max_gap_ns = now - p->last_ns;
    p->last_ns = now;
    p->calls++;
    return 0;
}

/* --idle-says-dead: a process is dead from the 20th call on. */
static int idle_dead(void *arg)
{
    idle_probe_t *p = arg;

    idle_probe(p);
    return p->calls >= 20 ? -1 : 0;
}

static int run_skip(const opts_t *o, unsigned rank, unsigned n)
{
    const uint32_t timeout_ms = o->timeout_sec * 1000;
    rdlm_tl_bootstrap_t bs;
    idle_probe_t probe = {0};
    rdlm_tl_idle_t idle = {idle_probe, &probe};
    rdlm_tl_idle_t waiting = {o->idle_says_dead ? idle_dead : idle_probe, &probe};
    rdlm_status_t want = o->idle_says_dead ? RDLM_ERR_PEER_DEAD : RDLM_ERR_TIMEOUT;
    uint64_t t0, waited_ms;
    rdlm_status_t st;
    int token = 0;

    if (n < 2)
        fail("--peer-skips-barrier needs at least 2 ranks");
    CHECK_OK(rdlm_mpi_bootstrap_init(MPI_COMM_WORLD, &bs));
    CHECK_OK(rdlm_mpi_bootstrap_set_timeout(&bs, timeout_ms));
    CHECK_OK(bs.barrier(bs.arg, &idle)); /* everyone is here */
    if (rank != 1) {
        t0 = rdlm_clock_now_ns();
        probe.calls = 0;
        st = bs.barrier(bs.arg, &waiting);
        waited_ms = (rdlm_clock_now_ns() - t0) / 1000000;
        if (st != want)
            fail("barrier without rank 1 returned %s, expected %s", rdlm_status_name(st),
                 rdlm_status_name(want));
        if (o->idle_says_dead ? waited_ms > timeout_ms / 2
                              : waited_ms + 5 < timeout_ms || waited_ms > timeout_ms + 5000)
            fail("barrier gave up after %" PRIu64 " ms, timeout %u ms", waited_ms,
                 (unsigned)timeout_ms);
        if (probe.calls == 0 || probe.max_gap_ns > 100 * 1000000u)
            fail("idle callback: %" PRIu64 " calls, max gap %.3f ms while waiting",
                 probe.calls, (double)probe.max_gap_ns / 1e6);
        st = bs.allgather(bs.arg, &token, &token, 0, &idle);
        if (st != want)
            fail("a collective after the failed one returned %s, expected %s",
                 rdlm_status_name(st), rdlm_status_name(want));
        printf("PASS mpi_bootstrap_peer_missing (rank %u: %s after %" PRIu64 " ms, idle "
               "called %" PRIu64 " times, max gap %.3f ms)\n",
               rank, rdlm_status_name(want), waited_ms, probe.calls,
               (double)probe.max_gap_ns / 1e6);
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
        /* Join late, once every other rank has given up: the abandoned barrier
         * completes. Not after rank 0 alone: a rank descheduled before its 20th idle
         * call then saw the barrier complete (RDLM_OK; 1 run in 3 under MPICH on a
         * loaded machine). Wait napping, not in MPI_Recv, which spins under MPICH and
         * takes the CPU from the ranks whose idle gaps are measured. */
        for (unsigned got = 0; got + 1 < n;) {
            int flag = 0;
            struct timespec nap = {0, 1000000};

            MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag) {
                nanosleep(&nap, NULL);
                continue;
            }
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            got++;
        }
        CHECK_OK(bs.barrier(bs.arg, &idle));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the test's own: drives MPI progress everywhere */
    rdlm_mpi_bootstrap_fini(&bs);
    return 0;
}

static int run_out_of_step(const opts_t *o, unsigned rank, unsigned n)
{
    rdlm_tl_bootstrap_t bs;
    idle_probe_t probe = {0};
    rdlm_tl_idle_t idle = {idle_probe, &probe};
    unsigned char block[64] = {0}, all[64 * MAX_RANKS];
    MPI_Errhandler world;
    rdlm_status_t st;
    int same;

    if (n < 2 || n > MAX_RANKS)
        fail("--out-of-step needs 2..%d ranks", MAX_RANKS);
    CHECK_OK(rdlm_mpi_bootstrap_init(MPI_COMM_WORLD, &bs));
    CHECK_OK(rdlm_mpi_bootstrap_set_timeout(&bs, o->timeout_sec * 1000));
    CHECK_OK(bs.barrier(bs.arg, &idle)); /* everyone is here */
    st = rank == 1 ? bs.barrier(bs.arg, &idle)
                   : bs.allgather(bs.arg, block, all, sizeof(block), &idle);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    same = world == MPI_ERRORS_ARE_FATAL;
    MPI_Errhandler_free(&world);
    if (!same)
        fail("MPI_COMM_WORLD's error handler is not MPI_ERRORS_ARE_FATAL after the "
             "bootstrap's collective");
    printf("PASS mpi_bootstrap_out_of_step (rank %u: %s returned %s)\n", rank,
           rank == 1 ? "barrier" : "allgather", rdlm_status_name(st));
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    rdlm_mpi_bootstrap_fini(&bs);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: mpi_bootstrap_ucx [--iters N] [--timeout-sec S] "
                    "[--expect-ucx-tls VALUE] [--expect-target-progress 0|1]\n"
                    "       mpi_bootstrap_ucx --peer-skips-barrier [--idle-says-dead] "
                    "[--timeout-sec S]\n"
                    "       mpi_bootstrap_ucx --out-of-step [--timeout-sec S]\n");
    fflush(stderr);
}

int main(int argc, char **argv)
{
    opts_t o = {.iters = 1000, .timeout_sec = 100, .expect_target_progress = -1};
    int i, rank, size, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_fail.rank = (unsigned)rank;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            o.iters = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--timeout-sec") == 0 && i + 1 < argc)
            o.timeout_sec = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--expect-ucx-tls") == 0 && i + 1 < argc)
            o.expect_tls = argv[++i];
        else if (strcmp(argv[i], "--expect-target-progress") == 0 && i + 1 < argc)
            o.expect_target_progress = atoi(argv[++i]);
        else if (strcmp(argv[i], "--peer-skips-barrier") == 0)
            o.peer_skips_barrier = 1;
        else if (strcmp(argv[i], "--idle-says-dead") == 0)
            o.idle_says_dead = 1;
        else if (strcmp(argv[i], "--out-of-step") == 0)
            o.out_of_step = 1;
        else {
            if (rank == 0)
                usage();
            MPI_Abort(MPI_COMM_WORLD, 2); /* every rank: nobody waits for the others */
        }
    }
    if (o.timeout_sec == 0 || o.timeout_sec > 4000000)
        fail("--timeout-sec must be 1..4000000");
    rc = o.out_of_step          ? run_out_of_step(&o, (unsigned)rank, (unsigned)size)
         : o.peer_skips_barrier ? run_skip(&o, (unsigned)rank, (unsigned)size)
                                : run_transport(&o, (unsigned)rank, (unsigned)size);
    if (rc == SKIP_CODE)
        return SKIP_CODE; /* MPI already finalized */
    MPI_Finalize();
    return rc;
}
