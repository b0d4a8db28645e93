/*
 * fiber/fiber.h - fibers: mmap'd stacks with a guard page, a bounded pool, and
 * the one switch function that every fiber switch goes through so that the
 * sanitizers hear about it (internal to libdagrt; tests use it directly).
 *
 * Thread-local state and migration. A fiber may suspend on one worker and
 * resume on another. The compiler assumes the thread never changes inside a
 * function, so it may compute the address of a _Thread_local variable once
 * and reuse it across a call that switches. The rule in this runtime: code
 * that can switch (anything that may suspend) never holds a TLS address
 * across the switch; it re-reads TLS through a real (noinline) call after
 * every switch (rt_ctx_current; see fiber/sched.c). The same rule holds
 * for users' fiber tasks: read thread-local data (errno included) again
 * after any wait; docs/runtime.md says so.
 */
#ifndef DAGRT_FIBER_H
#define DAGRT_FIBER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "../arch/ctx.h"
#include "../os/os.h"

/* Sanitizer detection: gcc defines __SANITIZE_*__, clang has __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#  define RT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#  define RT_TSAN 1
#endif
#if defined(__has_feature)
#  if __has_feature(address_sanitizer) && !defined(RT_ASAN)
#    define RT_ASAN 1
#  endif
#  if __has_feature(thread_sanitizer) && !defined(RT_TSAN)
#    define RT_TSAN 1
#  endif
#endif

/* Default stack sizes. Sanitized builds grow stack frames (redzones,
 * shadow bookkeeping), so they get four times as much. */
#if defined(RT_ASAN) || defined(RT_TSAN)
#  define RT_FIBER_STACK_SCALE 4
#else
#  define RT_FIBER_STACK_SCALE 1
#endif
#define RT_FIBER_STACK_DEFAULT       ((size_t)64 * 1024 * RT_FIBER_STACK_SCALE)
#define RT_FIBER_LARGE_STACK_DEFAULT ((size_t)1024 * 1024 * RT_FIBER_STACK_SCALE)
#define RT_FIBER_POOL_DEFAULT        256
#define RT_FIBER_STACK_MIN           ((size_t)16 * 1024)
/* The most a fiber stack may ask for (DAGRT_EINVAL above): far more than
 * any task needs, far from the rounding's overflow. */
#define RT_FIBER_STACK_MAX           ((size_t)1 << 30)

typedef struct rt_fiber rt_fiber;

struct rt_fiber {
    rt_arch_ctx ctx;               /* saved registers while switched out */
    unsigned char *map;          /* whole mapping incl. guard; NULL: a thread's own stack */
    size_t map_len;
    unsigned char *stack_lo;     /* usable stack [stack_lo, stack_lo+stack_len) */
    size_t stack_len;
    size_t guard_len;            /* guard page(s) at [map, map+guard_len) */
    rt_arch_fn fn;             /* entry function, called once with arg */
    void *arg;
    rt_fiber *switched_from;  /* who switched to us last (ASan bookkeeping) */
    void *tsan;                  /* TSan's fiber handle */
    void *asan_fake;             /* ASan fake stack saved while switched out */
    const void *asan_lo;         /* stack bounds ASan is told when switching here */
    size_t asan_len;
    /* Pool bookkeeping. */
    rt_fiber *pool_next;      /* free list (or unused-slot list) */
    bool large;
    /* Scheduler state (wait/sync.c): the suspend/resume handshake. */
    _Atomic unsigned park;       /* see wait/sync.c: 2 parties meet here */
    void *task;                  /* the task this fiber runs (scheduler's type) */
    void *owner;                 /* the runtime */
    /* The frame (exec/frame.c) of the node body running on this fiber
     * while it is switched out, NULL otherwise (fiber/sched.c). */
    void *frame;
    /* The node event (on this fiber's stack) that its suspends and resumes
     * report to an observer, or NULL (fiber/sched.c, rt_fiber_obs_swap). */
    struct dagrt_node_event *obs_ev;
    /* Its task is the program's and was spawned while something observed
     * (RT_TASK_SEEN): its slices are reported (fiber/sched.c), numbered
     * by slice from 0. Set with task, by the thread that hands the fiber
     * its task; read and counted by the thread running it (the resume's
     * hand-off orders them, as it does the fiber's context). */
    bool seen;
    uint32_t slice;
    /* Its next resume goes to the hot lane (an I/O completion with hot
     * workers, wait/io.c): set by the fiber before it suspends, cleared by the
     * resume's submitter after the handshake (park's acq_rel orders both). */
    bool resume_hot;
};

/* Makes *self stand for the calling thread's own stack, so that a thread can
 * switch into fibers and be switched back to. */
void rt_fiber_init_thread(rt_fiber *self);
void rt_fiber_fini_thread(rt_fiber *self);

/* Maps a stack of at least stack_size usable bytes (rounded up to pages)
 * with a PROT_NONE guard page below it, and prepares f so the first switch
 * to it calls fn(arg). Returns 0 or DAGRT_ENOMEM. */
int rt_fiber_create(rt_fiber *f, size_t stack_size, rt_arch_fn fn, void *arg);
void rt_fiber_destroy(rt_fiber *f);

/* Re-arms a fiber whose entry function will never be resumed again so that
 * the next switch to it calls fn(arg) from the top of its stack. */
void rt_fiber_rearm(rt_fiber *f, rt_arch_fn fn, void *arg);

/* Switches from the running context (described by from) to to. Every switch
 * in the runtime goes through here: it tells ASan and TSan. */
void rt_fiber_switch(rt_fiber *from, rt_fiber *to);

/* A fiber entry function must call this first: it completes the sanitizer
 * side of the switch that started it. */
void rt_fiber_started(rt_fiber *self);

/* ---------------------------------------------------------------- the pool */

typedef struct rt_fiber_pool {
    rt_os_mutex mu;
    rt_fiber *free_std, *free_large;
    rt_fiber *slots;          /* [max] descriptors, allocated at init */
    rt_fiber *unused;         /* slots with no fiber made in them */
    int live;                    /* fibers created and not destroyed */
    int max;
    size_t std_size, large_size;
    rt_arch_fn entry;          /* every pooled fiber starts in entry(fiber) */
    atomic_bool warned;          /* the exhaustion warning is printed once */
    atomic_ulong exhausted;      /* how often a get found the pool empty */
} rt_fiber_pool;

/* sizes/max 0 mean the defaults above (a large size of 0 follows a
 * standard size raised above the large default). Returns 0, DAGRT_EINVAL
 * (a size under the minimum, over RT_FIBER_STACK_MAX, one the system
 * cannot map now, or large < standard) or DAGRT_ENOMEM. */
int rt_fiber_pool_init(rt_fiber_pool *p, int max, size_t std_size,
                           size_t large_size, rt_arch_fn entry);
void rt_fiber_pool_fini(rt_fiber_pool *p);

/* A free fiber (made on demand up to max), or NULL when max fibers are in
 * use: the caller applies backpressure (see wait/sync.c) and calls
 * rt_fiber_pool_warn_once. */
rt_fiber *rt_fiber_pool_get(rt_fiber_pool *p, bool large);
void rt_fiber_pool_put(rt_fiber_pool *p, rt_fiber *f);
void rt_fiber_pool_warn_once(rt_fiber_pool *p);

/* wait/sync.c, for tests: how many fiber tasks ever waited for a free fiber. */
struct dagrt;
unsigned long rt_fiber_pending_total(const struct dagrt *rt);

#endif
