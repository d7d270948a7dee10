/*
 * The fenced store's line protocol (proto.c). One request per line, '\n'-terminated
 * (a '\r' before it is ignored), at most FSTORE_LINE_MAX bytes without the '\n':
 *
 *   HELLO <client>                 -> OK              names this connection in the
 *                                                     history (default: peer ip:port)
 *   WRITE <key> <token> <value>    -> OK | STALE <max>
 *   READ <key>                     -> VALUE <token> <value> | NONE
 *   anything else                  -> ERR <reason>
 *
 * key and client: 1..64 bytes of [A-Za-z0-9_.:/-]; token: a decimal u64 (no sign, no
 * leading '+', no overflow); value: the rest of the line, 1..FSTORE_VALUE_MAX
 * printable ASCII bytes (spaces allowed). Fields are separated by exactly one space.
 * Every reply is one line of at most FSTORE_REPLY_MAX bytes, '\n' included.
 */
#ifndef FSTORE_PROTO_H
#define FSTORE_PROTO_H

#include <stddef.h>

#include "common.h"
#include "store.h"

/**
 * Handle one request line (len bytes, no '\n'; may contain any byte) against store.
 * client (FSTORE_CLIENT_MAX + 1 bytes) is the connection's name; HELLO replaces it.
 * Writes the reply line into reply (FSTORE_REPLY_MAX bytes) and returns its length.
 * Never fails: bad input gets an ERR reply and changes nothing.
 */
size_t fstore_proto_handle(fstore_t *store, const char *line, size_t len, char *client,
                           char *reply);

#endif
