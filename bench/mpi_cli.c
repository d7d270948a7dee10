/* The MPI programs' shared command line; see mpi_cli.h. */
#include "mpi_cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"

int rdlm_bench_mpi_u64(const char *text, uint64_t min, uint64_t *value_p)
{
    uint64_t v;
    char tail;

    if (text[0] < '0' || text[0] > '9' || sscanf(text, "%" SCNu64 "%c", &v, &tail) != 1 ||
        v < min) {
        return -1;
    }
    *value_p = v;
    return 0;
}

/* One shared option: 0, or -1 for a bad value. */
static int rdlm_bench_mpi_shared(int c, const char *arg, rdlm_bench_mpi_opts_t *o,
                                 rdlm_bench_out_t *out)
{
    switch (c) {
    case 'i':
        return rdlm_bench_mpi_u64(arg, 1, &o->iterations);
    case 'x':
        return rdlm_bench_mpi_u64(arg, 0, &o->warmup);
    case 'r':
        return rdlm_bench_mpi_u64(arg, 1, &o->rounds) == 0 &&
                       o->rounds <= RDLM_BENCH_MAX_ROUNDS
                   ? 0
                   : -1;
    case 't':
        return rdlm_bench_mpi_u64(arg, 1, &o->cap_ms);
    case 'f':
        out->full = 1;
        return 0;
    case 'C':
    case 'J':
        out->format = c == 'C' ? RDLM_BENCH_OUT_CSV : RDLM_BENCH_OUT_JSON;
        return 0;
    case 'R':
        o->result_lines = 1;
        return 0;
    default: /* 'I' */
        o->impls = arg;
        return 0;
    }
}

int rdlm_bench_mpi_parse(int argc, char **argv, int rank, const char *tool,
                         const char *usage, const char *optstring,
                         const struct option *longopts, rdlm_bench_mpi_opts_t *o,
                         rdlm_bench_out_t *out, rdlm_bench_mpi_extra_func_t extra,
                         void *ctx)
{
    int c;

    opterr = 0; /* rank 0 reports, in one line */
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if (c == 'h' || c == 'v' || c == 'V' || c == '?' || c == ':') {
            if (rank != 0) {
                return c == '?' || c == ':' ? RDLM_CLI_EXIT_USAGE : 0;
            }
            if (c == 'h') {
                fputs(usage, stdout);
                return 0;
            }
            return c == '?' || c == ':' ? rdlm_cli_bad_option(tool, c, optstring, argv)
                                        : rdlm_cli_version(tool); /* -v: osu_*'s */
        }
        if ((c == 'C' || c == 'J') && out->format != RDLM_BENCH_OUT_TABLE &&
            out->format != (c == 'C' ? RDLM_BENCH_OUT_CSV : RDLM_BENCH_OUT_JSON)) {
            return rdlm_bench_mpi_usage_error(rank, tool,
                                              "--csv and --json exclude each "
                                              "other");
        }
        if ((strchr(RDLM_BENCH_MPI_OPTSTRING "ICJR", c) != NULL
                 ? rdlm_bench_mpi_shared(c, optarg, o, out)
                 : extra(ctx, c, optarg)) != 0) {
            return rank == 0 ? rdlm_cli_bad_value(tool, c, longopts, optarg)
                             : RDLM_CLI_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        return rank == 0
                   ? rdlm_cli_usage_error(tool, "unexpected argument '%s'", argv[optind])
                   : RDLM_CLI_EXIT_USAGE;
    }
    return -1;
}

int rdlm_bench_mpi_select(const char *list, const char *const *names, uint32_t n,
                          uint32_t *sel)
{
    char buf[128];
    char *save = NULL;
    char *tok;
    uint32_t k, j, count = 0;

    if (strlen(list) >= sizeof(buf)) {
        return -1;
    }
    strcpy(buf, list);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < n && (names[k] == NULL || strcmp(tok, names[k]) != 0); k++) {
        }
        for (j = 0; j < count && sel[j] != k; j++) {
        }
        if (k == n || j < count) {
            return -1;
        }
        sel[count++] = k;
    }
    return count > 0 ? (int)count : -1;
}

int rdlm_bench_mpi_usage_error(int rank, const char *tool, const char *what)
{
    return rank == 0 ? rdlm_cli_usage_error(tool, "%s", what) : RDLM_CLI_EXIT_USAGE;
}
