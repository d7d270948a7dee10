/*
 * The implementations rdlm-mpi-lock-bench alternates, each an adapter
 * (rdlm_mlb_ops_t, mpi_lock_bench.h): rdlm's lock, counters and semaphore, and the
 * baselines of the same operations, raw ucp and verbs atomics and MPI one-sided
 * locks and fetch-adds. mpi_lock_bench.c documents what each measures.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "mpi_lock_bench.h"

#define RDLM_MLB_KEY_MAX 512u

/* The target's raw word and how to reach it (sent to the origin). */
typedef struct rdlm_mlb_ucp_key {
    uint64_t addr;
    uint64_t key_len;
    uint64_t address_len;
    unsigned char key[RDLM_MLB_KEY_MAX];
} rdlm_mlb_ucp_key_t;

/* The stubs of unset entries (rdlm_mlb_ops_fill): do nothing; read 0. */
static void rdlm_mlb_nothing(rdlm_mlb_t *m)
{
    (void)m;
}

static int64_t rdlm_mlb_read_nothing(rdlm_mlb_t *m)
{
    (void)m;
    return 0;
}

rdlm_lock_h rdlm_mlb_rdlm_lock(const rdlm_mlb_t *m)
{
    return m->ops->node_lock ? m->node_lock : m->lock;
}

/* An rdlm lock: acquire (its token must increase), release. */
static void rdlm_mlb_rdlm_acquire(rdlm_mlb_t *m)
{
    uint64_t token = 0;
    rdlm_status_t st =
        rdlm_lock_acquire(rdlm_mlb_rdlm_lock(m), RDLM_MLB_ACQUIRE_TIMEOUT_NS, &token);

    rdlm_mlb_old(m, st, (int64_t)token);
}

static void rdlm_mlb_rdlm_release(rdlm_mlb_t *m)
{
    rdlm_mlb_ok(m, rdlm_lock_release(rdlm_mlb_rdlm_lock(m)), "rdlm_lock_release");
}

static const rdlm_mlb_ops_t rdlm_mlb_rdlm_ops = {
    .acquire = rdlm_mlb_rdlm_acquire,
    .release = rdlm_mlb_rdlm_release,
    .rdlm = 1,
};

