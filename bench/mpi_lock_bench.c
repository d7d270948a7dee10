/*
 * rdlm-mpi-lock-bench: rdlm's cross-node exclusive lock against its baselines, in
 * one MPI job, on the same ranks, in alternating rounds (A B C ..., then ... C B A).
 * Run by rdlm-bench (-b dist-lock, dist-contended, dist-sweep, dist-counter); by a user
 * like osu_latency (one machine: 2 virtual nodes, osc sm,pt2pt chosen by itself):
 *
 *   mpirun -np 2 rdlm-mpi-lock-bench [--mode M] [-i N] [-x N] [-m [MIN:]MAX] [-f]
 *
 * or as rdlm-bench runs it, 2 virtual nodes over TCP:
 *
 *   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 4 \
 *     --oversubscribe --bind-to none --mca pml ob1 --mca btl self,tcp --mca osc pt2pt \
 *     -x UCX_TLS=tcp,self -x RDLM_VIRTUAL_NODES=2 \
 *     rdlm-mpi-lock-bench --mode uncontended --result-lines [--impls LIST] [-r N] [-t MS]
 *
 * Output (rank 0, mpi_output.h): '#' header lines, then one row per implementation
 * and size (-m), median over rounds (-f: min, max, percentiles, ops); --csv, --json.
 *
 * --impls: a comma-separated subset of the mode's implementations, alternated in that
 * order (default: all of them, in the order of the tables below).
 *
 * --mode uncontended (rank 0 = the origin, on node n0; the lock is the first
 * "bench-lock-K" whose home node is not n0; the target is the home node's leader,
 * where rdlm keeps the lock's global word; the partner is another rank of n0):
 *
 *   impl          origin (and partner)                     target          others
 *   rdlm          acquire + release, lock homed remotely    (rdlm's own     sleep
 *                                                            progress)
 *   ucp_amo       SWAP(w, HELD) + CSWAP(w, HELD -> 0), raw   ucp progress    sleep
 *                 ucp_atomic_op_nbx, fetching: the two       (spinning)
 *                 atomics of rdlm's uncontended cycle
 *   ucp_amo_wake  the same                                   ucp progress    sleep
 *                                                            from the event
 *                                                            fd, as rdlm's
 *                                                            progress thread
 *   mpi_win_lock  MPI_Win_lock(EXCLUSIVE) + MPI_Fetch_and_op MPI progress    sleep
 *                 + MPI_Win_unlock (window word at target)
 *   mpi_cas_spin  MPI_Compare_and_swap 0 -> 1 + flush until MPI progress    sleep
 *                 it succeeds; MPI_Fetch_and_op(REPLACE 0)
 *                 + flush (in one MPI_Win_lock_all epoch)
 *   rdlm_cohort   origin and partner hand the lock of the distributed context to
 *                 each other: each holds it until the other waits for it
 *                 (rdlm_lock_query), stamps the clock and releases; the waiter's
 *                 acquire returns with the lock taken over inside the node, whose
 *                 cohort already holds the global word (FIFO makes them alternate)
 *   rdlm_node     the same two ranks, the same hand-offs, on a lock of a node-only
 *                 rdlm context (rdlm_ctx_create): the on-node lock
 *   verbs_amo     CAS(w, 0 -> HELD) + CAS(w, HELD -> 0) over   the adapter    sleep
 *                 a raw RC queue pair of its own (raw_verbs.h),  (nothing)
 *                 blocking: the floor of rdlm's cycle over the
 *                 verbs backend (a CAS to acquire, a CAS to
 *                 release); in the default list only where the
 *                 build has verbs and rank 0 sees a device
 *
 *   Single-origin impls: -x warm-up cycles (at most 0.5 s), then -i cycles (at most
 *   -t ms), timed in batches of 10; figure: us per cycle; percentiles over batches.
 *   Pair impls: -i acquires per rank (at most -t ms); figure: mean latency from the
 *   holder's release to the waiter's return from acquire (one machine, one clock);
 *   percentiles over single hand-offs. rdlm_ctx_stats is read around every
 *   rdlm_cohort acquire (outside the timed interval): the remote operations inside
 *   acquires that counted as local hand-offs must be 0.
 *
 * --mode contended: every rank (-m: the lowest MIN .. MAX ranks) loops acquire /
 * critical section / release / local work on one lock for --duration ms (or -i loops)
 * after -x warm-up loops, the implementations alternating round by round (the MPI
 * words at the target, the lowest rank of the rdlm lock's home node):
 *
 *   impl          acquire                                    release
 *   rdlm          rdlm_lock_acquire                          rdlm_lock_release
 *   mpi_win_lock  MPI_Win_lock(EXCLUSIVE) + MPI_Fetch_and_op MPI_Win_unlock
 *                 (SUM 1, word [0]) + MPI_Win_flush: granted
 *                 once the fetch-add is back
 *   mpi_cas_spin  MPI_Compare_and_swap 0 -> rank + 1 (word   MPI_Fetch_and_op(REPLACE 0)
 *                 [1]) + flush until it finds 0, in one      + flush; the word must
 *                 MPI_Win_lock_all epoch per phase           still be rank + 1
 *
 *   Figure: all ranks' acquires / max elapsed, in kops/s; p99: wait in acquire, 1
 *   acquire in 16. After every mpi_win_lock phase its word must equal every rank's
 *   fetch-adds, and every rank's old values must increase. RDLM_COHORT_BOUND is read
 *   at context creation, so rdlm-bench's dist-contended runs this mode once per bound
 *   (--impls rdlm); dist-sweep once per process and node count.
 *
 * --mode memory (RDLM_VIRTUAL_NODES = ranks, say): every rank's VmRSS growth across
 * rdlm_mpi_ctx_create; then rank 0 uses locks homed on one more remote node at a time
 * and reports its growth against the number of remote nodes used.
 *
 * --mode counter: every rank (-m: as contended) loops one operation for --duration ms
 * (or -i operations) after -x warm-up operations (at most 0.5 s), the implementations
 * alternating round by round:
 *
 *   impl          one operation                              checked after each phase
 *   rdlm_fadd     rdlm_counter_fetch_add(c, 1, &old)         c = fetch-adds so far, the
 *                                                            olds distinct (their sum)
 *   mpi_fetch_op  MPI_Fetch_and_op(1, MPI_SUM) on a window   the same, on the word
 *                 word at the target + MPI_Win_flush, in one
 *                 MPI_Win_lock_all epoch per phase (not timed)
 *   rdlm_sharded  the same on rdlm_counter_open_sharded      c = fetch-adds so far
 *   rdlm_sem      rdlm_sem_acquire(s, 1) + rdlm_sem_release   at most 2 holders at once
 *                 (s, 1), 2 permits                           (every operation); all
 *                                                            permits free after
 *
 *   The target is the lowest rank of the node that holds rdlm_fadd's counter word (the
 *   home of its name, asked of a lock of that name in a probe context), so both words
 *   sit in the same process. Figure: all ranks' operations / longest elapsed, kops/s,
 *   and the part of it made by the ranks off that node; p99: one operation in 16, all
 *   ranks. Every rank's old values must increase. With osc pt2pt the target applies
 *   the MPI operations in its own MPI calls: it issues its own fetch-adds, and spins in
 *   MPI_Test while the phase ends; rdlm's homes are served by rdlm's progress threads.
 *
 * Every critical section increments a plain counter in memory shared by the ranks of
 * one machine (POSIX shm): after every phase it must equal the critical sections
 * run there, or two holders were inside at once. Phases are separated by the job's
 * MPI barrier (MPI_Ibarrier + MPI_Test; never the lock under test): ranks with nothing
 * to serve sleep 200 us between tests, targets of the baselines keep progressing.
 * Any error aborts the job (MPI_Abort), so no rank hangs. With --result-lines, rank 0
 * also prints the lines rdlm-bench parses (once per size of -m):
 *
 *   RESULT info mode=M nprocs=N nodes=.. home_node=.. origin=0 target=.. partner=..
 *          (counter: the home node of rdlm's counter, the rank of the MPI word)
 *          lock=NAME cohort_bound=.. transport=.. progress_thread=.. ucx_tls=..
 *          osc=LIST osc_by=user|benchmark|mpi   (the one-sided components of the MPI
 *          baselines: OMPI_MCA_osc as the user set it, or, unset under Open MPI,
 *          "sm,pt2pt" set by this program before MPI_Init, since Open MPI 4.1's default
 *          on one machine (osc rdma over vader) crashes in MPI_Compare_and_swap, Open
 *          MPI issues 7967 and 11349; mpi: another MPI's default)
 *   RESULT round impl=I round=R value=V unit=us|kops/s p50_us= p90_us= p99_us= ops=
 *          handoff_kops=   (critical sections entered after another rank's, per
 *          second over the longest elapsed: contended mode)
 *          offnode_kops=   (counter mode: the part of the figure made by the ranks
 *          off the node of rdlm's (non-sharded) counter word and the MPI word)
 *   RESULT stats impl=I acquires= global_acquires= local_handoffs= home_ops=
 *          home_posted= peer_ops= combined= handoffs= ops= measured= handoff_ns=
 *          global_ns= check_local= check_remote_ops= check_handoffs=   (rdlm and
 *          rdlm_cohort; contended: rdlm; counter: rdlm_fadd, rdlm_sharded,
 *          rdlm_sem), summed over ranks and rounds; home_posted: the home_ops posted
 *          (not waited for); handoffs: critical sections entered after another rank's;
 * measured: the pair's hand-offs inside the node, the ones the figure averages
 *          (handoff_ns); global_ns: the others')
 *   RESULT check impl=I ops= value= base=   (counter, and contended's mpi_win_lock: after
 *          the last phase, every rank's operations, the value read (the semaphore:
 *          permits free) and the counter's value before the first phase)
 *   RESULT memory nodes= ctx_kib= ctx_kib_max= rss_kib=        (memory)
 *   RESULT memory_node used=K home_node= kib=                   (memory)
 *   RESULT done
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>
#include <rdlm/mpi.h>

#include "cli.h"
#include "clock.h"
#include "lock_bench.h"
#include "mpi_osc.h"
#include "mpi_output.h"
#include "options.h"
#include "raw_ucp.h"
#if RDLM_BENCH_HAVE_VERBS
#include "raw_verbs.h"
#endif
#include "rounds.h"
#include "stats.h"

#define RDLM_MLB_ACQUIRE_TIMEOUT_NS 30000000000ull /* fail, never hang */
#define RDLM_MLB_WARMUP_CAP_NS 500000000ull
#define RDLM_MLB_BATCH 10u        /* cycles per percentile sample (single origin) */
#define RDLM_MLB_SAMPLE_EVERY 16u /* loops: one timed acquire in 16 (power of two) */
#define RDLM_MLB_SAMPLES 4096u    /* per rank and loop phase */
#define RDLM_MLB_LOCK_PROBES 64u  /* names tried to find a remotely homed lock */
#define RDLM_MLB_IDLE_NS 200000L  /* sleep of a rank with nothing to serve */
#define RDLM_MLB_HELD (1ull << 63)
#define RDLM_MLB_KEY_MAX 512u
#define RDLM_MLB_SEM_PERMITS 2u

enum rdlm_mlb_mode {
    RDLM_MLB_UNCONTENDED,
    RDLM_MLB_CONTENDED,
    RDLM_MLB_MEMORY,
    RDLM_MLB_COUNTER,
    RDLM_MLB_NMODES
};

static const char *const rdlm_mlb_mode_names[RDLM_MLB_NMODES] = {"uncontended", "contended",
                                                                 "memory", "counter"};

enum rdlm_mlb_impl {
    RDLM_MLB_RDLM,
    RDLM_MLB_UCP,
    RDLM_MLB_UCP_WAKE,
    RDLM_MLB_WIN_LOCK,
    RDLM_MLB_CAS_SPIN,
    RDLM_MLB_COHORT,
    RDLM_MLB_NODE,
    RDLM_MLB_VERBS,
    RDLM_MLB_FADD, /* counter mode, in this order */
    RDLM_MLB_MPI_FOP,
    RDLM_MLB_SHARDED,
    RDLM_MLB_SEM,
    RDLM_MLB_NIMPL
};

