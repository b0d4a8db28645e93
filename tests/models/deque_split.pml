/*
 * deque_split.pml - the split deque of runtime/deque.h: a public part
 * [top, split) that thieves steal from with the Chase-Lev protocol, and a
 * private tail [split, bottom) that the owner pushes to and takes from with
 * no fence at all. The owner's store of `split` goes through a TSO-style
 * store buffer (the reordering x86 allows).
 *
 * Start: item 0 public, item 1 private (top 0, split 1, bottom 2). The
 * owner takes twice: the first take pops the private item 1 (no fence), the
 * second races the thief for item 0 (Chase-Lev take on split, with its
 * fence). Optionally (EXPOSE) the owner first exposes its tail, making both
 * takes public. A thief steals twice and, finding the public part empty,
 * may ask for the tail. Property: no item is consumed twice, none is lost.
 *
 * Negative controls (spin must find a violation):
 *   -DTHIEF_SEES_TAIL  thieves bound their steal by bottom instead of split:
 *                      the private, fence-free pop and a steal both get item 1.
 *   -DNOFENCE          the public take's store of split may still sit in the
 *                      store buffer when it loads top.
 */
int top = 0;
int split = 1;
int bottom = 2;
byte got[2];
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

active proctype owner()
{
    int b, s, t;
#ifdef EXPOSE
    if
    :: atomic { (!buffered); split = bottom }   /* release store of split */
    :: skip
    fi;
#endif
    owner_take();
    if
    :: splitreq -> splitreq = false; atomic { (!buffered); split = bottom }
    :: else -> skip
    fi;
    owner_take();
    done++
}

active proctype thief()
{
    int t, s, k;
    for (k : 0 .. 1) {
        t = top;
#ifdef THIEF_SEES_TAIL
        s = bottom;
#else
        s = split;                   /* after top (the fence in steal) */
#endif
        if
        :: t < s -> atomic { if :: top == t -> top = t + 1; got[t]++ :: else -> skip fi }
        :: else -> splitreq = true
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
