/*
 * core/guest.c - threads the runtime does not own (an engine's own threads) in
 * its pool for a while: dagrt_thread_attach / dagrt_thread_detach, and the
 * helping wait that dagrt_group_wait gives such a thread (rt_guest_wait).
 *
 * GUEST SLOTS. dagrt_create makes cfg.guest_threads extra contexts after
 * the workers, ctx[nworkers + 1 .. nctx - 1]. They are ordinary rt_ctxs to
 * everything else: thieves steal from their deques, the idle protocol may
 * claim one idling in a wait and wake it, destroy sums their counts, and
 * per-thread arrays (fibers, trace rings, stats) already have their index.
 * A thread takes a free slot by CAS on its `taken` word and gives it back
 * with a release store; the slot's owner-only state (the deque's owner
 * end, the task free list, the counters written by one thread, the stats
 * lines) passes from one holder to the next through that pair.
 *
 * DESTROY. dagrt_destroy refuses while another thread is attached (its
 * slot's word is 2: rt_guest_attached), since freeing the runtime under
 * it would leave its next call on freed memory; a slot a wait holds (1)
 * belongs to a thread outside the runtime inside dagrt_group_wait, a call
 * counted in rt->calls, which destroy waits for (core/destroy.c, "DESTROY AND
 * THREADS OUTSIDE"). Attach is such a call too: refused once destroy has
 * begun (DAGRT_ECANCELED), and an attach that raced destroy's check is
 * waited for until it detaches.
 *
 * A GUEST THAT EXITS ATTACHED. Its slot would stay taken for good, and
 * every dagrt_destroy refuse (the runtime, its threads and memory leaked:
 * one runtime per level reload). So an attach arms a thread-exit hook
 * (rt_os_exit_key: a pthread key's destructor, an FLS callback on
 * Windows) with the thread's innermost attached slot; a thread that exits
 * with it armed leaves every slot it still holds (guest_exit) as its
 * last detach would. Detach re-arms it with what is left, or disarms it.
 *
 * LEAVING CLEANLY. A guest never owns queued work when it gives its slot
 * back: its inbox is always empty (outside spawns only go to workers'
 * inboxes, core/work.c's submit_slow), and before leaving it makes the private
 * tail of its deque public and notifies (rt_ctx_publish_tail), so what it
 * spawned and did not run is stealable by everyone; the deque itself stays
 * in the slot, where thieves keep finding it. A wake-up that claimed the
 * guest while it idled in its last wait is handed on by the wait
 * (rt_handoff), as for the main thread. The parker may keep a token for
 * the next holder: one spurious return from its first park.
 */
#include "core.h"

#include <stdio.h>

/* The calling thread's stack, found once per thread (it needs a system
 * call, and a wait-scoped guest enters its slot at every wait). */
static _Thread_local bool tl_stack_known;
static _Thread_local char *tl_stack_lo, *tl_stack_hi;

static rt_ctx *claim(dagrt *rt)
{
    for (int i = rt->nworkers + 1; i < rt->nctx; i++) {
        rt_ctx *c = &rt->ctx[i];
        int zero = 0;
        /* relaxed pre-check keeps the scan to loads. acquire on the CAS:
         * pairs with the previous holder's release store of 0 (leave), so
         * its writes to the slot's owner-only state happen before ours. */
        if (atomic_load_explicit(&c->taken, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&c->taken, &zero, 1,
                memory_order_acquire, memory_order_relaxed))
            return c;
    }
    return NULL;
}

static void enter(rt_ctx *c)
{
    if (!tl_stack_known) {
        if (!rt_os_thread_stack(&tl_stack_lo, &tl_stack_hi))
            tl_stack_lo = tl_stack_hi = NULL;
        tl_stack_known = true;
    }
    c->stack_lo = tl_stack_lo;   /* groups on this stack get the owner fast path */
    c->stack_hi = tl_stack_hi;
    c->depth = 0;
    c->attached = 1;
    c->guest_prev = rt_tls_ctx;
    if (c->guest_prev)
        rt_ctx_window_close(c->guest_prev);   /* frame memory's window is the current ctx's */
    rt_tls_ctx = c;
}

static void leave(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_ctx_publish_tail(c);   /* what we spawned and did not run: stealable */
    if (c->handoff)
        rt_handoff(c);        /* the search we were woken to hand on goes on */
    rt_fiber_thread_leave(rt, c);
    rt_ctx_window_close(c);
    rt_tls_ctx = c->guest_prev;
    c->attached = 0;
    c->stack_lo = c->stack_hi = NULL;
    /* release: hands the slot's owner-only state to the next holder's
     * acquire CAS (claim). */
    atomic_store_explicit(&c->taken, 0, memory_order_release);
}

int rt_guest_wait(dagrt *rt, rt_group *g)
{
    /* Another thread's owner-local count (a group made on a runtime
     * thread's stack) is not ours to read: the polling wait refuses it. */
    if (g->owner && g->owner->rt == rt)
        return 1;
    rt_ctx *c = claim(rt);
    if (!c)
        return 1;
    enter(c);
    int r = rt_group_wait_thread(rt, c, g);
    leave(c);
    return r;
}

