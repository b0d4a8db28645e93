/*
 * fiber_suspend.pml - the fiber suspend/resume handshake (runtime/fiber/sched.c).
 *
 * A fiber task that must wait registers itself on the event's waiter list
 * under the event's lock, then switches out to its worker. Whoever wakes it
 * (an event setter) removes it from the list under the same lock. The fiber
 * may be made runnable only when BOTH have happened: the wake, and the
 * worker having left the fiber's stack. Each side does an atomic
 * fetch_add(park, 1) (acq_rel); the one that sees 1 (the second to arrive)
 * queues the fiber. The worker does its add only after the switch returned
 * on its own stack.
 *
 * Checked: no two workers ever run on one fiber's stack (assert), a resumed
 * fiber really saw its event set (no spurious wake-up), and no lost wake-up:
 * every fiber finishes (a lost one leaves the workers blocked at a non-end
 * state, which spin reports as an invalid end state).
 *
 * Negative control (spin -DWRONG_ORDER, see meson.build): the fiber
 * publishes itself (its fetch_add) while still on its own stack, before the
 * switch. A setter can then queue it and a second worker resume it while
 * the first is still on that stack: the assertion must fail.
 */
#define NF 2          /* fiber tasks, both waiting on the one event */
#define NW 2          /* workers */

bool ev_set = false;
bit  ev_lock = 0;
bool waiting[NF];     /* the event's waiter list */
byte park[NF];        /* the handshake counter: 2 parties */
byte on_stack[NF];    /* workers currently running on fiber f's stack */
byte pc[NF];          /* fiber program: 0 start, 1 suspended in wait, 2 done */
byte ndone = 0;
chan runq = [NF] of { byte };

inline lock()   { atomic { ev_lock == 0 -> ev_lock = 1 } }
inline unlock() { ev_lock = 0 }

/* fetch_add(&park[f], 1) == 1  ->  make f runnable */
inline arrive(f) {
    atomic { park[f] = park[f] + 1; old = park[f] - 1 };
    if
    :: old == 1 -> runq!f
    :: else -> skip
    fi
}

proctype Worker() {
    byte f, old;
    do
    :: runq?f ->
        atomic { on_stack[f]++; assert(on_stack[f] == 1) };
        if
        :: pc[f] == 0 ->
            lock();
            if
            :: ev_set ->                 /* sticky: already set, no suspend */
                unlock();
                pc[f] = 2; on_stack[f]--; ndone++
            :: else ->
                park[f] = 0;             /* re-armed before it is visible */
                waiting[f] = true;
                unlock();
                pc[f] = 1;
#ifdef WRONG_ORDER
                arrive(f);               /* WRONG: still on the fiber's stack */
                on_stack[f]--            /* ... the switch happens only now */
#else
                on_stack[f]--;           /* switched out: the stack is free */
                arrive(f)                /* worker side, after the switch */
#endif
            fi
        :: pc[f] == 1 ->                 /* resumed inside the wait */
            assert(ev_set);
            pc[f] = 2; on_stack[f]--; ndone++
        fi
    :: ndone == NF -> break
    od
}

proctype Setter() {
    byte f, old;
    bool woke[NF];
    lock();
    ev_set = true;
    f = 0;
    do
    :: f < NF -> woke[f] = waiting[f]; waiting[f] = false; f++
    :: f == NF -> break
    od;
    unlock();
    f = 0;
    do
    :: f < NF -> if :: woke[f] -> arrive(f) :: else -> skip fi; f++
    :: f == NF -> break
    od
}

init {
    atomic {
        runq!0; runq!1;
        run Worker(); run Worker();
        run Setter(); run Setter()      /* two sets race: one wake each */
    }
}
