/*
 * Lock-home slots are reused (core/svc/slot.c): three real rdlmd replicas on
 * 127.0.0.1 (rdlmd_cluster.h) run with --home-slots 64, so 192 slots serve every name.
 *
 *   - one process locks NAMES distinct names one after the other (26 names per slot,
 *     more than 100,000 names on 3 homes of 4,096), while it holds HELD others the
 *     whole time: every acquire and release succeeds, the held locks keep their
 *     slots, and one name taken again every 100 names (so it moves between slots)
 *     gets ever larger tokens. Before slots were reused, name 193 or so failed with
 *     RDLM_ERR_NO_RESOURCE;
 *   - PROCS processes (each in a job of its own) lock random names of SNAMES, more
 *     than the slots, half of the rounds on HOT of them: so slots move between names
 *     all the time under waiters, pollers and clients that resolved a slot before it
 *     moved. Per name, no two holders at once and tokens only grow (checked in a
 *     shared file, inside the critical section);
 *   - the same with each planted bug: RDLMTEST_SVC_RECLAIM_RESET (a reused slot starts
 *     at word 0, as without generations) and RDLMTEST_SVC_RECLAIM_NO_CHECK (a client
 *     acts on a word it read without checking the slot's key): the checks catch both
 *     (or a process fails: a lock left held under a word that moved times out, after
 *     2 s in these runs).
 *
 * Tunables (environment): RDLMTEST_RECLAIM_NAMES (NAMES), RDLMTEST_RECLAIM_SLOTS
 * (--home-slots; 4096 with 100000 names is the loop), RDLMTEST_RECLAIM_ROUNDS.
 *
 *   - a client stopped half-way through claiming a slot (test hook
 *     RDLMTEST_SVC_CLAIM_STOP: after its MARK and new key) leaves the name pending:
 *     another job's acquire of the name succeeds once the stopped client's session
 *     ended (the MARK is given back), and the stopped client, resumed, is told
 *     RDLM_ERR_LEASE_EXPIRED while the new holder keeps its lock (its release works;
 *     the next token is larger).
 *
 * The processes are this program run again (--child ...). Skipped without rdlmd, and
 * when this librdlm has no lock homes (built without UCX).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdlm.h>

#include "rdlmd_cluster.h"

#define HOME_SLOTS "64"
#define NAMES 5000 /* 26 names per slot; 100,000 names on 3 x 4,096 slots is 8.1 */
#define HELD 8
#define PROCS 4
#define SNAMES 400
#define HOT 8
#define ROUNDS 1000
#define CHILD_LIMIT_S 60

/* What the stress processes share (a file in the cluster's directory). */
typedef struct shared {
    atomic_int overlaps, regressions, rounds;
    struct {
        atomic_int inside;
        atomic_ullong last; /* the largest token granted, written by its holder */
    } name[SNAMES];
} shared_t;

static char shared_path[256];

/* A tunable: the environment's value of var, else def. */
static int tunable(const char *var, int def)
{
    const char *v = getenv(var);

    return v != NULL && atoi(v) > 0 ? atoi(v) : def;
}

static void svc_env(const char *job)
{
    setenv("RDLM_AUTHORITY", C.authority, 1);
    setenv("RDLM_LEASE_TTL_MS", "3000", 1);
    setenv("RDLM_JOB", job, 1);
}

/* ---- the stress processes ---------------------------------------------------------- */

/* One round on name n: acquire, check and record inside, release. 0 or 1. */
static int child_round(shared_t *sh, rdlm_lock_h lock, int n)
{
    uint64_t token = 0;
    uint64_t timeout = (uint64_t)tunable("RDLMTEST_RECLAIM_ACQUIRE_MS", 20000) * MS;
    rdlm_status_t s = rdlm_lock_acquire(lock, timeout, &token);

    if (s != RDLM_OK) {
        fprintf(stderr, "child: acquire of s%d: %s\n", n, rdlm_status_name(s));
        return 1;
    }
    if (atomic_exchange(&sh->name[n].inside, 1) != 0)
        atomic_fetch_add(&sh->overlaps, 1);
    if (token <= atomic_load(&sh->name[n].last))
        atomic_fetch_add(&sh->regressions, 1);
    atomic_store(&sh->name[n].last, token);
    for (int k = 0; k < 3; k++)
        sched_yield(); /* the others run into the held lock now and then */
    atomic_store(&sh->name[n].inside, 0);
    atomic_fetch_add(&sh->rounds, 1);
    if ((s = rdlm_lock_release(lock)) != RDLM_OK) {
        fprintf(stderr, "child: release of s%d: %s\n", n, rdlm_status_name(s));
        return 1;
    }
    return 0;
}

/* --child stop ...: take "orphan", stopping half-way through the claim (the test
 * hook); resumed after its session ended, the acquire must fail with
 * RDLM_ERR_LEASE_EXPIRED. Exit 0 then, else 1. */
