/* Launcher variables: rank, size and job name (launch.h). */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "atomics.h"
#include "log.h"

/* This process's launcher rendezvous so far: the n of their PMIx keys. */
static atomic_uint rdlm_launch_rendezvous_count;

/* Rank and size variable of each launcher, in the order they are looked at. Slurm's
 * come last: under mpirun or Hydra inside a Slurm allocation, the ranks inherit
 * SLURM_PROCID/SLURM_NTASKS from the node's launch daemon, which srun started (the
 * daemon's index and count, the same for every rank of a node). */
static const char *const rdlm_launch_peer_vars[][2] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

/* Job ids, in the order they are looked at after SLURM_JOB_ID.SLURM_STEP_ID. */
static const char *const rdlm_launch_job_vars[] = {
    "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"};

int rdlm_launch_peers(const char *const *envp, uint32_t *rank_p, uint32_t *size_p,
                      const char **source_p)
{
    size_t n = sizeof(rdlm_launch_peer_vars) / sizeof(rdlm_launch_peer_vars[0]);

    for (size_t i = 0; i < n; i++) {
        const char *rank = rdlm_config_lookup(envp, rdlm_launch_peer_vars[i][0]);
        const char *size = rdlm_config_lookup(envp, rdlm_launch_peer_vars[i][1]);
        uint32_t r, s;

        if (rank != NULL && size != NULL && rdlm_config_uint_parse(size, 1, 16777215, &s) &&
            rdlm_config_uint_parse(rank, 0, s - 1, &r)) {
            *rank_p = r;
            *size_p = s;
            *source_p = rdlm_launch_peer_vars[i][0];
            return 1;
        }
    }
    if (rdlm_config_lookup(envp, "PMIX_RANK") != NULL &&
        rdlm_launch_pmix_peers(rank_p, size_p)) {
        *source_p = "PMIx";
        return 1;
    }
    return 0;
}

int rdlm_launch_rank(const char *const *envp)
{
    size_t n = sizeof(rdlm_launch_peer_vars) / sizeof(rdlm_launch_peer_vars[0]);
    const char *rank;
    uint32_t r;

    for (size_t i = 0; i <= n; i++) {
        rank = rdlm_config_lookup(envp, i < n ? rdlm_launch_peer_vars[i][0] : "PMIX_RANK");
        if (rank != NULL && rdlm_config_uint_parse(rank, 0, 16777214, &r)) {
            return (int)r;
        }
    }
    return -1;
}

const char *rdlm_launch_job(const char *const *envp, char *job_p)
{
    const char *job = rdlm_config_lookup(envp, "SLURM_JOB_ID");
    const char *step = rdlm_config_lookup(envp, "SLURM_STEP_ID");
    char both[2 * RDLM_JOB_MAX + 2];

    if (job != NULL && step != NULL) {
        snprintf(both, sizeof(both), "%.*s.%.*s", RDLM_JOB_MAX, job, RDLM_JOB_MAX, step);
        if (rdlm_config_job_valid(both)) {
            strcpy(job_p, both);
            return "SLURM_JOB_ID.SLURM_STEP_ID";
        }
    }
    for (size_t i = 0; i < sizeof(rdlm_launch_job_vars) / sizeof(rdlm_launch_job_vars[0]);
         i++) {
        job = rdlm_config_lookup(envp, rdlm_launch_job_vars[i]);
        if (job != NULL && rdlm_config_job_valid(job)) {
            strcpy(job_p, job);
            return rdlm_launch_job_vars[i];
        }
    }
    return NULL;
}

int rdlm_launch_first_host(const char *list, char *host_p)
{
    size_t n = 0;

    for (const char *c = list; *c != '\0' && *c != ','; c++) {
        const char *close = *c == '[' ? strchr(c, ']') : NULL;
        size_t len = close != NULL ? strspn(c + 1, "0123456789") : 1;

        if ((*c == '[' && (close == NULL || len == 0)) || n + len > RDLM_HOST_MAX) {
            return 0;
        }
        memcpy(host_p + n, close != NULL ? c + 1 : c, len); /* a range's first number */
        n += len;
        c = close != NULL ? close : c;
    }
    host_p[n] = '\0';
    return rdlm_config_host_valid(host_p);
}

