/*
 * The health of a replica's data directory (disk.h): statvfs and stat, compared with
 * the reserve libraft may need next.
 */
#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "log.h"

#define RDLM_LEASE_MIB (1024.0 * 1024.0)

const char *rdlm_lease_disk_state_name(rdlm_lease_disk_state_t state)
{
    switch (state) {
    case RDLM_LEASE_DISK_OK:
        return "ok";
    case RDLM_LEASE_DISK_LOW:
        return "low";
    case RDLM_LEASE_DISK_READONLY:
        return "read-only";
    default:
        return "gone";
    }
}

/* The state of dir now, with its free bytes; errno_p: why, when not OK or LOW. */
static rdlm_lease_disk_state_t rdlm_lease_disk_probe(const rdlm_lease_disk_t *d,
                                                     uint64_t *free_p, int *errno_p)
{
    struct stat st;
    struct statvfs vfs;

    *free_p = 0;
    *errno_p = 0;
    if (stat(d->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != d->dev ||
        st.st_ino != d->ino) {
        *errno_p = errno;
        return RDLM_LEASE_DISK_GONE;
    }
    if (statvfs(d->dir, &vfs) != 0) {
        *errno_p = errno;
        return RDLM_LEASE_DISK_GONE;
    }
    if ((vfs.f_flag & ST_RDONLY) != 0 || access(d->dir, W_OK | X_OK) != 0) {
        *errno_p = (vfs.f_flag & ST_RDONLY) != 0 ? EROFS : errno;
        return RDLM_LEASE_DISK_READONLY;
    }
    *free_p = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    return *free_p < RDLM_LEASE_DISK_RESERVE ? RDLM_LEASE_DISK_LOW : RDLM_LEASE_DISK_OK;
}

/* The pid a holder of fd's lock wrote into it, 0 if unreadable. */
static long rdlm_lease_disk_holder(int fd)
{
    char text[24];
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);

    if (n <= 0) {
        return 0;
    }
    text[n] = '\0';
    return strtol(text, NULL, 10);
}

/* Take d's directory: an exclusive flock on its lock file, which then names our pid.
 * RDLM_OK (d->lock_fd held), RDLM_ERR_BUSY or RDLM_ERR_IO; logged. */
static rdlm_status_t rdlm_lease_disk_lock(rdlm_lease_disk_t *d)
{
    char path[PATH_MAX + sizeof(RDLM_LEASE_DISK_LOCK) + 1], pid[24];
    int fd, n;

    snprintf(path, sizeof(path), "%s/%s", d->dir, RDLM_LEASE_DISK_LOCK);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rdlm_error("lease: data directory %s: lock file %s: %s", d->dir, path,
                   strerror(errno));
        return RDLM_ERR_IO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        long holder = err == EWOULDBLOCK ? rdlm_lease_disk_holder(fd) : 0;

        close(fd);
        if (err != EWOULDBLOCK) {
            rdlm_error("lease: data directory %s: locking %s: %s", d->dir, path,
                       strerror(err));
            return RDLM_ERR_IO;
        }
        if (holder > 0) {
            rdlm_error("lease: data directory %s is in use by another replica (pid %ld): "
                       "one replica per data directory",
                       d->dir, holder);
        } else {
            rdlm_error("lease: data directory %s is in use by another replica: one "
                       "replica per data directory",
                       d->dir);
        }
        return RDLM_ERR_BUSY;
    }
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        rdlm_warn("lease: data directory %s: writing our pid into %s: %s", d->dir, path,
                  strerror(errno)); /* the lock holds all the same */
    }
    d->lock_fd = fd;
    return RDLM_OK;
}

