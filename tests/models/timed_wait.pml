/*
 * timed_wait.pml - a timed, cancellable wait racing a hand-off
 * (runtime/wait/wq.h, "who wakes a waiter", on the one timed wait of
 * wait/oneshot.c; timer.c; wait/cancel.c).
 *
 * Two waiters are queued (FIFO) on a semaphore with no units. Each has a
 * timer that may fire at any moment and a cancel link on one scope; one
 * thread releases one unit (a hand-off to the oldest waiter still queued)
 * while another cancels the scope. Whoever takes a waiter out of the
 * queue under the queue's lock wakes it, once, with its result: 1 handed
 * the unit, 2 timed out, 3 cancelled. A woken waiter takes its timer and
 * link down, waiting while either's callback still runs, and returns (its
 * frame ends).
 *
 * Checked: every waiter is woken exactly once; no callback touches a
 * waiter whose frame has ended; the unit is never lost (it ends with a
 * waiter whose result says so, or back in the semaphore).
 *
 * Negative controls (must fail):
 *   -DNOQUEUED     the timer/cancel side decides "mine" from `queued` read
 *                  before taking the lock (a hand-off in between is lost
 *                  or woken twice);
 *   -DEARLY_RETURN the waiter returns without waiting for a callback that
 *                  is still running (rt_timer_cancel / rt_cancel_detach
 *                  not waiting for `firing` / `running`).
 */
#define NW 2

#define T_QUEUED 0
#define T_FIRING 1
#define T_DONE   2

#define L_NONE     0
#define L_ATTACHED 1
#define L_RUNNING  2
#define L_DONE     3

bit qlock = 0;            /* the queue's spinlock */
bool queued[NW];
byte result[NW];          /* 0: none yet */
byte wakes[NW];
byte sem = 0;
bool alive[NW];
byte timer[NW];           /* T_*: the timer's state in the heap */
byte link[NW];            /* L_*: the cancel link's state */
bit tlock = 0;            /* the scope tree's lock */
bool requested = false;

inline lock_q()   { atomic { qlock == 0 -> qlock = 1 } }
inline unlock_q() { qlock = 0 }
inline lock_t()   { atomic { tlock == 0 -> tlock = 1 } }
inline unlock_t() { tlock = 0 }

/* waiter_take(i, code): a timer or a cancel link takes waiter i out. */
inline take(i, code, mine) {
#ifdef NOQUEUED
    assert(alive[i]);
    mine = queued[i];
    lock_q();
    if
    :: mine -> queued[i] = false; result[i] = code
    :: else -> skip
    fi;
    unlock_q();
#else
    lock_q();
    assert(alive[i]);
    mine = queued[i];
    if
    :: mine -> queued[i] = false; result[i] = code
    :: else -> skip
    fi;
    unlock_q();
#endif
    if
    :: mine -> assert(alive[i]); wakes[i]++
    :: else -> skip
    fi
}

proctype Waiter(byte i) {
    bool mine;
    /* rt_cancel_attach: refused (and the waiter takes itself out) if the
     * scope was cancelled first. */
    lock_t();
    if
    :: requested -> unlock_t(); take(i, 3, mine)
    :: else -> link[i] = L_ATTACHED; unlock_t()
    fi;
    /* The suspend: until woken. */
    wakes[i] > 0;
    /* rt_timer_cancel: out of the heap, or wait while it fires. */
    atomic {
        if
        :: timer[i] == T_QUEUED -> timer[i] = T_DONE
        :: else -> skip
        fi
    }
#ifndef EARLY_RETURN
    timer[i] != T_FIRING;
#endif
    /* rt_cancel_detach: off the list, or wait while on_cancel runs. */
    lock_t();
    if
    :: link[i] == L_ATTACHED -> link[i] = L_DONE
    :: else -> skip
    fi;
    unlock_t();
#ifndef EARLY_RETURN
    link[i] != L_RUNNING;
#endif
    alive[i] = false   /* the frame ends */
}

proctype Timer(byte i) {
    bool mine;
    /* rt_timer_run_due: pops it unless cancelled first. */
    atomic {
        if
        :: timer[i] == T_QUEUED -> timer[i] = T_FIRING
        :: else -> goto out
        fi
    }
    take(i, 2, mine);
    timer[i] = T_DONE;
out:
    skip
}

proctype Releaser() {
    /* dagrt_sem_release(1): hand off to the oldest queued waiter. */
    byte w = NW;
    lock_q();
    if
    :: queued[0] -> w = 0
    :: !queued[0] && queued[1] -> w = 1
    :: else -> sem++
    fi;
    if
    :: w < NW -> queued[w] = false; result[w] = 1
    :: else -> skip
    fi;
    unlock_q();
    if
    :: w < NW -> assert(alive[w]); wakes[w]++
    :: else -> skip
    fi
}

proctype Canceller() {
    /* dagrt_cancel_request: the flag, then each attached link, its
     * on_cancel outside the tree's lock. */
    byte i = 0;
    bool mine;
    requested = true;
    do
    :: i < NW ->
        lock_t();
        if
        :: link[i] == L_ATTACHED ->
            link[i] = L_RUNNING;
            unlock_t();
            take(i, 3, mine);
            lock_t();
            link[i] = L_DONE;
            unlock_t()
        :: else -> unlock_t()
        fi;
        i++
    :: else -> break
    od
}

init {
    byte i;
    for (i : 0 .. NW - 1) {
        queued[i] = true;   /* both queued, 0 first (the sem had no unit) */
        alive[i] = true;
        timer[i] = T_QUEUED;
        link[i] = L_NONE
    }
    atomic {
        run Waiter(0); run Waiter(1);
        run Timer(0); run Timer(1);
        run Releaser(); run Canceller()
    }
    _nr_pr == 1;
    for (i : 0 .. NW - 1) {
        assert(wakes[i] == 1);
        assert(result[i] != 0);
        assert(!queued[i])
    }
    /* The unit: with the waiter that was handed it, or back in the sem. */
    assert(sem + (result[0] == 1) + (result[1] == 1) == 1)
}
