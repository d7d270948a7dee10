/*
 * coll_barrier.pml -- spin model of the collective barrier of a distributed
 * context (core/global/barrier.c: rdlm_global_barrier_arrive / _wait, over the
 * node segment's coll_arrived, coll_leader_parked, coll_release, coll_parked;
 * the waits are rdlm_wait_step and the wakes rdlm_wait_wake of
 * core/local/wait.[ch]). NODES nodes of L processes each; every process
 * passes B barriers in a row (arrive, then wait, as rdlm_barrier does).
 *
 * What a process does at barrier gen (G0 + 1 .. G0 + B):
 *   arrive  n := fetch_add(coll_arrived, 1) + 1; if n == gen * L (mod M):
 *             one node: release (below);
 *             else, not the node leader: wake the leader: if
 *               coll_leader_parked != 0, FUTEX_WAKE(coll_arrived, all).
 *   wait    one node, or not the leader: await(coll_release, gen,
 *             coll_parked). The leader of a multi-node context:
 *             await(coll_arrived, gen * L, coll_leader_parked); the exchange;
 *             release.
 *   release coll_release := gen (seq_cst); if coll_parked != 0,
 *             FUTEX_WAKE(coll_release, all).
 *   await(word, target, parked): v := word; if (signed)(v - target) >= 0
 *             return; else parked++; FUTEX_WAIT(word, v); parked--; again.
 *   exchange (two nodes, the dissemination's one round): put gen into the
 *             other leader's flag (a flag only grows: the AM handler's CAS
 *             loop; a put of a larger gen), wait until the own flag >= gen.
 *             -DLINKS (rdlm_links_send, rdlm_global_await_link over
 *             transport/links.h): send gen as one message on the leaders'
 *             TCP connection (per direction a FIFO chan link[k], into node k;
 *             one message per barrier), then while the own flag (private:
 *             link_flag, not remote memory) < gen: read a message v, flag :=
 *             max(flag, v). The partner may pass g and send g + 1 before this
 *             leader read g (two unread on a link: -DLINK_UNREAD=1 finds it).
 *
 * Wrap-around. coll_arrived and coll_release are 32-bit words compared by
 * the wrapping signed difference. Here both are bytes kept modulo M (a power
 * of two; 8 by default), the compare is ((v - t) mod M) < M/2, and the run
 * starts after G0 barriers (6 by default): coll_arrived = G0 * L mod M,
 * coll_release = G0 mod M, the flags G0, nobody waiting or parked -- the
 * state every node segment is in between barriers (nothing else in it
 * depends on G0). Why a small M stands for 2^32: a waiter of gen g sees
 * coll_release at g - 1 or g (gen g + 1 needs its own arrival); a leader
 * sees coll_arrived in [(g-1)L + 1, gL] (its node's others wait for its
 * release); the fan-in test n == gL tells L consecutive arrivals apart. So
 * the protocol needs M >= L (the test) and M/2 >= L - 1 (the compare), and
 * any larger M behaves the same; the search agrees (-DM=4 passes with L = 3
 * and L = 4, fails with L = 5; -DM=2 fails with L = 3). M = 8 serves any
 * L <= 5. With G0 = 6 and 3 barriers both words wrap inside the run
 * (gens 7, 8, 9: coll_release 7 -> 0 at gen 8; the arrivals 18 .. 27 mod 8
 * pass 24 at gen 8 with L = 3, 12 .. 18 pass 16 with L = 2), so a compare
 * that ignores the wrap is caught (BUG_NO_WRAP_COMPARE).
 *
 * The futex, faithfully: FUTEX_WAIT(word, v) is ONE step that puts the
 * process in the word's kernel queue (its bit in asleep_rel / asleep_arr)
 * iff word == v, else returns at once; a process in the queue stays blocked
 * until a FUTEX_WAKE on that word takes it out (all of them: INT_MAX
 * waiters; bitsets are all-bits). A process between parked++ and its
 * FUTEX_WAIT is not in the queue: a wake then finds nobody.
 *
 * Not modelled, and why that loses nothing or is on purpose:
 *   - spinning and yielding before parking: a failed load has no effect, so
 *     a waiter that re-loads is one whose (single) load the search delays;
 *     the poll path (emulated atomics, no progress thread) never parks and
 *     is the same "load later". A failed load may always be followed by a
 *     park, which is every real behaviour and more.
 *   - the park slice: the real FUTEX_WAIT ends after park_slice_ns whether
 *     woken or not, which would turn a lost wake-up into a delay of one
 *     slice. Here a sleep ends only by a wake (or, with -DSPURIOUS=k, k
 *     times per run anywhere; with -DDEATH, by a slice after which the
 *     waiter fails or finds its word reached: below), so a lost wake-up is a
 *     hang: an invalid end state.
 *   - the leaders' waits for a flag (polls, then the transport's sleep,
 *     which a message ends and which has a 1 ms bound): a blocking wait
 *     until flag >= gen.
 *   - the flag writes: by default (PUTS=0) a put lands at once and raises
 *     the flag. -DPUTS=1: puts are in flight (a proctype Net lands them
 *     later, the oldest first, as a plain overwrite: rdlm_global_home_put is
 *     not flushed, so a leader may go on before its put landed); -DPUTS=2:
 *     they land in any order, still overwriting (a transport that reorders
 *     one endpoint's puts); -DPUTS=3: in any order, raising the flag to the
 *     larger value (the active messages: rdlm_global_flag_handler's CAS loop).
 *     PUTS=3 includes the behaviours of 0 and 1 (ordered puts of growing
 *     gens from the one peer overwrite = raise).
 *   - closing (RDLM_ERR_CLOSED), more than two nodes (ceil(log2 nodes)
 *     rounds), statistics, the split-phase misuse checks.
 *   - LINKS: the socket's poll, spins, sleeps and progress calls (a read
 *     that finds nothing changes nothing: the receive is one blocking
 *     step); a closed link (RDLM_ERR_PEER_DEAD: with -DDEATH only); a
 *     full socket buffer (a
 *     link never holds more than 2 unread messages of 8 bytes: (c)).
 *   Interleaving is sequentially consistent: the stores, the fetch_adds
 *   and parked++ / -- and the waker's read of parked are seq_cst, the
 *   waiters' loads acquire; the kernel orders its compare after the
 *   caller's parked++ (futex_wait's barrier); the exchange ends with a
 *   seq_cst fence.
 *
 * Atomicity: one step = one access to one shared location (a load, a store,
 * a fetch_add, parked++ / --, FUTEX_WAIT's compare-and-enqueue, FUTEX_WAKE,
 * a flag put), plus ghost and local updates. A return from FUTEX_WAIT and
 * the parked-- after it are one step (the return touches nothing shared).
 *
 * Properties:
 *   (a) safety: no process leaves barrier g before every process of the
 *       context (all nodes) has arrived at g: at the end of wait, the ghost
 *       garr[g] (arrivals at g, counted at the fetch_add) is NP.
 *   (b) no lost wake-up, no hang: no invalid end state -- every process
 *       finishes its B barriers; at the end nobody is parked or asleep.
 *   (c) LINKS: a send finds at most LINK_UNREAD - 1 (1) unread messages on
 *       its link, so a link never holds more than 2.
 *   (d) LINKS, with -DLINK_EXACT: every read brings exactly gen, and the
 *       flag was gen - 1 (FIFO, one message per barrier: the max and the
 *       loop are never needed; they are the code's defence).
 *
 * The pair (-DPAIR: rdlm_global_pair_arrive / _wait; a context of one node
 * and exactly two processes on an uncrowded host, decided at attach, the
 * same on both). No count: each process has its own line coll_pair[me] =
 * { gen (u64), parked }. At barrier gen:
 *   arrive  coll_pair[me].gen := gen (seq_cst); if coll_pair[me].parked != 0,
 *             FUTEX_WAKE(low half of coll_pair[me].gen, all).
 *   wait    v := coll_pair[other].gen; if v >= gen (as u64) return; else
 *             parked++ (coll_pair[other].parked); FUTEX_WAIT(low half of
 *             coll_pair[other].gen, (uint32)v); parked--; again.
 * The loop compares the full 64-bit generation, the kernel only the low 32
 * bits. Here gen is a byte that never wraps (G0 + B < 256: the u64), its
 * low half is gen mod M. Why a small M stands for 2^32: a process waiting
 * at gen g sees the other's line at g - 1, g or g + 1 (g + 1 needs our g,
 * which arrive stored; g + 2 needs our g + 1), so the kernel's compare with
 * seen = g - 1 must tell g - 1 from g and g + 1: M >= 3 (M = 4 the least
 * power of two), and any larger M behaves the same (-DM=4 passes, -DM=2
 * fails). Defaults with -DPAIR: B = 4 barriers, gens 7 .. 10 with M = 8,
 * G0 = 6: the low half wraps 7 -> 0 at gen 8, so a loop that compares only
 * the low half is caught (BUG_PAIR_FULL_COMPARE_LOW). Start state: both
 * lines at G0, nobody parked (the state between barriers). Ghost arrivals
 * are counted at the store; (a) and (b) as below (NP = 2).
 *
 * A member dies (-DDEATH: bf08ee3, rdlm_global_break, rdlm_global_node_check;
 * one node, two nodes with or without -DLINKS, the pair; no -DPUTS). At most
 * one process dies, at any point of its run (between two of its steps,
 * asleep included): proctype Reaper chooses it (-DVICTIM=p: only p), and its
 * death, the unless escape of its body, is one step: dead (bit in deadm), out
 * of the futex queues, and a leader's links closed by the kernel (the other
 * leader reads end of stream after the queued messages; a send to it may fail).
 * It never wakes anyone; its parked++ may stay counted. What the others do:
 *   node check  (a waiter, after a failed load, before it parks) if coll_broken
 *             of its node is set, or a process of its node other than itself
 *             is dead: PEER_DEAD. It may also not look (still spinning, not
 *             due, or it looked before the mark): both only grow, so a later
 *             look finds them.
 *   park slice  rdlm_wait_step's sleep ends after RDLM_PARK_SLICE_MS whether
 *             woken or not: a sleeper may leave the futex queue without a wake
 *             when what follows is not the same sleep again: its node check
 *             would fail, or the word reached its target (a waker that died
 *             between its store and its wake; a lost wake-up). A slice that
 *             finds nothing is not modelled: a sleep that no wake and no check
 *             ends is a hang (an invalid end state), as above.
 *   exchange  flags: flag >= gen, below BROKEN: done; flag >= BROKEN (255,
 *             above any gen): PEER_DEAD; the sender (the other leader) dead: PEER_DEAD
 *             (the transport's report, the host record). LINKS: a link whose
 *             sender's end is closed, read empty: PEER_DEAD; a send to a
 *             reader that closed its end: PEER_DEAD, or taken and never read.
 *   arrive    coll_broken set (one load, before the fetch_add): break, PEER_DEAD.
 *   break     (whoever failed, not CLOSED) coll_broken := 1 (seq_cst); read
 *             coll_parked, FUTEX_WAKE(coll_release); read coll_leader_parked,
 *             FUTEX_WAKE(coll_arrived); a leader of two nodes then shuts its
 *             links down both ways (one step) or raises the other leader's
 *             flag to BROKEN. Then the process ends (it runs no later barrier:
 *             its own mark would fail it at arrive).
 * Properties under DEATH: (a) for whoever passes a barrier (the dead counted
 * if they arrived); (b) every live process ends, passed or failed: a live
 * process blocked for ever is an invalid end state; at the end nobody is
 * asleep, parked counts at most the dead one; (e) a process fails only if
 * some process died (assert at every PEER_DEAD). Not modelled with DEATH:
 * more than one death, a failed process's later barriers, a process that ends
 * and exits (taken as dead by a mate still waiting: only a later PEER_DEAD),
 * closing, -DPUTS (puts in flight with BROKEN). Every step is a d_step under
 * DEATH (spin may take an escape inside an atomic sequence).
 *
 * Knobs: -DPAIR (the pair, above), -DNODES=1|2 (1), -DL (processes per node; 3 with one node, 2 with
 * two), -DB (barriers, 3), -DM (modulus, 8), -DG0 (barriers before the
 * run, 6), -DSPURIOUS (spurious futex returns per run, 0), -DPUTS (0-3,
 * above; two nodes), -DLINKS (the links exchange; -DNODES=2, no PUTS),
 * -DLINK_UNREAD (the bound of (c), 2), -DLINK_EXACT ((d)), -DDEATH (above),
 * -DVICTIM=p (with DEATH: only process p may die, none if p >= NP; the
 * leaders are 0 and L).
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_RELEASE_CHECK_BEFORE_STORE  release reads coll_parked before it
 *       stores coll_release (Dekker broken on the waker's side): a waiter
 *       parks after the read and sleeps on the old value -> (b).
 *   BUG_WAKE_BEFORE_COUNT  (two nodes) the non-leader reads
 *       coll_leader_parked before its fetch_add on coll_arrived: the leader
 *       parks in between and sleeps for ever -> (b).
 *   BUG_LEADER_NO_WAKE  (two nodes) the non-leader that completes the
 *       node's count does not wake the leader -> (b).
 *   BUG_SLEEP_UNCHECKED  FUTEX_WAIT as a user-space compare followed by an
 *       unconditional sleep (two steps): the wake comes in between -> (b).
 *   BUG_WAKE_ONE  the release wakes one sleeper, not all -> (b).
 *   BUG_TARGET_OFF_BY_ONE  the fan-in test is n == gen * L - 1: the
 *       last-but-one arriver releases -> (a).
 *   BUG_NO_WRAP_COMPARE  await compares v >= target as plain numbers: at
 *       gen 8 the target 0 is "reached" by 7 -> (a).
 *   BUG_RELEASE_BEFORE_EXCHANGE  (two nodes) the leader releases its node
 *       before the exchange -> (a).
 * Planted bugs of the pair (-DPAIR -DBUG_PAIR_...), each must be caught:
 *   BUG_PAIR_WAKE_BEFORE_STORE  arrive reads coll_pair[me].parked before
 *       it stores gen: the other parks in between, sees the old value and
 *       sleeps for ever -> (b).
 *   BUG_PAIR_SLEEP_UNCHECKED  FUTEX_WAIT as a user-space compare of the low
 *       half, then an unconditional sleep: the store and wake come in
 *       between -> (b).
 *   BUG_PAIR_WAIT_OWN  wait loads, and parks on, its own line (other = me):
 *       it leaves at once -> (a).
 *   BUG_PAIR_FULL_COMPARE_LOW  the loop compares (uint32)v >= (uint32)gen,
 *       the low halves as plain numbers: at gen 8 (low half 0) the other's
 *       7 "reaches" it -> (a).
 * Planted bugs of the links (-DNODES=2 -DLINKS -DBUG_LINK_...), each must be
 * caught:
 *   BUG_LINK_PEEK  the waiter returns once its in-link is readable, without
 *       reading (a poll's POLLIN taken for the round): at gen 8 leader 1
 *       sees leader 0's unread 7 and releases its node -> (a).
 *   BUG_LINK_WAIT_BEFORE_SEND  the leader waits, then sends: each leader
 *       waits for the other's message -> (b).
 *   BUG_LINK_SEND_EARLY  the leader sends gen at its own arrival, before
 *       its node's fan-in: the other leader releases its node while this
 *       node's other process has not arrived -> (a).
 * Planted bugs of a death (-DDEATH -DBUG_...), each must be caught:
 *   BUG_NO_NODE_MARK  break neither sets coll_broken nor wakes: leader 0
 *       dies, leader 2 fails (sender dead), its non-leader 3 sleeps on
 *       coll_release for ever -> (b).
 *   BUG_NO_MATE_CHECK  the node check does not look for dead mates: leader 0
 *       dies, its non-leader 1 sleeps on coll_release for ever -> (b) (and a
 *       leader waits for a dead non-leader's arrival).
 *   BUG_NO_LEADER_BREAK  a failing leader does not break the other leader: 1
 *       dies before it arrives, leader 0 fails (mate check), leader 2 waits
 *       for its round for ever (no BROKEN flag, no shut link) -> (b).
 *   BUG_ARRIVE_NO_BREAK  arrive sees coll_broken and returns PEER_DEAD
 *       without break. Needs a node of 3 (-DNODES=2 -DL=3 -DB=1 -DVICTIM=5):
 *       5 dies, 4 fails (mate check) and marks node 1, leader 3 then arrives,
 *       reads the mark and leaves; leader 0 waits for its round for ever ->
 *       (b). With nodes of 2 it cannot fail: a non-leader marks its node only
 *       when its leader died or failed (then broke) itself.
 *   BUG_BROKEN_LOW  (flags) the "broken" flag value is a gen of the run
 *       (G0 + 2, gen 8): with nobody dead, a leader reads flag 8 at barrier
 *       8 as broken and fails -> (e).
 * Harmless, not a planted bug: BUG_LINK_ASSIGN (flag := v, no max): over a
 * FIFO link with one message per barrier each read brings exactly gen
 * ((d)), so v > flag always and := is the max; same states, no error
 * (links_assign_is_safe). It would matter on a link that reorders.
 * Not caught, as expected: BUG_WAKE_ONE with two nodes of two (one sleeper
 * per word at most). -DPUTS=2 is not a planted bug but an assumption made
 * visible: puts landing out of order lower a flag -> (b) (README.md).
 */

