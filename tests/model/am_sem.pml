/*
 * am_sem.pml -- spin model of the home-served counting semaphore over active
 * messages (core/global/amq.c, amq_home.c: the semaphore's messages SEM_ACQ,
 * SEM_TRY, SEM_REL, SEM_COUNT beside the lock's), written from the protocol as
 * designed, before the code; it follows am_lock.pml (the queue lock over the
 * same transport, with the same seq, stale-drop and cancel rules). README.md
 * has the results.
 *
 * One semaphore of N (2) permits, its home H (one record: taken, the FIFO queue
 * of waiters with the k each asks for) and NR (3) requesters, each doing LOOPS
 * (2) acquires; requester 0 asks k in 1 .. KBIG (2), chosen by spin at every
 * acquire, the others 1. A requester stands for one queue node of one process
 * (seq[p] counts its uses), as in am_lock.pml.
 *
 * Transport: no order at all, as in am_lock.pml. The messages in flight to H
 * are sets: rq[(p, s)] (the request of p's use s: kind and k), can[(p, s)] (its
 * CANCEL) and nrel[k] (RELs of k permits: a REL names neither sender nor use,
 * so RELs of the same k are alike). The answers are a set too: ans[(kind, p,
 * s)] (GRANT / BUSY / CANCELLED for p's use s). H takes any one message (Home);
 * an answer is taken by its waiter (Req) or dropped by the handler (Ans). Sets
 * are canonical and allow every order a FIFO channel would. (The printfs are
 * for the trail, spin -t: pan prints nothing.)
 *
 * Requester p (Req), acquire u:
 *   claim      its queue node IDLE -> WAITING, seq[p]++, send SEM_ACQ(seq, k),
 *              or SEM_TRY(seq, k) (requester TRIER, a budget of TRIES), or
 *              SEM_COUNT(seq) (requester COUNTER, a budget of COUNTS; 0 by
 *              default): one step;
 *   wait       until the answer of this use comes; or, while WAITING, give up
 *              (a budget of TIMEOUTS in the run): send CANCEL(seq) and wait for
 *              exactly one answer: the GRANT that crossed the cancel (p holds
 *              after all, and releases normally), CANCELLED, or for a TRY the
 *              BUSY H sent before the cancel came;
 *   outcome    GRANT: p holds k permits (the critical section), then sends
 *              SEM_REL(k) (one-way) and may start its next acquire at once,
 *              the REL still in flight; a COUNT's GRANT carries taken: checked
 *              0 <= taken <= N. BUSY, CANCELLED: p holds nothing. The node is
 *              IDLE again at its answer.
 * Answer handler: an answer is applied only if its seq is the node's and the
 *   node is WAITING (CAS WAITING -> answer); otherwise dropped (Ans). The
 *   delivery, the handler's CAS and the waiter's reading of its node are one
 *   step here (Req takes its own answer): nobody but p reads p's node, so a
 *   state where the CAS is done and p has not looked yet is one where the answer
 *   is still in flight. Drops are Ans's; none happens in the correct model (g).
 *   (amq.c's handler is am_lock.pml's; its step order, -DSPLIT there.)
 * H (one atomic step per message, as under its mutex; its answers go to the
 *   outbox and are sent later: the model puts them in flight at once, delivery
 *   in any order covers the delay). Per requester lseq[p] (last_seq), queued
 *   (qset bit p), hk[p] (k of a queued waiter); the record: taken, the queue
 *   q[0 .. qlen - 1], oldest first.
 *   ACQ/TRY(s, k)  s not newer than lseq[p]: stale (its CANCEL came first):
 *                  dropped. Else lseq[p] := s; the queue empty and taken + k
 *                  <= N: taken += k, GRANT(s); else TRY -> BUSY(s), ACQ ->
 *                  append (p, k). A newcomer that would fit still queues
 *                  behind any waiter: a large request is never overtaken.
 *   COUNT(s)       stale: dropped; else lseq[p] := s, GRANT(s) carrying taken
 *                  (the seq rules as for a TRY, so that a COUNT can be given
 *                  up: -DCOUNT_NO_SEQ shows why).
 *   CANCEL(s)      newer than lseq[p] (its request not seen yet): lseq[p] := s,
 *                  CANCELLED at once; s == lseq[p] and queued: unlink,
 *                  CANCELLED, grant_ready (p may have been the head that kept
 *                  smaller requests behind it waiting); otherwise (granted: the
 *                  GRANT crosses the cancel; answered BUSY; older): nothing.
 *   REL(k)         taken -= k; grant_ready.
 *   grant_ready    while the queue is not empty and taken + k(head) <= N:
 *                  unlink the head w, taken += k(w), GRANT(lseq[w]). (Run at
 *                  the end of the handler's step, when REL or CANCEL asks.)
 *
 * Properties (ghosts: incs = permits held in critical sections, bf[p] = the
 * waiters already queued when H queued p's request, gcur[p] = H granted p's
 * request lseq[p], nan[p] = answers in flight to p):
 *   (a) safety: incs <= N and incs <= taken at every entry; taken <= N at
 *       every grant; taken >= incs at every REL (H never counts fewer permits
 *       than are held).
 *   (b) FIFO: H grants a newcomer at once only with an empty queue, and a
 *       waiter only when every waiter queued before its request came has left
 *       the queue (bf[w] == 0): nobody whose request H got later is granted
 *       first. (bf is kept apart from the queue array, so it checks it.)
 *   (c) no invalid end state: every acquire ends, every requester finishes.
 *   (d) at the end (Final): nothing in flight, taken == 0, the queue empty,
 *       every queue node IDLE: a cancel never leaves permits counted.
 *   (e) a refused use (BUSY, CANCELLED) was never granted by H: the requester
 *       holds nothing and H counts nothing for it.
 *   (f) H is work-conserving: after every message it handles, the queue is
 *       empty or its head does not fit (taken + k(head) > N). Without it a
 *       waiter that could hold waits for the next REL (see CANCEL_NO_GRANT).
 *   (g) H answers only a node WAITING for that very use, never twice while an
 *       answer is in flight, and nothing is in flight to a node when it is
 *       claimed: one answer per use, so the seq check never fires and no
 *       answer lands on a later use.
 *   Also asserted: no request comes from a requester still queued; a REL never
 *   takes taken below 0.
 * -DOUTCOME_ONLY keeps only what a user of the semaphore sees: (a), (c), (d)
 * (no (b), (e), (f), (g)); a request from a requester still queued (only with
 * a bug) replaces its older entry. It shows what a planted bug does in the end.
 *
 * Knobs: -DN (permits, 2), -DNR (requesters, 3, at most 4), -DLOOPS (acquires
 * each, 2, at most 4), -DKBIG (the largest k, 2, at most 3 and N), -DKANY=n
 * (requesters 0 .. n - 1 choose k in 1 .. KBIG at every acquire, the others
 * ask 1; 1; with 0, requester 0 always asks KBIG), -DTIMEOUTS (give-ups in the
 * run, by anybody, 1), -DTRIES (TRYs, 1, by requester TRIER = 0), -DCOUNTS
 * (COUNTs, 0, by requester COUNTER = NR - 1), -DCOUNT_NO_SEQ (H answers a
 * COUNT outside the seq rules: no stale drop, no last_seq := s).
 * -DREACH=n asserts false when a case is reached (each must fail):
 *   1 a CANCEL reaches H before its request (H answers CANCELLED at once);
 *   2 a GRANT crosses a CANCEL (p gets GRANT after sending CANCEL);
 *   3 head-of-line: a REL's grant_ready grants a head of k = 2 while a k = 1
 *     stays queued behind it;
 *   4 one REL's grant_ready grants two waiters;
 *   5 a cancel's grant_ready grants (the cancelled head kept it waiting);
 *   6 H drops a stale request (its CANCEL came first);
 *   7 a TRY's cancel is answered BUSY;
 *   8 a TRY is refused BUSY while the only permits counted are in its own
 *     RELs in flight;
 *   9 H ignores a stale CANCEL (older than lseq: its GRANT crossed it and p
 *     asked again).
 *
 * Planted bugs (-DBUG_...), each a line of amq_home.c done wrong, and what
 * catches it (with -DOUTCOME_ONLY: what it does in the end):
 *   REL_NO_GRANT     SEM_REL does not run grant_ready: (f) (a deadlock, (c)).
 *   CANCEL_NO_GRANT  the cancel of a queued waiter does not run grant_ready:
 *                    (f) (no deadlock: the waiter behind waits for the next
 *                    REL, which always comes; README.md).
 *   OVERTAKE         a newcomer that fits is granted although the queue is
 *                    not empty: (b) (safe, unfair).
 *   NO_FIT_CHECK     grant_ready grants the head without taken + k <= N: (a).
 *   CANCEL_ALWAYS    a CANCEL of the current request answers CANCELLED
 *                    whatever happened to it (granted, answered BUSY): (e)
 *                    (the permits leak: (c), (d)).
 *   NO_STALE_DROP    H serves a request not newer than lseq: (g), or a
 *                    request from a requester still queued (a GRANT for a
 *                    cancelled use: the permits leak, (c), (d)).
 *
 * With leases: a dead holder's permits come back (commit 93c386f:
 * amq_sem_held.c, amq_sem_home.c, rdlm_amq_flush's scan in amq_home.c).
 * -DCRASH: requester CRASHER (-DCRASHER=n, 0 by default: the one that chooses k
 *   and TRYs) may crash once (-DCRASHES) instead of any of its steps: before a
 *   later claim or after its acquires (its REL in flight), waiting (its request
 *   or CANCEL in flight or queued, or its answer in flight: between grant and
 *   use), holding k in its critical section. Its messages in flight still
 *   arrive; answers to it are dropped (Ans). The authority ends its lease at any
 *   later moment (Auth), never a live process's; H sees it gone (the transport:
 *   rdlm_tl_peer_dead) at any later moment.
 * -DSUSPECT: H may take CRASHER for gone while it lives (a transport timeout;
 *   it stays so); its lease does not end. With -DCRASH also a crash; alone no
 *   crash (-DCRASHES=0).
 * -DPROC_VIEW: H's recovery also reads the process record (rdlm_amq_gone: the
 *   transport's view or the record's; same host, exact), which may see CRASHER
 *   gone before the transport does; grant_ready's drop reads the transport only.
 * H (the model notes CRASHER's permits only: nobody else can be gone):
 *   grant          (at once or by grant_ready) to CRASHER: held += k (returned
 *                  stays: rdlm_amq_held_grant);
 *   grant_ready    a head whose process H sees gone (the transport) is dropped,
 *                  not granted: unlinked and answered LOST (a refusal: the code's
 *                  waiter returns RDLM_ERR_PEER_DEAD), so a live one H took for
 *                  gone (-DSUSPECT) ends its wait;
 *   SEM_REL(k)     from CRASHER (H knows the sender: drel[k], the others' RELs
 *                  stay alike in nrel[k]): returned -> nothing changes (k := 0);
 *                  else held -= k (at least 0); then taken -= k, grant_ready;
 *   recovery       (one step; rdlm_amq_flush's scan every 100 ms while someone
 *                  waits or after a refused TRY, the authority asked, then under
 *                  the lock): qlen > 0 or a TRY refused since the last recovery
 *                  (tbusy; the code clears its flag at every scan and a polling
 *                  process sets it again), CRASHER gone, its lease ended, held >
 *                  0: taken -= held, held := 0, returned := 1 (sticky),
 *                  tbusy := 0, grant_ready.
 * Properties added (ghosts: gown = permits H granted and neither took back for
 * a REL of their use nor recovered, gowd = gown's part granted to CRASHER,
 * dlate[k] = CRASHER's RELs of k in flight at a recovery: their use's permits
 * came back; incs counts live holders only, a crash takes the dead one's out):
 *   (s) safety: live holders never hold more than N (incs <= N at every entry)
 *       nor more than H counts (taken >= incs at every entry, REL, recovery);
 *       after every step of H, taken == gown and held == gowd (the dead one's
 *       permits count until they come back); at the end (every live requester
 *       done, nothing in flight, CRASHER seen gone and its lease ended, no
 *       recovery due): taken == held == gowd (the permits granted to the dead
 *       one and neither released nor recovered: 0 without a crash, and 0 once
 *       they came back after its last grant), the queue empty, incs == 0,
 *       every live node IDLE.
 *   (t) no permit given back twice: a REL takes back exactly what the ghost
 *       says (taken == gown + k before taken -= k): a late REL (its use
 *       recovered) takes back nothing.
 *   (u) no stall: no invalid end state (c), now with a dead holder: every live
 *       requester's acquire ends, granted, refused or given up; with
 *       -DSUSPECT too, as a live waiter H takes for gone is answered LOST
 *       (suspect_live). Planted BUG_DROP_SILENT (the code before: dropped
 *       without an answer) stalls it: suspect_bug_drop_silent.
 * -DOUTCOME_ONLY with leases: (s) is incs <= N only (taken >= incs, (t) and
 * the ghost accounting are off), and H clamps taken at 0 as the code does;
 * -DNO_CHECK_D: no taken == gowd at the end (to see an over-subscription).
 * REACH (with -DCRASH):
 *   10 a recovery's grant_ready grants a waiter;
 *   11 H ignores a late REL of a recovered process;
 *   12 a second recovery (a grant after the first came back);
 *   13 grant_ready drops a dead waiter;
 *   14 H grants CRASHER at once after its permits came back;
 *   15 grant_ready grants CRASHER after its permits came back (-DPROC_VIEW);
 *   16 a recovery with nobody queued: a refused TRY brought it (tbusy).
 *   17 a live waiter H took for gone takes its LOST (-DSUSPECT).
 * Planted bugs (with leases):
 *   NO_RECOVERY             nothing comes back: (u), a live waiter waits for
 *                           ever behind the dead one's permits.
 *   RECOVER_NO_LEASE_WAIT   permits come back once CRASHER is gone, without
 *                           its lease ended (-DSUSPECT, pan -E): (s).
 *   REL_AFTER_RETURN        a late REL of a recovered process still gives k
 *                           back: (t); its outcome (-DCRASHER=1) incs > N.
 *   NOT_STICKY              a grant clears returned: a REL in flight from
 *                           before the crash gives back twice: (t).
 *   RECOVER_ONCE            a process's permits come back only once (not a
 *                           grant after its return): (u).
 */

