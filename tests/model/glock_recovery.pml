/*
 * glock_recovery.pml -- spin model of dead-holder recovery for the global queue
 * lock of core/global/glock.c (dist_lock.pml models the lock without it; README.md
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
 *             the same 64-bit word in a real encoding); CODE_ABANDON: a place
 *             before it and that place's flag, app = 0 iff the flag is set.
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
 * -DCODE: what core/global/glock.c implements (README.md). Of LINK only the
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
 * -DCODE_ABANDON (with -DCODE; for counterexample 2 of the README, a dead
 * holder with an abandoned place behind it; glock.c is getting it):
 *   1. abandon records the place ahead: CAS(state[x], WAITING(g) ->
 *      ABANDONED(g, pl, f)), f = 1 iff the W word x replaced had FIRST (pl
 *      took W free). One step; failure: granted meanwhile, hold.
 *   2. a passer records itself in each abandoned place it goes over: when B
 *      on n finds ABANDONED(gn, q, fq), first CAS(state[n], that value ->
 *      ABANDONED(gn, LINK(x, gen[x]), 1)) (x: the passer's own node, where
 *      its pass began; failure -- n's owner died, or, only for a zombie,
 *      the place was passed over and reused: (e) -- ends the pass), then
 *      retire Q (rdlm_glock_retire; an abandoned Q by CAS from the record
 *      this pass wrote in it), then go on from n. So an abandoned place a
 *      pass has reached names the passer's node with flag 1.
 *   3. a waiter walks the chain of abandoned places ahead of it
 *      (rdlm_glock_recover): p := pl, ff := f, S := {}; one get of state[p]
 *      per hop: ABANDONED(gen(p), q, fq) -> S += p, p := q, ff := fq; any
 *      other state, another generation or PEER_DEAD -> stop. Then the check
 *      (one step, as before): p's owner dead and expired, and (ff or H == p
 *      or H in S or H == LINK(x, g)) -> the takeover. (c) is checked for
 *      the chain's head p.
 *   Without it the walk is p := pl, S := {} (the check above).
 *   One crash still stalls the lock when the process that dies has two
 *   places in the queue (its abandoned place, not passed over yet, and a new
 *   one): -DOUTSIDE_TWO_PLACES forbids a crash then. With two timeouts a
 *   stale H stalls it even so; -DH_ORDERED (a change glock.c does not have)
 *   gives H the token of the hand-off it records, and a write of H with a
 *   smaller token than H's does not land (README.md).
 *
 * -DREADOPT (with -DCODE -DCODE_ABANDON; glock.c has it, the seal done before
 * the authority's new epoch, which touches no word here). Tag 3: PASSED(g) = 12 + g, ABANDONED's word with tag 3
 * (glock.c's PASSED; a pass's record and a seal are one encoding):
 *   1. re-adoption: an acquire whose process has an own qnode ABANDONED (tag
 *      2) in its generation takes it back instead of claiming, one step:
 *      CAS(state[x], ABANDONED(g, pl, f) -> WAITING(g)), and waits there
 *      behind (pl, f) (no enqueue, no link; a new deadline or none).
 *   2. a pass's record is PASSED(gn, LINK(x, gen[x]), 1) (the retire of a
 *      place passed over expects it); a walk goes over tag 2 and 3 alike.
 *   3. seal: a taker, after its check and before its takeover CAS, seals
 *      each place its walk read as tag 2, in walk order, one step each:
 *      CAS(state[p], the value read -> the same with tag 3). A failure
 *      (re-adopted or passed over since, PEER_DEAD): no takeover this time.
 *   4. B that finds tag 2 or 3 of gn records itself (CAS from that value ->
 *      PASSED); a record CAS that finds WAITING(gn) (re-adopted since B), or
 *      tag 2 or 3 of gn with another record (sealed since B): B again.
 *   -DREADOPT_RETIRE: after its takeover the taker retires each place it
 *   sealed, CAS(its seal -> IDLE) (fails if a pass recorded itself since).
 *   OUTSIDE_TWO_PLACES counts tag 3 places too (not retired yet: with
 *   re-adoption a process's other place is always tag 3).
 *
 * -DINTENT (with -DCODE -DCODE_ABANDON -DREADOPT; glock.c has it, with
 * -DINTENT_TAIL_WALK: the rule for the crash between enqueue and link,
 * counterexample 1 / stall 4 of the README). Intent records at the home, intent[q] = (ig, ip,
 * ipf): the generation of q's use that wrote it, the tail it queues behind,
 * and that tail's FIRST flag in the W word the CAS expects (ipf = 0 iff FIRST,
 * as pp); they survive crashes. No SWAP path (no hint, no put of H):
 *   1. enqueue, a loop: read W (a failed CAS returns it); FREE(t): CAS from
 *      it, holds with FIRST, no intent; HELD(T): intent[x] := (g, T, fT), one
 *      step (a blocking put), then CAS(W, HELD(T) -> HELD(x)); failure: again.
 *      So whenever W names x as tail, intent[x] names its predecessor.
 *   2. link as in CODE; the link CAS may find next[pl] completed by a waiter
 *      behind x: only a zombie's can (x expired), it gives up (EXPIRED).
 *   3. orphan completion, by a waiter whose chain head wl (after the walk) is
 *      dead and expired and the takeover check fails (wl never held): read
 *      intent[wl]; its generation is wl's (asserted: wl queued behind a tail);
 *      seal the walked-over places (as a taker does; -DINTENT_NO_SEAL: not);
 *      CAS(next[pp], EMPTY(gpp) -> LINK(x, g)) (pp := intent's tail): success
 *      or PEER_DEAD -> pl := pp with intent's flag, walk again; LINK(wl) or
 *      anything else -> keep waiting ((c) asserted: wl's owner is expired).
 *   4. the passer's rule (without one a dead place right behind a releasing
 *      holder, with nobody live queued behind it, stalls the release):
 *      -DINTENT_TAIL: a passer waiting for next[Q] whose W tail T is dead and
 *      expired with intent[T] = (gT, Q) takes next[Q] to be LINK(T) (nothing
 *      written): STALLS (a waiter behind T completes into next[Q] meanwhile,
 *      and the passer retires Q under it). -DINTENT_TAIL_CAS: it completes the
 *      link instead, CAS(next[Q], EMPTY(gQ) -> LINK(T)), and reads next[Q]
 *      again: STALLS when the only waiter behind the dead place timed out (W's
 *      tail is then that abandoned place). -DINTENT_TAIL_WALK (the fix
 *      searched): T is found from W's tail back over abandoned places (tag 2
 *      or 3, their recorded predecessor), then the CAS as in TAIL_CAS.
 *   The model writes the intent in the step that reads W (the read is
 *   private; an intent written after W moved on is followed by a failed CAS),
 *   and forgets a qnode's intent when the qnode is claimed again (only an
 *   intent of wl's generation is used; wl's owner is dead).
 *   Planted: BUG_INTENT_AFTER_CAS (the intent after the CAS), BUG_ORPHAN_NO_
 *   EXPIRY (orphan completion once wl is dead for the transport), BUG_ORPHAN_
 *   ANY_GEN (any intent generation, CAS from any EMPTY), BUG_INTENT_ANY_GEN
 *   (any intent generation only), BUG_ORPHAN_STORE (a put into next[pp]).
 *
 * Properties:
 *   (a) mutual exclusion: a process whose lease is not expired enters the
 *       critical section only when every other process in it is expired (a
 *       crashed or paused holder counts until its expiry is committed);
 *   (b) tokens strictly increase over the critical sections entered by
 *       processes whose lease is not expired;
 *   (c) a takeover happens only after the predecessor's owner is expired
 *       (or, with ABANDON, the inherited place's owner; with CODE_ABANDON,
 *       the owner of the chain's head p);
 *   (d) no invalid end state: every live process completes its LOOPS
 *       acquires (timed-out ones return), whatever the (single) fault;
 *       faulty processes may stop anywhere. The authority may forfeit the
 *       rest of the fault budget at any moment, so that a stall reached
 *       with budget left is still a deadlock spin sees;
 *   (e) grant CAS B finds WAITING(gn), ABANDONED(gn) (READOPT: or tag 3 of
 *       gn) or PEER_DEAD, or (not with PROPOSED_STRICT_B) an instance that
 *       took over (ghost tkov): the link it followed is not otherwise stale;
 *       with CODE, the link CAS finds EMPTY(gpl) or PEER_DEAD; with
 *       CODE_ABANDON, the passer's record CAS fails only on PEER_DEAD or for
 *       a zombie (READOPT: or as item 4 says, or on an instance that took
 *       over: its owner re-adopted it after B and took over);
 *   (f) CODE_ABANDON: a walk ends within NQ - 1 hops (each goes to an
 *       instance enqueued earlier; a run has NP * LOOPS = NQ of them).
 *
 * Abstracted: the probe interval and the lease TTL (a waiter may check at
 * any moment, the authority expire at any moment after the fault); the epoch
 * part of tokens (tnew = max + 1); revocation of home access of an expired
 * session (its late writes to W and H land: the worst case); the try path;
 * cohorts (dist_lock.pml); weaker memory orders. ABANDON keeps one inherited
 * place per waiter (asserted): enough for TIMEOUTS <= 1. CODE_ABANDON: a walk
 * may start only when a word a walk or check reads (state with its record,
 * H, dead, expired) was written since this process's last walk began
 * (ghost walked): another walk would read the same and fail the same way.
 * Without that a waiter could always walk and a stall would be a cycle,
 * which pan -DSAFETY does not look for; with it a stall is an end state.
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
 * In CODE_ABANDON (README.md says which configuration each is checked in):
 *   BUG_WALK_NO_EXPIRY   take over at the chain's head once its owner is
 *       dead for the transport, without its expiry -> (c).
 *   BUG_PASS_NO_RECORD   the passer does not record itself in the abandoned
 *       places it goes over (and retires them from any ABANDONED(g)) -> (d),
 *       with two timeouts.
 *   BUG_RETIRE_FIRST     the passer retires Q before it records itself in n
 *       -> (d), with two timeouts.
 *   BUG_INHERIT_ANY_GEN  the walk goes on through ABANDONED of any
 *       generation (bounded by NQ hops): NOT caught in any configuration
 *       searched (README.md).
 * In READOPT:
 *   BUG_NO_SEAL          the taker does not seal (glock.c's re-adoption, with
 *       leases) -> (a).
 *   BUG_READOPT_SEALED   re-adoption from tag 3 too -> (d) without crashes,
 *       (a) with one.
 *   BUG_PASS_NO_REGRANT  a record CAS that finds WAITING(gn) ends the pass,
 *       as a grant would -> (d) without crashes.
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
#define IS_ABANDONED(s) ((s) >= ABANDONED(0) && (s) < ABANDONED(4))   /* any g */
#define GRANTED(t) (16 + (t))
#define IS_GRANTED(s) ((s) >= 16)
#define TOKEN(s) ((s) - 16)
#define PEER_DEAD 255   /* a result, never a state */
#define AGAIN 254       /* READOPT: the pass's record CAS sends it back to B */
#ifdef READOPT
#if !defined(CODE) || !defined(CODE_ABANDON)
#error READOPT needs CODE and CODE_ABANDON
#endif
#if defined(BUG_INHERIT_ANY_GEN) || defined(BUG_PASS_NO_RECORD) || defined(BUG_RETIRE_FIRST)
#error READOPT: not with BUG_INHERIT_ANY_GEN, BUG_PASS_NO_RECORD, BUG_RETIRE_FIRST
#endif
/* READOPT: tag 3, ABANDONED's word with 3 in place of 2 (glock.c's PASSED):
   PASSED(g, holder, 1), a pass's record, or a taker's seal of ABANDONED(g,
   ahead, f), the same record; the two are one encoding */
