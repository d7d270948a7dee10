/*
 * The destroy of a context with RDLM_AUTHORITY ends its threads' waits on service-wide
 * locks (rdlm.h, rdlm_ctx_destroy), against three real rdlmd replicas on 127.0.0.1
 * (rdlmd_cluster.h):
 *
 *   - a thread waits on a lock that another context (another job) holds, polling the
 *     word at the lock's home, with RDLM_TIMEOUT_INFINITE or a timeout of
 *     TIMED_WAIT_MS; 300 ms later another thread destroys the waiter's context: the
 *     wait returns RDLM_ERR_CLOSED within WAIT_END_MAX_MS of the destroy's start, and
 *     the destroy returns within DESTROY_MAX_MS. Before, the service wait was not
 *     counted by the destroy and did not look at its closing flag: the destroy freed
 *     the homes' links and the service's state under it (the child crashed with
 *     SIGSEGV in each case, in 6 of 6 runs);
 *   - RACE_ROUNDS rounds of the infinite wait where the holder releases the lock from
 *     250 us before to 50 us after the destroy begins: the wait returns
 *     RDLM_ERR_CLOSED, or RDLM_OK only if it returned before the destroy began (up to
 *     START_SLACK_US after: the destroy's first steps precede its closing flag), so a
 *     word taken while the context closes is given back; and the lock is free after
 *     the destroy: the holder takes it again with RDLM_OK and the next token but one
 *     at most (no take-over of a word left held). A release up to ~250 us before
 *     the destroy lets a poll that passed the flag before it was set take the word
 *     after: 3 to 18 of 48 rounds did in 10 runs here (18 to 25 with two runs at
 *     once); without the give-back, a wait returned RDLM_OK 0.06-2.2 ms into the
 *     destroy in each of 10 runs.
 *
 * Every case runs in a child (this program run again: a fork of a process that used
 * UCX inherits its state without its threads), bounded by alarm(), so a crash or a
 * hang is a failed exit. Skipped without rdlmd, and when this librdlm has no lock homes
 * (built without UCX).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdlm.h>

#include "rdlmd_cluster.h"
#include "svc_ctx.h"

#define TTL_MS 1000u
#define CHILD_LIMIT_S 15
#define TIMED_WAIT_MS 10000u /* less than CHILD_LIMIT_S: a wait the destroy missed ends */
#define WAIT_END_MAX_MS 1000u
#define DESTROY_MAX_MS 5000u
#define RACE_ROUNDS 48
#define START_SLACK_US 50

/* The lock of the child's case (each its own: a crash of one leaves it held). */
static char lock_name[64];

/* ---- the child processes ---------------------------------------------------------- */

/* A thread waiting on lock: its status, and when it returned (0 while it waits). */
typedef struct waiter {
    rdlm_lock_h lock;
    uint64_t timeout_ns;
    rdlm_status_t status;
    atomic_ullong returned_ns;
} waiter_t;

static void *waiter_run(void *arg)
{
    waiter_t *w = arg;
    uint64_t token;

    w->status = rdlm_lock_acquire(w->lock, w->timeout_ns, &token);
    atomic_store(&w->returned_ns, now_ns());
    return NULL;
}

/* Whether w (a thread of ctx) polls the home's word: it has not returned, and ctx's
 * remote operations on homes grew by 5 (a poll reads the word every 1 ms at most).
 * Waits up to 10 s for it. */
static int polling(rdlm_ctx_h ctx, const waiter_t *w)
{
    rdlm_stats_t st;
    uint64_t first = UINT64_MAX;

    for (int i = 0; i < 10000 && atomic_load(&w->returned_ns) == 0; i++) {
        if (rdlm_ctx_stats(ctx, &st) != RDLM_OK)
            return 0;
        if (first == UINT64_MAX)
            first = st.home_ops;
        else if (st.home_ops >= first + 5)
            return 1;
        sleep_ms(1);
    }
    return 0;
}

/* The destroy of ctx, from a thread: start_ns is stamped just before it begins. */
typedef struct destroyer {
    rdlm_ctx_h ctx;
    atomic_ullong start_ns, end_ns;
} destroyer_t;

