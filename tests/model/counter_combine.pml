/*
 * counter_combine.pml -- spin model of the node-level flat combining of a
 * cross-node counter (core/global/counter.c: rdlm_global_counter_fetch_add,
 * rdlm_global_combine) with the "withdraw" rule: a requester that finds the
 * combiner lock held on its first pass, and takes the node's bypass flag (one
 * withdrawer per node at a time), takes its request back (CAS PENDING -> 0)
 * and adds directly.
 *
 * One node, one counter. The home word H is remote; its fetch-add is one
 * atomic step that returns the old value. The node's entry has the combiner
 * lock L (0 free, else owner pid + 1). Every requester p has one segment slot:
 * creq[p] (0, PENDING, TAKEN, DONE), cdelta[p], cresult[p]. The model is
 * sequentially consistent (the release/acquire orders of counter.c).
 *
 * Requester p, fetch_add(d):
 *   post    cdelta[p] := d; creq[p] := PENDING
 *   loop    a  creq[p] == DONE: old := cresult[p]; creq[p] := 0; return old
 *           b  CAS(L, 0 -> p): combine (below); L := 0; loop
 *           c  withdraw, first pass only (the CAS in b failed: L held by
 *              another): CAS(bypass, 0 -> 1), else loop; then
 *              CAS(creq[p], PENDING -> 0); if it succeeds:
 *              old := fetch_add(H, d); bypass := 0; return old. If it fails,
 *              a combiner has TAKEN the request: bypass := 0; loop.
 *              (-DSCAN: the first proposal's gate instead of the flag: a scan
 *              of the other slots that must find none PENDING.)
 *           d  pause; loop
 *   combine (holding L)
 *           for each slot i: CAS(creq[i], PENDING -> TAKEN); on success
 *              total += cdelta[i]
 *           base := fetch_add(H, total)
 *           for each slot i, in the same order: if creq[i] == TAKEN:
 *              cresult[i] := base + prefix; prefix += cdelta[i];
 *              creq[i] := DONE
 * The home process (whose memory holds H) never posts: HOME direct adds, one
 * step each (a thread that finds its process's combine_lock taken does the
 * same). The withdraw's add is the same kind of direct add.
 *
 * Steps. Every load, store and CAS of a shared word is one step, except
 * where an access cannot be told apart by any other process from one done
 * together with its neighbour (in the correct protocol):
 *   - the post's store of cdelta with its store of PENDING (nobody loads
 *     cdelta[p] before it has seen PENDING);
 *   - a's load of cresult and its store of 0 with its load of DONE (cresult[p]
 *     is written only while creq[p] is TAKEN; DONE and 0 are the same to
 *     every other process: neither is PENDING nor TAKEN);
 *   - the combiner's load of cdelta[i] with its successful take, and the
 *     whole hand-out to one slot (the TAKEN load, the cresult store, the
 *     cdelta load, the DONE store) as one step (cdelta[i] does not change
 *     while creq[i] is PENDING or TAKEN; cresult[i] is read only after DONE).
 * The planted bugs that break those orders split the steps again. cresult[p]
 * is cleared when it has been read (a dead value; it keeps states apart).
 *
 * Pauses. A pass after the first in which a reads "not DONE" and b's CAS
 * fails changes nothing and is followed by the same pass: the model leaves
 * such passes out (stuttering). After its first pass a requester's b blocks
 * until L == 0 (the CAS succeeds) or until L != 0 and its request is DONE
 * (the CAS fails and a then reads DONE); a real run's later passes are the
 * model's with only such failed passes added (README.md). So a requester
 * that could never be served is stuck: an invalid end state.
 *
 * Deltas: request r (requester 0's k-th: r = k; requester p's: r = LOOPS0 +
 * (p - 1) * LOOPS + k; the home's k-th: NPREQ + k) adds r + 1, so that a load
 * of the wrong cdelta or results handed out in another order than the deltas
 * were summed show; -DUNIT: every delta 1.
 *
 * Properties (ghosts: rid[i] = the request posted in slot i; taken_m, wd_m,
 * added_m, served_m, done_m = the requests taken by a combiner, withdrawn,
 * added to H, marked DONE, returned; bits = the union of [old, old + delta)
 * over the returned fetch-adds):
 *   (a) every fetch-add is added to H exactly once (asserted at every add:
 *       not added before; at its return: added), marked DONE at most once
 *       and only if taken, returns once; no invalid end state: every process
 *       finishes all its fetch-adds.
 *   (b) the returned old values are distinct: the ranges [old, old + d) are
 *       disjoint (with -DUNIT: the old values are 0 .. n - 1); at the end H is
 *       the sum of all deltas and the ranges cover 0 .. H - 1.
 *   (c) a withdrawn request is never taken by a combiner, and a taken one is
 *       never withdrawn (asserted at the take and at the withdraw).
 *
 * Results (README.md): the protocol with the rule passes (a)-(c) in every
 * configuration searched, and so do WITHDRAW_ANY and SCAN below: the CAS
 * PENDING -> 0 against the combiner's CAS PENDING -> TAKEN alone makes it
 * safe; the first-pass rule and the gate (flag or scan) only decide how often it is used.
 *
 * Knobs: -DNP (requesters, 3), -DLOOPS0 (fetch-adds of requester 0, 2),
 * -DLOOPS (fetch-adds of each other requester, 1), -DHOME (direct adds of
 * the home process, 1; 0: no home process), -DUNIT (above). Variants:
 *   NO_WITHDRAW   the protocol without the new rule
 *   WITHDRAW_ANY  withdraw on any pass that finds L held, without the scan:
 *                 the CAS alone carries the safety
 *   SCAN          the first proposal: instead of the node-wide bypass flag
 *                 (the default, as counter.c ships it: the withdraw is tried
 *                 only by a requester that takes the flag, CAS 0 -> 1, cleared
 *                 after the direct add or the failed CAS), a scan of the other
 *                 slots, one load each, that must find none PENDING
 *   ALL_PASSES    every failed pass of b too (no blocking: a check of the
 *                 "Pauses" reduction for the assertions; a requester that is
 *                 never served then loops, which -DSAFETY does not report)
 *   REACH=n       not vacuous (each must fail): 1 a withdraw succeeds, 2 a
 *                 withdraw's CAS fails because a combiner took the request
 *                 after the scan (it was PENDING at the scan's last step;
 *                 with BYPASS: at the flag's CAS), 3 a batch of two or
 *                 more requests
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_WITHDRAW_STORE  the withdraw loads creq == PENDING and then stores 0
 *       (no CAS): a combiner takes the request in between -> (c), then (a)
 *   BUG_TAKE_STORE  the combiner loads creq == PENDING and then stores TAKEN
 *       (no CAS): the requester withdraws in between -> (c), then (a)
 *   BUG_WITHDRAW_AFTER_ADD  the requester adds directly first, then CASes
 *       PENDING -> 0 and returns whatever the CAS found -> (c), (a)
 *   BUG_DONE_BEFORE_RESULT  the combiner marks DONE before it writes cresult:
 *       the requester returns a stale result -> (b)
 *   BUG_PENDING_BEFORE_DELTA  the requester posts PENDING before it writes
 *       cdelta: a combiner sums the previous request's delta (0 for a first
 *       request) -> (b)
 */

