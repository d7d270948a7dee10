/*
 * lock_word.pml -- spin model of the on-node exclusive lock as implemented in
 * core/local/ticket.c and described in docs/local-locks.md, "Exclusive lock: a
 * ticket lock in one word, per-ticket wake-up, recovery". Step names (fast
 * path, slow path 1..4, Release, Timeout, Recovery) are the doc's. One lock
 * E; N processes each acquire and release it LOOPS times. (ticket_lock.pml
 * models the earlier two-word protocol; this file reuses its techniques.)
 *
 * The lock word. The real word is one 64-bit atomic: next(16) | serving(16) |
 * owner(32). Here it is three bytes, `next`, `serving`, `owner`, and every
 * access to it is ONE step that reads and/or writes all three together (a
 * load, a CAS, or the fetch_add on next). owner: 0 = nobody, DIED = nobody
 * and the last holder died, else slot + 1. At most N * LOOPS tickets are
 * issued, so the bytes never wrap (the real 16-bit tickets compare by
 * wrapping difference and cannot alias: fewer than 2^16 are outstanding).
 *
 * Environment (nondeterministic, explored exhaustively):
 *   crash    Instead of any step, a process may crash (CRASHES per run, 1 by
 *            default). It never moves again and its slot stops being alive
 *            (what the liveness check reads); its record, its owner value in
 *            the word and its ticket stay as they were. A waiter blocked with
 *            nothing to do cannot crash, but nobody can tell it from one that
 *            crashes when it next wakes: its record WAITING(t) claims no
 *            place until serving == t, which wakes it, and it owns nothing.
 *   timeout  DEADLINES acquires of the whole run (1 by default) carry a
 *            deadline (chosen at step 1); such a waiter may give up at any
 *            point of its wait. The others wait forever, so "nobody can move"
 *            is a real hang.
 *   wake-up  The futex wait is "block until serving == t, or wake up (maybe
 *            spuriously) and run Recovery". A waiter may wake whenever shared
 *            state changed since its last Recovery pass (its bit in `dirty`):
 *            a pass over unchanged state repeats the previous one, so no
 *            behaviour is lost, and a waiter that nothing can help blocks.
 *            The real code runs Recovery after every sleep slice and, right
 *            behind a served ticket still unclaimed, before it sleeps, and
 *            runs it again after each pass that moved the lock (a run of
 *            abandoned tickets at once): each pass changes the word, so the
 *            model allows every such repetition. (The arrival look, 2a below,
 *            is one such wake-up, so it is built only with -DPROMPT.)
 *   -DPROMPT  Wake-ups as the code has them, to check that nobody needs a
 *            sleep slice: an awake waiter (spinning, yielding, about to sleep)
 *            right behind a served ticket nobody has claimed runs Recovery
 *            until the lock stops moving, once per such ticket; it sleeps only
 *            when that look has nothing to do (the futex compares the word
 *            with its last look); asleep, it wakes when the lock reaches its
 *            ticket (its bit) and, only after a crash, when a sleep slice ends.
 *            With -DCRASHES=0 a slice never ends, so (e) says: every live
 *            waiter gets the lock without one (a crash lets a stuck waiter
 *            "crash" instead, so (e) checks promptness only with CRASHES=0).
 *   fast path  May fail although the lock looks free (its CAS compares the
 *            whole word and fails after any intervening change), so a free
 *            lock may also be taken through the slow path.
 *   Bitsets, spin/yield/slices, `parked`, the try path (timeout 0), several
 *   records per slot, and slot reuse by a new attach are not modelled.
 *   Interleaving is sequentially consistent (the code's word accesses are
 *   seq_cst CASes / fetch_add; record stores and the scan's loads seq_cst).
 *
 * Atomicity: one STEP = one access to one shared location (the word, one
 * record, the token, one liveness check), plus ghost and local updates.
 *   - Every CAS in ticket.c compares the whole word and is retried only while
 *     `next` alone changed (rdlm_ticket_pass_from, rdlm_ticket_claim), so each
 *     is modelled as one step "if serving == s and owner == o (or owner is
 *     nobody) then write serving/owner, keep next". The fast path's CAS
 *     expects (n, n, x) exactly: one step "if next == serving and owner is
 *     nobody then (n+1, n, me)".
 *   - Release loads the word and CASes (s, ., me) -> (s+1, ., 0) with s from
 *     that load; merged into one step: if owner == me then serving cannot
 *     change in between (every serving change either requires owner nobody
 *     or replaces owner), and if owner != me the release fails, which (c)
 *     flags anyway.
 *   - Recovery's first load of the word is one step; its pass is a separate
 *     CAS step comparing serving and owner with what the load saw.
 *   - token := token + 1 is a load and a store (two steps).
 *   - Left marks (RDLM_META_LEFT, the entry's meta: here the byte `left`, bit
 *     t, no aliasing): the give-up sets t's bit (fetch_or), then frees R,
 *     then loads the word; if the lock has reached t it passes it on (CAS),
 *     clears t's bit and checks t + 1's ("handed"). A release's CAS is
 *     followed by a load of meta: if the ticket it handed the lock to is
 *     marked, Recovery until the lock stops moving (run by a process with no
 *     ticket: t = NOTICKET). Each no-claimant pass then clears the passed
 *     ticket's bit (a load and fetch_and: one step). The arrival look (2a,
 *     -DPROMPT): after R := WAITING(t), load the word and, if the lock was
 *     handed to s != t and nobody claimed it, meta; s marked: Recovery as
 *     above (a release that found R still PENDING could not pass over s).
 *
 * Properties:
 *   (a) mutual exclusion: at most one LIVE process between acquire's return
 *       and its call to release (ghost `cs`; a crashed holder counts as gone);
 *   (b) fencing: holders enter the CS with strictly increasing tokens;
 *   (c) a live holder still owns the word when it releases (no theft);
 *   (d) serving never passes next (checked at every change of serving);
 *   (e) all counters are bounded, so every run ends; spin's invalid-end-state
 *       check says every live process without a deadline completes its LOOPS
 *       acquires (no hang, no lost wake-up);
 *   (f) OWNER_DEAD (the claim/fast-path CAS replaced DIED) is reported to the
 *       first holder after a holder died owning the lock (ghost `g_dead`, set
 *       when a process crashes while the word names it), and to no other.
 *   (g) without a crash, no left mark outlives its ticket: when every process
 *       has completed its loop, `left` is 0 (-DNO_CHECK_G leaves it out). So
 *       a ticket given up is always passed over by someone, not left at the
 *       head of the queue for the next acquire to find.
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_FAST_IGNORES_QUEUE  fast path takes a lock whose owner is nobody even
 *       though next != serving: (n, s, x) -> (n+1, s, me). Its release moves
 *       serving past s, which the waiter holding ticket s never claimed ->
 *       (e) hang.
 *   BUG_RELEASE_STORE  release loads the word, then stores (n, s+1, 0) with
 *       the stale n, losing a concurrent fetch_add: next goes back, a ticket is
 *       issued twice -> (d) serving passes next (else (e) hang).
 *   BUG_IGNORE_PENDING  the no-claimant rule ignores live PENDING records: a
 *       ticket taken by fetch_add but not yet published as WAITING is passed
 *       over; its owner then waits for a serving that went past -> (e) hang.
 *   BUG_TRUST_DEAD_RECORDS  the no-claimant rule counts dead slots' records
 *       as live claimants: a dead waiter's ticket is never passed -> (e).
 *   BUG_NO_LIVENESS_CHECK  the dead-holder rule passes the lock without
 *       checking that the holder is dead -> (c) (or (a)): a waiter passes a
 *       live holder's lock on, and the holder's release finds owner != me.
 *   BUG_CLAIM_STORE  the claim loads the word and then writes (n, t, me)
 *       with a plain store of the stale n, losing a concurrent fetch_add ->
 *       (d) serving passes next (else (e) hang).
 *   BUG_TIMEOUT_TAKES  (not a bug here; a check) a timed-out waiter that
 *       sees serving == t after freeing its record claims the lock (same CAS
 *       as step 4) instead of passing it on. In the two-word protocol this
 *       broke (a); here spin finds no error: the claim and any recoverer's
 *       pass are CASes on the same word, so exactly one of them wins. So the
 *       doc's "never taken after R was freed" is a choice (honour the
 *       deadline), not needed for safety (README.md).
 *   BUG_RELEASE_IGNORES_LEFT  the release does not look at the marks (the
 *       code before them): with -DPROMPT -DCRASHES=0 -DNO_CHECK_G, the lock
 *       reaches a given-up ticket while the waiter behind it sleeps, and
 *       nobody moves again -> (e) (the code: a sleep slice later). Without
 *       NO_CHECK_G, (g) catches it too (the mark is never spent).
 *   BUG_NO_ARRIVAL_LOOK  no arrival look: a release whose scan finds an
 *       arriving waiter's record PENDING does not pass over the marked ticket,
 *       and the arriving waiter, two behind, sleeps -> (e) (with -DPROMPT
 *       -DCRASHES=0 -DNO_CHECK_G; two acquires each, so that a waiter that
 *       gave up arrives again).
 *   BUG_MARK_AFTER_FREE  the give-up frees R before it marks t: a recoverer
 *       passes over t and clears its bit first, then the mark is set and
 *       stays -> (g).
 *
 * In the correct model the claim's failure branch (step 4 finding serving
 * == t but the CAS impossible) is unreached: spin reports it in "unreached
 * in proctype P" -- expected. So is the crash option of the dead-holder CAS
 * with CRASHES=1 (the only crash is the dead holder's).
 */

