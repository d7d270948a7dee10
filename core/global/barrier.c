/*
 * The collective barrier of a distributed context:
 *
 *   fan-in    each process adds one to the segment's coll_arrived count (generation
 *             g is complete on the node when it reached g * local_size; it wraps);
 *             the process that completes it releases the node itself when the
 *             context has one node, or else wakes the node leader if it sleeps
 *   exchange  leaders only: dissemination, ceil(log2 nodes) rounds; in round k leader
 *             i raises flag k of leader (i + 2^k) mod nodes to the generation and
 *             waits for its own flag k to reach it. Flags only grow, so nothing is
 *             reset between barriers, and an old message that lands late cannot
 *             lower one. Three ways to raise one, chosen at attach:
 *             - links (links.h; RDLM_BARRIER_LINKS): the generation is sent on link
 *               k, a TCP connection of the leaders' own, and the waiter reads its
 *               in-link k, raising its flag to each generation that comes; where UCX
 *               would carry the rounds over TCP anyway, this saves its progress
 *               engine (an epoll_wait per poll) and headers on the critical path. A
 *               leader whose partner died gets RDLM_ERR_PEER_DEAD (the link closed);
 *             - an active message carries the generation and its handler raises the
 *               flag to it (where the transport emulates remote atomics with
 *               messages anyway);
 *             - otherwise a posted remote add of one (each flag gets one per
 *               barrier, from one leader, so it counts the generations). A put of
 *               the generation would not do: UCP orders no two RMA operations, and a
 *               late one would overwrite a newer value (tests/model/coll_barrier.pml,
 *               -DPUTS=2, finds the hang)
 *   fan-out   the leader (or, on one node, the last arriver) stores the generation
 *             into the segment's coll_release word and wakes the sleepers; the
 *             others wait on it (spin, yield, futex)
 *
 * Waiting, when the host is crowded (more processes of the context on it than CPUs,
 * virtual nodes included): nobody spins; a waiter yields, then sleeps (the futex, or,
 * for a leader waiting for a message, the transport's event fd), so the processes
 * that still have to arrive get the CPUs. Where remote operations on this process's
 * memory need its own progress (emulated atomics and no progress thread), every
 * waiter keeps progressing.
 *
 * A pair: a context of one node and two processes on an uncrowded host (decided at
 * attach, the same on both) skips the count. Each process stores the generation into
 * its own line of the segment (coll_pair[local rank]) and waits for the other's to
 * reach it: one cache-line transfer on the critical path instead of two (the count's
 * fetch-add, then the release word's read), so Open MPI's shared-memory barrier is
 * beaten by a margin. Sleepers on a line are counted beside it and woken by its owner.
 *
 * Split phase: arrive does the process's fan-in (and, on one node, the release when
 * it is the last) and returns; wait does the rest.
 *
 * A member dies: a barrier cannot complete once a process it waits for is dead, so
 * every wait ends with RDLM_ERR_PEER_DEAD, and so does every later barrier:
 *   - a leader waiting for a round learns of its sender's death (the link closed, the
 *     transport's report, or the process record on this host) or of the sender's
 *     break, and breaks the barrier for the leaders that wait for its own rounds
 *     (its links shut down, or their flags raised to a "broken" value);
 *   - any waiter of a node, once it no longer spins, looks every
 *     RDLM_GLOBAL_GONE_CHECK_NS whether a process of its node died (it will not
 *     arrive, or it led the node);
 *   - whoever fails marks the node broken (the segment's coll_broken) and wakes the
 *     node's waiters, who read the mark and fail too; a leader that reads it breaks
 *     the barrier for the other leaders. So a non-leader learns through its leader of
 *     a death on another node, and the other nodes learn through their leaders.
 */
#include "word.h"

#include <poll.h>
#include <sched.h>
#include <string.h>

#include "clock.h"
#include "log.h"

/* A leader waiting for a dissemination flag polls this long before it yields between
 * polls (a poll is a system call or so: counting them would spin for milliseconds
 * while a process that shares the CPU waits), then sleeps on the transport's event
 * fd, this long at most (a bound on a lost wake-up; the message's arrival ends it). */
