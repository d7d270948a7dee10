/*
 * svc_slot.pml -- spin model of the slot life cycle of an rdlmd lock home
 * (core/svc/slot.c, layout.h; docs/distributed-locks.md "the slot life
 * cycle"): how a name without a slot takes one over, with a generation in the
 * key and word values that only grow, and how a MARK left by a claimer whose
 * session ended is given back.
 *
 * One bucket of S = 2 slots. At the start slot 0 is lock A's (key (A, 0),
 * word FREE(1)) and slot 1 is unused (no name, FREE(0)): a claimer of B takes
 * slot 1, or slot 0 once slot 1 is marked, so two claimers of B can end up in
 * two slots, and A's slot is re-keyed under its stale user. Every remote operation (a get of one word, a compare-and-swap, the
 * floor's CAS-max) is ONE step; a get of the bucket reads each slot's key and
 * word as two steps in either order (one get reads them in no set order).
 *
 * Processes:
 *   claimer 1, claimer 2  both claim name B (slot.c steps 1-7: read the
 *       bucket; victim = an unused free slot, else the free one with the
 *       smallest word; raise the floor; CAS word -> MARK; CAS key -> (B, gen +
 *       1), on failure put the word back; read the other keys and yield if one
 *       names B; finish: CAS MARK -> FREE(floor + 1)). At most RESTARTS
 *       rounds each.
 *   fate     may end the session of one claimer at any moment (it was paused
 *       past its lease); that claimer does not know and may go on (stale).
 *   settler  gives back a MARK whose claimer's session ended: CAS the MARK to
 *       a MARK of its own, clear the key (read, CAS to (none, gen + 1), until
 *       it succeeds), free the word at floor + 1.
 *   user     a client that resolved lock A at slot 0 (key (A, 0)) and then was
 *       paused: its guess is FREE(1), the word its own release left. It tries
 *       to acquire: CAS from the guess; from any other value only after it
 *       read the key and found (A, 0) (slock.c rdlm_svc_still_there); then
 *       releases by CAS from its held word (R1), and, if that finds exactly
 *       its held word with WANT, by CAS from that to the free word with WANT
 *       (R2).
 *   wanter   waiters' fetch-ors of WANT (slock.c rdlm_svc_want): a waiter
 *       past its bound sets WANT with ONE fetch-or, W := W | WANT, which
 *       lands on whatever the word is by then: a free word (a reservation), a
 *       held one, a MARK (the slot is being re-keyed by a claimer, or taken
 *       over by a settler), a word of another name (the slot was re-keyed).
 *       The wanter ORs WANT into either slot's word at any moment, WANTS
 *       times (2): a waiter of any name that read a word of that slot at
 *       some time, its OR landing now (an over-approximation: any moment,
 *       any slot, which only makes a pass stronger). What the waiter does with the old word it gets back is
 *       svc_lock.pml's: it acts on it (a take of a free word with WANT) only
 *       after reading the key, as on any word it read (slock.c), so an OR
 *       landing on another name's word costs that name one deferral at most.
 *
 * WANT on a MARK (slot.c rdlm_svc_cas_mark): the waiter whose OR lands on a
 * MARK does not count WANT as its own, so the MARK's client may drop it. Every
 * compare-and-swap a claimer or a settler makes FROM ITS OWN MARK (the
 * claim's undo, MARK -> the word read; the yield and the finish, MARK ->
 * floor + 1; the settler's, its MARK -> floor + 1) that fails and finds
 * exactly that MARK with WANT is made once more from it, to the same value
 * (WANT dropped). The settler's takeover is a CAS from the MARK as it read it
 * (WANT or not): WANT landing between its read and its CAS makes it fail,
 * and it reads again (as for any change; slot.c's rdlm_svc_cas_mark retries
 * at once, the same as reading again and finding that word). The victim's
 * CAS is from the free word read, WANT or not: a free word with WANT is a
 * victim like any free word; the MARK and the fresh word have no WANT.
 *
 * Properties (asserted):
 *   (u) at most one slot has name B with a word that is no MARK (one usable
 *       slot per name: otherwise two holders of B);
 *   (g) the user's acquire CAS and release CAS succeed only while slot 0's key
 *       is still (A, 0): a stale client never acts on the lock that now lives
 *       in its old slot;
 *   (m) every word a slot starts a key with (or gives back) is above every
 *       sequence the slot had: word values never repeat across keys;
 *   (l) a compare-and-swap from a claimer's or settler's own MARK (undo,
 *       yield, finish, the settler's free) fails only when a settler took
 *       that MARK over, i.e. only when the claimer's session has ended (the
 *       settler's never does). Otherwise the MARK would stay while its
 *       client lives: the slot is neither usable nor a victim, and a client
 *       of the name its key names that meets the MARK waits until that
 *       session ends (slot.c gives a MARK of its own process back only when
 *       that process meets it with no claim running; an undo's MARK stays
 *       under the old key, where the claimer does not look).
 *
 * Planted bugs (-D...), each must be caught:
 *   BUG_NO_CHECK   the user acts on a value it read without checking the key
 *                  -> (g)
 *   BUG_RESET      a new key starts at FREE(1) (its own count) instead of
 *                  floor + 1 -> (m), and (g) through the user's guess
 *   BUG_NO_SCAN    the claimer does not read the other keys before finishing
 *                  -> (u)
 *   BUG_SETTLE_KEY_FIRST  the settler clears the key while the dead claimer's
 *                  MARK is still on the word, then frees it from that MARK:
 *                  a stale claimer's late steps race it -> (u) or (m)
 *   BUG_MARK_WANT_NO_RETRY  a CAS from its own MARK that finds that MARK with
 *                  WANT is not made again: the MARK stays under a live
 *                  session -> (l)
 *
 * Reachability (-DREACH=n: the assert(REACH != n) must be found): 1 the
 * settler gives a MARK back; 2 a claimer yields to another claim of B; 3 a
 * claimer puts a word back (its key read was older than the word); 4 the user
 * acquires A; 5 the user finds A moved; 6 a CAS from a claimer's or settler's
 * own MARK finds it with WANT and is made again from it, successfully; 7 a
 * claimer MARKs a victim whose free word has WANT; 8 the settler takes over a
 * MARK with WANT.
 * Knobs: -DRESTARTS= rounds per claimer (2; CI runs 1: two rounds take 61 M
 * states and 3.4 GB even without WANT); -DWANTS= the wanter's fetch-ors (2;
 * CI runs 1: 9.3 M states, 7 s; 2: 29.8 M states, 1.5 GB, 30 s; 0: no WANT,
 * 1.3 M states, the model before the fetch-or).
 */