#define PASSED(g) (12 + (g))
/* OUTSIDE_TWO_PLACES: a place not retired yet, tag 2 or 3 (with CODE_ABANDON
   alone a pass's record is tag 2, so the same places) */
#undef IS_ABANDONED
#define IS_ABANDONED(s) ((s) >= ABANDONED(0) && (s) < PASSED(4))
#define IS_ABANDONED_G(s, g) ((s) == ABANDONED(g) || (s) == PASSED(g))
/* the owner may re-adopt own qnode q: ABANDONED (tag 2) in its generation
   (BUG_READOPT_SEALED: tag 3 too) */
#ifdef BUG_READOPT_SEALED
#define READOPTABLE(q) IS_ABANDONED_G(state[(q) - 1], gen[(q) - 1])
#else
#define READOPTABLE(q) (state[(q) - 1] == ABANDONED(gen[(q) - 1]))
#endif
/* the hops whose ABANDONED value (tag 2) a walk keeps to seal: at most one
   per deadline of the run */
#if TIMEOUTS > 1
#define NH TIMEOUTS
#else
#define NH 1
#endif
#else
#define IS_ABANDONED_G(s, g) ((s) == ABANDONED(g))
#endif
#if defined(INTENT) && !defined(READOPT)
#error INTENT needs CODE, CODE_ABANDON and READOPT
#endif
#if defined(INTENT_TAIL_WALK) && !defined(INTENT_TAIL_CAS)
#define INTENT_TAIL_CAS
#endif
#if defined(INTENT_TAIL_CAS) && !defined(INTENT_TAIL)
#define INTENT_TAIL
#endif

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
#ifdef INTENT
/* INTENT: intent[q] at the home, (ig, ip, ipf): the generation of q's use that
   wrote it, the tail it queues behind (a link) and that tail's FIRST flag as
   the W word the CAS expects had it (ipf = 0 iff FIRST, as pp). ig = 0: none */
