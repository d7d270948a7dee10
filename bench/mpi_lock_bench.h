/*
 * rdlm-mpi-lock-bench's parts (mpi_lock_bench.c documents the program): the job's
 * state, and the adapter every implementation is (mpi_lock_impls.c), over which the
 * harness (mpi_lock_bench.c) writes each workload once.
 */
#ifndef RDLM_BENCH_MPI_LOCK_BENCH_H
#define RDLM_BENCH_MPI_LOCK_BENCH_H

#include <mpi.h>
#include <stdint.h>

#include <rdlm.h>
#include <rdlm/mpi.h>

#include "lock_bench.h"
#include "mpi_cli.h"
#include "mpi_osc.h"
#include "mpi_output.h"
#include "mpi_result.h"
#include "raw_ucp.h"
#if RDLM_BENCH_HAVE_VERBS
#include "raw_verbs.h"
#endif

#define RDLM_MLB_TOOL "rdlm-mpi-lock-bench"
#define RDLM_MLB_ACQUIRE_TIMEOUT_NS 30000000000ull /* fail, never hang */
#define RDLM_MLB_HELD (1ull << 63)
#define RDLM_MLB_SEM_PERMITS 2u

enum rdlm_mlb_mode {
    RDLM_MLB_UNCONTENDED,
    RDLM_MLB_CONTENDED,
    RDLM_MLB_MEMORY,
    RDLM_MLB_COUNTER,
    RDLM_MLB_NMODES
};

/* How a rank waits at the harness's barrier, and what it serves meanwhile. */
enum rdlm_mlb_wait {
    RDLM_MLB_SLEEP,    /* nothing: sleep between tests, leave the cores to others */
    RDLM_MLB_SPIN_MPI, /* MPI one-sided operations (osc pt2pt applies them in MPI calls) */
    RDLM_MLB_SPIN_UCP, /* raw ucp atomics, which UCP emulates in progress over TCP */
    RDLM_MLB_WAKE_UCP, /* the same from the worker's event fd, as rdlm's progress thread */
};

/* What a checked counter must hold after a phase (rdlm_mlb_check). */
enum rdlm_mlb_check {
    RDLM_MLB_CHECK_NONE,
    RDLM_MLB_CHECK_COUNT,    /* its start plus every rank's operations */
    RDLM_MLB_CHECK_DISTINCT, /* that, and the old values were distinct */
    RDLM_MLB_CHECK_PERMITS,  /* all the semaphore's permits free */
};

/* The figures of a round: rdlm_bench_fig_keys, then these. */
enum { RDLM_MLB_F_HANDOFF = RDLM_BENCH_FIG_N, RDLM_MLB_F_OFFNODE, RDLM_MLB_NF };

/* The page the ranks of one machine share. */
typedef struct rdlm_mlb_shared {
    rdlm_bench_cs_t cs; /* the critical section's line (under the lock) */
    uint64_t t_release; /* pair: the holder's clock just before release (under it) */
    _Alignas(64) _Atomic uint64_t stopped;  /* pair: runs finished, 2 per run */
    _Alignas(64) _Atomic uint64_t sem_held; /* counter mode: semaphore holders */
} rdlm_mlb_shared_t;

/* Per implementation: what its checks count. */
typedef struct rdlm_mlb_count {
    int64_t base;     /* the checked counter's value before the first phase */
    int64_t last_old; /* this rank's last old value or token (they must increase) */
    uint64_t done;    /* this rank's operations, warm-ups included */
    uint64_t old_sum; /* the sum of their old values */
    uint64_t total;   /* after the last check: every rank's operations */
    int64_t value;    /* ... and the value read then (semaphore: permits free) */
} rdlm_mlb_count_t;

struct rdlm_mlb;
typedef void (*rdlm_mlb_func_t)(struct rdlm_mlb *m);

/*
 * One implementation's adapter. acquire orders the critical section after it and
 * release before it (counter mode: the operation, release nothing or the semaphore's
 * permit); both die on an error, so no rank hangs. Unset entries are stubs
 * (rdlm_mlb_ops_fill), so no caller checks for NULL.
 */