#ifndef N
#define N 3
#endif
#ifndef LOOPS
#define LOOPS 2
#endif
#ifndef DEADLINES
#define DEADLINES 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif

/* where rec_all returns to */
#define R_LOOK    2                 /* PROMPT: the look before sleeping */
#define R_ARRIVE  3                 /* the arrival look (2a) */
#define R_RELEASE 4                 /* the release's check of the mark */
#define R_TIMEOUT 5                 /* a timed-out waiter's pass, then the mark */
#define NOTICKET  255               /* t of a process that holds no ticket */

#if N * LOOPS > 8
#error "left is a byte: at most 8 tickets"
#endif

#define FREE    0
#define PENDING 1
#define WAITING 2

#define DIED      255               /* owner: nobody, last holder died */
#define NOBODY(o) ((o) == 0 || (o) == DIED)
#define ME        (_pid + 1)        /* owner value: slot index + 1 */
#define BIT       (1 << _pid)
#define ALIVE(i)  ((dead & (1 << (i))) == 0)   /* the liveness check */
#define TOUCH     dirty = waiting   /* a shared write: every waiter may wake */

/* (d), after every change of serving */
#define CHECK_SERVING assert(serving <= next)

/* a CAS took the lock replacing owner value x: OWNER_DEAD iff x == DIED (f) */
#define TAKEN(x)  d = ((x) == DIED); assert(d == g_dead); g_dead = 0; d = 0

