/*
 * A relay between an accepted Raft connection and libraft, capping every length
 * of every message before libraft reserves memory for it (tcp_relay.c).
 *
 * Why
 *   After the handshake (tcp.h) libraft 0.15 (uv_recv.c) reads each message as a
 *   preamble (u64 type | u64 header length), a header of that length, which it
 *   allocates, and a payload whose length the header gives (AppendEntries: the sum
 *   of its entries' sizes; InstallSnapshot: the data length), which it allocates in
 *   one buffer. Anything on a replica's host could have it allocate gigabytes.
 *
 * How
 *   libraft is handed one end of a socketpair(2) (a uv_pipe_t: libraft's receive
 *   path only reads and closes an accepted stream, with generic uv_stream_t calls);
 *   the relay reads the TCP stream, parses the framing as it arrives, and writes
 *   each chunk to the other end once every length in it is within the caps below.
 *   The bytes libraft reads are exactly the peer's. Payloads are streamed, never
 *   held whole; once more than RDLM_LEASE_RELAY_QUEUE_MAX bytes wait for libraft,
 *   the relay stops reading TCP until half of them are read.
 *
 *   message (type)             header length       payload
 *   AppendEntries (1)          48 + 16 n           sum of entry sizes
 *   AppendEntriesResult (2)    24                  -
 *   RequestVote (3)            32 or 40            -
 *   RequestVoteResult (4)      16 or 24            -
 *   InstallSnapshot (5)        56 + conf length    data length
 *   TimeoutNow (6)             24                  -
 *
 *   AppendEntries: n (header word 4) at most RDLM_LEASE_RELAY_ENTRIES_MAX, each
 *   entry's type 1..3, its size a non-zero multiple of 8 (what rdlm and libraft
 *   send) at most RDLM_LEASE_RELAY_ENTRY_MAX, their sum at most
 *   RDLM_LEASE_RELAY_PAYLOAD_MAX. InstallSnapshot: the configuration length (word 4)
 *   a non-zero multiple of 8 (libraft asserts on an empty one) at most
 *   RDLM_LEASE_RELAY_CONF_MAX, the data length at most
 *   RDLM_LEASE_RELAY_PAYLOAD_MAX. A message outside them closes both ends; EOF or an
 *   error on either end closes the other (after what libraft still has to read).
 */
#ifndef RDLM_LEASE_TCP_RELAY_H
#define RDLM_LEASE_TCP_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <uv.h>

/** Most entries in one AppendEntries (its header is then 4 MiB). */
#define RDLM_LEASE_RELAY_ENTRIES_MAX (1u << 18)
/** Largest entry (a command is at most RDLM_LEASE_CMD_MAX, padded to 8). */
#define RDLM_LEASE_RELAY_ENTRY_MAX (64u << 10)
/** Largest snapshot configuration. */
#define RDLM_LEASE_RELAY_CONF_MAX (64u << 10)
/** Largest payload: AppendEntries' entries, or InstallSnapshot's data. */
#define RDLM_LEASE_RELAY_PAYLOAD_MAX (256u << 20)
/** Bytes written to libraft and not yet read beyond which TCP is not read. */
#define RDLM_LEASE_RELAY_QUEUE_MAX (1u << 20)

typedef struct rdlm_lease_relay rdlm_lease_relay_t;

/* Told once, from the loop: a message broke a cap (why names the field). */
typedef void (*rdlm_lease_relay_refused_func_t)(rdlm_lease_relay_t *relay, const char *why);
/* Told once, from the loop: both ends are closed; the relay is the owner's again. */
typedef void (*rdlm_lease_relay_closed_func_t)(rdlm_lease_relay_t *relay);

struct rdlm_lease_relay {
    /* the owner's, untouched here */
    void *owner;
    rdlm_lease_relay_t *prev, *next;
    char peer[INET_ADDRSTRLEN + 6];
    rdlm_lease_relay_refused_func_t refused;
    rdlm_lease_relay_closed_func_t closed;
    /* the relay's */
    uv_tcp_t *tcp; /* the peer's stream (malloc'd, freed at the close) */
    uv_pipe_t out; /* the relay's end of the socketpair */
    char scratch[64];
    size_t queued;    /* bytes written to out and not yet completed */
    unsigned pending; /* handles still to close */
    int paused, ended, closing;
    /* the framing: a stage, the bytes left in it, the word being read */
    int stage;
    uint64_t left, word, index, type, header_len, payload, entries;
    unsigned word_bytes;
};

/* Relay tcp (accepted, handshake read, reading stopped; malloc'd) to a new stream
 * on fds[0] returned in *libraft_p (raft_malloc'd, for libraft's accept callback,
 * which owns it), through fds[1]; fds are the two ends of a new AF_UNIX
 * SOCK_STREAM socketpair. The caller sets relay's owner fields; the relay owns tcp
 * and fds from here, whatever the result. Non-blocking, loop thread. Returns 0, or
 * a libuv error (no stream for libraft: the relay is closing, and closed is called
 * once it is closed). */
int rdlm_lease_relay_start(rdlm_lease_relay_t *relay, uv_tcp_t *tcp, const int fds[2],
                           uv_stream_t **libraft_p);

/* Close both ends (pending writes dropped); closed is called once they are closed.
 * Idempotent. Loop thread. */
void rdlm_lease_relay_close(rdlm_lease_relay_t *relay);

#endif
