/*
 * am_lease.pml -- spin model of the home-served queue lock over active messages
 * (am_lock.pml) WITH LEASES: the recovery of a dead holder is done by the lock's
 * home, and the node-local (cohort) hand-offs are kept. The protocol as proposed
 * for core/global/amq_home.c, amq_recover.c, amq.c and cohort.c, written while
 * this model was; -DCODE is what commit e688c1d implements (the proposal, with
 * SETTLE's path (2) as cohort.c's rdlm_global_settle_dead has it). README.md,
 * "am_lease.pml", has the results and where model and code differ.
 *
 * THE PROPOSAL HAS SIX FLAWS: a stall, an overlap on a false suspicion, and four
 * ways to lose an OWNER_DEAD (README.md has the trails). The model carries a fix
 * for each (the default); -DBUG_x restores the proposal:
 *   1 SETTLE_HOLDER_ONLY  H looks only at the holder's own process. After a
 *     cohort hand-off the lock is held through the queue node of a live
 *     process (A) by a node-mate (B) that dies: nobody ever passes it on if A
 *     does not ask again (stall, one crash). Fix: the trigger is "some process
 *     of the holder's node is dead"; SETTLE goes to the lowest live one (A
 *     itself here), whose try recovers the local lock (OWNER_DEAD).
 *   2 SETTLE_READ_FIRST  (2) reads the node's entry, then checks that A is gone.
 *     (e688c1d reads it again after the check and, finding q_A, clears it and
 *     sends REL(A, DEAD) without the local lock: CODE_SETTLE_HELD, the same
 *     overlap.)
 *     On a SETTLE sent while A lived (H's false suspicion, -DSUSPECT; or, with
 *     fix 1, a node of three processes and a second crash) A may record its
 *     place and die in between: REL(A) passes the lock while a node-mate
 *     holds through A's queue node (overlap). Fix: check gone first, then read
 *     the entry (dead is for good: A records nothing any more).
 *   3 SETTLE_REL_NO_DEAD  H repeats SETTLE while (1)'s REL(A, DEAD) is in
 *     flight; the repeat finds the entry cleared and A gone and sends REL(A)
 *     by (2) without the flag, which may arrive first: OWNER_DEAD is lost
 *     (no delivery order; both come from P). Fix: (1) records in the node's
 *     entry the place it passed with OWNER_DEAD (sdq), and (2) sets the flag
 *     for that place.
 *   4 REL_DEAD_DROPPED  (with a waiter that gives up, -DTIMEOUT) REL(A, DEAD)
 *     finds nobody waiting: the lock is free and the flag dropped; the next
 *     holder gets OK. Fix: H keeps the flag for its next grant (hdf).
 *   5 DEAD_GRANT_LOST  (two crashes) a GRANT flagged DEAD goes to a waiter that
 *     is dead (or dies before it records the place): (2) passes the lock on
 *     without the flag. Fix: (2)'s REL says UNUSED (the holder never used its
 *     grant) and H carries the holder's DEAD flag over to the next grant.
 *   6 REL_NO_SEQ  (2)'s REL duplicates the holder's own REL still in flight:
 *     one grant, two RELs, so the later one is stale, and without a seq it
 *     releases the next use of the same queue node (the dead process's own
 *     request, queued before it died): (f); with a second crash that loses an
 *     OWNER_DEAD. Exclusion holds (only a dead process's use is released).
 *     Fix: REL and SETTLE name the use (the GRANT's seq, recorded by the node
 *     with its place, qs); H releases only the holding use.
 *
 * One lock, its home H (never fails), two nodes: node X with processes A (0) and
 * B (1), node Y with process C (2). Each process does LOOPS (1) acquires. A
 * process stands for one queue node of its own (q_p: one lock needs one).
 *
 * Node X's shared entry (the node-local lock protects qn1, qs, hoffs, ntok, sdq):
 *   qn1    the queue node the node holds the lock through, owner + 1 (0: none)
 *          (cohort.c: queue_node1); qs its use (fix 6: the GRANT's seq);
 *   ntok   the node's last token (entry token): every local grant raises it by
 *          one (rdlm_local_lock_grant), a global grant sets it;
 *   hoffs  cohort hand-offs since the node took the lock (bound BOUND, 1);
 *   sdq    fix 3: the place + 1 a SETTLE passed on with OWNER_DEAD;
 *   the node-local lock, robust FIFO: lown = its owner (1 A, 2 B: the
 *          process's acquire; 3 A, 4 B: the process's SETTLE handler; 0 free),
 *          lw[2] the FIFO of waiting acquires (1 A, 2 B). A release hands it to
 *          the first waiter (a dead one too: in ticket.c the same state comes
 *          from a waiter that claims it and dies); an acquirer that finds its
 *          owner dead (and no live waiter ahead) takes it with OWNER_DEAD; a try
 *          takes it free, or from a dead owner (OWNER_DEAD) when no live acquire
 *          waits for it, else BUSY.
 * Node Y has one process: C's node holds the lock only while C does.
 *
 * Transport: no order at all, as in am_lock.pml. To H: racq[p] (an ACQ from q_p;
 * one at a time), RELs in NREL (4) slots (queue node, token, flags DEAD and
 * UNUSED, use; several may be in flight for one queue node: a process's own and
 * SETTLE's), -DTIMEOUT: C's CANCEL. To p: one GRANT slot (token, DEAD flag, use);
 * C: CANCELLED. To X's process P: one SETTLE slot (the holder and its use). No
 * TRYs, and a CANCEL only from C with one acquire (am_lock.pml has them with
 * their seqs; here a queue node has one request at a time, H counts the ACQs of
 * each queue node (lu) and that count is the use, the seq).
 *
 * Acquire by A or B (cohort.c, amq.c), each step may be its last (a crash):
 *   local  take the node-local lock (wait in its FIFO), status OK or OWNER_DEAD;
 *   place  qn1 != 0: the node holds: hold through qn1 with token ntok (a cohort
 *          hand-off, or the lock of a dead node-mate taken over locally: the
 *          local OWNER_DEAD is the acquire's); else send ACQ(q_p) and wait for
 *          the GRANT (takes it: the handler); the acquire's status is then the
 *          GRANT's flag alone (cohort.c with leases: one OWNER_DEAD per death);
 *   record (after the GRANT, a step of its own) qn1 := q_p, qs := its use,
 *          ntok := token, hoffs := 0;
 *   cs     the critical section (one step in, the release step out);
 *   release  qn1 != 0, hoffs < BOUND and a local waiter (live or dead): hoffs++
 *          and hand the local lock to it; else pass the node's lock on:
 *          REL(qn1, ntok, qs), qn1 := 0, hoffs := 0 (one step: the holder's
 *          rdlm_global_node_pass under the local lock), then the local release.
 *          (Not modelled: cohort.c's settle after a hand-off, for local waiters
 *          that give up; there are none here.)
 * C: send ACQ, take the GRANT (-DTIMEOUT: or give up once: CANCEL, then take
 *   the GRANT that crossed it, or CANCELLED), cs, REL.
 *
 * H (amq_home.c, one atomic step per message or scan):
 *   ACQ(p)         free: grant p; else append p.
 *   CANCEL (C)     C queued: unlink it, CANCELLED; else nothing.
 *   REL(q, t, d, u) only if the holder is q in its use u (fix 6; the proposal:
 *                  q): token := max(token, t); grant the head, if any, with
 *                  DEAD flag d (fix 5: or, for an UNUSED REL, the holder's
 *                  own); else free (fix 4: d kept for the next grant). Else
 *                  ignored.
 *   grant          holder := w in its use, token++, GRANT(w, token, flag, use).
 *   scan           (rdlm_amq_scan; here whenever it applies) a holder h, someone
 *                  queued, and the trigger: some process of h's node dead (fix
 *                  1; the proposal: h's own process). Then:
 *                  - a process of h's node alive: SETTLE(h, use) to the lowest live
 *                    one P (one in flight per P; sent again only once something
 *                    changed since the last SETTLE that changed nothing: "it
 *                    repeats on later scans", without a scan that repeats for
 *                    ever, so that a stall is an end state spin sees; and only
 *                    while fewer than 2 RELs naming h are in flight, the
 *                    model's bound on duplicate RELs);
 *                  - none alive, the lease of each one ended: take over: token
 *                    := a new epoch (1 + the largest token issued anywhere),
 *                    the head w holds, GRANT(w, token, DEAD).
 * SETTLE(h) at P (X's A or B; outside its handler: P's own steps, each may find
 * P dead):
 *   (1) qn1 == q_h (read): try the local lock (a step): OK / OWNER_DEAD: if qn1
 *       == q_h still, REL(q_h, ntok, DEAD if OWNER_DEAD, qs), qn1 := 0, hoffs := 0
 *       (fix 3: sdq := q_h if OWNER_DEAD); then release the local lock (a
 *       step). BUSY: nothing (a live process holds or waits: it passes on).
 *   (2) else (a step) h's process gone (P's own view: same host, exact) and,
 *       read after that (fix 2), qn1 != q_h: REL(q_h, ntok, DEAD iff sdq ==
 *       q_h (fix 3), UNUSED (fix 5), SETTLE's use (fix 6)); gone but qn1 == q_h
 *       by now: do (1).
 *   (3) else nothing.
 * Authority: a crashed process's lease ends at any later moment (never a live
 * process's); it may forfeit the rest of the crash budget (so that a stall reached
 * with budget left is an end state).
 *
 * Crashes: CRASHES (1) in the run, any process, instead of any of its steps:
 * waiting for the local lock, holding it, between GRANT and record, in the
 * critical section, after its acquires (a process that is done may still crash),
 * in its SETTLE handling. A crashed process's messages in flight still arrive.
 * H's view of the dead is the truth (a lag is a scan not done yet), unless
 * -DSUSPECT: once in the run H may take a live process for dead (a transport
 * timeout; it stays so); its lease does not end; P's "gone" stays exact.
 *
 * Properties (ghosts: incs, incsp = live processes in the critical section and
 * which; lasttok; maxtok = the largest token issued; owed = a crash in the
 * critical section not yet reported):
 *   (a) at most one live process in the critical section;
 *   (b) tokens strictly increase across critical-section entries;
 *   (c) no invalid end state: every acquire of a live process ends (also with
 *       -DCRASHES=2; not with -DSUSPECT and a crash: a false suspicion can
 *       leave H no live process to settle with and a lease that never ends);
 *   (d) after a crash in the critical section, the next entry reports
 *       OWNER_DEAD (locally, or a GRANT flagged DEAD); -DNO_CHECK_D: off;
 *   (e) at the end (every process done or dead, nothing in flight to H or to a
 *       live process, no SETTLE being handled): only dead processes queued; the
 *       holder free or dead, or node X's local lock owned by a dead process
 *       (nobody asked since); qn1 the holder's, unless node X is all dead (a
 *       takeover leaves the dead node's entry as it was).
 *   (f) a REL that passes H's check releases the use it was sent for (ghost
 *       relu; as am_lock.pml's (h)).
 *   Also asserted: a release finds its node's place (qn1 != 0).
 *
 * Knobs: -DCODE (above), -DPAUSE, -DBUG_UNDO_PLAIN, -DFIX_UNDO_UNUSED (above), -DLOOPS (1, at most 2; per process -DLOOPS_A, _B, _C),
 * -DCRASHES (1; 2 for the takeover of node X), -DCRASHABLE=mask (bit p: p may
 * crash; default all), -DBOUND (cohort bound, 1), -DSUSPECT, -DTIMEOUT (above),
 * -DNO_CHECK_D, -DNO_CHECK_F (to see what else a bug breaks), -DREACH=n.
 * -DREACH=n asserts false when a case is reached (each must fail):
 *   1 a SETTLE passes the lock on via (1) with OWNER_DEAD after a crash in the
 *     critical section;
 *   2 a SETTLE sends a REL via (2);
 *   3 H takes over (the whole node dead, leases ended);
 *   4 a cohort hand-off, then the node-mate passes the lock on through the
 *     queue node of a dead owner (cohort hand-offs under leases);
 *   5 a process takes the local lock from a dead holder and holds through the
 *     dead owner's queue node;
 *   6 a SETTLE to the holder's own live process passes the lock of a dead
 *     node-mate (fix 1 at work);
 *   7 (2) sends its REL with the DEAD flag (fix 3 at work);
 *   8 (-DTIMEOUT) H keeps a REL's DEAD flag for the next grant (fix 4 at work).
 *
 * -DPAUSE: A PAUSED HOLDER (SIGSTOP: never seen dead by the transport or its host;
 * amq_home.c's rdlm_amq_held_long, amq_recover.c's held_long path). C (alone on node
 * Y, so no live node-mate keeps the lock: docs/distributed-locks.md, Limits) may,
 * once, while it holds (GRANT taken, before or in its critical section), stop
 * instead of taking its next step. While C is stopped its lease may end (the
 * authority; a running C's lease never ends); if C was in its critical section it
 * is then a fenced zombie there: it no longer counts for (a). C then resumes, stays
 * stopped for good, or is killed (a crash, with the budget). Resumed with its lease
 * alive it goes on as usual; resumed with it ended it is fenced: it acquires nothing
 * any more, and it sends the REL of the use it held (from its critical section:
 * rdlm_lock_release; before it: rdlm_lock_keep's undo of the acquire), flags 0, or
 * DEAD for the undo of a grant flagged DEAD, as the code has it (-DBUG_UNDO_PLAIN:
 * always 0, the code before; -DFIX_UNDO_UNUSED: the undo's REL says UNUSED); that REL arrives
 * whenever. H's watch (proctype Watch): whenever C holds a use with someone queued
 * and is not known dead ("held long": any such moment), H asks the authority (FATE)
 * whether C's lease ended, in the same step; told "not ended" it asks again only once
 * the lease ended or the use changed (no cycle of questions); told "ended", a later
 * step (rdlm_amq_take_over, under H's lock again) grants the first waiter with a new
 * epoch, flagged DEAD, if C still holds in that use and someone is queued.
 * Checked: (a) with zombies left out, (b), (c) (a waiter of a C stopped for good is
 * served by the take-over), (d) also for the take-over of a zombie in its critical
 * section, (e) (a C stopped for good may hold), (f) (a stale REL of a fenced C
 * releases nothing; (f) also checks the queue node).
 *   With a crash, the code loses an OWNER_DEAD (d) (README.md): a DEAD GRANT to C,
 *   whose acquire rdlm_lock_keep undoes for the lost lease with a plain REL.
 * Reach (-DPAUSE): 9 the watch takes a fenced C's lock over; 10 from C's critical
 * section; 11 H ignores a fenced C's stale REL.
 * Planted (-DPAUSE): FATE_NO_ENDED (take over without the authority's "ended":
 * (a)), STALE_REL_ACCEPTED (a REL of C's queue node taken for whatever use holds:
 * (f)), PAUSE_NO_DEAD (the fenced holder's take-over unflagged: (d)).
 *
 * Planted bugs (-DBUG_...), each must be caught:
 *   SETTLE_HOLDER_ONLY      flaw 1: invalid end state (c).
 *   SETTLE_READ_FIRST       flaw 2 (-DSUSPECT).
 *   SETTLE_REL_NO_DEAD      flaw 3: (d).
 *   REL_DEAD_DROPPED        flaw 4 (-DTIMEOUT): (d).
 *   DEAD_GRANT_LOST         flaw 5 (-DCRASHES=2): (d).
 *   REL_NO_SEQ              flaw 6 (-DLOOPS_A=2): (f).
 *   TAKEOVER_ONE_DEAD       take over once the holder's process alone is dead
 *                           and its lease ended.
 *   SETTLE_IGNORES_BUSY     (1) passes the lock on without the local lock.
 *   SETTLE_NO_GONE_CHECK    (2) without "h's process gone".
 *   NO_SETTLE               no SETTLE: only whole-node takeovers.
 *   NO_NEW_EPOCH            the takeover's token is token + 1 (-DCRASHES=2).
 *   TAKEOVER_NO_LEASE_WAIT  take over once the node is dead in H's view,
 *                           leases not ended (-DSUSPECT).
 */

