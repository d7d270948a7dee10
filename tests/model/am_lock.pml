/*
 * am_lock.pml -- spin model of the home-served queue lock over active messages
 * as core/global implements it (commit af59cc2): amq.h (the protocol), amq.c
 * (the requester's side: rdlm_amq_request, rdlm_amq_answer, rdlm_amq_pass) and
 * amq_home.c (the home's side: rdlm_amq_home_request, rdlm_amq_cancel,
 * rdlm_amq_release, rdlm_amq_scan). README.md has the results.
 *
 * One lock, its home H (one record: holder, FIFO queue, last token) and NR (3)
 * requesters, each doing LOOPS (2) acquires. A requester stands for one queue
 * node q of one process; one lock needs only one queue node per process: while
 * its node holds the lock (p, or a node-mate after a cohort hand-off), p's next
 * acquire of the same lock waits for the node-local lock, which the node-mate
 * lets go only after it retired q.
 *
 * Since commit "amq: a queue node is free again once answered" the code retires
 * the queue node at its answer, a GRANT too, instead of after the REL (the home
 * keeps the holder (p, q) until the REL). With one lock that changes nothing here:
 * p claims q again only for its next acquire of the lock, which waits for the
 * node's release, after the REL was sent; and an IDLE node takes no answer (the
 * handler's CAS is from WAITING). With several locks, q may serve a request for
 * another lock while p's node holds this one: the home keeps queues per lock and
 * the holder in the lock's record, and REL names the lock, so that use of q is
 * another record's business; answers for it carry its own seq.
 *
 * Transport: no order at all. The transport promises none, so any message in
 * flight may be delivered next, whoever sent it and whenever. The messages to
 * H are a set per queue node: racq[p] / rcan[p] (bit s: an ACQ or TRY / a
 * CANCEL with seq s in flight; rtry[p] bit s: that request is a TRY) and
 * rrel[p] (the token of a REL for p's queue node in flight, 0: none). H takes
 * any one of them from any requester (Home, take()). The answers to p are a
 * set of two slots (ak/aq/at[2p], [2p + 1]); p's handler takes either (Ans).
 * A set is canonical (two orders of sending make one state), which keeps the
 * search small, and it allows every order a FIFO channel would: what passes
 * here passes with per-pair FIFO too.
 *
 * Requester p (Req), acquire u (amq.c):
 *   claim      its queue node IDLE -> WAITING (rdlm_glock_claim);
 *   request    seq[p]++ (amq_seq[q]: fetch_add + 1) and send ACQ(seq), or
 *              TRY(seq) (requester TRIER, a budget of TRIES in the run);
 *   wait       until the node's state is not WAITING; or, while it is
 *              WAITING, give up (a budget of TIMEOUTS in the run: the deadline,
 *              RDLM_ERR_CLOSED, or a TRY's 10 s answer wait): send CANCEL(seq)
 *              and wait for exactly one answer: the GRANT that crossed the
 *              cancel (p holds, late, and releases normally), CANCELLED, or
 *              for a TRY the BUSY H sent before the cancel came;
 *   outcome    a token: p enters the critical section; BUSY, CANCELLED,
 *              DEAD: retire (IDLE), the acquire ends without the lock;
 *   release    (rdlm_amq_pass) either
 *              - p sends REL(p, t) and retires its node at once (IDLE); or
 *              - a cohort hand-off (requester MATER, a budget of MATES): the
 *                lock passes to a node-mate inside the node, which enters with
 *                the node's next token t + 1, sends REL(p, t + 1) (rank and
 *                queue node of p, the token it used last) and retires p's
 *                queue node (rdlm_global_q_set_state IDLE), in three steps;
 *                p waits meanwhile (for the node-local lock);
 *              - or (-DDEATH, once in the run) p dies holding: nothing is sent.
 *              p's node is IDLE then and may be claimed for p's next acquire
 *              (a new seq) while the REL is still in flight.
 * Answer handler (Ans[p]: p's progress, at any time): take an answer; drop it
 *   unless its seq == seq[p]; CAS the state WAITING -> token (GRANT) or
 *   REFUSED(kind) (else drop it: "a second answer").
 * H (one atomic step per message: the handler runs under h->lock; its answer,
 *   at most one per message, goes to the outbox and is sent later: the model
 *   puts it in flight at once, delivery in any order covers the outbox's
 *   delay). Per queue node p: lseq[p] (last_seq), qd[p] (queued); the record:
 *   hold (holder's queue node + 1; 0: free), the queue linked as amq_home.c
 *   links it (head, tail, nxt[]: entries + 1), htok (the last token).
 *   ACQ/TRY(s)  s not newer than lseq[p]: stale (its CANCEL came first):
 *               dropped. Else lseq[p] := s; free: grant; held: TRY -> BUSY,
 *               ACQ -> append p. (p still queued: amq_home.c unlinks the older
 *               request, "a bug"; asserted never to happen.)
 *   CANCEL(s)   newer than lseq[p] (its ACQ not seen yet): lseq[p] := s and
 *               CANCELLED at once (the ACQ, when it comes, is stale); s ==
 *               lseq[p] and queued: unlink, CANCELLED; otherwise (granted --
 *               the GRANT crosses the cancel --, answered BUSY, or older than
 *               lseq[p]): nothing.
 *   REL(p, t)   only if hold == p + 1 (rank and queue node; no seq): htok :=
 *               max(htok, t); the queue's head w, if any, is unlinked and
 *               granted with lseq[w]; else the lock is free. Else ignored.
 *   grant       hold := w + 1; htok++ (rdlm_glock_first_token); GRANT(lseq[w],
 *               htok) to w.
 *   scan        (-DDEATH; rdlm_amq_flush every 100 ms, here an option of H
 *               whenever it applies) the holder's process died and the queue
 *               is not empty: unlink every waiter and answer it DEAD. Without
 *               a lease the dead holder keeps the lock: later ACQs queue and
 *               are refused in turn, TRYs are BUSY.
 *
 * Why REL needs no seq ((h) checks it). A REL names the queue node that holds,
 * not the use. p's node is retired once the REL is sent, so p's next use s'
 * may reach H first; but H's holder is p (in its use s) until that REL is
 * handled, so ACQ(s') queues behind it (a TRY(s') gets BUSY): s' cannot be
 * granted before the REL of s is handled, which therefore finds p holding in
 * use s. Every grant is followed by exactly one REL (or a death), so a REL
 * never finds a later use of its queue node holding -- unless a client sent
 * two RELs for one grant (-DDOUBLE_RELEASE: a fault the code cannot make).
 *
 * Why the REL's sender makes no difference to the order: with no delivery
 * order, p's own REL races with p's next ACQ just as a node-mate's does (with
 * per-pair FIFO only the node-mate's could be overtaken). For the same reason
 * it does not matter whether a releaser retires q before or after sending the
 * REL: a REL sent late is a REL delivered late.
 *
 * Steps. A send is one step of its sender, together with the sender's next
 * local action where no other process can tell them apart: p's REL with its
 * retire (p's state is read only by p and by Ans, and no answer is in flight
 * to p then); the claim with the seq bump and the request, and the handler's
 * seq check with its CAS -- both sound because no answer is ever in flight to
 * a queue node when it is claimed (asserted at the claim, (g)). -DSPLIT
 * splits both as the code has them: the claim, then the bump and send; the
 * seq check, then the CAS. H's whole handler, its answer included, is one
 * step.
 *
 * Properties (ghosts: incs = processes in the critical section, lasttok = the
 * token of the last entry, use[p] = claims of p's node so far, ent[p] /
 * grb[p] = bit s: p entered / H granted p's use s, rk[p] = rank among the
 * queued (1 = oldest), hu = the use H's holder holds by, relu[p] = the use
 * the REL in flight releases, nmsg = messages in flight):
 *   (a) mutual exclusion: incs <= 1 (a holder, or its node-mate after a
 *       hand-off, counts from the CAS of its GRANT to the send of its REL).
 *   (b) tokens strictly increase across critical-section entries, the
 *       node-mate's (t + 1) included.
 *   (c) FIFO: H grants from its queue only the oldest (rk == 1), and grants
 *       at once only with an empty queue (a queue implies a holder, as the
 *       scan assumes).
 *   (d) no invalid end state: every acquire ends (granted, cancelled, busy or
 *       dead); at the end (Final) nothing is in flight, no holder (or the dead
 *       one), the queue empty, nothing queued, every queue node IDLE.
 *   (e) a refused request (BUSY, CANCELLED, DEAD) was never granted (H), and
 *       never entered the critical section (p).
 *   (f) no answer is ever applied to a later use of a queue node: when Ans
 *       writes an answer into the state, its seq is the current use.
 *   (g) H sends an answer only to a queue node WAITING for it, never a second
 *       one while one is in flight, and nothing is in flight to a queue node
 *       when it is claimed: amq_home.c's outbox (size x QNODES entries) never
 *       overflows, and an answer's seq check never finds an earlier use's.
 *   (h) a REL that passes H's holder check releases the use that holds (hu
 *       == relu), and a queue node never has two RELs in flight.
 *   Also asserted: a stale REL never reaches H (except -DDOUBLE_RELEASE); an
 *   ACQ never comes from a queue node still queued.
 *
 * Knobs: -DNR (requesters, 3, at most 4), -DLOOPS (acquires each, 2, at most
 * 4), -DTIMEOUTS (give-ups in the run, 1), -DTRIES (TRYs, 1, by requester
 * TRIER = 0), -DMATES (cohort hand-offs, 1, by requester MATER = NR - 1;
 * requesters are alike, so fixing who saves their permutations), -DDEATH (a
 * holder may die, once), -DSPLIT (above). Faults the code does not make, to
 * show what a check is for: -DDOUBLE_RELEASE (once in the run p sends a
 * second REL right after its REL; harmless only if p does not hold again
 * before it lands: -DLOOPS=1), -DDUP_ANSWER (once in the run an answer is
 * delivered twice).
 * -DREACH=n asserts false when a case is reached (each must fail):
 *   1 a CANCEL reaches H before its ACQ (H answers CANCELLED at once);
 *   2 a GRANT crosses a CANCEL (p gets GRANT after sending CANCEL);
 *   3 a node-mate's REL is overtaken: H queues p's next ACQ behind p's own
 *     queue node, which still holds through the node-mate;
 *   4 H drops a stale ACQ (its CANCEL came first);
 *   5 H ignores a stale CANCEL (its GRANT crossed it and p asks again);
 *   6 a TRY's cancel is answered BUSY;
 *   7 (-DDEATH) a waiter gets DEAD;
 *   8 a TRY is refused BUSY while the holder is its own queue node (its own
 *     REL still in flight).
 *
 * Planted bugs (-DBUG_...), each a line of amq.c / amq_home.c done wrong:
 *   ANSWER_NO_SEQ       rdlm_amq_answer without the seq check (caught only
 *                       with -DDUP_ANSWER: see (g)).
 *   SEQ_OLD             a request carries fetch_add's old value (no + 1).
 *   NO_STALE_DROP       H serves an ACQ/TRY not newer than lseq.
 *   CANCEL_KEEPS_SEQ    a CANCEL newer than lseq answers CANCELLED without
 *                       lseq := s: its ACQ, when it comes, is served.
 *   CANCEL_ANY_SEQ      a CANCEL unlinks its queue node whatever the seq.
 *   CANCEL_RELEASES_HOLDER  a CANCEL of the holding use frees the lock.
 *   CANCEL_NO_WAIT      the requester retires at once after its CANCEL.
 *   REUSE_IMPLIES_RELEASED  H takes an ACQ from the holding queue node as
 *                       proof that its REL was handled, and frees the lock.
 *   REL_NO_HOLDER       REL without the holder check (with -DDOUBLE_RELEASE).
 *   REL_IGNORES_TOKEN   H does not raise its token to the REL's.
 *   NO_TOKEN_INC        grant without token increment.
 *   UNLINK_NO_TAIL      unlink does not move the tail back.
 *   ENQUEUE_HEAD        enqueue links at the head.
 */

