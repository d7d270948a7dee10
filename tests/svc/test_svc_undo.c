/*
 * An acquire undone for a lost lease keeps the "previous holder died" report for the
 * next holder. Contexts made with RDLM_AUTHORITY (a lease of TTL 1 s) against three
 * real rdlmd replicas on 127.0.0.1 (rdlmd_cluster.h). A holder is killed (kill -9)
 * while process B waits for the lock; B is granted RDLM_OWNER_DEAD and, with
 * RDLMTEST_LEASE_STOP_IN_DELAY, stops itself (SIGSTOP) as its lock delay
 * (RDLM_LOCK_DELAY_MS) starts; it is kept stopped until its lease surely ended, then
 * resumed. rdlm_lock_keep (core/api/api_lock.c) must undo B's grant, and nobody has
 * repaired what the dead holder left, so:
 *
 *   - B stops at all: it was granted RDLM_OWNER_DEAD (the lock delay is waited out
 *     only then), within TTL * (1 + rho) + 2 s of the kill at a home, 1 s node-local;
 *   - B's acquire returns RDLM_ERR_LEASE_EXPIRED, after its lock delay, and leaves its
 *     token untouched;
 *   - the next holder C gets RDLM_OWNER_DEAD, with a token larger than the dead
 *     holder's, within TTL * (1 + rho) + 1 s + a margin of asking (or of B's return,
 *     when C was already waiting); before, B's undo was a plain release and C got
 *     RDLM_OK;
 *   - one report per death: C's next acquire, after its release, gets RDLM_OK.
 *
 * In two configurations:
 *
 *   - rdlmd with lock homes (its default --home-slots): an exclusive lock, its word at
 *     a home; each process in a job of its own, so only the home's word orders them.
 *     C asks only after B returned (a C waiting while B is stopped may break B's word
 *     once B's session ended, which is another path). Skipped when this librdlm has no
 *     lock homes (built without UCX);
 *   - rdlmd with --home-slots 0: the contexts keep their lease but their locks are
 *     node-local (core/local), all processes in one job (one lock table): the
 *     exclusive lock in the default order (bounded bypass) and in FIFO order, and an
 *     rwlock's write side (its gate is the FIFO lock: a dead writer's take-over
 *     reports RDLM_OWNER_DEAD to the next writer). A killed holder is taken over at
 *     once (its pid is gone); a stopped B is alive, so nobody takes over from it:
 *     each case is run with C asking after B returned, and with C already waiting
 *     while B is stopped.
 *
 * C has the lock open (it is attached to the node's lock table) from while B is
 * stopped: a node's table lives only while a process is attached to it, so a C that
 * came after B's exit would find a new table, and no report, whatever B's undo did.
 *
 * The processes are this program run again (--child ROLE ...), not forks: a fork of a
 * process that used UCX inherits its state without its threads. Every wait is bounded,
 * every child by alarm(). Skipped without rdlmd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

#define TTL_MS 1000u
#define DELAY_MS 500u /* B's RDLM_LOCK_DELAY_MS */
#define CHILD_LIMIT_S 60
#define WAIT_MS 30000u /* the children's acquires */
/* B is kept stopped this long: its lease (valid at most TTL after its last renewal,
 * which came before the stop) surely ended, at the authority too. */
#define STOP_MS (TTL_MS * 11 / 10 + 1000)
/* A take-over at a home: once the dead holder's session ended at the authority and a
 * fate check said so. Also C's bound, with a margin. */
#define HOME_TAKE_OVER_MS (TTL_MS * 11 / 10 + 1000)
#define MARGIN_MS 1000u
/* A node-local take-over from a killed holder (its pid is gone): a waiter's next
 * recovery look, a sleep slice at most. */
#define NODE_TAKE_OVER_MS 1000u
#define UNTOUCHED 0x5eedull /* a failed acquire leaves *token_p (rdlm.h) */

typedef enum undo_kind { KIND_LOCK, KIND_FIFO, KIND_RWLOCK } undo_kind_t;

/* What the processes of one case share (a file in the cluster's directory). */
typedef struct undo {
    int kind;      /* undo_kind_t, set before the children start */
    char name[32]; /* the lock's name, the same */
    atomic_int holding;
    atomic_ullong held_token;
    atomic_int b_waiting, b_done, b_status;
    atomic_ullong b_token, b_t_ns;
    atomic_int c_ready, c_go, c_waiting, c_done, c_status, c_again;
    atomic_ullong c_token, c_again_token, c_t0_ns, c_t_ns;
} undo_t;

