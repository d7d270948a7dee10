/*
 * lease_break.pml -- spin model of the lease + fencing protocol of the lease
 * authority (core/lease; DESIGN.md "Lease authority", core invariant 5;
 * include/rdlm/lease.h): sessions renewed with the leader, expiry as a
 * committed decision, a lock kept by the authority that an EXPIRE breaks, and
 * a storage resource that checks fencing tokens. Two clients (sessions 0 and
 * 1, both opened at time 0), one lock, one resource.
 *
 * The authority. The Raft group is abstracted as one leader at a time and
 * LCHANGES leader changes per run (at any moment). Replicated (committed)
 * state: per session xp (0 live, 2 expired = EXPIRE committed), the lock
 * (holder, one FIFO waiter -- two sessions need no more), grant_seq (token =
 * grant counter). A log entry is proposed and committed in two steps only
 * where it matters, for EXPIRE: xp = 1 while proposed and not committed. At
 * a leader change a pending EXPIRE either survives in the new leader's log
 * (and is committed by it) or is lost (xp back to 0). OPEN (at time 0) and
 * ACQUIRE commit in one step with the client's request (their timing does
 * not matter here: the lock state is what they change). Leader-only, NOT
 * replicated: the TTL timers dl[s], reset by every renewal the leader
 * accepts; renewals write no log entry.
 *   renew     The leader answers a RENEW of a live session: dl[s] :=
 *             max(dl[s], now + TTL), reply OK(t_send). A session whose
 *             EXPIRE it has proposed or that is expired: reply EXPIRED. A
 *             new leader answers only once it has committed an entry of its
 *             own term (Raft section 8, replica.c's barrier: then every
 *             EXPIRE of an earlier term that survives is committed and
 *             applied) -- the flag `ready`. The reply may travel for any
 *             time and arrive after that leader was deposed. What bounds
 *             the answers of a leader that was deposed without noticing,
 *             two designs:
 *             (a) GRACE = 0 (default): a replica answers only after
 *                 confirming its leadership once the renewal arrived
 *                 (read-index round to a majority): it answers at a moment
 *                 when no newer leader exists -- the answer step is guarded
 *                 by "is the current leader";
 *             (b) -DGRACE=g (core/lease/authority/replica.c: libraft's check-quorum
 *                 step-down plus RDLM_LEASE_REPLICA_GRACE): a deposed leader
 *                 may still answer, from its own view (it refuses sessions
 *                 whose EXPIRE it proposed or knew committed), until g ticks
 *                 after the new leader's election, and a new leader arms
 *                 every session with TTL + g. The max() in renew keeps that
 *                 grace when a client renews early with the new leader.
 *   expire    When now >= dl[s] (the timer may fire late: any time after)
 *             the ready leader proposes EXPIRE(s); committing it (a later
 *             step, possibly by the next leader) removes the session: its
 *             hold passes to the waiter with token ++grant_seq, its wait is
 *             dropped.
 *   change    New leader, ready = 0, and EVERY session re-armed with a full
 *             TTL from that moment: dl[s] := now + TTL + GRACE (replica.c
 *             arms when ready, later: a later deadline only removes
 *             behaviours, so that is covered). Pending EXPIREs
 *             survive or are lost. Committing the survivors and then the
 *             new leader's first entry makes it ready.
 *
 * The client (one process per session). Its lease is valid until vu =
 * t_send + VW (model time; see "Drift" for VW), t_send being the send time of
 * its last renewal answered OK; the OPEN counts as a renewal sent at 0. At
 * every step it first checks the clock: now >= vu means the lease is lost,
 * for good (vu := 0, the session is dead, every call fails). It may: send a
 * renewal (one outstanding; sending again replaces it: the old one is lost);
 * take a renewal reply (OK: vu := max(vu, t_send + VW); EXPIRED: lost);
 * ACQUIRE the lock once; take the grant (its token); then, holding, do one
 * operation: check validity ("the operation may return success") and write
 * to the resource with its token. Between the check and the write it may be
 * paused (SIGSTOP) for any time, and it does not check again: the write is
 * the stale write fencing exists for. Every process may be paused at any
 * point for any time (no fairness; ticks go on meanwhile), every message
 * may be delayed for any time or lost.
 *
 * The resource accepts a write iff token >= the largest token it accepted.
 *
 * Time. Integer ticks. A tick is a step of its own (in process Authority, to
 * keep the state vector small) that may come at any moment, so any process
 * may be paused for any number of ticks, without bound, and any message
 * delayed as long. Every time value is kept RELATIVE to now, as the time
 * left: dl[s] (ticks until the leader's timer may fire), vu[s] (ticks the
 * client's lease is still valid), and in a renewal request or OK reply the
 * validity it would give (t_send + VW - now). A tick decrements them,
 * saturating at 0 (0: the timer may fire / the lease is not valid / the
 * reply gives nothing). The state space is finite without a time horizon.
 *
 * Drift. Every timer is an interval measured by ONE clock, whose rate is
 * within [1-eps, 1+eps] of real time at every moment (eps: per-clock drift
 * bound): D ticks of it last between D/(1+eps) and D/(1-eps) real time,
 * whatever the clock did before. The model lets each interval last any time
 * in its bounds, independently of the others -- an over-approximation of
 * all clock behaviours, sound for safety. The time unit is chosen so that a
 * leader's TTL timer lasts at least TTL ticks: it may fire at any time >=
 * arm + TTL (never forced: late timers, slow leaders are included). The
 * client's validity is TTL*(1-rho) ticks of ITS clock, so it lasts at most
 *         TTL * (1+eps)(1-rho)/(1-eps)   model ticks,
 * which is <= TTL iff rho >= 2 eps/(1+eps): the rho of t_send + TTL*(1-rho)
 * must bound the drift BETWEEN two clocks (a client's and any replica's),
 * about twice the per-clock drift. With rho = eps ("each clock within rho of
 * real time") the window can outlast the leader's timer: rho = 0.1, TTL = 5 s
 * gives a window of up to 5 s against a timer of 4.55 s; in ticks that is
 * BUG_NO_DRIFT_MARGIN. With rho so read, the window lasts at most TTL ticks
 * and the model gives it exactly TTL (VW = TTL), the longest: a client with
 * a shorter window loses its lease earlier, and whatever it does, a client
 * with the longer window can do too (then pause), believing itself valid at
 * least at the same instants; so every run with a shorter window is matched
 * by one with VW = TTL that violates at least the same properties. The
 * replicas' clocks need no relation to each other: each timer is bounded by
 * its own length, and a new leader re-arms on its own clock. The time
 * argument itself is one line (real time: a client valid at t has t < t_send
 * + W <= t_send + TTL <= t_recv + TTL <= when the leader's timer may fire);
 * what the model checks is that every other move -- leader changes, late
 * replies, pending entries, deposed leaders, pauses, the lock hand-over --
 * keeps it (-DLEMMA asserts it as vu[s] <= dl[s]). Integer time is the
 * digital-clock abstraction (Henzinger, Manna, Pnueli, "What good are
 * digital clocks?", ICALP 1992): all bounds are the one integer constant
 * TTL, and both sides of the boundary are resolved as in real time (the
 * client is valid strictly before t_send + W, the timer may fire from its
 * end on).
 *
 * Properties:
 *   (P1) fencing: the resource never accepts a write whose token is smaller
 *        than one it accepted before (assert at each accepted write);
 *   (P2) leases: never (xp[s] == 2 && now < vu[s]), i.e. with time kept
 *        relative, never (xp[s] == 2 && vu[s] > 0): a client never believes
 *        its lease valid while the authority has committed its expiry. vu
 *        grows only when a renewal reply is taken, xp becomes 2 only when an
 *        EXPIRE is committed, and a tick only lowers vu, so asserting at
 *        those two steps checks the invariant in every state; it is asserted also at
 *        every success the client returns (the grant, the operation's check).
 *        Hence a client whose lease expired is told so (its own check fails)
 *        before an operation returns success;
 *   (P3) at most one session holds the lock: a grant is issued (to a client)
 *        only while no other session has an issued grant that the committed
 *        state has not revoked (ghost hold[]);
 *   (P4) tokens strictly increase in the order grants are issued.
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   BUG_NO_DRIFT_MARGIN  client validity t_send + TTL (no rho margin): the
 *       window lasts up to TTL(1+eps)/(1-eps) > TTL ticks, TTL + 1 in integer
 *       time -> (P2): the leader expires at TTL, the client still believes
 *       itself valid.
 *   BUG_NO_REARM  the new leader does not re-arm with a full TTL from its
 *       election: it arms each session from what its log tells, the OPEN at
 *       time 0 (renewals are not logged), i.e. dl = TTL after the OPEN --
 *       expiring at once a session that renewed with the old leader -> (P2).
 *       (Copying the old leader's in-memory deadlines exactly would be safe
 *       in this model, but a new leader cannot know them: they are neither
 *       logged nor on its clock.)
 *   BUG_LOCAL_EXPIRE  a deposed leader that has not noticed keeps running
 *       its timers on its stale deadlines and its copy of the lock, expires a
 *       session and grants the lock on its own, without a committed decision
 *       -> (P3): the new leader re-armed the holder, which is alive.
 *   BUG_NO_FENCE  the resource accepts every write -> (P1): the holder,
 *       paused between its validity check and its write, expires, the lock
 *       goes to the waiter (larger token), which writes; the old holder's
 *       late write is accepted.
 *   BUG_VALID_FROM_REPLY  validity counted from the reply's arrival: vu :=
 *       now + TTL at the reply -> (P2) when the reply was delayed.
 *   BUG_DEPOSED_RENEW  a replica answers renewals while it believes itself
 *       leader, without confirming it and without a bound on how long after
 *       being deposed (no read-index round, no step-down within the grace):
 *       a deposed leader accepts a renewal SENT after the new leader
 *       re-armed -> (P2) when the new leader's timer fires.
 *   BUG_SHORT_GRACE  (with GRACE >= 1) the new leader arms TTL + GRACE - 1,
 *       one tick less than the deposed leader may still answer -> (P2).
 *   BUG_RENEW_SHORTENS  (with GRACE >= 1) a renewal sets dl := now + TTL
 *       instead of max(dl, now + TTL): a client renews early with the new
 *       leader, losing the grace, then late with the deposed one -> (P2).
 *
 * Defence in depth: two leader rules and one client rule of which either
 * side suffices. Each alone is safe (spin: no error); the leader bugs
 * together with the client bug are caught:
 *   BUG_RENEW_PENDING  the leader renews a session whose EXPIRE it has
 *       proposed and not yet committed.
 *   BUG_RENEW_UNREADY  a new leader answers renewals before committing an
 *       entry of its term (a surviving EXPIRE of the old leader is then
 *       committed after the renewal was answered).
 *   BUG_CLIENT_REVIVES  a client whose lease lapsed takes a late OK reply as
 *       a new validity instead of staying lost for good.
 *   Why each side suffices: the lemma vu[s] <= dl[s] -- when the leader's
 *   timer fires the client's lease has lapsed, and a lapsed client stays
 *   lost (so the leader's answer no longer matters); and a leader that
 *   answers only for live sessions with no pending EXPIRE, only when ready,
 *   re-arms dl with every OK it gives (so a revived client is covered).
 *   With both broken: the holder's lease lapses, the leader proposes its
 *   EXPIRE, a renewal delayed in the network arrives and is answered OK
 *   (pending / not yet ready), the client revives, the EXPIRE commits -> (P2).
 *
 * Reachability checks (-DREACH=n, spin must find the assert(REACH != n),
 * i.e. the correct model does reach the scenario the properties are about):
 *   1  a stale write is rejected by the resource (the old holder's late
 *      write after the lock passed on and the new holder wrote);
 *   2  an EXPIRE proposed by one leader is committed by the next;
 *   3  a client takes an OK reply to a renewal accepted by a leader that has
 *      been deposed since.
 *
 * Knobs: -DTTL= (3), -DLCHANGES= (leader changes, 1), -DGRACE= (0: see
 * "renew"), -DLEMMA (assert
 * vu[s] <= dl[s]: the correct configurations' ctest entries set it).
 */