/* does slot i's record claim place s? (a live one stops the no-claimant rule) */
#ifdef BUG_IGNORE_PENDING
#define CLAIMS(i, s) (rstate[i] == WAITING && rticket[i] == (s))
#else
#define CLAIMS(i, s) ((rstate[i] == WAITING && rticket[i] == (s)) || \
                      rstate[i] == PENDING)
#endif

/* is a claiming record's slot alive? (the bug trusts every record) */
#ifdef BUG_TRUST_DEAD_RECORDS
#define LIVE_CLAIM(i) 1
#else
#define LIVE_CLAIM(i) ALIVE(i)
#endif

/* crash now (if cond holds): stop forever, locals cleared to keep states few */
#define CRASH_IF(cond) \
    atomic { (cond) && crashes > 0 -> crashes--; dead = dead | BIT; \
             waiting = waiting & ~BIT; dirty = dirty & ~BIT; TOUCH; \
             g_dead = g_dead | (owner == ME); \
             it = 0; t = 0; s = 0; o = 0; i = 0; n0 = 0; tok = 0; \
             dl = 0; d = 0; c = 0 }; \
    goto crashed
/* one step of this process, or its crash instead (the `skip` keeps an
   `else` inside body from being weighed against the crash option) */
#define STEP(body) if :: CRASH_IF(1) :: atomic { skip; body } fi

