/*
 * core/deque.h - the per-worker Chase-Lev work-stealing deque (internal).
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
 *
 * THE PRIVATE TAIL (split deque, after Lace: van Dijk and van de Pol,
 * "Lace: non-blocking split deque for work-stealing", 2014). Thieves see
 * only [top, split); the owner may also keep a private tail [split, bottom)
 * that no thief can touch, so pushing to it and taking from it need no
 * fence at all: a plain store and a plain load. The Chase-Lev protocol
 * above runs on `split` exactly as it would on `bottom` (thieves read split
 * where they read bottom; the owner's public take moves split where it
 * moved bottom). The owner exposes its tail by moving split up to bottom
 * (one release store, like a push of many items at once); a thief that
 * finds the public part empty while the tail is not sets `splitreq`, which
 * the owner polls. Who exposes when is the scheduler's policy (core/work.c, the private tail policy).
 * rt_deque_push exposes at once, so callers that never use the private
 * calls get the plain Chase-Lev deque.
 */
#ifndef DAGRT_DEQUE_H
#define DAGRT_DEQUE_H

/* The runtime's own view of dagrt.h's shared structures (C11 atomics)
 * comes from DAGRT_INSIDE_, which the build defines for every file of the
 * library and of the tests that reach inside (runtime/meson.build): no
 * include order to keep. */
#ifndef DAGRT_INSIDE_
#error "libdagrt's internal headers need -DDAGRT_INSIDE_=1 (runtime/meson.build's deps)"
#endif

#include "../arch/apart.h"
#include "../os/os.h"
#include "dagrt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The deque and its buffer are dagrt.h's dagrt__deque / dagrt__deque_buf:
 * the inline fork-join there works on them directly. */
typedef dagrt__deque_buf rt_deque_buf;
typedef dagrt__deque rt_deque;
_Static_assert(RT_APART == 128, "dagrt.h's deque keeps its fields 128 bytes apart");

#define RT_DEQUE_EMPTY ((void *)0)
#define RT_DEQUE_ABORT ((void *)1)    /* steal lost a race; worth retrying */

/* Buffers come from the system layer (rt_os_alloc_aligned), as the task
 * slabs do, so that tests can make them fail (rt_os_alloc_refuse). */
static inline rt_deque_buf *rt_deque_buf_new(int64_t cap)
{
    rt_deque_buf *b = rt_os_alloc_aligned(_Alignof(rt_deque_buf),
                                          sizeof *b + (size_t)cap * sizeof(b->slot[0]));
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
    atomic_init(&d->splitreq, 0);
    atomic_init(&d->split, 0);
    atomic_init(&d->bottom, 0);
    atomic_init(&d->buf, b);
    return 0;
}

static inline void rt_deque_fini(rt_deque *d)
{
    /* relaxed: fini runs once every thread is done with the deque. */
    rt_deque_buf *b = atomic_load_explicit(&d->buf, memory_order_relaxed);
    while (b) {
        rt_deque_buf *next = b->retired;
        rt_os_free_aligned(b);
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
        /* relaxed: the new buffer is published below with release. */
        atomic_store_explicit(&n->slot[i & n->mask],
            atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed),
            memory_order_relaxed);
    n->retired = a;
    /* release: a thief that loads the new buffer (acquire) sees its slots. */
    atomic_store_explicit(&d->buf, n, memory_order_release);
    return n;
}

/* Owner only: grows the buffer until n more items fit without growing
 * (a batch that must not fail half-way). false: out of memory, nothing
 * changed but the capacity. Thieves only ever free slots meanwhile. */
static inline bool rt_deque_reserve(rt_deque *d, int64_t n)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed); /* owner's own */
    /* acquire: as in push_private. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed); /* owner wrote it */
    while (b - t + n > a->mask + 1) {
        a = rt_deque_grow(d, a, t, b);
        if (!a)
            return false;
    }
    return true;
}

/* Owner only: the private tail's items from index `from` on (pushed since
 * the owner read bottom as `from`, none exposed since), handed back in
 * out-of-date order through fn, and dropped: nobody else reads slots at
 * or past split, so moving bottom back takes them back. */
static inline void rt_deque_unpush_private(rt_deque *d, int64_t from, void (*fn)(void *x, void *u),
                                           void *u)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed); /* owner's own */
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed); /* owner wrote it */
    for (int64_t i = from; i < b; i++)
        /* relaxed: our own slots (see above). */
        fn(atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed), u);
    /* relaxed: as push_private's store of bottom. */
    atomic_store_explicit(&d->bottom, from, memory_order_relaxed);
}

/* Owner only: appends x to the private tail. Returns false only when
 * growing failed (out of memory). */
static inline bool rt_deque_push_private(rt_deque *d, void *x)
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
    /* relaxed: no thief reads slots at or past split; others read bottom
     * only as a hint ("has a private tail"). */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    return true;
}