#define RDLM_MLB_COUNTER_NIMPL (RDLM_MLB_NIMPL - RDLM_MLB_FADD)

static const char *const rdlm_mlb_impl_names[RDLM_MLB_NIMPL] = {
    "rdlm",      "ucp_amo",   "ucp_amo_wake", "mpi_win_lock", "mpi_cas_spin", "rdlm_cohort",
    "rdlm_node", "verbs_amo", "rdlm_fadd",    "mpi_fetch_op", "rdlm_sharded", "rdlm_sem"};

/* 1 for the MPI one-sided impls: with osc pt2pt their target applies them in its own
 * MPI calls, so it keeps calling MPI while others may still be operating. */
static int rdlm_mlb_is_mpi(uint32_t impl)
{
    return impl == RDLM_MLB_WIN_LOCK || impl == RDLM_MLB_CAS_SPIN ||
           impl == RDLM_MLB_MPI_FOP;
}

/* 1 for the impls whose fetch-adds are counted on the window word [0] at the target
 * (checked after every phase: rdlm_mlb_counter_check). */
static int rdlm_mlb_on_window(uint32_t impl)
{
    return impl == RDLM_MLB_MPI_FOP || impl == RDLM_MLB_WIN_LOCK;
}

/* What a phase adds up over ranks (one MPI_Reduce) and rank 0 over rounds. */
enum {
    RDLM_MLB_ST_ACQUIRES, /* rdlm_ctx_stats deltas of the distributed context */
    RDLM_MLB_ST_GLOBAL,
    RDLM_MLB_ST_LOCAL,
    RDLM_MLB_ST_HOME,
    RDLM_MLB_ST_POSTED, /* of home_ops, posted (not waited for) */
    RDLM_MLB_ST_PEER,
    RDLM_MLB_ST_COMBINED,
    RDLM_MLB_ST_HANDOFFS,     /* critical sections entered after another rank's */
    RDLM_MLB_ST_OPS,          /* acquires of the timed runs */
    RDLM_MLB_ST_MEASURED,     /* pair: hand-offs inside the node (node lock: all) */
    RDLM_MLB_ST_HANDOFF_NS,   /* pair: their summed release-to-acquire latencies */
    RDLM_MLB_ST_GLOBAL_NS,    /* pair: the same for hand-offs through the global word */
    RDLM_MLB_ST_CHECK_LOCAL,  /* pair, distributed lock: hand-offs that were local */
    RDLM_MLB_ST_CHECK_REMOTE, /* ... the remote operations made in their acquires */
    RDLM_MLB_ST_CHECK_ACQ,    /* ... and every hand-off checked */
    RDLM_MLB_ST_N
};

static const char *const rdlm_mlb_stat_names[RDLM_MLB_ST_N] = {
    "acquires",    "global_acquires",  "local_handoffs", "home_ops",
    "home_posted", "peer_ops",         "combined",       "handoffs",
    "ops",         "measured",         "handoff_ns",     "global_ns",
    "check_local", "check_remote_ops", "check_handoffs"};

/* The page the ranks of one machine share. */
typedef struct rdlm_mlb_shared {
    rdlm_bench_cs_t cs; /* the critical section's line (under the lock) */
    uint64_t t_release; /* pair: the holder's clock just before release (under it) */
    _Alignas(64) _Atomic uint64_t stopped;  /* pair: runs finished, 2 per run */
    _Alignas(64) _Atomic uint64_t sem_held; /* counter mode: semaphore holders */
} rdlm_mlb_shared_t;

/* Counter mode, per implementation: what its checks count. */
typedef struct rdlm_mlb_count {
    int64_t base;     /* the counter's value before the first phase */
    int64_t last_old; /* this rank's last old value (they must increase) */
    uint64_t done;    /* this rank's operations, warm-up included */
    uint64_t last;    /* ... in its last run (after a phase: the timed one) */
    uint64_t old_sum; /* the sum of their old values */
    uint64_t total;   /* after the last check: every rank's operations */
    int64_t value;    /* ... and the value read then (semaphore: permits free) */
} rdlm_mlb_count_t;

/* The target's raw word and how to reach it (sent to the origin). */
typedef struct rdlm_mlb_ucp_key {
    uint64_t addr;
    uint64_t key_len;
    uint64_t address_len;
    unsigned char key[RDLM_MLB_KEY_MAX];
} rdlm_mlb_ucp_key_t;

struct rdlm_mlb;
struct rdlm_mlb_mode_def;

/* A lock of contended mode: acquire (ordered before the critical section) and release
 * (after it); both die on an error, so no rank hangs. */
typedef struct rdlm_mlb_lock_ops {
    void (*acquire)(struct rdlm_mlb *m, rdlm_lock_h lock);
    void (*release)(struct rdlm_mlb *m, rdlm_lock_h lock);
} rdlm_mlb_lock_ops_t;

typedef struct rdlm_mlb {
    /* options */
    enum rdlm_mlb_mode mode;
    const char *impls_arg; /* --impls, or NULL */
    uint64_t iterations;
    uint64_t warmup;
    uint32_t rounds;
    uint64_t cap_ns;
    uint64_t duration_ns;
    uint64_t size_min; /* -m: contending ranks, doubling from min to max; 0: all */
    uint64_t size_max;
    int result_lines; /* --result-lines: the RESULT lines rdlm-bench parses */
    rdlm_bench_out_t out;
    /* the job */
    int rank;
    int size;
    MPI_Comm shm; /* the ranks of this machine */
    int shm_rank;
    rdlm_mlb_shared_t *sh; /* shared by the ranks of shm */
    uint64_t pair_runs;    /* pair runs this rank did */
    rdlm_ctx_h ctx;
    rdlm_ctx_dist_info_t info;
    uint32_t *node_of; /* [size] */
    rdlm_lock_h lock;
    char lock_name[RDLM_NAME_MAX + 1];
    int32_t home_node;
    int target;  /* leader of the home node */
    int partner; /* another rank of rank 0's node, or -1 */
    /* baselines */
    rdlm_ctx_h node_ctx; /* origin and partner: node-only context */
    rdlm_lock_h node_lock;
    rdlm_bench_ucp_t ucp; /* origin and target */
#if RDLM_BENCH_HAVE_VERBS
    rdlm_bench_ibv_t ibv; /* origin and target, when verbs_amo runs */
#endif
    int have_verbs;  /* verbs_amo can run: built with verbs, rank 0 has a device */
    MPI_Win win;     /* 2 words per rank: [0] fetch-and-op, [1] CAS lock */
    const char *osc; /* its osc components, and who chose them */
    enum rdlm_bench_mpi_osc osc_who;
    int vnodes_chosen;   /* RDLM_VIRTUAL_NODES set by this program (one machine) */
    uint64_t contenders; /* contended, counter: the ranks taking part (the size) */
    uint32_t phases;     /* phases run so far, for the progress line */
    uint32_t nphases;    /* ... and in all */
    uint64_t *win_base;
    /* what the mode alternates (--impls), in this order */
    const struct rdlm_mlb_mode_def *def;
    uint32_t impls[RDLM_MLB_NIMPL];
    uint32_t nimpl;
    /* counter and contended modes: the running phase's impl and lock, what the checks
     * count; counter mode's objects */
    uint32_t impl;
    const rdlm_mlb_lock_ops_t *lock_ops;
    rdlm_counter_h counter;
    rdlm_counter_h sharded;
    rdlm_sem_h sem;
    rdlm_mlb_count_t count[RDLM_MLB_NIMPL];
    /* per-impl progress of the origin, for the value checks */
    uint64_t issued[RDLM_MLB_NIMPL];
    uint64_t last_token;
    /* results (rank 0) */
    double value[RDLM_MLB_NIMPL][RDLM_BENCH_MAX_ROUNDS];
    double pct[RDLM_MLB_NIMPL][RDLM_BENCH_MAX_ROUNDS][3];
    uint64_t ops[RDLM_MLB_NIMPL][RDLM_BENCH_MAX_ROUNDS];
    double handoff_rate[RDLM_MLB_NIMPL][RDLM_BENCH_MAX_ROUNDS]; /* contended, kops/s */
    double offnode_rate[RDLM_MLB_NIMPL][RDLM_BENCH_MAX_ROUNDS]; /* counter, kops/s */
    uint64_t stats[RDLM_MLB_NIMPL][RDLM_MLB_ST_N];
    /* scratch */
    double *batch;
    uint32_t *samples;
} rdlm_mlb_t;

