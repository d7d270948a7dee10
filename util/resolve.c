/* Host names to IPv4 socket addresses (resolve.h). */
#include "resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

int rdlm_addr_is_ip(const char *host)
{
    struct in_addr ip;

    return inet_pton(AF_INET, host, &ip) == 1;
}

/* The status of a getaddrinfo error. */
static rdlm_status_t rdlm_addr_gai_status(int err)
{
    switch (err) {
    case EAI_AGAIN:
        return RDLM_ERR_TIMEOUT;
    case EAI_MEMORY:
        return RDLM_ERR_NO_MEMORY;
    case EAI_SYSTEM:
        return RDLM_ERR_IO;
    default:
        return RDLM_ERR_BAD_CONFIG; /* EAI_NONAME, EAI_NODATA, EAI_FAIL, ... */
    }
}

rdlm_status_t rdlm_addr_resolve(const char *what, const char *host, uint16_t port,
                                rdlm_log_level_t level, struct sockaddr_in *sa_p)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    struct addrinfo *res;
    int err;

    if (inet_pton(AF_INET, host, &sa.sin_addr) == 1) {
        *sa_p = sa;
        return RDLM_OK;
    }
    err = getaddrinfo(host, NULL, &hints, &res);
    if (err != 0) {
        rdlm_log(level, "%s: cannot resolve host '%s': %s", what, host, gai_strerror(err));
        return rdlm_addr_gai_status(err);
    }
    sa.sin_addr = ((const struct sockaddr_in *)(const void *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    *sa_p = sa;
    return RDLM_OK;
}

int rdlm_addr_is_loopback(uint32_t a)
{
    return (ntohl(a) >> 24) == 127;
}

rdlm_status_t rdlm_host_addrs(uint32_t *addrs, unsigned max, unsigned *n_p)
{
    struct ifaddrs *ifs;
    unsigned n = 0;

    if (getifaddrs(&ifs) != 0) {
        rdlm_error("getifaddrs: %s", strerror(errno));
        return RDLM_ERR_IO;
    }
    for (int loopback = 0; loopback <= 1; loopback++) {
        for (const struct ifaddrs *i = ifs; i != NULL && n < max; i = i->ifa_next) {
            uint32_t a;

            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
                !(i->ifa_flags & IFF_UP)) {
                continue;
            }
            a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
            if (rdlm_addr_is_loopback(a) == loopback) {
                addrs[n++] = a;
            }
        }
    }
    freeifaddrs(ifs);
    *n_p = n;
    return RDLM_OK;
}
