/*
 * The simulated cluster: libraft's raft_fixture with the lease state machine on
 * every server, each behind a wrapper FSM that lets sim_checks.c see every apply, and
 * can plant a bug on one replica (--broken).
 *
 * Network faults are kept as a wanted matrix (sim->alive, sim->cut) and pushed to
 * the fixture by sim_net_apply(), because the fixture's own calls do not compose:
 * kill and revive saturate and desaturate every link of a server, and saturate
 * asserts that the link is connected.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static sim_t *sim_of_fixture(struct raft_fixture *f)
{
    return (sim_t *)(void *)((char *)f - offsetof(sim_t, f));
}

/* ---- planted bugs (one replica, once) ---------------------------------------- */

/* Returns 1 if the wrapper must not apply this entry (skip-entry). */
static int sim_broken_before(sim_replica_t *rep, raft_index index,
                             const rdlm_lease_cmd_t *cmd)
{
    sim_broken_t mode = rep->sim->broken;

    if (rep->i != SIM_BROKEN_REPLICA || rep->broken_done || index < 8)
        return 0;
    if (mode == SIM_BROKEN_SKIP_ENTRY && cmd != NULL &&
        (cmd->op == RDLM_LEASE_OP_OPEN || cmd->op == RDLM_LEASE_OP_ACQUIRE)) {
        rep->broken_done = 1;
        return 1;
    }
    if (mode == SIM_BROKEN_ROLLBACK && rep->saved == NULL &&
        rdlm_lease_sm_snapshot(rep->adapter.sm, &rep->saved, &rep->saved_len) != RDLM_OK)
        sim_fatal("snapshot for --broken rollback");
    return 0;
}

/* After the real apply: an EXPIRE nobody logged, or a jump back to a saved state. */
static void sim_broken_after(sim_replica_t *rep, raft_index index)
{
    sim_broken_t mode = rep->sim->broken;
    rdlm_lease_sm_t *sm = rep->adapter.sm;

    if (rep->i != SIM_BROKEN_REPLICA || rep->broken_done || index < 8)
        return;
    if (mode == SIM_BROKEN_PHANTOM) {
        for (unsigned k = 0; k < SIM_NAMES; k++) {
            uint64_t holder = 0, token;
            size_t waiters;
            if (rdlm_lease_sm_lock_info(sm, sim_names[k], &holder, &token, &waiters) !=
                    RDLM_OK ||
                holder == 0)
                continue;
            rdlm_lease_cmd_t cmd = {.op = RDLM_LEASE_OP_EXPIRE, .session = holder};
            uint8_t buf[RDLM_LEASE_CMD_MAX];
            size_t len = rdlm_lease_cmd_encode(&cmd, buf, sizeof buf);
            rdlm_lease_result_t res;
            rdlm_lease_sm_apply(sm, buf, len, &res);
            rep->broken_done = 1;
            return;
        }
    } else if (mode == SIM_BROKEN_ROLLBACK && rep->saved != NULL && index >= 40) {
        if (rdlm_lease_sm_restore(sm, rep->saved, rep->saved_len) != RDLM_OK)
            sim_fatal("restore for --broken rollback");
        rep->broken_done = 1;
    }
}

/* ---- the wrapper FSM --------------------------------------------------------- */

static int sim_fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    sim_replica_t *rep = fsm->data;
    sim_t *sim = rep->sim;
    raft_index index = raft_last_applied(rep->raft) + 1;
    rdlm_lease_cmd_t cmd;
    int decoded = rdlm_lease_cmd_decode(buf->base, buf->len, &cmd) == RDLM_OK;
    int rv = 0;

    if (!decoded)
        rep->pre_hash = rdlm_lease_sm_hash(rep->adapter.sm);
    rep->in_apply = 1;
    rep->n_grants = 0;
    if (sim_broken_before(rep, index, decoded ? &cmd : NULL))
        *result = &rep->adapter.last;
    else
        rv = rep->inner.apply(&rep->inner, buf, result);
    if (rv != 0)
        sim_violation(sim,
                      "apply: the adapter failed (%d) on replica %u at index %llu: "
                      "libraft stops applying on this replica",
                      rv, rep->i, (unsigned long long)index);
    sim_broken_after(rep, index);
    rep->in_apply = 0;
    sim_check_apply(sim, rep, index, buf, decoded ? &cmd : NULL, *result);
    if (rep->adapter.applied % SIM_SNAPSHOT_EVERY == 0)
        sim_check_snapshot(sim, rep);
    /* Waiters granted by this entry learn it from the leader, like rdlmd's clients. */
    if (raft_state(rep->raft) == RAFT_LEADER)
        for (unsigned g = 0; g < rep->n_grants; g++)
            sim_on_grant(sim, rep->i, rep->grants[g].session, rep->grants[g].seq,
                         rep->grants[g].name, rep->grants[g].token);
    return 0;
}