#ifdef PAIR
#if defined(NODES) && NODES != 1 || defined(L) && L != 2
#error "the pair is one node of two processes"
#endif
#define NODES 1
#define L 2
#ifndef B
#define B 4
#endif
#endif
#ifndef NODES
#define NODES 1
#endif
#ifndef L
#if NODES == 1
#define L 3
#else
#define L 2
#endif
#endif
#ifndef B
#define B 3
#endif
#ifndef M
#define M 8
#endif
#ifndef G0
#define G0 6
#endif
#ifndef SPURIOUS
#define SPURIOUS 0
#endif
#ifndef PUTS
#define PUTS 0
#endif
#ifndef LINK_UNREAD
#define LINK_UNREAD 2
#endif

#if NODES != 1 && NODES != 2
#error "the exchange is modelled for one or two nodes"
#endif
#ifdef LINKS
#if NODES != 2 || PUTS != 0 || defined(PAIR)
#error "the links are the two leaders' exchange: -DNODES=2, no -DPUTS, no -DPAIR"
#endif
#endif
#ifdef DEATH
#if PUTS != 0
#error "-DDEATH: the flags are raised at once (no -DPUTS)"
#endif
/* The death is the unless escape of P's body; spin may take an escape between
   the statements of an atomic sequence, not inside a d_step: under DEATH every
   step is a d_step (all are deterministic, and only the first statement of each
   blocks). */
