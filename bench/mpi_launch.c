/* mpirun launcher for the MPI_Barrier baseline; see mpi_launch.h. */
#include "mpi_launch.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

#define RDLM_BENCH_MPI_TIMEOUT_S 60
#define RDLM_BENCH_MPI_OUT_MAX 8192

#if defined(RDLM_BENCH_MPIRUN) && defined(RDLM_BENCH_MPI_BASELINE)
#define RDLM_BENCH_HAVE_MPI 1
static const char rdlm_bench_mpirun[] = RDLM_BENCH_MPIRUN;
static const char rdlm_bench_mpi_prog[] = RDLM_BENCH_MPI_BASELINE;
#else
#define RDLM_BENCH_HAVE_MPI 0
#endif

int rdlm_bench_mpi_available(char *why, size_t whylen)
{
#if RDLM_BENCH_HAVE_MPI
    if (rdlm_bench_mpirun[0] == '\0' || access(rdlm_bench_mpirun, X_OK) != 0) {
        snprintf(why, whylen, "mpirun not found (configure found '%s')", rdlm_bench_mpirun);
        return 0;
    }
    if (access(rdlm_bench_mpi_prog, X_OK) != 0) {
        snprintf(why, whylen, "%s not built", rdlm_bench_mpi_prog);
        return 0;
    }
    return 1;
#else
    snprintf(why, whylen, "built without MPI (RDLM_WITH_MPI=OFF or mpirun not found at "
                          "configure time)");
    return 0;
#endif
}

const char *rdlm_bench_mpi_describe(void)
{
    return "mpirun -np N --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader";
}

#if RDLM_BENCH_HAVE_MPI
/* Open MPI keeps allocations past MPI_Finalize: in sanitizer builds LeakSanitizer
 * would fail the baseline at exit. No effect on other builds. (In the forked child.) */
static void rdlm_bench_mpi_no_leak_check(void)
{
    const char *old = getenv("ASAN_OPTIONS");
    char opts[1024];

    snprintf(opts, sizeof(opts), "%s%sdetect_leaks=0", old ? old : "",
             old && old[0] ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
}

/* Read the child's output until EOF or the deadline; returns 0 at EOF. */
static int rdlm_bench_mpi_read(int fd, char *buf, size_t cap, uint64_t deadline_ns)
{
    size_t used = 0;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    ssize_t n;
    uint64_t now;

    for (;;) {
        now = rdlm_bench_now_ns();
        if (now >= deadline_ns) {
            return -1;
        }
        if (poll(&pfd, 1, (int)((deadline_ns - now) / 1000000u) + 1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (used + 1 >= cap) { /* keep draining, keep the first part */
            char scratch[512];

            n = read(fd, scratch, sizeof(scratch));
        } else {
            n = read(fd, buf + used, cap - used - 1);
            if (n > 0) {
                used += (size_t)n;
                buf[used] = '\0';
            }
        }
        if (n == 0) {
            return 0;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN) {
            return -1;
        }
    }
}

static int rdlm_bench_mpi_parse(const char *out, rdlm_bench_mpi_result_t *res)
{
    const char *line = strstr(out, "RESULT mpi_barrier ");
    unsigned nprocs;
    uint64_t iters;

    if (line == NULL) {
        return -1;
    }
    if (sscanf(line,
               "RESULT mpi_barrier nprocs=%u iters=%" SCNu64
               " us_max=%lf p50_us=%lf p90_us=%lf p99_us=%lf done=%" SCNu64,
               &nprocs, &iters, &res->us_max, &res->p50_us, &res->p90_us, &res->p99_us,
               &res->done) != 7) {
        return -1;
    }
    return 0;
}
#endif

int rdlm_bench_mpi_barrier(uint32_t nprocs, uint64_t iterations, uint64_t warmup,
                           uint32_t cap_ms, int verbose, rdlm_bench_mpi_result_t *result_p,
                           char *why, size_t whylen)
{
#if RDLM_BENCH_HAVE_MPI
    char np[16], iters[32], wu[32], cap[16];
    char *argv[] = {(char *)rdlm_bench_mpirun, "-np", np, "--oversubscribe", "--bind-to",
                    "none", "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
                    (char *)rdlm_bench_mpi_prog, "-i", iters, "-x", wu, "-t", cap, NULL};
    uint64_t deadline_ns = rdlm_bench_now_ns() + RDLM_BENCH_MPI_TIMEOUT_S * 1000000000ull;
    rdlm_bench_mpi_result_t res;
    char *out;
    int fds[2];
    int status = 0;
    int rc;
    pid_t pid;

    snprintf(np, sizeof(np), "%u", nprocs);
    snprintf(iters, sizeof(iters), "%" PRIu64, iterations);
    snprintf(wu, sizeof(wu), "%" PRIu64, warmup);
    snprintf(cap, sizeof(cap), "%u", cap_ms);
    out = calloc(1, RDLM_BENCH_MPI_OUT_MAX);
    if (out == NULL || pipe(fds) != 0) {
        snprintf(why, whylen, "cannot set up mpirun: %s", strerror(errno));
        free(out);
        return -1;
    }
    if (verbose) {
        int k;

        fprintf(stderr, "rdlm-bench:   OMPI_ALLOW_RUN_AS_ROOT=1 "
                        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
        for (k = 0; argv[k] != NULL; k++) {
            fprintf(stderr, " %s", argv[k]);
        }
        fprintf(stderr, "\n");
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its own group, so a timeout can end mpirun and its ranks */
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        rdlm_bench_mpi_no_leak_check();
        execv(rdlm_bench_mpirun, argv);
        fprintf(stderr, "exec %s: %s\n", rdlm_bench_mpirun, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        close(fds[0]);
        free(out);
        return -1;
    }
    setpgid(pid, pid); /* also here: whichever runs first */
    rc = rdlm_bench_mpi_read(fds[0], out, RDLM_BENCH_MPI_OUT_MAX, deadline_ns);
    close(fds[0]);
    if (rc != 0) {
        kill(-pid, SIGKILL);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc != 0) {
        snprintf(why, whylen, "mpirun did not finish within %d s; killed",
                 RDLM_BENCH_MPI_TIMEOUT_S);
        rc = -1;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
               rdlm_bench_mpi_parse(out, &res) != 0) {
        snprintf(why, whylen, "mpirun failed (status %d); its output: %.600s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
        rc = -1;
    } else {
        *result_p = res;
        rc = 0;
    }
    free(out);
    return rc;
#else
    (void)nprocs;
    (void)iterations;
    (void)warmup;
    (void)cap_ms;
    (void)verbose;
    (void)result_p;
    rdlm_bench_mpi_available(why, whylen);
    return -1;
#endif
}
