/*
 * rdlm_crash_test — recovery from processes killed with SIGKILL.
 *
 * Scenarios (--scenario NAME, each repeated --reps times, default 3):
 *
 *   lock_holder_killed     a child holds an exclusive lock and sends its token over a
 *                          pipe from inside its critical section; the parent SIGKILLs
 *                          and reaps it, then acquires: RDLM_OWNER_DEAD within 1 s, with
 *                          a token greater than the dead holder's; the next acquire is
 *                          a plain RDLM_OK with a still greater token.
 *   rwlock_writer_killed   the same for a reader-writer lock held in write mode.
 *   rwlock_reader_killed   a child holds the rwlock shared and is killed; a writer must
 *                          get in within 1 s (RDLM_OK or RDLM_OWNER_DEAD), and readers
 *                          and writers work normally afterwards.
 *   queued_waiter_killed   H holds, W queues, C queues behind W; W is killed while
 *                          queued (never holding); H releases: C must be granted within
 *                          1 s with RDLM_OK (the dead waiter's place is passed over),
 *                          and a later acquire in the parent too; the queue drains to 0.
 *   holder_killed_under_waiter
 *                          a child C is already queued (and parked: the parent waits
 *                          100 ms) when the holder is killed: C must get the lock with
 *                          RDLM_OWNER_DEAD within 1 s of the kill and a larger token.
 *                          Nobody wakes C, so this checks the re-check while parked.
 *   lock_holder_zombie     as lock_holder_killed, but the parent acquires BEFORE reaping
 *                          the killed holder (it is a zombie while the parent waits):
 *                          the pattern of an application that waits on a lock held by
 *                          its own crashed child.
 *
 * Tunable: --reps N, or RDLMTEST_CRASH_REPS in the environment.
 *
 * The parent attaches its own context before the kill, so the segment stays alive
 * (a segment with no live process would be replaced, not recovered). It never forks
 * after creating its context. Every wait is bounded; children die with the parent.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdlm.h>

#include "stress_util.h"

#define CRASH_LOCK_NAME "crash.lock"
#define CRASH_RECOVERY_LIMIT_NS (1 * STRESS_NSEC_PER_SEC)
#define CRASH_ACQUIRE_TIMEOUT_NS (5 * STRESS_NSEC_PER_SEC)
#define CRASH_PIPE_TIMEOUT_MS 10000

/** What a child sends over its pipe once it holds (or failed). */
typedef struct crash_report {
    int32_t status;
    uint64_t token;
} crash_report_t;

/** Results of the queued-waiter scenario's children, in a shared mapping. */
typedef struct crash_shared {
    _Atomic int32_t c_status;
    _Atomic uint64_t c_grant_ns;
    _Atomic uint64_t c_token;
    _Atomic int32_t w_granted; /* the killed waiter must never have held */
} crash_shared_t;

typedef enum crash_kind {
    CRASH_LOCK,
    CRASH_RW_WRITE,
    CRASH_RW_READ,
} crash_kind_t;

typedef struct crash_child_arg {
    const char *job;
    crash_kind_t kind;
    int report_fd; /* write end: crash_report_t once held */
    int cmd_fd;    /* read end: one byte = go on / release */
    crash_shared_t *sh;
} crash_child_arg_t;

static int crash_failures;

static void crash_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void crash_check(int ok, const char *fmt, ...)
{
    va_list ap;

    printf("  [%s] ", ok ? " ok " : "FAIL");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    crash_failures += !ok;
}

static rdlm_ctx_params_t crash_params(const char *job)
{
    return (rdlm_ctx_params_t){
        .field_mask = RDLM_CTX_FIELD_JOB | RDLM_CTX_FIELD_CAPACITY,
        .job = job,
        .capacity = 64,
    };
}

