/*
 * io_reap.c - the batching and reaping duty of the I/O calls (io.c): which
 * submissions wait in the reactor's queue for others (rt_io_may_defer,
 * model tests/models/io_batch.pml), which thread then owes the flush (this
 * thread's count of deferred ops, the main thread's rule), and the reaping
 * that workers do between tasks and as they park (rt_io_reap, rt_io_park,
 * os/reactor_uring.c's BATCHING and REAPING); also which reactor
 * starts (rt_io_reactor_make) and the reaping workers' priority.
 * Separate from io.c: that is one call's life (pool, submit, wait,
 * cancel, the API); this is the policy of when the kernel hears about
 * it, with its own thread-local state and its own Dekker pairs with the
 * reactor thread.
 */
#include <string.h>

#include "scheduler.h"   /* first: the runtime's view of dagrt.h */
#include "io_internal.h"
#include "os/reactor.h"

/* Which reactor the first call starts (io.c, io_get). */
rt_reactor *rt_io_reactor_make(const dagrt *rt, unsigned entries, int *err)
{
    rt_reactor *r = NULL;
    const char *env = rt_os_getenv("DAGRT_IO");
    bool fallback = rt->cfg.io_fallback || (env && strcmp(env, "fallback") == 0);
#if defined(_WIN32)
    r = fallback ? rt_reactor_iocp_lane_create(entries, err) : rt_reactor_iocp_create(entries, err);
#else
#  if defined(DAGRT_HAVE_URING)
    if (!fallback)
        r = rt_reactor_uring_create(entries, err);
#  else
    (void)fallback;
#  endif
    if (!r)
        r = rt_reactor_epoll_create(entries, err);
#endif
    return r;
}

/* Ops this thread queued with defer and has not flushed since: its duty
 * to flush them (rt_io_reap) once it has nothing else in sight, before it
 * parks. A fiber that moves on leaves the duty with the thread that
 * queued. */
static _Thread_local unsigned io_deferred;

/* Owner only: whether c has more to run, in its own deque or anywhere it
 * may take from (idle.c's work_visible: the hot lane, inboxes, every
 * deque, an offer). A hint: a stale answer only flushes early or late. */
static bool ctx_busy(rt_ctx *c)
{
    /* relaxed: the policy hint above (every path flushes in the end). */
    int64_t b = atomic_load_explicit(&c->deque.bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&c->deque.top, memory_order_relaxed);   /* relaxed: as above */
    return b > t || rt_work_visible(c);
}

/* Whether this call's submit may wait in the reactor's queue for others
 * (os/reactor_uring.c, BATCHING): a fiber on a reaping worker that has
 * more work in sight, which it runs before it flushes them all with one
 * system call. A lone call (nothing else to run) submits at once and
 * keeps the fast path. */
bool rt_io_may_defer(dagrt *rt, const rt_io *io)
{
    if (!io->r->ops->flush || !dagrt_in_fiber(rt))
        return false;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c || c->guest || !(c->hot || rt->cfg.hot_workers == 0))
        return false;
    /* The main thread too (it may leave its wait with the duty: see
     * main_deferred). */
    return (c->worker || c->index == 0) && ctx_busy(c);
}

/* After the main thread deferred a submit: it may leave its wait before
 * it flushes (its duty waits for its next rt_io_reap), so it defers only
 * while a reaping worker is awake, which flushes everything before it
 * parks (rt_io_park: its count drops, then it reads the reactor's pending
 * count). seq_cst: a Dekker pair with that (the reactor's increment of
 * pending and its read are seq_cst): either the worker sees our SQE
 * counted and flushes it, or we see its drop and flush ourselves. */
static void main_deferred(dagrt *rt, rt_io *io)
{
    rt_ctx *c = rt_ctx_current(rt);
    if (c && c->worker)
        return;
    if (atomic_load_explicit(&rt->io_awake, memory_order_seq_cst) == 0) {
        io_deferred = 0;
        io->r->ops->flush(io->r);
    }
}
/* After a deferred submit (io.c): the duty is this thread's. */
void rt_io_deferred(dagrt *rt, rt_io *io)
{
    io_deferred++;
    main_deferred(rt, io);
}

/* Workers reap completions where they are (worker.c between tasks,
 * idle.c as they go idle): see os/reactor_uring.c's REAPING. */
unsigned rt_io_reap(dagrt *rt)
{
    rt_io *io = io_of(rt);
    if (!io || !io->r->ops->reap)
        return 0;
    if (io_deferred) {
        /* What this thread queued goes to the kernel once nothing else is
         * in sight (a thread that parks calls this first: idle.c). */
        rt_ctx *c = rt_ctx_current(rt);
        if (!c || !ctx_busy(c)) {
            io_deferred = 0;
            io->r->ops->flush(io->r);
        }
    }
    return io->r->ops->reap(io->r, 32);
}

void rt_io_park(rt_ctx *c, bool enter)
{
    dagrt *rt = c->rt;
    if (c->index == 0 || !(c->hot || rt->cfg.hot_workers == 0))
        return;   /* the main thread reaps only while it waits: not counted */
    /* seq_cst: the reactor thread reads the gate, then this count; we
     * write the count, then the gate (a Dekker pair: either it sees 0, or
     * it sees the gate moved and looks again). */
    if (!enter) {
        atomic_fetch_add_explicit(&rt->io_awake, 1, memory_order_seq_cst);
        return;
    }
    rt_io *io = io_of(rt);
    int left = atomic_fetch_sub_explicit(&rt->io_awake, 1, memory_order_seq_cst) - 1;
    /* Then nothing queued (by anyone) stays behind while this worker
     * sleeps (os/reactor_uring.c, BATCHING): a worker that queued and ran
     * into a long task, or the main thread (main_deferred), is covered by
     * whoever parks first. After the drop (the reactor's read of its
     * pending count is seq_cst): main_deferred's pair. */
    if (io && io->r->ops->flush) {
        io_deferred = 0;
        io->r->ops->flush(io->r);
    }
    if (left != 0)
        return;
    /* seq_cst: the thread writes gated, then reads the count: either it
     * sees our 0, or we see gated and bump. Not gated: it is in the kernel
     * already (no system call on this park). */
    if (io && atomic_load_explicit(&io->r->gated, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&io->r->gate, 1, memory_order_seq_cst);   /* seq_cst: as above */
        rt_os_wake32_one(&io->r->gate);
    }
}

/* Hot workers' priority (worker.c calls it on each hot worker). */
void rt_io_thread_priority(dagrt *rt)
{
    if (rt->cfg.hot_priority != DAGRT_PRIORITY_ELEVATED)
        return;
    if (rt_os_thread_priority_raise() != 0)
        /* relaxed: a statistic. */
        atomic_fetch_add_explicit(&rt->prio_refused, 1, memory_order_relaxed);
}
