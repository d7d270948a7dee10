/*
 * table_reuse.pml -- spin model of the object table's entry life cycle
 * (core/local/table.c, table_lock.c; docs/local-locks.md "Table entries"):
 * lock-free lookups that pin a live entry, the last close that retires it and
 * raises its name's token floor, and creation, revival and re-keying of an
 * entry for another name under the creation lock, with the trim that frees a
 * retired entry ending a probe chain.
 *
 * T = 2 entries; names A = 1 and B = 2 both have entry 0 as their home, so
 * they share one probe chain and each entry can hold either name over time.
 * An entry's state word (phase, gen, opens) is read and CASed in ONE step; its
 * key, token and lock word are separate variables, each read or written in
 * one step.
 *
 * Processes: P = 2 (-DP=3 for three), each ROUNDS rounds of: pick A or B, open
 * (walk the chain to the first FREE entry; at a LIVE entry whose key, read
 * after the state, is the name: CAS the state read -> opens + 1; else take the
 * creation lock, walk again, pin the live entry of the name or key the first
 * RETIRED entry, else the FREE end: CREATING (gen + 1), key, token := floor,
 * LIVE with opens 1), acquire (the lock word, free -> me), issue token + 1,
 * release, close (opens > 1: CAS opens - 1; opens 1: take the creation lock,
 * then CAS to RETIRED if the word is free, else opens - 1; once retired, raise
 * the floor to the entry's token; trim; unlock).
 *
 * Properties (asserted):
 *   (k) a pinned entry is keyed with the name it was opened for, from the pin
 *       to the close: a handle never acts on another name's lock;
 *   (x) at most one holder per name at a time;
 *   (t) every token of a name is above every token issued for it before;
 *   (u) at most one LIVE entry per name.
 *
 * Planted bugs (-D...), each must be caught:
 *   BUG_NO_GEN    the pin compares phase and opens but not the generation: an
 *                 entry retired and re-keyed for another name between the
 *                 lookup's reads and its CAS is pinned (ABA) -> (k)
 *   BUG_NO_LOCK   creation outside the creation lock: two openers of a name
 *                 key two entries for it, or one entry twice -> (u), (x) or (k)
 *   BUG_NO_FLOOR  a keyed entry's tokens restart at 0 -> (t)
 *   BUG_FLOOR_FIRST  the floor is raised to the token before the retire CAS,
 *                 as the first version of table.c did: another process pins
 *                 the entry, takes a token and closes in between, the state
 *                 word is the same again, the CAS succeeds and the floor
 *                 misses that token -> (t) (found by this model)
 * Knobs: -DP= processes (2), -DROUNDS= rounds each (2). CI searches P = 2 x 2
 * rounds (0.7 M states, 2 s) and P = 3 x 1 round (1.5 M states, 2.5 s); P = 2 x 3
 * rounds (15 M states, 12 s) is label model_extra; P = 3 x 2 rounds does not fit
 * in 2 GB.
 */
#ifndef P
#define P 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define T 2
#define NONE 255
#define FREE 0
#define CREATING 1
#define LIVE 2
#define RETIRED 3

byte phase[T];
byte gen[T];
byte opens[T];
byte key[T];   /* 0: none */
byte word[T];  /* lock holder (pid + 1), 0: free */
byte tok[T];
byte clock = 0; /* creation lock holder (pid + 1), 0: free */
byte floor = 0;
byte inside[3]; /* per name: holders (ghost) */
byte last[3];   /* per name: largest token issued (ghost) */

/* (u): no second LIVE entry for name n. */
inline check_unique(n) {
    assert(!(phase[0] == LIVE && phase[1] == LIVE && key[0] == n && key[1] == n))
}

