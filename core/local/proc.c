/* Process identity and liveness (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Read state (field 3) and start time (field 22) of pid from /proc/pid/stat.
 * Returns 0 on success, -1 if the process does not exist or cannot be read. */
static int rdlm_proc_stat(pid_t pid, char *state_p, uint64_t *start_p)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return -1;
    }
    buf[n] = '\0';
    /* comm (field 2) may hold spaces and parentheses: fields restart after the last
     * ')'. Field 3 is right after it; field 22 is 19 spaces further. */
    p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ') {
        return -1;
    }
    *state_p = p[2];
    for (int field = 2; field < 22 && p != NULL; field++) {
        p = strchr(p + 1, ' ');
    }
    if (p == NULL) {
        return -1;
    }
    *start_p = strtoull(p + 1, NULL, 10);
    return 0;
}

uint64_t rdlm_proc_start_time(pid_t pid)
{
    char state;
    uint64_t start;

    return (rdlm_proc_stat(pid, &state, &start) == 0) ? start : 0;
}

int rdlm_proc_alive(pid_t pid, uint64_t start_time)
{
    char state;
    uint64_t start;

    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
        return 0;
    }
    if (rdlm_proc_stat(pid, &state, &start) != 0) {
        return 0;
    }
    /* A zombie keeps its /proc entry but can hold nothing any more. */
    return state != 'Z' && state != 'X' && start == start_time;
}

uint64_t rdlm_proc_random_id(void)
{
    uint64_t id = 0;

    while (id == 0) {
        if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
            id = ((uint64_t)getpid() * 0x9e3779b97f4a7c15ull) ^ (uint64_t)time(NULL);
        }
    }
    return id;
}
