/* The fenced store's table and history (see store.h). */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct fstore_entry {
    char key[FSTORE_KEY_MAX + 1];
    uint64_t highest; /* rdlm_fence_check's word for this key */
    uint64_t token;   /* token of the stored value */
    size_t vlen;
    char value[FSTORE_VALUE_MAX + 1];
} fstore_entry_t;

struct fstore {
    int history_fd;
    int history_failed; /* reported once */
    size_t nkeys;
    uint64_t accepted, stale;
    fstore_entry_t *entries[FSTORE_KEYS_MAX];
};

rdlm_status_t fstore_create(const char *history_path, fstore_t **store_p)
{
    fstore_t *store = calloc(1, sizeof(*store));

    if (store == NULL) {
        return RDLM_ERR_NO_MEMORY;
    }
    store->history_fd = open(history_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (store->history_fd < 0) {
        perror(history_path);
        free(store);
        return RDLM_ERR_IO;
    }
    *store_p = store;
    return RDLM_OK;
}

void fstore_destroy(fstore_t *store)
{
    if (store == NULL) {
        return;
    }
    for (size_t i = 0; i < store->nkeys; i++) {
        free(store->entries[i]);
    }
    close(store->history_fd);
    free(store);
}

static fstore_entry_t *fstore_find(const fstore_t *store, const char *key)
{
    for (size_t i = 0; i < store->nkeys; i++) {
        if (strcmp(store->entries[i]->key, key) == 0) {
            return store->entries[i];
        }
    }
    return NULL;
}

static uint64_t fstore_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One history line, written with one write(2) so lines never interleave. */
static void fstore_log(fstore_t *store, const char *key, uint64_t token, const char *client,
                       int ok, uint64_t max)
{
    char line[128 + FSTORE_KEY_MAX + FSTORE_CLIENT_MAX];
    int n =
        snprintf(line, sizeof(line),
                 "{\"t_ns\":%" PRIu64 ",\"op\":\"write\",\"key\":\"%s\",\"token\":%" PRIu64
                 ",\"client\":\"%s\",\"result\":\"%s\",\"max\":%" PRIu64 "}\n",
                 fstore_now_ns(), key, token, client, ok ? "ok" : "stale", max);
    ssize_t w;

    do {
        w = write(store->history_fd, line, (size_t)n);
    } while (w < 0 && errno == EINTR);
    if (w != n && !store->history_failed) {
        store->history_failed = 1;
        fprintf(stderr, "fenced_store: history write failed: %s\n",
                w < 0 ? strerror(errno) : "short write");
    }
}

rdlm_status_t fstore_write(fstore_t *store, const char *key, uint64_t token,
                           const char *value, size_t vlen, const char *client,
                           uint64_t *max_p)
{
    fstore_entry_t *e = fstore_find(store, key);
    rdlm_status_t status;

    if (e == NULL) {
        if (store->nkeys == FSTORE_KEYS_MAX) {
            return RDLM_ERR_TABLE_FULL;
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL) {
            return RDLM_ERR_NO_MEMORY;
        }
        memcpy(e->key, key, strlen(key) + 1);
        store->entries[store->nkeys++] = e;
    }
    status = rdlm_fence_check(&e->highest, token);
    if (status == RDLM_OK) {
        e->token = token;
        e->vlen = vlen;
        memcpy(e->value, value, vlen);
        e->value[vlen] = '\0';
        store->accepted++;
    } else {
        store->stale++;
    }
    fstore_log(store, key, token, client, status == RDLM_OK, e->highest);
    if (max_p != NULL) {
        *max_p = e->highest;
    }
    return status;
}

rdlm_status_t fstore_read(const fstore_t *store, const char *key, uint64_t *token_p,
                          const char **value_p)
{
    const fstore_entry_t *e = fstore_find(store, key);

    if (e == NULL || e->vlen == 0) {
        return RDLM_ERR_NOT_FOUND;
    }
    *token_p = e->token;
    *value_p = e->value;
    return RDLM_OK;
}

void fstore_counts(const fstore_t *store, uint64_t *accepted_p, uint64_t *stale_p)
{
    *accepted_p = store->accepted;
    *stale_p = store->stale;
}
