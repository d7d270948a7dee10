/*
 * The relay between a Raft connection and libraft (tcp_relay.h).
 *
 * Framing: every stage (preamble, header, payload) and every header field is a
 * whole number of 8-byte little-endian words (the header lengths the caps accept
 * are multiples of 8), so the parser reads preamble and header word by word and
 * skips payloads in bulk. A chunk read from TCP is written to libraft only after
 * all of it parsed: libraft cannot act on bytes it has not received, so it never
 * sees a length that was not checked.
 */
#include "tcp_relay.h"

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <raft.h>

#include "log.h"

#define RDLM_LEASE_RELAY_CHUNK (64u << 10)

enum { RELAY_PREAMBLE, RELAY_HEADER, RELAY_PAYLOAD };

/* One chunk read from TCP, then written to libraft. */
typedef struct {
    uv_write_t req;
    rdlm_lease_relay_t *relay;
    size_t len;
    char data[RDLM_LEASE_RELAY_CHUNK];
} rdlm_lease_relay_chunk_t;

/* ---- framing ---------------------------------------------------------------- */

static void relay_stage(rdlm_lease_relay_t *r, int stage, uint64_t len)
{
    r->stage = stage;
    r->left = len;
    r->index = 0;
}

/* The preamble's word r->index is complete: NULL if acceptable. */
static const char *relay_preamble_word(rdlm_lease_relay_t *r)
{
    uint64_t h = r->word;

    if (r->index == 0) {
        r->type = h;
        return h >= RAFT_IO_APPEND_ENTRIES && h <= RAFT_IO_TIMEOUT_NOW
                   ? NULL
                   : "unknown message type";
    }
    r->header_len = h;
    switch (r->type) {
    case RAFT_IO_APPEND_ENTRIES:
        return h >= 48 && (h - 48) % 16 == 0 &&
                       (h - 48) / 16 <= RDLM_LEASE_RELAY_ENTRIES_MAX
                   ? NULL
                   : "AppendEntries header length out of range";
    case RAFT_IO_INSTALL_SNAPSHOT:
        return h > 56 && h % 8 == 0 && h - 56 <= RDLM_LEASE_RELAY_CONF_MAX
                   ? NULL
                   : "InstallSnapshot header length out of range";
    case RAFT_IO_REQUEST_VOTE:
        return h == 32 || h == 40 ? NULL : "RequestVote header length out of range";
    case RAFT_IO_REQUEST_VOTE_RESULT:
        return h == 16 || h == 24 ? NULL : "RequestVoteResult header length out of range";
    default: /* AppendEntriesResult, TimeoutNow */
        return h == 24 ? NULL : "message header length out of range";
    }
}

/* AppendEntries' header word r->index is complete: NULL if acceptable. */
static const char *relay_append_word(rdlm_lease_relay_t *r)
{
    uint64_t size = r->word >> 32, type = r->word & 0xff;

    if (r->index == 4) {
        r->entries = r->word;
        return r->entries <= RDLM_LEASE_RELAY_ENTRIES_MAX &&
                       48 + 16 * r->entries == r->header_len
                   ? NULL
                   : "AppendEntries entry count does not match its header length";
    }
    if (r->index < 5 || r->index >= 5 + 2 * r->entries || (r->index - 5) % 2 == 0) {
        return NULL; /* terms, indexes, the trailing word */
    }
    if (type < RAFT_COMMAND || type > RAFT_CHANGE) {
        return "AppendEntries entry type unknown";
    }
    if (size == 0 || size % 8 != 0 || size > RDLM_LEASE_RELAY_ENTRY_MAX) {
        return "AppendEntries entry size out of range";
    }
    r->payload += size;
    return r->payload <= RDLM_LEASE_RELAY_PAYLOAD_MAX ? NULL
                                                      : "AppendEntries entries too large";
}