proctype proc(byte me) {
    byte round = 0, name, i, probes, idx, target, t;
    byte sphase, sgen, sopens;
    bit retired;

    do
    :: round == ROUNDS -> break
    :: else ->
        if
        :: name = 1
        :: name = 2
        fi;
        /* lock-free lookup */
        idx = NONE;
        i = 0;
        probes = 0;
        do
        :: probes == T -> break
        :: else ->
            atomic { sphase = phase[i]; sgen = gen[i]; sopens = opens[i] }
            if
            :: sphase == FREE -> break
            :: else
            fi;
            if
            :: sphase == LIVE && key[i] == name ->
                atomic {
                    if
#ifdef BUG_NO_GEN
                    :: phase[i] == LIVE && opens[i] == sopens ->
#else
                    :: phase[i] == LIVE && gen[i] == sgen && opens[i] == sopens ->
#endif
                        opens[i]++;
                        idx = i
                    :: else
                    fi
                }
            :: else
            fi;
            if
            :: idx != NONE -> break
            :: else -> i = (i + 1) % T; probes++
            fi
        od;
        if
        :: idx == NONE ->
            /* creation under the lock: walk again */
#ifndef BUG_NO_LOCK
            atomic { clock == 0 -> clock = me + 1 }
#endif
            target = NONE;
            i = 0;
            probes = 0;
            do
            :: probes == T -> break
            :: else ->
                if
                :: phase[i] == FREE ->
                    if
                    :: target == NONE -> target = i
                    :: else
                    fi;
                    break
                :: phase[i] == LIVE && key[i] == name ->
                    atomic { opens[i]++; idx = i };
                    break
                :: phase[i] == RETIRED && target == NONE -> target = i
                :: else
                fi;
                i = (i + 1) % T;
                probes++
            od;
            if
            :: idx == NONE && target != NONE ->
                atomic { gen[target]++; phase[target] = CREATING; opens[target] = 0 };
                key[target] = name;
#ifdef BUG_NO_FLOOR
                tok[target] = 0;
#else
                tok[target] = floor;
#endif
                word[target] = 0;
                atomic { phase[target] = LIVE; opens[target] = 1; idx = target };
                check_unique(name)
            :: else
            fi;
#ifndef BUG_NO_LOCK
            clock = 0
#endif
        :: else
        fi;
        if
        :: idx != NONE ->
            assert(key[idx] == name);                  /* (k) */
            atomic { word[idx] == 0 -> word[idx] = me + 1 };
            t = tok[idx] + 1;
            tok[idx] = t;
            assert(t > last[name]);                    /* (t) */
            last[name] = t;
            inside[name]++;
            assert(inside[name] == 1 && key[idx] == name); /* (x), (k) */
            inside[name]--;
            word[idx] = 0;
            /* close */
            if
            :: atomic { opens[idx] > 1 -> opens[idx]-- }
            :: opens[idx] == 1 ->
                atomic { clock == 0 -> clock = me + 1 };
#ifdef BUG_FLOOR_FIRST
                if
                :: word[idx] == 0 && opens[idx] == 1 && tok[idx] > floor -> floor = tok[idx]
                :: else
                fi;
#endif
                atomic {
                    if
                    :: opens[idx] == 1 && word[idx] == 0 ->
                        phase[idx] = RETIRED; opens[idx] = 0; retired = 1
                    :: else -> opens[idx]--; retired = 0
                    fi
                };
#ifndef BUG_FLOOR_FIRST
                if
                :: retired && tok[idx] > floor -> floor = tok[idx]
                :: else
                fi;
#endif
                /* trim: a retired entry followed by a FREE one is freed, backwards */
                i = idx;
                probes = 0;
                do
                :: probes < T && phase[i] == RETIRED && phase[(i + 1) % T] == FREE ->
                    key[i] = 0;
                    phase[i] = FREE;
                    i = (i + T - 1) % T;
                    probes++
                :: else -> break
                od;
                clock = 0
            fi
        :: else /* table full: only with a bug */
        fi;
        round++
    od
}

init {
    atomic {
        byte p = 0;
        do
        :: p < P -> run proc(p); p++
        :: else -> break
        od
    }
}