#ifndef N
#define N 2                         /* permits */
#endif
#ifndef NR
#define NR 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef KBIG
#define KBIG 2                      /* the largest k */
#endif
#ifndef KANY
#define KANY 1                      /* requesters 0 .. KANY - 1 choose k */
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1                  /* give-ups in the run */
#endif
#ifndef TRIES
#define TRIES 1
#endif
#ifndef COUNTS
#define COUNTS 0
#endif
#ifndef REACH
#define REACH 0
#endif
/* who may send a TRY, who may send a COUNT */
#ifndef TRIER
#define TRIER 0
#endif
#ifndef COUNTER
#define COUNTER (NR - 1)
#endif
#if NR > 4 || LOOPS > 4 || KBIG > 3 || KBIG > N
#error "written for at most 4 requesters, 4 uses, k <= 3 and k <= N"
#endif
/* -DCRASH (a crash of requester CRASHER) or -DSUSPECT (H may take it for gone while
   it lives): the context has leases, and H notes the permits CRASHER holds */
#if defined(CRASH) || defined(SUSPECT)
#define LEASES 1
#ifndef CRASHER
#define CRASHER 0
#endif
#ifndef CRASHES
#ifdef CRASH
#define CRASHES 1
#else
#define CRASHES 0
#endif
#endif
#if REACH == 8
#error "REACH=8 counts the TRIER's RELs in nrel[]; with leases CRASHER's are apart"
#endif
#endif