/* the table entry: the lock word (three fields, one atomic) and the token */
byte next, serving, owner;
byte token;
/* per slot: the record (state, ticket) -- one 64-bit word in the real code */
byte rstate[N], rticket[N];

/* entry meta's left marks (RDLM_META_LEFT): bit t set while ticket t's waiter
   gave its place up before the lock reached it (tickets < 8 here: no aliasing) */
byte left;

/* environment */
byte dead;                          /* bit i: slot i crashed */
byte crashes = CRASHES;
byte deadlines = DEADLINES;
byte waiting;                       /* bit i: process i is in its wait (step 3) */
byte dirty;                         /* bit i: process i may wake and recover */

/* ghosts */
byte cs;                            /* ME of the process in the CS, 0 = none */
byte last_token;
bit  g_dead;                        /* a holder died owning E, not yet reported */
byte finished;                      /* processes that completed their loop */

/*
 * Recovery, one pass (rdlm_ticket_recover). The first step is the load of the
 * word. Own record: WAITING(t), live, so it claims s iff s == t (the real scan
 * reads it too; a releaser or a waiter that gave up runs it with t = NOTICKET,
 * its record FREE); the other slots' records are read one step each. mv: the
 * pass moved the lock. It starts when `guard` holds (a waiter's wake-up, which
 * clears its dirty bit).
 */
inline recover(guard) {
    atomic {
        guard -> dirty = dirty & ~BIT;
        mv = 0; o = owner; s = serving;
        if
        :: !NOBODY(o) -> k = 1                  /* dead-holder candidate */
        :: NOBODY(o) && s != next && s != t ->
            k = 2                               /* no-claimant candidate */
        :: else -> k = 0                        /* nothing to do */
        fi
    }
    if
    :: k == 1 ->
        /* Dead holder: liveness check of o, then
           CAS (s, ., o) -> (s+1, ., DIED); wake s+1 */
#ifndef BUG_NO_LIVENESS_CHECK
        STEP(if :: ALIVE(o - 1) -> k = 0
                :: else -> skip fi);
#endif
        if
        :: k == 1 ->
            STEP(if :: serving == s && owner == o ->
                         serving++; owner = DIED; TOUCH; CHECK_SERVING; mv = 1
                    :: else -> skip fi)
        :: else -> skip
        fi
    :: k == 2 ->
        /* Place with no live claimant: read the other slots' records one by
           one; a claiming record needs a liveness check (another step) */
        i = 0;
        do
        :: i == N -> break
        :: i == _pid -> i++
        :: i < N && i != _pid ->
            STEP(if :: CLAIMS(i, s) -> c = 1
                    :: else -> i++ fi);
            if
            :: c -> STEP(if :: LIVE_CLAIM(i) -> k = 0; i = N  /* wait */
                            :: else -> i++ fi);
                    c = 0
            :: else -> skip
            fi
        od;
        if
        :: k == 2 ->
            /* CAS (s, ., o) -> (s+1, ., o): fails if the claimant claimed */
            STEP(if :: serving == s && owner == o ->
                         serving++; TOUCH; CHECK_SERVING; mv = 1
                    :: else -> skip fi);
            /* then the left mark of s, if any, is spent (rdlm_ticket_unmark) */
            if
            :: mv -> STEP(left = left & ~(1 << s))
            :: else -> skip
            fi
        :: else -> skip
        fi
    :: else -> skip
    fi;
    atomic { s = 0; o = 0; i = 0; c = 0; k = 0 }
}

