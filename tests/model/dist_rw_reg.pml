/*
 * dist_rw_reg.pml -- spin model of the cross-node rwlock's node registration
 * (core/global/rwlock.c) with the dead-reader repair of commit 6d60704
 * (rdlm_rw_repair, run by rdlm_global_rw_sweep from a progress thread).
 *
 * Words. At the home: R = WRITER | count of registered reader nodes (kept as a bool
 * Rw and a byte Rn: a fetch-add of WRITER toggles Rw, mod 2^64 as in the code) and W,
 * the writers' queue lock (a mutex here: holder + 1). Per node, in shared memory: the
 * gate (the entry's ticket lock: holder + 1), the node count nc (rw_node_readers, low
 * 32 bits) and, with -DBOUND=b, the joins nj (its high 32 bits); per process its READ
 * records rec[p] and whether it is dead.
 *
 * Processes. Node X: reader A (the one that may crash, CRASHES = 1 by default), reader
 * B (-DB_IDLE: B does not read) and B's progress thread P, which runs the repair.
 * Node Y: writer C; -DYREADER adds a reader D on Y (it shares Y's gate with C);
 * -DX_WRITER puts writer E on X instead of C (below). Each reader reads once, each
 * writer writes once.
 *
 * Read acquire (rdlm_global_rwlock_read_acquire): the gate; join (rdlm_rw_join): load
 * the node word; [-DBOUND: if nc != 0 and nj >= BOUND, fetch-add 0 on R; if WRITER,
 * rdlm_rw_wait_writers(add 0): W, pass W; nj := 0; reload]; while nc != 0: CAS nc += 1
 * (nj += 1) -> joined; else register (rdlm_rw_register): fetch-add R +1; if WRITER was
 * set: fetch-add R -1, then W, fetch-add R +1, pass W; then nc += 1. Joined: the READ
 * record (rdlm_rwlock_local_read_enter), release the gate.
 * Read release (rdlm_global_rwlock_read_release; not under the gate): nc -= 1
 * (fetch_sub); if it was 1: fetch-add R -1; then the READ record goes.
 * Write (rdlm_global_rwlock_write_acquire / _release): the own node's gate (and, with
 * D, its local readers drained: D's record gone), W, fetch-add WRITER (if it was set:
 * once more: no writer dies here, so never), wait until Rn == 0 (the drain's polls: a
 * poll that finds readers changes nothing, so it is one step taken when Rn == 0), the
 * critical section, fetch-add WRITER (clear), pass W, release the gate.
 * Repair (rdlm_rw_repair): taken by P when a node-mate of B is dead and nc != 0 (the
 * sweep's conditions): try the gate (busy: nothing, unless the mark nw is set); v :=
 * the node word; without the gate, nothing unless v has the mark (rdlm_rw_fix_count's
 * "gated" flag); live := the READ records of live processes, one process at a time; if
 * nc(v) > live: CAS the word (mark included) from v to (nw(v), nj(v), live), and if
 * that succeeded and live == 0: fetch-add R -1; release the gate.
 * -DBUG_REPAIR_MARK_NOT_COMPARED: without the gate, the repair acts on a v whatever
 * its mark, and its CAS leaves the mark out (the model before the writer's mark).
 * A repair that finds the gate busy, or that changes nothing, leaves no trace;
 * P runs one only when the state of node X (nc, records, deaths, gate) differs from the
 * one at the end of its last repair that changed nothing (the same repair again would
 * change nothing again), so P waits at an end state once nothing is left to repair and
 * a stall is an invalid end state.
 *
 * Writer on node X (-DX_WRITER, since cc6819f: rdlm_rw_drain's repair): writer E on
 * node X instead of C on Y (-DXY_WRITERS: both). E shares X's gate with A and B.
 * rdlm_rwlock_local_write_acquire: X's gate, then X's local drain: rw_word's count
 * is 0 (each reader of X with a record has done its local release's rw_word -= 1:
 * lv, the record still READ, LEAVING, until the next step; with X_WRITER the reader's
 * release has that step), or no live process has a READ record (rdlm_rw_reset_dead).
 * Then W, WRITER, and the drain: a loop that either finds Rn == 0, or, when a process
 * of X is dead and nc != 0, repairs X's count itself (rdlm_rw_fix_count, holding the
 * gate; P's repair cannot take it): v := the word; live := the live READ records, one
 * process at a time; if nc(v) > live: CAS to (nj(v), live), and if that succeeded and
 * live == 0: R -1. As for P, E repairs only when X's state differs from the one at
 * the end of its last repair that changed nothing (ekey), so a writer that waits for
 * good is an invalid end state. -DBUG_NO_DRAIN_REPAIR: no such repair (the code before
 * cc6819f); -DBUG_DRAIN_REPAIR_COUNTS_ALL: live counts dead processes' records too.
 * E marks its wait in W in X's word (nw, RDLM_NR_WAITING: set after its local drain,
 * cleared once it has W), so that P repairs without the gate meanwhile (with
 * -DXY_WRITERS, E waits behind C). C's mark on Y's word is left out: nothing repairs
 * Y's count here. -DBUG_NO_WRITER_MARK: E does not mark (the code before: with
 * -DXY_WRITERS it stalls).
 *
 * Crashes. The crasher may die at any step (CRASH): its READ record stays, counted as
 * dead; its share of nc stays; a gate or W it holds goes to the next taker (ticket.c
 * and glock.c take over from a dead holder; a try of the gate, the repair's, does so
 * too, ticket.c's due check). -DOUTSIDE_R_WINDOWS rules out a crash in the windows
 * between a change of R and the matching change of nc (CRASH_RW): after register's
 * fetch-add +1 and before nc += 1 (in rdlm_rw_wait_writers too), between the
 * back-off's +1 and -1, and after the release's nc 1 -> 0 and before its R -1.
 *
 * Properties:
 *   (a) safety: no writer in its critical section while a live reader holds a share
 *       (checked when either enters; the shares are intervals);
 *   (b) no stall: every live process finishes (no invalid end state);
 *   (c) at the end (all finished, P idle): Rn == 0, no WRITER, W free or dead, every
 *       node count == the live holds (0);
 *   (e) no borrow: a fetch-add -1 on R, or a fetch_sub on nc, never finds 0 (it would
 *       borrow from WRITER, or from the joins).
 * -DNO_CHECK_C and -DNO_CHECK_E leave (c), (e) out, to see what else a bug breaks.
 *
 * The joiner's re-check (-DBOUND), since the fix of stall 2: if WRITER, it repairs the
 * count itself (it holds the gate) and marks its wait (nw: RDLM_NR_WAITING) until it
 * returns; the repair may then run without the gate (on a v with the mark).
 * -DBUG_RECHECK_NO_REPAIR and -DBUG_NO_WAIT_MARK take either out (both: the code of
 * 6d60704).
 *
 * Planted bugs (-DBUG_x): REPAIR_NO_GATE, REPAIR_TO_ZERO, LEAVE_RECORD_FIRST,
 * NO_REPAIR, REPAIR_NO_DROP, NO_WAIT_MARK; with -DX_WRITER: NO_DRAIN_REPAIR,
 * DRAIN_REPAIR_COUNTS_ALL (stalls), NO_WRITER_MARK (with -DXY_WRITERS: a stall),
 * REPAIR_MARK_NOT_COMPARED ((e)), DRAIN_REPAIR_DROP_ALWAYS (R -1 whenever the CAS
 * succeeded: not caught, see README.md). Reach checks (-DREACH=n, the assertion must
 * fail):
 *   1  a repair drops the node's registration;
 *   2  the writer gets in after a repair dropped a registration;
 *   3  (-DX_WRITER) the writer's own repair drops X's registration.
 */

