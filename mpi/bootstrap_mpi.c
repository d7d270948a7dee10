/*
 * The MPI bootstrap (bootstrap_mpi.h). Only PMPI_* is called here.
 *
 * Every collective is a non-blocking PMPI collective on a private duplicate of the
 * caller's communicator, completed by rdlm_mpi_boot_wait:
 *
 *   post (PMPI_Iallgather | PMPI_Ibarrier)
 *   loop: PMPI_Test -> done?            return RDLM_OK
 *         idle(arg)                      the caller's transport progresses
 *         past the deadline?             keep the request, log, RDLM_ERR_TIMEOUT
 *         idle handled nothing?          sleep RDLM_MPI_BOOT_NAP_NS
 *
 * So idle runs at least every RDLM_MPI_BOOT_NAP_NS plus one test (well under the
 * millisecond bootstrap.h promises, unless the OS deschedules us). The nap, rather
 * than a spin, matters when ranks outnumber cores: the peers spinning on their
 * remote atomics then get the CPU, and we come back as a woken sleeper (favoured by
 * the scheduler) instead of waiting for a time slice.
 *
 * PMPI_Test is rate-limited (first at once, then at intervals doubling up to
 * RDLM_MPI_BOOT_TEST_MAX_NS), while idle runs on every round: an oversubscribed Open
 * MPI (mpi_yield_when_idle) calls sched_yield inside every progress call that finds
 * nothing, which hands our CPU to a spinning peer for a whole time slice. Measured on
 * 2 cores, 4 ranks, UCX over TCP, three ranks fetch-adding on the waiting rank's
 * word: about 5 ms per emulated fetch-add with a test on every round, about 0.2-0.4
 * ms with the rate limit. The cost is at most RDLM_MPI_BOOT_TEST_MAX_NS of extra
 * latency per collective, which the bootstrap (wire-up, teardown) can afford.
 *
 * Errors come back as statuses, never as an abort: the duplicate returns errors
 * (MPI_ERRORS_RETURN), and every test of a collective runs with MPI_COMM_WORLD's
 * handler set to MPI_ERRORS_RETURN too (rdlm_mpi_boot_test), because Open MPI 4.1
 * reports the error of a non-blocking collective to MPI_COMM_WORLD's handler, not to
 * the communicator's: a rank stopped past its lease and resumed posts collectives its
 * peers gave up or never post (the bootstrap is out of step), a message lands in a
 * smaller one's buffer (MPI_ERR_TRUNCATE), and the default handler aborted the job
 * in rdlm_ctx_destroy.
 */
#include "bootstrap_mpi.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "log.h"

/* Sleep between tests when idle handled nothing (ns). */
#define RDLM_MPI_BOOT_NAP_NS 50000
/* PMPI_Test intervals: start, growth (doubling plus this), and cap (ns). */
#define RDLM_MPI_BOOT_TEST_STEP_NS 10000u
#define RDLM_MPI_BOOT_TEST_MAX_NS 1000000u
/* fini waits at most this long for a collective that timed out earlier. */
#define RDLM_MPI_BOOT_FINI_WAIT_NS 1000000000u

typedef struct rdlm_mpi_boot {
    MPI_Comm comm; /* the private duplicate */
    uint32_t rank, size;
    uint64_t timeout_ns;
    uint32_t seq;        /* collectives issued, for the log */
    MPI_Request pending; /* a collective given up, or MPI_REQUEST_NULL */
    const char *pending_what;
    rdlm_status_t pending_why; /* RDLM_ERR_TIMEOUT, or RDLM_ERR_PEER_DEAD (idle said so:
                                  it can never complete) */
} rdlm_mpi_boot_t;

