/*
 * dist_lock.pml -- spin model of the cross-node exclusive lock of core/global/
 * (protocol: global.h; global queue lock: glock.c; cohorts: cohort.c): one
 * global word W per lock at its home, an MCS-like queue of queue nodes
 * ("qnodes") threaded through the processes' memory, tokens carried in the
 * grant, abandonment by timed-out waiters, and node cohorts (the node-local
 * lock in front of the global queue, local hand-off up to the cohort bound,
 * and the "settle" step). One lock; NP processes in two nodes (node 0:
 * processes 0 .. NA-1, node 1: the others) or three (-DNB=: node 1 has NB,
 * node 2 the rest); each acquires and releases the lock LOOPS times
 * (-DLOOPS0=: process 0 LOOPS0 times).
 *
 * Words (every access to a shared word is ONE step, as one remote atomic, put
 * or get is):
 *   W         one byte: HELD(t) = t (the tail qnode id, 1 .. NQ), or
 *             FREE(s) = FREEB + s (s = sequence of the last token issued);
 *             initially FREE(0).
 *   qstate[q] IDLE 0, WAITING 1, ABANDONED 2, GRANTED(s) = 3 + s;
 *             -DREADOPT: PASSED 3 (an ABANDONED place a pass has marked),
 *             GRANTED(s) = 4 + s.
 *   qnext[q]  NONE 0 or a qnode id.
 *   Qnode id q is 1 .. NQ (array index q - 1); process p owns 2p+1, 2p+2.
 *
 * Global acquire by P (rdlm_glock_acquire; P holds its node lock):
 *   1. claim an IDLE own qnode q (the lowest, as rdlm_glock_claim does;
 *      -DANY_QNODE: any IDLE one; none IDLE: wait):
 *      q.next := NONE; q.state := WAITING     (one step: q is P's own and
 *      nobody refers to it -- which (c) checks at exactly this step)
 *   2. old := SWAP(W, HELD(q))
 *   3. FREE(s): holds, token s+1
 *   4. HELD(p): PUT p.next := q; wait until q.state != WAITING: GRANTED(s) ->
 *      holds, token s. With a deadline (budget TIMEOUTS per run, chosen at the
 *      SWAP), the deadline may expire at any point of the wait:
 *      CAS(q.state, WAITING -> ABANDONED); success: timeout (q stays in the
 *      queue until a passer sets it IDLE), failure: GRANTED(s), holds.
 *
 * Global release, pass(Q, s) (rdlm_glock_pass), by the node's holder or a
 * settler, holding the node lock:
 *   loop: n := Q.next
 *         NONE: CAS(W, HELD(Q) -> FREE(s)); success: Q.state := IDLE (the
 *               code's own CPU store for its own first Q, checked by (f)),
 *               return;
 *               failure: wait until Q.next != NONE, n := Q.next
 *         old := CAS(n.state, WAITING -> GRANTED(s+1)); Q.state := IDLE
 *         WAITING: return;  ABANDONED: Q := n, loop (same s)
 *
 * Re-adoption (-DREADOPT; glock.c in contexts without leases): a process
 * remembers the place it abandoned (aq, until it takes it back or finds it
 * marked). Its next global acquire (node lock held, gq NONE) first tries:
 *   1'. CAS(aq.state, ABANDONED -> WAITING); success: wait at aq again as in
 *       step 4 (no SWAP, no PUT: aq is still linked behind its predecessor;
 *       deadline or not, chosen here as at a SWAP); failure (a pass marked it,
 *       maybe retired it too): aq := NONE, then steps 1-4.
 * A try (-DTRY) never takes a place back. The pass marks a place it goes over
 * with a value the re-adoption CAS never matches, and grants again a place
 * taken back between its grant and its mark (every pass: the holder's,
 * settle's, the completer's):
 *         old := CAS(n.state, WAITING -> GRANTED(s+1));
 *         ABANDONED: old := CAS(n.state, ABANDONED -> PASSED) (the mark, before
 *                    Q is retired); WAITING (taken back): the grant again, and
 *                    so on until old is WAITING (granted) or the mark succeeds;
 *         Q.state := IDLE: for a passed-over Q, CAS(PASSED -> IDLE) (the NONE
 *         case's too); for the holder's first Q a store as before.
 *
 * Try (-DTRY; rdlm_glock_try, cohort.c with timeout 0; budget TRIES per run,
 * any acquire, chosen by spin): the node-local try-lock (free and nobody
 * registered, else busy); gq != NONE: local hand-off; else claim q as in step 1,
 * then CAS(W, FREE(g) -> HELD(q)) with the node's last token g = seq; it found
 * FREE(x), x != g: once more, CAS(W, FREE(x) -> HELD(q)). Taken only if the last
 * CAS found what it expected (token x+1); else busy: q.state := IDLE by the
 * own store ("never published", checked by (f)), unlock.
 *
 * Posted release (-DPOSTED; slot: pq/ps per process, one release in flight):
 * in pass, the NONE case with the passer's slot free posts the CAS instead:
 * slot := (Q, s), return at once (Q stays non-IDLE; the cohort goes on:
 * gq := NONE, handoffs := 0, unlock, and the process may acquire again, with
 * its other qnode). Slot busy: the blocking CAS above. Process C (the
 * completer, one per process: the code's next rdlm call, waits or progress
 * thread), without the node lock, concurrently with its process:
 *   lands:  CAS(W, HELD(Q) -> FREE(s)), one step at any point after the post
 *           (after a later SWAP of the same process, too: no order promised);
 *   finish: success: Q.state := IDLE (own CPU store, checked by (f)),
 *           slot := free;
 *           failure: the rest of pass: wait until Q.next != NONE, n :=
 *           Q.next, grant n, Q.state := IDLE; ABANDONED: Q := n and a
 *           blocking pass (its NONE case the in-line CAS); slot := free.
 *   C ends once its process has finished and its slot is free; Final waits
 *   for the completers.
 *
 * Cohorts (cohort.c). The node-local lock is abstract: a mutex word `lheld`
 * (0 or the holder's pid+1) plus `lwait`, the number of processes that have
 * asked for it and not yet taken it or given up (the ticket lock's tickets beyond
 * the one served). Acquiring it is two steps: register (lwait++), then take
 * it when free (lwait--, lheld := me). Any registered waiter may take it,
 * newcomers included: no FIFO order, a superset of the ticket lock's schedules.
 * "Idle" (rdlm_ticket_idle) and try-lock succeed iff lheld == 0 and lwait ==
 * 0. Node state, touched only under the node lock and so merged into the
 * neighbouring step: gq (the node's qnode in the global queue, queue_node1), the
 * hand-off count (cohort_handoffs), seq (the token sequence, token & SEQ_MASK).
 *   acquire: lock; gq != NONE: seq++, holds (local hand-off, no remote op);
 *            else global acquire (timeout: unlock, return).
 *   release: read lwait (one step: rdlm_ticket_has_waiters) and decide:
 *            gq != NONE && handoffs < BOUND && lwait > 0: handoffs++,
 *              unlock (keeping gq), then settle;
 *            else pass(gq, seq), gq := NONE, handoffs := 0, unlock.
 *   settle (rdlm_global_settle; after an unlock that kept gq, and after a
 *            local-wait timeout): gq != NONE and the node lock idle (two
 *            unlocked reads); try-lock (seq++, as every local acquire bumps
 *            the token); re-read gq under the lock: != NONE -> pass(gq, seq),
 *            gq := NONE, handoffs := 0; unlock.
 *   The decision's read of lwait and the unlock are separate steps, so a
 *   waiter counted by the decision may time out before the unlock: that is
 *   the case settle exists for. (The ticket lock counts a timed-out waiter's ticket
 *   until someone passes over it, even after the waiter left; that is the
 *   same as the waiter leaving after the decision, which is modelled.)
 *   Local timeouts: LTIMEOUTS per run, any registered waiter, at any point of
 *   its wait.
 *
 * Tokens: the token of a critical section is its node's seq; FREE(s) and
 * GRANTED(s+1) carry it across nodes.
 *
 * Interleaving is sequentially consistent. Each step touches one shared word
 * (W, one qnode word, or the node-local lock) plus node state under the node
 * lock, ghosts and locals (-DPOSTED: and the process's own slot).
 *
 * Properties:
 *   (a) mutual exclusion: at most one process in the critical section;
 *   (b) tokens strictly increase over successive critical sections;
 *   (c) a qnode is never re-enqueued while referenced: at step 1, q is IDLE
 *       and check_unreferenced(q) holds: W != HELD(q), no non-IDLE qnode's
 *       next is q, no passer will still touch q (ghost gpass: the passer's Q
 *       from its first access to its last) or is about to grant it (ghost gn:
 *       the n it read from Q.next, until the grant CAS; -DREADOPT: until the
 *       grant succeeds or the passer moves on to n), and no waiter is
 *       about to link behind q (ghost glink: from its SWAP to its PUT). One
 *       exception to "no next is q": once the grant CAS on n succeeded, the
 *       passer's Q stays non-IDLE for one more step with Q.next == n, but
 *       nobody reads that next again, so n may meanwhile be passed on, set
 *       IDLE and re-enqueued (ghost gdone marks that Q);
 *   (d) no invalid end state: every process finishes all its acquires (the
 *       timed-out ones return) -- no lost grant, no stall; and once all have
 *       finished (process Final): W == FREE(x), every qnode IDLE, gq NONE,
 *       node locks free;
 *   (e) fairness: while a process of one node waits in the global queue
 *       (from its SWAP returning HELD until it holds or abandons), the other
 *       nodes complete at most (nodes - 1) * (BOUND + 1) critical sections
 *       (ghosts gw, ovt): one cohort session each. With two nodes the bound
 *       BOUND + 1 is tight (spin finds a run reaching it); -DREADOPT: a wait
 *       also begins when a place is taken back;
 *   (f) the own-store retire is safe: where glock.c writes its own qnode's
 *       state with a CPU store (rdlm_global_q_set_own_state) instead of through
 *       the transport -- at the claim (step 1: (c)), and Q.state := IDLE after
 *       a successful CAS of W HELD(Q) -> FREE (pass's NONE case; -DPOSTED: the
 *       completer's finish after its CAS landed) -- no other process can still
 *       act on that use of the node: check_unreferenced(Q) of (c), less the
 *       writer's own ghost slot. The model checks it at every such IDLE write,
 *       also of another process's or a passed-over qnode (the code uses the
 *       transport there: a superset); -DTRY: also at a busy try's "never
 *       published" IDLE. -DOLD_CHECKS: (c) as it was before
 *       (f) (without gn, glink) and no check at the IDLE writes, to see what
 *       the other assertions catch;
 *   (g) -DREADOPT: a process claims a new place (step 1, not a try's) only
 *       when each of its two places is IDLE, PASSED or a posted Q: it never
 *       leaves a second unmarked abandoned place in the queue (check_claim).
 *       It may find both PASSED (-DREACH=4): one pass marks its successor
 *       before it retires its Q, and they may be the same process's places;
 *       then the claim waits for the retire (the code takes a third place).
 * With -DPOSTED the ghosts gpass/gdone/gn have a slot per completer besides
 * the three of the nodes' passers (3 + p), and a pending post counts as a
 * passer's Q in (c) from the post to the completer's last access to it.
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_NO_WAIT_NEXT   pass: when the CAS on W fails, do not wait for Q.next
 *       (the successor has swapped but not yet PUT): the passer takes the
 *       NONE as "nobody behind", sets Q IDLE and returns -> the successor
 *       is never granted: (d) stall.
 *   BUG_GRANT_PUT      pass: grant by a plain write of GRANTED(s+1), not a CAS
 *       from WAITING: an abandoned waiter is "granted", nobody holds and
 *       nobody passes -> (d) stall (or W left HELD at the end).
 *   BUG_ABANDON_STORE  timeout: plain store of ABANDONED instead of the CAS: a
 *       grant that arrived is overwritten and the waiter returns timeout ->
 *       (d) stall (nobody holds W).
 *   BUG_IDLE_EARLY     pass: Q.state := IDLE at the top of each iteration,
 *       before reading Q.next and the CAS on W. For the node's own Q this is
 *       harmless (its owner needs the node lock the passer holds: with
 *       -DTIMEOUTS=0 spin finds no error); for an abandoned Q of another
 *       node, its owner re-enqueues it while W still names it -> (c).
 *   BUG_REUSE_ABANDONED  a timed-out process reuses its ABANDONED qnode
 *       without waiting for IDLE -> (c).
 *   BUG_NO_BOUND       release: a local hand-off whenever a local waiter
 *       exists, ignoring BOUND -> (e).
 *   BUG_NO_SETTLE      no settle step. Needs LTIMEOUTS >= 1 (without local
 *       timeouts settle never finds anything to do): a waiter counted by a
 *       releaser that kept gq times out of its local wait; the node keeps W
 *       forever -> (d).
 *   BUG_NO_SETTLE_ON_GIVEUP  (needs LTIMEOUTS >= 1) only the releaser
 *       settles, a local waiter that gives up does not: the releaser's settle
 *       ran while the waiter was still registered (and so did nothing) ->
 *       (d). Both settles are needed.
 *   BUG_SETTLE_NO_RECHECK  settle trusts its unlocked read of gq instead of
 *       re-reading it under the node lock: the holder it raced with has
 *       passed meanwhile, and the settler passes a stale Q -> (d) stall
 *       (or (a)/(c)).
 *   BUG_RETIRE_FAILED_FREE  pass: the CAS on W fails (a successor swapped in)
 *       but the passer retires its own first Q with the own store anyway, in
 *       the CAS's step, then goes on as usual (waits for the link, grants,
 *       sets Q IDLE again): the successor has not linked yet -> (f) (glink).
 *       Nothing else catches it (-DOLD_CHECKS: no error): Q's only claimant
 *       is the passer itself, busy in the pass. With -DPOSTED the completer's
 *       failed landing does the same (-> (f); there (c) would catch it too:
 *       the completer holds no node lock, so the process re-claims Q).
 *   With -DTRY:
 *   BUG_TRY_LAST_GUESS  the try's code before the fix (a loop of two CASes
 *       that took the value a failed CAS found as its next guess, also after
 *       the second): a second CAS that finds W FREE(y) (taken and freed since
 *       the first) counts as taken, token y+1, with W not HELD(q): the next
 *       acquire takes W FREE(y) too -> (a) or (b).
 *   With -DREADOPT:
 *   BUG_READOPT_MARKED  the re-adoption CAS also takes a PASSED place back (a
 *       mark equal to the abandoned value, as before PASSED): the pass has
 *       moved on to it and frees W from it or grants its successor; its
 *       retire CAS then fails -> (d) stall (or a place left non-IDLE).
 *   BUG_PASS_NO_REGRANT  a mark that finds the place WAITING (taken back) is
 *       taken as a pass-over: the pass moves on, the owner waits at a place
 *       nobody will grant -> (d).
 *   BUG_READOPT_STORE  re-adoption by a read that finds ABANDONED and then a
 *       store of WAITING: the store lands after the mark (and the retire, so
 *       on a retired place) -> (d).
 *   BUG_READOPT_RELINK  the place taken back is also swapped into W and
 *       linked again (steps 2, 4): it is in the queue twice, here linked
 *       behind itself -> a grant CAS finds it GRANTED (the grant's assertion).
 *   BUG_NO_READOPT     the code before re-adoption (the place is not
 *       remembered, every acquire claims a new one) -> (g).
 *   With -DPOSTED:
 *   BUG_POST_RETIRE_EARLY  the post sets Q.state := IDLE at once, before the
 *       CAS lands: Q's owner claims Q again while W still names it -> (c).
 *   BUG_POST_NO_CONTINUE  a failed posted CAS: the completer sets Q IDLE and
 *       stops, nobody grants the successor that swapped in -> (d) stall.
 *   BUG_POST_COMPLETE_LOCKED  the completer finishes under the node lock
 *       (taking it when free, or inside its process's own calls while that
 *       holds it): a node-mate holding the node lock waits in the global
 *       queue behind Q for the grant the completer would give -> (d) stall.
 *   BUG_POST_CALLS_ONLY  no progress thread: the completer starts only while
 *       its process is inside an rdlm call (ghost incall), and each process
 *       ends with a barrier outside rdlm (wait until all finished), then a
 *       call (destroy): a successor that swapped in behind the last posted
 *       Q waits for a poster that waits for it -> (d) stall.
 */

