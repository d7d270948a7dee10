/* Threads of one process: with a context per thread and with one context shared by
 * all threads, a lock protects a plain counter (no lost update, tokens increase),
 * a reader-writer lock keeps readers away from the writer, a barrier orders
 * writes. Built under TSan in CI, this also checks the memory orders. Workers record,
 * the main thread asserts (cmocka is not thread-safe). */
#include <pthread.h>
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

static int iterations(void)
{
    const char *v = getenv("RDLM_TEST_ITERATIONS");
    return v ? atoi(v) : 2000;
}

typedef struct shared {
    rdlm_ctx_h common; /* NULL: each thread makes its own context */
    char job[32];
    uint64_t counter; /* plain: protected by the lock */
    uint64_t last_token;
    int errors;                                 /* written under the lock */
    int readers_inside, writer_inside, overlap; /* under the rwlock's rules */
    int round_seen[THREADS];
} shared_t;

typedef struct arg {
    shared_t *sh;
    int id;
} arg_t;

static void *worker(void *p)
{
    arg_t *a = p;
    shared_t *sh = a->sh;
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = sh->job};
    rdlm_ctx_h ctx = sh->common;
    rdlm_lock_h lock;
    rdlm_rwlock_h rw;
    rdlm_barrier_h bar;
    int n = iterations();

    if (ctx == NULL && rdlm_ctx_create(&params, &ctx) != RDLM_OK) {
        __atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (rdlm_lock_open(ctx, "t.lock", &lock) != RDLM_OK ||
        rdlm_rwlock_open(ctx, "t.rw", &rw) != RDLM_OK ||
        rdlm_barrier_open(ctx, "t.bar", THREADS, &bar) != RDLM_OK) {
        __atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        uint64_t token;

        if (rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token) != RDLM_OK) {
            __atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
            continue;
        }
        sh->errors += token <= sh->last_token;
        sh->last_token = token;
        sh->counter++;
        rdlm_lock_release(lock);

        if (i % 4 == 0) {
            rdlm_rwlock_write_acquire(rw, RDLM_TIMEOUT_INFINITE, NULL);
            sh->overlap += sh->readers_inside != 0 || sh->writer_inside;
            sh->writer_inside = 1;
            sh->writer_inside = 0;
            rdlm_rwlock_write_release(rw);
        } else {
            rdlm_rwlock_read_acquire(rw, RDLM_TIMEOUT_INFINITE);
            __atomic_add_fetch(&sh->readers_inside, 1, __ATOMIC_RELAXED);
            if (__atomic_load_n(&sh->writer_inside, __ATOMIC_RELAXED)) {
                __atomic_add_fetch(&sh->overlap, 1, __ATOMIC_RELAXED);
            }
            __atomic_sub_fetch(&sh->readers_inside, 1, __ATOMIC_RELAXED);
            rdlm_rwlock_read_release(rw);
        }
    }
    for (int r = 1; r <= 50; r++) {
        sh->round_seen[a->id] = r; /* plain write, ordered by the barrier */
        rdlm_barrier_wait(bar, RDLM_TIMEOUT_INFINITE);
        for (int t = 0; t < THREADS; t++) {
            if (sh->round_seen[t] < r) {
                __atomic_add_fetch(&sh->errors, 1, __ATOMIC_RELAXED);
            }
        }
        rdlm_barrier_wait(bar, RDLM_TIMEOUT_INFINITE); /* nobody writes r+1 early */
    }
    if (sh->common == NULL) {
        rdlm_ctx_destroy(ctx);
    } else {
        rdlm_lock_close(lock);
        rdlm_rwlock_close(rw);
        rdlm_barrier_close(bar);
    }
    return NULL;
}

static void run(int shared_ctx)
{
    shared_t *sh = calloc(1, sizeof(*sh));
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB};
    pthread_t t[THREADS];
    arg_t args[THREADS];

    snprintf(sh->job, sizeof(sh->job), "ut-%d-thr%d", (int)getpid(), shared_ctx);
    params.job = sh->job;
    if (shared_ctx) {
        assert_int_equal(rdlm_ctx_create(&params, &sh->common), RDLM_OK);
    }
    for (int i = 0; i < THREADS; i++) {
        args[i] = (arg_t){.sh = sh, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    rdlm_ctx_destroy(sh->common);
    assert_int_equal(sh->errors, 0);
    assert_int_equal(sh->overlap, 0);
    assert_int_equal(sh->counter, (uint64_t)THREADS * (uint64_t)iterations());
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