static void rdlm_mlb_die(const rdlm_mlb_t *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void rdlm_mlb_die(const rdlm_mlb_t *m, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rdlm-mpi-lock-bench: rank %d: ", m->rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* ---- synchronisation of the harness ---------------------------------------------- */

enum rdlm_mlb_wait { RDLM_MLB_SLEEP, RDLM_MLB_SPIN, RDLM_MLB_WAKE };

/* Serve worker until its event fd stays quiet for a millisecond, sleeping in poll as
 * rdlm's progress thread does (ucp_worker_arm: nothing left to progress). */
static void rdlm_mlb_serve_wake(ucp_worker_h worker)
{
    struct pollfd pfd = {.events = POLLIN};

    while (ucp_worker_progress(worker) != 0) {
    }
    if (ucp_worker_get_efd(worker, &pfd.fd) == UCS_OK && ucp_worker_arm(worker) == UCS_OK) {
        poll(&pfd, 1, 1);
    }
}

/*
 * The job's barrier, waited for without blocking in MPI:
 *   SLEEP  sleep between tests: a rank with nothing to serve leaves the cores to the
 *          measured ones;
 *   SPIN   keep calling MPI (the target of MPI one-sided operations) and, with worker,
 *          ucp_worker_progress (the target of raw ucp atomics, which UCP emulates in
 *          the target's progress over TCP);
 *   WAKE   with worker: serve it from its event fd (rdlm_mlb_serve_wake).
 */
static void rdlm_mlb_sync(enum rdlm_mlb_wait how, ucp_worker_h worker)
{
    const struct timespec idle = {.tv_sec = 0, .tv_nsec = RDLM_MLB_IDLE_NS};
    MPI_Request req;
    int done = 0;
    int k;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!done) {
        if (worker != NULL && how == RDLM_MLB_WAKE) {
            rdlm_mlb_serve_wake(worker);
        } else if (worker != NULL) {
            for (k = 0; k < 64; k++) {
                ucp_worker_progress(worker);
            }
        } else if (how == RDLM_MLB_SLEEP) {
            nanosleep(&idle, NULL);
        }
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* ---- set-up --------------------------------------------------------------------- */

/* A decimal count, the whole of text; 0 or -1. */
static int rdlm_mlb_parse_u64(const char *text, uint64_t *value_p)
{
    char tail;

    return text[0] >= '0' && text[0] <= '9' &&
                   sscanf(text, "%" SCNu64 "%c", value_p, &tail) == 1
               ? 0
               : -1;
}

static const char rdlm_mlb_usage[] =
    "Usage: mpirun -np N rdlm-mpi-lock-bench [--mode M] [--impls LIST] [-i ITER]\n"
    "         [-x WARMUP] [-r ROUNDS] [-t CAP_MS] [--duration MS] [-m [MIN:]MAX] [-f]\n"
    "         [--csv | --json] [--result-lines]\n"
    "       rdlm-mpi-lock-bench -v|-V|--version | -h|--help\n"
    "  --mode M       uncontended (default), contended, counter or memory:\n"
    "    uncontended  rdlm lock homed on another node vs raw ucp atomics, MPI_Win_lock,\n"
    "                 an MPI CAS spinlock; same-node hand-off vs the on-node lock\n"
    "                 (defaults -i 1000 -x 100 -r 5 -t 2000); Size: ranks measured\n"
    "    contended    ranks loop on one lock for --duration ms: rdlm, MPI_Win_lock, an\n"
    "                 MPI CAS spinlock (defaults --duration 500 -x 100 -r 1); Size:\n"
    "                 contending ranks\n"
    "    counter      ranks loop rdlm_counter_fetch_add, MPI_Fetch_and_op, a sharded\n"
    "                 counter's fetch-add, a semaphore's acquire+release, for\n"
    "                 --duration ms each (defaults --duration 500 -x 100 -r 5)\n"
    "    memory       resident memory of the context, and its growth as rank 0 uses\n"
    "                 locks homed on more nodes; Size: remote nodes used\n"
    "  --impls LIST   a comma-separated subset of the mode's implementations, in the\n"
    "                 order to alternate them (default: all)\n"
    "  -i ITER        timed iterations per phase; -x WARMUP warm-up ones (100)\n"
    "  -r ROUNDS      rounds, each running every impl once, alternating order\n"
    "  -t CAP_MS      uncontended: a phase's time cap (2000)\n"
    "  --duration MS  contended, counter: each phase's length (500)\n"
    "  -m [MIN:]MAX   contended, counter: rows for MIN, 2 MIN, 4 MIN ... MAX contending\n"
    "                 ranks, the lowest ranks first (default: all ranks, one row)\n"
    "  -f             full statistics: min and max over rounds, p50/p90/p99, ops\n"
    "  --csv, --json  rows as CSV (RFC 4180) or JSON instead of the '#' table\n"
    "  --result-lines also the RESULT lines rdlm-bench parses\n"
    "On one machine without RDLM_VIRTUAL_NODES it runs as 2 virtual nodes; under Open\n"
    "MPI without --mca osc it sets osc sm,pt2pt (Open MPI 4.1's osc rdma crashes in\n"
    "MPI_Compare_and_swap over vader). Progress on stderr for runs over 3 s.\n"
    "Exit: 0 ran or printed help/version; 2 bad command line (one line on stderr).\n";

#define RDLM_MLB_TOOL "rdlm-mpi-lock-bench"

/* The exit status of -h, -V or a flag getopt refused (c), printed by rank 0. */
static int rdlm_mlb_option_exit(const rdlm_mlb_t *m, int c, const char *optstring,
                                char *const *argv)
{
    if (c == 'h') {
        if (m->rank == 0) {
            fputs(rdlm_mlb_usage, stdout);
        }
        return 0;
    }
    if (c == 'v') {
        c = 'V'; /* osu_*'s -v */
    }
    if (m->rank != 0) {
        return c == 'V' ? 0 : RDLM_CLI_EXIT_USAGE;
    }
    return c == 'V' ? rdlm_cli_version(RDLM_MLB_TOOL)
                    : rdlm_cli_bad_option(RDLM_MLB_TOOL, c, optstring, argv);
}

/* -m [MIN:]MAX (osu_*'s size range): 0, or -1 unless 1 <= MIN <= MAX. */
static int rdlm_mlb_parse_sizes(rdlm_mlb_t *m, const char *arg)
{
    const char *colon = strchr(arg, ':');
    char min[32];

    m->size_min = 1;
    if (colon != NULL) {
        if ((size_t)(colon - arg) >= sizeof(min)) {
            return -1;
        }
        memcpy(min, arg, (size_t)(colon - arg));
        min[colon - arg] = '\0';
        if (rdlm_mlb_parse_u64(min, &m->size_min) != 0) {
            return -1;
        }
        arg = colon + 1;
    }
    return rdlm_mlb_parse_u64(arg, &m->size_max) == 0 && m->size_min >= 1 &&
                   m->size_min <= m->size_max
               ? 0
               : -1;
}

/* One option; 0, or -1 for a bad value. */
static int rdlm_mlb_option(rdlm_mlb_t *m, int c, const char *arg, uint64_t *v)
{
    uint32_t k;

    switch (c) {
    case 'm':
        return rdlm_mlb_parse_sizes(m, arg);
    case 'f':
        m->out.full = 1;
        return 0;
    case 'C':
    case 'J':
        m->out.format = c == 'C' ? RDLM_BENCH_OUT_CSV : RDLM_BENCH_OUT_JSON;
        return 0;
    case 'R':
        m->result_lines = 1;
        return 0;
    case 'M':
        for (k = 0; k < RDLM_MLB_NMODES; k++) {
            if (strcmp(arg, rdlm_mlb_mode_names[k]) == 0) {
                m->mode = (enum rdlm_mlb_mode)k;
                return 0;
            }
        }
        return -1;
    case 'i':
        return rdlm_mlb_parse_u64(arg, &v[0]) == 0 && v[0] > 0 ? 0 : -1;
    case 'x':
        return rdlm_mlb_parse_u64(arg, &v[1]);
    case 'r':
        return rdlm_mlb_parse_u64(arg, &v[2]) == 0 && v[2] > 0 &&
                       v[2] <= RDLM_BENCH_MAX_ROUNDS
                   ? 0
                   : -1;
    case 't':
        return rdlm_mlb_parse_u64(arg, &v[3]) == 0 && v[3] > 0 ? 0 : -1;
    case 'd':
        return rdlm_mlb_parse_u64(arg, &v[4]) == 0 && v[4] > 0 ? 0 : -1;
    case 'I':
        m->impls_arg = arg;
        return 0;
    default:
        return -1;
    }
}

/* -1 to run, else the exit status (help, version or one error line printed by
 * rank 0). */
static int rdlm_mlb_options(rdlm_mlb_t *m, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mode", required_argument, NULL, 'M'},
        {"impls", required_argument, NULL, 'I'},
        {"duration", required_argument, NULL, 'd'},
        {"csv", no_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'J'},
        {"result-lines", no_argument, NULL, 'R'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":i:x:r:t:m:fhvV";
    /* iterations, warm-up, rounds, cap ms, duration ms */
    uint64_t v[5] = {0, 100, 0, 2000, 500};
    int uncontended;
    int c;

    opterr = 0; /* rank 0 reports, in one line */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if (c == 'h' || c == 'v' || c == 'V' || c == '?' || c == ':') {
            return rdlm_mlb_option_exit(m, c, optstring, argv);
        }
        if (rdlm_mlb_option(m, c, optarg, v) != 0) {
            return m->rank == 0 ? rdlm_cli_bad_value(RDLM_MLB_TOOL, c, longopts, optarg)
                                : RDLM_CLI_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        return m->rank == 0 ? rdlm_cli_usage_error(RDLM_MLB_TOOL,
                                                   "unexpected argument '%s'", argv[optind])
                            : RDLM_CLI_EXIT_USAGE;
    }
    if (m->size_max != 0 &&
        (m->mode == RDLM_MLB_UNCONTENDED || m->mode == RDLM_MLB_MEMORY ||
         m->size_max > (uint64_t)m->size)) {
        return m->rank == 0 ? rdlm_cli_usage_error(RDLM_MLB_TOOL,
                                                   "-m: contended and counter modes only, "
                                                   "at most the %d ranks",
                                                   m->size)
                            : RDLM_CLI_EXIT_USAGE;
    }
    uncontended = m->mode == RDLM_MLB_UNCONTENDED;
    m->iterations = v[0] ? v[0] : uncontended ? 1000 : 10000000;
    m->warmup = v[1];
    m->rounds = (uint32_t)(v[2] ? v[2] : m->mode == RDLM_MLB_CONTENDED ? 1 : 5);
    m->cap_ns = v[3] * 1000000ull;
    m->duration_ns = v[4] * 1000000ull;
    return -1;
}

/* The critical section's cache line, shared by the ranks of this machine: the
 * machine's first rank creates it, the others open it by name. A job on one machine
 * gets RDLM_VIRTUAL_NODES=2 unless it is set. */
static void rdlm_mlb_shared_map(rdlm_mlb_t *m)
{
    char name[64];
    int fd = -1;

    int shm_size;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL,
                        &m->shm);
    MPI_Comm_rank(m->shm, &m->shm_rank);
    MPI_Comm_size(m->shm, &shm_size);
    /* One machine, as osu_* is first run: 2 virtual nodes, so a lock is homed on a
     * node the origin is not on (read at rdlm_mpi_ctx_create). */
    if (shm_size == m->size && getenv("RDLM_VIRTUAL_NODES") == NULL) {
        m->vnodes_chosen = setenv("RDLM_VIRTUAL_NODES", "2", 0) == 0;
    }
    if (m->shm_rank == 0) {
        snprintf(name, sizeof(name), "/rdlm-mlb-%ld", (long)getpid());
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, sizeof(rdlm_mlb_shared_t)) != 0) {
            rdlm_mlb_die(m, "shm_open %s: %s", name, strerror(errno));
        }
    }
    MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, m->shm);
    if (m->shm_rank != 0 && (fd = shm_open(name, O_RDWR, 0)) < 0) {
        rdlm_mlb_die(m, "shm_open %s: %s", name, strerror(errno));
    }
    m->sh =
        mmap(NULL, sizeof(rdlm_mlb_shared_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m->sh == MAP_FAILED) {
        rdlm_mlb_die(m, "mmap: %s", strerror(errno));
    }
    MPI_Barrier(m->shm);
    if (m->shm_rank == 0) {
        shm_unlink(name);
    }
}

/* The distributed context and the node map. */
static void rdlm_mlb_ctx_open(rdlm_mlb_t *m)
{
    rdlm_status_t st;

    st = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &m->ctx);
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_mpi_ctx_create: %s", rdlm_status_str(st));
    }
    st = rdlm_ctx_dist_info(m->ctx, &m->info);
    if (st != RDLM_OK || !m->info.distributed) {
        rdlm_mlb_die(m, "rdlm_ctx_dist_info: %s",
                     st ? rdlm_status_str(st) : "not distributed");
    }
    m->node_of = malloc(sizeof(*m->node_of) * (size_t)m->size);
    if (m->node_of == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    MPI_Allgather(&m->info.node, 1, MPI_UINT32_T, m->node_of, 1, MPI_UINT32_T,
                  MPI_COMM_WORLD);
}

/* The lock: the first bench-lock-K homed on another node than rank 0's (any, in
 * contended mode); the baselines' target and the partner. Every rank opens the same
 * names in the same order; rank 0 decides. */
static void rdlm_mlb_lock_choose(rdlm_mlb_t *m)
{
    rdlm_lock_info_t li;
    rdlm_status_t st;
    int32_t choice[2];
    uint32_t k;
    int r;

    for (k = 0; k < RDLM_MLB_LOCK_PROBES; k++) {
        snprintf(m->lock_name, sizeof(m->lock_name), "bench-lock-%u", k);
        st = rdlm_lock_open(m->ctx, m->lock_name, &m->lock);
        if (st == RDLM_OK) {
            st = rdlm_lock_query(m->lock, &li);
        }
        if (st != RDLM_OK) {
            rdlm_mlb_die(m, "%s: %s", m->lock_name, rdlm_status_str(st));
        }
        choice[0] = li.home_node;
        choice[1] = m->mode == RDLM_MLB_CONTENDED || li.home_node != (int32_t)m->node_of[0];
        MPI_Bcast(choice, 2, MPI_INT32_T, 0, MPI_COMM_WORLD);
        if (choice[1]) {
            break;
        }
        rdlm_lock_close(m->lock);
    }
    if (k == RDLM_MLB_LOCK_PROBES || choice[0] < 0) {
        rdlm_mlb_die(m,
                     "no lock homed on another node than rank 0's among %u names "
                     "(RDLM_VIRTUAL_NODES unset and one machine?)",
                     RDLM_MLB_LOCK_PROBES);
    }
    m->home_node = choice[0];
    m->target = -1;
    m->partner = -1;
    for (r = m->size - 1; r >= 0; r--) { /* the lowest ones win */
        if (m->node_of[r] == (uint32_t)m->home_node) {
            m->target = r;
        }
        if (r != 0 && m->node_of[r] == m->node_of[0]) {
            m->partner = r;
        }
    }
}

/* The MPI baselines' window (collective): 2 words per rank, [0] fetch-and-op, [1] the
 * CAS lock, both 0. */