static int crash_read_full(int fd, void *buf, size_t size, int timeout_ms)
{
    size_t got = 0;

    while (got < size) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        ssize_t n;

        if (poll(&pfd, 1, timeout_ms) <= 0) {
            return -1;
        }
        n = read(fd, (char *)buf + got, size - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

static void crash_write_full(int fd, const void *buf, size_t size)
{
    const char *p = buf;

    while (size > 0) {
        ssize_t n = write(fd, p, size);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        p += n;
        size -= (size_t)n;
    }
}

/* ---- children ------------------------------------------------------------------- */

/** Acquire in the given mode, report the token, then wait to be killed (or for a
 *  release command if cmd_fd >= 0). */
static int crash_holder(void *argp)
{
    crash_child_arg_t *arg = argp;
    rdlm_ctx_params_t params = crash_params(arg->job);
    crash_report_t rep = {0};
    rdlm_ctx_h ctx;
    rdlm_lock_h lock = NULL;
    rdlm_rwlock_h rw = NULL;
    rdlm_status_t st;
    char cmd;

    alarm(60); /* never outlive a broken parent by much */
    st = rdlm_ctx_create(&params, &ctx);
    if (st == RDLM_OK) {
        if (arg->kind == CRASH_LOCK) {
            st = rdlm_lock_open(ctx, CRASH_LOCK_NAME, &lock);
            if (st == RDLM_OK) {
                st = rdlm_lock_acquire(lock, CRASH_ACQUIRE_TIMEOUT_NS, &rep.token);
            }
        } else {
            st = rdlm_rwlock_open(ctx, CRASH_LOCK_NAME, &rw);
            if (st == RDLM_OK && arg->kind == CRASH_RW_WRITE) {
                st = rdlm_rwlock_write_acquire(rw, CRASH_ACQUIRE_TIMEOUT_NS, &rep.token);
            } else if (st == RDLM_OK) {
                st = rdlm_rwlock_read_acquire(rw, CRASH_ACQUIRE_TIMEOUT_NS);
            }
        }
    }
    rep.status = st;
    crash_write_full(arg->report_fd, &rep, sizeof(rep));
    if (st != RDLM_OK) {
        return 1;
    }
    if (arg->cmd_fd < 0) {
        for (;;) {
            pause(); /* inside the critical section until SIGKILL */
        }
    }
    if (crash_read_full(arg->cmd_fd, &cmd, 1, 30000) != 0) {
        return 2;
    }
    st = rdlm_lock_release(lock);
    rdlm_ctx_destroy(ctx);
    return st == RDLM_OK ? 0 : 3;
}

/** The waiter that gets killed while queued. */
static int crash_waiter(void *argp)
{
    crash_child_arg_t *arg = argp;
    rdlm_ctx_params_t params = crash_params(arg->job);
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_status_t st;

    alarm(60);
    if (rdlm_ctx_create(&params, &ctx) != RDLM_OK ||
        rdlm_lock_open(ctx, CRASH_LOCK_NAME, &lock) != RDLM_OK) {
        return 1;
    }
    st = rdlm_lock_acquire(lock, 30 * STRESS_NSEC_PER_SEC, NULL);
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        atomic_store(&arg->sh->w_granted, 1);
    }
    for (;;) {
        pause();
    }
}

/** The waiter queued behind the one that dies. */
static int crash_successor(void *argp)
{
    crash_child_arg_t *arg = argp;
    rdlm_ctx_params_t params = crash_params(arg->job);
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_status_t st;
    uint64_t token = 0;
    char cmd;

    alarm(60);
    if (rdlm_ctx_create(&params, &ctx) != RDLM_OK ||
        rdlm_lock_open(ctx, CRASH_LOCK_NAME, &lock) != RDLM_OK) {
        return 1;
    }
    if (crash_read_full(arg->cmd_fd, &cmd, 1, 30000) != 0) {
        return 2;
    }
    st = rdlm_lock_acquire(lock, 10 * STRESS_NSEC_PER_SEC, &token);
    atomic_store(&arg->sh->c_grant_ns, stress_now_ns());
    atomic_store(&arg->sh->c_token, token);
    atomic_store(&arg->sh->c_status, st);
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        rdlm_lock_release(lock);
    }
    rdlm_ctx_destroy(ctx);
    return 0;
}