/* The node-only context and its lock (origin and partner). */
static void rdlm_mlb_node_open(rdlm_mlb_t *m)
{
    rdlm_ctx_params_t cp = {.field_mask = RDLM_CTX_FIELD_JOB};
    char job[RDLM_BENCH_JOB_MAX];
    long job_id = (long)getpid();

    MPI_Bcast(&job_id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (m->rank != 0 && m->rank != m->partner) {
        return;
    }
    snprintf(job, sizeof(job), "mlb-node-%ld", job_id);
    cp.job = job;
    rdlm_mlb_ok(m, rdlm_ctx_create(&cp, &m->node_ctx), "node-only context");
    rdlm_mlb_ok(m, rdlm_lock_open(m->node_ctx, "bench-node-lock", &m->node_lock),
                "node-only lock");
}

static void rdlm_mlb_node_close(rdlm_mlb_t *m)
{
    if (m->node_ctx != NULL) {
        rdlm_ctx_destroy(m->node_ctx);
    }
}

static const rdlm_mlb_ops_t rdlm_mlb_node_ops = {
    .open = rdlm_mlb_node_open,
    .close = rdlm_mlb_node_close,
    .acquire = rdlm_mlb_rdlm_acquire,
    .release = rdlm_mlb_rdlm_release,
    .node_lock = 1,
};

/* The raw ucp word at the target and the origin's endpoint (once for both ucp
 * impls): the target sends its word's key and worker address. */
static void rdlm_mlb_ucp_open(rdlm_mlb_t *m)
{
    rdlm_mlb_ucp_key_t key = {0};
    char why[256];
    char *peer;
    size_t len;

    if ((m->rank != 0 && m->rank != m->target) || m->ucp.context != NULL) {
        return;
    }
    if (rdlm_bench_ucp_open(&m->ucp, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
    if (m->rank == m->target) {
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
    if ((peer = malloc(key.address_len)) == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    MPI_Recv(peer, (int)key.address_len, MPI_BYTE, m->target, 1, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (rdlm_bench_ucp_connect(&m->ucp, peer, key.key, key.addr, why, sizeof(why)) != 0) {
        rdlm_mlb_die(m, "%s", why);
    }
    free(peer);
}

/* The origin disconnects while the target progresses, then both close. */
static void rdlm_mlb_ucp_close(rdlm_mlb_t *m)
{
    if (m->rank == 0) {
        rdlm_bench_ucp_disconnect(&m->ucp);
    }
    rdlm_mlb_sync(m, m->rank == m->target && m->ucp.context != NULL ? RDLM_MLB_SPIN_UCP
                                                                    : RDLM_MLB_SLEEP);
    rdlm_bench_ucp_close(&m->ucp);
}

static void rdlm_mlb_ucp_acquire(rdlm_mlb_t *m)
{
    uint64_t old = 0;
    ucs_status_t s = rdlm_bench_ucp_amo(&m->ucp, UCP_ATOMIC_OP_SWAP, RDLM_MLB_HELD, &old);

    if (s != UCS_OK || old != 0) {
        rdlm_mlb_die(m, "raw SWAP: %s, old %#" PRIx64, ucs_status_string(s), old);
    }
}

static void rdlm_mlb_ucp_release(rdlm_mlb_t *m)
{
    uint64_t old = 0; /* CSWAP: compare with HELD, swap in 0 */
    ucs_status_t s = rdlm_bench_ucp_amo(&m->ucp, UCP_ATOMIC_OP_CSWAP, RDLM_MLB_HELD, &old);

    if (s != UCS_OK || old != RDLM_MLB_HELD) {
        rdlm_mlb_die(m, "raw CSWAP: %s, old %#" PRIx64, ucs_status_string(s), old);
    }
}

static const rdlm_mlb_ops_t rdlm_mlb_ucp_ops = {
    .open = rdlm_mlb_ucp_open,
    .close = rdlm_mlb_ucp_close,
    .acquire = rdlm_mlb_ucp_acquire,
    .release = rdlm_mlb_ucp_release,
    .serve = RDLM_MLB_SPIN_UCP,
};

static const rdlm_mlb_ops_t rdlm_mlb_ucp_wake_ops = {
    .open = rdlm_mlb_ucp_open,
    .close = rdlm_mlb_ucp_close,
    .acquire = rdlm_mlb_ucp_acquire,
    .release = rdlm_mlb_ucp_release,
    .serve = RDLM_MLB_WAKE_UCP,
};

#if RDLM_BENCH_HAVE_VERBS
/* verbs_amo's queue pairs (origin, target), connected by swapping their records. */
static void rdlm_mlb_verbs_open(rdlm_mlb_t *m)
{
    rdlm_bench_ibv_rec_t peer;
    char why[256];
    int other = m->rank == 0 ? m->target : 0;

    if (m->rank != 0 && m->rank != m->target) {
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
}

/* After a barrier: no atomic is in flight. */
static void rdlm_mlb_verbs_close(rdlm_mlb_t *m)
{
    rdlm_mlb_sync(m, RDLM_MLB_SLEEP);
    rdlm_bench_ibv_close(&m->ibv);
}

/* One blocking CAS of the target's word, compare -> swap, which it must find. */
static void rdlm_mlb_verbs_cas(rdlm_mlb_t *m, uint64_t compare, uint64_t swap)
{
    char why[256] = "";
    uint64_t old = ~0ull;

    if (rdlm_bench_ibv_cswap(&m->ibv, compare, swap, &old, why, sizeof(why)) != 0 ||
        old != compare) {
        rdlm_mlb_die(m, "raw verbs CAS %#" PRIx64 " -> %#" PRIx64 ": old %#" PRIx64 " %s",
                     compare, swap, old, why);
    }
}

static void rdlm_mlb_verbs_acquire(rdlm_mlb_t *m)
{
    rdlm_mlb_verbs_cas(m, 0, RDLM_MLB_HELD);
}

static void rdlm_mlb_verbs_release(rdlm_mlb_t *m)
{
    rdlm_mlb_verbs_cas(m, RDLM_MLB_HELD, 0);
}

static const rdlm_mlb_ops_t rdlm_mlb_verbs_ops = {
    .open = rdlm_mlb_verbs_open,
    .close = rdlm_mlb_verbs_close,
    .acquire = rdlm_mlb_verbs_acquire,
    .release = rdlm_mlb_verbs_release,
    .device = 1,
};
#else
static void rdlm_mlb_verbs_open(rdlm_mlb_t *m)
{
    rdlm_mlb_die(m, "verbs_amo: built without verbs (RDLM_WITH_VERBS=OFF)");
}

static const rdlm_mlb_ops_t rdlm_mlb_verbs_ops = {.open = rdlm_mlb_verbs_open, .device = 1};
#endif

/* MPI's epoch over the whole window, for the impls of one MPI_Win_lock_all. */
static void rdlm_mlb_lock_all(rdlm_mlb_t *m)
{
    MPI_Win_lock_all(0, m->win);
}

static void rdlm_mlb_unlock_all(rdlm_mlb_t *m)
{
    MPI_Win_unlock_all(m->win);
}

/* MPI_Win_lock(EXCLUSIVE) at the target, then a fetch-add of its word [0] completed by
 * a flush: MPI may take a lock lazily, but not later than the first operation under
 * it, so the lock is held once the old value is back. */
static void rdlm_mlb_win_acquire(rdlm_mlb_t *m)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, m->target, 0, m->win);
    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_flush(m->target, m->win);
    atomic_thread_fence(memory_order_acquire);
    rdlm_mlb_old(m, RDLM_OK, (int64_t)old);
}

static void rdlm_mlb_win_release(rdlm_mlb_t *m)
{
    atomic_thread_fence(memory_order_release);
    MPI_Win_unlock(m->target, m->win);
}

/* Uncontended: lock, fetch-add, unlock, which completes the fetch-add. */
static void rdlm_mlb_win_cycle(rdlm_mlb_t *m)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, m->target, 0, m->win);
    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_unlock(m->target, m->win);
    rdlm_mlb_old(m, RDLM_OK, (int64_t)old);
}

/* The window word [0] (the target's, under a shared lock of its own). */
static int64_t rdlm_mlb_win_read(rdlm_mlb_t *m)
{
    uint64_t word = 0;

    MPI_Win_lock(MPI_LOCK_SHARED, m->target, 0, m->win);
    MPI_Fetch_and_op(NULL, &word, MPI_UINT64_T, m->target, 0, MPI_NO_OP, m->win);
    MPI_Win_unlock(m->target, m->win);
    return (int64_t)word;
}

static const rdlm_mlb_ops_t rdlm_mlb_win_ops = {
    .acquire = rdlm_mlb_win_acquire,
    .release = rdlm_mlb_win_release,
    .cycle = rdlm_mlb_win_cycle,
    .read = rdlm_mlb_win_read,
    .serve = RDLM_MLB_SPIN_MPI,
    .check = RDLM_MLB_CHECK_DISTINCT,
};

/* The MPI CAS spinlock, word [1] at the target, inside an MPI_Win_lock_all epoch:
 * MPI_Compare_and_swap 0 -> rank + 1 and a flush until it finds 0 (an acquire fence
 * then orders the critical section after it); dies after RDLM_MLB_ACQUIRE_TIMEOUT_NS
 * (a stuck word). */
static void rdlm_mlb_cas_acquire(rdlm_mlb_t *m)
{
    const uint64_t mine = (uint64_t)m->rank + 1, free_word = 0;
    uint64_t t0 = rdlm_bench_now_ns();
    uint64_t old;

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
static void rdlm_mlb_cas_release(rdlm_mlb_t *m)
{
    const uint64_t mine = (uint64_t)m->rank + 1, free_word = 0;
    uint64_t old = 0;

    atomic_thread_fence(memory_order_release);
    MPI_Fetch_and_op(&free_word, &old, MPI_UINT64_T, m->target, 1, MPI_REPLACE, m->win);
    MPI_Win_flush(m->target, m->win);
    if (old != mine) {
        rdlm_mlb_die(m,
                     "MPI CAS spinlock released a word holding %" PRIu64 ", not %" PRIu64,
                     old, mine);
    }
}

static const rdlm_mlb_ops_t rdlm_mlb_cas_ops = {
    .begin = rdlm_mlb_lock_all,
    .end = rdlm_mlb_unlock_all,
    .acquire = rdlm_mlb_cas_acquire,
    .release = rdlm_mlb_cas_release,
    .serve = RDLM_MLB_SPIN_MPI,
};

/* MPI_Fetch_and_op(1, MPI_SUM) on the window word [0] + MPI_Win_flush. */
static void rdlm_mlb_fop_acquire(rdlm_mlb_t *m)
{
    const uint64_t one = 1;
    uint64_t old = 0;

    MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, m->target, 0, MPI_SUM, m->win);
    MPI_Win_flush(m->target, m->win);
    rdlm_mlb_old(m, RDLM_OK, (int64_t)old);
}

static const rdlm_mlb_ops_t rdlm_mlb_fop_ops = {
    .begin = rdlm_mlb_lock_all,
    .end = rdlm_mlb_unlock_all,
    .acquire = rdlm_mlb_fop_acquire,
    .read = rdlm_mlb_win_read,
    .serve = RDLM_MLB_SPIN_MPI,
    .check = RDLM_MLB_CHECK_DISTINCT,
};

/* The running impl's counter: the sharded one, or the plain one. */
static rdlm_counter_h rdlm_mlb_counter(const rdlm_mlb_t *m)
{
    return m->impl == RDLM_MLB_SHARDED ? m->sharded : m->counter;
}

/* rdlm_counter_fetch_add(c, 1); the value of c. */
static void rdlm_mlb_fadd_acquire(rdlm_mlb_t *m)
{
    int64_t old = -1;
    rdlm_status_t st = rdlm_counter_fetch_add(rdlm_mlb_counter(m), 1, &old);

    rdlm_mlb_old(m, st, old);
}

static int64_t rdlm_mlb_fadd_read(rdlm_mlb_t *m)
{
    int64_t value = 0;

    rdlm_mlb_ok(m, rdlm_counter_read(rdlm_mlb_counter(m), &value), "rdlm_counter_read");
    return value;
}

static const rdlm_mlb_ops_t rdlm_mlb_fadd_ops = {
    .acquire = rdlm_mlb_fadd_acquire,
    .read = rdlm_mlb_fadd_read,
    .check = RDLM_MLB_CHECK_DISTINCT,
    .rdlm = 1,
};

static const rdlm_mlb_ops_t rdlm_mlb_sharded_ops = {
    .acquire = rdlm_mlb_fadd_acquire,
    .read = rdlm_mlb_fadd_read,
    .check = RDLM_MLB_CHECK_COUNT,
    .rdlm = 1,
};

/* One permit of the semaphore; while it is held, count the holders of this machine. */
static void rdlm_mlb_sem_acquire(rdlm_mlb_t *m)
{
    uint64_t held;

    rdlm_mlb_ok(m, rdlm_sem_acquire(m->sem, 1, RDLM_MLB_ACQUIRE_TIMEOUT_NS),
                "rdlm_sem_acquire");
    held = atomic_fetch_add_explicit(&m->sh->sem_held, 1, memory_order_acq_rel) + 1;
    if (held > RDLM_MLB_SEM_PERMITS) {
        rdlm_mlb_die(m, "%" PRIu64 " holders of a semaphore of %u permits", held,
                     RDLM_MLB_SEM_PERMITS);
    }
}

static void rdlm_mlb_sem_release(rdlm_mlb_t *m)
{
    atomic_fetch_sub_explicit(&m->sh->sem_held, 1, memory_order_release);
    rdlm_mlb_ok(m, rdlm_sem_release(m->sem, 1), "rdlm_sem_release");
}

/* The permits free once every rank's releases reached the home: over UCX a release is
 * a message nobody waits for, which may still be on its way after the phase's barrier
 * (rdlm.h), so the count is read again, 1 ms apart, until all are back or 2 s passed. */
static int64_t rdlm_mlb_sem_read(rdlm_mlb_t *m)
{
    uint32_t avail = 0;

    for (int i = 0; i < 2000; i++) {
        rdlm_mlb_ok(m, rdlm_sem_available(m->sem, &avail), "rdlm_sem_available");
        if (avail == RDLM_MLB_SEM_PERMITS)
            break;
        usleep(1000);
    }
    return avail;
}

static const rdlm_mlb_ops_t rdlm_mlb_sem_ops = {
    .acquire = rdlm_mlb_sem_acquire,
    .release = rdlm_mlb_sem_release,
    .read = rdlm_mlb_sem_read,
    .check = RDLM_MLB_CHECK_PERMITS,
    .rdlm = 1,
};

#define RDLM_MLB_U (1u << RDLM_MLB_UNCONTENDED)
#define RDLM_MLB_C (1u << RDLM_MLB_CONTENDED)
#define RDLM_MLB_K (1u << RDLM_MLB_COUNTER)

const rdlm_mlb_impl_t rdlm_mlb_impls[RDLM_MLB_NIMPL] = {
    [RDLM_MLB_RDLM] = {"rdlm", &rdlm_mlb_rdlm_ops, RDLM_MLB_U | RDLM_MLB_C, 0},
    [RDLM_MLB_UCP] = {"ucp_amo", &rdlm_mlb_ucp_ops, RDLM_MLB_U, 0},
    [RDLM_MLB_UCP_WAKE] = {"ucp_amo_wake", &rdlm_mlb_ucp_wake_ops, RDLM_MLB_U, 0},
    [RDLM_MLB_WIN_LOCK] = {"mpi_win_lock", &rdlm_mlb_win_ops, RDLM_MLB_U | RDLM_MLB_C, 0},
    [RDLM_MLB_CAS_SPIN] = {"mpi_cas_spin", &rdlm_mlb_cas_ops, RDLM_MLB_U | RDLM_MLB_C, 0},
    [RDLM_MLB_COHORT] = {"rdlm_cohort", &rdlm_mlb_rdlm_ops, RDLM_MLB_U, 1},
    [RDLM_MLB_NODE] = {"rdlm_node", &rdlm_mlb_node_ops, RDLM_MLB_U, 1},
    [RDLM_MLB_VERBS] = {"verbs_amo", &rdlm_mlb_verbs_ops, RDLM_MLB_U, 0},
    [RDLM_MLB_FADD] = {"rdlm_fadd", &rdlm_mlb_fadd_ops, RDLM_MLB_K, 0},
    [RDLM_MLB_MPI_FOP] = {"mpi_fetch_op", &rdlm_mlb_fop_ops, RDLM_MLB_K, 0},
    [RDLM_MLB_SHARDED] = {"rdlm_sharded", &rdlm_mlb_sharded_ops, RDLM_MLB_K, 0},
    [RDLM_MLB_SEM] = {"rdlm_sem", &rdlm_mlb_sem_ops, RDLM_MLB_K, 0},
};

/* acquire then release: the cycle of every adapter without one of its own. */
static void rdlm_mlb_acquire_release(rdlm_mlb_t *m)
{
    m->ops->acquire(m);
    m->ops->release(m);
}

rdlm_mlb_ops_t rdlm_mlb_ops_fill(const rdlm_mlb_ops_t *raw)
{
    rdlm_mlb_ops_t o = *raw;
    rdlm_mlb_func_t *f[] = {&o.open, &o.close, &o.begin, &o.end, &o.acquire, &o.release};
    size_t k;

    for (k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
        *f[k] = *f[k] != NULL ? *f[k] : rdlm_mlb_nothing;
    }
    o.cycle = o.cycle != NULL ? o.cycle : rdlm_mlb_acquire_release;
    o.read = o.read != NULL ? o.read : rdlm_mlb_read_nothing;
    return o;
}
