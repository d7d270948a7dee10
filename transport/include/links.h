/*
 * Links: TCP connections of a context's own between chosen processes, for short
 * messages that should not queue behind a transport's progress engine. The collective
 * barrier's node leaders use them for their dissemination rounds where UCX would carry
 * them over TCP anyway (core/global/barrier.c): a message then costs a send() and a
 * recv() on a socket the waiter spins on, without UCX's epoll_wait per poll and its
 * protocol headers.
 *
 * A context's links are numbered by round k = 0 .. n - 1: link k goes out of this
 * process to to[k] and comes in from from[k]; every process with links passes the same
 * n, and process to[k]'s from[k] is this one (a dissemination). On a link, each
 * message is one 64-bit value; messages of one link arrive in order, whole.
 *
 * Making them (rdlm_links_open, collective over the bootstrap):
 *   1. each process with links listens on a fresh TCP port on every interface;
 *   2. allgather: its vote (1: it wants links), the port, a random nonce and up to
 *      RDLM_LINKS_ADDRS of its host's IPv4 addresses (rdlm_host_addrs: loopback last);
 *   3. if some process voted 0, nobody makes links (RDLM_ERR_UNSUPPORTED);
 *   4. connect link k to to[k]'s addresses in order until one answers (at most 1 s
 *      each), and send a hello {magic, k, own rank, to[k]'s nonce}. A link whose two
 *      ends are one pair both ways (to[k] == from[k]: 2^(k+1) is a multiple of the
 *      processes, as in the last round of a power of two) is one connection, made by
 *      the lower rank: its data carries the other direction's acknowledgements, so
 *      the kernel handles half the segments;
 *   5. accept the in-links: a hello with the own nonce, k < n and from[k]'s rank
 *      takes in-link k and is answered {magic, k, own rank, the sender's nonce};
 *      anything else is closed (a warning). The nonce travels only in the bootstrap,
 *      so no other process can take a link's place; the listening socket is closed;
 *   6. read the answer on each out-link (a connection that reached some other
 *      process's port is not answered so);
 *   7. allgather whether every step worked: if some process failed, all close their
 *      links (RDLM_ERR_UNSUPPORTED; the failure was logged where it happened), so
 *      either every process has its links or none has.
 * Steps 4-6 never wait for each other: a connect completes in the listener's accept
 * queue, and answers are read only after accepting. Each is bounded by timeout_ms.
 *
 * Not thread-safe: one thread at a time uses a process's links.
 */
#ifndef RDLM_TL_LINKS_H
#define RDLM_TL_LINKS_H

#include <stdint.h>

#include <rdlm/status.h>

#include "bootstrap.h"

#define RDLM_LINKS_ADDRS 4u
#define RDLM_LINKS_MAX 32u

typedef struct rdlm_links rdlm_links_t;

/**
 * Collective over boot: every process calls it, one with no links with n = 0 (it only
 * takes part in the allgathers). want: this process's vote (a process without links
 * votes too). idle is passed to the
 * bootstrap's collectives. On RDLM_OK every process with n > 0 has *links_p (NULL for
 * n = 0); RDLM_ERR_UNSUPPORTED: no process has links (a vote of 0, or a link that
 * could not be made); other errors are the bootstrap's (the context cannot go on).
 * n <= RDLM_LINKS_MAX.
 */
rdlm_status_t rdlm_links_open(const rdlm_tl_bootstrap_t *boot, const rdlm_tl_idle_t *idle,
                              int want, const uint32_t *to, const uint32_t *from,
                              uint32_t n, uint32_t timeout_ms, rdlm_links_t **links_p);

/** Send value on out-link k. RDLM_ERR_PEER_DEAD if the receiver's end closed; never
 *  blocks for long (an 8-byte message fits the socket buffer; a full one is waited
 *  for up to 10 s, then RDLM_ERR_TIMEOUT). */
rdlm_status_t rdlm_links_send(rdlm_links_t *l, uint32_t k, uint64_t value);

/** Receive the next message of in-link k if one arrived whole: RDLM_OK with *got_p 1
 *  and *value_p, or *got_p 0; RDLM_ERR_PEER_DEAD (logged once) if the sender's end
 *  closed. Non-blocking. */
rdlm_status_t rdlm_links_recv(rdlm_links_t *l, uint32_t k, int *got_p, uint64_t *value_p);

/** The socket of in-link k, to poll() for POLLIN while waiting. */
int rdlm_links_fd(const rdlm_links_t *l, uint32_t k);

/** Shut every link down both ways (the process stays the links' owner): the other
 *  ends read end of stream, as if this process had died, and this process's own
 *  sends and receives fail with RDLM_ERR_PEER_DEAD from now on. For a process that
 *  gives up on its partners, so that they learn of it at once. */
void rdlm_links_shutdown(rdlm_links_t *l);

/** Close and free; NULL is a no-op. */
void rdlm_links_close(rdlm_links_t *l);

#endif