#define RDLM_GLOBAL_FLAG_POLL_NS 50000ull
#define RDLM_GLOBAL_FLAG_SLEEP_NS 1000000ull
/* A leader waiting for a round looks this often whether its sender died. */
#define RDLM_GLOBAL_GONE_CHECK_NS 10000000ull
/* A leader waiting on a link progresses the transport this often, while it spins. */
#define RDLM_GLOBAL_LINK_PROGRESS_NS 10000ull
/* Making the leaders' links: the bound of connecting and accepting them. */
#define RDLM_GLOBAL_LINKS_TIMEOUT_MS 5000u
/* A round's flag at or above this says the sender gave the barrier up (a leader it
 * waited for died): rdlm_global_break. Generations stay far below it. */
#define RDLM_GLOBAL_FLAG_BROKEN (1ull << 62)

static int rdlm_global_is_leader(const rdlm_global_t *d)
{
    return d->nodes.leader_of[d->nodes.node] == d->rank;
}


/* Remote operations on this process's memory progress only when it calls progress
 * (and a context that runs nothing but barriers has none: its leaders progress for
 * their own messages while they wait). */
static int rdlm_global_must_poll(const rdlm_global_t *d)
{
    return d->caps.amo_needs_target_progress && !d->caps.progress_thread &&
           !d->barrier_only;
}

/* Flag k of this leader (in its home region, after the slots). */
static rdlm_atomic_u64_t *rdlm_global_flag(rdlm_global_t *d, uint32_t k)
{
    void *base;
    size_t len;

    d->tl->mem->addr(d->tl, d->homemem, &base, &len);
    return (rdlm_atomic_u64_t *)((char *)base + (size_t)d->home_slots * d->slot_bytes) + k;
}

/* A dissemination message: flag k of the receiver reached gen. */
typedef struct rdlm_global_flag_msg {
    uint64_t gen;
    uint32_t k;
    uint32_t pad;
} rdlm_global_flag_msg_t;

/* The active-message handler (in progress): raise flag k to gen (messages may
 * arrive out of order; a flag only grows). */
static void rdlm_global_flag_handler(void *arg, uint32_t src, const void *data, size_t len)
{
    rdlm_global_t *d = arg;
    rdlm_global_flag_msg_t m;
    rdlm_atomic_u64_t *flag;
    uint64_t cur;

    (void)src;
    if (len != sizeof(m)) {
        rdlm_warn("barrier: dropped a %zu-byte message from rank %u", len, src);
        return;
    }
    memcpy(&m, data, sizeof(m));
    if (m.k >= RDLM_GLOBAL_ROUNDS || d->homemem == NULL) {
        rdlm_warn("barrier: dropped a message for round %u from rank %u", m.k, src);
        return;
    }
    flag = rdlm_global_flag(d, m.k);
    cur = rdlm_load(flag, RDLM_RELAXED);
    while (cur < m.gen && !rdlm_cas(flag, &cur, m.gen, RDLM_SEQ_CST)) {
    }
}

/* Collective: the leaders' links (links.h), where RDLM_BARRIER_LINKS and every
 * process allow them; for auto, where the transport reaches each round's partners
 * over TCP. Without them (a vote against, or a link that could not be made) the
 * barrier stays on the transport. */
static rdlm_status_t rdlm_global_links_open(rdlm_global_t *d, const rdlm_tl_idle_t *idle)
{
    const uint32_t nodes = d->nodes.nodes, node = d->nodes.node;
    uint32_t to[RDLM_LINKS_MAX], from[RDLM_LINKS_MAX], n = 0;
    int want = d->barrier_links_mode != RDLM_SWITCH_OFF;
    rdlm_status_t s;

    if (nodes == 1) {
        return RDLM_OK;
    }
    for (uint32_t dist = 1; rdlm_global_is_leader(d) && dist < nodes; dist <<= 1, n++) {
        to[n] = d->nodes.leader_of[(node + dist) % nodes];
        from[n] = d->nodes.leader_of[(node + nodes - dist) % nodes];
        if (d->barrier_links_mode == RDLM_SWITCH_AUTO) {
            want =
                want && rdlm_tl_peer_tcp(d->tl, to[n]) && rdlm_tl_peer_tcp(d->tl, from[n]);
        }
    }
    s = rdlm_links_open(d->bootstrap, idle, want, to, from, n, RDLM_GLOBAL_LINKS_TIMEOUT_MS,
                        &d->links);
    if (s == RDLM_ERR_UNSUPPORTED) {
        rdlm_debug("barrier: no links; this process voted %s (RDLM_BARRIER_LINKS=%s%s)",
                   want ? "for them" : "against them",
                   rdlm_config_switch_name(d->barrier_links_mode),
                   want || d->barrier_links_mode != RDLM_SWITCH_AUTO
                       ? ""
                       : ": the transport does not reach a round's partner over TCP");
        if (d->rank == 0) {
            rdlm_info("barrier: node leaders exchange over the transport, without "
                      "links (RDLM_BARRIER_LINKS=%s: links serve a transport that reaches "
                      "the leaders over TCP anyway; RDLM_LOG=debug on each process says "
                      "how it voted)",
                      rdlm_config_switch_name(d->barrier_links_mode));
        }
        return RDLM_OK;
    }
    if (s == RDLM_OK && d->rank == 0) {
        rdlm_info("barrier: node leaders send their rounds over TCP links of their own "
                  "(RDLM_BARRIER_LINKS=%s)",
                  rdlm_config_switch_name(d->barrier_links_mode));
    }
    return s;
}