#define atomic d_step
#endif
#if M != 2 && M != 4 && M != 8 && M != 16 && M != 32 && M != 64 && M != 128
#error "M must be a power of two below 256"
#endif

#define NP       (NODES * L)
#if NODES * L > 8
#error "at most 8 processes (bit masks in bytes)"
#endif
#define MASK     (M - 1)
#define NODE     (_pid / L)
#define LEADER   (_pid % L == 0)            /* leader_of[node]: its first process */
#define BIT      (1 << _pid)
#define GEN      (G0 + it)                  /* d->barrier_gen (not wrapped) */
#define TARGET   ((GEN * L) & MASK)         /* rdlm_global_fan_in_target */

/* (int32_t)(v - t) >= 0, mod M */
#ifdef BUG_NO_WRAP_COMPARE
#define REACHED(v, t) ((v) >= (t))
#else
#define REACHED(v, t) ((((v) - (t)) & MASK) < M / 2)
#endif

#ifdef BUG_TARGET_OFF_BY_ONE
#define LAST(n)  ((n) == ((TARGET - 1) & MASK))
#else
#define LAST(n)  ((n) == TARGET)
#endif

/* the node segment */
byte arrived[NODES] = (G0 * L) & MASK;      /* coll_arrived */
byte lparked[NODES];                        /* coll_leader_parked */
byte release[NODES] = G0 & MASK;            /* coll_release */
byte parked[NODES];                         /* coll_parked */
/* the kernel's futex queues: bit i = process i sleeps on that word */
byte asleep_arr[NODES];
byte asleep_rel[NODES];
#if NODES == 2
byte flag[NODES] = G0;                      /* dissemination flag 0 (u64: no wrap);
                                               LINKS: leader k's private link_flag[0] */