static void *destroyer_run(void *arg)
{
    destroyer_t *d = arg;

    atomic_store(&d->start_ns, now_ns());
    rdlm_ctx_destroy(d->ctx);
    atomic_store(&d->end_ns, now_ns());
    return NULL;
}

/* A thread of a context of its own waits on the lock the holder holds; 300 ms later,
 * the context is destroyed. 0 if the wait returned RDLM_ERR_CLOSED within
 * WAIT_END_MAX_MS and the destroy within DESTROY_MAX_MS. */
static int child_wait(uint64_t timeout_ns)
{
    waiter_t w = {.timeout_ns = timeout_ns, .status = 1};
    destroyer_t d = {.ctx = svc_ctx_with_lock("t-destroy-waiter", lock_name, &w.lock)};
    double ended_ms, destroy_ms;
    pthread_t t;

    if (d.ctx == NULL || pthread_create(&t, NULL, waiter_run, &w) != 0)
        return 100;
    sleep_ms(300);
    if (!polling(d.ctx, &w)) {
        fprintf(stderr, "child: the waiter does not poll the home (it returned %s)\n",
                rdlm_status_name(w.status));
        return 101;
    }
    destroyer_run(&d);
    pthread_join(t, NULL);
    ended_ms = (double)(atomic_load(&w.returned_ns) - d.start_ns) / 1e6;
    destroy_ms = (double)(d.end_ns - d.start_ns) / 1e6;
    fprintf(stderr,
            "child: the wait returned %s %.1f ms after the destroy began, which "
            "took %.1f ms\n",
            rdlm_status_name(w.status), ended_ms, destroy_ms);
    return w.status != RDLM_ERR_CLOSED || ended_ms > WAIT_END_MAX_MS ||
           destroy_ms > DESTROY_MAX_MS;
}

/* One round of the race: an infinite wait as in child_wait, and the holder's lock (held,
 * taken already) is released offset_us after the destroy began (before it, if
 * negative). Then the holder takes it again: *token_p is its token before, and after.
 * 0 if the wait returned RDLM_ERR_CLOSED, or RDLM_OK before the destroy began, and
 * the holder's acquire returned RDLM_OK with the next token or the one after;
 * *given_back_p is set if the wait had taken the word while its context closed
 * (CLOSED, and a token skipped). */
static int race_round(rdlm_lock_h held, int offset_us, uint64_t *token_p, int *given_back_p)
{
    waiter_t w = {.timeout_ns = RDLM_TIMEOUT_INFINITE, .status = 1};
    destroyer_t d = {.ctx = svc_ctx_with_lock("t-destroy-racer", lock_name, &w.lock)};
    uint64_t before = *token_p;
    pthread_t t, dt;
    rdlm_status_t again;

    if (d.ctx == NULL || pthread_create(&t, NULL, waiter_run, &w) != 0 ||
        !polling(d.ctx, &w))
        return 100;
    if (offset_us < 0) {
        rdlm_lock_release(held);
        usleep((useconds_t)-offset_us);
    }
    if (pthread_create(&dt, NULL, destroyer_run, &d) != 0)
        return 100;
    if (offset_us >= 0) {
        while (atomic_load(&d.start_ns) == 0)
            ;
        usleep((useconds_t)offset_us);
        rdlm_lock_release(held);
    }
    pthread_join(dt, NULL);
    pthread_join(t, NULL);
    again = rdlm_lock_acquire(held, 5000 * MS, token_p);
    *given_back_p = w.status == RDLM_ERR_CLOSED && *token_p == before + 2;
    if ((w.status == RDLM_ERR_CLOSED ||
         (w.status == RDLM_OK &&
          atomic_load(&w.returned_ns) < d.start_ns + START_SLACK_US * 1000)) &&
        again == RDLM_OK && *token_p > before && *token_p <= before + 2)
        return 0;
    fprintf(stderr,
            "child: release %+d us from the destroy: the wait returned %s %+.3f ms from "
            "it; the holder's next acquire %s, token %#llx after %#llx\n",
            offset_us, rdlm_status_name(w.status),
            ((double)atomic_load(&w.returned_ns) - (double)d.start_ns) / 1e6,
            rdlm_status_name(again), (unsigned long long)*token_p,
            (unsigned long long)before);
    return 1;
}

