/*
 * core/outside.c - a group wait from a thread outside the runtime (no ctx
 * in it): it cannot help, so it blocks on a word of its own until the
 * group's last task wakes it, counted as a call so that dagrt_destroy frees
 * nothing under it. Split from core/work.c, whose waits help: nothing here
 * is on a runtime thread's path.
 */
#include "core.h"

/* A thread outside the runtime, blocked on its word until the group's
 * completer wakes it. */
typedef struct foreign_waiter {
    rt_waiter w;                 /* first */
    _Atomic uint32_t done;
} foreign_waiter;

static void foreign_wake(rt_waiter *w)
{
    foreign_waiter *f = (foreign_waiter *)(void *)w;
    /* release: the waiter's acquire sees the tasks' effects (the completer
     * acquired them through the group's word). The wake after it only
     * names the word's address (a system call that reads no memory of
     * ours), so the waiter may have returned by then. */
    atomic_store_explicit(&f->done, 1, memory_order_release);
    rt_os_wake32_one(&f->done);
}

int rt_group_wait_foreign(dagrt *rt, rt_group *g)
{
    if (g->owner && g->owner->rt == rt)
        return DAGRT_EPERM;
    /* A thread outside the runtime cannot help: it arms the group with
     * a waiter of its own and blocks until the last task's completion
     * wakes it (no polling). */
    foreign_waiter fw;
    fw.w.fn = foreign_wake;
    /* relaxed: set before the arm, whose acq_rel RMW publishes it. */
    atomic_store_explicit(&fw.done, 0, memory_order_relaxed);
    int r = rt_group_arm_on(g, NULL, &fw.w);
    if (r == 1)
        return 0;
    if (r == 0) {
        /* acquire: pairs with foreign_wake's release. */
        while (atomic_load_explicit(&fw.done, memory_order_acquire) == 0)
            rt_os_wait32(&fw.done, 0);
        return 0;
    }
    /* Someone else waits on it (DAGRT_EBUSY): poll with backoff. */
    unsigned spins = 0;
    /* acquire: the completer's release store of 0 publishes the tasks' effects. */
    while (atomic_load_explicit(&g->word, memory_order_acquire) != 0) {
        if (spins < 2000) {
            rt_cpu_relax();
            spins++;
        } else if (spins < 2100) {
            rt_os_yield();
            spins++;
        } else {
            rt_os_sleep_ns(50000);
        }
    }
    return 0;
}

/* dagrt_group_wait from a thread with no ctx in rt (it is not on one of
 * rt's fibers either): counted as a call while it waits, so dagrt_destroy
 * frees nothing under it (core/destroy.c, "DESTROY AND THREADS OUTSIDE"). It
 * still runs while destroy drains (destroy runs the group's tasks); once
 * every task has finished it is refused, and looks at the group alone:
 * done, or DAGRT_ECANCELED. */
int rt_group_wait_outside(dagrt *rt, rt_group *gi)
{
    if (rt_call_enter(rt, RT_SEALED) < 0) {
        if (gi->owner)
            return DAGRT_EPERM;   /* a runtime thread's own count: never ours to read */
        /* acquire: as rt_group_is_done. */
        return atomic_load_explicit(&gi->word, memory_order_acquire) == 0 ? 0 : DAGRT_ECANCELED;
    }
    int r = 1;
    if (rt->nguests > 0)
        r = rt_guest_wait(rt, gi);   /* helps in a guest slot, if one is free */
    if (r == 1)
        r = rt_group_wait_foreign(rt, gi);
    rt_call_leave(rt);
    return r;
}