rdlm_status_t rdlm_global_attach_node(rdlm_global_t *d, rdlm_local_t *lc)
{
    const rdlm_tl_idle_t idle = {rdlm_global_progress_idle, d};
    rdlm_status_t links;

    d->local = lc;                  /* SETTLEs look up their lock's entry (cohort.c) */
    lc->host_procs = d->host_procs; /* the node's waiters see the other virtual nodes */
    d->crowded = rdlm_local_oversubscribed(lc);
    if (d->crowded) {
        rdlm_debug("dist: %u processes of the context share this host's %u CPUs: "
                   "waiters yield and sleep instead of spinning",
                   d->host_procs, lc->cpus);
    }
    d->barrier_pair = d->nodes.nodes == 1 && d->nodes.local_size == 2 &&
                      !rdlm_local_oversubscribed(lc);
    d->barrier_am = d->caps.amo_needs_target_progress && (d->caps.flags & RDLM_TL_CAP_AM) &&
                    d->caps.am_max_payload >= sizeof(rdlm_global_flag_msg_t);
    if (d->barrier_am) {
        rdlm_status_t s = d->tl->am->set_handler(d->tl, RDLM_GLOBAL_AM_BARRIER,
                                                 rdlm_global_flag_handler, d);

        if (s != RDLM_OK) {
            return s;
        }
    }
    links = rdlm_global_links_open(d, &idle);
    if (links != RDLM_OK) {
        return links;
    }
    rdlm_debug("barrier: %s", d->barrier_pair    ? "a pair (one node, two processes)"
                              : d->links != NULL ? "count, leaders exchange over links"
                              : d->barrier_am    ? "count, leaders exchange active messages"
                                                 : "count, leaders exchange posted adds");
    /* Every process installed its handler before anyone sends. */
    return d->bootstrap->barrier(d->bootstrap->arg, &idle);
}

/* The node's arrivals once generation gen is complete (wrapping). */
static uint32_t rdlm_global_fan_in_target(const rdlm_global_t *d, uint64_t gen)
{
    return (uint32_t)(gen * d->nodes.local_size);
}

static void rdlm_global_release(rdlm_local_t *lc, uint64_t gen)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;

    rdlm_store(&hdr->coll_release, (uint32_t)gen, RDLM_SEQ_CST);
    rdlm_wait_wake(&hdr->coll_release, RDLM_WAIT_ALL_BITS, &hdr->coll_parked,
                   &lc->stats.wait);
}

/* The low half of a pair line's generation: the futex word its waiter sleeps on. */
static rdlm_atomic_u32_t *rdlm_global_pair_word(rdlm_seg_header_t *hdr, uint32_t rank)
{
    return (rdlm_atomic_u32_t *)&hdr->coll_pair[rank].gen; /* little-endian: layout.h */
}

/* A pair's arrival: publish the generation in our own line, wake its sleeper. */
static void rdlm_global_pair_arrive(rdlm_global_t *d, rdlm_local_t *lc, uint64_t gen)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;
    uint32_t me = d->nodes.local_rank;

    rdlm_store(&hdr->coll_pair[me].gen, gen, RDLM_SEQ_CST);
    rdlm_wait_wake(rdlm_global_pair_word(hdr, me), RDLM_WAIT_ALL_BITS,
                   &hdr->coll_pair[me].parked, &lc->stats.wait);
}

