/*
 * deque.pml - the Chase-Lev take/steal race on the last elements
 * (runtime/core/deque.h), under a TSO-style store buffer for the owner's store
 * of `bottom` (the one reordering x86 allows and the seq_cst fence in take
 * forbids). Two items at indices 0 and 1; the owner takes once, a thief
 * steals twice. Property: no item is consumed twice, none is lost.
 *
 * Negative controls (spin must find a violation):
 *   -DNOFENCE  take's store of bottom may still sit in the store buffer
 *              when take loads top: the owner and the thief both get item 1.
 *   -DNOCAS    take claims the last element without the CAS on top.
 */
int top = 0;
int bottom = 2;
byte got[2];
bool buffered = false;   /* owner's store of bottom not yet visible */
int buf_bottom;
byte done = 0;

/* The store buffer drains at any moment. */
active proctype flusher()
{
end:
    do
    :: atomic { buffered -> bottom = buf_bottom; buffered = false }
    od
}

active proctype owner()
{
    int b, t;
    b = 1;                           /* bottom - 1 (owner knows its own bottom) */
    atomic { buffered = true; buf_bottom = b }
#ifndef NOFENCE
    (!buffered);                     /* seq_cst fence: drain before the load */
#endif
    t = top;
    if
    :: t < b -> got[b]++             /* not the last: no race possible */
    :: t == b ->
#ifdef NOCAS
        got[b]++;
#else
        atomic { if :: top == t -> top = t + 1; got[b]++ :: else -> skip fi };
#endif
        atomic { (!buffered); bottom = b + 1 }
    :: t > b -> atomic { (!buffered); bottom = b + 1 }
    fi;
    done++
}

active proctype thief()
{
    int t, b, k;
    for (k : 0 .. 1) {
        t = top;
        b = bottom;                  /* after top (the fence in steal) */
        if
        :: t < b -> atomic { if :: top == t -> top = t + 1; got[t]++ :: else -> skip fi }
        :: else -> skip
        fi
    }
    done++
}

active proctype check()
{
    atomic { done == 2 && !buffered ->
        assert(got[0] <= 1 && got[1] <= 1);
        /* Nothing lost: whatever was not consumed is still in [top, bottom). */
        assert(got[0] + got[1] + (bottom > top -> bottom - top : 0) == 2)
    }
}
