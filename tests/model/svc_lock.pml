/*
 * svc_lock.pml -- spin model of the service-wide exclusive lock on a lock
 * home hosted by an rdlmd daemon (core/svc/slock.c; svc.h "Locks", layout.h
 * "Lock word"; core/api/api_lock.c rdlm_lock_keep). N client processes (3),
 * each with its own authority session and its own tag at the home, acquire
 * and release one lock LOOPS times (2); a fenced resource checks tokens.
 *
 * The lock word. W = seq << 24 | want << 23 | tag at the home; here W =
 * want * WANTB + seq * TAGB + tag in a byte (WANTB 128, TAGB 8). tag 0: free;
 * otherwise the tag of the holder's link. WANT (bounded bypass): on a held
 * word, a waiter has waited past the bound and asks for the lock; on a free
 * word, the last holder left it reserved for a waiter (release R2), or a
 * waiter's fetch-or landed on it after a release (a reservation). Only a
 * waiter's fetch-or (W := W | WANT) sets it; only R2 keeps it from a held
 * word to a free one; every grant (a take or a break) clears it. Every
 * remote operation on W (a get, a compare-and-swap, a fetch-or) is ONE
 * step. A token is
 * epoch << 40 | seq; here TOKEN(e, s) = e * 16 + s, compared as a number,
 * i.e. by (epoch, seq). Each acquire call makes at most two grants (the
 * second only after a link loss: its first CAS applied, its caller told
 * PEER_DEAD), so seq stays below 16 (asserted) and no field wraps.
 *
 * What a client does (slock.c rdlm_svc_take / rdlm_svc_lock_release, and
 * rdlm_lock_acquire around them):
 *   entry    rdlm_obj_check: the lease first. A client that finds its lease
 *            lost never acts again (every call returns LEASE_EXPIRED).
 *   take     w := the guess (the free word this process last saw, 0 after a
 *            (re)connect). If tag(w) == 0, WANT or not (or the holder was
 *            found ended): CAS(W, w -> (seq(w) + 1, my tag)), WANT clear;
 *            success = the acquire returns, token (epoch, seq(w) + 1);
 *            failure: w := the word found. If w is held by another: poll.
 *            Polling is abstracted (below): the waiter re-reads W when it
 *            has changed, or asks the authority (FATE, after the tag's
 *            session id is read from the home's tag table) whether the
 *            session of tag(w) has ENDED; "ended" makes it break the lock by
 *            the same CAS from exactly w (WANT and all): RDLM_OWNER_DEAD.
 *            The FATE request is a session call: it is refused
 *            (LEASE_EXPIRED) when the asker's own lease is lost, and slock.c
 *            then goes on polling (rdlm_svc_holder_ended returns 0 with the
 *            get's status).
 *   want     a waiter whose w has no WANT and is not its own (held by
 *            another, or free: slock.c does this before the take, as a
 *            looping holder retakes a free word between a waiter's read and
 *            its CAS every time), and that has waited past the bound
 *            (RDLM_LOCK_BYPASS_US; the model: at any moment), sets WANT by
 *            ONE remote fetch-or: W := W | WANT atomically, whatever W is by
 *            then, and the old word comes back; w := old | WANT. The OR
 *            lands on the word now there, which may have moved on since w
 *            was read: the same word (the usual case); a later grant's held
 *            word; a free word (as read, or a holder released in between):
 *            WANT on it is a reservation, which a recent releaser leaves
 *            alone for a while as it does its own yielded word, and which
 *            the waiter then takes by the CAS from old | WANT; a word that
 *            already has WANT (nothing changes); or, after a link loss, a
 *            word held under this client's own earlier tag (a take whose
 *            answer was lost with the link; slock.c keeps its tag across a
 *            reconnect to the same life of the home and never sets WANT on a
 *            word of its own tag, but takes it again, so there the OR lands
 *            on it only after a take applied late; the model's fresh tag lets
 *            the waiter OR first and break later, which covers both). The
 *            waiter counts WANT as set by itself (slock.c's `wanted', which
 *            lets it take a free word with WANT at once, its deferral or
 *            not) iff old had no WANT; the model needs no such flag, since
 *            its deferral may end at any moment anyway. A waiter whose w has
 *            WANT does not set it again; once it reads a word without WANT it
 *            may.
 *   defer    if w is the free word with WANT that this client's own R2
 *            wrote (yielded; slock.c: any free word with WANT, for 2 ms after
 *            its release, unless this acquire set WANT itself), it polls
 *            instead of taking it, until a
 *            deferral time since that release has passed, then takes it by
 *            the same CAS. The model lets that time end at any moment: the
 *            CAS is always allowed, and polling re-reads W once it changed
 *            (a changed W is no longer the yielded word: the rules above).
 *   keep     rdlm_lock_keep: the lease is checked once the acquire succeeded;
 *            lost: release at once, return LEASE_EXPIRED (then the client is
 *            lost for good) -- but an acquire that broke the lock
 *            (OWNER_DEAD) leaves the word held under its own tag instead
 *            (ops->undo_dead, rdlm_svc_lock_abandon), so that the next holder
 *            breaks it once this session ended and is told OWNER_DEAD too;
 *            valid: the call returns success, the client is a holder (ghost
 *            hold[]).
 *   write    in the critical section, one write to the resource with the
 *            token; a client may stop (SIGSTOP) for any time before it and
 *            does not look at its lease again: the stale write fencing is for.
 *   release  R1: CAS(W, held -> (seq(held), 0)); success: guess := that
 *            free word. R2, if R1 found exactly held | WANT: CAS(W, held |
 *            WANT -> (seq(held), 0) | WANT), the lock left free and reserved
 *            for a waiter; success: guess := yielded := that word. R1 finding
 *            any other word, or R2 failing: RDLM_ERR_LEASE_EXPIRED (the lock
 *            was broken), nothing written.
 *
 * Waiting. A waiter that has read w held by another can do three things: re-
 * read W, ask FATE, or pause. Re-reading an unchanged word and a FATE answer
 * "not ended" change nothing, so the model lets a waiter move only when W
 * differs from w (re-read) or when tag(w)'s session has ENDED and its own
 * lease holds (FATE "ended"); otherwise it is blocked. The real waiter asks
 * every 500 ms while the word does not change, so it takes every step the
 * model allows, in every order relative to the others. A blocked waiter that
 * nothing can unblock is a stall: spin's invalid end state. Setting WANT is a
 * fourth move, open while w is not this client's own and has no WANT (time
 * is abstract: the bound may have passed at any moment); it is not needed to
 * unblock anyone.
 *
 * Leases, abstractly (the argument itself is lease_break.pml's): valid[c] is
 * client c's own view of its lease (now < valid_until); it only goes from 1
 * to 0, and the authority ends session c (ended[c] := 1, committed, final;
 * what FATE reports) only once valid[c] == 0. Between "lease valid" at a
 * check and the next action there may be any pause: the lease may lapse in
 * between, and the model has every such interleaving.
 *
 * Environment (nondeterministic, explored exhaustively):
 *   crash    CRASHES (1) per run: instead of any step a client stops forever;
 *            its lease then lapses and its session ends (process Time: time
 *            passes, the authority must do this eventually).
 *   lapse    LAPSES (1) per run: the lease of a client that has not crashed
 *            lapses at any moment (a SIGSTOP longer than the TTL, or a
 *            partition from the authority); the client goes on when resumed.
 *            With interleaving semantics that IS the pause: a client that
 *            takes no step for a while is paused.
 *   restart  RESTARTS (0; -DRESTARTS=1): the home's region is lost and the
 *            daemon comes back with an empty region (W = 0) and a larger epoch
 *            (committed before it serves). Operations through a link to the
 *            lost region fail (RDLM_ERR_PEER_DEAD) and are not applied; the
 *            acquire then reconnects (new tag, guess 0) and retries; a holder
 *            learns nothing until its release, which fails (PEER_DEAD).
 *   link loss  LINK_LOSS (0; -DLINK_LOSS=1): the transport declares the link
 *            of a client that has not crashed dead although the home lives
 *            and keeps its region (transport/README.md: "a live peer that
 *            leaves an operation unanswered [RDLM_PEER_TIMEOUT_MS] long
 *            counts as dead too, for good": a partition between client and
 *            home, a stopped rdlmd). The client's next operation on the home
 *            fails with PEER_DEAD; it was the operation in flight, so it may
 *            or may not have been applied at the home (a fetch-or in flight,
 *            if applied, ORs WANT into whatever W is then). The acquire
 *            reconnects to the same region and draws a new tag; the release,
 *            finding the link's generation changed, returns PEER_DEAD ("lost
 *            with its home") without touching W.
 *   stray WANT  STRAY_WANTS (0; -DSTRAY_WANTS=n): WANT is ORed into W at
 *            any moment, whatever W is, n times: a fetch-or from a waiter of
 *            a name whose slot this was before it was re-keyed (svc_slot.pml),
 *            landing now; or a fetch-or applied late, after its link was
 *            declared dead (the model otherwise applies an operation in
 *            flight at the latest when its client learns of the loss).
 *   Faults may be forfeited at any moment, so that a stall reached with
 *   budget left is still a deadlock spin sees.
 *
 * Properties:
 *   (a) exclusion: at most one client with a VALID lease holds the lock: a
 *       client enters the critical section (lease checked valid) only when
 *       no other holder's lease is valid. With RESTARTS this is known to
 *       fail (the lost region's holder keeps believing it holds, with a valid
 *       lease); then (a) is asserted among holders of the current region
 *       only, and -DSTRICT asserts it in full (an expect-fail entry).
 *   (b) tokens strictly increase in the order the word grants them (every
 *       CAS that installs a held word, also one whose caller never learnt
 *       its result).
 *   (c) a release reports LEASE_EXPIRED (R1 found a word other than held
 *       and held | WANT, or R2 failed) only if this client's session has
 *       ended.
 *   (d) OWNER_DEAD (a break CAS succeeded) only if the session of the tag
 *       broken has ended; and after an OWNER_DEAD undone for a lost lease,
 *       the next grant in that region is a break too (OWNER_DEAD: the death
 *       is not forgotten).
 *   (e) fencing: the resource accepts a write iff its token is >= the
 *       largest it accepted (so accepted tokens never decrease); and it never
 *       rejects the write of a holder whose lease is still valid (of the
 *       current region, with RESTARTS): only stale holders are fenced off.
 *   (f) no invalid end state: every client that has not crashed completes
 *       its LOOPS calls, or stops once an API call tells it its lease is lost
 *       (an acquire that returns LEASE_EXPIRED is such a call).
 *   Never: W holds this link's own tag while its acquire reads it (slock.c
 *   returns RDLM_ERR_CORRUPT there): asserted.
 *
 * Switches (not bugs):
 *   FIX_LOST_WAITER  a waiter whose FATE request is refused because its own
 *       lease is lost returns LEASE_EXPIRED (slock.c keeps polling: with no
 *       deadline that waits forever behind a crashed holder; README.md).
 *   FIX_LINK_LOSS   after a link loss the release reconnects and CASes the
 *       held word free anyway (R1, then R2 if R1 finds held | WANT; a lost
 *       R2 is retried as R2) when the region is the same (same epoch), and
 *       an acquire that finds the word held under another tag of its own
 *       session breaks it like an ended holder's (README.md). Assumes the
 *       reconnect eventually succeeds.
 *   STRICT          with RESTARTS, assert (a) across regions too.
 *   LOSS_WHILE_HOLDING  the link loss comes only while its client holds the
 *       lock (the release is the operation that finds it).
 *   USER_VISIBLE    assert only (a) and (e): what a user of the lock sees.
 *   WANTER=c        only client c sets WANT (any number of times); the
 *       others wait, take and release as usual (a smaller search).
 *   NO_WANT         nobody sets WANT: the protocol before the bypass.
 * Knobs: -DN= (3, at most 3), -DLOOPS= (2), -DCRASHES= (1), -DLAPSES= (1),
 * -DRESTARTS= (0), -DLINK_LOSS= (0, at most 1), -DSTRAY_WANTS= (0).
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_BREAK_STORE    the break writes (seq(w) + 1, me) with a plain store
 *       instead of a CAS from w: two waiters that both found the holder
 *       ended both take the lock; or it lands on a word taken after the
 *       read and moves seq back -> (b); (a) or (e) with USER_VISIBLE.
 *   BUG_NO_FATE        a waiter breaks as soon as the word looks stuck,
 *       without the authority's ENDED -> (d); (a) with USER_VISIBLE.
 *   BUG_RELEASE_STORE  the release stores (seq(held), 0) unconditionally: a
 *       broken (paused, ended) holder frees the lock its breaker holds -> a
 *       third client takes it with the breaker's token -> (b); (a) or (e)
 *       with USER_VISIBLE.
 *   BUG_FATE_ONCE      a waiter asks FATE once per word it waits behind and
 *       not again while the word stays the same: if the holder was alive at
 *       that question and dies later, the waiter never breaks -> (f).
 *   BUG_WANT_STORE     the waiter sets WANT with a plain store of w | WANT
 *       (the word it read) instead of the fetch-or: it can write back a held
 *       word after its holder released and another took the lock; a FATE
 *       "ended" about the old holder then breaks it again -> (b), or the old
 *       holder reads its own tag (the assert above); (a) or (e) with
 *       USER_VISIBLE.
 *   BUG_RELEASE_WANT_ANY  R2 is done from whatever word R1 found, CAS(found
 *       -> (seq(found), 0) | WANT), not only from exactly held | WANT: a
 *       broken holder frees its breaker's lock -> (c) (R2 finds the word
 *       moved on), (a) or (e) with USER_VISIBLE.
 *   BUG_UNDO_PLAIN     rdlm_lock_keep frees the word of an OWNER_DEAD
 *       acquire it undoes for a lost lease (the code before): the next holder
 *       takes a free word, told nothing of the death -> (d).
 *   BUG_WANT_LOST      R1 finding held | WANT is taken as "broken": the
 *       release returns LEASE_EXPIRED and leaves the word held -> (c).
 *   BUG_DEFER_FOREVER  a client never takes its own yielded word while it
 *       stays unchanged (the deferral never ends): when the waiter that set
 *       WANT crashed and nobody else comes, it waits for ever -> (f).
 *   BUG_R2_NO_RETRY    (with FIX_LINK_LOSS) an R2 whose link is declared
 *       dead returns PEER_DEAD instead of being retried through the
 *       reconnect as R1 is: the word stays held | WANT under a live session
 *       and its waiters wait for ever -> (f).
 *
 * Reachability (-DREACH=n: the assert(REACH != n) must be found, i.e. the
 * model does reach it): 1 a stale write rejected by the resource; 2 an
 * acquire returns OWNER_DEAD; 3 a release returns LEASE_EXPIRED; 4 (with
 * RESTARTS) a release returns PEER_DEAD after a restart; 5 a lost client's
 * acquire took the word and rdlm_lock_keep released it; 6 a client took a
 * free word with WANT that another client's release left (the reservation
 * used); 7 a client took its own yielded word (its deferral ended). Where the
 * fetch-or lands: 8 (with LINK_LOSS) on a word held under this client's own
 * earlier tag (its take applied, the answer lost with the link); 9 on a free
 * word without WANT (a reservation, counted as the waiter's own); 10 on a
 * word held under a later grant than the one read. 11 (with FIX_LINK_LOSS) a client breaks a word held under its own
 * earlier tag with WANT on it, to a fresh grant (the CAS from exactly the
 * word read, WANT included). 12 an OWNER_DEAD acquire undone for a lost lease
 * left its word held (abandoned).
 *
 * Not modelled: the try path and deadlines (every acquire waits forever: the
 * worst case for (f)); the 500 ms / poll timing, the bypass bound and the
 * deferral time (any order, any moment); several locks or
 * threads per process (the node-local lock in front, core/local); slot
 * claiming (one slot, found by every client; slot.c takes a free word with
 * WANT for free; a fetch-or landing on a MARK or on another name's word is
 * svc_slot.pml's); the HOMES request and tag
 * drawing (a reconnect is one step that yields a fresh tag; tag -> session
 * is published before a tag is used, as rdlm_svc_link_register does with a
 * put and a flush); the authority's own protocol (lease_break.pml); a home
 * that is down for a while (operations fail, the acquire retries: delay
 * only); weaker memory orders (remote atomics on one word are linearizable).
 */