static void rdlm_mlb_win_open(rdlm_mlb_t *m)
{
    MPI_Win_allocate(2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &m->win_base, &m->win);
    m->win_base[0] = 0;
    m->win_base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* 1 if impl is among the implementations this run alternates. */
static int rdlm_mlb_selected(const rdlm_mlb_t *m, uint32_t impl)
{
    for (uint32_t k = 0; k < m->nimpl; k++) {
        if (m->impls[k] == impl) {
            return 1;
        }
    }
    return 0;
}

/* verbs_amo's queue pairs (origin, target), connected by swapping their records. */
static void rdlm_mlb_verbs_open(rdlm_mlb_t *m)
{
#if RDLM_BENCH_HAVE_VERBS
    rdlm_bench_ibv_rec_t peer;
    char why[256];
    int other = m->rank == 0 ? m->target : 0;

    if (!rdlm_mlb_selected(m, RDLM_MLB_VERBS) || (m->rank != 0 && m->rank != m->target)) {
        return;
    }
    if (rdlm_bench_ibv_open(&m->ibv, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
    MPI_Sendrecv(&m->ibv.self, sizeof(m->ibv.self), MPI_BYTE, other, 2, &peer, sizeof(peer),
                 MPI_BYTE, other, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rdlm_bench_ibv_connect(&m->ibv, &peer, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
#else
    if (rdlm_mlb_selected(m, RDLM_MLB_VERBS)) {
        rdlm_mlb_die(m, "verbs_amo: built without verbs (RDLM_WITH_VERBS=OFF)");
    }
#endif
}

/* ucp_amo's and ucp_amo_wake's endpoint (origin) and word (target), when selected. */
static void rdlm_mlb_ucp_open(rdlm_mlb_t *m)
{
    rdlm_mlb_ucp_key_t key;
    char why[256];
    char *peer = NULL;
    size_t len;

    if ((!rdlm_mlb_selected(m, RDLM_MLB_UCP) && !rdlm_mlb_selected(m, RDLM_MLB_UCP_WAKE)) ||
        (m->rank != 0 && m->rank != m->target)) {
        return;
    }
    if (rdlm_bench_ucp_open(&m->ucp, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
    if (m->rank == m->target) {
        memset(&key, 0, sizeof(key));
        if (rdlm_bench_ucp_map_word(&m->ucp, key.key, sizeof(key.key), &len, &key.addr, why,
                                    sizeof(why)) != 0) {
            rdlm_mlb_die(m, "%s", why);
        }
        key.key_len = len;
        key.address_len = m->ucp.address_len;
        MPI_Send(&key, sizeof(key), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        MPI_Send(m->ucp.address, (int)m->ucp.address_len, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        return;
    }
    MPI_Recv(&key, sizeof(key), MPI_BYTE, m->target, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    peer = malloc(key.address_len);
    if (peer == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    MPI_Recv(peer, (int)key.address_len, MPI_BYTE, m->target, 1, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (rdlm_bench_ucp_connect(&m->ucp, peer, key.key, key.addr, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
    free(peer);
}

/* The other baselines' resources, for the implementations selected: node-only context
 * (origin, partner), raw ucp (origin, target), raw verbs (origin, target). */
static void rdlm_mlb_baselines_open(rdlm_mlb_t *m)
{
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB};
    char job[RDLM_BENCH_JOB_MAX];
    rdlm_status_t st;
    long job_id = (long)getpid();

    MPI_Bcast(&job_id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rdlm_mlb_selected(m, RDLM_MLB_NODE) && (m->rank == 0 || m->rank == m->partner)) {
        snprintf(job, sizeof(job), "mlb-node-%ld", job_id);
        cp.job = job;
        st = rdlm_ctx_create(&cp, &m->node_ctx);
        if (st == RDLM_OK) {
            st = rdlm_lock_open(m->node_ctx, "bench-node-lock", &m->node_lock);
        }
        if (st != RDLM_OK) {
            rdlm_mlb_die(m, "node-only context %s: %s", job, rdlm_status_str(st));
        }
    }
    rdlm_mlb_ucp_open(m);
    rdlm_mlb_verbs_open(m);
}

static void rdlm_mlb_baselines_close(rdlm_mlb_t *m)
{
    if (m->rank == 0) {
        rdlm_bench_ucp_disconnect(&m->ucp); /* the target progresses in the sync */
    }
    rdlm_mlb_sync(m->rank == m->target ? RDLM_MLB_SPIN : RDLM_MLB_SLEEP,
                  m->rank == m->target ? m->ucp.worker : NULL);
    rdlm_bench_ucp_close(&m->ucp);
#if RDLM_BENCH_HAVE_VERBS
    rdlm_bench_ibv_close(&m->ibv); /* after the barrier: no atomic is in flight */
#endif
    if (m->node_ctx != NULL) {
        rdlm_ctx_destroy(m->node_ctx);
    }
}

/* ---- single-origin cycles ------------------------------------------------------------ */

static void rdlm_mlb_cycle_rdlm(rdlm_mlb_t *m)
{
    uint64_t token = 0;
    rdlm_status_t st;

    st = rdlm_lock_acquire(m->lock, RDLM_MLB_ACQUIRE_TIMEOUT_NS, &token);
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_lock_acquire(%s): %s", m->lock_name, rdlm_status_str(st));
    }
    if (token <= m->last_token) {
        rdlm_mlb_die(m, "token %" PRIu64 " after %" PRIu64, token, m->last_token);
    }
    m->last_token = token;
    st = rdlm_lock_release(m->lock);
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_lock_release(%s): %s", m->lock_name, rdlm_status_str(st));
    }
}

static void rdlm_mlb_cycle_ucp(rdlm_mlb_t *m)
{
    uint64_t old = 0;
    ucs_status_t s;

    s = rdlm_bench_ucp_amo(&m->ucp, UCP_ATOMIC_OP_SWAP, RDLM_MLB_HELD, &old);
    if (s != UCS_OK || old != 0) {
        rdlm_mlb_die(m, "raw SWAP: %s, old %#" PRIx64, ucs_status_string(s), old);
    }
    old = 0; /* CSWAP: compare with HELD, swap in 0 */
    s = rdlm_bench_ucp_amo(&m->ucp, UCP_ATOMIC_OP_CSWAP, RDLM_MLB_HELD, &old);
    if (s != UCS_OK || old != RDLM_MLB_HELD) {
        rdlm_mlb_die(m, "raw CSWAP: %s, old %#" PRIx64, ucs_status_string(s), old);
    }
}

#if RDLM_BENCH_HAVE_VERBS
static void rdlm_mlb_cycle_verbs(rdlm_mlb_t *m)
{
    char why[256];
    uint64_t old = ~0ull;

    if (rdlm_bench_ibv_cswap(&m->ibv, 0, RDLM_MLB_HELD, &old, why, sizeof(why)) != 0 ||
        old != 0) {
        rdlm_mlb_die(m, "raw verbs CAS 0 -> HELD: old %#" PRIx64 " %s", old, why);
    }
    if (rdlm_bench_ibv_cswap(&m->ibv, RDLM_MLB_HELD, 0, &old, why, sizeof(why)) != 0 ||
        old != RDLM_MLB_HELD) {
        rdlm_mlb_die(m, "raw verbs CAS HELD -> 0: old %#" PRIx64 " %s", old, why);
    }
}
#endif

static void rdlm_mlb_cycle_win_lock(rdlm_mlb_t *m)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, m->target, 0, m->win);
    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_unlock(m->target, m->win);
    if (old != m->issued[RDLM_MLB_WIN_LOCK]) {
        rdlm_mlb_die(m, "MPI_Fetch_and_op returned %" PRIu64 ", expected %" PRIu64, old,
                     m->issued[RDLM_MLB_WIN_LOCK]);
    }
}

/* The MPI CAS spinlock, word [1] at the target, inside an MPI_Win_lock_all epoch:
 * MPI_Compare_and_swap 0 -> rank + 1 and a flush until it finds 0 (an acquire fence
 * then orders the critical section after it); dies after RDLM_MLB_ACQUIRE_TIMEOUT_NS
 * (a stuck word). lock: unused (a lock operation of contended mode). */
static void rdlm_mlb_cas_acquire(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    const uint64_t mine = (uint64_t)m->rank + 1, free_word = 0;
    uint64_t t0 = rdlm_bench_now_ns();
    uint64_t old;

    (void)lock;
    for (;;) {
        MPI_Compare_and_swap(&mine, &free_word, &old, MPI_UINT64_T, m->target, 1, m->win);
        MPI_Win_flush(m->target, m->win);
        if (old == 0) {
            break;
        }
        if (rdlm_bench_now_ns() - t0 > RDLM_MLB_ACQUIRE_TIMEOUT_NS) {
            rdlm_mlb_die(m, "MPI CAS spinlock still held by rank %" PRIu64 " after %.0f s",
                         old - 1, RDLM_MLB_ACQUIRE_TIMEOUT_NS / 1e9);
        }
    }
    atomic_thread_fence(memory_order_acquire);
}

/* Release it: a release fence orders the critical section before an
 * MPI_Fetch_and_op(REPLACE 0) + flush, which must find this rank's value. */
static void rdlm_mlb_cas_release(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    const uint64_t mine = (uint64_t)m->rank + 1, free_word = 0;
    uint64_t old = 0;

    (void)lock;
    atomic_thread_fence(memory_order_release);
    MPI_Fetch_and_op(&free_word, &old, MPI_UINT64_T, m->target, 1, MPI_REPLACE, m->win);
    MPI_Win_flush(m->target, m->win);
    if (old != mine) {
        rdlm_mlb_die(m,
                     "MPI CAS spinlock released a word holding %" PRIu64 ", not %" PRIu64,
                     old, mine);
    }
}

static void rdlm_mlb_cycle_cas_spin(rdlm_mlb_t *m)
{
    rdlm_mlb_cas_acquire(m, NULL);
    rdlm_mlb_cas_release(m, NULL);
}

static void rdlm_mlb_cycle(rdlm_mlb_t *m, uint32_t impl)
{
    switch (impl) {
    case RDLM_MLB_RDLM:
        rdlm_mlb_cycle_rdlm(m);
        break;
    case RDLM_MLB_UCP:
    case RDLM_MLB_UCP_WAKE:
        rdlm_mlb_cycle_ucp(m);
        break;
    case RDLM_MLB_WIN_LOCK:
        rdlm_mlb_cycle_win_lock(m);
        break;
#if RDLM_BENCH_HAVE_VERBS
    case RDLM_MLB_VERBS:
        rdlm_mlb_cycle_verbs(m);
        break;
#endif
    default:
        rdlm_mlb_cycle_cas_spin(m);
        break;
    }
    m->issued[impl]++;
}

static void rdlm_mlb_stats_sub(const rdlm_stats_t *a, const rdlm_stats_t *b, uint64_t *out)
{
    out[RDLM_MLB_ST_ACQUIRES] += a->acquires - b->acquires;
    out[RDLM_MLB_ST_GLOBAL] += a->global_acquires - b->global_acquires;
    out[RDLM_MLB_ST_LOCAL] += a->local_handoffs - b->local_handoffs;
    out[RDLM_MLB_ST_HOME] += a->home_ops - b->home_ops;
    out[RDLM_MLB_ST_POSTED] += a->home_ops_posted - b->home_ops_posted;
    out[RDLM_MLB_ST_PEER] += a->peer_ops - b->peer_ops;
    out[RDLM_MLB_ST_COMBINED] += a->combined - b->combined;
}

/* Origin: warm-up, then the timed cycles of impl in batches; figure and batch
 * percentiles into the round's slots. */
static void rdlm_mlb_origin(rdlm_mlb_t *m, uint32_t impl, uint32_t round)
{
    rdlm_bench_summary_t sum;
    rdlm_stats_t before, after;
    uint64_t t0, tb, t, k;
    size_t nbatch = 0;

    if (impl == RDLM_MLB_CAS_SPIN) {
        MPI_Win_lock_all(0, m->win);
    }
    t0 = rdlm_bench_now_ns();
    for (k = 0; k < m->warmup && rdlm_bench_now_ns() - t0 < RDLM_MLB_WARMUP_CAP_NS; k++) {
        rdlm_mlb_cycle(m, impl);
    }
    rdlm_ctx_stats(m->ctx, &before);
    t0 = tb = rdlm_bench_now_ns();
    for (k = 0; k < m->iterations;) {
        rdlm_mlb_cycle(m, impl);
        if (++k % RDLM_MLB_BATCH == 0) {
            t = rdlm_bench_now_ns();
            m->batch[nbatch++] = (double)(t - tb) / RDLM_MLB_BATCH / 1000.0;
            tb = t;
            if (t - t0 > m->cap_ns) {
                break;
            }
        }
    }
    t = rdlm_bench_now_ns();
    rdlm_ctx_stats(m->ctx, &after);
    if (impl == RDLM_MLB_CAS_SPIN) {
        MPI_Win_unlock_all(m->win);
    }
    if (impl == RDLM_MLB_RDLM) {
        rdlm_mlb_stats_sub(&after, &before, m->stats[impl]);
    }
    rdlm_bench_summarize(m->batch, nbatch, &sum);
    m->value[impl][round] = (double)(t - t0) / (double)k / 1000.0;
    m->pct[impl][round][0] = sum.p50;
    m->pct[impl][round][1] = sum.p90;
    m->pct[impl][round][2] = sum.p99;
    m->ops[impl][round] = k;
}

/* ---- several ranks on one lock ---------------------------------------------------- */

/* Where the local work's result goes, so that the compiler keeps it. */
static _Atomic uint64_t rdlm_mlb_sink;

/* Local work between two acquires, about 0.1 us, that the compiler keeps. */
static uint64_t rdlm_mlb_local_work(uint64_t x)
{
    int k;

    for (k = 0; k < 48; k++) {
        x ^= x << 7;
        x ^= x >> 9;
    }
    return x;
}

/* What one rank did in one run (warm-up or timed) of a loop phase. */
typedef struct rdlm_mlb_loop {
    uint64_t ops;        /* acquires in the timed run */
    uint64_t cs;         /* critical sections, warm-up included */
    uint64_t handoffs;   /* critical sections entered after another rank's */
    uint64_t measured;   /* pair: hand-offs inside the node (node lock: all) */
    uint64_t handoff_ns; /* pair: their summed release-to-acquire latencies */
    uint64_t global_ns;  /* pair: the same for the other hand-offs (cohort bound) */
    uint64_t elapsed_ns;
    uint64_t sink;
    uint64_t check[3]; /* RDLM_MLB_ST_CHECK_LOCAL, _REMOTE, _ACQ */
} rdlm_mlb_loop_t;

typedef void (*rdlm_mlb_run_func_t)(rdlm_mlb_t *m, rdlm_lock_h lock, uint64_t n,
                                    uint64_t cap_ns, rdlm_bench_sampler_t *sampler,
                                    rdlm_mlb_loop_t *out);

static void rdlm_mlb_acquire(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    rdlm_status_t st = rdlm_lock_acquire(lock, RDLM_MLB_ACQUIRE_TIMEOUT_NS, NULL);

    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_lock_acquire: %s", rdlm_status_str(st));
    }
}

static void rdlm_mlb_release(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    rdlm_status_t st = rdlm_lock_release(lock);

    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_lock_release: %s", rdlm_status_str(st));
    }
}

/* The critical section: the plain counter and the last holder, in the shared line;
 * returns 1 if another rank held the lock before. */
static int rdlm_mlb_cs(rdlm_mlb_t *m)
{
    int other = m->sh->cs.last_rank != (uint64_t)m->rank;

    m->sh->cs.counter++;
    m->sh->cs.last_rank = (uint64_t)m->rank;
    return other;
}

/* Contended: loop { acquire; critical section; release; local work } with
 * m->lock_ops, up to n times or cap_ns; with sampler, one acquire in
 * RDLM_MLB_SAMPLE_EVERY is timed. */
static void rdlm_mlb_run_loop(rdlm_mlb_t *m, rdlm_lock_h lock, uint64_t n, uint64_t cap_ns,
                              rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out)
{
    uint64_t t0 = rdlm_bench_now_ns();
    uint64_t ta = 0;
    uint64_t k;

    for (k = 0; k < n; k++) {
        int timed = sampler != NULL && (k & (RDLM_MLB_SAMPLE_EVERY - 1)) == 0;

        if (rdlm_bench_now_ns() - t0 > cap_ns) { /* a clock read: ~20 ns, an acquire: us */
            break;
        }
        if (timed) {
            ta = rdlm_bench_now_ns();
        }
        m->lock_ops->acquire(m, lock);
        if (timed) {
            rdlm_bench_sampler_add(sampler, rdlm_bench_now_ns() - ta);
        }
        out->handoffs += (uint64_t)rdlm_mlb_cs(m);
        m->lock_ops->release(m, lock);
        out->sink = rdlm_mlb_local_work(out->sink);
    }
    out->cs += k;
    out->ops = k;
    out->elapsed_ns = rdlm_bench_now_ns() - t0;
}

/* 1 while the holder should keep the lock: the other rank of the pair is still in
 * this run, has not queued yet, and the run's time is not up. */
static int rdlm_mlb_pair_hold(rdlm_mlb_t *m, rdlm_lock_h lock, uint64_t deadline_ns)
{
    rdlm_lock_info_t li;

    if (atomic_load_explicit(&m->sh->stopped, memory_order_acquire) > 2 * m->pair_runs ||
        rdlm_bench_now_ns() > deadline_ns) {
        return 0;
    }
    return rdlm_lock_query(lock, &li) == RDLM_OK && li.waiters == 0;
}

/*
 * Pair hand-offs: acquire; if the other rank held the lock last, one sample: now -
 * the time it stamped just before its release (same machine, same clock); hold the
 * lock until the other rank waits for it (rdlm_lock_query), stamp, release. The locks
 * are FIFO, so the two alternate and every acquire but the first finds the lock held
 * (in a distributed context: the node's cohort holding the global word). For the
 * distributed lock, rdlm_ctx_stats around every acquire (outside the timed interval,
 * which starts at the other's release) counts the remote operations of acquires
 * that were local hand-offs. m->sh->stopped counts finished runs of the pair.
 */
static void rdlm_mlb_run_pair(rdlm_mlb_t *m, rdlm_lock_h lock, uint64_t n, uint64_t cap_ns,
                              rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out)
{
    rdlm_ctx_h ctx = lock == m->lock ? m->ctx : NULL;
    uint64_t t0 = rdlm_bench_now_ns();
    uint64_t t, lat;
    rdlm_stats_t a, b;
    uint64_t k;

    for (k = 0; k < n && rdlm_bench_now_ns() - t0 <= cap_ns; k++) {
        if (ctx != NULL) {
            rdlm_ctx_stats(ctx, &a);
        }
        rdlm_mlb_acquire(m, lock);
        t = rdlm_bench_now_ns();
        if (ctx != NULL) {
            rdlm_ctx_stats(ctx, &b);
        }
        if (rdlm_mlb_cs(m) && m->sh->t_release >= t0) { /* released in this run */
            int local = ctx == NULL || b.local_handoffs != a.local_handoffs;

            lat = t - m->sh->t_release;
            out->handoffs++;
            if (local) {
                out->measured++;
                out->handoff_ns += lat;
                if (sampler != NULL) {
                    rdlm_bench_sampler_add(sampler, lat);
                }
            } else {
                out->global_ns += lat;
            }
            if (ctx != NULL) {
                out->check[0] += (uint64_t)local;
                out->check[1] +=
                    local ? (b.home_ops - a.home_ops) + (b.peer_ops - a.peer_ops) : 0;
                out->check[2]++;
            }
        }
        while (rdlm_mlb_pair_hold(m, lock, t0 + cap_ns)) {
            rdlm_bench_pause();
        }
        m->sh->t_release = rdlm_bench_now_ns();
        rdlm_mlb_release(m, lock);
    }
    atomic_fetch_add_explicit(&m->sh->stopped, 1, memory_order_release);
    m->pair_runs++;
    out->cs += k;
    out->ops = k;
    out->elapsed_ns = rdlm_bench_now_ns() - t0;
}

/* Gather every rank's samples at rank 0 and summarise them (us). */
static void rdlm_mlb_gather_samples(rdlm_mlb_t *m, const rdlm_bench_sampler_t *sampler,
                                    rdlm_bench_summary_t *pct)
{
    int nsamples = (int)sampler->len, total = 0, k;
    int *counts = NULL, *displs = NULL;
    uint32_t *all = NULL;
    double *us = NULL;

    if (m->rank == 0) {
        counts = malloc(sizeof(*counts) * (size_t)m->size);
        displs = malloc(sizeof(*displs) * (size_t)m->size);
        all = malloc(sizeof(*all) * RDLM_MLB_SAMPLES * (size_t)m->size);
        us = malloc(sizeof(*us) * RDLM_MLB_SAMPLES * (size_t)m->size);
        if (counts == NULL || displs == NULL || all == NULL || us == NULL) {
            rdlm_mlb_die(m, "out of memory");
        }
    }
    MPI_Gather(&nsamples, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (m->rank == 0) {
        for (k = 0; k < m->size; k++) {
            displs[k] = total;
            total += counts[k];
        }
    }
    MPI_Gatherv(sampler->buf, nsamples, MPI_UINT32_T, all, counts, displs, MPI_UINT32_T, 0,
                MPI_COMM_WORLD);
    if (m->rank == 0) {
        for (k = 0; k < total; k++) {
            us[k] = all[k] / 1000.0;
        }
        rdlm_bench_summarize(us, (size_t)total, pct);
    }
    free(us);
    free(all);
    free(displs);
    free(counts);
}

/*
 * One phase of several ranks on lock (counter mode: NULL): the ranks taking part (in)
 * warm up, meet, run the timed run, meet again; then the machine's counter is checked
 * and rank 0 gets the round's figure (contended and counter: all operations / max
 * elapsed, kops/s; pair: mean hand-off latency, us), the sampled percentiles and the
 * summed statistics.
 */
static void rdlm_mlb_phase(rdlm_mlb_t *m, uint32_t impl, uint32_t round, int in,
                           rdlm_lock_h lock, rdlm_mlb_run_func_t run, uint64_t cap_ns)
{
    rdlm_bench_sampler_t sampler = {.buf = m->samples,
                                    .cap = RDLM_MLB_SAMPLES,
                                    .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(m->rank + 1)};
    rdlm_mlb_loop_t loop = {.sink = (uint64_t)m->rank + 1};
    uint64_t mine[RDLM_MLB_ST_N] = {0}, sum[RDLM_MLB_ST_N];
    uint64_t c0 = m->sh->cs.counter, cs_sum = 0, elapsed_max = 0;
    rdlm_stats_t before, after;
    rdlm_bench_summary_t pct;
    int k;

    rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL); /* nobody is in a critical section: c0 holds */
    if (in) {
        run(m, lock, m->warmup, RDLM_MLB_WARMUP_CAP_NS, NULL, &loop);
    }
    rdlm_mlb_sync(in ? RDLM_MLB_SPIN : RDLM_MLB_SLEEP, NULL);
    if (in) {
        memset(loop.check, 0, sizeof(loop.check));
        loop.handoffs = loop.measured = loop.handoff_ns = loop.global_ns = 0;
        rdlm_ctx_stats(m->ctx, &before);
        run(m, lock, m->iterations, cap_ns, &sampler, &loop);
        rdlm_ctx_stats(m->ctx, &after);
        if (lock == m->lock) { /* the distributed lock, or counter mode (no lock) */
            rdlm_mlb_stats_sub(&after, &before, mine);
        }
        mine[RDLM_MLB_ST_HANDOFFS] = loop.handoffs;
        mine[RDLM_MLB_ST_OPS] = loop.ops;
        mine[RDLM_MLB_ST_MEASURED] = loop.measured;
        mine[RDLM_MLB_ST_HANDOFF_NS] = loop.handoff_ns;
        mine[RDLM_MLB_ST_GLOBAL_NS] = loop.global_ns;
        memcpy(&mine[RDLM_MLB_ST_CHECK_LOCAL], loop.check, sizeof(loop.check));
    }
    /* The target of MPI one-sided operations (osc pt2pt) serves them in its MPI calls:
     * it keeps calling MPI until the others' last ones are done (also when it does not
     * take part: -m). */
    rdlm_mlb_sync(rdlm_mlb_is_mpi(impl) && m->rank == m->target ? RDLM_MLB_SPIN
                                                                : RDLM_MLB_SLEEP,
                  NULL);
    atomic_store_explicit(&rdlm_mlb_sink, loop.sink, memory_order_relaxed);

    /* Mutual exclusion: the machine's counter grew by its critical sections. */
    MPI_Reduce(&loop.cs, &cs_sum, 1, MPI_UINT64_T, MPI_SUM, 0, m->shm);
    if (m->shm_rank == 0 && m->sh->cs.counter - c0 != cs_sum) {
        rdlm_mlb_die(m,
                     "%s: counter grew by %" PRIu64 " after %" PRIu64
                     " critical sections: two holders at once",
                     rdlm_mlb_impl_names[impl], m->sh->cs.counter - c0, cs_sum);
    }
    MPI_Reduce(mine, sum, RDLM_MLB_ST_N, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&loop.elapsed_ns, &elapsed_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    rdlm_mlb_gather_samples(m, &sampler, &pct);
    if (m->rank != 0) {
        return;
    }
    m->ops[impl][round] = sum[RDLM_MLB_ST_OPS];
    m->handoff_rate[impl][round] =
        (double)sum[RDLM_MLB_ST_HANDOFFS] / ((double)elapsed_max / 1e9) / 1000.0;
    if (run == rdlm_mlb_run_pair) {
        m->value[impl][round] =
            (double)sum[RDLM_MLB_ST_HANDOFF_NS] /
            (double)(sum[RDLM_MLB_ST_MEASURED] ? sum[RDLM_MLB_ST_MEASURED] : 1) / 1000.0;
    } else {
        m->value[impl][round] =
            (double)sum[RDLM_MLB_ST_OPS] / ((double)elapsed_max / 1e9) / 1000.0;
    }
    m->pct[impl][round][0] = pct.p50;
    m->pct[impl][round][1] = pct.p90;
    m->pct[impl][round][2] = pct.p99;
    for (k = 0; k < RDLM_MLB_ST_N; k++) {
        m->stats[impl][k] += sum[k];
    }
}

/* ---- counter mode ------------------------------------------------------------------ */

typedef void (*rdlm_mlb_op_func_t)(rdlm_mlb_t *m);

/* A fetch-add's old value: every rank's must increase (the counter only grows). */
static void rdlm_mlb_old(rdlm_mlb_t *m, rdlm_status_t st, int64_t old)
{
    rdlm_mlb_count_t *c = &m->count[m->impl];

    if (st != RDLM_OK || old <= c->last_old) {
        rdlm_mlb_die(m, "%s: %s, old value %" PRId64 " after %" PRId64,
                     rdlm_mlb_impl_names[m->impl], rdlm_status_str(st), old, c->last_old);
    }
    c->last_old = old;
    c->old_sum += (uint64_t)old;
}

static void rdlm_mlb_op_fadd(rdlm_mlb_t *m)
{
    int64_t old = -1;
    rdlm_status_t st = rdlm_counter_fetch_add(m->counter, 1, &old);

    rdlm_mlb_old(m, st, old);
}

static void rdlm_mlb_op_sharded(rdlm_mlb_t *m)
{
    int64_t old = -1;
    rdlm_status_t st = rdlm_counter_fetch_add(m->sharded, 1, &old);

    rdlm_mlb_old(m, st, old);
}

static void rdlm_mlb_op_mpi_fop(rdlm_mlb_t *m)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_flush(m->target, m->win);
    rdlm_mlb_old(m, RDLM_OK, (int64_t)old);
}

/* Acquire and release one permit; between them, count the holders of this machine. */
static void rdlm_mlb_op_sem(rdlm_mlb_t *m)
{
    rdlm_status_t st = rdlm_sem_acquire(m->sem, 1, RDLM_MLB_ACQUIRE_TIMEOUT_NS);
    uint64_t held;

    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_sem_acquire: %s", rdlm_status_str(st));
    }
    held = atomic_fetch_add_explicit(&m->sh->sem_held, 1, memory_order_acq_rel) + 1;
    if (held > RDLM_MLB_SEM_PERMITS) {
        rdlm_mlb_die(m, "%" PRIu64 " holders of a semaphore of %u permits", held,
                     RDLM_MLB_SEM_PERMITS);
    }
    atomic_fetch_sub_explicit(&m->sh->sem_held, 1, memory_order_release);
    st = rdlm_sem_release(m->sem, 1);
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "rdlm_sem_release: %s", rdlm_status_str(st));
    }
}

static const rdlm_mlb_op_func_t rdlm_mlb_counter_ops[RDLM_MLB_COUNTER_NIMPL] = {
    [RDLM_MLB_FADD - RDLM_MLB_FADD] = rdlm_mlb_op_fadd,
    [RDLM_MLB_MPI_FOP - RDLM_MLB_FADD] = rdlm_mlb_op_mpi_fop,
    [RDLM_MLB_SHARDED - RDLM_MLB_FADD] = rdlm_mlb_op_sharded,
    [RDLM_MLB_SEM - RDLM_MLB_FADD] = rdlm_mlb_op_sem,
};

/* Counter mode: loop { one operation of m->impl } up to n times or cap_ns; with
 * sampler, one operation in RDLM_MLB_SAMPLE_EVERY is timed. */
static void rdlm_mlb_run_ops(rdlm_mlb_t *m, rdlm_lock_h lock, uint64_t n, uint64_t cap_ns,
                             rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out)
{
    rdlm_mlb_op_func_t op = rdlm_mlb_counter_ops[m->impl - RDLM_MLB_FADD];
    uint64_t t0 = rdlm_bench_now_ns(), ta = 0, k;

    (void)lock;
    for (k = 0; k < n && rdlm_bench_now_ns() - t0 <= cap_ns; k++) {
        int timed = sampler != NULL && (k & (RDLM_MLB_SAMPLE_EVERY - 1)) == 0;

        if (timed) {
            ta = rdlm_bench_now_ns();
        }
        op(m);
        if (timed) {
            rdlm_bench_sampler_add(sampler, rdlm_bench_now_ns() - ta);
        }
    }
    m->count[m->impl].done += k;
    m->count[m->impl].last = k;
    out->ops = k;
    out->elapsed_ns = rdlm_bench_now_ns() - t0;
}

/*
 * The home node of name: rdlm homes every object on the node its name hashes to
 * (rdlm.h, "Across nodes"), and the API tells it for locks only, so a lock of that
 * name is asked in a second context of another job name (collective).
 */
static int32_t rdlm_mlb_home_of(rdlm_mlb_t *m, const char *name)
{
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB};
    rdlm_lock_info_t li = {.home_node = -1};
    char job[RDLM_BENCH_JOB_MAX];
    long job_id = (long)getpid();
    rdlm_ctx_h probe;
    rdlm_lock_h lock;
    rdlm_status_t st;

    MPI_Bcast(&job_id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(job, sizeof(job), "mlb-probe-%ld", job_id);
    cp.job = job;
    st = rdlm_mpi_ctx_create(MPI_COMM_WORLD, &cp, &probe);
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "probe context %s: %s", job, rdlm_status_str(st));
    }
    st = rdlm_lock_open(probe, name, &lock);
    if (st == RDLM_OK) {
        st = rdlm_lock_query(lock, &li);
        rdlm_lock_close(lock);
    }
    rdlm_ctx_destroy(probe);
    if (st != RDLM_OK || li.home_node < 0 || (uint32_t)li.home_node >= m->info.nodes) {
        rdlm_mlb_die(m, "home of %s: %s", name, st ? rdlm_status_str(st) : "bad home node");
    }
    return li.home_node;
}

/* The counters, the semaphore, the MPI baselines' target (the lowest rank of the node
 * that holds rdlm's counter word), and the values the counters start from. */
static void rdlm_mlb_counter_open(rdlm_mlb_t *m)
{
    rdlm_status_t st;
    int64_t base[2] = {0, 0};
    int r;

    m->home_node = rdlm_mlb_home_of(m, "bench-counter");
    st = rdlm_counter_open(m->ctx, "bench-counter", &m->counter);
    if (st == RDLM_OK) {
        st = rdlm_counter_open_sharded(m->ctx, "bench-counter-sharded", &m->sharded);
    }
    if (st == RDLM_OK) {
        st = rdlm_sem_open(m->ctx, "bench-sem", RDLM_MLB_SEM_PERMITS, &m->sem);
    }
    if (st == RDLM_OK && m->rank == 0) {
        st = rdlm_counter_read(m->counter, &base[0]);
        if (st == RDLM_OK) {
            st = rdlm_counter_read(m->sharded, &base[1]);
        }
    }
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "counter mode objects: %s", rdlm_status_str(st));
    }
    MPI_Bcast(base, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    m->count[RDLM_MLB_FADD].base = base[0];
    m->count[RDLM_MLB_SHARDED].base = base[1];
    m->partner = -1;
    m->target = -1;
    for (r = m->size - 1; r >= 0; r--) {
        if (m->node_of[r] == (uint32_t)m->home_node) {
            m->target = r;
        }
    }
    if (m->info.nodes < 2 || m->target < 0) {
        rdlm_mlb_die(m,
                     "%u node(s), home node %d (RDLM_VIRTUAL_NODES unset on one "
                     "machine?)",
                     m->info.nodes, m->home_node);
    }
}

static void rdlm_mlb_counter_close(rdlm_mlb_t *m)
{
    rdlm_sem_close(m->sem);
    rdlm_counter_close(m->sharded);
    rdlm_counter_close(m->counter);
}

/* The value to check after a phase of impl, read by the rank that returns 1: the
 * counter (rank 0), the window word (its target, under a shared lock of its own), the
 * semaphore's free permits (rank 0). */
static int rdlm_mlb_counter_value(rdlm_mlb_t *m, uint32_t impl, int64_t *value_p)
{
    rdlm_status_t st = RDLM_OK;
    uint64_t word = 0;
    uint32_t avail = 0;

    if (m->rank != (rdlm_mlb_on_window(impl) ? m->target : 0)) {
        return 0;
    }
    switch (impl) {
    case RDLM_MLB_MPI_FOP:
    case RDLM_MLB_WIN_LOCK:
        MPI_Win_lock(MPI_LOCK_SHARED, m->target, 0, m->win);
        MPI_Fetch_and_op(NULL, &word, MPI_UINT64_T, m->target, 0, MPI_NO_OP, m->win);
        MPI_Win_unlock(m->target, m->win);
        *value_p = (int64_t)word;
        return 1;
    case RDLM_MLB_SEM:
        st = rdlm_sem_available(m->sem, &avail);
        *value_p = avail;
        break;
    default:
        st = rdlm_counter_read(impl == RDLM_MLB_FADD ? m->counter : m->sharded, value_p);
        break;
    }
    if (st != RDLM_OK) {
        rdlm_mlb_die(m, "%s: reading the value: %s", rdlm_mlb_impl_names[impl],
                     rdlm_status_str(st));
    }
    return 1;
}

/*
 * After a phase of impl (every rank): the counter equals its start plus every rank's
 * fetch-adds so far, and (one counter word) the old values returned were distinct,
 * base .. base + n - 1, whose sum is n * base + n (n - 1) / 2 (mod 2^64); the
 * semaphore has all its permits free. Rank 0 keeps the figures for the output.
 */
static void rdlm_mlb_counter_check(rdlm_mlb_t *m, uint32_t impl)
{
    rdlm_mlb_count_t *c = &m->count[impl];
    uint64_t mine[2] = {c->done, c->old_sum}, all[2], n, expect_sum;
    int64_t value = 0, expect;
    int reader = rdlm_mlb_counter_value(m, impl, &value);

    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    n = all[0];
    expect = impl == RDLM_MLB_SEM ? (int64_t)RDLM_MLB_SEM_PERMITS : c->base + (int64_t)n;
    expect_sum = n * (uint64_t)c->base + (n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n);
    if (reader && value != expect) {
        rdlm_mlb_die(m,
                     "%s: %s %" PRId64 " after %" PRIu64 " operations, expected %" PRId64,
                     rdlm_mlb_impl_names[impl],
                     impl == RDLM_MLB_SEM ? "permits free" : "counter", value, n, expect);
    }
    if (reader && (impl == RDLM_MLB_FADD || rdlm_mlb_on_window(impl)) &&
        all[1] != expect_sum) {
        rdlm_mlb_die(m,
                     "%s: the old values sum to %" PRIu64 ", not %" PRIu64
                     ": two fetch-adds returned the same",
                     rdlm_mlb_impl_names[impl], all[1], expect_sum);
    }
    MPI_Bcast(&value, 1, MPI_INT64_T, rdlm_mlb_on_window(impl) ? m->target : 0,
              MPI_COMM_WORLD);
    c->total = n;
    c->value = value;
}

/* ---- contended mode's locks ------------------------------------------------------- */

/* MPI_Win_lock(EXCLUSIVE) at the target, then a fetch-add of its word [0] completed by
 * a flush: MPI may take a lock lazily, but not later than the first operation under
 * it, so the lock is held once the old value is back (an acquire fence then orders the
 * critical section after it). The old value is counted for the checks of m->impl. */
static void rdlm_mlb_win_acquire(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    (void)lock;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, m->target, 0, m->win);
    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_flush(m->target, m->win);
    atomic_thread_fence(memory_order_acquire);
    rdlm_mlb_old(m, RDLM_OK, (int64_t)old);
    m->count[m->impl].done++;
}