/* (a): H counts at least the permits held (with leases and -DOUTCOME_ONLY only
   what a user sees: incs <= N, so that a planted bug shows its over-subscription) */
#if defined(LEASES) && defined(OUTCOME_ONLY)
#define COUNTS_HELD true
#else
#define COUNTS_HELD (taken >= incs)
#endif

/* messages (declared last to first: ACQ is 1); a request in flight is kind * 4 + k */
mtype = { LOST, CANCELLED, BUSY, GRANT, REL, CAN, CNT, TRY, ACQ };

#define IDLE    0                   /* queue node states */
#define WAITING 1

#define NS (LOOPS + 1)              /* seqs 1 .. LOOPS per requester */
#define AT(p, s) ((p) * NS + (s))   /* the (requester, seq) cell of a message set */
#define ANS(kd, p, s) (((kd) - GRANT) * NR * NS + AT(p, s))  /* answer cell */

/* ---- the requesters' side (amq.c) -------------------------------------------------- */
byte st[NR];                        /* queue node state */
byte seq[NR];                       /* the node's use count */

/* ---- in flight ------------------------------------------------------------------- */
byte rq[NR * NS];                   /* to H: the request of (p, s), kind * 4 + k; 0: none */
bit can[NR * NS];                   /* to H: CANCEL (p, s) */
byte nrel[KBIG + 1];                /* to H: RELs of k permits (they name nobody) */
#ifdef LEASES
byte drel[KBIG + 1];                /* to H: CRASHER's RELs of k (H knows their sender) */
#endif
bit ans[4 * NR * NS];               /* to p: GRANT / BUSY / CANCELLED / LOST (p, s) */
byte nh;                            /* messages in flight to H */
byte na;                            /* answers in flight */

