/*
 * How busy the machine was with other work while a benchmark ran: CPU time of the
 * whole machine (/proc/stat) minus this process's and its children's own
 * (getrusage), as a share of all CPUs over the wall time, plus the hypervisor's steal.
 * The lock servers of the services benchmark are part of the measurement, not
 * noise: the processes listed in RDLMBENCH_SERVER_PIDS (bench/services/services.sh sets it)
 * count as this process's own.
 * A benchmark on a shared 2-core VM is only as good as this figure is small.
 */
#ifndef RDLM_BENCH_NOISE_H
#define RDLM_BENCH_NOISE_H

#include <stdint.h>

typedef struct rdlm_bench_noise_snap {
    double busy_s;  /**< machine CPU seconds, not idle/iowait/steal */
    double steal_s; /**< machine CPU seconds stolen by the hypervisor */
    double own_s;   /**< this process + reaped children + RDLMBENCH_SERVER_PIDS */
    uint64_t wall_ns;
    int ok;         /**< /proc/stat was readable */
} rdlm_bench_noise_snap_t;

/** Take a snapshot. Non-blocking apart from reading /proc/stat. */
void rdlm_bench_noise_take(rdlm_bench_noise_snap_t *snap_p);

/** Between two snapshots: the share (0..1) of all CPUs used by other processes,
 *  and in *steal_p the share stolen; -1 if unknown or under a second apart. */
double rdlm_bench_noise_others(const rdlm_bench_noise_snap_t *from,
                               const rdlm_bench_noise_snap_t *to, double *steal_p);

#endif
