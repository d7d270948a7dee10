/*
 * mutex_word.pml -- spin model of the bounded-bypass on-node lock
 * (core/local/mutex.c, the default on-node lock; the ticket lock of
 * lock_word.pml stays the explicit FIFO choice). One lock; N processes each
 * acquire and release it LOOPS times. Step names (A1-A3, R1, H1, D1, D2) are
 * the protocol's (README.md, "mutex_word.pml").
 *
 * The lock word. The real word is one 64-bit atomic: heir(32) | owner(32).
 * Here it is two bytes, `owner` and `heir`, and every access to it is ONE step
 * that reads and/or writes both (a load or a CAS). owner: 0 = nobody, DIED =
 * nobody and the last holder died, else slot + 1; heir: 0 or the id of the one
 * waiter entitled to take the lock next. The futex word of the sleepers is the
 * OWNER half only. Separate words: `parked` (sleepers, ++ before the futex
 * sleep and -- after, seq_cst), `mutex_woken` (a count, WAKE_COUNT below: 1 while
 * a woken waiter is on its way, plus 1 per release that skipped its wake
 * meanwhile), `token` (written by the holder only).
 *
 *   A1 take:        (o nobody, 0) -> (me, 0); OWNER_DEAD if o was DIED
 *   A2 heir claims: (o nobody, me) -> (me, 0); OWNER_DEAD likewise
 *   A3 become heir: (x, 0) -> (x, me), x a holder (the waiter is starving)
 *   R1 release:     (me, h) -> (0, h); if h: wake h; else if parked and
 *                   fetch_add(mutex_woken, 1) == 0: wake one sleeper (WAKE_COUNT)
 *   H1 heir gives up (deadline): (x, me) -> (x, 0); if x nobody: wake as R1
 *   timeout of a non-heir: leave; if owner nobody: wake as R1
 *   D1 dead holder: (o dead, h) -> (DIED, h)
 *   D2 dead heir:   (x, h dead) -> (x, 0); if x nobody: wake as R1
 *
 * Sleeping (the futex, modelled faithfully): parked++ (one step); then
 * FUTEX_WAIT(owner half, seen) as one step: if owner == seen the process is
 * in the kernel's queue (bit in `asleep`), else it returns at once. A wake
 * removes sleepers from `asleep`: "wake h" removes h if it is there, "wake
 * one" removes any one (none if the queue is empty: the waker's `c` says so).
 * A process between parked++ and the compare is NOT in the queue: a wake then
 * finds nobody. On return: parked--, mutex_woken := 0 (two steps), retry.
 *
 * Slices. The real sleep ends after a slice (20 ms) whether woken or not. The
 * model lets a sleep end without a wake only in these cases, so that a wake
 * the protocol owes a live process and does not deliver is a hang (invalid
 * end state) that spin reports:
 *   - the process has a deadline (its last slice ends at the deadline);
 *   - SPURIOUS times per run (0 by default), anyone, anywhere;
 *   - the word names a dead process (dead holder, dead heir) and changed
 *     since this process last read it (`dirty`): the slice is how waiters find
 *     dead holders and heirs (D1, D2), once per change;
 *   - a crash left a wake undelivered: the dead process owed it (it changed
 *     the word and died before its wake, `owe`) or had received a wake and
 *     not used it (`wk`): one sleeper's slice (the heir's, for a wake owed to
 *     the heir) ends, and that sleeper counts as woken (its crash passes it on).
 * Every other wake-up must come from a FUTEX_WAKE.
 *
 * Environment:
 *   crash    instead of any step (CRASHES per run, 1 by default), also while
 *            asleep (the kernel drops it from the queue; `parked` keeps it),
 *            while holder, heir, or woken but not yet run.
 *   deadline DEADLINES acquires of the run (1) carry one; such a waiter may
 *            give up at any check (H1 if it is the heir, else timeout), and
 *            a sleep of it that ends without a wake is its last (the
 *            deadline passed): it retries the lock once, then gives up.
 *   starving at most once per acquire a waiter that sees (holder, 0) may A3.
 * A waiter that reads a word naming a dead process runs the check (D1 / D2)
 * before anything else (the real code does at its next CHECK).
 * Interleaving is sequentially consistent (seq_cst CASes, parked, mutex_woken).
 *
 * Atomicity: one STEP = one access to one shared location, plus ghosts.
 *   - A load of the word followed by a CAS expecting what it loaded is one
 *     step (a failed CAS re-reads: the same as reading at the CAS).
 *   - R1's CAS loop (h may change meanwhile) is one step reading h.
 *   - D1 / D2: the liveness check and the CAS are one step (a dead process
 *     stays dead, and only it could change its owner / heir field).
 *   - token := token + 1 is a load and a store (two steps).
 *
 * The changes in the model (default; -DPROPOSED_x reverts one, -DPROPOSED
 * all three, which is the protocol as first proposed):
 *   NOBODY_SLEEP  a waiter that sees (nobody, other heir) does not futex-sleep
 *       (the heir is on its way; the word's owner half will not change when
 *       the heir gives up or dies): it yields and re-reads (modelled as
 *       "blocked until the word changes").  -DPROPOSED_NOBODY_SLEEP: it
 *       sleeps on owner == nobody, and H1 / D2 / a timeout waking it before
 *       its compare leave it asleep on a free lock.
 *   D1_WAKE  after D1, wake as R1 (the dead holder's release).
 *       -DPROPOSED_D1_WAKE: D1 wakes nobody; a sleeping heir stays asleep.
 *   WOKEN_RESET  a waker whose FUTEX_WAKE woke nobody takes its 1 back from
 *       mutex_woken.  -DPROPOSED_WOKEN_RESET: mutex_woken stays up with nobody on the
 *       way, and every later release skips its wake. The reset alone is not
 *       enough (BUG_WAKE_COUNT_STORE): a release that found mutex_woken != 0
 *       before the reset skipped its wake. WAKE_COUNT (mutex.c since 8ea264c):
 *       the skipping release counts itself (fetch_add), the waker resets by
 *       exchange and goes round again only if it returned more than 1:
 *         if parked == 0 or fetch_add(mutex_woken, 1) != 0: return
 *         while FUTEX_WAKE(one) woke nobody:
 *             if exchange(mutex_woken, 0) <= 1 or parked == 0
 *                or fetch_add(mutex_woken, 1) != 0: return
 *       -DWAKE_RECHECK: the loop before it (mutex_woken a flag; after the reset
 *       re-read the word, go round again while it is (nobody, 0)): a process
 *       that dies between parked++ and parked-- makes it spin on a free lock
 *       for ever (non-progress cycle, pan -l -f). -DWAKE_TRIES=k: that loop
 *       stopped after k rounds (mutex.c: 16): loses a wake.
 *       -DCHECK_ROUNDS asserts that the count loop ends (ghosts g_loop, g_ent).
 *       Flaw (4 processes, -DN=4 -DLOOPS0=1): a waiter whose compare failed
 *       stores mutex_woken := 0 over a skipped release's count and dies before its
 *       take; the waker's exchange returns 0 and it stops: a sleeper on a
 *       free lock. -DFIX_ERASED (proposed): an exchange that returns 0 (my 1
 *       erased) re-reads the word and goes round again if it is (nobody, 0).
 *
 * Properties:
 *   (a) at most one LIVE process between acquire's return and its release;
 *   (b) holders enter with strictly increasing tokens;
 *   (c) a live holder still owns the word when it releases;
 *   (d) no invalid end state: every live process without a deadline
 *       completes its LOOPS acquires (no lost wake-up, no hang);
 *   (e) OWNER_DEAD (A1 / A2 replaced DIED) goes to the first holder after a
 *       holder died owning the lock, and to no other;
 *   (f) bounded bypass: while a live process is heir (ghost g_heir: from its
 *       A3 until its A2 or H1), no other process acquires the lock.
 *   (g) the wake loop ends (WAKE_COUNT): -DCHECK_ROUNDS asserts that each
 *       round after a waker's first needs another process's wake_next call
 *       (or the last fetch_add of another waker) in between; and with the
 *       progress labels (progress_hold, progress_done) compiled -DNP, pan -l
 *       finds no cycle without an acquire or release (none even unfair).
 *
 * Second round (README.md, "The spin phase, reservation passing"):
 *   -DSPINNERS  S1 a waiter in its spin phase reserves (x, 0) -> (x, me); S2 at
 *       its last spin (CHECK, mutex_woken := 0) unreserves (x, me) -> (x, 0) while x
 *       is not nobody.
 *   -DPASSING   the bound takes a STARVING ticket (rec[]) and, only if it is the
 *       oldest live one, reserves (A3); P1 a holder that was
 *       starving passes (me, 0) -> (me, oldest live ticket holder); D2' drops
 *       a heir that is alive with no WAITING record (wt). -DPROPOSED_STALE_HEIR:
 *       without D2' (mutex.c before it): a pass to a waiter that left stalls.
 *   -DWAKE_TRIES=k  the old wake loop stops after k rounds (16): stalls.
 *   leave: record := 0 with H1, then mutex_woken := 0, then the load (as mutex.c).
 *   BUG_UNRESERVE_FREE (S2 also on (nobody, me)) -> (d);
 *   BUG_PASS_WHEN_HEIR (P1 overwrites a heir) -> (f) while any starving waiter
 *       reserved at the bound; since only the oldest does, no error with LOOPS0=1
 *       (a complete search) and no verdict in 2 GB without it.
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_BARGE_PAST_HEIR  A1 ignores the heir: (nobody, h) -> (me, h) -> (f).
 *   BUG_WAKE_BEFORE_STORE  release reads parked before its CAS and wakes only
 *       if that read was non-zero -> (d).
 *   BUG_HEIR_NO_WAKE_ON_GIVEUP  H1 never wakes -> (d).
 *   BUG_NO_DEAD_HEIR  no D2: the lock stays reserved for a dead heir -> (d).
 *   BUG_RELEASE_STORE  release loads the word, then stores (0, 0): an heir
 *       set in between is lost -> (f).
 *   BUG_WOKEN_NOT_CLEARED  a returning sleeper never resets mutex_woken -> (d).
 *   BUG_WAKE_COUNT_STORE  the waker whose wake found nobody stores mutex_woken := 0
 *       (instead of the exchange) and stops: a release counted meanwhile loses
 *       its wake -> (d).
 */