#define A 0
#define B 1
#define C 2
#define D 3
#define PP 4 /* B's progress thread, as a gate holder */
#ifdef X_WRITER
#define E 5  /* the writer on node X */
#define NPROC 6
#else
#define NPROC 5
#endif
#define NX 0
#define NY 1

#ifndef CRASHES
#define CRASHES 1
#endif
#define CRASHER A

bool Rw;              /* R: WRITER */
byte Rn;              /* R: registered reader nodes */
byte W;               /* writers' queue lock: holder + 1 */
byte gate[2];         /* node gates: holder + 1 */
byte nc[2];           /* node counts */
byte nj[2];           /* joins since the last check of R (-DBOUND) */
bool nw[2];           /* the gate's holder waits behind a writer (RDLM_NR_WAITING) */
byte rec[NPROC];      /* READ records */
bool dead[NPROC];
bool incs[NPROC];     /* ghost: a reader in its critical section */
bool wcs;             /* ghost: the writer in its critical section */
byte ncrash = CRASHES;
byte done;            /* processes finished or dead (readers, writer) */
byte ndone;           /* how many there are */
bool dropped;         /* ghost: a repair dropped a registration */
short lastkey = -1;   /* ghost: node X's state after P's last no-op repair */
#ifdef X_WRITER
short ekey = -1;      /* ghost: node X's state after E's last no-op repair */
bool lv[NPROC];       /* a reader's local share gone (rw_word -= 1), its record still
                         READ (LEAVING) until the next step */
