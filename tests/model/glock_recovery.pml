/*
 * glock_recovery.pml -- spin model of dead-holder recovery for the global queue
 * lock of core/dist/glock.c (dist_lock.pml models the lock without it; README.md
 * says which of the changes below glock.c has): waiters
 * break the lock of a dead holder once the lease authority has committed the
 * dead process's expiry. One lock; NP processes, each on its own node (no
 * cohorts), each acquires and releases the lock LOOPS times.
 *
 * THE PROPOSAL DOES NOT HOLD (README.md, "glock_recovery.pml"): one crash can
 * stall it. The model has the proposal plus four changes found with it, each
 * reverted by a -DPROPOSED_... switch (-DPROPOSED: all four), and with them
 * one crash still stalls the lock when a timeout is in the run (stale H,
 * below); without timeouts the changed protocol passes.
 *
 * Words (every access to a shared word is ONE step, as one remote atomic, put
 * or get is). A link (q, g) names queue node ("qnode") q, 1 .. NQ, in its
 * generation g: LINK(q, g) = 4q + g >= 4; 0 .. 3 are "no link". Process p
 * owns qnodes 2p+1 and 2p+2.
 *   W, wp     the lock's word at its home (two bytes, always accessed
 *             together): W = FREE(t) = t (t = last token issued) or HELD(l)
 *             = 64 + l, l the tail's link; wp = the tail's predecessor's link,
 *             0 if the tail took W while FREE (the proposal's f = (wp == 0);
 *             with PROPOSED_LINK and CODE wp is just !f). Initially
 *             FREE(0).
 *   H         a second home word: 0 or the link of the qnode instance the lock
 *             was last passed to (or declared to, by a passer that found its
 *             owner dead).
 *   state[q]  IDLE 0, WAITING(g) 4+g, ABANDONED(g) 8+g, GRANTED(t) 16+t;
 *             ABANDONED also carries the abandoner's pl and pp (aprev, app:
 *             the same 64-bit word in a real encoding).
 *   next[q]   EMPTY(g) = g (no link yet, in generation g) or a link
 *             (PROPOSED_LINK: EMPTY is 0).
 *   gen[q]    owner-private: +1 at each claim. A qnode is claimed at most
 *             LOOPS <= 3 times, so gen never wraps (the model asserts it).
 *   Authority (abstract): expired, bit p set once p's lease expiry is
 *             committed. Environment: dead, bit p set once p is dead for the
 *             transport. Both only ever grow. The home never fails.
 *
 * Faults (budget CRASHES per run, 1 by default): instead of any step a process
 * may crash: it never moves again and is dead for the transport from then on
 * (any get, put or CAS by another process on its qnodes fails with PEER_DEAD
 * and leaves the word untouched). At any later moment the authority commits
 * its expiry (process Authority). -DZOMBIE: a fault is a pause instead: the
 * process is reported dead (transport timeout) and stays so, may be expired,
 * and once expired may RESUME and run its remaining steps; its writes to W,
 * H and other processes' qnodes land. It is then fenced (its lease expired):
 * it is excluded from (a) and (b), and it may give up any wait (its calls
 * return EXPIRED), so only its late writes matter. Two faults adjacent in one
 * queue stall the lock by design (-DCRASHES=2 shows it).
 *
 * Acquire by P (node x: the lowest IDLE own qnode; none IDLE: wait):
 *   1. gen[x]++, g := gen[x]; next[x] := EMPTY(g); state[x] := WAITING(g)
 *      (one step)
 *   2. old := (W, wp); W := HELD(LINK(x, g)), wp := old's tail or 0 if FREE
 *      (the CAS loop: failed CASes change nothing, the successful one is the
 *      step). pl := old's tail, pp := old's wp.
 *   3. old = FREE(t): holds with token t + 1.
 *   4. link: CAS(next[pl], EMPTY(gpl) -> LINK(x, g)) [proposal: PUT]
 *      (PEER_DEAD: skipped).
 *   5. wait until state[x] == GRANTED(t): holds with token t. Meanwhile:
 *      recovery, a check (one step: the home's H, the transport's view and
 *      the authority's are read together; the last two only grow) -- pl's
 *      owner dead and expired, and (f or H == pl or H == LINK(x, g)) -- then
 *      the takeover, one step: CAS(state[x], WAITING(g) -> GRANTED(tnew)),
 *      tnew = 1 + the largest token issued so far (in the real system a
 *      token of a new authority epoch); failure: GRANTED by a late grant,
 *      hold with it. Deadline (budget TIMEOUTS per run, chosen at step 2):
 *      CAS(state[x], WAITING(g) -> ABANDONED(g, pl, pp)); failure: hold.
 *
 * Release by the holder, pass(Q := x, t := its token), in glock.c's order
 * (rdlm_glock_pass: the node passed from is set IDLE after the grant CAS):
 *   loop: n := next[Q]  (own memory for x; a get for a passed-over Q:
 *                        PEER_DEAD -> done)
 *     no link: CAS(W, HELD(Q) -> FREE(t)), whatever wp (glock.c tries both
 *             forms of the FIRST bit); success: state[Q] := IDLE, done;
 *             failure: wait until next[Q] is a link (PEER_DEAD -> done)
 *     A. H := n
 *     B. CAS(state[n], WAITING(gn) -> GRANTED(t + 1)) (PEER_DEAD: n's owner
 *        dead; H names n, n's successor takes over after n's expiry)
 *     state[Q] := IDLE  (PEER_DEAD: skipped)
 *     B found ABANDONED(gn): Q := n, loop (same t); else done.
 *
 * The four changes (default; -DPROPOSED_... reverts one):
 *   LINK      a successor that dies between its enqueue (step 2) and its link
 *       (step 4) leaves its predecessor waiting for next forever (one crash).
 *       W also keeps the tail's predecessor (wp); next is EMPTY(gen) until
 *       linked and every link is CAS(next[p], EMPTY(gp) -> l); and the link
 *       is completed by whoever sees it missing: a passer waiting for next[Q]
 *       when wp == Q (the tail is its successor) or when the tail is
 *       abandoned with app == Q (its pl is); a waiter whose pl's owner is
 *       dead, into next[pp]. The generation in EMPTY makes a late link
 *       (a zombie's, or the owner's own after someone completed it) fail on a
 *       reused qnode.
 *   ABANDON   a holder that dies with an abandoned place right behind it: the
 *       waiter behind that place sees a live predecessor and waits forever.
 *       ABANDONED carries the abandoner's (pl, pp); a waiter whose pl is
 *       abandoned inherits them (ab := the abandoned place; H == ab counts
 *       too, and if ab's owner dies, H == ab or H == x lets it take over).
 *   ADJACENT  one process dies owning its abandoned place and its next one,
 *       adjacent in the queue (two dead entries from one crash) with the
 *       lock at the first: the waiter behind takes over when H == pp and
 *       pp's owner is dead and expired as well.
 *   STRICT_B  the proposal asserts that grant CAS B never finds anything but
 *       WAITING(gn), ABANDONED(gn) or PEER_DEAD; after a takeover it can
 *       (the passer was slow, or a zombie): then the pass is done.
 *
 * -DCODE: what core/dist/glock.c implements (README.md). Of LINK only the
 * generations: EMPTY(g) and links by CAS; W keeps no predecessor (wp is just
 * "not FIRST") and nobody completes a missing link (glock.c gives up if its
 * link CAS finds anything but EMPTY(gpl) or PEER_DEAD: (e) says it never
 * does, not even a zombie's). STRICT_B; not ABANDON, not ADJACENT.
 * And the SWAP path, chosen by a per-process hint (hint, initially 1, set
 * by a pass that frees W, cleared by every acquire): with the hint step 2 is
 * the CAS loop above (FIRST iff W was free); without it, SWAP(W, HELD(x))
 * without FIRST, and if W was free, CAS(W, HELD(x) -> HELD(x) | FIRST); if
 * that fails (someone queued behind x), put H := LINK(x, g): the put lands
 * at any later moment (process Put), or never if the process crashes first.
 * One crash stalls it between enqueue and link (counterexample 1 of the
 * README) or between the SWAP and the landing of that put (its successor
 * sees neither FIRST nor H naming x). -DOUTSIDE_LINK_WINDOW forbids a crash
 * in the first window (any variant), -DOUTSIDE_SWAP_WINDOW in the second. And
 * the put may land after later writes of H, the process's own pass's among
 * them: then H is stale, and one crash of a later holder (or of the one a
 * pass is handing the lock to) stalls the lock (README.md). -DFLUSH_PUT (a
 * change glock.c does not have) waits until the put has landed before the
 * critical section.
 *
 * Properties:
 *   (a) mutual exclusion: a process whose lease is not expired enters the
 *       critical section only when every other process in it is expired (a
 *       crashed or paused holder counts until its expiry is committed);
 *   (b) tokens strictly increase over the critical sections entered by
 *       processes whose lease is not expired;
 *   (c) a takeover happens only after the predecessor's owner is expired
 *       (or, with ABANDON, the inherited place's owner);
 *   (d) no invalid end state: every live process completes its LOOPS
 *       acquires (timed-out ones return), whatever the (single) fault;
 *       faulty processes may stop anywhere. The authority may forfeit the
 *       rest of the fault budget at any moment, so that a stall reached
 *       with budget left is still a deadlock spin sees;
 *   (e) grant CAS B finds WAITING(gn), ABANDONED(gn) or PEER_DEAD, or
 *       (not with PROPOSED_STRICT_B) an instance that took over (ghost
 *       tkov): the link it followed is not otherwise stale; with CODE, the
 *       link CAS finds EMPTY(gpl) or PEER_DEAD.
 *
 * Abstracted: the probe interval and the lease TTL (a waiter may check at
 * any moment, the authority expire at any moment after the fault); the epoch
 * part of tokens (tnew = max + 1); revocation of home access of an expired
 * session (its late writes to W and H land: the worst case); the try path;
 * cohorts (dist_lock.pml); weaker memory orders. ABANDON keeps one inherited
 * place per waiter (asserted): enough for TIMEOUTS <= 1.
 *
 * Planted bugs (-DBUG_..., checked with -DTIMEOUTS=0, where the changed
 * protocol passes), each must be caught:
 *   BUG_NO_EXPIRY_CHECK  take over once p's owner is dead for the transport,
 *       without its committed expiry -> (c), (a) with a paused holder.
 *   BUG_NO_FLAG          the recovery check ignores f (only H) -> (d).
 *   BUG_TAKEOVER_ANY     take over whenever p's owner is dead and expired,
 *       ignoring f and H -> (a).
 *   BUG_H_AFTER_GRANT    the pass writes H after the grant CAS -> (d).
 *   BUG_NO_GEN           states, links and EMPTY carry no generation -> (e).
 */

