/*
 * libraft's TCP transport with its address parsing serialized (tcp.h).
 *
 * The mutex is held only for the duration of libraft's listen or connect call: both
 * parse the address first and then only start libuv requests, whose callbacks run
 * later from the loop, so no callback runs under it. It is recursive all the same, so
 * that a libraft version that calls back synchronously cannot deadlock.
 */
#include "tcp.h"

#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t parse_mutex;
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;

static void parse_mutex_init(void)
{
    pthread_mutexattr_t attr;

    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&parse_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
}

static rdlm_lease_tcp_t *tcp_of(struct raft_uv_transport *t)
{
    return (rdlm_lease_tcp_t *)((char *)t - offsetof(rdlm_lease_tcp_t, uv));
}

static int tcp_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    int rv;

    pthread_mutex_lock(&parse_mutex);
    rv = tcp_of(t)->listen(t, cb);
    pthread_mutex_unlock(&parse_mutex);
    return rv;
}

static int tcp_connect(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
                       const char *address, raft_uv_connect_cb cb)
{
    int rv;

    pthread_mutex_lock(&parse_mutex);
    rv = tcp_of(t)->connect(t, req, id, address, cb);
    pthread_mutex_unlock(&parse_mutex);
    return rv;
}

int rdlm_lease_tcp_init(rdlm_lease_tcp_t *tcp, struct uv_loop_s *loop)
{
    int rv;

    pthread_once(&parse_once, parse_mutex_init);
    rv = raft_uv_tcp_init(&tcp->uv, loop);
    if (rv != 0) {
        return rv;
    }
    tcp->listen = tcp->uv.listen;
    tcp->connect = tcp->uv.connect;
    tcp->uv.listen = tcp_listen;
    tcp->uv.connect = tcp_connect;
    return 0;
}

void rdlm_lease_tcp_close(rdlm_lease_tcp_t *tcp)
{
    raft_uv_tcp_close(&tcp->uv);
}
