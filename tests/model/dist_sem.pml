/*
 * dist_sem.pml -- spin model of the cross-node semaphore (core/global/semaphore.c:
 * rdlm_global_sem_acquire, rdlm_sem_queue, rdlm_sem_take, rdlm_global_sem_release).
 * N permits; the home word P = waiters << 32 | taken; NP processes, each
 * acquiring k permits (1 .. KMAX, chosen by spin at every acquire) and releasing
 * them, LOOPS times.
 *
 * What a process does (every fetch_add on P is one step):
 *   acquire(k)
 *     fast   old := fetch_add(P, k); holds iff old.waiters == 0 &&
 *            old.taken + k <= N.
 *            Else undo and count as a waiter: fetch_add(P, WAITER - k)
 *            (taken -= k, waiters += 1, one operation).
 *     gates  the node's ticket lock, then the global queue lock W; or give up
 *            (a deadline, a try): fetch_add(P, -WAITER), return.
 *     take   old := fetch_add(P, k - WAITER) (taken += k, waiters -= 1);
 *            holds iff old.taken + k <= N: pass W on, release the node
 *            gate, return.
 *            Else undo: old := fetch_add(P, WAITER - k); old -= (k - WAITER)
 *            (the count without the own k, counted as a waiter); while
 *            old.taken + k > N: pause (or give up: pass W on, release the node
 *            gate, fetch_add(P, -WAITER), return), old := fetch_add(P, 0).
 *            Then take again.
 *   release(k)  fetch_add(P, -k).
 *
 * The word. P is kept as its two halves, two counters that every fetch_add
 * changes together in one step, as the one 64-bit fetch_add does. That is
 * exact as long as no half ever borrows from (or carries into) the other;
 * (e) checks the borrow at every fetch_add, and the carry cannot happen here
 * (taken <= N + NP * KMAX). -DTAKEN_BITS=b keeps taken as a b-bit half that
 * carries into and borrows from waiters, as the real 32-bit half does: with
 * N = 2^(b-1) - 1 (RDLM_SEM_PERMITS_MAX is 2^31 - 1) it shows what happens
 * when the transient sum of fast attempts passes 2^32 (README.md).
 *
 * The gates, abstractly: the node-local FIFO ticket lock (rdlm_ticket_acquire)
 * and the global queue lock W (rdlm_glock_acquire / _try, passed on with
 * rdlm_glock_pass) are ONE FIFO mutex here, a ticket lock (tnext, tserve,
 * tickets mod NP + 1). Why that loses nothing: both gates only serialise the
 * slow-path takers. A process holds both exactly while it runs rdlm_sem_take
 * and nothing else of the protocol (fast path, release, give-up) reads or
 * writes them; W's token is not used (passed on unchanged). So all that the
 * protocol on P can depend on is (i) at most one process runs the take loop
 * at a time (W alone gives that, glock.h) and (ii) each waiter at the gates
 * gets them once the processes ahead of it have left (both are FIFO). The
 * real order of entry (FIFO per node, then FIFO among the nodes' heads) is
 * one of the orders the model's ticket draws produce: a process draws its
 * ticket at any time after it registered, so any order of entry is reached.
 * A waiter that gives up while queued at either gate leaves no trace there
 * (ticket.c: a timed-out place; glock.h: "the place is abandoned, and the holder
 * passes over it"), so it is modelled as giving up before it draws a ticket.
 * OWNER_DEAD from a gate is treated as OK by the code and does not arise here
 * (no crashes).
 *
 * Polling. A poll (fetch_add 0) that finds too few permits changes nothing,
 * and the next one is the same step again: the model's poll is one step that
 * happens when k are free (a failed poll is a poll the search delays). So a
 * waiter that can never take is stuck at its poll: an invalid end state.
 * Deadlines: a budget of TIMEOUT give-ups in the run; any waiter, chosen by
 * spin, may spend it at the gates or at any pause of its poll loop (a try,
 * timeout 0, is the same: rdlm_glock_try fails or rdlm_global_poll_pause returns
 * BUSY at the first pause). A deadline is not checked before the first take
 * and not before a retake after an undo that saw room (as in the code).
 *
 * Interleaving is sequentially consistent: the home fetch_adds are atomic at
 * the home and each completes before the caller's next step.
 *
 * Properties (ghosts: held = permits held; reg = processes counted as waiting
 * by the protocol, i.e. registered and not between take and undo; tk = k of
 * the gate holder between its take and its undo, else 0):
 *   (a) safety: held <= N at every acquire that holds (fast path and take).
 *   (b) no invalid end state: every process finishes its LOOPS acquires
 *       (given-up ones return), nobody is stuck.
 *   (c) once all have finished: P.taken == 0 and P.waiters == 0 (the waiter
 *       count goes back to 0, after a give-up too), held == 0, the gates free.
 *   (d) no bypass: a fast path holds only while nobody is counted as waiting
 *       (reg == 0), and leaves room for the k of a taker in its window
 *       (held + tk <= N). The fast path reads the real word in its one step,
 *       so this holds by construction; checked anyway. -DSTRICT asserts more:
 *       nobody is in the slow path at all, the taker's window included
 *       (tk == 0): that fails with N = 2 (README.md).
 *   (e) no borrow: no fetch_add takes a half below 0 (the two counters are
 *       the word's halves exactly). Not with -DTAKEN_BITS.
 *
 * Results (README.md): semaphore.c passes (a)-(e) in every configuration
 * searched. -DSTRICT fails with N = 2: while the only waiter is between its
 * failed take and the undo, it is not counted, and a newcomer's fast path may
 * hold -- only when the waiter's k fit beside it (they are in taken), and the
 * waiter's undo then sees room and takes. -DTAKEN_BITS=3 -DN=3 -DKMAX=3 -DNP=4
 * fails (a): a holder of 3 and fast attempts of 3 and 2 in flight make taken 8,
 * which carries into waiters and leaves the taken half 0; a waiter then takes
 * beside the holder of all N. With 32 bits and N = 2^31 - 1: a holder of N and
 * attempts of N and 2 in flight.
 *
 * Not modelled: crashes (a waiter that dies leaves its count, and one that dies
 * between a fetch_add and its undo leaves k in taken, for good; a holder's
 * permits are not given back), transport errors (a fetch_add that fails leaves
 * it unknown whether it landed), closing (RDLM_ERR_CLOSED), fixing N at the
 * first open, rdlm_global_sem_available, the handle's count of held permits
 * (RDLM_ERR_NOT_OWNER), the gates' own protocols (lock_word.pml, dist_lock.pml,
 * glock_recovery.pml). A thread is a process here.
 *
 * Knobs: -DN (permits, 1), -DKMAX (k in 1 .. KMAX, 1), -DNP (processes, 3),
 * -DLOOPS (acquires each, 2), -DTIMEOUT (give-ups in the run; -DTIMEOUT alone
 * = 1; default 0), -DSTRICT, -DTAKEN_BITS (above).
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_FAST_IGNORES_WAITERS  the fast path holds on old.taken + k <= N alone:
 *       a newcomer passes a counted waiter -> (d).
 *   BUG_NO_UNDO  a failed fast attempt counts the waiter but keeps its k in
 *       taken: the k are lost for good -> (b).
 *   BUG_TIMEOUT_KEEPS_WAITER  a waiter that gives up does not remove its
 *       count (needs -DTIMEOUT) -> (c).
 *   BUG_TAKE_KEEPS_WAITER  the take adds k and leaves the waiter count
 *       (fetch_add of k, not k - WAITER) -> (c).
 *   BUG_RELEASE_WRONG  release subtracts k from the waiters half (-k << 32)
 *       -> (e).
 *   BUG_RELEASE_NONE  release does not give the k back -> (b).
 * BUG_TIMEOUT_KEEPS_WAITER without a deadline has nothing to do (not caught,
 * as expected).
 */

