/*
 * core/destroy.c - dagrt_destroy: the drain (run everything spawned, on the
 * destroying thread too, with a watch for waits that can never end), the
 * calls of threads outside the runtime that destroy must wait for, then
 * core/worker.c's stop, join and free.
 */
#include "core.h"

#include <stdio.h>

/* Tasks finished and spawned so far, summed over every thread. Reads
 * every finished count (acquire), then every spawned count. A finished
 * task's spawns happened before its finish was counted (release), so they
 * are in the second sum. */
static void task_counts(dagrt *rt, uint64_t *finished, uint64_t *spawned)
{
    uint64_t f = atomic_load_explicit(&rt->ext_finished, memory_order_acquire);
    for (int i = 0; i < rt->nctx; i++)
        f += atomic_load_explicit(&rt->ctx[i].nfinished, memory_order_acquire);
    uint64_t s = atomic_load_explicit(&rt->ext_spawned, memory_order_acquire);
    for (int i = 0; i < rt->nctx; i++)
        s += atomic_load_explicit(&rt->ctx[i].nspawned, memory_order_acquire);   /* acquire: see above */
    *finished = f;
    *spawned = s;
}

/* Everything spawned has finished: equal sums mean every counted task has
 * finished, and by induction from the roots (spawned before destroy
 * began) so has every descendant. */
static bool quiescent(dagrt *rt)
{
    uint64_t f, s;
    task_counts(rt, &f, &s);
    return f == s;
}

/* Only waits are left: tasks have not all finished, but every unfinished
 * one is parked in a wait (wait/sync.c and the I/O waits count themselves in
 * nwaits), or is a fiber task waiting for a fiber that only a wait's end
 * gives back (the pool is exhausted: fiber/sched.c's pending list), and no
 * work is ready. Read while others run, hence destroy asks twice, a sleep
 * apart, before it cancels. */
static bool only_waits_left(dagrt *rt)
{
    uint64_t f, s;
    task_counts(rt, &f, &s);
    /* relaxed: a count compared twice a sleep apart, not an order. */
    int64_t w = atomic_load_explicit(&rt->nwaits, memory_order_relaxed) + rt_io_waits(rt) +
                rt_fiber_pending_now(rt);
    return w > 0 && s - f <= (uint64_t)w && !rt_work_visible(&rt->ctx[0]);
}

/* One look of the drain's watch: due timers (with zero workers nobody
 * else may run them), then the cancel once only waits are left, seen
 * twice in a row (*stuck counts). */
static void drain_look(dagrt *rt, unsigned *stuck)
{
    rt_timer_run_due(rt, rt_now_ns());
    if (!dagrt_cancel_requested(&rt->waits) && only_waits_left(rt)) {
        if (++*stuck >= 2)
            dagrt_cancel_request(&rt->waits);
    } else {
        *stuck = 0;
    }
}

/* THE DRAIN'S WATCH. Destroy runs what is queued on its own thread too
 * (main-thread tasks, and everything with zero workers), so the task it
 * runs may itself wait, nested above destroy's loop on the same stack:
 * a wait nothing ends would keep that loop, and the cancel it would make,
 * from ever running again. So the looks are made on a thread of their own
 * for as long as the drain lasts (none when nothing is left at destroy):
 * it never runs a task, so nothing stacks on it. */
typedef struct drain_watch {
    dagrt *rt;
    _Atomic uint32_t stop;
    rt_os_thread thread;
} drain_watch;

static void watch_main(void *arg)
{
    drain_watch *w = arg;
    rt_os_thread_name("dagrt-destroy");
    unsigned stuck = 0;
    uint64_t nap = 20000;
    /* acquire: pairs with the drain's release store of stop (nothing is
     * handed over by it; it only ends the loop). */
    while (!atomic_load_explicit(&w->stop, memory_order_acquire)) {
        drain_look(w->rt, &stuck);
        rt_os_wait32_until(&w->stop, 0, rt_now_ns() + nap);
        if (nap < 1000000)
            nap *= 2;   /* 20 us at first, then up to 1 ms between looks */
    }
}

/* Runs everything already spawned (main-thread tasks included) to
 * completion, helping when c can. Once only parked waits are left, the
 * watch cancels every wait of the runtime (rt->waits): their calls return
 * DAGRT_ECANCELED, and later ones at once, so the tasks finish. */
static void drain(dagrt *rt, rt_ctx *c)
{
    if (quiescent(rt))
        return;
    drain_watch w = { rt, 0, { 0 } };
    bool watching = rt_os_thread_start(&w.thread, watch_main, &w) == 0;
    unsigned idle_rounds = 0, stuck = 0;
    while (!quiescent(rt)) {
        if (c && rt_help_one(c)) {
            idle_rounds = 0;
            continue;
        }
        if (++idle_rounds < 64) {
            rt_cpu_relax();
        } else {
            if (!watching)
                drain_look(rt, &stuck);   /* no thread for the watch: look here */
            rt_os_sleep_ns(20000);
        }
    }
    if (watching) {
        /* release: see watch_main. */
        atomic_store_explicit(&w.stop, 1, memory_order_release);
        rt_os_wake32_one(&w.stop);
        rt_os_thread_join(&w.thread);
    }
}