#ifndef NR
#define NR 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1                  /* give-ups in the run */
#endif
#ifndef TRIES
#define TRIES 1
#endif
#ifndef MATES
#define MATES 1
#endif
#ifndef REACH
#define REACH 0
#endif
/* who may send a TRY, who may hand the lock to a node-mate */
#ifndef TRIER
#define TRIER 0
#endif
#ifndef MATER
#define MATER (NR - 1)
#endif
#if NR > 4 || LOOPS > 4
#error "Home's options are written out for at most 4 requesters and 4 uses"
#endif

/* queue node states (IDLE, WAITING, REFUSED(kind), granted) and answer kinds */
#define IDLE      0
#define WAITING   1
#define BUSY      2
#define CANCELLED 3
#define DEAD      4
#define GRANT     5                 /* as a state: granted, its token in stok[p] */

#define BIT(s) (1 << (s))           /* seq s in a request set */

/* ---- the requesters' side (amq.c) -------------------------------------------------- */
byte st[NR];                        /* queue node state */
byte stok[NR];                      /* its token when granted */
byte seq[NR];                       /* amq_seq[q]: the node's use count */

/* ---- in flight ------------------------------------------------------------------- */
byte racq[NR], rtry[NR], rcan[NR];  /* to H: ACQ-or-TRY / TRY / CANCEL, bit per seq */
byte rrel[NR];                      /* to H: REL for p's node, its token (0: none) */
byte ak[2 * NR], aq[2 * NR], at[2 * NR];  /* to p: answer kind (0: empty), seq, token */
#ifdef DOUBLE_RELEASE
byte rdup[NR];                      /* a second REL of one grant, its token */
byte dups = 1;
#endif

