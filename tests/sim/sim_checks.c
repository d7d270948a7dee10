/*
 * The invariants, checked after every apply and snapshot of every replica and after
 * every step of the fixture. "Point" = the state after applying everything through
 * one log index; the first replica to reach an index records it, every other one
 * must match it when it gets there.
 *
 *   (1) one holder: at one applied index every replica names the same holder and
 *       token for every lock; a replica's holder of a lock changes only through a
 *       grant made by that entry (to the new holder, with the lock's token), and a
 *       holder loses a lock only through its own RELEASE, CANCEL or CLOSE, or the
 *       EXPIRE of its session
 *   (2) same index, same state: rdlm_lease_sm_hash equal at equal applied indexes;
 *       an entry that does not decode changes nothing and answers RDLM_ERR_PROTOCOL;
 *       a snapshot restores to the state it was taken from, and a truncated one is
 *       refused without a change
 *   (3) tokens: on each replica every new grant's token is above every earlier one
 *       and carries the current epoch; every replica gives each (session, seq) the
 *       same token; a token told to a client is the one the log granted
 *   (4) epochs: never decrease on a replica
 *
 * Raft itself (so that a libraft fault is not blamed on the state machine):
 *   (R1) replicas apply the same entry (bytes and term) at the same index
 *   (R2) a leader's match index for a follower of its term points at an entry the
 *        follower really stores (same term there)
 *   (R3) servers commit the same entry (term) at an index, and a new leader's log
 *        holds every committed entry (Leader Completeness)
 * and when a state-machine invariant fails, the logs are compared first: if two
 * replicas applied different entries, the finding is libraft's. After a seed's first
 * libraft fault (sim->poisoned) none of these is checked any more: the replicas may
 * legitimately differ from then on. Only the first index where two replicas applied
 * entries of different bytes is still recorded (sim->out.split_event): the truth the
 * witness's flags are judged by.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

const char *const sim_names[SIM_NAMES] = {"job/L0", "job/L1", "job/L2", "job/L3"};

unsigned sim_name_index(const char *name)
{
    unsigned k = 0;
    while (k < SIM_NAMES && strcmp(name, sim_names[k]) != 0)
        k++;
    return k;
}

void sim_fatal(const char *what)
{
    fprintf(stderr, "lease_sim: harness error: %s\n", what);
    exit(2);
}

static const char *sim_broken_name(sim_broken_t mode)
{
    switch (mode) {
    case SIM_BROKEN_SKIP_ENTRY:
        return " --broken skip-entry";
    case SIM_BROKEN_PHANTOM:
        return " --broken nondeterministic";
    case SIM_BROKEN_ROLLBACK:
        return " --broken rollback";
    default:
        return "";
    }
}

/* The options a reproduction needs besides seeds, servers, events and --broken. */
static void sim_mode_flags(const sim_t *sim, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s",
             sim->raft_mode == SIM_RAFT_OBSERVE ? " --raft-faults observe" : "",
             sim->rounds == SIM_ROUNDS_STEP ? " --witness-rounds step" : "");
}

static void sim_report(sim_t *sim, const char *kind, const char *msg)
{
    char flags[96];

    sim_mode_flags(sim, flags, sizeof flags);
    printf("%s seed %" PRIu64 " event %u (servers %u): %s\n"
           "  reproduce: lease_sim --seeds %" PRIu64 "..%" PRIu64
           " --servers %u --events %u%s%s\n",
           kind, sim->seed, sim->event, sim->n, msg, sim->seed, sim->seed, sim->n,
           sim->events, sim_broken_name(sim->broken), flags);
    fflush(stdout);
}

static sim_point_t *sim_point_slot(sim_t *sim, raft_index index)
{
    if (index >= sim->points_cap) {
        size_t cap = sim->points_cap ? sim->points_cap : 1024;
        while (cap <= index)
            cap *= 2;
        sim_point_t *p = realloc(sim->points, cap * sizeof *p);
        if (p == NULL) {
            fprintf(stderr, "lease_sim: out of memory\n");
            exit(2);
        }
        memset(p + sim->points_cap, 0, (cap - sim->points_cap) * sizeof *p);
        sim->points = p;
        sim->points_cap = cap;
    }
    return &sim->points[index];
}

/* ---- Raft-level checks ------------------------------------------------------- */

