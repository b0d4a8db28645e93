/*
 * os/os_once.c - the parts of the system layer that need no system call
 * of their own, shared by every system's file (os_linux.c, os_win32.c):
 * the once-only run, the CPU's counter question, the environment.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "os.h"

enum { ONCE_NEW, ONCE_RUNNING, ONCE_DONE };

void rt_os_once_run(rt_os_once *o, void (*fn)(void))
{
    /* acquire: a caller that sees DONE sees what fn wrote. */
    if (atomic_load_explicit(&o->state, memory_order_acquire) == ONCE_DONE)
        return;
    uintptr_t s = ONCE_NEW;
    /* acquire: as above, when it is DONE already (on success nothing is
     * read that another thread wrote). */
    if (atomic_compare_exchange_strong_explicit(&o->state, &s, ONCE_RUNNING,
            memory_order_acquire, memory_order_acquire)) {
        fn();
        /* release: publishes fn's writes to the acquire loads. */
        atomic_store_explicit(&o->state, ONCE_DONE, memory_order_release);
        return;
    }
    /* acquire: as above; fn is short (a calibration), so yielding is enough. */
    while (atomic_load_explicit(&o->state, memory_order_acquire) != ONCE_DONE)
        rt_os_yield();
}

bool rt_os_counter_invariant(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    unsigned a, b, c, d;   /* CPUID 0x80000007 EDX bit 8: invariant TSC */
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && ((d >> 8) & 1);
#else
    return false;   /* another CPU, or a compiler without <cpuid.h> */
#endif
}

const char *rt_os_getenv(const char *name)
{
    return getenv(name);   /* the C library's, on every system */
}

/* rt_os_alloc_refuse: a test's switch. relaxed: the test sets it on the
 * thread that allocates next, or before starting the thread that does (a
 * thread start orders it); nothing else is published through it. */
static _Atomic bool alloc_refuse;

void rt_os_alloc_refuse(bool refuse)
{
    atomic_store_explicit(&alloc_refuse, refuse, memory_order_relaxed);
}

bool rt_os_alloc_refused(void)
{
    return atomic_load_explicit(&alloc_refuse, memory_order_relaxed);   /* relaxed: see above */
}
