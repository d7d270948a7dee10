/* The in-job authority: a replica and its client port on a thread of their own
 * (job_authority.h). */
#include "job_authority.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <uv.h>

#include "job_authority_addr.h"
#include "job_authority_dir.h"
#include "log.h"
#include "replica.h"
#include "server.h"

/* Sizing and timeouts: rdlmd's defaults where there is one. */
#define RDLM_LEASE_JOB_AUTHORITY_MIN_SESSIONS 4096u
/* Sessions and connections beyond the job's own. */
#define RDLM_LEASE_JOB_AUTHORITY_SPARE 64u
#define RDLM_LEASE_JOB_AUTHORITY_SNAPSHOT 1024u
#define RDLM_LEASE_JOB_AUTHORITY_FRAME_MS 5000u
#define RDLM_LEASE_JOB_AUTHORITY_IDLE_MS 60000u

struct rdlm_job_authority {
    rdlm_lease_port_t raft, client; /* reserved until the replica bound them */
    uv_loop_t loop;
    uv_async_t stop;           /* rdlm_job_authority_stop -> the loop thread */
    rdlm_lease_replica_t *rep; /* freed by the loop once stopped */
    rdlm_lease_server_t *srv;
    pthread_t thread;
    int loop_open, running;
    char data_dir[PATH_MAX]; /* "" until made */
};

/* ---- the loop thread ------------------------------------------------------------- */

/* Stop the client port and the replica (on the loop's thread, or before it runs). */
static void rdlm_job_authority_halt(rdlm_job_authority_t *h)
{
    if (h->srv != NULL) {
        rdlm_lease_server_stop(h->srv);
    }
    rdlm_lease_replica_stop(h->rep);
}

static void rdlm_job_authority_stop_cb(uv_async_t *async)
{
    rdlm_job_authority_halt(async->data);
    uv_close((uv_handle_t *)async, NULL);
}

static void *rdlm_job_authority_main(void *arg)
{
    rdlm_job_authority_t *h = arg;

    uv_run(&h->loop, UV_RUN_DEFAULT); /* until the replica and the port closed */
    return NULL;
}

/* Start the loop thread with every signal blocked (job_authority.h). */
static rdlm_status_t rdlm_job_authority_spawn(rdlm_job_authority_t *h)
{
    sigset_t all, old;
    int err;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    err = pthread_create(&h->thread, NULL, rdlm_job_authority_main, h);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        rdlm_error("lease: cannot start the replica's thread: %s", strerror(err));
        return RDLM_ERR_NO_RESOURCE;
    }
    pthread_setname_np(h->thread, "rdlm-authority");
    return RDLM_OK;
}

/* ---- lifecycle ------------------------------------------------------------------- */

rdlm_status_t rdlm_job_authority_create(const char *net, rdlm_job_authority_t **h_p,
                                        rdlm_job_authority_addrs_t *addrs_p)
{
    char ip[INET_ADDRSTRLEN];
    rdlm_job_authority_t *h;
    rdlm_status_t s = rdlm_lease_host_ip(net, ip);

    if (s != RDLM_OK) {
        return s;
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        rdlm_error("lease: out of memory for an embedded replica");
        return RDLM_ERR_NO_MEMORY;
    }
    h->client.fd = -1;
    s = rdlm_lease_port_reserve(ip, &h->raft);
    if (s == RDLM_OK) {
        s = rdlm_lease_port_reserve(ip, &h->client);
    }
    if (s != RDLM_OK) {
        rdlm_job_authority_stop(h);
        return s;
    }
    snprintf(addrs_p->raft, sizeof(addrs_p->raft), "%s", h->raft.addr);
    snprintf(addrs_p->client, sizeof(addrs_p->client), "%s", h->client.addr);
    *h_p = h;
    return RDLM_OK;
}

static int rdlm_job_authority_params_valid(const rdlm_job_authority_t *h,
                                           const rdlm_job_authority_params_t *p)
{
    return p->n_replicas > 0 && p->n_replicas <= RDLM_LEASE_PEERS_MAX &&
           p->self < p->n_replicas && p->data_dir != NULL &&
           strlen(p->data_dir) < sizeof(h->data_dir) && p->max_clients > 0 &&
           p->max_clients < UINT_MAX / 4 &&
           strcmp(p->replicas[p->self].raft, h->raft.addr) == 0 &&
           strcmp(p->replicas[p->self].client, h->client.addr) == 0;
}

/* A replica that accepts conns connections needs as many descriptors, and more. */
static void rdlm_job_authority_check_fds(unsigned conns)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)conns) {
        rdlm_warn("lease: the replica may need %u file descriptors (two per process of "
                  "the job) and RLIMIT_NOFILE is %llu: raise it (ulimit -n)",
                  conns, (unsigned long long)rl.rlim_cur);
    }
}

