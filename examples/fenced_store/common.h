/*
 * What the fenced store and its client share (common.c): the protocol's limits, the
 * name alphabet, and address parsing. The protocol itself is described in proto.h.
 */
#ifndef FSTORE_COMMON_H
#define FSTORE_COMMON_H

#include <netinet/in.h>
#include <stddef.h>

#define FSTORE_KEY_MAX 64    /**< longest key */
#define FSTORE_CLIENT_MAX 64 /**< longest client name */
#define FSTORE_VALUE_MAX 900 /**< longest value */
#define FSTORE_LINE_MAX 1024 /**< longest request line, '\n' not counted */
#define FSTORE_REPLY_MAX (FSTORE_VALUE_MAX + 64) /**< longest reply, '\n' counted */

/** 1 if s (len bytes) is 1..max bytes of [A-Za-z0-9_.:/-], else 0. */
int fstore_name_ok(const char *s, size_t len, size_t max);

/** Parse "a.b.c.d:port" (port 0..65535). 0, or -1 if malformed. */
int fstore_addr_parse(const char *text, struct sockaddr_in *addr_p);

#endif