static int child_stop(void)
{
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    uint64_t token;
    rdlm_status_t s;

    if (rdlm_ctx_create(NULL, &ctx) != RDLM_OK ||
        rdlm_lock_open(ctx, "orphan", &lock) != RDLM_OK)
        return 1;
    s = rdlm_lock_acquire(lock, 10000 * MS, &token);
    if (s != RDLM_ERR_LEASE_EXPIRED)
        fprintf(stderr, "child stop: acquire: %s\n", rdlm_status_name(s));
    rdlm_ctx_destroy(ctx);
    return s == RDLM_ERR_LEASE_EXPIRED ? 0 : 1;
}

/* --child INDEX|stop JOB SHARED-FILE */
static int child_main(char **argv)
{
    shared_t *sh;
    static rdlm_lock_h locks[SNAMES];
    unsigned seed = (unsigned)atoi(argv[2]) * 7919u + 1;
    rdlm_ctx_h ctx;
    char name[32];
    int rc = 0;

    alarm(CHILD_LIMIT_S);
    setenv("RDLM_JOB", argv[3], 1);
    if (strcmp(argv[2], "stop") == 0)
        return child_stop();
    snprintf(shared_path, sizeof(shared_path), "%s", argv[4]);
    sh = shared_file_map(shared_path, sizeof(shared_t), 0);
    if (sh == NULL || rdlm_ctx_create(NULL, &ctx) != RDLM_OK) {
        fprintf(stderr, "child: set-up failed\n");
        return 1;
    }
    for (int n = 0; n < SNAMES; n++) {
        snprintf(name, sizeof(name), "s%d", n);
        if (rdlm_lock_open(ctx, name, &locks[n]) != RDLM_OK)
            return 1;
    }
    for (int i = 0; i < tunable("RDLMTEST_RECLAIM_ROUNDS", ROUNDS) && rc == 0; i++) {
        int n = rand_r(&seed) % (i % 2 ? SNAMES : HOT);

        rc = child_round(sh, locks[n], n);
    }
    rdlm_ctx_destroy(ctx);
    return rc;
}

/* ---- the tests --------------------------------------------------------------------- */

/* Child k (-1: the stop mode). */
static pid_t child_spawn(int k)
{
    char ix[16], job[64];
    char *argv[] = {"/proc/self/exe", "--child", ix, job, shared_path, NULL};

    snprintf(ix, sizeof(ix), k < 0 ? "stop" : "%d", k);
    snprintf(job, sizeof(job), "t-reclaim-%d-%d", k, (int)getpid());
    return spawn_tied(argv, NULL);
}

/* need_homes, in the environment of the children. */
static void reclaim_need_homes(void)
{
    svc_env("t-reclaim-probe");
    need_homes();
}

/* Acquire and release a fresh handle of name in ctx; the token. */
static uint64_t lock_once(rdlm_ctx_h ctx, const char *name)
{
    rdlm_lock_h lock;
    uint64_t token = 0;

    assert_int_equal(rdlm_lock_open(ctx, name, &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, 20000 * MS, &token), RDLM_OK);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(rdlm_lock_close(lock), RDLM_OK);
    return token;
}

static void many_more_names_than_slots_never_run_out(void **state)
{
    rdlm_lock_h held[HELD];
    rdlm_stats_t before, after;
    rdlm_ctx_h ctx;
    char name[32];
    uint64_t token, again = 0, t0;
    int names = tunable("RDLMTEST_RECLAIM_NAMES", NAMES);

    (void)state;
    reclaim_need_homes();
    svc_env("t-reclaim-names");
    assert_int_equal(rdlm_ctx_create(NULL, &ctx), RDLM_OK);
    for (int i = 0; i < HELD; i++) {
        snprintf(name, sizeof(name), "held-%d", i);
        assert_int_equal(rdlm_lock_open(ctx, name, &held[i]), RDLM_OK);
        assert_int_equal(rdlm_lock_acquire(held[i], 20000 * MS, &token), RDLM_OK);
    }
    assert_int_equal(rdlm_ctx_stats(ctx, &before), RDLM_OK);
    t0 = now_ns();
    for (int i = 0; i < names; i++) {
        snprintf(name, sizeof(name), "name-%d", i);
        assert_true(lock_once(ctx, name) != 0);
        if (i % 100 == 0) {
            token = lock_once(ctx, "again");
            assert_true(token > again);
            again = token;
        }
    }
    assert_int_equal(rdlm_ctx_stats(ctx, &after), RDLM_OK);
    print_message("%d names on 3 x %s slots in %.2f s, %.1f home operations per name\n",
                  names, C.home_slots, (double)(now_ns() - t0) / 1e9,
                  (double)(after.home_ops - before.home_ops) / (names + names / 100));
    for (int i = 0; i < HELD; i++)
        assert_int_equal(rdlm_lock_release(held[i]), RDLM_OK);
    rdlm_ctx_destroy(ctx);
}

/* PROCS stress processes (with the planted bug of variable planted, if not NULL); the
 * shared counters and the processes that failed. */
