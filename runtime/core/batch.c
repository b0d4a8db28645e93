/*
 * core/batch.c - dagrt_spawn_batch: many tasks handed over with one
 * publication (the single spawn and the queues it uses are in core/work.c).
 */
#include "core.h"

/* BATCHES. dagrt_spawn_batch hands many tasks over with one publication,
 * all or nothing (out of memory spawns none). From a runtime thread, in
 * one pass: room in the deque reserved first, each descriptor made and
 * pushed into the private tail (where nobody else looks), then one
 * exposure, the idle protocol's one notify; a descriptor that cannot be
 * made takes the pushed ones back (rt_deque_unpush_private). From a
 * thread outside the runtime, the descriptors first, then pushes spread
 * over the workers' inboxes and one notify; main-thread and hot batches,
 * their queue and one wake. The idle protocol's hand-on (a woken thread
 * that finds more wakes the next: core/idle.c) ramps the other workers up,
 * as it does for any burst. */
static void batch_free(dagrt *rt, rt_task *head)
{
    while (head) {
        rt_task *next = (rt_task *)head->u[0];
        rt_task_free(rt, head);
        head = next;
    }
}

typedef struct unpush_ctx {
    dagrt *rt;
    rt_ctx *c;
    rt_group *g;
} unpush_ctx;

static void unpush_one(void *x, void *u)
{
    unpush_ctx *k = u;
    rt_task *t = x;
    uint32_t fl = t->flags;
    rt_task_free(k->rt, t);
    if (k->g)
        rt_group_count_done(k->g, k->c, fl);
}

static int batch_to_deque(dagrt *rt, rt_ctx *c, rt_group *gi, const dagrt_task_desc *tasks,
                          size_t n, unsigned flags, rt_obs *ob)
{
    if (!rt_deque_reserve(&c->deque, (int64_t)n))
        return DAGRT_ENOMEM;
    /* relaxed: the owner's own index. */
    int64_t from = atomic_load_explicit(&c->deque.bottom, memory_order_relaxed);
    /* Counted before anything is published (see submit_on); relaxed: our
     * own counter (single writer); destroy reads it with acquire. */
    uint64_t ns = atomic_load_explicit(&c->nspawned, memory_order_relaxed);
    atomic_store_explicit(&c->nspawned, ns + n, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        rt_task *t = rt_task_make(rt, c, tasks[i].fn, tasks[i].arg, gi, flags);
        if (RT_UNLIKELY(!t)) {
            unpush_ctx k = {rt, c, gi};
            rt_deque_unpush_private(&c->deque, from, unpush_one, &k);
            /* relaxed: undoing our own count; nothing was published. */
            atomic_store_explicit(&c->nspawned, ns, memory_order_relaxed);
            return DAGRT_ENOMEM;
        }
        if (RT_UNLIKELY(ob != NULL))
            rt_task_seen(ob, c, t, 0);
        if (gi)
            rt_group_count_spawn(gi, c, t);
        (void)rt_deque_push_private(&c->deque, t);   /* room reserved: cannot fail */
    }
    if (rt->nctx >= 2)
        rt_expose(rt, c);   /* the one publication */
    return 0;
}

int dagrt_spawn_batch(dagrt *rt, dagrt_group *g, const dagrt_task_desc *tasks, size_t n,
                      unsigned flags)
{
    if (!rt || (n > 0 && !tasks))
        return DAGRT_EINVAL;
    if ((flags & ~(unsigned)RT_TASK_PUBLIC_FLAGS) ||
        ((flags & DAGRT_SPAWN_MAIN) && (flags & (DAGRT_SPAWN_HOT | DAGRT_SPAWN_FIBER))) ||
        ((flags & DAGRT_SPAWN_LARGE_STACK) && !(flags & DAGRT_SPAWN_FIBER)))
        return DAGRT_EINVAL;
    rt_group *gi = NULL;
    if (g) {
        gi = rt_group_of(g);
        if (gi->magic != RT_GROUP_MAGIC)
            return DAGRT_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!tasks[i].fn)
            return DAGRT_EINVAL;
    if (n == 0)
        return 0;
    rt_ctx *c = rt_ctx_here(rt);
    /* The program's tasks, reported as they run while something observes
     * (core/seen.c; fiber tasks slice by slice). */
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (c && !(flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT)))
        return batch_to_deque(rt, c, gi, tasks, n, flags, ob);
    /* Every descriptor first, chained in order through u[0] (free for
     * internal users; a plain or fiber task does not use it). */
    rt_task *head = NULL, *tail = NULL;
    for (size_t i = 0; i < n; i++) {
        rt_task *t = rt_task_make(rt, c, tasks[i].fn, tasks[i].arg, gi, flags);
        if (!t) {
            batch_free(rt, head);
            return DAGRT_ENOMEM;
        }
        if (RT_UNLIKELY(ob != NULL))
            rt_task_seen(ob, c, t, 0);
        t->u[0] = 0;
        if (tail)
            tail->u[0] = (uintptr_t)t;
        else
            head = t;
        tail = t;
    }
    bool to_main = (flags & DAGRT_SPAWN_MAIN) || (!(flags & DAGRT_SPAWN_HOT) && rt->nworkers == 0);
    /* Counted before anything is published (see submit_on). */
    if (c) {
        /* relaxed: our own counter (single writer); destroy reads it with acquire. */
        uint64_t ns = atomic_load_explicit(&c->nspawned, memory_order_relaxed);
        atomic_store_explicit(&c->nspawned, ns + n, memory_order_relaxed);
    } else {
        /* relaxed: before the publishing pushes, as count_spawn. */
        atomic_fetch_add_explicit(&rt->ext_spawned, n, memory_order_relaxed);
    }
    if (to_main)
        /* relaxed: a bound for dagrt_pump_main only. */
        atomic_fetch_add_explicit(&rt->main_pushed, n, memory_order_relaxed);
    /* relaxed: round robin for outside batches, any value will do. */
    uint32_t rr = !to_main && !(flags & DAGRT_SPAWN_HOT)
                ? atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed) : 0;
    size_t i = 0;
    for (rt_task *t = head, *next; t; t = next, i++) {
        next = (rt_task *)t->u[0];
        t->u[0] = 0;
        if (gi)
            rt_group_count_spawn(gi, c, t);
        if (flags & DAGRT_SPAWN_HOT)
            rt_mpsc_push(&rt->hot, &t->node);
        else if (to_main)
            rt_mpsc_push(&rt->ctx[0].inbox, &t->node);
        else
            rt_mpsc_push(&rt->ctx[1 + (rr + i) % (uint32_t)rt->nworkers].inbox, &t->node);
    }
    /* The one publication. */
    if (to_main) {
        rt_ctx *m = &rt->ctx[0];
        /* seq_cst fence: publisher's half of the Dekker pair with the main
         * ctx's idle (as push_main). */
        atomic_thread_fence(memory_order_seq_cst);
        /* relaxed: ordered after the pushes by the fence. */
        if (atomic_load_explicit(&m->idle, memory_order_relaxed))
            rt_unpark(&m->parker);
    } else {
        rt_notify(rt);
    }
    return 0;
}
