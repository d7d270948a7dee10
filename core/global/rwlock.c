/*
 * Cross-node reader-writer locks: the node-local rwlock (core/local: a FIFO gate and
 * READ records) in front of two global words at the homes:
 *
 *   W   the writers' FIFO queue lock (glock.c): writers hold it for their whole
 *       critical section; readers that meet a writer queue in it too, so they are
 *       served in arrival order after that writer
 *   R   WRITER bit (63) | registered reader nodes (low 32 bits)
 *
 * Readers of one node share one registration in R: the first reader of the node
 * (node count 0 -> 1, counted in the entry) adds 1 to R, the last one removes it.
 * A registration that finds WRITER set backs off (-1) and waits in W behind the
 * writer. A writer takes W, sets WRITER, and waits until R's reader count drains to 0
 * (polling R with growing pauses: one poller per lock, the W holder). So a shared
 * acquire costs 1 remote fetch-add when uncontended (0 if the node already reads),
 * and writers are not starved: once WRITER is set, new registrations queue behind
 * it, and readers that join their node's registration re-check R every
 * RDLM_COHORT_BOUND joins.
 *
 * Entry fields (rwlock kind, distributed): home_pair1 = W slot + 1 | (R slot + 1) << 32
 * (rdlm_global_open_pair: R is companion word 1);
 * rw_node_readers = node readers (low 32) | joins since the last check of R (high 32);
 * queue_node1 = the writer's W queue node + 1; token = the last write token (the
 * token W was granted with: it names the use of the queue node, glock.h's pass).
 */
#include "glock.h"

#include "clock.h"
#include "log.h"

#define RDLM_R_WRITER (1ull << 63)
#define RDLM_R_READERS(v) ((uint32_t)(v))
#define RDLM_NR_ONE 1ull
#define RDLM_NR_JOIN (1ull << 32)
/* The gate's holder waits in W (a joiner behind a writer, rdlm_rw_join, or a writer,
 * rdlm_global_rwlock_write_acquire): it joins nobody meanwhile, so the sweep may repair
 * the count without the gate, from a word that carries the mark. */
#define RDLM_NR_WAITING (1ull << 63)
#define RDLM_NR_COUNT(v) ((uint32_t)(v))
#define RDLM_NR_JOINS(v) ((uint32_t)((v) >> 32) & 0x7fffffffu)

rdlm_status_t rdlm_global_rwlock_open(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    return rdlm_global_open_pair(d, &lc->seg.entries[idx]);
}

/* Holding W (taken with token) only to let a writer ahead finish: pass it on without
 * using the token. */
static rdlm_status_t rdlm_rw_pass_unused(rdlm_global_t *d, const rdlm_global_word_t *w,
                                         uint64_t qid, uint64_t token)
{
    return rdlm_glock_pass(d, w, qid, token, token - 1);
}

/* Wait in W behind the writer(s) ahead; then, if `add`, register in R (no writer can
 * be inside while we hold W), and pass W on. */
static rdlm_status_t rdlm_rw_wait_writers(rdlm_global_t *d, const rdlm_global_word_t *w,
                                          const rdlm_global_word_t *r, uint64_t deadline,
                                          int add)
{
    uint64_t qid, seq, old;
    rdlm_status_t s = rdlm_glock_acquire(d, w, 0, deadline, &qid, &seq);

    if (s != RDLM_OK && s != RDLM_OWNER_DEAD) {
        return s;
    }
    s = RDLM_OK;
    if (add) {
        s = rdlm_global_w_fadd(d, r, 1, &old);
    }
    rdlm_status_t p = rdlm_rw_pass_unused(d, w, qid, seq);
    return s != RDLM_OK ? s : p;
}

/* Holding the gate: make this node a registered reader (first reader of the node). */
static rdlm_status_t rdlm_rw_register(rdlm_global_t *d, const rdlm_global_word_t *w,
                                      const rdlm_global_word_t *r, uint64_t deadline,
                                      int try_only)
{
    uint64_t old;
    rdlm_status_t s = rdlm_global_w_fadd(d, r, 1, &old);

    if (s != RDLM_OK || !(old & RDLM_R_WRITER)) {
        return s;
    }
    s = rdlm_global_w_fadd(d, r, (uint64_t)-1,
                           &old); /* a writer is in or draining: back off */
    if (s != RDLM_OK) {
        return s;
    }
    return try_only ? RDLM_ERR_BUSY : rdlm_rw_wait_writers(d, w, r, deadline, 1);
}