#ifndef NA
#define NA 2            /* processes on node 0: 0 .. NA-1 */
#endif
#ifndef NP
#define NP 3            /* processes in all */
#endif
#ifndef NB
#define NB (NP - NA)    /* on node 1: NA .. NA+NB-1; the rest on node 2 */
#endif
#ifndef LOOPS
#define LOOPS 2         /* acquires per process (-DLOOPS0=: of process 0) */
#endif
#ifndef BOUND
#define BOUND 1         /* cohort bound (RDLM_COHORT_BOUND): local hand-offs
                           per global hold, i.e. BOUND + 1 critical sections */
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1      /* global-wait deadlines per run */
#endif
#ifndef LTIMEOUTS
#define LTIMEOUTS 0     /* node-local-wait deadlines per run */
#endif
#ifndef TRIES
#define TRIES 2         /* -DTRY: acquires per run that are tries */
#endif

#define NQ (2 * NP)
#define NONE 0
#define FREEB 64
#define FREEW(s) (FREEB + (s))
#define IS_FREE(w) ((w) >= FREEB)
#define IDLE 0
#define WAITING 1
#define ABANDONED 2
#ifdef READOPT
#define PASSED 3        /* ABANDONED marked by a pass (the code's low tag 3) */
#define GRANTED(s) (4 + (s))
#define IS_GRANTED(x) ((x) >= 4)
#define AGAIN 255       /* pass's o: the mark CAS found WAITING (re-adopted) */
#else
#define GRANTED(s) (3 + (s))
#define IS_GRANTED(x) ((x) >= 3)
#undef REACH
#endif