#ifdef PROPOSED
#define PROPOSED_LINK
#define PROPOSED_ABANDON
#define PROPOSED_ADJACENT
#define PROPOSED_STRICT_B
#endif
#ifdef CODE
#define PROPOSED_ABANDON
#define PROPOSED_ADJACENT
#endif
/* W_PRED: the rest of LINK, W keeps the tail's predecessor and missing links
   are completed (not with PROPOSED_LINK, nor with CODE) */
#if !defined(PROPOSED_LINK) && !defined(CODE)
#define W_PRED
#endif
#ifndef NP
#define NP 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif

#define NQ (2 * NP)
#define OWNER(q) (((q) - 1) / 2)
#define LINK(q, g) (4 * (q) + (g))
#define LQ(l) ((l) / 4)
#define LG(l) ((l) % 4)

#define FREEW(t) (t)
#define HELDW(l) (64 + (l))
#define IS_HELD(w) ((w) >= 64)
#define WL(w) ((w) - 64)
/* wp for a tail behind link l: l (LINK), or just "has one" (the proposal,
   CODE) */
#ifdef W_PRED
#define PRED(l) (l)
#else
#define PRED(l) 1
#endif
#ifdef PROPOSED_LINK
#define EMPTY(g) 0
#else
#define EMPTY(g) (g)
#endif
#define IS_LINK(n) ((n) >= 4)