#ifndef N
#define N 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef LAPSES
#define LAPSES 1
#endif
#ifndef RESTARTS
#define RESTARTS 0
#endif
#ifndef LINK_LOSS
#define LINK_LOSS 0
#endif
#ifndef STRAY_WANTS
#define STRAY_WANTS 0
#endif
/* who may set WANT: any waiter; -DWANTER=c: client c only; -DNO_WANT: none */
#if defined(NO_WANT)
#define WANTER_OK false
#elif defined(WANTER)
#define WANTER_OK (ME == WANTER)
#else
#define WANTER_OK true
#endif
#ifndef REACH
#define REACH 0
#endif
#define REACHED(n) assert(REACH != (n))

#if N > 3
#error "the Time and Env processes are written out for N <= 3"
#endif
#if LINK_LOSS > 1
#error "one link loss per run: one spare tag (XTAG)"
#endif

/* the word: WANTB * want + seq * TAGB + tag; tags 1..N are the clients'
   first tags (their tags in every region after a restart), XTAG the one drawn
   by the client that reconnects to the same region after a link loss; seq <
   16, so seq * TAGB + tag < WANTB and the word fits in a byte */
#define TAGB 8
#define WANTB 128
#define XTAG (N + 1)
#define SEQ(w) (((w) % WANTB) / TAGB)
#define TAG(w) ((w) % TAGB)
#define WANTED(w) ((w) >= WANTB)
#define WORD(s, t) ((s) * TAGB + (t))   /* WANT clear */
#define TOKEN(e, s) ((e) * 16 + (s))
/* the session (client) whose id the home's tag table holds for tag t */
#define SESS(t) ((t) == XTAG -> xowner - 1 : (t) - 1)

