/* mpirun launcher of rdlm-bench's MPI programs; see mpi_launch.h. */
#include "mpi_launch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "mpi_output.h"

#define RDLM_BENCH_MPI_TIMEOUT_S 60
#define RDLM_BENCH_MPI_OUT_MAX 262144 /* the result lines of 51 rounds fit */
#define RDLM_BENCH_MPI_ARGV_MAX 96

#if defined(RDLM_BENCH_MPIRUN)
#define RDLM_BENCH_HAVE_MPI 1
#else
#define RDLM_BENCH_HAVE_MPI 0
#endif

#define RDLM_BENCH_MPI_FOUND_MAX 4 /* names rdlm_bench_mpi_find keeps */

/* path/name into buf if that file exists (programs: executable); 0 or -1. */
static int rdlm_bench_mpi_try(const char *dir, size_t dirlen, const char *name, int program,
                              char *buf, size_t len)
{
    if (dirlen == 0 ||
        (size_t)snprintf(buf, len, "%.*s/%s", (int)dirlen, dir, name) >= len) {
        return -1;
    }
    return access(buf, program ? X_OK : R_OK);
}

/* name in the directories of PATH into buf; 0 or -1. */
static int rdlm_bench_mpi_in_path(const char *name, char *buf, size_t len)
{
    const char *p = getenv("PATH");
    const char *colon;

    for (; p != NULL && *p != '\0'; p = colon != NULL ? colon + 1 : NULL) {
        colon = strchr(p, ':');
        if (rdlm_bench_mpi_try(p, colon ? (size_t)(colon - p) : strlen(p), name, 1, buf,
                               len) == 0) {
            return 0;
        }
    }
    return -1;
}

/* name beside this executable (/proc/self/exe), in its directory joined with rel, into
 * buf; 0 or -1. */
static int rdlm_bench_mpi_beside(const char *rel, const char *name, int program, char *buf,
                                 size_t len)
{
    char self[PATH_MAX];
    char dir[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash;

    if (n <= 0) {
        return -1;
    }
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash == NULL) {
        return -1;
    }
    *slash = '\0';
    snprintf(dir, sizeof(dir), "%s%s%s", self, rel[0] ? "/" : "", rel);
    return rdlm_bench_mpi_try(dir, strlen(dir), name, program, buf, len);
}

/* Where name is (rdlm_bench_mpi_find's search), into buf; 0 or -1. */
static int rdlm_bench_mpi_search(const char *name, char *buf, size_t len)
{
    static const char *const lib_dirs[] = {RDLM_BENCH_LIB_DIR, RDLM_BENCH_BUILT_LIB_DIR};
    int program = strstr(name, ".so") == NULL;
    size_t k;

    if (program) {
        return rdlm_bench_mpi_beside("", name, 1, buf, len) == 0
                   ? 0
                   : rdlm_bench_mpi_in_path(name, buf, len);
    }
    for (k = 0; k < sizeof(lib_dirs) / sizeof(lib_dirs[0]); k++) {
        if (rdlm_bench_mpi_beside(lib_dirs[k], name, 0, buf, len) == 0) {
            return 0;
        }
    }
    return -1;
}

const char *rdlm_bench_mpi_find(const char *name)
{
    static struct {
        const char *name;
        char path[PATH_MAX];
    } found[RDLM_BENCH_MPI_FOUND_MAX];
    size_t k;

    if (name == NULL) {
        return NULL;
    }
    for (k = 0; k < RDLM_BENCH_MPI_FOUND_MAX && found[k].name != NULL; k++) {
        if (strcmp(found[k].name, name) == 0) {
            return found[k].path;
        }
    }
    if (k == RDLM_BENCH_MPI_FOUND_MAX ||
        rdlm_bench_mpi_search(name, found[k].path, sizeof(found[k].path)) != 0) {
        return NULL;
    }
    found[k].name = name;
    return found[k].path;
}

#if RDLM_BENCH_HAVE_MPI
/* mpirun: the configured launcher's name in PATH (the user's MPI environment), else
 * the path configure found. */
static const char *rdlm_bench_mpirun(void)
{
    const char *configured = RDLM_BENCH_MPIRUN;
    const char *base = strrchr(configured, '/');
    const char *found = rdlm_bench_mpi_find(base != NULL ? base + 1 : configured);

    return found != NULL ? found : configured;
}
#endif

int rdlm_bench_mpi_can_run(const char *program, char *why, size_t whylen)
{
#if RDLM_BENCH_HAVE_MPI
    if (access(rdlm_bench_mpirun(), X_OK) != 0) {
        snprintf(why, whylen, "mpirun not found (not in PATH, nor '%s')",
                 RDLM_BENCH_MPIRUN);
        return 0;
    }
    if (program == NULL || access(program, X_OK) != 0) {
        snprintf(why, whylen, "%s not found beside rdlm-bench or in PATH",
                 program ? program : "the MPI program");
        return 0;
    }
    return 1;
#else
    (void)program;
    snprintf(why, whylen, "built without MPI (RDLM_WITH_MPI=OFF or mpirun not found at "
                          "configure time)");
    return 0;
#endif
}

/* mpirun's argv for job in argv (at most RDLM_BENCH_MPI_ARGV_MAX entries, NULL-ended);
 * np holds the process count's text. Returns the count, or -1 if it does not fit. */