/* RACE_ROUNDS rounds, the release from 250 us before the destroy to 50 us after; token:
 * the holder's. */
static int child_race(rdlm_lock_h held, uint64_t token)
{
    int given_back = 0;

    for (int r = 0; r < RACE_ROUNDS; r++) {
        int back = 0, offset_us = -250 + r * 300 / (RACE_ROUNDS - 1);

        if (race_round(held, offset_us, &token, &back) != 0)
            return 1;
        given_back += back;
    }
    fprintf(stderr, "child: %d of %d waits took the word while their context closed\n",
            given_back, RACE_ROUNDS);
    return 0;
}

/* --child MODE: a holder's context takes the lock of MODE, then the case of MODE. */
static int child_main(const char *mode)
{
    uint64_t token;
    rdlm_lock_h held;
    rdlm_ctx_h holder;
    int rc;

    alarm(CHILD_LIMIT_S);
    snprintf(lock_name, sizeof(lock_name), "svc-destroy-%s", mode);
    holder = svc_ctx_with_lock("t-destroy-holder", lock_name, &held);
    /* (RDLM_OWNER_DEAD: a child of an earlier run crashed holding it) */
    if (holder == NULL || rdlm_lock_acquire(held, 20000 * MS, &token) < 0) {
        fprintf(stderr, "child %s: set-up failed\n", mode);
        return 100;
    }
    if (strcmp(mode, "race") == 0)
        rc = child_race(held, token);
    else
        rc = child_wait(strcmp(mode, "infinite") == 0 ? RDLM_TIMEOUT_INFINITE
                                                      : TIMED_WAIT_MS * MS);
    rdlm_lock_release(held);
    rdlm_ctx_destroy(holder);
    return rc;
}

/* ---- the tests --------------------------------------------------------------------- */

/* The environment of the children; their node segments in the cluster's directory, so
 * that a crashed child leaves none behind. */
static void svc_need_homes(void)
{
    char ttl[16], shm[sizeof(C.dir) + 8];

    snprintf(ttl, sizeof(ttl), "%u", TTL_MS);
    snprintf(shm, sizeof(shm), "%s/shm", C.dir);
    mkdir(shm, 0700);
    setenv("RDLM_SHM_DIR", shm, 1);
    setenv("RDLM_AUTHORITY", C.authority, 1);
    setenv("RDLM_LEASE_TTL_MS", ttl, 1);
    setenv("RDLM_JOB", "t-destroy-probe", 1);
    need_homes();
}

/* Run the child of mode; it must exit 0. */
static void run_child(const char *mode)
{
    char *argv[] = {"/proc/self/exe", "--child", (char *)mode, NULL};
    uint64_t t0 = now_ns();
    int rc;

    svc_need_homes();
    rc = child_reap(spawn_tied(argv, NULL), CHILD_LIMIT_S + 5);
    print_message("%s: child exit %d after %.0f ms\n", mode, rc,
                  (double)(now_ns() - t0) / 1e6);
    if (rc > 128)
        fail_msg("%s: the child was killed by signal %d (%s)", mode, rc - 128,
                 rc - 128 == SIGALRM ? "it hung" : strsignal(rc - 128));
    if (rc != 0)
        fail_msg("%s: the child failed (exit %d)", mode, rc);
}

static void a_destroy_ends_an_infinite_wait(void **state)
{
    (void)state;
    run_child("infinite");
}

static void a_destroy_ends_a_timed_wait(void **state)
{
    (void)state;
    run_child("timed");
}

static void a_word_taken_while_the_context_closes_is_given_back(void **state)
{
    (void)state;
    run_child("race");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_destroy_ends_an_infinite_wait),
        cmocka_unit_test(a_destroy_ends_a_timed_wait),
        cmocka_unit_test(a_word_taken_while_the_context_closes_is_given_back),
    };

    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2]);
    return cmocka_run_group_tests(tests, cluster_up, cluster_down);
}