typedef struct rdlm_mlb_ops {
    rdlm_mlb_func_t open;    /* its resources; collective, after the job's */
    rdlm_mlb_func_t close;   /* collective */
    rdlm_mlb_func_t begin;   /* before a phase, at every rank taking part */
    rdlm_mlb_func_t end;     /* after it */
    rdlm_mlb_func_t acquire; /* on m->lock (node_lock: the node-only one) */
    rdlm_mlb_func_t release;
    rdlm_mlb_func_t cycle; /* uncontended: acquire + release with nothing between */
    int64_t (*read)(struct rdlm_mlb *m); /* the checked counter, at the reader */
    enum rdlm_mlb_wait serve;            /* the target, while others run its operations */
    enum rdlm_mlb_check check;
    int rdlm;      /* in the distributed context: its rdlm_ctx_stats count */
    int node_lock; /* on the node-only context's lock */
    int device;    /* by default only where rank 0 sees an RDMA device */
} rdlm_mlb_ops_t;

/* An implementation: its name, adapter, the modes it runs in (bits), and (pair)
 * whether uncontended mode hands its lock over between origin and partner. */
typedef struct rdlm_mlb_impl {
    const char *name;
    const rdlm_mlb_ops_t *ops;
    uint32_t modes;
    int pair;
} rdlm_mlb_impl_t;

/* The implementations, indices of rdlm_mlb_impls. */
enum {
    RDLM_MLB_RDLM,
    RDLM_MLB_UCP,
    RDLM_MLB_UCP_WAKE,
    RDLM_MLB_WIN_LOCK,
    RDLM_MLB_CAS_SPIN,
    RDLM_MLB_COHORT,
    RDLM_MLB_NODE,
    RDLM_MLB_VERBS,
    RDLM_MLB_FADD,
    RDLM_MLB_MPI_FOP,
    RDLM_MLB_SHARDED,
    RDLM_MLB_SEM,
    RDLM_MLB_NIMPL
};

/* The job as one rank sees it: options, roles, objects, the running phase, results. */
typedef struct rdlm_mlb {
    /* options */
    enum rdlm_mlb_mode mode;
    rdlm_bench_mpi_opts_t o;
    uint64_t cap_ns;
    uint64_t duration_ns;
    uint64_t size_min; /* -m: contending ranks, doubling from min to max; 0: all */
    uint64_t size_max;
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
    rdlm_counter_h counter;
    rdlm_counter_h sharded;
    rdlm_sem_h sem;
    /* what the mode alternates (--impls), in this order; the running phase's */
    uint32_t impls[RDLM_MLB_NIMPL];
    uint32_t nimpl;
    uint32_t impl;
    const rdlm_mlb_ops_t *ops;
    rdlm_mlb_ops_t filled[RDLM_MLB_NIMPL]; /* rdlm_mlb_ops_fill of each */
    rdlm_mlb_count_t count[RDLM_MLB_NIMPL];
    /* results (rank 0) */
    rdlm_bench_rounds_t fig[RDLM_MLB_NIMPL][RDLM_MLB_NF];
    uint64_t stats[RDLM_MLB_NIMPL][RDLM_BENCH_NSTATS];
    uint32_t *samples; /* scratch */
} rdlm_mlb_t;

/** Every implementation, indexed by the enum above; a mode's, in this order, are its
 *  default list. */
extern const rdlm_mlb_impl_t rdlm_mlb_impls[RDLM_MLB_NIMPL];

/** raw with every unset entry a stub (nothing; cycle: acquire then release). */
rdlm_mlb_ops_t rdlm_mlb_ops_fill(const rdlm_mlb_ops_t *raw);

/** The lock of the running rdlm impl: the distributed one, or the node-only one. */
rdlm_lock_h rdlm_mlb_rdlm_lock(const rdlm_mlb_t *m);

/** Print why on stderr, from this rank, and abort the job (no rank may hang). */
#define rdlm_mlb_die(m, ...) rdlm_bench_out_die(RDLM_MLB_TOOL, (m)->rank, __VA_ARGS__)

/** Die unless st is RDLM_OK (what: the call). */
#define rdlm_mlb_ok(m, st, what) rdlm_bench_out_check(RDLM_MLB_TOOL, (m)->rank, st, what)

/** Count an old value (or token) of the running impl; die unless st is RDLM_OK and it
 *  is larger than this rank's last one. */
void rdlm_mlb_old(rdlm_mlb_t *m, rdlm_status_t st, int64_t old);

/** The job's barrier, waited for without blocking in MPI, serving what how says
 *  (collective). */
void rdlm_mlb_sync(rdlm_mlb_t *m, enum rdlm_mlb_wait how);

#endif