/* ---- H (amq_home.c) -------------------------------------------------------------- */
byte hold;                          /* holder's queue node + 1; 0: free */
byte head, tail, nxt[NR];           /* the queue: entries + 1 */
byte lseq[NR];                      /* last_seq */
bit qd[NR];                         /* queued */
byte htok;                          /* the last token issued */
#ifdef DUP_ANSWER
byte dupans = 1;                    /* answers delivered twice (a fault) */
#endif
#ifdef DEATH
bit dead[NR];
byte deaths = 1;
#endif

byte timeouts = TIMEOUTS, tries = TRIES, mates = MATES;
byte done;                          /* requesters that finished */

/* ---- ghosts ------------------------------------------------------------------------ */
byte incs, lasttok;                 /* (a), (b) */
byte rk[NR], nq;                    /* (c): rank among queued, number queued */
byte use[NR];                       /* (f): uses of p's node so far */
byte ent[NR], grb[NR];              /* (e): bit s: entered / granted with seq s */
byte hu;                            /* (h): the use H's holder holds by */
byte relu[NR];                      /* (h): the use the REL in flight releases */
bit relm[NR];                       /* REACH 3: that REL was sent by a node-mate */
#ifdef DOUBLE_RELEASE
byte dupu[NR];
#endif
byte nmsg;                          /* messages in flight */