#ifdef LINKS
chan link[NODES] = [B] of { byte };         /* round 0 into node k: the TCP
                                               connection's direction from the
                                               other leader (B: a send never
                                               blocks, even with a bug) */
#endif
#if PUTS > 0
byte infl[NODES];                           /* bit j: gen G0 + j in flight to the flag */
#endif
#endif

#ifdef DEATH
/* a member dies: coll_broken of each node; the dead (bit i: process i); the
   process Reaper chose to die (NONE: nobody yet); processes that ended
   (finished, failed or died) */
#define NONE 255
bit broken[NODES];
byte deadm;
byte kill = NONE;
byte ended;
#define MATES     ((((1 << L) - 1) << (NODE * L)) & ~BIT)
#define MATE_DEAD ((deadm & MATES) != 0)    /* a process of my node, not me, is dead */
#ifdef BUG_NO_MATE_CHECK
#define FINDS     (broken[NODE])            /* bug: nobody looks for dead mates */
#else
#define FINDS     (broken[NODE] || MATE_DEAD)   /* rdlm_global_node_check would fail */
#endif
#if NODES == 2
#ifdef BUG_BROKEN_LOW
#define BROKEN    (G0 + 2)                  /* bug: a gen of the run reaches it */
#else
#define BROKEN    255                       /* RDLM_GLOBAL_FLAG_BROKEN: above any gen */
#endif
#define SENDER    ((1 - NODE) * L)          /* the leader whose round raises my flag */
#ifdef LINKS
bit lclosed[NODES];                         /* link into node k: the sender's end closed
                                               (it died, or shut its links down): end of
                                               stream once the queued messages are read */