#endif

#define XKEY (nw[NX] * 256 + nc[NX] * 32 + nj[NX] * 8 + rec[A] * 4 + rec[B] * 2 + dead[A])

#define TAKEABLE(g) (g == 0 || dead[g - 1])

/* (e), -DNO_CHECK_E: unchecked (a borrow wraps) */
#ifdef NO_CHECK_E
#define CHECK_E(c) skip
#else
#define CHECK_E(c) assert(c)
#endif
/* fetch-add R -1 */
#define R_DEC atomic { CHECK_E(Rn > 0); Rn-- }

inline crash() {
    if
    :: atomic { ncrash > 0 && me == CRASHER -> ncrash--; dead[me] = true }; goto died
    :: true
    fi
}
#define CRASH crash()

#ifdef OUTSIDE_R_WINDOWS
#define CRASH_RW skip
#else
#define CRASH_RW CRASH
#endif

#ifdef REACH
#define REACHED(n) assert(REACH != n)
#else
#define REACHED(n) skip
#endif

inline take_w() {
    atomic { TAKEABLE(W) -> W = me + 1 }
}

proctype Reader(byte me; byte n)
{
    byte v, j, live;
    bool wr;

    CRASH;
    atomic { TAKEABLE(gate[n]) -> gate[n] = me + 1 };
    CRASH;
    atomic { v = nc[n]; j = nj[n] };
#ifdef BOUND
    if
    :: v != 0 && j >= BOUND ->
        CRASH;
        if
        :: Rw ->      /* rdlm_rw_wait_writers(add 0), holding the gate */
#ifndef BUG_RECHECK_NO_REPAIR
            /* rdlm_rw_fix_count first (since the commit after 6d60704): the repair
               needs the gate this joiner keeps while it waits behind the writer */
            CRASH;
            atomic { v = nc[n]; j = nj[n] };
            live = 0;
            if
            :: n == NX && rec[A] != 0 && !dead[A] -> live = live + rec[A]
            :: else
            fi;
            if
            :: n == NX && rec[B] != 0 && !dead[B] -> live = live + rec[B]
            :: else
            fi;
            if
            :: n == NY && rec[D] != 0 && !dead[D] -> live = live + rec[D]
            :: else
            fi;
            if
            :: v > live ->
                atomic {
                    if
                    :: nc[n] == v && nj[n] == j -> nc[n] = live; wr = true
                    :: else -> wr = false
                    fi
                };
                if
                :: wr && live == 0 -> CRASH_RW; R_DEC; dropped = true
                :: else
                fi
            :: else
            fi;
#endif
#ifndef BUG_NO_WAIT_MARK
            nw[n] = true;         /* the sweep may repair without the gate now */
#endif
            CRASH;
            take_w();
            CRASH;
            W = 0;
            nw[n] = false;
            CRASH
        :: else
        fi;
        nj[n] = 0;
        CRASH;
        atomic { v = nc[n]; j = nj[n] }
    :: else
    fi;
#endif
join:
    if
    :: v != 0 ->
        CRASH;
        atomic {
            if
            :: nc[n] == v && nj[n] == j ->
                nc[n]++;
#ifdef BOUND
                nj[n]++;
#endif
                wr = true
            :: else -> v = nc[n]; j = nj[n]; wr = false
            fi
        };
        if
        :: wr -> goto joined
        :: else -> goto join
        fi
    :: else
    fi;
    /* rdlm_rw_register */
    CRASH;
    atomic { wr = Rw; Rn++ };
    if
    :: wr ->
        CRASH_RW;
        R_DEC;          /* back off */
        CRASH;
        take_w();       /* rdlm_rw_wait_writers(add 1) */
        CRASH;
        Rn++;
        CRASH_RW;
        W = 0;
        CRASH_RW
    :: else ->
        CRASH_RW
    fi;
    nc[n]++;
joined:
    CRASH;              /* counted, no record yet, holding the gate */
    rec[me]++;
    CRASH;
    gate[n] = 0;
    atomic { incs[me] = true; assert(!wcs) };   /* (a) */
    CRASH;
    incs[me] = false;
    /* rdlm_global_rwlock_read_release */
#ifdef BUG_LEAVE_RECORD_FIRST
    rec[me]--;
    CRASH;
#endif
    atomic { v = nc[n]; CHECK_E(v > 0); nc[n]-- };
    if
    :: v == 1 ->
        CRASH_RW;
        R_DEC
    :: else
    fi;
#ifndef BUG_LEAVE_RECORD_FIRST
    CRASH;
#ifdef X_WRITER
    lv[me] = true;      /* rdlm_rwlock_local_read_release: LEAVING, rw_word -= 1 */
    CRASH;
#endif
    rec[me]--;
#endif
    done++;
    goto out;
died:
    done++;
out:
    skip
}

