/*
 * pingpong.c - the cache-line round trip (bench_pingpong.h): two threads
 * pass one line back and forth, one writes 1, the other answers 0; 2 tells
 * the answering thread to stop. A run also stops after cap_ms, since two
 * spinning threads that share one core (a loaded machine) make one trip
 * per time slice.
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
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *answer(void *arg)
{
    (void)arg;
    for (;;) {
        int v;
        /* acquire/release: a plain hand-off; the cost measured is the
         * line's movement, which any ordering pays. */
        while ((v = atomic_load_explicit(&line.v, memory_order_acquire)) == 0)
            ;
        if (v == 2)
            return NULL;
        atomic_store_explicit(&line.v, 0, memory_order_release);
    }
}

static double one_run(int trips, double cap_ns)
{
    atomic_store(&line.v, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, answer, NULL) != 0)
        return -1;
    double a = now_ns(), b = a;
    int i = 0;
    while (i < trips) {
        atomic_store_explicit(&line.v, 1, memory_order_release);
        while (atomic_load_explicit(&line.v, memory_order_acquire) != 0)
            ;
        if (++i % 1024 == 0 && (b = now_ns()) - a > cap_ns)
            break;
    }
    b = now_ns();
    atomic_store_explicit(&line.v, 2, memory_order_release);
    pthread_join(t, NULL);
    return (b - a) / i;
}

static int cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

double bench_pingpong_ns(int trips, int runs, double cap_ms, double *min, double *max)
{
    double r[15];
    if (runs < 1 || runs > 15)
        runs = 5;
    if (trips < 1)
        trips = 1;
    for (int i = 0; i < runs; i++)
        if ((r[i] = one_run(trips, cap_ms * 1e6)) < 0)
            return -1;
    qsort(r, (size_t)runs, sizeof r[0], cmp);
    *min = r[0];
    *max = r[runs - 1];
    return r[runs / 2];
}