active [N] proctype P()
{
    byte it, t, s, o, i, n0, tok, sc, ret, k;
    bit dl, d, c, mv, asleep;

    for (it : 1 .. LOOPS) {
        /* Fast path: CAS (n, n, x) -> (n+1, n, me), x nobody; it may also
           fail (a change between its load and its CAS) */
        STEP(if
#ifdef BUG_FAST_IGNORES_QUEUE
             :: NOBODY(owner) ->                /* bug: ignores next != serving */
#else
             :: next == serving && NOBODY(owner) ->
#endif
                 next++; o = owner; owner = ME; TOUCH; TAKEN(o); o = 0;
                 goto hold
             :: true -> skip                    /* busy, or the CAS failed */
             fi);

        /* Slow path. 1. R := PENDING(E) (environment: a deadline?) */
        STEP(if :: deadlines > 0 -> deadlines--; dl = 1
                :: skip fi;
             rstate[_pid] = PENDING; TOUCH);
        /* 2. t := next of fetch_add(word, 1 << 48); R := WAITING(E, t) */
        STEP(t = next; next++; TOUCH);
        STEP(rticket[_pid] = t; rstate[_pid] = WAITING;
             waiting = waiting | BIT; TOUCH);
#if defined(PROMPT) && !defined(BUG_NO_ARRIVAL_LOOK)
        /* 2a. Arrival look (rdlm_ticket_arrived): load the word; if the lock
           was handed to a ticket s != t nobody has claimed, load meta; if s is
           marked left, Recovery until the lock stops moving. (A release whose
           scan found this record PENDING could not pass over s.) */
        STEP(o = owner; s = serving);
        if
        :: NOBODY(o) && s != t ->
            STEP(if :: left & (1 << s) -> ret = R_ARRIVE
                    :: else -> skip fi)
        :: else -> skip
        fi;
        atomic { o = 0; s = 0 };
        if
        :: ret == R_ARRIVE -> goto rec_all
        :: else -> skip
        fi;
#endif
arrived:

        /* 3. wait until serving == t; wake-ups run Recovery */
wait:
        do
        :: atomic { serving == t -> waiting = waiting & ~BIT;
                                    dirty = dirty & ~BIT; asleep = 0; sc = 0 };
            /* 4. claim: CAS (t, ., x) -> (t, ., me), x nobody */
#ifdef BUG_CLAIM_STORE
            /* bug: load the word, then store (n, t, me) with that n */
            STEP(n0 = next; o = owner;
                 if :: serving == t && NOBODY(o) -> c = 1
                    :: else -> n0 = 0; o = 0 fi);
            if
            :: c -> STEP(next = n0; serving = t; owner = ME; TOUCH;
                         TAKEN(o); n0 = 0; o = 0; c = 0);
                    goto claimed
            :: else -> skip
            fi;
#else
            STEP(if :: serving == t && NOBODY(owner) ->
                         o = owner; owner = ME; TOUCH; TAKEN(o); o = 0;
                         goto claimed
                    :: else -> skip fi);
#endif
            /* the claim failed (only after a bug): wait again */
            atomic { waiting = waiting | BIT; dirty = dirty | BIT }
        :: atomic { dl -> waiting = waiting & ~BIT;
                          dirty = dirty & ~BIT; asleep = 0; sc = 0 };
            goto timed_out
#ifdef PROMPT
        /* Awake (spinning, yielding, about to sleep), right behind a served
           ticket nobody has claimed and not looked at yet: Recovery until the
           lock stops moving (once per such ticket) */
        :: atomic { !asleep && NOBODY(owner) && serving + 1 == t &&
                    sc != serving + 1 -> sc = serving + 1; ret = R_LOOK };
            goto rec_all
        /* Sleep: the futex compares the word with the waiter's last look, so
           it sleeps only if that look had nothing to do */
        :: atomic { !asleep && !(NOBODY(owner) && serving + 1 == t &&
                                 sc != serving + 1) -> asleep = 1 }
        /* Asleep, it wakes when the lock reaches t (its bit; the first
           option). A sleep slice ends only for a process's crash: without one,
           nobody may need a slice to progress (no other spurious wake-up) */
        :: recover(asleep && dead != 0 && (dirty & BIT));
            asleep = 0; mv = 0
#else
        :: recover(dirty & BIT); mv = 0
#endif
        :: CRASH_IF(serving == t || dl || (dirty & BIT))
        od;

claimed: /* R := FREE */
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH; t = 0);
hold:   /* token := token + 1: a load, then a store; acquire returns */
        STEP(tok = token + 1);
        STEP(token = tok;
             assert(cs == 0 || !ALIVE(cs - 1));     /* (a) */
             assert(tok > last_token);              /* (b) */
             cs = ME; last_token = tok; tok = 0; dl = 0);
        /* critical section; crashing here leaves a dead holder */
#ifdef BUG_RELEASE_STORE
        /* bug: load the word, then store (n, s+1, 0) with that n */
        STEP(assert(cs == ME); cs = 0;              /* (a) leave the CS */
             assert(owner == ME);                   /* (c) */
             n0 = next; s = serving);
        STEP(next = n0; serving = s + 1; owner = 0; TOUCH; CHECK_SERVING;
             n0 = serving; s = 0);
#else
        /* Release: CAS (s, ., me) -> (s+1, ., 0) */
        STEP(assert(cs == ME); cs = 0;              /* (a) leave the CS */
             assert(owner == ME);                   /* (c) */
             serving++; owner = 0; TOUCH; CHECK_SERVING; n0 = serving);
#endif
#ifndef BUG_RELEASE_IGNORES_LEFT
        /* then (rdlm_ticket_handed) load meta: if the ticket the lock was
           handed to is marked left, Recovery until the lock stops moving */
        STEP(if :: left & (1 << n0) -> ret = R_RELEASE
                :: else -> skip fi; n0 = 0);
        if
        :: ret == R_RELEASE -> t = NOTICKET; goto rec_all
        :: else -> skip
        fi;
#endif
        goto done;

timed_out:  /* Timeout: mark t left; R := FREE; if serving == t and owner
               nobody, pass on, unmark t, and check t + 1's mark (handed) */
#ifdef BUG_MARK_AFTER_FREE
        /* bug: the record is freed first; a recoverer may pass over t and
           clear the mark before it is set -> (g) a mark left behind */
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH);
        STEP(left = left | (1 << t));