#ifndef REACH
#define REACH 0
#endif

#define S 2
#define NONE 0
#define A 1
#define B 2
#define FREE 0
#define HELD 1
#define MARK 2
#define WANTK 4                 /* the WANT bit, ORed into a word's kind */
#define KIND(k) ((k) & 3)
#define USER_TAG 9
#define SETTLER_TAG 8

#ifndef RESTARTS
#define RESTARTS 2
#endif
#ifndef WANTS
#define WANTS 2
#endif
#define REACHED(n) assert(REACH != (n))

byte kname[S], kgen[S];         /* the keys */
byte wk[S], ws[S], wt[S];       /* the words: kind (| WANTK: WANT set), sequence
                                   (MARK: nonce), tag */
byte F = 1;                     /* the floor */
byte maxseq[S];                 /* ghost: largest sequence slot s ever had */
bool ended[3];                  /* the sessions of claimers 1 and 2 */
byte nonce = 1;                 /* MARK nonces, unique */

#define USABLE(s, n) (kname[s] == n && KIND(wk[s]) != MARK)
#define CHECK_U assert(USABLE(0, B) + USABLE(1, B) <= 1)
#define WORD_IS(s, k, q, t) (wk[s] == (k) && ws[s] == (q) && wt[s] == (t))

/* CAS(word of slot s: my MARK (n, t) -> ...: body), and if it finds exactly
 * that MARK with WANT, once more from that (slot.c rdlm_svc_cas_mark): two
 * remote operations, two steps. Failing both ways, lost must hold (l) and
 * fail is done. BUG_MARK_WANT_NO_RETRY: not made again. */
#ifdef BUG_MARK_WANT_NO_RETRY
#define AGAIN_OK false
#else
#define AGAIN_OK true
#endif
#define CAS_MINE(s, n, t, body, lost, fail) \
    atomic { \
        if \
        :: WORD_IS(s, MARK, n, t) -> body \
        :: AGAIN_OK && WORD_IS(s, MARK | WANTK, n, t) -> retry = true \
        :: else -> assert(lost); fail \
        fi \
    }; \
    if \
    :: retry -> \
        atomic { \
            retry = false; \
            if \
            :: WORD_IS(s, MARK | WANTK, n, t) -> body; REACHED(6) \
            :: else -> assert(lost); fail \
            fi \
        } \
    :: else -> skip \
    fi

/* A fresh free word at floor + 1 into slot s (one step with the CAS that
 * writes it); asserts (m). */
#ifdef BUG_RESET
#define FRESH_SEQ(f) 1
#else
#define FRESH_SEQ(f) (f + 1)
#endif
#define PUT_FRESH(s, f) \
    assert(FRESH_SEQ(f) > maxseq[s]); \
    wk[s] = FREE; ws[s] = FRESH_SEQ(f); wt[s] = 0; maxseq[s] = ws[s]

