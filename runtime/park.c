/*
 * park.c - the parker (see park.h). States: EMPTY, NOTIFIED (a token is
 * waiting), PARKED (the owner sleeps or is about to).
 *
 * park:   fetch_sub(1): NOTIFIED->EMPTY means a token was there: return.
 *         EMPTY->PARKED: sleep while state == PARKED (the futex compares
 *         atomically with going to sleep, so an unpark between our fetch_sub
 *         and the futex call makes the futex return at once).
 * unpark: exchange(NOTIFIED); if it was PARKED, wake the sleeper.
 * The Promela model tests/models/park.pml covers this token with the idle
 * announcement protocol that sits on top of it (sched.c).
 */
#define _GNU_SOURCE
#include "park.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *w, uint32_t expect)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rt_parker_init(rt_parker *p)
{
    atomic_init(&p->state, RT_PARK_EMPTY);
    atomic_init(&p->waker_cpu, -1);
}
void rt_parker_fini(rt_parker *p) { (void)p; }

int rt_park(rt_parker *p)
{
    /* acquire: whatever the unparker published before its release exchange
     * is visible to us once we consume its token. */
    if (atomic_fetch_sub_explicit(&p->state, 1, memory_order_acquire) == RT_PARK_NOTIFIED)
        return 0;
    for (;;) {
        futex_wait(&p->state, RT_PARK_PARKED);
        uint32_t expect = RT_PARK_NOTIFIED;
        /* acquire: as above. relaxed on failure: still PARKED (spurious
         * wake-up), so we sleep again. */
        if (atomic_compare_exchange_strong_explicit(&p->state, &expect, RT_PARK_EMPTY,
                memory_order_acquire, memory_order_relaxed)) {
            /* relaxed: a placement hint; a stale value only changes how
             * long the caller polls before its next park. */
            int w = atomic_load_explicit(&p->waker_cpu, memory_order_relaxed);
            return w >= 0 && w == sched_getcpu();
        }
    }
}

void rt_unpark(rt_parker *p)
{
    /* release: pairs with park's acquire. */
    if (atomic_exchange_explicit(&p->state, RT_PARK_NOTIFIED, memory_order_release) == RT_PARK_PARKED) {
        /* relaxed: a hint read by the sleeper after the futex returns; only
         * paid on a real sleep, where the system call dwarfs it. */
        atomic_store_explicit(&p->waker_cpu, sched_getcpu(), memory_order_relaxed);
        futex_wake(&p->state);
    }
}

#else /* portable fallback */

void rt_parker_init(rt_parker *p)
{
    atomic_init(&p->state, RT_PARK_EMPTY);
    atomic_init(&p->waker_cpu, -1);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
}

void rt_parker_fini(rt_parker *p)
{
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

int rt_park(rt_parker *p)
{
    /* The mutex orders everything here; the atomics are for the fast path. */
    if (atomic_fetch_sub_explicit(&p->state, 1, memory_order_acquire) == RT_PARK_NOTIFIED)
        return 0;
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->state, memory_order_acquire) == RT_PARK_PARKED)
        pthread_cond_wait(&p->cv, &p->mu);
    atomic_store_explicit(&p->state, RT_PARK_EMPTY, memory_order_relaxed);
    pthread_mutex_unlock(&p->mu);
    return 0;   /* no portable way to know where we run */
}

void rt_unpark(rt_parker *p)
{
    if (atomic_exchange_explicit(&p->state, RT_PARK_NOTIFIED, memory_order_release) == RT_PARK_PARKED) {
        /* Taking the mutex closes the window between the sleeper's state
         * check and its cond_wait. */
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}
#endif
