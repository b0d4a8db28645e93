/*
 * wait/sync.c - the fiber-aware sync primitives: events, mutexes, semaphores,
 * condition variables and sleeps, with deadlines and cancel scopes.
 * Each is a wait queue (a spinlock, a FIFO of waiters, a value); a waiter
 * is the one timed wait (wait/oneshot.h: a one-shot group that the waker
 * completes, its deadline and cancel links, the fiber's suspend or a
 * thread's helping or blocking wait), which this file's queues decide.
 * The queue and its waiter are in wait/wq.h and wait/wq.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "cancel.h"
#include "wq.h"

/* ----------------------------------------------------------------- sleep */

static int sleep_(dagrt *rt, uint64_t ns, dagrt_cancel *cs, rt_async *a)
{
    int e = rt_wq_check(rt, cs);
    if (e)
        return e;
    if (ns == 0)
        return 0;
    uint64_t now = rt_now_ns();
    uint64_t deadline = ns >= DAGRT_FOREVER - now ? DAGRT_FOREVER - 1 : now + ns;
    wq_waiter own, *w = waiter_for(a, &own);
    rt_wq_waiter_init(w, NULL);
    return rt_wq_wait(rt, w, deadline, cs, true, true, a);
}

/* ---------------------------------------------------------------- events */

void dagrt_event_init(dagrt_event *e, bool set)
{
    if (e)
        wq_init(wq_of(e), WQ_EVENT, set ? 1 : 0);
}

/* An event's value: 0 clear, 1 set, and EV_SETTING while a setter that
 * found it clear is between its critical section and its last access.
 * Readers may return, and free the event, as soon as they see it set, so
 * the setter's last store to the event must be the one that makes it set:
 * it pops the waiters under the lock with the value at EV_SETTING (no
 * waiter queues on an event not clear), unlocks, stores 1, and only then
 * wakes the waiters it popped (their records are theirs, not the event's).
 * Whoever sees EV_SETTING waits for the 1 (a few instructions away, or a
 * preempted setter's time slice): wait, is_set and reset alike. Checked
 * by tests/models/event_free.pml (a waiter frees the event at once). */
#define EV_SETTING 2

/* The value once no setter is between its lock and its last store.
 * acquire: a set seen here publishes what the setter wrote before it. */
static int64_t event_settled(rt_wq *q)
{
    int64_t v;
    for (unsigned i = 0; (v = atomic_load_explicit(&q->value, memory_order_acquire)) == EV_SETTING; i++) {
        if (i < 64)
            rt_cpu_relax();
        else
            rt_os_yield();
    }
    return v;
}

void dagrt_event_set(dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return;
    wq_lock(q);
    /* relaxed: under the queue's lock (rt_wq); a set or setting event has
     * no waiter queued, and its own setter stores the 1. */
    if (atomic_load_explicit(&q->value, memory_order_relaxed) != 0) {
        wq_unlock(q);
        return;
    }
    /* relaxed: under the lock; lock-free readers wait for the 1 below. */
    atomic_store_explicit(&q->value, EV_SETTING, memory_order_relaxed);
    uint32_t n = UINT32_MAX;
    wq_waiter *all = wq_pop_list(q, &n);
    wq_unlock(q);
    /* release: the lock-free readers (is_set, wait's sticky fast path)
     * acquire it, and must then see what the setter wrote before setting
     * (TSan caught the relaxed version). Our last access to the event. */
    atomic_store_explicit(&q->value, 1, memory_order_release);
    rt_wq_wake_list(all);
}

void dagrt_event_reset(dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return;
    for (;;) {
        wq_lock(q);
        /* relaxed: under the queue's lock (rt_wq). */
        if (atomic_load_explicit(&q->value, memory_order_relaxed) != EV_SETTING)
            break;
        /* A setter's 1 is still to come: clearing now would leave it set
         * after this reset returned, with waiters queued meanwhile. */
        wq_unlock(q);
        (void)event_settled(q);
    }
    /* relaxed: under the queue's lock (rt_wq). */
    atomic_store_explicit(&q->value, 0, memory_order_relaxed);   /* relaxed: under the lock */
    wq_unlock(q);
}

