/*
 * core/mpsc.h - Vyukov's intrusive multi-producer queue (internal).
 *
 * Producers never wait: one exchange on `head` and one store linking the
 * previous node. The consumer side is single-threaded by design; we guard it
 * with a try-lock (`lock`) so that other threads may also drain a queue
 * (thieves draining a busy worker's inbox, any worker serving the hot lane)
 * without ever blocking: a thread that cannot get the lock simply looks
 * elsewhere. The queue owner (e.g. the main thread for its queue) uses the
 * same try-lock, so the algorithm's single-consumer assumption holds.
 *
 * Between a producer's exchange and its link store the queue is briefly
 * "non-empty but unpoppable": rt_mpsc_pop_locked returns NULL while
 * rt_mpsc_nonempty returns true. Callers treat that as "retry soon".
 *
 * Emptiness is tracked by a separate counter `n` (incremented before the
 * exchange, decremented after a successful pop), not read off head/tail:
 * in Vyukov's queue, a consumer re-inserting the stub while a producer is
 * between its exchange and its link can leave head == &stub with nodes still
 * queued (tail -> a -> b -> stub once the link lands), so "head != stub" is
 * not a valid emptiness test. (We learned this from a hang in the tests.)
 */
#ifndef DAGRT_MPSC_H
#define DAGRT_MPSC_H

#include "../arch/apart.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct rt_node {
    _Atomic(struct rt_node *) next;
} rt_node;

typedef struct rt_mpsc {
    _Alignas(RT_APART) _Atomic(rt_node *) head;   /* producers' end */
    _Alignas(RT_APART) _Atomic(rt_node *) tail;   /* consumer's end (atomic only so hints may read it) */
    _Atomic int lock;                       /* consumer try-lock */
    _Alignas(RT_APART) _Atomic long n;            /* pushed - popped (counts pushes in progress) */
    rt_node stub;
} rt_mpsc;

static inline void rt_mpsc_init(rt_mpsc *q)
{
    atomic_init(&q->stub.next, NULL);
    atomic_init(&q->head, &q->stub);
    atomic_init(&q->tail, &q->stub);
    atomic_init(&q->lock, 0);
    atomic_init(&q->n, 0);
}

/* The algorithm itself, without the count (also re-inserts the stub). */
static inline void rt_mpsc_push_raw(rt_mpsc *q, rt_node *n)
{
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed); /* published below */
    /* seq_cst exchange: acq_rel orders the node's contents before the link
     * (release) and the previous node's ownership after it (acquire); seq_cst
     * also makes it the "publish" half of the parking protocol's Dekker pair
     * (core/idle.c), together with the notifier's fence. */
    rt_node *prev = atomic_exchange_explicit(&q->head, n, memory_order_seq_cst);
    /* release: the consumer that follows prev->next (acquire) sees n's fields. */
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

static inline void rt_mpsc_push(rt_mpsc *q, rt_node *n)
{
    /* seq_cst: this is the "publish" of the idle protocol (core/idle.c); it
     * comes before the node is linked, so a re-check that sees n > 0 may
     * find the node not yet poppable and must retry (never park). */
    atomic_fetch_add_explicit(&q->n, 1, memory_order_seq_cst);
    rt_mpsc_push_raw(q, n);
}

/* Any thread; hint, or exact when made after a seq_cst announcement. */
static inline bool rt_mpsc_nonempty(rt_mpsc *q)
{
    return atomic_load_explicit(&q->n, memory_order_seq_cst) > 0;
}

/* Caller holds the consumer lock. */
static inline rt_node *rt_mpsc_pop_locked(rt_mpsc *q)
{
    rt_node *tail = atomic_load_explicit(&q->tail, memory_order_relaxed); /* lock holder's */
    /* acquire: pairs with the producer's release link store. */
    rt_node *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (tail == &q->stub) {
        if (!next)
            return NULL;
        atomic_store_explicit(&q->tail, next, memory_order_relaxed);
        tail = next;
        /* acquire: pairs with the producer's release link store. */
        next = atomic_load_explicit(&next->next, memory_order_acquire);
    }
    if (next) {
        atomic_store_explicit(&q->tail, next, memory_order_relaxed);
        return tail;
    }
    /* acquire: pairs with a producer's exchange on head. */
    rt_node *head = atomic_load_explicit(&q->head, memory_order_acquire);
    if (tail != head)
        return NULL;            /* a producer is between exchange and link */
    rt_mpsc_push_raw(q, &q->stub);
    /* acquire: as above, the link store. */
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next) {
        atomic_store_explicit(&q->tail, next, memory_order_relaxed);
        return tail;
    }
    return NULL;
}

static inline bool rt_mpsc_trylock(rt_mpsc *q)
{
    /* relaxed pre-check avoids bouncing the line when someone holds it. */
    if (atomic_load_explicit(&q->lock, memory_order_relaxed))
        return false;
    /* acquire: we see the previous holder's tail updates. */
    return !atomic_exchange_explicit(&q->lock, 1, memory_order_acquire);
}

static inline void rt_mpsc_unlock(rt_mpsc *q)
{
    /* release: our tail updates are visible to the next holder. */
    atomic_store_explicit(&q->lock, 0, memory_order_release);
}

/* Any thread: pops one node, or NULL if empty, busy or mid-push. */
static inline rt_node *rt_mpsc_trypop(rt_mpsc *q)
{
    /* relaxed: a cheap empty test before touching the lock; a push it
     * misses is caught by the caller's seq_cst re-check before parking. */
    if (atomic_load_explicit(&q->n, memory_order_relaxed) <= 0)
        return NULL;
    if (!rt_mpsc_trylock(q))
        return NULL;
    rt_node *n = rt_mpsc_pop_locked(q);
    if (n)   /* relaxed: only a count; the node's contents came via next (acquire) */
        atomic_fetch_sub_explicit(&q->n, 1, memory_order_relaxed);
    rt_mpsc_unlock(q);
    return n;
}

/* Caller holds the consumer lock: the node the next pop returns, or NULL
 * (empty, or its first node still being linked), without popping it. A
 * queued node stays where it is until the lock holder pops it: producers
 * only link after the last one. */
static inline rt_node *rt_mpsc_front_locked(rt_mpsc *q)
{
    rt_node *tail = atomic_load_explicit(&q->tail, memory_order_relaxed); /* lock holder's */
    if (tail != &q->stub)
        return tail;   /* its contents came with the acquire load that reached it */
    /* acquire: pairs with the producer's release link store. */
    return atomic_load_explicit(&tail->next, memory_order_acquire);
}

/* As rt_mpsc_trypop, but only if take() accepts the front node: else the
 * queue is left as it is (and NULL returned). */
static inline rt_node *rt_mpsc_trypop_if(rt_mpsc *q, bool (*take)(const rt_node *))
{
    /* relaxed: as in rt_mpsc_trypop. */
    if (atomic_load_explicit(&q->n, memory_order_relaxed) <= 0)
        return NULL;
    if (!rt_mpsc_trylock(q))
        return NULL;
    rt_node *f = rt_mpsc_front_locked(q);
    rt_node *n = f && take(f) ? rt_mpsc_pop_locked(q) : NULL;
    if (n)   /* relaxed: only a count, as in rt_mpsc_trypop */
        atomic_fetch_sub_explicit(&q->n, 1, memory_order_relaxed);
    rt_mpsc_unlock(q);
    return n;
}

#endif
