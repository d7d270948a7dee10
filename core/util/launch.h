/*
 * What launchers tell the processes they start: srun (Slurm), Open MPI's mpirun,
 * MPICH's Hydra. rdlm reads their variables for what the user did not set with RDLM_*:
 * rank and size of the standalone rendezvous, and the job name.
 */
#ifndef RDLM_LAUNCH_H
#define RDLM_LAUNCH_H

#include <stdint.h>

#include "config.h"

/**
 * Rank and size from the first of these pairs that envp (a NULL-terminated
 * "NAME=value" array, e.g. environ) sets to decimals with rank < size <= 16777215:
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (mpirun of Open MPI), PMI_RANK/PMI_SIZE
 * (MPICH's Hydra), SLURM_PROCID/SLURM_NTASKS (srun; last, because ranks that mpirun or
 * Hydra started inside an allocation inherit their launch daemon's); else, when envp sets
 * PMIX_RANK (a PMIx server started the process), rdlm_launch_pmix_peers. 1 with
 * *rank_p, *size_p and *source_p (the rank variable's name, or "PMIx"; a static
 * string) set; 0 if none is. Thread-safe; logs at debug only.
 */
int rdlm_launch_peers(const char *const *envp, uint32_t *rank_p, uint32_t *size_p,
                      const char **source_p);

/** The launcher's rank alone, for log lines: the rank variable of the first pair above
 *  that envp sets to a decimal, else PMIX_RANK's; -1 if none. Thread-safe. */
int rdlm_launch_rank(const char *const *envp);

/**
 * Rank and job size from the PMIx server that started the process (PMIx_Init, then
 * PMIX_JOB_SIZE of its namespace), asked once per process; the process then stays a
 * PMIx client until exit (an atexit PMIx_Finalize; PMIx_Init is reference-counted, so
 * an MPI library's own Init and Finalize, before or after, still pair up). 1 with
 * *rank_p and *size_p set; 0, logged at debug, without a server, or in a build
 * without PMIx (RDLM_WITH_PMIX, libpmix-dev). Thread-safe.
 */
int rdlm_launch_pmix_peers(uint32_t *rank_p, uint32_t *size_p);

/**
 * The launcher's job name in envp: SLURM_JOB_ID.SLURM_STEP_ID ("123.4") when both are
 * set, so that the steps of one allocation are separate jobs, else the first valid
 * job name (rdlm_config_job_valid) among SLURM_JOB_ID, OMPI_MCA_ess_base_jobid and
 * PMIX_NAMESPACE. Returns the variable it came from ("SLURM_JOB_ID.SLURM_STEP_ID",
 * "SLURM_JOB_ID", ...) with job_p (RDLM_JOB_MAX + 1 bytes) written, NULL if none is
 * set. Thread-safe; no logging.
 */
const char *rdlm_launch_job(const char *const *envp, char *job_p);

/**
 * The first host of a Slurm host list in its compressed form, written to host_p
 * (RDLM_HOST_MAX + 1 bytes): "node[07-09,11],gpu1" gives "node07", "a,b" gives "a".
 * 1 if that is a host name (rdlm_config_host_valid), else 0. Pure; thread-safe.
 */
int rdlm_launch_first_host(const char *list, char *host_p);

/**
 * Rank 0's host under srun, for RDLM_RENDEZVOUS=":port": the first host of
 * SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), where srun's default block
 * distribution starts task 0. RDLM_OK with host_p (RDLM_HOST_MAX + 1 bytes) written;
 * RDLM_ERR_BAD_CONFIG, logged once, if no list is set or its first host is no host
 * name, or if rank is 0 and SLURMD_NODENAME names another node (a distribution that
 * put task 0 elsewhere: the others would wait for it in vain).
 */
rdlm_status_t rdlm_launch_rendezvous_host(const char *const *envp, uint32_t rank,
                                          char *host_p);

#endif