/* libraft never snapshots here (see sim_cluster_start): plain forwarders. */
static int sim_fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[],
                            unsigned *n_bufs)
{
    sim_replica_t *rep = fsm->data;
    return rep->inner.snapshot(&rep->inner, bufs, n_bufs);
}

static int sim_fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    sim_replica_t *rep = fsm->data;
    return rep->inner.restore(&rep->inner, buf);
}

static void sim_grant_cb(void *arg, uint64_t session, uint64_t seq, const char *name,
                         uint64_t token, int broken)
{
    sim_replica_t *rep = arg;
    if (!rep->in_apply) {
        sim_violation(rep->sim, "grant callback outside apply on replica %u", rep->i);
        return;
    }
    if (rep->n_grants == SIM_APPLY_GRANTS) {
        sim_violation(rep->sim, "one apply granted more than %d waiters on replica %u",
                      SIM_APPLY_GRANTS, rep->i);
        return;
    }
    rep->grants[rep->n_grants++] = (sim_grant_ev_t){.session = session,
                                                    .seq = seq,
                                                    .token = token,
                                                    .name = sim_name_index(name),
                                                    .broken = broken};
}

static void sim_hook(struct raft_fixture *f, struct raft_fixture_event *event)
{
    sim_t *sim = sim_of_fixture(f);
    (void)event;
    sim->st.steps++;
    if (f->leader_id != 0) {
        raft_term term = raft_fixture_get(f, (unsigned)f->leader_id - 1)->current_term;
        if (f->leader_id != sim->last_leader || term != sim->last_term) {
            sim->st.elections++;
            sim->last_leader = f->leader_id;
            sim->last_term = term;
        }
    }
    sim_check_step(sim);
    sim_witness_step(sim);
}

/* ---- cluster lifetime -------------------------------------------------------- */

void sim_cluster_start(sim_t *sim)
{
    struct raft_configuration conf;
    int rv;

    memset(&sim->f, 0, sizeof sim->f); /* initialize does not reset the server count */
    rv = raft_fixture_initialize(&sim->f);
    if (rv != 0)
        sim_fatal("raft_fixture_initialize");
    for (unsigned i = 0; i < sim->n; i++) {
        sim_replica_t *rep = &sim->rep[i];
        memset(rep, 0, sizeof *rep);
        rep->sim = sim;
        rep->i = i;
        if (rdlm_lease_raft_fsm_init(&rep->adapter, &rep->inner, &sim->limits) != RDLM_OK ||
            rdlm_lease_raft_fsm_init(&rep->scratch, &rep->scratch_fsm, &sim->limits) !=
                RDLM_OK)
            sim_fatal("rdlm_lease_raft_fsm_init");
        rdlm_lease_sm_set_grant_cb(rep->adapter.sm, sim_grant_cb, rep);
        rep->epoch = rdlm_lease_sm_epoch(rep->adapter.sm);
        rep->outer = (struct raft_fsm){.version = 1,
                                       .data = rep,
                                       .apply = sim_fsm_apply,
                                       .snapshot = sim_fsm_snapshot,
                                       .restore = sim_fsm_restore};
        rv = raft_fixture_grow(&sim->f, &rep->outer);
        if (rv != 0)
            sim_fatal("raft_fixture_grow");
        rep->raft = raft_fixture_get(&sim->f, i);
        /* No libraft snapshots: the 0.15 fixture's in-memory disk assumes its first
         * entry has index 1 (ioMethodTruncate), so a follower that installed a
         * snapshot and later truncates a conflicting suffix reads past its array
         * (heap corruption). The harness round-trips snapshots through the adapter
         * itself instead (sim_check_snapshot). */
        raft_set_snapshot_threshold(rep->raft, UINT_MAX);
        sim->alive[i] = 1;
    }
    memset(sim->cut, 0, sizeof sim->cut);
    memset(sim->disc, 0, sizeof sim->disc);
    sim->last_leader = 0;
    sim->last_term = 0;
    rv = raft_fixture_configuration(&sim->f, sim->n, &conf);
    if (rv != 0)
        sim_fatal("raft_fixture_configuration");
    rv = raft_fixture_bootstrap(&sim->f, &conf);
    raft_configuration_close(&conf);
    if (rv != 0)
        sim_fatal("raft_fixture_bootstrap");
    rv = raft_fixture_start(&sim->f);
    if (rv != 0)
        sim_fatal("raft_fixture_start");
    sim_disk_install(sim);
    raft_fixture_hook(&sim->f, sim_hook);
    raft_fixture_elect(&sim->f, 0);
}

