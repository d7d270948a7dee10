/*
 * A fenced resource's view of the authority: the tokens clients were told as grants,
 * per lock, whatever the log says. A resource that checks tokens accepts a write whose
 * token is at least the largest it has seen, so every grant (a new holder) must be told
 * a token above every token told before for its lock:
 *   told twice  an equal token: two holders with one token, both accepted
 *   gone back   a smaller token: a holder whose writes are rejected, though it was
 *               told it holds the lock
 * A client told the same grant again (a retried ACQUIRE answered from the state) is no
 * new holder. Checked in every seed to its end, across a libraft fault: it needs no
 * agreement between replicas.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

static const char *const sim_fence_class[2] = {"told twice", "gone back"};

void sim_fence_reset(sim_t *sim)
{
    memset(sim->told_tab, 0, sizeof sim->told_tab);
    memset(sim->fence_top, 0, sizeof sim->fence_top);
}

/* The record of what client c was told for (session, seq); a new one has token 0. */
static sim_told_t *sim_told_slot(sim_t *sim, unsigned c, uint64_t session, uint64_t seq)
{
    uint64_t h = (session * 0x9e3779b97f4a7c15ull) ^ (seq * 0xc2b2ae3d27d4eb4full) ^ c;

    for (unsigned probe = 0; probe < SIM_GRANT_SLOTS; probe++) {
        sim_told_t *t = &sim->told_tab[(h + probe) % SIM_GRANT_SLOTS];
        if (t->session == 0) {
            *t = (sim_told_t){.session = session, .seq = seq, .client = c};
            return t;
        }
        if (t->session == session && t->seq == seq && t->client == c)
            return t;
    }
    sim_fatal("told table full (raise SIM_GRANT_SLOTS)");
}

/* t was told a token not above top's, for lock k: in a seed without a libraft fault a
 * state-machine VIOLATION (exit), else recorded and printed. */
static void sim_fence_violation(sim_t *sim, unsigned k, const sim_told_t *t,
                                const char *what)
{
    const sim_told_t *top = &sim->fence_top[k];
    unsigned cls = t->token == top->token ? 0 : 1;
    int after = sim->out.detect_event != SIM_NO_EVENT;
    char msg[512];

    snprintf(msg, sizeof msg,
             "(fence) lock %s: client %u (session %" PRIu64 " seq %" PRIu64
             ") was told token %#" PRIx64 " (%s) after client %u (session %" PRIu64
             " seq %" PRIu64 ") was told %#" PRIx64 ": %s",
             sim_names[k], t->client, t->session, t->seq, t->token, what, top->client,
             top->session, top->seq, top->token, sim_fence_class[cls]);
    if (!sim->poisoned)
        sim_violation(sim, "%s", msg); /* returns only as a libraft fault (R1) */
    sim->ob.fenced[cls]++;
    sim->ob.fenced_after += (uint64_t)after;
    if (after)
        sim->out.fenced_after++;
    else
        sim->out.fenced_before++;
    printf("FENCE VIOLATION seed %" PRIu64 " event %u (servers %u): %s; libraft fault "
           "R%u at event %u; %s\n",
           sim->seed, sim->event, sim->n, msg, sim->out.fault, sim->out.fault_event,
           after ? "AFTER the witness flagged a divergence" : "before any witness flag");
}

void sim_fence_told(sim_t *sim, unsigned c, unsigned k, uint64_t session, uint64_t seq,
                    uint64_t token, const char *what)
{
    sim_told_t *t = sim_told_slot(sim, c, session, seq);
    sim_told_t *top = &sim->fence_top[k];

    if (t->token == token)
        return; /* told again: the same holder */
    t->token = token;
    sim->ob.told++;
    if (top->session != 0 && token <= top->token)
        sim_fence_violation(sim, k, t, what);
    if (token > top->token)
        *top = *t;
}