/* ---- H (amq_home.c) -------------------------------------------------------------- */
byte taken;
byte q[NR], qlen;                   /* the FIFO queue of waiters, oldest first */
byte hk[NR];                        /* k of a queued waiter */
byte lseq[NR];                      /* last_seq */
byte qset;                          /* bit p: p queued */
#if COUNTS > 0
byte acv[NR];                       /* the taken a COUNT's GRANT carries */
#endif

byte timeouts = TIMEOUTS, tries = TRIES, counts = COUNTS;
#ifdef LEASES
/* ---- leases: CRASHER's process, H's view of it, the authority, H's notes ---------- */
byte crashes = CRASHES;
bit dead;                           /* CRASHER crashed */
bit gone;                           /* H's view: the transport has CRASHER dead
                                       (rdlm_tl_peer_dead) */
#ifdef PROC_VIEW
bit pgone;                          /* H's other view: its process record (same host:
                                       exact, may come before the transport's) */
#define GONE (gone || pgone)        /* rdlm_amq_gone */
#else
#define GONE gone
#endif
bit ended;                          /* the authority ended CRASHER's lease */
byte held;                          /* H: the permits CRASHER holds (held[CRASHER]) */
bit returned;                       /* H: CRASHER's permits came back (sticky) */
bit tbusy;                          /* H: a TRY was refused since the last recovery
                                       (amq_home.h: tried_busy) */
#endif
byte done;                          /* requesters that finished */

/* ---- ghosts ------------------------------------------------------------------------ */
byte incs;                          /* (a): permits held in critical sections */
byte bf[NR];                        /* (b): who was queued when H queued p */
bit gcur[NR];                       /* (e): H granted p's request lseq[p] */
byte nan[NR];                       /* (g): answers in flight to p */
#ifdef LEASES
byte gown;                          /* (s), (t): permits H granted and neither took
                                       back for a REL of their use nor recovered */
byte gowd;                          /* (t): gown's part granted to CRASHER */
byte dlate[KBIG + 1];               /* (t): of drel[k], those in flight at a recovery
                                       (their use's permits came back already) */
#endif
#if REACH == 8
byte trel[KBIG + 1];                /* of nrel[k]: the TRIER's RELs */
#if KBIG == 1
#define TRELK (trel[1])
#elif KBIG == 2
#define TRELK (trel[1] + 2 * trel[2])
#else
#define TRELK (trel[1] + 2 * trel[2] + 3 * trel[3])
#endif
#endif

/* ---- H's handler pieces ------------------------------------------------------------ */

/* answer kd about seq s, H -> w (to the outbox; in flight at once) */
inline answer(w, s, kd) {
#ifndef OUTCOME_ONLY
    assert(st[w] == WAITING && seq[w] == s && nan[w] == 0);     /* (g) */
#endif
    assert(!ans[ANS(kd, w, s)]);
    ans[ANS(kd, w, s)] = 1; nan[w]++; na++;
    printf("H: %e(%d) to P%d, taken %d\n", kd, s, w, taken)
}

/* append w asking kk; bf[w] := who is queued ahead */
inline enqueue(w, kk) {
    bf[w] = qset;
    q[qlen] = w; qlen++; hk[w] = kk;
    qset = qset | (1 << w);
    printf("H: queues P%d (k %d), %d waiting, taken %d\n", w, kk, qlen, taken)
}

/* take w out of the queue (it is there) */
inline unlink(w) {
    assert(qset & (1 << w));
    i = 0;
    do
    :: q[i] != w -> i++
    :: q[i] == w -> break
    od;
    do
    :: i + 1 < qlen -> q[i] = q[i + 1]; i++
    :: i + 1 >= qlen -> break
    od;
    qlen--; q[qlen] = 0;
    qset = qset & ~(1 << w); hk[w] = 0; bf[w] = 0;
    i = 0;
    do                              /* (b): w is ahead of nobody now */
    :: i < NR -> bf[i] = bf[i] & ~(1 << w); i++
    :: i >= NR -> break
    od;
    i = 0
}

#define HEAD_FITS (qlen > 0 && taken + hk[q[0]] <= N)
#ifdef BUG_NO_FIT_CHECK
#define READY (qlen > 0)
#else
#define READY HEAD_FITS
#endif

