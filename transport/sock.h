/*
 * TCP socket steps shared by the standalone bootstrap (bootstrap_tcp.c) and the links
 * (links.c): every socket is non-blocking and every wait is a poll() bounded by a
 * deadline (rdlm_clock_now_ns), so a missing or stuck peer gives RDLM_ERR_TIMEOUT,
 * never a hang. Private to the transport layer.
 */
#ifndef RDLM_TL_SOCK_H
#define RDLM_TL_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

/** TCP_NODELAY and O_NONBLOCK. */
void rdlm_sock_tune(int fd);

/** Wait until fd is ready for events (POLLIN, POLLOUT), calling idle (if not NULL)
 *  meanwhile: RDLM_OK, RDLM_ERR_TIMEOUT past deadline, RDLM_ERR_PEER_DEAD if idle
 *  said so, RDLM_ERR_IO. */
rdlm_status_t rdlm_sock_wait(int fd, short events, uint64_t deadline,
                             const rdlm_tl_idle_t *idle);

/** Send or receive exactly len bytes: RDLM_ERR_PEER_DEAD when the other end closed or
 *  reset, else as rdlm_sock_wait. */
rdlm_status_t rdlm_sock_send(int fd, const void *buf, size_t len, uint64_t deadline,
                             const rdlm_tl_idle_t *idle);
rdlm_status_t rdlm_sock_recv(int fd, void *buf, size_t len, uint64_t deadline,
                             const rdlm_tl_idle_t *idle);

/** One attempt to connect a new tuned socket to sa by deadline: 0 and *fd_p on
 *  success, else the errno it failed with (ETIMEDOUT past deadline; nothing is left
 *  open), or -1 if no socket could be made (logged). */
int rdlm_sock_connect(const struct sockaddr_in *sa, uint64_t deadline, int *fd_p);

#endif