/* ---- the child processes ---------------------------------------------------------- */

/* One lock of the case's kind. */
typedef struct obj {
    int kind;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
} obj_t;

static rdlm_status_t obj_open(rdlm_ctx_h ctx, const undo_t *u, obj_t *o)
{
    rdlm_lock_params_t fifo = {.field_mask = RDLM_LOCK_FIELD_ORDER,
                               .order = RDLM_LOCK_ORDER_FIFO};

    o->kind = u->kind;
    if (o->kind == KIND_RWLOCK)
        return rdlm_rwlock_open(ctx, u->name, &o->rw);
    return rdlm_lock_open_params(ctx, u->name, o->kind == KIND_FIFO ? &fifo : NULL,
                                 &o->lock);
}

static rdlm_status_t obj_acquire(obj_t *o, uint64_t *token_p)
{
    if (o->kind == KIND_RWLOCK)
        return rdlm_rwlock_write_acquire(o->rw, WAIT_MS * MS, token_p);
    return rdlm_lock_acquire(o->lock, WAIT_MS * MS, token_p);
}

static rdlm_status_t obj_release(obj_t *o)
{
    return o->kind == KIND_RWLOCK ? rdlm_rwlock_write_release(o->rw)
                                  : rdlm_lock_release(o->lock);
}

/* hold: take the lock, say so, hold it until killed. */
static int child_hold(undo_t *u, obj_t *o)
{
    uint64_t token;

    if (obj_acquire(o, &token) != RDLM_OK)
        return 1;
    atomic_store(&u->held_token, token);
    atomic_store(&u->holding, 1);
    for (int i = 0; i < CHILD_LIMIT_S * 100; i++)
        sleep_ms(10);
    return 2; /* not killed */
}

/* B: wait for the lock (it stops itself in the lock delay); record how it returned. */
static int child_b(undo_t *u, obj_t *o)
{
    uint64_t token = UNTOUCHED;
    rdlm_status_t s;

    atomic_store(&u->b_waiting, 1);
    s = obj_acquire(o, &token);
    atomic_store(&u->b_t_ns, now_ns());
    atomic_store(&u->b_token, token);
    atomic_store(&u->b_status, s);
    atomic_store(&u->b_done, 1);
    if (s >= 0)
        obj_release(o);
    return 0;
}

/* C: with the lock open, wait for c_go; take the lock, release it, take it once
 * more; record both. */
static int child_c(undo_t *u, obj_t *o)
{
    uint64_t token = UNTOUCHED;
    rdlm_status_t s;

    atomic_store(&u->c_ready, 1);
    for (int i = 0; i < CHILD_LIMIT_S * 200 && !atomic_load(&u->c_go); i++)
        sleep_ms(5);
    atomic_store(&u->c_t0_ns, now_ns());
    atomic_store(&u->c_waiting, 1);
    s = obj_acquire(o, &token);
    atomic_store(&u->c_t_ns, now_ns());
    atomic_store(&u->c_token, token);
    atomic_store(&u->c_status, s);
    if (s >= 0 && obj_release(o) == RDLM_OK) {
        token = UNTOUCHED;
        s = obj_acquire(o, &token);
        atomic_store(&u->c_again_token, token);
        atomic_store(&u->c_again, s);
        if (s >= 0)
            obj_release(o);
    }
    atomic_store(&u->c_done, 1);
    return 0;
}

/* --child ROLE SHARED-FILE JOB */
static int child_main(char **argv)
{
    undo_t *u = shared_file_map(argv[3], sizeof(undo_t), 0);
    const char *role = argv[2];
    rdlm_ctx_h ctx;
    obj_t o;
    int rc;

    alarm(CHILD_LIMIT_S);
    setenv("RDLM_JOB", argv[4], 1);
    if (u == NULL || rdlm_ctx_create(NULL, &ctx) != RDLM_OK) {
        fprintf(stderr, "child %s: set-up failed\n", role);
        return 1;
    }
    if (obj_open(ctx, u, &o) != RDLM_OK) {
        fprintf(stderr, "child %s: open \"%s\" failed\n", role, u->name);
        return 1;
    }
    if (strcmp(role, "hold") == 0)
        rc = child_hold(u, &o);
    else if (strcmp(role, "B") == 0)
        rc = child_b(u, &o);
    else
        rc = child_c(u, &o);
    rdlm_ctx_destroy(ctx);
    return rc;
}

