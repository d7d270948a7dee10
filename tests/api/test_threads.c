/* Threads of one process: with a context per thread and with one context shared by
 * all threads, a lock protects a plain counter (no lost update, tokens increase),
 * a reader-writer lock keeps readers away from a writer and writers away from each
 * other, a barrier orders writes, locks of a few names opened and closed over and
 * over (their table entries retired and keyed again while other threads open them)
 * protect a plain counter per name with tokens growing per name, and every call
 * returns RDLM_OK. Built under TSan in
 * CI, this also checks the memory orders. Each worker records into its own record_t;
 * the main thread asserts what they recorded (cmocka is not thread-safe). */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include <rdlm.h>

#define THREADS 4
/* Looks a holder of the rwlock takes around a yield while it holds the lock, so that a
 * lock which let a reader in beside a writer, or two writers in, is caught inside. */
#define LOOKS 4
/* Names the open/close phase rotates over (fewer than THREADS: threads meet on them). */
#define ROTATING 3

static int iterations(void)
{
    const char *v = getenv("RDLM_TEST_ITERATIONS");
    return v ? atoi(v) : 2000;
}

/* What one worker saw; only that worker writes it, main reads it after the join. */
typedef struct record {
    int failed_calls;           /* rdlm calls that did not return RDLM_OK */
    rdlm_status_t first_failed; /* the status of the first of them */
    int bad_tokens;             /* a lock token not above the previous holder's */
    int writer_saw_other;       /* a writer found a reader or another writer inside */
    int reader_saw_writer;      /* a reader found a writer inside */
    int barrier_misses;         /* a round another thread had not reached */
    int reads, writes;          /* rwlock sections run */
    uint64_t increments;        /* counter increments made under the lock */
    uint64_t rot_increments;    /* ... under the rotating names' locks */
    uint64_t recoveries;        /* its context's recoveries after its loop (none died) */
} record_t;

typedef struct shared {
    rdlm_ctx_h common; /* NULL: each thread makes its own context */
    char job[32];
    uint64_t counter;    /* plain: protected by the lock */
    uint64_t last_token; /* plain: protected by the lock */
    /* Who is inside the rwlock: atomics, so that a broken lock shows as an overlap
     * rather than as a data race. */
    int readers_inside, writers_inside;
    int round_seen[THREADS];
    /* Per rotating name (and thread, with one context): plain, under its lock. */
    uint64_t rot_counter[THREADS][ROTATING];
    uint64_t rot_last[THREADS][ROTATING]; /* the name's last token */
} shared_t;

typedef struct arg {
    shared_t *sh;
    int id;
    record_t rec;
} arg_t;

/* 1 if st is RDLM_OK; else counts it in rec. */
static int ok(record_t *rec, rdlm_status_t st)
{
    if (st == RDLM_OK)
        return 1;
    if (rec->failed_calls++ == 0)
        rec->first_failed = st;
    return 0;
}

static int load(const int *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* Exclusive section: nobody else may be inside, now or at any look. */
static void write_section(shared_t *sh, rdlm_rwlock_h rw, record_t *rec)
{
    int other = 0;

    if (!ok(rec, rdlm_rwlock_write_acquire(rw, RDLM_TIMEOUT_INFINITE, NULL)))
        return;
    other |= __atomic_add_fetch(&sh->writers_inside, 1, __ATOMIC_SEQ_CST) != 1;
    for (int k = 0; k < LOOKS; k++) {
        other |= load(&sh->readers_inside) != 0 || load(&sh->writers_inside) != 1;
        sched_yield();
    }
    __atomic_sub_fetch(&sh->writers_inside, 1, __ATOMIC_SEQ_CST);
    rec->writer_saw_other += other;
    rec->writes++;
    ok(rec, rdlm_rwlock_write_release(rw));
}

/* Shared section: other readers may be inside, a writer may not. */
static void read_section(shared_t *sh, rdlm_rwlock_h rw, record_t *rec)
{
    int writer = 0;

    if (!ok(rec, rdlm_rwlock_read_acquire(rw, RDLM_TIMEOUT_INFINITE)))
        return;
    __atomic_add_fetch(&sh->readers_inside, 1, __ATOMIC_SEQ_CST);
    for (int k = 0; k < LOOKS; k++) {
        writer |= load(&sh->writers_inside) != 0;
        sched_yield();
    }
    __atomic_sub_fetch(&sh->readers_inside, 1, __ATOMIC_SEQ_CST);
    rec->reader_saw_writer += writer;
    rec->reads++;
    ok(rec, rdlm_rwlock_read_release(rw));
}

static void lock_section(shared_t *sh, rdlm_lock_h lock, record_t *rec)
{
    uint64_t token;

    if (!ok(rec, rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token)))
        return;
    rec->bad_tokens += token <= sh->last_token;
    sh->last_token = token;
    sh->counter++;
    rec->increments++;
    ok(rec, rdlm_lock_release(lock));
}

static void barrier_rounds(shared_t *sh, rdlm_barrier_h bar, int id, record_t *rec)
{
    for (int r = 1; r <= 50; r++) {
        sh->round_seen[id] = r; /* plain write, ordered by the barrier */
        if (!ok(rec, rdlm_barrier_wait(bar, RDLM_TIMEOUT_INFINITE)))
            return;
        for (int t = 0; t < THREADS; t++) {
            rec->barrier_misses += sh->round_seen[t] < r;
        }
        /* nobody writes r+1 early */
        if (!ok(rec, rdlm_barrier_wait(bar, RDLM_TIMEOUT_INFINITE)))
            return;
    }
}

