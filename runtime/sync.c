/*
 * sync.c - the fiber-aware sync primitives: events, mutexes, semaphores.
 * Each is a wait queue (a spinlock, a FIFO of waiters, a value); a waiter
 * is a one-shot group (count 1) that the waker completes, so waiting is the
 * fiber scheduler's suspend (fiber_sched.c) on a fiber and a helping or
 * blocking group wait elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"
#include "scheduler.h"

/* ------------------------------------------------------ wait queues */

/* Storage behind dagrt_event / dagrt_mutex / dagrt_sem: a tiny spinlock
 * guarding a FIFO of waiters and a value (event: set; mutex: locked; sem:
 * count). Waiters live on the waiting stack (fiber or thread). */
typedef struct wq_waiter {
    struct wq_waiter *next;
    rt_group g;          /* one-shot: count 1, completed by the waker */
} wq_waiter;

typedef struct rt_wq {
    _Atomic uint32_t lock;
    uint32_t magic;
    /* Written only under `lock`, so relaxed accesses inside it are ordered
     * by the lock; atomic because events also read it without the lock
     * (is_set, the sticky fast path), which is why event_set stores it
     * with release. */
    _Atomic int64_t value;
    wq_waiter *head, *tail;
} rt_wq;

_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_event), "dagrt_event too small");
_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_mutex), "dagrt_mutex too small");
_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_sem), "dagrt_sem too small");

#define WQ_EVENT 0x65766e74u   /* "evnt" */
#define WQ_MUTEX 0x6d757478u   /* "mutx" */
#define WQ_SEM   0x73656d61u   /* "sema" */

static void wq_lock(rt_wq *q)
{
    /* acquire: the critical section sees the previous holder's writes. A
     * holder never waits or switches while holding it (a few list ops), so
     * spinning is short; yield in case the holder was preempted. */
    for (unsigned i = 0;; i++) {
        if (atomic_exchange_explicit(&q->lock, 1, memory_order_acquire) == 0)
            return;
        while (atomic_load_explicit(&q->lock, memory_order_relaxed) != 0) {
            if (++i < 64)
                rt_cpu_relax();
            else
                rt_os_yield();
        }
    }
}

static void wq_unlock(rt_wq *q)
{
    /* release: pairs with wq_lock's acquire. */
    atomic_store_explicit(&q->lock, 0, memory_order_release);
}

static void wq_init(rt_wq *q, uint32_t magic, int64_t value)
{
    atomic_init(&q->lock, 0);
    q->magic = magic;
    atomic_init(&q->value, value);
    q->head = q->tail = NULL;
}

static void wq_push(rt_wq *q, wq_waiter *w)
{
    w->next = NULL;
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
}

static wq_waiter *wq_pop(rt_wq *q)
{
    wq_waiter *w = q->head;
    if (w) {
        q->head = w->next;
        if (!q->head)
            q->tail = NULL;
    }
    return w;
}

static void waiter_init(wq_waiter *w)
{
    /* A group with no owner (all counts atomic): one completion pending,
     * the waker's. */
    atomic_init(&w->g.word, 1);
    w->g.owner = NULL;
    w->g.waiter = NULL;
    w->g.local = 0;
    w->g.armed = 0;
    w->g.magic = RT_GROUP_MAGIC;
    w->next = NULL;
}

/* The waker's side, outside the queue lock. After this the waiter may
 * return and its stack frame vanish: rt_group_done touches w->g last. */
static void waiter_wake(wq_waiter *w)
{
    rt_group_done(&w->g);
}

/* Waits until waiter_wake(w); w is already queued (lock released).
 * A fiber task suspends. Otherwise, help = true (events) runs other tasks
 * meanwhile, like dagrt_group_wait; help = false (mutex, semaphore) blocks
 * the thread: helping while queued for a lock would run other tasks nested
 * on this stack, and one of them needing a lock this task holds, or queued
 * behind it, could never finish. */
static int waiter_wait(dagrt *rt, wq_waiter *w, bool help)
{
    int r = rt_fiber_group_wait(rt, &w->g);   /* on a fiber: suspends */
    if (r != 1)
        return r;
    rt_ctx *c = rt_ctx_current(rt);
    return help ? rt_group_wait_thread(rt, c, &w->g) : rt_fiber_block_wait(rt, c, &w->g);
}

static inline rt_wq *wq_of(const void *p) { return (rt_wq *)(uintptr_t)p; }

/* ---------------------------------------------------------------- events */