rdlm_status_t rdlm_job_authority_start(rdlm_job_authority_t *h,
                                       const rdlm_job_authority_params_t *params)
{
    rdlm_lease_peer_t peers[RDLM_LEASE_PEERS_MAX];
    unsigned conns = 2 * params->max_clients + RDLM_LEASE_JOB_AUTHORITY_SPARE;
    unsigned sessions = params->max_clients + RDLM_LEASE_JOB_AUTHORITY_SPARE;
    rdlm_lease_replica_params_t rp = {
        .id = params->self + 1,
        .peers = peers,
        .n_peers = params->n_replicas,
        .data_dir = params->data_dir,
        .election_timeout_ms = params->election_timeout_ms,
        .heartbeat_ms = params->heartbeat_ms,
        .snapshot_threshold = RDLM_LEASE_JOB_AUTHORITY_SNAPSHOT,
        .limits = {.max_sessions = sessions > RDLM_LEASE_JOB_AUTHORITY_MIN_SESSIONS
                                       ? sessions
                                       : RDLM_LEASE_JOB_AUTHORITY_MIN_SESSIONS},
    };
    rdlm_lease_server_params_t sp = {
        .client_addr = h->client.addr,
        .auth = RDLM_LEASE_AUTH_NONE,
        .max_connections = conns,
        .max_connections_per_peer = conns, /* a host's processes share its address */
        .frame_timeout_ms = RDLM_LEASE_JOB_AUTHORITY_FRAME_MS,
        .idle_timeout_ms = RDLM_LEASE_JOB_AUTHORITY_IDLE_MS,
        .epoch_seed = 1, /* rank 0 seeds it with its host's epoch */
    };
    rdlm_status_t s;

    if (!rdlm_job_authority_params_valid(h, params)) {
        rdlm_error("lease: invalid parameters for an embedded replica (1-%u replicas, "
                   "its own reserved addresses, a data directory, clients)",
                   RDLM_LEASE_PEERS_MAX);
        return RDLM_ERR_INVALID_ARG;
    }
    for (unsigned i = 0; i < params->n_replicas; i++) {
        peers[i].id = i + 1;
        snprintf(peers[i].raft_addr, sizeof(peers[i].raft_addr), "%s",
                 params->replicas[i].raft);
        snprintf(peers[i].client_addr, sizeof(peers[i].client_addr), "%s",
                 params->replicas[i].client);
    }
    rdlm_job_authority_check_fds(conns);
    s = rdlm_job_authority_dir_make(params->data_dir);
    if (s != RDLM_OK) {
        return s;
    }
    snprintf(h->data_dir, sizeof(h->data_dir), "%s", params->data_dir);
    if (uv_loop_init(&h->loop) != 0) {
        rdlm_error("lease: cannot create the replica's event loop");
        return RDLM_ERR_NO_RESOURCE;
    }
    h->loop_open = 1;
    s = rdlm_lease_replica_start(&h->loop, &rp, &h->rep);
    if (s == RDLM_OK) {
        s = rdlm_lease_server_start(&h->loop, h->rep, &sp, &h->srv);
        if (s == RDLM_OK &&
            uv_async_init(&h->loop, &h->stop, rdlm_job_authority_stop_cb) != 0) {
            rdlm_error("lease: cannot create the replica's stop signal");
            s = RDLM_ERR_NO_RESOURCE;
        }
        if (s != RDLM_OK) {
            rdlm_job_authority_halt(h);
        }
    }
    if (s == RDLM_OK) {
        h->stop.data = h;
        rdlm_lease_port_release(&h->raft); /* both ports are bound by now */
        rdlm_lease_port_release(&h->client);
        s = rdlm_job_authority_spawn(h);
        if (s != RDLM_OK) {
            rdlm_job_authority_stop_cb(&h->stop);
        }
    }
    if (s != RDLM_OK) {
        uv_run(&h->loop, UV_RUN_DEFAULT); /* release what did start */
        return s;
    }
    h->running = 1;
    return RDLM_OK;
}

void rdlm_job_authority_stop(rdlm_job_authority_t *h)
{
    if (h == NULL) {
        return;
    }
    if (h->running) {
        uv_async_send(&h->stop);
        pthread_join(h->thread, NULL);
    }
    if (h->srv != NULL) {
        rdlm_lease_server_destroy(h->srv);
    }
    if (h->loop_open && uv_loop_close(&h->loop) != 0) {
        rdlm_warn("lease: the replica's event loop still had handles at stop");
    }
    if (h->data_dir[0] != '\0') {
        rdlm_job_authority_dir_remove(h->data_dir);
    }
    rdlm_lease_port_release(&h->raft);
    rdlm_lease_port_release(&h->client);
    free(h);
}

struct rdlm_lease_witness *rdlm_job_authority_witness(rdlm_job_authority_t *h)
{
    return h->rep != NULL ? rdlm_lease_replica_witness(h->rep) : NULL;
}
