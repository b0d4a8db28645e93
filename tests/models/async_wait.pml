/*
 * async_wait.pml - an asynchronous wait's continuation against
 * dagrt_destroy's drain (runtime/wait/async.c; wait/oneshot.h, "DESTROY";
 * core/destroy.c, quiescent).
 *
 * A task T (counted: spawned 1) arms a wait asynchronously: it counts the
 * continuation as spawned, then arms the wait's one-shot group; if the
 * group was complete already it takes the count back (our own counter:
 * the store of its old value) and goes on itself. Then T finishes. A
 * completer (a hand-off, a timer, a cancel: any thread) completes the
 * group; if a waiter is armed it queues the continuation, uncounted
 * (rt_submit_counted), which a worker runs and finishes. Destroy's drain
 * reads the finished counts, then the spawned ones (each a load of its
 * own; quiescent() in that order) and stops when they are equal. The
 * counters are C11 atomics written with release / read with acquire
 * (each thread's own counter: a load and a store); spin's interleavings
 * are sequentially consistent, which those orders give for this pattern
 * (the argument is quiescent()'s: a finish is published with the spawns
 * before it).
 *
 * Checked: when destroy sees spawned == finished, T has finished and the
 * continuation, if one was armed, has run (nothing is freed under it).
 * Negative control (must fail):
 *   -DLATECOUNT  the continuation is counted after the arm: a completer
 *                and a worker may finish it before it is counted, and
 *                destroy then sees equal counts while T still runs.
 */
byte spawned = 1;     /* T */
byte finished = 0;
bool gdone = false;   /* the wait's group completed */
bool armed = false;   /* a waiter is registered on it */
bool queued = false;  /* the continuation is queued */
bool cont_ran = false;
bool t_done = false;

proctype task_t()
{
    bool mine;
#ifdef LATECOUNT
    atomic {
        if
        :: gdone -> mine = false
        :: else -> armed = true; mine = true
        fi
    };
    if
    :: mine -> spawned++
    :: else -> skip
    fi;
#else
    byte old = spawned;
    spawned = old + 1;                 /* counted before the arm */
    atomic {
        if
        :: gdone -> mine = false
        :: else -> armed = true; mine = true
        fi
    };
    if
    :: !mine -> spawned = old          /* not armed: taken back */
    :: else -> skip
    fi;
#endif
    t_done = true;
    finished++                         /* T finishes (release) */
}

proctype completer()
{
    atomic {
        gdone = true;
        if
        :: armed -> queued = true      /* the waker: submitted, uncounted */
        :: else -> skip
        fi
    }
}

proctype worker()
{
end:    /* no continuation when the wait was over before the arm */
    queued;
    cont_ran = true;
    finished++
}

proctype destroy()
{
    byte f, s;
    do
    :: f = finished;
       s = spawned;
       if
       :: f == s -> break
       :: else -> skip
       fi
    od;
    assert(t_done && (!armed || cont_ran))
}

init {
    atomic {
        run task_t();
        run completer();
        run worker();
        run destroy()
    }
}
