/*
 * shuffle_shared.pml - the shuffled serial switch's random take from a
 * ready list that guests share (runtime/exec/dyn_shuffle.c, RT_SHUFFLE_SHARED:
 * list_push, take_shared, advance_head).
 *
 * A frame with `fiber` or `hot` tasks, a started run or a pipeline frame
 * runs on the dynamic executor; beside guest slots a guest that steals a
 * spawned fiber/hot node task drains the same ready list as the caller.
 * Pushes stay as they are (reserve a slot with a fetch-add on tail, then
 * publish the node in it). Every take claims one slot with a CAS from the
 * published value to TAKEN; the caller starts its search at a random slot
 * of [head, tail) (the shuffle), a guest at the head (the oldest). head
 * is only where searches begin: whoever takes a slot then moves head over
 * every TAKEN slot at it, so that once the takers are done head == tail
 * again (the executor's polls read head < tail as "work queued"). A
 * reserved slot not yet published (0) is waited for, as the plain pop
 * does: its pusher is between its two instructions.
 *
 * The graph: roots a (0) and b (1), c (2) after a and b, d (3) after a;
 * the caller fires the roots, and each completion counts its successors
 * down and pushes those that fire, on whichever thread completed it, so
 * pushes race takes. Checked: every node runs exactly once and only after
 * its inputs completed; no node is lost (the caller's loop ends only when
 * all are done: a lost node is an invalid end state); when both threads
 * have left, head == tail.
 *
 * Negative controls (meson.build), each must be rejected:
 *   -DNOCAS       the take as a load then a store: both threads take one
 *                 node and it runs twice;
 *   -DONEADVANCE  a taker moves head by one only when its own slot is the
 *                 head, not over the slots others took beyond it: head
 *                 stays behind a taken slot for good (the caller's polls
 *                 see work that is not there).
 */
#define N 4
#define NONE 255
#define TAKEN 254

byte slot[N];        /* 0: reserved or unused; x + 1: node x published; TAKEN */
byte head = 0;
byte tail = 0;
byte pending[N];     /* inputs left: a, b: 0; c: 2; d: 1 */
byte runs[N];
byte done = 0;
byte finished = 0;

inline push(x)
{
    atomic { t = tail; tail++ };   /* fetch_add: the reservation */
    slot[t] = x + 1                /* the release store: publication */
}

inline advance_head()
{
    do
    :: h = head;
       if
       :: h >= N -> break
       :: else ->
          if
          :: slot[h] == TAKEN ->
#ifdef ONEADVANCE
             if
             :: h == idx -> atomic { if :: head == h -> head = h + 1 :: else -> skip fi }
             :: else -> skip
             fi;
             break
#else
             atomic { if :: head == h -> head = h + 1 :: else -> skip fi }   /* CAS */
#endif
          :: else -> break
          fi
       fi
    od
}

/* x = a taken node or NONE; random: the caller's take (any start). */
inline take_one(x, random)
{
    x = NONE;
    do
    :: h = head; t = tail;
       if
       :: h >= t -> break
       :: else -> skip
       fi;
       j = h;
       if
       :: random -> do :: j < t - 1 -> j++ :: break od
       :: else -> skip
       fi;
       k = 0; seen0 = false; lost = false;
       do
       :: k < t - h ->
          idx = h + (j - h + k) % (t - h);
          v = slot[idx];
          if
          :: v == TAKEN -> skip
          :: v == 0 -> seen0 = true
          :: else ->
#ifdef NOCAS
             slot[idx] = TAKEN; x = v - 1; break
#else
             atomic {
                 if
                 :: slot[idx] == v -> slot[idx] = TAKEN; x = v - 1
                 :: else -> lost = true
                 fi
             };
             break
#endif
          fi;
          k++
       :: else -> break
       od;
       if
       :: x != NONE -> advance_head(); break
       :: x == NONE && (lost || seen0) -> skip   /* lost a race, or a pusher mid-publish: again */
       :: else -> break                         /* all taken */
       fi
    od
}

inline countdown(s)
{
    atomic { pending[s]--; fires = pending[s] == 0 };
    if
    :: fires -> push(s)
    :: else -> skip
    fi
}

inline run_node(x)
{
    assert(pending[x] == 0);   /* after every input */
    runs[x]++;
    assert(runs[x] == 1);      /* once */
    if
    :: x == 0 -> countdown(2); countdown(3)
    :: x == 1 -> countdown(2)
    :: else -> skip
    fi;
    atomic { done++ }
}

active proctype caller()
{
    byte x, h, t, j, k, idx, v;
    bool seen0, lost, fires;
    pending[2] = 2;   /* the frame's reset, before anything is published */
    pending[3] = 1;
    push(0);
    push(1);
    do
    :: done == N -> break
    :: else ->
       take_one(x, true);
       if
       :: x != NONE -> run_node(x)
       :: else -> skip
       fi
    od;
    finished++
}

active proctype guest()
{
    byte x, h, t, j, k, idx, v;
    bool seen0, lost, fires;
    do
    :: done == N -> break
    :: else ->
       take_one(x, false);
       if
       :: x != NONE -> run_node(x)
       :: else -> skip
       fi
    od;
    finished++
}

active proctype check()
{
    finished == 2;
    assert(head == tail);
    assert(runs[0] == 1 && runs[1] == 1 && runs[2] == 1 && runs[3] == 1)
}