#define ME _pid                     /* clients are _pid 0 .. N-1 */

/* the home */
byte W;                             /* the lock word of the current region */
byte ep = 1;                        /* the current region's epoch */
byte xowner;                        /* client + 1 that drew XTAG (0: none) */

/* the authority and the clients' leases */
bit valid[N] = 1;                   /* client c's own view: lease valid */
bit ended[N];                       /* session c ENDED (committed, final) */
bit crashed[N];

/* links: declared dead while the home lives (LINK_LOSS) */
bit ldead[N];                       /* the next operation fails */
bit lfirst[N];                      /* ... and may have been applied */

/* fault budgets */
byte crashes = CRASHES;
byte lapses = LAPSES;
byte restarts = RESTARTS;
byte losses = LINK_LOSS;
byte strays = STRAY_WANTS;

/* the resource */
byte rmax;                          /* largest token accepted */

/* ghosts */
byte hold[N];                       /* epoch of c's hold (0: not a holder) */
byte last_tok;                      /* (b) */
bit dead_owed;                      /* (d): an undone OWNER_DEAD's death */

/* -DUSER_VISIBLE: only (a) and (e), what a user of the lock would see */
#ifdef USER_VISIBLE
#define INTERNAL(x) skip
#else
#define INTERNAL(x) assert(x)
#endif