#ifndef NP
#define NP 3
#endif
#ifndef LOOPS
#define LOOPS 1
#endif
#ifndef LOOPS0
#define LOOPS0 2
#endif
#ifndef HOME
#define HOME 1
#endif
#ifndef REACH
#define REACH 0
#endif

#define NPREQ (LOOPS0 + (NP - 1) * LOOPS)       /* the requesters' requests */
#define NREQ (NPREQ + HOME)
/* request ids: requester 0's k-th is k, requester p's (p > 0) k-th is
   LOOPS0 + (p - 1) * LOOPS + k, the home's k-th is NPREQ + k */
#define RID(p, k) ((p) == 0 -> (k) : LOOPS0 + ((p) - 1) * LOOPS + (k))
#ifdef UNIT
#define DELTA(r) 1
#define SUM NREQ
#else
#define DELTA(r) ((r) + 1)
#define SUM (NREQ * (NREQ + 1) / 2)
#endif
#if SUM > 30
#error "the ghost range mask is one int: the sum of the deltas must be at most 30"
#endif
#if NREQ > 15
#error "the ghost request masks are shorts: at most 15 requests"
#endif
#if HOME > 0
#define NPROCS (NP + 1)
#else
#define NPROCS NP
#endif

#define PENDING 1
#define DONE 2
#define TAKEN 3

/* The gate counter.c ships; -DSCAN, -DWITHDRAW_ANY and -DNO_WITHDRAW replace it. */
#if !defined(SCAN) && !defined(WITHDRAW_ANY) && !defined(NO_WITHDRAW)
#define BYPASS
#endif

#define BIT(r) (1 << (r))