#ifdef X_WRITER
/* Node X's local drain (rdlm_rwlock_drain_readers): rw_word's count is 0 (every
   reader of X with a record has left it: LEAVING, or no record), or the reset of a
   dead reader's count (rdlm_rw_reset_dead) when no live process has a READ record. */
#define X_LOCAL_DRAINED                                                                \
    (((rec[A] == 0 || lv[A]) && (rec[B] == 0 || lv[B])) ||                             \
     ((rec[A] == 0 || dead[A]) && (rec[B] == 0 || dead[B])))
/* the drain's repair: a node-mate is gone and nc != 0 (rdlm_rw_drain), and X's state
   differs from the one at the end of E's last repair that changed nothing */
#define DRAIN_REPAIR_DUE(n) (n == NX && dead[A] && nc[n] != 0 && XKEY != ekey)
#ifdef BUG_DRAIN_REPAIR_COUNTS_ALL
#define DRAIN_LIVE(p) (rec[p] != 0)
#else
#define DRAIN_LIVE(p) (rec[p] != 0 && !dead[p])
#endif
#endif

proctype Writer(byte me; byte n)
{
    bool wasw;
#ifdef X_WRITER
    byte v, j, live;
    short k0;
    bool ok;
#endif

    atomic { TAKEABLE(gate[n]) -> gate[n] = me + 1 };
#ifdef YREADER
#ifdef X_WRITER
    if
    :: n == NY -> (rec[D] == 0)
    :: else
    fi;
#else
    (rec[D] == 0);      /* the local readers drained */
#endif
#endif
#ifdef X_WRITER
    if
    :: n == NX -> X_LOCAL_DRAINED
    :: else
    fi;
#endif
#if defined(X_WRITER) && !defined(BUG_NO_WRITER_MARK)
    if
    :: n == NX ->
        nw[n] = true;   /* mark the wait in W (RDLM_NR_WAITING): P may repair */
        take_w();
        nw[n] = false
    :: else ->
        take_w()
    fi;
#else
    take_w();
#endif
    atomic { wasw = Rw; Rw = !Rw };
    if
    :: wasw -> Rw = !Rw     /* rdlm_rw_set_writer: once more */
    :: else
    fi;
#ifdef X_WRITER
    /* rdlm_rw_drain: poll R; holding X's gate, E repairs X's count itself
       (rdlm_rw_fix_count), the same steps as P's repair */
    do
    :: Rn == 0 -> break
#ifndef BUG_NO_DRAIN_REPAIR
    :: atomic { DRAIN_REPAIR_DUE(n) -> k0 = XKEY };
       atomic { v = nc[n]; j = nj[n] };
       live = 0;
       if
       :: DRAIN_LIVE(A) -> live = live + rec[A]
       :: else
       fi;
       if
       :: DRAIN_LIVE(B) -> live = live + rec[B]
       :: else
       fi;
       ok = false;
       if
       :: v > live ->
           atomic {
               if
               :: nc[n] == v && nj[n] == j -> nc[n] = live; ok = true
               :: else
               fi
           };
           if
#ifdef BUG_DRAIN_REPAIR_DROP_ALWAYS
           :: ok ->
#else
           :: ok && live == 0 ->
#endif
               R_DEC;
               dropped = true;
               REACHED(3)
           :: else
           fi
       :: else
       fi;
       atomic {
           if
           :: !ok && XKEY == k0 -> ekey = k0
           :: else
           fi
       }
#endif
    od;
#else
    (Rn == 0);              /* rdlm_rw_drain */
#endif
    atomic {
        wcs = true;
        assert(!(incs[A] && !dead[A]) && !(incs[B] && !dead[B]) &&
               !(incs[D] && !dead[D]));                 /* (a) */
        if
        :: dropped -> REACHED(2)
        :: else
        fi
    };
    wcs = false;
    Rw = !Rw;               /* clear WRITER */
    W = 0;
    gate[n] = 0;
    done++
}

