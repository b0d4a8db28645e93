/*
 * pfor/async.c - the asynchronous parallel-for (dagrt_parallel_for_async):
 * a range handed over as one task that returns at once, counted by the
 * caller's group. Whoever runs a piece splits it in halves down to the
 * grain, spawning the upper half (counted by the same group before the
 * piece finishes, so the group cannot reach zero early) and going on
 * with the lower: the caller pays one spawn whatever the range, and the
 * pieces spread through the ordinary spawn path (a worker's private
 * tail, exposed when someone is idle or asks). Unlike dagrt_parallel_for
 * nobody waits in it, so none of pfor.c's timing applies.
 */
#include "pfor.h"

#define RANGE_MAGIC 0x52414e47u   /* "RANG" */

typedef struct range_job {
    dagrt *rt;
    dagrt_range_fn fn;
    void *arg;
    size_t grain;
    uint32_t magic;
} range_job;

_Static_assert(sizeof(range_job) <= sizeof(dagrt_range_job), "dagrt_range_job is too small");

static void range_task(void *p);

/* A task for [b, e) of j, counted by g, from the calling thread. */
static int range_spawn(range_job *j, rt_group *g, size_t b, size_t e)
{
    dagrt *rt = j->rt;
    rt_ctx *c = rt_ctx_here(rt);
    rt_task *t = c ? rt_task_alloc(c) : rt_task_alloc_any(rt);
    if (!t)
        return DAGRT_ENOMEM;
    t->fn = range_task;
    t->arg = j;
    t->group = g;
    t->flags = RT_TASK_SELF;
    t->u[0] = b;
    t->u[1] = e;
    rt_group_count_spawn(g, c, t);
    int r = rt_submit(rt, c, t);
    if (r != 0) {
        uint32_t fl = t->flags;
        rt_task_free(rt, t);
        rt_group_count_done(g, c, fl);
    }
    return r;
}

static void range_task(void *p)
{
    rt_task *t = p;
    range_job *j = t->arg;
    size_t b = t->u[0], e = t->u[1];
    /* Out of task memory: the rest runs here, the loop still completes. */
    while (e - b > j->grain && range_spawn(j, t->group, b + (e - b) / 2, e) == 0)
        e = b + (e - b) / 2;
    j->fn(j->arg, b, e);
}

int dagrt_parallel_for_async(dagrt *rt, dagrt_group *g, dagrt_range_job *jp, size_t begin,
                             size_t end, size_t grain, dagrt_range_fn fn, void *arg)
{
    if (!rt || !g || !jp || !fn || begin > end)
        return DAGRT_EINVAL;
    rt_group *gi = rt_group_of(g);
    if (gi->magic != RT_GROUP_MAGIC)
        return DAGRT_EINVAL;
    if (begin == end)
        return 0;
    range_job *j = (range_job *)(void *)jp;
    size_t n = end - begin, threads = (size_t)rt->nworkers + 1;
    if (grain == 0) {
        /* Eight pieces a thread: enough to even out uneven pieces. */
        grain = n / (8 * threads);
        if (grain == 0)
            grain = 1;
    }
    *j = (range_job){.rt = rt, .fn = fn, .arg = arg, .grain = grain, .magic = RANGE_MAGIC};
    return range_spawn(j, gi, begin, end);
}