/* Map an MPI error code to a status, logging once with MPI's own text. */
static rdlm_status_t rdlm_mpi_boot_error(const rdlm_mpi_boot_t *b, int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int cls = MPI_ERR_OTHER, tlen = 0;
    rdlm_status_t st;

    if (PMPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = MPI_ERR_OTHER;
    if (PMPI_Error_string(rc, text, &tlen) != MPI_SUCCESS || tlen <= 0)
        tlen = snprintf(text, sizeof(text), "MPI error %d", rc);
    switch (cls) {
    case MPI_ERR_NO_MEM:
        st = RDLM_ERR_NO_MEMORY;
        break;
    case MPI_ERR_ARG:
    case MPI_ERR_COUNT:
    case MPI_ERR_TYPE:
    case MPI_ERR_BUFFER:
    case MPI_ERR_COMM:
    case MPI_ERR_RANK:
        st = RDLM_ERR_INVALID_ARG;
        break;
    case MPI_ERR_TRUNCATE:
        st = RDLM_ERR_MISMATCH;
        break;
    default:
        /* Open MPI without ULFM has no "process failed" class; anything else is a
         * failure of the peers or of the link to them. */
        st = RDLM_ERR_IO;
        break;
    }
    rdlm_error("mpi bootstrap: rank %u: %s failed: %.*s (MPI error class %d) -> %s",
               b != NULL ? b->rank : 0u, what, tlen, text, cls, rdlm_status_name(st));
    return st;
}

/* MPI_COMM_WORLD's own handler while tests of this process's collectives run (any
 * thread, any context): the first to start sets MPI_ERRORS_RETURN, the last to end
 * puts the saved one back, so that overlapping tests never save ours as the user's. */
static pthread_mutex_t rdlm_mpi_boot_world_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned rdlm_mpi_boot_world_tests;
static MPI_Errhandler rdlm_mpi_boot_world_saved = MPI_ERRHANDLER_NULL;

/* PMPI_Test(req) with MPI_COMM_WORLD's error handler set to MPI_ERRORS_RETURN for the
 * call (top of the file) and put back after. */
static int rdlm_mpi_boot_test(MPI_Request *req, int *done)
{
    int rc;

    pthread_mutex_lock(&rdlm_mpi_boot_world_lock);
    if (rdlm_mpi_boot_world_tests++ == 0 &&
        PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &rdlm_mpi_boot_world_saved) ==
            MPI_SUCCESS) {
        PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    pthread_mutex_unlock(&rdlm_mpi_boot_world_lock);
    rc = PMPI_Test(req, done, MPI_STATUS_IGNORE);
    pthread_mutex_lock(&rdlm_mpi_boot_world_lock);
    if (--rdlm_mpi_boot_world_tests == 0 &&
        rdlm_mpi_boot_world_saved != MPI_ERRHANDLER_NULL) {
        PMPI_Comm_set_errhandler(MPI_COMM_WORLD, rdlm_mpi_boot_world_saved);
        PMPI_Errhandler_free(&rdlm_mpi_boot_world_saved);
        rdlm_mpi_boot_world_saved = MPI_ERRHANDLER_NULL;
    }
    pthread_mutex_unlock(&rdlm_mpi_boot_world_lock);
    return rc;
}

static void rdlm_mpi_boot_nap(void)
{
    struct timespec ts = {0, RDLM_MPI_BOOT_NAP_NS};

    nanosleep(&ts, NULL);
}

/* Give the collective of *req up after ms, saying why once: MPI cannot cancel a
 * collective, so keep the request (fini still completes it if the peers turn up late).
 * Returns why. */
static rdlm_status_t rdlm_mpi_boot_give_up(rdlm_mpi_boot_t *b, MPI_Request *req,
                                           const char *what, rdlm_status_t why,
                                           unsigned long long ms)
{
    b->pending = *req;
    b->pending_what = what;
    b->pending_why = why;
    *req = MPI_REQUEST_NULL;
    if (why == RDLM_ERR_PEER_DEAD) {
        rdlm_warn("mpi bootstrap: rank %u of %u: %s (collective %u) given up after %llu "
                  "ms: a process it needs is dead; this bootstrap is now out of step",
                  b->rank, b->size, what, b->seq, ms);
    } else {
        rdlm_error("mpi bootstrap: rank %u of %u: %s (collective %u) timed out after %llu "
                   "ms: a peer did not join it (never came, or is stuck waiting for us); "
                   "this bootstrap is now out of step",
                   b->rank, b->size, what, b->seq, ms);
    }
    return why;
}

/* Complete *req, calling idle between tests; bounded by the bootstrap's timeout, and
 * given up when idle says a process is dead. */
static rdlm_status_t rdlm_mpi_boot_wait(rdlm_mpi_boot_t *b, MPI_Request *req,
                                        const char *what, const rdlm_tl_idle_t *idle)
{
    uint64_t start = rdlm_clock_now_ns(), deadline = rdlm_clock_deadline(b->timeout_ns);
    uint64_t now = start, next_test = start, interval = 0;

    for (;;) {
        int done = 0, busy = 0, rc;

        if (now >= next_test) {
            rc = rdlm_mpi_boot_test(req, &done);
            if (rc != MPI_SUCCESS)
                return rdlm_mpi_boot_error(b, rc, what);
            if (done)
                return RDLM_OK;
            interval = 2 * interval + RDLM_MPI_BOOT_TEST_STEP_NS;
            if (interval > RDLM_MPI_BOOT_TEST_MAX_NS)
                interval = RDLM_MPI_BOOT_TEST_MAX_NS;
            next_test = rdlm_clock_now_ns() + interval;
        }
        if (idle != NULL && idle->func != NULL)
            busy = idle->func(idle->arg);
        now = rdlm_clock_now_ns();
        if (busy < 0 || now >= deadline)
            return rdlm_mpi_boot_give_up(b, req, what,
                                         busy < 0 ? RDLM_ERR_PEER_DEAD : RDLM_ERR_TIMEOUT,
                                         (unsigned long long)((now - start) / 1000000));
        if (busy <= 0)
            rdlm_mpi_boot_nap();
    }
}

/* RDLM_OK if a new collective may start. */
static rdlm_status_t rdlm_mpi_boot_check(rdlm_mpi_boot_t *b, const char *what)
{
    if (b->pending == MPI_REQUEST_NULL)
        return RDLM_OK;
    rdlm_debug("mpi bootstrap: rank %u: %s refused: an earlier %s was given up (%s), so "
               "this rank is out of step with its peers",
               b->rank, what, b->pending_what, rdlm_status_name(b->pending_why));
    return b->pending_why;
}

static rdlm_status_t rdlm_mpi_boot_allgather(void *arg, const void *send, void *recv,
                                             size_t len, const rdlm_tl_idle_t *idle)
{
    rdlm_mpi_boot_t *b = arg;
    MPI_Request req = MPI_REQUEST_NULL;
    const void *sbuf = send;
    rdlm_status_t st;
    int rc;

    st = rdlm_mpi_boot_check(b, "allgather");
    if (st != RDLM_OK)
        return st;
    if (len > (size_t)INT_MAX || (len > 0 && (send == NULL || recv == NULL))) {
        rdlm_error("mpi bootstrap: rank %u: allgather of %zu bytes: invalid argument "
                   "(at most INT_MAX bytes per rank, non-NULL buffers)",
                   b->rank, len);
        return RDLM_ERR_INVALID_ARG;
    }
    /* MPI forbids overlapping buffers; our own block in place is MPI_IN_PLACE. */
    if (len > 0 && send == (const char *)recv + (size_t)b->rank * len)
        sbuf = MPI_IN_PLACE;
    b->seq++;
    rc = PMPI_Iallgather(sbuf, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, b->comm, &req);
    if (rc != MPI_SUCCESS)
        return rdlm_mpi_boot_error(b, rc, "PMPI_Iallgather");
    return rdlm_mpi_boot_wait(b, &req, "allgather", idle);
}

static rdlm_status_t rdlm_mpi_boot_barrier(void *arg, const rdlm_tl_idle_t *idle)
{
    rdlm_mpi_boot_t *b = arg;
    MPI_Request req = MPI_REQUEST_NULL;
    rdlm_status_t st;
    int rc;

    st = rdlm_mpi_boot_check(b, "barrier");
    if (st != RDLM_OK)
        return st;
    b->seq++;
    rc = PMPI_Ibarrier(b->comm, &req);
    if (rc != MPI_SUCCESS)
        return rdlm_mpi_boot_error(b, rc, "PMPI_Ibarrier");
    return rdlm_mpi_boot_wait(b, &req, "barrier", idle);
}

rdlm_status_t rdlm_mpi_bootstrap_init(MPI_Comm comm, rdlm_tl_bootstrap_t *bs_p)
{
    int initialized = 0, finalized = 0, rank = 0, size = 0, rc;
    rdlm_mpi_boot_t *b;
    rdlm_status_t st;
    const char *what;

    if (bs_p == NULL || comm == MPI_COMM_NULL) {
        rdlm_error("mpi bootstrap: init: NULL bootstrap or MPI_COMM_NULL");
        return RDLM_ERR_INVALID_ARG;
    }
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized ||
        PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
        rdlm_error("mpi bootstrap: init: MPI is %s",
                   initialized ? "finalized" : "not initialized");
        return RDLM_ERR_INVALID_ARG;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        rdlm_error("mpi bootstrap: init: out of memory");
        return RDLM_ERR_NO_MEMORY;
    }
    b->comm = MPI_COMM_NULL;
    b->pending = MPI_REQUEST_NULL;
    b->timeout_ns = (uint64_t)RDLM_MPI_BOOT_DEFAULT_TIMEOUT_MS * 1000000u;

    what = "PMPI_Comm_dup";
    rc = PMPI_Comm_dup(comm, &b->comm);
    if (rc != MPI_SUCCESS)
        goto err_free;
    what = "PMPI_Comm_set_errhandler";
    rc = PMPI_Comm_set_errhandler(b->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) {
        what = "PMPI_Comm_rank";
        rc = PMPI_Comm_rank(b->comm, &rank);
    }
    if (rc == MPI_SUCCESS) {
        what = "PMPI_Comm_size";
        rc = PMPI_Comm_size(b->comm, &size);
    }
    if (rc != MPI_SUCCESS)
        goto err_comm_free;
    b->rank = (uint32_t)rank;
    b->size = (uint32_t)size;
    *bs_p = (rdlm_tl_bootstrap_t){.rank = b->rank,
                                  .size = b->size,
                                  .arg = b,
                                  .allgather = rdlm_mpi_boot_allgather,
                                  .barrier = rdlm_mpi_boot_barrier};
    return RDLM_OK;

err_comm_free:
    st = rdlm_mpi_boot_error(b, rc, what);
    (void)PMPI_Comm_free(&b->comm);
    free(b);
    return st;
err_free:
    st = rdlm_mpi_boot_error(NULL, rc, what);
    free(b);
    return st;
}

