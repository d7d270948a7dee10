/*
 * The guarded libraft TCP transport (core/lease/authority/tcp.h): replicas on different
 * threads of one process each reach their own listener. Two threads each listen on their
 * own port and, at the same time, connect to it 2000 times, one connection after another;
 * every connect must succeed and every connection a listener accepts must come from its own
 * thread's id. With the guard removed, libraft's strtok-based address parsing is shared
 * between the threads: under ThreadSanitizer (the CI's TSan run of the lease label) this
 * test then failed 5 runs of 5 here, by a race report or a failed connect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uv.h>

#include "tcp.h"

#define N_THREADS 2
#define N_CONNECTS 2000
#define DEADLINE_MS 10000

typedef struct side {
    raft_id id;
    char address[64];
    pthread_barrier_t *start;
    uv_loop_t loop;
    uv_timer_t deadline;
    rdlm_lease_tcp_t tcp;
    struct raft_uv_connect req[N_CONNECTS];
    int connected, connect_failed;
    int accepted, accepted_foreign;
    int timed_out, closed;
} side_t;

static unsigned short free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

static void maybe_done(side_t *s)
{
    if (s->connected + s->connect_failed == N_CONNECTS && s->accepted == s->connected) {
        uv_stop(&s->loop);
    }
}

static void on_connect(struct raft_uv_connect *req, struct uv_stream_s *stream, int status);

/* One connection in flight at a time (libraft listens with a short backlog): the next
 * connect starts when the previous one was accepted. */
static void next_connect(side_t *s)
{
    int i = s->connected + s->connect_failed;

    if (i < N_CONNECTS) {
        s->req[i].data = s;
        if (s->tcp.uv.connect(&s->tcp.uv, &s->req[i], s->id, s->address, on_connect) != 0) {
            s->connect_failed = N_CONNECTS;
            uv_stop(&s->loop);
        }
    }
}

static void on_accept(struct raft_uv_transport *t, raft_id id, const char *address,
                      struct uv_stream_s *stream)
{
    side_t *s = t->data;

    (void)address;
    s->accepted++;
    if (id != s->id) {
        s->accepted_foreign++;
    }
    uv_close((uv_handle_t *)stream, free_handle);
    next_connect(s);
    maybe_done(s);
}

static void on_connect(struct raft_uv_connect *req, struct uv_stream_s *stream, int status)
{
    side_t *s = req->data;

    if (status == 0) {
        s->connected++;
        uv_close((uv_handle_t *)stream, free_handle);
    } else {
        s->connect_failed++;
    }
    maybe_done(s);
}

static void on_deadline(uv_timer_t *t)
{
    side_t *s = t->data;

    s->timed_out = 1;
    uv_stop(&s->loop);
}

static void on_closed(struct raft_uv_transport *t)
{
    ((side_t *)t->data)->closed = 1;
}

static void close_handle(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h)) {
        uv_close(h, NULL);
    }
}

/* Worker: records only; the main thread asserts (cmocka is not thread-safe). */
static void *run_side(void *arg)
{
    side_t *s = arg;

    if (uv_loop_init(&s->loop) != 0 || rdlm_lease_tcp_init(&s->tcp, &s->loop) != 0) {
        s->connect_failed = N_CONNECTS;
        pthread_barrier_wait(s->start);
        return NULL;
    }
    s->tcp.uv.data = s;
    uv_timer_init(&s->loop, &s->deadline);
    s->deadline.data = s;
    uv_timer_start(&s->deadline, on_deadline, DEADLINE_MS, 0);
    if (s->tcp.uv.init(&s->tcp.uv, s->id, s->address) != 0 ||
        s->tcp.uv.listen(&s->tcp.uv, on_accept) != 0) {
        s->connect_failed = N_CONNECTS;
    }
    pthread_barrier_wait(s->start);
    if (s->connect_failed == 0) {
        next_connect(s);
        uv_run(&s->loop, UV_RUN_DEFAULT);
    }
    s->tcp.uv.close(&s->tcp.uv, on_closed);
    uv_walk(&s->loop, close_handle, NULL);
    for (int i = 0; i < 1000 && uv_run(&s->loop, UV_RUN_NOWAIT) != 0; i++) {
        usleep(1000);
    }
    rdlm_lease_tcp_close(&s->tcp);
    uv_loop_close(&s->loop);
    return NULL;
}

static void each_listener_hears_only_its_own_thread(void **state)
{
    side_t sides[N_THREADS];
    pthread_t th[N_THREADS];
    pthread_barrier_t start;

    (void)state;
    memset(sides, 0, sizeof(sides));
    pthread_barrier_init(&start, NULL, N_THREADS);
    for (int i = 0; i < N_THREADS; i++) {
        sides[i].id = (raft_id)(i + 1);
        sides[i].start = &start;
        snprintf(sides[i].address, sizeof(sides[i].address), "127.0.0.1:%u", free_port());
    }
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, run_side, &sides[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&start);
    for (int i = 0; i < N_THREADS; i++) {
        print_message("%s: %d connected, %d failed, %d accepted (%d foreign)\n",
                      sides[i].address, sides[i].connected, sides[i].connect_failed,
                      sides[i].accepted, sides[i].accepted_foreign);
        assert_false(sides[i].timed_out);
        assert_int_equal(sides[i].connect_failed, 0);
        assert_int_equal(sides[i].connected, N_CONNECTS);
        assert_int_equal(sides[i].accepted, N_CONNECTS);
        assert_int_equal(sides[i].accepted_foreign, 0);
        assert_true(sides[i].closed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_listener_hears_only_its_own_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