void sim_cluster_stop(sim_t *sim)
{
    /* Entries still in flight get their callback (LEADERSHIPLOST) in here. */
    raft_fixture_close(&sim->f);
    for (unsigned i = 0; i < sim->n; i++) {
        rdlm_lease_raft_fsm_close(&sim->rep[i].adapter);
        rdlm_lease_raft_fsm_close(&sim->rep[i].scratch);
        free(sim->rep[i].saved);
        sim->rep[i].saved = NULL;
    }
    for (unsigned r = 0; r < SIM_REQS; r++)
        sim->reqs[r].busy = 0;
    sim->barrier_busy = 0;
}

/* ---- network ----------------------------------------------------------------- */

void sim_net_apply(sim_t *sim)
{
    struct raft_fixture *f = &sim->f;
    unsigned n = sim->n;

    /* 1. every link connected: saturate, kill and revive assert it */
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if (sim->disc[i][j]) {
                raft_fixture_reconnect(f, i, j);
                sim->disc[i][j] = 0;
            }
    /* 2. servers up or down */
    for (unsigned i = 0; i < n; i++) {
        if (sim->alive[i] && !raft_fixture_alive(f, i))
            raft_fixture_revive(f, i);
        else if (!sim->alive[i] && raft_fixture_alive(f, i))
            raft_fixture_kill(f, i);
    }
    /* 3. saturation: a dead server's links, and the cuts that drop silently */
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            if (i == j)
                continue;
            int want = sim->cut[i][j] == SIM_CUT_DROP || !sim->alive[i] || !sim->alive[j];
            int have = raft_fixture_saturated(f, i, j);
            if (want && !have)
                raft_fixture_saturate(f, i, j);
            else if (!want && have)
                raft_fixture_desaturate(f, i, j);
        }
    /* 4. the cuts that fail the send */
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if (i != j && sim->cut[i][j] == SIM_CUT_DISCONNECT && sim->alive[i] &&
                sim->alive[j]) {
                raft_fixture_disconnect(f, i, j);
                sim->disc[i][j] = 1;
            }
}

void sim_heal(sim_t *sim)
{
    for (unsigned i = 0; i < sim->n; i++)
        sim->alive[i] = 1;
    memset(sim->cut, 0, sizeof sim->cut);
    sim_net_apply(sim);
}

/* ---- leaders and elections --------------------------------------------------- */

/* Did libraft stop a server (RAFT_UNAVAILABLE: only after a libraft fault here)? */
static int sim_any_stopped(sim_t *sim)
{
    for (unsigned i = 0; i < sim->n; i++)
        if (raft_state(sim->rep[i].raft) == RAFT_UNAVAILABLE)
            return 1;
    return 0;
}

/* The fixture's rule for a stable leader (the leader of the highest term, acknowledged
 * by every server that is up and linked to it, and a majority with them), but with a
 * stopped server left out like a dead one. */