/* Open, take, release and close the lock of one of ROTATING names, n times. With a
 * context per thread the threads share the names; with one context each thread has
 * its own (a close releases what its context holds, whichever thread took it), so
 * they meet only on the table's creation lock. */
static void rotating_names(shared_t *sh, rdlm_ctx_h ctx, int id, int n, record_t *rec)
{
    for (int i = 0; i < n; i++) {
        int k = (i + id) % ROTATING;
        char name[24];
        rdlm_lock_h lock;
        uint64_t token;

        snprintf(name, sizeof(name), "t.rot%d.%d", k, sh->common != NULL ? id : 0);
        if (!ok(rec, rdlm_lock_open(ctx, name, &lock)))
            return;
        if (ok(rec, rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token))) {
            int t = sh->common != NULL ? id : 0;

            rec->bad_tokens += token <= sh->rot_last[t][k];
            sh->rot_last[t][k] = token;
            sh->rot_counter[t][k]++;
            rec->rot_increments++;
            ok(rec, rdlm_lock_release(lock));
        }
        ok(rec, rdlm_lock_close(lock));
    }
}

static void *worker(void *p)
{
    arg_t *a = p;
    shared_t *sh = a->sh;
    record_t *rec = &a->rec;
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = sh->job};
    rdlm_ctx_h ctx = sh->common;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_barrier_h bar;
    rdlm_stats_t stats;
    int n = iterations();

    if (ctx == NULL && !ok(rec, rdlm_ctx_create(&params, &ctx)))
        return NULL;
    if (!ok(rec, rdlm_lock_open(ctx, "t.lock", &lock)) ||
        !ok(rec, rdlm_rwlock_open(ctx, "t.rw", &rw)) ||
        !ok(rec, rdlm_barrier_open(ctx, "t.bar", THREADS, &bar)))
        return NULL;
    for (int i = 0; i < n; i++) {
        lock_section(sh, lock, rec);
        if (i % 4 == 0)
            write_section(sh, rw, rec);
        else
            read_section(sh, rw, rec);
    }
    barrier_rounds(sh, bar, a->id, rec);
    rotating_names(sh, ctx, a->id, n, rec);
    if (ok(rec, rdlm_ctx_stats(ctx, &stats)))
        rec->recoveries = stats.recoveries;
    if (sh->common == NULL) {
        rdlm_ctx_destroy(ctx);
    } else {
        ok(rec, rdlm_lock_close(lock));
        ok(rec, rdlm_rwlock_close(rw));
        ok(rec, rdlm_barrier_close(bar));
    }
    return NULL;
}

static void run(int shared_ctx)
{
    shared_t *sh = calloc(1, sizeof(*sh));
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB};
    pthread_t t[THREADS];
    arg_t *args = calloc(THREADS, sizeof(*args));
    int n = iterations();
    uint64_t rot_total = 0;

    assert_non_null(sh);
    assert_non_null(args);
    snprintf(sh->job, sizeof(sh->job), "ut-%d-thr%d", (int)getpid(), shared_ctx);
    params.job = sh->job;
    if (shared_ctx) {
        assert_int_equal(rdlm_ctx_create(&params, &sh->common), RDLM_OK);
    }
    for (int i = 0; i < THREADS; i++) {
        args[i].sh = sh;
        args[i].id = i;
        assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
    }
    rdlm_ctx_destroy(sh->common);
    for (int i = 0; i < THREADS; i++) {
        const record_t *rec = &args[i].rec;

        if (rec->failed_calls != 0)
            print_error("thread %d: %d calls failed, the first with %s\n", i,
                        rec->failed_calls, rdlm_status_str(rec->first_failed));
        assert_int_equal(rec->failed_calls, 0);
        assert_int_equal(rec->bad_tokens, 0);
        assert_int_equal(rec->writer_saw_other, 0);
        assert_int_equal(rec->reader_saw_writer, 0);
        assert_int_equal(rec->barrier_misses, 0);
        assert_int_equal(rec->recoveries, 0); /* nobody died: nothing to recover */
        assert_int_equal(rec->increments, (uint64_t)n);
        assert_int_equal(rec->rot_increments, (uint64_t)n);
        assert_int_equal(rec->writes, (n + 3) / 4);
        assert_int_equal(rec->reads, n - (n + 3) / 4);
    }
    assert_int_equal(sh->readers_inside, 0);
    assert_int_equal(sh->writers_inside, 0);
    assert_int_equal(sh->counter, (uint64_t)THREADS * (uint64_t)n);
    for (int th = 0; th < THREADS; th++) {
        for (int k = 0; k < ROTATING; k++) {
            rot_total += sh->rot_counter[th][k];
        }
    }
    assert_int_equal(rot_total, (uint64_t)THREADS * (uint64_t)n);
    free(args);
    free(sh);
}

static void context_per_thread_no_lost_update(void **state)
{
    (void)state;
    run(0);
}

static void shared_context_no_lost_update(void **state)
{
    (void)state;
    run(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(context_per_thread_no_lost_update),
        cmocka_unit_test(shared_context_no_lost_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