/* DESTROY AND THREADS OUTSIDE THE RUNTIME. A thread with no ctx in rt may
 * be inside one of its calls (a group wait, a timed wait, an I/O call)
 * when destroy begins, or start one while destroy runs. Such calls count
 * themselves in rt->calls for their length (rt_call_enter/leave), and
 * destroy goes through three stages (rt->closing):
 *   RT_DRAINING  from destroy's start: waits on the world (wait/sync.c, wait/io.c)
 *                are refused (DAGRT_ECANCELED); group waits still run,
 *                since the drain runs their tasks;
 *   RT_SEALED    every task has finished: every call is refused; destroy
 *                cancels rt->waits, which ends the outside threads' waits
 *                still in progress (their links are on it too), and
 *                waits until rt->calls is 0; only then does it stop the
 *                workers, end the I/O state and free.
 * The caller increments calls, then loads closing; destroy stores closing,
 * then loads calls; all four seq_cst, so in their single total order one
 * of the two sees the other: a call that saw RT_SEALED missing is counted
 * by the time destroy looks, and destroy waits for it; one that saw it
 * leaves without touching rt again. Its decrement (release) is its last
 * access to rt, and destroy's load that sees 0 acquires it. Model:
 * tests/models/destroy_calls.pml (negative controls: the caller loads
 * before it counts; destroy looks before it seals). A call that began
 * while destroy ran and was refused must not call again: once destroy
 * returned, the handle is gone, like a freed pointer. */
int rt_call_enter(dagrt *rt, int refuse_at)
{
    if (rt_ctx_current(rt))
        return 0;   /* one of rt's own threads: destroy deals with those */
    /* seq_cst: the caller's half of the Dekker pair (above). */
    atomic_fetch_add_explicit(&rt->calls, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&rt->closing, memory_order_seq_cst) >= refuse_at) {
        /* release: as in rt_call_leave; our last access to rt. */
        atomic_fetch_sub_explicit(&rt->calls, 1, memory_order_release);
        return -1;
    }
    return 1;
}

void rt_call_leave(dagrt *rt)
{
    /* release: everything the call did to rt happens before destroy's
     * acquire of a count of 0, after which it frees rt. */
    atomic_fetch_sub_explicit(&rt->calls, 1, memory_order_release);
}

void dagrt_destroy(dagrt *rt)
{
    if (!rt)
        return;
    rt_ctx *c = rt_ctx_current(rt);
    /* From one of its own workers it would join itself; from a task (on
     * the main thread too: a plain task, a fiber task, a graph node) it
     * would wait for that task to finish. Refused alike, with a message. */
    if (c && (c->worker || c->depth > 0 || dagrt_in_fiber(rt) || rt_exec_in_node())) {
        fprintf(stderr, "dagrt_destroy: called from %s of the same runtime; ignored\n",
                c->worker ? "a worker thread" : "inside a running task");
        return;
    }
    /* Another thread attached as a guest would call into freed memory at
     * its next call: refused alike; detach it and destroy again. (A guest
     * thread that exits attached gives its slot back: core/guest.c.) */
    int guests = rt_guest_attached(rt, c);
    if (guests > 0) {
        fprintf(stderr, "dagrt_destroy: %d guest thread%s still attached (dagrt_thread_detach "
                "first); ignored\n", guests, guests == 1 ? "" : "s");
        return;
    }
    rt_pause_end(rt);   /* a paused pool drains like a running one */
    /* seq_cst: destroy's half of the Dekker pair (DESTROY AND THREADS
     * OUTSIDE); from here on new waits on the world are refused. */
    atomic_store_explicit(&rt->closing, RT_DRAINING, memory_order_seq_cst);
    drain(rt, c);
    /* Every task has finished. Seal, then end the outside threads' waits
     * and wait until none is inside a call (or attached: an attach that
     * raced destroy's check above is waited for until it detaches). */
    atomic_store_explicit(&rt->closing, RT_SEALED, memory_order_seq_cst);   /* seq_cst: as above */
    dagrt_cancel_request(&rt->waits);
    /* seq_cst: destroy's load of the pair (it acquires, too: see
     * rt_call_leave). */
    while (atomic_load_explicit(&rt->calls, memory_order_seq_cst) != 0)
        rt_os_sleep_ns(20000);
    /* An attach that raced the check above counted itself before
     * RT_DRAINING and holds its slot now: wait until it detaches, or its
     * thread exits (core/guest.c). */
    while (rt_guest_attached(rt, c) > 0)
        rt_os_sleep_ns(20000);
    rt_stop_and_join(rt);
    rt_io_fini(rt);   /* the reactor has let go of every buffer */
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (ob && c == &rt->ctx[0])
        rt_obs_thread(ob, false, 0);
    rt_fiber_rt_fini(rt);
    /* The creator's alternate stack: only from its own thread (from
     * another one, the creator keeps it until it exits). */
    if (c == &rt->ctx[0] && !rt->cfg.no_overflow_report)
        rt_overflow_thread_leave();
    if (c) {
        rt_ctx_window_close(c);   /* its chunk is freed below */
        rt_tls_ctx = c->guest ? c->guest_prev : rt->prev_tls;
    } else {
        rt_chain_unlink(rt);   /* made before a runtime still alive here */
    }
    if (c && c->guest)
        rt_guest_exit_rearm();   /* the thread's exit hook must not name c */
    rt_free_all(rt);
}
