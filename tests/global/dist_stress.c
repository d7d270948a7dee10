/*
 * rdlm_global_stress — the cross-node lock validator (issue 4). Every process joins one
 * distributed context, under mpirun (rdlm_mpi_ctx_create) or standalone (--standalone:
 * rdlm_ctx_create with RDLM_RANK / RDLM_SIZE / RDLM_RENDEZVOUS, as in the network-
 * namespace test). The processes run on one machine, so the state the locks protect
 * lives in a shared file (--shm NAME, created by rank 0) and is deliberately plain:
 *
 *   counter[l]   read, pause, write: a lost update shows as a final value below the
 *                number of acquires
 *   inside[l]    an atomic detector of overlapping critical sections
 *   log[l]       (token, rank, node, request time, grant time) of every acquire
 *
 * Checks by rank 0 after the run (mode "stress"):
 *   1. counter[l] == acquires of lock l, and no overlap seen
 *   2. tokens of lock l strictly increase in grant order (sorted by token, grant
 *      times never go backwards; no two equal) and each process's own tokens increase
 *   3. with --fair-bound B: in grant order, at most B local hand-offs (grants that did
 *      not take the global word) follow each global acquire before the next global
 *      one: the cohort bound. Each acquire knows which it was from the statistics.
 *      (A bound on waiting time measured with timestamps would count the time a
 *      process is descheduled before it queues, which on 2 oversubscribed cores is
 *      tens of milliseconds.) Each holds its lock 50 us longer then, so that its
 *      node-mate queues behind it and a local hand-off is possible at nearly every
 *      release: without the hold, with the home-served queue's fast cross-node
 *      passes, the unbounded variant saw at most 4 or 5 in a row in 2 of 5 runs.
 * --threads T runs T threads per process on the same handles (MPI_THREAD_MULTIPLE).
 * --reopen (one thread): every iteration opens its lock before the acquire and closes
 * it after the release, and also opens and closes a name of its own that nobody uses
 * again: so a small RDLM_CAPACITY is passed through many times, and on one node the
 * locks' entries are retired and keyed again (checks 1 and 2 then say that exclusion
 * and growing tokens survive that).
 * --lock-protocol P: the context's cross-node lock protocol must be P (am, atomic).
 * --give-up-us U: every other acquire times out after U us (on a contended lock many
 * do: its place is cancelled, or a grant crossing the cancel makes it hold after
 * all); timed-out ones are left out, and check 1 counts the critical sections
 * entered instead of the iterations. Some acquire must have given up.
 * --tries: every other acquire is a try (timeout 0); a busy one is left out as a
 * given-up one is (check 1 counts the critical sections entered). Against the remote-
 * atomic queue (RDLM_LOCK_AM=0) a try that found the word freed and retaken between
 * its two CASes returned RDLM_OK without holding: two holders, a repeated token, and a
 * release that waited for ever for a successor's link (glock.c, rdlm_glock_try).
 * --broken skips the acquire on every 4th iteration (a lock that lets a second holder
 * in): with --expect-violation the run passes only if a check fired.
 *
 * Mode "rwstress": reader-writer locks, 3 reads to 1 write per process; a writer checks
 * that nobody else is inside, a reader that no writer is inside and that the counter
 * does not change under it; the counter equals the writes, write tokens increase.
 * --broken skips the shared acquire on every 4th read.
 *
 * Mode "rwstarve": a writer gets in against a stream of readers on another node.
 *
 * Mode "cancel": destroying a context makes its waiting threads return
 * RDLM_ERR_CLOSED, also when the lock is released meanwhile (a grant reaches them
 * while their context closes); --iters rounds, each in a context of its own.
 *
 * Mode "counter": job-wide counters (distinct old values, signed deltas, sharded).
 *
 * Mode "sem": semaphores (never more than N permits held, timeouts take nothing).
 *
 * Mode "semavail": rdlm_sem_available stays within 0..N while others acquire.
 *
 * Mode "barrier": the collective barrier (rdlm_ctx_barrier, split phase).
 *
 * Mode "nbarrier": a named barrier of ranks 1..size-1 (rank 0 does not take part);
 * a participant that never arrives makes the others time out, and the barrier works
 * afterwards.
 *
 * Mode "twoctx": two contexts of one job are separate namespaces.
 *
 * --authority (with RDLM_JOB_AUTHORITY=1, or RDLM_AUTHORITY): every rank holds a lease
 * (rdlm_ctx_session), the token epoch is at least the clock epoch taken before the
 * context was created, and the lock loop sends nothing to the authority (the
 * authority_requests statistic does not move). In every mode, the tokens carry the
 * context's token epoch in their top 24 bits.
 * --create-error NAME: creating the context must fail with status NAME on every rank
 * (a bad configuration of the in-job authority): exit 0 if it does.
 *
 * Other modes: "timeout" (timed and try acquires on a held lock, queue intact after),
 * "accounting" (remote operations per acquire+release from the statistics),
 * "homebusy" (a remote acquire against a home process retaking the lock, counted),
 * "badinput" (documented statuses, nothing changed), "finalize" (the context left for
 * MPI_Finalize to destroy). Exit: 0 pass, 1 a check failed, 2 the run failed.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <rdlm.h>
#include <rdlm/lease.h>
#include <rdlm/mpi.h>

#define MAX_LOCKS 4
#define MAX_PROCS 64 /* log slots: processes x threads */
#define MAX_THREADS 8

typedef struct rec {
    uint64_t token;
    uint64_t t_req, t_acq;
    uint32_t rank, node;
    uint32_t global; /* the acquire took the global word (statistics delta) */
    uint32_t pad;
} rec_t;

typedef struct shared {
    atomic_uint arrived[4]; /* barrier generations for --standalone */
    atomic_uint violations;
    uint64_t counter[MAX_LOCKS];
    atomic_uint inside[MAX_LOCKS];  /* exclusive holders (writers) */
    atomic_uint readers[MAX_LOCKS]; /* shared holders (rwstress) */
    atomic_ulong writes[MAX_LOCKS]; /* write acquires (rwstress) */
    atomic_ulong entered[MAX_LOCKS]; /* critical sections entered (--give-up-us) */
    atomic_ulong gave_up;            /* acquires that timed out (--give-up-us) */
    atomic_ulong tries[2];           /* --tries: tries that held, that were busy */
    atomic_uint holding[2]; /* rwstarve: readers holding, per node */
    uint64_t hold_token; /* timeout mode: rank 0's token */
    atomic_uint stop;    /* homebusy mode: the remote rank is done */
    /* cancel mode: ranks whose context is closing (a round's destroy began) */
    atomic_uint destroying;
    rec_t log[];         /* [lock][rank][iter] */
} shared_t;

static struct {
    const char *mode, *shm, *create_error, *lock_protocol;
    int standalone, broken, expect_violation, authority, reopen, tries;
    uint32_t iters, locks, fair_bound, timeout_sec, threads, give_up_us;
} opt = {"stress", NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 400, 2, 0, 100, 1, 0};

static uint32_t g_rank, g_size, g_node, g_nodes, g_epoch;
static shared_t *g_sh;
static rdlm_ctx_h g_ctx;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "rank %u: ERROR: ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (!opt.standalone) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    _exit(2);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "ERROR: run exceeded --timeout-sec\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        _exit(2);
    }
    _exit(2);
}

static void check(int ok, const char *fmt, ...)
{
    va_list ap;

    if (ok) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "rank %u: FAILED CHECK: ", g_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    atomic_fetch_add(&g_sh->violations, 1);
}

static void expect_status(rdlm_status_t got, rdlm_status_t want, const char *what)
{
    check(got == want, "%s: got %s, want %s", what, rdlm_status_name(got),
          rdlm_status_name(want));
}

/* A barrier that does not use the lock under test: MPI's, or a generation counter in
 * the shared file (standalone; bounded by the alarm). */
static void barrier(void)
{
    static unsigned gen;

    if (!opt.standalone) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    gen++;
    atomic_fetch_add(&g_sh->arrived[gen % 4], 1);
    while (atomic_load(&g_sh->arrived[gen % 4]) < g_size * ((gen + 3) / 4)) {
        usleep(100);
    }
}

static size_t shared_bytes(void)
{
    return sizeof(shared_t) + sizeof(rec_t) * MAX_LOCKS * MAX_PROCS * opt.iters;
}

static rec_t *log_at(uint32_t lock, uint32_t rank, uint32_t i)
{
    return &g_sh->log[((size_t)lock * MAX_PROCS + rank) * opt.iters + i];
}