bit lshut[NODES];                           /* link into node k: the reader's end closed:
                                               a send may fail (EPIPE) */
#endif
#endif
#endif

byte spurious = SPURIOUS;
#ifndef DEATH
byte done;                                  /* processes that finished */
#endif

/* ghost: arrivals at barrier it (1 .. B), counted at the fetch_add */
byte garr[B + 1];

#ifdef PAIR
/* the pair's lines: coll_pair[k].gen (u64: a byte that does not wrap here;
   its low half, the futex word, is gen & MASK), .parked, and the kernel's
   queue of the low half */
byte pgen[2] = G0;
byte pparked[2];
byte asleep_pair[2];
#define LOW(x)   ((x) & MASK)
#ifdef BUG_PAIR_WAIT_OWN
#define OTHER    (_pid)                     /* bug: its own line */
#else
#define OTHER    (1 - _pid)
#endif
#ifdef BUG_PAIR_FULL_COMPARE_LOW
#define PREACHED(v) (LOW(v) >= LOW(GEN))    /* bug: the low halves, no wrap */
#else
#define PREACHED(v) ((v) >= GEN)            /* v >= gen, as u64 */
#endif
#endif

/* FUTEX_WAIT(word, v) on queue sl: sleep iff word == v, in one step
   (FUTEX_WAIT_IF: the kernel's compare as an expression; the pair's compares
   the low halves) */
#if defined(BUG_SLEEP_UNCHECKED) || defined(BUG_PAIR_SLEEP_UNCHECKED)
#define FUTEX_WAIT_IF(eq, sl) \
    atomic { c = (eq) }; \
    atomic { if :: c -> sl = sl | BIT :: else -> skip fi; c = 0 }
#else
#define FUTEX_WAIT_IF(eq, sl) \
    atomic { if :: (eq) -> sl = sl | BIT :: else -> skip fi }
#endif
#define FUTEX_WAIT(word, sl) FUTEX_WAIT_IF(word == v, sl)

/* FUTEX_WAKE(word, all) on queue sl, if c (the waker's read of parked) */
#ifdef BUG_WAKE_ONE
#define FUTEX_WAKE(sl) \
    atomic { \
        if \
        :: c -> i = 0; \
            do \
            :: i < NP && (sl & (1 << i)) -> sl = sl & ~(1 << i); break \
            :: i < NP && (sl >> (i + 1)) != 0 -> i++ \
            :: else -> break \
            od \
        :: else -> skip \
        fi; \
        c = 0; i = 0 }
#else
#define FUTEX_WAKE(sl) \
    atomic { if :: c -> sl = 0 :: else -> skip fi; c = 0 }
#endif

#ifdef DEATH
/* rdlm_global_node_check, once the waiter no longer spins (after a failed
   load): coll_broken set, or (every RDLM_GLOBAL_GONE_CHECK_NS) a process of
   the node other than me dead: PEER_DEAD. skip: still spinning, not due, or
   the load came before the mark (both only grow: a later look sees them). */
inline node_check() {
    if
    :: broken[NODE]; v = 0; goto failed
#ifndef BUG_NO_MATE_CHECK
    :: MATE_DEAD; v = 0; goto failed
#endif
    :: skip
    fi
}
#endif

/* rdlm_global_await_word over rdlm_wait_step: (the load), parked++,
   FUTEX_WAIT(word, v), (the return, maybe spurious) parked-- */
