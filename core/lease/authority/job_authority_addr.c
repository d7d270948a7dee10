/* Addresses and reserved ports of an in-job authority replica (job_authority_addr.h). */
#include "job_authority_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "resolve.h"

/* 1 if the IPv4 address a (network order) is inside net/len. */
static int rdlm_lease_in_net(uint32_t a, uint32_t net, unsigned len)
{
    uint32_t mask = len == 0 ? 0 : htonl(~0u << (32 - len));

    return (a & mask) == (net & mask);
}

rdlm_status_t rdlm_lease_host_ip(const char *net, char ip[INET_ADDRSTRLEN])
{
    uint32_t addrs[64], net_ip = 0, found = htonl(INADDR_LOOPBACK);
    unsigned len = 0, n, i;
    const int any = net[0] == '\0';

    if (!any && !rdlm_config_net_parse(net, &net_ip, &len)) {
        rdlm_error("lease: RDLM_JOB_AUTHORITY_NET=\"%s\" is not a.b.c.d[/len]", net);
        return RDLM_ERR_BAD_CONFIG;
    }
    if (rdlm_host_addrs(addrs, 64, &n) != RDLM_OK) {
        return RDLM_ERR_IO;
    }
    /* any: the first address other than loopback (they come first), else 127.0.0.1 */
    for (i = 0; i < n && !(any ? !rdlm_addr_is_loopback(addrs[i])
                               : rdlm_lease_in_net(addrs[i], net_ip, len));
         i++) {
    }
    if (i < n) {
        found = addrs[i];
    } else if (!any) {
        rdlm_error("lease: no up interface of this host has an address in "
                   "RDLM_JOB_AUTHORITY_NET=%s",
                   net);
        return RDLM_ERR_BAD_CONFIG;
    }
    inet_ntop(AF_INET, &found, ip, INET_ADDRSTRLEN);
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_port_reserve(const char *ip, rdlm_lease_port_t *port_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sa_len = sizeof(sa);
    int fd, on = 1;

    port_p->fd = -1;
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
        rdlm_error("lease: '%s' is not an IPv4 address", ip);
        return RDLM_ERR_INVALID_ARG;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sa_len) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) {
        rdlm_error("lease: reserving a TCP port on %s: %s", ip, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return RDLM_ERR_IO;
    }
    port_p->fd = fd;
    snprintf(port_p->addr, sizeof(port_p->addr), "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    return RDLM_OK;
}

void rdlm_lease_port_release(rdlm_lease_port_t *port)
{
    if (port->fd >= 0) {
        close(port->fd);
        port->fd = -1;
    }
}