#ifndef TTL
#define TTL 3
#endif
#ifndef LCHANGES
#define LCHANGES 1
#endif
#ifndef GRACE
#define GRACE 0
#endif
#ifndef REACH
#define REACH 0
#endif
#define REACHED(n) assert(REACH != (n))

/* the client's validity window, in model ticks (see "Drift") */
#ifdef BUG_NO_DRIFT_MARGIN
#define VW (TTL + 1)
#else
#define VW TTL
#endif

/* deposed leaders that still answer renewals (GRACE, BUG_DEPOSED_RENEW) */
#if GRACE > 0 || defined(BUG_DEPOSED_RENEW)
#define ANSWERS 1
#endif
/* a deposed leader that runs its timers on its own state (BUG_LOCAL_EXPIRE) */
#ifdef BUG_LOCAL_EXPIRE
#define DEPOSED 1
#endif

/* All times are "ticks left", decremented by each tick down to 0. */

/* the authority: replicated (committed) state */
byte xp[2];                     /* 0 live, 1 EXPIRE proposed, 2 expired */
byte holder;                    /* session + 1, 0 = free */
byte waiter;                    /* FIFO of one: session + 1, 0 = none */
byte gseq;                      /* grant counter: the last token */
/* the current leader */
bit  ready = 1;                 /* has committed an entry of its term */
byte dl[2] = TTL;               /* TTL timers: 0 = may fire */
byte lch = LCHANGES;            /* leader changes left */
#ifdef BUG_NO_REARM
byte since;                     /* ticks since the OPENs, up to TTL */
#endif
#if REACH == 3
byte term;                      /* ghost: leader changes so far */
byte rpterm[2];                 /* ghost: term that accepted the reply */
#define DEPOSED_TERM(x) rpterm[x] = term - 1
#else
#define DEPOSED_TERM(x) skip
#endif

