/*
 * pingpong.c - the cache-line round trip (bench_pingpong.h): two threads
 * pass one line back and forth, one writes 1, the other answers 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "bench_pingpong.h"

/* 128 bytes of its own: x86 cores move lines in aligned pairs. */
static struct {
    _Alignas(128) _Atomic int v;
} line;
static int n_trips;

static void *answer(void *arg)
{
    (void)arg;
    for (int i = 0; i < n_trips; i++) {
        /* acquire/release: a plain hand-off; the cost measured is the
         * line's movement, which any ordering pays. */
        while (atomic_load_explicit(&line.v, memory_order_acquire) != 1)
            ;
        atomic_store_explicit(&line.v, 0, memory_order_release);
    }
    return NULL;
}

static double one_run(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0)
        return -1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n_trips; i++) {
        atomic_store_explicit(&line.v, 1, memory_order_release);
        while (atomic_load_explicit(&line.v, memory_order_acquire) != 0)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n_trips;
}

static int cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

double bench_pingpong_ns(int trips, int runs, double *min, double *max)
{
    double r[15];
    if (runs < 1 || runs > 15)
        runs = 5;
    n_trips = trips;
    for (int i = 0; i < runs; i++)
        if ((r[i] = one_run()) < 0)
            return -1;
    qsort(r, (size_t)runs, sizeof r[0], cmp);
    *min = r[0];
    *max = r[runs - 1];
    return r[runs / 2];
}
