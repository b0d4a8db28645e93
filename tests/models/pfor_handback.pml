/*
 * pfor_handback.pml - a busy taker hands the rest of its parallel-for
 * share back (runtime/pfor/share.c: run_slot_unless, hand_back, run_bites;
 * the slots' claims and splits, rt_pfor_run_slot and rt_pfor_steal_into).
 *
 * Each slot is one word [lo, hi) that every participant changes with a
 * CAS (modelled as an atomic compare-and-set of the pair). The caller owns
 * slot 0 and claims from its bottom; after it splits the upper part of the
 * largest other remainder into slot 0 (a thief, leaving at least one unit)
 * until none has two units left, then waits for the taker's count. The
 * taker owns slot 1, a presplit share: it claims from the top until busy
 * (which it may become at any point, and stays), then hands the rest back:
 * it empties its word (CAS), extends the neighbour whose range ends where
 * its rest begins, if that one is not empty (CAS), or else puts the rest
 * back into its own word (a plain store) and runs it whole. Not busy, it
 * takes bites (splits of one unit) until nothing is left to split.
 *
 * Checked: no unit runs twice (assert at each run), and every unit has
 * run when the caller's wait returns.
 *
 * Negative controls (meson.build), each must be rejected:
 *   -DEXTEND_STORE  the neighbour is extended with a store of the bounds
 *                   read before (no CAS): a claim its owner made between
 *                   the read and the store is undone, and its unit runs
 *                   twice;
 *   -DEXTEND_FIRST  the neighbour is extended before the taker's own word
 *                   is emptied: a thief can split the rest from both.
 */
#define N 5          /* units: slot 0 holds [0, 2), slot 1 the presplit [2, 5) */

byte lo[2];
byte hi[2];
byte ran[N];
byte count = 1;      /* the taker's count in the loop's group */
bool busy = false;

/* A unit run (fn on it). A slot's two bounds are one 64-bit word in C:
 * every read or write of the pair is atomic here. */
inline run_unit(u) { assert(ran[u] == 0); ran[u]++ }

/* An owner's run of its slot, bottom up (rt_pfor_run_slot). */
inline run_slot(s) {
    do
    :: atomic {
        if
        :: lo[s] < hi[s] -> u = lo[s]; lo[s]++; claimed = true
        :: else -> claimed = false
        fi
       };
       if
       :: claimed -> run_unit(u)
       :: else -> break
       fi
    od
}

/* A thief's split of the other slot into `mine`, at most `most` units,
 * leaving at least one (rt_pfor_steal_into). ok: whether it split. */
inline steal_into(mine, most) {
    ok = false;
    do
    :: atomic { b = lo[1 - mine]; e = hi[1 - mine] };
       if
       :: e - b < 2 -> break
       :: else ->
          take = (e - b) / 2;
          if
          :: take > most -> take = most
          :: else -> skip
          fi;
          atomic {
              if
              :: lo[1 - mine] == b && hi[1 - mine] == e ->
                 hi[1 - mine] = e - take; ok = true
              :: else -> skip
              fi
          };
          if
          :: ok -> atomic { lo[mine] = e - take; hi[mine] = e }; break
          :: else -> skip
          fi
       fi
    od
}

proctype caller()
{
    byte u, b, e, take;
    bool claimed, ok;
    run_slot(0);
    do
    :: steal_into(0, N);
       if
       :: ok -> run_slot(0)
       :: else -> break
       fi
    od;
    count == 0;          /* finish: the group wait */
    u = 0;
    do
    :: u < N -> assert(ran[u] == 1); u++
    :: else -> break
    od
}

proctype taker()
{
    byte u, b, e, x, y, take;
    bool claimed, ok, given;
    /* run_slot_unless: top down, a claim at a time, until busy. */
    do
    :: busy -> break
    :: !busy ->
       atomic {
           if
           :: lo[1] < hi[1] -> hi[1]--; u = hi[1]; claimed = true
           :: else -> claimed = false
           fi
       };
       if
       :: claimed -> run_unit(u)
       :: else -> break
       fi
    :: !busy -> busy = true
    od;
    if
    :: busy ->
       /* hand_back */
       given = false;
#ifdef EXTEND_FIRST
       atomic { b = lo[1]; e = hi[1] };
       atomic { x = lo[0]; y = hi[0] };
       atomic {
           if
           :: y == b && x < y && lo[0] == x && hi[0] == y -> hi[0] = e; given = true
           :: else -> skip
           fi
       };
       if
       :: given -> atomic { lo[1] = e; hi[1] = e }
       :: else -> skip
       fi;
#else
       do
       :: atomic { b = lo[1]; e = hi[1] };
          if
          :: b >= e -> given = true; break   /* thieves took the rest */
          :: else ->
             atomic {
                 if
                 :: lo[1] == b && hi[1] == e -> lo[1] = e; ok = true
                 :: else -> ok = false
                 fi
             };
             if
             :: ok -> break
             :: else -> skip
             fi
          fi
       od;
       if
       :: !given ->
          do
          :: atomic { x = lo[0]; y = hi[0] };
             if
             :: y == b && x < y ->
#ifdef EXTEND_STORE
                atomic { lo[0] = x; hi[0] = e }; given = true; break
#else
                atomic {
                    if
                    :: lo[0] == x && hi[0] == y -> hi[0] = e; given = true
                    :: else -> skip
                    fi
                };
                if
                :: given -> break
                :: else -> skip
                fi
#endif
             :: else -> break
             fi
          od;
          if
          :: !given -> atomic { lo[1] = b; hi[1] = e }   /* ours again */
          :: else -> skip
          fi
       :: else -> skip
       fi;
#endif
       if
       :: !given -> run_slot(1)
       :: else -> skip
       fi
    :: else ->
       /* not busy: bites to the end */
       do
       :: steal_into(1, 1);
          if
          :: ok -> run_slot(1)
          :: else -> break
          fi
       od
    fi;
    count--
}

init {
    lo[0] = 0; hi[0] = 2;
    lo[1] = 2; hi[1] = N;
    atomic { run caller(); run taker() }
}
