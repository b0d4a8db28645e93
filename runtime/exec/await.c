/*
 * exec/await.c - the asynchronous waits of started runs and pipelines
 * (dagrt.h: dagrt_graph_wait_async, dagrt_pipeline_wait_async; under
 * dagrt_coro.hpp's co::wait), for a coroutine that must not hold a thread.
 *
 * A started run's wait is not only a wait: it is where the main thread
 * runs its part of the frame (`on main` nodes, which a started run queues
 * for the main thread, and in pipelined plan mode the caller's list that
 * no helper took), then the frame's end (policy, frame memory, the state
 * handed back), all of it the main thread's. So the asynchronous form
 * does not arm a wake-up at the last node: it takes the wait now, from
 * whichever of rt's threads asks (no other wait may take it then), and
 * queues that very wait as a task of the main thread's queue
 * (wait/async.c, rt_async_on_main). The main thread runs it inside its
 * next wait or pump and helps there until the run is complete, exactly as
 * in dagrt_graph_wait, in every mode a started run has (dynamic,
 * pipelined plan, with or without workers); fn then gets the result. A
 * pipeline's is the same over its frames, oldest first. Only what the
 * caller sees changes: the call returns at once, and the run's end waits
 * for the main thread to wait or pump, as its `on main` nodes always did.
 */
#include "exec.h"

/* On the main thread, in the task rt_async_on_main queued. */
static int64_t graph_wait_body(void *st, uint64_t n)
{
    (void)n;
    graph_rt *r = state_rt(st);
    return rt_exec_wait_run(r->rt, st);
}

int64_t dagrt_graph_wait_async(dagrt *rt, dagrt_async *a, dagrt_graph_state *st)
{
    int rc = rt_async_ready(rt, a);
    if (rc != 0)
        return rc;
    if (!st)
        return DAGRT_EINVAL;
    if ((rc = rt_exec_wait_take(rt, st, false)) != 0)
        return rc;
    if ((rc = rt_async_on_main(rt, a, graph_wait_body, st, 0)) != 0) {
        rt_exec_wait_give(st);
        return rc;
    }
    return DAGRT_PENDING;
}

static int64_t pipe_wait_body(void *p, uint64_t keep)
{
    return rt_pipe_settle(NULL, p, (unsigned)keep);   /* the frames' runtime */
}

int64_t dagrt_pipeline_wait_async(dagrt *rt, dagrt_async *a, dagrt_pipeline *p, unsigned keep)
{
    int rc = rt_async_ready(rt, a);
    if (rc != 0)
        return rc;
    if ((rc = rt_pipe_take(rt, p)) != 0)
        return rc;
    /* Nothing to wait for: the answer now (settle only hands p back). */
    if (rt_pipe_inflight(p) <= keep)
        return rt_pipe_settle(rt, p, keep);
    if ((rc = rt_async_on_main(rt, a, pipe_wait_body, p, keep)) != 0) {
        (void)rt_pipe_settle(rt, p, UINT32_MAX);   /* hands p back, waits for nothing */
        return rc;
    }
    return DAGRT_PENDING;
}
