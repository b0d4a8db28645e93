/*
 * wait/async.c - asynchronous waits (dagrt.h, dagrt_*_async; the protocol
 * at the bottom of wait/oneshot.h): the record, arming a wait's group to
 * queue a continuation task, and that task. The waits themselves are
 * wait/sync.c's and wait/io.c's, which call rt_async_arm where their
 * blocking forms call rt_oneshot_wait; and the waits the main thread
 * carries out for another wing (rt_async_on_main: exec/await.c).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "oneshot.h"

_Static_assert(sizeof(rt_async) <= sizeof(dagrt_async), "dagrt_async too small");

void dagrt_async_init(dagrt_async *a, dagrt_async_fn fn, void *arg, unsigned flags)
{
    if (!a)
        return;
    rt_async *r = (rt_async *)(void *)a;
    r->w.fn = NULL;
    r->rt = NULL;
    r->fn = fn;
    r->arg = arg;
    r->flags = flags;
    r->finish = NULL;
    r->nwaits = NULL;
    /* A bad fn or flags: a record no call accepts (DAGRT_EINVAL). */
    bool ok = fn && (flags & ~(unsigned)(DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT)) == 0 &&
              flags != (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT);
    r->magic = ok ? RT_ASYNC_MAGIC : 0;
}

rt_async *rt_async_of(dagrt_async *a)
{
    rt_async *r = (rt_async *)(void *)a;
    return a && r->magic == RT_ASYNC_MAGIC ? r : NULL;
}

int rt_async_check(dagrt *rt, dagrt_async *a)
{
    rt_error_set(0, 0);
    rt_async *r = rt_async_of(a);
    if (!rt || !r)
        return DAGRT_EINVAL;
    /* rt's own threads only: the continuation is counted on the caller's
     * ctx (oneshot.h, DESTROY), and a thread outside has none. */
    if (!rt_ctx_current(rt))
        return DAGRT_EPERM;
    r->rt = rt;
    return 0;
}

/* The continuation: on a runtime thread, after the wait's completion. */
static void async_run(void *arg)
{
    rt_async *a = arg;
    a->finish(a);   /* ends with a->fn: its last access to a */
}

/* The group's waiter (any thread, after the completer's last access to
 * the group). */
static void async_wake(rt_waiter *w)
{
    rt_async *a = (rt_async *)(void *)((char *)w - offsetof(rt_async, w));
    dagrt *rt = a->rt;
    rt_ctx *c = rt_ctx_current(rt);
    rt_task *t = c ? rt_task_alloc(c) : rt_task_alloc_any(rt);
    if (!t) {
        fprintf(stderr, "dagrt: fatal: out of memory queueing an asynchronous wait's end\n");
        abort();
    }
    t->fn = async_run;
    t->arg = a;
    t->group = NULL;
    t->flags = a->flags;
    /* relaxed: destroy's count of waits (core/core.h, nwaits), compared
     * twice a sleep apart; out of it before the task is queued (after the
     * submit a may be gone), which only makes "only waits" rarer. */
    if (a->nwaits)
        atomic_fetch_sub_explicit(a->nwaits, 1, memory_order_relaxed);
    /* Counted when armed (oneshot.h, DESTROY). */
    if (rt_submit_counted(rt, c, t) != 0) {
        fprintf(stderr, "dagrt: fatal: could not queue an asynchronous wait's end\n");
        abort();
    }
}

