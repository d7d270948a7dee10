/*
 * Fencing on the resource side (rdlm_fence_check), stale handles of a destroyed
 * context, and the standalone distributed context of one process (the TCP rendezvous
 * path of rdlm_ctx_create, over UCX's loopback; its log lines show its rank).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"

#define FENCE_THREADS 4
#define FENCE_TOKENS 20000

static void test_fence_check_accepts_equal_and_newer_rejects_older(void **state)
{
    uint64_t highest = 0;

    (void)state;
    assert_int_equal(rdlm_fence_check(&highest, 5), RDLM_OK);
    assert_int_equal(highest, 5);
    assert_int_equal(rdlm_fence_check(&highest, 5), RDLM_OK); /* the same holder again */
    assert_int_equal(rdlm_fence_check(&highest, 4), RDLM_ERR_STALE_TOKEN);
    assert_int_equal(highest, 5); /* unchanged by a rejection */
    assert_int_equal(rdlm_fence_check(&highest, (1ull << 40) | 1), RDLM_OK); /* new epoch */
    assert_int_equal(rdlm_fence_check(&highest, 6), RDLM_ERR_STALE_TOKEN);
    assert_int_equal(rdlm_fence_check(NULL, 1), RDLM_ERR_INVALID_ARG);
}

typedef struct fence_arg {
    uint64_t *highest;
    unsigned first;
    unsigned accepted_after_higher; /* accepted though a higher one was accepted before
                                       by this thread: must stay 0 */
} fence_arg_t;

static void *fence_thread(void *p)
{
    fence_arg_t *a = p;
    uint64_t mine_max = 0;

    for (unsigned i = 0; i < FENCE_TOKENS; i++) {
        uint64_t token = (uint64_t)(i * FENCE_THREADS + a->first);

        if (rdlm_fence_check(a->highest, token) == RDLM_OK) {
            if (token < mine_max) {
                a->accepted_after_higher++;
            }
            mine_max = token;
        }
    }
    return NULL;
}

static void test_fence_check_is_an_atomic_max_under_threads(void **state)
{
    pthread_t th[FENCE_THREADS];
    fence_arg_t args[FENCE_THREADS];
    uint64_t highest = 0;

    (void)state;
    for (unsigned t = 0; t < FENCE_THREADS; t++) {
        args[t] = (fence_arg_t){.highest = &highest, .first = t};
        assert_int_equal(pthread_create(&th[t], NULL, fence_thread, &args[t]), 0);
    }
    for (unsigned t = 0; t < FENCE_THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(args[t].accepted_after_higher, 0);
    }
    assert_int_equal(highest, (uint64_t)(FENCE_TOKENS - 1) * FENCE_THREADS + FENCE_THREADS - 1);
}

static void test_handles_of_a_destroyed_context_return_closed(void **state)
{
    api_fixture_t *f = *state;
    rdlm_lock_h lock;
    rdlm_counter_h counter;
    rdlm_ctx_h ctx;

    assert_int_equal(api_ctx_create(f->job, &ctx), RDLM_OK);
    assert_int_equal(rdlm_lock_open(ctx, "l", &lock), RDLM_OK);
    assert_int_equal(rdlm_counter_open(ctx, "c", &counter), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, 0, NULL), RDLM_OK);
    rdlm_ctx_destroy(ctx); /* releases the lock */
    assert_int_equal(rdlm_lock_acquire(lock, 0, NULL), RDLM_ERR_CLOSED);
    assert_int_equal(rdlm_lock_release(lock), RDLM_ERR_CLOSED);
    assert_int_equal(rdlm_counter_fetch_add(counter, 1, NULL), RDLM_ERR_CLOSED);
}

static void test_node_only_context_reports_not_distributed(void **state)
{
    api_fixture_t *f = *state;
    rdlm_ctx_dist_info_t info;
    rdlm_lock_info_t li;
    rdlm_lock_h lock;

    assert_int_equal(api_ctx_create(f->job, &f->ctx[0]), RDLM_OK);
    memset(&info, 0xff, sizeof(info));
    assert_int_equal(rdlm_ctx_dist_info(f->ctx[0], &info), RDLM_OK);
    assert_int_equal(info.distributed, 0);
    assert_int_equal(info.nodes, 0);
    assert_int_equal(rdlm_ctx_dist_info(NULL, &info), RDLM_ERR_BAD_HANDLE);
    assert_int_equal(rdlm_ctx_dist_info(f->ctx[0], NULL), RDLM_ERR_INVALID_ARG);
    rdlm_transport_stats_t ts;
    assert_int_equal(rdlm_ctx_transport_stats(f->ctx[0], &ts), RDLM_ERR_UNSUPPORTED);
    assert_int_equal(rdlm_lock_open(f->ctx[0], "l", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_query(lock, &li), RDLM_OK);
    assert_int_equal(li.home_node, -1);
}

static void test_standalone_peers_are_validated(void **state)
{
    api_fixture_t *f = *state;
    rdlm_ctx_params_t p = api_params(f->job);
    rdlm_ctx_h ctx = NULL;

    p.field_mask |= RDLM_CTX_FIELD_PEERS;
    p.rank = 1;
    p.size = 1;
    p.rendezvous = "127.0.0.1:7000";
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_ERR_INVALID_ARG);
    p.rank = 0;
    p.rendezvous = "local_host/x:7000";
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_ERR_INVALID_ARG);
    p.rendezvous = NULL;
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_ERR_INVALID_ARG);
    assert_null(ctx);
}