#ifdef LEASES
/* H notes a grant of kk to w (rdlm_amq_held_grant: held[w] += kk; returned stays) */
inline note_grant(w, kk) {
    gown = gown + kk;
    if
    :: w == CRASHER -> held = held + kk; gowd = gowd + kk
#ifdef BUG_NOT_STICKY
        ; returned = 0                  /* planted: a grant clears the mark */
#endif
    :: w != CRASHER -> skip
    fi
}
#define DROPPED(w) ((w) == CRASHER && gone)
#ifndef OUTCOME_ONLY
#define GHOST_ASSERT(x) assert(x)
#else
#define GHOST_ASSERT(x) skip
#endif
#else
#define DROPPED(w) false
#endif

/* grant_ready, after a REL (gr == 1), the cancel of a queued waiter (gr == 2) or a
   recovery (gr == 3): grant heads while they fit (ng: how many so far); a head whose
   process H sees gone is dropped, not granted */
inline grant_ready() {
    do
    :: READY ->
        w = q[0]; kk = hk[w];
        printf("H: grant_ready: the head P%d (k %d)\n", w, kk);
#ifndef OUTCOME_ONLY
        assert(bf[w] == 0);                                     /* (b) */
#endif
        unlink(w);
        if
        :: DROPPED(w) ->
#if REACH == 13
            assert(false);              /* reach: a dead waiter dropped */
#endif
#ifdef BUG_DROP_SILENT
            printf("H: P%d is gone: dropped\n", w)   /* planted: no answer */
#else
            printf("H: P%d is gone: dropped, told LOST\n", w);
            answer(w, lseq[w], LOST)
#endif
        :: !DROPPED(w) ->
            taken = taken + kk;
            assert(taken <= N);                                 /* (a) */
            gcur[w] = 1;
            answer(w, lseq[w], GRANT);
#ifdef LEASES
            note_grant(w, kk);
#endif
#if REACH == 3
            assert(!(gr == 1 && kk > 1 && qlen > 0 && hk[q[0]] == 1));  /* reach */
#elif REACH == 4
            assert(!(gr == 1 && ng > 0));   /* reach: one REL grants two waiters */
#elif REACH == 5
            assert(gr != 2);                /* reach: a cancel lets a waiter in */
#elif REACH == 10
            assert(gr != 3);                /* reach: a recovery lets a waiter in */
#elif REACH == 15
            assert(!(w == CRASHER && returned));    /* reach: a queued grant after a
                                                       return (-DPROC_VIEW) */
#endif
            ng++
        fi;
        w = 0; kk = 0
    :: !READY -> break
    od;
    ng = 0; gr = 0
}

#ifdef BUG_OVERTAKE
#define FITS_NOW (taken + kk <= N)
#else
#define FITS_NOW (qlen == 0 && taken + kk <= N)
#endif
#if defined(BUG_NO_STALE_DROP)
#define STALE false
#elif defined(COUNT_NO_SEQ)
#define STALE (s <= lseq[p] && c != CNT)
#else
#define STALE (s <= lseq[p])
#endif

/* SEM_ACQ / SEM_TRY / SEM_COUNT (s, kk) from p, kind c */
inline h_request() {
    if
    :: STALE ->                         /* its CANCEL came first: dropped */
#if REACH == 6
        assert(false);                  /* reach: a stale request dropped */
#endif
        printf("H: drops it (stale)\n")
    :: !STALE ->
#ifndef OUTCOME_ONLY
        assert(c == CNT || !(qset & (1 << p)));  /* asked again while queued: never */
#else
        if                              /* (then the older entry goes) */
        :: c != CNT && (qset & (1 << p)) -> unlink(p)
        :: c == CNT || !(qset & (1 << p)) -> skip
        fi;
#endif
#ifdef COUNT_NO_SEQ
        if
        :: c != CNT -> lseq[p] = s; gcur[p] = 0
        :: c == CNT -> skip             /* a COUNT outside the seq rules */
        fi;
#else
        lseq[p] = s; gcur[p] = 0;
#endif
        if
#if COUNTS > 0
        :: c == CNT ->                  /* answered at once: GRANT with taken */
            acv[p] = taken;
            answer(p, s, GRANT)
#endif
        :: c != CNT && FITS_NOW ->
#ifndef OUTCOME_ONLY
            assert(qset == 0);                                  /* (b) */
#endif
            taken = taken + kk;
            assert(taken <= N);                                 /* (a) */
            gcur[p] = 1;
#ifdef LEASES
#if REACH == 14
            assert(!(p == CRASHER && returned));    /* reach: a grant after a return */
#endif
            note_grant(p, kk);
#endif
            answer(p, s, GRANT)
        :: c == TRY && !FITS_NOW ->
#if REACH == 8
            assert(!(p == TRIER && taken > 0 && taken == TRELK));  /* reach */
#endif
#ifdef LEASES
            tbusy = 1;
#endif
            kd = BUSY
        :: c == ACQ && !FITS_NOW ->
            enqueue(p, kk)
        fi
    fi
}

/* CANCEL(s) from p */
inline h_cancel() {
    if
    :: s > lseq[p] ->                   /* before its request */
#if REACH == 1
        assert(false);                  /* reach: a CANCEL before its request */
#endif
        lseq[p] = s; gcur[p] = 0;
        kd = CANCELLED
    :: s == lseq[p] && (qset & (1 << p)) ->
        unlink(p);
        kd = CANCELLED;
#ifndef BUG_CANCEL_NO_GRANT
        gr = 2
#endif
    :: s < lseq[p] || (s == lseq[p] && !(qset & (1 << p))) ->
#if REACH == 9
        assert(s == lseq[p]);           /* reach: a stale CANCEL ignored */
#endif
#ifdef BUG_CANCEL_ALWAYS
        if
        :: s == lseq[p] -> kd = CANCELLED
        :: s < lseq[p] -> skip
        fi
#else
        skip                            /* granted, answered BUSY, or stale */
#endif
    fi
}

