/*
 * The fenced store's table (store.c): key -> (value, highest token accepted).
 *
 * Every write decision goes through rdlm_fence_check against the key's highest
 * token, so the store accepts a write only if its token is >= every token it accepted
 * before for that key (equal = the same holder writing again), and every decision is
 * appended to a JSON-lines history file, one line per decision:
 *
 *   {"t_ns":N,"op":"write","key":"K","token":T,"client":"C","result":"ok"|"stale",
 *    "max":M}
 *
 * t_ns is CLOCK_MONOTONIC (comparable with the lock clients' histories on the same
 * machine, network namespaces included); max is the key's highest accepted token
 * after the decision. Keys and client names are restricted to fstore_name_ok's
 * alphabet (common.h), so the lines need no escaping. Single-threaded: the caller
 * serialises.
 */
#ifndef FSTORE_STORE_H
#define FSTORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm.h>

#include "common.h"

#define FSTORE_KEYS_MAX 1024 /**< keys in one store */

typedef struct fstore fstore_t;

/** New empty store appending its decisions to history_path (created if needed).
 *  RDLM_OK, RDLM_ERR_IO (perror printed), RDLM_ERR_NO_MEMORY. */
rdlm_status_t fstore_create(const char *history_path, fstore_t **store_p);
void fstore_destroy(fstore_t *store);

/**
 * Decide a write of value (vlen bytes) to key with token, from client; log the
 * decision. RDLM_OK (stored); RDLM_ERR_STALE_TOKEN (a larger token was accepted
 * before; nothing stored); RDLM_ERR_TABLE_FULL (new key, no room; not logged).
 * *max_p (may be NULL) is the key's highest accepted token after the decision.
 * The caller validated key, client and value. A failed history write is reported
 * once on stderr; the decision stands.
 */
rdlm_status_t fstore_write(fstore_t *store, const char *key, uint64_t token,
                           const char *value, size_t vlen, const char *client,
                           uint64_t *max_p);

/** The key's value and the token it was written with. RDLM_OK, or
 *  RDLM_ERR_NOT_FOUND. *value_p points into the store until its next write. */
rdlm_status_t fstore_read(const fstore_t *store, const char *key, uint64_t *token_p,
                          const char **value_p);

/** Writes accepted and rejected since creation. */
void fstore_counts(const fstore_t *store, uint64_t *accepted_p, uint64_t *stale_p);

#endif
