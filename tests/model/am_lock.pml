/*
 * am_lock.pml -- spin model of a PROPOSED protocol, not implemented in rdlm yet:
 * a home-served queue lock driven by active messages, for cross-node exclusive
 * locks on transports whose remote atomics the target process emulates anyway
 * (UCX over TCP). The model was written before the code; README.md.
 *
 * One lock with a home process H; NR requesters (3), each doing LOOPS (2)
 * acquire/release cycles. Messages travel on one channel per (sender, receiver)
 * pair: toH[p] (p -> H) and toP[p] (H -> p), buffered, FIFO per pair (UCX
 * delivers the active messages of one endpoint in order); the messages of
 * different senders interleave arbitrarily (H takes the head of any non-empty
 * toH[p]).
 *
 * H's state (touched only by its handler, one atomic step per message):
 * holder (hp = requester + 1, 0 none; hr its request id), a FIFO queue of
 * (requester, request id) (qp[], qr[], qn), the last token issued (tok).
 *
 * Requester p, cycle r (the request id: fresh per requester, 1 .. LOOPS; H keys
 * everything on (p, r)):
 *   acquire   send ACQ(r); wait for one answer about r:
 *               GRANT(r, t)  -> holds the lock with token t;
 *               or timeout (nondeterministic, a budget of TIMEOUTS in the run,
 *               possible only while GRANT(r) has not been received; it may be
 *               in flight): send CANCEL(r), wait for exactly one answer:
 *                 GRANT(r, t)   crossed the cancel: holds (late), releases normally;
 *                 CANCELLED(r)  never held.
 *   release   send REL(r) (posted: p does not wait) and no longer holds.
 * H:
 *   ACQ(p, r)     no holder: holder := (p, r); tok++; send GRANT(r, tok) to p.
 *                 else append (p, r) to the queue.
 *   REL(p, r)     only if holder == (p, r): if the queue is non-empty pop its
 *                 head (q, r'), holder := (q, r'), tok++, GRANT(r', tok) to q;
 *                 else holder := none. Else ignore it (a stale or duplicate
 *                 release): asserted impossible unless -DDOUBLE_RELEASE (then
 *                 counted in `ignored`).
 *   CANCEL(p, r)  (p, r) queued: remove it, send CANCELLED(r) to p.
 *                 holder == (p, r) (the GRANT crosses the cancel): nothing.
 *                 neither: asserted impossible (per-pair FIFO: ACQ(r) was
 *                 handled before, REL(r) comes after).
 *
 * Steps. A send is one step of its sender, a receive plus H's whole handler one
 * step of H (its sends into toP[] included: they never block, at most one
 * answer per request is ever in toP[p] in the correct protocol and CAPP is 2).
 * A requester never has more than 4 messages in flight to H: CANCEL(r), REL(r),
 * ACQ(r + 1), CANCEL(r + 1) (p then waits for an answer about r + 1, which H
 * sends only after consuming ACQ(r + 1); REL(r + 1) is sent only after it);
 * 5 with the planted duplicate REL. CAPH defaults to that bound and every
 * requester send asserts room (ROOM), so the channels never hold a sender back;
 * -DCAPH=3 fails that assertion (the bound is tight). -DFLOW drops the assertion:
 * a send then blocks while toH[p] is full (flow control; -DFLOW -DCAPH=2 passes).
 *
 * Properties (ghosts: incs = requesters in the critical section, lasttok = the
 * token of the last CS entry, rk[p] = rank of p's request among the ACQs H has
 * handled and not yet decided (granted or cancelled), 1 = the oldest;
 * gr[p] = the last request id H granted p; ent[p] = the last request id p
 * entered the CS with):
 *   (a) mutual exclusion: incs <= 1 (a holder counts from its GRANT's receipt
 *       to its REL's send).
 *   (b) tokens strictly increase in the order of CS entries (t > lasttok).
 *   (c) FIFO: H grants only the oldest undecided ACQ it has handled (rk == 1);
 *       a cancelled one is decided (leaves the ranks) when H removes it.
 *   (d) no invalid end state: every requester finishes all its cycles (every
 *       acquire ends with GRANT or CANCELLED); once all have finished and H has
 *       consumed everything: all channels empty, holder none, queue empty,
 *       incs == 0, nothing undecided (Final). H's do loop is an end state.
 *   (e) a CANCELLED request never entered the CS: H asserts it never granted
 *       (p, r) when it sends CANCELLED(r) (gr[p] != r), p asserts it never
 *       entered with r when it receives it (ent[p] != r).
 *   Every answer p receives is about its current request (rid == r).
 *
 * Knobs: -DNR (requesters, 3, at most 4), -DLOOPS (cycles each, 2), -DTIMEOUTS
 * (give-ups in the run; default NR * LOOPS: any acquire may give up),
 * -DCAPH / -DCAPP (channel capacities, 4 (5 with -DDOUBLE_RELEASE) / 2), -DFLOW,
 * -DDOUBLE_RELEASE (a planted client fault, budget 1 in the run: after a
 * release p sends a second REL(r) of the same request, either at once or, late,
 * right after its next ACQ (then H's holder may be (p, r+1))); H's holder
 * check must make it harmless.
 * -DREACH=1: assert false when a GRANT crosses a CANCEL (p receives GRANT
 * after sending CANCEL); =2: when CANCELLED is received; =3: when H ignores a
 * stale REL whose sender holds the lock with its next request (with
 * -DDOUBLE_RELEASE). Each must fail: the case is reached.
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_RELEASE_NO_POP        on REL, holder := none even with waiters queued:
 *                             a waiter is never granted -> (d).
 *   BUG_CANCEL_IGNORES_GRANT  after CANCEL, p takes any answer as "cancelled"
 *                             and does not release a crossing GRANT: the lock
 *                             leaks -> (d) (or (e): H granted, p thinks not).
 *   BUG_CANCEL_REMOVES_HOLDER H on CANCEL with holder == (p, r): holder :=
 *                             none and grants the next one, while p gets the
 *                             GRANT and enters -> (a). (H then counts the stale
 *                             RELs this makes instead of asserting on them.)
 *   BUG_NO_TOKEN_INC          H grants without tok++ -> (b).
 *   BUG_STALE_RELEASE         H on REL does not check holder == (p, r) (needs
 *                             -DDOUBLE_RELEASE: the duplicate REL releases
 *                             someone else's lock) -> (a).
 *   BUG_HOLDER_NO_RID         H on REL checks the holder's requester only, not
 *                             its request id (needs -DDOUBLE_RELEASE: a late
 *                             duplicate REL(r) releases p's lock for r + 1)
 *                             -> (a).
 * Without -DDOUBLE_RELEASE no stale REL is ever sent, and the last two are not
 * caught (expected: the check matters only for a faulty client).
 *
 * Result (README.md): the protocol as specified passes (a)-(e) in every
 * configuration searched; the crossing of a GRANT and a CANCEL is reached.
 */

