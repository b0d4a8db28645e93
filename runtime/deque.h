/*
 * deque.h - the per-worker Chase-Lev work-stealing deque (internal).
 *
 * The owner pushes and takes at the bottom (LIFO); thieves steal at the top
 * (FIFO). Memory orders follow Lê, Pop, Cohen, Zappa Nardelli, "Correct and
 * Efficient Work-Stealing for Weak Memory Models" (PPoPP'13), with two
 * deliberate changes, both at least as strong as the paper:
 *  - push publishes with a release store of `bottom` instead of a release
 *    fence plus a relaxed store: same ordering for the one store that
 *    matters, and ThreadSanitizer understands it (it ignores fences);
 *  - slots are atomics accessed relaxed, so a thief that reads a slot the
 *    owner is overwriting (after wrap-around; the thief's CAS then fails)
 *    is not a data race in C11 and TSan sees none.
 * Indices are signed 64-bit and only grow, so they never wrap in practice.
 * A grown-out buffer is retired onto a list and freed only by rt_deque_fini,
 * because a thief may still be reading the old one.
 *
 * The model in tests/models/deque.pml checks the take/steal race on the last
 * element, with a negative control (the seq_cst fence in take removed).
 */
#ifndef DAGRT_DEQUE_H
#define DAGRT_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct rt_deque_buf {
    int64_t mask;                     /* capacity - 1; capacity a power of two */
    struct rt_deque_buf *retired;     /* older buffers, freed at fini */
    _Atomic(void *) slot[];
} rt_deque_buf;

typedef struct rt_deque {
    /* top is written by thieves and the owner (CAS); bottom only by the
     * owner. Separate cache lines so thieves polling top do not slow the
     * owner's pushes. */
    _Alignas(64) _Atomic int64_t top;
    _Alignas(64) _Atomic int64_t bottom;
    _Atomic(rt_deque_buf *) buf;
    char pad_[64 - sizeof(_Atomic int64_t) - sizeof(void *)];
} rt_deque;

#define RT_DEQUE_EMPTY ((void *)0)
#define RT_DEQUE_ABORT ((void *)1)    /* steal lost a race; worth retrying */

static inline rt_deque_buf *rt_deque_buf_new(int64_t cap)
{
    rt_deque_buf *b = malloc(sizeof *b + (size_t)cap * sizeof(b->slot[0]));
    if (!b)
        return NULL;
    b->mask = cap - 1;
    b->retired = NULL;
    for (int64_t i = 0; i < cap; i++)
        atomic_init(&b->slot[i], NULL);
    return b;
}

static inline int rt_deque_init(rt_deque *d, int64_t cap)
{
    rt_deque_buf *b = rt_deque_buf_new(cap);
    if (!b)
        return -1;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    atomic_init(&d->buf, b);
    return 0;
}

static inline void rt_deque_fini(rt_deque *d)
{
    rt_deque_buf *b = atomic_load_explicit(&d->buf, memory_order_relaxed);
    while (b) {
        rt_deque_buf *next = b->retired;
        free(b);
        b = next;
    }
}

/* Owner only. Doubles the buffer; the old one stays readable for thieves. */
static inline rt_deque_buf *rt_deque_grow(rt_deque *d, rt_deque_buf *a, int64_t t, int64_t b)
{
    rt_deque_buf *n = rt_deque_buf_new((a->mask + 1) * 2);
    if (!n)
        return NULL;
    for (int64_t i = t; i < b; i++)
        atomic_store_explicit(&n->slot[i & n->mask],
            atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed),
            memory_order_relaxed);
    n->retired = a;
    /* release: a thief that loads the new buffer (acquire) sees its slots. */
    atomic_store_explicit(&d->buf, n, memory_order_release);
    return n;
}

