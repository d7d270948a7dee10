/* rdlm_info --cleanup: remove what dead jobs of this user left in their place, and
 * under the names of earlier versions in /dev/shm. */
#include <stdio.h>

#include "leftovers.h"
#include "rdlm_info.h"
#include "segment.h"

typedef struct rdlm_info_cleanup {
    const rdlm_place_t *place;
    const char *where; /* after the job name: "" or where a legacy name was */
    const char *job;   /* NULL: every job */
    int dry_run;
    unsigned removed, kept;
} rdlm_info_cleanup_t;

static int rdlm_info_cleanup_one(const char *job, void *arg)
{
    rdlm_info_cleanup_t *c = arg;
    uint32_t live;

    if (c->job != NULL && !rdlm_leftovers_job_matches(job, c->job)) {
        return 0;
    }
    switch (rdlm_segment_reap(c->place, job, c->dry_run, &live)) {
    case RDLM_SEGMENT_REAP_REMOVED:
        printf("%s %s%s: no live process\n", c->dry_run ? "would remove" : "removed", job,
               c->where);
        c->removed++;
        return 0;
    case RDLM_SEGMENT_REAP_IN_USE:
        printf("kept %s%s: %u live process%s attached\n", job, c->where, live,
               live == 1 ? "" : "es");
        break;
    case RDLM_SEGMENT_REAP_BUSY:
        printf("kept %s%s: busy (a process is attaching or detaching)\n", job, c->where);
        break;
    case RDLM_SEGMENT_REAP_REFUSED:
        printf("kept %s%s: refused (the error line says why)\n", job, c->where);
        break;
    }
    c->kept++;
    return 0;
}

int rdlm_info_cleanup(const char *dir, const char *job, int dry_run)
{
    rdlm_place_t place, legacy;
    rdlm_info_cleanup_t c = {.place = &place, .where = "", .job = job, .dry_run = dry_run};
    int failed;

    if (rdlm_place_init(&place, dir) != RDLM_OK) {
        return 1;
    }
    failed = rdlm_leftovers_each(&place, 0, 1, rdlm_info_cleanup_one, &c) < 0;
    rdlm_place_legacy(&legacy);
    c.place = &legacy;
    c.where = " (an earlier version's name in /dev/shm)";
    failed |= rdlm_leftovers_each(&legacy, 0, 1, rdlm_info_cleanup_one, &c) < 0;
    printf("cleanup%s: %u %s, %u kept\n", dry_run ? " (dry run)" : "", c.removed,
           dry_run ? "to remove" : "removed", c.kept);
    return failed;
}
