/*
 * rdlmd: one replica of the rdlm lease authority (core/lease/authority/include/replica.h)
 * with its client port (core/lease/authority/include/server.h), configured by flags only.
 * SIGTERM or SIGINT closes it cleanly (exit 0); a bad flag prints one line (exit 2); a
 * replica that cannot start exits 1 (a data directory too small, read-only or not writable
 * included, one another rdlmd holds, or one made for other --peers); a replica whose data
 * directory vanished (replica.h on_fault: its log is gone) stops and exits 3, and one whose
 * log write failed exits 3 at once (core/lease/authority/append_guard.h). --version prints
 * the version. Logs go to stderr, or to RDLM_LOG_FILE (util/include/log.h); leadership
 * changes, stepping down and expiries are logged at info or warn.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "home_server.h"
#include "peer_list.h"
#include "replica.h"
#include "server.h"

typedef struct rdlm_daemon_opts {
    rdlm_lease_replica_params_t replica;
    rdlm_lease_server_params_t server;
    rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX];
    unsigned home_slots; /* 0: host no lock home */
    rdlm_log_level_t log_level;
} rdlm_daemon_opts_t;

/* Client tags of a home: one per client context that used it since it started. */
#define RDLM_DAEMON_HOME_TAGS 65536u

typedef struct rdlm_daemon {
    uv_signal_t signals[2];
    rdlm_lease_replica_t *rep;
    rdlm_lease_server_t *srv;
    rdlm_svc_home_t *home;
    int stopping;
} rdlm_daemon_t;

static void rdlm_daemon_usage(FILE *out)
{
    fputs("usage: rdlmd --id N --peers ID=RAFTADDR=CLIENTADDR[,...] --data-dir DIR\n"
          "             [--listen host:port] [--election-timeout-ms 1000]\n"
          "             [--heartbeat-ms 100]\n"
          "             [--auth none|munge] [--max-sessions 4096]\n"
          "             [--max-sessions-per-identity N] [--max-parked-per-identity 512]\n"
          "             [--max-connections 1024] [--max-connections-per-peer 256]\n"
          "             [--frame-timeout-ms 5000] [--idle-timeout-ms 60000]\n"
          "             [--snapshot-threshold 1024] [--home-slots 4096]\n"
          "             [--log-level error|warn|info|debug|trace]\n"
          "       rdlmd -V|--version | -h|--help\n"
          "\n"
          "One replica of the rdlm lease authority. --peers lists every replica (the\n"
          "same list on all of them, 1-7 entries) with its Raft address (IPv4\n"
          "a.b.c.d:port) and its client address (host:port, an IPv4 address or a host\n"
          "name: clients look names up at each connect, rdlmd when it binds); this\n"
          "replica's own addresses are those of its --id. --listen binds the client\n"
          "port elsewhere (0.0.0.0:port: every interface) while the --peers address is\n"
          "the one given to clients.\n"
          "A new --data-dir is bootstrapped with the full list. Raft ports\n"
          "carry no authentication: keep them on a private network (they close\n"
          "connections from other hosts than the --peers Raft addresses' at once).\n"
          "--auth munge makes\n"
          "clients prove their uid and job with a MUNGE credential bound to this\n"
          "authority and the session (needs munged); every request but STATUS then\n"
          "needs a session, HOMES included. --auth none (default): anyone reaching the\n"
          "client port can open sessions, take any lock and, through HOMES, read and\n"
          "change every lock word of the homes.\n"
          "A follower that hears no leader stands for election within\n"
          "--election-timeout-ms (randomised between half and all of it); the\n"
          "heartbeat must be under half of it.\n"
          "Client connections: at most --max-connections, of which at most\n"
          "--max-connections-per-peer from one IPv4 address (each process of a job\n"
          "holds two); a frame must arrive and a reply be read within\n"
          "--frame-timeout-ms; a connection idle for --idle-timeout-ms is closed\n"
          "(clients reconnect; a queued acquire is not idle). At a limit a new\n"
          "connection closes the oldest idle one (of its address, or of any client);\n"
          "connections from the replicas' own hosts (the --peers addresses) are not\n"
          "counted in --max-connections.\n"
          "Quotas per identity (uid and job under --auth munge, the IPv4 address under\n"
          "--auth none): at most --max-sessions-per-identity sessions (default: half\n"
          "of --max-sessions) and --max-parked-per-identity queued acquires over them.\n"
          "The daemon's own identity (its uid; the replicas' addresses) is not\n"
          "counted and keeps the last 8 of --max-sessions for the lock homes.\n"
          "Each replica hosts a lock home: --home-slots lock words in memory that\n"
          "clients (rdlm_ctx_create with RDLM_AUTHORITY) reach with remote atomics\n"
          "over UCX; it serves once it committed a new epoch at the authority, so\n"
          "tokens grow across its restarts. --home-slots 0: no home; give every\n"
          "replica 0 or none: clients that find homes at some replicas and none at\n"
          "others fail rdlm_ctx_create with RDLM_ERR_BAD_CONFIG.\n"
          "Logs go to stderr, or to the file RDLM_LOG_FILE names (%h host, %p pid,\n"
          "%% a %; opened at start).\n"
          "The data directory needs 7 MiB free to start; below 4 MiB free, or\n"
          "read-only, writes are refused with RDLM_ERR_NO_SPACE (renewals go on) until\n"
          "space returns.\n"
          "SIGTERM or SIGINT stops it cleanly. Exit: 0 stopped, 1 failed, 2 usage,\n"
          "3 stopped because the data directory vanished or a log write failed.\n",
          out);
}

