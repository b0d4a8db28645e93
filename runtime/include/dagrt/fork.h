/*
 * dagrt/fork.h - what libdagrt's inline fork-join touches, and the inline
 * functions themselves (dagrt_fork, dagrt_join_take, dagrt_join: declared
 * and described in dagrt.h). Included by dagrt.h at its end (as uv.h
 * includes uv/unix.h); nothing here is part of the API.
 */
#ifndef DAGRT_FORK_H
#define DAGRT_FORK_H

#include "../dagrt.h"   /* included alone, it comes back here after dagrt.h */

/* What the inline fork and join touch, defined once, here: the runtime's
 * own structures are built from these definitions (its per-thread context
 * begins with DAGRT_WORKER_VIEW_FIELDS_, its deque is dagrt__deque, its
 * task descriptor and count are DAGRT__TASK_FIELDS_ and
 * DAGRT__COUNT_FIELDS_), so nothing is copied. Inside the runtime
 * (DAGRT_INSIDE_) the shared fields are C11 atomics; outside, the inline
 * functions reach the same memory with the compiler's __atomic builtins
 * (same size and alignment), so ThreadSanitizer and the memory model see
 * atomics on both sides. DAGRT_WORKER_VIEW_VERSION changes whenever these
 * layouts do: a program built against another view gets no worker from
 * dagrt_worker_get (its forks then run as plain calls) instead of
 * misreading one. Not part of the API: only the inline functions use them. */
#define DAGRT_WORKER_VIEW_VERSION 1u


/* A deque's slot array (grown by doubling; old ones stay readable). */
typedef struct dagrt__deque_buf {
    int64_t mask;                             /* capacity - 1, a power of two minus 1 */
    struct dagrt__deque_buf *retired;         /* older buffers, freed at the end */
    DAGRT__SHARED_(void *) slot[DAGRT__FLEX_];
} dagrt__deque_buf;

/* A worker's Chase-Lev deque with a private tail (the runtime's core/deque.h):
 * top is written by thieves and the owner (CAS), split and bottom by the
 * owner only; 128 bytes apart so thieves polling top do not slow the
 * owner's pushes, and thieves' reads of split do not take bottom's line. */
typedef struct dagrt__deque {
    DAGRT_ALIGN_PAIR_ DAGRT__SHARED_(int64_t) top;   /* thieves' end */
    DAGRT__SHARED_(int32_t) splitreq;         /* a thief asks for the private tail (hint) */
    DAGRT_ALIGN_PAIR_ DAGRT__SHARED_(int64_t) split; /* end of the public part */
    DAGRT__SHARED_(dagrt__deque_buf *) buf;
    DAGRT_ALIGN_PAIR_ DAGRT__SHARED_(int64_t) bottom; /* end of the private tail */
    char pad_[128 - sizeof(int64_t)];
} dagrt__deque;

/* The head of a worker: its deque and, constant after creation, the
 * runtime's idle count. */
#define DAGRT_WORKER_VIEW_FIELDS_ \
    dagrt__deque deque; \
    const DAGRT__SHARED_(int32_t) *fj_nidle;
typedef struct dagrt__worker_view {
    DAGRT_WORKER_VIEW_FIELDS_
} dagrt__worker_view;

/* A task descriptor (link_t: the queue link; group_t: what completes) and
 * a completion count (ctx_t: its owner; waiter_t: who waits). A fork
 * (dagrt_forked) is one of each (the runtime's rt_forked). */
#define DAGRT__TASK_FIELDS_(link_t, group_t) \
    link_t node;           /* inbox / free-list link; must stay first */ \
    dagrt_fn fn; \
    void *arg; \
    group_t *group;        /* completed when the task finishes; may be NULL */ \
    uint32_t flags;        /* DAGRT_SPAWN_* and the runtime's own */ \
    uint32_t home;         /* the pool that owns it */ \
    void *fiber;           /* free for the fiber layer */ \
    uintptr_t u[2];        /* free for internal users */
#define DAGRT__COUNT_FIELDS_(ctx_t, waiter_t) \
    DAGRT__SHARED_(int64_t) word; \
    ctx_t *owner;          /* NULL: no owner fast path */ \
    waiter_t *waiter; \
    int32_t local;         /* owner only */ \
    uint16_t armed;        /* owner only: a wait folded local into word */ \
    uint16_t magic;
#define DAGRT__TASK_OWNED  (1u << 17)   /* counted in its group's owner-local count */
#define DAGRT__TASK_FORKED (1u << 18)   /* a fork's task, on its forker's stack */
#define DAGRT__GROUP_MAGIC 0x6772u      /* "gr" */

struct dagrt__link {
    DAGRT__SHARED_(void *) next_;
};
typedef struct dagrt__forked_view {
    struct { DAGRT__TASK_FIELDS_(struct dagrt__link, void) } task;
    struct { DAGRT__COUNT_FIELDS_(void, void) } group;
} dagrt__forked_view;

