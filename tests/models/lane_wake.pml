/*
 * lane_wake.pml - a Windows lane thread's wait on a socket and its cancel
 * (runtime/os/reactor_lane_win32.c: wait_ready, lane_cancel). The lane thread
 * loops: look at the op's cancel flag; WSAPoll on the op's socket and on
 * the thread's wake socket (blocks until one has something); if the wake
 * socket has bytes, drain them and look again. A cancel sets the flag
 * (release), then sends the wake socket a byte. The op's socket never gets
 * traffic here; the wake socket may hold a stale byte from an earlier op.
 * Property: the lane thread always ends the op as cancelled (spin reports
 * a thread left blocked in WSAPoll as an invalid end state), and only once
 * the cancel was asked.
 *
 * Negative controls (spin must find a violation):
 *   -DWAKE_FIRST   the cancel sends the byte before it sets the flag
 *   -DDRAIN_EARLY  the lane thread drains the wake socket after looking at
 *                  the flag and before WSAPoll, instead of after it
 */
bool cancel_flag = false;
byte wake = 0;            /* bytes queued on the wake socket */
bool ended = false;

active proctype lane()
{
    do
    :: cancel_flag -> break
    :: else ->
#if defined(DRAIN_EARLY)
        wake = 0;
#endif
        /* WSAPoll: blocks until the wake socket is readable */
        wake > 0;
        wake = 0          /* wake_drain */
    od;
    assert(cancel_flag);
    ended = true
}

active proctype canceller()
{
#if defined(WAKE_FIRST)
    wake++;
    cancel_flag = true
#else
    cancel_flag = true;
    wake++
#endif
}

/* A stale byte from an earlier op, which may arrive at any time. */
active proctype stale()
{
    if
    :: wake++
    :: skip
    fi
}