/* ------------------------------------------- a guest thread that exits */

static rt_os_once exit_once;
static rt_os_exit_key exit_key;
static bool exit_key_ok;

/* Whether c holds its slot through dagrt_thread_attach (not a wait).
 * relaxed: the holder reads its own slot's word. */
static bool attached_slot(const rt_ctx *c)
{
    return c->guest && c->attached > 0 &&
           atomic_load_explicit(&c->taken, memory_order_relaxed) == 2;
}

/* The next context down the calling thread's chain of rt_tls_ctx values
 * (a guest's previous one, a runtime's creator's previous one). */
static rt_ctx *chain_next(const rt_ctx *c)
{
    return c->guest ? c->guest_prev : c->index == 0 ? c->rt->prev_tls : NULL;
}

/* Arms the exit hook with the calling thread's innermost attached slot, or
 * disarms it when it holds none. */
static void exit_arm(void)
{
    if (!exit_key_ok)
        return;
    rt_ctx *c = rt_tls_ctx;
    while (c && !attached_slot(c))
        c = chain_next(c);
    rt_os_exit_key_set(&exit_key, c);
}

void rt_guest_exit_rearm(void)
{
    exit_arm();
}

void rt_chain_unlink(const dagrt *rt)
{
    for (rt_ctx *c = rt_tls_ctx; c;) {
        rt_ctx *next = chain_next(c);
        if (next && next->rt == rt) {
            rt_ctx *below = chain_next(next);
            if (c->guest)
                c->guest_prev = below;
            else
                c->rt->prev_tls = below;   /* c is a runtime's creator ctx (index 0) */
            return;
        }
        c = next;
    }
}

static void last_detach(rt_ctx *c);

/* On a thread that exits holding attached slots (value: the innermost):
 * leaves each, innermost first. The runtimes are alive: destroy refuses
 * while a slot is attached, or waits for it. */
static void guest_exit(void *value)
{
    for (rt_ctx *c = value; c;) {
        rt_ctx *next = chain_next(c);
        if (attached_slot(c)) {
            c->attached = 1;
            last_detach(c);
        }
        c = next;
    }
}

static void exit_key_make(void)
{
    exit_key_ok = rt_os_exit_key_make(&exit_key, guest_exit) == 0;
}

int dagrt_thread_attach(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    /* Counted while it attaches (core/destroy.c, "DESTROY AND THREADS OUTSIDE"):
     * refused once destroy has begun. 0: one of rt's threads already. */
    int in = rt_call_enter(rt, RT_DRAINING);
    if (in < 0)
        return DAGRT_ECANCELED;
    if (in == 0) {
        rt_ctx *c = rt_ctx_current(rt);
        if (c->guest)
            c->attached++;   /* nested: the holder's own count */
        return (int)c->index;
    }
    rt_ctx *c = claim(rt);
    if (!c) {
        rt_call_leave(rt);
        return DAGRT_EBUSY;
    }
    /* 2: held by an attach, not by a wait (dagrt_destroy tells them
     * apart). relaxed: the slot is ours since the CAS; rt_guest_attached's
     * acquire reads it, and this thread's release stores of 0 (leave) and
     * of rt->calls (below) order it for destroy. */
    atomic_store_explicit(&c->taken, 2, memory_order_relaxed);
    enter(c);
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_enter();   /* it may run fiber tasks now */
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (ob)
        rt_obs_thread(ob, true, (int)c->index);
    rt_os_once_run(&exit_once, exit_key_make);
    exit_arm();
    rt_call_leave(rt);
    return (int)c->index;
}

/* The last detach of attached slot c, on its holder's thread. */
static void last_detach(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (ob)
        rt_obs_thread(ob, false, (int)c->index);
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_leave();
    leave(c);
}

int dagrt_thread_detach(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c)
        return DAGRT_EPERM;
    if (!c->guest)
        return 0;            /* one of rt's own threads: nothing to leave */
    if (c->attached > 1) {
        c->attached--;
        return 0;
    }
    /* The last detach gives the slot back: not while this thread is inside
     * a task it runs (its caller's wait still holds the slot) or a fiber. */
    if (c->depth > 0 || dagrt_in_fiber(rt) || rt_exec_in_node())
        return DAGRT_ENESTED;
    last_detach(c);
    exit_arm();   /* what the thread still holds, if anything */
    return 0;
}

int rt_guest_attached(dagrt *rt, const rt_ctx *self)
{
    int n = 0;
    for (int i = rt->nworkers + 1; i < rt->nctx; i++)
        /* acquire: a 0 read here is the last holder's release store
         * (leave), so a thread that detached (or exited attached) is done
         * with the runtime before destroy frees it. */
        if (&rt->ctx[i] != self && atomic_load_explicit(&rt->ctx[i].taken, memory_order_acquire) == 2)
            n++;
    return n;
}