/* ---- parent side ---------------------------------------------------------------- */

static double crash_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void crash_check_segment_gone(const char *job)
{
    char path[128];
    struct stat st;

    stress_segment_path(path, sizeof(path), job);
    crash_check(stat(path, &st) != 0, "segment %s removed after the last detach", path);
    stress_segment_cleanup(job);
}

/** Fork the holder H and wait until it reports holding the lock (*rep_p: its report,
 *  with its token); 0 on success. *pid_p is set either way, for the caller's cleanup. */
static int crash_start_holder(void *h_arg, int report_fd, pid_t *pid_p,
                              crash_report_t *rep_p)
{
    *pid_p = stress_fork(crash_holder, h_arg);
    if (crash_read_full(report_fd, rep_p, sizeof(*rep_p), CRASH_PIPE_TIMEOUT_MS) != 0 ||
        rep_p->status != RDLM_OK) {
        crash_check(0, "holder H acquired");
        return -1;
    }
    return 0;
}

/** The parent's own context and handle on the test lock; 0 on success. */
static int crash_parent_attach(const rdlm_ctx_params_t *params, rdlm_ctx_h *ctx_p,
                               rdlm_lock_h *lock_p)
{
    rdlm_status_t st = rdlm_ctx_create(params, ctx_p);

    if (st == RDLM_OK) {
        st = rdlm_lock_open(*ctx_p, CRASH_LOCK_NAME, lock_p);
    }
    if (st != RDLM_OK) {
        crash_check(0, "parent attach: %s", rdlm_status_name(st));
        return -1;
    }
    return 0;
}

/** Poll rdlm_lock_query until waiters >= n; 0 on success. */
static int crash_wait_waiters(rdlm_lock_h lock, uint32_t n, uint64_t timeout_ns)
{
    uint64_t deadline = stress_now_ns() + timeout_ns;
    rdlm_lock_info_t info;

    while (stress_now_ns() < deadline) {
        if (rdlm_lock_query(lock, &info) == RDLM_OK && info.waiters >= n) {
            return 0;
        }
        stress_sleep_ns(STRESS_NSEC_PER_MSEC);
    }
    return -1;
}

/** A child holding kind is killed; the parent takes over. zombie: acquire before
 *  reaping the killed child. */
