/*
 * event_free.pml - an event freed by its waiter as soon as a wait returns
 * (runtime/wait/sync.c, "events": EV_SETTING).
 *
 * A waiter that sees the event set may return and free it at once: the
 * common completion pattern (an event on a parent's stack, set by a child
 * task). So the setter's last access to the event must be the store that
 * makes it set. The setter takes the queue's spinlock; if the event is
 * clear it stores SETTING, pops the queued waiters, unlocks, stores SET
 * (its last access) and then wakes the popped waiters (their records are
 * their own). A waiter's fast path reads the value without the lock: SET
 * returns, SETTING waits for SET; otherwise it locks, and finding it not
 * clear unlocks and (SETTING) waits for SET before it returns; finding it
 * clear it queues itself and sleeps until woken. A reset that finds
 * SETTING waits for SET before it clears, so no waiter queues on an event
 * that a setter is about to mark set.
 *
 * Checked: nobody touches the event after W1 freed it (every access
 * asserts it), every waiter returns (no invalid end state: a waiter queued
 * but never woken blocks forever), and a waiter returns only after the
 * event was set. With -DWITH_RESET (two waiters and a reset at any
 * moment; they keep the event, and may rightly sleep on after a reset):
 * no waiter is left queued on an event its setter has left set (the
 * monitor).
 * Negative controls (must fail):
 *   -DSET_UNDER_LOCK  the old protocol: SET stored under the lock, then
 *                     the unlock (an access after a fast-path reader may
 *                     have returned and freed the event);
 *   -DRESET_NOWAIT    a reset clears a SETTING event: the setter's SET
 *                     then lands on a clear event a waiter queued on,
 *                     which nobody wakes.
 */
#define CLEAR 0
#define SET 1
#define SETTING 2

byte value = CLEAR;
bool lock = false;
bool freed = false;
bool was_set = false;      /* a setter reached SETTING or SET */
byte queue = 0;            /* queued waiters, as a qbit set: 1 W1, 2 W2 */
bool woken1 = false;
bool woken2 = false;
bool setter_done = false;

#define ACCESS assert(!freed)

inline spin_lock() {
    ACCESS;
    atomic { !lock -> lock = true }
}

inline spin_unlock() {
    ACCESS;
    lock = false
}

inline settled() {
    /* wait until no setter is between its lock and its SET */
    do
    :: ACCESS; if :: value != SETTING -> break :: else -> skip fi
    od
}

proctype setter()
{
    byte popped;
    spin_lock();
    ACCESS;
    if
    :: value != CLEAR -> spin_unlock(); goto done
    :: else -> skip
    fi;
#ifdef SET_UNDER_LOCK
    was_set = true; value = SET;
    popped = queue; queue = 0;
    spin_unlock();
#else
    was_set = true; value = SETTING;
    popped = queue; queue = 0;
    spin_unlock();
    ACCESS;
    value = SET;
#endif
    /* waking touches the waiters' records only */
    if :: popped & 1 -> woken1 = true :: else -> skip fi;
    if :: popped & 2 -> woken2 = true :: else -> skip fi;
done:
    setter_done = true
}

/* A waiter: qbit is its queue bit; frees: it frees the event on return. */
proctype waiter(byte qbit; bool frees)
{
    byte v = 0;
    ACCESS;
    v = value;
    if
    :: v == SET -> goto ret
    :: v == SETTING -> settled(); goto ret
    :: else -> skip
    fi;
    spin_lock();
    ACCESS;
    if
    :: value != CLEAR -> spin_unlock(); settled(); goto ret
    :: else -> queue = queue | qbit; spin_unlock()
    fi;
    /* asleep until a setter popped and woke it (with a reset a waiter
     * may rightly sleep on: the monitor checks it was not forgotten) */
#ifdef WITH_RESET
end_sleep:
#endif
    (qbit == 1 && woken1) || (qbit == 2 && woken2);
ret:
    assert(was_set);
    if
    :: frees -> freed = true
    :: else -> skip
    fi
}

/* A reset, at any moment (-DWITH_RESET). */
proctype resetter()
{
    spin_lock();
#ifndef RESET_NOWAIT
    do
    :: ACCESS; if :: value != SETTING -> break :: else -> spin_unlock(); settled(); spin_lock() fi
    od;
#endif
    ACCESS;
    value = CLEAR;
    spin_unlock()
}

/* A waiter queued on an event its one setter has left set is never woken. */
proctype monitor()
{
end_mon:
    atomic { setter_done && value == SET && queue != 0 -> assert(false) }
}

init {
    atomic {
        run setter();
        run monitor();
#ifdef WITH_RESET
        /* the reset's variant checks lost wake-ups only: its waiters keep
         * the event (a user frees no event a reset may still touch) */
        run waiter(1, false);
        run waiter(2, false);
        run resetter();
#else
        /* the freeing waiter is the event's last user: no other waiter */
        run waiter(1, true);
#endif
    }
}
