/*
 * The shipped divergence check (core/lease/authority/include/witness.h) where the authority
 * runs it, failing closed, and what each seed's libraft fault led to.
 *
 * Rounds
 *   A leader compares marks in its leadership-confirmation rounds (confirm.h), which
 *   come with RENEWs. A client renews every TTL/3 of its session (the workload's TTLs
 *   are 500, 1000 and 3000 ms: every 167, 333 or 1000 ms of virtual time); stalled
 *   clients do not. SIM_ROUNDS_RENEW does a round at the first fixture step at or after
 *   a due RENEW of a session the leader knows; SIM_ROUNDS_STEP one after every step, an
 *   upper bound on what rounds can find. A round is instant: the leader L takes its
 *   newest mark n, and every other replica f that is up, with neither link between L
 *   and f cut, answers its chain at n if it applied n (rdlm_lease_witness_lookup, the
 *   STATUS answer); L checks each answer (rdlm_lease_witness_check, which logs the
 *   first divergence at error); a replica that has not applied n answers its newest
 *   mark instead (n' < n, its chain there), which L checks at n' from its ring.
 *
 * Failing closed
 *   A replica whose witness diverged refuses every client request and tells no waiter
 *   its grant (sim_refuses, on lease_sim's send, reply and grant paths), also as a
 *   follower and if it leads again (sticky).
 *
 * Judging
 *   Replicas diverged if two applied command entries of different bytes at one index
 *   (sim->out.split_event, sim_checks.c), or their logs still hold, at an index both
 *   applied, entries that change the state machine differently (sim_applied_differ).
 *   The same bytes logged again in another term (a lost entry's client retried) is no
 *   divergence: the chains, and the states, stay equal. A flag where nothing diverged
 *   is a false positive; in a seed without a libraft fault a flag is judged at once
 *   (sim_violation), in a faulted seed at its end.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define SIM_WHY_LEN 256

void sim_witness_reset(sim_t *sim)
{
    sim->out = (sim_outcome_t){.fault_event = SIM_NO_EVENT,
                               .split_event = SIM_NO_EVENT,
                               .detect_event = SIM_NO_EVENT,
                               .converged = 1};
}

int sim_refuses(sim_t *sim, unsigned s)
{
    return rdlm_lease_witness_diverged(&sim->rep[s].adapter.witness);
}

/* Can a and b reach each other (up, neither link cut)? */
static int sim_reachable(const sim_t *sim, unsigned a, unsigned b)
{
    return sim->alive[a] && sim->alive[b] && sim->cut[a][b] == SIM_CUT_NONE &&
           sim->cut[b][a] == SIM_CUT_NONE;
}

/* 1 if a RENEW of a session leader l knows is due; schedules each due client's next. */
static int sim_renew_due(sim_t *sim, unsigned l)
{
    raft_time now = raft_fixture_time(&sim->f);
    int due = 0;
    uint32_t ttl;

    for (unsigned c = 0; c < SIM_CLIENTS; c++) {
        sim_client_t *cl = &sim->clients[c];
        if (cl->session == 0 || cl->stalled || cl->renew_at > now ||
            !rdlm_lease_sm_session_ttl(sim->rep[l].adapter.sm, cl->session, &ttl, NULL))
            continue;
        cl->renew_at = now + ttl / 3;
        due = 1;
    }
    return due;
}

/* Leader l's witness flagged replica f at mark n. */
static void sim_witness_flagged(sim_t *sim, unsigned l, unsigned f, uint64_t n)
{
    sim_outcome_t *o = &sim->out;

    if (o->detect_event != SIM_NO_EVENT)
        return;
    o->detect_event = sim->event;
    o->detect_by = l;
    o->detect_peer = f;
    o->detect_n = n;
    if (!sim->poisoned) /* returns only if the logs show a libraft fault (R1) */
        sim_violation(sim,
                      "witness: leader %u flagged replica %u at entry %" PRIu64
                      " with no libraft fault seen (a false positive, or a replica that "
                      "skipped or changed an entry)",
                      l, f, n);
}

/* Replica f's answer to "your chain at n", as its STATUS gives it (server.c): at n if
 * it applied n, else at its newest mark if that is below n. 1 with *mark_p, 0 none. */
static int sim_witness_answer(sim_t *sim, unsigned f, uint64_t n, rdlm_lease_mark_t *mark_p)
{
    rdlm_lease_witness_t *w = &sim->rep[f].adapter.witness;

    mark_p->n = n;
    if (rdlm_lease_witness_lookup(w, n, &mark_p->chain))
        return 1;
    return rdlm_lease_witness_newest(w, mark_p) && mark_p->n < n;
}