/* -DCODE: core/global as of commit e688c1d (the proposal, and (2) as cohort.c's
   rdlm_global_settle_dead has it) */
#ifdef CODE
#define BUG_SETTLE_HOLDER_ONLY
#define BUG_SETTLE_REL_NO_DEAD
#define BUG_REL_DEAD_DROPPED
#define BUG_DEAD_GRANT_LOST
#define BUG_REL_NO_SEQ
#define CODE_SETTLE_HELD
#endif
#ifndef LOOPS
#define LOOPS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef BOUND
#define BOUND 1
#endif
#ifndef REACH
#define REACH 0
#endif
/* per process: LOOPS unless set (-DLOOPS_A=2: A acquires twice) */
#ifndef LOOPS_A
#define LOOPS_A LOOPS
#endif
#ifndef LOOPS_B
#define LOOPS_B LOOPS
#endif
#ifndef LOOPS_C
#define LOOPS_C LOOPS
#endif
#if LOOPS_A > 2 || LOOPS_B > 2 || LOOPS_C > 2
#error "token bytes and the REL slots are sized for at most 2 acquires each"
#endif

#define NP 3                        /* A, B on node X; C on node Y */
#define NREL 4                      /* REL slots */
#define OWNER(v) (((v) - 1) % 2)    /* the process of a local owner/waiter value */