void dagrt_event_init(dagrt_event *e, bool set)
{
    if (e)
        wq_init(wq_of(e), WQ_EVENT, set ? 1 : 0);
}

void dagrt_event_set(dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return;
    wq_lock(q);
    /* release: the lock-free readers (is_set, wait's sticky fast path)
     * acquire it, and must then see what the setter wrote before setting
     * (TSan caught the relaxed version). */
    /* relaxed: under the queue's lock (rt_wq). */
    atomic_store_explicit(&q->value, 1, memory_order_release);
    wq_waiter *all = q->head;
    q->head = q->tail = NULL;
    wq_unlock(q);
    while (all) {
        wq_waiter *n = all->next;   /* read before the wake frees it */
        waiter_wake(all);
        all = n;
    }
}

void dagrt_event_reset(dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return;
    wq_lock(q);
    /* relaxed: under the queue's lock (rt_wq). */
    atomic_store_explicit(&q->value, 0, memory_order_relaxed);   /* relaxed: under the lock */
    wq_unlock(q);
}

bool dagrt_event_is_set(const dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!e || q->magic != WQ_EVENT)
        return false;
    /* acquire: a true answer lets the caller rely on what the setter wrote
     * before it set the event (the setter's unlock is a release after it). */
    return atomic_load_explicit(&q->value, memory_order_acquire) != 0;
}

int dagrt_event_wait(dagrt *rt, dagrt_event *e)
{
    rt_wq *q = wq_of(e);
    if (!rt || !e || q->magic != WQ_EVENT)
        return DAGRT_EINVAL;
    /* Sticky fast path: no lock, no suspend. acquire: as in is_set. */
    if (atomic_load_explicit(&q->value, memory_order_acquire))
        return 0;
    wq_waiter w;
    waiter_init(&w);
    wq_lock(q);
    if (atomic_load_explicit(&q->value, memory_order_relaxed)) {
        wq_unlock(q);
        return 0;
    }
    wq_push(q, &w);
    wq_unlock(q);
    return waiter_wait(rt, &w, true);
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

int dagrt_mutex_lock(dagrt *rt, dagrt_mutex *m)
{
    rt_wq *q = wq_of(m);
    if (!rt || !m || q->magic != WQ_MUTEX)
        return DAGRT_EINVAL;
    wq_waiter w;
    waiter_init(&w);
    wq_lock(q);
    if (atomic_load_explicit(&q->value, memory_order_relaxed) == 0) {   /* relaxed: under the lock */
        atomic_store_explicit(&q->value, 1, memory_order_relaxed);   /* relaxed: under the lock */
        wq_unlock(q);
        return 0;
    }
    wq_push(q, &w);
    wq_unlock(q);
    /* Woken by unlock with the mutex handed over (value stays 1). */
    return waiter_wait(rt, &w, false);
}

int dagrt_mutex_unlock(dagrt_mutex *m)
{
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
        waiter_wake(w);   /* direct hand-off: no barging past a waiter */
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

int dagrt_sem_acquire(dagrt *rt, dagrt_sem *s)
{
    rt_wq *q = wq_of(s);
    if (!rt || !s || q->magic != WQ_SEM)
        return DAGRT_EINVAL;
    wq_waiter w;
    waiter_init(&w);
    wq_lock(q);
    int64_t v = atomic_load_explicit(&q->value, memory_order_relaxed);   /* relaxed: under the lock */
    if (v > 0) {
        atomic_store_explicit(&q->value, v - 1, memory_order_relaxed);   /* relaxed: under the lock */
        wq_unlock(q);
        return 0;
    }
    wq_push(q, &w);
    wq_unlock(q);
    return waiter_wait(rt, &w, false);   /* woken with one unit handed over */
}

void dagrt_sem_release(dagrt_sem *s, uint32_t n)
{
    rt_wq *q = wq_of(s);
    if (!s || q->magic != WQ_SEM || n == 0)
        return;
    wq_waiter *woken = NULL, **tail = &woken;
    wq_lock(q);
    while (n > 0) {
        wq_waiter *w = wq_pop(q);
        if (!w)
            break;
        *tail = w;
        tail = &w->next;
        n--;
    }
    *tail = NULL;
    if (n > 0)
        atomic_store_explicit(&q->value,
                              atomic_load_explicit(&q->value, memory_order_relaxed) + n,
                              memory_order_relaxed);
    wq_unlock(q);
    while (woken) {
        wq_waiter *nx = woken->next;
        waiter_wake(woken);
        woken = nx;
    }
}

