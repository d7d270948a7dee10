/* Who writes a log line (see log.h): the short host name and the rank, read once. */
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"

#define RDLM_LOG_HOST_MAX 64

static pthread_once_t rdlm_log_origin_once = PTHREAD_ONCE_INIT;
static char rdlm_log_hostname[RDLM_LOG_HOST_MAX + 1] = "-";
static _Atomic int rdlm_log_rank = -1;

/* The rank in the first of the launchers' variables that is set, or -1 (or a bad value).
 * Open MPI's and PMIx's come before Slurm's: under mpirun inside a Slurm allocation,
 * SLURM_PROCID is the index of the node's launch daemon, the same for all its ranks. */
static int rdlm_log_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *value = getenv(vars[i]);
        char *end;
        long rank;

        if (value == NULL) {
            continue;
        }
        errno = 0;
        rank = strtol(value, &end, 10);
        if (value[0] < '0' || value[0] > '9' || errno != 0 || *end != '\0' ||
            rank > INT_MAX) {
            return -1;
        }
        return (int)rank;
    }
    return -1;
}

static void rdlm_log_origin_init(void)
{
    char name[256];

    if (gethostname(name, sizeof(name)) == 0) {
        name[sizeof(name) - 1] = '\0'; /* POSIX leaves a cut name unterminated */
        name[strcspn(name, ".")] = '\0';
        if (name[0] != '\0') {
            snprintf(rdlm_log_hostname, sizeof(rdlm_log_hostname), "%.*s",
                     RDLM_LOG_HOST_MAX, name);
        }
    }
    rdlm_store(&rdlm_log_rank, rdlm_log_launcher_rank(), RDLM_RELAXED);
}

void rdlm_log_set_rank(int rank)
{
    pthread_once(&rdlm_log_origin_once, rdlm_log_origin_init);
    rdlm_store(&rdlm_log_rank, rank < 0 ? -1 : rank, RDLM_RELAXED);
}

int rdlm_log_get_rank(void)
{
    pthread_once(&rdlm_log_origin_once, rdlm_log_origin_init);
    return rdlm_load(&rdlm_log_rank, RDLM_RELAXED);
}

char *rdlm_log_rank_format(char *buf, size_t len)
{
    int rank = rdlm_log_get_rank();

    if (rank < 0) {
        snprintf(buf, len, "-");
    } else {
        snprintf(buf, len, "%d", rank);
    }
    return buf;
}

const char *rdlm_log_host(void)
{
    pthread_once(&rdlm_log_origin_once, rdlm_log_origin_init);
    return rdlm_log_hostname;
}
