/* The fenced store's line protocol (see proto.h). */
#include "proto.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Length of the field at s (up to the first ' ' or the end of the len bytes). */
static size_t proto_field(const char *s, size_t len)
{
    const char *sp = memchr(s, ' ', len);

    return sp == NULL ? len : (size_t)(sp - s);
}

static int proto_is(const char *s, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* Decimal u64, digits only, no overflow. 1 on success. */
static int proto_u64(const char *s, size_t len, uint64_t *v_p)
{
    uint64_t v = 0;

    if (len == 0 || len > 20) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');

        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10) {
            return 0;
        }
        v = v * 10 + d;
    }
    *v_p = v;
    return 1;
}

static int proto_printable(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e) {
            return 0;
        }
    }
    return 1;
}

static size_t proto_reply(char *reply, const char *text)
{
    size_t n = strlen(text);

    memcpy(reply, text, n);
    return n;
}

static size_t proto_write(fstore_t *store, const char *args, size_t len, const char *client,
                          char *reply)
{
    char key[FSTORE_KEY_MAX + 1];
    size_t klen = proto_field(args, len), tlen;
    const char *tok = args + klen + 1, *value;
    uint64_t token, max = 0;
    rdlm_status_t status;

    if (!fstore_name_ok(args, klen, FSTORE_KEY_MAX)) {
        return proto_reply(reply, "ERR bad key\n");
    }
    if (klen == len) {
        return proto_reply(reply, "ERR missing token\n");
    }
    tlen = proto_field(tok, len - klen - 1);
    if (!proto_u64(tok, tlen, &token)) {
        return proto_reply(reply, "ERR bad token\n");
    }
    if (klen + 1 + tlen >= len) {
        return proto_reply(reply, "ERR missing value\n");
    }
    value = tok + tlen + 1;
    len -= klen + 1 + tlen + 1;
    if (len == 0 || len > FSTORE_VALUE_MAX || !proto_printable(value, len)) {
        return proto_reply(reply, "ERR bad value\n");
    }
    memcpy(key, args, klen);
    key[klen] = '\0';
    status = fstore_write(store, key, token, value, len, client, &max);
    switch (status) {
    case RDLM_OK:
        return proto_reply(reply, "OK\n");
    case RDLM_ERR_STALE_TOKEN:
        return (size_t)snprintf(reply, FSTORE_REPLY_MAX, "STALE %" PRIu64 "\n", max);
    case RDLM_ERR_TABLE_FULL:
        return proto_reply(reply, "ERR too many keys\n");
    default:
        return proto_reply(reply, "ERR out of memory\n");
    }
}

static size_t proto_read(const fstore_t *store, const char *args, size_t len, char *reply)
{
    char key[FSTORE_KEY_MAX + 1];
    const char *value;
    uint64_t token;

    if (!fstore_name_ok(args, len, FSTORE_KEY_MAX)) {
        return proto_reply(reply, "ERR bad key\n");
    }
    memcpy(key, args, len);
    key[len] = '\0';
    if (fstore_read(store, key, &token, &value) != RDLM_OK) {
        return proto_reply(reply, "NONE\n");
    }
    return (size_t)snprintf(reply, FSTORE_REPLY_MAX, "VALUE %" PRIu64 " %s\n", token,
                            value);
}

size_t fstore_proto_handle(fstore_t *store, const char *line, size_t len, char *client,
                           char *reply)
{
    size_t clen;
    const char *args;

    if (len > 0 && line[len - 1] == '\r') {
        len--;
    }
    clen = proto_field(line, len);
    if (clen == len) {
        return proto_reply(reply, "ERR missing arguments\n");
    }
    args = line + clen + 1;
    len -= clen + 1;
    if (proto_is(line, clen, "WRITE")) {
        return proto_write(store, args, len, client, reply);
    }
    if (proto_is(line, clen, "READ")) {
        return proto_read(store, args, len, reply);
    }
    if (proto_is(line, clen, "HELLO")) {
        if (!fstore_name_ok(args, len, FSTORE_CLIENT_MAX)) {
            return proto_reply(reply, "ERR bad client name\n");
        }
        memcpy(client, args, len);
        client[len] = '\0';
        return proto_reply(reply, "OK\n");
    }
    return proto_reply(reply, "ERR unknown command\n");
}