/* -DREACH=k (with -DREADOPT; each expected to fail, so not vacuous): an
   assertion that fails where the search reaches run k: 1 a re-adopted wait is
   granted; 2 a re-adopted wait times out again; 3 a pass's mark finds the
   place re-adopted and its grant again succeeds; 4 a claim finds both of its
   process's places PASSED (it needs a third place: a pass marks its successor
   before it retires its Q). Ghost ra: the process waits at a place it took
   back. */
#ifdef REACH
#define REACHED(k, c) assert(REACH != (k) || !(c))
#define RA_BEGIN ra = 1
#define RA_END(k) REACHED(k, ra); ra = 0
#else
#define REACHED(k, c) skip
#define RA_BEGIN skip
#define RA_END(k) skip
#endif

#define ME (_pid + 1)
#ifdef POSTED
#define NG (3 + NP)     /* ghost passer slots: 3 nodes, then NP completers */
#define NFIN (2 * NP)   /* processes and completers */
#else
#define NG 3
#define NFIN NP
#endif
#define NODE(p) ((p) < NA -> 0 : ((p) < NA + NB -> 1 : 2))
#define NN (NP > NA + NB -> 3 : 2)      /* nodes */

/* shared words */
byte W = FREEW(0);
byte qstate[NQ];
byte qnext[NQ];