/* The first index both replicas of a pair applied at which differ(ra, rb, i) holds:
 * 1 with *a_p, *b_p, *i_p set, or 0. */
static int sim_first_applied(sim_t *sim,
                             int (*differ)(const struct raft *, const struct raft *,
                                           raft_index),
                             unsigned *a_p, unsigned *b_p, raft_index *i_p)
{
    for (unsigned a = 0; a < sim->n; a++)
        for (unsigned b = a + 1; b < sim->n; b++) {
            const struct raft *ra = raft_fixture_get(&sim->f, a);
            const struct raft *rb = raft_fixture_get(&sim->f, b);
            raft_index top =
                ra->last_applied < rb->last_applied ? ra->last_applied : rb->last_applied;
            for (raft_index i = 1; i <= top; i++) {
                if (differ(ra, rb, i)) {
                    *a_p = a;
                    *b_p = b;
                    *i_p = i;
                    return 1;
                }
            }
        }
    return 0;
}

/* Both logs hold an entry at i, of different terms. */
static int sim_terms_differ(const struct raft *ra, const struct raft *rb, raft_index i)
{
    raft_term ta = sim_log_term(&ra->log, i), tb = sim_log_term(&rb->log, i);

    return ta != 0 && tb != 0 && ta != tb;
}

/* 1 (and what, in buf) if two replicas applied different entries at one index. */
static int sim_logs_diverged(sim_t *sim, char *buf, size_t size)
{
    unsigned a, b;
    raft_index i;

    if (!sim_first_applied(sim, sim_terms_differ, &a, &b, &i))
        return 0;
    snprintf(buf, size,
             "servers %u and %u both applied index %llu, from terms %llu and %llu", a, b,
             (unsigned long long)i,
             (unsigned long long)sim_log_term(&raft_fixture_get(&sim->f, a)->log, i),
             (unsigned long long)sim_log_term(&raft_fixture_get(&sim->f, b)->log, i));
    return 1;
}

/* Do a and b change the state machine differently (only command entries reach it)? */
static int sim_entries_differ(const struct raft_entry *a, const struct raft_entry *b)
{
    if ((a->type == RAFT_COMMAND) != (b->type == RAFT_COMMAND))
        return 1;
    return a->type == RAFT_COMMAND &&
           (a->buf.len != b->buf.len || memcmp(a->buf.base, b->buf.base, a->buf.len) != 0);
}

/* Both logs hold an entry at i, and they change the state machine differently. */
static int sim_commands_differ(const struct raft *ra, const struct raft *rb, raft_index i)
{
    const struct raft_entry *ea = sim_log_entry(&ra->log, i);
    const struct raft_entry *eb = sim_log_entry(&rb->log, i);

    return ea != NULL && eb != NULL && sim_entries_differ(ea, eb);
}

int sim_applied_differ(sim_t *sim)
{
    unsigned a, b;
    raft_index i;

    return sim_first_applied(sim, sim_commands_differ, &a, &b, &i);
}

void sim_raft_fault(sim_t *sim, unsigned check, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (sim->poisoned)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sim->raft_mode == SIM_RAFT_FAIL) {
        sim_report(sim, "LIBRAFT FAULT", msg);
        exit(sim->raft_exit);
    }
    if (sim->st.raft_faults[0] < 3)
        sim_report(sim,
                   sim->raft_mode == SIM_RAFT_SKIP
                       ? "LIBRAFT FAULT (seed ended; more are only counted)"
                       : "LIBRAFT FAULT (observed: the seed goes on; more are not printed)",
                   msg);
    sim->st.raft_faults[0]++;
    sim->st.raft_faults[check]++;
    sim->out.fault = check;
    sim->out.fault_event = sim->event;
    sim->poisoned = 1;
}

void sim_violation(sim_t *sim, const char *fmt, ...)
{
    char msg[1024], why[256];
    va_list ap;

    if (sim->poisoned)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (sim_logs_diverged(sim, why, sizeof why)) {
        sim_raft_fault(sim, 1, "(R1) %s; the state machine then saw: %s", why, msg);
        return;
    }
    sim_report(sim, "VIOLATION", msg);
    exit(sim->violation_exit);
}