byte H;                 /* the home word */
byte L;                 /* the combiner lock: 0 free, else owner pid + 1 */
byte creq[NP];
byte cdelta[NP];
byte cresult[NP];
byte finished;          /* processes that finished */
#ifdef BYPASS
byte bypass;            /* the node's withdraw flag */
#define UNBYPASS bypass = 0;    /* one step of its own */
#define AFTER_TAKEN taken_meanwhile
#else
#define UNBYPASS
#define AFTER_TAKEN loop
#endif

/* ghosts */
byte rid[NP];           /* the request posted in slot i */
short taken_m;          /* requests taken by a combiner */
short wd_m;             /* requests withdrawn */
short added_m;          /* requests added to H */
short served_m;         /* requests marked DONE */
short done_m;           /* requests returned */
int bits;               /* [old, old + delta) of every returned fetch-add */

/* request x is taken into the batch (c) */
#define TAKE_GHOST(x) \
    assert(!(wd_m & BIT(x)) && !(taken_m & BIT(x))); \
    taken_m = taken_m | BIT(x); batch = batch | BIT(x)

/* slot i's request is marked DONE (a) */
#define SERVE_GHOST(i) \
    assert((taken_m & BIT(rid[i])) && !(served_m & BIT(rid[i]))); \
    served_m = served_m | BIT(rid[i])

/* a direct add of request x (home, withdraw) (a) */
#define DIRECT_ADD(x, dd) \
    old = H; H = H + (dd); \
    assert(!(added_m & BIT(x))); added_m = added_m | BIT(x)

/* request x returns old (a, b) */
inline returns(x, dd)
{
    assert((added_m & BIT(x)) && !(done_m & BIT(x)));
    done_m = done_m | BIT(x);
    assert(old + (dd) <= SUM);
    j = old;
    do
    :: j < old + (dd) -> assert(!(bits & BIT(j))); bits = bits | BIT(j); j++
    :: else -> break
    od;
    j = 0; old = 0
}