#ifndef NR
#define NR 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef TIMEOUTS
#define TIMEOUTS (NR * LOOPS)       /* any acquire may give up */
#endif
#ifndef CAPH
#ifdef DOUBLE_RELEASE
#define CAPH 5
#else
#define CAPH 4
#endif
#endif
#ifndef CAPP
#define CAPP 2
#endif
#ifndef REACH
#define REACH 0
#endif
#if NR > 4
#error "Home's handler options are written out for at most 4 requesters"
#endif
#if defined(DOUBLE_RELEASE) || defined(BUG_CANCEL_REMOVES_HOLDER)
#define COUNT_STALE
#endif

mtype = { ACQ, REL, CANCEL, GRANT, CANCELLED };

chan toH[NR] = [CAPH] of { mtype, byte };         /* kind, request id */
chan toP[NR] = [CAPP] of { mtype, byte, byte };   /* kind, request id, token */

/* H's state */
byte hp, hr;                    /* holder: requester + 1 (0: none), its request */
byte qp[NR], qr[NR], qn;        /* FIFO queue of (requester, request) */
byte tok;                       /* last token issued */

byte timeouts = TIMEOUTS;
byte done;                      /* requesters that finished */
#ifdef DOUBLE_RELEASE
byte dups = 1;                  /* planted duplicate releases left */
#endif
#ifdef COUNT_STALE
byte ignored;                   /* stale RELs H ignored */
#endif