/* an answer of kind k about seq s with token t, H -> w (rdlm_amq_out) */
inline answer(w, k, s, t) {
#ifndef DUP_ANSWER
    assert(ak[2 * w] == 0 && ak[2 * w + 1] == 0);               /* (g) */
#endif
    assert(ak[2 * w + 1] == 0);                 /* room */
    assert(st[w] == WAITING);                                   /* (g) */
    if
    :: ak[2 * w] == 0 -> ak[2 * w] = k; aq[2 * w] = s; at[2 * w] = t
    :: else -> ak[2 * w + 1] = k; aq[2 * w + 1] = s; at[2 * w + 1] = t
    fi;
    nmsg++
#ifdef DUP_ANSWER
    ; if
    :: dupans > 0 && ak[2 * w + 1] == 0 ->     /* delivered twice */
        dupans--;
        ak[2 * w + 1] = k; aq[2 * w + 1] = s; at[2 * w + 1] = t; nmsg++
    :: true -> skip
    fi
#endif
}

/* (c) waiter w leaves the queue: the ranks behind it move up */
inline decide(w) {
    assert(rk[w] > 0);
    i = 0;
    do
    :: i < NR -> if :: rk[i] > rk[w] -> rk[i]-- :: else -> skip fi; i++
    :: else -> break
    od;
    rk[w] = 0; nq--; i = 0
}

