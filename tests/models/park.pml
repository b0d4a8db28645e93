/*
 * park.pml - the idle protocol of runtime/core/idle.c with the parker of
 * runtime/core/park.c: two workers that announce idle, spin, stop spinning,
 * re-check and park; a producer that publishes two items and notifies
 * (skip when someone spins, else claim an idle worker and unpark it).
 * Property: when nothing can move any more, every item has been consumed,
 * i.e. no worker sleeps through published work (no lost wake-up).
 *
 * Negative controls (spin must find a violation):
 *   -DNORECHECK  a worker parks without re-checking after it stops spinning
 *   -DNOFENCE    the producer's publication may still be in its store buffer
 *                when it reads nspinning/nidle (the seq_cst fence removed)
 *
 * -DASYM models the asymmetric variant (core/idle.c, deque pushes where
 * membarrier is available): the producer has no fence, so its work++ may
 * sit in its store buffer while it reads the counters, and a worker calls
 * membarrier after it stops spinning and before its re-check, which drains
 * the producer's buffer. Must verify. Its negative control,
 * -DASYM -DNOMEMBARRIER, drops that call and must be rejected.
 */
#if defined(ASYM)
#define BUFFERED_PUBLISH
#endif
#if defined(NOFENCE)
#define BUFFERED_PUBLISH
#endif
#define EMPTY    0
#define NOTIFIED 1
#define PARKED   2

int work = 0;            /* published, not yet taken */
byte consumed = 0;
byte nidle = 0;
byte nspinning = 0;
bool idle[2];
byte pstate[2];          /* parker state per worker */
bool buffered = false;   /* producer's work++ not yet visible */

/* The producer's store buffer reaching memory: by itself, late, or forced
 * by a worker's membarrier, whichever comes first. */
inline drain() {
    atomic {
        if
        :: buffered -> work++; buffered = false
        :: else -> skip
        fi
    }
}

inline unpark(w) {
    atomic {
        pstate[w] = NOTIFIED   /* a PARKED sleeper's futex wait now returns */
    }
}

inline park(w) {
    atomic {
        if
        :: pstate[w] == NOTIFIED -> pstate[w] = EMPTY
        :: pstate[w] == EMPTY -> pstate[w] = PARKED
        fi
    };
end_sleep:
    atomic { pstate[w] != PARKED -> pstate[w] = EMPTY }
}

proctype worker(byte w)
{
    bool leave;
end_loop:
    do
    :: atomic { work > 0 -> work--; consumed++ }
    :: atomic { work == 0 -> skip };
        /* announce */
        idle[w] = true;
        nidle++;
        nspinning++;
        /* spin: either see work / a claim, or give up */
        if
        :: (work > 0 || !idle[w]) -> leave = true
        :: leave = false
        fi;
        nspinning--;
        if
        :: !leave ->
#if defined(ASYM) && !defined(NOMEMBARRIER)
            drain();             /* membarrier: every thread's buffer drains */
#endif
#ifdef NORECHECK
            park(w)
#else
            if
            :: work == 0 && idle[w] -> park(w)
            :: else -> skip
            fi
#endif
        :: else -> skip
        fi;
        idle[w] = false;
        nidle--
    od
}

proctype producer()
{
    byte i, k;
    for (i : 1 .. 2) {
#ifdef BUFFERED_PUBLISH
        buffered = true;             /* work++ sits in the store buffer */
#else
        work++;
#endif
        /* notify: fence; if nspinning > 0 skip; else if nidle > 0 claim one */
        if
        :: nspinning > 0 -> skip
        :: else ->
            if
            :: nidle > 0 ->
                for (k : 0 .. 1) {
                    if
                    :: atomic { idle[k] -> idle[k] = false }; unpark(k); break
                    :: else -> skip
                    fi
                }
            :: else -> skip
            fi
        fi;
#ifdef BUFFERED_PUBLISH
        drain()                      /* at the latest, the buffer drains now */
#endif
    }
    /* Once nothing can move: every item must have been taken. */
    timeout -> assert(work == 0 && consumed == 2)
}

init {
    atomic {
        run worker(0);
        run worker(1);
        run producer()
    }
}