#ifndef N
#define N 3
#endif
#ifndef LOOPS
#define LOOPS 1                     /* acquires of processes 1 .. N-1 */
#endif
#ifndef LOOPS0
#define LOOPS0 2                    /* acquires of process 0 */
#endif
#ifndef DEADLINES
#define DEADLINES 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef SPURIOUS
#define SPURIOUS 0
#endif
#ifndef HEIRS
#define HEIRS 2
#endif
#ifndef SPINS
#define SPINS 1                     /* acquires with a spin phase (SPINNERS) */
#endif
#ifndef WAKE_TRIES
#define WAKE_TRIES 0                /* > 0: the old loop, k rounds (mutex.c before 8ea264c: 16) */
#endif

#ifdef PROPOSED
#define PROPOSED_NOBODY_SLEEP
#define PROPOSED_D1_WAKE
#define PROPOSED_WOKEN_RESET
#endif

#define DIED      255               /* owner: nobody, last holder died */
#define NOBODY(o) ((o) == 0 || (o) == DIED)
#define ME        (_pid + 1)        /* owner / heir value: slot index + 1 */
#define BIT       (1 << _pid)
#define ALIVE(i)  ((dead & (1 << (i))) == 0)
/* does owner / heir value x name a dead process? */
#define DEADID(x) ((x) != 0 && (x) != DIED && !ALIVE((x) - 1))
#define ANY       7                 /* owe: a wake-one (R1's second branch) */
#define TOUCH     dirty = acq       /* the word changed: a waiter may look */
/* after the take: WAITING record := 0 (mutex.c rdlm_mutex_wait, after the loop) */
#ifdef PASSING
#define CLEAR_REC rec[_pid] = 0; wt = wt & ~BIT
#else
#define CLEAR_REC skip
#endif
/* STALE_HEIR: heir value x names a live process with no WAITING record on the
   lock (a reservation passed to a waiter that had left): recovery drops it as
   a dead heir's (D2) */