static void run_stress(const char *planted, int *overlaps_p, int *regressions_p,
                       int *failed_p)
{
    shared_t *sh;
    pid_t pids[PROCS];
    uint64_t t0 = now_ns();

    reclaim_need_homes();
    snprintf(shared_path, sizeof(shared_path), "%s/reclaim-shared", C.dir);
    sh = shared_file_map(shared_path, sizeof(shared_t), 1);
    assert_non_null(sh);
    if (planted != NULL) {
        setenv(planted, "1", 1);
        setenv("RDLMTEST_RECLAIM_ACQUIRE_MS", "2000", 1);
    }
    for (int k = 0; k < PROCS; k++)
        pids[k] = child_spawn(k);
    if (planted != NULL) {
        unsetenv(planted);
        unsetenv("RDLMTEST_RECLAIM_ACQUIRE_MS");
    }
    *failed_p = 0;
    for (int k = 0; k < PROCS; k++)
        *failed_p += child_reap(pids[k], CHILD_LIMIT_S) != 0;
    *overlaps_p = atomic_load(&sh->overlaps);
    *regressions_p = atomic_load(&sh->regressions);
    print_message("%d rounds on %d names, 3 x %s slots%s%s: %d overlaps, %d tokens not "
                  "above the name's last, %d processes failed, %.2f s\n",
                  atomic_load(&sh->rounds), SNAMES, C.home_slots, planted ? ", " : "",
                  planted ? planted : "", *overlaps_p, *regressions_p, *failed_p,
                  (double)(now_ns() - t0) / 1e9);
    munmap(sh, sizeof(*sh));
}

static void names_moving_between_slots_stay_exclusive_and_fenced(void **state)
{
    int overlaps, regressions, failed;
    shared_t *sh;

    (void)state;
    run_stress(NULL, &overlaps, &regressions, &failed);
    assert_int_equal(failed, 0);
    assert_int_equal(overlaps, 0);
    assert_int_equal(regressions, 0);
    sh = shared_file_map(shared_path, sizeof(shared_t), 0);
    assert_non_null(sh);
    assert_int_equal(atomic_load(&sh->rounds),
                     PROCS * tunable("RDLMTEST_RECLAIM_ROUNDS", ROUNDS));
    munmap(sh, sizeof(*sh));
}

static void a_reuse_without_generations_is_caught(void **state)
{
    int overlaps, regressions, failed;

    (void)state;
    run_stress("RDLMTEST_SVC_RECLAIM_RESET", &overlaps, &regressions, &failed);
    assert_true(overlaps + regressions + failed > 0);
}

static void acting_on_a_word_without_its_key_is_caught(void **state)
{
    int overlaps, regressions, failed;

    (void)state;
    run_stress("RDLMTEST_SVC_RECLAIM_NO_CHECK", &overlaps, &regressions, &failed);
    assert_true(overlaps + regressions + failed > 0);
}

static void a_claimer_stopped_half_way_is_settled_and_fenced(void **state)
{
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;
    uint64_t token, again, t0;
    pid_t pid;
    int st = 0, stopped = 0;

    (void)state;
    reclaim_need_homes();
    setenv("RDLM_LEASE_TTL_MS", "1000", 1);
    setenv("RDLMTEST_SVC_CLAIM_STOP", "1", 1);
    pid = child_spawn(-1);
    unsetenv("RDLMTEST_SVC_CLAIM_STOP");
    for (int i = 0; i < 1000 && !stopped; i++) {
        stopped = waitpid(pid, &st, WNOHANG | WUNTRACED) == pid && WIFSTOPPED(st);
        if (!stopped)
            sleep_ms(10);
    }
    assert_true(stopped);
    t0 = now_ns();
    svc_env("t-reclaim-settle");
    assert_int_equal(rdlm_ctx_create(NULL, &ctx), RDLM_OK);
    assert_int_equal(rdlm_lock_open(ctx, "orphan", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, 10000 * MS, &token), RDLM_OK);
    print_message("acquired behind a claimer stopped half-way after %.0f ms (its TTL: "
                  "1000 ms)\n",
                  (double)(now_ns() - t0) / 1e6);
    kill(pid, SIGCONT);
    assert_int_equal(child_reap(pid, CHILD_LIMIT_S), 0);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, 10000 * MS, &again), RDLM_OK);
    assert_true(again > token);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    rdlm_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_more_names_than_slots_never_run_out),
        cmocka_unit_test(names_moving_between_slots_stay_exclusive_and_fenced),
        cmocka_unit_test(a_reuse_without_generations_is_caught),
        cmocka_unit_test(acting_on_a_word_without_its_key_is_caught),
        cmocka_unit_test(a_claimer_stopped_half_way_is_settled_and_fenced),
    };

    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return child_main(argv);
    C.home_slots =
        getenv("RDLMTEST_RECLAIM_SLOTS") ? getenv("RDLMTEST_RECLAIM_SLOTS") : HOME_SLOTS;
    return cmocka_run_group_tests(tests, cluster_up, cluster_down);
}