/* Holding rwlock idx's gate (`gated`), or while its holder waits in W (the word
 * carries RDLM_NR_WAITING; else nothing is done) — no reader joins meanwhile, and a
 * reader's READ record outlives its share of the count: so a live hold is never left
 * out: if the node's count of readers counts more holds than its live processes have
 * (readers that died holding), set it to theirs, and drop the node's registration in R
 * (r) if none is left. Before, the registration stayed for good and writers of other
 * nodes waited until their timeout (global.rw_reader_death_*). The CAS compares the
 * mark too: once the waiter has cleared it, it may join or register again, and a
 * repair counted before that would drop the new registration (dist_rw_reg.pml,
 * bug_repair_mark_not_compared). */
static void rdlm_rw_fix_count(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                              const rdlm_global_word_t *r, int gated)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t v = rdlm_load(&e->rw_node_readers, RDLM_ACQUIRE), old;
    uint32_t live = rdlm_rwlock_local_live_reads(lc, idx);

    if ((gated || (v & RDLM_NR_WAITING)) && RDLM_NR_COUNT(v) > live &&
        rdlm_cas(&e->rw_node_readers, &v, (v & ~0xffffffffull) | live, RDLM_ACQ_REL)) {
        rdlm_warn("rwlock \"%s\": %u shared holds of this node's dead processes left its "
                  "count of readers%s",
                  lc->seg.names[idx], RDLM_NR_COUNT(v) - live,
                  live == 0 ? "; the node's registration is dropped" : "");
        if (live == 0 && rdlm_global_w_fadd(d, r, (uint64_t)-1, &old) != RDLM_OK) {
            rdlm_error("rwlock \"%s\": dropping the node's registration failed; writers "
                       "will wait",
                       lc->seg.names[idx]);
        }
    }
}

/* Holding the gate, the node already registered: join, re-checking R for a waiting
 * writer every cohort_bound joins. The join is a CAS on the node count so that it
 * never revives a registration the last reader is dropping. A joiner that waits behind
 * the writer holds the gate, which the sweep's repair needs: so it repairs the count
 * first (dist_rw_reg.pml found the stall: code_bound_recheck_stalls). */
static rdlm_status_t rdlm_rw_join(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                  const rdlm_global_word_t *w, const rdlm_global_word_t *r,
                                  uint64_t deadline, int try_only)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t v = rdlm_load(&e->rw_node_readers, RDLM_ACQUIRE), old;
    rdlm_status_t s;

    if (RDLM_NR_COUNT(v) != 0 && RDLM_NR_JOINS(v) >= d->cohort_bound) {
        s = rdlm_global_w_fadd(d, r, 0, &old);
        if (s != RDLM_OK) {
            return s;
        }
        if (old & RDLM_R_WRITER) {
            if (try_only) {
                return RDLM_ERR_BUSY;
            }
            /* Let the writer in: wait behind it (the node's readers drain meanwhile;
             * new ones wait at the gate behind us). A reader of the node that dies
             * meanwhile is the sweep's to repair, without the gate: say we wait. */
            rdlm_rw_fix_count(d, lc, idx, r, 1);
            rdlm_fetch_or(&e->rw_node_readers, RDLM_NR_WAITING, RDLM_ACQ_REL);
            s = rdlm_rw_wait_writers(d, w, r, deadline, 0);
            rdlm_fetch_and(&e->rw_node_readers, ~RDLM_NR_WAITING, RDLM_ACQ_REL);
            if (s != RDLM_OK) {
                return s;
            }
        }
        rdlm_fetch_and(&e->rw_node_readers, 0xffffffffull, RDLM_ACQ_REL); /* joins := 0 */
        v = rdlm_load(&e->rw_node_readers, RDLM_ACQUIRE);
    }
    while (RDLM_NR_COUNT(v) != 0) {
        if (rdlm_cas(&e->rw_node_readers, &v, v + RDLM_NR_ONE + RDLM_NR_JOIN,
                     RDLM_ACQ_REL)) {
            return RDLM_OK;
        }
    }
    s = rdlm_rw_register(d, w, r, deadline, try_only);
    if (s == RDLM_OK) {
        rdlm_fetch_add(&e->rw_node_readers, RDLM_NR_ONE, RDLM_ACQ_REL);
    }
    return s;
}

