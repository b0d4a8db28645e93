/*
 * placement.c - CPU placement.
 */
#include "scheduler.h"
#include "pfor.h"

int rt_cpu_now(void)
{
    return rt_os_cpu_current();
}

int rt_cpu_leave(int cpu)
{
    rt_os_cpuset old, away;
    int now = rt_os_cpu_current();
    if (cpu < 0 || cpu >= RT_OS_CPUSET_BITS || now != cpu)
        return now;
    if (rt_os_affinity_get(NULL, &old) != 0 || !rt_os_cpuset_has(&old, cpu))
        return cpu;
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
    /* Still there (pinned, or the calls failed): keep sleeping at once. */
    if (rt_cpu_leave(from) != from)
        c->beside_waker = false;   /* owner's own field: c is this thread's ctx */
}

/* Steering a wake-up. On the same VMs, the worker a futex wake puts beside
 * its waker then waits in that CPU's run queue until the waker's time slice
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
    if (cpu < 0 || atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return 0;
    for (int k = 1; k < rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k];
        /* The first idle worker is the one the submit's wake_one claims. */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) != 1)
            continue;
        uintptr_t r = 0;
        rt_os_cpuset m;
        rt_os_mutex_lock(&rt->steer_mu);
        if (rt_os_affinity_get(&v->thread, &m) == 0 &&
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
        (void)rt_os_affinity_set(&v->thread, &m);
    }
    rt_os_mutex_unlock(&rt->steer_mu);
}