/* SEM_REL(kk) (fromd: CRASHER's) */
inline h_release() {
#ifdef LEASES
    if                                  /* (t) ghost: a late REL (its use came back)? */
    :: fromd && dlate[kk] > 0 -> dlate[kk]--; late = 1
    :: fromd && drel[kk] >= dlate[kk] -> skip   /* (drel[kk] is already one less) */
    :: !fromd -> skip
    fi;
    if
    :: late -> skip                     /* the permits of its use came back already */
    :: !late && fromd -> GHOST_ASSERT(gowd >= kk); gowd = gowd - kk; gown = gown - kk
    :: !late && !fromd -> GHOST_ASSERT(gown >= kk); gown = gown - kk
    fi;
    if                                  /* rdlm_amq_held_release */
#ifndef BUG_REL_AFTER_RETURN
    :: fromd && returned ->
#if REACH == 11
        assert(false);                  /* reach: a late REL ignored */
#endif
        printf("H: P%d's permits came back already: ignored\n", CRASHER);
        kk = 0
    :: fromd && !returned ->
        held = (held > kk -> held - kk : 0)
#else
    :: fromd ->                         /* planted: the mark is not read */
        held = (held > kk -> held - kk : 0)
#endif
    :: !fromd -> skip
    fi;
#ifndef OUTCOME_ONLY
    assert(taken == gown + kk);         /* (t): never given back twice */
#else
    kk = (kk > taken -> taken : kk);    /* rdlm_amq_sem_give_back: "a bug", 0 stays */
#endif
#else
    assert(taken >= kk);
#endif
    taken = taken - kk;
    assert(COUNTS_HELD);                                        /* (a) */
#if REACH == 8
    if                                  /* whose REL it was (they look alike) */
    :: trel[kk] > 0 -> trel[kk]--
    :: nrel[kk] >= trel[kk] -> skip     /* (nrel[kk] is already one less) */
    fi;
#endif
#ifndef BUG_REL_NO_GRANT
    gr = 1
#endif
}

#ifdef LEASES
/* H's recovery may run (rdlm_amq_flush's scan, every 100 ms, while someone waits:
   rdlm_amq_held_dead; the authority asked, rdlm_amq_sem_recover) */
#if defined(BUG_NO_RECOVERY)
#define RECOVERABLE false
#elif defined(BUG_RECOVER_NO_LEASE_WAIT)
#define RECOVERABLE ((qlen > 0 || tbusy) && GONE && held > 0)
#elif defined(BUG_RECOVER_ONCE)
#define RECOVERABLE ((qlen > 0 || tbusy) && GONE && ended && held > 0 && !returned)
#else
#define RECOVERABLE ((qlen > 0 || tbusy) && GONE && ended && held > 0)
#endif
/* after every step of H: what H counts is what it granted and did not get back */
#ifndef OUTCOME_ONLY
#define ACCOUNTS assert(taken == gown && held == gowd)                  /* (s), (t) */
#else
#define ACCOUNTS skip
#endif
#else
#define ACCOUNTS skip
#endif

/* H: takes any one message in flight and handles it, in one step; or recovers */
active proctype Home()
{
    byte p, s, c, kk, w, i, ng, gr;
    mtype kd;                       /* BUSY or CANCELLED to p (refuse) */
#ifdef LEASES
    bit fromd, late;                /* a REL of CRASHER's; late: its use came back */
#endif
end:
    do
#ifdef LEASES
    :: atomic {                     /* CRASHER's permits come back */
        RECOVERABLE ->
        printf("H: P%d is gone (lease ended %d): %d permits come back\n", CRASHER, ended, held);
#if REACH == 12
        assert(!returned);              /* reach: a second recovery */
#endif
#if REACH == 16
        assert(qlen > 0);               /* reach: a recovery a refused TRY brought */
#endif
#ifndef OUTCOME_ONLY
        assert(taken >= held);
        taken = taken - held;
#else
        taken = (taken > held -> taken - held : 0);
#endif
        held = 0; returned = 1; tbusy = 0;
        gown = gown - gowd; gowd = 0;   /* the ghost: every use's permits came back */
        i = 1;
        do                              /* its RELs in flight are late now */
        :: i <= KBIG -> dlate[i] = drel[i]; i++
        :: i > KBIG -> break
        od;
        i = 0;
        assert(COUNTS_HELD);                                    /* (a), (s) */
        gr = 3; grant_ready();
        ACCOUNTS;
#ifndef OUTCOME_ONLY
        assert(!HEAD_FITS)              /* (f) */
#else
        skip
#endif
       }
#endif
    :: atomic {
        nh > 0 ->
        /* a request or CANCEL (p, s), or a REL */
        i = 0; c = 0;
        do
        :: i < NR * NS && rq[i] != 0 -> c = rq[i] / 4; kk = rq[i] % 4; rq[i] = 0; break
        :: i < NR * NS && can[i] -> c = CAN; can[i] = 0; break
        :: i < NR * NS -> i++
        :: i >= NR * NS -> break
        od;
        if
        :: c == 0 && nrel[1] > 0 -> c = REL; kk = 1; nrel[1]--
#if KBIG > 1
        :: c == 0 && nrel[2] > 0 -> c = REL; kk = 2; nrel[2]--
#endif
#if KBIG > 2
        :: c == 0 && nrel[3] > 0 -> c = REL; kk = 3; nrel[3]--
#endif
#ifdef LEASES
        :: c == 0 && drel[1] > 0 -> c = REL; kk = 1; drel[1]--; fromd = 1
#if KBIG > 1
        :: c == 0 && drel[2] > 0 -> c = REL; kk = 2; drel[2]--; fromd = 1
#endif
#if KBIG > 2
        :: c == 0 && drel[3] > 0 -> c = REL; kk = 3; drel[3]--; fromd = 1
#endif
#endif
        :: true -> skip                 /* (nothing taken: the same state) */
        fi;
        if
        :: c == 0 -> skip
        :: c != 0 ->
            nh--; p = i / NS; s = i % NS;
            if
            :: c == REL -> printf("H: takes REL(%d)\n", kk); h_release()
            :: c == CAN -> printf("H: takes CANCEL(%d) of P%d\n", s, p); h_cancel()
            :: c < CAN -> printf("H: takes %e(%d, k %d) of P%d\n", c, s, kk, p); h_request()
            fi;
            if
            :: kd != 0 ->               /* refused: BUSY, CANCELLED */
#ifndef OUTCOME_ONLY
                assert(!(gcur[p] && lseq[p] == s));             /* (e) */
#endif
                answer(p, s, kd); kd = 0
            :: kd == 0 -> skip
            fi;
            if
            :: gr != 0 -> grant_ready()
            :: gr == 0 -> skip
            fi;
#ifndef OUTCOME_ONLY
            assert(!HEAD_FITS);         /* (f): no waiter left that could go */
#endif
            ACCOUNTS
        fi;
        p = 0; s = 0; c = 0; kk = 0; i = 0
#ifdef LEASES
        ; fromd = 0; late = 0
#endif
       }
    od
}