proctype claimer(byte me)
{
    byte rkn[S], rkg[S], rwk[S], rws[S], rwt[S];
    byte i, v, mine, f, rounds = 0;
    bool conflict, undo, retry;

again:
    if
    :: rounds >= RESTARTS -> goto out
    :: else -> rounds++
    fi;
    d_step { /* forget the last round (fewer states) */
        i = 0; v = 0; mine = 0; f = 0; conflict = false;
        rkn[0] = 0; rkg[0] = 0; rwk[0] = 0; rws[0] = 0; rwt[0] = 0;
        rkn[1] = 0; rkg[1] = 0; rwk[1] = 0; rws[1] = 0; rwt[1] = 0
    }
    /* step 1: the bucket, each slot's key and word in either order */
    i = 0;
    do
    :: i < S ->
        if
        :: rkn[i] = kname[i]; rkg[i] = kgen[i];
           atomic { rwk[i] = wk[i]; rws[i] = ws[i]; rwt[i] = wt[i] }
        :: atomic { rwk[i] = wk[i]; rws[i] = ws[i]; rwt[i] = wt[i] };
           rkn[i] = kname[i]; rkg[i] = kgen[i]
        fi;
        i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < S && rkn[i] == B && KIND(rwk[i]) != MARK -> goto out  /* resolved */
    :: i < S && rkn[i] == B && KIND(rwk[i]) == MARK -> goto again /* pending */
    :: i < S && !(rkn[i] == B) -> i++
    :: else -> break
    od;
    /* step 2: the victim (a free word, WANT or not; the smallest word:
       sequence, then WANT, as slot.c compares the whole word) */
    v = S;
    i = 0;
    do
    :: i < S ->
        if
        :: KIND(rwk[i]) == FREE && rkn[i] == NONE -> v = i; break
        :: KIND(rwk[i]) == FREE && rkn[i] != NONE &&
           (v == S || rws[i] < rws[v] || (rws[i] == rws[v] && rwk[i] < rwk[v])) ->
            v = i
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    if
    :: v == S -> goto out
    :: else -> /* the other slot's copies are dead from here on (fewer states) */
        d_step {
            i = 1 - v; rkn[i] = 0; rkg[i] = 0; rwk[i] = 0; rws[i] = 0; rwt[i] = 0;
            i = 0
        }
    fi;
    /* step 3: the floor */
    atomic { if :: F < rws[v] -> F = rws[v] :: else -> skip fi }
    /* step 4: MARK, from the word read (WANT and all) */
    atomic { mine = nonce; nonce++ };
    atomic {
        if
        :: WORD_IS(v, rwk[v], rws[v], rwt[v]) ->
            if :: rwk[v] & WANTK -> REACHED(7) :: else -> skip fi;
            wk[v] = MARK; ws[v] = mine; wt[v] = me
        :: else -> goto again
        fi
    }
    /* step 5: the key; put the word back if it moved under the read (the
       undo: CAS(MARK -> the word read), again from MARK | WANT; a step of
       its own after the key's CAS, so a fetch-or can land in between) */
    atomic {
        if
        :: kname[v] == rkn[v] && kgen[v] == rkg[v] -> kname[v] = B; kgen[v] = rkg[v] + 1; CHECK_U;
            rkn[v] = 0; rwk[v] = 0; rws[v] = 0; rwt[v] = 0      /* dead now */
        :: else -> undo = true
        fi
    }
    if
    :: undo ->
        undo = false;
        CAS_MINE(v, mine, me, wk[v] = rwk[v]; ws[v] = rws[v]; wt[v] = rwt[v]; REACHED(3),
                 ended[me], skip);
        goto again
    :: else -> skip
    fi;
    /* step 6: the other keys */
    conflict = false;
#ifndef BUG_NO_SCAN
    i = 0;
    do
    :: i < S && i != v && kname[i] == B -> conflict = true; i++
    :: i < S && !(i != v && kname[i] == B) -> i++
    :: else -> break
    od;
#endif
    f = F;
    if
    :: conflict ->
        assert(REACH != 2);
        atomic {
            if
            :: kname[v] == B && kgen[v] == rkg[v] + 1 -> kname[v] = NONE; kgen[v] = rkg[v] + 2
            :: else -> goto again
            fi
        }
        CAS_MINE(v, mine, me, PUT_FRESH(v, f), ended[me], skip);
        goto again
    :: else -> skip
    fi;
    /* step 7: finish */
    CAS_MINE(v, mine, me, PUT_FRESH(v, f); CHECK_U, ended[me], goto again);
out:
    atomic { /* done: its locals are dead (fewer states) */
        i = 0; v = 0; mine = 0; f = 0; rounds = 0;
        rkn[0] = 0; rkg[0] = 0; rwk[0] = 0; rws[0] = 0; rwt[0] = 0;
        rkn[1] = 0; rkg[1] = 0; rwk[1] = 0; rws[1] = 0; rwt[1] = 0
    }
}

