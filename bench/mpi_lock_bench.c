/*
 * rdlm-mpi-lock-bench: rdlm's cross-node exclusive lock, counters and semaphore
 * against their baselines, in one MPI job, on the same ranks, in alternating rounds
 * (A B C ..., then ... C B A). Run by rdlm-bench (-b dist-lock, dist-contended,
 * dist-sweep, dist-counter, dist-memory); by a user like osu_latency (one machine: 2
 * virtual nodes, osc sm,pt2pt chosen by itself):
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
 * Every implementation is an adapter (rdlm_mlb_ops_t in mpi_lock_impls.c: acquire and
 * release, or the one operation of counter mode, with what it opens, serves and
 * checks), and every workload is written once over them, here (the --impls names, in
 * their default order):
 *
 *   --mode uncontended: rank 0 is the origin, on node n0; the lock is the first
 *   "bench-lock-K" whose home node is not n0; the target is the home node's leader,
 *   where rdlm keeps the lock's global word; the partner is another rank of n0.
 *     single origin: -x warm-up cycles (at most 0.5 s), then -i cycles (at most -t
 *     ms), timed in batches of 10; figure: us per cycle; percentiles over batches:
 *   rdlm          rdlm_lock_acquire + release, lock homed remotely (served by rdlm's
 *                 own progress thread)
 *   ucp_amo       SWAP(w, HELD) + CSWAP(w, HELD -> 0), raw fetching ucp_atomic_op_nbx
 *                 (raw_ucp.h): the two atomics of rdlm's uncontended cycle; the target
 *                 spins in ucp progress
 *   ucp_amo_wake  the same; the target progresses from its event fd, as rdlm's
 *                 progress thread does
 *   mpi_win_lock  MPI_Win_lock(EXCLUSIVE) + MPI_Fetch_and_op + MPI_Win_unlock (window
 *                 word at the target, which spins in MPI)
 *   mpi_cas_spin  MPI_Compare_and_swap 0 -> rank + 1 + flush until it finds 0;
 *                 MPI_Fetch_and_op(REPLACE 0) + flush (in one MPI_Win_lock_all epoch)
 *   verbs_amo     CAS(w, 0 -> HELD) + CAS(w, HELD -> 0) over a raw RC queue pair of its
 *                 own (raw_verbs.h): the floor of rdlm's cycle over the verbs backend;
 *                 by default only where the build has verbs and rank 0 sees a device
 *     pair: -i acquires per rank (at most -t ms); the holder keeps the lock until the
 *     other waits for it (rdlm_lock_query), stamps the clock and releases; figure: mean
 *     latency from that release to the waiter's return (one machine, one clock):
 *   rdlm_cohort   origin and partner on the distributed lock: hand-offs inside the
 *                 node, whose cohort holds the global word; rdlm_ctx_stats around
 *                 every acquire: the remote operations of local hand-offs must be 0
 *   rdlm_node     the same on a lock of a node-only rdlm context (rdlm_ctx_create)
 *
 *   --mode contended: every rank (-m: the lowest MIN .. MAX ranks) loops { acquire;
 *   critical section; release; ~0.1 us of local work } for --duration ms (or -i
 *   loops) after -x warm-up loops: rdlm, mpi_win_lock (acquire: MPI_Win_lock +
 *   MPI_Fetch_and_op + MPI_Win_flush; release: MPI_Win_unlock), mpi_cas_spin; the MPI
 *   words at the lowest rank of the rdlm lock's home node. Figure: all ranks' acquires
 *   / max elapsed, kops/s; p99: wait in acquire, 1 acquire in 16.
 *
 *   --mode counter: the same loop of one operation, no critical section: rdlm_fadd
 *   (rdlm_counter_fetch_add(c, 1)), mpi_fetch_op (MPI_Fetch_and_op(1, SUM) + flush in
 *   an MPI_Win_lock_all epoch), rdlm_sharded (on rdlm_counter_open_sharded), rdlm_sem
 *   (rdlm_sem_acquire(s, 1) + rdlm_sem_release(s, 1), 2 permits). The target is the
 *   lowest rank of the node that holds rdlm_fadd's counter word (asked of a lock of its
 *   name in a probe context), so both words sit in one process. p99: one operation in
 *   16; offnode_kops: the part of the figure made by the ranks off that node.
 *
 *   --mode memory (RDLM_VIRTUAL_NODES = ranks, say): every rank's VmRSS growth across
 *   rdlm_mpi_ctx_create; then rank 0 uses locks homed on one more remote node at a
 *   time and reports its growth against the number of remote nodes used.
 *
 * Checks (any failure aborts the job): every critical section increments a plain
 * counter in memory shared by the ranks of one machine, which must equal the sections
 * run after every phase; old values (and rdlm's tokens) increase per rank; after every
 * phase a counter (rdlm's, or the MPI window word of mpi_win_lock and mpi_fetch_op)
 * equals its start plus every rank's operations, and for rdlm_fadd and the window the
 * old values are distinct; the semaphore never has a third holder and has both
 * permits free (read again for up to 2 s: a release over UCX may still be on its way
 * to the home after the barrier). Phases are separated by MPI_Ibarrier + MPI_Test (never the lock under
 * test): ranks with nothing to serve sleep 200 us between tests; targets of the
 * baselines keep progressing. With --result-lines, rank 0 also prints the result lines
 * rdlm-bench reads (mpi_result.h), once per size of -m:
 *
 *   info nodes, cohort_bound
 *   note info: uncontended and counter modes, the run's facts (the lock, its home
 *        node, the target, the partner, rdlm's transport, ...) in words; counter
 *        mode, after them, what each check found (the checked counter after the last
 *        phase, every rank's operations, its start; the semaphore's permits free, read
 *        until all are back, for at most 2 s)
 *   <impl> value, p50_us, p90_us, p99_us, ops, handoff_kops (critical sections entered
 *        after another rank's, per second), offnode_kops: one per round
 *   <impl> the statistics of RDLM_BENCH_STATS (mpi_result.h): the implementations in
 *        the distributed context, summed over ranks and rounds
 *   rdlm_ctx kib, rdlm_ctx_max kib; rdlm_remote kib, home_node: one per remote node
 *        used (memory mode)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "mpi_lock_bench.h"
#include "rounds.h"
#include "stats.h"
#include "workload.h"

#define RDLM_MLB_WARMUP_CAP_NS 500000000ull
#define RDLM_MLB_BATCH 10u        /* cycles per percentile sample (single origin) */
#define RDLM_MLB_SAMPLE_EVERY 16u /* loops: one timed acquire in 16 (power of two) */
#define RDLM_MLB_SAMPLES 4096u    /* per rank and phase */
#define RDLM_MLB_LOCK_PROBES 64u  /* names tried to find a remotely homed lock */
#define RDLM_MLB_IDLE_NS 200000L  /* sleep of a rank with nothing to serve */

