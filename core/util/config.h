/*
 * Configuration: one declarative table of RDLM_* environment variables
 * (RDLM_CONFIG_LIST), parsed into rdlm_config_t. A bad value is an error naming the
 * variable; an unknown RDLM_* name is warned about (RDLM_UCX_* belongs to UCX).
 */
#ifndef RDLM_CONFIG_H
#define RDLM_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include <rdlm/status.h>

#define RDLM_JOB_MAX 32

/* X(field, variable, type, default, min, max, help)
 * types: LEVEL (log level name), UINT (decimal, min..max), JOB (job name), BOOL (0/1). */
#define RDLM_CONFIG_LIST(X)                                                                \
    X(log_level, "RDLM_LOG", LEVEL, "warn", 0, 0,                                          \
      "log threshold: error, warn, info, debug, trace")                                    \
    X(job, "RDLM_JOB", JOB, "", 0, 0,                                                      \
      "job name shared by the processes of one job (default: SLURM or Open MPI job id)")   \
    X(capacity, "RDLM_CAPACITY", UINT, "65536", 16, 16777216,                              \
      "objects the node segment holds (set by its creator)")                               \
    X(max_procs, "RDLM_MAX_PROCS", UINT, "256", 2, 4095,                                   \
      "process slots in the node segment (set by its creator)")                            \
    X(spin, "RDLM_SPIN", UINT, "4000", 0, 100000000,                                       \
      "busy-wait iterations before a waiter yields")                                       \
    X(yield, "RDLM_YIELD", UINT, "256", 0, 1000000,                                          \
      "sched_yield calls before a waiter sleeps on a futex")                               \
    X(park_slice_ms, "RDLM_PARK_SLICE_MS", UINT, "20", 1, 10000,                           \
      "futex sleep slice; dead holders are looked for once per slice")                     \
    X(stats, "RDLM_STATS", BOOL, "0", 0, 1, "print statistics at rdlm_ctx_destroy")

#define RDLM_CONFIG_FIELD_(field, var, type, def, min, max, help)                          \
    RDLM_CONFIG_DECL_##type(field)
#define RDLM_CONFIG_DECL_LEVEL(f) unsigned f;
#define RDLM_CONFIG_DECL_UINT(f) uint32_t f;
#define RDLM_CONFIG_DECL_BOOL(f) int f;
#define RDLM_CONFIG_DECL_JOB(f) char f[RDLM_JOB_MAX + 1];

/** The effective configuration. */
typedef struct rdlm_config {
    RDLM_CONFIG_LIST(RDLM_CONFIG_FIELD_)
} rdlm_config_t;

/**
 * Parse envp (a NULL-terminated "NAME=value" array, e.g. environ) into *cfg_p, starting
 * from the defaults. Returns RDLM_ERR_BAD_CONFIG (after logging the variable, its
 * value and what is allowed) on the first bad value; *cfg_p is then untouched.
 */
rdlm_status_t rdlm_config_parse(const char *const *envp, rdlm_config_t *cfg_p);

/** rdlm_config_parse(environ) and apply the log level. */
rdlm_status_t rdlm_config_load(rdlm_config_t *cfg_p);

/** 1 if name is a valid job name ([A-Za-z0-9._-], 1..RDLM_JOB_MAX bytes). */
int rdlm_config_job_valid(const char *name);

/** Print "NAME=value  # help" for every entry. */
void rdlm_config_print(const rdlm_config_t *cfg, FILE *out);

#endif
