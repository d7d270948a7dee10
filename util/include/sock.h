/*
 * TCP socket steps of every TCP connection rdlm makes: the standalone bootstrap and
 * the links (transport/), the lease client's connections to the authority
 * (core/lease/conn.c). Every socket is non-blocking and every wait is a poll()
 * bounded by a deadline (rdlm_clock_now_ns), so a missing or stuck peer gives
 * RDLM_ERR_TIMEOUT, never a hang.
 */
#ifndef RDLM_SOCK_H
#define RDLM_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

/** Called while a wait waits; returns the number of events it handled (the wait then
 *  polls again without sleeping), or a negative value when the wait can only fail
 *  (a process it needs is known to be dead): RDLM_ERR_PEER_DEAD. */
typedef int (*rdlm_idle_func_t)(void *arg);

typedef struct rdlm_idle {
    rdlm_idle_func_t func;
    void *arg;
} rdlm_idle_t;

/** TCP_NODELAY and O_NONBLOCK. */
void rdlm_sock_tune(int fd);

/** Wait until fd is ready for events (POLLIN, POLLOUT), calling idle (if not NULL)
 *  at least every 100 us meanwhile: RDLM_OK, RDLM_ERR_TIMEOUT past deadline,
 *  RDLM_ERR_PEER_DEAD if idle said so, RDLM_ERR_IO (poll failed; logged). */
rdlm_status_t rdlm_sock_wait(int fd, short events, uint64_t deadline,
                             const rdlm_idle_t *idle);

/** The status of a socket call that failed with err: RDLM_ERR_PEER_DEAD for what a
 *  dead, absent or unreachable peer causes (refused, reset, aborted, broken pipe,
 *  unreachable network or host, timed out, not connected), else RDLM_ERR_IO. */
rdlm_status_t rdlm_sock_err_status(int err);

/** Send or receive exactly len bytes: RDLM_ERR_PEER_DEAD when the other end closed,
 *  reset or cannot be reached (*err_p, if not NULL: the errno, or 0 for a close),
 *  else as rdlm_sock_wait. */
rdlm_status_t rdlm_sock_send(int fd, const void *buf, size_t len, uint64_t deadline,
                             const rdlm_idle_t *idle, int *err_p);
rdlm_status_t rdlm_sock_recv(int fd, void *buf, size_t len, uint64_t deadline,
                             const rdlm_idle_t *idle, int *err_p);

/** One attempt to connect a new tuned socket (close-on-exec) to sa by deadline:
 *  RDLM_OK and *fd_p; RDLM_ERR_TIMEOUT past deadline; else rdlm_sock_err_status of
 *  the errno it failed with, which *err_p holds (0 for a timeout). Nothing is left
 *  open on failure. */
rdlm_status_t rdlm_sock_connect(const struct sockaddr_in *sa, uint64_t deadline, int *fd_p,
                                int *err_p);

#endif