/* (R2) on every server that leads. */
static void sim_check_match(sim_t *sim, const struct raft *lr)
{
    for (unsigned k = 0; k < lr->configuration.n; k++) {
        raft_id id = lr->configuration.servers[k].id;
        const struct raft *fr = raft_fixture_get(&sim->f, (unsigned)id - 1);
        raft_index m = lr->leader_state.progress[k].match_index;
        raft_term lt, ft;
        if (id == lr->id || m == 0 || fr->current_term != lr->current_term)
            continue;
        lt = sim_log_term(&lr->log, m);
        ft = sim_log_term(&fr->log, m);
        if (lt != ft)
            sim_raft_fault(sim, 2,
                           "(R2) leader %u (term %llu) takes index %llu as stored on "
                           "server %u, which has %s there (term %llu; the leader's is "
                           "term %llu), and may commit on that. libraft 0.15 answers a "
                           "successful AppendEntries with the follower's last stored "
                           "index, past the entries it checked (cowsql/raft 66ed6afd)",
                           (unsigned)lr->id - 1, (unsigned long long)lr->current_term,
                           (unsigned long long)m, (unsigned)id - 1,
                           ft ? "another entry" : "no entry", (unsigned long long)ft,
                           (unsigned long long)lt);
    }
}

/* (R3) for one server, after a step. */
static void sim_check_commit(sim_t *sim, sim_replica_t *rep)
{
    const struct raft *r = rep->raft;

    for (raft_index i = rep->committed + 1; i <= r->commit_index; i++) {
        sim_point_t *pt = sim_point_slot(sim, i);
        raft_term t = sim_log_term(&r->log, i);
        if (pt->committed == 0) {
            pt->committed = t;
        } else if (t != pt->committed) {
            sim_raft_fault(sim, 3,
                           "(R3) server %u commits index %llu from term %llu, another "
                           "server committed term %llu there",
                           rep->i, (unsigned long long)i, (unsigned long long)t,
                           (unsigned long long)pt->committed);
            return;
        }
        if (i > sim->max_committed)
            sim->max_committed = i;
    }
    if (r->commit_index > rep->committed)
        rep->committed = r->commit_index;
    if (r->state != RAFT_LEADER || rep->led == r->current_term)
        return;
    rep->led = r->current_term; /* a new leader: does it hold every committed entry? */
    for (raft_index i = 1; i <= sim->max_committed; i++) {
        raft_term want = sim_point_slot(sim, i)->committed, have = sim_log_term(&r->log, i);
        if (want != 0 && have != want) {
            sim_raft_fault(sim, 3,
                           "(R3) server %u leads term %llu with term %llu at index "
                           "%llu, where term %llu was committed (Leader Completeness; a "
                           "known cause: libraft 0.15 commits an entry of an earlier term "
                           "by counting replicas, against Raft 5.4.2, fixed in "
                           "canonical/raft 524f735, 0.17.1)",
                           rep->i, (unsigned long long)r->current_term,
                           (unsigned long long)have, (unsigned long long)i,
                           (unsigned long long)want);
            return;
        }
    }
}

void sim_check_reset(sim_t *sim)
{
    if (sim->points != NULL)
        memset(sim->points, 0, sim->points_cap * sizeof *sim->points);
    memset(sim->grant_tab, 0, sizeof sim->grant_tab);
    sim->max_committed = 0;
}

/* ---- (session, seq) -> token ------------------------------------------------- */

static sim_grant_rec_t *sim_grant_find(sim_t *sim, uint64_t session, uint64_t seq,
                                       int insert)
{
    uint64_t h = (session * 0x9e3779b97f4a7c15ull) ^ (seq * 0xc2b2ae3d27d4eb4full);
    for (unsigned probe = 0; probe < SIM_GRANT_SLOTS; probe++) {
        sim_grant_rec_t *rec = &sim->grant_tab[(h + probe) % SIM_GRANT_SLOTS];
        if (rec->session == session && rec->seq == seq)
            return rec;
        if (rec->session == 0) {
            if (!insert)
                return NULL;
            rec->session = session;
            rec->seq = seq;
            return rec;
        }
    }
    sim_fatal("grant table full (raise SIM_GRANT_SLOTS)");
}

