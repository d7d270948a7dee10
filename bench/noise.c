/* Other processes' CPU use during a benchmark; see noise.h. */
#include "noise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"

#define RDLM_BENCH_NOISE_MIN_NS 1000000000ull

static double rdlm_bench_tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* User + system CPU seconds of the processes in RDLMBENCH_SERVER_PIDS (space- or
 * comma-separated; ones that are gone count 0). */
static double rdlm_bench_servers_s(double tick)
{
    const char *list = getenv("RDLMBENCH_SERVER_PIDS");
    unsigned long long ut, st;
    double total = 0;
    char path[64];
    char buf[1024];
    const char *p;
    const char *fields;
    char *end;
    long pid;
    FILE *f;

    for (p = list; p != NULL && *p != '\0'; p = end) {
        pid = strtol(p, &end, 10);
        if (end == p) {
            end = (char *)p + 1;
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        f = fopen(path, "r");
        if (f == NULL) {
            continue;
        }
        /* pid (comm) state ppid ... utime is field 14, stime 15; comm may hold spaces */
        if (fgets(buf, sizeof(buf), f) != NULL && (fields = strrchr(buf, ')')) != NULL &&
            sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                   &ut, &st) == 2) {
            total += (double)(ut + st) / tick;
        }
        fclose(f);
    }
    return total;
}

void rdlm_bench_noise_take(rdlm_bench_noise_snap_t *snap_p)
{
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    rdlm_bench_noise_snap_t s = {0};
    double tick = (double)sysconf(_SC_CLK_TCK);
    struct rusage self, children;
    FILE *f = fopen("/proc/stat", "r");

    if (f != NULL) {
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys,
                   &idle, &iowait, &irq, &softirq, &steal) == 8 &&
            tick > 0) {
            s.busy_s = (double)(user + nice + sys + irq + softirq) / tick;
            s.steal_s = (double)steal / tick;
            s.ok = 1;
        }
        fclose(f);
    }
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    s.own_s = rdlm_bench_tv_s(self.ru_utime) + rdlm_bench_tv_s(self.ru_stime) +
              rdlm_bench_tv_s(children.ru_utime) + rdlm_bench_tv_s(children.ru_stime) +
              (tick > 0 ? rdlm_bench_servers_s(tick) : 0);
    s.wall_ns = rdlm_bench_now_ns();
    *snap_p = s;
}

double rdlm_bench_noise_others(const rdlm_bench_noise_snap_t *from,
                               const rdlm_bench_noise_snap_t *to, double *steal_p)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double capacity = (double)(to->wall_ns - from->wall_ns) / 1e9 * (double)ncpu;
    double others;

    *steal_p = -1;
    /* /proc/stat counts in clock ticks (10 ms): under a second it says little. */
    if (!from->ok || !to->ok || to->wall_ns - from->wall_ns < RDLM_BENCH_NOISE_MIN_NS) {
        return -1;
    }
    others = (to->busy_s - from->busy_s) - (to->own_s - from->own_s);
    others = others < 0 ? 0 : others / capacity;
    *steal_p = (to->steal_s - from->steal_s) / capacity;
    return others > 1 ? 1 : others;
}