/* ---- the tests --------------------------------------------------------------------- */

static char shared_path[256];
static int homes;         /* the group's rdlmd replicas host lock homes */
static pid_t children[3]; /* the case's holder, B, C: killed by the teardown if left */
static undo_t *shared;    /* the case's, unmapped by the teardown */

/* The environment of the children (and of this process's own contexts): the lease,
 * and the node segments in the cluster's directory (removed with it). */
static void undo_env(void)
{
    char ttl[16], shm[sizeof(C.dir) + 8];

    snprintf(ttl, sizeof(ttl), "%u", TTL_MS);
    setenv("RDLM_AUTHORITY", C.authority, 1);
    setenv("RDLM_LEASE_TTL_MS", ttl, 1);
    snprintf(shm, sizeof(shm), "%s/shm", C.dir);
    mkdir(shm, 0700);
    setenv("RDLM_SHM_DIR", shm, 1);
}

/* The children's job: with homes each gets its own (only the home's word orders
 * them); without, all share the case's (one node lock table). */
static pid_t child_spawn(const char *role, const char *name)
{
    char job[64];
    char *argv[] = {"/proc/self/exe", "--child", (char *)role, shared_path, job, NULL};

    if (homes)
        snprintf(job, sizeof(job), "t-undo-%s-%s-%d", name, role, (int)getpid());
    else
        snprintf(job, sizeof(job), "t-undo-%s-%d", name, (int)getpid());
    return spawn_tied(argv, NULL);
}

/* Wait until *flag is set, up to limit_ms; 1 if it is. */
static int wait_flag(atomic_int *flag, unsigned limit_ms)
{
    uint64_t end = now_ns() + (uint64_t)limit_ms * MS;

    while (!atomic_load(flag) && now_ns() < end)
        sleep_ms(5);
    return atomic_load(flag);
}

/* Wait until child pid stops, up to limit_ms: 1 if it did, 0 if not, -1 if it ended
 * instead (reaped). */
static int wait_stopped(pid_t pid, unsigned limit_ms)
{
    uint64_t end = now_ns() + (uint64_t)limit_ms * MS;
    int st;

    do {
        pid_t r = waitpid(pid, &st, WNOHANG | WUNTRACED);

        if (r == pid)
            return WIFSTOPPED(st) ? 1 : -1;
        if (r < 0)
            return -1;
        sleep_ms(5);
    } while (now_ns() < end);
    return 0;
}

static double ms_between(uint64_t t0, uint64_t t1)
{
    return t1 >= t0 ? (double)(t1 - t0) / 1e6 : -(double)(t0 - t1) / 1e6;
}

static undo_t *shared_new(undo_kind_t kind, const char *name)
{
    undo_t *u;

    snprintf(shared_path, sizeof(shared_path), "%s/undo-shared", C.dir);
    shared = u = shared_file_map(shared_path, sizeof(undo_t), 1);
    assert_non_null(u);
    u->kind = kind;
    snprintf(u->name, sizeof(u->name), "%s", name);
    atomic_store(&u->b_status, INT32_MIN);
    atomic_store(&u->c_status, INT32_MIN);
    atomic_store(&u->c_again, INT32_MIN);
    return u;
}

static const char *status_name(int s)
{
    return s == INT32_MIN ? "(none)" : rdlm_status_name((rdlm_status_t)s);
}

/*
 * The scenario: a holder of lock name (kind), B queued behind it with the stop hook and
 * a lock delay, the holder killed; B granted RDLM_OWNER_DEAD stops, is kept stopped
 * STOP_MS, resumed, and must return RDLM_ERR_LEASE_EXPIRED; then C (started while B is
 * stopped; asking after B returned, or at once when c_queued) must get RDLM_OWNER_DEAD,
 * and RDLM_OK next.
 */