/* Leader, over the transport: raise flag k of the leader dist nodes on to gen, by an
 * active message carrying gen or by a posted remote add of add (barrier.c's header). */
static rdlm_status_t rdlm_global_raise(rdlm_global_t *d, uint32_t k, uint32_t dist,
                                       uint64_t gen, uint64_t add)
{
    const rdlm_global_word_t peer = {.node = (d->nodes.node + dist) % d->nodes.nodes,
                                     .offset = (uint64_t)d->home_slots * d->slot_bytes +
                                               k * sizeof(uint64_t)};
    const rdlm_global_flag_msg_t m = {.gen = gen, .k = k};

    return d->barrier_am ? d->tl->am->send(d->tl, d->nodes.leader_of[peer.node],
                                           RDLM_GLOBAL_AM_BARRIER, &m, sizeof(m))
                         : rdlm_global_home_add_post(d, &peer, add);
}

/* This node's barrier failed (a process it waits for died, or a leader gave up): mark
 * the node broken and wake its waiters, who fail too (barrier.c's header, "a member
 * dies"). A leader of several nodes also makes the leaders that wait for one of its
 * rounds fail, instead of waiting for ever for a round it will not send: its links
 * are shut down (their other ends read end of stream), or each round's partner gets
 * its flag raised to RDLM_GLOBAL_FLAG_BROKEN (best effort: a dead partner's error is
 * ignored); once. */
static void rdlm_global_break(rdlm_global_t *d, rdlm_local_t *lc)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;

    rdlm_store(&hdr->coll_broken, 1, RDLM_SEQ_CST);
    rdlm_wait_wake(&hdr->coll_release, RDLM_WAIT_ALL_BITS, &hdr->coll_parked,
                   &lc->stats.wait);
    rdlm_wait_wake(&hdr->coll_arrived, RDLM_WAIT_ALL_BITS, &hdr->coll_leader_parked,
                   &lc->stats.wait);
    if (d->nodes.nodes == 1 || !rdlm_global_is_leader(d) || d->barrier_broken) {
        return;
    }
    d->barrier_broken = 1;
    if (d->links != NULL) {
        rdlm_links_shutdown(d->links);
        return;
    }
    for (uint32_t k = 0, dist = 1; dist < d->nodes.nodes; k++, dist <<= 1) {
        (void)rdlm_global_raise(d, k, dist, RDLM_GLOBAL_FLAG_BROKEN,
                                RDLM_GLOBAL_FLAG_BROKEN);
    }
}

rdlm_status_t rdlm_global_barrier_arrive(rdlm_global_t *d, rdlm_local_t *lc)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;
    uint32_t n;

    if (rdlm_load(&d->closing, RDLM_ACQUIRE)) {
        return RDLM_ERR_CLOSED;
    }
    if (d->barrier_arrived) {
        rdlm_warn("barrier: arrive twice without wait");
        return RDLM_ERR_MISMATCH;
    }
    if (rdlm_load(&hdr->coll_broken, RDLM_ACQUIRE)) {
        if (!d->barrier_broken_said) {
            d->barrier_broken_said = 1;
            rdlm_warn("barrier: broken by a death at an earlier barrier: every barrier of "
                      "this context fails from now on");
        }
        rdlm_global_break(d, lc);
        return RDLM_ERR_PEER_DEAD;
    }
    d->barrier_arrived = 1;
    d->barrier_gen++;
    if (d->barrier_pair) {
        rdlm_global_pair_arrive(d, lc, d->barrier_gen);
        return RDLM_OK;
    }
    /* Release: everything written before arriving is visible to whoever completes
     * the count; acquire: the one who completes it sees everybody's. */
    n = rdlm_fetch_add(&hdr->coll_arrived, 1, RDLM_SEQ_CST) + 1;
    if (n == rdlm_global_fan_in_target(d, d->barrier_gen)) {
        if (d->nodes.nodes == 1) {
            rdlm_global_release(lc, d->barrier_gen);
        } else if (!rdlm_global_is_leader(d)) {
            rdlm_wait_wake(&hdr->coll_arrived, RDLM_WAIT_ALL_BITS, &hdr->coll_leader_parked,
                           &lc->stats.wait);
        }
    }
    return RDLM_OK;
}