static void map_shared(void)
{
    char path[256];
    int fd;

    snprintf(path, sizeof(path), "/dev/shm/%s", opt.shm);
    if (g_rank == 0) {
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)shared_bytes()) != 0) {
            die("cannot create %s", path);
        }
        close(fd);
    }
    /* Nobody opens the file before rank 0 sized it (a file that exists but is still
     * short would fault on access). Standalone, the only collective there is yet is
     * the context's own barrier. */
    if (!opt.standalone) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (rdlm_ctx_barrier(g_ctx) != RDLM_OK) {
        die("barrier after creating %s", path);
    }
    fd = open(path, O_RDWR);
    if (fd < 0) {
        die("cannot open %s", path);
    }
    g_sh = mmap(NULL, shared_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g_sh == MAP_FAILED) {
        die("mmap failed");
    }
}

/* ---- stress --------------------------------------------------------------------------- */

static rdlm_stats_t stats_now(void)
{
    rdlm_stats_t s;

    if (rdlm_ctx_stats(g_ctx, &s) != RDLM_OK) {
        die("stats");
    }
    return s;
}

static void critical_section(uint32_t l, int widen)
{
    atomic_fetch_add(&g_sh->entered[l], 1);
    if (atomic_fetch_add(&g_sh->inside[l], 1) != 0) {
        check(0, "lock %u: two holders inside", l);
    }
    uint64_t v = *(volatile uint64_t *)&g_sh->counter[l];
    for (volatile int k = 0; k < 200; k++) {
    }
    if (widen) {
        sched_yield(); /* widen the window: overlaps show as lost updates */
    }
    *(volatile uint64_t *)&g_sh->counter[l] = v + 1;
    atomic_fetch_sub(&g_sh->inside[l], 1);
}

static rdlm_lock_h g_lock[MAX_LOCKS];

/* --reopen: open lock l's name (close: 0) or close it, and a name used once. */
static void reopen(uint32_t l, uint32_t i, int open)
{
    char name[48];
    rdlm_lock_h once;
    rdlm_status_t s;

    if (!open) {
        if ((s = rdlm_lock_close(g_lock[l])) != RDLM_OK) {
            die("close stress-%u: %s", l, rdlm_status_name(s));
        }
        return;
    }
    snprintf(name, sizeof(name), "stress-%u", l);
    if ((s = rdlm_lock_open(g_ctx, name, &g_lock[l])) != RDLM_OK) {
        die("open %s (iteration %u): %s", name, i, rdlm_status_name(s));
    }
    snprintf(name, sizeof(name), "once-%u-%u", g_rank, i);
    if ((s = rdlm_lock_open(g_ctx, name, &once)) != RDLM_OK ||
        (s = rdlm_lock_close(once)) != RDLM_OK) {
        die("open and close %s: %s", name, rdlm_status_name(s));
    }
}

/* --give-up-us: every other acquire gives up after that long (a cancel, or a grant
 * that crosses it); --tries: every other acquire (the odd ones) is a try; the others
 * wait. */
static uint64_t stress_timeout(uint32_t i)
{
    if (opt.tries && i % 2 == 1) {
        return 0;
    }
    return opt.give_up_us != 0 && i % 2 == 0 ? (uint64_t)opt.give_up_us * 1000u
                                             : RDLM_TIMEOUT_INFINITE;
}

/* One thread's loop; slot = rank * threads + thread names its log. */
static void *stress_loop(void *arg)
{
    uint32_t slot = (uint32_t)(uintptr_t)arg;
    rdlm_lock_h *lock = g_lock;

    for (uint32_t i = 0; i < opt.iters; i++) {
        uint32_t l = i % opt.locks;
        int skip = opt.broken && i % 4 == 3;
        rec_t *r = log_at(l, slot, i);
        rdlm_status_t s = RDLM_OK;

        uint64_t globals = stats_now().global_acquires;

        if (opt.reopen) {
            reopen(l, i, 1);
        }
        r->t_req = now_ns();
        if (!skip) {
            s = rdlm_lock_acquire(lock[l], stress_timeout(i), &r->token);
            if (s == RDLM_ERR_TIMEOUT && opt.give_up_us != 0) {
                r->token = 0; /* never held: left out of the checks */
                atomic_fetch_add(&g_sh->gave_up, 1);
                continue;
            }
            if (opt.tries && i % 2 == 1 && (s == RDLM_OK || s == RDLM_ERR_BUSY)) {
                atomic_fetch_add(&g_sh->tries[s == RDLM_ERR_BUSY], 1);
            }
            if (s == RDLM_ERR_BUSY && opt.tries) {
                r->token = 0; /* never held: left out of the checks */
                continue;
            }
            if (s != RDLM_OK) {
                die("acquire: %s", rdlm_status_name(s));
            }
        }
        r->t_acq = now_ns();
        r->rank = g_rank;
        r->node = g_node;
        r->global = stats_now().global_acquires != globals;
        critical_section(l, skip || i % 8 == 0);
        if (opt.fair_bound != 0) {
            usleep(50); /* hold: the node-mate queues meanwhile (check 3) */
        }
        if (!skip && (s = rdlm_lock_release(lock[l])) != RDLM_OK) {
            die("release: %s", rdlm_status_name(s));
        }
        if (opt.reopen) {
            reopen(l, i, 0);
        }
    }
    return NULL;
}

static void run_stress(void)
{
    pthread_t th[MAX_THREADS];
    rdlm_stats_t before;
    uint64_t requests;
    char name[32];

    for (uint32_t l = 0; l < opt.locks && !opt.reopen; l++) {
        snprintf(name, sizeof(name), "stress-%u", l);
        if (rdlm_lock_open(g_ctx, name, &g_lock[l]) != RDLM_OK) {
            die("open %s", name);
        }
    }
    barrier();
    before = stats_now();
    requests = before.authority_requests;
    for (uint32_t t = 0; t < opt.threads; t++) {
        if (pthread_create(&th[t], NULL, stress_loop,
                           (void *)(uintptr_t)(g_rank * opt.threads + t)) != 0) {
            die("pthread_create");
        }
    }
    for (uint32_t t = 0; t < opt.threads; t++) {
        pthread_join(th[t], NULL);
    }
    check(stats_now().authority_requests == requests,
          "the lock loop sent %" PRIu64 " requests to the authority",
          stats_now().authority_requests - requests);
    /* One node: the node-local lock is the whole lock, nothing goes to a home. */
    check(g_nodes > 1 || (stats_now().home_ops == before.home_ops &&
                          stats_now().global_acquires == before.global_acquires),
          "one node: the lock loop made %" PRIu64 " home operations and %" PRIu64
          " global acquires (want 0)",
          stats_now().home_ops - before.home_ops,
          stats_now().global_acquires - before.global_acquires);
    if (opt.authority) {
        check(rdlm_session_check(rdlm_ctx_session(g_ctx)) == RDLM_OK,
              "the lease was lost during the run");
    }
    barrier();
}

static void read_section(uint32_t l, int widen)
{
    atomic_fetch_add(&g_sh->readers[l], 1);
    check(atomic_load(&g_sh->inside[l]) == 0, "lock %u: a reader saw a writer inside", l);
    uint64_t v = *(volatile uint64_t *)&g_sh->counter[l];
    if (widen) {
        sched_yield();
    }
    check(*(volatile uint64_t *)&g_sh->counter[l] == v, "lock %u: the counter changed "
          "under a reader", l);
    atomic_fetch_sub(&g_sh->readers[l], 1);
}