/* The answer of H's handler (at most one per message), sent at its end: to
   ow, kind ob (0: none), seq os, token ot (one copy of answer() in pan) */
inline out(w, k, s, t) {
    assert(ob == 0);
    ow = w; ob = k; os = s; ot = t
}
inline flush() {
    if
    :: ob != 0 -> answer(ow, ob, os, ot); ow = 0; ob = 0; os = 0; ot = 0
    :: else -> skip
    fi
}

/* rdlm_amq_grant: w holds, with its request seq s */
inline grant(w, s) {
    hold = w + 1; hu = s;
#ifndef BUG_NO_TOKEN_INC
    htok++;
#endif
    grb[w] = grb[w] | BIT(s);
    out(w, GRANT, s, htok)
}

/* rdlm_amq_refuse (BUSY, CANCELLED, DEAD) */
inline refuse(w, s, k) {
    assert((grb[w] & BIT(s)) == 0);                             /* (e) */
    out(w, k, s, 0)
}

/* rdlm_amq_enqueue */
inline enqueue(w) {
    nxt[w] = 0; qd[w] = 1;
#ifdef BUG_ENQUEUE_HEAD
    nxt[w] = head; head = w + 1;
    if
    :: tail == 0 -> tail = w + 1
    :: else -> skip
    fi;
#else
    if
    :: tail != 0 -> nxt[tail - 1] = w + 1
    :: else -> head = w + 1
    fi;
    tail = w + 1;
#endif
    nq++; rk[w] = nq
}

/* rdlm_amq_unlink: take w out of the queue (ok: it was there) */
inline unlink(w) {
    prev = 0; cur = head;
    do
    :: cur != 0 && cur != w + 1 -> prev = cur; cur = nxt[cur - 1]
    :: else -> break
    od;
    if
    :: cur == 0 -> ok = 0
    :: else ->
        if
        :: prev == 0 -> head = nxt[w]
        :: else -> nxt[prev - 1] = nxt[w]
        fi;
#ifndef BUG_UNLINK_NO_TAIL
        if
        :: tail == w + 1 -> tail = prev
        :: else -> skip
        fi;
#endif
        nxt[w] = 0; qd[w] = 0; ok = 1;
        decide(w)
    fi;
    prev = 0; cur = 0
}

/* the holder's release (rdlm_amq_release after its holder check), token t */
inline pass_on(t) {
#ifndef BUG_REL_IGNORES_TOKEN
    if
    :: t > htok -> htok = t
    :: else -> skip
    fi;
#endif
    hold = 0; hu = 0;
    if
    :: head != 0 ->
        w = head - 1;
        assert(rk[w] == 1);                                     /* (c) */
        unlink(w);
        assert(ok);
        grant(w, lseq[w])
    :: else -> skip
    fi;
    w = 0
}