rdlm_status_t rdlm_global_rwlock_read_acquire(rdlm_global_t *d, rdlm_local_t *lc,
                                              uint32_t idx, uint64_t timeout_ns)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t deadline = rdlm_clock_deadline(timeout_ns);
    rdlm_global_word_t w, r;
    rdlm_status_t s, gate;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    gate = rdlm_ticket_acquire(lc, idx, timeout_ns, NULL);
    if (gate != RDLM_OK && gate != RDLM_OWNER_DEAD) {
        rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
        return gate;
    }
    rdlm_global_pair_words(d, e, &w, &r);
    s = rdlm_rw_join(d, lc, idx, &w, &r, deadline, timeout_ns == 0);
    if (s == RDLM_OK && timeout_ns != 0 && rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        /* joined while the context closes: the destroy would release it under the
         * caller (rdlm.h, rdlm_ctx_destroy) */
        rdlm_global_rwlock_read_leave(d, lc, idx);
        s = RDLM_ERR_CLOSED;
    }
    if (s == RDLM_OK) {
        s = rdlm_rwlock_local_read_enter(lc, idx);
        if (s != RDLM_OK) {
            rdlm_global_rwlock_read_leave(d, lc, idx); /* undo the node count */
        }
    }
    rdlm_ticket_release(lc, idx);
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s != RDLM_OK ? s : gate;
}

void rdlm_global_rwlock_read_leave(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_global_word_t w, r;
    uint64_t old;

    /* The node's last reader drops the registration before its READ record goes,
     * so a local writer that saw the records drain also sees R drained of us. */
    if (RDLM_NR_COUNT(rdlm_fetch_sub(&e->rw_node_readers, RDLM_NR_ONE, RDLM_ACQ_REL)) ==
        1) {
        rdlm_global_pair_words(d, e, &w, &r);
        if (rdlm_global_w_fadd(d, &r, (uint64_t)-1, &old) != RDLM_OK) {
            rdlm_error("rwlock \"%s\": dropping the node's registration failed; writers "
                       "will wait", lc->seg.names[idx]);
        }
    }
}

rdlm_status_t rdlm_global_rwlock_read_release(rdlm_global_t *d, rdlm_local_t *lc,
                                              uint32_t idx)
{
    if (rdlm_rwlock_local_reads_held(lc, idx) == 0) {
        rdlm_warn("rwlock \"%s\": shared release by a context that holds no shared lock",
                  lc->seg.names[idx]);
        return RDLM_ERR_NOT_OWNER;
    }
    rdlm_global_rwlock_read_leave(d, lc, idx);
    return rdlm_rwlock_local_read_release(lc, idx);
}

#define RDLM_GLOBAL_RW_SWEEP_NS 1000000000ull

/* 1 if a process of this node other than this one is gone (on this host: exact). */
static int rdlm_rw_mate_gone(rdlm_global_t *d)
{
    for (uint32_t r = 0; d->procs != NULL && r < d->nodes.size; r++) {
        if (r != d->rank && d->nodes.node_of[r] == d->nodes.node &&
            rdlm_global_proc_gone(d->procs, r)) {
            return 1;
        }
    }
    return 0;
}

/* The sweep's repair of rwlock idx: rdlm_rw_fix_count under its gate, taken without
 * waiting; or without it while its holder waits in W (RDLM_NR_WAITING: it joins or
 * registers nobody until it cleared the mark, and the repair's CAS compares the mark);
 * else next time. */
static void rdlm_rw_repair(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    rdlm_global_word_t w, r;
    rdlm_status_t s = rdlm_ticket_acquire(lc, idx, 0, NULL);
    int gate = s == RDLM_OK || s == RDLM_OWNER_DEAD;

    rdlm_global_pair_words(d, e, &w, &r);
    rdlm_rw_fix_count(d, lc, idx, &r, gate);
    if (gate) {
        rdlm_ticket_release(lc, idx);
    }
}

