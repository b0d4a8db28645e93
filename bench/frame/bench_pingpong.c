/*
 * bench_pingpong.c - what one cache line's trip between two cores costs on
 * this machine, to read the frame benchmark's figures by: two threads pass
 * one line back and forth (one writes 1, the other answers 0) and the
 * round trip is printed in ns, median of 5 runs of 200,000 trips. The
 * executor's cross-core costs (runtime/exec.c) are multiples of it.
 *
 *   bench_pingpong
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 200000

static _Alignas(64) _Atomic int line;

static void *answer(void *arg)
{
    (void)arg;
    for (int i = 0; i < TRIPS; i++) {
        /* acquire/release: a plain hand-off; the cost measured is the
         * line's movement, which any ordering pays. */
        while (atomic_load_explicit(&line, memory_order_acquire) != 1)
            ;
        atomic_store_explicit(&line, 0, memory_order_release);
    }
    return NULL;
}

static double run(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0)
        exit(1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < TRIPS; i++) {
        atomic_store_explicit(&line, 1, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != 0)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / TRIPS;
}

static int cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

int main(void)
{
    double r[5];
    for (int i = 0; i < 5; i++)
        r[i] = run();
    qsort(r, 5, sizeof r[0], cmp);
    printf("cache-line round trip between two threads: %.0f ns (median of 5; min %.0f, max %.0f)\n",
           r[2], r[0], r[4]);
    return 0;
}
