/*
 * fiber/fiber.c - fiber stacks, the sanitizer-annotated switch, the bounded pool.
 */
#include "fiber.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "../os/os.h"

#if defined(RT_ASAN)
#  include <sanitizer/asan_interface.h>
#  include <sanitizer/common_interface_defs.h>
#endif
#if defined(RT_TSAN)
#  include <sanitizer/tsan_interface.h>
#endif

void rt_fiber_init_thread(rt_fiber *self)
{
    memset(self, 0, sizeof *self);
#if defined(RT_TSAN)
    self->tsan = __tsan_get_current_fiber();
#endif
    /* asan_lo/asan_len stay 0 until the first switch away from this thread's
     * stack tells us its bounds (__sanitizer_finish_switch_fiber reports
     * them); nothing switches to a thread context before that happens. */
}

void rt_fiber_fini_thread(rt_fiber *self)
{
    (void)self;   /* the thread's TSan fiber belongs to the thread */
}

int rt_fiber_create(rt_fiber *f, size_t stack_size, rt_arch_fn fn, void *arg)
{
    size_t pg = rt_os_page_size();
    memset(f, 0, sizeof *f);
    if (stack_size < RT_FIBER_STACK_MIN)
        stack_size = RT_FIBER_STACK_MIN;
    stack_size = (stack_size + pg - 1) & ~(pg - 1);
    size_t guard = rt_os_stack_guard_size();
    size_t len = stack_size + guard;
    /* Stacks grow down: the guard is the lowest page(s), so an overflow
     * faults there instead of running into whatever is mapped below. */
    void *m = rt_os_stack_map(len, guard);
    if (!m)
        return DAGRT_ENOMEM;
    f->map = m;
    f->map_len = len;
    f->guard_len = guard;
    f->stack_lo = (unsigned char *)m + guard;
    f->stack_len = stack_size;
    f->asan_lo = f->stack_lo;
    f->asan_len = f->stack_len;
#if defined(RT_TSAN)
    f->tsan = __tsan_create_fiber(0);
#endif
    rt_fiber_rearm(f, fn, arg);
    return 0;
}

void rt_fiber_destroy(rt_fiber *f)
{
    if (!f->map)
        return;
#if defined(RT_TSAN)
    __tsan_destroy_fiber(f->tsan);
#endif
#if defined(RT_ASAN)
    /* Stack frames that lived on this stack left poisoned redzones in the
     * shadow; a later mapping at the same address must not inherit them. */
    __asan_unpoison_memory_region(f->stack_lo, f->stack_len);
#endif
    rt_os_stack_unmap(f->map, f->map_len);
    f->map = NULL;
}

void rt_fiber_rearm(rt_fiber *f, rt_arch_fn fn, void *arg)
{
    f->fn = fn;
    f->arg = arg;
    f->asan_fake = NULL;
    rt_arch_make(&f->ctx, f->stack_lo, f->stack_len, fn, arg);
}

/* Completes the ASan half of a switch on the side that was switched to.
 * finish reports the bounds of the stack we came from: that is how a
 * thread's own context learns its bounds, before anything switches to it. */
static inline void asan_finish(rt_fiber *self)
{
#if defined(RT_ASAN)
    rt_fiber *prev = self->switched_from;
    const void *lo;
    size_t len;
    __sanitizer_finish_switch_fiber(self->asan_fake, &lo, &len);
    self->asan_fake = NULL;
    /* Only a thread's own stack has bounds we do not know already. */
    if (prev && !prev->map) {
        prev->asan_lo = lo;
        prev->asan_len = len;
    }
#else
    (void)self;
#endif
}

void rt_fiber_started(rt_fiber *self)
{
    asan_finish(self);
}

void rt_fiber_switch(rt_fiber *from, rt_fiber *to)
{
    to->switched_from = from;
#if defined(RT_ASAN)
    __sanitizer_start_switch_fiber(&from->asan_fake, to->asan_lo, to->asan_len);
#endif
#if defined(RT_TSAN)
    /* Immediately before the switch, as TSan asks. Flags 0: the switch is a
     * synchronisation point, which it is (one thread, program order). */
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
    rt_arch_switch(&from->ctx, &to->ctx);
    /* Resumed, possibly on another thread: nothing cached before the switch
     * that depends on the thread (TLS addresses) may be used below. */
    asan_finish(from);
}

/* ---------------------------------------------------------------- the pool */

/* Whether a stack of `size` usable bytes can be made: its rounded size
 * must not overflow, stay under the cap, and one such mapping must succeed
 * now (address space, RLIMIT_AS), so a size the system cannot give fails
 * at create instead of leaving fiber tasks that never start. */
static bool stack_size_ok(size_t size)
{
    size_t pg = rt_os_page_size();
    if (size > RT_FIBER_STACK_MAX)
        return false;
    size_t len = ((size + pg - 1) & ~(pg - 1)) + pg;
    void *m = rt_os_stack_map(len, pg);
    if (!m)
        return false;
    rt_os_stack_unmap(m, len);
    return true;
}