bool dagrt_event_is_set(const dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return false;
    /* A true answer lets the caller rely on what the setter wrote before
     * it set the event, and free the event (event_settled's acquire). */
    return event_settled(q) != 0;
}

static int event_wait_until_(dagrt *rt, dagrt_event *e, uint64_t deadline_ns, dagrt_cancel *cs,
                             rt_async *a)
{
    rt_wq *q = wq_of(e);
    int err = rt_wq_check(rt, cs);
    if (err)
        return err;
    if (!e || q->magic != WQ_EVENT)
        return DAGRT_EINVAL;
    /* Sticky fast path: no lock, no suspend (event_settled: as is_set). */
    if (event_settled(q))
        return 0;
    wq_waiter own, *w = waiter_for(a, &own);
    rt_wq_waiter_init(w, q);
    wq_lock(q);
    if (atomic_load_explicit(&q->value, memory_order_relaxed)) {   /* relaxed: under the lock */
        wq_unlock(q);
        /* Set, or being set: return only once its setter is done with it. */
        (void)event_settled(q);
        return 0;
    }
    wq_push(q, w);
    wq_unlock(q);
    return rt_wq_wait(rt, w, deadline_ns, cs, true, true, a);
}

int dagrt_event_wait(dagrt *rt, dagrt_event *e)
{
    return dagrt_event_wait_until(rt, e, DAGRT_FOREVER, NULL);
}

/* ---------------------------------------------------------------- mutexes */

void dagrt_mutex_init(dagrt_mutex *m)
{
    if (m)
        wq_init(wq_of(m), WQ_MUTEX, 0);
}

bool dagrt_mutex_trylock(dagrt_mutex *m)
{
    rt_wq *q = wq_of(m);
    if (!m || q->magic != WQ_MUTEX)
        return false;
    wq_lock(q);
    /* relaxed: under the queue's lock (rt_wq). */
    bool ok = atomic_load_explicit(&q->value, memory_order_relaxed) == 0;
    if (ok)
        atomic_store_explicit(&q->value, 1, memory_order_relaxed);   /* relaxed: under the lock */
    wq_unlock(q);
    return ok;
}

/* rt_cancellable false: the relock at the end of a condition wait, which
 * must hold the mutex when it returns, so not even destroy cancels it. */
static int mutex_lock(dagrt *rt, rt_wq *q, uint64_t deadline_ns, dagrt_cancel *cs, bool rt_cancellable,
                      rt_async *a)
{
    wq_waiter own, *w = waiter_for(a, &own);
    rt_wq_waiter_init(w, q);
    wq_lock(q);
    if (atomic_load_explicit(&q->value, memory_order_relaxed) == 0) {   /* relaxed: under the lock */
        atomic_store_explicit(&q->value, 1, memory_order_relaxed);   /* relaxed: under the lock */
        wq_unlock(q);
        return 0;
    }
    wq_push(q, w);
    wq_unlock(q);
    /* 0: woken by unlock with the mutex handed over (value stays 1). */
    return rt_wq_wait(rt, w, deadline_ns, cs, false, rt_cancellable, a);
}

static int mutex_lock_until_(dagrt *rt, dagrt_mutex *m, uint64_t deadline_ns, dagrt_cancel *cs,
                             rt_async *a)
{
    rt_wq *q = wq_of(m);
    int err = rt_wq_check(rt, cs);
    if (err)
        return err;
    if (!m || q->magic != WQ_MUTEX)
        return DAGRT_EINVAL;
    return mutex_lock(rt, q, deadline_ns, cs, true, a);
}

int dagrt_mutex_lock(dagrt *rt, dagrt_mutex *m)
{
    return dagrt_mutex_lock_until(rt, m, DAGRT_FOREVER, NULL);
}

