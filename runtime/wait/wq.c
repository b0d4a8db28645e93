/*
 * wait/wq.c - a wait queue's waiter as the one timed wait (wait/oneshot.h):
 * who takes it out and wakes it (WHO WAKES A WAITER, wait/wq.h), its
 * deadline and cancel links, the slow path every wait of wait/sync.c
 * shares, and the checks and counts of their results.
 */
#include "../core/core.h"
#include "cancel.h"
#include "wq.h"

static void waiter_end(rt_oneshot *o, int why);

void rt_wq_waiter_init(wq_waiter *w, rt_wq *q)
{
    rt_oneshot_init(&w->o, waiter_end);
    w->next = w->prev = NULL;
    w->q = q;
    w->result = 0;
    w->timeout_code = q ? DAGRT_ETIMEDOUT : 0;
    w->queued = false;
    atomic_init(&w->taken, 0);
}

/* The waker's side, outside the queue lock. After this the waiter may
 * return and its stack frame vanish (rt_oneshot_done). */
void rt_wq_wake(wq_waiter *w)
{
    rt_oneshot_done(&w->o);
}

void rt_wq_wake_list(wq_waiter *w)
{
    while (w) {
        wq_waiter *n = w->next;   /* read before the wake frees it */
        rt_wq_wake(w);
        w = n;
    }
}

/* A timer or cancel link takes w out with `code` if nobody has (WHO
 * WAKES A WAITER, wait/wq.h), and wakes it. */
static void waiter_take(wq_waiter *w, int code)
{
    rt_wq *q = w->q;
    if (q) {
        wq_lock(q);
        bool mine = w->queued;
        if (mine) {
            wq_unlink(q, w);
            w->result = code;
        }
        wq_unlock(q);
        if (!mine)
            return;
    } else {
        /* acq_rel: one of the timer and the cancel wins; the winner's
         * result store is published to the waiter by the group completion. */
        if (atomic_exchange_explicit(&w->taken, 1, memory_order_acq_rel))
            return;
        w->result = code;
    }
    rt_wq_wake(w);
}

/* The one timed wait's end (wait/oneshot.h): its deadline (a sleep's own
 * deadline is its success) or a scope's cancel. */
static void waiter_end(rt_oneshot *o, int why)
{
    wq_waiter *w = (wq_waiter *)(void *)((char *)o - offsetof(wq_waiter, o));
    waiter_take(w, why == DAGRT_ETIMEDOUT ? w->timeout_code : why);
}

/* Counts a wait's timeout or cancellation in dagrt_get_stats; returns r,
 * with dagrt_last_os_error 0 on the thread it returns on (no wait's
 * result is a system error; dagrt.h). */
int rt_wq_result(dagrt *rt, int r)
{
    rt_error_set(r, 0);
    if (r == DAGRT_ETIMEDOUT)
        rt_oneshot_count(rt, offsetof(rt_tstats, wait_timeouts), 1);
    else if (r == DAGRT_ECANCELED)
        rt_oneshot_count(rt, offsetof(rt_tstats, wait_cancels), 1);
    return r;
}

int rt_wq_wait(dagrt *rt, wq_waiter *w, uint64_t deadline, dagrt_cancel *cs, bool help,
               bool rt_cancellable, rt_async *a)
{
    /* A scope's deadline (on cs or above it) that comes first is the
     * wait's, and ends even a sleep with DAGRT_ETIMEDOUT (wait/cancel.c,
     * DEADLINES): read once, here, before its timer may fire. */
    uint64_t d = rt_oneshot_deadline(deadline, cs);
    if (d < deadline)
        w->timeout_code = DAGRT_ETIMEDOUT;
    int early = rt_oneshot_arm(rt, &w->o, d, cs, rt_cancellable);
    if (early)   /* a hand-off that came first still wins */
        waiter_take(w, early == RT_ONESHOT_PAST ? w->timeout_code : early);
    if (a) {
        /* No one waits: the continuation ends it (rt_wq_finish). */
        if (rt_async_arm(a, &w->o.g, NULL, rt_wq_finish, &rt->nwaits, false) == 0)
            return RT_PENDING;
    } else {
        rt_oneshot_wait(rt, &w->o, &rt->nwaits, help ? RT_ONESHOT_HELP : 0);
    }
    rt_oneshot_disarm(rt, &w->o);
    return rt_wq_result(rt, w->result);
}

int rt_wq_check(dagrt *rt, const dagrt_cancel *cs)
{
    rt_error_set(0, 0);
    if (!rt || (cs && !rt_cancel_valid(cs)))
        return DAGRT_EINVAL;
    if (cs && dagrt_cancel_requested(cs))
        return rt_wq_result(rt, DAGRT_ECANCELED);
    return 0;
}