/* per node: the node-local lock word and the cohort state it protects */
byte lheld[3];
byte lwait[3];
byte gq[3];
byte handoffs[3];
byte seq[3];

#ifdef POSTED
/* per process: its posted release in flight (the code's table, one slot) */
byte pq[NP];            /* the posted Q, NONE = slot free */
byte ps[NP];            /* its token sequence s, until the CAS lands */
#ifdef BUG_POST_CALLS_ONLY
bit incall[NP];         /* the process is inside an rdlm call */
#endif
#endif

/* environment */
byte gtimeouts = TIMEOUTS;
byte ltimeouts = LTIMEOUTS;
#ifdef TRY
byte tries = TRIES;
#endif

/* ghosts */
byte cs;                /* ME of the process in the CS, 0 = none (a) */
byte last_token;        /* (b) */
byte gpass[NG];         /* per node (per completer): the Q its passer is
                           still using (c) */
byte gdone[NG];         /* per node (per completer): the passer's Q whose
                           successor it has granted; Q.next is dead until Q
                           turns IDLE (c) */
byte gn[NG];            /* per node (per completer): the qnode n its passer has
                           read from Q.next and is about to grant (c), (f) */
byte glink[NP];         /* per process: the qnode it swapped out of W and is
                           about to link behind (SWAP to PUT) (c), (f) */
bit  gw[3];             /* per node: a process waits in the global queue (e) */
byte ovt[3];            /* CSes of other nodes since that wait began (e) */
byte finished;          /* processes (and completers) done (d) */

/* (f): the caller (ghost slot gx) writes Q.state := IDLE with a CPU store
   (rdlm_global_q_set_own_state) after W was freed from Q. -DOLD_CHECKS: the
   assertions as they were before (f) (no check there, and (c) without the
   glink/gn conjuncts), to see what they catch without it. */
#ifdef OLD_CHECKS
#define CHECK_RETIRE(x, gx) skip
#define NOT_GRANTING(k, x)  1
#else
#define CHECK_RETIRE(x, gx) check_unreferenced(x, gx)
#define NOT_GRANTING(k, x)  (gn[k] != (x))
#endif

/* (c), (f): nothing but the caller refers to q, so no other process can act on
   this use of q (no remote atomic on its words can be in flight or still come):
   W is not HELD(q); no passer (or completer) other than the caller's ghost slot
   me (NG: none) has q as its Q or is about to grant it; no waiter is about to
   link behind q; no non-IDLE qnode's next is q (except a Q whose successor its
   passer granted: gdone). Scratch i, n: zero on entry and exit. One d_step:
   the loops add no states to the search. */
inline check_unreferenced(q, me) {
  d_step {
    assert(W != q);
    i = 0;
    do
    :: i == NG -> break
    :: i < NG -> assert(i == me || (gpass[i] != q && NOT_GRANTING(i, q))); i++
    od;
#ifndef OLD_CHECKS
    i = 0;
    do
    :: i == NP -> break
    :: i < NP -> assert(glink[i] != q); i++
    od;
#endif
    i = 0;
    do
    :: i == NQ -> break
    :: i < NQ ->
        n = 0;
        do
        :: n == NG || gdone[n] == i + 1 -> break
        :: n < NG && gdone[n] != i + 1 -> n++
        od;
        assert(qstate[i] == IDLE || qnext[i] != q || n < NG);
        n = 0;
        i++
    od;
    i = 0
  }
}

/* the grant: CAS(n.state, WAITING -> GRANTED(s+1)); o := the old state;
   gx: the passer's ghost slot (nd, or 3 + p for p's completer) */
#ifdef BUG_GRANT_PUT
#define GRANT(gx) \
    o = qstate[n - 1]; qstate[n - 1] = GRANTED(s + 1); o = WAITING; \
    gdone[gx] = Q; gn[gx] = 0
#elif defined(READOPT)
#define GRANT(gx) \
    o = qstate[n - 1]; \
    assert(o == WAITING || o == ABANDONED); \
    if \
    :: o == WAITING -> qstate[n - 1] = GRANTED(s + 1); gdone[gx] = Q; gn[gx] = 0 \
    :: else -> skip \
    fi
#else
#define GRANT(gx) \
    o = qstate[n - 1]; gn[gx] = 0; \
    assert(o == WAITING || o == ABANDONED); \
    if \
    :: o == WAITING -> qstate[n - 1] = GRANTED(s + 1); gdone[gx] = Q \
    :: else -> skip \
    fi
#endif