int dagrt_mutex_unlock(dagrt_mutex *m)
{
    rt_error_set(0, 0);   /* dagrt.h: no unlock result is a system error */
    rt_wq *q = wq_of(m);
    if (!m || q->magic != WQ_MUTEX)
        return DAGRT_EINVAL;
    wq_lock(q);
    if (atomic_load_explicit(&q->value, memory_order_relaxed) == 0) {   /* relaxed: under the lock */
        wq_unlock(q);
        return DAGRT_EPERM;
    }
    wq_waiter *w = wq_pop(q);
    if (!w)
        atomic_store_explicit(&q->value, 0, memory_order_relaxed);   /* relaxed: under the lock */
    wq_unlock(q);
    if (w)
        rt_wq_wake(w);   /* direct hand-off: no barging past a waiter */
    return 0;
}

/* ------------------------------------------------------------- semaphores */

void dagrt_sem_init(dagrt_sem *s, uint32_t count)
{
    if (s)
        wq_init(wq_of(s), WQ_SEM, (int64_t)count);
}

bool dagrt_sem_tryacquire(dagrt_sem *s)
{
    rt_wq *q = wq_of(s);
    if (!s || q->magic != WQ_SEM)
        return false;
    wq_lock(q);
    /* relaxed: under the queue's lock (rt_wq). */
    int64_t v = atomic_load_explicit(&q->value, memory_order_relaxed);   /* relaxed: under the lock */
    if (v > 0)
        atomic_store_explicit(&q->value, v - 1, memory_order_relaxed);   /* relaxed: under the lock */
    wq_unlock(q);
    return v > 0;
}

static int sem_acquire_until_(dagrt *rt, dagrt_sem *s, uint64_t deadline_ns, dagrt_cancel *cs,
                              rt_async *a)
{
    rt_wq *q = wq_of(s);
    int err = rt_wq_check(rt, cs);
    if (err)
        return err;
    if (!s || q->magic != WQ_SEM)
        return DAGRT_EINVAL;
    wq_waiter own, *w = waiter_for(a, &own);
    rt_wq_waiter_init(w, q);
    wq_lock(q);
    int64_t v = atomic_load_explicit(&q->value, memory_order_relaxed);   /* relaxed: under the lock */
    if (v > 0) {
        atomic_store_explicit(&q->value, v - 1, memory_order_relaxed);   /* relaxed: under the lock */
        wq_unlock(q);
        return 0;
    }
    wq_push(q, w);
    wq_unlock(q);
    return rt_wq_wait(rt, w, deadline_ns, cs, false, true, a);   /* 0: one unit handed over */
}

int dagrt_sem_acquire(dagrt *rt, dagrt_sem *s)
{
    return dagrt_sem_acquire_until(rt, s, DAGRT_FOREVER, NULL);
}

void dagrt_sem_release(dagrt_sem *s, uint32_t n)
{
    rt_wq *q = wq_of(s);
    if (!s || q->magic != WQ_SEM || n == 0)
        return;
    wq_lock(q);
    wq_waiter *woken = wq_pop_list(q, &n);
    if (n > 0)   /* relaxed: under the queue's lock (rt_wq) */
        atomic_store_explicit(&q->value,
                              atomic_load_explicit(&q->value, memory_order_relaxed) + n,
                              memory_order_relaxed);
    wq_unlock(q);
    rt_wq_wake_list(woken);
}

/* ---------------------------------------------------- condition variables */

void dagrt_cond_init(dagrt_cond *cv)
{
    if (cv)
        wq_init(wq_of(cv), WQ_COND, 0);
}