/* H's view of the dead */
#ifdef SUSPECT
bit susp[NP];
byte suspects = 1;
#define HD(p) (dead[p] || susp[p])
#else
#define HD(p) dead[p]
#endif

/* ---- environment ------------------------------------------------------------- */
bit dead[NP];
bit lend[NP];                       /* the lease ended (only after a crash; -DPAUSE:
                                       or while C is paused) */
byte crashes = CRASHES;
#ifdef PAUSE
bit paused;                         /* C is stopped (SIGSTOP): not dead for anyone */
byte pauses = 1;                    /* C pauses at most once */
bit wq;                             /* H's watch of C's use asked the authority and
                                       heard "not ended": quiet until the lease ends
                                       or the use changes (no cycle of questions) */
bit zcs;                            /* ghost: C's lease ended while C was in its
                                       critical section (a zombie there) */
#endif

/* ---- H ----------------------------------------------------------------------- */
byte hold;                          /* holder's queue node + 1 (= its process + 1) */
byte hq[NP];                        /* the FIFO queue, head first: process + 1 */
byte htok;                          /* the last token */
bit hdf;                            /* the fix of flaw 4: a REL's DEAD flag kept for
                                       the next grant (nobody waited) */
bit hgd;                            /* the fix of flaw 5: the holder's GRANT was
                                       flagged DEAD */
