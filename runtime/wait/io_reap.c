/*
 * wait/io_reap.c - the batching and reaping duty of the I/O calls (wait/io.c): which
 * submissions wait in the reactor's queue for others (rt_io_may_defer,
 * model tests/models/io_batch.pml), which thread then owes the flush (this
 * thread's count of deferred ops, the main thread's rule), and the reaping
 * that workers do between tasks and as they park (rt_io_reap, rt_io_park,
 * os/reactor_uring.c's BATCHING and REAPING); also which reactor
 * starts (rt_io_reactor_make) and the reaping workers' priority.
 * Separate from wait/io.c: that is one call's life (pool, submit, wait,
 * cancel, the API); this is the policy of when the kernel hears about
 * it, with its own thread-local state and its own Dekker pairs with the
 * reactor thread.
 */
#include <string.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "io.h"
#include "../os/reactor.h"

/* Which reactor the first call starts (wait/io.c, io_get): os/reactor.c's
 * choice, with the fallback asked for by the configuration or the
 * environment (DAGRT_IO=fallback). */
rt_reactor *rt_io_reactor_make(const dagrt *rt, unsigned entries, int *err, int *os_err)
{
    const char *env = rt_os_getenv("DAGRT_IO");
    bool fallback = rt->cfg.io_fallback || (env && strcmp(env, "fallback") == 0);
    return rt_os_reactor_make(fallback, entries, (unsigned)rt->nctx + 1u, err, os_err);
}

/* The calling thread's slot in the reactor (rt_io_op.slot): its thread
 * context's index, or nctx for a thread outside the runtime. */
unsigned rt_io_slot(dagrt *rt)
{
    rt_ctx *c = rt_ctx_current(rt);
    return c ? (unsigned)c->index : (unsigned)rt->nctx;
}

/* Ops this thread queued with defer and has not flushed since: its duty
 * to flush them (rt_io_reap) once it has nothing else in sight, before it
 * parks. A fiber that moves on leaves the duty with the thread that
 * queued. */
static _Thread_local unsigned io_deferred;

/* Owner only: whether c has more to run, in its own deque or anywhere it
 * may take from (core/idle.c's work_visible: the hot lane, inboxes, every
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
static void main_deferred(dagrt *rt, rt_io *io, const rt_ctx *c)
{
    if (c->worker)
        return;
    if (atomic_load_explicit(&rt->io_awake, memory_order_seq_cst) == 0) {
        io_deferred = 0;
        io->r->ops->flush(io->r, (unsigned)c->index);
    }
}
/* LEASE (the main thread as a reaper). The reactor's thread sleeps in the
 * kernel while no reaping worker is awake, and the kernel wakes it for
 * every completion it posts, from inside the system call that posted it:
 * a fiber reading the page cache on the main thread (the main thread ran
 * it while it waited) paid that cross-CPU wake-up on every read, though
 * it reaps its own completion right after the submit. So the main thread
 * counts as a reaper while it makes I/O calls: each call (lease_touch)
 * holds rt_reactor.lease at USED (a plain load when it is already; no
 * RMW on the fast path), and the reactor's thread, gated by the lease
 * alone, marks it each tick (USED -> MARKED) and takes it back when it
 * is still MARKED a tick later (MARKED -> NONE), then sleeps in the
 * kernel again; the main thread gives it back itself when it parks
 * (rt_io_park). Meanwhile the reactor's thread drains the CQ once a tick
 * (LEASE_TICK_NS, os/reactor_uring.c), so a completion the main thread
 * does not reap (it went back to its own code) waits a tick at most.
 * Only with hot_workers == 0: with hot workers, completions are theirs. */
static void lease_touch(dagrt *rt, rt_io *io, const rt_ctx *c)
{
    if (!c || c->index != 0 || c->worker || c->guest || rt->cfg.hot_workers != 0 || !io->r->ops->reap)
        return;
    _Atomic uint32_t *l = &io->r->lease;
    /* relaxed: a hint for the reactor's thread, which only decides with
     * it where to sleep (the kernel's level catches a lease it missed). */
    uint32_t v = atomic_load_explicit(l, memory_order_relaxed);
    /* From MARKED or NONE alike: only this thread moves the lease to USED,
     * and a take-back racing the store only costs a tick's sleep in the
     * kernel. relaxed: as above. */
    if (v != RT_LEASE_USED)
        atomic_store_explicit(l, RT_LEASE_USED, memory_order_relaxed);
}

static void reaper_join(dagrt *rt, const rt_io *io, const rt_ctx *c);

/* After a submit (wait/io.c, mu released): the main thread's lease, a worker's
 * count among the awake reapers, and the duty to flush a deferred submit. */
void rt_io_submitted(dagrt *rt, rt_io *io, bool deferred)
{
    rt_ctx *c = rt_ctx_current(rt);
    lease_touch(rt, io, c);
    reaper_join(rt, io, c);
    if (deferred) {   /* only a thread of the runtime defers (rt_io_may_defer): c is set */
        io_deferred++;
        main_deferred(rt, io, c);
    }
}

/* Whether this thread is counted in rt->io_awake (rt_io_park). Joined
 * lazily, by the first reap after an unpark (rt_io_reap), so a runtime
 * with no reactor pays no RMW per park. */
static _Thread_local bool io_counted;