static const char *const rdlm_mlb_mode_names[RDLM_MLB_NMODES] = {"uncontended", "contended",
                                                                 "memory", "counter"};

static const char *const rdlm_mlb_fig_keys[RDLM_MLB_NF] = {
    "value", "p50_us", "p90_us", "p99_us", "ops", "handoff_kops", "offnode_kops"};

/* What one rank did in one run (warm-up or timed) of a phase. */
typedef struct rdlm_mlb_loop {
    uint64_t st[RDLM_BENCH_NSTATS]; /* RDLM_BENCH_STATS of this run */
    uint64_t cs;                    /* critical sections, warm-up included */
    uint64_t elapsed_ns;
    uint64_t sink;
} rdlm_mlb_loop_t;

/* A workload: one run of up to n operations or cap_ns (with sampler, percentile
 * samples in ns, each of per_sample operations), and the round's figure from the
 * sums over ranks. */
typedef struct rdlm_mlb_workload {
    void (*run)(struct rdlm_mlb *m, uint64_t n, uint64_t cap_ns,
                rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out);
    double (*figure)(const uint64_t *sum, uint64_t elapsed_max_ns);
    uint32_t per_sample;
} rdlm_mlb_workload_t;

/* ---- synchronisation of the harness ---------------------------------------------- */

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