static void run_rwstress(void)
{
    rdlm_rwlock_h rw[MAX_LOCKS];
    char name[32];

    for (uint32_t l = 0; l < opt.locks; l++) {
        snprintf(name, sizeof(name), "rw-%u", l);
        if (rdlm_rwlock_open(g_ctx, name, &rw[l]) != RDLM_OK) {
            die("open %s", name);
        }
    }
    barrier();
    for (uint32_t i = 0; i < opt.iters; i++) {
        uint32_t l = i % opt.locks;
        rec_t *r = log_at(l, g_rank, i);
        rdlm_status_t s;

        if ((i + g_rank) % 4 == 0) {
            if ((s = rdlm_rwlock_write_acquire(rw[l], RDLM_TIMEOUT_INFINITE, &r->token)) !=
                RDLM_OK) {
                die("write acquire: %s", rdlm_status_name(s));
            }
            check(atomic_load(&g_sh->readers[l]) == 0, "lock %u: a writer saw readers", l);
            atomic_fetch_add(&g_sh->writes[l], 1);
            critical_section(l, i % 8 == 0);
            if ((s = rdlm_rwlock_write_release(rw[l])) != RDLM_OK) {
                die("write release: %s", rdlm_status_name(s));
            }
            continue;
        }
        int skip = opt.broken && (i / 4) % 4 == 3;
        if (!skip && (s = rdlm_rwlock_read_acquire(rw[l], RDLM_TIMEOUT_INFINITE)) != RDLM_OK) {
            die("read acquire: %s", rdlm_status_name(s));
        }
        read_section(l, skip || i % 8 == 1);
        if (!skip && (s = rdlm_rwlock_read_release(rw[l])) != RDLM_OK) {
            die("read release: %s", rdlm_status_name(s));
        }
    }
    barrier();
}

static int cmp_token(const void *a, const void *b)
{
    const rec_t *x = a, *y = b;

    return x->token < y->token ? -1 : x->token > y->token;
}

/* Tokens of lock l: each process's increase, none issued twice, and (with
 * --fair-bound) the cohort bound. Records without a token (reads, --broken skips)
 * are left out. Returns the number of tokens. */
static size_t check_tokens(uint32_t l, rec_t *all)
{
    uint32_t worst = 0;
    size_t n = 0;

    for (uint32_t r = 0; r < g_size * opt.threads; r++) {
        uint64_t last = 0;

        for (uint32_t i = l; i < opt.iters; i += opt.locks) {
            rec_t *x = log_at(l, r, i);

            if (x->token == 0) {
                continue;
            }
            check(x->token > last, "lock %u rank %u: own tokens not increasing", l, r);
            check(x->token >> 40 == g_epoch, "lock %u rank %u: token %#" PRIx64 " is not "
                  "of the token epoch %u", l, r, x->token, g_epoch);
            last = x->token;
            all[n++] = *x;
        }
    }
    qsort(all, n, sizeof(*all), cmp_token);
    for (size_t k = 1; k < n; k++) {
        check(all[k].token != all[k - 1].token, "lock %u: token %#" PRIx64 " issued twice", l,
              all[k].token);
    }
    /* Cohort bound: local hand-offs between two global acquires. */
    for (size_t k = 0, run = 0; opt.fair_bound != 0 && k < n; k++) {
        run = all[k].global ? 0 : run + 1;
        worst = run > worst ? (uint32_t)run : worst;
    }
    if (opt.fair_bound != 0) {
        printf("lock %u: at most %u local hand-offs in a row (cohort bound %u)\n", l, worst,
               opt.fair_bound);
        check(worst <= opt.fair_bound, "lock %u: %u local hand-offs in a row (cohort "
              "bound %u)", l, worst, opt.fair_bound);
    }
    return n;
}

/* Writers are not starved: every rank but the last reads, holding each read for 1 ms
 * and then until another reader of its node holds too (at most 50 ms), so a node's
 * registration does not drop on its own even when the scheduler parks readers; the
 * last rank, on another node, must get a 2 s timed write acquire. Readers stop when it
 * is done. With an unbounded cohort bound the readers' node never re-checks for a
 * waiting writer, and the writer times out (the broken variant); with a bound, the
 * joiners queue behind the writer and the last holder lets go after 50 ms. */
/* Stop counting as a holder once another reader of the node holds, or after 50 ms. */
static void rwstarve_let_go(atomic_uint *holding)
{
    uint64_t give_up = now_ns() + 50000000ull;
    unsigned h = atomic_load(holding);

    for (;;) {
        if (h >= 2 || now_ns() >= give_up || atomic_load(&g_sh->writes[0]) != 0) {
            if (atomic_compare_exchange_weak(holding, &h, h - 1)) {
                return;
            }
            continue; /* h reloaded */
        }
        usleep(100);
        h = atomic_load(holding);
    }
}

static void run_rwstarve(void)
{
    rdlm_rwlock_h rw;
    rdlm_status_t s;
    uint64_t token, t0;

    if (rdlm_rwlock_open(g_ctx, "starve", &rw) != RDLM_OK) {
        die("open");
    }
    barrier();
    if (g_rank == g_size - 1) {
        usleep(200000); /* let the readers get going */
        t0 = now_ns();
        s = rdlm_rwlock_write_acquire(rw, 2000000000ull, &token);
        expect_status(s, RDLM_OK, "write acquire against a stream of readers");
        printf("the write acquire returned %s after %.1f ms of readers\n",
               rdlm_status_name(s), (double)(now_ns() - t0) / 1e6);
        if (s == RDLM_OK) {
            check(atomic_load(&g_sh->readers[0]) == 0, "a writer saw readers");
            rdlm_rwlock_write_release(rw);
        }
        atomic_store(&g_sh->writes[0], 1);
    } else {
        for (uint32_t i = 0; atomic_load(&g_sh->writes[0]) == 0 && i < 1000000; i++) {
            if ((s = rdlm_rwlock_read_acquire(rw, RDLM_TIMEOUT_INFINITE)) != RDLM_OK) {
                die("read acquire: %s", rdlm_status_name(s));
            }
            read_section(0, 0);
            atomic_fetch_add(&g_sh->holding[g_node % 2], 1);
            usleep(1000);
            rwstarve_let_go(&g_sh->holding[g_node % 2]);
            rdlm_rwlock_read_release(rw);
        }
    }
    barrier();
}

static void check_stress(int rw)
{
    rec_t *all = malloc(sizeof(rec_t) * g_size * opt.threads * opt.iters);

    for (uint32_t l = 0; l < opt.locks; l++) {
        uint64_t want = 0;
        size_t n = check_tokens(l, all);

        if (rw) {
            want = atomic_load(&g_sh->writes[l]);
        } else if (opt.give_up_us != 0 || opt.tries) {
            want = atomic_load(&g_sh->entered[l]);
        } else {
            for (uint32_t i = l; i < opt.iters; i += opt.locks) {
                want += g_size * opt.threads;
            }
        }
        check(g_sh->counter[l] == want, "lock %u: counter %" PRIu64 " != %" PRIu64
              " exclusive acquires (lost updates)", l, g_sh->counter[l], want);
        printf("lock %u: %zu tokens, counter %" PRIu64 "\n", l, n, g_sh->counter[l]);
    }
    if (opt.give_up_us != 0) {
        uint64_t gave_up = atomic_load(&g_sh->gave_up);

        printf("%" PRIu64 " acquires gave up after %u us\n", gave_up, opt.give_up_us);
        check(gave_up > 0, "no acquire gave up: --give-up-us %u tested nothing",
              opt.give_up_us);
    }
    if (opt.tries) {
        /* How many were busy depends on timing: reported, not checked. */
        printf("tries: %lu held, %lu busy\n", atomic_load(&g_sh->tries[0]),
               atomic_load(&g_sh->tries[1]));
    }
    free(all);
}

/* ---- timeout / accounting / bad input --------------------------------------------------- */

static void stats(rdlm_stats_t *s)
{
    *s = stats_now();
}

/* A lock homed on a node other than `avoid` (or any when avoid < 0). */
static rdlm_lock_h open_homed_away(const char *prefix, int64_t avoid)
{
    rdlm_lock_info_t info;
    rdlm_lock_h lock;
    char name[32];

    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        if (rdlm_lock_open(g_ctx, name, &lock) != RDLM_OK ||
            rdlm_lock_query(lock, &info) != RDLM_OK) {
            die("open %s", name);
        }
        if (info.home_node != avoid) {
            return lock;
        }
    }
    die("no lock name homed away from node %" PRId64, avoid);
    return NULL;
}