byte lu[NP];                        /* fix 6: ACQs seen from q_p (its uses) */
byte hu;                            /* fix 6: the holder's use */

/* ---- in flight ------------------------------------------------------------------ */
bit racq[NP];                       /* ACQ from q_p */
byte rw[NREL], rt[NREL];            /* REL: queue node + 1 (0: empty), token */
byte rd[NREL];                      /* REL: DEAD flag (1), UNUSED (2, fix 5) */
byte rs[NREL];                      /* REL: the use it releases (fix 6; 0: any) */
byte relu[NREL];                    /* ghost (f): the use it was sent for */
bit gk[NP];                         /* GRANT to p in flight */
byte gt[NP];                        /* its token */
bit gd[NP];                         /* its DEAD flag */
byte gs[NP];                        /* its use (fix 6) */
byte spend[2];                      /* SETTLE to X's P: holder + 1 (0: none) */
byte ss[2];                         /* its holder's use (fix 6) */
#ifdef TIMEOUT
#if LOOPS_C > 1
#error "-DTIMEOUT: C's CANCEL carries no seq, so C acquires once"
#endif
bit rcan;                           /* CANCEL from C */
bit cans;                           /* CANCELLED to C */
byte timeouts = 1;
#define CANCEL_PENDING rcan
#else
#define CANCEL_PENDING 0
#endif

/* ---- node X ------------------------------------------------------------------- */
byte qn1, ntok, hoffs;
byte qs;                            /* fix 6: the use of the place qn1 */
byte sdq;                           /* the fix of flaw 3: the place + 1 that a SETTLE
                                       passed on with OWNER_DEAD (0: none) */
byte lown;                          /* 0 free; 1, 2: A's, B's acquire; 3, 4: SETTLE */
byte lw[2];                         /* waiting acquires, FIFO: 1 A, 2 B */

/* ---- ghosts ------------------------------------------------------------------- */
byte incs, incsp;                   /* (a): live processes in the cs, which one + 1 */
byte lasttok;                       /* (b) */
byte maxtok;                        /* the largest token issued */
bit owed;                           /* (d) */
byte done;                          /* processes done or dead */
bit squiet;                         /* a SETTLE changed nothing, nothing since */
bit chg[2];                         /* something changed while P handled a SETTLE */
bit sbusy[2];                       /* P handles a SETTLE */
#if REACH == 4
bit handed;                         /* a cohort hand-off happened */
#endif

#define TOUCH squiet = 0; chg[0] = 1; chg[1] = 1
#define ISSUE(t) if :: (t) > maxtok -> maxtok = (t) :: else -> skip fi
#define LDEAD (lown != 0 && dead[OWNER(lown)])
#define LIVEW ((lw[0] != 0 && !dead[lw[0] - 1]) || (lw[1] != 0 && !dead[lw[1] - 1]))

/* the local release: hand to the first waiter (dead or not), else free */
inline lrelease() {
    if
    :: lw[0] != 0 -> lown = lw[0]; lw[0] = lw[1]; lw[1] = 0
    :: else -> lown = 0
    fi;
    TOUCH
}

/* send REL(queue node g, token t, flags f, use u) */
#ifdef BUG_REL_NO_SEQ
#define RELSEQ(k, u) rs[k] = 0; relu[k] = u
#else
#define RELSEQ(k, u) rs[k] = u; relu[k] = u
#endif
inline send_rel(g, t, f, u) {
    if
    :: rw[0] == 0 -> rw[0] = (g) + 1; rt[0] = t; rd[0] = f; RELSEQ(0, u)
    :: else -> if
        :: rw[1] == 0 -> rw[1] = (g) + 1; rt[1] = t; rd[1] = f; RELSEQ(1, u)
        :: else -> if
            :: rw[2] == 0 -> rw[2] = (g) + 1; rt[2] = t; rd[2] = f; RELSEQ(2, u)
            :: else -> assert(rw[3] == 0);
                rw[3] = (g) + 1; rt[3] = t; rd[3] = f; RELSEQ(3, u)
            fi
        fi
    fi
}

/* ---- H ------------------------------------------------------------------------ */
/* H takes REL(p, ..., use w) only while that use holds (fix 6) */
#ifdef BUG_STALE_REL_ACCEPTED
/* planted: a REL from C's queue node is taken for whatever use holds */
#define REL_HOLDS (hold == p + 1 && (w == 0 || w == hu) || p == 2 && hold != 0)
#else
#define REL_HOLDS (hold == p + 1 && (w == 0 || w == hu))
#endif
inline grant(w, f) {
    hold = w + 1; htok++; ISSUE(htok);
    assert(!gk[w]);
    gk[w] = 1; gt[w] = htok; gd[w] = f || hdf; hgd = gd[w]; hdf = 0;
    hu = lu[w]; gs[w] = hu;
#ifdef PAUSE
    wq = 0;                                 /* a new use: watched anew */
#endif
    TOUCH
}

