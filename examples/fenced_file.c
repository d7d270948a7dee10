/* The examples' fenced file (see fenced_file.h). */
#include "fenced_file.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

int fenced_file_create(const char *path)
{
    uint64_t zero = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

    if (fd < 0 || write(fd, &zero, sizeof(zero)) != (ssize_t)sizeof(zero)) {
        perror(path);
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    close(fd);
    return 0;
}

/* The check and the write, holding the file's lock. */
static rdlm_status_t fenced_file_write_locked(int fd, uint64_t token, int writer)
{
    uint64_t highest = 0;
    rdlm_status_t status;
    char line[48];
    int n;

    if (pread(fd, &highest, sizeof(highest), 0) != (ssize_t)sizeof(highest)) {
        perror("pread");
        return RDLM_ERR_IO;
    }
    status = rdlm_fence_check(&highest, token);
    if (status != RDLM_OK) {
        return status;
    }
    n = snprintf(line, sizeof(line), "%" PRIu64 " %d\n", token, writer);
    if (pwrite(fd, &highest, sizeof(highest), 0) != (ssize_t)sizeof(highest) ||
        pwrite(fd, line, (size_t)n, lseek(fd, 0, SEEK_END)) != n) {
        perror("pwrite");
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

rdlm_status_t fenced_file_write(int fd, uint64_t token, int writer)
{
    rdlm_status_t status;

    if (flock(fd, LOCK_EX) != 0) {
        perror("flock");
        return RDLM_ERR_IO;
    }
    status = fenced_file_write_locked(fd, token, writer);
    flock(fd, LOCK_UN);
    return status;
}

long fenced_file_check(const char *path, int *increasing_p)
{
    FILE *f = fopen(path, "r");
    uint64_t header, token, last = 0;
    long records = 0;
    int writer;

    if (f == NULL || fread(&header, sizeof(header), 1, f) != 1) {
        perror(path);
        if (f != NULL) {
            fclose(f);
        }
        return -1;
    }
    *increasing_p = 1;
    while (fscanf(f, "%" SCNu64 " %d", &token, &writer) == 2) {
        *increasing_p &= token > last;
        last = token;
        records++;
    }
    fclose(f);
    return records;
}
