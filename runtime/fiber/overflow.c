/*
 * fiber/overflow.c - naming a fiber stack overflow instead of a bare crash.
 *
 * Every fiber stack has an inaccessible guard page below it (fiber/fiber.c), so
 * an overflow faults there. The system layer's fault handler runs on an
 * alternate stack of the faulting thread (the fiber's own stack is the one
 * that ran out) and asks recognise(): if the address lies in the guard of
 * a fiber of a watched pool, it writes one line naming the overflow and
 * the size to raise, then the system layer hands the fault on to whatever
 * handler was installed before (an engine's crash reporter, a sanitizer)
 * or to the default action, which ends the process as before.
 *
 * Only async-signal-safe work happens in the handler: reads of the pool
 * slots (a crash is under way; a slot being made at that moment at worst
 * goes unrecognised), digit formatting by hand, one write.
 * dagrt_config.no_overflow_report turns all of it off (no handler, no
 * alternate stacks).
 */
#include "../core/core.h"

#include "fiber.h"

#define RT_WATCH_MAX 64   /* pools watched at once (runtimes alive) */

/* The watched pools. A slot is claimed by CAS from NULL and cleared by its
 * pool at fini; the handler only reads. */
static _Atomic(rt_fiber_pool *) watched[RT_WATCH_MAX];

/* The calling thread's alternate stack, shared by every runtime the thread
 * belongs to (a thread may be the main thread of several). */
static _Thread_local rt_os_altstack alt;
static _Thread_local int alt_users;

static char *put_dec(char *p, size_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static bool recognise(void *addr)
{
    unsigned char *a = addr;
    for (int i = 0; i < RT_WATCH_MAX; i++) {
        /* relaxed: see the top of the file (the handler only reads). */
        rt_fiber_pool *p = atomic_load_explicit(&watched[i], memory_order_relaxed);
        if (!p || !p->slots)
            continue;
        for (int k = 0; k < p->max; k++) {
            rt_fiber *f = &p->slots[k];
            if (!f->map || a < f->map || a >= f->map + f->guard_len)
                continue;
            char msg[320], *q = msg;
            q = put_str(q, "dagrt: fiber stack overflow: a fiber task ran past the end of its ");
            q = put_dec(q, f->stack_len);
            q = put_str(q, f->large ? "-byte large stack; raise dagrt_config.fiber_large_stack_size\n"
                                    : "-byte stack; raise dagrt_config.fiber_stack_size "
                                      "(or spawn it with DAGRT_SPAWN_LARGE_STACK)\n");
            *q = 0;
            rt_os_write_err(msg);
            return true;
        }
    }
    return false;
}

int rt_overflow_watch(rt_fiber_pool *p)
{
    for (int i = 0; i < RT_WATCH_MAX; i++) {
        rt_fiber_pool *none = NULL;
        /* relaxed: the handler tolerates any order (top of the file); the
         * install below is a system call, ordered by the kernel. */
        if (atomic_compare_exchange_strong_explicit(&watched[i], &none, p,
                memory_order_relaxed, memory_order_relaxed)) {
            if (rt_os_fault_install(recognise) != 0) {
                atomic_store_explicit(&watched[i], NULL, memory_order_relaxed);
                return -1;
            }
            return 0;
        }
    }
    return -1;   /* more runtimes alive than slots: this one goes unwatched */
}

void rt_overflow_unwatch(rt_fiber_pool *p)
{
    for (int i = 0; i < RT_WATCH_MAX; i++) {
        rt_fiber_pool *mine = p;
        /* relaxed: as in watch. */
        if (atomic_compare_exchange_strong_explicit(&watched[i], &mine, NULL,
                memory_order_relaxed, memory_order_relaxed)) {
            rt_os_fault_uninstall();
            return;
        }
    }
}

void rt_overflow_thread_enter(void)
{
    if (alt_users++ == 0 && rt_os_altstack_enter(&alt) != 0)
        alt.mem = NULL;   /* no alternate stack: an overflow then ends as a bare fault */
}

void rt_overflow_thread_leave(void)
{
    if (alt_users > 0 && --alt_users == 0)
        rt_os_altstack_leave(&alt);
}