static void crash_holder_killed(const char *job, crash_kind_t kind, int zombie)
{
    rdlm_ctx_params_t params = crash_params(job);
    crash_child_arg_t arg = {.job = job, .kind = kind, .cmd_fd = -1};
    crash_report_t rep;
    rdlm_ctx_h ctx = NULL;
    rdlm_lock_h lock = NULL;
    rdlm_rwlock_h rw = NULL;
    rdlm_status_t st;
    uint64_t token = 0;
    uint64_t token2 = 0;
    uint64_t t0;
    uint64_t dt;
    int fds[2];
    pid_t pid;

    if (pipe(fds) != 0) {
        crash_check(0, "pipe: %s", strerror(errno));
        return;
    }
    arg.report_fd = fds[1];
    pid = stress_fork(crash_holder, &arg);
    close(fds[1]);
    if (crash_read_full(fds[0], &rep, sizeof(rep), CRASH_PIPE_TIMEOUT_MS) != 0) {
        crash_check(0, "holder reported within %d ms", CRASH_PIPE_TIMEOUT_MS);
        goto out_child;
    }
    crash_check(rep.status == RDLM_OK, "child %ld acquired %s (%s), token %#" PRIx64,
                (long)pid, kind == CRASH_RW_READ ? "shared" : "exclusive",
                rdlm_status_name((rdlm_status_t)rep.status), rep.token);
    if (rep.status != RDLM_OK) {
        goto out_child;
    }

    st = rdlm_ctx_create(&params, &ctx);
    if (st != RDLM_OK) {
        crash_check(0, "parent rdlm_ctx_create: %s", rdlm_status_name(st));
        goto out_child;
    }
    st = kind == CRASH_LOCK ? rdlm_lock_open(ctx, CRASH_LOCK_NAME, &lock)
                            : rdlm_rwlock_open(ctx, CRASH_LOCK_NAME, &rw);
    if (st != RDLM_OK) {
        crash_check(0, "parent open: %s", rdlm_status_name(st));
        goto out_ctx;
    }
    if (kind == CRASH_LOCK) {
        rdlm_lock_info_t info = {0};

        st = rdlm_lock_acquire(lock, 0, NULL);
        crash_check(st == RDLM_ERR_BUSY, "try-acquire while the child holds: %s",
                    rdlm_status_name(st));
        st = rdlm_lock_query(lock, &info);
        crash_check(st == RDLM_OK && info.held == 1 && info.held_by_me == 0 &&
                        info.last_token == rep.token,
                    "query before the kill: %s, held %d, held_by_me %d, last_token %#"
                    PRIx64, rdlm_status_name(st), info.held, info.held_by_me,
                    info.last_token);
    }

    kill(pid, SIGKILL);
    if (!zombie) {
        waitpid(pid, NULL, 0);
        pid = 0;
    }

    t0 = stress_now_ns();
    switch (kind) {
    case CRASH_LOCK:
        st = rdlm_lock_acquire(lock, CRASH_ACQUIRE_TIMEOUT_NS, &token);
        break;
    case CRASH_RW_WRITE:
    case CRASH_RW_READ:
        st = rdlm_rwlock_write_acquire(rw, CRASH_ACQUIRE_TIMEOUT_NS, &token);
        break;
    }
    dt = stress_now_ns() - t0;
    if (zombie) {
        waitpid(pid, NULL, 0);
        pid = 0;
    }
    if (kind == CRASH_RW_READ) {
        crash_check(st == RDLM_OK || st == RDLM_OWNER_DEAD,
                    "writer after a killed reader: %s (RDLM_OK or RDLM_OWNER_DEAD)",
                    rdlm_status_name(st));
    } else {
        crash_check(st == RDLM_OWNER_DEAD, "acquire after the kill: %s (want "
                    "RDLM_OWNER_DEAD)", rdlm_status_name(st));
    }
    crash_check(dt < CRASH_RECOVERY_LIMIT_NS, "recovered in %.1f ms (limit %.0f ms)",
                crash_ms(dt), crash_ms(CRASH_RECOVERY_LIMIT_NS));
    if (st != RDLM_OK && st != RDLM_OWNER_DEAD) {
        goto out_ctx;
    }
    if (kind != CRASH_RW_READ) {
        crash_check(token > rep.token, "token %#" PRIx64 " > dead holder's %#" PRIx64,
                    token, rep.token);
    }

    st = kind == CRASH_LOCK ? rdlm_lock_release(lock) : rdlm_rwlock_write_release(rw);
    crash_check(st == RDLM_OK, "release after recovery: %s", rdlm_status_name(st));
    st = kind == CRASH_LOCK ? rdlm_lock_acquire(lock, STRESS_NSEC_PER_SEC, &token2)
                            : rdlm_rwlock_write_acquire(rw, STRESS_NSEC_PER_SEC, &token2);
    crash_check(st == RDLM_OK, "second acquire: %s (want plain RDLM_OK)",
                rdlm_status_name(st));
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        crash_check(token2 > token, "second token %#" PRIx64 " > %#" PRIx64, token2,
                    token);
        st = kind == CRASH_LOCK ? rdlm_lock_release(lock) : rdlm_rwlock_write_release(rw);
        crash_check(st == RDLM_OK, "second release: %s", rdlm_status_name(st));
    }
    if (kind != CRASH_LOCK) {
        st = rdlm_rwlock_read_acquire(rw, STRESS_NSEC_PER_SEC);
        crash_check(st == RDLM_OK, "read acquire afterwards: %s", rdlm_status_name(st));
        if (st == RDLM_OK) {
            rdlm_rwlock_read_release(rw);
        }
    }