/* A waiter of the node once it no longer spins: RDLM_ERR_PEER_DEAD if the node's
 * barrier is broken or, looked at every RDLM_GLOBAL_GONE_CHECK_NS (*check_at), a
 * process of the node other than this one is dead; else RDLM_OK. */
static rdlm_status_t rdlm_global_node_check(rdlm_global_t *d, const rdlm_local_t *lc,
                                            uint64_t *check_at)
{
    const uint64_t now = rdlm_clock_now_ns();

    if (rdlm_load(&lc->seg.hdr->coll_broken, RDLM_ACQUIRE)) {
        rdlm_warn("barrier: broken on this node (a process it waits for died)");
        return RDLM_ERR_PEER_DEAD;
    }
    if (now < *check_at) {
        return RDLM_OK;
    }
    *check_at = now + RDLM_GLOBAL_GONE_CHECK_NS;
    for (uint32_t r = 0; r < d->nodes.size; r++) {
        if (r != d->rank && d->nodes.node_of[r] == d->nodes.node &&
            rdlm_global_rank_gone(d, r)) {
            rdlm_warn("barrier: rank %u, a process of this node, is gone", r);
            return RDLM_ERR_PEER_DEAD;
        }
    }
    return RDLM_OK;
}

/* Wait until the 32-bit word reaches target (wrapping): spin (unless crowded),
 * yield, sleep on it; progressing meanwhile if this process must. Once the spinning
 * is over, the idle callback (d->barrier_idle) runs before every yield and after
 * every sleep slice, so a barrier that completes while spinning never pays for it,
 * and rdlm_global_node_check may end the wait. */