/* -DREADOPT: the grant found n ABANDONED: mark it, CAS(n.state, ABANDONED ->
   PASSED), before Q is retired; the mark finding WAITING (n's owner re-adopted
   it) grants again (o := AGAIN), and so on until a CAS succeeds: o ends WAITING
   (granted) or PASSED (passed over). gn[gx] keeps n until the passer has moved
   on to it (GN_DONE). BUG_PASS_NO_REGRANT: a mark finding WAITING is taken as
   passed over. */
#ifdef READOPT
#ifdef BUG_PASS_NO_REGRANT
#define REGRANT o = PASSED                          /* bug: "passed over" */
#else
#define REGRANT o = AGAIN
#endif
#define MARK \
    o = qstate[n - 1]; \
    assert(o == ABANDONED || o == WAITING); \
    if \
    :: o == ABANDONED -> qstate[n - 1] = PASSED; o = PASSED \
    :: else -> REGRANT \
    fi
#define MARK_LOOP(gx) \
    do \
    :: atomic { o == ABANDONED -> MARK } \
    :: atomic { o == AGAIN -> GRANT(gx); REACHED(3, o == WAITING) } \
    :: else -> break \
    od;
#define GN_DONE(gx) gn[gx] = 0
#else
#define MARK_LOOP(gx)
#define GN_DONE(gx) skip
#endif

/* Q.state := IDLE (BUG_IDLE_EARLY: done already at the top of the loop).
   gpass[nd] is cleared with the passer's last access to Q: the IDLE write,
   or under BUG_IDLE_EARLY (LAST_Q) the last read of Q.next / CAS on W. */
#ifdef BUG_IDLE_EARLY
#define SET_IDLE(x) skip
#define LAST_Q      gpass[gx] = 0
#elif defined(READOPT)
/* the retire: the holder's own first Q by a store, a passed-over place by
   CAS(PASSED -> IDLE) (rdlm_glock_retire), which fails only if the place
   changed since its mark (BUG_READOPT_MARKED) */
#define SET_IDLE(x) \
    if \
    :: OWN_Q(x, gx) -> qstate[(x) - 1] = IDLE \
    :: else -> \
        if \
        :: qstate[(x) - 1] == PASSED -> qstate[(x) - 1] = IDLE \
        :: else -> skip \
        fi \
    fi
#define LAST_Q      skip
#else
#define SET_IDLE(x) qstate[(x) - 1] = IDLE
#define LAST_Q      skip
#endif
/* x is the passer's first Q: its node's place, gq[gx] (a completer's pass
   starts at a place passed over) */
#define OWN_Q(x, gx) ((gx) < 3 && (x) == gq[gx])

/* settle's gq: read once without the lock (the bug) or re-read under it */
#ifdef BUG_SETTLE_NO_RECHECK
#define STALE_Q(x) Q = (x)
#define RECHECK_Q  skip
#else
#define STALE_Q(x) skip
#define RECHECK_Q  Q = gq[nd]
#endif

/* the caller of pass holds the node lock and, in its last step, set
   Q := gq[nd], s := seq[nd] (PASS_BEGIN) */
#define PASS_BEGIN  Q = gq[nd]; s = seq[nd]; gpass[nd] = Q; assert(Q != NONE)

/* -DPOSTED: the post (pass's NONE case when the passer's slot is free; only a
   process posts, its completer's passes block). BUG_POST_RETIRE_EARLY: Q
   turns IDLE at once. */
#ifdef POSTED
#define MAYPOST     (pq[_pid] == NONE)
#define BLOCKING(m) && !(m)
#ifdef BUG_POST_RETIRE_EARLY
#define RETIRE_EARLY qstate[Q - 1] = IDLE
#else
#define RETIRE_EARLY skip
#endif
#define POST(gx) \
    pq[_pid] = Q; ps[_pid] = s; gpass[3 + _pid] = Q; gpass[gx] = 0; \
    RETIRE_EARLY; Q = NONE; s = 0
#else
#define MAYPOST     0
#define BLOCKING(m)
#endif
#ifdef BUG_POST_CALLS_ONLY
#define CALL_BEGIN  ; incall[_pid] = 1
#else
#define CALL_BEGIN
#endif

/* BUG_RETIRE_FAILED_FREE: a free of W that failed (a successor swapped in)
   still retires Q with the own store, in the failed CAS's step, when `own`
   holds (the caller's own qnode, as rdlm_glock_retire_freed tests; in pass
   only its first Q, gq[gx]: OWN_FIRST); the rest of the release then goes on
   as usual (wait for the link, grant, Q IDLE again). */
#ifdef BUG_RETIRE_FAILED_FREE
#define FAILED_FREE(own, gx) \
    if :: own -> CHECK_RETIRE(Q, gx); qstate[Q - 1] = IDLE :: else -> skip fi
#else
#define FAILED_FREE(own, gx) skip
#endif
#define OWN_FIRST(gx) (OWN_Q(Q, gx) && (Q - 1) / 2 == _pid)

/*
 * pass(Q, s): hand the global lock on from the node's qnode Q with token
 * sequence s; gx: the passer's ghost slot; mayp: the NONE case may post
 * (-DPOSTED). Leaves Q, n, o, s, c zero.
 */
