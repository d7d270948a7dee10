/*
 * The MPI_Barrier baseline of rdlm-bench's barrier benchmark, measured exactly as
 * rdlm's barrier is: warm-up barriers, one aligning barrier, then `iterations`
 * barriers timed with CLOCK_MONOTONIC, each rank stamping after every barrier.
 * Prints one line that rdlm-bench parses:
 *
 *   RESULT mpi_barrier nprocs=N iters=I us_max=U p50_us=A p90_us=B p99_us=C
 *
 * us_max: max over ranks of elapsed / barriers done; pXX_us: max over ranks of each
 * rank's percentile of single barriers; done: barriers measured, fewer than iters if
 * the time cap (-t MS, default 2000; warm-up 500 ms) ended the run early. The cap is
 * checked by rank 0 every 100 barriers and broadcast (the broadcast is not timed),
 * as rdlm-bench does for rdlm's barrier. Run by hand:
 *   mpirun -np 2 ./rdlm-mpi-barrier-baseline -i 10000 -x 1000
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "stats.h"

#define RDLM_BENCH_MPI_SAMPLES 65536u
#define RDLM_BENCH_MPI_CHUNK 100u
#define RDLM_BENCH_MPI_WARMUP_CAP_NS 500000000ull

static int rdlm_bench_parse_count(const char *text, uint64_t *value_p)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);

    if (text[0] == '\0' || text[0] == '-' || *end != '\0') {
        return -1;
    }
    *value_p = v;
    return 0;
}

/* Up to n barriers, ended at a chunk boundary once rank 0 has spent cap_ns. Returns
 * the number done; *busy_ns_p gets their total time. */
static uint64_t rdlm_bench_mpi_phase(uint64_t n, uint64_t cap_ns, rdlm_bench_sampler_t *s,
                                     uint64_t *busy_ns_p, int rank)
{
    uint64_t t_prev = rdlm_bench_now_ns();
    uint64_t busy = 0;
    uint64_t t;
    uint64_t k;
    int stop;

    for (k = 0; k < n; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t = rdlm_bench_now_ns();
        if (s != NULL) {
            rdlm_bench_sampler_add(s, t - t_prev);
        }
        busy += t - t_prev;
        t_prev = t;
        if ((k + 1) % RDLM_BENCH_MPI_CHUNK == 0) {
            stop = rank == 0 && busy > cap_ns;
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            t_prev = rdlm_bench_now_ns();
            if (stop) {
                k++;
                break;
            }
        }
    }
    *busy_ns_p = busy;
    return k;
}

int main(int argc, char **argv)
{
    uint64_t iterations = 10000;
    uint64_t warmup = 1000;
    uint64_t cap_ms = 2000;
    uint64_t busy_ns;
    uint64_t done;
    uint32_t *buf;
    rdlm_bench_sampler_t sampler;
    rdlm_bench_summary_t s;
    double local[4];
    double global[4];
    double *v;
    uint64_t k;
    int rank;
    int size;
    int c;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((c = getopt(argc, argv, "i:x:t:h")) != -1) {
        if ((c == 'i' && rdlm_bench_parse_count(optarg, &iterations) == 0 && iterations > 0) ||
            (c == 'x' && rdlm_bench_parse_count(optarg, &warmup) == 0) ||
            (c == 't' && rdlm_bench_parse_count(optarg, &cap_ms) == 0)) {
            continue;
        }
        if (rank == 0) {
            fprintf(c == 'h' ? stdout : stderr,
                    "Usage: mpirun -np N %s [-i ITERATIONS] [-x WARMUP] [-t CAP_MS]\n",
                    argv[0]);
        }
        MPI_Finalize();
        return c == 'h' ? 0 : 2;
    }
    buf = malloc(RDLM_BENCH_MPI_SAMPLES * sizeof(*buf));
    v = malloc(RDLM_BENCH_MPI_SAMPLES * sizeof(*v));
    if (buf == NULL || v == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sampler = (rdlm_bench_sampler_t){.buf = buf, .cap = RDLM_BENCH_MPI_SAMPLES,
                                     .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1)};

    rdlm_bench_mpi_phase(warmup, RDLM_BENCH_MPI_WARMUP_CAP_NS, NULL, &busy_ns, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    done = rdlm_bench_mpi_phase(iterations, cap_ms * 1000000ull, &sampler, &busy_ns, rank);
    for (k = 0; k < sampler.len; k++) {
        v[k] = buf[k] / 1000.0;
    }
    rdlm_bench_summarize(v, sampler.len, &s);
    local[0] = (double)busy_ns / (double)done / 1000.0;
    local[1] = s.p50;
    local[2] = s.p90;
    local[3] = s.p99;
    MPI_Reduce(local, global, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("RESULT mpi_barrier nprocs=%d iters=%llu us_max=%.6f p50_us=%.6f "
               "p90_us=%.6f p99_us=%.6f done=%llu\n",
               size, (unsigned long long)iterations, global[0], global[1], global[2],
               global[3], (unsigned long long)done);
        fflush(stdout);
    }
    free(v);
    free(buf);
    MPI_Finalize();
    return 0;
}