static int cond_wait_(dagrt *rt, dagrt_cond *cv, dagrt_mutex *m, uint64_t deadline_ns, dagrt_cancel *cs,
                      rt_async *a)
{
    rt_wq *q = wq_of(cv), *mq = wq_of(m);
    int err = rt_wq_check(rt, cs);
    if (err)
        return err;
    if (!cv || q->magic != WQ_COND || !m || mq->magic != WQ_MUTEX)
        return DAGRT_EINVAL;
    /* Queued before the mutex is released: a signal sent by whoever takes
     * the mutex next finds us (no lost signal). */
    /* The caller must hold m (a mutex has no owner to check: an unlocked
     * one is the misuse that can be seen). relaxed: the caller's own lock
     * orders it. */
    if (atomic_load_explicit(&mq->value, memory_order_relaxed) == 0)
        return DAGRT_EPERM;
    wq_waiter own, *w = waiter_for(a, &own);
    rt_wq_waiter_init(w, q);
    if (a) {
        sync_async *sa = (sync_async *)(void *)a;
        sa->cond_m = mq;
        sa->stage = 1;
    }
    wq_lock(q);
    wq_push(q, w);
    wq_unlock(q);
    dagrt_mutex_unlock(m);
    int r = rt_wq_wait(rt, w, deadline_ns, cs, false, true, a);
    if (r == RT_PENDING)
        return r;   /* rt_wq_finish relocks */
    /* Like pthread_cond_wait, every return holds the mutex again. */
    if (a) {
        sync_async *sa = (sync_async *)(void *)a;
        sa->stage = 2;
        sa->cond_r = r;
        if (mutex_lock(rt, mq, DAGRT_FOREVER, NULL, false, a) == RT_PENDING)
            return RT_PENDING;   /* rt_wq_finish calls fn with cond_r */
        return r;
    }
    mutex_lock(rt, mq, DAGRT_FOREVER, NULL, false, NULL);
    return r;
}

void dagrt_cond_signal(dagrt_cond *cv)
{
    rt_wq *q = wq_of(cv);
    if (!cv || q->magic != WQ_COND)
        return;
    wq_lock(q);
    wq_waiter *w = wq_pop(q);   /* the oldest still waiting: timed-out ones are gone */
    wq_unlock(q);
    if (w)
        rt_wq_wake(w);
}

void dagrt_cond_broadcast(dagrt_cond *cv)
{
    rt_wq *q = wq_of(cv);
    if (!cv || q->magic != WQ_COND)
        return;
    uint32_t n = UINT32_MAX;
    wq_lock(q);
    wq_waiter *all = wq_pop_list(q, &n);
    wq_unlock(q);
    rt_wq_wake_list(all);
}

/* ----------------------------------------------------- asynchronous waits */

/* The continuation of an asynchronous wait (wait/async.c): what wait_slow
 * does after rt_oneshot_wait, on a runtime thread; a condition wait then
 * relocks its mutex, asynchronously again when it must wait. */
void rt_wq_finish(rt_async *a)
{
    sync_async *sa = (sync_async *)(void *)a;
    dagrt *rt = a->rt;
    rt_oneshot_disarm(rt, &sa->w.o);
    int r = rt_wq_result(rt, sa->w.result);
    if (sa->cond_m && sa->stage == 1) {
        sa->stage = 2;
        sa->cond_r = r;
        if (mutex_lock(rt, sa->cond_m, DAGRT_FOREVER, NULL, false, a) == RT_PENDING)
            return;   /* again, at stage 2 */
    }
    if (sa->cond_m)
        r = sa->cond_r;
    a->fn(a->arg, r);   /* the last access to the record */
}

/* A wait's answer as the public call gives it. */
static int64_t pending(int r)
{
    return r == RT_PENDING ? DAGRT_PENDING : r;
}

/* The checks every asynchronous call makes, and its record. */
#define ASYNC_ENTRY(rt, a, ra)                \
    int e_ = rt_async_check((rt), (a));       \
    if (e_)                                   \
        return e_;                            \
    rt_async *ra = rt_async_of(a);            \
    ((sync_async *)(void *)ra)->cond_m = NULL

int64_t dagrt_sleep_async(dagrt *rt, dagrt_async *a, uint64_t ns, dagrt_cancel *cs)
{
    ASYNC_ENTRY(rt, a, ra);
    return pending(sleep_(rt, ns, cs, ra));
}

