/* Who writes a log line (see log.h): the short host name and the rank, read once. */
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "atomics.h"
#include "launch.h"

extern char **environ;

#define RDLM_LOG_HOST_MAX 64

static pthread_once_t rdlm_log_origin_once = PTHREAD_ONCE_INIT;
static char rdlm_log_hostname[RDLM_LOG_HOST_MAX + 1] = "-";
static _Atomic int rdlm_log_rank = -1;

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
    rdlm_store(&rdlm_log_rank, rdlm_launch_rank((const char *const *)environ), RDLM_RELAXED);
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