byte ig[NQ];
byte ip[NQ];
bit  ipf[NQ];
#endif

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
#ifdef CODE_ABANDON
byte walked;            /* bit p: p walked since the last write a walk reads */
#endif

/* H_ORDERED: H carries the token of the hand-off it records (ht); a write
   of H with a smaller token than H's does not land (one step: a CAS loop at
   the home). A pass writes tok + 1, the SWAP path's put its own tok */
#ifdef H_ORDERED
byte ht;
#define SET_H(l, t) \
    if \
    :: ht <= (t) -> H = (l); ht = (t); TOUCH \
    :: else -> skip \
    fi
#else
#define SET_H(l, t) H = (l); TOUCH
#endif

#ifdef CODE
byte hput[NP];          /* the SWAP path's put H := l, issued, not landed */
#ifdef H_ORDERED
byte hputt[NP];         /* its token */
#define HPUT_T(p) hputt[p]
#define HPUT_SET_T(p, t) hputt[p] = (t)
#else
#define HPUT_T(p) 0
#define HPUT_SET_T(p, t) skip
#endif
#define PUT_PENDING (hput[_pid] != 0)
/* a crash loses the process's hint and its put not landed yet */
#define CRASH_CODE hint = 0; hput[_pid] = 0; HPUT_SET_T(_pid, 0)
/* a pass that frees W sets the hint (INTENT: no SWAP path, no hint) */
#ifdef INTENT
#define FREED_HINT skip
#else
#define FREED_HINT hint = 1
#endif
#else
#define PUT_PENDING 0
#define CRASH_CODE skip
#define FREED_HINT skip
#endif

/* CODE_ABANDON: a write of a word that a waiter's walk or check reads (state,
   with its record; H; dead; expired) lets every waiter walk again (walked) */
#ifdef READOPT
/* READOPT: the hops a walk keeps to seal (hl: the place, 0 none; ha, hp: the
   record it read) */
#define HOPS_CLEAR \
    for (k : 0 .. NH - 1) { hl[k] = 0; ha[k] = 0; hp[k] = 0 }; k = 0
#endif
#if defined(READOPT)
#define TOUCH walked = 0
#define CRASH_WALK wl = 0; ff = 0; S = 0; ra = 0; rp = 0; HOPS_CLEAR
#elif defined(CODE_ABANDON)
#define TOUCH walked = 0
#define CRASH_WALK wl = 0; ff = 0; S = 0; k = 0; ra = 0; rp = 0
#else
#define TOUCH skip
#define CRASH_WALK skip
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

/* CODE_ABANDON: the waiter's walk (rdlm_glock_recover) over the abandoned
   places ahead of it. wl: the place reached (starts at pl), ff: the flag its
   successor recorded about it (starts at f), S: bit l set for each abandoned
   place l gone over, k: hops + 1 (0: the walk stopped). One read of state[wl]
   (one word with its record): ABANDONED(gen(wl), q, fq) -> add wl to S, go on
   to q with ff := fq; PEER_DEAD, WAITING, GRANTED, IDLE or another generation
   -> stop. A walk never needs NQ hops (each goes to an instance enqueued
   earlier, and a run has NP * LOOPS = NQ instances): (f). */
