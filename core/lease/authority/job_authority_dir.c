/* The data directories of in-job authority replicas (job_authority_dir.h), and the
 * sweep of those left behind (job_authority.h). */
#include "job_authority_dir.h"
#include "job_authority.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk.h"
#include "log.h"

/* Remove every entry of the directory open at fd (libraft writes plain files only).
 * Closes fd. 0 or the first errno; an entry already gone is no error (the ranks of a
 * job that start replicas on one host sweep the same directory at once). */
static int rdlm_job_dir_clear(int fd)
{
    DIR *dir = fdopendir(fd);
    struct dirent *e;
    int err = 0;

    if (dir == NULL) {
        err = errno;
        close(fd);
        return err;
    }
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            unlinkat(fd, e->d_name, 0) != 0 && errno != ENOENT && err == 0) {
            err = errno;
        }
    }
    closedir(dir);
    return err;
}

/* Create the marker in the directory open at dirfd. 0 or errno. */
static int rdlm_job_dir_mark(int dirfd)
{
    int fd =
        openat(dirfd, RDLM_JOB_AUTHORITY_DIR_MARK, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

    if (fd < 0) {
        return errno;
    }
    close(fd);
    return 0;
}

rdlm_status_t rdlm_job_authority_dir_make(const char *path)
{
    int made = mkdir(path, 0700) == 0, fd = -1, err = 0;
    struct stat st;

    if (!made && errno != EEXIST) {
        err = errno;
    } else if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        err = errno;
    } else if (!made && (fstat(fd, &st) != 0 || fchmod(fd, 0700) != 0)) {
        err = errno;
    } else if (!made && st.st_uid != geteuid()) {
        err = EPERM;
    } else if (!made) {
        int copy = dup(fd); /* the clear closes what it is given */

        rdlm_info("lease: emptying %s, left by an earlier run", path);
        err = copy < 0 ? errno : rdlm_job_dir_clear(copy);
    }
    if (err == 0) {
        err = rdlm_job_dir_mark(fd);
    }
    if (fd >= 0) {
        close(fd);
    }
    if (err != 0) {
        rdlm_error("lease: data directory %s: %s", path, strerror(err));
        return RDLM_ERR_IO;
    }
    return RDLM_OK;
}

void rdlm_job_authority_dir_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = fd < 0 ? errno : rdlm_job_dir_clear(fd);

    if (err == 0 && rmdir(path) != 0) {
        err = errno;
    }
    if (err != 0 && err != ENOENT) {
        rdlm_warn("lease: removing data directory %s: %s", path, strerror(err));
    }
}

/* The pid in a name ending in "-<pid>-<n>", or 0. */
static long rdlm_job_dir_pid(const char *name)
{
    const char *n = strrchr(name, '-'), *p;
    char *end;
    long pid;

    if (n == NULL || n == name || n[1] == '\0' ||
        strspn(n + 1, "0123456789") != strlen(n + 1)) {
        return 0;
    }
    for (p = n - 1; p > name && *p != '-'; p--) {
    }
    if (*p != '-') {
        return 0;
    }
    pid = strtol(p + 1, &end, 10);
    return end == n && pid > 0 ? pid : 0;
}

/* 1 if the directory open at dirfd was left by an ended process (the sweep's rules). */
static int rdlm_job_dir_is_stale(int dirfd, long pid)
{
    struct stat st;
    int lock, stale;

    if (fstat(dirfd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        faccessat(dirfd, RDLM_JOB_AUTHORITY_DIR_MARK, F_OK, 0) != 0 ||
        kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
        return 0;
    }
    lock = openat(dirfd, RDLM_LEASE_DISK_LOCK, O_RDONLY | O_CLOEXEC);
    if (lock < 0) {
        return errno == ENOENT;
    }
    stale = flock(lock, LOCK_EX | LOCK_NB) == 0;
    close(lock); /* releases it */
    return stale;
}

unsigned rdlm_job_authority_sweep(const char *parent, const char *prefix)
{
    size_t plen = strlen(prefix);
    unsigned removed = 0;
    struct dirent *e;
    DIR *dir = opendir(parent);

    if (dir == NULL) {
        return 0;
    }
    while ((e = readdir(dir)) != NULL) {
        char path[PATH_MAX];
        long pid = strncmp(e->d_name, prefix, plen) == 0 ? rdlm_job_dir_pid(e->d_name) : 0;
        int fd;

        if (pid == 0 ||
            snprintf(path, sizeof(path), "%s/%s", parent, e->d_name) >= (int)sizeof(path)) {
            continue;
        }
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        if (!rdlm_job_dir_is_stale(fd, pid)) {
            close(fd);
            continue;
        }
        close(fd);
        rdlm_info("lease: removing %s, the data directory of a replica whose process "
                  "(pid %ld) ended without removing it",
                  path, pid);
        rdlm_job_authority_dir_remove(path);
        removed += access(path, F_OK) != 0;
    }
    closedir(dir);
    return removed;
}