out_ctx:
    rdlm_ctx_destroy(ctx);
    if (pid > 0) {
        stress_kill_reap(pid);
        pid = 0;
    }
    crash_check_segment_gone(job);
out_child:
    stress_kill_reap(pid);
    close(fds[0]);
}

static void crash_queued_waiter_killed(const char *job)
{
    rdlm_ctx_params_t params = crash_params(job);
    crash_shared_t *sh = stress_shared_alloc(sizeof(*sh));
    crash_child_arg_t h_arg = {.job = job, .kind = CRASH_LOCK};
    crash_child_arg_t w_arg = {.job = job, .kind = CRASH_LOCK, .cmd_fd = -1};
    crash_child_arg_t c_arg = {.job = job, .kind = CRASH_LOCK};
    int h_report[2], h_cmd[2], c_cmd[2];
    pid_t pids[3] = {0, 0, 0};
    int statuses[3] = {0, 0, 0};
    crash_report_t rep;
    rdlm_ctx_h ctx = NULL;
    rdlm_lock_h lock = NULL;
    rdlm_lock_info_t info = {0};
    rdlm_status_t st;
    uint64_t t_release;
    uint64_t t0;
    uint64_t token = 0;
    char text[32];
    char go = 'g';

    if (sh == NULL || pipe(h_report) != 0 || pipe(h_cmd) != 0 || pipe(c_cmd) != 0) {
        crash_check(0, "setup (mmap/pipe): %s", strerror(errno));
        return;
    }
    atomic_store(&sh->c_status, 1);
    h_arg.report_fd = h_report[1];
    h_arg.cmd_fd = h_cmd[0];
    w_arg.sh = sh;
    c_arg.cmd_fd = c_cmd[0];
    c_arg.sh = sh;

    if (crash_start_holder(&h_arg, h_report[0], &pids[0], &rep) != 0) {
        goto out_children;
    }
    pids[1] = stress_fork(crash_waiter, &w_arg);
    pids[2] = stress_fork(crash_successor, &c_arg);

    if (crash_parent_attach(&params, &ctx, &lock) != 0) {
        goto out_children;
    }
    crash_check(crash_wait_waiters(lock, 1, 10 * STRESS_NSEC_PER_SEC) == 0,
                "waiter W queued behind H");
    crash_write_full(c_cmd[1], &go, 1);
    crash_check(crash_wait_waiters(lock, 2, 10 * STRESS_NSEC_PER_SEC) == 0,
                "successor C queued behind W");

    stress_kill_reap(pids[1]);
    pids[1] = 0;
    crash_check(atomic_load(&sh->w_granted) == 0, "killed waiter W never held the lock");

    t_release = stress_now_ns();
    crash_write_full(h_cmd[1], &go, 1);
    stress_wait_children(&pids[2], &statuses[2], 1, t_release + 15 * STRESS_NSEC_PER_SEC);
    crash_check(stress_exited_ok(statuses[2]), "successor C exited cleanly (%s)",
                stress_status_text(statuses[2], text, sizeof(text)));
    st = (rdlm_status_t)atomic_load(&sh->c_status);
    crash_check(st == RDLM_OK, "C's acquire past the dead waiter: %s (want RDLM_OK)",
                rdlm_status_name(st));
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        uint64_t dt = atomic_load(&sh->c_grant_ns) - t_release;

        crash_check(dt < CRASH_RECOVERY_LIMIT_NS,
                    "C granted %.1f ms after H's release (limit %.0f ms)", crash_ms(dt),
                    crash_ms(CRASH_RECOVERY_LIMIT_NS));
        crash_check(atomic_load(&sh->c_token) > rep.token,
                    "C's token %#" PRIx64 " > H's %#" PRIx64, atomic_load(&sh->c_token),
                    rep.token);
    }
    stress_wait_children(&pids[0], &statuses[0], 1, stress_now_ns() + 10 * STRESS_NSEC_PER_SEC);
    crash_check(stress_exited_ok(statuses[0]), "holder H released and exited cleanly (%s)",
                stress_status_text(statuses[0], text, sizeof(text)));

    t0 = stress_now_ns();
    st = rdlm_lock_acquire(lock, CRASH_ACQUIRE_TIMEOUT_NS, &token);
    crash_check(st == RDLM_OK && stress_now_ns() - t0 < CRASH_RECOVERY_LIMIT_NS,
                "parent acquire afterwards: %s in %.1f ms", rdlm_status_name(st),
                crash_ms(stress_now_ns() - t0));
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        crash_check(token > atomic_load(&sh->c_token), "parent token %#" PRIx64
                    " > C's", token);
        crash_check(rdlm_lock_release(lock) == RDLM_OK, "parent release");
    }
    st = rdlm_lock_query(lock, &info);
    crash_check(st == RDLM_OK && info.waiters == 0 && info.held == 0,
                "queue drained: waiters %u, held %d", info.waiters, info.held);

    rdlm_ctx_destroy(ctx);
    ctx = NULL;
    crash_check_segment_gone(job);