inline pass(gx, mayp) {
    do
    ::
#ifdef BUG_IDLE_EARLY
        atomic { qstate[Q - 1] = IDLE };                /* bug: too early */
#endif
        atomic { n = qnext[Q - 1]; gn[gx] = n;
                 if :: n != NONE -> LAST_Q :: else fi };
        if
        :: atomic { n != NONE -> GRANT(gx) }
#ifdef POSTED
        :: atomic { n == NONE && (mayp) -> POST(gx) };  /* the completer */
           break                                        /* goes on */
#endif
        :: atomic {
               n == NONE BLOCKING(mayp) ->  /* CAS(W, HELD(Q) -> FREE(s)) */
               if
               :: W == Q -> W = FREEW(s); c = 1; LAST_Q
               :: else -> FAILED_FREE(OWN_FIRST(gx), gx)
               fi
           };
           if
           :: atomic { c -> CHECK_RETIRE(Q, gx);      /* (f): own store */
                            SET_IDLE(Q); gpass[gx] = 0;
                            Q = NONE; s = 0; c = 0 };
              break                                     /* W is free */
#ifdef BUG_NO_WAIT_NEXT
           :: atomic { !c -> qstate[Q - 1] = IDLE; gpass[gx] = 0;
                             Q = NONE; s = 0 };
              break                         /* bug: "nobody behind" */
#else
           :: atomic { !c && qnext[Q - 1] != NONE -> n = qnext[Q - 1];
                              gn[gx] = n; LAST_Q };
              atomic { GRANT(gx) }
#endif
           fi
        fi;
        MARK_LOOP(gx)
        if
        :: atomic { o == WAITING ->         /* granted: done */
               SET_IDLE(Q); gpass[gx] = 0; gdone[gx] = 0;
               Q = NONE; n = NONE; o = 0; s = 0 };
           break
        :: atomic { o != WAITING ->         /* abandoned: pass over n too */
               SET_IDLE(Q); gdone[gx] = 0; GN_DONE(gx);
               Q = n; gpass[gx] = Q; n = NONE; o = 0 }
        fi
    od
}

/*
 * settle (rdlm_global_settle): after leaving the node lock free with gq possibly
 * set. (1) gq != NONE? (2) is the node lock idle (free, nobody registered)?
 * -- both read without the lock; (3) try-lock, which bumps the node's token
 * like any local acquire; under the lock re-read gq: != NONE -> pass; unlock.
 * BUG_SETTLE_NO_RECHECK trusts the gq read in (1) instead of re-reading it.
 */
inline settle() {
#ifndef BUG_NO_SETTLE
    if
    :: atomic { gq[nd] != NONE -> STALE_Q(gq[nd]) };
       if
       :: atomic { lheld[nd] == 0 && lwait[nd] == 0 };     /* idle */
          if
          :: atomic { lheld[nd] == 0 && lwait[nd] == 0 ->  /* try-lock */
                      lheld[nd] = ME; seq[nd]++; RECHECK_Q;
                      if
                      :: Q != NONE -> s = seq[nd]; gpass[nd] = Q
                      :: else -> skip
                      fi };
             if
             :: Q != NONE ->
                pass(nd, MAYPOST);
                atomic { gq[nd] = NONE; handoffs[nd] = 0; lheld[nd] = 0 }
             :: else -> atomic { lheld[nd] = 0 }
             fi
          :: else -> Q = NONE              /* taken: its release decides */
          fi
       :: else -> Q = NONE
       fi
    :: else -> skip
    fi
#else
    skip                                    /* bug: no settle step */
#endif
}

/* step 1 of a global acquire or try: claim an IDLE own qnode q, (c) */
inline claim() {
        atomic {
            if
            :: qstate[2 * _pid] == IDLE -> q = 2 * _pid + 1
#ifdef BUG_REUSE_ABANDONED
            :: qstate[2 * _pid] == ABANDONED -> q = 2 * _pid + 1
            :: qstate[2 * _pid] != IDLE && qstate[2 * _pid] != ABANDONED &&
               (qstate[2 * _pid + 1] == IDLE || qstate[2 * _pid + 1] == ABANDONED) ->
                q = 2 * _pid + 2
#elif defined(ANY_QNODE)
            :: qstate[2 * _pid + 1] == IDLE -> q = 2 * _pid + 2
#else
            :: qstate[2 * _pid] != IDLE && qstate[2 * _pid + 1] == IDLE ->
                q = 2 * _pid + 2
#endif
            fi;
            check_unreferenced(q, NG);                  /* (c) */
            assert(qstate[q - 1] == IDLE);
            qnext[q - 1] = NONE; qstate[q - 1] = WAITING
        }
}

/* the try's second CAS failed, finding o in W: BUG_TRY_LAST_GUESS takes a FREE
   o as its guess and counts the CAS as taken (the loop's last `expected = old`) */
#ifdef BUG_TRY_LAST_GUESS
#define TRY_LAST_GUESS \
    :: IS_FREE(o) -> seq[nd] = o - FREEB + 1; tok = seq[nd]; gq[nd] = q; \
                     q = 0; o = 0; goto hold
#else
#define TRY_LAST_GUESS
#endif

/*
 * -DREADOPT: re-adoption (1'). READOPT_TAKE: the CAS succeeded; the wait
 * begins again ((e): gw, ovt) with a deadline or not, as at a SWAP.
 * BUG_READOPT_MARKED: the CAS also takes a PASSED place back (a mark equal to
 * the abandoned value). BUG_READOPT_STORE: a read that finds ABANDONED, then a
 * store of WAITING (o = ABANDONED in between), which may land after a mark or
 * the retire. BUG_READOPT_RELINK: the place taken back is swapped into W and
 * linked again (steps 2 and 4). BUG_NO_READOPT: the code before re-adoption
 * (aq never set: every acquire claims) -> (g).
 */
#ifdef READOPT
#ifdef BUG_NO_READOPT
#define REMEMBER(x) skip                        /* bug: never taken back */
#else
#define REMEMBER(x) aq = (x)
#endif
#ifdef BUG_READOPT_MARKED
#define READOPTABLE(x) ((x) == ABANDONED || (x) == PASSED)
#else
#define READOPTABLE(x) ((x) == ABANDONED)
#endif
#ifdef BUG_READOPT_RELINK
#define READOPT_DONE goto swap                  /* bug: SWAP and link again */
#else
#define READOPT_DONE \
    gw[nd] = 1; ovt[nd] = 0; RA_BEGIN; \
    if \
    :: gtimeouts > 0 -> gtimeouts--; dl = 1 \
    :: true -> skip \
    fi; \
    goto waiting
#endif
#ifdef BUG_READOPT_STORE
#define READOPT_GUARD && o == 0
#define READOPT_TAKE  o = ABANDONED                 /* bug: read, then store */
#define READOPT_STORE \
        :: atomic { o == ABANDONED -> qstate[aq - 1] = WAITING; \
                    q = aq; aq = NONE; o = 0; READOPT_DONE }