/* rdlm_ctx_create(params) at RDLM_LOG=info, asserted to succeed, with what it logged in
 * lines[len]. */
static void create_with_info_lines(const rdlm_ctx_params_t *params, rdlm_ctx_h *ctx_p,
                                   char *lines, size_t len)
{
    char path[64];
    rdlm_status_t st;
    ssize_t n;
    int fd, saved = dup(STDERR_FILENO);

    snprintf(path, sizeof(path), "/tmp/rdlm_api_fence.%d.log", (int)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, STDERR_FILENO);
    setenv("RDLM_LOG", "info", 1);
    st = rdlm_ctx_create(params, ctx_p);
    unsetenv("RDLM_LOG");
    dup2(saved, STDERR_FILENO);
    close(saved);
    n = pread(fd, lines, len - 1, 0);
    close(fd);
    unlink(path);
    lines[n > 0 ? n : 0] = '\0';
    fputs(lines, stderr);
    assert_int_equal(st, RDLM_OK);
}

static void test_standalone_context_of_one_process(void **state)
{
    api_fixture_t *f = *state;
    rdlm_ctx_params_t p = api_params(f->job);
    rdlm_ctx_dist_info_t info;
    rdlm_lock_info_t li;
    rdlm_stats_t s;
    rdlm_lock_h lock;
    uint64_t t1, t2;
    char addr[32], lines[8192], rank[16];
    const char *dist_line;

    /* A port from the pid: tests run one at a time per build, and a clash only makes
     * this test fail, never hang (the rendezvous is bounded). */
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", 20000 + (int)(getpid() % 20000));
    p.field_mask |= RDLM_CTX_FIELD_PEERS;
    p.rank = 0;
    p.size = 1;
    p.rendezvous = addr;
    create_with_info_lines(&p, &f->ctx[0], lines, sizeof(lines));
    dist_line = strstr(lines, "dist: rank 0/1 ");
    assert_non_null(dist_line);
    while (dist_line > lines && dist_line[-1] != '\n') {
        dist_line--;
    }
    /* "rdlm <time> <host> r0 ...": from the rendezvous alone (main cleared the
     * launchers' variables) */
    assert_int_equal(sscanf(dist_line, "rdlm %*s %*s r%15s", rank), 1);
    assert_string_equal(rank, "0");
    assert_int_equal(rdlm_ctx_dist_info(f->ctx[0], &info), RDLM_OK);
    assert_int_equal(info.distributed, 1);
    assert_int_equal(info.size, 1);
    assert_int_equal(info.nodes, 1);
    assert_int_equal(info.cohort_bound, 64);
    assert_true(info.token_epoch > 0);
    assert_int_equal(rdlm_lock_open(f->ctx[0], "l", &lock), RDLM_OK);
    assert_int_equal(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &t1), RDLM_OK);
    assert_int_equal(t1 >> 40, info.token_epoch);
    assert_int_equal(t1 & ((1ull << 40) - 1), 1); /* the epoch's first sequence */
    assert_int_equal(rdlm_lock_query(lock, &li), RDLM_OK);
    assert_int_equal(li.home_node, 0);
    /* One node: the node-local lock is the whole lock, there is no global word. */
    assert_int_equal(li.node_holds_global, 0);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER);
    assert_int_equal(rdlm_lock_acquire(lock, 0, &t2), RDLM_OK); /* try */
    assert_true(t2 > t1);
    assert_int_equal(rdlm_lock_release(lock), RDLM_OK);
    assert_int_equal(rdlm_ctx_stats(f->ctx[0], &s), RDLM_OK);
    assert_int_equal(s.global_acquires, 0);
    assert_int_equal(s.home_ops, 0);
    assert_int_equal(s.peer_ops, 0);
    /* Nothing went through the transport. */
    rdlm_transport_stats_t ts;
    assert_int_equal(rdlm_ctx_transport_stats(f->ctx[0], &ts), RDLM_OK);
    assert_int_equal(ts.amo, 0);
    assert_int_equal(ts.puts, 0);
    assert_int_equal(rdlm_ctx_transport_stats(f->ctx[0], NULL), RDLM_ERR_INVALID_ARG);
}

int main(void)
{
    static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                                "PMI_RANK", "SLURM_PROCID"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_check_accepts_equal_and_newer_rejects_older),
        cmocka_unit_test(test_fence_check_is_an_atomic_max_under_threads),
        cmocka_unit_test_setup_teardown(test_handles_of_a_destroyed_context_return_closed,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_node_only_context_reports_not_distributed,
                                        api_setup, api_teardown),
        cmocka_unit_test_setup_teardown(test_standalone_peers_are_validated, api_setup,
                                        api_teardown),
        cmocka_unit_test_setup_teardown(test_standalone_context_of_one_process, api_setup,
                                        api_teardown),
    };

    for (size_t i = 0; i < sizeof(launcher_vars) / sizeof(launcher_vars[0]); i++) {
        unsetenv(launcher_vars[i]); /* the rank in log lines is the context's */
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