#ifndef N
#define N 1
#endif
#ifndef KMAX
#define KMAX 1
#endif
#ifndef NP
#define NP 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef TIMEOUT
#define TIMEOUT 0
#endif

#if KMAX > N
#error "k is at most N (rdlm_sem_check)"
#endif

#define MODT (NP + 1)                       /* tickets: at most NP outstanding */

/* P = waiters << 32 | taken */
byte taken, waiters;
/* the two gates, as one ticket lock */
byte tnext, tserve;

byte timeouts = TIMEOUT;
byte done;                                  /* processes that finished */

/* ghosts */
byte held;                                  /* permits held */
byte reg;                                   /* counted as waiting */
byte tk;                                    /* k of the taker in its window */

/* old := fetch_add(P, dw << 32 | dt) */
#ifdef TAKEN_BITS
#define TMOD (1 << TAKEN_BITS)
/* the b-bit taken half carries into and borrows from the waiters half
   (waiters wraps as a byte, as the 32-bit half would) */
#define FADD(dt, dw) \
    ot = taken; ow = waiters; \
    c = taken + (dt); \
    waiters = waiters + (dw) + (c >= TMOD -> 1 : 0) - (c < 0 -> 1 : 0); \
    taken = (c + TMOD) % TMOD; c = 0