inline await(word, t, pk, sl) {
    do
    :: REACHED(word, t) -> break
    :: atomic { !REACHED(word, t) -> v = word };
#ifdef DEATH
        node_check();
#endif
        atomic { pk++ };
        FUTEX_WAIT(word, sl);
        if
        :: atomic { (sl & BIT) == 0 -> pk--; v = 0 }
        :: atomic { (sl & BIT) != 0 && spurious > 0 ->
                    spurious--; sl = sl & ~BIT; pk--; v = 0 }
#ifdef DEATH
        :: atomic { (sl & BIT) != 0 && (FINDS || REACHED(word, t)) ->  /* a slice ends */
                    sl = sl & ~BIT; pk--; v = 0 }
#endif
        fi
    od
}

/* rdlm_global_release: store, then read parked and wake (Dekker) */
inline release_node() {
#ifdef BUG_RELEASE_CHECK_BEFORE_STORE
    atomic { c = (parked[NODE] != 0) };
    release[NODE] = GEN & MASK;
#else
    release[NODE] = GEN & MASK;
    atomic { c = (parked[NODE] != 0) };
#endif
    FUTEX_WAKE(asleep_rel[NODE])
}

#ifdef DEATH
/* rdlm_global_break: mark the node broken, wake both words' sleepers; a
   leader of two nodes makes the other leader fail: its links shut down both
   ways (one step), or the other's flag raised to BROKEN. Once: a process that
   failed ends. */
inline brk() {
#ifndef BUG_NO_NODE_MARK
    broken[NODE] = 1;
    atomic { c = (parked[NODE] != 0) };
    FUTEX_WAKE(asleep_rel[NODE]);
    atomic { c = (lparked[NODE] != 0) };
    FUTEX_WAKE(asleep_arr[NODE]);
#endif
#if NODES == 2 && !defined(BUG_NO_LEADER_BREAK)
    if
    :: LEADER ->
#ifdef LINKS
        atomic { lclosed[1 - NODE] = 1; lshut[NODE] = 1 }
#else
        flag[1 - NODE] = BROKEN
#endif
    :: else -> skip
    fi
#endif
}
#endif

#if NODES == 2
#ifdef LINKS
/* rdlm_links_send: gen as one message on the out-link; (c) the send finds
   fewer than LINK_UNREAD (2) unread messages there */
inline link_send() {
#ifdef DEATH
    /* a send to a reader that closed its end may fail (PEER_DEAD) or be taken
       by the kernel and never read; (c) holds for a reader that reads */
    if
    :: lshut[1 - NODE]; goto failed
    :: atomic { assert(lshut[1 - NODE] || len(link[1 - NODE]) < LINK_UNREAD);
                link[1 - NODE] ! GEN }
    fi
#else
    atomic { assert(len(link[1 - NODE]) < LINK_UNREAD); link[1 - NODE] ! GEN }
#endif
}
#endif

/* rdlm_global_exchange, one round: put gen into the peer's flag, wait for the
   own flag to reach gen */
inline exchange() {
#ifdef LINKS
#ifndef BUG_LINK_WAIT_BEFORE_SEND
#ifndef BUG_LINK_SEND_EARLY
    link_send();
#endif
#endif
#ifdef BUG_LINK_PEEK
    len(link[NODE]) > 0;                            /* bug: readable = done, unread */
#else
    /* rdlm_global_await_link: while (flag < gen) { recv v; flag = max(flag, v) } */
    do
    :: flag[NODE] >= GEN -> break
    :: atomic { flag[NODE] < GEN && len(link[NODE]) > 0 ->
                link[NODE] ? v;
#ifdef LINK_EXACT
                assert(v == GEN && flag[NODE] == GEN - 1);  /* (d) */
#endif
#ifdef BUG_LINK_ASSIGN
                flag[NODE] = v;                     /* "bug": no max */
#else
                flag[NODE] = (v > flag[NODE] -> v : flag[NODE]);
#endif
                v = 0 }
#ifdef DEATH
    :: flag[NODE] < GEN && len(link[NODE]) == 0 && lclosed[NODE] ->
        goto failed                                 /* end of stream: PEER_DEAD */
#endif
    od
#endif
#ifdef BUG_LINK_WAIT_BEFORE_SEND
    ;
    link_send()                                     /* bug: after the wait */
#endif
#else
#if PUTS == 0
    atomic { if :: flag[1 - NODE] < GEN -> flag[1 - NODE] = GEN
                :: else -> skip fi };
#else
    infl[1 - NODE] = infl[1 - NODE] | (1 << it);    /* in flight */
#endif
#ifdef DEATH
    /* rdlm_global_await_flag: reached; reached BROKEN (the sender broke); the
       sender dead (the transport's report, the host's record) */
    if
    :: flag[NODE] >= GEN && flag[NODE] < BROKEN
    :: flag[NODE] >= GEN && flag[NODE] >= BROKEN; goto failed
    :: (deadm & (1 << SENDER)) != 0; goto failed
    fi
#else
    flag[NODE] >= GEN
#endif
#endif
}

#endif

