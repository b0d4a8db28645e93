/*
 * core/task.c - task descriptors: per-thread pools carved from slabs, the shared
 * pool for threads outside the runtime, and the remote-free stacks through
 * which a descriptor finished on another thread goes home. The fast paths
 * (alloc and free on the owning thread) are inline in core/core.h.
 */
#include "core.h"

#include <stdlib.h>

rt_task *rt_slab_new(rt_slab **slabs, uint32_t home)
{
    size_t hdr = 64;   /* keeps the tasks 64-byte aligned */
    unsigned char *m = rt_os_alloc_aligned(64, hdr + RT_SLAB_TASKS * sizeof(rt_task_slot));
    if (!m)
        return NULL;
    rt_slab *s = (rt_slab *)(void *)m;
    s->next = *slabs;
    *slabs = s;
    /* Slots, not bare tasks: each has dagrt_spawn_inline's room after it. */
    rt_task_slot *t = (rt_task_slot *)(void *)(m + hdr);
    for (int i = 0; i < RT_SLAB_TASKS; i++) {
        t[i].task.home = home;
        atomic_init(&t[i].task.node.next, i + 1 < RT_SLAB_TASKS ? &t[i + 1].task.node : NULL);
    }
    return &t[0].task;
}

void rt_slabs_free(rt_slab *s)
{
    while (s) {
        rt_slab *n = s->next;
        rt_os_free_aligned(s);
        s = n;
    }
}

RT_NOINLINE rt_task *rt_task_refill(rt_ctx *c)
{
    /* acquire: pairs with the release CAS of threads returning descriptors;
     * taking the whole stack by exchange cannot suffer ABA. */
    rt_task *t = atomic_exchange_explicit(&c->remote, NULL, memory_order_acquire);
    if (t)
        return t;
    return rt_slab_new(&c->slabs, c->index);
}

rt_task *rt_task_alloc(rt_ctx *c)
{
    return rt_task_alloc_on(c);
}

rt_task *rt_task_alloc_any(dagrt *rt)
{
    rt_ctx *c = rt_ctx_here(rt);
    if (c)
        return rt_task_alloc(c);
    rt_os_mutex_lock(&rt->shared_mu);
    rt_task *t = rt->shared_free;
    if (!t)
        /* acquire: pairs with rt_task_push_remote's release CAS. */
        t = atomic_exchange_explicit(&rt->shared_remote, NULL, memory_order_acquire);
    if (!t)
        t = rt_slab_new(&rt->shared_slabs, RT_HOME_SHARED);
    if (t) {
        /* relaxed: the shared free list is under shared_mu. */
        rt->shared_free = (rt_task *)(void *)atomic_load_explicit(&t->node.next, memory_order_relaxed);
        t->home = RT_HOME_SHARED;
        rt_task_reset(t);
    }
    rt_os_mutex_unlock(&rt->shared_mu);
    return t;
}

/* Treiber push: release so the owner's acquire exchange sees our writes
 * (and we have finished with the descriptor) before it reuses it. */
void rt_task_push_remote(_Atomic(rt_task *) *stack, rt_task *t)
{
    rt_task *old = atomic_load_explicit(stack, memory_order_relaxed);
    do {
        atomic_store_explicit(&t->node.next, (rt_node *)(void *)old, memory_order_relaxed); /* node is first */
    } while (!atomic_compare_exchange_weak_explicit(stack, &old, t,
                 memory_order_release, memory_order_relaxed));
}

void rt_task_free(dagrt *rt, rt_task *t)
{
    rt_task_free_on(rt, rt_ctx_here(rt), t);
}