/* rdlm_amq_home_request, ACQ or TRY(s) from p (k: TRY) */
inline h_acquire() {
    ok = (s <= lseq[p]);                        /* not newer: stale */
#if REACH == 4
    assert(!ok);                                /* reach: a stale ACQ */
#endif
#ifdef BUG_NO_STALE_DROP
    ok = 0;
#endif
    if
    :: ok -> ok = 0                             /* dropped */
    :: else ->
        assert(!qd[p]);         /* asked again while queued: never */
        lseq[p] = s;
#ifdef BUG_REUSE_IMPLIES_RELEASED
        if
        :: hold == p + 1 && !k -> pass_on(0)    /* "its REL was handled" */
        :: else -> skip
        fi;
#endif
        if
        :: hold == 0 ->
            assert(head == 0);                                  /* (c) */
            grant(p, s)
        :: hold != 0 && k ->                    /* TRY */
#if REACH == 8
            assert(hold != p + 1);      /* reach: BUSY by its own REL in flight */
#endif
            refuse(p, s, BUSY)
        :: hold != 0 && !k ->
#if REACH == 3
            assert(!(hold == p + 1 && relm[p]));  /* reach: a mate's REL overtaken */
#endif
            enqueue(p)
        fi
    fi
}

/* rdlm_amq_cancel, CANCEL(s) from p */
inline h_cancel() {
    if
    :: s > lseq[p] ->                           /* before its request */
#if REACH == 1
        assert(false);                          /* reach: CANCEL before its ACQ */
#endif
#ifndef BUG_CANCEL_KEEPS_SEQ
        lseq[p] = s;
#endif
        refuse(p, s, CANCELLED)
#ifdef BUG_CANCEL_ANY_SEQ
    :: s <= lseq[p] && qd[p] ->
#else
    :: s == lseq[p] && qd[p] ->
#endif
        unlink(p);
        assert(ok);
        refuse(p, s, CANCELLED)
#ifdef BUG_CANCEL_RELEASES_HOLDER
    :: s == lseq[p] && !qd[p] && hold == p + 1 ->
        pass_on(0)
#endif
    :: else ->                                  /* granted, answered, or stale */
#if REACH == 5
        assert(s == lseq[p]);                   /* reach: a stale CANCEL */
#endif
        skip
    fi
}

/* rdlm_amq_release: REL(p, t) for the use u (ghost) */
inline h_release(t, u) {
#ifdef BUG_REL_NO_HOLDER
    if
    :: true ->
#else
    if
    :: hold == p + 1 ->
#endif
        /* releasing a free lock changes nothing; else it must be p in use u */
        assert(hold == 0 || (hold == p + 1 && hu == u));         /* (h) */
        pass_on(t)
    :: else ->
#ifndef DOUBLE_RELEASE
        assert(false);          /* a stale REL: never from a correct client */
#endif
        skip
    fi
}

/* H takes any one message of p's in flight (c: 0 ACQ/TRY, 1 CANCEL, 2 REL, 3 the
   second REL) and handles it */
inline take() {
    if
    :: racq[p] & BIT(0) -> c = 0; s = 0
    :: racq[p] & BIT(1) -> c = 0; s = 1
    :: racq[p] & BIT(2) -> c = 0; s = 2
    :: racq[p] & BIT(3) -> c = 0; s = 3
    :: racq[p] & BIT(4) -> c = 0; s = 4
    :: rcan[p] & BIT(0) -> c = 1; s = 0
    :: rcan[p] & BIT(1) -> c = 1; s = 1
    :: rcan[p] & BIT(2) -> c = 1; s = 2
    :: rcan[p] & BIT(3) -> c = 1; s = 3
    :: rcan[p] & BIT(4) -> c = 1; s = 4
    :: rrel[p] != 0 -> c = 2
#ifdef DOUBLE_RELEASE
    :: rdup[p] != 0 -> c = 3
#endif
    fi;
    nmsg--;
    if
    :: c == 0 ->
        k = (rtry[p] & BIT(s)) != 0;
        racq[p] = racq[p] & ~BIT(s); rtry[p] = rtry[p] & ~BIT(s);
        h_acquire()
    :: c == 1 ->
        rcan[p] = rcan[p] & ~BIT(s);
        h_cancel()
    :: c == 2 ->
        t = rrel[p]; s = relu[p];
        rrel[p] = 0; relu[p] = 0; relm[p] = 0;
        h_release(t, s)
#ifdef DOUBLE_RELEASE
    :: c == 3 ->
        t = rdup[p]; s = dupu[p];
        rdup[p] = 0; dupu[p] = 0;
        h_release(t, s)
#endif
    fi;
    flush();
    c = 0; s = 0; k = 0; t = 0
}