#ifdef PAIR
active [NP] proctype P()
{
    byte it, v, i;
    bit c;
#ifdef DEATH
    bit fin;                                        /* ended: no death after it */
    {
#endif

    for (it : 1 .. B) {
#ifdef DEATH
        /* arrive: coll_broken set: break, PEER_DEAD */
        if
        :: broken[NODE] ->
#ifdef BUG_ARRIVE_NO_BREAK
            goto nobreak                            /* bug: no break */
#else
            goto failed
#endif
        :: !broken[NODE]
        fi;
#endif
        /* arrive (rdlm_global_pair_arrive): store gen, then read parked, wake */
#ifdef BUG_PAIR_WAKE_BEFORE_STORE
        atomic { c = (pparked[_pid] != 0) };        /* bug: before the store */
        atomic { pgen[_pid] = GEN; garr[it]++ };
#else
        atomic { pgen[_pid] = GEN; garr[it]++ };
        atomic { c = (pparked[_pid] != 0) };
#endif
        FUTEX_WAKE(asleep_pair[_pid]);
        /* wait (rdlm_global_pair_wait over rdlm_wait_step) */
        do
        :: PREACHED(pgen[OTHER]) -> break
        :: atomic { !PREACHED(pgen[OTHER]) -> v = pgen[OTHER] };
#ifdef DEATH
            node_check();
#endif
            atomic { pparked[OTHER]++ };
            FUTEX_WAIT_IF(LOW(pgen[OTHER]) == LOW(v), asleep_pair[OTHER]);
            if
            :: atomic { (asleep_pair[OTHER] & BIT) == 0 -> pparked[OTHER]--; v = 0 }
            :: atomic { (asleep_pair[OTHER] & BIT) != 0 && spurious > 0 ->
                        spurious--; asleep_pair[OTHER] = asleep_pair[OTHER] & ~BIT;
                        pparked[OTHER]--; v = 0 }
#ifdef DEATH
            :: atomic { (asleep_pair[OTHER] & BIT) != 0 &&
                        (FINDS || PREACHED(pgen[OTHER])) ->         /* a park slice ends */
                        asleep_pair[OTHER] = asleep_pair[OTHER] & ~BIT;
                        pparked[OTHER]--; v = 0 }
#endif
            fi
        od;
        assert(garr[it] == NP)                      /* (a) */
    }
#ifdef DEATH
    skip;                                           /* (no jump into a d_step) */
    atomic { ended++; fin = 1 };
    goto out;
failed:                                             /* PEER_DEAD */
    assert(deadm != 0);                             /* (e) */
    brk();
nobreak:
    skip;
    atomic { ended++; fin = 1 };
out:
    skip
    } unless {
        /* death (an escape takes priority: once Reaper chose this process, it
           takes no other step): it stops for ever; it leaves the futex queues,
           and (a leader) the kernel closes its links */
        atomic { kill == _pid && !fin ->
                 deadm = deadm | BIT; ended++;
                 asleep_rel[NODE] = asleep_rel[NODE] & ~BIT;
                 asleep_arr[NODE] = asleep_arr[NODE] & ~BIT;
#ifdef PAIR
                 asleep_pair[0] = asleep_pair[0] & ~BIT;
                 asleep_pair[1] = asleep_pair[1] & ~BIT;
#endif
#ifdef LINKS
                 if
                 :: LEADER -> lclosed[1 - NODE] = 1; lshut[NODE] = 1
                 :: else -> skip
                 fi
#endif
                 }
    }
#else
    done++
#endif
}