#if defined(PASSING) && !defined(PROPOSED_STALE_HEIR)
#define STALE(x)  ((x) != 0 && (x) != DIED && ALIVE((x) - 1) && !(wt & (1 << ((x) - 1))))
#else
#define STALE(x)  0
#endif

/* A1 / A2 replaced owner value x: OWNER_DEAD iff x == DIED (e) */
#define TAKEN(x)  d = ((x) == DIED); assert(d == g_dead); g_dead = 0; d = 0
/* (f): nobody but a live heir's own acquire while it is heir */
#define BYPASS    assert(g_heir == 0 || g_heir == ME || !ALIVE(g_heir - 1))

/* crash now (if cond holds): stop forever; an undelivered wake (owed, or
   received and unused: wk, or woken in the queue, c) lets one sleeper's
   slice end; locals cleared */
#define CRASH_IF(cond) \
    atomic { (cond) && crashes > 0 -> crashes--; dead = dead | BIT; \
             g_dead = g_dead | (owner == ME); acq = acq & ~BIT; \
             if :: owe == ANY || wk || (c && !(asleep & BIT)) -> g_any = 1 \
                :: owe > 0 && owe <= N -> g_owed = g_owed | (1 << (owe - 1)) \
                :: else -> skip fi; \
             asleep = asleep & ~BIT; TOUCH; CRASH_GHOST; \
             it = 0; o = 0; h = 0; tok = 0; owe = 0; \
             dl = 0; ex = 0; st = 0; wk = 0; d = 0; c = 0; \
             sp = 0; sr = 0; n = 0 }; \
    goto crashed