#ifdef ANSWERS
/* deposed leaders may answer renewals while owin > 0 (ticks left, for all
   of them: a later change starts a window that ends later). A deposed leader
   refuses the sessions whose EXPIRE it proposed or knows committed when it
   was deposed; oref[s]: every deposed leader still answering refuses s */
byte owin;
bit  oref[2];
#endif
#ifdef DEPOSED
/* the last deposed leader's own state (BUG_LOCAL_EXPIRE only) */
bit  old;                       /* exists */
byte odl[2];                    /* its timers */
bit  ox[2];                     /* its view: session expired */
byte ohold, owait, oseq;        /* its copy of the lock */
#endif

/* messages: one slot each, a new message replaces (loses) an old one */
byte rq[2];                     /* renewal request: 1 + validity it would give */
byte rp[2];                     /* renewal reply: R_EXPIRED, R_OK(validity) */
byte gm[2];                     /* grant reply: the token, 0 = none */
#define R_EXPIRED 1
#define R_OK(v) ((v) + 2)

/* the clients' leases: valid while vu > 0; once 0, lost for good */
byte vu[2] = VW;

/* the resource */
byte rmax;                      /* largest token accepted */

/* ghosts */
bit  hold[2];                   /* issued a grant not revoked (P3) */
byte last_tok;                  /* (P4) */

