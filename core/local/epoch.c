/* Token epochs without an authority: the per-user epoch file of a host (epoch.h). */
#include "epoch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define RDLM_EPOCH_TEXT 16      /* "8388607\n" and room to spare */
#define RDLM_EPOCH_LOCK_MS 5000 /* wait for the file's lock at most this long */

uint32_t rdlm_epoch_after(uint32_t last, uint32_t floor)
{
    uint64_t next = (uint64_t)last + 1 > floor ? (uint64_t)last + 1 : floor;

    return next <= RDLM_EPOCH_MAX ? (uint32_t)next : 0;
}

/* The epoch recorded in the open file fd: 0 for an empty file. */
static rdlm_status_t rdlm_epoch_read(int fd, const char *path, uint32_t *last_p)
{
    char text[RDLM_EPOCH_TEXT + 1];
    ssize_t n = pread(fd, text, RDLM_EPOCH_TEXT, 0);
    unsigned long v;
    char *end;

    if (n < 0) {
        rdlm_error("read(%s): %s", path, strerror(errno));
        return RDLM_ERR_IO;
    }
    text[n] = '\0';
    *last_p = 0;
    if (n == 0) {
        rdlm_info("%s holds no token epoch yet: the clock's epoch is the floor (a first "
                  "use on this host; if the file was removed, tokens may be smaller than "
                  "ones issued before it was)",
                  path);
        return RDLM_OK;
    }
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || end == text || (*end != '\n' && *end != '\0') || v > RDLM_EPOCH_MAX) {
        rdlm_error("%s does not hold a token epoch (1..%u): refusing to guess one", path,
                   RDLM_EPOCH_MAX);
        return RDLM_ERR_CORRUPT;
    }
    *last_p = (uint32_t)v;
    return RDLM_OK;
}

static rdlm_status_t rdlm_epoch_write(int fd, const char *path, uint32_t epoch)
{
    char text[RDLM_EPOCH_TEXT];
    int n = snprintf(text, sizeof(text), "%u\n", epoch);

    if (pwrite(fd, text, (size_t)n, 0) != n || ftruncate(fd, n) != 0 ||
        fdatasync(fd) != 0) {
        rdlm_error("write(%s): %s", path, strerror(errno));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

static rdlm_status_t rdlm_epoch_open(const char *path, int *fd_p)
{
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    struct stat st;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

    if (fd < 0) {
        rdlm_error("open(%s): %s", path, strerror(errno));
        return (errno == EACCES || errno == ELOOP) ? RDLM_ERR_PERMISSION : RDLM_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        rdlm_error("%s is not this user's private file (uid %u, mode %03o): refusing it",
                   path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        close(fd);
        return RDLM_ERR_PERMISSION;
    }
    /* Held only for a read, a write and a sync: bounded, in case its holder is
     * stopped (SIGSTOP) or its file system hangs. */
    for (unsigned ms = 0; fcntl(fd, F_SETLK, &whole) != 0; ms++) {
        if ((errno != EACCES && errno != EAGAIN && errno != EINTR) ||
            ms >= RDLM_EPOCH_LOCK_MS) {
            rdlm_error("lock(%s): %s", path,
                       ms >= RDLM_EPOCH_LOCK_MS ? "still held by another process after 5 s"
                                                : strerror(errno));
            close(fd);
            return ms >= RDLM_EPOCH_LOCK_MS ? RDLM_ERR_BUSY : RDLM_ERR_IO;
        }
        usleep(1000);
    }
    *fd_p = fd;
    return RDLM_OK;
}

rdlm_status_t rdlm_epoch_take(const char *path, uint32_t floor, uint32_t *epoch_p)
{
    uint32_t last = 0, next = 0;
    rdlm_status_t status;
    int fd;

    *epoch_p = 0;
    status = rdlm_epoch_open(path, &fd);
    if (status != RDLM_OK) {
        return status;
    }
    status = rdlm_epoch_read(fd, path, &last);
    if (status == RDLM_OK) {
        next = rdlm_epoch_after(last, floor);
        if (next == 0) {
            rdlm_error("%s: token epochs used up (last %u of %u)", path, last,
                       RDLM_EPOCH_MAX);
            status = RDLM_ERR_QUOTA;
        }
    }
    if (status == RDLM_OK) {
        status = rdlm_epoch_write(fd, path, next);
    }
    close(fd); /* releases the lock */
    if (status == RDLM_OK) {
        *epoch_p = next;
    }
    return status;
}

void rdlm_epoch_default_path(char *buf, size_t len)
{
    snprintf(buf, len, "/var/tmp/rdlm-%u.epoch", (unsigned)geteuid());
}

uint32_t rdlm_epoch_host(void)
{
    uint32_t clock = rdlm_clock_epoch(time(NULL)), epoch;
    char path[64];

    rdlm_epoch_default_path(path, sizeof(path));
    if (rdlm_epoch_take(path, clock, &epoch) != RDLM_OK) {
        rdlm_warn("token epoch from the clock alone (%u): tokens of two jobs or segments "
                  "started in the same minute on this host may repeat",
                  clock);
        return clock;
    }
    return epoch;
}