/* Decimal in [min, max]. */
static int rdlm_daemon_uint(const char *text, unsigned long min, unsigned long max,
                            unsigned *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v < min ||
        v > max) {
        return 0;
    }
    *out = (unsigned)v;
    return 1;
}

static int rdlm_daemon_level(const char *text, rdlm_log_level_t *level_p)
{
    for (int l = 0; l < RDLM_LOG_LEVEL_COUNT; l++) {
        if (strcmp(text, rdlm_log_level_name((rdlm_log_level_t)l)) == 0) {
            *level_p = (rdlm_log_level_t)l;
            return 1;
        }
    }
    return 0;
}

/* 1: parsed; 0: --help or --version printed; -1: bad flags (reported in one line). */
static int rdlm_daemon_parse(int argc, char **argv, rdlm_daemon_opts_t *o)
{
    enum {
        OPT_ID = 256,
        OPT_PEERS,
        OPT_DATA,
        OPT_LISTEN,
        OPT_ELECTION,
        OPT_HEARTBEAT,
        OPT_AUTH,
        OPT_SESSIONS,
        OPT_ID_SESSIONS,
        OPT_ID_PARKED,
        OPT_CONNS,
        OPT_PEER_CONNS,
        OPT_FRAME_TIMEOUT,
        OPT_IDLE_TIMEOUT,
        OPT_SNAPSHOT,
        OPT_HOME_SLOTS,
        OPT_LOG
    };
    static const struct option longopts[] = {
        {"id", required_argument, NULL, OPT_ID},
        {"peers", required_argument, NULL, OPT_PEERS},
        {"data-dir", required_argument, NULL, OPT_DATA},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"election-timeout-ms", required_argument, NULL, OPT_ELECTION},
        {"heartbeat-ms", required_argument, NULL, OPT_HEARTBEAT},
        {"auth", required_argument, NULL, OPT_AUTH},
        {"max-sessions", required_argument, NULL, OPT_SESSIONS},
        {"max-sessions-per-identity", required_argument, NULL, OPT_ID_SESSIONS},
        {"max-parked-per-identity", required_argument, NULL, OPT_ID_PARKED},
        {"max-connections", required_argument, NULL, OPT_CONNS},
        {"max-connections-per-peer", required_argument, NULL, OPT_PEER_CONNS},
        {"frame-timeout-ms", required_argument, NULL, OPT_FRAME_TIMEOUT},
        {"idle-timeout-ms", required_argument, NULL, OPT_IDLE_TIMEOUT},
        {"snapshot-threshold", required_argument, NULL, OPT_SNAPSHOT},
        {"home-slots", required_argument, NULL, OPT_HOME_SLOTS},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char optstring[] = ":hV";
    const char *listen_addr = NULL;
    unsigned id = 0;
    int c, ok = 1;

    opterr = 0; /* rdlm_cli_bad_option reports */
    while (ok && (c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (c) {
        case OPT_ID:
            ok = rdlm_daemon_uint(optarg, 1, 1000000, &id);
            o->replica.id = id;
            break;
        case OPT_PEERS:
            ok = rdlm_daemon_peers_parse(optarg, o->peers, &o->replica.n_peers);
            break;
        case OPT_DATA:
            o->replica.data_dir = optarg;
            break;
        case OPT_LISTEN:
            ok = rdlm_config_hostport_parse(optarg, NULL, NULL);
            listen_addr = optarg;
            break;
        case OPT_ELECTION:
            ok = rdlm_daemon_uint(optarg, 10, 600000, &o->replica.election_timeout_ms);
            break;
        case OPT_HEARTBEAT:
            ok = rdlm_daemon_uint(optarg, 1, 600000, &o->replica.heartbeat_ms);
            break;
        case OPT_AUTH:
            ok = strcmp(optarg, "none") == 0 || strcmp(optarg, "munge") == 0;
            o->server.auth =
                strcmp(optarg, "munge") == 0 ? RDLM_LEASE_AUTH_MUNGE : RDLM_LEASE_AUTH_NONE;
            break;
        case OPT_SESSIONS:
            ok = rdlm_daemon_uint(optarg, 1, 1u << 24, &o->replica.limits.max_sessions);
            break;
        case OPT_ID_SESSIONS:
            ok = rdlm_daemon_uint(optarg, 1, 1u << 24,
                                  &o->replica.limits.max_sessions_per_identity);
            break;
        case OPT_ID_PARKED:
            ok = rdlm_daemon_uint(optarg, 1, 1u << 24,
                                  &o->replica.limits.max_waits_per_identity);
            break;
        case OPT_CONNS:
            ok = rdlm_daemon_uint(optarg, 1, 1u << 20, &o->server.max_connections);
            break;
        case OPT_PEER_CONNS:
            ok = rdlm_daemon_uint(optarg, 1, 1u << 20, &o->server.max_connections_per_peer);
            break;
        case OPT_FRAME_TIMEOUT:
            ok = rdlm_daemon_uint(optarg, 10, 600000, &o->server.frame_timeout_ms);
            break;
        case OPT_IDLE_TIMEOUT:
            ok = rdlm_daemon_uint(optarg, 10, 86400000, &o->server.idle_timeout_ms);
            break;
        case OPT_SNAPSHOT:
            ok = rdlm_daemon_uint(optarg, 8, 1u << 30, &o->replica.snapshot_threshold);
            break;
        case OPT_HOME_SLOTS:
            ok = rdlm_daemon_uint(optarg, 0, 1u << 24, &o->home_slots);
            break;
        case OPT_LOG:
            ok = rdlm_daemon_level(optarg, &o->log_level);
            break;
        case 'h':
            rdlm_daemon_usage(stdout);
            return 0;
        case 'V':
            return rdlm_cli_version("rdlmd");
        default:
            rdlm_cli_bad_option("rdlmd", c, optstring, argv);
            return -1;
        }
        if (!ok && c != OPT_PEERS) { /* peers_parse said why */
            rdlm_cli_bad_value("rdlmd", c, longopts, optarg);
        }
    }
    if (ok && (optind != argc || id == 0 || o->replica.n_peers == 0 ||
               o->replica.data_dir == NULL)) {
        rdlm_cli_usage_error("rdlmd", "--id, --peers and --data-dir are required, and "
                                      "nothing else");
        ok = 0;
    }
    if (!ok) {
        return -1;
    }
    for (unsigned i = 0; i < o->replica.n_peers; i++) {
        if (o->peers[i].id == o->replica.id) {
            o->server.client_addr = o->peers[i].client_addr;
        }
    }
    if (listen_addr != NULL) {
        o->server.client_addr = listen_addr; /* bind here; --peers' address is advertised */
    }
    return 1;
}

static void rdlm_daemon_stop(rdlm_daemon_t *d)
{
    d->stopping = 1;
    rdlm_lease_server_stop(d->srv);
    rdlm_lease_replica_stop(d->rep);
    uv_close((uv_handle_t *)&d->signals[0], NULL);
    uv_close((uv_handle_t *)&d->signals[1], NULL);
}

static void rdlm_daemon_signal(uv_signal_t *handle, int signum)
{
    rdlm_daemon_t *d = handle->data;

    if (d->stopping) {
        return;
    }
    rdlm_info("rdlmd: %s: stopping", strsignal(signum));
    rdlm_daemon_stop(d);
}

/* The replica's on_fault: it cannot be trusted any more; the others go on. It exits at
 * once, closing nothing: libraft 0.15 closing a leader whose data directory went away
 * freed a block twice (4 of 6 runs of a lone replica, an outside operator's finding;
 * the library's own bug, as with a disk kept full: docs/lease-authority.md), and
 * nothing it holds needs a goodbye: clients fail over, the others elect a leader, the
 * kernel drops the data directory's lock. */
static void rdlm_daemon_unsafe(void *arg)
{
    rdlm_daemon_t *d = arg;

    if (d->stopping) {
        return;
    }
    rdlm_error("rdlmd: replica unsafe: stopping (exit 3); restore its data directory "
               "before restarting it");
    _exit(3);
}

/* The server's HOMES answer: the home's description (with --home-slots 0 or without
 * UCX, one that says this replica hosts none); RDLM_ERR_UNAVAILABLE if the home failed
 * to start otherwise: a client then treats this replica as one it cannot reach, never
 * as one without a home (its locks would be node-local while others' are
 * service-wide). The home starts after the server (so that a daemon that fails to
 * start commits no epoch at the live authority), before the loop runs: the server
 * answers nothing before. */
static rdlm_status_t rdlm_daemon_homes(void *arg, const uint8_t **blob_p, size_t *len_p)
{
    rdlm_daemon_t *d = arg;

    return d->home != NULL ? rdlm_svc_home_describe(d->home, blob_p, len_p)
                           : RDLM_ERR_UNAVAILABLE;
}

/* The lock home, serving once it committed an epoch at the authority of --peers;
 * with --home-slots 0, or where UCX cannot start (RDLM_ERR_UNSUPPORTED: no UCX in this
 * build, or none of UCX_TLS here), only the description saying there is none. */
static void rdlm_daemon_home_start(rdlm_daemon_opts_t *o, rdlm_daemon_t *d)
{
    char authority[RDLM_LEASE_PEERS_MAX * (RDLM_ADDR_MAX + 1)] = "";
    uint32_t ids[RDLM_LEASE_PEERS_MAX];
    const char *addrs[RDLM_LEASE_PEERS_MAX];
    rdlm_svc_home_params_t hp = {.authority = authority,
                                 .slots = o->home_slots,
                                 .tags = RDLM_DAEMON_HOME_TAGS,
                                 .self_id = (uint32_t)o->replica.id,
                                 .n_members = o->replica.n_peers,
                                 .member_ids = ids,
                                 .member_addrs = addrs};
    rdlm_status_t s;

    for (unsigned i = 0; i < o->replica.n_peers; i++) {
        strcat(authority, i == 0 ? "" : ",");
        strcat(authority, o->peers[i].client_addr);
        ids[i] = (uint32_t)o->peers[i].id;
        addrs[i] = o->peers[i].client_addr;
    }
    s = rdlm_svc_home_start(&hp, &d->home);
    if (s == RDLM_ERR_UNSUPPORTED) {
        rdlm_warn("rdlmd: this rdlmd cannot host a lock home (no usable UCX): it tells "
                  "clients it hosts none, as with --home-slots 0");
        hp.slots = 0;
        s = rdlm_svc_home_start(&hp, &d->home);
    }
    if (s != RDLM_OK) {
        rdlm_warn("rdlmd: the lock home did not start (%s): HOMES answers "
                  "RDLM_ERR_UNAVAILABLE, and locks homed here fail until it restarts",
                  rdlm_status_str(s));
    } else if (hp.slots == 0) {
        rdlm_info("rdlmd: hosting no lock home: clients' locks are node-local only if no "
                  "replica of --peers hosts one");
    }
}

/* Data directory: created (0700) if missing. */
static int rdlm_daemon_data_dir(const char *dir)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        rdlm_error("rdlmd: data directory %s: %s", dir, strerror(errno));
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    rdlm_daemon_opts_t o = {
        .replica = {.election_timeout_ms = 1000,
                    .heartbeat_ms = 100,
                    .snapshot_threshold = 1024,
                    .limits = {.max_sessions = 4096}},
        .server = {.auth = RDLM_LEASE_AUTH_NONE,
                   .max_connections = 1024,
                   .max_connections_per_peer = 256,
                   .frame_timeout_ms = 5000,
                   .idle_timeout_ms = 60000},
        .home_slots = 4096,
        .log_level = RDLM_LOG_INFO,
    };
    rdlm_daemon_t d = {0};
    rdlm_config_t cfg;
    uv_loop_t loop;
    rdlm_status_t s;
    int parsed = rdlm_daemon_parse(argc, argv, &o);

    if (parsed <= 0) {
        return parsed == 0 ? 0 : 2;
    }
    o.replica.peers = o.peers;
    o.server.authority_id = rdlm_lease_server_authority_id(o.peers, o.replica.n_peers);
    o.server.homes = rdlm_daemon_homes;
    o.server.homes_arg = &d;
    o.replica.on_fault = rdlm_daemon_unsafe;
    o.replica.fault_arg = &d;
    rdlm_log_set_level(o.log_level);
    /* From its first line, not from whenever the home's session reads RDLM_*. */
    rdlm_log_open_file(getenv("RDLM_LOG_FILE") != NULL ? getenv("RDLM_LOG_FILE") : "");
    /* Bad usage is refused before anything changes (a data directory, the epoch). */
    if (rdlm_lease_replica_params_check(&o.replica) != RDLM_OK) {
        return 2;
    }
    /* The home's own session reads RDLM_* like any client: same level; and a bad value
     * is one line and exit 2 now, not a home that never starts while rdlmctl calls the
     * replica healthy (an outside operator's finding: the error five times a second). */
    setenv("RDLM_LOG", rdlm_log_level_name(o.log_level), 1);
    if (rdlm_config_load(&cfg) != RDLM_OK) {
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (!rdlm_daemon_data_dir(o.replica.data_dir) || uv_loop_init(&loop) != 0) {
        return 1;
    }
    s = rdlm_lease_replica_start(&loop, &o.replica, &d.rep);
    if (s == RDLM_OK) {
        s = rdlm_lease_server_start(&loop, d.rep, &o.server, &d.srv);
        if (s != RDLM_OK) {
            rdlm_lease_replica_stop(d.rep);
        }
    }
    if (s == RDLM_OK) {
        rdlm_daemon_home_start(&o, &d); /* only a daemon that started commits an epoch */
        for (int i = 0; i < 2; i++) {
            uv_signal_init(&loop, &d.signals[i]);
            d.signals[i].data = &d;
            uv_signal_start(&d.signals[i], rdlm_daemon_signal, i == 0 ? SIGTERM : SIGINT);
        }
    }
    uv_run(&loop, UV_RUN_DEFAULT); /* until stopped, or until a failed start released */
    if (d.srv != NULL) {
        rdlm_lease_server_destroy(d.srv);
    }
    uv_loop_close(&loop);
    rdlm_svc_home_stop(d.home);
    if (s == RDLM_OK) {
        rdlm_info("rdlmd: replica %u stopped", (unsigned)o.replica.id);
        return 0;
    }
    return s == RDLM_ERR_INVALID_ARG ? 2 : 1;
}
