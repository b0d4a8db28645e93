/*
 * core/seen.c - the program's spawned tasks as an observer and the trace
 * see them (RT_TASK_SEEN, core/core.h): marked at the spawn while
 * something observes, with the node that spawned them where the trace
 * knows it, and reported around their body as they run (trace/trace.h,
 * rt_obs_task): a plain task once, a fiber task once per slice
 * (fiber/sched.c calls rt_task_slice_begin / _end around each switch to
 * it). Out of the hot files: a task spawned while nothing observes never
 * comes here (core/work.c tests the mark together with DAGRT_SPAWN_FIBER,
 * one test it made already; fiber/sched.c tests it once per slice).
 */
#include "core.h"

void rt_task_seen(rt_obs *ob, rt_ctx *c, rt_task *t, size_t inline_bytes)
{
    t->flags |= RT_TASK_SEEN;
    /* The node open on the spawning thread (or the parent of the spawned
     * task open there: trace/record.c, rt_trace_current). A thread outside
     * the runtime (c NULL) has no ring. */
    rt_trace_node n;
    if (ob->trace && c && inline_bytes <= RT_TASK_PARENT_AT &&
        rt_trace_current(ob->trace, c->index, &n)) {
        *rt_task_parent_of(t) = (rt_task_parent){ n.graph, n.node, n.frame, n.index };
        t->flags |= RT_TASK_PARENT;
    }
}

/* What an observer is told about t running on c's thread. */
static void task_event(const rt_ctx *c, rt_task *t, dagrt_task_event *ev)
{
    void *arg = (t->flags & RT_TASK_SELF) ? (void *)t : t->arg;
    *ev = (dagrt_task_event){ (int)c->index, t->fn, arg, NULL, NULL, 0, 0, 0, false };
    if (t->flags & RT_TASK_PARENT) {
        const rt_task_parent *p = rt_task_parent_of(t);
        ev->graph = p->graph;
        ev->node = p->node;
        ev->index = p->index;
        ev->frame = p->frame;
    }
}

void rt_task_run_seen(rt_ctx *c, rt_task *t)
{
    dagrt_task_event ev;
    task_event(c, t, &ev);
    /* Again: the observer may have gone since the spawn (then it runs
     * as any task). */
    rt_obs *ob = rt_obs_now(&c->rt->obs);
    c->depth++;
    void *frame = c->frame;   /* in no frame, as core/work.c's task_run */
    rt_ctx_set_frame(c, NULL);
    if (ob)
        rt_obs_task(ob, true, &ev, t);
    t->fn(ev.arg);
    if (ob)
        rt_obs_task(ob, false, &ev, t);
    rt_ctx_set_frame(c, frame);
    c->depth--;
    rt_task_finish(c->rt, t);
}

rt_obs *rt_task_slice_begin(rt_ctx *c, rt_task *t, uint32_t slice)
{
    /* Loaded per slice, as rt_task_run_seen per task: a slice begun while
     * nothing observes reports neither end. */
    rt_obs *ob = rt_obs_now(&c->rt->obs);
    if (ob) {
        dagrt_task_event ev;
        task_event(c, t, &ev);
        ev.slice = slice;
        rt_obs_task(ob, true, &ev, t);
    }
    return ob;
}

void rt_task_slice_end(rt_ctx *c, rt_obs *ob, rt_task *t, uint32_t slice, bool suspended)
{
    /* The record the begin went to (records are never freed before
     * dagrt_destroy: trace/trace.h), so the pair stays whole. */
    if (!ob)
        return;
    dagrt_task_event ev;
    task_event(c, t, &ev);
    ev.slice = slice;
    ev.suspended = suspended;
    rt_obs_task(ob, false, &ev, t);
}