static int rdlm_bench_mpi_argv(const rdlm_bench_mpi_job_t *job, const char *mpirun,
                               char *np, size_t nplen, const char **argv)
{
    static const char *const fixed[] = {"--oversubscribe", "--bind-to", "none"};
    int n = 0;
    size_t k;

    snprintf(np, nplen, "%u", job->nprocs);
    argv[n++] = mpirun;
    argv[n++] = "-np";
    argv[n++] = np;
    for (k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
        argv[n++] = fixed[k];
    }
    for (k = 0; job->mca != NULL && job->mca[k] != NULL && job->mca[k + 1] != NULL; k += 2) {
        if (n + 3 >= RDLM_BENCH_MPI_ARGV_MAX) {
            return -1;
        }
        argv[n++] = "--mca";
        argv[n++] = job->mca[k];
        argv[n++] = job->mca[k + 1];
    }
    for (k = 0; job->env != NULL && job->env[k] != NULL; k++) {
        if (n + 2 >= RDLM_BENCH_MPI_ARGV_MAX) {
            return -1;
        }
        argv[n++] = "-x";
        argv[n++] = job->env[k];
    }
    argv[n++] = job->program;
    argv[n++] = "--result-lines"; /* what rdlm-bench reads: mpi_result.h */
    for (k = 0; job->args != NULL && job->args[k] != NULL; k++) {
        if (n + 1 >= RDLM_BENCH_MPI_ARGV_MAX) {
            return -1;
        }
        argv[n++] = job->args[k];
    }
    argv[n] = NULL;
    return n;
}

void rdlm_bench_mpi_command(const rdlm_bench_mpi_job_t *job, char *buf, size_t len)
{
    const char *argv[RDLM_BENCH_MPI_ARGV_MAX];
    const char *base;
    char np[16];
    size_t used = 0;
    int k;

    buf[0] = '\0';
    if (rdlm_bench_mpi_argv(job, "mpirun", np, sizeof(np), argv) < 0) {
        return;
    }
    for (k = 0; argv[k] != NULL && used + 1 < len; k++) {
        base = argv[k] == job->program && strrchr(argv[k], '/') ? strrchr(argv[k], '/') + 1
                                                               : argv[k];
        used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? " " : "", base);
    }
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

/* Pass the progress lines among buf's complete lines from *line_p on to stderr, so a
 * long run shows how far it is; *line_p: the start of the first line not yet seen. */
static void rdlm_bench_mpi_progress(const char *buf, size_t used, size_t *line_p)
{
    const char *eol;

    while (*line_p < used && (eol = memchr(buf + *line_p, '\n', used - *line_p)) != NULL) {
        const char *line = buf + *line_p;
        size_t len = (size_t)(eol - line);

        if (memmem(line, len, RDLM_BENCH_OUT_PROGRESS_MARK,
                   strlen(RDLM_BENCH_OUT_PROGRESS_MARK)) != NULL) {
            fprintf(stderr, "rdlm-bench:   %.*s\n", (int)len, line);
        }
        *line_p += len + 1;
    }
}

/* Read the child's output until EOF or the deadline, passing its progress lines on;
 * returns 0 at EOF. */
static int rdlm_bench_mpi_read(int fd, char *buf, size_t cap, uint64_t deadline_ns)
{
    size_t used = 0, line = 0;
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
                rdlm_bench_mpi_progress(buf, used, &line);
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

#endif

int rdlm_bench_mpi_run(const rdlm_bench_mpi_job_t *job, char **out_p, char *why,
                       size_t whylen)
{
#if RDLM_BENCH_HAVE_MPI
    const char *argv[RDLM_BENCH_MPI_ARGV_MAX];
    uint32_t timeout_s = job->timeout_s ? job->timeout_s : RDLM_BENCH_MPI_TIMEOUT_S;
    uint64_t deadline_ns = rdlm_bench_now_ns() + timeout_s * 1000000000ull;
    char np[16];
    char *out;
    int fds[2];
    int status = 0;
    int rc;
    int k;
    pid_t pid;

    if (rdlm_bench_mpi_argv(job, rdlm_bench_mpirun(), np, sizeof(np), argv) < 0) {
        snprintf(why, whylen, "mpirun command line too long");
        return -1;
    }
    out = calloc(1, RDLM_BENCH_MPI_OUT_MAX);
    if (out == NULL || pipe(fds) != 0) {
        snprintf(why, whylen, "cannot set up mpirun: %s", strerror(errno));
        free(out);
        return -1;
    }
    if (job->verbose) {
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
        for (k = 0; job->unset_env != NULL && job->unset_env[k] != NULL; k++) {
            unsetenv(job->unset_env[k]);
        }
        rdlm_bench_mpi_no_leak_check();
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
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
        snprintf(why, whylen, "mpirun did not finish within %u s; killed; its output: %.600s",
                 timeout_s, out);
        free(out);
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, whylen, "mpirun failed (status %d); its output: %.600s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
        free(out);
        return -1;
    }
    *out_p = out;
    return 0;
#else
    (void)out_p;
    rdlm_bench_mpi_can_run(job->program, why, whylen);
    return -1;
#endif
}
