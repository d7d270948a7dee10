/* Launcher variables: rank, size and job name (launch.h). */
#include "launch.h"

#include <stdio.h>
#include <string.h>

/* Rank and size variable of each launcher, in the order they are looked at. */
static const char *const rdlm_launch_peer_vars[][2] = {
    {"SLURM_PROCID", "SLURM_NTASKS"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
};

/* Job ids, in the order they are looked at (Slurm's step is added in front of them). */
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
    return 0;
}

int rdlm_launch_job(const char *const *envp, char *job_p)
{
    const char *job = rdlm_config_lookup(envp, "SLURM_JOB_ID");
    const char *step = rdlm_config_lookup(envp, "SLURM_STEP_ID");
    char both[2 * RDLM_JOB_MAX + 2];

    if (job != NULL && step != NULL) {
        snprintf(both, sizeof(both), "%.*s.%.*s", RDLM_JOB_MAX, job, RDLM_JOB_MAX, step);
        if (rdlm_config_job_valid(both)) {
            strcpy(job_p, both);
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(rdlm_launch_job_vars) / sizeof(rdlm_launch_job_vars[0]);
         i++) {
        job = rdlm_config_lookup(envp, rdlm_launch_job_vars[i]);
        if (job != NULL && rdlm_config_job_valid(job)) {
            strcpy(job_p, job);
            return 1;
        }
    }
    return 0;
}
