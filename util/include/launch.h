/*
 * What launchers tell the processes they start: srun (Slurm), Open MPI's mpirun,
 * MPICH's Hydra. rdlm reads their variables for what the user did not set with RDLM_*:
 * rank and size of the standalone rendezvous, and the job name.
 */
#ifndef RDLM_LAUNCH_H
#define RDLM_LAUNCH_H

#include <stddef.h>
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
 * Rank 0's host under srun, for RDLM_RENDEZVOUS=":port" and "launcher": the first host of
 * SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), where srun's default block
 * distribution starts task 0. RDLM_OK with host_p (RDLM_HOST_MAX + 1 bytes) written;
 * RDLM_ERR_BAD_CONFIG, logged once, if no list is set or its first host is no host
 * name, or if rank is 0 and SLURMD_NODENAME names another node (a distribution that
 * put task 0 elsewhere: the others would wait for it in vain).
 */
rdlm_status_t rdlm_launch_rendezvous_host(const char *const *envp, uint32_t rank,
                                          char *host_p);

/** RDLM_RENDEZVOUS's (and rdlm_ctx_params_t's rendezvous) value that asks for the
 *  launcher's rendezvous (rdlm_launch_rendezvous). */
#define RDLM_LAUNCH_RENDEZVOUS "launcher"

/* Derived rendezvous ports under srun without --resv-ports:
 * RDLM_LAUNCH_PORT_BASE + (SLURM_JOB_ID * 10 + SLURM_STEP_ID) % RDLM_LAUNCH_PORT_SPAN,
 * below Linux's ephemeral range (32768-60999). */
#define RDLM_LAUNCH_PORT_BASE 20000u
#define RDLM_LAUNCH_PORT_SPAN 10000u

/**
 * The rendezvous port of an srun step: the first port of SLURM_STEP_RESV_PORTS
 * ("12000-12003" or "12000,12007"; srun --resv-ports) when set, else one derived from
 * SLURM_JOB_ID and SLURM_STEP_ID (decimals; RDLM_LAUNCH_PORT_BASE above). 1 with
 * *port_p and *source_p (the variable(s) used; a static string) set, 0 if neither is
 * usable. Pure; thread-safe.
 */
int rdlm_launch_slurm_port(const char *const *envp, uint16_t *port_p,
                           const char **source_p);

/** Where rank 0 listens for a launcher's rendezvous. */
typedef struct rdlm_launch_rendezvous {
    char host[RDLM_HOST_MAX + 1]; /**< rank 0's host */
    uint16_t port;
    int listen_fd;      /**< rank 0 under PMIx: a socket listening on port (the caller
                             closes it), else -1 */
    const char *source; /**< "PMIx" or the Slurm variables used; a static string */
} rdlm_launch_rendezvous_t;

/**
 * RDLM_RENDEZVOUS=launcher: rank 0's address from the launcher that started rank of
 * size (the rendezvous's rank and size). Under a PMIx server (envp sets PMIX_RANK, a
 * build with PMIx): rank and size must be PMIx's; rank 0 listens on an ephemeral port
 * and publishes "<its host name>:<port>" under the key "rdlm.rendezvous.<job>.<n>" (n:
 * this process's count of such rendezvous so far, the same on every rank since each
 * one is collective), every rank fences, the others read it (rdlm_launch_pmix_exchange,
 * bounded by timeout_ms). Else under srun (SLURM_STEP_NODELIST or SLURM_JOB_NODELIST):
 * rank 0's host as for ":port" (rdlm_launch_rendezvous_host) and rdlm_launch_slurm_port.
 * RDLM_OK with *rv_p set; RDLM_ERR_BAD_CONFIG, one line naming what is missing, without
 * either launcher or with a rank that is not the launcher's; RDLM_ERR_TIMEOUT,
 * RDLM_ERR_IO from PMIx or the listening socket (logged). Collective under PMIx.
 */
rdlm_status_t rdlm_launch_rendezvous(const char *const *envp, const char *job,
                                     uint32_t rank, uint32_t size, uint32_t timeout_ms,
                                     rdlm_launch_rendezvous_t *rv_p);

/**
 * Under PMIx (after rdlm_launch_pmix_peers found it): if value is not NULL, PMIx_Put
 * it (PMIX_GLOBAL) under key and PMIx_Commit; then PMIx_Fence over the whole namespace
 * collecting data, with PMIX_TIMEOUT; then, if value is NULL, PMIx_Get key of PMIx
 * rank 0 (PMIX_TIMEOUT) into value_p (cap bytes). Collective over every process of the
 * namespace. RDLM_OK; RDLM_ERR_TIMEOUT if the fence or get timed out,
 * RDLM_ERR_IO otherwise (logged once); RDLM_ERR_UNSUPPORTED in a build without PMIx.
 */
rdlm_status_t rdlm_launch_pmix_exchange(const char *key, const char *value,
                                        uint32_t timeout_ms, char *value_p, size_t cap);

/** 1 in a build with PMIx (RDLM_WITH_PMIX and libpmix), else 0. Pure. */
int rdlm_launch_pmix_built(void);

#endif