/* one step of this process, or its crash instead (`skip`: see lock_word.pml,
   the else pitfall) */
#define STEP(body) if :: CRASH_IF(1) :: atomic { skip; body } fi

/* the lock word (two fields, one atomic), the sleepers' words, the token */
byte owner, heir;
byte parked;
byte mutex_woken;                   /* mutex_woken: count (WAKE_COUNT) */
byte token;
byte asleep;                        /* bit i: process i is in the futex queue */

/* environment */
byte dead;                          /* bit i: process i crashed */
byte crashes = CRASHES;
byte deadlines = DEADLINES;
byte spurious = SPURIOUS;
byte heirs = HEIRS;                 /* A3 attempts left in the run */
byte acq;                           /* bit i: process i is in an acquire */
byte dirty;                         /* bit i: word changed since i's last read */
bit  g_any;                         /* one sleeper's slice may end (a crash) */
byte g_owed;                        /* bit i: heir i's slice may end (a crash) */
#ifdef SPINNERS
byte spins = SPINS;                 /* acquires left that start with a spin phase */
#endif
#ifdef PASSING
byte rec[N];                        /* STARVING ticket in i's WAITING record, or 0 */
byte tickets;                       /* the per-lock STARVING counter (mutex_starving) */
byte wt;                            /* bit i: i has a WAITING record on the lock */
#endif

/* ghosts */
byte cs;                            /* ME of the process in the CS, 0 = none */
byte last_token;
bit  g_dead;                        /* a holder died owning the lock */
byte g_heir;                        /* the heir, from its A3 to its A2 / H1 */

/* may a sleeper's sleep end without a wake? (see "Slices") */
#define SLICE (dl || spurious > 0 || g_any || (g_owed & BIT) || \
               ((DEADID(owner) || DEADID(heir) || STALE(heir)) && (dirty & BIT)))

/* FUTEX_WAKE(owner half, 1): one sleeper in the queue; c := none was there */
inline futex_wake_one() {
    if
    :: asleep & 1 -> asleep = asleep & ~1
    :: asleep & 2 -> asleep = asleep & ~2
    :: asleep & 4 -> asleep = asleep & ~4
#if N > 3
    :: asleep & 8 -> asleep = asleep & ~8
#endif
    :: asleep == 0 -> c = 1
    fi
}

#ifdef CHECK_ROUNDS
/* (2) the count loop ends: a waker goes round again only if, since its
   previous round began, another process entered wake_next (a release, D1, D2
   or a leave) or another waker's last fetch_add (the one that stops it) came
   in between; wakers start only by entering, so a run (finitely many entries)
   has finitely many rounds. g_loop: bit i, i is in the loop (its fetch_add
   returned 0); g_ent: bit i, such an event since i's last round began. */
