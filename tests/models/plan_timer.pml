/*
 * plan_timer.pml - progress of a plan-mode frame whose node waits for a
 * timer (runtime/exec/plan.c plan_work and plan_relax, exec/plan_off.c,
 * runtime/core/idle.c "THE POLLER'S DUTY", runtime/wait/timer.c).
 *
 * The frame (issue 36's reduced graph, the hang on one worker):
 *   list 0 (the caller): S, then E after F
 *   list 1 (the helper on the one worker): F after S, a fiber node
 * F's claimer dispatches it as a task (exec/plan_off.c); whoever runs that
 * task starts the fiber, which queues a timer and suspends (the task's
 * thread goes back to its poll). The timer's fire queues the fiber's
 * resume task; running it ends F (its `done`). Both threads stay in the
 * frame until every node is claimed and done: neither goes idle, so
 * neither is the timers' keeper (core/idle.c), and rt_timer_add's wake-up of an
 * idler finds none.
 *
 * A poll does nothing that changes the state unless something is there to
 * act on, so each thread's poll is modelled as a choice among the steps
 * that are enabled: claim the node at a cursor once it is ready, help
 * (run a queued task: plan_share, every 16 polls), and the poller's duty
 * (fire a due timer: rt_poll_duty, every RT_DUTY_POLLS polls). A thread
 * with none enabled is blocked: if every thread is, before the frame ends,
 * spin reports an invalid end state (the frame that never ends). Time is a
 * process that makes a queued timer due at some point.
 *
 * Checked: no deadlock (the only valid end is the frame done and both
 * threads out of it); F runs before E; the timer fires once.
 * Negative control (tests/models/meson.build), must be rejected:
 *   -DNODUTY   plan threads do not serve timers (40186f5: only idlers did):
 *              both threads poll for E and F forever.
 *
 * Abstracted: the lists' cursors and CAS claims (plan_lists.pml), the
 * caller's helpers between runs, how many polls pass between steps, the
 * I/O half of the duty (the same shape with a completion for a timer),
 * and the keeper (timer_park.pml; no thread parks here).
 */
bool doneS, doneF, doneE;
bool claimedS, claimedF, claimedE;
byte taskq = 0;          /* queued runtime tasks: 1 = F's start, 2 = F's resume */
bool fiber_started;
bool timer_queued;
bool due;                /* the clock passed the timer's deadline */
byte fired = 0;
bool out[2];             /* each thread left the frame */

/* A help step: runs the queued task (one at a time here). */
inline help()
{
    if
    :: taskq == 1 -> taskq = 0; fiber_started = true; timer_queued = true   /* sleeps: suspends */
    :: taskq == 2 -> taskq = 0; doneF = true                                /* resumes, ends F */
    fi
}

/* The poller's duty: fires the due timer, which queues the fiber's resume. */
inline duty()
{
    timer_queued = false; fired++; taskq = 2
}

#ifdef NODUTY
#define DUTY_ENABLED false
#else
#define DUTY_ENABLED (timer_queued && due)
#endif

proctype plan_thread(byte own)
{
    do
    :: atomic { own == 0 && !claimedS -> claimedS = true } ->
        doneS = true
    :: atomic { own == 1 && !claimedF && doneS -> claimedF = true; taskq = 1 }   /* dispatched */
    :: atomic { own == 0 && !claimedE && doneF -> claimedE = true } ->
        assert(doneF);
        doneE = true
    :: atomic { taskq != 0 -> help() }
    :: atomic { DUTY_ENABLED -> duty() }
    :: atomic { claimedS && claimedF && claimedE && doneE && taskq == 0 -> out[own] = true; break }
    od
}

active proctype clock()
{
    timer_queued -> due = true
}

init
{
    atomic {
        run plan_thread(0);
        run plan_thread(1)
    }
    (out[0] && out[1]) -> assert(fired == 1 && doneF && doneE)
}
