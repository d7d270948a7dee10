/* What the fenced store and its client share (see common.h). */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fstore_name_ok(const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '/' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

int fstore_addr_parse(const char *text, struct sockaddr_in *addr_p)
{
    char host[INET_ADDRSTRLEN];
    const char *colon = strrchr(text, ':');
    char *end;
    unsigned long port;

    if (colon == NULL || (size_t)(colon - text) >= sizeof(host) || colon[1] < '0' ||
        colon[1] > '9') {
        return -1;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || port > 65535) {
        return -1;
    }
    memset(addr_p, 0, sizeof(*addr_p));
    addr_p->sin_family = AF_INET;
    addr_p->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &addr_p->sin_addr) == 1 ? 0 : -1;
}
