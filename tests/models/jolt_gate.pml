/*
 * jolt_gate.pml - the Jolt adapter's barrier (integrations/jolt/
 * dagrt_jolt.cpp, class Gate): a count of the jobs added and not
 * finished, a dagrt_event the last finisher sets, and a waiter that
 * resets the event and re-reads the count before it waits.
 *
 * Jobs: A and B are queued before the waiter adds them (Jolt's CreateJob
 * queues a job with no dependencies, AddJob follows), so either may run
 * and finish before it is added (SetBarrier refused: counted, then
 * uncounted at once, a zero before the wait). B adds C to the barrier
 * while it runs (a job adding jobs to the barrier being waited on). A
 * finishing job exchanges its barrier word for DONE (Jolt's Job::Execute)
 * and, if the word was the gate, drops the count; the drop to zero sets
 * the event as a separate, later step (the setter may be slow). A stale
 * set from the gate's previous use may come at any time.
 * Event set/reset take the event's lock: atomic steps here.
 *
 * Property: when the waiter returns, A, B and C have all run; and the
 * waiter never blocks for ever (spin's invalid end state).
 *
 * Negative controls (spin must find a violation):
 *   -DNORECHECK    no second read of the count after the reset: a drop to
 *                  zero and its set between the first read and the reset
 *                  are lost, and the waiter sleeps for ever
 *   -DTRUST_EVENT  the waiter returns when the event is set, without the
 *                  count: the zero before the wait (or a stale set) ends
 *                  it while B or C still runs
 */
#define NONE 0
#define GATE 1
#define DONE 2

byte pending = 0;
bool ev = false;
byte bar[3];               /* barrier word of A, B, C */
bool ran[3];

inline drop() {
    bool last;
    atomic { pending--; last = (pending == 0) }
    if
    :: last -> ev = true   /* the set, a step after the count reached zero */
    :: else -> skip
    fi
}

/* Count, then set the barrier (the adapter's fetch_add, release fence,
 * SetBarrier's CAS); refused (the job finished): uncount. */
inline add(j) {
    bool ok;
    pending++;
    atomic {
        if
        :: bar[j] == NONE -> bar[j] = GATE; ok = true
        :: else -> ok = false
        fi
    }
    if
    :: !ok -> drop()
    :: else -> skip
    fi
}

/* Job::Execute: the function, then the barrier word exchanged for DONE,
 * then OnJobFinished when it was the gate (after the acquire fence). */
inline finish(j) {
    byte old;
    atomic { old = bar[j]; bar[j] = DONE }
    if
    :: old == GATE -> drop()
    :: else -> skip
    fi
}

proctype JobC() {
    ran[2] = true;
    finish(2)
}

proctype JobA() {
    ran[0] = true;
    finish(0)
}

proctype JobB() {
    run JobC();   /* created with no dependencies: queued at once */
    add(2);
    ran[1] = true;
    finish(1)
}

proctype Stale() {
    ev = true     /* a late set from the gate's previous use */
}

proctype Waiter() {
    add(0);
    add(1);
#ifdef TRUST_EVENT
    (ev);
#else
    do
    :: pending == 0 -> break
    :: else ->
        ev = false;   /* reset */
#ifndef NORECHECK
        if
        :: pending == 0 -> break
        :: else -> skip
        fi;
#endif
        (ev)          /* dagrt_event_wait */
    od;
#endif
    assert(ran[0] && ran[1] && ran[2])
}

init {
    atomic {
        run JobA();
        run JobB();
        run Stale();
        run Waiter()
    }
}