#define REPAIR_WANTED(n) (dead[A] && nc[n] != 0 && XKEY != lastkey)
#ifdef BUG_REPAIR_NO_GATE
#define REPAIR_DUE(n) REPAIR_WANTED(n)
#define REPAIR_GATE(n) skip
#else
/* the gate, or its holder waits behind a writer (RDLM_NR_WAITING): no gate needed */
#define REPAIR_DUE(n) (REPAIR_WANTED(n) && (TAKEABLE(gate[n]) || nw[n]))
#define REPAIR_GATE(n)                                                                 \
    if                                                                                 \
    :: TAKEABLE(gate[n]) -> gate[n] = me + 1; g = true                                 \
    :: else -> g = false                                                               \
    fi
#endif

/* BUG_REPAIR_NO_GATE: the repair acts as if it held the gate, mark or not */
#if defined(BUG_REPAIR_MARK_NOT_COMPARED) || defined(BUG_REPAIR_NO_GATE)
#define NW_LOAD(n) skip
#define NW_SAME(n) true
#else
/* the mark is a bit of the node word (RDLM_NR_WAITING): without the gate the repair
   acts only on a v with the mark (v := 0: nothing to do), and its CAS compares it */
#define NW_LOAD(n) w0 = nw[n]; if :: !g && !w0 -> v = 0 :: else fi
#define NW_SAME(n) nw[n] == w0
#endif

/* B's progress thread: rdlm_global_rw_sweep -> rdlm_rw_repair on node X. */
proctype Repair(byte me; byte n)
{
    byte v, j, live;
    bool w0;
    short k0;
    bool ok, g;

end_idle:
    do
    :: atomic {
           REPAIR_DUE(n) -> REPAIR_GATE(n);
           k0 = XKEY
       };
       atomic { v = nc[n]; j = nj[n]; NW_LOAD(n) };
       live = 0;
       if
       :: rec[A] != 0 && !dead[A] -> live = live + rec[A]
       :: else
       fi;
       if
       :: rec[B] != 0 && !dead[B] -> live = live + rec[B]
       :: else
       fi;
       ok = false;
       if
       :: v > live ->
           atomic {
               if
               :: nc[n] == v && nj[n] == j && NW_SAME(n) ->
#ifdef BUG_REPAIR_TO_ZERO
                   nc[n] = 0;
#else
                   nc[n] = live;
#endif
                   ok = true
               :: else
               fi
           };
           if
           :: ok && live == 0 ->
#ifndef BUG_REPAIR_NO_DROP
               R_DEC;
               dropped = true;
               REACHED(1)
#else
               skip
#endif
           :: else
           fi
       :: else
       fi;
       atomic {
#ifndef BUG_REPAIR_NO_GATE
           if
           :: g -> gate[n] = 0
           :: else
           fi;
#endif
           if
           :: !ok && XKEY == k0 -> lastkey = k0
           :: else
           fi
       }
    od
}

init
{
    atomic {
#ifdef BOUND
        /* joins left by earlier readers: 0 .. BOUND */
        if
        :: nj[NX] = 0
        :: nj[NX] = BOUND
        fi;
#endif
        run Reader(A, NX);
        ndone = 1;
#ifndef B_IDLE
        run Reader(B, NX);
        ndone++;
#endif
#if !defined(X_WRITER) || defined(XY_WRITERS)
        run Writer(C, NY);
        ndone++;
#endif
#ifdef X_WRITER
        run Writer(E, NX);
        ndone++;
#endif
#ifdef YREADER
        run Reader(D, NY);
        ndone++;
#endif
#ifndef BUG_NO_REPAIR
        run Repair(PP, NX);
#endif
    }
    (done == ndone);
#ifndef NO_CHECK_C
    timeout ->
    /* (c) */
    assert(Rn == 0 && !Rw && TAKEABLE(W) && nc[NX] == 0 && nc[NY] == 0)
#endif
}