#else
#define READOPT_GUARD
#define READOPT_TAKE  qstate[aq - 1] = WAITING; q = aq; aq = NONE; READOPT_DONE
#define READOPT_STORE
#endif
/* (g): a process claims a new place only when each of its places is IDLE,
   marked by a pass (PASSED) or (-DPOSTED) a posted Q (the model lets a
   node-mate post it): it never leaves a second unmarked abandoned place.
   Scratch i, n: zero on entry and exit; one d_step. */
inline check_claim() {
  d_step {
    i = 2 * _pid;
    do
    :: i == 2 * _pid + 2 -> break
    :: i < 2 * _pid + 2 ->
#ifdef POSTED
        do
        :: n == NP || pq[n] == i + 1 -> break
        :: n < NP && pq[n] != i + 1 -> n++
        od;
#else
        n = NP;
#endif
        assert(qstate[i] == IDLE || qstate[i] == PASSED || n < NP);
        n = 0;
        i++
    od;
    i = 0
  }
}
#define CHECK_CLAIM \
    check_claim(); \
    REACHED(4, qstate[2 * _pid] == PASSED && qstate[2 * _pid + 1] == PASSED)
#else
#define REMEMBER(x) skip
#endif

active [NP] proctype P()
{
    byte it, nd, q, Q, n, o, s, tok, i;
    bit dl, c;
#ifdef READOPT
    byte aq;            /* the place this process abandoned, until it takes it
                           back or finds it marked */
#endif
#ifdef REACH
    bit ra;
#endif

    nd = NODE(_pid);
#ifdef LOOPS0
    for (it : 1 .. (_pid == 0 -> LOOPS0 : LOOPS)) {
#else
    for (it : 1 .. LOOPS) {
#endif
#ifdef TRY
        if
        :: atomic { tries > 0 -> tries-- CALL_BEGIN };
           goto try_acquire
        :: true
        fi;
#endif
        /* node-local lock: register, then take it (or time out) */
        atomic { lwait[nd]++ CALL_BEGIN };
        do
        :: atomic {
               lheld[nd] == 0 -> lheld[nd] = ME; lwait[nd]--;
               if
               :: gq[nd] != NONE ->     /* local hand-off */
                   seq[nd]++; tok = seq[nd]; goto hold
               :: else -> skip
               fi
           };
           break
        :: atomic { ltimeouts > 0 -> ltimeouts--; lwait[nd]-- };
#ifndef BUG_NO_SETTLE_ON_GIVEUP
           settle();
#endif
           goto next
        od;

        /* global acquire, step 1 (with (c)): an IDLE own qnode */
#ifdef READOPT
        /* 1'. the place aq this process abandoned: CAS(aq.state, ABANDONED ->
           WAITING), and wait there again (no SWAP, no link: aq is still linked
           behind its predecessor); the CAS failed (marked or retired): forget
           aq, then claim. (g) at the claim. */
        do
        :: atomic {
               aq != NONE READOPT_GUARD ->
               if
               :: READOPTABLE(qstate[aq - 1]) -> READOPT_TAKE
               :: else -> aq = NONE             /* marked (and maybe retired) */
               fi
           }
        READOPT_STORE
        :: atomic { aq == NONE -> CHECK_CLAIM; claim() };
           break
        od;
#else
        claim();
#endif
        /* 2. SWAP(W, HELD(q)) */
swap:   atomic {
            o = W; W = q;
            if
            :: IS_FREE(o) ->                /* 3. free: token s+1 */
                seq[nd] = o - FREEB + 1; tok = seq[nd]; gq[nd] = q;
                q = 0; o = 0; goto hold
            :: else ->
                gw[nd] = 1; ovt[nd] = 0; glink[_pid] = o;
                if
                :: gtimeouts > 0 -> gtimeouts--; dl = 1
                :: true -> skip
                fi
            fi
        };
        /* 4. PUT p.next := q, then wait */
        atomic { qnext[o - 1] = q; o = 0; glink[_pid] = 0 };
waiting:
        do
        :: atomic {
               IS_GRANTED(qstate[q - 1]) ->
               seq[nd] = qstate[q - 1] - GRANTED(0); tok = seq[nd];
               gq[nd] = q; gw[nd] = 0; q = 0; dl = 0; RA_END(1); goto hold
           }
#ifdef BUG_ABANDON_STORE
        :: atomic { dl -> qstate[q - 1] = ABANDONED;   /* bug: a store */
                    gw[nd] = 0; q = 0; dl = 0 };
           goto timed_out
#else
        :: atomic {                         /* deadline: CAS WAITING -> ABANDONED */
               dl ->
               if
               :: qstate[q - 1] == WAITING ->
                   qstate[q - 1] = ABANDONED; gw[nd] = 0; REMEMBER(q);
                   q = 0; dl = 0; RA_END(2);
                   goto timed_out
               :: else ->                   /* granted after all: take it */
                   assert(IS_GRANTED(qstate[q - 1]));
                   seq[nd] = qstate[q - 1] - GRANTED(0); tok = seq[nd];
                   gq[nd] = q; gw[nd] = 0; q = 0; dl = 0; RA_END(1); goto hold
               fi
           }
#endif
        od;

timed_out:  /* q stays ABANDONED in the queue; unlock (gq is NONE) */
        atomic { lheld[nd] = 0 };
        goto next;

#ifdef TRY
try_acquire:    /* node-local try-lock; a local hand-off; else two CASes */
        if
        :: atomic {
               lheld[nd] == 0 && lwait[nd] == 0 -> lheld[nd] = ME;
               if
               :: gq[nd] != NONE ->     /* local hand-off */
                   seq[nd]++; tok = seq[nd]; goto hold
               :: else -> skip
               fi
           }
        :: atomic { !(lheld[nd] == 0 && lwait[nd] == 0) -> goto next }  /* busy */
        fi;
        claim();
        atomic {                        /* CAS(W, FREE(seq) -> HELD(q)) */
            if
            :: W == FREEW(seq[nd]) ->
                W = q; seq[nd]++; tok = seq[nd]; gq[nd] = q; q = 0; goto hold
            :: else -> o = W
            fi
        };
        if
        :: atomic { IS_FREE(o) ->       /* free with another token: once more */
               if
               :: W == o ->
                   W = q; seq[nd] = o - FREEB + 1; tok = seq[nd]; gq[nd] = q;
                   q = 0; o = 0; goto hold
               :: else -> o = W
               fi
           };
           if
           TRY_LAST_GUESS
           :: true
           fi
        :: else
        fi;
        atomic {                        /* busy: "never published" own store */
            CHECK_RETIRE(q, NG);                        /* (f) */
            qstate[q - 1] = IDLE; q = 0; o = 0; lheld[nd] = 0
        };
        goto next;
#endif

hold:   /* enter the critical section with token tok */
        atomic {
            assert(cs == 0);                            /* (a) */
            assert(tok > last_token);                   /* (b) */
            cs = ME; last_token = tok; tok = 0;
            i = 0;
            do
            :: i == 3 -> break
            :: i < 3 && i != nd && gw[i] ->
                ovt[i]++;
                assert(ovt[i] <= (NN - 1) * (BOUND + 1)); /* (e) */
                i++
            :: i < 3 && (i == nd || !gw[i]) -> i++
            od;
            i = 0
        };
        /* leave it; release: decide (reads the node lock word) */
        atomic {
            assert(cs == ME); cs = 0;
            assert(lheld[nd] == ME && gq[nd] != NONE);
            if
#ifdef BUG_NO_BOUND
            :: lwait[nd] > 0 ->
#else
            :: handoffs[nd] < BOUND && lwait[nd] > 0 ->
#endif
                handoffs[nd]++                  /* local hand-off: keep gq */
            :: else ->
                PASS_BEGIN; goto release_global
            fi
        };
        atomic { lheld[nd] = 0 };
        settle();
        goto next;
release_global:
        pass(nd, MAYPOST);
        atomic { gq[nd] = NONE; handoffs[nd] = 0; lheld[nd] = 0 };
next:
#ifdef BUG_POST_CALLS_ONLY
        atomic { incall[_pid] = 0 }     /* back in the application */
#else
        skip
#endif
    }
    atomic { finished++; it = 0; nd = 0; REMEMBER(0) }
#ifdef BUG_POST_CALLS_ONLY
    /* a barrier outside rdlm, then the context's destroy (a call) */
    atomic { finished >= NP -> incall[_pid] = 1 }
#endif
}

#ifdef POSTED
/*
 * Process p's completer (pid NP + p): the posted CAS lands, then the release
 * is finished, without the node lock, concurrently with p's own steps.
 * BUG_POST_COMPLETE_LOCKED: it finishes under the node lock, taken when free
 * or borrowed while p itself holds it (l: taken).
 */
#define CP  (_pid - NP)                 /* the poster */
#define GC  (3 + CP)                    /* its ghost slot */
#ifdef BUG_POST_COMPLETE_LOCKED
#define UNLOCK_C if :: l -> lheld[NODE(CP)] = 0; l = 0 :: else -> skip fi
#else
#define UNLOCK_C skip
#endif
active [NP] proctype C()
{
    byte Q, n, o, s, i;
    bit c, l;

    do
    :: atomic {
           pq[CP] != NONE ->            /* lands: CAS(W, HELD(Q) -> FREE(s)) */
           Q = pq[CP]; s = ps[CP]; ps[CP] = 0;
           if
           :: W == Q -> W = FREEW(s); c = 1
           :: else -> FAILED_FREE((Q - 1) / 2 == CP, GC)
           fi
       };
#ifdef BUG_POST_CALLS_ONLY
       atomic { incall[CP] -> skip };   /* bug: only inside p's calls */
#endif
#ifdef BUG_POST_COMPLETE_LOCKED
       atomic {
           lheld[NODE(CP)] == 0 || lheld[NODE(CP)] == CP + 1 ->
           if
           :: lheld[NODE(CP)] == 0 -> lheld[NODE(CP)] = ME; l = 1
           :: else -> skip
           fi
       };
#endif
       if
       :: atomic { c -> CHECK_RETIRE(Q, GC);         /* (f): own store */
                        qstate[Q - 1] = IDLE; gpass[GC] = 0; pq[CP] = NONE;
                        Q = NONE; s = 0; c = 0; UNLOCK_C }
#ifdef BUG_POST_NO_CONTINUE
       :: atomic { !c -> qstate[Q - 1] = IDLE; gpass[GC] = 0; /* bug: stop */
                         pq[CP] = NONE; Q = NONE; s = 0; UNLOCK_C }
#else
       :: atomic { !c && qnext[Q - 1] != NONE -> n = qnext[Q - 1]; gn[GC] = n };
          atomic { GRANT(GC) };
          MARK_LOOP(GC)
          if
          :: atomic { o == WAITING ->       /* granted: done */
                 qstate[Q - 1] = IDLE; gpass[GC] = 0; gdone[GC] = 0;
                 pq[CP] = NONE; Q = NONE; n = NONE; o = 0; s = 0; UNLOCK_C }
          :: atomic { o != WAITING ->       /* abandoned: pass over n */
                 qstate[Q - 1] = IDLE; gdone[GC] = 0; GN_DONE(GC);
                 Q = n; gpass[GC] = Q; n = NONE; o = 0 };
             pass(GC, false);               /* blocking */
             atomic { pq[CP] = NONE; UNLOCK_C }
          fi
#endif
       fi
    :: atomic { finished >= NP && pq[CP] == NONE -> break }
    od;
    atomic { finished++ }
}
#endif

/* (d) at the end of a run where everybody finished */
active proctype Final()
{
    byte i;
    atomic {
        finished == NFIN ->
        assert(IS_FREE(W));
        assert(gq[0] == NONE && gq[1] == NONE && gq[2] == NONE);
        assert(lheld[0] == 0 && lheld[1] == 0 && lheld[2] == 0);
        i = 0;
        do
        :: i == NQ -> break
        :: i < NQ -> assert(qstate[i] == IDLE); i++
        od
    }
}