static rdlm_status_t rdlm_global_await_word(rdlm_global_t *d, rdlm_local_t *lc,
                                            rdlm_atomic_u32_t *word, uint32_t target,
                                            rdlm_atomic_u32_t *parked)
{
    const int poll = rdlm_global_must_poll(d), crowded = rdlm_local_oversubscribed(lc);
    /* The first look one interval in: a look costs a kill(0) and a /proc read per
     * node-mate (8 us each on the test VMs), which every barrier paid before. */
    uint64_t check_at = rdlm_clock_now_ns() + RDLM_GLOBAL_GONE_CHECK_NS;
    rdlm_wait_t w;

    rdlm_wait_init(&w, &lc->policy, &lc->stats.wait, UINT64_MAX);
    if (crowded) {
        rdlm_wait_stop_spinning(&w);
    }
    for (;;) {
        uint32_t v = rdlm_load(word, RDLM_ACQUIRE);

        if ((int32_t)(v - target) >= 0) {
            return RDLM_OK;
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (poll || !rdlm_wait_spinning(&w)) {
            rdlm_status_t s = rdlm_global_node_check(d, lc, &check_at);

            /* a process that completed our wait (stored the word) and then died does
             * not fail it: the word is read again after its death was seen */
            if (s != RDLM_OK) {
                return (int32_t)(rdlm_load(word, RDLM_ACQUIRE) - target) >= 0 ? RDLM_OK : s;
            }
        }
        if (poll) {
            rdlm_global_progress(d);
            if (crowded) {
                sched_yield();
            } else {
                rdlm_cpu_relax();
            }
        } else {
            if (d->barrier_idle != NULL && !rdlm_wait_spinning(&w)) {
                d->barrier_idle(d->barrier_idle_arg);
            }
            rdlm_wait_step(&w, word, v, RDLM_WAIT_ALL_BITS, parked);
        }
    }
}

typedef struct rdlm_global_flag_wait {
    rdlm_atomic_u64_t *flag;
    uint64_t gen;
} rdlm_global_flag_wait_t;

static int rdlm_global_flag_reached(void *arg)
{
    const rdlm_global_flag_wait_t *fw = arg;

    return rdlm_load(fw->flag, RDLM_ACQUIRE) >= fw->gen;
}

/* A leader's wait once polling is over: the idle callback, then a yield while the
 * policy allows (*yields counts them); 0 when the caller should sleep instead. */
static int rdlm_global_leader_yield(rdlm_global_t *d, const rdlm_local_t *lc,
                                    uint32_t *yields)
{
    if (d->barrier_idle != NULL) {
        d->barrier_idle(d->barrier_idle_arg);
    }
    if (*yields < lc->policy.yield) {
        (*yields)++;
        sched_yield();
        return 1;
    }
    return 0;
}

/* What a waiting leader learns when round k's sender broke the barrier. */
static rdlm_status_t rdlm_global_broken(uint32_t k, uint32_t sender)
{
    rdlm_warn("barrier: rank %u, which sends round %u, gave the barrier up (a node leader "
              "died)",
              sender, k);
    return RDLM_ERR_PEER_DEAD;
}

/* Leader: wait for flag k to reach gen, progressing (the peer's message lands through
 * the transport): polls for RDLM_GLOBAL_FLAG_POLL_NS (not when crowded), then polls
 * that yield the CPU, then the transport's sleep between polls. Once polling is over,
 * every RDLM_GLOBAL_GONE_CHECK_NS, a sender known dead (sender: the leader whose
 * round k raises flag k; the transport reports it, or its record on this host) ends
 * the wait with RDLM_ERR_PEER_DEAD, and so does a flag the sender broke. */
static rdlm_status_t rdlm_global_await_flag(rdlm_global_t *d, const rdlm_local_t *lc,
                                            uint32_t k, uint64_t gen, uint32_t sender)
{
    rdlm_global_flag_wait_t fw = {rdlm_global_flag(d, k), gen};
    const uint64_t poll_until =
        rdlm_local_oversubscribed(lc) ? 0 : rdlm_clock_now_ns() + RDLM_GLOBAL_FLAG_POLL_NS;
    /* The next look whether the sender died (one interval in: see await_word). */
    uint64_t check_at = rdlm_clock_now_ns() + RDLM_GLOBAL_GONE_CHECK_NS;
    uint32_t yields = 0;

    for (;;) {
        if (rdlm_global_flag_reached(&fw)) {
            return rdlm_load(fw.flag, RDLM_ACQUIRE) >= RDLM_GLOBAL_FLAG_BROKEN
                       ? rdlm_global_broken(k, sender)
                       : RDLM_OK;
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        if (rdlm_global_progress(d) != 0 ||
            (poll_until != 0 && rdlm_clock_now_ns() < poll_until)) {
            continue;
        }
        if (rdlm_clock_now_ns() >= check_at) {
            check_at = rdlm_clock_now_ns() + RDLM_GLOBAL_GONE_CHECK_NS;
            if (rdlm_global_rank_gone(d, sender)) {
                rdlm_warn("barrier: rank %u, which leads the node that sends round %u, is "
                          "gone",
                          sender, k);
                return RDLM_ERR_PEER_DEAD;
            }
        }
        if (!rdlm_global_leader_yield(d, lc, &yields)) {
            d->tl->setup->sleep(d->tl, RDLM_GLOBAL_FLAG_SLEEP_NS, rdlm_global_flag_reached,
                                &fw);
        }
    }
}

/* Leader: wait until in-link k brought gen (or a later generation: a partner may
 * finish this barrier and send the next one's round before we read this one's), as
 * rdlm_global_await_flag waits, its sleeps a poll of the link's socket. Where this
 * process serves a home (others' emulated atomics need its progress), it progresses
 * while it is awake, as the wait on the transport's messages does, but every
 * RDLM_GLOBAL_LINK_PROGRESS_NS, not between every two reads of the socket: a progress
 * call is a system call or two (UCX's epoll_wait), and the round's message should not
 * wait behind one. Its sleeps are shorter where nobody else progresses for it
 * (must_poll: no progress thread). */
static rdlm_status_t rdlm_global_await_link(rdlm_global_t *d, const rdlm_local_t *lc,
                                            uint32_t k, uint64_t gen)
{
    const int progress = d->serves_home, must = rdlm_global_must_poll(d);
    uint64_t now = rdlm_clock_now_ns(), progress_at = now;
    const uint64_t poll_until =
        rdlm_local_oversubscribed(lc) ? 0 : now + RDLM_GLOBAL_FLAG_POLL_NS;
    uint32_t yields = 0;

    while (d->link_flag[k] < gen) {
        uint64_t v;
        int got;
        rdlm_status_t s = rdlm_links_recv(d->links, k, &got, &v);

        if (s != RDLM_OK) {
            return s;
        }
        if (got) {
            d->link_flag[k] = v > d->link_flag[k] ? v : d->link_flag[k];
            continue;
        }
        if (rdlm_load(&d->closing, RDLM_RELAXED)) {
            return RDLM_ERR_CLOSED;
        }
        now = rdlm_clock_now_ns();
        if (progress && now >= progress_at) {
            progress_at = now + RDLM_GLOBAL_LINK_PROGRESS_NS;
            if (rdlm_global_progress(d) != 0) {
                continue;
            }
        }
        if (now < poll_until) {
            continue;
        }
        if (!rdlm_global_leader_yield(d, lc, &yields)) {
            /* the home's requests wait for our progress: come back sooner then */
            struct pollfd p = {.fd = rdlm_links_fd(d->links, k), .events = POLLIN};
            const struct timespec slice = {0, must ? RDLM_GLOBAL_FLAG_SLEEP_NS / 10
                                                   : RDLM_GLOBAL_FLAG_SLEEP_NS};

            (void)ppoll(&p, 1, &slice, NULL);
        }
    }
    return RDLM_OK;
}

/* Leader: dissemination among the leaders. */
static rdlm_status_t rdlm_global_exchange(rdlm_global_t *d, const rdlm_local_t *lc,
                                          uint64_t gen)
{
    uint32_t nodes = d->nodes.nodes, node = d->nodes.node;

    for (uint32_t k = 0, dist = 1; dist < nodes; k++, dist <<= 1) {
        rdlm_status_t s = d->links != NULL ? rdlm_links_send(d->links, k, gen)
                                           : rdlm_global_raise(d, k, dist, gen, 1);

        if (s == RDLM_OK) {
            rdlm_fetch_add(&d->stats.barrier_msgs, 1, RDLM_RELAXED);
            s = d->links != NULL
                    ? rdlm_global_await_link(d, lc, k, gen)
                    : rdlm_global_await_flag(
                          d, lc, k, gen, d->nodes.leader_of[(node + nodes - dist) % nodes]);
        }
        if (s != RDLM_OK) {
            return s;
        }
    }
    /* The flags were written by the progress engine: order our later reads after
     * the peers' writes that preceded their messages. */
    atomic_thread_fence(memory_order_seq_cst);
    return RDLM_OK;
}

rdlm_status_t rdlm_global_barrier_wait(rdlm_global_t *d, rdlm_local_t *lc)
{
    rdlm_seg_header_t *hdr = lc->seg.hdr;
    uint64_t gen = d->barrier_gen;
    rdlm_status_t s;

    if (!d->barrier_arrived) {
        rdlm_warn("barrier: wait without arrive");
        return RDLM_ERR_MISMATCH;
    }
    d->barrier_arrived = 0;
    rdlm_fetch_add(&d->active, 1, RDLM_ACQ_REL);
    if (d->barrier_pair) {
        uint32_t other = 1 - d->nodes.local_rank;

        /* the other's line is at gen - 1, gen or gen + 1: its low half compares */
        s = rdlm_global_await_word(d, lc, rdlm_global_pair_word(hdr, other), (uint32_t)gen,
                                   &hdr->coll_pair[other].parked);
    } else if (d->nodes.nodes == 1 || !rdlm_global_is_leader(d)) {
        s = rdlm_global_await_word(d, lc, &hdr->coll_release, (uint32_t)gen,
                                   &hdr->coll_parked);
    } else {
        s = rdlm_global_await_word(d, lc, &hdr->coll_arrived,
                                   rdlm_global_fan_in_target(d, gen),
                                   &hdr->coll_leader_parked);
        if (s == RDLM_OK) {
            s = rdlm_global_exchange(d, lc, gen);
        }
        if (s == RDLM_OK) {
            rdlm_global_release(lc, gen);
        }
    }
    if (s == RDLM_OK) {
        rdlm_fetch_add(&d->stats.barriers, 1, RDLM_RELAXED);
    } else if (s != RDLM_ERR_CLOSED) {
        rdlm_global_break(d, lc);
    }
    rdlm_fetch_sub(&d->active, 1, RDLM_ACQ_REL);
    return s;
}