void rdlm_mlb_sync(rdlm_mlb_t *m, enum rdlm_mlb_wait how)
{
    const struct timespec idle = {.tv_sec = 0, .tv_nsec = RDLM_MLB_IDLE_NS};
    MPI_Request req;
    int done = 0;
    int k;

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!done) {
        if (how == RDLM_MLB_WAKE_UCP) {
            rdlm_mlb_serve_wake(m->ucp.worker);
        } else if (how == RDLM_MLB_SPIN_UCP) {
            for (k = 0; k < 64; k++) {
                ucp_worker_progress(m->ucp.worker);
            }
        } else if (how == RDLM_MLB_SLEEP) {
            nanosleep(&idle, NULL);
        }
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* ---- checks ------------------------------------------------------------------------ */

void rdlm_mlb_old(rdlm_mlb_t *m, rdlm_status_t st, int64_t old)
{
    rdlm_mlb_count_t *c = &m->count[m->impl];

    if (st != RDLM_OK || old <= c->last_old) {
        rdlm_mlb_die(m, "%s: %s, old value %" PRId64 " after %" PRId64,
                     rdlm_mlb_impls[m->impl].name, rdlm_status_str(st), old, c->last_old);
    }
    c->last_old = old;
    c->old_sum += (uint64_t)old;
}

/*
 * After a phase of the running impl (every rank), by its check: the counter (read by
 * rank 0; the MPI window word by the target) equals its start plus every rank's
 * operations so far, warm-ups included; with DISTINCT the old values were base .. base
 * + n - 1, whose sum is n base + n (n - 1) / 2 (mod 2^64); PERMITS: the semaphore has
 * all its permits free. Rank 0 keeps the figures for the output.
 */
static void rdlm_mlb_check(rdlm_mlb_t *m)
{
    rdlm_mlb_count_t *c = &m->count[m->impl];
    int reader = m->ops->serve == RDLM_MLB_SPIN_MPI ? m->target : 0;
    uint64_t mine[2] = {c->done, c->old_sum}, all[2], n, expect_sum;
    int64_t value = 0, expect;
    const char *name = rdlm_mlb_impls[m->impl].name;

    if (m->ops->check == RDLM_MLB_CHECK_NONE) {
        return;
    }
    if (m->rank == reader) {
        value = m->ops->read(m);
    }
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    n = all[0];
    expect = m->ops->check == RDLM_MLB_CHECK_PERMITS ? (int64_t)RDLM_MLB_SEM_PERMITS
                                                     : c->base + (int64_t)n;
    expect_sum = n * (uint64_t)c->base + (n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n);
    if (m->rank == reader && value != expect) {
        rdlm_mlb_die(
            m, "%s: %s %" PRId64 " after %" PRIu64 " operations, expected %" PRId64, name,
            m->ops->check == RDLM_MLB_CHECK_PERMITS ? "permits free" : "counter", value, n,
            expect);
    }
    if (m->rank == reader && m->ops->check == RDLM_MLB_CHECK_DISTINCT &&
        all[1] != expect_sum) {
        rdlm_mlb_die(m,
                     "%s: the old values sum to %" PRIu64 ", not %" PRIu64
                     ": two fetch-adds returned the same",
                     name, all[1], expect_sum);
    }
    MPI_Bcast(&value, 1, MPI_INT64_T, reader, MPI_COMM_WORLD);
    c->total = n;
    c->value = value;
}

/* ---- workloads --------------------------------------------------------------------- */

/* Where the local work's result goes, so that the compiler keeps it. */
static _Atomic uint64_t rdlm_mlb_sink;

/* This rank's side of the workloads of workload.h: the running impl's adapter, which
 * dies on an error. */
static int rdlm_mlb_part_cycle(void *self)
{
    rdlm_mlb_t *m = self;

    m->ops->cycle(m);
    return 0;
}

static int rdlm_mlb_part_acquire(void *self, uint64_t *token_p)
{
    rdlm_mlb_t *m = self;

    (void)token_p;
    m->ops->acquire(m);
    return 0;
}

static int rdlm_mlb_part_release(void *self)
{
    rdlm_mlb_t *m = self;

    m->ops->release(m);
    return 0;
}

/* One run of up to n operations or cap_ns. Single origin (uncontended): the
 * adapter's cycles in batches (rdlm_bench_batches), a sample per batch, the cap
 * checked after each; contended and counter: rdlm_bench_window, with the critical
 * section and local work in contended mode, one loop in RDLM_MLB_SAMPLE_EVERY timed
 * (the wait in acquire, or without a critical section the whole operation). */
static void rdlm_mlb_run_part(rdlm_mlb_t *m, uint64_t n, uint64_t cap_ns,
                              rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out)
{
    int cs = m->mode == RDLM_MLB_CONTENDED;
    uint64_t t0 = rdlm_bench_now_ns();
    rdlm_bench_part_t p = {.self = m,
                           .acquire = rdlm_mlb_part_acquire,
                           .release = rdlm_mlb_part_release,
                           .cycle = rdlm_mlb_part_cycle,
                           .batch = RDLM_MLB_BATCH,
                           .deadline_ns = t0 + cap_ns,
                           .sampler = sampler,
                           .section = cs ? RDLM_BENCH_SECTION_CS : RDLM_BENCH_SECTION_NONE,
                           .cs = &m->sh->cs,
                           .rank = (uint64_t)m->rank,
                           .sample_mask = RDLM_MLB_SAMPLE_EVERY - 1,
                           .local_work = cs};
    rdlm_bench_tally_t t = {.sink = out->sink};

    if (m->mode == RDLM_MLB_UNCONTENDED) {
        rdlm_bench_batches(&p, n, &t);
    } else {
        rdlm_bench_window(&p, n, &t);
    }
    out->st[RDLM_BENCH_ST_HANDOFFS] += t.handoffs;
    out->sink = t.sink;
    out->cs += cs ? t.ops : 0;
    out->st[RDLM_BENCH_ST_OPS] = t.ops;
    out->elapsed_ns = rdlm_bench_now_ns() - t0;
}

/* 1 while the holder should keep the lock: the other rank of the pair is still in
 * this run, has not queued yet, and the run's time is not up. */
static int rdlm_mlb_pair_hold(rdlm_mlb_t *m, uint64_t deadline_ns)
{
    rdlm_lock_info_t li;

    if (atomic_load_explicit(&m->sh->stopped, memory_order_acquire) > 2 * m->pair_runs ||
        rdlm_bench_now_ns() > deadline_ns) {
        return 0;
    }
    return rdlm_lock_query(rdlm_mlb_rdlm_lock(m), &li) == RDLM_OK && li.waiters == 0;
}

/* The harness's counts of one pair hand-off of lat ns: into the figure when it was
 * local (rdlm_ctx_stats a before, b after the acquire; no stats: always local). */
static void rdlm_mlb_pair_count(rdlm_mlb_t *m, const rdlm_stats_t *a, const rdlm_stats_t *b,
                                uint64_t lat, rdlm_bench_sampler_t *sampler,
                                rdlm_mlb_loop_t *out)
{
    int local = !m->ops->rdlm || b->local_handoffs != a->local_handoffs;

    out->st[RDLM_BENCH_ST_HANDOFFS]++;
    out->st[local ? RDLM_BENCH_ST_HANDOFF_NS : RDLM_BENCH_ST_GLOBAL_NS] += lat;
    if (local) {
        out->st[RDLM_BENCH_ST_MEASURED]++;
        if (sampler != NULL) {
            rdlm_bench_sampler_add(sampler, lat);
        }
    }
    if (m->ops->rdlm) {
        out->st[RDLM_BENCH_ST_CHECK_LOCAL] += (uint64_t)local;
        out->st[RDLM_BENCH_ST_CHECK_REMOTE] +=
            local ? (b->home_ops - a->home_ops) + (b->peer_ops - a->peer_ops) : 0;
        out->st[RDLM_BENCH_ST_CHECK_HANDOFFS]++;
    }
}

/*
 * Pair hand-offs: acquire; if the other rank held the lock last, one hand-off: now -
 * the time it stamped just before its release (same machine, same clock); hold the
 * lock until the other rank waits for it, stamp, release. The locks are FIFO, so the
 * two alternate and every acquire but the first finds the lock held (in a distributed
 * context: the node's cohort holding the global word). rdlm_ctx_stats around every
 * acquire of the distributed lock (outside the timed interval, which starts at the
 * other's release) tells local hand-offs. m->sh->stopped counts finished runs.
 */
static void rdlm_mlb_run_pair(rdlm_mlb_t *m, uint64_t n, uint64_t cap_ns,
                              rdlm_bench_sampler_t *sampler, rdlm_mlb_loop_t *out)
{
    uint64_t t0 = rdlm_bench_now_ns(), t, k;
    rdlm_stats_t a = {0}, b = {0};

    for (k = 0; k < n && rdlm_bench_now_ns() - t0 <= cap_ns; k++) {
        if (m->ops->rdlm) {
            rdlm_ctx_stats(m->ctx, &a);
        }
        m->ops->acquire(m);
        t = rdlm_bench_now_ns();
        if (m->ops->rdlm) {
            rdlm_ctx_stats(m->ctx, &b);
        }
        if (rdlm_bench_cs_enter(&m->sh->cs, (uint64_t)m->rank) &&
            m->sh->t_release >= t0) { /* released in this run */
            rdlm_mlb_pair_count(m, &a, &b, t - m->sh->t_release, sampler, out);
        }
        while (rdlm_mlb_pair_hold(m, t0 + cap_ns)) {
            rdlm_bench_pause();
        }
        m->sh->t_release = rdlm_bench_now_ns();
        m->ops->release(m);
    }
    atomic_fetch_add_explicit(&m->sh->stopped, 1, memory_order_release);
    m->pair_runs++;
    out->cs += k;
    out->st[RDLM_BENCH_ST_OPS] = k;
    out->elapsed_ns = rdlm_bench_now_ns() - t0;
}

/* us per cycle of the origin. */
static double rdlm_mlb_figure_cycles(const uint64_t *sum, uint64_t elapsed_max_ns)
{
    return (double)elapsed_max_ns /
           (double)(sum[RDLM_BENCH_ST_OPS] ? sum[RDLM_BENCH_ST_OPS] : 1) / 1000.0;
}

/* kops/s of all ranks. */
static double rdlm_mlb_figure_loop(const uint64_t *sum, uint64_t elapsed_max_ns)
{
    return (double)sum[RDLM_BENCH_ST_OPS] / ((double)elapsed_max_ns / 1e9) / 1000.0;
}

/* The mean hand-off inside the node, us. */
static double rdlm_mlb_figure_pair(const uint64_t *sum, uint64_t elapsed_max_ns)
{
    (void)elapsed_max_ns;
    return (double)sum[RDLM_BENCH_ST_HANDOFF_NS] /
           (double)(sum[RDLM_BENCH_ST_MEASURED] ? sum[RDLM_BENCH_ST_MEASURED] : 1) / 1000.0;
}

static const rdlm_mlb_workload_t rdlm_mlb_cycles = {rdlm_mlb_run_part,
                                                    rdlm_mlb_figure_cycles, RDLM_MLB_BATCH};
static const rdlm_mlb_workload_t rdlm_mlb_loop = {rdlm_mlb_run_part, rdlm_mlb_figure_loop,
                                                  1};
static const rdlm_mlb_workload_t rdlm_mlb_pair = {rdlm_mlb_run_pair, rdlm_mlb_figure_pair,
                                                  1};

/* ---- one phase --------------------------------------------------------------------- */

static void rdlm_mlb_stats_sub(const rdlm_stats_t *a, const rdlm_stats_t *b, uint64_t *out)
{
    out[RDLM_BENCH_ST_ACQ] += a->acquires - b->acquires;
    out[RDLM_BENCH_ST_GLOBAL] += a->global_acquires - b->global_acquires;
    out[RDLM_BENCH_ST_LOCAL] += a->local_handoffs - b->local_handoffs;
    out[RDLM_BENCH_ST_HOME] += a->home_ops - b->home_ops;
    out[RDLM_BENCH_ST_POSTED] += a->home_ops_posted - b->home_ops_posted;
    out[RDLM_BENCH_ST_PEER] += a->peer_ops - b->peer_ops;
    out[RDLM_BENCH_ST_COMBINED] += a->combined - b->combined;
}

/* Gather every rank's samples (ns per per_sample operations) at rank 0 and summarise
 * them (us per operation). */
static void rdlm_mlb_gather_samples(rdlm_mlb_t *m, const rdlm_bench_sampler_t *sampler,
                                    uint32_t per_sample, rdlm_bench_summary_t *pct)
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
    for (k = 0; m->rank == 0 && k < m->size; k++) {
        displs[k] = total;
        total += counts[k];
    }
    MPI_Gatherv(sampler->buf, nsamples, MPI_UINT32_T, all, counts, displs, MPI_UINT32_T, 0,
                MPI_COMM_WORLD);
    for (k = 0; k < total; k++) {
        us[k] = all[k] / 1000.0 / per_sample;
    }
    if (m->rank == 0) {
        rdlm_bench_summarize(us, (size_t)total, pct);
    }
    free(us);
    free(all);
    free(displs);
    free(counts);
}

