/*
 * bench_wait.h - the one wait loop of every benchmark contender (bench/
 * runtime, bench/frame): a thread that waits for another's flag polls it
 * with the CPU's pause hint for BENCH_WAIT_SPIN_NS, then yields the CPU
 * between polls. A waiter that only spins keeps a thread woken onto its
 * CPU from running until its time slice ends (milliseconds), and one that
 * yields at once pays a system call per poll; either would favour one
 * runtime's thread placement over another's. C and C++ alike.
 */
#ifndef BENCH_WAIT_H
#define BENCH_WAIT_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

#define BENCH_WAIT_SPIN_NS 20000u

typedef struct bench_waiter {
    unsigned polls;
    uint64_t since;
} bench_waiter;

static inline uint64_t bench_wait_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One unsuccessful poll. The first 64 read no clock, so a wait that ends
 * at once costs what a bare spin costs. */
static inline void bench_wait_step(bench_waiter *w)
{
    if (w->polls < 64 || w->since == 0 ||
        bench_wait_clock_ns() - w->since < BENCH_WAIT_SPIN_NS) {
        if (++w->polls == 64)
            w->since = bench_wait_clock_ns();
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
        return;
    }
    sched_yield();
}

/* Waits until cond (an expression re-evaluated at each poll) holds. */
#define BENCH_WAIT_UNTIL(cond)                     \
    do {                                           \
        bench_waiter bench_w_ = {0, 0};            \
        while (!(cond))                            \
            bench_wait_step(&bench_w_);            \
    } while (0)

/* What the output says about the wait loop and the build. */
#define BENCH_WAIT_DESC "spin 20 us, then sched_yield between polls"

#endif
