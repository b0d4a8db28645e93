/*
 * fiber_none.c - stand-in for the fiber layer (scheduler.h, "provided by
 * the fiber layer"): fiber tasks run as plain calls on the worker's stack,
 * and no wait is a fiber wait. Replaced by fiber.c/sync.c when they land.
 */
#include "scheduler.h"

void rt_fiber_run(rt_ctx *c, rt_task *t)
{
    t->fn(t->arg);
    rt_task_finish(c->rt, t);
}

int rt_fiber_group_wait(dagrt *rt, rt_group *g)
{
    (void)rt;
    (void)g;
    return 1;
}

int rt_fiber_rt_init(dagrt *rt)
{
    (void)rt;
    return 0;
}

void rt_fiber_rt_fini(dagrt *rt)
{
    (void)rt;
}
