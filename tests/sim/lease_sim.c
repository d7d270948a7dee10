/*
 * lease_sim — deterministic simulation of the replicated lease authority.
 *
 *   lease_sim --seeds A..B [--servers 3|5] [--events N] [--broken MODE]
 *             [--raft-faults fail|skip|observe] [--witness-rounds renew|step]
 *             [--expect-violation] [--verbose]
 *
 * Per seed: a 3- or 5-server raft_fixture cluster running the real state machine
 * (sim.h), SIM_CLIENTS clients and N events drawn from the seed: client commands sent
 * to the leader and validated there with rdlm_lease_sm_check before raft_apply (OPEN,
 * ACQUIRE try and queued, RELEASE with the right and a wrong token, CANCEL, CLOSE,
 * EPOCH, retries of the last request, requests of unknown sessions, some sent to a
 * stale leader), EXPIREs from the leader's lease timers (the shipped ones,
 * core/lease/authority/timers.h, in virtual time; live clients renew, stalled ones do not),
 * corrupted entries logged without a check, and faults: kill/revive, disconnected
 * pairs, one-way dropped links, depose and elect. One seed in four runs with tight
 * quotas. At the end everything is healed, every replica must converge, and the
 * cluster runs one more second (every live client renews once more). sim_checks.c
 * lists the invariants. In every seed the leader's confirmation rounds compare witness
 * marks and a diverged replica fails closed (sim_witness.c), and the tokens clients
 * were told are checked as a fenced resource sees them (sim_fence.c).
 *
 * libraft 0.15 itself breaks Raft here (sim_checks.c R2: a leader counts an entry a
 * follower does not have; R3: an entry of an earlier term committed by counting, then
 * lost to a new leader): such a finding is reported as LIBRAFT FAULT, never blamed on
 * the state machine. --raft-faults skip ends that seed at the fault (every check up
 * to there stands) and goes on; the summary counts them. --raft-faults observe stops
 * the state-machine checks there but runs the seed to its end, final converge
 * included, with the witness and the fence, and prints what the fault led to (LIBRAFT
 * FAULT OUTCOME, FENCE VIOLATION) and a summary. --witness-rounds step compares marks
 * after every fixture step instead of on renewals (sim_witness.c).
 *
 * Exit: 0 all seeds passed; 1 a state-machine invariant failed (seed, event and
 * invariant are printed; re-running that seed alone reproduces it), which includes a
 * fence violation or a witness flag in a seed without a libraft fault, and, at the
 * end, a fence violation after a flag or a flag where nothing diverged; 3 libraft
 * failed (with --raft-faults fail); 2 usage or setup error. With --expect-violation
 * (the planted --broken bugs) a violation exits 0 and a clean run 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "sim.h"

#define SIM_SETTLE_MS 1000 /* after the final converge: the longest renewal interval */