proctype Req(byte me)
{
    byte k, r, d, old, j, i, total, base, prefix;
    short batch;
    bit first;
#ifdef BUG_TAKE_STORE
    byte sr;
    bit got;
#endif
#ifdef BUG_DONE_BEFORE_RESULT
    bit sv;
#endif
#if REACH == 2
    bit ps;     /* the request was still PENDING when the scan ended */
#define REACH2_MARK ps = (creq[me] == PENDING);
#define REACH2_CHECK assert(!ps);
#else
#define REACH2_MARK
#define REACH2_CHECK
#endif

    for (k : 0 .. (me == 0 -> LOOPS0 : LOOPS) - 1) {
        /* post */
#ifdef BUG_PENDING_BEFORE_DELTA
        atomic { r = RID(me, k); d = DELTA(r); creq[me] = PENDING; rid[me] = r; first = 1 };
        cdelta[me] = d;
#else
        atomic {
            r = RID(me, k); d = DELTA(r);
            cdelta[me] = d; creq[me] = PENDING; rid[me] = r; first = 1
        };
#endif
loop:
        /* a: served? (the load of cresult and the store of 0 with it: see
           the head comment) */
        atomic {
            if
            :: creq[me] == DONE ->
                old = cresult[me]; assert(served_m & BIT(r));
                cresult[me] = 0; creq[me] = 0; returns(r, d); goto next
            :: else
            fi
        };
        /* b: the CAS on L; after the first pass, only the passes that change
           something (see the head comment) */
        atomic {
            if
            :: L == 0 -> L = me + 1; goto combine
#if defined(NO_WITHDRAW)
            :: L != 0 && (first || creq[me] == DONE) -> first = 0; goto loop
#elif defined(WITHDRAW_ANY)
            :: L != 0 && creq[me] == DONE -> first = 0; goto loop
            :: L != 0 && creq[me] == PENDING -> first = 0
#else
            :: L != 0 && first -> first = 0
            :: L != 0 && !first && creq[me] == DONE -> goto loop
#endif
#ifdef ALL_PASSES
            :: L != 0 && !first -> first = 0; goto loop     /* any failed pass */
#endif
            fi
        };
#ifndef NO_WITHDRAW
        /* c: withdraw (first pass only; any pass with -DWITHDRAW_ANY) */
#if defined(BYPASS)
        atomic {
            if
            :: bypass == 0 -> REACH2_MARK bypass = 1
            :: else -> goto loop
            fi
        };
#elif !defined(WITHDRAW_ANY)
        /* the scan: is any other request pending? */
        j = 0;
        do
        :: j == NP -> REACH2_MARK break
        :: j == me -> j++
        :: j != NP && j != me && creq[j] == PENDING -> j = 0; goto loop
        :: j != NP && j != me && creq[j] != PENDING -> j++
        od;
        j = 0;
#endif
#if defined(BUG_WITHDRAW_AFTER_ADD)
        /* bug: add first, then withdraw, whatever the CAS finds */
        atomic { DIRECT_ADD(r, d) };
        atomic {
            if
            :: creq[me] == PENDING -> creq[me] = 0
            :: else -> skip
            fi;
            assert(!(taken_m & BIT(r))); wd_m = wd_m | BIT(r);
            returns(r, d)
        };
        UNBYPASS
        goto next;
#else
#if defined(BUG_WITHDRAW_STORE)
        /* bug: a load, then a plain store */
        if
        :: creq[me] == PENDING -> skip
        :: else -> goto AFTER_TAKEN
        fi;
        atomic {
            creq[me] = 0;
#else
        atomic {
            if
            :: creq[me] == PENDING -> creq[me] = 0
            :: else -> REACH2_CHECK goto AFTER_TAKEN
            fi;
#endif
            assert(!(taken_m & BIT(r))); wd_m = wd_m | BIT(r);
            assert(REACH != 1)
        };
        /* withdrawn: add directly */
        atomic { DIRECT_ADD(r, d); returns(r, d) };
        UNBYPASS
        goto next;
#ifdef BYPASS
taken_meanwhile:
        bypass = 0;
        goto loop;
#endif
#endif
#endif /* NO_WITHDRAW */

combine:
        /* holding L: take every pending request (the load of cdelta with
           the CAS: see the head comment) */
        i = 0;
        do
        :: i == NP -> break
        :: else ->
#ifdef BUG_TAKE_STORE
            /* bug: a load, then a plain store */
            atomic {
                if
                :: creq[i] == PENDING -> got = 1; sr = rid[i]
                :: else -> got = 0; i++
                fi
            };
            if
            :: got ->
                atomic {
                    creq[i] = TAKEN; TAKE_GHOST(sr); total = total + cdelta[i];
                    sr = 0; got = 0; i++
                }
            :: else
            fi
#else
            atomic {
                if
                :: creq[i] == PENDING ->
                    creq[i] = TAKEN; TAKE_GHOST(rid[i]); total = total + cdelta[i]
                :: else
                fi;
                i++
            }
#endif
        od;
        /* one fetch-add for the batch */
        atomic {
            base = H; H = H + total;
            assert((added_m & batch) == 0); added_m = added_m | batch;
#if REACH == 3
            assert((batch & (batch - 1)) == 0);
#endif
            batch = 0; total = 0; i = 0
        };
        /* hand out base + prefix, in slot order (one step per slot: see the
           head comment) */
        do
        :: i == NP -> break
        :: else ->
#ifdef BUG_DONE_BEFORE_RESULT
            /* bug: DONE first, then cresult */
            atomic {
                if
                :: creq[i] == TAKEN -> creq[i] = DONE; SERVE_GHOST(i); sv = 1
                :: else -> i++
                fi
            };
            if
            :: sv ->
                atomic { cresult[i] = base + prefix; prefix = prefix + cdelta[i]; sv = 0; i++ }
            :: else
            fi
#else
            atomic {
                if
                :: creq[i] == TAKEN ->
                    cresult[i] = base + prefix;
                    prefix = prefix + cdelta[i];
                    creq[i] = DONE; SERVE_GHOST(i)
                :: else
                fi;
                i++
            }
#endif
        od;
        atomic { L = 0; i = 0; base = 0; prefix = 0; first = 0 };
        goto loop;
next:
        atomic { r = 0; d = 0; first = 0 }
    }
    atomic { finished++; k = 0 }
}

#if HOME > 0
/* the home process: direct adds */
active proctype Home()
{
    byte k, r, old, j;

    for (k : 0 .. HOME - 1) {
        atomic { r = NPREQ + k; DIRECT_ADD(r, DELTA(r)); returns(r, DELTA(r)); r = 0 }
    }
    atomic { finished++; k = 0 }
}
#endif

init
{
    byte p;

    atomic {
        for (p : 0 .. NP - 1) {
            run Req(p)
        }
        p = 0
    }
    /* (a), (b) once everybody has finished */
    atomic {
        finished == NPROCS ->
        assert(H == SUM && bits == BIT(SUM) - 1);
        assert(added_m == BIT(NREQ) - 1 && done_m == BIT(NREQ) - 1);
        assert(served_m == taken_m && (served_m & wd_m) == 0);
        assert((served_m | wd_m) == BIT(NPREQ) - 1);
        assert(L == 0);
#ifdef BYPASS
        assert(bypass == 0);
#endif
        for (p : 0 .. NP - 1) {
            assert(creq[p] == 0)
        }
    }
}
