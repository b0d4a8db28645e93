/*
 * park.h - a one-thread parker with a wake-up token (internal).
 *
 * rt_unpark leaves a token; rt_park consumes it, sleeping only while there
 * is none. An unpark that comes before the park is therefore never lost:
 * the park returns at once. Spurious returns are allowed (callers loop).
 * Linux: a futex on `state`; elsewhere a mutex and condition variable.
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
#if !defined(__linux__)
    pthread_mutex_t mu;
    pthread_cond_t cv;
#endif
} rt_parker;

void rt_parker_init(rt_parker *p);
void rt_parker_fini(rt_parker *p);
void rt_park(rt_parker *p);
void rt_unpark(rt_parker *p);

#endif