/* a grant: the word now names a holder with token tk (b) */
#define GRANT(tk) INTERNAL((tk) > last_tok); last_tok = (tk)

/* (a), when client ME enters the critical section in epoch e */
#ifdef STRICT
#define OTHER_OK(d, e) ((d) == ME || hold[d] == 0 || !valid[d])
#else
#define OTHER_OK(d, e) ((d) == ME || hold[d] != (e) || !valid[d])
#endif
#if N > 2
#define EXCLUSION(e) assert(OTHER_OK(0, e) && OTHER_OK(1, e) && OTHER_OK(2, e))
#else
#define EXCLUSION(e) assert(OTHER_OK(0, e) && OTHER_OK(1, e))
#endif

/* crash instead of a step whose guard g holds: stop forever, locals cleared
   (W keeps whatever this client wrote; its lease lapses, process Time) */
#define CRASH_IF(g) \
    atomic { (g) && crashes > 0 -> crashes--; crashed[ME] = 1; \
             w = 0; guess = 0; held = 0; hep = 0; cep = 0; mytag = 0; \
             broken = 0; odead = 0; asked = 0; self = 0; yielded = 0; \
             loops = 0 }; \
    goto end_stop
/* one step of this client (its guard g first), or a crash instead */
#define STEP(g, body) if :: CRASH_IF(g) :: atomic { (g) -> body } fi