static unsigned sim_leader_without_stopped(sim_t *sim)
{
    struct raft_fixture *f = &sim->f;
    unsigned l = sim->n, acks = 0;
    raft_term term = 0;

    for (unsigned i = 0; i < sim->n; i++) {
        struct raft *r = raft_fixture_get(f, i);
        if (raft_fixture_alive(f, i) && raft_state(r) == RAFT_LEADER &&
            r->current_term > term) {
            l = i;
            term = r->current_term;
        }
    }
    for (unsigned i = 0; i < sim->n && l < sim->n; i++) {
        struct raft *r = raft_fixture_get(f, i);
        if (i == l || !raft_fixture_alive(f, i) || raft_state(r) == RAFT_UNAVAILABLE ||
            sim->disc[l][i] || raft_fixture_saturated(f, l, i))
            continue;
        if (r->current_term != term || raft_state(r) != RAFT_FOLLOWER ||
            r->follower_state.current_leader.id != (raft_id)l + 1)
            return sim->n;
        acks++;
    }
    return l < sim->n && acks >= sim->n / 2 ? l : sim->n;
}

/* The fixture counts a server libraft stopped as one that does not acknowledge the
 * leader, and so finds no leader for the rest of the seed, though the others go on
 * (and rdlmd's leader serves): then the harness applies the rule itself. */
unsigned sim_leader(sim_t *sim)
{
    unsigned l = raft_fixture_leader_index(&sim->f);

    return l < sim->n || !sim_any_stopped(sim) ? l : sim_leader_without_stopped(sim);
}

static bool sim_has_leader(struct raft_fixture *f, void *arg)
{
    (void)f;
    return sim_leader(arg) < ((sim_t *)arg)->n;
}

unsigned sim_wait_leader(sim_t *sim, unsigned max_ms)
{
    if (sim_leader(sim) == sim->n)
        raft_fixture_step_until(&sim->f, sim_has_leader, sim, max_ms);
    return sim_leader(sim);
}

void sim_step_ms(sim_t *sim, unsigned ms)
{
    raft_fixture_step_until_elapsed(&sim->f, ms);
}

raft_index sim_log_last(const struct raft_log *log)
{
    size_t n = log->back >= log->front ? log->back - log->front
                                       : log->size - log->front + log->back;
    return log->offset + n;
}

const struct raft_entry *sim_log_entry(const struct raft_log *log, raft_index index)
{
    if (index <= log->offset || index > sim_log_last(log))
        return NULL;
    return &log->entries[(log->front + (index - log->offset - 1)) % log->size];
}

raft_term sim_log_term(const struct raft_log *log, raft_index index)
{
    const struct raft_entry *e = sim_log_entry(log, index);

    if (index != 0 && index == log->snapshot.last_index && index <= log->offset)
        return log->snapshot.last_term;
    return e != NULL ? e->term : 0;
}

/* Is a's log at least as up to date as b's (what a vote needs)? */
static int sim_log_at_least(const struct raft *a, const struct raft *b)
{
    raft_index ia = sim_log_last(&a->log), ib = sim_log_last(&b->log);
    raft_term ta = sim_log_term(&a->log, ia), tb = sim_log_term(&b->log, ib);
    return ta > tb || (ta == tb && ia >= ib);
}

void sim_reelect(sim_t *sim)
{
    struct raft_fixture *f = &sim->f;
    unsigned n = sim->n, old, target = n, ties = 0;
    int followers = 1;

    sim_heal(sim);
    if (sim_wait_leader(sim, 10000) == n)
        return;
    sim_step_ms(sim, 300); /* every follower hears the leader: fresh timers */
    /* the fixture's own leader: depose needs it */
    old = raft_fixture_leader_index(f);
    if (old == n || raft_state(raft_fixture_get(f, old)) != RAFT_LEADER)
        return;
    for (unsigned i = 0; i < n; i++)
        if (i != old && raft_state(raft_fixture_get(f, i)) != RAFT_FOLLOWER)
            return;
    raft_fixture_depose(f);

    /* raft_fixture_elect(i) wins only if i gets a majority: in a 3-server cluster
     * the deposed leader (which forgot its leader) votes for i when i's log is at
     * least as up to date, and the third one refuses while it still believes in the
     * old leader. With 5 servers that is not a majority: let the timers decide. */
    for (unsigned i = 0; i < n; i++)
        if (raft_state(raft_fixture_get(f, i)) != RAFT_FOLLOWER)
            followers = 0;
    if (n == 3 && followers)
        for (unsigned i = 0; i < n; i++)
            if (i != old &&
                sim_log_at_least(raft_fixture_get(f, i), raft_fixture_get(f, old)) &&
                sim_rng_below(&sim->rng, ++ties) == 0)
                target = i;
    if (target < n)
        raft_fixture_elect(f, target);
    else
        sim_wait_leader(sim, 30000);
}