inline dequeue(w) {
    w = hq[0] - 1; hq[0] = hq[1]; hq[1] = hq[2]; hq[2] = 0
}

inline enqueue(p) {
    if
    :: hq[0] == 0 -> hq[0] = p + 1
    :: hq[0] != 0 && hq[1] == 0 -> hq[1] = p + 1
    :: hq[1] != 0 -> assert(hq[2] == 0); hq[2] = p + 1
    fi
}

/* the trigger: h's node has a dead process (the fix) / h itself is dead */
#ifdef BUG_SETTLE_HOLDER_ONLY
#define TRIGGER(h) HD(h)
#else
#define TRIGGER(h) ((h) < 2 && (HD(0) || HD(1)) || (h) == 2 && HD(2))
#endif
/* the lowest process of h's node alive in H's view + 1, 0: none */
#define LIVE1(h) ((h) < 2 && !HD(0) -> 1 : ((h) < 2 && !HD(1) -> 2 : 0))
/* every lease of h's node ended */
#define NODE_ENDED(h) ((h) < 2 && lend[0] && lend[1] || (h) == 2 && lend[2])
/* the model's bound on RELs in flight (REL slots): H sends a SETTLE only while
   fewer than two RELs naming the holder are in flight and two slots are free */
#define RELS(v) ((rw[0] == (v)) + (rw[1] == (v)) + (rw[2] == (v)) + (rw[3] == (v)))
#define RELROOM (RELS(hold) < 2 && RELS(0) >= 2)
#define SCAN (hold != 0 && hq[0] != 0 && TRIGGER(hold - 1))

/* the first waiter holds in a new epoch, with DEAD flag df (1; a constant: grant()
   sets hold before it reads its flag) */
inline takeover(df) {
#if REACH == 3
    assert(false);                          /* reach: a whole-node takeover */
#endif
#ifndef BUG_NO_NEW_EPOCH
    htok = maxtok;                          /* grant() adds one: a new epoch */
#endif
#ifdef PAUSE
    if                                      /* (d): C's use taken over while C, */
    :: hold == 3 && zcs -> owed = 1         /* fenced, was in its critical section */
    :: else -> skip
    fi;
    zcs = 0;
#endif
    dequeue(w);
    grant(w, df);
    w = 0
}

active proctype Home()
{
    byte p, w, t, i;
    bit f;
end:
    do
    :: atomic {                             /* ACQ(p) */
        (racq[0] || racq[1] || racq[2]) ->
        if
        :: racq[0] -> p = 0
        :: racq[1] -> p = 1
        :: racq[2] -> p = 2
        fi;
        racq[p] = 0; lu[p]++;
        if
        :: hold == 0 -> assert(hq[0] == 0); grant(p, 0)
        :: else -> enqueue(p)
        fi;
        p = 0
       }
#ifdef TIMEOUT
    :: atomic {                             /* CANCEL from C: queued: unlink */
        rcan -> rcan = 0;
        if
        :: hq[0] == 3 -> hq[0] = hq[1]; hq[1] = hq[2]; hq[2] = 0; cans = 1
        :: hq[1] == 3 -> hq[1] = hq[2]; hq[2] = 0; cans = 1
        :: hq[2] == 3 -> hq[2] = 0; cans = 1
        :: else -> skip                     /* granted: the GRANT crosses it */
        fi;
        TOUCH
       }
#endif
    :: atomic {                             /* REL(p, t, f) */
        (rw[0] != 0 || rw[1] != 0 || rw[2] != 0 || rw[3] != 0) ->
        if
        :: rw[0] != 0 -> i = 0
        :: rw[1] != 0 -> i = 1
        :: rw[2] != 0 -> i = 2
        :: rw[3] != 0 -> i = 3
        fi;
        p = rw[i] - 1; t = rt[i]; f = rd[i] & 1; w = rs[i];
#ifndef BUG_DEAD_GRANT_LOST
        /* UNUSED (by (2)): the holder never used its grant: its DEAD flag goes on */
        f = f || (rd[i] & 2) && hold == p + 1 && (w == 0 || w == hu) && hgd;
#endif
        if
        :: REL_HOLDS ->
#ifndef NO_CHECK_F
            assert(hold == p + 1 && relu[i] == hu);             /* (f) */
#endif
            if
            :: t > htok -> htok = t
            :: else -> skip
            fi;
            hold = 0; TOUCH;
            if
            :: hq[0] != 0 -> dequeue(w); grant(w, f)
#ifdef BUG_REL_DEAD_DROPPED
            :: else -> skip
#else
            :: else ->                      /* nobody waits: for the next */
#if REACH == 8
                assert(!f);                 /* reach */
#endif
                hdf = f
#endif
            fi
        :: else ->                          /* not the holder's use: ignored */
#if REACH == 11
            assert(!(p == 2 && lend[2]));   /* reach: a fenced C's stale REL */
#endif
            skip
        fi;
        rw[i] = 0; rt[i] = 0; rd[i] = 0; rs[i] = 0; relu[i] = 0;
        p = 0; t = 0; f = 0; i = 0; w = 0
       }
    /* the scan: a holder, someone queued, the trigger; then SETTLE to the
       lowest live process of the holder's node, or the takeover */
#ifndef BUG_NO_SETTLE
    :: atomic {
        SCAN && LIVE1(hold - 1) != 0 && spend[LIVE1(hold - 1) - 1] == 0 &&
        !squiet && RELROOM ->
        p = LIVE1(hold - 1) - 1; spend[p] = hold; ss[p] = hu; chg[p] = 0; p = 0
       }
#endif
#ifdef BUG_TAKEOVER_NO_LEASE_WAIT
    :: atomic { SCAN && LIVE1(hold - 1) == 0 -> takeover(1) }
#else
    :: atomic { SCAN && LIVE1(hold - 1) == 0 && NODE_ENDED(hold - 1) -> takeover(1) }
#endif
#ifdef BUG_TAKEOVER_ONE_DEAD
    :: atomic { hold != 0 && hq[0] != 0 && HD(hold - 1) && lend[hold - 1] ->
                takeover(1) }
#endif
    od
}