active proctype Check()
{
#ifdef DEATH
    ended == NP;                    /* every live process ended; the dead one's
                                       parked++ may stay counted */
    assert(pparked[0] + pparked[1] <= (deadm != 0 -> 1 : 0) &&
           asleep_pair[0] == 0 && asleep_pair[1] == 0)
#else
    done == NP;
    assert(pparked[0] == 0 && pparked[1] == 0 && asleep_pair[0] == 0 &&
           asleep_pair[1] == 0)
#endif
}
#else
active [NP] proctype P()
{
    byte it, n, v, i;
    bit c;
#ifdef DEATH
    bit fin;                                        /* ended: no death after it */
    {
#endif

    for (it : 1 .. B) {
#ifdef DEATH
        /* arrive: coll_broken set: break, PEER_DEAD */
        if
        :: broken[NODE] ->
#ifdef BUG_ARRIVE_NO_BREAK
            goto nobreak                            /* bug: no break */
#else
            goto failed
#endif
        :: !broken[NODE]
        fi;
#endif
        /* arrive: n := fetch_add(coll_arrived, 1) + 1 */
#if NODES == 2 && defined(BUG_WAKE_BEFORE_COUNT)
        atomic { c = (lparked[NODE] != 0) };        /* bug: before the count */
#endif
        atomic { n = (arrived[NODE] + 1) & MASK; arrived[NODE] = n;
                 garr[it]++ };
#if defined(LINKS) && defined(BUG_LINK_SEND_EARLY)
        if
        :: LEADER -> link_send()                    /* bug: before the fan-in */
        :: !LEADER -> skip
        fi;
#endif
#if NODES == 1
        /* the last arriver releases the node */
        if
        :: atomic { LAST(n) -> n = 0 }; release_node()
        :: atomic { !LAST(n) -> n = 0 }
        fi;
        /* wait */
        await(release[NODE], GEN & MASK, parked[NODE], asleep_rel[NODE]);
#else
        /* the last arriver, unless it is the leader, wakes the leader */
        if
        :: atomic { LAST(n) && !LEADER -> n = 0 };
#ifndef BUG_LEADER_NO_WAKE
#ifndef BUG_WAKE_BEFORE_COUNT
            atomic { c = (lparked[NODE] != 0) };
#endif
            FUTEX_WAKE(asleep_arr[NODE])
#else
            c = 0                                   /* bug: no wake */
#endif
        :: atomic { !(LAST(n) && !LEADER) -> n = 0; c = 0 }
        fi;
        /* wait */
        if
        :: !LEADER ->
            await(release[NODE], GEN & MASK, parked[NODE], asleep_rel[NODE])
        :: LEADER ->
            await(arrived[NODE], TARGET, lparked[NODE], asleep_arr[NODE]);
#ifdef BUG_RELEASE_BEFORE_EXCHANGE
            release_node();                         /* bug: before the exchange */
            exchange()
#else
            exchange();
            release_node()
#endif
        fi;
#endif
        assert(garr[it] == NP)                      /* (a) */
    }
#ifdef DEATH
    skip;                                           /* (no jump into a d_step) */
    atomic { ended++; fin = 1 };
    goto out;
failed:                                             /* PEER_DEAD */
    assert(deadm != 0);                             /* (e) */
    brk();
nobreak:
    skip;
    atomic { ended++; fin = 1 };
out:
    skip
    } unless {
        /* death (an escape takes priority: once Reaper chose this process, it
           takes no other step): it stops for ever; it leaves the futex queues,
           and (a leader) the kernel closes its links */
        atomic { kill == _pid && !fin ->
                 deadm = deadm | BIT; ended++;
                 asleep_rel[NODE] = asleep_rel[NODE] & ~BIT;
                 asleep_arr[NODE] = asleep_arr[NODE] & ~BIT;
#ifdef PAIR
                 asleep_pair[0] = asleep_pair[0] & ~BIT;
                 asleep_pair[1] = asleep_pair[1] & ~BIT;
#endif
#ifdef LINKS
                 if
                 :: LEADER -> lclosed[1 - NODE] = 1; lshut[NODE] = 1
                 :: else -> skip
                 fi
#endif
                 }
    }
#else
    done++
#endif
}

/* (b), the end: once all have finished, nobody is parked or asleep */
active proctype Check()
{
#ifdef DEATH
    /* every live process ended; a dead one may stay counted in parked */
    ended == NP;
    assert(parked[0] + lparked[0] <= (deadm != 0 -> 1 : 0) && asleep_arr[0] == 0 &&
           asleep_rel[0] == 0);
#if NODES == 2
    assert(parked[1] + lparked[1] <= (deadm != 0 -> 1 : 0) && asleep_arr[1] == 0 &&
           asleep_rel[1] == 0)
#endif
#else
    done == NP;
    assert(parked[0] == 0 && lparked[0] == 0 && asleep_arr[0] == 0 &&
           asleep_rel[0] == 0);
#if NODES == 2
    assert(parked[1] == 0 && lparked[1] == 0 && asleep_arr[1] == 0 &&
           asleep_rel[1] == 0)
#endif
#endif
}

#endif /* PAIR */

#if NODES == 2
#if PUTS > 0
/* The network: an in-flight write of gen G0 + j to node k's flag lands
   (PUTS 1: the oldest first; 2, 3: any); 1, 2 overwrite (a put), 3 raises
   the flag to the larger value (the active-message handler's CAS loop). */
active proctype Net()
{
    byte j, k;

end:
    do
    :: atomic {
        infl[0] != 0 || infl[1] != 0 ->
        if :: infl[0] != 0 -> k = 0 :: infl[1] != 0 -> k = 1 fi;
        j = 1;
        do
        :: (infl[k] & (1 << j)) != 0 -> break
        :: (infl[k] & (1 << j)) != 0 && PUTS >= 2 && (infl[k] >> (j + 1)) != 0 -> j++
        :: (infl[k] & (1 << j)) == 0 -> j++
        od;
        infl[k] = infl[k] & ~(1 << j);
        flag[k] = (PUTS == 3 && flag[k] > G0 + j -> flag[k] : G0 + j);
        j = 0; k = 0 }
    od
}
#endif
#endif

#ifdef DEATH
/* One process dies, at any point of its run (the step of Reaper that chooses
   it), or none: -DVICTIM=p, only process p may die. A choice made after the
   process ended is no death. */
active proctype Reaper()
{
end:
    if
#ifdef VICTIM
    :: kill = VICTIM
#else
    :: kill = 0
    :: kill = 1
    :: NP > 2 -> kill = 2
    :: NP > 3 -> kill = 3
    :: NP > 4 -> kill = 4
    :: NP > 5 -> kill = 5
    :: NP > 6 -> kill = 6
    :: NP > 7 -> kill = 7
#endif
    fi
}
#endif