/* InstallSnapshot's header word r->index is complete: NULL if acceptable. */
static const char *relay_snapshot_word(rdlm_lease_relay_t *r)
{
    if (r->index == 4) {
        return 56 + r->word == r->header_len ? NULL
                                             : "InstallSnapshot configuration length does "
                                               "not match its header length";
    }
    if (r->index != 5 + (r->header_len - 56) / 8) {
        return NULL;
    }
    r->payload = r->word;
    return r->payload <= RDLM_LEASE_RELAY_PAYLOAD_MAX
               ? NULL
               : "InstallSnapshot data length out of range";
}

/* A word is complete: check it, and move on at the end of its stage. */
static const char *relay_word(rdlm_lease_relay_t *r)
{
    const char *why = NULL;

    if (r->stage == RELAY_PREAMBLE) {
        why = relay_preamble_word(r);
    } else if (r->type == RAFT_IO_APPEND_ENTRIES) {
        why = relay_append_word(r);
    } else if (r->type == RAFT_IO_INSTALL_SNAPSHOT) {
        why = relay_snapshot_word(r);
    }
    r->word = 0;
    r->word_bytes = 0;
    r->index++;
    if (why != NULL || r->left > 0) {
        return why;
    }
    if (r->stage == RELAY_PREAMBLE) {
        r->payload = 0;
        relay_stage(r, RELAY_HEADER, r->header_len);
    } else if (r->payload > 0) {
        relay_stage(r, RELAY_PAYLOAD, r->payload);
    } else {
        relay_stage(r, RELAY_PREAMBLE, 16);
    }
    return NULL;
}

/* Parse n bytes of the stream: NULL if every length in them is acceptable. */
static const char *relay_parse(rdlm_lease_relay_t *r, const uint8_t *p, size_t n)
{
    const char *why;

    while (n > 0) {
        if (r->stage == RELAY_PAYLOAD) {
            size_t k = r->left < n ? (size_t)r->left : n;

            p += k;
            n -= k;
            r->left -= k;
            if (r->left == 0) {
                relay_stage(r, RELAY_PREAMBLE, 16);
            }
            continue;
        }
        r->word |= (uint64_t)*p++ << (8 * r->word_bytes++);
        n--;
        r->left--;
        if (r->word_bytes == 8 && (why = relay_word(r)) != NULL) {
            return why;
        }
    }
    return NULL;
}

/* ---- the two ends ------------------------------------------------------------- */

static void relay_handle_closed(uv_handle_t *handle)
{
    rdlm_lease_relay_t *r = handle->data;

    if (--r->pending == 0) {
        free(r->tcp);
        r->closed(r);
    }
}

void rdlm_lease_relay_close(rdlm_lease_relay_t *r)
{
    if (r->closing) {
        return;
    }
    r->closing = 1;
    r->pending = 2;
    uv_close((uv_handle_t *)r->tcp, relay_handle_closed);
    uv_close((uv_handle_t *)&r->out, relay_handle_closed);
}

static void relay_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    rdlm_lease_relay_chunk_t *c = malloc(sizeof(*c));

    (void)handle;
    (void)suggested;
    *buf = c != NULL ? uv_buf_init(c->data, sizeof(c->data)) : uv_buf_init(NULL, 0);
}

static void relay_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

static void relay_written(uv_write_t *req, int status)
{
    rdlm_lease_relay_chunk_t *c = (rdlm_lease_relay_chunk_t *)req;
    rdlm_lease_relay_t *r = c->relay;

    r->queued -= c->len;
    free(c);
    if (r->closing) {
        return;
    }
    if (status < 0) {
        rdlm_debug("lease: raft relay for %s: write: %s", r->peer, uv_strerror(status));
        rdlm_lease_relay_close(r);
    } else if (r->ended && r->queued == 0) {
        rdlm_lease_relay_close(r);
    } else if (r->paused && r->queued <= RDLM_LEASE_RELAY_QUEUE_MAX / 2) {
        r->paused = 0;
        uv_read_start((uv_stream_t *)r->tcp, relay_alloc, relay_read);
    }
}

