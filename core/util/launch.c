/* Launcher variables: rank, size and job name (launch.h). */
#include "launch.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

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
        rdlm_error("RDLM_RENDEZVOUS=:port takes rank 0's host from srun's "
                   "SLURM_STEP_NODELIST or SLURM_JOB_NODELIST, %s: give host:port",
                   list == NULL ? "but neither is set" : "but its first host is no name");
        return RDLM_ERR_BAD_CONFIG;
    }
    if (rank == 0 && me != NULL && strcmp(me, host_p) != 0) {
        rdlm_error("RDLM_RENDEZVOUS=:port: rank 0 runs on %s, not on %s, the first host of "
                   "%s (a task distribution other than block): give host:port",
                   me, host_p, var);
        return RDLM_ERR_BAD_CONFIG;
    }
    return RDLM_OK;
}
