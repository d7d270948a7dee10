/*
 * A lock home's replica survives the death of a client whose request it could not
 * answer, against three real rdlmd replicas on 127.0.0.1 (rdlmd_cluster.h).
 *
 * ROUNDS rounds: this process takes two locks homed at one replica; a waiter (a child
 * with a context of its own) waits on one of them, or on both from two threads, polling
 * the words at the home; the home's replica is stopped (SIGSTOP) with the waiter's
 * reads unanswered; the waiter dies: killed (kill -9, odd rounds) or giving up (its
 * reads time out after RDLM_PEER_TIMEOUT_MS, it destroys its context and exits: even
 * rounds); STOP_MS after the stop the replica resumes (SIGCONT). It must still run,
 * and, the locks released, a new context of another job must take one at that home.
 *
 * Why it died (transport/ucx/ucx.c, rdlm_ucx_answer_only): UCX answers a client's read
 * from inside the home's progress and aborts the process when that answer cannot be
 * sent ("ucp_request.inl:346 Fatal: unexpected error: Endpoint timeout"). The first
 * thing the resumed home sends to the dead waiter draws a reset from the waiter's
 * kernel, and a second send fails: the answer to the second thread's read, or, after
 * the home's UCX keepalive probe (overdue after the stop) went first, the answer to
 * the one read. The replicas run with RDLM_UCX_KEEPALIVE_INTERVAL=1s so that a stop
 * of STOP_MS spans a keepalive round as a stop of 20 s spans UCX's default one. Before
 * the fix the replica died in 9 of 16 rounds of two runs: all 8 with two waiting
 * threads, 1 of 8 with one (the probe's race with the answer is lost only at times).
 * The fix turns the keepalive off on the home (so the variable is overridden there)
 * and keeps one request at a time per home in a client (svc_internal.h).
 *
 * Every child is this program run again (--waiter ...), bounded by alarm(). Skipped
 * without rdlmd, and when this librdlm has no lock homes (built without UCX).
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdlm.h>

#include "rdlmd_cluster.h"
#include "svc_ctx.h"

#define ROUNDS 4 /* two with one waiting thread, two with two (CI time) */
#define STOP_MS 1500u    /* longer than the replicas' keepalive interval */
#define KEEPALIVE "1s"   /* RDLM_UCX_KEEPALIVE_INTERVAL of the replicas */
#define GIVE_UP_MS "300" /* RDLM_PEER_TIMEOUT_MS of a waiter that gives up */
#define TTL_MS "15000"   /* the holder's lease outlives a failover */
#define WAITER_LIMIT_S 20
#define ACQUIRE_MS 10000ull /* the new context's acquire after the resume */

/* What the parent and a waiter share (a file mapping in the cluster's directory). */
typedef struct shared {
    atomic_int polling; /* the waiter's thread polls the home */
    atomic_int stopped; /* the home is stopped: a waiter that gives up may go on */
} shared_t;

static char shared_path[sizeof(C.dir) + 16];

/* ---- the waiter (a child) --------------------------------------------------------- */

static void *acquire_run(void *arg)
{
    uint64_t token;

    (void)rdlm_lock_acquire(arg, RDLM_TIMEOUT_INFINITE, &token); /* never granted */
    return NULL;
}

/* --waiter kill|give-up NAME [NAME2]: wait on NAME (and NAME2) from a thread each;
 * once they poll the home, say so; then be killed, or (give-up) once the home is
 * stopped, let the reads time out, destroy the context and exit 0. */