uint64_t sim_rng_next(sim_rng_t *rng)
{
    uint64_t z = (rng->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint32_t sim_rng_below(sim_rng_t *rng, uint32_t n)
{
    return (uint32_t)(sim_rng_next(rng) % n);
}

/* ---- clients ----------------------------------------------------------------- */

static void sim_client_forget(sim_client_t *cl)
{
    cl->session = 0;
    cl->seq = 0;
    memset(cl->held_token, 0, sizeof cl->held_token);
    memset(cl->held_seq, 0, sizeof cl->held_seq);
    memset(cl->wait_seq, 0, sizeof cl->wait_seq);
    cl->last.op = 0;
}

/* What a client does with an answer, from the log (via "reply"), or from the
 * leader's check without logging (via "check"). */
static void sim_client_answer(sim_t *sim, unsigned c, const rdlm_lease_cmd_t *cmd,
                              rdlm_status_t status, const rdlm_lease_result_t *res,
                              const char *via)
{
    sim_client_t *cl = &sim->clients[c];
    unsigned k = sim_name_index(cmd->name);

    if (cmd->op == RDLM_LEASE_OP_OPEN) {
        if (cmd->nonce != cl->nonce || status != RDLM_OK)
            return;
        if (res->session != cl->session) {
            sim_client_forget(cl);
            cl->session = res->session;
        }
        cl->last.op = 0;
        return;
    }
    if (cl->session == 0 || cmd->session != cl->session)
        return; /* an answer for a session this client already gave up */
    if (status == RDLM_ERR_LEASE_EXPIRED) {
        sim_client_forget(cl);
        return;
    }
    if (k == SIM_NAMES && cmd->op != RDLM_LEASE_OP_CLOSE)
        return; /* EPOCH, or a name the workload does not use */
    switch (cmd->op) {
    case RDLM_LEASE_OP_ACQUIRE:
        if (status == RDLM_OK) {
            sim_check_told(sim, cmd->session, cmd->seq, res->token, via);
            sim_fence_told(sim, c, k, cmd->session, cmd->seq, res->token, via);
            cl->held_token[k] = res->token;
            cl->held_seq[k] = cmd->seq;
            cl->wait_seq[k] = 0;
        } else if (status == RDLM_INPROGRESS) {
            cl->wait_seq[k] = cmd->seq;
        }
        break;
    case RDLM_LEASE_OP_RELEASE:
        if ((status == RDLM_OK || status == RDLM_ERR_NOT_OWNER) &&
            cl->held_token[k] == cmd->token)
            cl->held_token[k] = cl->held_seq[k] = 0;
        break;
    case RDLM_LEASE_OP_CANCEL:
        if (status == RDLM_OK && cl->wait_seq[k] == cmd->seq)
            cl->wait_seq[k] = 0;
        if (status == RDLM_OK && cl->held_seq[k] == cmd->seq)
            cl->held_token[k] = cl->held_seq[k] = 0;
        break;
    case RDLM_LEASE_OP_CLOSE:
        if (status == RDLM_OK)
            sim_client_forget(cl);
        break;
    default:
        break;
    }
}

void sim_on_reply(sim_t *sim, sim_req_t *req, int status, const rdlm_lease_result_t *res)
{
    /* an entry of the timers' leader: its timers hear of it as the replica's do */
    if (req->server == sim->timer_leader && req->cmd.op != 0)
        rdlm_lease_timers_applied(&sim->timers, sim->rep[req->server].adapter.sm,
                                  req->cmd.op, req->cmd.session, status == 0 ? res : NULL,
                                  raft_fixture_time(&sim->f));
    if (req->owner == SIM_CLIENTS)
        return; /* the leader's own entry */
    /* otherwise unknown, or refused by a replica that failed closed: may retry */
    if (status == 0 && !sim_refuses(sim, req->server))
        sim_client_answer(sim, req->owner, &req->cmd, res->status, res, "reply");
}

void sim_on_grant(sim_t *sim, unsigned s, uint64_t session, uint64_t seq, unsigned name,
                  uint64_t token)
{
    if (sim_refuses(sim, s))
        return; /* failed closed: no waiter is told anything */
    for (unsigned c = 0; c < SIM_CLIENTS; c++) {
        sim_client_t *cl = &sim->clients[c];
        if (cl->session != session || name == SIM_NAMES)
            continue;
        sim_check_told(sim, session, seq, token, "waiter granted");
        sim_fence_told(sim, c, name, session, seq, token, "waiter granted");
        cl->held_token[name] = token;
        cl->held_seq[name] = seq;
        cl->wait_seq[name] = 0;
    }
}

/* Send cmd as client c would: to the leader, checked there first like rdlmd does,
 * logged if the check says so. Sometimes the client still talks to a server that
 * believes it leads but was deposed or cut off (its entries never commit). */
static void sim_client_send(sim_t *sim, unsigned c, const rdlm_lease_cmd_t *cmd)
{
    struct raft_fixture *f = &sim->f;
    unsigned s = sim_leader(sim), stale = sim->n;
    rdlm_lease_result_t res;
    rdlm_status_t st;

    for (unsigned i = 0; i < sim->n; i++)
        if (i != s && raft_fixture_alive(f, i) &&
            raft_state(raft_fixture_get(f, i)) == RAFT_LEADER)
            stale = i;
    if (stale < sim->n && sim_rng_below(&sim->rng, s == sim->n ? 2 : 8) == 0)
        s = stale;
    else if (s == sim->n)
        s = sim_wait_leader(sim, 3000);
    if (s == sim->n)
        return; /* RDLM_ERR_UNAVAILABLE: the client tries again later */
    sim->clients[c].last = *cmd;
    if (sim_refuses(sim, s))
        return; /* failed closed: RDLM_ERR_UNAVAILABLE */
    memset(&res, 0, sizeof res);
    st = rdlm_lease_sm_check(sim->rep[s].adapter.sm, cmd, &res);
    if (st != RDLM_OK)
        sim_client_answer(sim, c, cmd, st, &res, "check");
    else
        sim_submit(sim, s, c, cmd, NULL, 0, 2500);
}

static const uint32_t sim_ttls[] = {500, 1000, 3000};

/* A lock the client holds (what 1), waits for (2), or neither (0); SIM_NAMES if
 * there is none. */
static unsigned sim_pick_lock(sim_t *sim, const sim_client_t *cl, int what)
{
    unsigned k0 = sim_rng_below(&sim->rng, SIM_NAMES);
    for (unsigned d = 0; d < SIM_NAMES; d++) {
        unsigned k = (k0 + d) % SIM_NAMES;
        int state = cl->held_token[k] != 0 ? 1 : cl->wait_seq[k] != 0 ? 2 : 0;
        if (state == what)
            return k;
    }
    return SIM_NAMES;
}

static void sim_ev_client(sim_t *sim)
{
    unsigned c = sim_rng_below(&sim->rng, SIM_CLIENTS), r, k;
    sim_client_t *cl;
    rdlm_lease_cmd_t cmd;

    for (r = 0; r < SIM_CLIENTS && sim->clients[c].stalled; r++)
        c = (c + 1) % SIM_CLIENTS;
    if (r == SIM_CLIENTS)
        return;
    cl = &sim->clients[c];
    memset(&cmd, 0, sizeof cmd);
    if (cl->session == 0) {
        if (cl->last.op != RDLM_LEASE_OP_OPEN) { /* else re-send: same nonce */
            cl->nonce = sim_rng_next(&sim->rng) | 1;
            memset(&cl->last, 0, sizeof cl->last);
            cl->last.op = RDLM_LEASE_OP_OPEN;
            cl->last.nonce = cl->nonce;
            cl->last.ttl_ms = sim_ttls[sim_rng_below(&sim->rng, 3)];
        }
        cmd = cl->last;
        sim_client_send(sim, c, &cmd);
        return;
    }
    r = sim_rng_below(&sim->rng, 100);
    if (r >= 74 && r < 82 && cl->last.op != 0) {
        sim->st.retries++;
        cmd = cl->last; /* same seq: de-duplicated */
        sim_client_send(sim, c, &cmd);
        return;
    }
    cmd.session = cl->session;
    if (r < 42 || r >= 90) { /* ACQUIRE: try, queued, or from an unknown session */
        cmd.op = RDLM_LEASE_OP_ACQUIRE;
        cmd.flags = r < 20 ? RDLM_LEASE_ACQ_TRY : 0;
        cmd.timeout_ms = 1000 + sim_rng_below(&sim->rng, 5000);
        k = sim_pick_lock(sim, cl, 0);
        if (k == SIM_NAMES || sim_rng_below(&sim->rng, 10) == 0)
            k = sim_rng_below(&sim->rng, SIM_NAMES); /* one it has: refused */
        if (r >= 97)
            cmd.session = 1000000 + c;
    } else if (r < 64) { /* RELEASE, with the right token 3 times in 4 */
        cmd.op = RDLM_LEASE_OP_RELEASE;
        k = sim_pick_lock(sim, cl, 1);
        if (k == SIM_NAMES) { /* holds nothing: somebody else's, or nobody's */
            k = sim_rng_below(&sim->rng, SIM_NAMES);
            cmd.token = sim_rng_next(&sim->rng) >> 20;
        } else {
            cmd.token = cl->held_token[k];
            if (sim_rng_below(&sim->rng, 4) == 0)
                cmd.token ^= 1 + sim_rng_below(&sim->rng, 255);
        }
    } else if (r < 74) { /* CANCEL: a wait, a hold, or an old seq */
        cmd.op = RDLM_LEASE_OP_CANCEL;
        k = sim_pick_lock(sim, cl, 2);
        if (k != SIM_NAMES) {
            cmd.seq = cl->wait_seq[k];
        } else if ((k = sim_pick_lock(sim, cl, 1)) != SIM_NAMES) {
            cmd.seq = cl->held_seq[k];
        } else {
            k = sim_rng_below(&sim->rng, SIM_NAMES);
            cmd.seq = 1 + sim_rng_below(&sim->rng, cl->seq ? (uint32_t)cl->seq : 1);
        }
        memcpy(cmd.name, sim_names[k], strlen(sim_names[k]) + 1);
        cmd.name_len = (uint16_t)strlen(cmd.name);
        sim_client_send(sim, c, &cmd);
        return;
    } else if (r < 86) {
        cmd.op = RDLM_LEASE_OP_CLOSE;
        k = SIM_NAMES;
    } else {
        cmd.op = RDLM_LEASE_OP_EPOCH;
        k = SIM_NAMES;
    }
    cmd.seq = ++cl->seq;
    if (k < SIM_NAMES) {
        memcpy(cmd.name, sim_names[k], strlen(sim_names[k]) + 1);
        cmd.name_len = (uint16_t)strlen(cmd.name);
    }
    sim_client_send(sim, c, &cmd);
}

/* ---- the leader's lease timers ----------------------------------------------- */

/* rdlm_lease_timers_scan's callback: the EXPIRE is submitted after the scan (sim_submit
 * steps the cluster, whose replies change the timers). */
static void sim_expire_due(void *arg, uint64_t session, uint64_t now_ms)
{
    sim_t *sim = arg;

    (void)now_ms;
    sim->due[sim->n_due++] = session;
}

/* What the leader's tick does, on the shipped timers (core/lease/authority/timers.h) in
 * virtual time: a new leader (or term) starts with none; every session its state machine
 * has and its timers lack is armed for a full TTL (the fixture's leader has no barrier, so
 * this stands in for the replica's arming once its log is applied); live clients renew,
 * stalled ones do not; the EXPIREs due are submitted, or retried a heartbeat later. */
static void sim_timers(sim_t *sim)
{
    unsigned l = sim_leader(sim);
    struct raft *r;
    const rdlm_lease_sm_t *sm;
    raft_time now;
    uint32_t ttl;

    if (l == sim->n)
        return;
    r = raft_fixture_get(&sim->f, l);
    if (l != sim->timer_leader || r->current_term != sim->timer_term) {
        rdlm_lease_timers_clear(&sim->timers);
        sim->timer_leader = l;
        sim->timer_term = r->current_term;
    }
    sm = sim->rep[l].adapter.sm;
    now = raft_fixture_time(&sim->f);
    rdlm_lease_timers_lead(&sim->timers, sm, now);
    for (unsigned c = 0; c < SIM_CLIENTS; c++) {
        uint64_t s = sim->clients[c].session;
        if (s != 0 && !sim->clients[c].stalled)
            (void)rdlm_lease_timers_renew(&sim->timers, sm, s, now, &ttl);
    }
    sim->n_due = 0;
    rdlm_lease_timers_scan(&sim->timers, now, 1, sim_expire_due, sim);
    for (size_t i = 0; i < sim->n_due; i++) {
        /* The timer's own entry: not a client request, so not through check(). */
        rdlm_lease_cmd_t cmd = {.op = RDLM_LEASE_OP_EXPIRE, .session = sim->due[i]};
        if (sim_leader(sim) != l ||
            sim_submit(sim, l, SIM_CLIENTS, &cmd, NULL, 0, 1500) == NULL)
            rdlm_lease_timers_retry(&sim->timers, cmd.session, now + r->heartbeat_timeout);
    }
}

/* ---- faults and other events ------------------------------------------------- */

static void sim_ev_garbage(sim_t *sim)
{
    unsigned l = sim_leader(sim);
    rdlm_lease_cmd_t cmd = {.op = (uint8_t)(1 + sim_rng_below(&sim->rng, 9)),
                            .session = 1 + sim_rng_below(&sim->rng, 8),
                            .seq = sim_rng_below(&sim->rng, 50),
                            .ttl_ms = 1000,
                            .name_len = 6};
    uint8_t buf[RDLM_LEASE_CMD_MAX];
    size_t len;

    if (l == sim->n)
        return;
    memcpy(cmd.name, sim_names[0], 7);
    if (cmd.op == RDLM_LEASE_OP_CLOSE || cmd.op == RDLM_LEASE_OP_EPOCH ||
        cmd.op == RDLM_LEASE_OP_EXPIRE || cmd.op == RDLM_LEASE_OP_RENEW ||
        cmd.op == RDLM_LEASE_OP_STATUS) {
        cmd.name_len = 0;
        cmd.name[0] = '\0';
    }
    len = rdlm_lease_cmd_encode(&cmd, buf, sizeof buf);
    if (len == 0) { /* an op the encoder refuses: random bytes instead */
        len = 1 + sim_rng_below(&sim->rng, 80);
        for (size_t b = 0; b < len; b++)
            buf[b] = (uint8_t)sim_rng_next(&sim->rng);
    } else if (sim_rng_below(&sim->rng, 2) == 0) {
        len -= 1 + sim_rng_below(&sim->rng, (uint32_t)len - 1); /* truncated */
    } else {
        buf[sim_rng_below(&sim->rng, (uint32_t)len)] ^=
            (uint8_t)(1 + sim_rng_below(&sim->rng, 255)); /* one byte flipped */
    }
    sim->st.garbage++;
    sim_submit(sim, l, SIM_CLIENTS, NULL, buf, len, 1500);
}

static void sim_ev_kill(sim_t *sim)
{
    unsigned dead = 0, i;
    for (i = 0; i < sim->n; i++)
        dead += !sim->alive[i];
    if (dead >= (sim->n - 1) / 2)
        return;
    do
        i = sim_rng_below(&sim->rng, sim->n);
    while (!sim->alive[i]);
    sim->alive[i] = 0;
    sim->st.kills++;
    sim_net_apply(sim);
}

static void sim_ev_revive(sim_t *sim)
{
    unsigned i = sim_rng_below(&sim->rng, sim->n);
    for (unsigned d = 0; d < sim->n; d++, i = (i + 1) % sim->n)
        if (!sim->alive[i]) {
            sim->alive[i] = 1;
            sim_net_apply(sim);
            return;
        }
}

static void sim_ev_cut(sim_t *sim, int both)
{
    unsigned i = sim_rng_below(&sim->rng, sim->n);
    unsigned j = (i + 1 + sim_rng_below(&sim->rng, sim->n - 1)) % sim->n;
    sim->cut[i][j] = both ? SIM_CUT_DISCONNECT : SIM_CUT_DROP;
    if (both)
        sim->cut[j][i] = SIM_CUT_DISCONNECT;
    sim->st.partitions++;
    sim_net_apply(sim);
}

static void sim_ev_mend(sim_t *sim)
{
    unsigned i = sim_rng_below(&sim->rng, sim->n);
    unsigned j = (i + 1 + sim_rng_below(&sim->rng, sim->n - 1)) % sim->n;
    sim->cut[i][j] = sim->cut[j][i] = SIM_CUT_NONE;
    sim_net_apply(sim);
}

static void sim_ev_time(sim_t *sim)
{
    unsigned ms = 50 + sim_rng_below(&sim->rng, 1500);
    for (unsigned done = 0; done < ms; done += 100) {
        sim_step_ms(sim, ms - done < 100 ? ms - done : 100);
        sim_timers(sim);
    }
}

enum {
    SIM_EV_CLIENT,
    SIM_EV_TIME,
    SIM_EV_STALL,
    SIM_EV_KILL,
    SIM_EV_REVIVE,
    SIM_EV_DISCONNECT,
    SIM_EV_DROP,
    SIM_EV_MEND,
    SIM_EV_HEAL,
    SIM_EV_REELECT,
    SIM_EV_GARBAGE,
    SIM_EV_COUNT_
};

/* Relative weights of the events, per mille. */
static const unsigned sim_weights[SIM_EV_COUNT_] = {
    [SIM_EV_CLIENT] = 660, [SIM_EV_TIME] = 110,   [SIM_EV_STALL] = 40,
    [SIM_EV_KILL] = 25,    [SIM_EV_REVIVE] = 25,  [SIM_EV_DISCONNECT] = 20,
    [SIM_EV_DROP] = 20,    [SIM_EV_MEND] = 40,    [SIM_EV_HEAL] = 20,
    [SIM_EV_REELECT] = 15, [SIM_EV_GARBAGE] = 25,
};

static void sim_one_event(sim_t *sim)
{
    unsigned r = sim_rng_below(&sim->rng, 1000), ev = 0;
    while (ev + 1 < SIM_EV_COUNT_ && r >= sim_weights[ev])
        r -= sim_weights[ev++];
    switch (ev) {
    case SIM_EV_CLIENT:
        sim_ev_client(sim);
        break;
    case SIM_EV_TIME:
        sim_ev_time(sim);
        break;
    case SIM_EV_STALL: {
        sim_client_t *cl = &sim->clients[sim_rng_below(&sim->rng, SIM_CLIENTS)];
        cl->stalled = !cl->stalled;
        break;
    }
    case SIM_EV_KILL:
        sim_ev_kill(sim);
        break;
    case SIM_EV_REVIVE:
        sim_ev_revive(sim);
        break;
    case SIM_EV_DISCONNECT:
        sim_ev_cut(sim, 1);
        break;
    case SIM_EV_DROP:
        sim_ev_cut(sim, 0);
        break;
    case SIM_EV_MEND:
        sim_ev_mend(sim);
        break;
    case SIM_EV_HEAL:
        sim_heal(sim);
        break;
    case SIM_EV_REELECT:
        sim_reelect(sim);
        break;
    default:
        sim_ev_garbage(sim);
        break;
    }
    sim_timers(sim);
}

/* ---- one seed, and main ------------------------------------------------------ */

/* Does the seed go on (no libraft fault yet, or one that is only observed)? */
static int sim_goes_on(const sim_t *sim)
{
    return !sim->poisoned || sim->raft_mode == SIM_RAFT_OBSERVE;
}

/* Heal, converge and run SIM_SETTLE_MS more. Not converging is a liveness VIOLATION
 * unless libraft broke Raft in this seed. */
static void sim_finish(sim_t *sim)
{
    char servers[512];

    if (!sim_converge(sim, 30000)) {
        sim->out.converged = 0;
        if (!sim->poisoned) {
            sim_describe(sim, servers, sizeof servers);
            sim_violation(sim,
                          "liveness: no convergence within 30 s of virtual time after "
                          "healing every fault: %s",
                          servers);
        }
    }
    sim_step_ms(sim, SIM_SETTLE_MS);
}

static void sim_run_seed(sim_t *sim, uint64_t seed)
{
    sim->seed = seed;
    sim->rng.s = seed * 0x2545f4914f6cdd1dull + sim->n;
    sim->event = 0;
    memset(sim->clients, 0, sizeof sim->clients);
    memset(sim->reqs, 0, sizeof sim->reqs);
    rdlm_lease_timers_clear(&sim->timers);
    sim->timer_leader = sim->n;
    sim->timer_term = 0;
    sim->poisoned = 0;
    /* One seed in four runs into the quotas: few sessions, locks, holds and waits
     * (drawn from a stream of its own, so the workload of a seed stays the same). */
    sim_rng_t quota = {.s = ~seed};
    memset(&sim->limits, 0, sizeof sim->limits);
    if (sim_rng_below(&quota, 4) == 0)
        sim->limits = (rdlm_lease_limits_t){.max_sessions = 4,
                                            .max_locks = 3,
                                            .max_held_per_session = 2,
                                            .max_waits_per_session = 1};
    sim_check_reset(sim);
    sim_witness_reset(sim);
    sim_fence_reset(sim);
    sim_cluster_start(sim);
    for (; sim->event < sim->events && sim_goes_on(sim); sim->event++)
        sim_one_event(sim);
    if (sim_goes_on(sim))
        sim_finish(sim);
    if (sim->raft_mode == SIM_RAFT_OBSERVE)
        sim_witness_seed_end(sim);
    sim_cluster_stop(sim);
    sim->st.seeds++;
    sim->st.events += sim->event;
}

static int sim_parse_seeds(const char *arg, uint64_t *lo_p, uint64_t *hi_p)
{
    char *end;
    *lo_p = strtoull(arg, &end, 10);
    if (end == arg)
        return -1;
    if (*end == '\0') {
        *hi_p = *lo_p;
        return 0;
    }
    if (strncmp(end, "..", 2) != 0)
        return -1;
    arg = end + 2;
    *hi_p = strtoull(arg, &end, 10);
    return end == arg || *end != '\0' || *hi_p < *lo_p ? -1 : 0;
}

static int sim_usage(void)
{
    fprintf(stderr, "usage: lease_sim [--seeds A..B] [--servers 3|5] [--events N]\n"
                    "                 [--broken skip-entry|nondeterministic|rollback]\n"
                    "                 [--raft-faults fail|skip|observe]\n"
                    "                 [--witness-rounds renew|step]\n"
                    "                 [--expect-violation]\n"
                    "                 [--verbose]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static sim_t sim;
    uint64_t lo = 1, hi = 200;
    int expect = 0, verbose = 0, failed;
    struct timespec t0, t1;

    sim.n = 3;
    sim.events = 300;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (strcmp(argv[a], "--seeds") == 0 && v != NULL) {
            if (sim_parse_seeds(v, &lo, &hi) != 0)
                return sim_usage();
            a++;
        } else if (strcmp(argv[a], "--servers") == 0 && v != NULL) {
            sim.n = (unsigned)atoi(v);
            if (sim.n != 3 && sim.n != 5)
                return sim_usage();
            a++;
        } else if (strcmp(argv[a], "--events") == 0 && v != NULL) {
            sim.events = (unsigned)atoi(v);
            a++;
        } else if (strcmp(argv[a], "--broken") == 0 && v != NULL) {
            if (strcmp(v, "skip-entry") == 0)
                sim.broken = SIM_BROKEN_SKIP_ENTRY;
            else if (strcmp(v, "nondeterministic") == 0)
                sim.broken = SIM_BROKEN_PHANTOM;
            else if (strcmp(v, "rollback") == 0)
                sim.broken = SIM_BROKEN_ROLLBACK;
            else
                return sim_usage();
            a++;
        } else if (strcmp(argv[a], "--raft-faults") == 0 && v != NULL) {
            if (strcmp(v, "fail") == 0)
                sim.raft_mode = SIM_RAFT_FAIL;
            else if (strcmp(v, "skip") == 0)
                sim.raft_mode = SIM_RAFT_SKIP;
            else if (strcmp(v, "observe") == 0)
                sim.raft_mode = SIM_RAFT_OBSERVE;
            else
                return sim_usage();
            a++;
        } else if (strcmp(argv[a], "--witness-rounds") == 0 && v != NULL) {
            if (strcmp(v, "renew") == 0)
                sim.rounds = SIM_ROUNDS_RENEW;
            else if (strcmp(v, "step") == 0)
                sim.rounds = SIM_ROUNDS_STEP;
            else
                return sim_usage();
            a++;
        } else if (strcmp(argv[a], "--expect-violation") == 0) {
            expect = 1;
        } else if (strcmp(argv[a], "--verbose") == 0) {
            verbose = 1;
        } else {
            return sim_usage();
        }
    }
    if (rdlm_lease_timers_init(&sim.timers, SIM_MAX_SESSIONS) != RDLM_OK)
        sim_fatal("rdlm_lease_timers_init");
    sim.violation_exit = expect ? 0 : 1;
    sim.raft_exit = expect ? 0 : SIM_EXIT_RAFT;
    /* raft_fsm.c warns about every corrupt entry the workload logs on purpose */
    if (!verbose)
        rdlm_log_set_level(RDLM_LOG_ERROR);

    clock_gettime(CLOCK_MONOTONIC, &t0); /* for the summary only */
    for (uint64_t seed = lo; seed <= hi; seed++) {
        sim_run_seed(&sim, seed);
        if (verbose)
            printf("seed %" PRIu64 ": ok, %" PRIu64 " grants, %" PRIu64
                   " expiries so far\n",
                   seed, sim.st.grants, sim.st.expiries);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("lease_sim: seeds %" PRIu64 "..%" PRIu64 ", %u servers: %" PRIu64
           " seeds, %" PRIu64 " events, %" PRIu64 " elections, %" PRIu64 " kills, %" PRIu64
           " partitions, %" PRIu64 " grants, %" PRIu64 " expiries, %" PRIu64
           " entries, %" PRIu64 " corrupt entries, %" PRIu64 " retries, %" PRIu64
           " snapshot round trips, %" PRIu64 " steps; all state-machine invariants held; "
           "%" PRIu64 " seeds %s libraft fault (R1 %" PRIu64 ", R2 %" PRIu64 ", R3 %" PRIu64
           ") (%.1f s)\n",
           lo, hi, sim.n, sim.st.seeds, sim.st.events, sim.st.elections, sim.st.kills,
           sim.st.partitions, sim.st.grants, sim.st.expiries, sim.st.entries,
           sim.st.garbage, sim.st.retries, sim.st.snapshots, sim.st.steps,
           sim.st.raft_faults[0],
           sim.raft_mode == SIM_RAFT_OBSERVE ? "ran on after a" : "ended early by a",
           sim.st.raft_faults[1], sim.st.raft_faults[2], sim.st.raft_faults[3],
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    failed = sim_witness_summary(&sim);
    free(sim.points);
    rdlm_lease_timers_free(&sim.timers);
    if (expect) {
        printf("lease_sim: the planted bug was NOT caught\n");
        return 1;
    }
    return failed;
}