/* Owner only. Returns false only when growing failed (out of memory). */
static inline bool rt_deque_push(rt_deque *d, void *x)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed); /* owner's own */
    /* acquire: pairs with thieves' CAS on top, so slots they vacated are
     * really free before we overwrite them. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed); /* owner wrote it */
    if (b - t > a->mask) {
        a = rt_deque_grow(d, a, t, b);
        if (!a)
            return false;
    }
    atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_relaxed);
    /* release: the slot (and the task it points to) is visible to a thief
     * that reads this bottom with acquire. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return true;
}

/* Owner only, with a seq_cst store of bottom for the idle protocol: the
 * push is then the "publish" half of its Dekker pair by itself, and the
 * notifier needs no separate fence (sched.c, notify_after_sc). An exchange
 * is a single locked instruction on x86, cheaper than a store plus mfence. */
static inline bool rt_deque_push_sc(rt_deque *d, void *x)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);   /* as in push */
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    if (b - t > a->mask) {
        a = rt_deque_grow(d, a, t, b);
        if (!a)
            return false;
    }
    atomic_store_explicit(&a->slot[b & a->mask], x, memory_order_relaxed);
    /* seq_cst RMW: release for the slot (as in push) and a full barrier
     * before the notifier's seq_cst loads. */
    atomic_exchange_explicit(&d->bottom, b + 1, memory_order_seq_cst);
    return true;
}

/* Owner only, when no other thread can ever steal (a runtime with no
 * worker threads): no fence, no CAS. */
static inline void *rt_deque_take_private(rt_deque *d)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    if (b <= t)
        return RT_DEQUE_EMPTY;
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    /* relaxed: single-threaded use; the idle re-check of other threads
     * does not exist when nobody else runs tasks. */
    atomic_store_explicit(&d->bottom, b - 1, memory_order_relaxed);
    return atomic_load_explicit(&a->slot[(b - 1) & a->mask], memory_order_relaxed);
}

/* Owner only. LIFO end. */
static inline void *rt_deque_take(rt_deque *d)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    /* The store of bottom must be ordered before the load of top
     * (store->load, which only a full barrier gives). The paper writes a
     * relaxed store and a seq_cst fence; a seq_cst exchange followed by a
     * seq_cst load is ordered the same way in C11's total order S (the
     * thief's fence then sees it, C11 [atomics.order]) and costs one locked
     * instruction instead of a store plus mfence. Without the barrier the
     * owner and a thief can both take the last element:
     * tests/models/deque.pml -DNOFENCE. */
    atomic_exchange_explicit(&d->bottom, b, memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    void *x = RT_DEQUE_EMPTY;
    if (t <= b) {
        x = atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
        if (t == b) {
            /* Last element: race the thieves for it through top.
             * seq_cst on success per the paper; relaxed on failure (we
             * only learn that we lost). */
            if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
                    memory_order_seq_cst, memory_order_relaxed))
                x = RT_DEQUE_EMPTY;
            atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

/* Any thread. FIFO end. Returns RT_DEQUE_EMPTY, RT_DEQUE_ABORT or an item. */
static inline void *rt_deque_steal(rt_deque *d)
{
    /* acquire on top: pairs with other thieves' CAS (we read a slot they
     * may have just vacated only after seeing their top). */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    /* seq_cst fence: top must be read before bottom (load->load across the
     * owner's store->fence->load in take). */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire: pairs with push's release store, making the slot visible. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if (t >= b)
        return RT_DEQUE_EMPTY;
    /* acquire (the paper's consume): the buffer's slots are initialised. */
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_acquire);
    void *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
    /* seq_cst CAS per the paper: claims element t against the owner's take
     * and the other thieves. */
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
            memory_order_seq_cst, memory_order_relaxed))
        return RT_DEQUE_ABORT;
    return x;
}

/* Any thread; a hint, except in the parking re-check where it is made after
 * a seq_cst announcement (see sched.c). seq_cst loads for that argument. */
static inline bool rt_deque_nonempty(rt_deque *d)
{
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);
    return b > t;
}

#endif
