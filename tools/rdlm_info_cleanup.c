/* rdlm_info --cleanup: remove what dead jobs of this user left in /dev/shm. */
#include <stdio.h>

#include "leftovers.h"
#include "rdlm_info.h"
#include "segment.h"

typedef struct rdlm_info_cleanup {
    const char *job; /* NULL: every job */
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
    switch (rdlm_segment_reap(job, c->dry_run, &live)) {
    case RDLM_SEGMENT_REAP_REMOVED:
        printf("%s %s: no live process\n", c->dry_run ? "would remove" : "removed", job);
        c->removed++;
        return 0;
    case RDLM_SEGMENT_REAP_IN_USE:
        printf("kept %s: %u live process%s attached\n", job, live, live == 1 ? "" : "es");
        break;
    case RDLM_SEGMENT_REAP_BUSY:
        printf("kept %s: busy (a process is attaching or detaching)\n", job);
        break;
    case RDLM_SEGMENT_REAP_REFUSED:
        printf("kept %s: refused (the error line says why)\n", job);
        break;
    }
    c->kept++;
    return 0;
}

int rdlm_info_cleanup(const char *job, int dry_run)
{
    rdlm_info_cleanup_t c = {.job = job, .dry_run = dry_run};

    if (rdlm_leftovers_each(0, 1, rdlm_info_cleanup_one, &c) < 0) {
        perror("rdlm_info: cannot list /dev/shm");
        return 1;
    }
    printf("cleanup%s: %u %s, %u kept\n", dry_run ? " (dry run)" : "", c.removed,
           dry_run ? "to remove" : "removed", c.kept);
    return 0;
}