active proctype fate()
{
    if
    :: ended[1] = true
    :: ended[2] = true
    :: skip
    fi
}

active proctype settler()
{
    byte s, mw, mk, mt, kn, kg, f, mine;
    bool retry;

    if
    :: s = 0
    :: s = 1
    fi;
end_wait:
    atomic {
        KIND(wk[s]) == MARK && wt[s] < 3 && ended[wt[s]] ->
            mw = wk[s]; mk = ws[s]; mt = wt[s]
    }
    atomic { mine = nonce; nonce++ };
#ifdef BUG_SETTLE_KEY_FIRST
    atomic { kn = kname[s]; kg = kgen[s] };
    atomic { if :: kname[s] == kn && kgen[s] == kg -> kname[s] = NONE; kgen[s] = kg + 1 :: else -> skip fi }
    f = F;
    atomic { if :: WORD_IS(s, mw, mk, mt) -> PUT_FRESH(s, f); CHECK_U :: else -> skip fi }
#else
    /* the takeover: CAS from the MARK as read (WANT or not); failing (the
       claimer's late step, or WANT landed since the read): read again */
    atomic {
        if
        :: WORD_IS(s, mw, mk, mt) ->
            if :: mw & WANTK -> REACHED(8) :: else -> skip fi;
            wk[s] = MARK; ws[s] = mine; wt[s] = SETTLER_TAG; mw = 0; mk = 0; mt = 0
        :: else -> mw = 0; mk = 0; mt = 0; goto end_wait
        fi
    }
    do
    :: atomic { kn = kname[s]; kg = kgen[s] };
       atomic {
           if
           :: kname[s] == kn && kgen[s] == kg ->
               kname[s] = NONE; kgen[s] = kg + 1; kn = 0; kg = 0; break
           :: else -> skip
           fi
       }
    od;
    f = F;
    CAS_MINE(s, mine, SETTLER_TAG, PUT_FRESH(s, f); CHECK_U, false, skip);
    assert(REACH != 1);
    d_step { s = 0; f = 0; mine = 0 }   /* done (fewer states) */
#endif
}

active proctype user()
{
    byte k = FREE, q = 1, t = 0, tries = 0;     /* k: kind | WANTK */
    bool checked = true, held = false, r2 = false;

    do
    :: tries >= 3 -> break
    :: tries < 3 && KIND(k) == FREE ->
        tries++;
#ifndef BUG_NO_CHECK
        if
        :: !checked && !(kname[0] == A && kgen[0] == 0) ->
            assert(REACH != 5);
            break /* moved: resolve again */
        :: else -> checked = true
        fi;
#endif
        atomic {
            if
            :: WORD_IS(0, k, q, t) ->
                assert(kname[0] == A && kgen[0] == 0);
                wk[0] = HELD; ws[0] = q + 1; wt[0] = USER_TAG; held = true;
                assert(REACH != 4)
            :: else -> k = wk[0]; q = ws[0]; t = wt[0]; checked = false
            fi
        }
        if
        :: held ->
            /* R1; R2 if R1 found exactly held | WANT */
            atomic {
                if
                :: WORD_IS(0, HELD, q + 1, USER_TAG) ->
                    assert(kname[0] == A && kgen[0] == 0);
                    wk[0] = FREE; ws[0] = q + 1; wt[0] = 0
                :: WORD_IS(0, HELD | WANTK, q + 1, USER_TAG) -> r2 = true
                :: else -> skip
                fi
            }
            if
            :: r2 ->
                atomic {
                    if
                    :: WORD_IS(0, HELD | WANTK, q + 1, USER_TAG) ->
                        assert(kname[0] == A && kgen[0] == 0);
                        wk[0] = FREE | WANTK; ws[0] = q + 1; wt[0] = 0
                    :: else -> skip
                    fi
                }
            :: else -> skip
            fi;
            break
        :: else -> skip
        fi
    :: tries < 3 && KIND(k) != FREE ->
        tries++;
        atomic { k = wk[0]; q = ws[0]; t = wt[0] };
        checked = false
    od;
    atomic { /* done (fewer states) */
        k = 0; q = 0; t = 0; tries = 0; checked = false; held = false; r2 = false
    }
}

/* waiters' fetch-ors: WANTS of them, each landing at any moment on either
   slot's word, whatever it is (the wanter may stop at any moment) */
active proctype wanter()
{
    byte n = 0;

end_or:
    do
    :: atomic { n < WANTS -> wk[0] = wk[0] | WANTK; n++ }
    :: atomic { n < WANTS -> wk[1] = wk[1] | WANTK; n++ }
    od
}

init
{
    atomic {
        kname[0] = A; wk[0] = FREE; ws[0] = 1; maxseq[0] = 1;
        run claimer(1);
        run claimer(2)
    }
}