out_children:
    rdlm_ctx_destroy(ctx);
    for (int i = 0; i < 3; i++) {
        stress_kill_reap(pids[i]);
    }
    close(h_report[0]);
    close(h_report[1]);
    close(h_cmd[0]);
    close(h_cmd[1]);
    close(c_cmd[0]);
    close(c_cmd[1]);
    stress_shared_free(sh, sizeof(*sh));
    stress_segment_cleanup(job);
}

static void crash_holder_killed_under_waiter(const char *job)
{
    rdlm_ctx_params_t params = crash_params(job);
    crash_shared_t *sh = stress_shared_alloc(sizeof(*sh));
    crash_child_arg_t h_arg = {.job = job, .kind = CRASH_LOCK, .cmd_fd = -1};
    crash_child_arg_t c_arg = {.job = job, .kind = CRASH_LOCK};
    int h_report[2], c_cmd[2];
    pid_t pids[2] = {0, 0};
    int statuses[2] = {0, 0};
    crash_report_t rep;
    rdlm_ctx_h ctx = NULL;
    rdlm_lock_h lock = NULL;
    rdlm_status_t st;
    uint64_t t_kill;
    uint64_t token = 0;
    char text[32];
    char go = 'g';

    if (sh == NULL || pipe(h_report) != 0 || pipe(c_cmd) != 0) {
        crash_check(0, "setup (mmap/pipe): %s", strerror(errno));
        return;
    }
    atomic_store(&sh->c_status, 1);
    h_arg.report_fd = h_report[1];
    c_arg.cmd_fd = c_cmd[0];
    c_arg.sh = sh;

    if (crash_start_holder(&h_arg, h_report[0], &pids[0], &rep) != 0) {
        goto out;
    }
    pids[1] = stress_fork(crash_successor, &c_arg);
    if (crash_parent_attach(&params, &ctx, &lock) != 0) {
        goto out;
    }
    crash_write_full(c_cmd[1], &go, 1);
    crash_check(crash_wait_waiters(lock, 1, 10 * STRESS_NSEC_PER_SEC) == 0,
                "waiter C queued behind H");
    stress_sleep_ns(100 * STRESS_NSEC_PER_MSEC); /* C spins out and parks */

    t_kill = stress_now_ns();
    stress_kill_reap(pids[0]);
    pids[0] = 0;
    stress_wait_children(&pids[1], &statuses[1], 1, t_kill + 15 * STRESS_NSEC_PER_SEC);
    crash_check(stress_exited_ok(statuses[1]), "waiter C exited cleanly (%s)",
                stress_status_text(statuses[1], text, sizeof(text)));
    st = (rdlm_status_t)atomic_load(&sh->c_status);
    crash_check(st == RDLM_OWNER_DEAD, "C's acquire: %s (want RDLM_OWNER_DEAD)",
                rdlm_status_name(st));
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        uint64_t dt = atomic_load(&sh->c_grant_ns) - t_kill;

        crash_check(dt < CRASH_RECOVERY_LIMIT_NS, "C granted %.1f ms after the kill "
                    "(limit %.0f ms)", crash_ms(dt), crash_ms(CRASH_RECOVERY_LIMIT_NS));
        crash_check(atomic_load(&sh->c_token) > rep.token,
                    "C's token %#" PRIx64 " > dead holder's %#" PRIx64,
                    atomic_load(&sh->c_token), rep.token);
    }
    st = rdlm_lock_acquire(lock, STRESS_NSEC_PER_SEC, &token);
    crash_check(st == RDLM_OK, "parent acquire afterwards: %s (want plain RDLM_OK)",
                rdlm_status_name(st));
    if (st == RDLM_OK || st == RDLM_OWNER_DEAD) {
        crash_check(token > atomic_load(&sh->c_token), "parent token %#" PRIx64 " > C's",
                    token);
        rdlm_lock_release(lock);
    }
    rdlm_ctx_destroy(ctx);
    ctx = NULL;
    crash_check_segment_gone(job);

