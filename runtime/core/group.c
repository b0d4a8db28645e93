/*
 * core/group.c - wait groups (dagrt_group): the owner-local and atomic counts,
 * completion, and arming a group for a waiter (core/core.h describes the
 * protocol). The helping wait itself is in core/work.c, beside find_task.
 */
#include "core.h"

void dagrt_group_init(dagrt_group *g)
{
    if (!g)
        return;
    _Static_assert(sizeof(rt_group) <= sizeof(dagrt_group), "dagrt_group too small");
    rt_group *gi = rt_group_of(g);
    atomic_init(&gi->word, 0);
    /* Owner fast path only for a group on this thread's own stack: code on
     * a fiber stack (which may migrate) or memory shared by design gets
     * the plain atomic count. */
    rt_ctx *c = rt_tls_ctx;
    char *p = (char *)(void *)g;
    gi->owner = (c && p >= c->stack_lo && p < c->stack_hi) ? c : NULL;
    gi->waiter = NULL;
    gi->local = 0;
    gi->armed = 0;
    gi->magic = RT_GROUP_MAGIC;
}

int dagrt_group_done(const dagrt_group *g)
{
    if (!g)
        return DAGRT_EINVAL;
    rt_group *gi = rt_group_of((dagrt_group *)g);
    if (gi->magic != RT_GROUP_MAGIC)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_tls_ctx;
    /* Another runtime thread's owner-local count is not ours to read (as
     * in rt_group_arm_on). */
    if (gi->owner && gi->owner != c)
        return DAGRT_EPERM;
    /* acquire (inside rt_group_is_done): pairs with the completers'
     * release RMWs on word, so a 1 publishes the tasks' effects. */
    return rt_group_is_done(gi, c) ? 1 : 0;
}

void rt_group_done(rt_group *g)
{
    /* acq_rel: release publishes this task's effects to the waiter (a
     * release sequence runs through all the group's RMWs); acquire makes
     * the waiter's rt_waiter pointer, stored before its arming RMW,
     * visible here. */
    int64_t old = atomic_fetch_sub_explicit(&g->word, 1, memory_order_acq_rel);
    if (old - 1 == RT_GROUP_WAITING) {
        rt_waiter *w = g->waiter;
        /* release: the waiter returns when it reads 0 (acquire). This is
         * our last access to *g: the waiter may free it right after. */
        atomic_store_explicit(&g->word, 0, memory_order_release);
        if (w)
            w->fn(w);
    }
}

int rt_group_arm_on(rt_group *g, rt_ctx *c, rt_waiter *w)
{
    /* A group owned by another thread of the same runtime: its owner-local
     * count is not ours to read. (An owner from another runtime never
     * counted anything here: all of this runtime's counts are atomic.) */
    if (g->owner && g->owner != c && c && g->owner->rt == c->rt)
        return DAGRT_EPERM;
    bool own = g->owner != NULL && g->owner == c;
    int64_t loc = own ? g->local : 0;
    /* acquire: if pending is zero already, the tasks' effects are ours. */
    int64_t cur = atomic_load_explicit(&g->word, memory_order_acquire);
    if (cur + loc == 0)
        return 1;
    if (cur > RT_GROUP_WAITING / 2)
        return DAGRT_EBUSY;
    g->waiter = w;
    if (own) {
        g->local = 0;
        g->armed = 1;
    }
    /* acq_rel: release hands g->waiter to the completer (it acquires
     * through its fetch_sub); acquire: if pending is already zero we see
     * the tasks' effects. */
    int64_t old = atomic_fetch_add_explicit(&g->word, loc + RT_GROUP_WAITING, memory_order_acq_rel);
    if (old + loc == 0) {
        /* Completed in between: no completer will come; undo. relaxed: no
         * one else touches a group with nothing pending. */
        atomic_store_explicit(&g->word, 0, memory_order_relaxed);
        if (own)
            g->armed = 0;
        return 1;
    }
    return 0;
}

RT_NOINLINE int rt_group_arm(rt_group *g, rt_waiter *w)
{
    return rt_group_arm_on(g, rt_tls_ctx, w);
}

void rt_ctx_wake(rt_waiter *w)
{
    rt_ctx *c = (rt_ctx *)(void *)((char *)w - offsetof(rt_ctx, waiter));
    rt_unpark(&c->parker);
}
