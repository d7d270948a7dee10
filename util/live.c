/* Live handles (live.h). */
#include "live.h"

#include "fork_guard.h"

void rdlm_live_add(rdlm_live_set_t *set, rdlm_live_node_t *node)
{
    rdlm_fork_guard(&set->lock); /* a child forked meanwhile may create its own objects */
    pthread_mutex_lock(&set->lock);
    node->next = set->head;
    set->head = node;
    pthread_mutex_unlock(&set->lock);
}

int rdlm_live_remove(rdlm_live_set_t *set, rdlm_live_node_t *node)
{
    rdlm_live_node_t **p;
    int found;

    pthread_mutex_lock(&set->lock);
    for (p = &set->head; *p != NULL && *p != node; p = &(*p)->next) {
    }
    found = *p != NULL;
    if (found) {
        *p = node->next;
    }
    pthread_mutex_unlock(&set->lock);
    return found;
}

int rdlm_live_has(rdlm_live_set_t *set, const rdlm_live_node_t *node)
{
    const rdlm_live_node_t *n;

    pthread_mutex_lock(&set->lock);
    for (n = set->head; n != NULL && n != node; n = n->next) {
    }
    pthread_mutex_unlock(&set->lock);
    return n != NULL;
}
