/*
 * pause.pml - dagrt_pause / dagrt_resume against the workers' loops
 * (runtime/core/worker.c, "PAUSE": pause_park, dagrt_pause, pause_end).
 *
 * The main thread pauses and resumes twice. Pause stores paused = 1,
 * then waits until npaused counts every worker, and returns. A worker
 * looks at paused (relaxed) at the top of its loop; seeing 1 it parks:
 * counts itself, sleeps while paused is 1, uncounts itself, then loads
 * paused again (seq_cst) and parks again if it is 1. Seeing 0 it runs a
 * task. The pair's four accesses are seq_cst in C, so the model is
 * sequentially consistent; the loop's relaxed look is modelled as one
 * that may return a stale 0 when the last value the worker itself saw
 * was 0 (`seen`): coherence allows no older value than that.
 *
 * Checked: no worker starts a task while pause has returned and resume
 * has not begun; nothing is left blocked.
 * Negative controls (must fail):
 *   -DNORECHECK  the worker leaves its park without loading paused again;
 *   -DLOOKFIRST  pause reads npaused before it stores paused.
 */
#define N 2

byte paused = 0;
byte npaused = 0;
bool returned = false;   /* pause has returned, resume not begun */
bool stop = false;

proctype worker()
{
    byte seen = 0;
    do
    :: stop -> break
    :: else ->
        if
        :: paused == 1 ->
            seen = 1;
park:
            npaused++;
            (paused == 0 || stop);            /* asleep on the word */
            npaused--;
#ifndef NORECHECK
            if
            :: paused == 1 -> goto park
            :: else -> seen = 0
            fi
#else
            seen = 0
#endif
        :: paused == 0 || seen == 0 ->        /* maybe a stale 0 */
            assert(!returned)                 /* a task starts */
        fi
    od
}

init {
    byte i;
    for (i : 1 .. N) { run worker() }
    for (i : 1 .. 2) {
#ifdef LOOKFIRST
        npaused == N || true;
        if
        :: npaused == N -> paused = 1
        :: else -> paused = 1; npaused == N
        fi;
#else
        paused = 1;
        npaused == N;
#endif
        returned = true;
        returned = false;
        paused = 0
    }
    stop = true
}