/* ---- the processes ------------------------------------------------------------ */

/* -DCRASHABLE=mask: only these processes may crash (bit p; default all) */
#ifdef CRASHABLE
#define MAY_CRASH (crashes > 0 && (CRASHABLE & (1 << me)))
#else
#define MAY_CRASH (crashes > 0)
#endif

/* A crash instead of the next step: leaves the critical section's count */
#define CRASH \
    atomic { \
        MAY_CRASH -> crashes--; dead[me] = 1; \
        if \
        :: incsp == me + 1 -> incs--; incsp = 0; owed = 1 \
        :: else -> skip \
        fi; \
        TOUCH; tok = 0; lst = 0; gdf = 0; ho = 0; gsq = 0 \
    }; \
    goto stopped
/* the `skip` keeps an `else` in body from being weighed against the crash */
#define STEP(body) if :: atomic { skip; body } :: CRASH fi

/* entering the critical section with token tok, status lst || gdf */
inline enter() {
    incs++; incsp = me + 1;
    assert(incs == 1);                                          /* (a) */
    assert(tok > lasttok); lasttok = tok;                       /* (b) */
#ifndef NO_CHECK_D
    if
    :: owed -> assert(lst || gdf); owed = 0                     /* (d) */
    :: else -> skip
    fi
#endif
}

/* A and B: node X */
active [2] proctype X()
{
    byte me = _pid - 1;                     /* Home is pid 0 */
    byte u, tok, gsq;
    bit lst, gdf, ho;

    for (u : 1 .. (me == 0 -> LOOPS_A : LOOPS_B)) {
        /* the node-local lock */
        STEP(if
             :: lown == 0 -> assert(lw[0] == 0);
                 lown = me + 1; ntok++; ISSUE(ntok); lst = 0; ho = 1
             :: LDEAD && !LIVEW ->          /* its holder died: recover */
                 lown = me + 1; ntok++; ISSUE(ntok); lst = 1; ho = 1
             :: else ->                     /* wait in its FIFO */
                 if
                 :: lw[0] == 0 -> lw[0] = me + 1
                 :: else -> lw[1] = me + 1
                 fi
             fi;
             TOUCH);
        if
        :: ho -> ho = 0
        :: else ->
            do
            :: atomic { lown == me + 1 ->   /* handed to me */
                   ntok++; ISSUE(ntok); lst = 0; TOUCH; break }
            :: atomic { LDEAD && (lw[0] == me + 1 ||
                                  lw[1] == me + 1 && dead[lw[0] - 1]) ->
                   if                       /* first live waiter: recover */
                   :: lw[0] == me + 1 -> lw[0] = lw[1]; lw[1] = 0
                   :: else -> lw[1] = 0
                   fi;
                   lown = me + 1; ntok++; ISSUE(ntok); lst = 1; TOUCH; break }
            :: CRASH
            od
        fi;
        /* the node's place */
        STEP(if
             :: qn1 != 0 ->                 /* the node holds: through qn1 */
#if REACH == 5
                 assert(!(lst && dead[qn1 - 1]));   /* reach */
#endif
                 tok = ntok; ho = 1
             :: else -> racq[me] = 1;
                 lst = 0    /* cohort.c: with leases, the GRANT's flag alone */
             fi);
        if
        :: ho -> ho = 0
        :: else ->
            do                              /* the GRANT's handler */
            :: atomic { gk[me] -> tok = gt[me]; gdf = gd[me]; gsq = gs[me];
                        gk[me] = 0; gt[me] = 0; gd[me] = 0; gs[me] = 0; break }
            :: CRASH
            od;
            /* record the node's place (fix 6: and its use) */
            STEP(qn1 = me + 1; qs = gsq; ntok = tok; hoffs = 0; TOUCH; gsq = 0)
        fi;
        STEP(enter());
        /* leave; hand to a node-mate, or pass the node's lock on */
        STEP(incs--; incsp = 0;
             if
             :: qn1 != 0 && hoffs < BOUND && lw[0] != 0 ->
                 hoffs++; lrelease(); ho = 1
#if REACH == 4
                 ; handed = 1
#endif
             :: else ->
                 assert(qn1 != 0);
#if REACH == 4
                 assert(!(handed && dead[qn1 - 1]));   /* reach */
#endif
                 send_rel(qn1 - 1, ntok, 0, qs); qn1 = 0; qs = 0; hoffs = 0; TOUCH
             fi);
        if
        :: ho -> ho = 0
        :: else -> STEP(lrelease())
        fi;
        atomic { tok = 0; lst = 0; gdf = 0 }
    }
    atomic { done++; u = 0 };
    /* done; it may still crash */
end_idle:
    if
    :: atomic { MAY_CRASH -> crashes--; dead[me] = 1; TOUCH }
    fi;
    goto end_stopped;
stopped:
    done++;
end_stopped:
    skip
}