byte g_loop, g_ent;
#define ENTERED   g_ent = g_ent | (g_loop & ~BIT)
#define LOOP_IN   g_loop = g_loop | BIT; g_ent = g_ent & ~BIT
#define ROUND     assert(g_ent & BIT); g_ent = g_ent & ~BIT
#define LOOP_OUT  g_loop = g_loop & ~BIT; g_ent = g_ent & ~BIT
#define CRASH_GHOST LOOP_OUT
#ifdef FIX_ERASED
/* with FIX_ERASED a round may also follow a reset by another process */
#define ERASED    ENTERED
#else
#define ERASED    skip
#endif
#else
#define ERASED    skip
#define CRASH_GHOST skip
#define ENTERED   skip
#define LOOP_IN   skip
#define ROUND     skip
#define LOOP_OUT  skip
#endif

#if defined(WAKE_RECHECK) || WAKE_TRIES > 0
/* The wake loop before 8ea264c (mutex_woken used as a flag): if parked != 0 and
   exchange(mutex_woken, 1) == 0, wake one sleeper; if that wake found nobody,
   mutex_woken := 0, and go round again while the word is (nobody, 0) (a waker that
   found mutex_woken == 1 meanwhile skipped its wake, relying on this); at most
   WAKE_TRIES rounds (mutex.c: 16), none with WAKE_RECHECK alone. */
inline wake_next() {
    do
    :: STEP(if :: parked == 0 -> owe = 0 :: else -> skip fi);
        if
        :: owe -> STEP(if :: mutex_woken -> owe = 0 :: else -> mutex_woken = 1 fi)
        :: else -> skip
        fi;
        if
        :: owe -> STEP(c = 0; futex_wake_one();
                       if :: c -> skip :: else -> owe = 0 fi)
        :: else -> skip
        fi;
#ifdef PROPOSED_WOKEN_RESET
        atomic { c = 0; owe = 0 }               /* mutex_woken stays 1 */
#else
        if
        :: c -> STEP(mutex_woken = 0; c = 0);        /* the wake found nobody */
#ifdef BUG_WAKE_COUNT_STORE
                owe = 0
#else
                STEP(if :: NOBODY(owner) && heir == 0 -> skip
                        :: else -> owe = 0 fi)
#endif
        :: else -> skip
        fi;
#endif
#if WAKE_TRIES > 0
        if :: owe && n + 1 < WAKE_TRIES -> n++
           :: owe && n + 1 >= WAKE_TRIES -> owe = 0; break   /* 16 tries: stop */
           :: !owe -> break
        fi
#else
        if :: owe -> skip :: else -> break fi
#endif
    od;
    n = 0
}
#else
/* R1's second branch, with owe == ANY (rdlm_mutex_wake_next, WAKE_COUNT):
   mutex_woken = 1 while a woken waiter is on its way, plus one per release that
   skipped its wake meanwhile.
     if parked == 0 or fetch_add(mutex_woken, 1) != 0: return
     while FUTEX_WAKE(one) woke nobody:
         if exchange(mutex_woken, 0) <= 1 or parked == 0
            or fetch_add(mutex_woken, 1) != 0: return
   Each load / fetch_add / exchange / wake is one step. */
inline wake_next() {
    STEP(if :: parked == 0 -> owe = 0 :: else -> skip fi);
    if
    :: owe -> STEP(if :: mutex_woken -> owe = 0 :: else -> LOOP_IN fi;
                   mutex_woken++; ENTERED)
    :: else -> skip
    fi;
    do
    :: owe ->
        STEP(c = 0; futex_wake_one();
             if :: c -> skip :: else -> owe = 0 fi);
        if
        :: owe ->
            /* the wake found nobody */
#if defined(PROPOSED_WOKEN_RESET)
            atomic { owe = 0 }                  /* mutex_woken stays up */
#elif defined(BUG_WAKE_COUNT_STORE)
            STEP(mutex_woken = 0; owe = 0)           /* bug: store 0, stop */
#else
#ifdef FIX_ERASED
            /* 0: a runner's mutex_woken := 0 erased my count (it took the skipped
               wakes over, and may die before it looks): look at the word */
            STEP(if :: mutex_woken == 1 -> owe = 0 :: else -> d = (mutex_woken == 0) fi;
                 mutex_woken = 0; ERASED);
            if
            :: d -> STEP(d = 0; if :: NOBODY(owner) && heir == 0 -> skip
                                   :: else -> owe = 0 fi)
            :: else -> skip
            fi;
#else
            STEP(if :: mutex_woken <= 1 -> owe = 0 :: else -> skip fi; mutex_woken = 0);
#endif
            if
            :: owe -> STEP(if :: parked == 0 -> owe = 0 :: else -> skip fi)
            :: else -> skip
            fi;
            if
            :: owe -> STEP(if :: mutex_woken -> owe = 0; ENTERED :: else -> ROUND fi;
                           mutex_woken++)
            :: else -> skip
            fi
#endif
        :: else -> skip
        fi
    :: else -> break
    od;
    atomic { c = 0; LOOP_OUT }
}
#endif

