/*
 * core/park.h - a one-thread parker with a wake-up token (internal).
 *
 * rt_unpark leaves a token; rt_park consumes it, sleeping only while there
 * is none. An unpark that comes before the park is therefore never lost:
 * the park returns at once. Spurious returns are allowed (callers loop).
 * The sleep is the system layer's wait on the 32-bit `state` (a futex on
 * Linux, WaitOnAddress on Windows).
 *
 * Why rt_park reports co-location: where idle CPUs look busy to the kernel
 * (some virtual machines), a wake can put the sleeper on the waker's own
 * CPU, and a woken worker that then polls only keeps its waker off it
 * (docs/benchmarks-log.md has the measurements).
 */
#ifndef DAGRT_PARK_H
#define DAGRT_PARK_H

#include <stdatomic.h>
#include <stdint.h>

#define RT_PARK_EMPTY    0u
#define RT_PARK_NOTIFIED 1u
#define RT_PARK_PARKED   UINT32_MAX   /* EMPTY - 1: park's fetch_sub lands here */

typedef struct rt_parker {
    _Atomic uint32_t state;
    _Atomic int waker_cpu;   /* hint: the CPU the last wake came from */
} rt_parker;

void rt_parker_init(rt_parker *p);
void rt_parker_fini(rt_parker *p);
/* Returns 1 when it slept and now runs on the CPU its waker ran on (the
 * kernel placed us beside the thread that woke us), else 0. A hint for the
 * caller's spinning policy, never for correctness. */
int rt_park(rt_parker *p);
/* rt_park with a deadline on rt_now_ns's clock (UINT64_MAX: none): also
 * returns (0) once it has passed, with no token consumed. The timers'
 * keeper sleeps so (wait/wait.h). */
int rt_park_until(rt_parker *p, uint64_t deadline_ns);
void rt_unpark(rt_parker *p);

#endif
