/*
 * The 0.15 fixture's in-memory disk truncates at once: ioMethodTruncate keeps the
 * first index - 1 stored entries and frees the rest. When libraft truncates entries
 * whose append is still in flight (a follower learns of a conflict while writing),
 * fewer than index - 1 entries are stored yet and it copies past its array (heap
 * corruption, a crash later). raft_uv queues a truncation behind the writes before
 * it; so does this wrapper: the truncation runs when every append submitted before
 * it has completed (the fixture completes one server's appends in order: one disk
 * latency for all).
 */
#include <stddef.h>

#include "sim.h"

/* The only simulation in the process: append callbacks carry nothing else. */
static sim_t *sim_disk_sim;

static sim_replica_t *sim_disk_rep(struct raft_io *io)
{
    struct raft_fixture_server *s =
        (struct raft_fixture_server *)(void *)((char *)io -
                                               offsetof(struct raft_fixture_server, io));
    return &sim_disk_sim->rep[s->id - 1];
}

static void sim_disk_appended(struct raft_io_append *req, int status)
{
    for (unsigned i = 0; i < sim_disk_sim->n; i++) {
        sim_replica_t *rep = &sim_disk_sim->rep[i];
        sim_disk_t *d = &rep->disk;
        if (d->n == 0 || d->req[0] != req)
            continue;
        raft_io_append_cb cb = d->cb[0];
        d->n--;
        for (unsigned k = 0; k < d->n; k++) {
            d->req[k] = d->req[k + 1];
            d->cb[k] = d->cb[k + 1];
        }
        if (d->truncate_at != 0 && --d->truncate_after == 0) {
            raft_index index = d->truncate_at;
            d->truncate_at = 0;
            if (d->truncate(&sim_disk_sim->f.servers[i].io, index) != 0)
                sim_fatal("fixture truncate failed");
        }
        cb(req, status);
        return;
    }
    sim_fatal("an append completed out of order");
}

static int sim_disk_append(struct raft_io *io, struct raft_io_append *req,
                           const struct raft_entry entries[], unsigned n,
                           raft_io_append_cb cb)
{
    sim_disk_t *d = &sim_disk_rep(io)->disk;
    int rv;

    if (d->n == SIM_DISK_PENDING)
        sim_fatal("too many appends in flight (raise SIM_DISK_PENDING)");
    rv = d->append(io, req, entries, n, sim_disk_appended);
    if (rv == 0) {
        d->req[d->n] = req;
        d->cb[d->n++] = cb;
    }
    return rv;
}

static int sim_disk_truncate(struct raft_io *io, raft_index index)
{
    sim_disk_t *d = &sim_disk_rep(io)->disk;

    if (d->n == 0)
        return d->truncate(io, index);
    if (d->truncate_at != 0 && d->truncate_after != d->n)
        sim_fatal("a second truncation behind other appends");
    if (d->truncate_at == 0 || index < d->truncate_at)
        d->truncate_at = index;
    d->truncate_after = d->n;
    return 0;
}

void sim_disk_install(sim_t *sim)
{
    sim_disk_sim = sim;
    for (unsigned i = 0; i < sim->n; i++) {
        struct raft_io *io = &sim->f.servers[i].io;
        sim_disk_t *d = &sim->rep[i].disk;
        d->append = io->append;
        d->truncate = io->truncate;
        d->n = 0;
        d->truncate_at = 0;
        io->append = sim_disk_append;
        io->truncate = sim_disk_truncate;
    }
}