#define P2(x) assert(xp[x] != 2 || vu[x] == 0)

/* -DLEMMA: the inductive invariant behind (P2), checked wherever vu grows or
   dl is set (a tick lowers both, saturating): a client's lease never
   outlasts the current leader's timer for its session */
#ifdef LEMMA
#define L2(x) assert(vu[x] <= dl[x])
#else
#define L2(x) skip
#endif

/* a grant reaches session w with token tk */
inline issue(w, tk) {
    assert(!hold[1 - (w)]);                     /* (P3) */
    assert((tk) > last_tok);                    /* (P4) */
    last_tok = tk; hold[w] = 1; gm[w] = tk
}

/* EXPIRE(x) commits: the session is removed, its hold passes on */
inline commit_expire(x) {
    xp[x] = 2; dl[x] = 0; hold[x] = 0;
    P2(x); L2(x);
    if
    :: waiter == (x) + 1 -> waiter = 0
    :: else -> skip
    fi;
    if
    :: holder == (x) + 1 ->
        holder = waiter; waiter = 0;
        if
        :: holder != 0 -> gseq++; issue(holder - 1, gseq)
        :: else -> skip
        fi
    :: else -> skip
    fi
}

/* which sessions the answering leader considers live, and when it answers */
#ifdef BUG_RENEW_PENDING
#define LIVE(x) (xp[x] != 2)
#elif defined(BUG_RENEW_UNREADY)
#define LIVE(x) (xp[x] == 0 || (xp[x] == 1 && !ready))  /* survivor not applied */
#else
#define LIVE(x) (xp[x] == 0)
#endif
#ifdef BUG_RENEW_UNREADY
#define CAN_ANSWER true
#else
#define CAN_ANSWER ready
#endif

