/* Per-process registry of segment mappings (see mapping.h). */
#include "mapping.h"

#include "fork_guard.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

typedef struct rdlm_mapping {
    struct rdlm_mapping *next;
    dev_t dev;
    ino_t ino;
    void *base;
    size_t bytes;
    int refs;
} rdlm_mapping_t;

static pthread_mutex_t rdlm_mappings_lock = PTHREAD_MUTEX_INITIALIZER;
static rdlm_mapping_t *rdlm_mappings;

void *rdlm_mapping_get(int fd, const struct stat *st, size_t bytes)
{
    rdlm_mapping_t *m;
    void *base = NULL;

    rdlm_fork_guard(&rdlm_mappings_lock); /* a forked child maps its own segments */
    pthread_mutex_lock(&rdlm_mappings_lock);
    for (m = rdlm_mappings; m != NULL; m = m->next) {
        if (m->dev == st->st_dev && m->ino == st->st_ino && m->bytes == bytes) {
            m->refs++;
            base = m->base;
            goto out;
        }
    }
    m = malloc(sizeof(*m));
    if (m == NULL) {
        goto out;
    }
    base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        free(m);
        base = NULL;
        goto out;
    }
    *m = (rdlm_mapping_t){.next = rdlm_mappings,
                          .dev = st->st_dev,
                          .ino = st->st_ino,
                          .base = base,
                          .bytes = bytes,
                          .refs = 1};
    rdlm_mappings = m;
out:
    pthread_mutex_unlock(&rdlm_mappings_lock);
    return base;
}

void rdlm_mapping_put(void *base)
{
    rdlm_mapping_t **pm;

    pthread_mutex_lock(&rdlm_mappings_lock);
    for (pm = &rdlm_mappings; *pm != NULL; pm = &(*pm)->next) {
        rdlm_mapping_t *m = *pm;

        if (m->base == base) {
            if (--m->refs == 0) {
                *pm = m->next;
                munmap(m->base, m->bytes);
                free(m);
            }
            break;
        }
    }
    pthread_mutex_unlock(&rdlm_mappings_lock);
}