/* Rank 0: the round's figures of the running impl from the sums over ranks. */
static void rdlm_mlb_figures(rdlm_mlb_t *m, const rdlm_mlb_workload_t *w, uint32_t round,
                             const uint64_t *sum, uint64_t elapsed_max_ns, uint64_t off_ops,
                             const rdlm_bench_summary_t *pct)
{
    rdlm_bench_rounds_t *fig = m->fig[m->impl];
    double secs = (double)elapsed_max_ns / 1e9;
    uint32_t k;

    fig[RDLM_BENCH_FIG_VALUE][round] = w->figure(sum, elapsed_max_ns);
    fig[RDLM_BENCH_FIG_P50][round] = pct->p50;
    fig[RDLM_BENCH_FIG_P90][round] = pct->p90;
    fig[RDLM_BENCH_FIG_P99][round] = pct->p99;
    fig[RDLM_BENCH_FIG_OPS][round] = (double)sum[RDLM_BENCH_ST_OPS];
    fig[RDLM_MLB_F_HANDOFF][round] = (double)sum[RDLM_BENCH_ST_HANDOFFS] / secs / 1000.0;
    fig[RDLM_MLB_F_OFFNODE][round] = (double)off_ops / secs / 1000.0;
    for (k = 0; k < RDLM_BENCH_NSTATS; k++) {
        m->stats[m->impl][k] += sum[k];
    }
}

/*
 * One phase of the running impl, ranks in taking part: they warm up, all meet, they
 * run the timed run, all meet again; the target serves the impl's operations while
 * it does not take part, and at the end (MPI one-sided operations over osc pt2pt run
 * in its MPI calls). Then the machine's counter is checked (mutual exclusion) and
 * rank 0 gets the round's figures and the summed statistics.
 */