static int rdlm_mpi_boot_is_ours(const rdlm_tl_bootstrap_t *bs)
{
    return bs != NULL && bs->arg != NULL && bs->allgather == rdlm_mpi_boot_allgather &&
           bs->barrier == rdlm_mpi_boot_barrier;
}

rdlm_status_t rdlm_mpi_bootstrap_set_timeout(rdlm_tl_bootstrap_t *bs, uint32_t timeout_ms)
{
    rdlm_mpi_boot_t *b;

    if (!rdlm_mpi_boot_is_ours(bs)) {
        rdlm_error("mpi bootstrap: set_timeout: not an MPI bootstrap");
        return RDLM_ERR_INVALID_ARG;
    }
    b = bs->arg;
    b->timeout_ns =
        (uint64_t)(timeout_ms ? timeout_ms : RDLM_MPI_BOOT_DEFAULT_TIMEOUT_MS) * 1000000u;
    return RDLM_OK;
}

void rdlm_mpi_bootstrap_fini(rdlm_tl_bootstrap_t *bs)
{
    rdlm_mpi_boot_t *b;
    uint64_t deadline;
    int done = 0, rc;

    if (!rdlm_mpi_boot_is_ours(bs))
        return;
    b = bs->arg;
    *bs = (rdlm_tl_bootstrap_t){0};
    if (b->pending != MPI_REQUEST_NULL) {
        /* A collective timed out earlier: complete it if the peers joined late (one
         * given up for a dead process never completes: no wait). */
        deadline = b->pending_why == RDLM_ERR_PEER_DEAD
                       ? rdlm_clock_now_ns()
                       : rdlm_clock_deadline(b->timeout_ns < RDLM_MPI_BOOT_FINI_WAIT_NS
                                                 ? b->timeout_ns
                                                 : RDLM_MPI_BOOT_FINI_WAIT_NS);
        for (;;) {
            rc = rdlm_mpi_boot_test(&b->pending, &done);
            if (rc != MPI_SUCCESS || done || rdlm_clock_now_ns() >= deadline)
                break;
            rdlm_mpi_boot_nap();
        }
        if (rc != MPI_SUCCESS || !done) {
            rdlm_info("mpi bootstrap: rank %u: fini: the %s given up (%s) never "
                      "completed; leaking its communicator and request",
                      b->rank, b->pending_what, rdlm_status_name(b->pending_why));
            return; /* b is leaked with the communicator on purpose */
        }
    }
    rc = PMPI_Comm_free(&b->comm);
    if (rc != MPI_SUCCESS)
        (void)rdlm_mpi_boot_error(b, rc, "PMPI_Comm_free");
    free(b);
}
