/*
 * The public API's objects: a context (one attach to the node segment) and the
 * handles opened in it. Handles stay allocated until the context is destroyed, so a
 * closed handle answers RDLM_ERR_CLOSED instead of touching freed memory; reopening
 * the same object reuses its closed handle.
 */
#ifndef RDLM_API_H
#define RDLM_API_H

#include <pthread.h>
#include <stdint.h>

#include <rdlm.h>

#include "config.h"
#include "local.h"

#define RDLM_OBJ_MAGIC_OPEN 0x6f626a31u   /* "obj1" */
#define RDLM_OBJ_MAGIC_CLOSED 0x636c7364u /* "clsd" */

typedef struct rdlm_obj {
    uint32_t magic;
    unsigned kind; /* enum rdlm_kind */
    uint32_t index;
    struct rdlm_ctx *ctx;
    struct rdlm_obj *next; /* the context's list */
} rdlm_obj_t;

/* A public handle (rdlm_lock_h, ...) is an rdlm_obj_t. */
#define RDLM_OBJ(h) ((rdlm_obj_t *)(void *)(h))

struct rdlm_ctx {
    rdlm_local_t local;
    rdlm_config_t config;
    pthread_mutex_t objs_lock; /* guards objs */
    rdlm_obj_t *objs;
};

/** Validate h as an open handle of kind. Logs and returns an error otherwise. */
rdlm_status_t rdlm_obj_check(const void *h, unsigned kind, const char *func);

/** Open name as kind (aux32 as in rdlm_table_open) and return its handle. */
rdlm_status_t rdlm_obj_open(rdlm_ctx_h ctx, const char *name, unsigned kind, uint32_t aux32,
                            rdlm_obj_t **obj_p);

/** Release what the context holds on obj, mark it closed. Handle errors as check. */
rdlm_status_t rdlm_obj_close(void *h, unsigned kind, const char *func);

/** Release what the context holds on obj (at close and destroy). */
void rdlm_obj_release_held(rdlm_obj_t *obj);

#endif