#else
#define FADD(dt, dw) \
    ot = taken; ow = waiters; \
    assert(taken + (dt) >= 0 && waiters + (dw) >= 0);       /* (e) */ \
    taken = taken + (dt); waiters = waiters + (dw)
#endif

#ifdef BUG_FAST_IGNORES_WAITERS
#define FAST_HOLDS (ot + k <= N)
#else
#define FAST_HOLDS (ow == 0 && ot + k <= N)
#endif

/* k permits are now held (a) */
#define HOLD held = held + k; assert(held <= N)

#define GATE_RELEASE tserve = (tserve + 1) % MODT; my = 0

active [NP] proctype P()
{
    byte it, k, ot, ow, my;
#ifdef TAKEN_BITS
    short c;
#endif

    for (it : 1 .. LOOPS) {
        /* the fast path: old := fetch_add(P, k), k chosen by spin */
        atomic {
            k = 1;
            do
            :: k < KMAX -> k++
            :: break
            od;
            FADD(k, 0);
            if
            :: FAST_HOLDS ->
                HOLD;
                assert(reg == 0 && held + tk <= N);             /* (d) */
#ifdef STRICT
                assert(tk == 0);
#endif
                ot = 0; ow = 0; goto hold
            :: else -> skip
            fi
        };
        /* undo, counted as a waiter: fetch_add(P, WAITER - k) */
        atomic {
#ifdef BUG_NO_UNDO
            FADD(0, 1);                                 /* bug: k stays */
#else
            FADD(-k, 1);
#endif
            reg++; ot = 0; ow = 0
        };
        /* the gates: queue (a ticket), or give up there (deadline, try) */
        if
        :: atomic { my = tnext; tnext = (tnext + 1) % MODT }
        :: atomic { timeouts > 0 -> timeouts-- }; goto give_up
        fi;
take:   /* holding the gates: old := fetch_add(P, k - WAITER) */
        atomic {
            tserve == my ->
#ifdef BUG_TAKE_KEEPS_WAITER
            FADD(k, 0);                                 /* bug: still counted */
#else
            FADD(k, -1);
#endif
            reg--; tk = k;
            if
            :: ot + k <= N -> HOLD; tk = 0; ot = 0; ow = 0; goto taken_ok
            :: else -> skip
            fi
        };
        /* undo: old := fetch_add(P, WAITER - k); old -= k - WAITER; room? */
        atomic {
            FADD(-k, 1);
            reg++; tk = 0;
            ot = ot - k;
            if
            :: ot + k <= N -> ot = 0; ow = 0; goto take
            :: else -> ot = 0; ow = 0
            fi
        };
        /* poll P (fetch_add 0) until k are free, or give up at a pause */
        do
        :: atomic { taken + k <= N -> skip }; goto take
        :: atomic { timeouts > 0 -> timeouts-- }; break
        od;
        /* gave up holding the gates: pass W on, release the node gate */
        atomic { GATE_RELEASE };
give_up: /* stop counting: fetch_add(P, -WAITER) */
        atomic {
#ifndef BUG_TIMEOUT_KEEPS_WAITER
            FADD(0, -1);
#endif
            reg--; ot = 0; ow = 0; k = 0
        };
        goto next;
taken_ok: /* pass W on, release the node gate */
        atomic { GATE_RELEASE };
hold:   /* release: fetch_add(P, -k) */
        atomic {
            held = held - k;
#if defined(BUG_RELEASE_WRONG)
            FADD(0, -k);                                /* bug: the waiters half */
#elif !defined(BUG_RELEASE_NONE)
            FADD(-k, 0);
#endif
            ot = 0; ow = 0; k = 0
        };
next:
        skip
    }
    atomic { done++; it = 0 }
}

/* (c) at the end of a run where everybody finished */
active proctype Final()
{
    atomic {
        done == NP ->
        assert(taken == 0 && waiters == 0);
        assert(held == 0 && reg == 0 && tk == 0 && tnext == tserve)
    }
}
