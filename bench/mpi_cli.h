/*
 * The command line both MPI programs share, as osu_* have it: -i ITER, -x WARMUP,
 * -r ROUNDS, -t CAP_MS, -f, -h/--help, -v/-V/--version, and --impls LIST, --csv,
 * --json, --result-lines. Every rank parses it; rank 0 alone prints help, the version
 * or one error line.
 */
#ifndef RDLM_BENCH_MPI_CLI_H
#define RDLM_BENCH_MPI_CLI_H

#include <getopt.h>
#include <stdint.h>

#include "mpi_output.h"

/** The shared options' short letters (a program appends its own). */
#define RDLM_BENCH_MPI_OPTSTRING ":i:x:r:t:fhvV"

/** Their long forms (a program's longopts list starts with them). */
#define RDLM_BENCH_MPI_LONGOPTS                                                            \
    {"impls", required_argument, NULL, 'I'}, {"csv", no_argument, NULL, 'C'},              \
        {"json", no_argument, NULL, 'J'}, {"result-lines", no_argument, NULL, 'R'},        \
        {"help", no_argument, NULL, 'h'},                                                  \
    {                                                                                      \
        "version", no_argument, NULL, 'V'                                                  \
    }

/** What they set; a program presets its defaults (0: "the mode's default"). */
typedef struct rdlm_bench_mpi_opts {
    uint64_t iterations; /**< -i, at least 1 */
    uint64_t warmup;     /**< -x */
    uint64_t rounds;     /**< -r, 1 .. RDLM_BENCH_MAX_ROUNDS */
    uint64_t cap_ms;     /**< -t, at least 1 */
    const char *impls;   /**< --impls, or NULL */
    int result_lines;    /**< --result-lines: also the lines of mpi_result.h */
} rdlm_bench_mpi_opts_t;

/** A program's own option c with its argument arg: 0, or -1 for a bad value. */
typedef int (*rdlm_bench_mpi_extra_func_t)(void *ctx, int c, const char *arg);

/**
 * Parse argv: the shared options into *o and out (-f, --csv, --json), the others
 * through extra. -1 to run; else the exit status: 0 after help (usage) or the
 * version, RDLM_CLI_EXIT_USAGE after a bad option, value or argument.
 */
int rdlm_bench_mpi_parse(int argc, char **argv, int rank, const char *tool,
                         const char *usage, const char *optstring,
                         const struct option *longopts, rdlm_bench_mpi_opts_t *o,
                         rdlm_bench_out_t *out, rdlm_bench_mpi_extra_func_t extra,
                         void *ctx);

/** A decimal count, the whole of text, at least min: 0 and *value_p, or -1. */
int rdlm_bench_mpi_u64(const char *text, uint64_t min, uint64_t *value_p);

/** --impls list as indices into names[0..n) (NULL: not selectable) into sel, in the
 *  list's order: their count, or -1 for an unknown or repeated name. */
int rdlm_bench_mpi_select(const char *list, const char *const *names, uint32_t n,
                          uint32_t *sel);

/** The exit status of a usage error of the program's own (fmt), printed by rank 0. */
int rdlm_bench_mpi_usage_error(int rank, const char *tool, const char *what);

#endif