#define PENDING(p) (racq[p] != 0 || rcan[p] != 0 || rrel[p] != 0 || PENDING_DUP(p))
#ifdef DOUBLE_RELEASE
#define PENDING_DUP(p) (rdup[p] != 0)
#else
#define PENDING_DUP(p) false
#endif

#ifdef DEATH
/* rdlm_amq_scan: the holder died; every waiter gives up */
inline scan() {
    do
    :: head != 0 ->
        w = head - 1;
        unlink(w);
        refuse(w, lseq[w], DEAD);
        flush()
    :: else -> break
    od;
    w = 0
}
#endif

active proctype Home()
{
    byte p, c, s, t, w, i, prev, cur;
    byte ow, ob, os, ot;            /* the handler's answer */
    bit k, ok;
end:
    do
    :: atomic {
        if
        :: PENDING(0) -> p = 0
#if NR > 1
        :: PENDING(1) -> p = 1
#endif
#if NR > 2
        :: PENDING(2) -> p = 2
#endif
#if NR > 3
        :: PENDING(3) -> p = 3
#endif
        fi;
        take(); p = 0
       }
#ifdef DEATH
    :: atomic { hold != 0 && dead[hold - 1] && head != 0 -> scan() }
#endif
    od
}

#ifdef BUG_SEQ_OLD
#define REQSEQ (seq[me] - 1)        /* fetch_add's old value */
#else
#define REQSEQ seq[me]
#endif

/* the acquirer of queue node me (and, after a cohort hand-off, its node-mate) */
active [NR] proctype Req()
{
    byte me = _pid - 1;             /* Home is pid 0 */
    byte u;
    bit try;

    for (u : 1 .. LOOPS) {
        /* rdlm_glock_claim */
        atomic {
            assert(st[me] == IDLE); st[me] = WAITING; use[me]++;
#ifndef DUP_ANSWER
            assert(ak[2 * me] == 0);            /* (g): nothing in flight to p */
#endif
#ifdef SPLIT
        };
        atomic {
#endif
            /* rdlm_amq_request: m.seq = fetch_add(amq_seq) + 1; send */
            seq[me]++;
            if
            :: tries > 0 && me == TRIER -> tries--; try = 1
            :: true -> try = 0
            fi;
            assert((racq[me] & BIT(REQSEQ)) == 0);
            racq[me] = racq[me] | BIT(REQSEQ);
            if
            :: try -> rtry[me] = rtry[me] | BIT(REQSEQ); try = 0
            :: else -> skip
            fi;
            nmsg++
        };
        if
        :: st[me] != WAITING
        :: atomic { st[me] == WAITING && timeouts > 0 -> timeouts-- };
            /* gave up: CANCEL; its answer is CANCELLED, BUSY or the GRANT */
            atomic {
                assert((rcan[me] & BIT(REQSEQ)) == 0);
                rcan[me] = rcan[me] | BIT(REQSEQ); nmsg++
#ifdef BUG_CANCEL_NO_WAIT
                ; if
                :: st[me] == WAITING -> st[me] = IDLE; goto next
                :: else -> skip
                fi
#endif
            };
            st[me] != WAITING;
#if REACH == 2
            assert(st[me] != GRANT);            /* reach: a GRANT crossed the CANCEL */
#endif
#if REACH == 6
            assert(st[me] != BUSY);             /* reach: a TRY's cancel answered BUSY */
#endif
            skip
        fi;
        /* rdlm_amq_outcome */
        if
        :: st[me] == GRANT -> skip
        :: else ->
#if REACH == 7
            assert(st[me] != DEAD);             /* reach: DEAD */
#endif
            atomic {
                assert((ent[me] & BIT(u)) == 0);                /* (e) */
                st[me] = IDLE; stok[me] = 0
            };
            goto next
        fi;
        /* the critical section, token stok */
        atomic {
            incs++; assert(incs == 1);                          /* (a) */
            assert(stok[me] > lasttok); lasttok = stok[me];     /* (b) */
            ent[me] = ent[me] | BIT(u)
        };
        /* rdlm_amq_pass: REL(rank, q, token), then the node is IDLE */
        if
        :: atomic {
            incs--;
            assert(rrel[me] == 0);                              /* (h) */
            rrel[me] = stok[me]; relu[me] = u; nmsg++;
            st[me] = IDLE; stok[me] = 0
#ifdef DOUBLE_RELEASE
            ; if
            :: dups > 0 -> dups--;              /* a faulty client: REL again */
                rdup[me] = rrel[me]; dupu[me] = u; nmsg++
            :: true -> skip
            fi
#endif
           }
        :: atomic {
            mates > 0 && me == MATER -> mates--;
            /* cohort hand-off: the node-mate enters with the node's next token */
            incs--; incs++; assert(incs == 1);                  /* (a) */
            stok[me]++;
            assert(stok[me] > lasttok); lasttok = stok[me]      /* (b) */
           };
            atomic {                            /* the node-mate's REL */
                incs--;
                assert(rrel[me] == 0);                          /* (h) */
                rrel[me] = stok[me]; relu[me] = u; relm[me] = 1; nmsg++
            };
            atomic { st[me] = IDLE; stok[me] = 0 }      /* and its retire of q */
#ifdef DEATH
        :: atomic { deaths > 0 -> deaths--; dead[me] = 1; incs-- };
            goto died
#endif
        fi;
next:
        skip
    }
#ifdef DEATH
died:
#endif
    atomic { done++; u = 0 }
}

