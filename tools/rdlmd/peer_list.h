/*
 * rdlmd's --peers list (peers.c): "ID=RAFTADDR=CLIENTADDR[,...]", RAFTADDR an IPv4
 * "a.b.c.d:port" (raft 0.15 resolves no names), CLIENTADDR "host:port" with an IPv4
 * address or a host name. Ids and the presence of this replica are checked by the
 * replica.
 */
#ifndef RDLM_DAEMON_PEER_LIST_H
#define RDLM_DAEMON_PEER_LIST_H

#include "replica.h"

/** Parse text into peers (at most RDLM_LEASE_PEERS_MAX). 1 with *n_p, or 0 with one
 *  line naming the bad entry on stderr (cli.h). */
int rdlm_daemon_peers_parse(const char *text, rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX],
                            unsigned *n_p);

#endif
