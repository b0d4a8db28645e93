/*
 * park.h - a one-thread parker with a wake-up token (internal).
 *
 * rt_unpark leaves a token; rt_park consumes it, sleeping only while there
 * is none. An unpark that comes before the park is therefore never lost:
 * the park returns at once. Spurious returns are allowed (callers loop).
 * Linux: a futex on `state`; elsewhere a mutex and condition variable.
 *
 * Why rt_park reports co-location: on a VM whose idle vCPUs look busy to
 * the kernel (Firecracker here), a futex wake puts the sleeper on the
 * waker's own CPU. A woken worker that then spins while idle only keeps
 * its waker off the CPU: bench wake_park measured 61 us for a wake whose
 * task ran after 6 us, the rest being the worker's 50 us poll.
 */
#ifndef DAGRT_PARK_H
#define DAGRT_PARK_H

#include <stdatomic.h>
#include <stdint.h>
#if !defined(__linux__)
#include <pthread.h>
#endif

#define RT_PARK_EMPTY    0u
#define RT_PARK_NOTIFIED 1u
#define RT_PARK_PARKED   UINT32_MAX   /* EMPTY - 1: park's fetch_sub lands here */

typedef struct rt_parker {
    _Atomic uint32_t state;
    _Atomic int waker_cpu;   /* hint: the CPU the last futex wake came from */
#if !defined(__linux__)
    pthread_mutex_t mu;
    pthread_cond_t cv;
#endif
} rt_parker;

void rt_parker_init(rt_parker *p);
void rt_parker_fini(rt_parker *p);
/* Returns 1 when it slept and now runs on the CPU its waker ran on (the
 * kernel placed us beside the thread that woke us), else 0. A hint for the
 * caller's spinning policy, never for correctness. */
int rt_park(rt_parker *p);
void rt_unpark(rt_parker *p);

#endif
