/*
 * wait/oneshot.c - the one timed wait (wait/oneshot.h): arming its
 * deadline and cancel links, the three ways of waiting (a fiber suspends,
 * a thread of the runtime helps or blocks, a thread outside it blocks on
 * a word), taking the deadline and links down again, and the counts of
 * the threads' statistics lines that the waits keep.
 */
#include <stddef.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "cancel.h"
#include "oneshot.h"
#include "wait.h"

#define ONESHOT_OF(p, field) ((rt_oneshot *)(void *)((char *)(p) - offsetof(rt_oneshot, field)))

void rt_oneshot_init(rt_oneshot *o, void (*end)(rt_oneshot *o, int why))
{
    /* A group with no owner (all counts atomic): one completion pending,
     * the completer's. */
    atomic_init(&o->g.word, 1);
    o->g.owner = NULL;
    o->g.waiter = NULL;
    o->g.local = 0;
    o->g.armed = 0;
    o->g.magic = RT_GROUP_MAGIC;
    o->end = end;
    o->deadline = DAGRT_FOREVER;
    o->timed = o->linked = o->rtlinked = false;
    o->timer.slot = 0;
}

/* ------------------------------------------------- deadline and links */

static void oneshot_timed_out(rt_timer *t)
{
    rt_oneshot *o = ONESHOT_OF(t, timer);
    o->end(o, DAGRT_ETIMEDOUT);
}

static void oneshot_cancelled(rt_cancel_link *l)
{
    rt_oneshot *o = ONESHOT_OF(l, link);
    o->end(o, DAGRT_ECANCELED);
}

static void oneshot_rt_cancelled(rt_cancel_link *l)
{
    rt_oneshot *o = ONESHOT_OF(l, rtlink);
    o->end(o, DAGRT_ECANCELED);
}

int rt_oneshot_arm(dagrt *rt, rt_oneshot *o, uint64_t deadline, dagrt_cancel *cs, bool rt_link)
{
    /* Each callback may run (on another thread) as soon as it is armed:
     * the flags below are the waiting thread's own, read only by disarm. */
    o->deadline = deadline;
    if (deadline != DAGRT_FOREVER) {
        if (deadline <= rt_now_ns())
            return RT_ONESHOT_PAST;
        o->timer.deadline_ns = deadline;
        o->timer.fire = oneshot_timed_out;
        if (rt_timer_add(rt, &o->timer) != 0)
            return DAGRT_ENOMEM;
        o->timed = true;
    }
    if (cs) {
        o->link.on_cancel = oneshot_cancelled;
        if (rt_cancel_attach(cs, &o->link) != 0)
            return DAGRT_ECANCELED;
        o->linked = true;
    }
    if (rt_link) {
        o->rtlink.on_cancel = oneshot_rt_cancelled;
        if (rt_cancel_attach(&rt->waits, &o->rtlink) != 0)
            return DAGRT_ECANCELED;
        o->rtlinked = true;
    }
    return 0;
}

void rt_oneshot_disarm(dagrt *rt, rt_oneshot *o)
{
    /* Each returns only once its callback is not running (wait/wait.h,
     * wait/cancel.h), so o's storage may end after this. */
    if (o->timed)
        rt_timer_cancel(rt, &o->timer);
    if (o->linked)
        rt_cancel_detach(&o->link);
    if (o->rtlinked)
        rt_cancel_detach(&o->rtlink);
    o->timed = o->linked = o->rtlinked = false;
}

/* ------------------------------------------------------------ waiting */

/* A blocked thread's wake-up: the word in o. */
static void thread_wake(rt_waiter *w)
{
    rt_oneshot *o = ONESHOT_OF(w, tw);
    /* release: the waiter's acquire load sees the group's completion and
     * what the completer wrote before it (a result, an op's outcome). The
     * wake after the store may reach a word whose storage has gone (a
     * sync waiter's stack frame, on the waiting stack): a futex wake on a stale
     * address is only a spurious wake-up for whoever waits there, which
     * callers allow. (An I/O record's word stays valid: records go back
     * to their pool, never to the system, before dagrt_destroy.) */
    atomic_store_explicit(&o->woke, 1, memory_order_release);
    rt_os_wake32_one(&o->woke);
}