#ifdef BUG_INHERIT_ANY_GEN
#define WALK_ABANDONED IS_ABANDONED(state[LQ(wl) - 1])
#define WALK_LIMIT (k < NQ)     /* the bound (hops + 1 < NQ) */
#define WALK_BOUND skip
#else
#define WALK_ABANDONED (state[LQ(wl) - 1] == ABANDONED(LG(wl)))
#define WALK_LIMIT 1
#define WALK_BOUND assert(k < NQ)                               /* (f) */
#endif
#ifdef READOPT
/* READOPT: the walk goes over tag 3 too (PASSED or sealed: IS_ABANDONED_G),
   and keeps each hop that read tag 2 (ABANDONED, to seal) with its record;
   hop k - 1 is kept at index k - 1 */
#undef WALK_ABANDONED
#define WALK_ABANDONED IS_ABANDONED_G(state[LQ(wl) - 1], LG(wl))
#define WALK_READ \
    if \
    :: REACH(LQ(wl)) && WALK_ABANDONED && WALK_LIMIT -> \
        WALK_BOUND; assert(k <= NH); \
        if \
        :: state[LQ(wl) - 1] == ABANDONED(LG(wl)) -> \
            hl[k - 1] = wl; ha[k - 1] = aprev[LQ(wl) - 1]; \
            hp[k - 1] = app[LQ(wl) - 1] \
        :: else -> skip \
        fi; \
        S = S | (1 << wl); ff = (app[LQ(wl) - 1] == 0); \
        wl = aprev[LQ(wl) - 1]; k++ \
    :: else -> k = 0 \
    fi
/* SEAL (the taker, after its check, before its takeover CAS): the next kept
   hop from k on (k = NH: none left); one seal, CAS(state[hl[k]], ABANDONED
   with the record read -> PASSED, the same record): success -> the next;
   failure (re-adopted, passed over, PEER_DEAD) -> no takeover this time */
#define HOPS_SKIP \
    do \
    :: k < NH && hl[k] == 0 -> k++ \
    :: else -> break \
    od
#define SEAL_HOP \
    if \
    :: REACH(LQ(hl[k])) && state[LQ(hl[k]) - 1] == ABANDONED(LG(hl[k])) && \
       aprev[LQ(hl[k]) - 1] == ha[k] && app[LQ(hl[k]) - 1] == hp[k] -> \
        state[LQ(hl[k]) - 1] = PASSED(LG(hl[k])); TOUCH; k++; HOPS_SKIP \
    :: else -> c = 0; wl = 0; ff = 0; S = 0; HOPS_CLEAR SEAL_FAIL_ORPHAN \
    fi
/* READOPT_RETIRE: after its takeover the taker retires each place it
   sealed, CAS(state[hl[k]], its seal -> IDLE) (a pass's record since:
   fails, nothing done) */
#define RETIRE_SEALED \
    if \
    :: REACH(LQ(hl[k])) && state[LQ(hl[k]) - 1] == PASSED(LG(hl[k])) && \
       aprev[LQ(hl[k]) - 1] == ha[k] && app[LQ(hl[k]) - 1] == hp[k] -> \
        state[LQ(hl[k]) - 1] = IDLE; TOUCH \
    :: else -> skip \
    fi; \
    k++; HOPS_SKIP
#else
#define WALK_READ \
    if \
    :: REACH(LQ(wl)) && WALK_ABANDONED && WALK_LIMIT -> \
        WALK_BOUND; S = S | (1 << wl); ff = (app[LQ(wl) - 1] == 0); \
        wl = aprev[LQ(wl) - 1]; k++ \
    :: else -> k = 0 \
    fi
#endif
/* the check at the chain's head (one step, as without CODE_ABANDON): wl's
   owner dead and expired, and it held the lock (ff), or a pass named it, an
   abandoned place gone over, or x in H */
#ifdef BUG_WALK_NO_EXPIRY
#define HEAD_GONE (!REACH(LQ(wl)))
#else
#define HEAD_GONE GONE(wl)
#endif
#define CHAIN_TAKE_OVER \
    (HEAD_GONE && (ff || H == wl || ((S >> H) & 1) || H == LINK(x, g)))

#ifdef INTENT
/* INTENT: orphan completion by a waiter whose chain head wl is dead and
   expired and the takeover rule does not apply (wl never held). The check
   reads intent[wl] (a get at the home; a dead owner's intent does not change)
   and keeps its (pp, flag) in (ra, rp), o = 1 (ra, rp, o are the pass's, idle
   while waiting); the hops are sealed as for a takeover; then one CAS,
   CAS(next[pp], EMPTY(gpp) -> LINK(x, g)): success or PEER_DEAD -> pl := pp
   (with its flag), walk again; LINK(wl) or anything else -> keep waiting */
#ifdef BUG_ORPHAN_NO_EXPIRY
#define ORPHAN_GONE (!REACH(LQ(wl)))
#else
#define ORPHAN_GONE GONE(wl)
#endif
#if defined(BUG_ORPHAN_ANY_GEN) || defined(BUG_INTENT_ANY_GEN)
#define INTENT_OK (ig[LQ(wl) - 1] != 0)
#else
#define INTENT_OK (ig[LQ(wl) - 1] == LG(wl))
#endif
#ifdef BUG_ORPHAN_ANY_GEN
#define ORPHAN_EMPTY (!IS_LINK(next[LQ(ra) - 1]))
#else
#define ORPHAN_EMPTY (next[LQ(ra) - 1] == EMPTY(LG(ra)))
#endif
/* INTENT_NO_SEAL: orphan completion does not seal the places its walk went
   over (a takeover still does) */
