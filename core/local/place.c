/* Where a user's node segments live, and how they are named (place.h). */
#include "place.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

rdlm_status_t rdlm_place_init(rdlm_place_t *place, const char *dir)
{
    memset(place, 0, sizeof(*place));
    snprintf(place->seg_suffix, sizeof(place->seg_suffix), ".seg");
    if (dir == NULL || dir[0] == '\0') {
        snprintf(place->dir, sizeof(place->dir), "/dev/shm/rdlm-%u", (unsigned)geteuid());
        return RDLM_OK;
    }
    if (dir[0] != '/' || strlen(dir) >= sizeof(place->dir)) {
        rdlm_error("RDLM_SHM_DIR=%.64s: must be an absolute path of at most %zu bytes "
                   "(every process of a job must name the same directory)",
                   dir, sizeof(place->dir) - 1);
        return RDLM_ERR_BAD_CONFIG;
    }
    strcpy(place->dir, dir); /* length checked above */
    return RDLM_OK;
}

void rdlm_place_legacy(rdlm_place_t *place)
{
    memset(place, 0, sizeof(*place));
    snprintf(place->dir, sizeof(place->dir), "/dev/shm");
    snprintf(place->prefix, sizeof(place->prefix), "rdlm-%u-", (unsigned)geteuid());
    place->shared = 1;
}

/* 1 if st (from lstat or fstat) is a directory the place may use; else 0, after one
 * error line saying what is wrong and what to do. */
static int rdlm_place_dir_ok(const rdlm_place_t *place, const struct stat *st)
{
    const char *what, *todo;

    if (S_ISLNK(st->st_mode) || !S_ISDIR(st->st_mode)) {
        what = S_ISLNK(st->st_mode) ? "is a symlink" : "is not a directory";
    } else if (place->shared) {
        return 1;
    } else if (st->st_uid != geteuid()) {
        what = "belongs to another user";
    } else if ((st->st_mode & 077) != 0) {
        what = "is open to group or other users";
    } else {
        return 1;
    }
    if (st->st_uid != geteuid()) {
        todo = "another user created it: ask the administrator to remove it, or set "
               "RDLM_SHM_DIR to a directory of your own (mode 0700)";
    } else if (S_ISDIR(st->st_mode)) {
        todo = "chmod 0700 it, or set RDLM_SHM_DIR to a private directory";
    } else {
        todo = "remove it, or set RDLM_SHM_DIR to a directory of your own (mode 0700)";
    }
    rdlm_error("%s %s (uid %u, mode %04o; this process runs as uid %u): refusing to keep "
               "segments there; %s",
               place->dir, what, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
               (unsigned)geteuid(), todo);
    return 0;
}

/* The status of a failed call on the directory, logged unless it is a quiet
 * RDLM_ERR_NOT_FOUND. */
static rdlm_status_t rdlm_place_failed(const rdlm_place_t *place, const char *call, int err,
                                       int create)
{
    if (err == ENOENT && !create) {
        return RDLM_ERR_NOT_FOUND;
    }
    rdlm_error("%s(%s): %s", call, place->dir, strerror(err));
    return (err == EACCES || err == ELOOP || err == ENOTDIR) ? RDLM_ERR_PERMISSION
                                                             : RDLM_ERR_IO;
}

int rdlm_place_open(const rdlm_place_t *place, int create, rdlm_status_t *status_p)
{
    struct stat by_path, by_fd;
    int fd;

    if (create && mkdir(place->dir, 0700) != 0 && errno != EEXIST) {
        *status_p = rdlm_place_failed(place, "mkdir", errno, create);
        return -1;
    }
    if (lstat(place->dir, &by_path) != 0) {
        *status_p = rdlm_place_failed(place, "lstat", errno, create);
        return -1;
    }
    if (!rdlm_place_dir_ok(place, &by_path)) {
        *status_p = RDLM_ERR_PERMISSION;
        return -1;
    }
    fd = open(place->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *status_p = rdlm_place_failed(place, "open", errno, create);
        return -1;
    }
    if (fstat(fd, &by_fd) != 0 || by_fd.st_dev != by_path.st_dev ||
        by_fd.st_ino != by_path.st_ino) {
        rdlm_error("%s was replaced while being opened: refusing it", place->dir);
        close(fd);
        *status_p = RDLM_ERR_PERMISSION;
        return -1;
    }
    return fd;
}

void rdlm_place_names(const rdlm_place_t *place, const char *job, char *seg_name,
                      char *lock_name)
{
    snprintf(seg_name, RDLM_PLACE_NAME_BYTES, "%s%s%s", place->prefix, job,
             place->seg_suffix);
    snprintf(lock_name, RDLM_PLACE_NAME_BYTES, "%s%s" RDLM_PLACE_LOCK_SUFFIX, place->prefix,
             job);
}
