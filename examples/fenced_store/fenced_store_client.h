/*
 * A client of fenced_store (fenced_store_client.c): one blocking TCP connection, one
 * request at a time, every call bounded by the connection's timeout. Not thread-safe:
 * one thread per connection.
 */
#ifndef FSTORE_CLIENT_H
#define FSTORE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm.h>

typedef struct fstore_client fstore_client_t;

/**
 * Connect to the store at addr ("a.b.c.d:port") and name this connection client in
 * its history (HELLO). Blocking, at most timeout_ms for the connect and for each
 * later request. RDLM_OK; RDLM_ERR_INVALID_ARG (address or name); RDLM_ERR_IO
 * (refused, unreachable, timed out); RDLM_ERR_PROTOCOL; RDLM_ERR_NO_MEMORY.
 */
rdlm_status_t fstore_client_open(const char *addr, const char *client, int timeout_ms,
                                 fstore_client_t **client_p);
void fstore_client_close(fstore_client_t *c);

/**
 * WRITE key token value. RDLM_OK (accepted); RDLM_ERR_STALE_TOKEN (rejected: a larger
 * token was accepted; *max_p, if not NULL, receives it); RDLM_ERR_IO (connection
 * lost or timed out: the connection is unusable, the write may or may not have been
 * decided); RDLM_ERR_PROTOCOL (the store answered ERR or garbage).
 */
rdlm_status_t fstore_client_write(fstore_client_t *c, const char *key, uint64_t token,
                                  const char *value, uint64_t *max_p);

/** READ key into value (cap bytes, NUL-terminated, truncated to fit). RDLM_OK with
 *  *token_p; RDLM_ERR_NOT_FOUND; RDLM_ERR_IO; RDLM_ERR_PROTOCOL. */
rdlm_status_t fstore_client_read(fstore_client_t *c, const char *key, uint64_t *token_p,
                                 char *value, size_t cap);

#endif