#ifdef INTENT_NO_SEAL
#define SEAL_ORPHAN (!o)
#else
#define SEAL_ORPHAN 1
#endif
#ifdef BUG_ORPHAN_STORE
#undef ORPHAN_EMPTY
#define ORPHAN_EMPTY 1
#endif
#define ORPHAN_CLEAR o = 0; ra = 0; rp = 0
#define ORPHAN_CAS \
    if \
    :: !REACH(LQ(ra)) -> pl = ra; pp = rp; walked = walked & ~BIT \
    :: REACH(LQ(ra)) && ORPHAN_EMPTY -> \
        next[LQ(ra) - 1] = LINK(x, g); pl = ra; pp = rp; \
        walked = walked & ~BIT \
    :: else -> skip \
    fi
#define SEAL_FAIL_ORPHAN ; ORPHAN_CLEAR
/* the model forgets the intent of a qnode's previous use when it is claimed
   again (fewer states): only an intent of wl's generation is ever used, and
   wl's owner is dead (it claims nothing more; a zombie's next enqueue would
   overwrite it anyway). Not with the planted bugs that read any generation */
#if defined(BUG_ORPHAN_ANY_GEN) || defined(BUG_INTENT_ANY_GEN)
#define INTENT_FORGET
#else
#define INTENT_FORGET ; ig[x - 1] = 0; ip[x - 1] = 0; ipf[x - 1] = 0
#endif
#else
#define SEAL_FAIL_ORPHAN
#define INTENT_FORGET
#endif

/* the takeover: CAS(state[x], WAITING(g) -> GRANTED(tnew)), tnew = the
   largest token issued + 1; failure: a late grant, hold with it */
#define TAKE_OVER \
    if \
    :: state[x - 1] == WAITING(g) -> \
        state[x - 1] = GRANTED(maxtok + 1); ISSUE(maxtok + 1); \
        TOOK_OVER(LINK(x, g)); TOUCH \
    :: else -> assert(IS_GRANTED(state[x - 1]))  /* late grant */ \
    fi; \
    tok = TOKEN(state[x - 1]); c = 0

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
#if defined(PROPOSED_ABANDON) && !defined(CODE_ABANDON)
#define ABANDON_RECORD skip
#else
/* ABANDON: the abandoner's (pl, pp); CODE_ABANDON: (pl, f), app = 0 iff f (pp
   is "not FIRST" there) */
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
 * pending. OUTSIDE_TWO_PLACES: none while the process is queued (pl set)
 * with its other qnode still abandoned (not passed over yet): a process
 * never dies with two places in the queue.
 */
#ifdef OUTSIDE_SWAP_WINDOW
#define MAY_FAULT_SW (faults > 0 && !PUT_PENDING)
#else
#define MAY_FAULT_SW (faults > 0)
#endif
#ifdef OUTSIDE_TWO_PLACES
#define MAY_FAULT \
    (MAY_FAULT_SW && !(pl != 0 && (IS_ABANDONED(state[2 * _pid]) || \
                                   IS_ABANDONED(state[2 * _pid + 1]))))
#else
#define MAY_FAULT MAY_FAULT_SW
#endif

#ifdef ZOMBIE
#define FAULT_THEN(body) \
    atomic { MAY_FAULT -> faults--; dead = dead | BIT; TOUCH }; \
    if \
    :: atomic { EXPIRED(_pid) -> goto stopped } \
    :: atomic { EXPIRED(_pid) -> skip; body } \
    fi
/* a resumed zombie may give up any wait: its calls return EXPIRED */
#define GIVE_UP atomic { DEAD(_pid) -> goto stopped }
#else
#define FAULT_THEN(body) \
    atomic { MAY_FAULT -> faults--; dead = dead | BIT; TOUCH; \
             it = 0; x = 0; g = 0; pl = 0; pp = 0; ab = 0; tok = 0; Q = 0; \
             n = 0; o = 0; c = 0; dl = 0; CRASH_CODE; CRASH_WALK }; \
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

/* retire Q (rdlm_glock_retire): the holder's own node x, state[x] := IDLE;
   a place passed over (CODE_ABANDON), CAS(state[Q], the record this pass
   wrote there, ABANDONED(g, LINK(x, gen[x]), 1) -> IDLE) (BUG_PASS_NO_RECORD:
   any ABANDONED(g)); without CODE_ABANDON, state[Q] := IDLE. PEER_DEAD:
   skipped. */
#if defined(READOPT)
/* READOPT: the record is PASSED(g, LINK(x, gen[x]), 1) */
#define RETIRE_OK \
    (Q == x || (state[Q - 1] == PASSED(g) && \
                aprev[Q - 1] == LINK(x, gen[x - 1]) && app[Q - 1] == 0))
#elif defined(CODE_ABANDON) && !defined(BUG_PASS_NO_RECORD)
#define RETIRE_OK \
    (Q == x || (state[Q - 1] == ABANDONED(g) && \
                aprev[Q - 1] == LINK(x, gen[x - 1]) && app[Q - 1] == 0))
#elif defined(CODE_ABANDON)
#define RETIRE_OK (Q == x || state[Q - 1] == ABANDONED(g))
#else
#define RETIRE_OK 1
#endif
#define RETIRE \
    if \
    :: REACH(Q) && RETIRE_OK -> state[Q - 1] = IDLE; TOUCH \
    :: else -> skip \
    fi
#ifdef BUG_RETIRE_FIRST
#define RETIRE_AFTER_B skip
#else
#define RETIRE_AFTER_B RETIRE
#endif
/* CODE_ABANDON: B found ABANDONED(gn, ra, rp): keep the record (ra, rp), the
   rest of the word B's CAS returned (the record step clears them) */
#if defined(CODE_ABANDON) && !defined(BUG_PASS_NO_RECORD)
#define B_RECORD ra = aprev[LQ(n) - 1]; rp = app[LQ(n) - 1]
#else
#define B_RECORD skip
#endif

