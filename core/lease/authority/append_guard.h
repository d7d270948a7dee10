/*
 * A replica stops at once when libraft fails to write its log.
 *
 * libraft 0.15's uv backend mishandles a failed segment write (read-only or failing
 * disk: EROFS, EIO): it answers the pending appends with an error, then crashes on
 * the same path (upstream canonical/raft#466, released in 0.18). The guard wraps
 * io->append: a write that failed logs one error line naming the data directory and
 * the error, and the process exits with status 3 before libraft goes on. A write
 * cancelled because the replica closes, and a successful one, pass through. Nothing
 * is lost: the failed entries were never acknowledged, and the other replicas elect
 * as after a kill.
 */
#ifndef RDLM_LEASE_APPEND_GUARD_H
#define RDLM_LEASE_APPEND_GUARD_H

#include <raft.h>

/** A raft_io with its guard: pass &guard.io to raft_init. */
typedef struct rdlm_lease_append_guard {
    struct raft_io io; /* first member: the wrapper finds the guard from io */
    int (*append)(struct raft_io *io, struct raft_io_append *req,
                  const struct raft_entry entries[], unsigned n, raft_io_append_cb cb);
    const char *dir;
} rdlm_lease_append_guard_t;

/**
 * Wrap g->io.append (g->io initialised by raft_uv_init, before raft_init). dir names
 * the data directory in the message and must outlive g. Appends are then made on
 * g->io's loop thread as before; each costs one small allocation.
 */
void rdlm_lease_append_guard(rdlm_lease_append_guard_t *g, const char *dir);

#endif