/* ghosts */
byte incs;                      /* requesters in the critical section (a) */
byte lasttok;                   /* token of the last CS entry (b) */
byte rk[NR], nund;              /* rank among undecided handled ACQs (c) */
byte gr[NR];                    /* last request id granted to p (e) */
byte ent[NR];                   /* last request id p entered the CS with (e) */

/* (c) request of q decided (granted or cancelled): leaves the ranks */
inline decide(q) {
    assert(rk[q] > 0);
    i = 0;
    do
    :: i < NR -> if :: rk[i] > rk[q] -> rk[i]-- :: else -> skip fi; i++
    :: else -> break
    od;
    rk[q] = 0; nund--; i = 0
}

/* H grants (q, rq): the oldest undecided (c), a fresh token */
inline grant(q, rq) {
    assert(rk[q] == 1);                                         /* (c) */
    decide(q);
    hp = q + 1; hr = rq;
#ifndef BUG_NO_TOKEN_INC
    tok++;
#endif
    gr[q] = rq;
    assert(nfull(toP[q]));
    toP[q]!GRANT, rq, tok
}

/* REL: pass the lock to the queue's head, or free it */
inline pass_on() {
#ifdef BUG_RELEASE_NO_POP
    hp = 0; hr = 0
#else
    if
    :: qn > 0 ->
        nq = qp[0]; nr = qr[0];
        i = 0;
        do
        :: i + 1 < qn -> qp[i] = qp[i + 1]; qr[i] = qr[i + 1]; i++
        :: else -> break
        od;
        qn--; qp[qn] = 0; qr[qn] = 0; i = 0;
        grant(nq, nr); nq = 0; nr = 0
    :: else -> hp = 0; hr = 0
    fi
#endif
}

#if defined(BUG_STALE_RELEASE)
#define IS_HOLDER (true)
#elif defined(BUG_HOLDER_NO_RID)
#define IS_HOLDER (hp == p + 1)
#else
#define IS_HOLDER (hp == p + 1 && hr == r)
#endif

/* H's handler for message (m, r) from requester p: one step */
inline handle() {
    if
    :: m == ACQ ->
        nund++; rk[p] = nund;                                   /* (c) */
        if
        :: hp == 0 -> grant(p, r)
        :: else -> qp[qn] = p; qr[qn] = r; qn++
        fi
    :: m == REL ->
        if
        :: IS_HOLDER -> pass_on()
        :: else ->
#ifdef COUNT_STALE
#if REACH == 3
            assert(hp != p + 1);    /* reach: the sender holds its next request */
#endif
            ignored++
#else
            assert(false)           /* a stale REL: impossible here */
#endif
        fi
    :: m == CANCEL ->
        /* find (p, r) in the queue */
        i = 0;
        do
        :: i < qn && !(qp[i] == p && qr[i] == r) -> i++
        :: else -> break
        od;
        if
        :: i < qn ->                                            /* queued */
            do
            :: i + 1 < qn -> qp[i] = qp[i + 1]; qr[i] = qr[i + 1]; i++
            :: else -> break
            od;
            qn--; qp[qn] = 0; qr[qn] = 0; i = 0;
            decide(p);
            assert(gr[p] != r);                                 /* (e) */
            assert(nfull(toP[p]));
            toP[p]!CANCELLED, r, 0
        :: else ->
            i = 0;
            assert(hp == p + 1 && hr == r);     /* neither: impossible */
#ifdef BUG_CANCEL_REMOVES_HOLDER
            pass_on()
#endif
        fi
    fi;
    m = 0; r = 0; p = 0
}

