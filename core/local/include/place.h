/*
 * Where a user's node segments and their lock files live, and how they are named.
 *
 * The place is a directory of the user's own, mode 0700 (default /dev/shm/rdlm-<uid>,
 * else RDLM_SHM_DIR), holding "<job>.seg" and "<job>.lock". Other users can neither
 * create a file there (squat a job's name) nor list it (see the user's job names).
 * The directory is created if missing; an existing one must be a real directory (not
 * a symlink), owned by the user, without group or other bits, or it is refused with
 * RDLM_ERR_PERMISSION: someone else may have created it first in the shared, sticky
 * /dev/shm, where this user cannot remove it.
 *
 * The legacy place is what rdlm wrote before: /dev/shm itself, with
 * "rdlm-<uid>-<job>" and "rdlm-<uid>-<job>.lock"; only cleanup looks there.
 *
 * Every file is opened relative to the directory's descriptor with O_NOFOLLOW, so a
 * symlink anywhere rdlm opens is refused with RDLM_ERR_PERMISSION.
 */
#ifndef RDLM_PLACE_H
#define RDLM_PLACE_H

#include <stddef.h>

#include <rdlm/status.h>

#include "shared.h"

#define RDLM_PLACE_DIR_BYTES 1024 /* RDLM_PATH_MAX + 1 */
#define RDLM_PLACE_NAME_BYTES 72  /* prefix, a job of RDLM_LEFTOVERS_JOB, ".lock" */
#define RDLM_PLACE_LOCK_SUFFIX ".lock"

typedef struct rdlm_place {
    char dir[RDLM_PLACE_DIR_BYTES];
    char prefix[24];    /* before the job: "" or "rdlm-<uid>-" (legacy) */
    char seg_suffix[8]; /* after the job in a segment's name: ".seg" or "" (legacy) */
    int shared;         /* the legacy /dev/shm: other users' files beside ours */
} rdlm_place_t;

/** The user's place: dir, or /dev/shm/rdlm-<euid> if dir is NULL or "". Fails
 *  (RDLM_ERR_INVALID_ARG, logged) only if dir is too long. */
RDLM_SHARED rdlm_status_t rdlm_place_init(rdlm_place_t *place, const char *dir);

/** The legacy place (/dev/shm, names "rdlm-<euid>-<job>"). Never fails. */
RDLM_SHARED void rdlm_place_legacy(rdlm_place_t *place);

/**
 * Open the place's directory (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), creating it
 * mode 0700 first if create is set, and check it is the user's and private (unless
 * shared). Returns the descriptor, or -1 with *status_p: RDLM_ERR_NOT_FOUND (missing
 * and not create; not logged), RDLM_ERR_PERMISSION (a symlink, not a directory,
 * another user's, group or other bits: one error line saying what to do),
 * RDLM_ERR_IO (logged). Blocking (file system calls only).
 */
int rdlm_place_open(const rdlm_place_t *place, int create, rdlm_status_t *status_p);

/** The names of job's segment and lock file in the place (each
 *  RDLM_PLACE_NAME_BYTES). */
void rdlm_place_names(const rdlm_place_t *place, const char *job, char *seg_name,
                      char *lock_name);

#endif