rdlm_status_t rdlm_lease_disk_own(rdlm_lease_disk_t *d, uint64_t id)
{
    char path[PATH_MAX + sizeof(RDLM_LEASE_DISK_ID) + 1], text[24], *end;
    int fd, n;
    ssize_t got;
    unsigned long long had;

    snprintf(path, sizeof(path), "%s/%s", d->dir, RDLM_LEASE_DISK_ID);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)id);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, (size_t)n) != n || fsync(fd) != 0) {
            rdlm_error("lease: data directory %s: writing %s: %s", d->dir, path,
                       strerror(errno));
            if (fd >= 0) {
                close(fd);
            }
            return RDLM_ERR_IO;
        }
        close(fd);
        return RDLM_OK;
    }
    if (fd < 0) {
        rdlm_error("lease: data directory %s: %s: %s", d->dir, path, strerror(errno));
        return RDLM_ERR_IO;
    }
    got = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[got > 0 ? got : 0] = '\0';
    errno = 0;
    had = strtoull(text, &end, 10);
    if (got <= 0 || errno != 0 || end == text || (*end != '\n' && *end != '\0')) {
        rdlm_error("lease: data directory %s: %s does not name a replica id", d->dir, path);
        return RDLM_ERR_CORRUPT;
    }
    if (had != id) {
        rdlm_error("lease: data directory %s belongs to replica %llu, not to --id %llu: "
                   "start each replica on its own directory (another's log and votes "
                   "would be taken for its own)",
                   d->dir, had, (unsigned long long)id);
        return RDLM_ERR_MISMATCH;
    }
    return RDLM_OK;
}

void rdlm_lease_disk_close(rdlm_lease_disk_t *d)
{
    if (d->lock_fd >= 0) {
        close(d->lock_fd); /* releases the flock */
        d->lock_fd = -1;
    }
}

rdlm_status_t rdlm_lease_disk_open(rdlm_lease_disk_t *d, const char *dir)
{
    struct stat st;
    int err;

    if (strlen(dir) >= sizeof(d->dir)) {
        rdlm_error("lease: data directory path too long (%zu bytes)", strlen(dir));
        return RDLM_ERR_IO;
    }
    *d = (rdlm_lease_disk_t){.state = RDLM_LEASE_DISK_OK, .lock_fd = -1};
    memcpy(d->dir, dir, strlen(dir) + 1);
    if (stat(dir, &st) != 0) {
        rdlm_error("lease: data directory %s: %s", dir, strerror(errno));
        return RDLM_ERR_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        rdlm_error("lease: data directory %s: not a directory", dir);
        return RDLM_ERR_IO;
    }
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    d->state = rdlm_lease_disk_probe(d, &d->free_bytes, &err);
    if (d->state == RDLM_LEASE_DISK_GONE || d->state == RDLM_LEASE_DISK_READONLY) {
        rdlm_error("lease: data directory %s is not writable: %s", dir, strerror(err));
        return RDLM_ERR_IO;
    }
    if (d->free_bytes < RDLM_LEASE_DISK_START) {
        rdlm_error("lease: data directory %s: %.1f MiB free, a replica needs at least "
                   "%.1f MiB (3 log segments of %.1f MiB and a reserve of %.1f MiB)",
                   dir, (double)d->free_bytes / RDLM_LEASE_MIB,
                   RDLM_LEASE_DISK_START / RDLM_LEASE_MIB,
                   RDLM_LEASE_DISK_SEGMENT / RDLM_LEASE_MIB,
                   RDLM_LEASE_DISK_RESERVE / RDLM_LEASE_MIB);
        return RDLM_ERR_NO_SPACE;
    }
    d->state = RDLM_LEASE_DISK_OK;
    return rdlm_lease_disk_lock(d);
}

rdlm_lease_disk_state_t rdlm_lease_disk_sample(rdlm_lease_disk_t *d)
{
    int err;
    rdlm_lease_disk_state_t was = d->state;

    d->state = rdlm_lease_disk_probe(d, &d->free_bytes, &err);
    if (d->state == was) {
        return d->state;
    }
    switch (d->state) {
    case RDLM_LEASE_DISK_OK:
        rdlm_info("lease: data directory %s: %.1f MiB free again: writes resume", d->dir,
                  (double)d->free_bytes / RDLM_LEASE_MIB);
        break;
    case RDLM_LEASE_DISK_LOW:
        rdlm_warn("lease: data directory %s: %.1f MiB free, under the reserve of %.1f "
                  "MiB: writes refused with RDLM_ERR_NO_SPACE until space returns",
                  d->dir, (double)d->free_bytes / RDLM_LEASE_MIB,
                  RDLM_LEASE_DISK_RESERVE / RDLM_LEASE_MIB);
        break;
    case RDLM_LEASE_DISK_READONLY:
        rdlm_warn("lease: data directory %s is not writable (%s): writes refused with "
                  "RDLM_ERR_NO_SPACE until it is",
                  d->dir, strerror(err));
        break;
    default:
        rdlm_error("lease: data directory %s is gone (%s): this replica's log is lost",
                   d->dir, err != 0 ? strerror(err) : "replaced by another directory");
        break;
    }
    return d->state;
}