/* MPI_Win_unlock, after a release fence that orders the critical section before it. */
static void rdlm_mlb_win_release(rdlm_mlb_t *m, rdlm_lock_h lock)
{
    (void)lock;
    atomic_thread_fence(memory_order_release);
    MPI_Win_unlock(m->target, m->win);
}

/* The locks of contended mode's impls (rdlm_mlb_contended_impls). */
static const rdlm_mlb_lock_ops_t rdlm_mlb_lock_ops[RDLM_MLB_NIMPL] = {
    [RDLM_MLB_RDLM] = {.acquire = rdlm_mlb_acquire, .release = rdlm_mlb_release},
    [RDLM_MLB_WIN_LOCK] = {.acquire = rdlm_mlb_win_acquire,
                           .release = rdlm_mlb_win_release},
    [RDLM_MLB_CAS_SPIN] = {.acquire = rdlm_mlb_cas_acquire,
                           .release = rdlm_mlb_cas_release},
};

/* ---- memory ------------------------------------------------------------------------ */

/* VmRSS of this process in KiB (/proc/self/status), or 0. */
static uint64_t rdlm_mlb_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    unsigned long long kib = 0;
    char line[256];

    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "VmRSS: %llu kB", &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib;
}

static void rdlm_mlb_out_begin(rdlm_mlb_t *m);