/* the waiter's fetch-or, W := W | WANT on whatever W is (BUG_WANT_STORE: a
   plain store of the word it read, with WANT) */
#ifdef BUG_WANT_STORE
#define SET_WANT W = w | WANTB
#else
#define SET_WANT W = W | WANTB
#endif

/* the CAS from w succeeds (BUG_BREAK_STORE: a break always "succeeds") */
#ifdef BUG_BREAK_STORE
#define CAS_HITS (W == w || broken)
#else
#define CAS_HITS (W == w)
#endif

/* the link is usable: same region, not declared dead */
#define LINK_OK (cep == ep && !ldead[ME])

/* the take CAS from w is allowed: always (the deferral on its own yielded
   word may end at any moment); BUG_DEFER_FOREVER: never while w is that word */
#ifdef BUG_DEFER_FOREVER
#define TAKE_YIELDED && !yielded
#else
#define TAKE_YIELDED
#endif

/* an operation failed with PEER_DEAD: the acquire pauses and reconnects:
   a new region (restart) or the same one (link loss, a fresh tag); the
   slot is resolved again and the guess reset */
#define RECONNECT \
    if \
    :: cep != ep -> mytag = ME + 1 \
    :: cep == ep -> assert(xowner == 0); xowner = ME + 1; mytag = XTAG \
    fi; \
    cep = ep; ldead[ME] = 0; lfirst[ME] = 0; guess = 0; w = 0; broken = 0; \
    asked = 0; self = 0; yielded = 0