#define IDLE 0
#define WAITING(g) (4 + (g))
#define ABANDONED(g) (8 + (g))
#define GRANTED(t) (16 + (t))
#define IS_GRANTED(s) ((s) >= 16)
#define TOKEN(s) ((s) - 16)
#define PEER_DEAD 255   /* a result, never a state */

#define BIT (1 << _pid)
#define DEAD(p) ((dead >> (p)) & 1)
#define EXPIRED(p) ((expired >> (p)) & 1)
/* an access to qnode q by this process acts (its own memory, or a live peer) */
#define REACH(q) (OWNER(q) == _pid || !DEAD(OWNER(q)))

/* shared words */
byte W = FREEW(0);      /* the tail part of W: FREE(t) or HELD(tail) */
byte wp;                /* the other part: the tail's predecessor */
byte H;
byte state[NQ];
byte next[NQ];
byte gen[NQ];
byte aprev[NQ];         /* ABANDONED also carries the abandoner's pl, pp */
byte app[NQ];

/* environment and authority */
byte dead;
byte expired;
byte faults = CRASHES;
byte timeouts = TIMEOUTS;

/* ghosts */
byte incs;              /* bit p: p is in the critical section (a) */
byte last_token;        /* (b) */
byte maxtok;            /* the largest token issued */

