/*
 * rdlm-bench command line (OSU micro-benchmark style). Zero or "unset" fields take
 * each benchmark's own default, so one flag set serves every benchmark.
 */
#ifndef RDLM_BENCH_OPTIONS_H
#define RDLM_BENCH_OPTIONS_H

#include <stdint.h>

#define RDLM_BENCH_MAX_PROCS 64      /**< largest process count -p accepts */
#define RDLM_BENCH_MAX_PROC_COUNTS 16 /**< entries in a -p list */
#define RDLM_BENCH_MAX_ROUNDS 51     /**< largest -r */
#define RDLM_BENCH_MAX_SELECTED 16   /**< benchmark names on one command line */

typedef struct rdlm_bench_opts {
    uint64_t iterations;  /**< -i; 0: the benchmark's default */
    uint64_t warmup;      /**< -x; UINT64_MAX: the benchmark's default */
    uint32_t duration_ms; /**< -d; 0: the benchmark's default */
    uint32_t rounds;      /**< -r */
    int full;             /**< -f: min and max over rounds */
    int percentiles;      /**< -z: p50, p90, p99 per operation */
    int verbose;          /**< -v */
    uint32_t procs[RDLM_BENCH_MAX_PROC_COUNTS]; /**< -p; nprocs_count 0: defaults */
    uint32_t nprocs_count;
    const char *csv_path;  /**< --csv, or NULL */
    const char *json_path; /**< --json, or NULL */
    const char *selected[RDLM_BENCH_MAX_SELECTED]; /**< -b / operands; none: all */
    uint32_t nselected;
} rdlm_bench_opts_t;

/** What rdlm_bench_opts_parse decided. */
enum rdlm_bench_parse {
    RDLM_BENCH_PARSE_RUN = 0,   /**< run with *opts_p */
    RDLM_BENCH_PARSE_HELP = 1,  /**< usage or version printed on stdout: exit 0 */
    RDLM_BENCH_PARSE_USAGE = 2, /**< one error line printed on stderr: exit 2 */
};

/** Parse argv into *opts_p. known_names lists the benchmark names (NULL-ended). */
enum rdlm_bench_parse rdlm_bench_opts_parse(int argc, char **argv,
                                            const char *const *known_names,
                                            rdlm_bench_opts_t *opts_p);

/** 1 if name was selected (or nothing was, which selects all). */
int rdlm_bench_opts_selects(const rdlm_bench_opts_t *opts, const char *name);

/** -i as a benchmark runs it: the option's value, else the benchmark's default def. */
static inline uint64_t rdlm_bench_opts_iterations(const rdlm_bench_opts_t *o, uint64_t def)
{
    return o->iterations ? o->iterations : def;
}

/** -x as a benchmark runs it: the option's value, else def. */
static inline uint64_t rdlm_bench_opts_warmup(const rdlm_bench_opts_t *o, uint64_t def)
{
    return o->warmup != UINT64_MAX ? o->warmup : def;
}

/** -d as a benchmark runs it: the option's value, else def (ms). */
static inline uint32_t rdlm_bench_opts_duration_ms(const rdlm_bench_opts_t *o, uint32_t def)
{
    return o->duration_ms ? o->duration_ms : def;
}

/** The -p list if given, else the caller's default list; returns the count. */
uint32_t rdlm_bench_opts_procs(const rdlm_bench_opts_t *opts, const uint32_t *defaults,
                               uint32_t ndefaults, const uint32_t **list_p);

#endif
