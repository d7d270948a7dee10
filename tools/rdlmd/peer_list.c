/*
 * rdlmd's --peers list (peer_list.h).
 */
#include "peer_list.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Copy the n bytes at text into out (RDLM_ADDR_MAX + 1) if they are "host:port", the
 * host an IPv4 address (raft 0.15 takes no names) or, with names, also a host name. */
static int rdlm_daemon_addr(const char *text, size_t n, int names,
                            char out[RDLM_ADDR_MAX + 1])
{
    if (n == 0 || n > RDLM_ADDR_MAX) {
        return 0;
    }
    memcpy(out, text, n);
    out[n] = '\0';
    return names ? rdlm_config_hostport_parse(out, NULL, NULL)
                 : rdlm_config_addr_parse(out, NULL, NULL);
}

/* One "ID=RAFTADDR=CLIENTADDR" entry of n bytes. */
static int rdlm_daemon_peer(const char *text, size_t n, rdlm_lease_peer_t *peer)
{
    const char *end = text + n;
    const char *eq1 = memchr(text, '=', n);
    const char *eq2 = eq1 != NULL ? memchr(eq1 + 1, '=', (size_t)(end - eq1 - 1)) : NULL;
    char *stop;

    if (eq2 == NULL || text[0] < '1' || text[0] > '9') {
        return 0;
    }
    peer->id = strtoull(text, &stop, 10);
    return stop == eq1 &&
           rdlm_daemon_addr(eq1 + 1, (size_t)(eq2 - eq1 - 1), 0, peer->raft_addr) &&
           rdlm_daemon_addr(eq2 + 1, (size_t)(end - eq2 - 1), 1, peer->client_addr);
}

int rdlm_daemon_peers_parse(const char *text, rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX],
                            unsigned *n_p)
{
    unsigned n = 0;

    for (;;) {
        size_t len = strcspn(text, ",");

        if (n == RDLM_LEASE_PEERS_MAX) {
            rdlm_cli_usage_error("rdlmd", "more than %u peers", RDLM_LEASE_PEERS_MAX);
            return 0;
        }
        if (!rdlm_daemon_peer(text, len, &peers[n])) {
            rdlm_cli_usage_error("rdlmd", "peer '%.*s' is not ID=a.b.c.d:port=host:port",
                                 (int)len, text);
            return 0;
        }
        n++;
        if (text[len] == '\0') {
            break;
        }
        text += len + 1;
    }
    *n_p = n;
    return 1;
}