static void undone_take_over(undo_kind_t kind, const char *name, int c_queued)
{
    undo_t *u = shared_new(kind, name);
    unsigned take_over_ms = homes ? HOME_TAKE_OVER_MS + MARGIN_MS : NODE_TAKE_OVER_MS;
    unsigned c_bound_ms = HOME_TAKE_OVER_MS + MARGIN_MS;
    char delay[16];
    uint64_t t_kill, t_stop, t_cont, c_from;
    pid_t holder, b, c;
    int stopped;

    children[0] = holder = child_spawn("hold", name);
    assert_true(wait_flag(&u->holding, 20000));
    snprintf(delay, sizeof(delay), "%u", DELAY_MS);
    setenv("RDLM_LOCK_DELAY_MS", delay, 1);
    setenv("RDLMTEST_LEASE_STOP_IN_DELAY", "1", 1);
    children[1] = b = child_spawn("B", name);
    unsetenv("RDLMTEST_LEASE_STOP_IN_DELAY");
    unsetenv("RDLM_LOCK_DELAY_MS");
    assert_true(wait_flag(&u->b_waiting, 20000));
    sleep_ms(300);
    assert_false(atomic_load(&u->b_done)); /* queued behind the holder */

    /* 1. kill -9 of the holder */
    t_kill = now_ns();
    kill(holder, SIGKILL);
    assert_int_equal(child_reap(holder, 10), 128 + SIGKILL);
    children[0] = 0;

    /* 2. B takes over and stops in its lock delay; kept stopped past its lease */
    stopped = wait_stopped(b, take_over_ms);
    if (stopped < 0)
        children[1] = 0;
    if (stopped != 1)
        fail_msg("B did not stop within %u ms of the kill (returned: %s)", take_over_ms,
                 status_name(atomic_load(&u->b_status)));
    t_stop = now_ns();
    children[2] = c = child_spawn("C", name);
    assert_true(wait_flag(&u->c_ready, 20000));
    if (c_queued) {
        atomic_store(&u->c_go, 1);
        assert_true(wait_flag(&u->c_waiting, 20000));
        sleep_ms(300);
        assert_false(atomic_load(&u->c_done)); /* waits behind the stopped B */
    }
    if (ms_between(t_stop, now_ns()) < STOP_MS)
        sleep_ms((unsigned)(STOP_MS - ms_between(t_stop, now_ns())));
    t_cont = now_ns();
    kill(b, SIGCONT);
    assert_int_equal(child_reap(b, 20), 0);
    children[1] = 0;
    print_message("%s: B stopped %.0f ms after the kill (bound %u ms), kept stopped %.0f "
                  "ms, returned %s %.0f ms after SIGCONT (lock delay %u ms)\n",
                  name, ms_between(t_kill, t_stop), take_over_ms,
                  ms_between(t_stop, t_cont), status_name(atomic_load(&u->b_status)),
                  ms_between(t_cont, atomic_load(&u->b_t_ns)), DELAY_MS);
    assert_int_equal(atomic_load(&u->b_status), RDLM_ERR_LEASE_EXPIRED);
    assert_int_equal(atomic_load(&u->b_token), UNTOUCHED);
    assert_true(atomic_load(&u->b_t_ns) >= t_cont + DELAY_MS * MS);

    /* 3. the next holder is told of the death, once */
    atomic_store(&u->c_go, 1);
    assert_int_equal(child_reap(c, CHILD_LIMIT_S), 0);
    children[2] = 0;
    c_from = atomic_load(&u->c_t0_ns);
    if (atomic_load(&u->b_t_ns) > c_from)
        c_from = atomic_load(&u->b_t_ns);
    print_message("%s: C (%s) got %s %.0f ms after %s (bound %u ms), token %#llx (dead "
                  "holder's %#llx); then %s\n",
                  name, c_queued ? "waiting while B was stopped" : "asking after B",
                  status_name(atomic_load(&u->c_status)),
                  ms_between(c_from, atomic_load(&u->c_t_ns)),
                  c_queued ? "B's return" : "asking", c_bound_ms,
                  (unsigned long long)atomic_load(&u->c_token),
                  (unsigned long long)atomic_load(&u->held_token),
                  status_name(atomic_load(&u->c_again)));
    assert_int_equal(atomic_load(&u->c_status), RDLM_OWNER_DEAD);
    assert_true(atomic_load(&u->c_token) > atomic_load(&u->held_token));
    /* C's grant may come before B's clock read after its undo: no wait then */
    assert_true(ms_between(c_from, atomic_load(&u->c_t_ns)) <= c_bound_ms);
    assert_int_equal(atomic_load(&u->c_again), RDLM_OK);
    assert_true(atomic_load(&u->c_again_token) > atomic_load(&u->c_token));
}