rdlm_status_t rdlm_launch_rendezvous_host(const char *const *envp, uint32_t rank,
                                          char *host_p)
{
    const char *var = "SLURM_STEP_NODELIST";
    const char *list = rdlm_config_lookup(envp, var);
    const char *me = rdlm_config_lookup(envp, "SLURMD_NODENAME");

    if (list == NULL) {
        var = "SLURM_JOB_NODELIST";
        list = rdlm_config_lookup(envp, var);
    }
    if (list == NULL || !rdlm_launch_first_host(list, host_p)) {
        rdlm_error("RDLM_RENDEZVOUS=:port or launcher takes rank 0's host from srun's "
                   "SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, %s: give host:port",
                   list == NULL ? "but neither is set" : "but its first host is no name");
        return RDLM_ERR_BAD_CONFIG;
    }
    if (rank == 0 && me != NULL && strcmp(me, host_p) != 0) {
        rdlm_error("RDLM_RENDEZVOUS=:port or launcher: rank 0 runs on %s, not on %s, the "
                   "first host of %s (a task distribution other than block): give "
                   "host:port",
                   me, host_p, var);
        return RDLM_ERR_BAD_CONFIG;
    }
    return RDLM_OK;
}

int rdlm_launch_slurm_port(const char *const *envp, uint16_t *port_p, const char **source_p)
{
    const char *resv = rdlm_config_lookup(envp, "SLURM_STEP_RESV_PORTS");
    const char *job = rdlm_config_lookup(envp, "SLURM_JOB_ID");
    const char *step = rdlm_config_lookup(envp, "SLURM_STEP_ID");
    char first[8];
    uint32_t port, j, s;
    size_t len;

    if (resv != NULL) {
        len = strspn(resv, "0123456789"); /* "12000-12003" or "12000,12007" */
        if (len > 0 && len < sizeof(first) && strchr("-,", resv[len]) != NULL) {
            memcpy(first, resv, len);
            first[len] = '\0';
            if (rdlm_config_uint_parse(first, 1, 65535, &port)) {
                *port_p = (uint16_t)port;
                *source_p = "SLURM_STEP_RESV_PORTS";
                return 1;
            }
        }
    }
    if (job == NULL || step == NULL || !rdlm_config_uint_parse(job, 0, UINT32_MAX, &j) ||
        !rdlm_config_uint_parse(step, 0, UINT32_MAX, &s)) {
        return 0;
    }
    *port_p =
        (uint16_t)(RDLM_LAUNCH_PORT_BASE + ((uint64_t)j * 10 + s) % RDLM_LAUNCH_PORT_SPAN);
    *source_p = "SLURM_JOB_ID/SLURM_STEP_ID";
    return 1;
}

/* Rank 0 under PMIx: a socket listening on every interface at an ephemeral port. */
static rdlm_status_t rdlm_launch_listen(rdlm_launch_rendezvous_t *rv)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, 64) != 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        rdlm_error(
            "RDLM_RENDEZVOUS=launcher: rank 0 cannot listen on an ephemeral port: %s",
            strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return RDLM_ERR_IO;
    }
    rv->listen_fd = fd;
    rv->port = ntohs(sa.sin_port);
    return RDLM_OK;
}