#ifdef LEASES
/* CRASHER may crash instead of its next step; its messages in flight still arrive */
#define CAN_CRASH (me == CRASHER && crashes > 0)
inline crash(kin) {
    crashes--; dead = 1;
    incs = incs - kin;              /* (its permits stay counted until they come back) */
    printf("P%d: crashes (holding %d)\n", me, kin);
    gaveup = 0; kind = 0; k = 0
}
#define SEND_REL if :: me == CRASHER -> drel[k]++ :: me != CRASHER -> nrel[k]++ fi
#else
#define SEND_REL nrel[k]++
#endif

/* requester me: LOOPS acquires */
active [NR] proctype Req()
{
    byte me = _pid - 1;             /* Home is pid 0 */
    byte u, k, kind;
    bit gaveup;

    for (u : 1 .. LOOPS) {
        /* claim the queue node, seq++, send the request: one step */
#ifdef LEASES
        if
        :: atomic { u > 1 && CAN_CRASH -> crash(0) };   /* its last REL may be in flight */
            goto out
        :: skip ->                      /* (merged with the claim below) */
#endif
        atomic {
#if KANY > 0
            k = 1;
            do                          /* the first KANY choose k */
            :: me < KANY && k < KBIG -> k++
            :: true -> break
            od;
#else
            k = (me == 0 -> KBIG : 1);
#endif
            if
            :: tries > 0 && me == TRIER -> tries--; kind = TRY
#if COUNTS > 0
            :: counts > 0 && me == COUNTER -> counts--; kind = CNT
#endif
            :: true -> kind = ACQ
            fi;
#if COUNTS > 0
            k = (kind == CNT -> 0 : k);     /* a COUNT asks for nothing */
#endif
            assert(st[me] == IDLE); st[me] = WAITING;
#ifndef OUTCOME_ONLY
            assert(nan[me] == 0);       /* (g): nothing in flight to p's node */
#endif
            seq[me]++;
            rq[AT(me, seq[me])] = kind * 4 + k; nh++;
            printf("P%d: sends %e(%d, k %d)\n", me, kind, seq[me], k)
        };
#ifdef LEASES
        fi;
#endif
wait:   /* the answer of this use (the handler's CAS WAITING -> answer), or give up */
        if
        :: atomic {                     /* GRANT: the critical section */
            st[me] == WAITING && ans[ANS(GRANT, me, seq[me])] && kind != CNT ->
            ans[ANS(GRANT, me, seq[me])] = 0; na--; nan[me]--;
            st[me] = IDLE;
            incs = incs + k;
            assert(incs <= N && COUNTS_HELD);                   /* (a), (s) */
            printf("P%d: GRANT(%d): holds %d, %d held in all\n", me, seq[me], k, incs);
#if REACH == 2
            assert(!gaveup)             /* reach: a GRANT crossed the CANCEL */
#endif
           };
#ifdef LEASES
            if
            :: atomic { CAN_CRASH -> crash(k) };    /* holding k */
                goto out
            :: skip ->
#endif
            atomic {                    /* release: SEM_REL(k), one-way */
                incs = incs - k;
                SEND_REL; nh++;
                printf("P%d: sends REL(%d)\n", me, k)
#if REACH == 8
                ; if :: me == TRIER -> trel[k]++ :: me != TRIER -> skip fi
#endif
            }
#ifdef LEASES
            fi
#endif
#if COUNTS > 0
        :: atomic {                     /* a COUNT's GRANT: taken */
            st[me] == WAITING && ans[ANS(GRANT, me, seq[me])] && kind == CNT ->
            ans[ANS(GRANT, me, seq[me])] = 0; na--; nan[me]--;
            assert(acv[me] <= N);
            printf("P%d: GRANT(%d): taken was %d\n", me, seq[me], acv[me]);
            acv[me] = 0; st[me] = IDLE
           }
#endif
        :: atomic {                     /* BUSY, CANCELLED, LOST: holds nothing */
            st[me] == WAITING &&
            (ans[ANS(BUSY, me, seq[me])] || ans[ANS(CANCELLED, me, seq[me])] ||
             ans[ANS(LOST, me, seq[me])]) ->
#if REACH == 7
            assert(!(ans[ANS(BUSY, me, seq[me])] && gaveup));  /* reach */
#endif
            if
            :: ans[ANS(BUSY, me, seq[me])] -> ans[ANS(BUSY, me, seq[me])] = 0;
                printf("P%d: BUSY(%d)\n", me, seq[me])
            :: ans[ANS(CANCELLED, me, seq[me])] -> ans[ANS(CANCELLED, me, seq[me])] = 0;
                printf("P%d: CANCELLED(%d)\n", me, seq[me])
            :: ans[ANS(LOST, me, seq[me])] -> ans[ANS(LOST, me, seq[me])] = 0;
                printf("P%d: LOST(%d): RDLM_ERR_PEER_DEAD\n", me, seq[me])
#if REACH == 17
                ; assert(false)         /* reach: a live waiter taken for gone is told */
#endif
            fi;
            na--; nan[me]--;
#ifndef OUTCOME_ONLY
            assert(!(gcur[me] && lseq[me] == seq[me]));          /* (e) */
#endif
            st[me] = IDLE
           }
        :: atomic {                     /* give up: CANCEL, then exactly one answer */
            st[me] == WAITING && !gaveup && timeouts > 0 ->
            timeouts--; gaveup = 1;
            can[AT(me, seq[me])] = 1; nh++;
            printf("P%d: gives up: CANCEL(%d)\n", me, seq[me])
           };
            goto wait
#ifdef LEASES
        :: atomic {                     /* waiting: its request or CANCEL in flight or
                                           queued, or its answer in flight */
            CAN_CRASH -> crash(0)
           };
            goto out
#endif
        fi;
        gaveup = 0; kind = 0; k = 0
    }
out:
    atomic { done++; u = 0 };
#ifdef LEASES
end_late:                           /* done, it may still crash (its REL in flight) */
    atomic { CAN_CRASH && !dead -> crash(0) }
#endif
}

