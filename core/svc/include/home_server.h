/*
 * The lock home an rdlmd daemon hosts (home_server.c; home_layout.h has the region): lock words
 * in memory registered with UCX, which clients reach with remote atomics while the
 * daemon's progress thread answers them. The daemon never touches a lock word.
 *
 * Serving starts only once the home has committed a new epoch at the authority (a
 * session of its own, opened from a thread, retried until a leader answers): so a
 * restarted home, whose region is new and empty, issues tokens larger than every
 * token of its previous life (issue 6: "any loss of home state forces a new epoch
 * before that home serves again").
 */
#ifndef RDLM_SVC_HOME_SERVER_H
#define RDLM_SVC_HOME_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <rdlm/status.h>

typedef struct rdlm_svc_home rdlm_svc_home_t;

typedef struct rdlm_svc_home_params {
    const char *authority; /**< client addresses of the replicas, "a:p[,b:p...]" */
    uint32_t slots;        /**< lock slots, 1 .. 2^24; 0: host none (HOMES says so) */
    uint32_t tags;         /**< client tags, 2 .. RDLM_SVC_TAGS_MAX (home_layout.h) */
    uint32_t self_id;      /**< the replica hosting the home (rdlmd --id) */
    uint32_t n_members;    /**< the replicas (--peers), 1 .. 7, self_id among them */
    const uint32_t *member_ids;      /**< [n_members] their ids, any order */
    const char *const *member_addrs; /**< [n_members] their client addresses */
} rdlm_svc_home_params_t;

/**
 * Open the UCX context (progress thread), allocate and register the region, and start
 * the thread that commits the epoch. With slots 0 nothing of that: the description
 * says at once that this replica hosts no home (home_layout.h), with its members.
 * RDLM_ERR_INVALID_ARG (sizes, members), the transport's errors (RDLM_ERR_UNSUPPORTED
 * without UCX); logged. Blocking, not on the loop's hot path (once at daemon start).
 */
rdlm_status_t rdlm_svc_home_start(const rdlm_svc_home_params_t *params,
                                  rdlm_svc_home_t **home_p);

/** The server's HOMES answer (server.h, rdlm_lease_homes_func_t): the description, or
 *  RDLM_ERR_UNAVAILABLE while the epoch is not committed yet. Thread-safe. */
rdlm_status_t rdlm_svc_home_describe(void *home, const uint8_t **blob_p, size_t *len_p);

/** Stop the epoch thread, close the transport (clients' later operations fail) and
 *  free. NULL is a no-op. */
void rdlm_svc_home_stop(rdlm_svc_home_t *home);

#endif