/* a renewal resets the timer: deadline = max(deadline, now + TTL) */
#ifdef BUG_RENEW_SHORTENS
#define RESET(x) dl[x] = TTL
#else
#define RESET(x) if :: dl[x] < TTL -> dl[x] = TTL :: else -> skip fi
#endif

/* the (confirmed, ready) leader answers x's renewal */
inline renew(x) {
    if
    :: LIVE(x) -> RESET(x); rp[x] = R_OK(rq[x] - 1)
    :: else -> rp[x] = R_EXPIRED
    fi;
#if REACH == 3
    rpterm[x] = term;
#endif
    rq[x] = 0;
    L2(x)
}

/* the new leader arms x's timer */
#ifdef BUG_NO_REARM
#define REARM(x) if :: xp[x] != 2 -> dl[x] = TTL - since :: else -> skip fi
#elif defined(BUG_SHORT_GRACE)
#define REARM(x) if :: xp[x] != 2 -> dl[x] = TTL + GRACE - 1 :: else -> skip fi
#else
#define REARM(x) if :: xp[x] != 2 -> dl[x] = TTL + GRACE :: else -> skip fi
#endif

/* a pending EXPIRE survives a leader change, or is lost */
#define SURVIVE(x) if :: xp[x] == 1 -> xp[x] = 0 :: true -> skip fi

#ifdef BUG_LOCAL_EXPIRE
/* the deposed leader expires x on its own and grants from its own copy */
inline local_expire(x) {
    ox[x] = 1;
    if
    :: owait == (x) + 1 -> owait = 0
    :: else -> skip
    fi;
    if
    :: ohold == (x) + 1 ->
        ohold = owait; owait = 0;
        if
        :: ohold != 0 -> oseq++; issue(ohold - 1, oseq)
        :: else -> skip
        fi
    :: else -> skip
    fi
}
#endif

/* the resource: accept iff tok >= the largest token accepted */
#ifdef BUG_NO_FENCE
#define WRITE \
    assert(tok >= rmax);                        /* (P1) */ \
    if :: tok > rmax -> rmax = tok :: else -> skip fi
#else
#define WRITE \
    if \
    :: tok >= rmax -> assert(tok >= rmax); rmax = tok      /* (P1) */ \
    :: else -> REACHED(1)                       /* a stale write rejected */ \
    fi
#endif

/* ---- clients: _pid 0 and 1 are sessions 0 and 1 ---- */
#define ME _pid
#define LOSE vu[ME] = 0; rq[ME] = 0

active [2] proctype Client()
{
    byte tok;                   /* my token, once granted */
    bit acq;                    /* ACQUIRE done */
    bit ok;                     /* operation checked, the write is next */
    bit wrote;

end:
    do
    /* send a renewal (replacing an older outstanding one) */
    :: atomic { vu[ME] != 0 && rq[ME] != 1 + VW -> rq[ME] = 1 + VW }
    /* take a renewal reply */
    :: atomic { rp[ME] != 0 ->
                if
#ifdef BUG_CLIENT_REVIVES
                :: vu[ME] == 0 && rp[ME] > 2 -> vu[ME] = rp[ME] - 2; P2(ME)
                :: vu[ME] == 0 && rp[ME] <= 2 -> skip
#else
                :: vu[ME] == 0 -> skip                  /* lost for good */
#endif
                :: vu[ME] != 0 && rp[ME] == R_EXPIRED -> LOSE
                :: vu[ME] != 0 && rp[ME] != R_EXPIRED ->
#ifdef BUG_VALID_FROM_REPLY
                    vu[ME] = VW;                        /* now + VW */
#else
                    if                                  /* t_send + VW */
                    :: rp[ME] - 2 > vu[ME] -> vu[ME] = rp[ME] - 2
                    :: else -> skip
                    fi;
#endif
#if REACH == 3
                    if :: rpterm[ME] < term -> REACHED(3) :: else -> skip fi;
#endif
                    P2(ME); L2(ME)
                fi;
                rp[ME] = 0 }
    /* ACQUIRE: the leader commits it */
    :: atomic { !acq && vu[ME] != 0 && ready ->
                acq = 1;
                if
                :: xp[ME] != 0 -> LOSE                  /* told: expired */
                :: xp[ME] == 0 && holder == 0 ->
                    holder = ME + 1; gseq++; issue(ME, gseq)
                :: xp[ME] == 0 && holder != 0 -> waiter = ME + 1
                fi }
    /* take the grant: ACQUIRE returns success (lease lost: an error) */
    :: atomic { gm[ME] != 0 ->
                if
                :: vu[ME] != 0 -> tok = gm[ME]; P2(ME)
                :: else -> skip
                fi;
                gm[ME] = 0 }
    /* an operation under the lock: check the lease, return success ... */
    :: atomic { tok != 0 && !ok && !wrote && vu[ME] != 0 -> ok = 1; P2(ME) }
    /* ... and (maybe after a pause of any length) write with the token */
    :: atomic { ok -> WRITE; ok = 0; wrote = 1; tok = 0 }
    od
}