/* One confirmation round of leader l. */
static void sim_witness_round(sim_t *sim, unsigned l)
{
    rdlm_lease_witness_t *w = &sim->rep[l].adapter.witness;
    rdlm_lease_mark_t mine, theirs;
    char who[32];

    if (!rdlm_lease_witness_newest(w, &mine))
        return;
    sim->ob.rounds++;
    for (unsigned f = 0; f < sim->n; f++) {
        if (f == l || !sim_reachable(sim, l, f) ||
            !sim_witness_answer(sim, f, mine.n, &theirs))
            continue;
        sim->ob.compared++;
        snprintf(who, sizeof who, "replica %u", f);
        if (!rdlm_lease_witness_check(w, theirs.n, theirs.chain, who))
            sim_witness_flagged(sim, l, f, theirs.n);
    }
}

void sim_witness_step(sim_t *sim)
{
    unsigned l = sim_leader(sim);

    if (l == sim->n || sim_refuses(sim, l)) /* a refused RENEW asks for no round */
        return;
    if (sim->rounds == SIM_ROUNDS_STEP || sim_renew_due(sim, l))
        sim_witness_round(sim, l);
}

/* ---- the seed's end ---------------------------------------------------------- */

/* Why no leader flagged replicas that diverged: what the last leader would need. */
static void sim_why_unflagged(sim_t *sim, char *buf, size_t size)
{
    unsigned l = sim_leader(sim);
    rdlm_lease_mark_t ml, mf;
    uint64_t cl, cf;
    size_t used = 0;

    if (l == sim->n) {
        snprintf(buf, size, "no leader at the end");
        return;
    }
    rdlm_lease_witness_newest(&sim->rep[l].adapter.witness, &ml);
    used = (size_t)snprintf(buf, size, "leader %u at entry %" PRIu64, l, ml.n);
    for (unsigned f = 0; f < sim->n && used < size; f++) {
        if (f == l)
            continue;
        rdlm_lease_witness_newest(&sim->rep[f].adapter.witness, &mf);
        uint64_t n = mf.n < ml.n ? mf.n : ml.n;
        int differ = rdlm_lease_witness_lookup(&sim->rep[l].adapter.witness, n, &cl) &&
                     rdlm_lease_witness_lookup(&sim->rep[f].adapter.witness, n, &cf) &&
                     cl != cf;
        used += (size_t)snprintf(buf + used, size - used,
                                 "; replica %u (%s) at entry %" PRIu64 ", chain at %" PRIu64
                                 " %s",
                                 f, sim_state_name(raft_state(sim->rep[f].raft)), mf.n, n,
                                 differ ? "differs" : "agrees");
    }
}

static void sim_lag_add(sim_observed_t *ob, unsigned lag)
{
    if (ob->n_lag == ob->cap_lag) {
        size_t cap = ob->cap_lag ? 2 * ob->cap_lag : 256;
        unsigned *p = realloc(ob->lag, cap * sizeof *p);
        if (p == NULL)
            sim_fatal("out of memory");
        ob->lag = p;
        ob->cap_lag = cap;
    }
    ob->lag[ob->n_lag++] = lag;
}

/* Add a faulted seed's outcome to the run's; split: its replicas diverged. */
static void sim_outcome_count(sim_t *sim, int split)
{
    const sim_outcome_t *o = &sim->out;
    sim_observed_t *ob = &sim->ob;
    int flagged = o->detect_event != SIM_NO_EVENT;

    ob->split += (uint64_t)split;
    ob->unconverged += (uint64_t)!o->converged;
    if (flagged && split) {
        ob->detected++;
        ob->at_end += (uint64_t)(o->detect_event == sim->events);
        sim_lag_add(ob, o->detect_event - o->fault_event);
    }
    if (o->fenced_before + o->fenced_after > 0) {
        ob->fenced_seeds++;
        ob->fenced_undetected += (uint64_t)!flagged;
    }
}

/* What the witness did in this seed, as text. */
static void sim_flag_text(sim_t *sim, int split, char *buf, size_t size)
{
    const sim_outcome_t *o = &sim->out;
    char why[SIM_WHY_LEN];

    if (o->detect_event != SIM_NO_EVENT) {
        snprintf(buf, size,
                 "leader %u flagged replica %u at entry %" PRIu64 ", event %u (%u after "
                 "the fault) and failed closed",
                 o->detect_by, o->detect_peer, o->detect_n, o->detect_event,
                 o->detect_event - o->fault_event);
    } else if (split) {
        sim_why_unflagged(sim, why, sizeof why);
        snprintf(buf, size, "not flagged (%s)", why);
    } else {
        snprintf(buf, size, "not flagged (nothing to find)");
    }
}