static int waiter_main(int argc, char **argv)
{
    int give_up = strcmp(argv[2], "give-up") == 0, n = argc - 3;
    shared_t *sh = shared_file_map(shared_path, sizeof(shared_t), 0);
    rdlm_stats_t st;
    rdlm_lock_h lock[2];
    rdlm_ctx_h ctx;
    uint64_t first = UINT64_MAX;
    pthread_t t[2];

    alarm(WAITER_LIMIT_S);
    if (give_up)
        setenv("RDLM_PEER_TIMEOUT_MS", GIVE_UP_MS, 1);
    ctx = svc_ctx_with_lock("t-hstop-waiter", argv[3], &lock[0]);
    if (sh == NULL || ctx == NULL || (n == 2 && rdlm_lock_open(ctx, argv[4], &lock[1])))
        return 100;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, acquire_run, lock[i]) != 0)
            return 100;
    while (rdlm_ctx_stats(ctx, &st) == RDLM_OK) {
        if (first == UINT64_MAX)
            first = st.home_ops;
        else if (st.home_ops >= first + 5)
            break;
        sleep_ms(1);
    }
    atomic_store(&sh->polling, 1);
    if (!give_up)
        for (;;)
            pause(); /* until kill -9 */
    while (!atomic_load(&sh->stopped))
        sleep_ms(1);
    sleep_ms(2 * (unsigned)atoi(GIVE_UP_MS)); /* the read has timed out */
    rdlm_ctx_destroy(ctx);                    /* ends the waits (RDLM_ERR_CLOSED) */
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}

/* ---- the rounds ------------------------------------------------------------------- */

/* 1 while the replica process of index r runs (it is this process's child). */
static int replica_alive(int r, int *status_p)
{
    return waitpid(C.r[r].pid, status_p, WNOHANG) == 0;
}

/* One round on the lock names (both homed at one replica; the waiter waits on n of
 * them, from a thread each); 1 if the home's replica survived and served, 0 if it
 * died (then restarted, for the next round). */