/* Rank 0 under PMIx: listen, and publish "<host name>:<port>" under key. */
static rdlm_status_t rdlm_launch_pmix_publish(const char *key, uint32_t timeout_ms,
                                              rdlm_launch_rendezvous_t *rv)
{
    char addr[RDLM_HOST_MAX + 8];
    rdlm_status_t st;

    rv->host[RDLM_HOST_MAX] = '\0';
    if (gethostname(rv->host, RDLM_HOST_MAX) != 0 || !rdlm_config_host_valid(rv->host)) {
        rdlm_error("RDLM_RENDEZVOUS=launcher: rank 0's host name is no valid host name "
                   "(at most %d of [A-Za-z0-9._-]): give host:port",
                   RDLM_HOST_MAX);
        return RDLM_ERR_BAD_CONFIG;
    }
    st = rdlm_launch_listen(rv);
    if (st != RDLM_OK) {
        return st;
    }
    snprintf(addr, sizeof(addr), "%s:%u", rv->host, (unsigned)rv->port);
    st = rdlm_launch_pmix_exchange(key, addr, timeout_ms, NULL, 0);
    if (st != RDLM_OK) {
        close(rv->listen_fd);
        rv->listen_fd = -1;
    }
    return st;
}

/* RDLM_RENDEZVOUS=launcher under PMIx (rdlm_launch_rendezvous). */
static rdlm_status_t rdlm_launch_pmix_rendezvous(const char *job, uint32_t rank,
                                                 uint32_t size, uint32_t r, uint32_t s,
                                                 uint32_t timeout_ms,
                                                 rdlm_launch_rendezvous_t *rv)
{
    char key[RDLM_JOB_MAX + 40], addr[RDLM_ADDR_MAX + 1];
    rdlm_status_t st;

    if (r != rank || s != size) { /* PMIx's r of s */
        rdlm_error("RDLM_RENDEZVOUS=launcher: rank %u of %u is not PMIx's rank %u of %u "
                   "(RDLM_RANK/RDLM_SIZE or rdlm_ctx_params_t): give host:port",
                   rank, size, r, s);
        return RDLM_ERR_BAD_CONFIG;
    }
    snprintf(key, sizeof(key), "rdlm.rendezvous.%s.%u", job,
             rdlm_fetch_add(&rdlm_launch_rendezvous_count, 1u, memory_order_relaxed));
    rv->source = "PMIx";
    if (rank == 0) {
        return rdlm_launch_pmix_publish(key, timeout_ms, rv);
    }
    st = rdlm_launch_pmix_exchange(key, NULL, timeout_ms, addr, sizeof(addr));
    if (st == RDLM_OK && !rdlm_config_hostport_parse(addr, rv->host, &rv->port)) {
        rdlm_error("RDLM_RENDEZVOUS=launcher: PMIx key %s holds \"%s\", no host:port", key,
                   addr);
        st = RDLM_ERR_IO;
    }
    return st;
}

rdlm_status_t rdlm_launch_rendezvous(const char *const *envp, const char *job,
                                     uint32_t rank, uint32_t size, uint32_t timeout_ms,
                                     rdlm_launch_rendezvous_t *rv_p)
{
    uint32_t r, s;

    rv_p->listen_fd = -1;
    if (rdlm_config_lookup(envp, "PMIX_RANK") != NULL && rdlm_launch_pmix_peers(&r, &s)) {
        return rdlm_launch_pmix_rendezvous(job, rank, size, r, s, timeout_ms, rv_p);
    }
    if (rdlm_config_lookup(envp, "SLURM_STEP_NODELIST") == NULL &&
        rdlm_config_lookup(envp, "SLURM_JOB_NODELIST") == NULL) {
        rdlm_error("RDLM_RENDEZVOUS=launcher: no launcher rendezvous: neither a PMIx "
                   "server (PMIX_RANK%s) nor srun (SLURM_STEP_NODELIST): give host:port",
                   rdlm_launch_pmix_built() ? "" : "; this build has no PMIx");
        return RDLM_ERR_BAD_CONFIG;
    }
    if (!rdlm_launch_slurm_port(envp, &rv_p->port, &rv_p->source)) {
        rdlm_error("RDLM_RENDEZVOUS=launcher under srun needs SLURM_STEP_RESV_PORTS (srun "
                   "--resv-ports) or SLURM_JOB_ID and SLURM_STEP_ID: give :port");
        return RDLM_ERR_BAD_CONFIG;
    }
    return rdlm_launch_rendezvous_host(envp, rank, rv_p->host);
}