/* The answer handler's drops (every requester's, one process): an answer whose seq
   is not its node's, or that finds the node not WAITING. The answers it applies are
   taken by the waiter itself (Req). */
#ifdef LEASES
#define DROPS(j) (!((j) % NS == seq[((j) % (NR * NS)) / NS] && st[((j) % (NR * NS)) / NS] == WAITING) || \
                  (dead && ((j) % (NR * NS)) / NS == CRASHER))
#else
#define DROPS(j) !((j) % NS == seq[((j) % (NR * NS)) / NS] && st[((j) % (NR * NS)) / NS] == WAITING)
#endif
active proctype Ans()
{
    byte i, p;
end:
    do
    :: atomic {
        na > 0 ->
        i = 0;
        do
        :: i < 4 * NR * NS && ans[i] && DROPS(i) -> ans[i] = 0; break
        :: i < 4 * NR * NS -> i++
        :: i >= 4 * NR * NS -> break
        od;
        if
        :: i < 4 * NR * NS ->
            na--; p = (i % (NR * NS)) / NS; nan[p]--;
            printf("P%d: drops an answer\n", p)
        :: i >= 4 * NR * NS -> skip     /* (nothing taken: the same state) */
        fi;
        i = 0; p = 0
       }
    od
}

#ifdef LEASES
/* The authority ends a crashed process's lease at any later moment (never a live
   one's); H sees it gone at any later moment; -DSUSPECT: H may take it for gone
   while it lives (a transport timeout; it stays so) */
active proctype Auth()
{
end:
    do
#ifdef SUSPECT
    :: atomic { !gone -> gone = 1; printf("H: takes P%d for gone\n", CRASHER) }
#else
    :: atomic { dead && !gone -> gone = 1; printf("H: sees P%d gone\n", CRASHER) }
#endif
    :: atomic { dead && !ended -> ended = 1; printf("P%d's lease ended\n", CRASHER) }
#ifdef PROC_VIEW
    :: atomic { dead && !pgone -> pgone = 1; printf("H: P%d's process is gone\n", CRASHER) }
#endif
    od
}
#endif

/* (d): once every requester finished and nothing is in flight (with leases: a dead
   CRASHER seen gone, its lease ended, no recovery due) */
active proctype Final()
{
    byte i;
    atomic {
#ifdef LEASES
        done == NR && nh == 0 && na == 0 && (!dead || (GONE && gone && ended)) &&
        !RECOVERABLE ->
        /* (s): taken is what the dead one was granted and neither gave back nor got
           recovered (0 without a crash, or once its permits came back) */
#ifndef NO_CHECK_D
        assert(taken == gowd && held == gowd);
#endif
        assert(qlen == 0 && qset == 0 && incs == 0);
        for (i : 0 .. NR - 1) {
            assert(st[i] == IDLE || (dead && i == CRASHER))
        }
#else
        done == NR && nh == 0 && na == 0 ->
        assert(taken == 0 && qlen == 0 && qset == 0 && incs == 0);
        for (i : 0 .. NR - 1) {
            assert(st[i] == IDLE)
        }
#endif
    }
}