/*
 * pass(Q := x, g := its gen, tok): hand the lock on. Uses n, o, c (and ra,
 * rp); leaves them, Q and g zero.
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
            :: c -> STEP(RETIRE); goto passed
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
#ifdef INTENT_TAIL_WALK
            /* INTENT_TAIL_WALK: from W's tail, walk back over abandoned
               places (tag 2 or 3, their recorded predecessor; each was
               enqueued) to a place T; if T is dead and expired and intent[T] =
               (gT, Q), T is Q's successor: CAS(next[Q], EMPTY(gQ) -> LINK(T)).
               Gets at the home and of live qnodes, one step here (each fact it
               concludes from stays true); gated like a waiter's walk (walked:
               the words it reads besides W and intent were written since; a
               new tail is a live waiter that completes the link itself) */
            :: atomic { REACH(Q) && next[Q - 1] == EMPTY(g) && IS_HELD(W) &&
                        !(walked & BIT) ->
                        walked = walked | BIT; ra = WL(W); rp = 0;
                        do
                        :: rp < NQ && REACH(LQ(ra)) &&
                           IS_ABANDONED_G(state[LQ(ra) - 1], LG(ra)) ->
                            ra = aprev[LQ(ra) - 1]; rp++
                        :: else -> break
                        od;
                        if
                        :: GONE(ra) && ig[LQ(ra) - 1] == LG(ra) &&
                           ip[LQ(ra) - 1] == LINK(Q, g) -> next[Q - 1] = ra
                        :: else -> skip
                        fi;
                        ra = 0; rp = 0 }
#elif defined(INTENT_TAIL)
            /* INTENT_TAIL: W's tail T is dead and expired and intent[T] =
               (gT, Q): T is Q's successor. As specified, next[Q] is taken
               to be LINK(T) (nothing written); INTENT_TAIL_CAS: complete
               it, CAS(next[Q], EMPTY(gQ) -> LINK(T)), then read next[Q] */
            :: atomic { REACH(Q) && next[Q - 1] == EMPTY(g) && IS_HELD(W) &&
                        GONE(WL(W)) && ig[LQ(WL(W)) - 1] == LG(WL(W)) &&
                        ip[LQ(WL(W)) - 1] == LINK(Q, g) ->
#ifdef INTENT_TAIL_CAS
                        next[Q - 1] = WL(W) }
#else
                        n = WL(W); break }
#endif
#endif
            :: FAULT_THEN(skip)
            :: GIVE_UP
            od
        :: else
        fi;
#ifndef BUG_H_AFTER_GRANT
        STEP(SET_H(n, tok + 1));                                /* A */
#endif
        /* B: CAS(state[n], WAITING(gn) -> GRANTED(tok + 1)) */
#ifdef READOPT
        /* READOPT: B finds ABANDONED or PASSED (sealed) of gn: recorded next */
grant_b:
        STEP(if
             :: !REACH(LQ(n)) -> o = PEER_DEAD
             :: else ->
                 o = state[LQ(n) - 1];
                 if
                 :: o == WAITING(LG(n)) ->
                     state[LQ(n) - 1] = GRANTED(tok + 1); ISSUE(tok + 1);
                     TOUCH
                 :: IS_ABANDONED_G(o, LG(n)) -> B_RECORD
                 :: else -> skip
                 fi
             fi;
             assert(o == WAITING(LG(n)) || IS_ABANDONED_G(o, LG(n)) ||
                    o == PEER_DEAD || STALE_OK));               /* (e) */
#else
        STEP(if
             :: !REACH(LQ(n)) -> o = PEER_DEAD
             :: else ->
                 o = state[LQ(n) - 1];
                 if
                 :: o == WAITING(LG(n)) ->
                     state[LQ(n) - 1] = GRANTED(tok + 1); ISSUE(tok + 1);
                     TOUCH
                 :: o == ABANDONED(LG(n)) -> B_RECORD
                 :: else -> skip
                 fi
             fi;
             assert(o == WAITING(LG(n)) || o == ABANDONED(LG(n)) ||
                    o == PEER_DEAD || STALE_OK));               /* (e) */
#endif
#ifdef BUG_H_AFTER_GRANT
        STEP(SET_H(n, tok + 1));                                /* A, late */
#endif
#ifdef BUG_RETIRE_FIRST
        STEP(RETIRE);           /* Q retired before the record in n */
#endif
#if defined(READOPT)
        /* READOPT: B found n ABANDONED or PASSED: record this pass in n,
           CAS(state[n], that value -> PASSED(gn, LINK(x, gen[x]), 1)). It
           finds WAITING(gn) (re-adopted since B): B again (BUG_PASS_NO_REGRANT:
           the pass ends, as after a grant); tag 2 or 3 of gn with another
           record (sealed since B): B again, which records from that. Else
           (PEER_DEAD; re-adopted and taken over since B, STALE_OK; a
           zombie's: (e)) the pass ends after the retire */
        if
        :: IS_ABANDONED_G(o, LG(n)) ->
            STEP(if
                 :: REACH(LQ(n)) && state[LQ(n) - 1] == o &&
                    aprev[LQ(n) - 1] == ra && app[LQ(n) - 1] == rp ->
                     state[LQ(n) - 1] = PASSED(LG(n));
                     aprev[LQ(n) - 1] = LINK(x, gen[x - 1]); app[LQ(n) - 1] = 0;
                     TOUCH
                 :: else ->
                     if
                     :: REACH(LQ(n)) && state[LQ(n) - 1] == WAITING(LG(n)) ->
#ifdef BUG_PASS_NO_REGRANT
                         o = 0
#else
                         o = AGAIN
#endif
                     :: REACH(LQ(n)) &&
                        IS_ABANDONED_G(state[LQ(n) - 1], LG(n)) -> o = AGAIN
                     :: else ->                                 /* (e) */
                         assert(!REACH(LQ(n)) || DEAD(_pid) || STALE_OK);
                         o = 0
                     fi
                 fi;
                 ra = 0; rp = 0);
            if
            :: o == AGAIN -> goto grant_b
            :: else
            fi
        :: else
        fi;