int  tkov;              /* bit l: instance l took the lock over (e) */

#ifdef CODE
byte hput[NP];          /* the SWAP path's put H := l, issued, not landed */
#define PUT_PENDING (hput[_pid] != 0)
/* a crash loses the process's hint and its put not landed yet */
#define CRASH_CODE hint = 0; hput[_pid] = 0
/* a pass that frees W sets the hint */
#define FREED_HINT hint = 1
#else
#define PUT_PENDING 0
#define CRASH_CODE skip
#define FREED_HINT skip
#endif

#define ISSUE(t) if :: (t) > maxtok -> maxtok = (t) :: else -> skip fi
#define TOOK_OVER(l) tkov = tkov | (1 << (l))
/* (e): what grant CAS B may find besides WAITING, ABANDONED and PEER_DEAD:
   in the proposal nothing; else an instance that took over */
#ifdef PROPOSED_STRICT_B
#define STALE_OK 0
#else
#define STALE_OK ((tkov >> n) & 1)
#endif

#ifdef BUG_NO_GEN
#define NEWGEN(q) 0
#else
#define NEWGEN(q) (gen[(q) - 1] + 1)
#endif

/* the recovery check of a waiter on LINK(x, g) behind link pl, whose own
   predecessor was pp (0: pl took W while FREE, the flag f) */
#define F (pp == 0)
/* the owner of the place l is dead for the transport (and expired) */
#ifdef BUG_NO_EXPIRY_CHECK
#define GONE(l) (!REACH(LQ(l)))
#else
#define GONE(l) (!REACH(LQ(l)) && EXPIRED(OWNER(LQ(l))))
#endif
/* ABANDON: ab (0: none) is the abandoned place x inherited pl from; the
   lock is stuck at ab if ab's owner died and H names ab or x */
#define AB_STUCK (ab != 0 && GONE(ab) && (H == ab || H == LINK(x, g)))
/* ADJACENT: one process died owning pp and pl (its abandoned place and its
   next one, adjacent), and the lock reached pp */
#ifdef PROPOSED_ADJACENT
#define PP_STUCK 0
#else
#define PP_STUCK (pp != 0 && H == pp && GONE(pp))
#endif
#if defined(BUG_NO_FLAG)
#define MAY_TAKE_OVER \
    ((GONE(pl) && (H == pl || H == LINK(x, g) || (ab != 0 && H == ab))) || \
     AB_STUCK)
#elif defined(BUG_TAKEOVER_ANY)
#define MAY_TAKE_OVER (GONE(pl) || (ab != 0 && GONE(ab)))
#else
#define MAY_TAKE_OVER \
    ((GONE(pl) && (F || H == pl || H == LINK(x, g) || (ab != 0 && H == ab) || \
                   PP_STUCK)) || \
     AB_STUCK)
#endif

/* the link, CAS(next[q], EMPTY(gq) -> l) (the proposal: PUT next[q] := l);
   PEER_DEAD or a failed CAS: nothing written */
#ifdef PROPOSED_LINK
#define PROPOSED_PUT 1
#else
#define PROPOSED_PUT 0
#endif
#define LINK_INTO(q, gq, l) \
    if \
    :: REACH(q) && (next[(q) - 1] == EMPTY(gq) || PROPOSED_PUT) -> \
        next[(q) - 1] = (l) \
    :: else -> skip \
    fi
/* CODE, (e): glock.c gives up if its link CAS finds anything but EMPTY(gpl)
   or PEER_DEAD; it never does */