void rdlm_global_rw_sweep(rdlm_global_t *d)
{
    uint64_t now, at = rdlm_load(&d->rw_sweep_at, RDLM_RELAXED);
    uint32_t idle = 0;
    rdlm_local_t *lc = d->local;

    if (lc == NULL || (now = rdlm_clock_now_ns()) < at ||
        !rdlm_cas(&d->rw_sweeping, &idle, 1, RDLM_ACQUIRE)) {
        return;
    }
    rdlm_store(&d->rw_sweep_at, now + RDLM_GLOBAL_RW_SWEEP_NS, RDLM_RELAXED);
    /* The quiesce (destroy, a failed create) waits for us once we count as active, and
     * the segment is detached only after it: count, then look at closing (both
     * seq_cst, against its store of closing and its load of active). */
    rdlm_fetch_add(&d->active, 1, RDLM_SEQ_CST);
    /* A node-mate gone is asked (system calls) only when the node reads some rwlock. */
    for (uint32_t idx = 0, gone = 2;
         !rdlm_load(&d->closing, RDLM_SEQ_CST) && idx < lc->seg.table_size && gone != 0;
         idx++) {
        rdlm_entry_t *e = &lc->seg.entries[idx];

        if (((uint32_t)rdlm_load(&e->meta, RDLM_RELAXED) & RDLM_META_KIND) ==
                RDLM_KIND_RWLOCK &&
            rdlm_load(&e->key, RDLM_RELAXED) != 0 &&
            RDLM_NR_COUNT(rdlm_load(&e->rw_node_readers, RDLM_ACQUIRE)) != 0) {
            gone = gone == 2 ? (uint32_t)rdlm_rw_mate_gone(d) : gone;
            if (gone) {
                rdlm_rw_repair(d, lc, idx);
            }
        }
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    rdlm_store(&d->rw_sweeping, 0, RDLM_RELEASE);
}

/* Holding W: set WRITER in R (*old_p: R before). A writer that died holding W left
 * WRITER set (W came to us by recovery); adding bit 63 to it cleared it, and readers
 * of other nodes would register and go in beside us (global.rw_writer_death_*): so
 * then add it once more. */
static rdlm_status_t rdlm_rw_set_writer(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                        const rdlm_global_word_t *r, uint64_t *old_p)
{
    rdlm_status_t s = rdlm_global_w_fadd(d, r, RDLM_R_WRITER, old_p);

    if (s == RDLM_OK && (*old_p & RDLM_R_WRITER)) {
        rdlm_warn("rwlock \"%s\": a writer died holding it; its WRITER mark is this "
                  "writer's now",
                  lc->seg.names[idx]);
        s = rdlm_global_w_fadd(d, r, RDLM_R_WRITER, old_p);
    }
    return s;
}

/* Holding W with WRITER set, and rwlock idx's gate: wait until no node is registered
 * as reader. The sweep's repair of this node's count needs the gate this writer holds,
 * so the writer repairs it itself, once a second while a node-mate is gone: a reader
 * of its own node that died holding kept the node registered, and the writer waited
 * until its timeout (global.rw_reader_death_one_node). */
static rdlm_status_t rdlm_rw_drain(rdlm_global_t *d, rdlm_local_t *lc, uint32_t idx,
                                   const rdlm_global_word_t *r, uint64_t old,
                                   uint64_t deadline, int try_only)
{
    uint64_t pause = RDLM_GLOBAL_POLL_FIRST_NS, repair_at = 0;
    rdlm_status_t s = RDLM_OK;

    while (s == RDLM_OK && RDLM_R_READERS(old) != 0) {
        uint64_t now = rdlm_clock_now_ns();

        if (now >= repair_at) {
            repair_at = now + RDLM_GLOBAL_RW_SWEEP_NS;
            if (RDLM_NR_COUNT(rdlm_load(&lc->seg.entries[idx].rw_node_readers,
                                        RDLM_ACQUIRE)) != 0 &&
                rdlm_rw_mate_gone(d)) {
                rdlm_rw_fix_count(d, lc, idx, r, 1);
            }
        }
        s = rdlm_global_poll_pause(d, &pause, deadline, try_only);
        if (s == RDLM_OK) {
            s = rdlm_global_w_fadd(d, r, 0, &old);
        }
    }
    return s;
}

rdlm_status_t rdlm_global_rwlock_write_acquire(rdlm_global_t *d, rdlm_local_t *lc,
                                               uint32_t idx, uint64_t timeout_ns,
                                               uint64_t *token_p)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint64_t deadline = rdlm_clock_deadline(timeout_ns), qid, seq, old, token;
    rdlm_global_word_t w, r;
    rdlm_status_t s, local;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    /* The gate, and no reader left on this node. */
    local = rdlm_rwlock_local_write_acquire(lc, idx, timeout_ns, NULL);
    if (local != RDLM_OK && local != RDLM_OWNER_DEAD) {
        rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
        return local;
    }
    rdlm_global_pair_words(d, e, &w, &r);
    if (timeout_ns == 0) {
        s = rdlm_glock_try(d, &w, rdlm_load(&e->token, RDLM_RELAXED), &qid, &seq);
    } else {
        /* Holding the gate, wait in W: a reader of this node that died holding is the
         * sweep's to repair meanwhile, without the gate (writers of both nodes and a
         * dead reader: the writer ahead waited for its registration until its
         * deadline; dist_rw_reg.pml's code_808e05e_xy_writers_stall,
         * global.rw_reader_death_xy). */
        rdlm_fetch_or(&e->rw_node_readers, RDLM_NR_WAITING, RDLM_ACQ_REL);
        s = rdlm_glock_acquire(d, &w, rdlm_load(&e->token, RDLM_RELAXED), deadline, &qid,
                               &seq);
        rdlm_fetch_and(&e->rw_node_readers, ~RDLM_NR_WAITING, RDLM_ACQ_REL);
    }
    if (s == RDLM_OWNER_DEAD) {
        local = s; /* taken over from a dead writer (glock.c) */
        s = RDLM_OK;
    }
    if (s == RDLM_OK) {
        s = rdlm_rw_set_writer(d, lc, idx, &r, &old);
        if (s == RDLM_OK) {
            s = rdlm_rw_drain(d, lc, idx, &r, old, deadline, timeout_ns == 0);
            if (s != RDLM_OK) {
                rdlm_global_w_fadd(d, &r, RDLM_R_WRITER,
                                   &old); /* clear WRITER (mod 2^64) */
            }
        }
        if (s != RDLM_OK) {
            rdlm_rw_pass_unused(d, &w, qid, seq);
        }
    }
    if (s != RDLM_OK) {
        rdlm_rwlock_local_write_release(lc, idx);
        rdlm_local_lock_ungrant(lc, s);
        rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
        return s;
    }
    token = seq;
    rdlm_store(&e->token, token, RDLM_RELAXED);
    rdlm_store(&e->queue_node1, (uint32_t)qid + 1, RDLM_RELAXED);
    if (timeout_ns != 0 && rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        /* Granted while the context closes: the destroy would release it under the
         * caller (rdlm.h, rdlm_ctx_destroy). */
        rdlm_global_rwlock_write_release(d, lc, idx, 0);
        rdlm_local_lock_ungrant(lc, RDLM_ERR_CLOSED);
        rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
        return RDLM_ERR_CLOSED;
    }
    rdlm_fetch_add(&d->stats.global_acquires, 1, RDLM_RELAXED);
    if (token_p != NULL) {
        *token_p = token;
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return local;
}

rdlm_status_t rdlm_global_rwlock_write_release(rdlm_global_t *d, rdlm_local_t *lc,
                                               uint32_t idx, int died)
{
    rdlm_entry_t *e = &lc->seg.entries[idx];
    uint32_t g = rdlm_load(&e->queue_node1, RDLM_RELAXED);
    rdlm_global_word_t w, r;
    rdlm_status_t s;
    uint64_t old;

    if (!rdlm_ticket_held_by_me(lc, idx) || g == 0) {
        rdlm_warn("rwlock \"%s\": write release by a context that does not hold it",
                  lc->seg.names[idx]);
        return RDLM_ERR_NOT_OWNER;
    }
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    rdlm_global_pair_words(d, e, &w, &r);
    rdlm_store(&e->queue_node1, 0, RDLM_RELAXED);
    atomic_thread_fence(memory_order_seq_cst);
    s = rdlm_global_w_fadd(d, &r, RDLM_R_WRITER, &old); /* clear WRITER (mod 2^64) */
    if (s == RDLM_OK) {
        /* A writer's token is its grant's: no hand-offs on the node. */
        uint64_t token = rdlm_load(&e->token, RDLM_RELAXED);

        s = died ? rdlm_glock_pass_dead(d, &w, (uint64_t)g - 1, token, token)
                 : rdlm_glock_pass(d, &w, (uint64_t)g - 1, token, token);
    }
    rdlm_status_t l =
        rdlm_rwlock_local_write_release_to(lc, idx, died ? RDLM_OWNER_DIED : 0);
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s != RDLM_OK ? s : l;
}
