/*
 * placement.c - CPU placement.
 */
#include "scheduler.h"

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
