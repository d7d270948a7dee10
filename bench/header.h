/*
 * The '#' header of every rdlm-bench output: library version, transport, waiting
 * policy, process counts, date, host, command line.
 */
#ifndef RDLM_BENCH_HEADER_H
#define RDLM_BENCH_HEADER_H

#include <stdint.h>
#include <stdio.h>

#include "options.h"

/** Facts printed as the '#' header and stored in the JSON. */
typedef struct rdlm_bench_header {
    char version[32];    /**< rdlm_get_version() */
    char transport[48];
    char waiting[160];   /**< RDLM_SPIN / RDLM_YIELD / RDLM_PARK_SLICE_MS or "default" */
    char processes[512];
    char date[40];       /**< UTC, ISO 8601 */
    char host[256];      /**< CPUs and kernel */
    char command[512];
    uint32_t rounds;
} rdlm_bench_header_t;

/** Fill the header from the library, the environment and the clock. */
void rdlm_bench_header_fill(rdlm_bench_header_t *h, const rdlm_bench_opts_t *opts,
                            int argc, char **argv, const char *processes);

/** Print the '#' header lines. */
void rdlm_bench_header_print(const rdlm_bench_header_t *h, FILE *out);

#endif