static void run_timeout(void)
{
    rdlm_lock_h lock = open_homed_away("tmo", -1);
    uint32_t last = g_size - 1;
    rdlm_stats_t a, b;
    uint64_t t0, token;
    rdlm_status_t s;

    if (g_rank == 0) {
        expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &g_sh->hold_token),
                      RDLM_OK, "rank 0 acquire");
    }
    barrier();
    if (g_rank == last || g_rank == 1) {
        /* last: another node, queued globally then abandoned; 1: rank 0's node (with
         * 2 virtual nodes of 4 ranks), a local timeout while rank 0 holds. Counted as
         * a timeout, not an acquire (the node's grant, given before the global word
         * timed out, was counted as a success). */
        stats(&a);
        t0 = now_ns();
        s = rdlm_lock_acquire(lock, 10000000, &token);
        t0 = now_ns() - t0;
        stats(&b);
        expect_status(s, RDLM_ERR_TIMEOUT, "10 ms timed acquire on a held lock");
        check(t0 >= 10000000 && t0 < 2000000000ull, "timed acquire took %" PRIu64 " ns", t0);
        check(b.acquires == a.acquires && b.timeouts == a.timeouts + 1,
              "a timed-out acquire counted %" PRIu64 " acquires, %" PRIu64 " timeouts",
              b.acquires - a.acquires, b.timeouts - a.timeouts);
    }
    if (g_rank == last) {
        stats(&a);
        expect_status(rdlm_lock_acquire(lock, 0, &token), RDLM_ERR_BUSY, "try on a held lock");
        stats(&b);
        check(b.home_ops - a.home_ops == 1 && b.peer_ops == a.peer_ops,
              "try cost %" PRIu64 " home + %" PRIu64 " peer operations (want 1 + 0)",
              b.home_ops - a.home_ops, b.peer_ops - a.peer_ops);
        check(b.acquires == a.acquires, "a failed try counted %" PRIu64 " acquires",
              b.acquires - a.acquires);
    }
    barrier();
    if (g_rank == 0) {
        expect_status(rdlm_lock_release(lock), RDLM_OK, "rank 0 release");
    }
    barrier();
    /* The queue is intact: everybody gets the lock, with tokens above rank 0's. */
    expect_status(rdlm_lock_acquire(lock, 5000000000ull, &token), RDLM_OK, "later acquire");
    check(token > g_sh->hold_token, "token %#" PRIx64 " not above the earlier %#" PRIx64,
          token, g_sh->hold_token);
    expect_status(rdlm_lock_release(lock), RDLM_OK, "later release");
    barrier();
}

/* Destroying a context cancels its waiters, over --iters rounds, each in a context of
 * its own: the round's holder (rank round % size) holds a lock and every other rank
 * has CANCEL_WAITERS threads waiting for it (queued on the node behind the holder's
 * node-mate, or in the global queue from the other node) while its main thread
 * destroys the context. Once every other rank's context is closing (a probe thread
 * waits for a second lock the holder keeps until its own destroy: that wait ends only
 * with RDLM_ERR_CLOSED; a try would be a call beside the destroy, which rdlm.h
 * forbids, and crashed now and then), the holder's
 * release comes (explicit in even rounds, its own destroy's in odd ones), 0-1 ms
 * later, varied by round: the grant it makes reaches a waiter whose context is
 * closing, often before the waiter has looked. Every waiter must return
 * RDLM_ERR_CLOSED; before the fix the global queue's waiter returned RDLM_OK (a grant
 * that arrived during its sleep, or crossed its cancel), holding a lock of a context
 * that was gone. The holder's release (passing over the abandoned places) and
 * everyone's collective destroy must complete. */
/* The waits of a waiter rank: two on the lock, a writer and a reader of an rwlock the
 * holder writes, one on a semaphore whose one permit the holder has. */
enum { CANCEL_LOCK_WAITERS = 2, CANCEL_WAITERS = CANCEL_LOCK_WAITERS + 3 };

typedef struct cancel_waiter {
    pthread_t th;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_sem_h sem;
    int kind; /* 0 lock, 1 write, 2 read, 3 semaphore */
    rdlm_status_t status;
} cancel_waiter_t;

static const char *const cancel_kind[] = {"lock", "rwlock write", "rwlock read",
                                          "semaphore"};

static void *cancel_waiter(void *arg)
{
    cancel_waiter_t *w = arg;

    switch (w->kind) {
    case 0: w->status = rdlm_lock_acquire(w->lock, RDLM_TIMEOUT_INFINITE, NULL); break;
    case 1: w->status = rdlm_rwlock_write_acquire(w->rw, RDLM_TIMEOUT_INFINITE, NULL); break;
    case 2: w->status = rdlm_rwlock_read_acquire(w->rw, RDLM_TIMEOUT_INFINITE); break;
    default: w->status = rdlm_sem_acquire(w->sem, 1, RDLM_TIMEOUT_INFINITE); break;
    }
    return NULL;
}

/* A waiter rank's probe: wait for the lock the holder keeps until its destroy; the
 * wait ends once this rank's context is closing. Then count the rank in destroying. */
static void *cancel_probe(void *arg)
{
    cancel_waiter_t *w = arg;

    w->status = rdlm_lock_acquire(w->lock, RDLM_TIMEOUT_INFINITE, NULL);
    atomic_fetch_add(&g_sh->destroying, 1);
    return NULL;
}

/* The round's holder: until every other rank's context is closing (bounded by the
 * alarm), then 0-1 ms more. */
static void cancel_wait_destroyers(uint32_t round)
{
    while (atomic_load(&g_sh->destroying) < (g_size - 1) * (round + 1)) {
        usleep(50);
    }
    usleep((round * 389u) % 1000u);
}

static void run_cancel_round(rdlm_ctx_h ctx, uint32_t round)
{
    cancel_waiter_t w[CANCEL_WAITERS];
    uint32_t holder = round % g_size;
    cancel_waiter_t probe = {.kind = 0};
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_sem_h sem;

    if (rdlm_lock_open(ctx, "cancel", &lock) != RDLM_OK ||
        rdlm_lock_open(ctx, "cancel-probe", &probe.lock) != RDLM_OK ||
        rdlm_rwlock_open(ctx, "cancel-rw", &rw) != RDLM_OK ||
        rdlm_sem_open(ctx, "cancel-sem", 1, &sem) != RDLM_OK) {
        die("open");
    }
    if (g_rank == holder) {
        expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK,
                      "holder acquire");
        expect_status(rdlm_rwlock_write_acquire(rw, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK,
                      "holder write acquire");
        expect_status(rdlm_sem_acquire(sem, 1, RDLM_TIMEOUT_INFINITE), RDLM_OK,
                      "holder semaphore acquire");
        expect_status(rdlm_lock_acquire(probe.lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK,
                      "holder acquire of the probe lock");
    }
    barrier();
    if (g_rank != holder) {
        for (uint32_t i = 0; i < CANCEL_WAITERS; i++) {
            w[i] = (cancel_waiter_t){.lock = lock, .rw = rw, .sem = sem};
            w[i].kind = i < CANCEL_LOCK_WAITERS ? 0 : (int)(i - CANCEL_LOCK_WAITERS) + 1;
            pthread_create(&w[i].th, NULL, cancel_waiter, &w[i]);
        }
        pthread_create(&probe.th, NULL, cancel_probe, &probe);
        usleep(100000); /* the waiters queue */
    }
    barrier();
    if (g_rank == holder) {
        cancel_wait_destroyers(round);
        if (round % 2 == 0) {
            expect_status(rdlm_lock_release(lock), RDLM_OK, "holder release");
            expect_status(rdlm_rwlock_write_release(rw), RDLM_OK, "holder write release");
            expect_status(rdlm_sem_release(sem, 1), RDLM_OK, "holder semaphore release");
        }
    }
    rdlm_ctx_destroy(ctx); /* collective; the holder's releases the locks it holds */
    if (g_rank != holder) {
        pthread_join(probe.th, NULL);
        check(probe.status == RDLM_ERR_CLOSED, "round %u: the probe returned %s", round,
              rdlm_status_name(probe.status));
        for (uint32_t i = 0; i < CANCEL_WAITERS; i++) {
            pthread_join(w[i].th, NULL);
            check(w[i].status == RDLM_ERR_CLOSED,
                  "round %u (holder rank %u, released by %s): a %s waiter of a destroyed "
                  "context returned %s, want RDLM_ERR_CLOSED",
                  round, holder, round % 2 == 0 ? "the holder" : "its destroy",
                  cancel_kind[w[i].kind], rdlm_status_name(w[i].status));
        }
    }
}

static void run_cancel(void)
{
    if (opt.standalone) {
        die("cancel needs mpirun (a context per round)");
    }
    for (uint32_t round = 0; round < opt.iters; round++) {
        rdlm_ctx_h ctx = g_ctx;

        if (round > 0 && rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &ctx) != RDLM_OK) {
            die("context of round %u", round);
        }
        g_ctx = NULL;
        run_cancel_round(ctx, round);
        barrier();
    }
}

/* Two distributed contexts of one job are separate namespaces with separate node
 * segments: "x" held in the first does not make "x" of the second busy. */
