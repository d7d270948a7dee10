/*
 * Errors that name what to fix. RDLM_AUTHORITY at a closed port: rdlm_ctx_create
 * fails with RDLM_ERR_UNAVAILABLE in well under a second (not after its 10 s search
 * for a leader), and the error line says "connection refused at ADDR (is rdlmd
 * running?". A port that accepts and never answers is still waited for, until the
 * session's connect timeout. With UCX_TLS=nonexistent, joining peers over UCX fails
 * with RDLM_ERR_UNSUPPORTED and a line naming UCX_TLS and ucx_info -d. A node-only
 * context's rdlm_ctx_barrier is RDLM_ERR_UNSUPPORTED, its line naming rdlm_ctx_barrier
 * (it named rdlm_ctx_barrier_arrive, the call inside). rdlm_authority_status with a NULL
 * result names that (it said a valid address was not host:port). The lines are read
 * back from RDLM_LOG_FILE.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <rdlm.h>
#include <rdlm/lease.h>

static char log_path[64];

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A socket bound to a free loopback port; listening if listen_too. Its port in *port_p. */
static int bound_socket(int listen_too, unsigned *port_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    if (listen_too) {
        assert_int_equal(listen(fd, 4), 0);
    }
    *port_p = ntohs(sa.sin_port);
    return fd;
}

/* 1 if the log file holds text. */
static int logged(const char *text)
{
    char buf[65536];
    FILE *f = fopen(log_path, "r");
    size_t n;

    if (f == NULL) {
        return 0;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

static void context_barrier_refusal_names_the_call(void **state)
{
    rdlm_ctx_params_t p = {.field_mask = RDLM_CTX_FIELD_JOB, .job = "t-err-barrier"};
    rdlm_ctx_h ctx;

    (void)state;
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_OK);
    assert_int_equal(rdlm_ctx_barrier(ctx), RDLM_ERR_UNSUPPORTED);
    rdlm_ctx_destroy(ctx);
    assert_true(logged("rdlm_ctx_barrier: needs a distributed context"));
}

/* A NULL result pointer is named as such, not blamed on a valid address. */
static void authority_status_names_a_null_result(void **state)
{
    (void)state;
    assert_int_equal(rdlm_authority_status("127.0.0.1:1", 10, NULL), RDLM_ERR_INVALID_ARG);
    assert_true(logged("lease: status: NULL status_p"));
    assert_false(logged("'127.0.0.1:1' is not host:port"));
}

static void authority_at_closed_port_fails_fast_naming_it(void **state)
{
    rdlm_ctx_params_t p = {.field_mask = RDLM_CTX_FIELD_JOB, .job = "t-err-refused"};
    char addr[32], line[96];
    unsigned port;
    int fd = bound_socket(0, &port); /* bound, not listening: connections are refused */
    rdlm_ctx_h ctx;
    uint64_t t0;

    (void)state;
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
    setenv("RDLM_AUTHORITY", addr, 1);
    t0 = now_ms();
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_ERR_UNAVAILABLE);
    assert_true(now_ms() - t0 < 1000);
    unsetenv("RDLM_AUTHORITY");
    close(fd);
    snprintf(line, sizeof(line), "connection refused at %s (is rdlmd running?", addr);
    assert_true(logged(line));
}

static void authority_that_never_answers_is_waited_for(void **state)
{
    rdlm_session_params_t sp = {.field_mask = RDLM_SESSION_FIELD_TIMEOUT,
                                .connect_timeout_ms = 300};
    char addr[32];
    unsigned port;
    int fd = bound_socket(1, &port); /* the kernel accepts; nobody answers */
    rdlm_session_h session;
    uint64_t t0;

    (void)state;
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
    t0 = now_ms();
    assert_int_equal(rdlm_session_open(addr, &sp, &session), RDLM_ERR_UNAVAILABLE);
    assert_true(now_ms() - t0 >= 250);
    close(fd);
}

#if RDLM_TEST_HAVE_UCX
static void ucx_tls_without_a_transport_names_ucx_tls(void **state)
{
    char rendezvous[32];
    unsigned port;
    int fd = bound_socket(0, &port);
    rdlm_ctx_h ctx;

    (void)state;
    close(fd); /* a free port for the one-process rendezvous */
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%u", port);
    rdlm_ctx_params_t p = {.field_mask = RDLM_CTX_FIELD_JOB | RDLM_CTX_FIELD_PEERS,
                           .job = "t-err-ucx",
                           .rank = 0,
                           .size = 1,
                           .rendezvous = rendezvous};
    setenv("UCX_TLS", "nonexistent", 1);
    assert_int_equal(rdlm_ctx_create(&p, &ctx), RDLM_ERR_UNSUPPORTED);
    unsetenv("UCX_TLS");
    assert_true(logged("UCX_TLS=nonexistent"));
    assert_true(logged("'ucx_info -d'"));
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(authority_at_closed_port_fails_fast_naming_it),
        cmocka_unit_test(authority_that_never_answers_is_waited_for),
        cmocka_unit_test(context_barrier_refusal_names_the_call),
        cmocka_unit_test(authority_status_names_a_null_result),
#if RDLM_TEST_HAVE_UCX
        cmocka_unit_test(ucx_tls_without_a_transport_names_ucx_tls),
#endif
    };
    int failed;

    snprintf(log_path, sizeof(log_path), "/tmp/rdlm-api-errors-%d.log", (int)getpid());
    setenv("RDLM_LOG_FILE", log_path, 1); /* before the first configuration load */
    unsetenv("RDLM_TRANSPORT");
    unsetenv("RDLM_UCX_TLS");
    failed = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(log_path);
    return failed;
}