static void rdlm_mlb_phase(rdlm_mlb_t *m, const rdlm_mlb_workload_t *w, uint32_t round,
                           int in, uint64_t cap_ns)
{
    rdlm_bench_sampler_t sampler = {.buf = m->samples,
                                    .cap = RDLM_MLB_SAMPLES,
                                    .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(m->rank + 1)};
    rdlm_mlb_loop_t warm = {.sink = (uint64_t)m->rank + 1}, loop = warm;
    enum rdlm_mlb_wait serve = m->rank == m->target ? m->ops->serve : RDLM_MLB_SLEEP;
    uint64_t sum[RDLM_BENCH_NSTATS], cs_sum = 0, elapsed_max = 0, off, off_sum = 0;
    uint64_t c0 = m->sh->cs.counter;
    rdlm_stats_t before, after;
    rdlm_bench_summary_t pct;

    rdlm_mlb_sync(m, RDLM_MLB_SLEEP); /* nobody is in a critical section: c0 holds */
    if (in) {
        m->ops->begin(m);
        w->run(m, m->o.warmup, RDLM_MLB_WARMUP_CAP_NS, NULL, &warm);
    }
    rdlm_mlb_sync(m, in ? RDLM_MLB_SPIN_MPI : serve);
    if (in) {
        rdlm_ctx_stats(m->ctx, &before);
        w->run(m, m->o.iterations, cap_ns, &sampler, &loop);
        rdlm_ctx_stats(m->ctx, &after);
        if (m->ops->rdlm) {
            rdlm_mlb_stats_sub(&after, &before, loop.st);
        }
        m->ops->end(m);
    }
    rdlm_mlb_sync(m, serve);
    atomic_store_explicit(&rdlm_mlb_sink, loop.sink, memory_order_relaxed);
    m->count[m->impl].done += warm.st[RDLM_BENCH_ST_OPS] + loop.st[RDLM_BENCH_ST_OPS];
    loop.cs += warm.cs;

    /* Mutual exclusion: the machine's counter grew by its critical sections. */
    MPI_Reduce(&loop.cs, &cs_sum, 1, MPI_UINT64_T, MPI_SUM, 0, m->shm);
    if (m->shm_rank == 0 && m->sh->cs.counter - c0 != cs_sum) {
        rdlm_mlb_die(m,
                     "%s: counter grew by %" PRIu64 " after %" PRIu64
                     " critical sections: two holders at once",
                     rdlm_mlb_impls[m->impl].name, m->sh->cs.counter - c0, cs_sum);
    }
    /* The share of the operations that crossed nodes: the ranks off the home node. */
    off = m->node_of[m->rank] != (uint32_t)m->home_node ? loop.st[RDLM_BENCH_ST_OPS] : 0;
    MPI_Reduce(loop.st, sum, RDLM_BENCH_NSTATS, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&loop.elapsed_ns, &elapsed_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&off, &off_sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    rdlm_mlb_gather_samples(m, &sampler, w->per_sample, &pct);
    if (m->rank == 0) {
        rdlm_mlb_figures(m, w, round, sum, elapsed_max, off_sum, &pct);
    }
    rdlm_mlb_check(m);
}

/* ---- set-up ------------------------------------------------------------------------ */

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
    rdlm_mlb_ok(m, rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &m->ctx),
                "rdlm_mpi_ctx_create");
    rdlm_mlb_ok(m, rdlm_ctx_dist_info(m->ctx, &m->info), "rdlm_ctx_dist_info");
    if (!m->info.distributed) {
        rdlm_mlb_die(m, "rdlm_ctx_dist_info: not distributed");
    }
    m->node_of = malloc(sizeof(*m->node_of) * (size_t)m->size);
    if (m->node_of == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    MPI_Allgather(&m->info.node, 1, MPI_UINT32_T, m->node_of, 1, MPI_UINT32_T,
                  MPI_COMM_WORLD);
}

/* The baselines' target (the lowest rank of the home node) and the partner (the
 * lowest other rank of rank 0's node). */
static void rdlm_mlb_roles(rdlm_mlb_t *m)
{
    int r;

    m->target = -1;
    m->partner = -1;
    for (r = m->size - 1; r >= 0; r--) {
        if (m->node_of[r] == (uint32_t)m->home_node) {
            m->target = r;
        }
        if (r != 0 && m->node_of[r] == m->node_of[0]) {
            m->partner = r;
        }
    }
}

/* The lock: the first bench-lock-K homed on another node than rank 0's (any, in
 * contended mode). Every rank opens the same names in the same order; rank 0
 * decides. */