#ifdef CODE
#define LINK_CHECK assert(!REACH(LQ(pl)) || next[LQ(pl) - 1] == EMPTY(LG(pl)))
#else
#define LINK_CHECK skip
#endif
#ifdef PROPOSED_ABANDON
#define ABANDON_RECORD skip
#else
#define ABANDON_RECORD aprev[x - 1] = pl; app[x - 1] = pp
#endif

/* LINK: W's tail is abandoned and its pl is q's successor (read W, then get the
   tail's record: the record stays until the place is passed over, which
   needs q's successor linked) */
#define TAIL_ABANDONED_BEHIND(q, gq) \
    (REACH(LQ(WL(W))) && state[LQ(WL(W)) - 1] == ABANDONED(LG(WL(W))) && \
     app[LQ(WL(W)) - 1] == LINK(q, gq))

/*
 * A fault instead of the next step (body). Crash: stop for good, locals
 * cleared to keep states few. ZOMBIE: pause until expired, then stop or
 * resume with that step. The `skip` in STEP keeps an `else` in body from
 * being weighed against the fault option (README.md, "A Promela pitfall").
 * OUTSIDE_LINK_WINDOW: no fault at the link (LSTEP); OUTSIDE_SWAP_WINDOW:
 * none at the FIRST CAS of the SWAP path (SSTEP) nor while its put is
 * pending.
 */
#ifdef OUTSIDE_SWAP_WINDOW
#define MAY_FAULT (faults > 0 && !PUT_PENDING)
#else
#define MAY_FAULT (faults > 0)
#endif
#ifdef ZOMBIE
#define FAULT_THEN(body) \
    atomic { MAY_FAULT -> faults--; dead = dead | BIT }; \
    if \
    :: atomic { EXPIRED(_pid) -> goto stopped } \
    :: atomic { EXPIRED(_pid) -> skip; body } \
    fi
/* a resumed zombie may give up any wait: its calls return EXPIRED */
#define GIVE_UP atomic { DEAD(_pid) -> goto stopped }
#else
#define FAULT_THEN(body) \
    atomic { MAY_FAULT -> faults--; dead = dead | BIT; \
             it = 0; x = 0; g = 0; pl = 0; pp = 0; ab = 0; tok = 0; Q = 0; \
             n = 0; o = 0; c = 0; dl = 0; CRASH_CODE }; \
    goto stopped
#define GIVE_UP atomic { false }
#endif
#define STEP(body) if :: atomic { skip; body } :: FAULT_THEN(body) fi
#ifdef OUTSIDE_LINK_WINDOW
#define LSTEP(body) atomic { skip; body }
#else
#define LSTEP(body) STEP(body)
#endif
#ifdef OUTSIDE_SWAP_WINDOW
#define SSTEP(body) atomic { skip; body }
#else
#define SSTEP(body) STEP(body)
#endif

/* 2. enqueue: W := HELD(LINK(x, g)), its predecessor the old tail; took W
   free (3., token t + 1): wp := wfree (0: FIRST), goto free_label */
#define ENQUEUE(wfree, free_label) \
    if \
    :: !IS_HELD(W) -> \
        tok = W + 1; ISSUE(tok); W = HELDW(LINK(x, g)); wp = (wfree); \
        goto free_label \
    :: else -> \
        pl = WL(W); pp = wp; W = HELDW(LINK(x, g)); wp = PRED(pl); \
        if \
        :: timeouts > 0 -> timeouts--; dl = 1 \
        :: true -> skip \
        fi \
    fi

/*
 * pass(Q := x, g := its gen, tok): hand the lock on. Uses n, o, c; leaves
 * them, Q and g zero.
 */