/* ---- submitting entries ------------------------------------------------------ */

static void sim_req_cb(struct raft_apply *req, int status, void *result)
{
    sim_req_t *slot = (sim_req_t *)(void *)req;
    slot->busy = 0;
    sim_on_reply(slot->sim, slot, status, status == 0 ? result : NULL);
}

static bool sim_req_settled(struct raft_fixture *f, void *arg)
{
    (void)f;
    return !((sim_req_t *)arg)->busy;
}

sim_req_t *sim_submit(sim_t *sim, unsigned s, unsigned owner, const rdlm_lease_cmd_t *cmd,
                      const uint8_t *raw, size_t len, unsigned max_ms)
{
    sim_req_t *slot = NULL;
    struct raft_buffer buf;

    for (unsigned r = 0; r < SIM_REQS && slot == NULL; r++)
        if (!sim->reqs[r].busy)
            slot = &sim->reqs[r];
    if (slot == NULL)
        return NULL;
    buf.base = raft_malloc(RDLM_LEASE_CMD_MAX);
    if (buf.base == NULL)
        sim_fatal("raft_malloc");
    if (raw != NULL) {
        memcpy(buf.base, raw, len);
        buf.len = len;
        memset(&slot->cmd, 0, sizeof slot->cmd);
    } else {
        buf.len = rdlm_lease_cmd_encode(cmd, buf.base, RDLM_LEASE_CMD_MAX);
        if (buf.len == 0)
            sim_fatal("rdlm_lease_cmd_encode refused a command the workload built");
        slot->cmd = *cmd;
    }
    slot->sim = sim;
    slot->server = s;
    slot->owner = owner;
    slot->busy = 1;
    if (raft_apply(raft_fixture_get(&sim->f, s), &slot->req, &buf, 1, sim_req_cb) != 0) {
        raft_free(buf.base);
        slot->busy = 0;
        return NULL;
    }
    sim->st.entries++;
    raft_fixture_step_until(&sim->f, sim_req_settled, slot, max_ms);
    return slot;
}

static void sim_barrier_cb(struct raft_barrier *req, int status)
{
    sim_t *sim = (sim_t *)(void *)((char *)req - offsetof(sim_t, barrier));
    (void)status;
    sim->barrier_busy = 0;
}

static bool sim_all_applied(struct raft_fixture *f, void *arg)
{
    sim_t *sim = arg;
    unsigned l = sim_leader(sim);
    if (l == sim->n || sim->barrier_busy)
        return false;
    for (unsigned i = 0; i < sim->n; i++)
        if (raft_last_applied(raft_fixture_get(f, i)) !=
            raft_last_applied(raft_fixture_get(f, l)))
            return false;
    return true;
}

const char *sim_state_name(int state)
{
    static const char *const states[] = {"unavailable", "follower", "candidate", "leader"};
    return states[state & 3];
}

void sim_describe(sim_t *sim, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned i = 0; i < sim->n && used < size; i++) {
        struct raft *r = raft_fixture_get(&sim->f, i);
        raft_index last = sim_log_last(&r->log);
        raft_term term = sim_log_term(&r->log, last);
        used += (size_t)snprintf(
            buf + used, size - used,
            "%s[%u] %s term %llu applied %llu commit %llu last %llu/%llu", i ? "; " : "", i,
            sim_state_name(raft_state(r)), (unsigned long long)r->current_term,
            (unsigned long long)raft_last_applied(r), (unsigned long long)r->commit_index,
            (unsigned long long)last, (unsigned long long)term);
    }
}

int sim_converge(sim_t *sim, unsigned max_ms)
{
    unsigned l;

    sim_heal(sim);
    l = sim_wait_leader(sim, max_ms);
    if (l == sim->n)
        return 0;
    /* A barrier in the leader's term commits everything older. */
    sim->barrier_busy = 1;
    if (raft_barrier(raft_fixture_get(&sim->f, l), &sim->barrier, sim_barrier_cb) != 0)
        sim->barrier_busy = 0;
    return raft_fixture_step_until(&sim->f, sim_all_applied, sim, max_ms);
}