int rt_async_arm(rt_async *a, rt_group *g, rt_ctx *c, void (*finish)(rt_async *a),
                 _Atomic int64_t *nwaits, bool hot)
{
    dagrt *rt = a->rt;
    rt_ctx *me = rt_ctx_current(rt);   /* rt_async_check made sure there is one */
    a->finish = finish;
    a->nwaits = nwaits;
    a->w.fn = async_wake;
    if (hot && !(a->flags & DAGRT_SPAWN_MAIN))
        a->flags |= DAGRT_SPAWN_HOT;
    /* Counted before the arm: from the arm on, the waker may queue the
     * continuation and a worker finish it. relaxed: as every spawn count
     * (core/work.c, submit_on): this thread's task finishes with a release
     * of nfinished, or the main thread's destroy reads it itself. */
    uint64_t ns = atomic_load_explicit(&me->nspawned, memory_order_relaxed);
    atomic_store_explicit(&me->nspawned, ns + 1, memory_order_relaxed);
    if (nwaits)   /* relaxed: see async_wake */
        atomic_fetch_add_explicit(nwaits, 1, memory_order_relaxed);
    int r = rt_group_arm_on(g, c, &a->w);
    if (r != 0) {
        /* Not armed: no continuation. relaxed: our own counter, never
         * published in between (nothing was queued). */
        atomic_store_explicit(&me->nspawned, ns, memory_order_relaxed);
        if (nwaits)   /* relaxed: see async_wake */
            atomic_fetch_sub_explicit(nwaits, 1, memory_order_relaxed);
    }
    return r;
}

/* ------------------------------------------- waits the main thread does */

int rt_async_ready(dagrt *rt, dagrt_async *a)
{
    return rt_async_check(rt, a);
}

/* fn, in a task of its own with the record's flags. */
static void async_call(void *arg)
{
    rt_async *a = arg;
    a->fn(a->arg, a->result);   /* the last access to a */
}

/* The wait, on the main thread's queue; then fn, here (DAGRT_SPAWN_MAIN:
 * this is a task of the main queue already) or in a task of its own. A
 * spawn from inside a task succeeds while dagrt_destroy drains (only
 * outside threads are refused then), so ENOMEM is the one failure. */
static void async_main_run(void *arg)
{
    rt_async *a = arg;
    /* The main thread's own stack only: a fiber task on the main thread
     * that pumps its queue would carry the wait (and the frame's part that
     * is the main thread's) wherever the fiber resumes. Queued again for
     * the main thread's next wait or pump (each pump runs only what was
     * queued when it began). */
    if (dagrt_in_fiber(a->rt)) {
        if (rt_spawn_own(a->rt, NULL, async_main_run, a, DAGRT_SPAWN_MAIN) != 0) {
            fprintf(stderr, "dagrt: fatal: could not queue an asynchronous wait again\n");
            abort();
        }
        return;
    }
    /* Nor inside a node's body (a helping wait there took it): the wait
     * may be for the run whose node this thread holds below us. Held
     * until the thread's outermost node ends (core/defer.c). */
    if (rt_exec_in_node()) {
        if (rt_defer_main(async_main_run, a))
            return;
        /* RT_DEFERRED_MAX held already: queued again (progress then
         * needs a worker to take this thread's other tasks). */
        if (rt_spawn_own(a->rt, NULL, async_main_run, a, DAGRT_SPAWN_MAIN) != 0) {
            fprintf(stderr, "dagrt: fatal: could not queue an asynchronous wait again\n");
            abort();
        }
        return;
    }
    a->result = a->body(a->data, a->n);
    if (a->flags & DAGRT_SPAWN_MAIN) {
        a->fn(a->arg, a->result);
        return;
    }
    if (rt_spawn_own(a->rt, NULL, async_call, a, a->flags) != 0) {
        fprintf(stderr, "dagrt: fatal: could not queue an asynchronous wait's end\n");
        abort();
    }
}

int rt_async_on_main(dagrt *rt, dagrt_async *ap, int64_t (*body)(void *data, uint64_t n),
                     void *data, uint64_t n)
{
    rt_async *a = rt_async_of(ap);   /* rt_async_ready checked it */
    a->rt = rt;
    a->body = body;
    a->data = data;
    a->n = n;
    a->result = 0;
    /* The spawn publishes the fields to the thread that runs the task. */
    return rt_spawn_own(rt, NULL, async_main_run, a, DAGRT_SPAWN_MAIN);
}