#else
        STEP(left = left | (1 << t));
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH);
#endif
#ifdef BUG_TIMEOUT_TAKES
        /* sees serving == t: claims it (step 4's CAS) instead of passing */
        STEP(if :: serving == t && NOBODY(owner) ->
                     o = owner; owner = ME; TOUCH; TAKEN(o); o = 0; c = 1
                :: else -> skip fi);
        if
        :: c -> c = 0; STEP(left = left & ~(1 << t)); t = 0; goto hold
        :: else -> skip
        fi;
#else
        STEP(o = owner);                            /* load the word */
        if
        :: NOBODY(o) ->                             /* CAS (t, ., o) -> (t+1, ., o) */
            STEP(if :: serving == t && owner == o ->
                         serving++; TOUCH; CHECK_SERVING; mv = 1
                    :: else -> skip fi)
        :: else -> skip
        fi;
        if
        :: mv ->
            mv = 0;
            STEP(left = left & ~(1 << t));          /* unmark t */
            STEP(if :: left & (1 << (t + 1)) -> ret = R_TIMEOUT
                    :: else -> skip fi);
            if
            :: ret == R_TIMEOUT -> t = NOTICKET; goto rec_all
            :: else -> skip
            fi
        :: else -> skip
        fi;
#endif
done:
        atomic { t = 0; o = 0; dl = 0; ret = 0 }
    }
    /* (g): without a crash, no left mark outlives its ticket */
    atomic {
        finished++;
        if
#ifndef NO_CHECK_G
        :: finished == N && dead == 0 -> assert(left == 0)
#endif
        :: else -> skip
        fi
    };
    goto crashed;

rec_all: /* Recovery until the lock stops moving (rdlm_ticket_recover_all) */
    do
    :: recover(true);
        if
        :: mv -> skip
        :: else -> break
        fi
    od;
    mv = 0;
    if
    :: ret == R_LOOK -> ret = 0; goto wait
    :: ret == R_ARRIVE -> ret = 0; goto arrived
    :: ret == R_RELEASE || ret == R_TIMEOUT -> goto done
    fi;
crashed:
    skip
}