/* Owner only: makes the oldest items of the private tail public, up to
 * (not including) index to; split < to <= bottom. Exposing a prefix is the
 * same publication as exposing it all: split only moves up, and the items
 * it passes were written before. */
static inline void rt_deque_expose_to(rt_deque *d, int64_t to)
{
    /* release: the slots (and the tasks they point to) are visible to a
     * thief that reads this split with acquire. */
    atomic_store_explicit(&d->split, to, memory_order_release);
}

/* Owner only: makes the whole private tail public. */
static inline void rt_deque_expose(rt_deque *d)
{
    rt_deque_expose_to(d, atomic_load_explicit(&d->bottom, memory_order_relaxed)); /* owner's own */
}

/* Owner only: the same with a seq_cst RMW, for the idle protocol: the
 * exposure is then the "publish" half of its Dekker pair by itself, and the
 * notifier needs no separate fence (core/idle.c, notify_after_sc). An exchange
 * is a single locked instruction on x86, cheaper than a store plus mfence. */
static inline void rt_deque_expose_sc_to(rt_deque *d, int64_t to)
{
    atomic_exchange_explicit(&d->split, to, memory_order_seq_cst);
}

/* Owner only: a public push (push to the tail, expose it). */
static inline bool rt_deque_push(rt_deque *d, void *x)
{
    if (!rt_deque_push_private(d, x))
        return false;
    rt_deque_expose(d);
    return true;
}

/* Owner only: whether the public part looks empty (a relaxed hint, used
 * to decide whether to expose). */
static inline bool rt_deque_public_empty(rt_deque *d)
{
    /* relaxed: a policy hint; a stale top only makes us expose late or
     * early, never loses an item. split is the owner's own. */
    return atomic_load_explicit(&d->split, memory_order_relaxed) <=
           atomic_load_explicit(&d->top, memory_order_relaxed);
}

/* Any thread: a hint that the owner keeps a private tail. */
static inline bool rt_deque_has_private(rt_deque *d)
{
    /* relaxed: hints only (who to ask for work). */
    return atomic_load_explicit(&d->bottom, memory_order_relaxed) >
           atomic_load_explicit(&d->split, memory_order_relaxed);
}

/* Thief: asks the owner to expose its tail. */
static inline void rt_deque_request(rt_deque *d)
{
    /* relaxed: a hint the owner polls; the read first keeps the line shared
     * while a request is already pending. */
    if (!atomic_load_explicit(&d->splitreq, memory_order_relaxed))
        atomic_store_explicit(&d->splitreq, 1, memory_order_relaxed);
}

/* Thief: asks for the tail if the owner keeps one and nobody asked yet.
 * The pending request is checked first: a thief polling in its idle loop
 * then reads only the line it wrote, not the owner's `bottom` (whose line
 * the owner writes at every push and take). */
static inline void rt_deque_ask(rt_deque *d)
{
    /* relaxed: hints, see rt_deque_request. */
    if (!atomic_load_explicit(&d->splitreq, memory_order_relaxed) && rt_deque_has_private(d))
        atomic_store_explicit(&d->splitreq, 1, memory_order_relaxed);
}

/* Owner: takes a pending request (true if there was one). */
static inline bool rt_deque_take_request(rt_deque *d)
{
    /* relaxed: see rt_deque_request. */
    if (!atomic_load_explicit(&d->splitreq, memory_order_relaxed))
        return false;
    atomic_store_explicit(&d->splitreq, 0, memory_order_relaxed);
    return true;
}

/* Owner only, when no other thread can ever steal (a runtime with no
 * worker threads, where every push stays in the private tail): no fence,
 * no CAS. */
static inline void *rt_deque_take_private(rt_deque *d)
{
    /* relaxed: nobody else takes or steals here (see above). */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    if (b <= t)
        return RT_DEQUE_EMPTY;
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    /* relaxed: single-threaded use; the idle re-check of other threads
     * does not exist when nobody else runs tasks. An item someone pushed
     * publicly (split == bottom) is taken the same way. */
    atomic_store_explicit(&d->bottom, b - 1, memory_order_relaxed);
    if (atomic_load_explicit(&d->split, memory_order_relaxed) >= b)
        atomic_store_explicit(&d->split, b - 1, memory_order_relaxed);
    return atomic_load_explicit(&a->slot[(b - 1) & a->mask], memory_order_relaxed);
}

/* The same where nobody else can steal, taking item k mod n of the n held
 * (k a random number) instead of the newest: the shuffled serial switch
 * (core/work.c). The chosen item swaps places with the newest, which is
 * then taken as above. */
static inline void *rt_deque_take_private_any(rt_deque *d, uint32_t k)
{
    /* relaxed: nobody else takes or steals here (rt_deque_take_private). */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    if (b - t > 1) {
        rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
        _Atomic(void *) *x = &a->slot[(t + (int64_t)k % (b - t)) & a->mask];
        _Atomic(void *) *y = &a->slot[(b - 1) & a->mask];
        void *v = atomic_load_explicit(x, memory_order_relaxed);   /* relaxed: as above */
        atomic_store_explicit(x, atomic_load_explicit(y, memory_order_relaxed), memory_order_relaxed);
        atomic_store_explicit(y, v, memory_order_relaxed);   /* relaxed: as above */
    }
    return rt_deque_take_private(d);
}

