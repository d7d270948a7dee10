/*
 * local_lock: N processes on one node share a lock, a counter and a barrier.
 *
 * Each worker takes the lock 1000 times and writes "token worker" to a file under
 * it. The file is a fenced resource (fenced_file.c): it accepts a write only if
 * rdlm_fence_check passes the token against the highest one it accepted, and the
 * example checks that every write passes that test. Then all workers meet at a barrier, and
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

#include "fenced_file.h"

#define ROUNDS 1000

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
        status = fenced_file_write(fd, token, id);
        if (status != RDLM_OK) {
            fprintf(stderr, "worker %d: write with token %" PRIu64 ": %s\n", id, token,
                    rdlm_status_str(status));
            failures++;
        }
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
    if (fenced_file_create(path) != 0) {
        return 1;
    }
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