#ifdef PASSING
/* rdlm_rec_oldest_starving: r := ME of the live process with the oldest STARVING
   record, 0 if none (tok is free here: a temporary) */
inline oldest(r) {
    r = 0; tok = 0;
    if :: rec[0] != 0 && ALIVE(0) -> r = 1; tok = rec[0] :: else -> skip fi;
    if :: rec[1] != 0 && ALIVE(1) && (r == 0 || rec[1] < tok) -> r = 2; tok = rec[1]
       :: else -> skip fi;
    if :: rec[2] != 0 && ALIVE(2) && (r == 0 || rec[2] < tok) -> r = 3; tok = rec[2]
       :: else -> skip fi;
#if N > 3
    if :: rec[3] != 0 && ALIVE(3) && (r == 0 || rec[3] < tok) -> r = 4; tok = rec[3]
       :: else -> skip fi;
#endif
    tok = 0
}
#endif

/* R1's wake after the word became (nobody, h): h is on its way, or one */
inline wake_as_release() {
    if
    :: h != 0 -> STEP(asleep = asleep & ~(1 << (h - 1)); owe = 0)
    :: else -> wake_next()
    fi
}

active [N] proctype P()
{
    byte it, o, h, tok, owe, n;
    bit dl, ex, st, wk, d, c, sp, sr;

    for (it : 1 .. (_pid == 0 -> LOOPS0 : LOOPS)) {
        atomic { if :: deadlines > 0 -> deadlines--; dl = 1
                    :: skip fi; st = 0; acq = acq | BIT;
#ifdef SPINNERS
                 if :: spins > 0 -> spins--; sp = 1 :: skip fi;
#endif
#ifdef PASSING
                 wt = wt | BIT;
#endif
                 skip
               }
retry:
        /* load the word; A1 / A2 by CAS if it is free for me */
        STEP(dirty = dirty & ~BIT;
             if
#ifdef BUG_BARGE_PAST_HEIR
             :: NOBODY(owner) && heir != ME ->
#else
             :: NOBODY(owner) && heir == 0 ->
#endif
                 BYPASS; TAKEN(owner); owner = ME; TOUCH; CLEAR_REC; goto hold
             :: NOBODY(owner) && heir == ME ->
                 BYPASS; TAKEN(owner); owner = ME; heir = 0; g_heir = 0;
                 TOUCH; CLEAR_REC; goto hold
             :: else -> o = owner; h = heir
             fi);
        /* a check (after a spin phase or a slice) */
        if
        :: DEADID(o) ->
            /* D1: (o dead, h) -> (DIED, h) */
            STEP(if :: owner == o -> owner = DIED; h = heir; TOUCH;
#ifndef PROPOSED_D1_WAKE
                                     owe = (h -> h : ANY)
#endif
                    :: else -> h = 0 fi);
#ifndef PROPOSED_D1_WAKE
            if :: owe -> wake_as_release() :: else -> skip fi;
#endif
            atomic { o = 0; h = 0 }
        :: !DEADID(o) && (DEADID(h) || STALE(h)) ->
#ifdef BUG_NO_DEAD_HEIR
            goto wait;
#else
            /* D2: (x, h dead) -> (x, 0); if x nobody, wake as R1 */
            STEP(if :: heir == h && (DEADID(h) || STALE(h)) ->
                        heir = 0; o = owner; TOUCH;
                        if :: g_heir == h && ALIVE(h - 1) -> g_heir = 0
                           :: else -> skip fi;
                        owe = (NOBODY(o) -> ANY : 0)
                    :: else -> skip fi);
            if :: owe -> h = 0; wake_next() :: else -> skip fi;
            atomic { o = 0; h = 0 }
#endif
        :: else -> goto wait
        fi;
        goto retry;

wait:   /* not free for me: spin, starve (A3), give up, or sleep */
        if
#ifdef PASSING
#ifdef BOUND_IN_YIELD
        :: !ex && !st && heirs > 0 && (!sp || NOBODY(o)) ->
#else
        :: !ex && !st && heirs > 0 && !sp && !NOBODY(o) ->
#endif
            /* the bound (rdlm_mutex_at_bound, from a wait step's TIMEDOUT or a
               yield): a STARVING ticket in the WAITING record (fetch_add, store:
               one step), then A3 if the lock is held and not reserved and this is
               the oldest live STARVING ticket (rdlm_mutex_oldest_is_me) */
            STEP(st = 1; heirs--; sp = 0; tickets++; rec[_pid] = tickets);
            /* only the oldest live waiter past the bound reserves (h: a temporary
               here, read again at retry) */
            STEP(oldest(h));
            STEP(if :: !NOBODY(owner) && heir == 0 && (h == 0 || h == ME) ->
                         assert(g_heir == 0 || !ALIVE(g_heir - 1));
                         heir = ME; g_heir = ME; TOUCH
                    :: else -> skip fi;
                 h = 0);
            goto retry
#else
        :: !ex && !st && heirs > 0 && !sp && !NOBODY(o) && h == 0 ->
            /* A3: (x, 0) -> (x, me), x a holder */
            STEP(st = 1; heirs--;
                 if :: !NOBODY(owner) && heir == 0 ->
                         assert(g_heir == 0 || !ALIVE(g_heir - 1));
                         heir = ME; g_heir = ME; TOUCH
                    :: else -> skip fi);
            goto retry
#endif
        /* the deadline: checked by a yield or a wait step past the spin phase */
        :: dl && (!sp || NOBODY(o)) -> goto giveup
#ifdef SPINNERS
        :: !ex && sp && !NOBODY(o) ->
            /* spin phase (w.spins < policy.spin): no deadline, no sleep */
            if
            :: !sr && h == 0 ->
                /* S1 spinner reserves: (x, 0) -> (x, me), x a holder */
                STEP(if :: !NOBODY(owner) && heir == 0 ->
                             assert(g_heir == 0 || !ALIVE(g_heir - 1));
                             heir = ME; g_heir = ME; sr = 1; TOUCH
                        :: else -> skip fi)
            :: atomic { dirty & BIT -> skip }       /* spin until the word changes */
            :: /* the last spin (CHECK): mutex_woken := 0; S2 unreserve while held */
                STEP(mutex_woken = 0; ERASED; sp = 0);
                if
                :: sr ->
#ifndef BUG_SPIN_RESERVE_KEPT
                    STEP(sr = 0;
#ifdef BUG_UNRESERVE_FREE
                         if :: heir == ME ->
#else
                         if :: heir == ME && !NOBODY(owner) ->
#endif
                                 heir = 0; g_heir = 0; TOUCH
                            :: else -> skip fi)
#else
                    sr = 0
#endif
                :: else -> skip
                fi
            :: CRASH_IF(1)
            fi;
            goto retry
#endif
#ifndef PROPOSED_NOBODY_SLEEP
        :: !ex && NOBODY(o) ->
            /* (nobody, other heir): yield until the word changes */
            if
            :: atomic { dirty & BIT -> wk = 0 }
            :: dl -> goto giveup
            :: CRASH_IF(1)
            fi;
            goto retry
        :: !ex && !sp && !NOBODY(o) ->
#else
        :: !ex && (!sp || NOBODY(o)) ->
#endif
            /* parked++; FUTEX_WAIT(owner half, o) */
            STEP(parked++; wk = 0);
            STEP(if :: owner == o -> asleep = asleep | BIT; c = 1
                    :: else -> skip fi);
            if
            :: c ->
                if
                :: atomic { !(asleep & BIT) -> wk = 1; c = 0 }   /* woken */
                :: atomic { (asleep & BIT) && SLICE ->           /* slice */
                       asleep = asleep & ~BIT; c = 0; ex = dl;
                       if
                       :: g_owed & BIT -> g_owed = g_owed & ~BIT; wk = 1
                       :: else ->
                           if
                           :: dl || DEADID(owner) || DEADID(heir) -> skip
                           :: else ->
                               if :: g_any -> g_any = 0; wk = 1 /* it has it */
                                  :: else -> spurious-- fi
                           fi
                       fi }
                :: CRASH_IF(1)
                fi
            :: else -> skip
            fi;
            STEP(parked--);
#ifndef BUG_WOKEN_NOT_CLEARED
            STEP(mutex_woken = 0; ERASED);
#endif
            atomic { o = 0; h = 0 }
            goto retry
        fi;

hold:
progress_hold:      /* (NP: pan -l, see README) */
#ifdef PASSING
        /* P1 a holder that had waited past the bound passes the reservation to
           the live waiter with the oldest STARVING ticket: (me, 0) -> (me, w) */
        if
        :: st ->
            STEP(oldest(h));
            if
            :: h ->
#ifdef BUG_PASS_WHEN_HEIR
                STEP(if :: owner == ME ->
#else
                STEP(if :: owner == ME && heir == 0 ->
#endif
                             heir = h; TOUCH;
                             if :: g_heir == 0 || !ALIVE(g_heir - 1) -> g_heir = h
                                :: else -> skip fi       /* (bug: overwritten) */
                        :: else -> h = 0 fi)
            :: else -> skip
            fi;
            h = 0
        :: else -> skip
        fi;
#endif
        /* token := token + 1: a load, then a store; acquire returns */
        STEP(tok = token + 1; wk = 0; acq = acq & ~BIT; dirty = dirty & ~BIT;
#ifndef SPLIT_TOKEN
             token = tok;
             assert(cs == 0 || !ALIVE(cs - 1));     /* (a) */
             assert(tok > last_token);              /* (b) */
             cs = ME; last_token = tok; tok = 0; dl = 0; o = 0; h = 0);
#else
             skip);
        STEP(token = tok;
             assert(cs == 0 || !ALIVE(cs - 1));     /* (a) */
             assert(tok > last_token);              /* (b) */
             cs = ME; last_token = tok; tok = 0; dl = 0; o = 0; h = 0);
#endif
        /* critical section; crashing here leaves a dead holder */
#ifdef BUG_WAKE_BEFORE_STORE
        /* bug: read parked first; wake only if that read saw sleepers */
        STEP(c = (parked != 0));
        STEP(assert(cs == ME); cs = 0; assert(owner == ME);
             owner = 0; h = heir; TOUCH; owe = (h -> h : ANY));
        if
        :: h != 0 -> STEP(asleep = asleep & ~(1 << (h - 1)); owe = 0)
        :: h == 0 && c -> c = 0; wake_next()
        :: else -> owe = 0
        fi;
#else
#ifdef BUG_RELEASE_STORE
        /* bug: load the word, then store (0, 0) */
        STEP(assert(cs == ME); cs = 0; assert(owner == ME); h = heir);
        STEP(owner = 0; heir = 0; TOUCH; owe = (h -> h : ANY));
#else
        /* R1: (me, h) -> (0, h) */
        STEP(assert(cs == ME); cs = 0;              /* (a) leave the CS */
             assert(owner == ME);                   /* (c) */
             owner = 0; h = heir; TOUCH; owe = (h -> h : ANY));
#endif
        wake_as_release();
#endif
        goto done;

giveup: /* rdlm_mutex_leave: (WAITING record := 0;) H1 (x, me) -> (x, 0) if
           I am the heir; mutex_woken := 0; load the word: if the owner is nobody,
           wake as R1 (H1: the release may have woken only me; timeout: I may
           have consumed a wake) */
        /* (the record's clear and H1 are one step here: between them only a
           recoverer could drop the same reservation H1 drops) */
        STEP(
#ifdef PASSING
             rec[_pid] = 0; wt = wt & ~BIT;
#endif
             if :: heir == ME -> heir = 0; g_heir = 0; TOUCH; c = 1
                :: else -> skip fi);
        STEP(mutex_woken = 0; ERASED);
        STEP(o = owner; owe = (NOBODY(o) -> ANY : 0));
#ifdef BUG_HEIR_NO_WAKE_ON_GIVEUP
        if :: c -> owe = 0 :: else -> skip fi;      /* bug: H1 never wakes */
#endif
        atomic { c = 0; acq = acq & ~BIT; dirty = dirty & ~BIT }
        if :: owe -> h = 0; wake_next() :: else -> skip fi;
done:
progress_done:
        atomic { o = 0; h = 0; dl = 0; ex = 0; wk = 0; owe = 0; sp = 0; sr = 0 }
    }
crashed:
    skip
}
