/*
 * wait/wq.h - the wait queue behind events, mutexes, semaphores and
 * condition variables (wait/sync.c) and the one timed wait each waiter is
 * (wait/wq.c): private to the wait wing.
 */
#ifndef RT_WAIT_WQ_H
#define RT_WAIT_WQ_H

#include <stddef.h>

#include "../core/core.h"
#include "oneshot.h"
#include "spin.h"
#include "wait.h"

/* Storage behind dagrt_event / dagrt_mutex / dagrt_sem / dagrt_cond: a
 * tiny spinlock guarding a FIFO of waiters and a value (event: set; mutex:
 * locked; sem: count; cond: unused). Waiters live on the waiting stack
 * (fiber or thread).
 *
 * WHO WAKES A WAITER (timed and cancelled waits, no lost hand-off): a
 * queued waiter is woken exactly once, by whoever takes it out of the
 * queue under the queue's lock: a setter / unlocker / releaser / signaller
 * (result 0, with the unit, the lock or the signal handed over), or its
 * own timer or cancel link (result ETIMEDOUT / ECANCELED). A hand-off only
 * ever picks a waiter still queued, so one that timed out is passed over
 * for the next; a timer or cancel that finds its waiter already taken does
 * nothing (the hand-off won, the call returns 0). A sleep has no queue:
 * an exchange on `taken` decides between its timer and its cancel.
 * Model: tests/models/timed_wait.pml. */
typedef struct rt_wq rt_wq;

typedef struct wq_waiter {
    struct wq_waiter *next, *prev;
    rt_oneshot o;        /* the one timed wait: completed by whoever takes it out */
    rt_wq *q;            /* the queue it waits in; NULL for a sleep */
    int result;          /* written by whoever takes it out, before the wake */
    /* What its timer ends it with: DAGRT_ETIMEDOUT, or 0 for a sleep
     * (its deadline is its success) unless its scope's deadline
     * (wait/cancel.c, DEADLINES) came first. */
    int timeout_code;
    bool queued;         /* under q's lock */
    _Atomic int taken;   /* a sleep: 1 once its timer or cancel has it */
} wq_waiter;

struct rt_wq {
    _Atomic uint32_t lock;   /* wait/spin.h */
    uint32_t magic;
    /* Written only under `lock`, so relaxed accesses inside it are ordered
     * by the lock; atomic because events also read it without the lock
     * (is_set, the sticky fast path), which is why event_set stores it
     * with release. */
    _Atomic int64_t value;
    wq_waiter *head, *tail;
};

_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_event), "dagrt_event too small");
_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_mutex), "dagrt_mutex too small");
_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_sem), "dagrt_sem too small");
_Static_assert(sizeof(rt_wq) <= sizeof(dagrt_cond), "dagrt_cond too small");

#define WQ_EVENT 0x65766e74u   /* "evnt" */
#define WQ_MUTEX 0x6d757478u   /* "mutx" */
#define WQ_SEM   0x73656d61u   /* "sema" */
#define WQ_COND  0x636f6e64u   /* "cond" */

/* A holder never waits or switches while holding it (a few list ops). */
static inline void wq_lock(rt_wq *q) { rt_spin_lock(&q->lock); }
static inline void wq_unlock(rt_wq *q) { rt_spin_unlock(&q->lock); }

static inline void wq_init(rt_wq *q, uint32_t magic, int64_t value)
{
    atomic_init(&q->lock, 0);
    q->magic = magic;
    atomic_init(&q->value, value);
    q->head = q->tail = NULL;
}

/* The list, under q's lock. */
static inline void wq_push(rt_wq *q, wq_waiter *w)
{
    w->next = NULL;
    w->prev = q->tail;
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
    w->queued = true;
}

static inline void wq_unlink(rt_wq *q, wq_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        q->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        q->tail = w->prev;
    w->next = w->prev = NULL;
    w->queued = false;
}

/* Takes the oldest waiter out for a hand-off (result 0). */
static inline wq_waiter *wq_pop(rt_wq *q)
{
    wq_waiter *w = q->head;
    if (w) {
        wq_unlink(q, w);
        w->result = 0;
    }
    return w;
}

/* Takes up to *n of the oldest waiters out for a hand-off (q's lock
 * held), *n less what it took: a list through next, for rt_wq_wake_list once
 * the lock is released. */
static inline wq_waiter *wq_pop_list(rt_wq *q, uint32_t *n)
{
    wq_waiter *list = NULL, **tail = &list;
    for (wq_waiter *w; *n > 0 && (w = wq_pop(q)); tail = &w->next, (*n)--)
        *tail = w;
    *tail = NULL;
    return list;
}

/* An asynchronous wait armed (the public calls answer DAGRT_PENDING): a
 * value no wait of this file returns otherwise. */
#define RT_PENDING 1

/* An asynchronous wait's record (dagrt_async): the waiter lives in it,
 * not on a waiting stack. cond: a condition wait's mutex, relocked by the
 * continuation before fn (stage 1: the signal; 2: the relock). */
typedef struct sync_async {
    rt_async a;          /* first */
    wq_waiter w;
    rt_wq *cond_m;
    int stage;
    int cond_r;          /* stage 2: the condition wait's result */
} sync_async;
_Static_assert(sizeof(sync_async) <= sizeof(dagrt_async), "dagrt_async too small for a sync wait");

/* The waiter a call uses: the record's for an asynchronous one. */
static inline wq_waiter *waiter_for(rt_async *a, wq_waiter *own)
{
    return a ? &((sync_async *)(void *)a)->w : own;
}

static inline rt_wq *wq_of(const void *p) { return (rt_wq *)(uintptr_t)p; }

/* ------------------------------------------------------- wait/wq.c */

/* A waiter for queue q (NULL: a sleep), not yet queued. */
void rt_wq_waiter_init(wq_waiter *w, rt_wq *q);
/* The waker's side, outside the queue lock. After this the waiter may
 * return and its stack frame vanish (rt_oneshot_done). */
void rt_wq_wake(wq_waiter *w);
/* Wakes a list from wq_pop_list (the queue's lock released). */
void rt_wq_wake_list(wq_waiter *w);
/* The slow path of every wait: w is queued (or, for a sleep, has no
 * queue), the queue's lock released. The one timed wait: its deadline and
 * cancel links, the wait, and its result. help: the thread form helps
 * (events, sleeps) or blocks (mutex, semaphore, cond: helping while
 * queued for a lock could run tasks that need it). */
int rt_wq_wait(dagrt *rt, wq_waiter *w, uint64_t deadline, dagrt_cancel *cs, bool help,
               bool rt_cancellable, rt_async *a);
/* Checks shared by the timed calls: the runtime, the scope. 0 to go on.
 * Clears dagrt_last_os_error for a call that returns without suspending
 * (one that suspends clears it again where it returns: rt_wq_result). */
int rt_wq_check(dagrt *rt, const dagrt_cancel *cs);
/* Counts a wait's timeout or cancellation in dagrt_get_stats; returns r,
 * with dagrt_last_os_error 0 on the thread it returns on (no wait's
 * result is a system error; dagrt.h). */
int rt_wq_result(dagrt *rt, int r);

/* ----------------------------------------------------- wait/sync.c */

/* The continuation of an asynchronous wait (wait/async.c), which
 * rt_wq_wait arms: a condition wait relocks its mutex there. */
void rt_wq_finish(rt_async *a);

#endif