/* after a release: a client that will not acquire again (its last call, or
   its lease lost: the next call stops) never reads its guess; dropped, so that
   the states of finished clients merge */
#define FORGET_GUESS \
    if \
    :: loops == LOOPS || !valid[ME] -> guess = 0; yielded = 0 \
    :: loops < LOOPS && valid[ME] -> skip \
    fi

/* the resource: accept iff tok >= the largest token accepted (e) */
#define WRITE(tk) \
    if \
    :: (tk) >= rmax -> rmax = (tk) \
    :: (tk) < rmax -> assert(!valid[ME] || hep != ep); REACHED(1) \
    fi

active [N] proctype Client()
{
    byte w;                         /* the word as last read */
    byte guess;                     /* k->guess: the free word last seen */
    byte held;                      /* k->held: the word while holding */
    byte hep;                       /* epoch of the hold */
    byte cep = 1;                   /* epoch of the region this link reaches */
    byte mytag = ME + 1;            /* this link's tag */
    byte loops;
    bit broken;                     /* FATE said ended: break from w */
    bit odead;                      /* the acquire returns OWNER_DEAD */
    bit asked;                      /* BUG_FATE_ONCE: asked about this w */
    bit self;                       /* FIX_LINK_LOSS: breaking my own tag */
    bit yielded;                    /* w is the free word with WANT that this
                                       client's release R2 wrote (k->yielded) */

top:
    do
    :: loops == LOOPS -> break
    :: loops < LOOPS ->
        /* rdlm_lock_acquire: rdlm_obj_check looks at the lease first */
        STEP(true,
             if
             :: valid[ME] -> loops++; w = guess
             :: !valid[ME] -> goto end_stop     /* LEASE_EXPIRED */
             fi);

take:   /* rdlm_svc_take */
        if
        :: STEP((TAG(w) == 0 || broken) TAKE_YIELDED,
                if
                :: !LINK_OK ->
                    /* the CAS fails (PEER_DEAD); after a link loss the
                       first one was in flight: maybe applied */
                    if
                    :: cep == ep && lfirst[ME] && W == w ->
                        W = WORD(SEQ(w) + 1, mytag);
                        GRANT(TOKEN(ep, SEQ(w) + 1))
                    :: true -> skip
                    fi;
                    RECONNECT
                :: LINK_OK && CAS_HITS ->
                    assert(SEQ(w) + 1 < 16);
                    if
                    :: yielded -> REACHED(7)    /* its own, after the deferral */
                    :: !yielded && TAG(w) == 0 && WANTED(w) -> REACHED(6)
                    :: self && WANTED(w) -> REACHED(11)
                    :: !(TAG(w) == 0 && WANTED(w)) && !(self && WANTED(w)) ->
                        skip
                    fi;
                    W = WORD(SEQ(w) + 1, mytag);
                    GRANT(TOKEN(ep, SEQ(w) + 1));
                    if
                    :: broken && !self ->
                        INTERNAL(ended[SESS(TAG(w))]); odead = 1     /* (d) */
                    :: !broken || self -> INTERNAL(!dead_owed)      /* (d) */
                    fi;
                    dead_owed = 0;
                    held = W; hep = ep; w = 0; broken = 0; self = 0; yielded = 0;
                    goto got
                :: LINK_OK && !CAS_HITS ->
                    w = W; broken = 0; asked = 0; yielded = 0;
                    INTERNAL(TAG(w) != mytag)
                fi;
                goto take)
        /* its own yielded word: it polls while its deferral lasts (the CAS
           above is the deferral's end, at any moment) */
        :: STEP(yielded && (!LINK_OK || W != w),
                if
                :: !LINK_OK -> lfirst[ME] = 0; RECONNECT
                :: LINK_OK ->
                    w = W; asked = 0; yielded = 0; INTERNAL(TAG(w) != mytag)
                fi;
                goto take)
        /* held by another: re-read once it changed (or fail and reconnect) */
        :: STEP(TAG(w) != 0 && !broken && (!LINK_OK || W != w),
                if
                :: !LINK_OK -> lfirst[ME] = 0; RECONNECT
                :: LINK_OK -> w = W; asked = 0; INTERNAL(TAG(w) != mytag)
                fi;
                goto take)
        /* waited past the bound (at any moment), w without WANT and not its
           own, held by another or free: set WANT by one fetch-or, W := W |
           WANT on whatever W is now (held as read, a later grant, free: a
           reservation, already with WANT, held under this client's own
           earlier tag); w := old | WANT. After a link loss the fetch-or in
           flight may have been applied, on whatever W was then */
        :: STEP(TAG(w) != mytag && !WANTED(w) && !broken && WANTER_OK,
                if
                :: !LINK_OK ->
                    if
                    :: cep == ep && lfirst[ME] -> SET_WANT
                    :: true -> skip
                    fi;
                    RECONNECT
                :: LINK_OK ->
                    if                          /* where it lands (old = W) */
                    :: TAG(W) != 0 && SESS(TAG(W)) == ME -> REACHED(8)
                    :: TAG(W) == 0 && !WANTED(W) -> REACHED(9)
                    :: TAG(W) != 0 && SEQ(W) != SEQ(w) -> REACHED(10)
                    :: else -> skip
                    fi;
                    if :: W != w -> asked = 0 :: else -> skip fi;
                    SET_WANT; w = W;            /* old | WANT */
                    INTERNAL(TAG(w) != mytag)
                fi;
                goto take)
#if defined(BUG_NO_FATE)
        /* bug: break as soon as the word looks stuck */
        :: STEP(TAG(w) != 0 && !broken && LINK_OK, broken = 1; goto take)
#elif defined(BUG_FATE_ONCE)
        /* bug: one FATE question per word waited behind */
        :: STEP(TAG(w) != 0 && !broken && !asked && valid[ME] && LINK_OK,
                asked = 1; broken = ended[SESS(TAG(w))]; goto take)
#else
        /* FATE (own lease valid: the request is made) says ENDED */
        :: STEP(TAG(w) != 0 && !broken && valid[ME] && LINK_OK &&
                ended[SESS(TAG(w))],
                broken = 1; goto take)
#endif
#ifdef FIX_LOST_WAITER
        /* FATE refused: this client's own lease is lost */
        :: STEP(TAG(w) != 0 && !broken && !valid[ME], w = 0; goto end_stop)
#endif
#ifdef FIX_LINK_LOSS
        /* the word is held under another tag of this very session */
        :: STEP(TAG(w) != 0 && !broken && LINK_OK && SESS(TAG(w)) == ME,
                broken = 1; self = 1; goto take)
#endif
        fi;

got:    /* the acquire returned OK / OWNER_DEAD: rdlm_lock_keep */
        STEP(true,
             if
             :: valid[ME] ->
                 EXCLUSION(hep);                            /* (a) */
                 hold[ME] = hep;
                 if :: odead -> REACHED(2) :: else -> skip fi; odead = 0
#ifdef BUG_UNDO_PLAIN
             /* bug: an undone OWNER_DEAD released as any other (the code
                before): the next holder takes a free word, OK */
             :: !valid[ME] ->
                 dead_owed = odead && W == held && cep == ep; odead = 0;
                 REACHED(5); goto release
#else
             :: !valid[ME] && !odead -> REACHED(5); goto release
             /* abandoned: the word stays held under this (lost) session's
                tag; W untouched, the client is lost for good. The death is
                owed to the next grant unless one broke the word already */
             :: !valid[ME] && odead ->
                 dead_owed = W == held && cep == ep; odead = 0; held = 0; hep = 0;
                 REACHED(12);
                 goto end_stop
#endif
             fi);
        /* critical section: one write with the token */
        STEP(true, WRITE(TOKEN(hep, SEQ(held))));

release: /* rdlm_svc_lock_release (from the caller, or from rdlm_lock_keep):
           R1, and R2 (yield) if R1 found held | WANT */
        STEP(true,
             hold[ME] = 0;
             if
             :: cep != ep -> REACHED(4)             /* region lost: PEER_DEAD */
             :: cep == ep && ldead[ME] ->
#ifdef FIX_LINK_LOSS
                 /* reconnect, then CAS from the held word all the same */
                 lfirst[ME] = 0; RECONNECT;
                 if
                 :: W == held -> W = WORD(SEQ(held), 0)
                 :: W == held + WANTB -> w = W; goto yield
                 :: W != held && W != held + WANTB -> skip
                 fi
#else
                 /* the CAS in flight may have been applied; PEER_DEAD */
                 if
                 :: lfirst[ME] && W == held -> W = WORD(SEQ(held), 0)
                 :: true -> skip
                 fi;
                 lfirst[ME] = 0
#endif
#ifdef BUG_RELEASE_STORE
             :: LINK_OK -> W = WORD(SEQ(held), 0); guess = W   /* bug: a store */
#else
             :: LINK_OK && W == held -> W = WORD(SEQ(held), 0); guess = W
#if defined(BUG_RELEASE_WANT_ANY)
             :: LINK_OK && W != held -> w = W; goto yield  /* bug: any word */
#elif defined(BUG_WANT_LOST)
             :: LINK_OK && W != held ->   /* bug: held | WANT taken as broken */
                 INTERNAL(ended[ME]); REACHED(3)                /* (c) */
#else
             :: LINK_OK && W == held + WANTB -> w = W; goto yield
             :: LINK_OK && W != held && W != held + WANTB -> /* LEASE_EXPIRED */
                 INTERNAL(ended[ME]); REACHED(3)                /* (c) */
#endif
#endif
             fi;
             held = 0; hep = 0; FORGET_GUESS)
    od;
    goto end_stop;

yield:  /* R2: R1 found w = held | WANT: CAS(w -> (seq(w), 0) | WANT), the lock
           left free and reserved for a waiter; success: yielded */
    STEP(true,
         if
         :: cep != ep -> REACHED(4)                 /* region lost: PEER_DEAD */
         :: cep == ep && ldead[ME] ->
#ifdef FIX_LINK_LOSS
             /* reconnect, then the same CAS */
             if
#ifdef BUG_R2_NO_RETRY
             /* bug: PEER_DEAD, not retried (the CAS in flight may have been
                applied) */
             :: lfirst[ME] && W == w -> W = WORD(SEQ(w), 0) + WANTB; RECONNECT
             :: true -> RECONNECT
#else
             :: W == w ->
                 W = WORD(SEQ(w), 0) + WANTB; RECONNECT; guess = W; yielded = 1
             :: W != w -> RECONNECT
#endif
             fi
#else
             /* the CAS in flight may have been applied; PEER_DEAD */
             if
             :: lfirst[ME] && W == w -> W = WORD(SEQ(w), 0) + WANTB
             :: true -> skip
             fi;
             lfirst[ME] = 0
#endif
         :: LINK_OK && W == w ->
             W = WORD(SEQ(w), 0) + WANTB; guess = W; yielded = 1
         :: LINK_OK && W != w ->                    /* LEASE_EXPIRED */
             INTERNAL(ended[ME]); REACHED(3)                    /* (c) */
         fi;
         w = 0; held = 0; hep = 0; FORGET_GUESS; goto top);

    /* done, lost (an API call said so: it never acts again) or crashed */
end_stop:
    skip
}