#define TICK(v) if :: v > 0 -> v-- :: else -> skip fi
#define TICK_MSG(m, base) if :: m > (base) -> m-- :: else -> skip fi

active proctype Authority()
{
end:
    do
    /* renewals */
    :: atomic { CAN_ANSWER && rq[0] != 0 -> renew(0) }
    :: atomic { CAN_ANSWER && rq[1] != 0 -> renew(1) }
    /* TTL timers: propose EXPIRE */
    :: atomic { ready && xp[0] == 0 && dl[0] == 0 -> xp[0] = 1 }
    :: atomic { ready && xp[1] == 0 && dl[1] == 0 -> xp[1] = 1 }
    /* commit a pending EXPIRE */
    :: atomic { ready && xp[0] == 1 -> commit_expire(0) }
    :: atomic { ready && xp[1] == 1 -> commit_expire(1) }
    /* leader change */
    :: atomic {
           lch > 0 -> lch--;
#if REACH == 3
           term++;
#endif
#ifdef ANSWERS
           oref[0] = (xp[0] != 0 && (owin == 0 || oref[0]));
           oref[1] = (xp[1] != 0 && (owin == 0 || oref[1]));
#ifndef BUG_DEPOSED_RENEW
           owin = GRACE + 1;    /* answers until GRACE ticks after the change */
#else
           owin = 1;            /* and forever: owin is never lowered */
#endif
#endif
#ifdef DEPOSED
           old = 1; odl[0] = dl[0]; odl[1] = dl[1];
           ox[0] = (xp[0] != 0); ox[1] = (xp[1] != 0);
           ohold = holder; owait = waiter; oseq = gseq;
#endif
           ready = 0;
           REARM(0); REARM(1);
           SURVIVE(0); SURVIVE(1);
           L2(0); L2(1)
       }
    /* the new leader commits the surviving entries, then its own first one */
    :: atomic {
           !ready ->
           if
           :: xp[0] == 1 -> REACHED(2); commit_expire(0)
           :: else -> skip
           fi;
           if
           :: xp[1] == 1 -> REACHED(2); commit_expire(1)
           :: else -> skip
           fi;
           ready = 1
       }
#ifdef ANSWERS
    /* a deposed leader answers a renewal, unconfirmed, from its own view */
    :: atomic { owin > 0 && rq[0] != 0 && !oref[0] ->
                rp[0] = R_OK(rq[0] - 1); rq[0] = 0; DEPOSED_TERM(0) }
    :: atomic { owin > 0 && rq[1] != 0 && !oref[1] ->
                rp[1] = R_OK(rq[1] - 1); rq[1] = 0; DEPOSED_TERM(1) }
#endif
#ifdef BUG_LOCAL_EXPIRE
    /* the deposed leader's timers, acted on without a commit */
    :: atomic { old && !ox[0] && odl[0] == 0 -> local_expire(0) }
    :: atomic { old && !ox[1] && odl[1] == 0 -> local_expire(1) }
#endif
    /* a tick: every "time left" goes down by one */
    :: atomic {
           TICK(dl[0]); TICK(dl[1]); TICK(vu[0]); TICK(vu[1]);
           TICK_MSG(rq[0], 1); TICK_MSG(rq[1], 1);
           TICK_MSG(rp[0], 2); TICK_MSG(rp[1], 2);
#if defined(ANSWERS) && !defined(BUG_DEPOSED_RENEW)
           TICK(owin);
#endif
#ifdef DEPOSED
           TICK(odl[0]); TICK(odl[1]);
#endif
#ifdef BUG_NO_REARM
           if :: since < TTL -> since++ :: else -> skip fi;
#endif
           skip
       }
    od
}
