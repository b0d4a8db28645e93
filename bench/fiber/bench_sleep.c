/*
 * bench_sleep.c - how late a sleep ends: a fiber task's dagrt_sleep(D) on
 * the runtime's timers (2 workers) against nanosleep(D) on a plain thread,
 * interleaved one after the other in one process, for D = 100 us, 1 ms and
 * 2 ms; then 64 fibers sleeping D = 1 ms at once. Prints the median and
 * 99th percentile of (measured length - D) and the median's ratio
 * fiber / nanosleep.
 * usage: bench_sleep [samples per D]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dagrt.h"

enum { NMAX = 10000, NFIB = 64 };

static dagrt *rt;
static uint64_t dur;
static uint64_t fib[NMAX], thr[NMAX];

typedef struct one { uint64_t late; } one;

static void sleeper(void *arg)
{
    one *o = arg;
    uint64_t t0 = dagrt_now_ns();
    dagrt_sleep(rt, dur, NULL);
    o->late = dagrt_now_ns() - t0 - dur;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 400;
    if (n < 10 || n > NMAX) {
        fprintf(stderr, "usage: bench_sleep [samples per D, 10..%d]\n", NMAX);
        return 2;
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    const uint64_t ds[] = { 100000, 1000000, 2000000 };
    for (int d = 0; d < 3; d++) {
        dur = ds[d];
        for (int i = 0; i < n; i++) {
            one o;
            dagrt_group g;
            dagrt_group_init(&g);
            dagrt_spawn_ex(rt, &g, sleeper, &o, DAGRT_SPAWN_FIBER);
            dagrt_group_wait(rt, &g);
            fib[i] = o.late;
            struct timespec ts = { 0, (long)dur };
            uint64_t t0 = dagrt_now_ns();
            nanosleep(&ts, NULL);
            thr[i] = dagrt_now_ns() - t0 - dur;
        }
        qsort(fib, (size_t)n, sizeof *fib, cmp);
        qsort(thr, (size_t)n, sizeof *thr, cmp);
        printf("D %5llu us: late by, median fiber %7.1f us, nanosleep %7.1f us (%.2fx); p99 %8.1f / %8.1f us\n",
               (unsigned long long)(dur / 1000), fib[n / 2] / 1e3, thr[n / 2] / 1e3,
               thr[n / 2] ? (double)fib[n / 2] / (double)thr[n / 2] : 0.0,
               fib[n * 99 / 100] / 1e3, thr[n * 99 / 100] / 1e3);
    }
    /* 64 at once: one timer heap, one keeper. */
    dur = 1000000;
    static one os[NFIB];
    int k = 0;
    for (int r = 0; r < n / 10 && k + NFIB <= NMAX; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < NFIB; i++)
            dagrt_spawn_ex(rt, &g, sleeper, &os[i], DAGRT_SPAWN_FIBER);
        dagrt_group_wait(rt, &g);
        for (int i = 0; i < NFIB; i++)
            fib[k++] = os[i].late;
    }
    qsort(fib, (size_t)k, sizeof *fib, cmp);
    printf("%d fibers sleeping 1 ms at once: late by, median %.1f us, p99 %.1f us (%d samples)\n", NFIB,
           fib[k / 2] / 1e3, fib[k * 99 / 100] / 1e3, k);
    dagrt_destroy(rt);
    return 0;
}
