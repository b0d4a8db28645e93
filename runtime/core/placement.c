/*
 * core/placement.c - the CPU placement policy, all of it (dagrt_config.placement;
 * docs/runtime.md, "CPU placement").
 *
 * Why: where idle CPUs look busy to the kernel (some virtual machines), a
 * futex wake can put the woken worker on its waker's CPU, where the two
 * only take turns (docs/benchmarks-log.md has the measurements). Two moves
 * undo that: a woken worker leaves its waker's CPU (rt_cpu_leave: two
 * affinity calls on itself), and a caller about to wake a sleeping worker
 * for a parallel-for first takes its own CPU out of that worker's mask
 * (rt_place_steer; the worker puts it back when it runs, rt_place_unsteer).
 *
 * The rules: DAGRT_PLACEMENT_NONE makes no affinity call at all (every
 * entry point returns before one). DAGRT_PLACEMENT_AUTO (the default) moves
 * only threads whose mask is still the one the runtime's creator had at
 * dagrt_create (what its workers inherit): a thread whose mask the user set
 * differs from it and is left alone; so is the main thread, always. Moves
 * only ever narrow a mask for a moment and give the same mask back.
 */
#include "core.h"
#include "../pfor/pfor.h"

void rt_place_init(dagrt *rt)
{
    rt->place_on = rt->cfg.placement == DAGRT_PLACEMENT_AUTO &&
                   rt_os_affinity_get(NULL, &rt->place_mask) == 0;
}

int rt_cpu_now(void)
{
    return rt_os_cpu_current();
}

int rt_cpu_leave(int cpu)
{
    int now = rt_os_cpu_current();
    rt_ctx *c = rt_tls_ctx;
    /* Only a worker of a runtime whose policy moves threads. */
    if (!c || !c->worker || !c->rt->place_on)
        return now;
    rt_os_cpuset old, away;
    if (cpu < 0 || cpu >= RT_OS_CPUSET_BITS || now != cpu)
        return now;
    if (rt_os_affinity_get(NULL, &old) != 0 || !rt_os_cpuset_has(&old, cpu))
        return cpu;
    if (!rt_os_cpuset_equal(&old, &c->rt->place_mask))
        return cpu;   /* the user set this thread's mask: leave it alone */
    away = old;
    rt_os_cpuset_del(&away, cpu);
    if (rt_os_cpuset_count(&away) == 0)
        return cpu;   /* pinned there: stay */
    if (rt_os_affinity_set(NULL, &away) != 0)
        return cpu;
    (void)rt_os_affinity_set(NULL, &old);
    return rt_os_cpu_current();
}

void rt_ctx_leave_waker(rt_ctx *c, int from)
{
    /* Still there (pinned, policy off, or the calls failed): keep sleeping
     * at once. */
    if (rt_cpu_leave(from) != from)
        c->beside_waker = false;   /* owner's own field: c is this thread's ctx */
}

/* Steering a wake-up. Where wakes land beside the waker, the worker a
 * futex wake puts beside its waker then waits in that CPU's run queue
 * until the waker's time slice
 * ends (milliseconds: the caller of a loop does not block), while the loop
 * it was woken for is long over. So before a submit that will wake a
 * sleeping worker, take our CPU out of that worker's allowed set: the
 * kernel then has to wake it elsewhere. Whoever runs the task puts the CPU
 * back (unsteer). Rare (it needs a sleeping worker, and kicks are rate
 * limited), so one mutex keeps concurrent steers of one worker consistent.
 * Returns the steered ctx index + 1, or 0 when nothing was done. */
uintptr_t rt_place_steer(dagrt *rt, int cpu)
{
    /* relaxed: heuristic reads; a wrong guess only skips the steering or
     * steers a worker that someone else then wakes. */
    if (!rt->place_on || cpu < 0 || atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return 0;
    for (int k = 1; k < rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k];
        /* The first idle worker is the one the submit's wake_one claims. */
        /* relaxed: a guess at which worker the submit will wake. */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) != 1)
            continue;
        uintptr_t r = 0;
        rt_os_cpuset m;
        rt_os_mutex_lock(&rt->steer_mu);
        /* Only a worker whose mask is the runtime's own (not the user's). */
        if (rt_os_affinity_get(&v->thread, &m) == 0 && rt_os_cpuset_equal(&m, &rt->place_mask) &&
            rt_os_cpuset_has(&m, cpu) && rt_os_cpuset_count(&m) > 1) {
            rt_os_cpuset_del(&m, cpu);
            if (rt_os_affinity_set(&v->thread, &m) == 0)
                r = (uintptr_t)k + 1;
        }
        rt_os_mutex_unlock(&rt->steer_mu);
        return r;
    }
    return 0;
}

void rt_place_unsteer(dagrt *rt, uintptr_t steered, int cpu)
{
    if (steered == 0)
        return;
    rt_ctx *v = &rt->ctx[steered - 1];
    rt_os_cpuset m;
    rt_os_mutex_lock(&rt->steer_mu);
    if (rt_os_affinity_get(&v->thread, &m) == 0) {
        rt_os_cpuset_add(&m, cpu);
        /* Only the mask we narrowed: a user's change since stays. */
        if (rt_os_cpuset_equal(&m, &rt->place_mask))
            (void)rt_os_affinity_set(&v->thread, &m);
    }
    rt_os_mutex_unlock(&rt->steer_mu);
}