/* A reaping worker joins the count of awake reapers (once per wake-up:
 * rt_io_park takes it out as it parks): at its first reap, or at its
 * first I/O call, whichever comes first. A worker running one long fiber
 * task that makes call after call (a lone reader) reaps nothing between
 * tasks, so without the second it stayed uncounted, and the reactor's
 * thread, seeing no reaper awake, slept in the kernel and was woken for
 * every completion that the caller was serving itself. */
static void reaper_join(dagrt *rt, const rt_io *io, const rt_ctx *c)
{
    if (RT_LIKELY(io_counted) || !io->r->ops->reap)
        return;
    if (c && c->index != 0 && !c->guest && (c->hot || rt->cfg.hot_workers == 0)) {
        /* seq_cst: rt_io_park's pair with the reactor thread's gate. */
        atomic_fetch_add_explicit(&rt->io_awake, 1, memory_order_seq_cst);
        io_counted = true;
    }
}

/* Workers reap completions where they are (core/worker.c between tasks,
 * core/idle.c as they go idle): see os/reactor_uring.c's REAPING. c: the
 * calling thread's own context (no thread-local look-up between tasks). */
unsigned rt_io_reap(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_io *io = io_of(rt);
    if (!io || !io->r->ops->reap)
        return 0;
    if (RT_UNLIKELY(!io_counted))
        reaper_join(rt, io, c);
    if (io_deferred && !ctx_busy(c)) {
        /* What this thread queued goes to the kernel once nothing else is
         * in sight (a thread that parks calls this first: core/idle.c). */
        io_deferred = 0;
        io->r->ops->flush(io->r, (unsigned)c->index);   /* its own queue: its duty */
    }
    return io->r->ops->reap(io->r, (unsigned)c->index, 32);
}

/* The gate's wake-up when the last reaper (worker, or the main thread's
 * lease) stops: seq_cst, the reactor's thread writes gated, then reads
 * the count and the lease; the one who drops last reads gated (after the
 * other's drop): either it sees our drop, or we see gated and bump. */
static void gate_bump(rt_io *io)
{
    if (atomic_load_explicit(&io->r->gated, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&io->r->gate, 1, memory_order_seq_cst);   /* seq_cst: as above */
        rt_os_wake32_one(&io->r->gate);
    }
}

void rt_io_park(rt_ctx *c, bool enter)
{
    dagrt *rt = c->rt;
    if (c->index == 0) {
        /* The main thread reaps only while it waits: its lease (LEASE)
         * goes back as it parks. seq_cst: the exchange, then the count
         * and gated (gate_bump's pair). */
        rt_io *io = enter ? io_of(rt) : NULL;
        if (io && atomic_load_explicit(&io->r->lease, memory_order_relaxed) != RT_LEASE_NONE &&   /* relaxed: a pre-check */
            atomic_exchange_explicit(&io->r->lease, RT_LEASE_NONE, memory_order_seq_cst) != RT_LEASE_NONE &&
            atomic_load_explicit(&rt->io_awake, memory_order_seq_cst) == 0)
            gate_bump(io);
        return;
    }
    if (!(c->hot || rt->cfg.hot_workers == 0))
        return;
    /* Waking: counted again by the next reap (rt_io_reap), which comes
     * first in the worker loop and in the idle loop. */
    if (!enter)
        return;
    rt_io *io = io_of(rt);
    if (!io_counted) {
        /* Not counted (no reactor yet, or none since the wake-up): one
         * load, no RMW. The flush still runs: a reactor started meanwhile
         * may hold another thread's deferred SQEs (BATCHING). */
        if (io && io->r->ops->flush) {
            io_deferred = 0;
            io->r->ops->flush(io->r, RT_IO_SLOT_ALL);
        }
        return;
    }
    io_counted = false;
    /* seq_cst: the reactor thread reads the gate, then this count; we
     * write the count, then the gate (a Dekker pair: either it sees 0, or
     * it sees the gate moved and looks again). */
    int left = atomic_fetch_sub_explicit(&rt->io_awake, 1, memory_order_seq_cst) - 1;
    /* Then nothing queued (by anyone) stays behind while this worker
     * sleeps (os/reactor_uring.c, BATCHING): a worker that queued and ran
     * into a long task, or the main thread (main_deferred), is covered by
     * whoever parks first. After the drop (the reactor's read of its
     * pending count is seq_cst): main_deferred's pair. */
    if (io && io->r->ops->flush) {
        io_deferred = 0;
        io->r->ops->flush(io->r, RT_IO_SLOT_ALL);
    }
    if (left != 0 || !io)
        return;
    /* The main thread's lease keeps the reactor's thread gated: it bumps
     * when it gives the lease back (seq_cst: gate_bump's pair). Not
     * gated: the thread is in the kernel already (no system call on this
     * park). */
    if (atomic_load_explicit(&io->r->lease, memory_order_seq_cst) == RT_LEASE_NONE)
        gate_bump(io);
}

/* Hot workers' priority (core/worker.c calls it on each hot worker). */
void rt_io_thread_priority(dagrt *rt)
{
    if (rt->cfg.hot_priority != DAGRT_PRIORITY_ELEVATED)
        return;
    if (rt_os_thread_priority_raise() != 0)
        /* relaxed: a statistic. */
        atomic_fetch_add_explicit(&rt->prio_refused, 1, memory_order_relaxed);
}
