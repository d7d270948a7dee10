/* The '#' header of rdlm-bench output; see header.h. */
#include "header.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>

/* Append "NAME=value" or "NAME=default" to the waiting-policy line. */
static void rdlm_bench_env_policy(char *buf, size_t len, const char *var)
{
    const char *v = getenv(var);
    size_t used = strlen(buf);

    snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", var,
             v != NULL && v[0] != '\0' ? v : "default");
}

void rdlm_bench_header_fill(rdlm_bench_header_t *h, const rdlm_bench_opts_t *opts,
                            int argc, char **argv, const char *processes)
{
    struct utsname un;
    struct tm tm;
    time_t now = time(NULL);
    size_t used = 0;
    int k;

    memset(h, 0, sizeof(*h));
    snprintf(h->version, sizeof(h->version), "%s", rdlm_get_version());
    snprintf(h->transport, sizeof(h->transport), "shm (CPU atomics)");
    rdlm_bench_env_policy(h->waiting, sizeof(h->waiting), "RDLM_SPIN");
    rdlm_bench_env_policy(h->waiting, sizeof(h->waiting), "RDLM_YIELD");
    rdlm_bench_env_policy(h->waiting, sizeof(h->waiting), "RDLM_PARK_SLICE_MS");
    snprintf(h->processes, sizeof(h->processes), "%s", processes);
    gmtime_r(&now, &tm);
    strftime(h->date, sizeof(h->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (uname(&un) == 0) {
        snprintf(h->host, sizeof(h->host), "%ld online CPUs, %s %s",
                 sysconf(_SC_NPROCESSORS_ONLN), un.sysname, un.release);
    } else {
        snprintf(h->host, sizeof(h->host), "%ld online CPUs", sysconf(_SC_NPROCESSORS_ONLN));
    }
    for (k = 0; k < argc && used + 1 < sizeof(h->command); k++) {
        used += (size_t)snprintf(h->command + used, sizeof(h->command) - used, "%s%s",
                                 k ? " " : "", argv[k]);
    }
    h->rounds = opts->rounds;
}

void rdlm_bench_header_print(const rdlm_bench_header_t *h, FILE *out)
{
    fprintf(out, "# rdlm-bench: rdlm %s\n", h->version);
    fprintf(out, "# transport: %s\n", h->transport);
    fprintf(out, "# waiting:   %s\n", h->waiting);
    fprintf(out, "# processes: %s\n", h->processes);
    fprintf(out, "# placement: a run's workers one per CPU (sched_setaffinity, as mpirun "
                 "--bind-to core) where they fit the CPUs allowed; more float\n");
    fprintf(out, "# rounds:    %u, rdlm and baselines alternating; figures are medians "
                 "over rounds\n", h->rounds);
    fprintf(out, "# date:      %s\n", h->date);
    fprintf(out, "# host:      %s\n", h->host);
    fprintf(out, "# command:   %s\n", h->command);
}