active proctype Home()
{
    mtype m;
    byte p, r, i, nq, nr;
end:
    do
    :: atomic { toH[0]?m, r -> p = 0; handle() }
#if NR > 1
    :: atomic { toH[1]?m, r -> p = 1; handle() }
#endif
#if NR > 2
    :: atomic { toH[2]?m, r -> p = 2; handle() }
#endif
#if NR > 3
    :: atomic { toH[3]?m, r -> p = 3; handle() }
#endif
    od
}

/* a requester's send never finds toH[p] full (CAPH is the most a requester
   can have in flight); -DFLOW with a smaller CAPH lets sends block instead */
#ifdef FLOW
#define ROOM skip
#else
#define ROOM assert(nfull(toH[me]))
#endif

active [NR] proctype Req()
{
    byte me = _pid - 1;         /* Home is pid 0 */
    byte r, rid, t;
    mtype m;
#ifdef DOUBLE_RELEASE
    byte late;                  /* a duplicate REL to send after the next ACQ */
#endif

    for (r : 1 .. LOOPS) {
        atomic { ROOM; toH[me]!ACQ, r };
#ifdef DOUBLE_RELEASE
        if
        :: atomic { late > 0 -> ROOM; toH[me]!REL, late; late = 0 }
        :: else -> skip
        fi;
#endif
        if
        :: atomic { toP[me]?m, rid, t ->
                    assert(m == GRANT && rid == r); rid = 0 }
        :: atomic { timeouts > 0 -> timeouts-- };
            atomic { ROOM; toH[me]!CANCEL, r };
            atomic {
                toP[me]?m, rid, t ->
                assert(rid == r); rid = 0;
                if
                :: m == GRANT ->
#if REACH == 1
                    assert(false);          /* reach: a GRANT crossed the CANCEL */
#endif
#ifdef BUG_CANCEL_IGNORES_GRANT
                    m = 0; t = 0; goto next /* bug: taken as cancelled */
#else
                    skip
#endif
                :: m == CANCELLED ->
#if REACH == 2
                    assert(false);          /* reach: a queued request cancelled */
#endif
                    assert(ent[me] != r);                       /* (e) */
                    m = 0; t = 0; goto next
                fi
            }
        fi;
        /* holds the lock with token t: enter the critical section */
        atomic {
            incs++; assert(incs == 1);                          /* (a) */
            assert(t > lasttok); lasttok = t;                   /* (b) */
            ent[me] = r; m = 0; t = 0
        };
        /* release: REL(r), posted */
        atomic { ROOM; toH[me]!REL, r; incs-- };
#ifdef DOUBLE_RELEASE
        if
        :: atomic { dups > 0 -> dups--; ROOM; toH[me]!REL, r }  /* at once */
        :: atomic { dups > 0 && r < LOOPS -> dups--; late = r } /* late */
        :: skip
        fi;
#endif
next:
        skip
    }
    atomic { done++; r = 0 }
}

#if NR == 1
#define TOH_EMPTY (len(toH[0]) == 0)
#elif NR == 2
#define TOH_EMPTY (len(toH[0]) == 0 && len(toH[1]) == 0)
#elif NR == 3
#define TOH_EMPTY (len(toH[0]) == 0 && len(toH[1]) == 0 && len(toH[2]) == 0)
#else
#define TOH_EMPTY (len(toH[0]) == 0 && len(toH[1]) == 0 && len(toH[2]) == 0 && \
                   len(toH[3]) == 0)
#endif

/* (d): once every requester finished and H consumed every message */
active proctype Final()
{
    byte i;
    atomic {
        done == NR && TOH_EMPTY ->
        assert(hp == 0 && qn == 0 && incs == 0 && nund == 0);
        for (i : 0 .. NR - 1) {
            assert(len(toP[i]) == 0 && rk[i] == 0)
        }
    }
}