static void run_twoctx(void)
{
    rdlm_lock_h a, b;
    rdlm_ctx_h second;

    if (opt.standalone) {
        die("twoctx needs mpirun");
    }
    expect_status(rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &second), RDLM_OK, "second ctx");
    if (rdlm_lock_open(g_ctx, "x", &a) != RDLM_OK || rdlm_lock_open(second, "x", &b) != RDLM_OK) {
        die("open");
    }
    if (g_rank == 0) {
        expect_status(rdlm_lock_acquire(a, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK, "acquire a");
        /* The same process, the same name, the other context: free. */
        expect_status(rdlm_lock_acquire(b, 0, NULL), RDLM_OK, "x free in context 2");
    }
    barrier();
    if (g_rank != 0) {
        expect_status(rdlm_lock_acquire(a, 0, NULL), RDLM_ERR_BUSY, "x held in context 1");
        expect_status(rdlm_lock_acquire(b, 0, NULL), RDLM_ERR_BUSY, "x held in context 2");
    }
    barrier();
    if (g_rank == 0) {
        expect_status(rdlm_lock_release(a), RDLM_OK, "release a");
        expect_status(rdlm_lock_release(b), RDLM_OK, "release b");
    }
    rdlm_ctx_destroy(second);
}

static int cmp_u64(const void *a, const void *b);

/* Semaphores: N = 3 permits; every rank takes 1 or 2 permits --iters times, holds them
 * briefly and gives them back; a shared gauge of permits held must never exceed N.
 * Then rank 0 holds all N and the last rank's 10 ms timed acquire of 1 must time out
 * and take nothing (available stays 0 until rank 0 releases, then N).
 * --broken: the last rank skips the acquire on every 4th round (the gauge must show).
 * --give-up-us: every other acquire gives up after that long (a cancel, or a grant
 * that crosses it); the run must see some, and every permit must come back. */
static void run_sem(void)
{
    atomic_uint *gauge = &g_sh->readers[0];
    uint32_t permits = 3, avail;
    rdlm_sem_h sem, other;
    rdlm_status_t s;

    if (rdlm_sem_open(g_ctx, "sem", permits, &sem) != RDLM_OK) {
        die("open sem");
    }
    expect_status(rdlm_sem_open(g_ctx, "sem", permits + 1, &other), RDLM_ERR_MISMATCH,
                  "other size");
    expect_status(rdlm_sem_acquire(sem, permits + 1, 0), RDLM_ERR_INVALID_ARG, "k > N");
    expect_status(rdlm_sem_release(sem, 1), RDLM_ERR_NOT_OWNER, "release unheld");
    barrier();
    for (uint32_t i = 0; i < opt.iters; i++) {
        uint32_t k = 1 + (i + g_rank) % 2;
        int skip = opt.broken && g_rank == g_size - 1 && i % 4 == 3;

        if (!skip) {
            s = rdlm_sem_acquire(sem, k, stress_timeout(i));
            if (s == RDLM_ERR_TIMEOUT && opt.give_up_us != 0) {
                atomic_fetch_add(&g_sh->gave_up, 1); /* holds nothing */
                continue;
            }
            expect_status(s, RDLM_OK, "acquire");
        }
        uint32_t now = atomic_fetch_add(gauge, k) + k;
        check(now <= permits, "%u permits held at once (N = %u)", now, permits);
        if (skip) {
            usleep(2000); /* the unprotected section overlaps the others' */
            now = atomic_load(gauge);
            check(now <= permits, "%u permits held at once (N = %u)", now, permits);
        }
        sched_yield();
        atomic_fetch_sub(gauge, k);
        if (!skip) {
            expect_status(rdlm_sem_release(sem, k), RDLM_OK, "release");
        }
    }
    barrier();
    if (g_rank == 0) {
        expect_status(rdlm_sem_acquire(sem, permits, RDLM_TIMEOUT_INFINITE), RDLM_OK, "all");
    }
    barrier();
    if (g_rank == g_size - 1) {
        expect_status(rdlm_sem_acquire(sem, 1, 10000000), RDLM_ERR_TIMEOUT, "timed, none free");
        expect_status(rdlm_sem_acquire(sem, 1, 0), RDLM_ERR_BUSY, "try, none free");
        expect_status(rdlm_sem_available(sem, &avail), RDLM_OK, "available");
        check(avail == 0, "a timed-out acquire kept permits: %u available", avail);
    }
    barrier();
    if (g_rank == 0) {
        expect_status(rdlm_sem_release(sem, permits), RDLM_OK, "release all");
        expect_status(rdlm_sem_available(sem, &avail), RDLM_OK, "available");
        check(avail == permits, "%u available after all came back, want %u", avail, permits);
        if (opt.give_up_us != 0) {
            uint64_t gave_up = atomic_load(&g_sh->gave_up);

            printf("%" PRIu64 " acquires gave up after %u us\n", gave_up, opt.give_up_us);
            check(gave_up > 0, "no acquire gave up: --give-up-us %u tested nothing",
                  opt.give_up_us);
        }
    }
}

/* rdlm_sem_available under churn: N = 2; ranks 1.. take 1 or 2 permits --iters times
 * (a request of 2 while 1 is held is the case that first overshoots the home's count),
 * while rank 0 polls rdlm_sem_available until they are done (at most 100 x --iters
 * polls, 20 us apart): every value must lie in 0..N, and N within 2 s once all came
 * back. */
static void run_semavail(void)
{
    atomic_uint *done = &g_sh->holding[0];
    uint32_t permits = 2, avail, bad = 0, last_bad = 0, polls = 0;
    rdlm_sem_h sem;

    if (rdlm_sem_open(g_ctx, "semavail", permits, &sem) != RDLM_OK) {
        die("open semavail");
    }
    barrier();
    for (uint32_t i = 0; g_rank != 0 && i < opt.iters; i++) {
        uint32_t k = 1 + (i + g_rank) % 2;

        expect_status(rdlm_sem_acquire(sem, k, RDLM_TIMEOUT_INFINITE), RDLM_OK, "acquire");
        sched_yield();
        expect_status(rdlm_sem_release(sem, k), RDLM_OK, "release");
    }
    atomic_fetch_add(done, 1);
    while (g_rank == 0 && atomic_load(done) < g_size && polls < opt.iters * 100) {
        expect_status(rdlm_sem_available(sem, &avail), RDLM_OK, "available");
        bad += avail > permits;
        last_bad = avail > permits ? avail : last_bad;
        polls++;
        usleep(20); /* let the churners run (2 cores) */
    }
    check(bad == 0, "rdlm_sem_available out of 0..%u in %u of %u polls (%u)", permits, bad,
          polls, last_bad);
    barrier();
    /* a release over UCX is a message nobody waits for: the last ones may still be on
     * their way to the home after the barrier (rdlm.h), so the count may take a moment
     * to reach N; a permit lost for good keeps it below N for the whole 2 s */
    uint32_t reads = 0;

    while (g_rank == 0 && reads < 2000) {
        expect_status(rdlm_sem_available(sem, &avail), RDLM_OK, "available");
        if (++reads, avail == permits) {
            break;
        }
        usleep(1000);
    }
    if (g_rank == 0) {
        check(avail == permits, "%u available 2 s after all came back, want %u", avail,
              permits);
        printf("%u polls of rdlm_sem_available during the churn; %u after it\n", polls,
               reads);
    }
}

/* Counters: every rank fetch-adds 1 to "c" --iters times, logging the old values;
 * then signed deltas on "c2" and +1 on the sharded "c3". Rank 0 checks that c ends at
 * ranks * iters and that the old values are exactly 0 .. ranks*iters-1 (distinct, none
 * lost), that c2 ends at the sum of the deltas, and that c3 reads ranks * iters.
 * --broken: the last rank adds to c without the counter (a plain read + write of the
 * value it reads), which the old-value check must catch. */
