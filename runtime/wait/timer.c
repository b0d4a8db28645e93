/*
 * wait/timer.c - runtime-wide deadlines (wait/wait.h): a binary min-heap of
 * caller-owned timers under one mutex, the one-runner rule for firing, and
 * the keeper role the idle protocol hands out (who runs due timers: the
 * top of wait/wait.h).
 *
 * FIRE VERSUS CANCEL. The runner pops a due timer, records it as `firing`
 * and calls fire outside the lock; fire may end the timer's storage (it
 * usually wakes the waiter the timer lives in), so afterwards the runner
 * touches only `firing`, never the timer. rt_timer_cancel of a timer that
 * is no longer queued waits while it is the one `firing`: so when cancel
 * returns, fire is not running, which is what lets a waiter return (and
 * its stack frame vanish) right after.
 */
#include <stdlib.h>

#include "../core/core.h"
#include "wait.h"

#define TIMERS_CAP0 64

int rt_timers_init(rt_timers *q)
{
    q->heap = malloc(TIMERS_CAP0 * sizeof *q->heap);
    if (!q->heap)
        return DAGRT_ENOMEM;
    if (rt_os_mutex_init(&q->mu) != 0) {
        free(q->heap);
        q->heap = NULL;
        return DAGRT_ENOMEM;
    }
    q->cap = TIMERS_CAP0;
    q->n = 0;
    q->firing = NULL;
    q->running = false;
    q->keeper = NULL;
    q->keeper_ns = UINT64_MAX;
    q->kick = NULL;
    q->kick_arg = NULL;
    atomic_init(&q->next, UINT64_MAX);
    return 0;
}

void rt_timers_fini(rt_timers *q)
{
    if (!q->heap)
        return;
    rt_os_mutex_fini(&q->mu);
    free(q->heap);
    q->heap = NULL;
}

/* ---------------------------------------------------- the heap (under mu) */

static void heap_set(rt_timers *q, uint32_t i, rt_timer *t)
{
    q->heap[i] = t;
    t->slot = i + 1;
}

static void heap_up(rt_timers *q, uint32_t i)
{
    rt_timer *t = q->heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (q->heap[p]->deadline_ns <= t->deadline_ns)
            break;
        heap_set(q, i, q->heap[p]);
        i = p;
    }
    heap_set(q, i, t);
}

static void heap_down(rt_timers *q, uint32_t i)
{
    rt_timer *t = q->heap[i];
    for (;;) {
        uint32_t l = 2 * i + 1;
        if (l >= q->n)
            break;
        uint32_t m = (l + 1 < q->n && q->heap[l + 1]->deadline_ns < q->heap[l]->deadline_ns) ? l + 1 : l;
        if (t->deadline_ns <= q->heap[m]->deadline_ns)
            break;
        heap_set(q, i, q->heap[m]);
        i = m;
    }
    heap_set(q, i, t);
}

static void heap_remove(rt_timers *q, rt_timer *t)
{
    uint32_t i = t->slot - 1;
    t->slot = 0;
    rt_timer *last = q->heap[--q->n];
    if (i < q->n) {
        heap_set(q, i, last);
        heap_down(q, i);
        heap_up(q, last->slot - 1);
    }
}

static void publish_next(rt_timers *q)
{
    /* relaxed: pollers take mu before acting on it; an idler's keeper_enter
     * reads it without mu, ordered by the adder's fence in rt_wake_idle
     * (ARMED VERSUS PARKING, at rt_timer_keeper_enter). */
    atomic_store_explicit(&q->next, q->n ? q->heap[0]->deadline_ns : UINT64_MAX,
                          memory_order_relaxed);
}

/* --------------------------------------------------------------- the API */

int rt_timer_add(dagrt *rt, rt_timer *t)
{
    rt_timers *q = &rt->timers;
    rt_os_mutex_lock(&q->mu);
    if (q->n == q->cap) {
        rt_timer **h = realloc(q->heap, 2 * (size_t)q->cap * sizeof *h);
        if (!h) {
            rt_os_mutex_unlock(&q->mu);
            return DAGRT_ENOMEM;
        }
        q->heap = h;
        q->cap *= 2;
    }
    uint32_t i = q->n++;
    heap_set(q, i, t);
    heap_up(q, i);
    bool first = q->heap[0] == t;
    /* Every add writes next, first or not: the store keeper_enter's
     * unlocked load pairs with must be this thread's own, before its
     * fence in rt_wake_idle (ARMED VERSUS PARKING, below). */
    publish_next(q);
    rt_ctx *wake = NULL;
    bool no_keeper = q->keeper == NULL;
    if (!no_keeper && t->deadline_ns < q->keeper_ns) {
        q->keeper_ns = t->deadline_ns;
        wake = q->keeper;
    }
    void (*kick)(void *) = first ? q->kick : NULL;
    void *kick_arg = q->kick_arg;
    rt_os_mutex_unlock(&q->mu);
    if (wake)
        rt_unpark(&wake->parker);   /* the keeper parks again until the new deadline */
    else if (no_keeper)
        rt_wake_idle(rt);           /* one idler becomes the keeper (wait/wait.h) */
    if (kick)
        kick(kick_arg);
    return 0;
}