/* One row of memory mode: KiB of resident growth, at nodes remote nodes used. */
static void rdlm_mlb_memory_row(rdlm_mlb_t *m, uint64_t nodes, const char *what,
                                uint64_t kib)
{
    rdlm_bench_out_row_t row = {.size = nodes,
                                .impl = what,
                                .unit = "KiB",
                                .median = (double)kib,
                                .min = (double)kib,
                                .max = (double)kib,
                                .p50 = NAN,
                                .p90 = NAN,
                                .p99 = NAN,
                                .rounds = 1};

    rdlm_bench_out_row(&m->out, &row);
}

/*
 * Resident memory: every rank's growth across rdlm_mpi_ctx_create (rank 0 gets its
 * own and the largest); then rank 0 opens lock names one by one and, each time one is
 * homed on a remote node it has not used yet, acquires and releases it (endpoint,
 * keys) and reports its growth since the context existed against the number of
 * remote nodes used. The other ranks sleep (their progress threads serve).
 */
static void rdlm_mlb_memory(rdlm_mlb_t *m)
{
    uint64_t rss0 = rdlm_mlb_rss_kib(), rss1, grow, grow_max = 0;
    rdlm_lock_h locks[RDLM_MLB_LOCK_PROBES];
    uint32_t nlocks = 0, used = 0, k;
    rdlm_lock_info_t li;
    char name[RDLM_NAME_MAX + 1];
    unsigned char *seen;
    rdlm_status_t st;

    rdlm_mlb_ctx_open(m);
    rss1 = rdlm_mlb_rss_kib();
    grow = rss1 - rss0;
    MPI_Reduce(&grow, &grow_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (m->rank != 0) {
        rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL);
        return;
    }
    rdlm_mlb_out_begin(m);
    rdlm_mlb_memory_row(m, 0, "rdlm_ctx", grow);
    rdlm_mlb_memory_row(m, 0, "rdlm_ctx_max", grow_max);
    if (m->result_lines) {
        printf("RESULT memory nodes=%u ctx_kib=%" PRIu64 " ctx_kib_max=%" PRIu64
               " rss_kib=%" PRIu64 "\n",
               m->info.nodes, grow, grow_max, rss1);
    }
    seen = calloc(m->info.nodes, 1);
    if (seen == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    seen[m->info.node] = 1;
    for (k = 0; k < 16 * RDLM_MLB_LOCK_PROBES && nlocks < RDLM_MLB_LOCK_PROBES &&
                used + 1 < m->info.nodes;
         k++) {
        snprintf(name, sizeof(name), "bench-mem-%u", k);
        st = rdlm_lock_open(m->ctx, name, &locks[nlocks]);
        if (st == RDLM_OK) {
            st = rdlm_lock_query(locks[nlocks], &li);
        }
        if (st != RDLM_OK || li.home_node < 0 || (uint32_t)li.home_node >= m->info.nodes) {
            rdlm_mlb_die(m, "%s: %s", name, st ? rdlm_status_str(st) : "bad home node");
        }
        if (seen[li.home_node]) {
            rdlm_lock_close(locks[nlocks]);
            continue;
        }
        seen[li.home_node] = 1;
        used++;
        st = rdlm_lock_acquire(locks[nlocks], RDLM_MLB_ACQUIRE_TIMEOUT_NS, NULL);
        if (st == RDLM_OK) {
            st = rdlm_lock_release(locks[nlocks]);
        }
        if (st != RDLM_OK) {
            rdlm_mlb_die(m, "%s: %s", name, rdlm_status_str(st));
        }
        grow = rdlm_mlb_rss_kib() - rss1;
        rdlm_mlb_memory_row(m, used, "rdlm_remote", grow);
        if (m->result_lines) {
            printf("RESULT memory_node used=%u home_node=%d kib=%" PRIu64 "\n", used,
                   li.home_node, grow);
        }
        nlocks++;
    }
    if (m->result_lines) {
        printf("RESULT done\n");
    }
    rdlm_bench_out_end(&m->out);
    while (nlocks > 0) {
        rdlm_lock_close(locks[--nlocks]);
    }
    free(seen);
    rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL);
}

