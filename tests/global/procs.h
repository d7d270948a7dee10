/*
 * What the tests that fork the processes of one distributed context share: a
 * monotonic clock in seconds, a free loopback port for the standalone rendezvous,
 * reaping the children within a time limit (one of them, the victim, must die by
 * SIGKILL; the others must exit 0), and removing what the victim left in /dev/shm.
 * Each test defines FAIL(...) as procs_fail(its name, rank, ...).
 */
#ifndef RDLM_TEST_DIST_PROCS_H
#define RDLM_TEST_DIST_PROCS_H

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdlm.h>

/* Say why on stderr ("who rank r: ...") and end the process with status 1. */
static inline __attribute__((noreturn, format(printf, 3, 4))) void
procs_fail(const char *who, unsigned rank, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s rank %u: ", who, rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    _exit(1);
}

static inline double procs_now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait up to limit_s for *flag >= want (a flag in memory the processes share): 1, or
 * 0 at the limit. */
static inline int procs_wait_for(int *flag, int want, double limit_s)
{
    double end = procs_now_s() + limit_s;

    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
        if (procs_now_s() > end)
            return 0;
        usleep(10000);
    }
    return 1;
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

/* The environment of the children: job name, virtual nodes and, unless default_tls,
 * everything over TCP (UCX) with every peer watched for death; with default_tls, UCX's
 * own transport choice (shared memory on one host) and RDLM_PEER_FAILURE unset (auto:
 * same-host peers are then watched through their process records, not by UCX). */
static inline void procs_env(const char *job, const char *virtual_nodes, int default_tls)
{
    setenv("RDLM_JOB", job, 1);
    setenv("RDLM_VIRTUAL_NODES", virtual_nodes, 1);
    if (default_tls) {
        unsetenv("UCX_TLS");
        unsetenv("RDLM_PEER_FAILURE");
    } else {
        setenv("UCX_TLS", "tcp,self", 1);
        setenv("RDLM_PEER_FAILURE", "on", 1);
    }
}

/* Join the distributed context of size processes as rank, through the standalone
 * rendezvous at rendezvous (rank 0 listens there): rdlm_ctx_create's status. */
static inline rdlm_status_t procs_join(unsigned rank, unsigned size, const char *rendezvous,
                                       rdlm_ctx_h *ctx_p)
{
    rdlm_ctx_params_t p = {.field_mask = RDLM_CTX_FIELD_PEERS,
                           .rank = rank,
                           .size = size,
                           .rendezvous = rendezvous};

    return rdlm_ctx_create(&p, ctx_p);
}

/* procs_join a context of size processes on size (virtual) nodes: the context, its
 * *di_p, or procs_fail (prefixed with who). */
static inline rdlm_ctx_h procs_join_nodes(const char *who, unsigned rank, unsigned size,
                                          const char *rendezvous,
                                          rdlm_ctx_dist_info_t *di_p)
{
    rdlm_ctx_h ctx;
    rdlm_status_t s = procs_join(rank, size, rendezvous, &ctx);

    if (s != RDLM_OK)
        procs_fail(who, rank, "rdlm_ctx_create: %s", rdlm_status_str(s));
    if (rdlm_ctx_dist_info(ctx, di_p) != RDLM_OK || !di_p->distributed ||
        di_p->nodes != size)
        procs_fail(who, rank, "not a distributed context of %u nodes", size);
    return ctx;
}

/* procs_join, then check the layout the death tests build on 2 virtual nodes: 2 nodes,
 * the victim the second process of node 0 (its node-mate leads node 0, so the homes
 * of node 0 live on). The context, or procs_fail (prefixed with who). */
static inline rdlm_ctx_h procs_join_two_nodes(const char *who, unsigned rank, unsigned size,
                                              const char *rendezvous, unsigned victim,
                                              rdlm_ctx_dist_info_t *di_p)
{
    rdlm_ctx_h ctx;
    rdlm_status_t s = procs_join(rank, size, rendezvous, &ctx);

    if (s != RDLM_OK)
        procs_fail(who, rank, "rdlm_ctx_create: %s", rdlm_status_str(s));
    if (rdlm_ctx_dist_info(ctx, di_p) != RDLM_OK || di_p->nodes != 2 ||
        (rank == victim) != (di_p->node == 0 && di_p->local_rank == 1))
        procs_fail(who, rank,
                   "not the expected layout (2 nodes, the victim second on node 0)");
    return ctx;
}

/* Open "<prefix>-<k>" for the first k whose home is node `home`; or procs_fail
 * (prefixed with who). */
static inline rdlm_lock_h procs_open_homed(const char *who, unsigned rank, rdlm_ctx_h ctx,
                                           const char *prefix, int32_t home)
{
    for (int k = 0; k < 1000; k++) {
        char name[64];
        rdlm_lock_h l;
        rdlm_lock_info_t info;

        snprintf(name, sizeof(name), "%s-%d", prefix, k);
        if (rdlm_lock_open(ctx, name, &l) != RDLM_OK)
            procs_fail(who, rank, "rdlm_lock_open %s failed", name);
        if (rdlm_lock_query(l, &info) != RDLM_OK)
            procs_fail(who, rank, "rdlm_lock_query %s failed", name);
        if (info.home_node == home)
            return l;
        rdlm_lock_close(l);
    }
    procs_fail(who, rank, "no name of 1000 is homed at node %d", home);
}