static void rdlm_mlb_lock_choose(rdlm_mlb_t *m)
{
    rdlm_lock_info_t li;
    int32_t choice[2];
    uint32_t k;

    for (k = 0; k < RDLM_MLB_LOCK_PROBES; k++) {
        snprintf(m->lock_name, sizeof(m->lock_name), "bench-lock-%u", k);
        rdlm_mlb_ok(m, rdlm_lock_open(m->ctx, m->lock_name, &m->lock), m->lock_name);
        rdlm_mlb_ok(m, rdlm_lock_query(m->lock, &li), m->lock_name);
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
    rdlm_mlb_ok(m, rdlm_mpi_ctx_create(MPI_COMM_WORLD, &cp, &probe), "probe context");
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

/* Counter mode's objects, the node of its counter word, and the values the counters
 * start from. */
static void rdlm_mlb_counter_open(rdlm_mlb_t *m)
{
    int64_t base[2] = {0, 0};

    m->home_node = rdlm_mlb_home_of(m, "bench-counter");
    rdlm_mlb_ok(m, rdlm_counter_open(m->ctx, "bench-counter", &m->counter), "counter");
    rdlm_mlb_ok(m, rdlm_counter_open_sharded(m->ctx, "bench-counter-sharded", &m->sharded),
                "sharded counter");
    rdlm_mlb_ok(m, rdlm_sem_open(m->ctx, "bench-sem", RDLM_MLB_SEM_PERMITS, &m->sem),
                "semaphore");
    if (m->rank == 0) {
        rdlm_mlb_ok(m, rdlm_counter_read(m->counter, &base[0]), "rdlm_counter_read");
        rdlm_mlb_ok(m, rdlm_counter_read(m->sharded, &base[1]), "rdlm_counter_read");
    }
    MPI_Bcast(base, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    m->count[RDLM_MLB_FADD].base = base[0];
    m->count[RDLM_MLB_SHARDED].base = base[1];
    if (m->info.nodes < 2) {
        rdlm_mlb_die(m, "%u node(s) (RDLM_VIRTUAL_NODES unset on one machine?)",
                     m->info.nodes);
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
static void rdlm_mlb_memory_row(rdlm_mlb_t *m, uint64_t nodes, const char *what, double kib)
{
    const rdlm_bench_rounds_t fig[RDLM_BENCH_FIG_N] = {{kib}, {NAN}, {NAN}, {NAN}, {0}};
    rdlm_bench_out_row_t row = {.size = nodes, .impl = what, .unit = "KiB"};

    rdlm_bench_out_row(&m->out, &row, fig, 1);
}

/* Rank 0: the next bench-mem-K after *k homed on a node not yet seen, acquired and
 * released once (endpoint, keys); its home node, or -1 after all names. */
static int32_t rdlm_mlb_memory_use(rdlm_mlb_t *m, unsigned char *seen, uint32_t *k,
                                   rdlm_lock_h *lock_p)
{
    char name[RDLM_NAME_MAX + 1];
    rdlm_lock_info_t li;

    for (; *k < 16 * RDLM_MLB_LOCK_PROBES; (*k)++) {
        snprintf(name, sizeof(name), "bench-mem-%u", *k);
        rdlm_mlb_ok(m, rdlm_lock_open(m->ctx, name, lock_p), name);
        rdlm_mlb_ok(m, rdlm_lock_query(*lock_p, &li), name);
        if (li.home_node < 0 || (uint32_t)li.home_node >= m->info.nodes) {
            rdlm_mlb_die(m, "%s: bad home node", name);
        }
        if (!seen[li.home_node]) {
            seen[li.home_node] = 1;
            rdlm_mlb_ok(m, rdlm_lock_acquire(*lock_p, RDLM_MLB_ACQUIRE_TIMEOUT_NS, NULL),
                        name);
            rdlm_mlb_ok(m, rdlm_lock_release(*lock_p), name);
            (*k)++;
            return li.home_node;
        }
        rdlm_lock_close(*lock_p);
    }
    return -1;
}

/*
 * Resident memory: every rank's growth across rdlm_mpi_ctx_create (rank 0 gets its
 * own and the largest); then rank 0 uses locks homed on one more remote node at a
 * time and reports its growth since the context existed against the number of remote
 * nodes used. The other ranks sleep (their progress threads serve).
 */
static void rdlm_mlb_memory(rdlm_mlb_t *m)
{
    uint64_t rss0 = rdlm_mlb_rss_kib(), rss1, grow, grow_max = 0;
    rdlm_lock_h locks[RDLM_MLB_LOCK_PROBES];
    double kib[RDLM_MLB_LOCK_PROBES], home[RDLM_MLB_LOCK_PROBES];
    uint32_t used = 0, k = 0;
    unsigned char *seen;
    int32_t node;

    rdlm_mlb_ctx_open(m);
    rss1 = rdlm_mlb_rss_kib();
    grow = rss1 - rss0;
    MPI_Reduce(&grow, &grow_max, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (m->rank == 0) {
        rdlm_mlb_out_begin(m);
        rdlm_mlb_memory_row(m, 0, "rdlm_ctx", (double)grow);
        rdlm_mlb_memory_row(m, 0, "rdlm_ctx_max", (double)grow_max);
        if ((seen = calloc(m->info.nodes, 1)) == NULL) {
            rdlm_mlb_die(m, "out of memory");
        }
        seen[m->info.node] = 1;
        while (used + 1 < m->info.nodes && used < RDLM_MLB_LOCK_PROBES &&
               (node = rdlm_mlb_memory_use(m, seen, &k, &locks[used])) >= 0) {
            home[used] = node;
            kib[used] = (double)(rdlm_mlb_rss_kib() - rss1);
            rdlm_mlb_memory_row(m, used + 1, "rdlm_remote", kib[used]);
            used++;
        }
        if (m->o.result_lines) {
            rdlm_bench_result_put1("rdlm_ctx", "kib", (double)grow);
            rdlm_bench_result_put1("rdlm_ctx_max", "kib", (double)grow_max);
            rdlm_bench_result_put("rdlm_remote", "kib", kib, used);
            rdlm_bench_result_put("rdlm_remote", "home_node", home, used);
        }
        rdlm_bench_out_end(&m->out);
        while (used > 0) {
            rdlm_lock_close(locks[--used]);
        }
        free(seen);
    }
    rdlm_mlb_sync(m, RDLM_MLB_SLEEP);
}

/* ---- rounds and output --------------------------------------------------------------- */

/* One phase of the run's k-th implementation (a round function of rounds.h). */
static int rdlm_mlb_round(uint32_t k, uint32_t round, void *arg)
{
    rdlm_mlb_t *m = arg;
    const rdlm_mlb_impl_t *impl = &rdlm_mlb_impls[m->impls[k]];

    m->impl = m->impls[k];
    m->ops = &m->filled[m->impl];
    if (m->mode != RDLM_MLB_UNCONTENDED) {
        rdlm_mlb_phase(m, &rdlm_mlb_loop, round, (uint64_t)m->rank < m->contenders,
                       m->duration_ns);
    } else if (!impl->pair) {
        rdlm_mlb_phase(m, &rdlm_mlb_cycles, round, m->rank == 0, m->cap_ns);
    } else if (m->partner >= 0) {
        rdlm_mlb_phase(m, &rdlm_mlb_pair, round, m->rank == 0 || m->rank == m->partner,
                       m->cap_ns);
    }
    if (m->rank == 0) {
        rdlm_bench_out_progress(&m->out, RDLM_MLB_TOOL, ++m->phases, m->nphases,
                                impl->name);
    }
    return 0;
}

/* The implementations to alternate: the mode's, or (--impls) those named, in that
 * order; 0, or -1 for a name that is not the mode's or is repeated. */
static int rdlm_mlb_impls_select(rdlm_mlb_t *m)
{
    const char *names[RDLM_MLB_NIMPL];
    uint32_t k;
    int n;

    m->nimpl = 0;
    for (k = 0; k < RDLM_MLB_NIMPL; k++) {
        int in_mode = (rdlm_mlb_impls[k].modes >> m->mode) & 1u;

        names[k] = in_mode ? rdlm_mlb_impls[k].name : NULL;
        if (in_mode && (!rdlm_mlb_impls[k].ops->device || m->have_verbs)) {
            m->impls[m->nimpl++] = k;
        }
        m->filled[k] = rdlm_mlb_ops_fill(rdlm_mlb_impls[k].ops);
    }
    if (m->o.impls == NULL) {
        return 0;
    }
    n = rdlm_bench_mpi_select(m->o.impls, names, RDLM_MLB_NIMPL, m->impls);
    m->nimpl = n > 0 ? (uint32_t)n : 0;
    return n > 0 ? 0 : -1;
}

/* Whether implementation impl has rounds in this run (a pair needs a partner). */
static int rdlm_mlb_measured(const rdlm_mlb_t *m, uint32_t impl)
{
    return !rdlm_mlb_impls[impl].pair || m->partner >= 0;
}

/* The findings rdlm-bench reports as they are (rank 0, --result-lines): uncontended,
 * the run's facts; counter, those and what the checks found. */
static void rdlm_mlb_facts(const rdlm_mlb_t *m)
{
    const char *transport = m->info.transport ? m->info.transport : "?";
    const char *thread = m->info.progress_thread ? "yes" : "no";

    if (m->mode == RDLM_MLB_UNCONTENDED) {
        rdlm_bench_result_note(
            "%d ranks, %u nodes: origin rank 0 (node 0), lock %s homed on node %d, "
            "baselines' target rank %d (its leader), partner rank %d; rdlm transport %s, "
            "lock protocol %s, progress thread %s, cohort bound %u",
            m->size, m->info.nodes, m->lock_name[0] ? m->lock_name : "-", m->home_node,
            m->target, m->partner, transport,
            m->info.lock_protocol ? m->info.lock_protocol : "?", thread,
            m->info.cohort_bound);
    } else if (m->mode == RDLM_MLB_COUNTER) {
        rdlm_bench_result_note("%d ranks, %u nodes; rdlm's counter homed on node %d, at "
                               "rank %d, where the MPI window word is too; off-node: the "
                               "ranks of the other node; rdlm transport %s, progress "
                               "thread %s",
                               m->size, m->info.nodes, m->home_node, m->target, transport,
                               thread);
    }
}

/* Counter mode: what impl's check found after the last phase (rank 0). */
static void rdlm_mlb_check_note(const rdlm_mlb_t *m, uint32_t impl)
{
    const rdlm_mlb_count_t *c = &m->count[impl];
    enum rdlm_mlb_check check = m->filled[impl].check;

    if (check == RDLM_MLB_CHECK_PERMITS) {
        rdlm_bench_result_note(
            "check %s: never more than %u holders; %" PRId64 " permits free after %" PRIu64
            " acquire+release of all ranks",
            rdlm_mlb_impls[impl].name, RDLM_MLB_SEM_PERMITS, c->value, c->total);
    } else if (check != RDLM_MLB_CHECK_NONE) {
        rdlm_bench_result_note(
            "check %s (after every phase): value %" PRId64 " = start %" PRId64 " + %" PRIu64
            " fetch-adds of all ranks, warm-ups included; old values increasing per rank%s",
            rdlm_mlb_impls[impl].name, c->value, c->base, c->total,
            check == RDLM_MLB_CHECK_DISTINCT ? ", all distinct" : "");
    }
}

/* The result lines of the size just run (rank 0, --result-lines). */
static void rdlm_mlb_result_lines(const rdlm_mlb_t *m)
{
    uint32_t j, k, impl;

    rdlm_bench_result_put1("info", "nodes", m->info.nodes);
    rdlm_bench_result_put1("info", "cohort_bound", m->info.cohort_bound);
    rdlm_mlb_facts(m);
    for (j = 0; j < m->nimpl; j++) {
        impl = m->impls[j];
        if (!rdlm_mlb_measured(m, impl)) {
            continue;
        }
        rdlm_bench_result_figs(rdlm_mlb_impls[impl].name, m->fig[impl], rdlm_mlb_fig_keys,
                               RDLM_MLB_NF, m->o.rounds);
        for (k = 0; k < RDLM_BENCH_NSTATS && m->filled[impl].rdlm; k++) {
            rdlm_bench_result_put1(rdlm_mlb_impls[impl].name, rdlm_bench_stat_keys[k],
                                   (double)m->stats[impl][k]);
        }
        if (m->mode == RDLM_MLB_COUNTER) {
            rdlm_mlb_check_note(m, impl);
        }
    }
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
             "mode %s, %" PRIu64 " round(s), %" PRIu64
             " warm-up; Size: %s; rdlm transport %s",
             rdlm_mlb_mode_names[m->mode],
             m->mode == RDLM_MLB_MEMORY ? (uint64_t)1 : m->o.rounds, /* one sample */
             m->o.warmup,
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
    uint32_t impl, j;

    for (j = 0; j < m->nimpl; j++) {
        impl = m->impls[j];
        if (!rdlm_mlb_measured(m, impl)) {
            continue;
        }
        row = (rdlm_bench_out_row_t){
            .size = m->mode != RDLM_MLB_UNCONTENDED ? m->contenders
                    : rdlm_mlb_impls[impl].pair     ? 2
                                                    : 1,
            .impl = rdlm_mlb_impls[impl].name,
            .unit = m->mode == RDLM_MLB_UNCONTENDED ? "us" : "kops/s",
        };
        rdlm_bench_out_row(&m->out, &row, m->fig[impl], (uint32_t)m->o.rounds);
    }
}

/* -m's next size after s: doubled, the last one max; 0 after max. */
static uint64_t rdlm_mlb_next_size(uint64_t s, uint64_t max)
{
    return s >= max ? 0 : 2 * s < max ? 2 * s : max;
}

/* Every size of -m (contended, counter; otherwise all ranks, once): the rounds, then
 * rank 0's rows (and, --result-lines, result lines); the results are reset between
 * sizes, the counters' checks run on. */
static void rdlm_mlb_run(rdlm_mlb_t *m)
{
    uint64_t lo = m->size_max ? m->size_min : (uint64_t)m->size;
    uint64_t hi = m->size_max ? m->size_max : (uint64_t)m->size;
    uint64_t s;

    for (s = lo; s != 0; s = rdlm_mlb_next_size(s, hi)) {
        m->nphases += m->nimpl * (uint32_t)m->o.rounds;
    }
    if (m->rank == 0) {
        rdlm_mlb_out_begin(m);
    }
    for (s = lo; s != 0; s = rdlm_mlb_next_size(s, hi)) {
        m->contenders = s;
        memset(m->fig, 0, sizeof(m->fig));
        memset(m->stats, 0, sizeof(m->stats));
        rdlm_bench_alternate(m->nimpl, (uint32_t)m->o.rounds, rdlm_mlb_round, m);
        if (m->rank == 0) {
            rdlm_mlb_rows(m);
            if (m->o.result_lines) {
                rdlm_mlb_result_lines(m);
            }
        }
    }
    if (m->rank == 0) {
        rdlm_bench_out_end(&m->out);
    }
}

/* ---- options ----------------------------------------------------------------------- */

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
    "  --result-lines also the RESULT lines rdlm-bench reads\n"
    "On one machine without RDLM_VIRTUAL_NODES it runs as 2 virtual nodes; under Open\n"
    "MPI without --mca osc it sets osc sm,pt2pt (Open MPI 4.1's osc rdma crashes in\n"
    "MPI_Compare_and_swap over vader). Progress on stderr for runs over 3 s.\n"
    "Exit: 0 ran or printed help/version; 2 bad command line (one line on stderr).\n";

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
        if (rdlm_bench_mpi_u64(min, 1, &m->size_min) != 0) {
            return -1;
        }
        arg = colon + 1;
    }
    return rdlm_bench_mpi_u64(arg, m->size_min, &m->size_max);
}

/* This program's own options: --mode, --duration, -m. */
static int rdlm_mlb_option(void *ctx, int c, const char *arg)
{
    rdlm_mlb_t *m = ctx;
    uint64_t ms;
    uint32_t k;

    switch (c) {
    case 'm':
        return rdlm_mlb_parse_sizes(m, arg);
    case 'M':
        for (k = 0; k < RDLM_MLB_NMODES && strcmp(arg, rdlm_mlb_mode_names[k]) != 0; k++) {
        }
        m->mode = (enum rdlm_mlb_mode)k;
        return k < RDLM_MLB_NMODES ? 0 : -1;
    default: /* 'd' */
        if (rdlm_bench_mpi_u64(arg, 1, &ms) != 0) {
            return -1;
        }
        m->duration_ns = ms * 1000000ull;
        return 0;
    }
}

/* -1 to run, else the exit status (help, version or one error line printed by
 * rank 0). */
static int rdlm_mlb_options(rdlm_mlb_t *m, int argc, char **argv)
{
    static const struct option longopts[] = {
        RDLM_BENCH_MPI_LONGOPTS,
        {"mode", required_argument, NULL, 'M'},
        {"duration", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    char why[128];
    int rc;

    m->o = (rdlm_bench_mpi_opts_t){.warmup = 100, .cap_ms = 2000};
    m->duration_ns = 500000000ull;
    rc = rdlm_bench_mpi_parse(argc, argv, m->rank, RDLM_MLB_TOOL, rdlm_mlb_usage,
                              RDLM_BENCH_MPI_OPTSTRING "m:", longopts, &m->o, &m->out,
                              rdlm_mlb_option, m);
    if (rc >= 0) {
        return rc;
    }
    if (m->size_max != 0 &&
        (m->mode == RDLM_MLB_UNCONTENDED || m->mode == RDLM_MLB_MEMORY ||
         m->size_max > (uint64_t)m->size)) {
        snprintf(why, sizeof(why),
                 "-m: contended and counter modes only, at most the %d ranks", m->size);
        return rdlm_bench_mpi_usage_error(m->rank, RDLM_MLB_TOOL, why);
    }
    if (rdlm_mlb_impls_select(m) != 0) {
        snprintf(why, sizeof(why), "--impls %s: not the names of %s mode's implementations",
                 m->o.impls, rdlm_mlb_mode_names[m->mode]);
        return rdlm_bench_mpi_usage_error(m->rank, RDLM_MLB_TOOL, why);
    }
    m->o.iterations = m->o.iterations                   ? m->o.iterations
                      : m->mode == RDLM_MLB_UNCONTENDED ? 1000
                                                        : 10000000;
    m->o.rounds = m->o.rounds ? m->o.rounds : m->mode == RDLM_MLB_CONTENDED ? 1 : 5;
    m->cap_ns = m->o.cap_ms * 1000000ull;
    return -1;
}

/* ---- main -------------------------------------------------------------------------- */

/* The job's objects for the mode, the implementations' resources, the rounds. */
static void rdlm_mlb_measure(rdlm_mlb_t *m)
{
    uint32_t k;

    rdlm_mlb_ctx_open(m);
    for (k = 0; k < RDLM_MLB_NIMPL; k++) {
        m->count[k] = (rdlm_mlb_count_t){.last_old = -1};
    }
    if (m->mode == RDLM_MLB_COUNTER) {
        rdlm_mlb_counter_open(m);
    } else {
        rdlm_mlb_lock_choose(m);
    }
    rdlm_mlb_roles(m);
    rdlm_mlb_win_open(m);
    for (k = 0; k < m->nimpl; k++) {
        m->filled[m->impls[k]].open(m);
    }
    rdlm_mlb_run(m);
    for (k = 0; k < m->nimpl; k++) {
        m->filled[m->impls[k]].close(m);
    }
    MPI_Win_free(&m->win);
    if (m->counter != NULL) {
        rdlm_sem_close(m->sem);
        rdlm_counter_close(m->sharded);
        rdlm_counter_close(m->counter);
    }
    if (m->lock != NULL) {
        rdlm_lock_close(m->lock);
    }
}

int main(int argc, char **argv)
{
    rdlm_mlb_t *m = calloc(1, sizeof(*m));
    int rc;

    if (m == NULL) {
        fprintf(stderr, RDLM_MLB_TOOL ": out of memory\n");
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
    if ((rc = rdlm_mlb_options(m, argc, argv)) >= 0) {
        MPI_Finalize();
        free(m);
        return rc;
    }
    if (m->size < 2) {
        rdlm_mlb_die(m, "needs at least 2 ranks on 2 nodes (RDLM_VIRTUAL_NODES=2 on one "
                        "machine)");
    }
    if ((m->samples = malloc(sizeof(*m->samples) * RDLM_MLB_SAMPLES)) == NULL) {
        rdlm_mlb_die(m, "out of memory");
    }
    rdlm_bench_out_start(&m->out);
    rdlm_mlb_shared_map(m);
    if (m->mode == RDLM_MLB_MEMORY) {
        rdlm_mlb_memory(m);
    } else {
        rdlm_mlb_measure(m);
    }
    rdlm_ctx_destroy(m->ctx);
    munmap(m->sh, sizeof(*m->sh));
    MPI_Comm_free(&m->shm);
    free(m->node_of);
    free(m->samples);
    free(m);
    MPI_Finalize();
    return 0;
}
