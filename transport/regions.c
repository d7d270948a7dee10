/* The registered regions of a context: the list every backend keeps so that destroy
 * releases what the caller did not deregister, and the addr entry of the mem ops. */
#include "tl_internal.h"

void rdlm_tl_region_add(rdlm_tl_region_t **head, pthread_mutex_t *lock, rdlm_tl_region_t *r,
                        void *addr, size_t len)
{
    r->addr = addr;
    r->len = len;
    pthread_mutex_lock(lock);
    r->next = *head;
    if (*head != NULL)
        (*head)->prev = r;
    *head = r;
    pthread_mutex_unlock(lock);
}

void rdlm_tl_region_remove(rdlm_tl_region_t **head, pthread_mutex_t *lock,
                           rdlm_tl_region_t *r)
{
    pthread_mutex_lock(lock);
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        *head = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    pthread_mutex_unlock(lock);
}

rdlm_status_t rdlm_tl_region_addr(rdlm_tl_ctx_h ctx, rdlm_tl_mem_h mem, void **addr_p,
                                  size_t *len_p)
{
    const rdlm_tl_region_t *r = (const rdlm_tl_region_t *)(const void *)mem;

    (void)ctx;
    if (r == NULL)
        return RDLM_ERR_BAD_HANDLE;
    if (addr_p != NULL)
        *addr_p = r->addr;
    if (len_p != NULL)
        *len_p = r->len;
    return RDLM_OK;
}