inline pass() {
    do
    ::  /* n := next[Q] (own memory for x, a get for a passed-over Q) */
        STEP(if :: REACH(Q) -> n = next[Q - 1] :: else -> goto passed fi);
        if
        :: !IS_LINK(n) ->
            /* CAS(W, HELD(LINK(Q, g)) -> FREE(tok)) */
            STEP(if
                 :: W == HELDW(LINK(Q, g)) ->
                     W = FREEW(tok); wp = 0; c = 1; FREED_HINT
                 :: else -> skip
                 fi);
            if
            :: c -> STEP(if :: REACH(Q) -> state[Q - 1] = IDLE
                            :: else -> skip fi);
                    goto passed
            :: else
            fi;
            /* wait until next[Q] is a link */
            do
            :: atomic { REACH(Q) && IS_LINK(next[Q - 1]) ->
                        n = next[Q - 1]; break }
            :: atomic { !REACH(Q) -> goto passed }
#ifdef W_PRED
            /* LINK: learn Q's successor from W (the tail's predecessor
               is Q) or from the record of an abandoned tail (its pl's
               predecessor is Q), and complete its link */
            :: atomic { REACH(Q) && next[Q - 1] == EMPTY(g) && IS_HELD(W) &&
                        (wp == LINK(Q, g) || TAIL_ABANDONED_BEHIND(Q, g)) ->
                        if
                        :: wp == LINK(Q, g) -> n = WL(W)
                        :: else -> n = aprev[LQ(WL(W)) - 1]
                        fi }
               STEP(LINK_INTO(Q, g, n); n = 0)
#endif
            :: FAULT_THEN(skip)
            :: GIVE_UP
            od
        :: else
        fi;
#ifndef BUG_H_AFTER_GRANT
        STEP(H = n);                                            /* A */
#endif
        /* B: CAS(state[n], WAITING(gn) -> GRANTED(tok + 1)) */
        STEP(if
             :: !REACH(LQ(n)) -> o = PEER_DEAD
             :: else ->
                 o = state[LQ(n) - 1];
                 if
                 :: o == WAITING(LG(n)) ->
                     state[LQ(n) - 1] = GRANTED(tok + 1); ISSUE(tok + 1)
                 :: else -> skip
                 fi
             fi;
             assert(o == WAITING(LG(n)) || o == ABANDONED(LG(n)) ||
                    o == PEER_DEAD || STALE_OK));               /* (e) */
#ifdef BUG_H_AFTER_GRANT
        STEP(H = n);                                            /* A, late */
#endif
        /* state[Q] := IDLE; ABANDONED: pass over n too; else done */
        STEP(if :: REACH(Q) -> state[Q - 1] = IDLE :: else -> skip fi;
             if
             :: o == ABANDONED(LG(n)) -> Q = LQ(n); g = LG(n); n = 0; o = 0
             :: else -> goto passed
             fi)
    od;
passed:
    atomic { Q = 0; g = 0; n = 0; o = 0; c = 0 }
}