/* time passes: a crashed client's lease lapses; the authority ends a
   session whose lease has lapsed (eventually: a blocked waiter is not a stall
   while this can still happen) */
#define TIME(c) \
    :: atomic { crashed[c] && valid[c] -> valid[c] = 0 } \
    :: atomic { !valid[c] && !ended[c] -> ended[c] = 1 }

active proctype Time()
{
end:
    do
    TIME(0)
    TIME(1)
#if N > 2
    TIME(2)
#endif
    od
}

/* faults other than crashes (those are the clients' CRASH_IF) */
#define LAPSE(c) \
    :: atomic { lapses > 0 && valid[c] && !crashed[c] -> \
                lapses--; valid[c] = 0 }
#ifdef LOSS_WHILE_HOLDING
#define LOSS_WHEN(c) (hold[c] != 0)
#else
#define LOSS_WHEN(c) true
#endif
#define LOSE_LINK(c) \
    :: atomic { losses > 0 && !crashed[c] && !ldead[c] && LOSS_WHEN(c) -> \
                losses--; ldead[c] = 1; lfirst[c] = 1 }

active proctype Env()
{
end:
    do
    LAPSE(0)
    LAPSE(1)
#if N > 2
    LAPSE(2)
#endif
    :: atomic { restarts > 0 -> restarts--; ep++; W = 0; dead_owed = 0 }
#if LINK_LOSS > 0
    LOSE_LINK(0)
    LOSE_LINK(1)
#if N > 2
    LOSE_LINK(2)
#endif
#endif
#if STRAY_WANTS > 0
    /* a stray fetch-or of WANT, on whatever W is */
    :: atomic { strays > 0 -> strays--; W = W | WANTB }
#endif
    /* forfeit the rest of the budget */
    :: atomic { crashes + lapses + restarts + losses + strays > 0 ->
                crashes = 0; lapses = 0; restarts = 0; losses = 0; strays = 0 }
    od
}