/* C: node Y, alone on it */
active proctype Y()
{
    byte me = 2;
    byte u, tok, gsq;
    bit lst, gdf, ho;
#ifdef PAUSE
    byte at;                                /* C paused: 1 before its cs, 2 in it */
#endif

    for (u : 1 .. LOOPS_C) {
        STEP(racq[me] = 1);
        do
        :: atomic { gk[me] -> tok = gt[me]; gdf = gd[me]; gsq = gs[me];
                    gk[me] = 0; gt[me] = 0; gd[me] = 0; gs[me] = 0; break }
#ifdef TIMEOUT
        :: atomic { timeouts > 0 && !gk[me] -> timeouts--; rcan = 1 };
            /* gave up: CANCEL; its answer is CANCELLED or the GRANT */
            do
            :: atomic { gk[me] -> tok = gt[me]; gdf = gd[me]; gsq = gs[me];
                        gk[me] = 0; gt[me] = 0; gd[me] = 0; gs[me] = 0; break }
            :: atomic { cans -> cans = 0; goto next }
            :: CRASH
            od;
            break
#endif
        :: CRASH
        od;
#ifdef PAUSE
        /* holding (GRANT taken): each step may instead be a crash or a pause */
pre_cs:
        if
        :: atomic { skip; enter() }
        :: CRASH
        :: atomic { pauses > 0 -> pauses--; paused = 1; at = 1 }; goto pwait
        fi;
in_cs:
        if
        :: atomic { skip; incs--; incsp = 0; send_rel(me, tok, 0, gsq); TOUCH }
        :: CRASH
        :: atomic { pauses > 0 -> pauses--; paused = 1; at = 2 }; goto pwait
        fi;
#else
        STEP(enter());
        STEP(incs--; incsp = 0; send_rel(me, tok, 0, gsq); TOUCH);
#endif
        atomic { tok = 0; gdf = 0; gsq = 0 }
#ifdef TIMEOUT
next:
        skip
#endif
    }
    atomic { done++; u = 0 };
end_idle:
    if
    :: atomic { MAY_CRASH -> crashes--; dead[me] = 1; TOUCH }
    fi;
    goto end_stopped;
#ifdef PAUSE
/* The REL of a fenced C: rdlm_lock_keep undoes an acquire that finds the lease
   lost (paused before its critical section, at == 1); one granted DEAD (C alone on
   its node: its acquire's RDLM_OWNER_DEAD is the GRANT's flag) is given up as a dead
   holder's, REL flagged DEAD (ops->undo_dead, rdlm_glock_pass_dead), so H keeps the
   flag for the next grant; otherwise flags 0, as rdlm_lock_release after one
   (at == 2). -DBUG_UNDO_PLAIN: the undo's REL flags 0 (the code before the fix:
   pause_bug_undo_plain). -DFIX_UNDO_UNUSED: it says UNUSED instead (H carries the
   grant's DEAD flag over, fix 5's path; the alternative the model checked first). */
#if defined(BUG_UNDO_PLAIN)
#define UNDO_FLAGS 0
#elif defined(FIX_UNDO_UNUSED)
#define UNDO_FLAGS (at == 1 -> 2 : 0)
#else
#define UNDO_FLAGS (at == 1 && gdf -> 1 : 0)
#endif
    /* paused: the lease may end meanwhile (the authority); C resumes, or stays
       stopped for good, or is killed */
pwait:
    if
    :: atomic { !lend[me] && at == 1 -> paused = 0; at = 0 }; goto pre_cs
    :: atomic { !lend[me] && at == 2 -> paused = 0; at = 0 }; goto in_cs
    :: atomic { lend[me] -> paused = 0;
                /* fenced: its release fails (RDLM_ERR_LEASE_EXPIRED), but the REL
                   for the use it held goes out; it acquires nothing any more */
                send_rel(me, tok, UNDO_FLAGS, gsq); TOUCH;
                tok = 0; gdf = 0; gsq = 0; u = 0; at = 0; done++ }; goto end_stopped
    :: atomic { at = 0; tok = 0; gdf = 0; gsq = 0; u = 0; done++ };
        goto end_stopped                    /* stopped for good */
    :: CRASH
    fi;
#endif
stopped:
    done++;
end_stopped:
    skip
}

/* SETTLE(h) at X's process P (pids 4, 5): P's own steps; each finds P dead or not */
#define SSTEP(body) \
    if \
    :: atomic { !dead[me] -> body } \
    :: atomic { dead[me] -> goto sdead } \
    fi

active [2] proctype Settle()
{
    byte me = _pid - 4;
    byte h, hs;
    bit got, td, eff;
end:
    do
    :: atomic { spend[me] != 0 && !dead[me] ->
                h = spend[me] - 1; hs = ss[me]; spend[me] = 0; ss[me] = 0;
                sbusy[me] = 1 };
        eff = 0;
        /* (1): the entry says the node holds through q_h */
        SSTEP(got = (qn1 == h + 1));
        if
        :: got ->
path1:
#ifdef BUG_SETTLE_IGNORES_BUSY
            SSTEP(if
                  :: qn1 == h + 1 ->
                      send_rel(h, ntok, 0, qs); qn1 = 0; qs = 0; hoffs = 0; TOUCH;
                      eff = 1
                  :: else -> skip
                  fi);
            got = 0
#else
            SSTEP(if                        /* try the local lock */
                  :: lown == 0 -> assert(lw[0] == 0);
                      lown = me + 3; ntok++; ISSUE(ntok); td = 0; got = 1; TOUCH
                  :: LDEAD && !LIVEW ->
                      lown = me + 3; ntok++; ISSUE(ntok); td = 1; got = 1; TOUCH
                  :: else -> got = 0        /* BUSY */
                  fi);
            if
            :: got ->
                SSTEP(if
                      :: qn1 == h + 1 ->    /* still: pass it on */
#if REACH == 1
                          assert(!(td && owed));        /* reach */
#endif
#if REACH == 6
                          assert(!(td && h == me));     /* reach */
#endif
                          send_rel(h, ntok, td, qs); qn1 = 0; qs = 0; hoffs = 0; TOUCH;
                          eff = 1;
                          if
                          :: td -> sdq = h + 1
                          :: else -> skip
                          fi
                      :: else -> skip
                      fi);
                SSTEP(lrelease(); eff = 1);
                got = 0; td = 0
            :: else -> skip
            fi
#endif
        :: else ->
            /* (2): h's process gone (P's view: exact), the entry not q_h */
            SSTEP(if
#if defined(BUG_SETTLE_NO_GONE_CHECK)
                  :: qn1 != h + 1 ->
#elif defined(CODE_SETTLE_HELD)
                  /* cohort.c (e688c1d): gone; the entry read again: q_h by now
                     ("an rwlock's writer"): CAS it to none and REL flagged DEAD,
                     without the local lock */
                  :: dead[h] && qn1 == h + 1 ->
                      qn1 = 0; qs = 0; TOUCH; eff = 1;
                      send_rel(h, ntok, 3, hs)
                  :: dead[h] && qn1 != h + 1 ->
#elif defined(BUG_SETTLE_READ_FIRST)
                  :: dead[h] ->             /* the entry read in (1) */
#else
                  :: dead[h] && qn1 != h + 1 ->
#endif
#if REACH == 2
                      assert(false);        /* reach: a REL via (2) */
#endif
                      /* changes nothing until it arrives (H's handling
                         does): sent again it would be the same REL */
#ifdef BUG_SETTLE_REL_NO_DEAD
                      send_rel(h, ntok, 2, hs)
#else
#if REACH == 7
                      assert(sdq != h + 1);             /* reach */
#endif
                      /* DEAD if (1) passed it DEAD (fix 3); UNUSED (fix 5) */
                      send_rel(h, ntok, (sdq == h + 1) + 2, hs)
#endif
#if !defined(BUG_SETTLE_NO_GONE_CHECK) && !defined(BUG_SETTLE_READ_FIRST) && \
    !defined(CODE_SETTLE_HELD)
                  :: dead[h] && qn1 == h + 1 -> got = 1     /* do (1) */
#endif
                  :: else -> skip           /* (3) */
                  fi);
            if
            :: got -> goto path1
            :: else -> skip
            fi
        fi;
        /* nothing changed by it, nor while it ran: H need not send it again */
        atomic {
            if
            :: !eff && !chg[me] -> squiet = 1
            :: else -> skip
            fi;
            h = 0; hs = 0; eff = 0; sbusy[me] = 0
        }
    od;
sdead:
    atomic { h = 0; hs = 0; got = 0; td = 0; eff = 0 }
}