static void relay_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    rdlm_lease_relay_t *r = stream->data;
    rdlm_lease_relay_chunk_t *c =
        buf->base != NULL
            ? (rdlm_lease_relay_chunk_t *)(buf->base -
                                           offsetof(rdlm_lease_relay_chunk_t, data))
            : NULL;
    const char *why;
    uv_buf_t out;

    if (nread <= 0) {
        free(c);
        if (nread < 0) {
            rdlm_debug("lease: raft relay for %s: %s", r->peer, uv_strerror((int)nread));
            r->ended = 1;
            uv_read_stop(stream);
            if (r->queued == 0) {
                rdlm_lease_relay_close(r);
            }
        }
        return;
    }
    why = relay_parse(r, (const uint8_t *)buf->base, (size_t)nread);
    if (why != NULL) {
        free(c);
        r->refused(r, why);
        rdlm_lease_relay_close(r);
        return;
    }
    c->relay = r;
    c->len = (size_t)nread;
    out = uv_buf_init(c->data, (unsigned)nread);
    if (uv_write(&c->req, (uv_stream_t *)&r->out, &out, 1, relay_written) != 0) {
        free(c);
        rdlm_lease_relay_close(r);
        return;
    }
    r->queued += c->len;
    if (r->queued > RDLM_LEASE_RELAY_QUEUE_MAX) {
        r->paused = 1;
        uv_read_stop(stream);
    }
}

/* libraft's end is never written to: anything read from it, or its EOF, closes. */
static void relay_out_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    rdlm_lease_relay_t *r = handle->data;

    (void)suggested;
    *buf = uv_buf_init(r->scratch, sizeof(r->scratch));
}

static void relay_out_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    rdlm_lease_relay_t *r = stream->data;

    (void)buf;
    if (nread != 0) {
        rdlm_debug("lease: raft relay for %s: libraft closed its end", r->peer);
        rdlm_lease_relay_close(r);
    }
}

static void relay_pipe_free(uv_handle_t *handle)
{
    raft_free(handle);
}

/* A pipe handle on fd, for libraft (raft_malloc'd, it frees it), or NULL. */
static uv_pipe_t *relay_libraft_end(uv_loop_t *loop, int fd)
{
    uv_pipe_t *pipe = raft_malloc(sizeof(*pipe));

    if (pipe == NULL) {
        close(fd);
        return NULL;
    }
    uv_pipe_init(loop, pipe, 0);
    if (uv_pipe_open(pipe, fd) != 0) {
        close(fd);
        uv_close((uv_handle_t *)pipe, relay_pipe_free);
        return NULL;
    }
    return pipe;
}

int rdlm_lease_relay_start(rdlm_lease_relay_t *r, uv_tcp_t *tcp, const int fds[2],
                           uv_stream_t **libraft_p)
{
    uv_pipe_t *pipe;
    int rv;

    r->tcp = tcp;
    r->queued = 0;
    r->pending = 0;
    r->paused = r->ended = r->closing = 0;
    r->word = 0;
    r->word_bytes = 0;
    relay_stage(r, RELAY_PREAMBLE, 16);
    tcp->data = r;
    uv_pipe_init(tcp->loop, &r->out, 0);
    r->out.data = r;
    rv = uv_pipe_open(&r->out, fds[1]);
    if (rv != 0) {
        close(fds[0]);
        close(fds[1]);
        goto err_close;
    }
    pipe = relay_libraft_end(tcp->loop, fds[0]);
    if (pipe == NULL) {
        rv = UV_ENOMEM;
        goto err_close;
    }
    uv_read_start((uv_stream_t *)tcp, relay_alloc, relay_read);
    uv_read_start((uv_stream_t *)&r->out, relay_out_alloc, relay_out_read);
    *libraft_p = (uv_stream_t *)pipe;
    return 0;

err_close:
    rdlm_lease_relay_close(r);
    return rv;
}