int64_t dagrt_event_wait_async(dagrt *rt, dagrt_async *a, dagrt_event *e, uint64_t deadline_ns,
                               dagrt_cancel *cs)
{
    ASYNC_ENTRY(rt, a, ra);
    return pending(event_wait_until_(rt, e, deadline_ns, cs, ra));
}

int64_t dagrt_mutex_lock_async(dagrt *rt, dagrt_async *a, dagrt_mutex *m, uint64_t deadline_ns,
                               dagrt_cancel *cs)
{
    ASYNC_ENTRY(rt, a, ra);
    return pending(mutex_lock_until_(rt, m, deadline_ns, cs, ra));
}

int64_t dagrt_sem_acquire_async(dagrt *rt, dagrt_async *a, dagrt_sem *s, uint64_t deadline_ns,
                                dagrt_cancel *cs)
{
    ASYNC_ENTRY(rt, a, ra);
    return pending(sem_acquire_until_(rt, s, deadline_ns, cs, ra));
}

int64_t dagrt_cond_wait_async(dagrt *rt, dagrt_async *a, dagrt_cond *cv, dagrt_mutex *m,
                              uint64_t deadline_ns, dagrt_cancel *cs)
{
    ASYNC_ENTRY(rt, a, ra);
    return pending(cond_wait_(rt, cv, m, deadline_ns, cs, ra));
}

/* A group: its completion queues the continuation directly (no timer, no
 * link: a group wait is no wait on the world, as dagrt_group_wait). */
static void group_finish(rt_async *a)
{
    a->fn(a->arg, 0);
}

int64_t dagrt_group_wait_async(dagrt *rt, dagrt_async *a, dagrt_group *g)
{
    ASYNC_ENTRY(rt, a, ra);
    if (!g || rt_group_of(g)->magic != RT_GROUP_MAGIC)
        return DAGRT_EINVAL;
    int r = rt_async_arm(ra, rt_group_of(g), rt_ctx_current(rt), group_finish, NULL, false);
    return r == 0 ? DAGRT_PENDING : r == 1 ? 0 : r;
}

/* ------------------------------- threads outside the runtime vs destroy */

/* The timed calls above, as a thread with no ctx in rt makes them while
 * another thread may destroy rt: counted in rt->calls for their length,
 * refused with DAGRT_ECANCELED once destroy has begun (rt_oneshot_enter). */
#define OUTSIDE_CALL(rt, call)                         \
    do {                                               \
        if (!(rt))                                     \
            return DAGRT_EINVAL;                       \
        int in_ = rt_oneshot_enter((rt), RT_DRAINING); \
        if (in_ < 0)                                   \
            return DAGRT_ECANCELED;                    \
        int r_ = (call);                               \
        rt_oneshot_leave((rt), in_);                   \
        return r_;                                     \
    } while (0)

int dagrt_sleep(dagrt *rt, uint64_t ns, dagrt_cancel *cs)
{
    OUTSIDE_CALL(rt, sleep_(rt, ns, cs, NULL));
}

int dagrt_event_wait_until(dagrt *rt, dagrt_event *e, uint64_t deadline_ns, dagrt_cancel *cs)
{
    OUTSIDE_CALL(rt, event_wait_until_(rt, e, deadline_ns, cs, NULL));
}

int dagrt_mutex_lock_until(dagrt *rt, dagrt_mutex *m, uint64_t deadline_ns, dagrt_cancel *cs)
{
    OUTSIDE_CALL(rt, mutex_lock_until_(rt, m, deadline_ns, cs, NULL));
}

int dagrt_sem_acquire_until(dagrt *rt, dagrt_sem *s, uint64_t deadline_ns, dagrt_cancel *cs)
{
    OUTSIDE_CALL(rt, sem_acquire_until_(rt, s, deadline_ns, cs, NULL));
}

int dagrt_cond_wait(dagrt *rt, dagrt_cond *cv, dagrt_mutex *m, uint64_t deadline_ns, dagrt_cancel *cs)
{
    OUTSIDE_CALL(rt, cond_wait_(rt, cv, m, deadline_ns, cs, NULL));
}