#elif defined(CODE_ABANDON) && !defined(BUG_PASS_NO_RECORD)
        /* CODE_ABANDON: B found n abandoned: before Q is retired, record this
           pass in n, CAS(state[n], ABANDONED(gn, ra, rp) -> ABANDONED(gn,
           LINK(x, gen[x]), 1)): the lock's holder x hands it on through n.
           Failure (n's owner died, PEER_DEAD; or, for a zombie only, the place
           was passed over and reused: (e)): the pass ends after the retire */
        if
        :: o == ABANDONED(LG(n)) ->
            STEP(if
                 :: REACH(LQ(n)) && state[LQ(n) - 1] == o &&
                    aprev[LQ(n) - 1] == ra && app[LQ(n) - 1] == rp ->
                     aprev[LQ(n) - 1] = LINK(x, gen[x - 1]); app[LQ(n) - 1] = 0;
                     TOUCH
                 :: else ->
                     assert(!REACH(LQ(n)) || DEAD(_pid));       /* (e) */
                     o = 0
                 fi;
                 ra = 0; rp = 0)
        :: else
        fi;
#endif
        /* retire Q; ABANDONED: pass over n too; else done */
        STEP(RETIRE_AFTER_B;
             if
             :: IS_ABANDONED_G(o, LG(n)) -> Q = LQ(n); g = LG(n); n = 0; o = 0
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
#ifdef CODE_ABANDON
    byte wl, k, ra, rp;     /* the walk (WALK_READ); B's record (pass) */
    bit ff;
    int S;
#endif
#ifdef READOPT
    byte hl[NH], ha[NH], hp[NH];  /* the hops to seal (HOPS_CLEAR) */
#endif
#ifdef CODE
    bit hint = 1;           /* this process freed W last (or never used it) */
#endif

    for (it : 1 .. LOOPS) {
        /* 1. claim the lowest IDLE own qnode */
        do
#ifdef READOPT
        /* READOPT: first re-adopt an own place that is ABANDONED (tag 2) in
           its generation: CAS(state[x], that value -> WAITING(g)), and wait
           there behind its recorded (pl, f), with a new deadline or none */
        :: atomic {
               READOPTABLE(2 * _pid + 1) || READOPTABLE(2 * _pid + 2) ->
               if
               :: READOPTABLE(2 * _pid + 1) -> x = 2 * _pid + 1
               :: else -> x = 2 * _pid + 2
               fi;
               g = gen[x - 1]; pl = aprev[x - 1]; pp = app[x - 1];
               state[x - 1] = WAITING(g); aprev[x - 1] = 0; app[x - 1] = 0;
               TOUCH;
               if
               :: timeouts > 0 -> timeouts--; dl = 1
               :: true -> skip
               fi;
               goto readopted
           }
        :: atomic {
               !READOPTABLE(2 * _pid + 1) && !READOPTABLE(2 * _pid + 2) &&
               (state[2 * _pid] == IDLE || state[2 * _pid + 1] == IDLE) ->
#else
        :: atomic {
               state[2 * _pid] == IDLE ||
               state[2 * _pid + 1] == IDLE ->
#endif
               if
               :: state[2 * _pid] == IDLE -> x = 2 * _pid + 1
               :: else -> x = 2 * _pid + 2
               fi;
               gen[x - 1] = NEWGEN(x); g = gen[x - 1]; assert(g < 4);
               next[x - 1] = EMPTY(g); state[x - 1] = WAITING(g);
               aprev[x - 1] = 0; app[x - 1] = 0; TOUCH INTENT_FORGET;
               break
           }
        :: FAULT_THEN(skip)
        :: GIVE_UP
        od;
        /* 2. enqueue (CODE: the CAS loop with the hint, else SWAP) */
#if defined(INTENT)
        /* INTENT: the CAS loop only. Read W (a failed CAS returns it): FREE ->
           CAS from it, holds with FIRST (no intent); HELD(T) -> intent[x] :=
           (g, T, T's flag), one blocking put, then CAS(W, HELD(T) ->
           HELD(x)); failure (W changed): around again, a new intent. The read
           and the intent write are one step here: the read is private, and an
           intent written after W moved on from T is only followed by a failed
           CAS (a crash in between leaves an intent no waiter reads: x is not
           in the queue) */
enqueue:
        STEP(if
             :: !IS_HELD(W) ->
                 tok = W + 1; ISSUE(tok); W = HELDW(LINK(x, g)); wp = 0;
                 goto hold
             :: else ->
                 pl = WL(W); pp = wp;
#ifndef BUG_INTENT_AFTER_CAS
                 ig[x - 1] = g; ip[x - 1] = pl; ipf[x - 1] = pp
#else
                 skip
#endif
             fi);
        STEP(if
             :: W == HELDW(pl) && wp == pp ->
                 W = HELDW(LINK(x, g)); wp = 1;
                 if
                 :: timeouts > 0 -> timeouts--; dl = 1
                 :: true -> skip
                 fi
             :: else -> pl = 0; pp = 0; goto enqueue
             fi);
#ifdef BUG_INTENT_AFTER_CAS
        /* the intent after the CAS: the window is back */
        STEP(ig[x - 1] = g; ip[x - 1] = pl; ipf[x - 1] = pp);
#endif
#elif defined(CODE)
        if
        :: hint -> STEP(hint = 0; ENQUEUE(0, hold))
        :: else -> STEP(ENQUEUE(1, swapped_free))
        fi;
#else
        STEP(ENQUEUE(0, hold));
#endif
        /* 4. link behind pl */
#ifdef INTENT
        /* INTENT: the link CAS may find next[pl] completed by a waiter behind
           x (orphan completion, after x's expiry): only a zombie's does, and it
           gives up (its call returns EXPIRED); else as LINK_CHECK */
        LSTEP(if
              :: REACH(LQ(pl)) && next[LQ(pl) - 1] != EMPTY(LG(pl)) ->
                  assert(DEAD(_pid));                           /* (e) */
                  goto stopped
              :: else -> LINK_INTO(LQ(pl), LG(pl), LINK(x, g))
              fi);
#else
        LSTEP(LINK_CHECK; LINK_INTO(LQ(pl), LG(pl), LINK(x, g)));
#endif
        /* 5. wait for the grant; recovery; deadline */
#ifdef READOPT
readopted:
#endif
        do
        :: atomic {
               IS_GRANTED(state[x - 1]) -> tok = TOKEN(state[x - 1]);
               goto hold
           }
#ifdef CODE_ABANDON
        /* the recovery check (rdlm_glock_recover), at a probe: the walk from
           pl (its first read is this step), then the check. A walk starts
           only if a word it reads was written since this process's last walk
           began (walked, TOUCH): else it would read what that walk read and
           fail again, and a stall would be a cycle, not an end state */
        :: atomic { !(walked & BIT) -> walked = walked | BIT;
                    wl = pl; ff = F; S = 0; k = 1; WALK_READ }
           do
           :: k == 0 -> break
           :: else -> STEP(WALK_READ)          /* one get of state[wl] */
           od;
           /* the check (one step): wl's owner dead and expired, and ff or
              H in {wl, x} or H in S */
#ifdef READOPT
           STEP(if
                :: CHAIN_TAKE_OVER -> c = 1; HOPS_SKIP
#ifdef INTENT
                /* orphan completion: wl dead and expired, never held */
                :: !CHAIN_TAKE_OVER && ORPHAN_GONE ->
                    if
                    :: INTENT_OK ->
                        c = 1; o = 1; ra = ip[LQ(wl) - 1];
                        rp = ipf[LQ(wl) - 1]; HOPS_SKIP
                    :: else ->
                        /* wl never held, so it queued behind a tail, and
                           wrote intent[wl] before: never here */
                        assert(false);
                        wl = 0; ff = 0; S = 0; HOPS_CLEAR
                    fi
#endif
                :: else -> wl = 0; ff = 0; S = 0; HOPS_CLEAR
                fi);
#ifndef BUG_NO_SEAL
           /* SEAL each kept hop, in walk order (one CAS each); a failure
              clears c and the walk */
           do
#ifdef INTENT
           :: c && k < NH && SEAL_ORPHAN -> STEP(SEAL_HOP)
#else
           :: c && k < NH -> STEP(SEAL_HOP)
#endif
           :: else -> break
           od;
#endif
           if
#ifdef INTENT
           :: c && o ->
               /* orphan completion: CAS(next[pp], EMPTY(gpp) -> LINK(x, g)) */
               STEP(assert(EXPIRED(OWNER(LQ(wl))));          /* (c) */
                    ORPHAN_CAS;
                    c = 0; ORPHAN_CLEAR; wl = 0; ff = 0; S = 0; HOPS_CLEAR)
           :: c && !o ->
#else
           :: c ->
#endif
               /* the takeover */
#ifdef READOPT_RETIRE
               STEP(assert(EXPIRED(OWNER(LQ(wl))));          /* (c) */
                    TAKE_OVER; wl = 0; ff = 0; S = 0; k = 0; HOPS_SKIP);
               /* READOPT_RETIRE: then retire each place it sealed */
               do
               :: k < NH -> STEP(RETIRE_SEALED)
               :: else -> break
               od;
               atomic { HOPS_CLEAR; goto hold }
#else
               STEP(assert(EXPIRED(OWNER(LQ(wl))));          /* (c) */
                    TAKE_OVER; wl = 0; ff = 0; S = 0; HOPS_CLEAR;
                    goto hold)
#endif
           :: else
           fi
#else
           STEP(if
                :: CHAIN_TAKE_OVER -> c = 1
                :: else -> wl = 0; ff = 0; S = 0
                fi);
           if
           :: c ->
               /* the takeover */
               STEP(assert(EXPIRED(OWNER(LQ(wl))));          /* (c) */
                    TAKE_OVER; wl = 0; ff = 0; S = 0; goto hold)
           :: else
           fi
#endif
#else
        :: atomic { MAY_TAKE_OVER -> c = 1 };           /* the check */
           /* the takeover */
           STEP(assert(EXPIRED(OWNER(LQ(pl))) ||
                       (ab != 0 && EXPIRED(OWNER(LQ(ab)))));  /* (c) */
                TAKE_OVER; goto hold)
#endif
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
                   state[x - 1] = ABANDONED(g); ABANDON_RECORD; TOUCH;
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
                  hput[_pid] = LINK(x, g); HPUT_SET_T(_pid, tok)
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
#ifdef INTENT_TAIL_WALK
        /* the pass's tail walk may run at once (walked: this process's bit
           may be left from its own walks as a waiter) */
        STEP(incs = incs & ~BIT; Q = x; walked = walked & ~BIT);
#else
        STEP(incs = incs & ~BIT; Q = x);
#endif
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
           hput[_pid - NP] != 0 ->
           SET_H(hput[_pid - NP], HPUT_T(_pid - NP));
           hput[_pid - NP] = 0; HPUT_SET_T(_pid - NP, 0)
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
           :: (dead & ~expired & (1 << i)) ->
               expired = expired | (1 << i); TOUCH; break
           :: ((dead & ~expired) >> (i + 1)) != 0 -> i++
           od;
           i = 0
       }
    :: atomic { faults > 0 -> faults = 0 }
    od
}