int rt_fiber_pool_init(rt_fiber_pool *p, int max, size_t std_size,
                           size_t large_size, rt_arch_fn entry)
{
    memset(p, 0, sizeof *p);
    if (max < 0 || !entry)
        return DAGRT_EINVAL;
    p->max = max ? max : RT_FIBER_POOL_DEFAULT;
    p->std_size = std_size ? std_size : RT_FIBER_STACK_DEFAULT;
    /* The large default follows a standard size raised above it. */
    p->large_size = large_size ? large_size
                  : p->std_size > RT_FIBER_LARGE_STACK_DEFAULT ? p->std_size
                  : RT_FIBER_LARGE_STACK_DEFAULT;
    if (p->std_size < RT_FIBER_STACK_MIN || p->large_size < p->std_size ||
        !stack_size_ok(p->std_size) || !stack_size_ok(p->large_size))
        return DAGRT_EINVAL;
    p->entry = entry;
    atomic_init(&p->warned, false);
    atomic_init(&p->exhausted, 0);
    /* Every fiber descriptor up front (calloc: untouched pages cost
     * nothing), so a fiber made late, when more run at once than ever
     * before, costs an mmap but no malloc in the middle of a frame. */
    p->slots = calloc((size_t)p->max, sizeof(rt_fiber));
    if (!p->slots)
        return DAGRT_ENOMEM;
    for (int i = p->max - 1; i >= 0; i--) {
        p->slots[i].pool_next = p->unused;
        p->unused = &p->slots[i];
    }
    if (rt_os_mutex_init(&p->mu) != 0) {
        free(p->slots);
        return DAGRT_ENOMEM;
    }
    return 0;
}

void rt_fiber_pool_fini(rt_fiber_pool *p)
{
    for (int i = 0; p->slots && i < p->max; i++)
        rt_fiber_destroy(&p->slots[i]);   /* no-op for never-made slots */
    free(p->slots);
    p->slots = NULL;
    p->free_std = p->free_large = p->unused = NULL;
    p->live = 0;
    rt_os_mutex_fini(&p->mu);
}

rt_fiber *rt_fiber_pool_get(rt_fiber_pool *p, bool large)
{
    /* Fiber tasks are much rarer than plain ones and each costs a switch
     * pair anyway; a mutex keeps the pool obviously correct. */
    rt_os_mutex_lock(&p->mu);
    rt_fiber **head = large ? &p->free_large : &p->free_std;
    rt_fiber *f = *head;
    if (f) {
        *head = f->pool_next;
        f->pool_next = NULL;
        rt_os_mutex_unlock(&p->mu);
        return f;
    }
    if (p->live >= p->max) {
        /* Reclaim a free fiber of the other size rather than refuse. */
        rt_fiber **other = large ? &p->free_std : &p->free_large;
        rt_fiber *victim = *other;
        if (!victim) {
            rt_os_mutex_unlock(&p->mu);
            /* relaxed: a statistic, read after the runtime is quiescent. */
            atomic_fetch_add_explicit(&p->exhausted, 1, memory_order_relaxed);
            return NULL;
        }
        *other = victim->pool_next;
        rt_fiber_destroy(victim);
        victim->pool_next = p->unused;
        p->unused = victim;
        p->live--;
    }
    /* Reserve a slot, then map the stack outside the lock. */
    f = p->unused;
    p->unused = f->pool_next;
    p->live++;
    rt_os_mutex_unlock(&p->mu);

    int rc = rt_fiber_create(f, large ? p->large_size : p->std_size, p->entry, NULL);
    if (rc != 0) {
        rt_os_mutex_lock(&p->mu);
        f->pool_next = p->unused;
        p->unused = f;
        p->live--;
        rt_os_mutex_unlock(&p->mu);
        return NULL;
    }
    rt_fiber_rearm(f, p->entry, f);   /* pooled fibers start in entry(fiber) */
    f->large = large;
    return f;
}

void rt_fiber_pool_put(rt_fiber_pool *p, rt_fiber *f)
{
    rt_os_mutex_lock(&p->mu);
    rt_fiber **head = f->large ? &p->free_large : &p->free_std;
    f->pool_next = *head;
    *head = f;
    rt_os_mutex_unlock(&p->mu);
}

void rt_fiber_pool_warn_once(rt_fiber_pool *p)
{
    /* relaxed: only "exactly one thread prints" matters, which the RMW on
     * one location guarantees by itself. */
    if (!atomic_exchange_explicit(&p->warned, true, memory_order_relaxed))
        fprintf(stderr,
                "dagrt: warning: fiber pool exhausted (%d fibers in use); new fiber "
                "tasks wait for a free fiber (raise dagrt_config.fiber_pool_size)\n",
                p->max);
}