/* After a case: the children a failure left (B may be stopped), killed and reaped;
 * the shared file unmapped. */
static int case_down(void **state)
{
    (void)state;
    if (shared != NULL)
        munmap(shared, sizeof(*shared));
    shared = NULL;
    for (int i = 0; i < 3; i++) {
        if (children[i] > 0) {
            kill(children[i], SIGKILL);
            waitpid(children[i], NULL, 0);
            children[i] = 0;
        }
    }
    return 0;
}

/* ---- rdlmd with lock homes ---------------------------------------------------------- */

static int homes_up(void **state)
{
    homes = 1;
    C.home_slots = NULL; /* rdlmd's default */
    return cluster_up(state);
}

static void need_lock_homes(void)
{
    need_rdlmd();
    undo_env();
    setenv("RDLM_JOB", "t-undo-probe", 1);
    need_homes();
}

static void an_undone_take_over_at_a_home_leaves_owner_dead_to_the_next(void **state)
{
    (void)state;
    need_lock_homes();
    undone_take_over(KIND_LOCK, "undo-home", 0);
}

/* ---- rdlmd with --home-slots 0: node-local locks under a lease --------------------- */

static int no_homes_up(void **state)
{
    homes = 0;
    C.home_slots = "0";
    return cluster_up(state);
}

static int no_homes_down(void **state)
{
    C.home_slots = NULL;
    return cluster_down(state);
}

/* rdlmd, and a context of this environment whose locks are node-local. */
static void need_node_locks(void)
{
    rdlm_lock_info_t info;
    rdlm_lock_h lock;
    rdlm_ctx_h ctx;

    need_rdlmd();
    undo_env();
    setenv("RDLM_JOB", "t-undo-probe", 1);
    assert_int_equal(rdlm_ctx_create(NULL, &ctx), RDLM_OK);
    assert_int_equal(rdlm_lock_open(ctx, "undo-probe", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_query(lock, &info), RDLM_OK);
    rdlm_ctx_destroy(ctx);
    assert_int_equal(info.home_node, -1);
}

static void an_undone_take_over_of_a_node_lock_leaves_owner_dead_to_the_next(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_LOCK, "undo-lock", 0);
}

static void an_undone_take_over_of_a_node_lock_leaves_owner_dead_to_a_waiter(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_LOCK, "undo-lock-q", 1);
}

static void an_undone_take_over_of_a_fifo_lock_leaves_owner_dead_to_the_next(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_FIFO, "undo-fifo", 0);
}

static void an_undone_take_over_of_a_fifo_lock_leaves_owner_dead_to_a_waiter(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_FIFO, "undo-fifo-q", 1);
}

static void an_undone_take_over_of_a_write_lock_leaves_owner_dead_to_the_next(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_RWLOCK, "undo-rw", 0);
}

static void an_undone_take_over_of_a_write_lock_leaves_owner_dead_to_a_waiter(void **state)
{
    (void)state;
    need_node_locks();
    undone_take_over(KIND_RWLOCK, "undo-rw-q", 1);
}

/* A case, and its teardown. */
#define UNDO_TEST(f) cmocka_unit_test_teardown(f, case_down)

int main(int argc, char **argv)
{
    const struct CMUnitTest home_tests[] = {
        UNDO_TEST(an_undone_take_over_at_a_home_leaves_owner_dead_to_the_next),
    };
    const struct CMUnitTest node_tests[] = {
        UNDO_TEST(an_undone_take_over_of_a_node_lock_leaves_owner_dead_to_the_next),
        UNDO_TEST(an_undone_take_over_of_a_node_lock_leaves_owner_dead_to_a_waiter),
        UNDO_TEST(an_undone_take_over_of_a_fifo_lock_leaves_owner_dead_to_the_next),
        UNDO_TEST(an_undone_take_over_of_a_fifo_lock_leaves_owner_dead_to_a_waiter),
        UNDO_TEST(an_undone_take_over_of_a_write_lock_leaves_owner_dead_to_the_next),
        UNDO_TEST(an_undone_take_over_of_a_write_lock_leaves_owner_dead_to_a_waiter),
    };

    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return child_main(argv);
    return cmocka_run_group_tests_name("home_locks", home_tests, homes_up, cluster_down) |
           cmocka_run_group_tests_name("node_locks", node_tests, no_homes_up,
                                       no_homes_down);
}
