/*
 * ticket_lock.pml -- spin model of the on-node exclusive lock as the two-word
 * revision of docs/local-locks.md described it ("Exclusive lock: a ticket lock
 * with per-ticket wake-up and recovery": separate next, serving, owner, token
 * and died). Step names below (1..4, Release, Timeout, Recovery) are that
 * text's. One lock E; N processes each acquire and release it LOOPS times.
 *
 * Environment (nondeterministic, explored exhaustively):
 *   crash    Instead of any step, a process may crash (CRASHES per run). It
 *            then never moves again, and its slot stops being alive (what the
 *            doc's liveness check reads); its record, owner word and ticket
 *            stay as they were. A blocked waiter cannot crash, but nobody can
 *            tell it from one that crashes when it next wakes: its record
 *            claims no place until serving == t, which wakes it.
 *   timeout  DEADLINES acquires of the whole run carry a deadline (chosen at
 *            step 1); such a waiter may give up at any point of its wait.
 *            The others wait forever, so "nobody can move" is a real hang.
 *   wake-up  The futex wait is "block until serving == t, or wake up (maybe
 *            spuriously) and run Recovery". A waiter may wake whenever shared
 *            state changed since its last Recovery pass (its bit in `dirty`):
 *            a pass over unchanged state repeats the previous one, so no
 *            behaviour is lost, and a waiter that nothing can help blocks.
 *   Bitsets, spin/yield/slices and `parked` are not modelled. Interleaving is
 *   sequentially consistent, as the doc's seq_cst points intend.
 *
 * Atomicity: one STEP = one access to one shared word (plus ghost updates).
 * A few reads are merged into one step. Since serving only grows, a CAS on it
 * fails whenever serving moved after it was read, so reading it a little
 * later or earlier changes nothing -- unless serving moves while a live
 * process owns the lock, which (a)/(c) flag on their own.
 *
 * Properties:
 *   (a) mutual exclusion: at most one LIVE process between acquire's return
 *       and its call to release (ghost `cs`; a crashed holder counts as gone);
 *   (b) fencing: holders enter with strictly increasing tokens (`last_token`);
 *   (c) a live holder still owns the lock when it releases (no theft);
 *   (d) serving never passes next (no place is skipped that was not issued);
 *   (e) all counters are bounded, so every run ends, and spin's invalid-end-
 *       state check says: every live process without a deadline completes
 *       its loop.
 *   CHECK_OWNER_DEAD adds (f): the first holder after a holder that died
 *       owning the lock gets OWNER_DEAD, and no other holder does.
 *
 * Planted bugs (-DBUG_...) and FIX_DIED_MARK: see README.md.
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

#define FREE    0
#define PENDING 1
#define WAITING 2

#define ME        (_pid + 1)        /* owner word: slot index + 1, never 0 */
#define BIT       (1 << _pid)
#define ALIVE(i)  ((dead & (1 << (i))) == 0)   /* the doc's liveness check */
#define TOUCH     dirty = waiting   /* a shared write: every waiter may wake */

#ifdef FIX_DIED_MARK
#define MARK      255               /* owner value "taken from a dead owner" */
#define UNOWNED(o) ((o) == 0 || (o) == MARK)
#else
#define MARK      0
#define UNOWNED(o) ((o) == 0)
#endif

/* step 4's exchanges; (f) */
#ifdef FIX_DIED_MARK
#define TAKE_OWNER d = (owner == MARK); owner = ME  /* exchange(owner, me) */
#define TAKE_DIED  skip
#else
#define TAKE_OWNER owner = ME
#define TAKE_DIED  d = died; died = 0               /* exchange(died, 0) */
#endif
#ifdef CHECK_OWNER_DEAD
#define CHECK_DIED assert(d == g_dead); g_dead = 0  /* (f) */
#else
#define CHECK_DIED skip
#endif

/* does slot i's record claim place s? (a live one stops the no-claimant rule) */
#ifdef BUG_IGNORE_PENDING
#define CLAIMS(i, s) (rstate[i] == WAITING && rticket[i] == (s))
#else
#define CLAIMS(i, s) ((rstate[i] == WAITING && rticket[i] == (s)) || \
                      rstate[i] == PENDING)
#endif

/* is a claiming record's owner alive? (the bug trusts every record) */
#ifdef BUG_TRUST_DEAD_RECORDS
#define LIVE_CLAIM(i) 1
#else
#define LIVE_CLAIM(i) ALIVE(i)
#endif

/* crash now (if c holds): stop forever, locals cleared to keep states few */
#define CRASH_IF(c) \
    atomic { (c) && crashes > 0 -> crashes--; dead = dead | BIT; \
             waiting = waiting & ~BIT; dirty = dirty & ~BIT; TOUCH; \
             g_dead = g_dead | (owner == ME); \
             it = 0; t = 0; s = 0; o = 0; i = 0; tok = 0; dl = 0; d = 0 }; \
    goto crashed
/* one step of this process, or its crash instead. The `skip` matters: spin
   weighs an `else` that opens an option against the enclosing if's other
   options, so without it `:: else` in body would be disabled whenever a
   crash is possible, silently pruning every "nothing to do" path */
#define STEP(body) if :: CRASH_IF(1) :: atomic { skip; body } fi

