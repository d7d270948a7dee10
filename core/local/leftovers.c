/* What jobs leave in a place, by name (leftovers.h). */
#include "leftovers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "segment.h"

#define RDLM_NODE_JOB_PREFIX 20 /* bytes of the job kept in a node segment's name */

void rdlm_leftovers_node_job(char *buf, size_t len, const char *job, uint64_t ctx_id,
                             uint32_t node)
{
    snprintf(buf, len, "%.*s.%016" PRIx64 ".n%u", RDLM_NODE_JOB_PREFIX, job, ctx_id, node);
}

/* 1 if s is ".<16 hex digits>.n<decimal>" exactly. */
static int rdlm_leftovers_node_suffix(const char *s)
{
    if (s[0] != '.' || strspn(s + 1, "0123456789abcdef") != 16 ||
        strncmp(s + 17, ".n", 2)) {
        return 0;
    }
    return s[19] != '\0' && strspn(s + 19, "0123456789") == strlen(s + 19);
}

int rdlm_leftovers_job_matches(const char *seg_job, const char *job)
{
    size_t n = strnlen(job, RDLM_NODE_JOB_PREFIX);

    return strcmp(seg_job, job) == 0 ||
           (strncmp(seg_job, job, n) == 0 && rdlm_leftovers_node_suffix(seg_job + n));
}

/* 1 if name ends with suffix (and is longer). */
static int rdlm_leftovers_ends(const char *name, size_t len, const char *suffix)
{
    size_t slen = strlen(suffix);

    return len > slen && strcmp(name + len - slen, suffix) == 0;
}

/* The job of an entry of place named name, into job; 0 if the name is none of this
 * user's, or is a segment and either not lone, or its lock file exists (that entry
 * reports it), or it is gone. */
static int rdlm_leftovers_job_of(const rdlm_place_t *place, int dir_fd, const char *name,
                                 int lone, char job[RDLM_LEFTOVERS_JOB])
{
    size_t plen = strlen(place->prefix), len = strlen(name);
    int is_lock = rdlm_leftovers_ends(name, len, RDLM_PLACE_LOCK_SUFFIX);
    const char *suffix = is_lock ? RDLM_PLACE_LOCK_SUFFIX : place->seg_suffix;
    size_t slen = strlen(suffix), jlen = len - plen - slen;
    char seg_name[RDLM_PLACE_NAME_BYTES], lock_name[RDLM_PLACE_NAME_BYTES];

    if (len <= plen + slen || strncmp(name, place->prefix, plen) != 0 ||
        (!is_lock && !rdlm_leftovers_ends(name, len, suffix) && slen > 0) ||
        jlen >= RDLM_LEFTOVERS_JOB) {
        return 0;
    }
    snprintf(job, RDLM_LEFTOVERS_JOB, "%.*s", (int)jlen, name + plen);
    rdlm_place_names(place, job, seg_name, lock_name);
    /* A lone segment still there (not removed with its lock file a moment ago). */
    return is_lock ||
           (lone && faccessat(dir_fd, lock_name, F_OK, AT_SYMLINK_NOFOLLOW) != 0 &&
            faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
}

int rdlm_leftovers_each(const rdlm_place_t *place, unsigned max_entries, int lone,
                        rdlm_leftovers_func_t func, void *arg)
{
    char job[RDLM_LEFTOVERS_JOB];
    rdlm_status_t status;
    int dir_fd = rdlm_place_open(place, 0, &status);
    struct dirent *e;
    int calls = 0;
    DIR *dir;

    if (dir_fd < 0) {
        return status == RDLM_ERR_NOT_FOUND ? 0 : -1;
    }
    dir = fdopendir(dir_fd);
    if (dir == NULL) {
        rdlm_error("fdopendir(%s): %s", place->dir, strerror(errno));
        close(dir_fd);
        return -1;
    }
    for (unsigned n = 0;
         (max_entries == 0 || n < max_entries) && (e = readdir(dir)) != NULL; n++) {
        if (rdlm_leftovers_job_of(place, dir_fd, e->d_name, lone, job)) {
            calls++;
            if (func(job, arg) != 0) {
                break;
            }
        }
    }
    closedir(dir);
    return calls;
}

typedef struct rdlm_leftovers_sweep_arg {
    const rdlm_place_t *place;
    const char *own_job;
} rdlm_leftovers_sweep_arg_t;

static int rdlm_leftovers_sweep_one(const char *job, void *arg)
{
    const rdlm_leftovers_sweep_arg_t *a = arg;
    uint32_t live;

    if (strcmp(job, a->own_job) != 0 &&
        rdlm_segment_reap(a->place, job, 0, &live) == RDLM_SEGMENT_REAP_REMOVED) {
        rdlm_info("removed what job %s left in %s (no live process held it)", job,
                  a->place->dir);
    }
    return 0;
}

void rdlm_leftovers_sweep(const rdlm_place_t *place, const char *own_job)
{
    rdlm_leftovers_sweep_arg_t a = {.place = place, .own_job = own_job};

    (void)rdlm_leftovers_each(place, RDLM_LEFTOVERS_SWEEP_MAX, 0, rdlm_leftovers_sweep_one,
                              &a);
}