static void run_counter(void)
{
    uint64_t *olds = (uint64_t *)(void *)g_sh->log; /* [rank][iter] */
    rdlm_counter_h c, c2, c3;
    int64_t old, v;
    rdlm_stats_t a, b;

    if (rdlm_counter_open(g_ctx, "c", &c) != RDLM_OK ||
        rdlm_counter_open(g_ctx, "c2", &c2) != RDLM_OK ||
        rdlm_counter_open_sharded(g_ctx, "c3", &c3) != RDLM_OK) {
        die("open counters");
    }
    expect_status(rdlm_counter_open_sharded(g_ctx, "c", &c2), RDLM_ERR_MISMATCH,
                  "c as sharded");
    barrier();
    a = stats_now();
    for (uint32_t i = 0; i < opt.iters; i++) {
        if (opt.broken && g_rank == g_size - 1 && i % 2 == 0) {
            expect_status(rdlm_counter_read(c, &old), RDLM_OK, "read");
            sched_yield();
            /* "increment" by adding what we think the difference is: a lost update */
            expect_status(rdlm_counter_fetch_add(c, 0, NULL), RDLM_OK, "fetch_add 0");
        } else {
            expect_status(rdlm_counter_fetch_add(c, 1, &old), RDLM_OK, "fetch_add");
        }
        olds[(size_t)g_rank * opt.iters + i] = (uint64_t)old;
        expect_status(rdlm_counter_fetch_add(c2, (i + g_rank) % 2 ? 3 : -1, NULL), RDLM_OK,
                      "fetch_add signed");
        expect_status(rdlm_counter_fetch_add(c3, 1, NULL), RDLM_OK, "fetch_add sharded");
    }
    b = stats_now();
    barrier();
    uint64_t mine[3] = {b.home_ops - a.home_ops, 3ull * opt.iters, b.combined - a.combined};
    uint64_t sum[3] = {0, 0, 0};
    if (!opt.standalone) {
        MPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (g_rank != 0) {
        return;
    }
    uint64_t n = (uint64_t)g_size * opt.iters;
    int64_t want2 = 0;

    expect_status(rdlm_counter_read(c, &v), RDLM_OK, "read c");
    check(v == (int64_t)n, "c = %" PRId64 ", want %" PRIu64, v, n);
    qsort(olds, n, sizeof(*olds), cmp_u64);
    for (uint64_t k = 0; k < n; k++) {
        if (olds[k] != k) {
            check(0, "old values are not 0..%" PRIu64 ": position %" PRIu64 " holds %" PRIu64,
                  n - 1, k, olds[k]);
            break;
        }
    }
    for (uint32_t r = 0; r < g_size; r++) {
        for (uint32_t i = 0; i < opt.iters; i++) {
            want2 += (i + r) % 2 ? 3 : -1;
        }
    }
    expect_status(rdlm_counter_read(c2, &v), RDLM_OK, "read c2");
    check(v == want2, "c2 = %" PRId64 ", want %" PRId64, v, want2);
    expect_status(rdlm_counter_read(c3, &v), RDLM_OK, "read c3");
    check(v == (int64_t)n, "sharded c3 = %" PRId64 ", want %" PRIu64, v, n);
    printf("%" PRIu64 " fetch-adds, %" PRIu64 " home operations (%.2f per fetch-add), %" PRIu64
           " requests served in another process's batch\n",
           sum[1], sum[0], (double)sum[0] / (double)sum[1], sum[2]);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Barrier rounds shared by the collective and the named barrier. Participants are
 * ranks first..size-1. Before round i each stamps its arrival time and writes i into
 * its own word of the shared file; after it, it stamps its departure and checks that
 * every participant's word reached i (writes before are visible after). Rank 0 then
 * checks that no participant left round i before the last one arrived at it.
 * --broken: the last rank skips round 3 (and makes it up at the end) while the others
 * arrive at round 3 late, so its early exit cannot be hidden by scheduling. */
typedef rdlm_status_t (*barrier_fn_t)(uint32_t round, void *arg);

static void barrier_rounds(uint32_t first, barrier_fn_t fn, void *arg)
{
    uint64_t *seen = (uint64_t *)(void *)g_sh->log; /* [rank] */
    uint64_t *times = seen + MAX_PROCS;             /* [iter][rank][2] */
    rdlm_status_t s;

    barrier();
    for (uint32_t i = 1; g_rank >= first && i <= opt.iters; i++) {
        uint64_t *t = times + ((size_t)i * MAX_PROCS + g_rank) * 2;
        int skip = opt.broken && i == 3 && g_rank == g_size - 1;

        if (opt.broken && i == 3 && !skip) {
            usleep(50000); /* the skipper is surely ahead: its early exit shows */
        }
        t[0] = now_ns();
        __atomic_store_n(&seen[g_rank], i, __ATOMIC_RELAXED);
        s = skip ? RDLM_OK : fn(i, arg);
        if (s != RDLM_OK) {
            die("barrier: %s", rdlm_status_name(s));
        }
        t[1] = now_ns();
        for (uint32_t r = first; r < g_size; r++) {
            if (__atomic_load_n(&seen[r], __ATOMIC_RELAXED) < i) {
                check(0, "barrier %u: rank %u's write not visible after it", i, r);
                break;
            }
        }
    }
    if (opt.broken && g_rank == g_size - 1) {
        fn(opt.iters + 1, arg);
    }
    barrier();
    if (g_rank == 0) {
        uint32_t early = 0;

        for (uint32_t i = 1; i <= opt.iters; i++) {
            uint64_t last_arrival = 0, first_departure = UINT64_MAX;

            for (uint32_t r = first; r < g_size; r++) {
                uint64_t *t = times + ((size_t)i * MAX_PROCS + r) * 2;

                last_arrival = t[0] > last_arrival ? t[0] : last_arrival;
                first_departure = t[1] < first_departure ? t[1] : first_departure;
            }
            early += first_departure < last_arrival;
        }
        check(early == 0, "%u barriers let a rank leave before the last one arrived", early);
        /* For information: the first participant's time in barrier. */
        uint64_t *d = malloc(sizeof(uint64_t) * opt.iters);
        for (uint32_t i = 1; i <= opt.iters; i++) {
            uint64_t *t = times + ((size_t)i * MAX_PROCS + first) * 2;
            d[i - 1] = t[1] - t[0];
        }
        qsort(d, opt.iters, sizeof(*d), cmp_u64);
        printf("rank %u in barrier: median %.1f us, p99 %.1f us\n", first,
               d[opt.iters / 2] / 1e3, d[opt.iters * 99 / 100] / 1e3);
        free(d);
    }
}

/* The collective barrier; every third round split-phase with work in between. */
static rdlm_status_t collective_round(uint32_t round, void *arg)
{
    rdlm_status_t s;

    (void)arg;
    if (round % 3 != 0) {
        return rdlm_ctx_barrier(g_ctx);
    }
    s = rdlm_ctx_barrier_arrive(g_ctx);
    for (volatile int k = 0; k < 1000; k++) {
    }
    return s == RDLM_OK ? rdlm_ctx_barrier_wait(g_ctx) : s;
}

static void run_barrier(void)
{
    barrier_rounds(0, collective_round, NULL);
    if (g_rank == 0) {
        rdlm_stats_t st = stats_now();

        printf("%u barriers checked; rank 0 sent %" PRIu64 " messages for %" PRIu64
               " barriers\n", opt.iters, st.barrier_msgs, st.barriers);
    }
}

/* A named barrier of ranks 1..size-1 (rank 0 is not a participant). */
static rdlm_status_t named_round(uint32_t round, void *arg)
{
    (void)round;
    return rdlm_barrier_wait(*(rdlm_barrier_h *)arg, RDLM_TIMEOUT_INFINITE);
}

static void run_nbarrier(void)
{
    rdlm_barrier_h b = NULL, other;
    rdlm_status_t s;

    if (g_rank != 0) {
        expect_status(rdlm_barrier_open(g_ctx, "nb", g_size - 1, &b), RDLM_OK, "open");
        expect_status(rdlm_barrier_open(g_ctx, "nb", g_size, &other), RDLM_ERR_MISMATCH,
                      "open with another count");
    }
    barrier_rounds(1, named_round, &b);
    /* A participant that never arrives: the others time out (their arrivals are
     * withdrawn), then everybody meets again and the barrier completes. */
    barrier();
    if (g_rank != 0 && g_rank != g_size - 1) {
        s = rdlm_barrier_wait(b, 200000000);
        expect_status(s, RDLM_ERR_TIMEOUT, "named barrier with a missing participant");
    }
    barrier();
    if (g_rank != 0) {
        expect_status(rdlm_barrier_wait(b, 10000000000ull), RDLM_OK, "barrier after timeouts");
    }
}

static void run_accounting(void)
{
    rdlm_ctx_dist_info_t di;
    rdlm_stats_t a, b;
    rdlm_lock_h lock;

    rdlm_ctx_dist_info(g_ctx, &di);
    /* Uncontended, homed on another node: 2 remote operations per cycle. */
    if (g_rank == g_size - 1) {
        lock = open_homed_away("acct", g_node);
        stats(&a);
        for (int i = 0; i < 100; i++) {
            expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK, "acq");
            expect_status(rdlm_lock_release(lock), RDLM_OK, "rel");
        }
        stats(&b);
        printf("uncontended: %.2f home (%.2f posted) + %.2f peer operations per "
               "acquire+release\n",
               (double)(b.home_ops - a.home_ops) / 100,
               (double)(b.home_ops_posted - a.home_ops_posted) / 100,
               (double)(b.peer_ops - a.peer_ops) / 100);
        check(b.home_ops - a.home_ops == 200 && b.peer_ops == a.peer_ops,
              "uncontended cycle: %" PRIu64 " home ops per 100 (want 200)",
              b.home_ops - a.home_ops);
        /* Over UCX or verbs with a progress thread the release's free is posted: one
         * round trip waited for per cycle. */
        check((strcmp(di.transport, "ucx") != 0 && strcmp(di.transport, "verbs") != 0) ||
                  !di.progress_thread || b.home_ops_posted - a.home_ops_posted == 100,
              "uncontended cycle over %s: %" PRIu64 " posted home ops per 100 (want 100)",
              di.transport, b.home_ops_posted - a.home_ops_posted);

        /* A shared acquire + release, nobody else reading: one fetch-add each. */
        rdlm_rwlock_h rw;
        if (rdlm_rwlock_open(g_ctx, "acct-rw", &rw) != RDLM_OK) {
            die("open rw");
        }
        stats(&a);
        for (int i = 0; i < 100; i++) {
            expect_status(rdlm_rwlock_read_acquire(rw, RDLM_TIMEOUT_INFINITE), RDLM_OK, "racq");
            expect_status(rdlm_rwlock_read_release(rw), RDLM_OK, "rrel");
        }
        stats(&b);
        printf("uncontended shared: %.2f home operations per acquire+release\n",
               (double)(b.home_ops - a.home_ops) / 100);
        check(b.home_ops - a.home_ops == 200 && b.peer_ops == a.peer_ops,
              "uncontended shared cycle: %" PRIu64 " home ops per 100 (want 200)",
              b.home_ops - a.home_ops);
    }
    barrier();
    /* Contended across nodes: home operations per acquire+release, summed. */
    if (rdlm_lock_open(g_ctx, "acct-contended", &lock) != RDLM_OK) {
        die("open");
    }
    barrier();
    stats(&a);
    for (uint32_t i = 0; i < opt.iters; i++) {
        expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK, "acq");
        expect_status(rdlm_lock_release(lock), RDLM_OK, "rel");
    }
    stats(&b);
    uint64_t mine[3] = {b.home_ops - a.home_ops, b.acquires - a.acquires,
                        b.global_acquires - a.global_acquires}, sum[3] = {0, 0, 0};
    barrier();
    if (opt.standalone) {
        die("accounting mode needs mpirun");
    }
    MPI_Reduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        double per = (double)sum[0] / (double)sum[1];

        printf("contended (%u nodes): %.2f home operations per acquire+release, %" PRIu64
               " of %" PRIu64 " acquires global\n", di.nodes, per, sum[2], sum[1]);
        /* DESIGN.md's target is 3. Whether the ranks overlap decides the path: 2.00
         * when they do not, 3.03-3.55 in 5 of 18 runs under ctest on 2026-12-01, with
         * the code of before that day too (a release racing a successor's link costs
         * more home operations). Bringing it back to 3 belongs to issue 17; this
         * checks the bound the protocol keeps today. */
        check(per <= 4.0, "contended: %.2f home operations per acquire+release (> 4)", per);
    }
}