out:
    rdlm_ctx_destroy(ctx);
    for (int i = 0; i < 2; i++) {
        stress_kill_reap(pids[i]);
    }
    close(h_report[0]);
    close(h_report[1]);
    close(c_cmd[0]);
    close(c_cmd[1]);
    stress_shared_free(sh, sizeof(*sh));
    stress_segment_cleanup(job);
}

/* ---- driver --------------------------------------------------------------------- */

static const char *const crash_scenarios[] = {
    "lock_holder_killed", "rwlock_writer_killed", "rwlock_reader_killed",
    "queued_waiter_killed", "holder_killed_under_waiter", "lock_holder_zombie", NULL,
};

static void crash_run(const char *scenario, const char *job)
{
    if (strcmp(scenario, "lock_holder_killed") == 0) {
        crash_holder_killed(job, CRASH_LOCK, 0);
    } else if (strcmp(scenario, "rwlock_writer_killed") == 0) {
        crash_holder_killed(job, CRASH_RW_WRITE, 0);
    } else if (strcmp(scenario, "rwlock_reader_killed") == 0) {
        crash_holder_killed(job, CRASH_RW_READ, 0);
    } else if (strcmp(scenario, "queued_waiter_killed") == 0) {
        crash_queued_waiter_killed(job);
    } else if (strcmp(scenario, "holder_killed_under_waiter") == 0) {
        crash_holder_killed_under_waiter(job);
    } else if (strcmp(scenario, "lock_holder_zombie") == 0) {
        crash_holder_killed(job, CRASH_LOCK, 1);
    }
}

int main(int argc, char **argv)
{
    const char *scenario = NULL;
    uint64_t reps = 3;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
            scenario = argv[++i];
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = strtoull(argv[++i], NULL, 10);
        } else {
            scenario = NULL;
            break;
        }
    }
    reps = stress_env_u64("RDLMTEST_CRASH_REPS", reps);
    for (int i = 0; scenario != NULL && crash_scenarios[i] != NULL; i++) {
        if (strcmp(scenario, crash_scenarios[i]) == 0) {
            for (uint64_t r = 0; r < reps; r++) {
                char what[32];
                char job[40];

                snprintf(what, sizeof(what), "crash%" PRIu64, r);
                stress_job_name(job, sizeof(job), what);
                printf("%s, repetition %" PRIu64 "/%" PRIu64 " (job %s)\n", scenario,
                       r + 1, reps, job);
                crash_run(scenario, job);
            }
            printf("RESULT: %s (%d failed check(s))\n", crash_failures ? "FAIL" : "PASS",
                   crash_failures);
            return crash_failures ? 1 : 0;
        }
    }
    fprintf(stderr, "usage: rdlm_crash_test --scenario NAME [--reps N]\nscenarios:");
    for (int i = 0; crash_scenarios[i] != NULL; i++) {
        fprintf(stderr, " %s", crash_scenarios[i]);
    }
    fprintf(stderr, "\nenvironment: RDLMTEST_CRASH_REPS\n");
    return 2;
}