/* Owner only, thieves or not: item k mod n of the n in the private tail
 * trades places with the newest, which rt_deque_take then takes (the
 * shuffled serial switch beside guest threads, core/work.c). Thieves never
 * read at or past split, so plain moves suffice. */
static inline void rt_deque_private_swap(rt_deque *d, uint32_t k)
{
    /* relaxed: the owner's own indices and private slots (see above). */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t s = atomic_load_explicit(&d->split, memory_order_relaxed);
    if (b - s < 2)
        return;
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    _Atomic(void *) *x = &a->slot[(s + (int64_t)k % (b - s)) & a->mask];
    _Atomic(void *) *y = &a->slot[(b - 1) & a->mask];
    void *v = atomic_load_explicit(x, memory_order_relaxed);   /* relaxed: as above */
    atomic_store_explicit(x, atomic_load_explicit(y, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(y, v, memory_order_relaxed);   /* relaxed: as above */
}

/* Owner only. LIFO end: the private tail first (no fence), then the public
 * part by the Chase-Lev take on split. */
static inline void *rt_deque_take(rt_deque *d)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);   /* owner's own */
    int64_t s = atomic_load_explicit(&d->split, memory_order_relaxed);    /* owner's own */
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
    if (b > s) {
        /* relaxed: the tail is ours alone (thieves stop at split). */
        atomic_store_explicit(&d->bottom, b - 1, memory_order_relaxed);
        return atomic_load_explicit(&a->slot[(b - 1) & a->mask], memory_order_relaxed);
    }
    s = s - 1;
    /* The store of split must be ordered before the load of top
     * (store->load, which only a full barrier gives). The paper writes a
     * relaxed store and a seq_cst fence; a seq_cst exchange followed by a
     * seq_cst load is ordered the same way in C11's total order S (the
     * thief's fence then sees it, C11 [atomics.order]) and costs one locked
     * instruction instead of a store plus mfence. Without the barrier the
     * owner and a thief can both take the last element:
     * tests/models/deque.pml -DNOFENCE. */
    atomic_exchange_explicit(&d->split, s, memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    void *x = RT_DEQUE_EMPTY;
    if (t <= s) {
        /* relaxed: the slot is ours unless the CAS below loses it. */
        x = atomic_load_explicit(&a->slot[s & a->mask], memory_order_relaxed);
        if (t == s) {
            /* Last element: race the thieves for it through top.
             * seq_cst on success per the paper; relaxed on failure (we
             * only learn that we lost). */
            if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
                    memory_order_seq_cst, memory_order_relaxed))
                x = RT_DEQUE_EMPTY;
            /* relaxed: owner's own; thieves see top == split (empty). */
            atomic_store_explicit(&d->split, s + 1, memory_order_relaxed);
            atomic_store_explicit(&d->bottom, s + 1, memory_order_relaxed);
        } else {
            atomic_store_explicit(&d->bottom, s, memory_order_relaxed);
        }
    } else {
        /* relaxed: owner's own indices; restoring them after an empty take. */
        atomic_store_explicit(&d->split, s + 1, memory_order_relaxed);
        atomic_store_explicit(&d->bottom, s + 1, memory_order_relaxed);
    }
    return x;
}

/* Any thread. FIFO end of the public part. Returns RT_DEQUE_EMPTY,
 * RT_DEQUE_ABORT or an item. */
static inline void *rt_deque_steal(rt_deque *d)
{
    /* acquire on top: pairs with other thieves' CAS (we read a slot they
     * may have just vacated only after seeing their top). */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    /* seq_cst fence: top must be read before split (load->load across the
     * owner's store->fence->load in take). */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire: pairs with expose's release store, making the slots visible. */
    int64_t s = atomic_load_explicit(&d->split, memory_order_acquire);
    if (t >= s)
        return RT_DEQUE_EMPTY;
    /* acquire (the paper's consume): the buffer's slots are initialised. */
    rt_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_acquire);
    void *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
    /* seq_cst CAS per the paper: claims element t against the owner's take
     * and the other thieves. */
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
            memory_order_seq_cst, memory_order_relaxed))
        return RT_DEQUE_ABORT;
    /* We took the last public item: ask for more now, so the owner need
     * not watch for its public part running dry (a line we own after the
     * CAS; relaxed: a hint, see rt_deque_request). */
    if (t + 1 == s)
        rt_deque_request(d);
    return x;
}

/* Any thread: the public part is non-empty; a hint, except in the parking
 * re-check where it is made after a seq_cst announcement (see core/idle.c).
 * seq_cst loads for that argument. */
static inline bool rt_deque_nonempty(rt_deque *d)
{
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    int64_t s = atomic_load_explicit(&d->split, memory_order_seq_cst);
    return s > t;
}

#endif
