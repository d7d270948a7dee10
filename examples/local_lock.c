/*
 * local_lock: N processes on one node share a lock, a counter and a barrier.
 *
 * Each worker takes the lock 1000 times and writes "token worker" to a file under
 * it. The file is a fenced resource: it accepts a write only if the token is larger
 * than the last one it accepted (kept in its first 8 bytes), and the example checks
 * that every write passes that test. Then all workers meet at a barrier, and
 * one of them prints the counter and the file's summary.
 *
 * usage: local_lock [processes (default 4)]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdlm.h>

#define ROUNDS 1000

/* The resource: a file whose first 8 bytes hold the last accepted token, followed by
 * the records. A write with a token not above the stored one is rejected. */
static int fenced_write(int fd, uint64_t token, int worker)
{
    uint64_t last = 0;
    char line[48];
    int n;

    if (pread(fd, &last, sizeof(last), 0) < 0) {
        perror("pread");
        return -1;
    }
    if (token <= last) {
        fprintf(stderr, "worker %d: stale token %" PRIu64 " <= %" PRIu64 " rejected\n",
                worker, token, last);
        return -1;
    }
    n = snprintf(line, sizeof(line), "%" PRIu64 " %d\n", token, worker);
    if (pwrite(fd, &token, sizeof(token), 0) != (ssize_t)sizeof(token) ||
        pwrite(fd, line, (size_t)n, lseek(fd, 0, SEEK_END)) != n) {
        perror("write");
        return -1;
    }
    return 0;
}

static int worker(int id, int nprocs, const char *path, const char *job)
{
    rdlm_ctx_params_t params = {.field_mask = RDLM_CTX_FIELD_JOB, .job = job};
    rdlm_ctx_h ctx;
    rdlm_lock_h lock;
    rdlm_counter_h writes;
    rdlm_barrier_h done;
    rdlm_status_t status;
    int failures = 0;
    int fd = open(path, O_RDWR);

    if (fd < 0) {
        perror(path);
        return 1;
    }

    status = rdlm_ctx_create(&params, &ctx);
    if (status != RDLM_OK) {
        fprintf(stderr, "worker %d: rdlm_ctx_create: %s\n", id, rdlm_status_str(status));
        return 1;
    }
    if ((status = rdlm_lock_open(ctx, "log-file", &lock)) != RDLM_OK ||
        (status = rdlm_counter_open(ctx, "writes", &writes)) != RDLM_OK ||
        (status = rdlm_barrier_open(ctx, "done", (uint32_t)nprocs, &done)) != RDLM_OK) {
        fprintf(stderr, "worker %d: open: %s\n", id, rdlm_status_str(status));
        rdlm_ctx_destroy(ctx);
        return 1;
    }
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t token;

        status = rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, &token);
        if (status != RDLM_OK && status != RDLM_OWNER_DEAD) {
            fprintf(stderr, "worker %d: acquire: %s\n", id, rdlm_status_str(status));
            failures++;
            break;
        }
        failures += fenced_write(fd, token, id) != 0;
        rdlm_counter_fetch_add(writes, 1, NULL);
        rdlm_lock_release(lock);
    }
    status = rdlm_barrier_wait(done, RDLM_TIMEOUT_INFINITE);
    if (status == RDLM_OK && id == 0) {
        int64_t total;
        rdlm_stats_t stats;

        rdlm_counter_read(writes, &total);
        rdlm_ctx_stats(ctx, &stats);
        printf("local_lock: %d processes, %" PRId64 " fenced writes (expected %d), "
               "worker 0 waited %" PRIu64 " times, slept %" PRIu64 " times\n",
               nprocs, total, nprocs * ROUNDS, stats.contended, stats.parks);
        failures += total != (int64_t)nprocs * ROUNDS;
    }
    rdlm_ctx_destroy(ctx);
    close(fd);
    fflush(stdout);
    return failures != 0;
}

int main(int argc, char **argv)
{
    int nprocs = argc > 1 ? atoi(argv[1]) : 4, failed = 0, status;
    char path[64], job[32];

    if (nprocs < 1 || nprocs > 64) {
        fprintf(stderr, "usage: %s [processes 1..64]\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof(path), "/tmp/rdlm-example-%d.log", (int)getpid());
    snprintf(job, sizeof(job), "example-%d", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    uint64_t zero = 0;
    if (fd < 0 || write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
        perror(path);
        return 1;
    }
    close(fd);
    for (int i = 0; i < nprocs; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            _exit(worker(i, nprocs, path, job));
        }
        if (pid < 0) {
            perror("fork");
            return 1;
        }
    }
    while (wait(&status) > 0) {
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    unlink(path);
    printf("local_lock: %s\n", failed ? "FAILED" : "every write carried a larger token");
    return failed;
}
