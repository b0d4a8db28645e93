/*
 * deque_split.pml - the split deque of runtime/core/deque.h: a public part
 * [top, split) that thieves steal from with the Chase-Lev protocol, and a
 * private tail [split, bottom) that the owner pushes to and takes from with
 * no fence at all. The owner's store of `split` goes through a TSO-style
 * store buffer (the reordering x86 allows).
 *
 * Start: item 0 public, items 1 and 2 private (top 0, split 1, bottom 3).
 * The owner takes three times: private pops (no fence) while the tail
 * lasts, then the Chase-Lev take on split (with its fence) racing the thief.
 * Optionally (EXPOSE) the owner first exposes part of its tail (split 2:
 * one item, what a frame exposure does) or all of it; between takes it
 * answers a thief's request the same two ways. A thief steals three times
 * and asks for the tail when it finds the public part empty or has just
 * taken its last item. Property: no item is consumed twice, none is lost.
 *
 * Negative controls (spin must find a violation):
 *   -DTHIEF_SEES_TAIL  thieves bound their steal by bottom instead of split:
 *                      the private, fence-free pop and a steal both get item 1.
 *   -DNOFENCE          the public take's store of split may still sit in the
 *                      store buffer when it loads top.
 */
int top = 0;
int split = 1;
int bottom = 3;
byte got[3];
bool buffered = false;   /* owner's store of split not yet visible */
int buf_split;
byte done = 0;
bool splitreq = false;

active proctype flusher()
{
end:
    do
    :: atomic { buffered -> split = buf_split; buffered = false }
    od
}

/* The owner's own view of split: its buffered store if there is one. */
#define OWN_SPLIT (buffered -> buf_split : split)

inline owner_take() {
    b = bottom; s = OWN_SPLIT;
    if
    :: b > s ->
        /* private pop: no fence, no CAS */
        bottom = b - 1; got[b - 1]++
    :: else ->
        s = s - 1;
        atomic { buffered = true; buf_split = s }
#ifndef NOFENCE
        (!buffered);                 /* seq_cst exchange: drains the buffer */
#endif
        t = top;
        if
        :: t < s -> bottom = s; got[s]++
        :: t == s ->
            atomic { if :: top == t -> top = t + 1; got[s]++ :: else -> skip fi };
            atomic { (!buffered); split = s + 1 }; bottom = s + 1
        :: t > s -> atomic { (!buffered); split = s + 1 }; bottom = s + 1
        fi
    fi
}

/* A release store of split exposing one item or the whole tail. */
inline expose() {
    if
    :: bottom - split >= 1 -> atomic { (!buffered); split = split + 1 }
    :: atomic { (!buffered); split = bottom }
    fi
}

active proctype owner()
{
    int b, s, t, k;
#ifdef EXPOSE
    if
    :: expose()
    :: skip
    fi;
#endif
    for (k : 0 .. 2) {
        owner_take();
        if
        :: splitreq && bottom > split -> splitreq = false; expose()
        :: else -> skip
        fi
    }
    done++
}

active proctype thief()
{
    int t, s, k;
    for (k : 0 .. 2) {
        t = top;
#ifdef THIEF_SEES_TAIL
        s = bottom;
#else
        s = split;                   /* after top (the fence in steal) */
#endif
        if
        :: t < s -> atomic { if :: top == t -> top = t + 1; got[t]++;
                                   if :: t + 1 == s -> splitreq = true :: else -> skip fi
                                 :: else -> skip fi }
        :: else -> splitreq = true
        fi
    }
    done++
}

active proctype check()
{
    atomic { done == 2 && !buffered ->
        assert(got[0] <= 1 && got[1] <= 1 && got[2] <= 1);
        /* Nothing lost: whatever was not consumed is still in [top, bottom). */
        assert(got[0] + got[1] + got[2] + (bottom > top -> bottom - top : 0) == 3)
    }
}