/* The lease authority ends a crashed process's lease at any later moment; the
   environment may forfeit the rest of the crash budget; -DSUSPECT: H may take a
   live process for dead, once */
active proctype Authority()
{
end:
    do
    :: atomic { dead[0] && !lend[0] -> lend[0] = 1 }
    :: atomic { dead[1] && !lend[1] -> lend[1] = 1 }
    :: atomic { dead[2] && !lend[2] -> lend[2] = 1 }
#ifdef PAUSE
    /* a paused C stops renewing: its lease may end (never a running one's); if it
       was in its critical section it is a fenced zombie there (no longer counted) */
    :: atomic { paused && !dead[2] && !lend[2] -> lend[2] = 1; wq = 0;
                if
                :: incsp == 3 -> incs--; incsp = 0; zcs = 1
                :: else -> skip
                fi }
#endif
    :: atomic { crashes > 0 -> crashes = 0 }
#ifdef SUSPECT
    :: atomic { suspects > 0 && !dead[0] && !susp[0] -> suspects--; susp[0] = 1; TOUCH }
    :: atomic { suspects > 0 && !dead[1] && !susp[1] -> suspects--; susp[1] = 1; TOUCH }
    :: atomic { suspects > 0 && !dead[2] && !susp[2] -> suspects--; susp[2] = 1; TOUCH }
#endif
    od
}

/* (e): every process done or dead, nothing in flight to H or to a live process */
#ifdef PAUSE
#define PAUSED_HOLDS || hold == 3 && paused /* C stopped for good, holding */
#define PAUSED_IN_CS || incsp == 3 && paused  /* its lease not ended yet */
#else
#define PAUSED_IN_CS
#define PAUSED_HOLDS
#endif
active proctype Final()
{
    atomic {
        done == NP && !racq[0] && !racq[1] && !racq[2] && !CANCEL_PENDING &&
        rw[0] == 0 && rw[1] == 0 && rw[2] == 0 && rw[3] == 0 &&
        (!gk[0] || dead[0]) && (!gk[1] || dead[1]) && (!gk[2] || dead[2]) &&
        (spend[0] == 0 && !sbusy[0] || dead[0]) &&
        (spend[1] == 0 && !sbusy[1] || dead[1]) ->
        assert(incs == 0 PAUSED_IN_CS);
        assert((hq[0] == 0 || dead[hq[0] - 1]) && (hq[1] == 0 || dead[hq[1] - 1]) &&
               (hq[2] == 0 || dead[hq[2] - 1]));
        assert(hold == 0 || dead[hold - 1] || hold < 3 && LDEAD PAUSED_HOLDS);
        assert(qn1 == 0 || qn1 == hold || dead[0] && dead[1])
    }
}

#ifdef PAUSE
/* H's watch of a paused holder (rdlm_amq_scan + rdlm_amq_held_long, then
   rdlm_amq_recover with held_long): C holds with a waiter and is not known dead;
   "held long" is any moment then. The scan and the FATE question are one step (the
   scan only reads; the answer is read when it comes), the take-over another (under
   H's lock again: it re-checks the use and the queue). Only C (alone on node Y) is
   watched: with a live node-mate nothing is recovered (docs, Limits). */
active proctype Watch()
{
    byte w, wu;
    bit ans;
end:
    do
    :: atomic {
        hold == 3 && hq[0] != 0 && !HD(2) && !wq ->
        wu = hu;
#ifdef BUG_FATE_NO_ENDED
        ans = 1;                            /* planted: no question */
#else
        ans = lend[2];                      /* FATE: ended? */
#endif
        if
        :: !ans -> wq = 1                   /* asked again once the lease ended */
        :: else -> skip
        fi
       };
        atomic {
            if
            :: ans && hold == 3 && hu == wu && hq[0] != 0 ->
#if REACH == 9
                assert(false);              /* reach: a fenced holder taken over */
#endif
#if REACH == 10
                assert(!zcs);               /* reach: ... from its critical section */
#endif
#ifdef BUG_PAUSE_NO_DEAD
                takeover(0)                 /* planted: a fenced holder's takeover OK */
#else
                takeover(1)
#endif
            :: else -> skip
            fi;
            wu = 0; ans = 0
        }
    od
}
#endif