/* ---- rounds ------------------------------------------------------------------------- */

static void rdlm_mlb_uncontended_round(rdlm_mlb_t *m, uint32_t impl, uint32_t round)
{
    int pair = m->rank == 0 || m->rank == m->partner;

    switch (impl) {
    case RDLM_MLB_COHORT:
    case RDLM_MLB_NODE:
        if (m->partner < 0) {
            return;
        }
        rdlm_mlb_phase(m, impl, round, pair,
                       impl == RDLM_MLB_COHORT ? m->lock : m->node_lock, rdlm_mlb_run_pair,
                       m->cap_ns);
        return;
    default:
        rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL);
        if (m->rank == 0) {
            rdlm_mlb_origin(m, impl, round);
            rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL);
        } else if (m->rank == m->target && impl != RDLM_MLB_RDLM &&
                   impl != RDLM_MLB_VERBS) {
            /* MPI one-sided over ob1/pt2pt and raw ucp atomics over TCP run in the
             * target's progress; rdlm has its own progress thread, and the adapter
             * answers raw verbs atomics. */
            rdlm_mlb_sync(impl == RDLM_MLB_UCP_WAKE ? RDLM_MLB_WAKE : RDLM_MLB_SPIN,
                          rdlm_mlb_is_mpi(impl) ? NULL : m->ucp.worker);
        } else {
            rdlm_mlb_sync(RDLM_MLB_SLEEP, NULL);
        }
        return;
    }
}

static void rdlm_mlb_contended_round(rdlm_mlb_t *m, uint32_t impl, uint32_t round)
{
    m->impl = impl;
    m->lock_ops = &rdlm_mlb_lock_ops[impl];
    if (impl == RDLM_MLB_CAS_SPIN) {
        MPI_Win_lock_all(0, m->win);
    }
    rdlm_mlb_phase(m, impl, round, (uint64_t)m->rank < m->contenders,
                   impl == RDLM_MLB_RDLM ? m->lock : NULL, rdlm_mlb_run_loop,
                   m->duration_ns);
    if (impl == RDLM_MLB_CAS_SPIN) {
        MPI_Win_unlock_all(m->win);
    }
    if (rdlm_mlb_on_window(impl)) {
        rdlm_mlb_counter_check(m, impl);
    }
}

static void rdlm_mlb_counter_round(rdlm_mlb_t *m, uint32_t impl, uint32_t round)
{
    uint64_t off, off_sum = 0;

    m->impl = impl;
    if (impl == RDLM_MLB_MPI_FOP) {
        MPI_Win_lock_all(0, m->win);
    }
    rdlm_mlb_phase(m, impl, round, (uint64_t)m->rank < m->contenders, NULL,
                   rdlm_mlb_run_ops, m->duration_ns);
    if (impl == RDLM_MLB_MPI_FOP) {
        MPI_Win_unlock_all(m->win);
    }
    rdlm_mlb_counter_check(m, impl);
    /* The share of the figure that crossed nodes: the ranks off the word's node. */
    off = m->node_of[m->rank] != (uint32_t)m->home_node ? m->count[impl].last : 0;
    MPI_Reduce(&off, &off_sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (m->rank == 0 && m->ops[impl][round] > 0) {
        m->offnode_rate[impl][round] =
            m->value[impl][round] * (double)off_sum / (double)m->ops[impl][round];
    }
}

/* What the measuring modes alternate: their implementations, in this order in a
 * round, and one phase of one of them. */
typedef struct rdlm_mlb_mode_def {
    const uint32_t *impls;
    uint32_t nimpl;
    void (*round)(rdlm_mlb_t *m, uint32_t impl, uint32_t round);
} rdlm_mlb_mode_def_t;

static const uint32_t rdlm_mlb_uncontended_impls[] = {
    RDLM_MLB_RDLM,     RDLM_MLB_UCP,    RDLM_MLB_UCP_WAKE, RDLM_MLB_WIN_LOCK,
    RDLM_MLB_CAS_SPIN, RDLM_MLB_COHORT, RDLM_MLB_NODE,     RDLM_MLB_VERBS};
static const uint32_t rdlm_mlb_contended_impls[] = {RDLM_MLB_RDLM, RDLM_MLB_WIN_LOCK,
                                                    RDLM_MLB_CAS_SPIN};
static const uint32_t rdlm_mlb_counter_impls[] = {RDLM_MLB_FADD, RDLM_MLB_MPI_FOP,
                                                  RDLM_MLB_SHARDED, RDLM_MLB_SEM};

#define RDLM_MLB_IMPLS(list) list, sizeof(list) / sizeof(list[0])

static const rdlm_mlb_mode_def_t rdlm_mlb_mode_defs[RDLM_MLB_NMODES] = {
    [RDLM_MLB_UNCONTENDED] = {RDLM_MLB_IMPLS(rdlm_mlb_uncontended_impls),
                              rdlm_mlb_uncontended_round},
    [RDLM_MLB_CONTENDED] = {RDLM_MLB_IMPLS(rdlm_mlb_contended_impls),
                            rdlm_mlb_contended_round},
    [RDLM_MLB_COUNTER] = {RDLM_MLB_IMPLS(rdlm_mlb_counter_impls), rdlm_mlb_counter_round},
};

/* One phase of the mode's k-th implementation (a round function of rounds.h). */
static int rdlm_mlb_round(uint32_t k, uint32_t round, void *arg)
{
    rdlm_mlb_t *m = arg;

    m->def->round(m, m->impls[k], round);
    if (m->rank == 0) {
        rdlm_bench_out_progress(&m->out, RDLM_MLB_TOOL, ++m->phases, m->nphases,
                                rdlm_mlb_impl_names[m->impls[k]]);
    }
    return 0;
}

/* The implementations to alternate: the mode's, or (--impls) those named, in that
 * order; 0, or -1 for a name that is not the mode's or is repeated. */
static int rdlm_mlb_impls_select(rdlm_mlb_t *m)
{
    const rdlm_mlb_mode_def_t *def = &rdlm_mlb_mode_defs[m->mode];
    char buf[128];
    char *save = NULL;
    char *tok;
    uint32_t k, j;

    m->def = def;
    m->nimpl = 0;
    if (m->impls_arg == NULL) {
        for (k = 0; k < def->nimpl; k++) {
            if (def->impls[k] != RDLM_MLB_VERBS || m->have_verbs) {
                m->impls[m->nimpl++] = def->impls[k];
            }
        }
        return 0;
    }
    if (strlen(m->impls_arg) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, m->impls_arg);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < def->nimpl && strcmp(tok, rdlm_mlb_impl_names[def->impls[k]]) != 0;
             k++) {
        }
        for (j = 0; j < m->nimpl && k < def->nimpl && m->impls[j] != def->impls[k]; j++) {
        }
        if (k == def->nimpl || j < m->nimpl) {
            return -1;
        }
        m->impls[m->nimpl++] = def->impls[k];
    }
    return m->nimpl > 0 ? 0 : -1;
}