void sim_witness_seed_end(sim_t *sim)
{
    const sim_outcome_t *o = &sim->out;
    char flag[SIM_WHY_LEN + 128], split_at[48], servers[512] = "";
    int split = o->split_event != SIM_NO_EVENT || sim_applied_differ(sim);

    if (o->fault == 0)
        return; /* a flag there was judged at once */
    if (o->detect_event != SIM_NO_EVENT && !split) {
        sim->ob.false_positives++;
        printf("WITNESS FALSE POSITIVE seed %" PRIu64 " (servers %u): leader %u flagged "
               "replica %u at entry %" PRIu64 ", but no two replicas applied different "
               "entries\n",
               sim->seed, sim->n, o->detect_by, o->detect_peer, o->detect_n);
    }
    sim_outcome_count(sim, split);
    if (o->split_event != SIM_NO_EVENT)
        snprintf(split_at, sizeof split_at, "at event %u", o->split_event);
    else
        snprintf(split_at, sizeof split_at, "(a command against another entry)");
    sim_flag_text(sim, split, flag, sizeof flag);
    if (!o->converged)
        sim_describe(sim, servers, sizeof servers);
    printf("LIBRAFT FAULT OUTCOME seed %" PRIu64 " (servers %u): R%u at event %u; %s%s; "
           "witness: %s; fence violations: %u before the flag, %u after; %s%s\n",
           sim->seed, sim->n, o->fault, o->fault_event,
           split ? "replicas applied different entries "
                 : "no replica applied other entries",
           split ? split_at : "", flag, o->fenced_before, o->fenced_after,
           o->converged ? "converged" : "did not converge: ", servers);
}

/* ---- the run's summary ------------------------------------------------------- */

static int sim_cmp_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static double sim_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "median M, max K events from the fault to the flag", or "no flag". */
static void sim_lag_text(sim_observed_t *ob, char *buf, size_t size)
{
    if (ob->n_lag == 0) {
        snprintf(buf, size, "no flag");
        return;
    }
    qsort(ob->lag, ob->n_lag, sizeof *ob->lag, sim_cmp_unsigned);
    snprintf(buf, size, "median %u, max %u events from the fault to the flag",
             ob->lag[ob->n_lag / 2], ob->lag[ob->n_lag - 1]);
}

static void sim_summary_faults(sim_t *sim)
{
    sim_observed_t *ob = &sim->ob;
    uint64_t faulted = sim->st.raft_faults[0];
    char lag[96];

    sim_lag_text(ob, lag, sizeof lag);
    printf("lease_sim: libraft faults: %" PRIu64 " of %" PRIu64 " seeds (R1 %" PRIu64
           ", R2 %" PRIu64 ", R3 %" PRIu64
           "); replicas applied different entries in %" PRIu64
           " of them, nothing diverged in %" PRIu64 "; the witness flagged %" PRIu64
           " (%.1f%% of faulted, %.1f%% of diverged seeds; %" PRIu64
           " only in the final converge; %s); diverged but never flagged: %" PRIu64
           "; did not converge: %" PRIu64 "\n",
           faulted, sim->st.seeds, sim->st.raft_faults[1], sim->st.raft_faults[2],
           sim->st.raft_faults[3], ob->split, faulted - ob->split, ob->detected,
           sim_pct(ob->detected, faulted), sim_pct(ob->detected, ob->split), ob->at_end,
           lag, ob->split - ob->detected, ob->unconverged);
}

int sim_witness_summary(sim_t *sim)
{
    sim_observed_t *ob = &sim->ob;

    printf("lease_sim: witness (rounds %s): %" PRIu64 " rounds, %" PRIu64
           " chains compared, %" PRIu64 " false positives; fenced resource: %" PRIu64
           " grants told, %" PRIu64 " violations (%" PRIu64 " told twice, %" PRIu64
           " gone back) in %" PRIu64 " seeds, all with a libraft fault (%" PRIu64
           " of them never flagged), %" PRIu64 " after a flag\n",
           sim->rounds == SIM_ROUNDS_STEP ? "after every step" : "on renewals", ob->rounds,
           ob->compared, ob->false_positives, ob->told, ob->fenced[0] + ob->fenced[1],
           ob->fenced[0], ob->fenced[1], ob->fenced_seeds, ob->fenced_undetected,
           ob->fenced_after);
    if (sim->raft_mode == SIM_RAFT_OBSERVE)
        sim_summary_faults(sim);
    free(ob->lag);
    /* In observe mode a divergence the check never flagged fails the run too: the
     * authority would have gone on serving two histories. */
    return ob->false_positives > 0 || ob->fenced_after > 0 ||
           (sim->raft_mode == SIM_RAFT_OBSERVE && ob->detected < ob->split);
}