/* rdlm_amq_answer for p's answers: take either slot; the seq check, then the CAS */
active [NR] proctype Ans()
{
    byte me = _pid - 1 - NR;       /* after Home and the NR Req */
    byte k, s, t;
end:
    do
    :: atomic {
        ak[2 * me] != 0 || ak[2 * me + 1] != 0 ->
        if
        :: ak[2 * me] != 0 ->
            k = ak[2 * me]; s = aq[2 * me]; t = at[2 * me];
            ak[2 * me] = ak[2 * me + 1]; aq[2 * me] = aq[2 * me + 1];
            at[2 * me] = at[2 * me + 1]
        :: ak[2 * me + 1] != 0 ->
            k = ak[2 * me + 1]; s = aq[2 * me + 1]; t = at[2 * me + 1]
        fi;
        ak[2 * me + 1] = 0; aq[2 * me + 1] = 0; at[2 * me + 1] = 0;
        nmsg--;
#ifndef BUG_ANSWER_NO_SEQ
        if
        :: s != seq[me] -> k = 0; s = 0; t = 0  /* an earlier use's: ignored */
        :: else -> skip
        fi;
#endif
#ifdef SPLIT
       };
        atomic {
#endif
            if
            :: k != 0 && st[me] == WAITING ->
                assert(s == use[me]);                           /* (f) */
                st[me] = k; stok[me] = t
            :: else -> skip                     /* a second answer: ignored */
            fi;
            k = 0; s = 0; t = 0
        }
    od
}

/* (d): once every requester finished and everything in flight was taken */
active proctype Final()
{
    byte i;
    atomic {
        done == NR && nmsg == 0 ->
#ifdef DEATH
        assert(hold == 0 || dead[hold - 1]);
#else
        assert(hold == 0);
#endif
        assert(head == 0 && tail == 0 && incs == 0 && nq == 0);
        for (i : 0 .. NR - 1) {
            assert(!qd[i] && rk[i] == 0 && nxt[i] == 0);
#ifdef DEATH
            assert(st[i] == IDLE || dead[i])
#else
            assert(st[i] == IDLE)
#endif
        }
    }
}