/* ---- output ------------------------------------------------------------------------- */

/* Who chose the MPI baselines' osc components, as the output says it. */
static const char *rdlm_mlb_osc_by(enum rdlm_bench_mpi_osc who)
{
    return who == RDLM_BENCH_OSC_CHOSEN ? "benchmark"
           : who == RDLM_BENCH_OSC_USER ? "user"
                                        : "mpi";
}

static void rdlm_mlb_print(const rdlm_mlb_t *m)
{
    const char *tls = getenv("UCX_TLS");
    uint32_t impl, round, j;
    int k;

    printf("RESULT info mode=%s nprocs=%d nodes=%u home_node=%d origin=0 target=%d "
           "partner=%d lock=%s cohort_bound=%u transport=%s progress_thread=%d "
           "ucx_tls=%s osc=%s osc_by=%s\n",
           rdlm_mlb_mode_names[m->mode], m->size, m->info.nodes, m->home_node, m->target,
           m->partner, m->lock_name[0] ? m->lock_name : "-", m->info.cohort_bound,
           m->info.transport ? m->info.transport : "?", m->info.progress_thread,
           tls ? tls : "(unset)", m->osc, rdlm_mlb_osc_by(m->osc_who));
    for (j = 0; j < m->nimpl; j++) {
        impl = m->impls[j];
        if ((impl == RDLM_MLB_COHORT || impl == RDLM_MLB_NODE) && m->partner < 0) {
            continue;
        }
        for (round = 0; round < m->rounds; round++) {
            printf("RESULT round impl=%s round=%u value=%.6f unit=%s p50_us=%.6f "
                   "p90_us=%.6f p99_us=%.6f ops=%" PRIu64 " handoff_kops=%.6f "
                   "offnode_kops=%.6f\n",
                   rdlm_mlb_impl_names[impl], round, m->value[impl][round],
                   m->mode == RDLM_MLB_UNCONTENDED ? "us" : "kops/s",
                   m->pct[impl][round][0], m->pct[impl][round][1], m->pct[impl][round][2],
                   m->ops[impl][round], m->handoff_rate[impl][round],
                   m->offnode_rate[impl][round]);
        }
        if (impl == RDLM_MLB_RDLM || impl == RDLM_MLB_COHORT ||
            (impl >= RDLM_MLB_FADD && impl != RDLM_MLB_MPI_FOP)) {
            printf("RESULT stats impl=%s", rdlm_mlb_impl_names[impl]);
            for (k = 0; k < RDLM_MLB_ST_N; k++) {
                printf(" %s=%" PRIu64, rdlm_mlb_stat_names[k], m->stats[impl][k]);
            }
            printf("\n");
        }
        if (impl >= RDLM_MLB_FADD ||
            (m->mode == RDLM_MLB_CONTENDED && rdlm_mlb_on_window(impl))) {
            printf("RESULT check impl=%s ops=%" PRIu64 " value=%" PRId64 " base=%" PRId64
                   "\n",
                   rdlm_mlb_impl_names[impl], m->count[impl].total, m->count[impl].value,
                   m->count[impl].base);
        }
    }
    printf("RESULT done\n");
    fflush(stdout);
}

/* The '#' header (the JSON object's fields, CSV: its header row): what runs, the osc
 * components and who chose them, the virtual nodes. Rank 0. */
static void rdlm_mlb_out_begin(rdlm_mlb_t *m)
{
    static const char vnodes[] = "RDLM_VIRTUAL_NODES=2 (set by the benchmark: one machine)";
    char mode[160], osc[240];
    const char *notes[3] = {mode, osc, vnodes};

    snprintf(mode, sizeof(mode),
             "mode %s, %u round(s), %" PRIu64 " warm-up; Size: %s; rdlm transport %s",
             rdlm_mlb_mode_names[m->mode], m->rounds, m->warmup,
             m->mode == RDLM_MLB_MEMORY        ? "remote nodes used"
             : m->mode == RDLM_MLB_UNCONTENDED ? "ranks measured"
                                               : "contending ranks",
             m->info.transport ? m->info.transport : "?");
    if (m->osc_who == RDLM_BENCH_OSC_CHOSEN) {
        snprintf(osc, sizeof(osc),
                 "MPI one-sided: osc %s, chosen by the benchmark (Open MPI 4.1's osc rdma "
                 "crashes in MPI_Compare_and_swap over vader); --mca osc X to choose",
                 m->osc);
    } else {
        snprintf(osc, sizeof(osc), "MPI one-sided: osc %s (%s)", m->osc,
                 m->osc_who == RDLM_BENCH_OSC_USER ? "OMPI_MCA_osc" : "the MPI's choice");
    }
    m->out.size = m->mode == RDLM_MLB_MEMORY ? "Nodes" : "Ranks";
    rdlm_bench_out_begin(&m->out, "lock", m->size, m->info.nodes, notes,
                         m->vnodes_chosen ? 3 : 2);
}

/* One row per implementation at the size just run (rank 0). */
static void rdlm_mlb_rows(rdlm_mlb_t *m)
{
    rdlm_bench_out_row_t row;
    uint32_t impl, j, round;
    int pair;

    for (j = 0; j < m->nimpl; j++) {
        impl = m->impls[j];
        pair = impl == RDLM_MLB_COHORT || impl == RDLM_MLB_NODE;
        if (pair && m->partner < 0) {
            continue;
        }
        row = (rdlm_bench_out_row_t){
            .size = m->mode != RDLM_MLB_UNCONTENDED ? m->contenders
                    : pair                          ? 2
                                                    : 1,
            .impl = rdlm_mlb_impl_names[impl],
            .unit = m->mode == RDLM_MLB_UNCONTENDED ? "us" : "kops/s",
        };
        rdlm_bench_out_over_rounds(&row, m->value[impl], m->pct[impl], m->rounds);
        for (round = 0; round < m->rounds; round++) {
            row.ops += m->ops[impl][round];
        }
        rdlm_bench_out_row(&m->out, &row);
    }
}

/* -m's next size after s: doubled, the last one max; 0 after max. */
static uint64_t rdlm_mlb_next_size(uint64_t s, uint64_t max)
{
    return s >= max ? 0 : 2 * s < max ? 2 * s : max;
}

/* Every size of -m (contended, counter; otherwise all ranks, once): the rounds, then
 * rank 0's rows (and, --result-lines, RESULT lines); the results are reset between
 * sizes, the counters' checks run on. */
static void rdlm_mlb_run(rdlm_mlb_t *m)
{
    uint64_t lo = m->size_max ? m->size_min : (uint64_t)m->size;
    uint64_t hi = m->size_max ? m->size_max : (uint64_t)m->size;
    uint64_t s;

    for (s = lo; s != 0; s = rdlm_mlb_next_size(s, hi)) {
        m->nphases += m->nimpl * m->rounds;
    }
    if (m->rank == 0) {
        rdlm_mlb_out_begin(m);
    }
    for (s = lo; s != 0; s = rdlm_mlb_next_size(s, hi)) {
        m->contenders = s;
        memset(m->value, 0, sizeof(m->value));
        memset(m->pct, 0, sizeof(m->pct));
        memset(m->ops, 0, sizeof(m->ops));
        memset(m->handoff_rate, 0, sizeof(m->handoff_rate));
        memset(m->offnode_rate, 0, sizeof(m->offnode_rate));
        memset(m->stats, 0, sizeof(m->stats));
        rdlm_bench_alternate(m->nimpl, m->rounds, rdlm_mlb_round, m);
        if (m->rank == 0) {
            rdlm_mlb_rows(m);
            if (m->result_lines) {
                rdlm_mlb_print(m);
            }
        }
    }
    if (m->rank == 0) {
        rdlm_bench_out_end(&m->out);
    }
}

int main(int argc, char **argv)
{
    rdlm_mlb_t *m = calloc(1, sizeof(*m));
    uint32_t k;
    int rc;

    if (m == NULL) {
        fprintf(stderr, "rdlm-mpi-lock-bench: out of memory\n");
        return 1;
    }
    m->osc_who = rdlm_bench_mpi_osc_choose(&m->osc); /* before MPI_Init reads it */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
#if RDLM_BENCH_HAVE_VERBS
    m->have_verbs = m->rank == 0 && rdlm_bench_ibv_available();
    MPI_Bcast(&m->have_verbs, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    rc = rdlm_mlb_options(m, argc, argv);
    if (rc < 0 && rdlm_mlb_impls_select(m) != 0) {
        if (m->rank == 0) {
            rdlm_cli_usage_error(RDLM_MLB_TOOL,
                                 "--impls %s: not the names of %s mode's implementations",
                                 m->impls_arg, rdlm_mlb_mode_names[m->mode]);
        }
        rc = RDLM_CLI_EXIT_USAGE;
    }
    if (rc >= 0) {
        MPI_Finalize();
        free(m);
        return rc;
    }
    if (m->size < 2) {
        rdlm_mlb_die(m, "needs at least 2 ranks on 2 nodes (RDLM_VIRTUAL_NODES=2 on one "
                        "machine)");
    }
    m->batch = malloc(sizeof(*m->batch) * (m->iterations / RDLM_MLB_BATCH + 1));
    m->samples = malloc(sizeof(*m->samples) * RDLM_MLB_SAMPLES);
    if (m->batch == NULL || m->samples == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    rdlm_bench_out_start(&m->out);
    rdlm_mlb_shared_map(m);
    if (m->mode == RDLM_MLB_MEMORY) {
        rdlm_mlb_memory(m);
        goto out;
    }
    rdlm_mlb_ctx_open(m);
    for (k = 0; k < RDLM_MLB_NIMPL; k++) {
        m->count[k] = (rdlm_mlb_count_t){.last_old = -1};
    }
    if (m->mode == RDLM_MLB_COUNTER) {
        rdlm_mlb_counter_open(m);
    } else {
        rdlm_mlb_lock_choose(m);
    }
    if (m->mode == RDLM_MLB_UNCONTENDED) {
        rdlm_mlb_baselines_open(m);
    }
    rdlm_mlb_win_open(m);
    rdlm_mlb_run(m);
    if (m->mode == RDLM_MLB_UNCONTENDED) {
        rdlm_mlb_baselines_close(m);
    } else if (m->mode == RDLM_MLB_COUNTER) {
        rdlm_mlb_counter_close(m);
    }
    MPI_Win_free(&m->win);
    if (m->lock != NULL) {
        rdlm_lock_close(m->lock);
    }
out:
    rdlm_ctx_destroy(m->ctx);
    munmap(m->sh, sizeof(*m->sh));
    MPI_Comm_free(&m->shm);
    free(m->node_of);
    free(m->samples);
    free(m->batch);
    free(m);
    MPI_Finalize();
    return 0;
}
