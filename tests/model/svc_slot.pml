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
 *       releases by CAS from its held word.
 *
 * Properties (asserted):
 *   (u) at most one slot has name B with a word that is no MARK (one usable
 *       slot per name: otherwise two holders of B);
 *   (g) the user's acquire CAS and release CAS succeed only while slot 0's key
 *       is still (A, 0): a stale client never acts on the lock that now lives
 *       in its old slot;
 *   (m) every word a slot starts a key with (or gives back) is above every
 *       sequence the slot had: word values never repeat across keys.
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
 *
 * Reachability (-DREACH=n: the assert(REACH != n) must be found): 1 the
 * settler gives a MARK back; 2 a claimer yields to another claim of B; 3 a
 * claimer puts a word back (its key read was older than the word); 4 the user
 * acquires A; 5 the user finds A moved.
 * Knob: -DRESTARTS= rounds per claimer (2; the CI search runs 1: 2.7 M states,
 * 2 s; 2 needs more than 2 GB).
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
#define USER_TAG 9
#define SETTLER_TAG 8

#ifndef RESTARTS
#define RESTARTS 2
#endif

byte kname[S], kgen[S];         /* the keys */
byte wk[S], ws[S], wt[S];       /* the words: kind, sequence (MARK: nonce), tag */
byte F = 1;                     /* the floor */
byte maxseq[S];                 /* ghost: largest sequence slot s ever had */
bool ended[3];                  /* the sessions of claimers 1 and 2 */
byte nonce = 1;                 /* MARK nonces, unique */

#define USABLE(s, n) (kname[s] == n && wk[s] != MARK)
#define CHECK_U assert(USABLE(0, B) + USABLE(1, B) <= 1)
#define WORD_IS(s, k, q, t) (wk[s] == k && ws[s] == q && wt[s] == t)

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
    bool conflict;

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
    :: i < S && rkn[i] == B && rwk[i] != MARK -> goto out  /* resolved */
    :: i < S && rkn[i] == B && rwk[i] == MARK -> goto again /* pending */
    :: i < S && !(rkn[i] == B) -> i++
    :: else -> break
    od;
    /* step 2: the victim */
    v = S;
    i = 0;
    do
    :: i < S ->
        if
        :: rwk[i] == FREE && rkn[i] == NONE -> v = i; break
        :: rwk[i] == FREE && rkn[i] != NONE && (v == S || rws[i] < rws[v]) -> v = i
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    if
    :: v == S -> goto out
    :: else -> skip
    fi;
    /* step 3: the floor */
    atomic { if :: F < rws[v] -> F = rws[v] :: else -> skip fi }
    /* step 4: MARK */
    atomic { mine = nonce; nonce++ };
    atomic {
        if
        :: WORD_IS(v, rwk[v], rws[v], rwt[v]) -> wk[v] = MARK; ws[v] = mine; wt[v] = me
        :: else -> goto again
        fi
    }
    /* step 5: the key; put the word back if it moved under the read */
    atomic {
        if
        :: kname[v] == rkn[v] && kgen[v] == rkg[v] -> kname[v] = B; kgen[v] = rkg[v] + 1; CHECK_U
        :: else ->
            if
            :: WORD_IS(v, MARK, mine, me) -> wk[v] = rwk[v]; ws[v] = rws[v]; wt[v] = rwt[v];
               assert(REACH != 3)
            :: else -> skip
            fi;
            goto again
        fi
    }
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
        atomic {
            if
            :: WORD_IS(v, MARK, mine, me) -> PUT_FRESH(v, f)
            :: else -> skip
            fi
        }
        goto again
    :: else -> skip
    fi;
    /* step 7: finish */
    atomic {
        if
        :: WORD_IS(v, MARK, mine, me) -> PUT_FRESH(v, f); CHECK_U
        :: else -> goto again
        fi
    }
out:
    skip
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
    byte s, mk, mt, kn, kg, f, mine;

    if
    :: s = 0
    :: s = 1
    fi;
end_wait:
    atomic { wk[s] == MARK && wt[s] < 3 && ended[wt[s]] -> mk = ws[s]; mt = wt[s] }
    atomic { mine = nonce; nonce++ };
#ifdef BUG_SETTLE_KEY_FIRST
    atomic { kn = kname[s]; kg = kgen[s] };
    atomic { if :: kname[s] == kn && kgen[s] == kg -> kname[s] = NONE; kgen[s] = kg + 1 :: else -> skip fi }
    f = F;
    atomic { if :: WORD_IS(s, MARK, mk, mt) -> PUT_FRESH(s, f); CHECK_U :: else -> skip fi }
#else
    atomic {
        if
        :: WORD_IS(s, MARK, mk, mt) -> ws[s] = mine; wt[s] = SETTLER_TAG
        :: else -> goto done
        fi
    }
    do
    :: atomic { kn = kname[s]; kg = kgen[s] };
       atomic {
           if
           :: kname[s] == kn && kgen[s] == kg -> kname[s] = NONE; kgen[s] = kg + 1; break
           :: else -> skip
           fi
       }
    od;
    f = F;
    atomic { if :: WORD_IS(s, MARK, mine, SETTLER_TAG) -> PUT_FRESH(s, f); CHECK_U :: else -> skip fi }
    assert(REACH != 1);
#endif
done:
    skip
}

active proctype user()
{
    byte k = FREE, q = 1, t = 0, tries = 0;
    bool checked = true, held = false;

    do
    :: tries >= 3 -> break
    :: tries < 3 && k == FREE ->
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
            atomic {
                if
                :: WORD_IS(0, HELD, q + 1, USER_TAG) ->
                    assert(kname[0] == A && kgen[0] == 0);
                    wk[0] = FREE; ws[0] = q + 1; wt[0] = 0
                :: else -> skip
                fi
            }
            break
        :: else -> skip
        fi
    :: tries < 3 && k != FREE ->
        tries++;
        atomic { k = wk[0]; q = ws[0]; t = wt[0] };
        checked = false
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