bool rt_timer_cancel(dagrt *rt, rt_timer *t)
{
    rt_timers *q = &rt->timers;
    rt_os_mutex_lock(&q->mu);
    if (t->slot) {
        bool first = t->slot == 1;
        heap_remove(q, t);
        if (first)
            publish_next(q);
        rt_os_mutex_unlock(&q->mu);
        return true;
    }
    /* Fired or firing: wait for the runner to be done with it (top of file).
     * fire never blocks, so this is short. */
    while (q->firing == t) {
        rt_os_mutex_unlock(&q->mu);
        rt_os_yield();
        rt_os_mutex_lock(&q->mu);
    }
    rt_os_mutex_unlock(&q->mu);
    return false;
}

uint64_t rt_timer_next(dagrt *rt)
{
    /* relaxed: a hint (see publish_next). */
    return atomic_load_explicit(&rt->timers.next, memory_order_relaxed);
}

void rt_timer_run_due(dagrt *rt, uint64_t now)
{
    rt_timers *q = &rt->timers;
    if (rt_timer_next(rt) > now)
        return;
    rt_os_mutex_lock(&q->mu);
    if (q->running) {
        rt_os_mutex_unlock(&q->mu);
        return;
    }
    q->running = true;
    while (q->n > 0 && q->heap[0]->deadline_ns <= now) {
        rt_timer *t = q->heap[0];
        heap_remove(q, t);
        publish_next(q);
        q->firing = t;
        rt_os_mutex_unlock(&q->mu);
        t->fire(t);                 /* t may be gone after this */
        rt_os_mutex_lock(&q->mu);
        q->firing = NULL;
    }
    q->running = false;
    rt_os_mutex_unlock(&q->mu);
}

void rt_timer_set_kick(dagrt *rt, void (*kick)(void *), void *arg)
{
    rt_timers *q = &rt->timers;
    rt_os_mutex_lock(&q->mu);
    q->kick = kick;
    q->kick_arg = arg;
    rt_os_mutex_unlock(&q->mu);
}

/* ----------------------------------------------------- the keeper role */

/* ARMED VERSUS PARKING (no deadline slept through; model
 * tests/models/timer_park.pml). A park with no timer queued pays one load
 * of `next`, not the mutex: only an idler that sees a timer takes mu to
 * become the keeper. The load is the re-check half of the idle protocol's
 * Dekker pair (core/idle.c), with `next` as the published work:
 *   idler:  nidle++ (seq_cst, step 1) ... R(next) (seq_cst, here)
 *   adder:  W(next) (publish_next, in rt_timer_add) ... F(seq_cst); R(nidle)
 *           (rt_wake_idle, called when there was no keeper).
 * In the single total order either the idler's load follows the adder's
 * fence, and it sees the timer and takes mu, or it precedes it, and then
 * so does the idler's nidle++, which the adder's read sees: it claims an
 * idle ctx and unparks it, and that ctx becomes the keeper at its next
 * park. With a keeper in place (decided under mu) the adder wakes the
 * keeper itself when its deadline is earlier, and a parker that read
 * UINT64_MAX would not have become the keeper anyway. */
uint64_t rt_timer_keeper_enter(dagrt *rt, rt_ctx *c)
{
    rt_timers *q = &rt->timers;
    uint64_t until = UINT64_MAX;
    /* seq_cst: the re-check half of the pair above. */
    if (atomic_load_explicit(&q->next, memory_order_seq_cst) == UINT64_MAX)
        return UINT64_MAX;
    rt_os_mutex_lock(&q->mu);
    if (q->n > 0 && (q->keeper == NULL || q->keeper == c)) {
        q->keeper = c;
        q->keeper_ns = until = q->heap[0]->deadline_ns;
    }
    rt_os_mutex_unlock(&q->mu);
    return until;
}

bool rt_timer_keeper_leave(dagrt *rt, rt_ctx *c)
{
    rt_timers *q = &rt->timers;
    rt_os_mutex_lock(&q->mu);
    bool was = q->keeper == c;
    if (was) {
        q->keeper = NULL;
        q->keeper_ns = UINT64_MAX;
    }
    rt_os_mutex_unlock(&q->mu);
    if (!was)
        return false;
    rt_timer_run_due(rt, rt_now_ns());
    return rt_timer_next(rt) != UINT64_MAX;
}
