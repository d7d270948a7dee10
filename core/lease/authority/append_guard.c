/* Stop a replica whose log write failed (append_guard.h). */
#include "append_guard.h"

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"

#define RDLM_LEASE_APPEND_GUARD_EXIT 3 /* rdlmd's "replica unsafe" status */

/* One write in flight: the request given to libraft's append, and the caller's. */
typedef struct rdlm_append_pending {
    struct raft_io_append req; /* passed down; its callback finds this record */
    struct raft_io_append *caller_req;
    raft_io_append_cb caller_cb;
    const rdlm_lease_append_guard_t *guard;
} rdlm_append_pending_t;

static void rdlm_append_guard_cb(struct raft_io_append *req, int status)
{
    rdlm_append_pending_t *p =
        (rdlm_append_pending_t *)((char *)req - offsetof(rdlm_append_pending_t, req));
    struct raft_io_append *caller_req = p->caller_req;
    raft_io_append_cb caller_cb = p->caller_cb;

    if (status != 0 && status != RAFT_CANCELED) { /* CANCELED: closing */
        rdlm_error("lease: data directory %s: writing the log failed (%s): this replica "
                   "stops (exit %d); the others go on",
                   p->guard->dir, raft_strerror(status), RDLM_LEASE_APPEND_GUARD_EXIT);
        _exit(RDLM_LEASE_APPEND_GUARD_EXIT);
    }
    free(p);
    caller_cb(caller_req, status);
}

static int rdlm_append_guard_append(struct raft_io *io, struct raft_io_append *req,
                                    const struct raft_entry entries[], unsigned n,
                                    raft_io_append_cb cb)
{
    rdlm_lease_append_guard_t *g = (rdlm_lease_append_guard_t *)io;
    rdlm_append_pending_t *p = malloc(sizeof(*p));
    int rv;

    if (p == NULL) {
        return RAFT_NOMEM;
    }
    *p = (rdlm_append_pending_t){.caller_req = req, .caller_cb = cb, .guard = g};
    p->req.data = req->data;
    rv = g->append(io, &p->req, entries, n, rdlm_append_guard_cb);
    if (rv != 0) {
        free(p);
    }
    return rv;
}

void rdlm_lease_append_guard(rdlm_lease_append_guard_t *g, const char *dir)
{
    g->append = g->io.append;
    g->dir = dir;
    g->io.append = rdlm_append_guard_append;
}