/* Mode "homebusy" (2 ranks, 2 nodes): rank 0 tries a lock homed on its own node as
 * fast as it can (a try never queues, so rank 1's releases free the word) while rank 1
 * acquires it --iters times. Rank 0 reaches the home words through the loopback in
 * well under a remote round trip, so an acquire by rank 1 that chased the word's
 * changing value with CASes lost nearly every race (tens of home operations per
 * acquire): its acquire + release takes at most 4 (2 CASes, the swap, the free). */
static void run_homebusy(void)
{
    rdlm_lock_h lock = open_homed_away("busy", 1);
    rdlm_stats_t a, b;
    uint64_t retakes = 0;
    rdlm_status_t st;

    if (g_size != 2 || g_nodes != 2) {
        die("homebusy mode needs 2 ranks on 2 nodes");
    }
    barrier();
    if (g_rank == 0) {
        while (!atomic_load(&g_sh->stop)) {
            st = rdlm_lock_acquire(lock, 0, NULL);
            if (st == RDLM_OK) {
                expect_status(rdlm_lock_release(lock), RDLM_OK, "rel");
                retakes++;
            } else {
                expect_status(st, RDLM_ERR_BUSY, "try");
            }
        }
        printf("rank 0 (the home) took the lock %" PRIu64 " times meanwhile\n", retakes);
    } else {
        stats(&a);
        for (uint32_t i = 0; i < opt.iters; i++) {
            expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK, "acq");
            expect_status(rdlm_lock_release(lock), RDLM_OK, "rel");
        }
        stats(&b);
        atomic_store(&g_sh->stop, 1);
        printf("rank 1: %.2f home operations per acquire+release against a busy home\n",
               (double)(b.home_ops - a.home_ops) / opt.iters);
        check(b.home_ops - a.home_ops <= 4ull * opt.iters,
              "against a busy home: %" PRIu64 " home operations for %u acquire+release "
              "(want at most 4 each)",
              b.home_ops - a.home_ops, opt.iters);
    }
}

static void run_badinput(void)
{
    rdlm_lock_h lock, closed;
    rdlm_rwlock_h rw;
    rdlm_lock_info_t info;
    rdlm_counter_h c;

    if (rdlm_lock_open(g_ctx, "bad", &lock) != RDLM_OK ||
        rdlm_lock_open(g_ctx, "bad-closed", &closed) != RDLM_OK) {
        die("open");
    }
    expect_status(rdlm_lock_close(closed), RDLM_OK, "close");
    expect_status(rdlm_lock_acquire(closed, 0, NULL), RDLM_ERR_CLOSED, "acquire closed handle");
    expect_status(rdlm_lock_acquire(NULL, 0, NULL), RDLM_ERR_BAD_HANDLE, "acquire NULL");
    expect_status(rdlm_rwlock_open(g_ctx, "bad-rw", &rw), RDLM_OK, "rwlock open");
    expect_status(rdlm_rwlock_read_release(rw), RDLM_ERR_NOT_OWNER, "shared release unheld");
    expect_status(rdlm_rwlock_write_release(rw), RDLM_ERR_NOT_OWNER, "write release unheld");
    rdlm_barrier_h nb;
    expect_status(rdlm_barrier_open(g_ctx, "bad-b", 0, &nb), RDLM_ERR_INVALID_ARG,
                  "named barrier of 0 participants");
    expect_status(rdlm_counter_open(g_ctx, "bad-c", &c), RDLM_OK, "counter open");
    expect_status(rdlm_counter_fetch_add(c, 1, NULL), RDLM_OK, "counter fetch_add");
    expect_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER, "release never acquired");
    if (g_rank == 0) {
        expect_status(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, NULL), RDLM_OK, "acq");
    }
    barrier();
    if (g_rank != 0) {
        expect_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER, "release by a non-owner");
    }
    barrier();
    if (g_rank == 0) {
        rdlm_lock_query(lock, &info);
        check(info.held_by_me && info.node_holds_global, "holder lost the lock to a "
              "non-owner's release");
        expect_status(rdlm_lock_release(lock), RDLM_OK, "release");
        expect_status(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER, "double release");
        rdlm_lock_query(lock, &info);
        check(!info.held && !info.node_holds_global, "state changed by a double release");
    }
    barrier();
    /* Still a working lock for everybody. */
    expect_status(rdlm_lock_acquire(lock, 5000000000ull, NULL), RDLM_OK, "acquire after");
    expect_status(rdlm_lock_release(lock), RDLM_OK, "release after");
    barrier();
    rdlm_ctx_destroy(g_ctx);
    g_ctx = NULL;
    expect_status(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_CLOSED,
                  "acquire after the context was destroyed");
    if (!opt.standalone) {
        rdlm_ctx_h ctx;
        expect_status(rdlm_mpi_ctx_create(MPI_COMM_NULL, NULL, &ctx), RDLM_ERR_INVALID_ARG,
                      "MPI_COMM_NULL");
    }
}