/* The home-served semaphore the semaphore tests share: the context's protocol must be
 * "am"; then name with permits is opened and every process waits for the others'
 * open. The handle, or procs_fail (prefixed with who). */
static inline rdlm_sem_h procs_sem_am(const char *who, unsigned rank, rdlm_ctx_h ctx,
                                      const rdlm_ctx_dist_info_t *di, const char *name,
                                      uint32_t permits)
{
    rdlm_sem_h sem;

    if (strcmp(di->lock_protocol, "am") != 0)
        procs_fail(who, rank, "the home-served protocol (am) expected, the context has %s",
                   di->lock_protocol);
    if (rdlm_sem_open(ctx, name, permits, &sem) != RDLM_OK)
        procs_fail(who, rank, "rdlm_sem_open failed");
    if (rdlm_ctx_barrier(ctx) != RDLM_OK)
        procs_fail(who, rank, "barrier failed");
    return sem;
}

/* Fork n children, rank r running child(r, rendezvous) and exiting with its result.
 * 0, or -1 if a fork failed (the children forked so far run on). */
static inline int procs_start(pid_t *pids, unsigned n, int (*child)(unsigned, const char *),
                              const char *rendezvous)
{
    for (unsigned r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(child(r, rendezvous));
        if (pids[r] < 0)
            return -1;
    }
    return 0;
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

/* Run n children of one context: a free loopback port for the rendezvous, job's
 * environment on virtual_nodes nodes (procs_env, default_tls as there); rank r runs
 * child(r, rendezvous). 1 if they ended as procs_reap wants (victim by SIGKILL, the
 * others 0; victim n: none) within limit_s, else 0 (said on stderr, prefixed with
 * who). */
static inline int procs_run(const char *job, const char *virtual_nodes, int default_tls,
                            unsigned n, int (*child)(unsigned, const char *),
                            unsigned victim, double limit_s, const char *who)
{
    char rendezvous[32];
    pid_t pids[64];
    int port = procs_free_port();

    if (port < 0 || n > 64) {
        fprintf(stderr, "%s: no free port, or more than 64 processes\n", who);
        return 0;
    }
    snprintf(rendezvous, sizeof(rendezvous), "127.0.0.1:%d", port);
    procs_env(job, virtual_nodes, default_tls);
    if (procs_start(pids, n, child, rendezvous) != 0) {
        fprintf(stderr, "%s: fork failed\n", who);
        return 0;
    }
    return procs_reap(pids, n, victim, limit_s, who);
}

/* A test's main with no victim: procs_run over UCX TCP, then "who: passed" or "who:
 * FAILED" on stdout (unbuffered: children end with _exit); the exit status (0 pass). */
static inline int procs_main(const char *who, const char *job, const char *virtual_nodes,
                             unsigned n, int (*child)(unsigned, const char *),
                             double limit_s)
{
    int ok;

    setvbuf(stdout, NULL, _IONBF, 0);
    ok = procs_run(job, virtual_nodes, 0, n, child, n /* no victim */, limit_s, who);
    printf("%s: %s\n", who, ok ? "passed" : "FAILED");
    return !ok;
}

/* procs_run over UCX TCP with leases at the job's own authority: RDLM_JOB_AUTHORITY=1
 * and RDLM_LEASE_TTL_MS=ttl_ms. */
static inline int procs_run_leased(const char *job, const char *virtual_nodes,
                                   const char *ttl_ms, unsigned n,
                                   int (*child)(unsigned, const char *), unsigned victim,
                                   double limit_s, const char *who)
{
    setenv("RDLM_JOB_AUTHORITY", "1", 1);
    setenv("RDLM_LEASE_TTL_MS", ttl_ms, 1);
    return procs_run(job, virtual_nodes, 0, n, child, victim, limit_s, who);
}

/* 1 if every rank of n but skip acquired and released with RDLM_OK (acquired[r],
 * released[r]), else 0 (said on stderr, prefixed with who). */
static inline int procs_all_ok(const char *who, unsigned n, unsigned skip,
                               const int *acquired, const int *released)
{
    int ok = 1;

    for (unsigned r = 0; r < n; r++) {
        if (r != skip && (acquired[r] != RDLM_OK || released[r] != RDLM_OK)) {
            fprintf(stderr, "%s: rank %u acquired %s, released %s (want RDLM_OK)\n", who, r,
                    rdlm_status_name(acquired[r]), rdlm_status_name(released[r]));
            ok = 0;
        }
    }
    return ok;
}

/* 1 if rdlm_sem_available at the end said (status, available) with want permits
 * free, else 0 (said on stderr, prefixed with who). */
static inline int procs_permits_free(const char *who, int status, uint32_t available,
                                     uint32_t want)
{
    if (status == RDLM_OK && available == want)
        return 1;
    fprintf(stderr, "%s: at the end %u permits free (%s), want %u\n", who, available,
            rdlm_status_name(status), want);
    return 0;
}

/* The node segments and lock files of job in the user's directory
 * ("/dev/shm/rdlm-<uid>/<job>*"): a killed process cannot remove its own. */
static inline void procs_remove_segments(const char *job)
{
    char path[64];
    DIR *dir;
    struct dirent *e;

    snprintf(path, sizeof(path), "/dev/shm/rdlm-%u", (unsigned)geteuid());
    dir = opendir(path);
    if (dir == NULL)
        return;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, job, strlen(job)) == 0)
            unlinkat(dirfd(dir), e->d_name, 0);
    }
    closedir(dir);
}

#endif
