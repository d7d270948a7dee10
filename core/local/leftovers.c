/* What jobs leave in /dev/shm, by name (leftovers.h). */
#include "leftovers.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "segment.h"

#define RDLM_NODE_JOB_PREFIX 20 /* bytes of the job kept in a node segment's name */
#define RDLM_LOCK_SUFFIX ".lock"

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

/* The job of a /dev/shm entry of this user (prefix "rdlm-<uid>-"), into job; 0 if the
 * name is not one, or is a segment and either not lone or its lock file exists (that
 * entry reports it). */
static int rdlm_leftovers_job_of(DIR *dir, const char *name, const char *prefix, int lone,
                                 char job[RDLM_LEFTOVERS_JOB])
{
    size_t plen = strlen(prefix), len = strlen(name), slen = strlen(RDLM_LOCK_SUFFIX);
    int is_lock = len > plen + slen && strcmp(name + len - slen, RDLM_LOCK_SUFFIX) == 0;
    size_t jlen = len - plen - (is_lock ? slen : 0);
    char lock[NAME_MAX + sizeof(RDLM_LOCK_SUFFIX)];

    if (len <= plen || strncmp(name, prefix, plen) != 0 || jlen == 0 ||
        jlen >= RDLM_LEFTOVERS_JOB) {
        return 0;
    }
    snprintf(job, RDLM_LEFTOVERS_JOB, "%.*s", (int)jlen, name + plen);
    snprintf(lock, sizeof(lock), "%s" RDLM_LOCK_SUFFIX, name);
    return is_lock || (lone && faccessat(dirfd(dir), lock, F_OK, AT_SYMLINK_NOFOLLOW) != 0);
}

int rdlm_leftovers_each(unsigned max_entries, int lone, rdlm_leftovers_func_t func,
                        void *arg)
{
    char prefix[32], job[RDLM_LEFTOVERS_JOB];
    DIR *dir = opendir("/dev/shm");
    struct dirent *e;
    int calls = 0;

    if (dir == NULL) {
        return -1;
    }
    snprintf(prefix, sizeof(prefix), "rdlm-%u-", (unsigned)geteuid());
    for (unsigned n = 0;
         (max_entries == 0 || n < max_entries) && (e = readdir(dir)) != NULL; n++) {
        if (rdlm_leftovers_job_of(dir, e->d_name, prefix, lone, job)) {
            calls++;
            if (func(job, arg) != 0) {
                break;
            }
        }
    }
    closedir(dir);
    return calls;
}

static int rdlm_leftovers_sweep_one(const char *job, void *own_job)
{
    uint32_t live;

    if (strcmp(job, own_job) != 0 &&
        rdlm_segment_reap(job, 0, &live) == RDLM_SEGMENT_REAP_REMOVED) {
        rdlm_info("removed what job %s left in /dev/shm (no live process held it)", job);
    }
    return 0;
}

void rdlm_leftovers_sweep(const char *own_job)
{
    (void)rdlm_leftovers_each(RDLM_LEFTOVERS_SWEEP_MAX, 0, rdlm_leftovers_sweep_one,
                              (void *)own_job);
}
