/*
 * What the tests that fork the processes of one distributed context share: a
 * monotonic clock in seconds, a free loopback port for the standalone rendezvous,
 * and reaping the children within a time limit (one of them, the victim, must die by
 * SIGKILL; the others must exit 0).
 */
#ifndef RDLM_TEST_DIST_PROCS_H
#define RDLM_TEST_DIST_PROCS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double procs_now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A free TCP port on 127.0.0.1 (bound, then released for rank 0 to take); -1. */
static inline int procs_free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Wait for the n children pids (rank r = index), killing all of them once limit_s
 * passed. 1 if the victim ended by SIGKILL and every other rank exited 0, else 0
 * (said on stderr, prefixed with who). */
static inline int procs_reap(const pid_t *pids, unsigned n, unsigned victim, double limit_s,
                             const char *who)
{
    double deadline = procs_now_s() + limit_s;
    int ok = 1;

    for (unsigned done = 0; done < n;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);

        if (pid == 0) {
            if (procs_now_s() > deadline) {
                fprintf(stderr, "%s: children overran %.0f s; killing them\n", who,
                        limit_s);
                for (unsigned r = 0; r < n; r++)
                    kill(pids[r], SIGKILL);
                ok = 0;
                deadline = procs_now_s() + 3600;
            }
            usleep(20000);
            continue;
        }
        if (pid < 0)
            break;
        done++;
        for (unsigned r = 0; r < n; r++) {
            if (pids[r] != pid)
                continue;
            if (r == victim ? !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                            : !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                fprintf(stderr, "%s: rank %u ended wrongly (status 0x%x)\n", who, r,
                        status);
                ok = 0;
            }
        }
    }
    return ok;
}

#endif