/* the table entry */
byte next, serving, owner, token;
bit  died;
/* per slot: the record (state, ticket) -- one 64-bit word in the real code */
byte rstate[N], rticket[N];

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

inline cas_serving(from) {          /* CAS(serving, from, from + 1); wake */
    STEP(if :: serving == from -> serving = from + 1; TOUCH;
                                  assert(serving <= next)       /* (d) */
            :: else -> skip fi)
}

/*
 * Recovery, one pass. The first step reads owner, serving and the owner's
 * liveness together: a dead owner word stays in `owner` until a recoverer's
 * CAS clears it, and a pass whose CAS(serving, s, ..) succeeds saw serving
 * == s from its first read on (see Atomicity), so this changes no pass that
 * writes; a pass that writes nothing is a stutter.
 */
inline recover() {
    atomic {
        dirty & BIT -> dirty = dirty & ~BIT;
        o = owner; s = serving;
        if
        :: o != 0 && o != MARK && !ALIVE(o - 1) -> skip   /* dead holder */
        :: else -> o = 0;
            /* no claimant? needs owner == 0, and my record does not claim s */
            if :: UNOWNED(owner) && s != t -> skip
               :: else -> goto recovered fi
        fi
    }
    if
    :: o != 0 ->
        /* Dead holder: CAS(owner, o, 0) (MARK is 0 unless FIX_DIED_MARK);
           the winner sets died := 1, then CAS(serving, s, s + 1), wakes */
        STEP(if :: owner == o -> owner = MARK; TOUCH; o = 0
                :: else -> goto recovered fi);
#ifndef FIX_DIED_MARK
        STEP(died = 1);
#endif
        cas_serving(s)
    :: else ->
        /* Place with no live claimant: read the other slots' records one by
           one; a claiming record needs a liveness check (another step) */
        i = 0;
        do
        :: i == N -> break
        :: i < N ->
            STEP(if :: i != _pid && CLAIMS(i, s) -> o = 1
                    :: else -> i++ fi);
            if
            :: o -> STEP(if :: LIVE_CLAIM(i) -> goto recovered  /* wait for it */
                            :: else -> o = 0; i++ fi)
            :: else -> skip
            fi
        od;
#ifndef BUG_NO_REREAD
        /* re-read owner (seq_cst; still 0) */
        STEP(if :: UNOWNED(owner) -> skip :: else -> goto recovered fi);
#endif
        cas_serving(s)
    fi;
recovered:
    atomic { s = 0; o = 0; i = 0 }
}

active [N] proctype P()
{
    byte it, t, s, o, i, tok;
    bit dl, d;

    for (it : 1 .. LOOPS) {
        /* 1. R := PENDING(E); (environment: this acquire has a deadline?) */
        STEP(if :: deadlines > 0 -> deadlines--; dl = 1
                :: skip fi;
             rstate[_pid] = PENDING; TOUCH);
        /* 2. t := fetch_add(next, 1); R := WAITING(E, t) */
        STEP(t = next; next++);
        STEP(rticket[_pid] = t; rstate[_pid] = WAITING;
             waiting = waiting | BIT; TOUCH);

        /* 3. wait until serving == t; every wake-up runs Recovery */
        do
        :: atomic { serving == t -> waiting = waiting & ~BIT;
                                    dirty = dirty & ~BIT }; break
        :: atomic { dl -> waiting = waiting & ~BIT;
                          dirty = dirty & ~BIT }; goto timed_out
        :: recover()
        :: CRASH_IF(serving == t || dl || (dirty & BIT))
        od;

hold:   /* 4. owner := me; token := ++token; d := exchange(died, 0); R := FREE */
#ifdef BUG_CLEAR_BEFORE_OWNER
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH);
#endif
        /* owner, token and died in one step: no other step touches owner
           and token or died both, so the steps in between commute */
        STEP(TAKE_OWNER; TOUCH; token++; tok = token; TAKE_DIED;
             CHECK_DIED; d = 0);
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH;
             /* acquire returns: enter the critical section */
             assert(cs == 0 || !ALIVE(cs - 1));     /* (a) */
             assert(tok > last_token);              /* (b) */
             cs = ME; last_token = tok; tok = 0; t = 0);
        /* critical section; crashing here leaves a dead holder */
        STEP(assert(cs == ME); cs = 0;              /* (a) leave the CS */
             /* Release: if owner != me -> NOT_OWNER (never, by (c));
                s := serving merged in (see Atomicity) */
             assert(owner == ME);                   /* (c) */
             s = serving);                          /* s := serving */
        STEP(owner = 0; TOUCH);                     /* owner := 0 */
#ifdef BUG_RELEASE_STORE
        STEP(serving++; TOUCH; s = 0);              /* bug: no CAS */
#else
        cas_serving(s);                             /* CAS(serving, s, s+1) */
        s = 0;
#endif
        goto done;

timed_out:  /* Timeout: R := FREE; if serving == t, pass the place on */
        STEP(rstate[_pid] = FREE; rticket[_pid] = 0; TOUCH);
#ifdef BUG_TIMEOUT_TAKES
        STEP(if :: serving == t -> goto hold        /* bug: takes it */
                :: else -> skip fi);
#else
        cas_serving(t);
#endif
done:
        atomic { t = 0; dl = 0 }
    }
crashed:
    skip
}