void sim_check_told(sim_t *sim, uint64_t session, uint64_t seq, uint64_t token,
                    const char *what)
{
    sim_grant_rec_t *rec = sim_grant_find(sim, session, seq, 0);
    if (sim->poisoned)
        return;
    if (rec == NULL) {
        sim_violation(sim,
                      "(3) a client was told token %#" PRIx64 " (%s) for session %" PRIu64
                      " seq %" PRIu64 ", which no replica granted",
                      token, what, session, seq);
        return;
    }
    if (rec->token != token)
        sim_violation(sim,
                      "(3) a client was told token %#" PRIx64 " (%s) for session %" PRIu64
                      " seq %" PRIu64 ", the log granted %#" PRIx64,
                      token, what, session, seq, rec->token);
}

/* ---- points ------------------------------------------------------------------ */

static void sim_lock_state(const rdlm_lease_sm_t *sm, unsigned k, uint64_t *holder_p,
                           uint64_t *token_p)
{
    size_t waiters;
    if (rdlm_lease_sm_lock_info(sm, sim_names[k], holder_p, token_p, &waiters) != RDLM_OK)
        *holder_p = 0;
    if (*holder_p == 0)
        *token_p = 0;
}

static uint64_t sim_fnv(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* (R1): the command entry applied at index, from the first replica that applied it. */
static void sim_entry_check(sim_t *sim, sim_replica_t *rep, raft_index index,
                            const struct raft_buffer *buf)
{
    sim_point_t *pt = sim_point_slot(sim, index);
    uint64_t entry = sim_fnv(buf->base, buf->len);
    raft_term term = sim_log_term(&rep->raft->log, index);

    if (!pt->has_entry) {
        pt->has_entry = 1;
        pt->entry = entry;
        pt->term = term;
    } else if (pt->entry != entry || pt->term != term) {
        /* the same bytes from another term would change no state */
        if (pt->entry != entry && sim->out.split_event == SIM_NO_EVENT)
            sim->out.split_event = sim->event;
        sim_raft_fault(sim, 1,
                       "(R1) replica %u applied another entry at index %llu (term %llu"
                       ") than an earlier replica (term %llu)",
                       rep->i, (unsigned long long)index, (unsigned long long)term,
                       (unsigned long long)pt->term);
    }
}

/* Record or compare the replica's state as the state at index. Returns 1 if this
 * replica was the first to get there. */
static int sim_point_check(sim_t *sim, sim_replica_t *rep, raft_index index)
{
    const rdlm_lease_sm_t *sm = rep->adapter.sm;
    sim_point_t *pt = sim_point_slot(sim, index);
    sim_point_t mine = {.set = 1, .by = (uint8_t)rep->i};

    mine.hash = rdlm_lease_sm_hash(sm);
    mine.epoch = rdlm_lease_sm_epoch(sm);
    for (unsigned k = 0; k < SIM_NAMES; k++)
        sim_lock_state(sm, k, &mine.holder[k], &mine.token[k]);
    if (!pt->set) {
        mine.has_entry = pt->has_entry;
        mine.entry = pt->entry;
        mine.term = pt->term;
        *pt = mine;
        return 1;
    }
    for (unsigned k = 0; k < SIM_NAMES; k++)
        if (mine.holder[k] != pt->holder[k] || mine.token[k] != pt->token[k])
            sim_violation(sim,
                          "(1) at applied index %llu lock %s is held by session %" PRIu64
                          " token %#" PRIx64 " on replica %u but by session %" PRIu64
                          " token %#" PRIx64 " on replica %u",
                          (unsigned long long)index, sim_names[k], mine.holder[k],
                          mine.token[k], rep->i, pt->holder[k], pt->token[k], pt->by);
    if (mine.epoch != pt->epoch)
        sim_violation(sim,
                      "(4) at applied index %llu epoch %" PRIu64 " on replica %u, %" PRIu64
                      " on replica %u",
                      (unsigned long long)index, mine.epoch, rep->i, pt->epoch, pt->by);
    if (mine.hash != pt->hash)
        sim_violation(sim,
                      "(2) at applied index %llu state hash %#" PRIx64
                      " on replica %u, %#" PRIx64 " on replica %u",
                      (unsigned long long)index, mine.hash, rep->i, pt->hash, pt->by);
    return 0;
}

/* ---- one apply --------------------------------------------------------------- */

/* The grants this entry made: the waiters' (grant callback) and the ACQUIRE's own. */
static unsigned sim_apply_grants(sim_t *sim, sim_replica_t *rep,
                                 const rdlm_lease_cmd_t *cmd,
                                 const rdlm_lease_result_t *res, uint64_t epoch)
{
    unsigned n = rep->n_grants;

    if (cmd != NULL && cmd->op == RDLM_LEASE_OP_ACQUIRE && res->status == RDLM_OK) {
        sim_grant_ev_t own = {.session = cmd->session,
                              .seq = cmd->seq,
                              .token = res->token,
                              .name = sim_name_index(cmd->name)};
        if (res->token <= rep->max_token) {
            /* not new: a duplicate ACQUIRE answered from the state */
            sim_check_told(sim, own.session, own.seq, own.token, "duplicate ACQUIRE");
        } else if (n < SIM_APPLY_GRANTS) {
            rep->grants[n++] = own;
        }
    }
    for (unsigned g = 0; g < n; g++) {
        sim_grant_ev_t *ev = &rep->grants[g];
        int expired = cmd != NULL && cmd->op == RDLM_LEASE_OP_EXPIRE;
        if (g < rep->n_grants && ev->broken != expired)
            sim_violation(sim,
                          "(1) replica %u granted %s to session %" PRIu64 " with "
                          "broken=%d applying %s",
                          rep->i, ev->name < SIM_NAMES ? sim_names[ev->name] : "?",
                          ev->session, ev->broken,
                          cmd != NULL ? rdlm_lease_op_name(cmd->op) : "?");
        if (ev->token <= rep->max_token)
            sim_violation(sim,
                          "(3) replica %u granted token %#" PRIx64 " to session %" PRIu64
                          " seq %" PRIu64 " after token %#" PRIx64,
                          rep->i, ev->token, ev->session, ev->seq, rep->max_token);
        if (ev->token >> 40 != epoch)
            sim_violation(sim,
                          "(3) replica %u granted token %#" PRIx64 " in epoch %" PRIu64,
                          rep->i, ev->token, epoch);
        rep->max_token = ev->token;
        sim_grant_rec_t *rec = sim_grant_find(sim, ev->session, ev->seq, 1);
        if (rec->token == 0) {
            rec->token = ev->token;
            sim->st.grants++;
        } else if (rec->token != ev->token) {
            sim_violation(sim,
                          "(3) replica %u granted session %" PRIu64 " seq %" PRIu64
                          " token %#" PRIx64 ", another replica %#" PRIx64,
                          rep->i, ev->session, ev->seq, ev->token, rec->token);
        }
    }
    return n;
}

/* Did entry cmd take lock k from session holder? */
static int sim_may_take(const rdlm_lease_cmd_t *cmd, unsigned k, uint64_t holder)
{
    if (cmd == NULL || cmd->session != holder)
        return 0;
    switch (cmd->op) {
    case RDLM_LEASE_OP_RELEASE:
    case RDLM_LEASE_OP_CANCEL:
        return strcmp(cmd->name, sim_names[k]) == 0;
    case RDLM_LEASE_OP_CLOSE:
    case RDLM_LEASE_OP_EXPIRE:
        return 1;
    default:
        return 0;
    }
}

void sim_check_apply(sim_t *sim, sim_replica_t *rep, raft_index index,
                     const struct raft_buffer *buf, const rdlm_lease_cmd_t *cmd,
                     const rdlm_lease_result_t *res)
{
    const rdlm_lease_sm_t *sm = rep->adapter.sm;
    uint64_t epoch = rdlm_lease_sm_epoch(sm);
    const char *op = cmd != NULL ? rdlm_lease_op_name(cmd->op) : "undecodable entry";
    unsigned n;

    sim_entry_check(sim, rep, index, buf);
    if (sim->poisoned)
        return;

    if (cmd == NULL) {
        if (res->status != RDLM_ERR_PROTOCOL)
            sim_violation(sim,
                          "(2) replica %u answered %s to an undecodable entry at "
                          "index %llu",
                          rep->i, rdlm_status_name(res->status), (unsigned long long)index);
        if (rdlm_lease_sm_hash(sm) != rep->pre_hash)
            sim_violation(sim, "(2) an undecodable entry at index %llu changed replica %u",
                          (unsigned long long)index, rep->i);
    }
    if (epoch < rep->epoch)
        sim_violation(sim,
                      "(4) epoch went from %" PRIu64 " to %" PRIu64 " on replica %u "
                      "applying %s at index %llu",
                      rep->epoch, epoch, rep->i, op, (unsigned long long)index);
    if ((res->status == RDLM_OK || res->status == RDLM_INPROGRESS) && res->epoch != epoch)
        sim_violation(sim,
                      "(4) replica %u answered epoch %" PRIu64 " to %s at index %llu, "
                      "its state has %" PRIu64,
                      rep->i, res->epoch, op, (unsigned long long)index, epoch);
    rep->epoch = epoch;
    n = sim_apply_grants(sim, rep, cmd, res, epoch);

    for (unsigned k = 0; k < SIM_NAMES; k++) {
        uint64_t holder, token;
        sim_lock_state(sm, k, &holder, &token);
        if (holder == rep->holder[k] && token == rep->token[k])
            continue;
        if (rep->holder[k] != 0 && !sim_may_take(cmd, k, rep->holder[k]))
            sim_violation(sim,
                          "(1) replica %u: session %" PRIu64 " lost %s applying %s "
                          "of session %" PRIu64 " at index %llu",
                          rep->i, rep->holder[k], sim_names[k], op,
                          cmd != NULL ? cmd->session : 0, (unsigned long long)index);
        if (holder != 0) {
            unsigned g = 0;
            while (g < n &&
                   !(rep->grants[g].name == k && rep->grants[g].session == holder &&
                     rep->grants[g].token == token))
                g++;
            if (g == n)
                sim_violation(sim,
                              "(1) replica %u: %s went to session %" PRIu64
                              " token %#" PRIx64 " applying %s at index %llu, which "
                              "granted it no such thing",
                              rep->i, sim_names[k], holder, token, op,
                              (unsigned long long)index);
        }
        rep->holder[k] = holder;
        rep->token[k] = token;
    }
    if (sim_point_check(sim, rep, index) && cmd != NULL &&
        cmd->op == RDLM_LEASE_OP_EXPIRE && res->status == RDLM_OK)
        sim->st.expiries++;
    rep->seen = index;
}

void sim_check_snapshot(sim_t *sim, sim_replica_t *rep)
{
    struct raft_buffer *bufs = NULL, half;
    unsigned n_bufs = 0;
    uint64_t live = rdlm_lease_sm_hash(rep->adapter.sm), before;

    if (sim->poisoned)
        return;
    sim->st.snapshots++;
    if (rep->inner.snapshot(&rep->inner, &bufs, &n_bufs) != 0 || n_bufs != 1) {
        sim_violation(sim, "(2) replica %u: snapshot failed or came in %u buffers", rep->i,
                      n_bufs);
        return;
    }
    half.len = bufs[0].len / 2;
    half.base = raft_malloc(half.len + 1);
    if (half.base == NULL)
        sim_fatal("raft_malloc");
    memcpy(half.base, bufs[0].base, half.len);
    /* restore() owns the buffer when it succeeds */
    if (rep->scratch_fsm.restore(&rep->scratch_fsm, &bufs[0]) != 0) {
        raft_free(bufs[0].base);
        sim_violation(sim, "(2) replica %u: its snapshot (%zu bytes) was refused", rep->i,
                      bufs[0].len);
    } else if (rdlm_lease_sm_hash(rep->scratch.sm) != live) {
        sim_violation(sim, "(2) replica %u: its snapshot restores to another state",
                      rep->i);
    }
    raft_free(bufs);
    before = rdlm_lease_sm_hash(rep->scratch.sm);
    if (rep->scratch_fsm.restore(&rep->scratch_fsm, &half) == 0) {
        sim_violation(sim, "(2) replica %u: half of its snapshot was restored", rep->i);
        return;
    }
    raft_free(half.base);
    if (rdlm_lease_sm_hash(rep->scratch.sm) != before)
        sim_violation(sim, "(2) replica %u: a refused snapshot changed the state", rep->i);
}

void sim_check_step(sim_t *sim)
{
    for (unsigned i = 0; i < sim->n && !sim->poisoned; i++) {
        sim_check_commit(sim, &sim->rep[i]);
        if (sim->rep[i].raft->state == RAFT_LEADER)
            sim_check_match(sim, sim->rep[i].raft);
    }
    for (unsigned i = 0; i < sim->n && !sim->poisoned; i++) {
        sim_replica_t *rep = &sim->rep[i];
        raft_index applied = raft_last_applied(rep->raft);
        if (applied != rep->seen) {
            rep->seen = applied;
            sim_point_check(sim, rep, applied);
        }
    }
}