active [NP] proctype P()
{
    byte it, x, g, pl, pp, tok, Q, n, o;
    byte ab;                /* the abandoned place x inherited from */
    bit c, dl;
#ifdef CODE
    bit hint = 1;           /* this process freed W last (or never used it) */
#endif

    for (it : 1 .. LOOPS) {
        /* 1. claim the lowest IDLE own qnode */
        do
        :: atomic {
               state[2 * _pid] == IDLE ||
               state[2 * _pid + 1] == IDLE ->
               if
               :: state[2 * _pid] == IDLE -> x = 2 * _pid + 1
               :: else -> x = 2 * _pid + 2
               fi;
               gen[x - 1] = NEWGEN(x); g = gen[x - 1]; assert(g < 4);
               next[x - 1] = EMPTY(g); state[x - 1] = WAITING(g);
               aprev[x - 1] = 0; app[x - 1] = 0;
               break
           }
        :: FAULT_THEN(skip)
        :: GIVE_UP
        od;
        /* 2. enqueue (CODE: the CAS loop with the hint, else SWAP) */
#ifdef CODE
        if
        :: hint -> STEP(hint = 0; ENQUEUE(0, hold))
        :: else -> STEP(ENQUEUE(1, swapped_free))
        fi;
#else
        STEP(ENQUEUE(0, hold));
#endif
        /* 4. link behind pl */
        LSTEP(LINK_CHECK; LINK_INTO(LQ(pl), LG(pl), LINK(x, g)));
        /* 5. wait for the grant; recovery; deadline */
        do
        :: atomic {
               IS_GRANTED(state[x - 1]) -> tok = TOKEN(state[x - 1]);
               goto hold
           }
        :: atomic { MAY_TAKE_OVER -> c = 1 };           /* the check */
           /* the takeover: CAS(state[x], WAITING(g) -> GRANTED(tnew)) */
           STEP(assert(EXPIRED(OWNER(LQ(pl))) ||
                       (ab != 0 && EXPIRED(OWNER(LQ(ab)))));  /* (c) */
                if
                :: state[x - 1] == WAITING(g) ->
                    state[x - 1] = GRANTED(maxtok + 1); ISSUE(maxtok + 1);
                    TOOK_OVER(LINK(x, g))
                :: else -> assert(IS_GRANTED(state[x - 1]))  /* late grant */
                fi;
                tok = TOKEN(state[x - 1]); c = 0;
                goto hold)
#ifdef W_PRED
        /* LINK: pl's owner is dead; it may have died before its link:
           complete it, CAS(next[pp], EMPTY(gpp) -> pl) */
        :: atomic { !REACH(LQ(pl)) && pp != 0 &&
                    REACH(LQ(pp)) && next[LQ(pp) - 1] == EMPTY(LG(pp)) ->
                    next[LQ(pp) - 1] = pl }
#endif
#ifndef PROPOSED_ABANDON
        /* ABANDON: pl is abandoned (a get of its state word): inherit its
           place, ABANDONED(gpl, its pl, its pp) */
        :: atomic { REACH(LQ(pl)) && state[LQ(pl) - 1] == ABANDONED(LG(pl)) ->
                    assert(ab == 0);    /* the model's limit: TIMEOUTS <= 1 */
                    ab = pl;
                    pp = app[LQ(pl) - 1]; pl = aprev[LQ(pl) - 1] }
#endif
        :: atomic {                     /* deadline: WAITING -> ABANDONED */
               dl ->
               if
               :: state[x - 1] == WAITING(g) ->
                   state[x - 1] = ABANDONED(g); ABANDON_RECORD;
                   goto timed_out
               :: else ->
                   assert(IS_GRANTED(state[x - 1]));
                   tok = TOKEN(state[x - 1]); goto hold
               fi
           }
        :: FAULT_THEN(skip)
        :: GIVE_UP
        od;                     /* left only by goto */
#ifdef CODE
swapped_free:
        /* the SWAP path took W free: CAS(W, HELD(x) -> HELD(x) | FIRST);
           someone queued behind x already: put H := LINK(x, g) */
        SSTEP(if
              :: W == HELDW(LINK(x, g)) -> wp = 0
              :: else ->
                  assert(hput[_pid] == 0);   /* the model's limit: LOOPS <= 2 */
                  hput[_pid] = LINK(x, g)
              fi);
#ifdef FLUSH_PUT
        /* FLUSH_PUT: wait until that put has landed */
        do
        :: atomic { hput[_pid] == 0 -> break }
        :: FAULT_THEN(skip)
        od;
#endif
#endif

hold:   /* enter the critical section with token tok */
        STEP(if
             :: !EXPIRED(_pid) ->
                 assert((incs & ~BIT & ~expired) == 0);      /* (a) */
                 assert(tok > last_token);                   /* (b) */
                 last_token = tok; incs = incs | BIT
             :: else -> skip                 /* a resumed zombie: fenced */
             fi;
             pl = 0; pp = 0; ab = 0; dl = 0);
        /* leave it, and pass the lock on */
        STEP(incs = incs & ~BIT; Q = x);
        pass();
timed_out:
        atomic { x = 0; g = 0; pl = 0; pp = 0; ab = 0; tok = 0; dl = 0 }
    }
stopped:
    skip
}

#ifdef CODE
/* CODE: the SWAP path's put H := l lands at any moment after it was issued
   (pids NP .. 2 NP - 1: one per process P) */
active [NP] proctype Put()
{
end:
    do
    :: atomic {
           hput[_pid - NP] != 0 -> H = hput[_pid - NP]; hput[_pid - NP] = 0
       }
    od
}
#endif

/* The lease authority commits a fault's expiry at any moment after it; and
   the environment may give up the rest of its fault budget (see (d)). */
active proctype Authority()
{
    byte i;
end:
    do
    :: atomic {
           (dead & ~expired) != 0 ->
           i = 0;
           do
           :: (dead & ~expired & (1 << i)) -> expired = expired | (1 << i); break
           :: ((dead & ~expired) >> (i + 1)) != 0 -> i++
           od;
           i = 0
       }
    :: atomic { faults > 0 -> faults = 0 }
    od
}