/* Blocks the calling thread (no help) until o's completion: a plain task
 * or the main thread that must not help and has a deadline, or a thread
 * outside the runtime (c NULL). Past its deadline it runs the due timers
 * itself, its own among them, so it never depends on an idle thread of
 * the runtime being there. */
static int block(dagrt *rt, rt_ctx *c, rt_oneshot *o)
{
    rt_ctx_publish_tail(c);   /* what this thread spawned must stay stealable */
    o->tw.fn = thread_wake;
    /* relaxed: set before the arm, whose acq_rel RMW publishes it. */
    atomic_store_explicit(&o->woke, 0, memory_order_relaxed);
    int r = rt_group_arm_on(&o->g, NULL, &o->tw);
    if (r != 0)
        return r == 1 ? 0 : r;   /* 1: over already */
    uint64_t until = o->timed ? o->deadline : DAGRT_FOREVER;
    /* acquire: pairs with thread_wake's release. */
    while (atomic_load_explicit(&o->woke, memory_order_acquire) == 0) {
        rt_os_wait32_until(&o->woke, 0, until);
        if (until != DAGRT_FOREVER) {
            uint64_t now = rt_now_ns();
            if (now >= until) {
                rt_timer_run_due(rt, now);
                /* Another runner may have been busy: look again in 1 ms. */
                until = now + 1000000u;
            }
        }
    }
    return 0;
}

void rt_oneshot_wait(dagrt *rt, rt_oneshot *o, _Atomic int64_t *nwaits, unsigned how)
{
    rt_ctx *c = rt_ctx_current(rt);   /* used only where no fiber switched */
    bool task = (c && c->depth > 0) || dagrt_in_fiber(rt);
    if (task)
        atomic_fetch_add_explicit(nwaits, 1, memory_order_relaxed);   /* relaxed: see core/core.h */
    bool hot = (how & RT_ONESHOT_HOT) != 0;
    if (hot)
        rt_fiber_resume_hot(rt, true);
    int r = rt_fiber_group_wait(rt, &o->g);   /* on a fiber: suspends */
    if (r != 1) {
        if (hot)   /* done before it suspended: no resume took the flag */
            rt_fiber_resume_hot(rt, false);
    } else if ((how & RT_ONESHOT_HELP) && c) {
        r = rt_group_wait_thread(rt, c, &o->g);   /* helps, as dagrt_event_wait does */
    } else if (c && o->deadline == DAGRT_FOREVER) {
        r = rt_fiber_block_wait(rt, c, &o->g);   /* counts blocked threads (its warning) */
    } else {
        r = block(rt, c, o);
    }
    if (task)
        atomic_fetch_sub_explicit(nwaits, 1, memory_order_relaxed);   /* relaxed: as above */
    if (r != 0) {
        /* A wait that failed (it cannot, on a fresh ownerless group) must
         * still not return before the completion, after which o's storage
         * may end: ended as a cancel would end it, then waited for. */
        o->end(o, DAGRT_ECANCELED);
        while (!rt_oneshot_over(o))
            rt_os_yield();
    }
}

/* --------------------------------------------------------------- counts */

void rt_oneshot_count(dagrt *rt, size_t field, uint64_t n)
{
    rt_ctx *c = rt_ctx_current(rt);   /* a real call: a fiber may have migrated */
    rt_tstats *t = &rt->ctx[c ? c->index : 0].stats;
    _Atomic uint64_t *line = (_Atomic uint64_t *)(void *)((char *)t + field);
    /* A worker's line has one writer, itself (rt_tstat_add, no locked
     * instruction: two threads doing I/O bounced one shared line per
     * kind); the others take an RMW: line 0 (the main thread's, shared
     * with threads outside the runtime) and guests' slots (threads take
     * them in turn). */
    if (c && c->worker && !c->guest)
        rt_tstat_add(line, n);
    else
        /* relaxed: a statistic, summed by readers without an order. */
        atomic_fetch_add_explicit(line, n, memory_order_relaxed);
}