static int one_round(int round, char names[2][64], int n)
{
    char *argv[] = {
        "/proc/self/exe",         "--waiter", round % 2 ? "kill" : "give-up", names[0],
        n == 2 ? names[1] : NULL, NULL};
    shared_t *sh = shared_file_map(shared_path, sizeof(shared_t), 1);
    rdlm_lock_h held[2], fresh_lock;
    rdlm_ctx_h holder, fresh;
    rdlm_lock_info_t info;
    rdlm_status_t got;
    uint64_t token, t0;
    int r, status = 0, alive, rc;
    pid_t waiter;

    assert_non_null(sh);
    holder = svc_ctx_with_lock("t-hstop-holder", names[0], &held[0]);
    assert_non_null(holder);
    assert_int_equal(rdlm_lock_open(holder, names[1], &held[1]), RDLM_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(rdlm_lock_acquire(held[i], 20000 * MS, &token), RDLM_OK);
    assert_int_equal(rdlm_lock_query(held[0], &info), RDLM_OK);
    r = info.home_node; /* replicas in the order of their ids: index = home */
    assert_true(r >= 0 && r < N_REPLICAS);
    waiter = spawn_tied(argv, NULL);
    for (t0 = now_ns(); !atomic_load(&sh->polling) && now_ns() - t0 < 10000 * MS;)
        sleep_ms(1);
    assert_true(atomic_load(&sh->polling));
    kill(C.r[r].pid, SIGSTOP);
    t0 = now_ns();
    atomic_store(&sh->stopped, 1);
    if (round % 2) {
        sleep_ms(100); /* the waiter's reads are queued at the stopped home */
        kill(waiter, SIGKILL);
    }
    rc = child_reap(waiter, WAITER_LIMIT_S);
    while (now_ns() - t0 < STOP_MS * MS)
        sleep_ms(10);
    kill(C.r[r].pid, SIGCONT);
    sleep_ms(300); /* the home handles what waited for it */
    alive = replica_alive(r, &status);
    for (int i = 0; i < 2; i++)
        (void)rdlm_lock_release(held[i]); /* fails if the home died */
    got = RDLM_ERR_UNAVAILABLE;
    fresh = alive ? svc_ctx_with_lock("t-hstop-fresh", names[0], &fresh_lock) : NULL;
    if (fresh != NULL) {
        got = rdlm_lock_acquire(fresh_lock, ACQUIRE_MS * MS, &token);
        if (got == RDLM_OK)
            rdlm_lock_release(fresh_lock);
        rdlm_ctx_destroy(fresh);
    }
    rdlm_ctx_destroy(holder);
    munmap(sh, sizeof(*sh));
    print_message("round %d (%s, %d waiting thread%s, home replica %d): waiter exit %d; "
                  "replica %s; a new context's acquire: %s\n",
                  round, argv[2], n, n == 2 ? "s" : "", r + 1, rc,
                  alive                 ? "alive"
                  : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                        : "exited",
                  rdlm_status_name(got));
    if (!alive) { /* its log has UCX's fatal line; bring it back for the next round */
        replica_start(&C.r[r], r + 1);
        assert_true(find_leader(20000) >= 0);
        sleep_ms(1000); /* its home takes a new epoch */
    }
    return alive && got == RDLM_OK;
}

/* Two lock names of round homed at one replica that is not the Raft leader (whose
 * stop would add an election to the round), into names. */
static void names_at_follower(int round, char names[2][64])
{
    rdlm_lock_info_t info;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;
    int leader = find_leader(5000), home = -1, found = 0;

    assert_true(leader >= 0);
    ctx = svc_ctx_with_lock("t-hstop-probe", "svc-home-stop-probe", &lock);
    assert_non_null(ctx);
    for (int k = 0; k < 64 && found < 2; k++) {
        snprintf(names[found], 64, "svc-home-stop-%d-%d", round, k);
        assert_int_equal(rdlm_lock_open(ctx, names[found], &lock), RDLM_OK);
        assert_int_equal(rdlm_lock_query(lock, &info), RDLM_OK);
        rdlm_lock_close(lock);
        if (info.home_node != leader && (home < 0 || info.home_node == home)) {
            home = info.home_node;
            found++;
        }
    }
    rdlm_ctx_destroy(ctx);
    if (found < 2)
        fail_msg("fewer than 2 of 64 lock names are homed at one follower");
}

static void a_home_survives_a_client_that_died_while_it_was_stopped(void **state)
{
    char names[2][64];
    int served = 0;

    (void)state;
    snprintf(shared_path, sizeof(shared_path), "%s/shared", C.dir);
    setenv("RDLMTEST_HSTOP_DIR", C.dir, 1);
    setenv("RDLM_AUTHORITY", C.authority, 1);
    setenv("RDLM_LEASE_TTL_MS", TTL_MS, 1);
    setenv("RDLM_JOB", "t-hstop-probe", 1);
    need_homes();
    /* give-up and kill alternate; one waiting thread, then two, in turns of two */
    for (int round = 0; round < ROUNDS; round++) {
        names_at_follower(round, names);
        served += one_round(round, names, 1 + round / 2 % 2);
    }
    print_message("the home survived and served in %d of %d rounds\n", served, ROUNDS);
    assert_int_equal(served, ROUNDS);
}

/* The replicas run with a short UCX keepalive (see the top). */
static int up(void **state)
{
    char shm[sizeof(C.dir) + 8];
    int rc;

    setenv("RDLM_UCX_KEEPALIVE_INTERVAL", KEEPALIVE, 1);
    rc = cluster_up(state);
    unsetenv("RDLM_UCX_KEEPALIVE_INTERVAL");
    snprintf(shm, sizeof(shm), "%s/shm", C.dir);
    mkdir(shm, 0700);
    setenv("RDLM_SHM_DIR", shm, 1);
    return rc;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_home_survives_a_client_that_died_while_it_was_stopped),
    };

    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--waiter") == 0) {
        const char *dir = getenv("RDLMTEST_HSTOP_DIR");

        snprintf(shared_path, sizeof(shared_path), "%s/shared", dir ? dir : ".");
        return waiter_main(argc, argv);
    }
    return cmocka_run_group_tests(tests, up, cluster_down);
}