/* A fork's setup, the one definition for every compiler: f and fn are not
 * NULL, w is the forking worker. Counted once, owner-locally: only a
 * thief's completion is atomic. Plain stores: the fork is the forker's
 * until the push publishes it. */
static inline void dagrt__fork_setup(dagrt__forked_view *fv, dagrt_worker *w, dagrt_fn fn, void *arg)
{
    fv->task.fn = fn;
    fv->task.arg = arg;
    fv->task.group = &fv->group;
    fv->task.flags = DAGRT__TASK_OWNED | DAGRT__TASK_FORKED;
    fv->group.word = 0;
    fv->group.owner = w;
    fv->group.waiter = NULL;
    fv->group.local = 1;
    fv->group.armed = 0;
    fv->group.magic = DAGRT__GROUP_MAGIC;
}

/* A fork of nothing (NULL fn): its count is done, so its join returns
 * false. */
static inline void dagrt__fork_setup_done(dagrt__forked_view *fv, dagrt_worker *w)
{
    fv->group.owner = w;
    fv->group.word = 0;
    fv->group.local = 0;
    fv->group.armed = 0;
}

#if (defined(__GNUC__) || defined(__clang__)) && !defined(DAGRT_INSIDE_)
/* dagrt_fork (dagrt.h). The checks fold away for a dagrt_forked on the
 * caller's stack and a named function. */
static inline int dagrt_fork(dagrt_worker *w, dagrt_forked *f, dagrt_fn fn, void *arg)
{
    dagrt__forked_view *fv = (dagrt__forked_view *)(void *)f;
    if (!f || !fn) {
        if (f)
            dagrt__fork_setup_done(fv, w);
        return DAGRT_EINVAL;
    }
    if (!w) {
        fv->task.fn = fn;
        fv->task.arg = arg;
        fn(arg);
        return 0;
    }
    dagrt__fork_setup(fv, w, fn, arg);
    dagrt__deque *d = &((dagrt__worker_view *)(void *)w)->deque;
    int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED);   /* owner's own */
    /* acquire: pairs with thieves' CAS on top, so a slot they vacated is
     * free before we overwrite it (core/deque.h, rt_deque_push_private). */
    int64_t t = __atomic_load_n(&d->top, __ATOMIC_ACQUIRE);
    dagrt__deque_buf *a = __atomic_load_n(&d->buf, __ATOMIC_RELAXED);  /* owner wrote it */
    if (__builtin_expect(b - t > a->mask, 0)) {
        dagrt__fork_slow(w, f);   /* grows the deque */
        return 0;
    }
    /* relaxed: the private tail is the owner's alone; thieves stop at split. */
    __atomic_store_n(&a->slot[b & a->mask], (void *)f, __ATOMIC_RELAXED);
    __atomic_store_n(&d->bottom, b + 1, __ATOMIC_RELAXED);
    /* Expose part of the tail when a thief asked (a thief that finds the
     * public part empty asks, and so does one that takes its last item,
     * core/deque.h) or a thread is idle (it may be asleep: the exposure wakes
     * it). relaxed: hints; a stale one exposes early or late, never loses
     * the fork. */
    if (__builtin_expect(__atomic_load_n(&d->splitreq, __ATOMIC_RELAXED) != 0 ||
                         __atomic_load_n(((dagrt__worker_view *)(void *)w)->fj_nidle,
                                         __ATOMIC_RELAXED) > 0, 0))
        dagrt__fork_expose(w);
    return 0;
}

/* dagrt_join_take (dagrt.h). */
static inline bool dagrt_join_take(dagrt_worker *w, dagrt_forked *f)
{
    if (!w || !f)
        return false;
    dagrt__deque *d = &((dagrt__worker_view *)(void *)w)->deque;
    int64_t b = __atomic_load_n(&d->bottom, __ATOMIC_RELAXED);   /* owner's own */
    int64_t s = __atomic_load_n(&d->split, __ATOMIC_RELAXED);    /* owner's own */
    if (__builtin_expect(b > s, 1)) {
        dagrt__deque_buf *a = __atomic_load_n(&d->buf, __ATOMIC_RELAXED);
        /* relaxed: the private tail is ours alone. */
        if (__builtin_expect(__atomic_load_n(&a->slot[(b - 1) & a->mask], __ATOMIC_RELAXED) == (void *)f, 1)) {
            __atomic_store_n(&d->bottom, b - 1, __ATOMIC_RELAXED);
            /* Answer a thief's request while more of the tail is left. */
            if (b - 1 > s && __atomic_load_n(&d->splitreq, __ATOMIC_RELAXED))
                dagrt__fork_expose(w);
            return true;
        }
    }
    return dagrt__join_slow(w, f);
}

/* dagrt_join (dagrt.h). */
static inline void dagrt_join(dagrt_worker *w, dagrt_forked *f)
{
    if (dagrt_join_take(w, f)) {
        dagrt__forked_view *fv = (dagrt__forked_view *)(void *)f;
        fv->task.fn(fv->task.arg);
    }
}
#endif

#endif /* DAGRT_FORK_H */