/* ---- lease authority ------------------------------------------------------------------- */

/* The clock epoch now (util/clock.c): a job's token epoch is at least this, from
 * its host's epoch file or from the authority's leader (docs/distributed-locks.md). */
static uint32_t clock_epoch(void)
{
    uint64_t minutes = ((uint64_t)time(NULL) - 1704067200u) / 60;

    return (uint32_t)(minutes % ((1u << 23) - 1)) + 1;
}

static void check_authority(const rdlm_ctx_dist_info_t *di, uint32_t clock_before)
{
    check(rdlm_ctx_session(g_ctx) != NULL, "no lease session");
    check(di->token_epoch >= clock_before, "token epoch %u below the clock epoch %u",
          di->token_epoch, clock_before);
    if (g_rank == 0) {
        printf("lease on every rank; token epoch %u (clock epoch %u)\n", di->token_epoch,
               clock_before);
    }
}

/* --create-error: the create failed on this rank; it must have, with that status. */
static int expect_create_error(rdlm_status_t s)
{
    int rank = 0;

    if (!opt.standalone) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (s == RDLM_OK || strcmp(rdlm_status_name(s), opt.create_error) != 0) {
        fprintf(stderr, "rank %d: FAILED: creating the context gave %s, want %s\n", rank,
                rdlm_status_name(s), opt.create_error);
        return 1;
    }
    printf("rank %d: PASS: creating the context failed with %s\n", rank, opt.create_error);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--standalone")) {
            opt.standalone = 1;
        } else if (!strcmp(a, "--broken")) {
            opt.broken = 1;
        } else if (!strcmp(a, "--expect-violation")) {
            opt.expect_violation = 1;
        } else if (!strcmp(a, "--reopen")) {
            opt.reopen = 1;
        } else if (!strcmp(a, "--tries")) {
            opt.tries = 1;
        } else if (!strcmp(a, "--authority")) {
            opt.authority = 1;
        } else if (v != NULL && !strcmp(a, "--create-error")) {
            opt.create_error = argv[++i];
        } else if (v != NULL && !strcmp(a, "--mode")) {
            opt.mode = argv[++i];
        } else if (v != NULL && !strcmp(a, "--shm")) {
            opt.shm = argv[++i];
        } else if (v != NULL && !strcmp(a, "--iters")) {
            opt.iters = (uint32_t)atoi(argv[++i]);
        } else if (v != NULL && !strcmp(a, "--locks")) {
            opt.locks = (uint32_t)atoi(argv[++i]);
        } else if (v != NULL && !strcmp(a, "--fair-bound")) {
            opt.fair_bound = (uint32_t)atoi(argv[++i]);
        } else if (v != NULL && !strcmp(a, "--lock-protocol")) {
            opt.lock_protocol = argv[++i];
        } else if (v != NULL && !strcmp(a, "--give-up-us")) {
            opt.give_up_us = (uint32_t)atoi(argv[++i]);
        } else if (v != NULL && !strcmp(a, "--threads")) {
            opt.threads = (uint32_t)atoi(argv[++i]);
        } else if (v != NULL && !strcmp(a, "--timeout-sec")) {
            opt.timeout_sec = (uint32_t)atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--standalone] [--mode stress|rwstress|rwstarve|counter|sem|barrier|"
                            "nbarrier|semavail|cancel|"
                            "twoctx|"
                            "timeout|accounting|homebusy|badinput|finalize] [--shm NAME] [--iters N] [--locks N] "
                            "[--fair-bound B] [--threads T] [--reopen] [--give-up-us U] [--tries] "
                            "[--lock-protocol am|atomic] "
                            "[--broken --expect-violation] "
                            "[--authority] [--create-error STATUS] [--timeout-sec S]\n",
                    argv[0]);
            exit(2);
        }
    }
    if (opt.shm == NULL || opt.locks == 0 || opt.locks > MAX_LOCKS || opt.iters == 0 ||
        opt.threads == 0 || opt.threads > MAX_THREADS ||
        (opt.threads > 1 && (opt.fair_bound != 0 || strcmp(opt.mode, "stress") != 0)) ||
        (opt.reopen && (opt.threads > 1 || strcmp(opt.mode, "stress") != 0))) {
        fprintf(stderr, "need --shm NAME, 1..%d locks, iterations, 1..%d threads (more than "
                        "one only in mode stress without --fair-bound)\n",
                MAX_LOCKS, MAX_THREADS);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    rdlm_ctx_dist_info_t di;
    rdlm_status_t s;
    uint32_t clock_before;
    int fail;

    parse(argc, argv);
    signal(SIGALRM, on_alarm);
    alarm(opt.timeout_sec);
    clock_before = clock_epoch();
    if (opt.standalone) {
        s = rdlm_ctx_create(NULL, &g_ctx);
    } else {
        int provided;

        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (opt.threads > 1 && provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
            MPI_Finalize();
            return 77;
        }
        s = rdlm_mpi_ctx_create(MPI_COMM_WORLD, NULL, &g_ctx);
    }
    if (opt.create_error != NULL) {
        fail = expect_create_error(s);
        if (!opt.standalone) {
            MPI_Finalize();
        }
        return fail;
    }
    if (s != RDLM_OK) {
        die("context: %s", rdlm_status_name(s));
    }
    rdlm_ctx_dist_info(g_ctx, &di);
    g_rank = di.rank;
    g_size = di.size;
    g_node = di.node;
    g_nodes = di.nodes;
    g_epoch = di.token_epoch;
    if (!di.distributed || g_size * opt.threads > MAX_PROCS) {
        die("not a distributed context of at most %d processes", MAX_PROCS);
    }
    if (g_rank == 0) {
        printf("%u processes, %u nodes, transport %s, cohort bound %u, lock protocol %s, "
               "mode %s\n",
               g_size, di.nodes, di.transport, di.cohort_bound, di.lock_protocol, opt.mode);
    }
    if (opt.lock_protocol != NULL && strcmp(di.lock_protocol, opt.lock_protocol) != 0) {
        die("lock protocol %s, want %s", di.lock_protocol, opt.lock_protocol);
    }
    map_shared();
    barrier();
    if (opt.authority) {
        check_authority(&di, clock_before);
    }
    if (!strcmp(opt.mode, "stress")) {
        run_stress();
        if (g_rank == 0) {
            check_stress(0);
        }
    } else if (!strcmp(opt.mode, "rwstress")) {
        run_rwstress();
        if (g_rank == 0) {
            check_stress(1);
        }
    } else if (!strcmp(opt.mode, "sem")) {
        run_sem();
    } else if (!strcmp(opt.mode, "semavail")) {
        run_semavail();
    } else if (!strcmp(opt.mode, "counter")) {
        run_counter();
    } else if (!strcmp(opt.mode, "barrier")) {
        run_barrier();
    } else if (!strcmp(opt.mode, "nbarrier")) {
        run_nbarrier();
    } else if (!strcmp(opt.mode, "twoctx")) {
        run_twoctx();
    } else if (!strcmp(opt.mode, "cancel")) {
        run_cancel();
    } else if (!strcmp(opt.mode, "rwstarve")) {
        run_rwstarve();
    } else if (!strcmp(opt.mode, "timeout")) {
        run_timeout();
    } else if (!strcmp(opt.mode, "accounting")) {
        run_accounting();
    } else if (!strcmp(opt.mode, "homebusy")) {
        run_homebusy();
    } else if (!strcmp(opt.mode, "badinput")) {
        run_badinput();
    } else if (strcmp(opt.mode, "finalize") != 0) {
        die("unknown mode %s", opt.mode);
    }
    barrier();
    fail = atomic_load(&g_sh->violations) != 0;
    if (!strcmp(opt.mode, "finalize")) {
        g_ctx = NULL; /* left for MPI_Finalize's hook */
    }
    rdlm_ctx_destroy(g_ctx);
    if (g_rank == 0) {
        char path[256];

        snprintf(path, sizeof(path), "/dev/shm/%s", opt.shm);
        unlink(path);
        if (opt.expect_violation) {
            printf(fail ? "PASS: the broken variant was caught\n"
                        : "FAILED: the broken variant was NOT caught\n");
        } else {
            printf(fail ? "FAILED\n" : "PASS\n");
        }
    }
    if (!opt.standalone) {
        MPI_Finalize();
    }
    return fail == opt.expect_violation ? 0 : 1;
}
