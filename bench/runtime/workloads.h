/*
 * workloads.h - the runtime benchmark workloads, shared by every contender
 * (dagrt, OpenMP, oneTBB) so that each runs the identical item functions.
 * Each contender's binary prints lines
 *     RESULT <workload> <value> <unit>
 * and bench/runtime/bench.sh runs them side by side and prints the table.
 */
#ifndef BENCH_WORKLOADS_H
#define BENCH_WORKLOADS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_wait.h"

#ifndef BENCH_BUILD
#define BENCH_BUILD "unknown (not built by bench/meson.build)"
#endif

static inline uint64_t bw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole process (all threads). */
static inline uint64_t bw_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int bw_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static inline uint64_t bw_median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bw_cmp_u64);
    return v[n / 2];
}

/* Serial fib: the baseline the tasked versions are compared with, defined
 * once in serial.c (compiled as C for every contender, the C++ one too), so
 * every baseline runs the same machine code. */
long bw_fib_serial(int n);

/* The serial floor for fib: median ns of reps runs of bw_fib_serial(n)
 * after one warm-up run. Every contender calls it first thing in main,
 * before its runtime has started a thread, so no contender's idle threads
 * (libgomp's and oneTBB's spin for a while after each parallel region) share
 * the machine with its baseline. s: reps slots. */
static inline double bw_time_fib_serial(int n, uint64_t *s, int reps)
{
    for (int r = -1; r < reps; r++) {
        uint64_t t0 = bw_now_ns();
        volatile long x = bw_fib_serial(n);
        (void)x;
        if (r >= 0)
            s[r] = bw_now_ns() - t0;
    }
    return (double)bw_median(s, reps);
}

/* fib's rows: the ratio over the serial baseline and, beside it, the time
 * itself, so that contenders can also be compared without their baselines. */
static inline void bw_print_fib(const char *row, double ns, double serial_ns)
{
    printf("RESULT %s %.2f x_serial\n", row, ns / serial_ns);
    printf("RESULT %s_ms %.2f ms\n", row, ns / 1e6);
}

/* The first lines of every contender's output: how it was built and how
 * its threads wait (bench.sh prints them above the table). */
static inline void bw_print_info(void)
{
    printf("INFO build %s\n", BENCH_BUILD);
    printf("INFO wait %s (every contender's waits)\n", BENCH_WAIT_DESC);
}

/* Item functions for the parallel-for: "cheap" (about 0.5 ns) and "heavy"
 * (a dependent LCG chain of bw_heavy_rounds steps, calibrated to about
 * 6 ns). noinline on the outer loop keeps the plain loop and the
 * parallel-for body the same machine code. */
extern int bw_heavy_rounds;

static inline uint64_t bw_cheap(uint64_t i)
{
    uint64_t x = i * UINT64_C(0x9E3779B97F4A7C15);
    return x ^ (x >> 29);
}

static inline uint64_t bw_heavy(uint64_t i, int rounds)
{
    uint64_t x = i;
    for (int r = 0; r < rounds; r++)
        x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return x;
}

#if defined(__GNUC__)
#define BW_NOINLINE __attribute__((noinline))
#else
#define BW_NOINLINE
#endif

BW_NOINLINE void bw_range_cheap(uint64_t *out, size_t b, size_t e);
BW_NOINLINE void bw_range_heavy(uint64_t *out, size_t b, size_t e);

#define BW_DEFINE_RANGES \
    int bw_heavy_rounds = 16; \
    BW_NOINLINE void bw_range_cheap(uint64_t *out, size_t b, size_t e) \
    { for (size_t i = b; i < e; i++) out[i] = bw_cheap(i); } \
    BW_NOINLINE void bw_range_heavy(uint64_t *out, size_t b, size_t e) \
    { int r = bw_heavy_rounds; for (size_t i = b; i < e; i++) out[i] = bw_heavy(i, r); }

/* Calibrates bw_heavy_rounds so that one heavy item takes about 6 ns. */
static inline void bw_calibrate(uint64_t *buf, size_t n)
{
    for (int tries = 0; tries < 6; tries++) {
        uint64_t best = UINT64_MAX;
        for (int rep = 0; rep < 5; rep++) {
            uint64_t t0 = bw_now_ns();
            bw_range_heavy(buf, 0, n);
            uint64_t t = bw_now_ns() - t0;
            if (t < best)
                best = t;
        }
        double per = (double)best / (double)n;
        int r = (int)((double)bw_heavy_rounds * 6.0 / per + 0.5);
        if (r < 1)
            r = 1;
        if (r == bw_heavy_rounds)
            break;
        bw_heavy_rounds = r;
    }
}

/* Reps for a parallel-for size: enough calls for >= ~20 ms per sample. */
static inline int bw_pfor_calls(size_t n, double ns_per)
{
    double t = (double)n * ns_per;
    int k = (int)(20e6 / (t < 1 ? 1 : t));
    return k < 3 ? 3 : k;
}

static const size_t bw_pfor_sizes[] = {1000, 100000, 4000000};

/* A contender's parallel loops: `calls` times out[i] = f(i) over [0, n),
 * f the heavy (about 6 ns) or the cheap (about 0.5 ns) item function. */
typedef void (*bw_par_calls)(uint64_t *out, int heavy, size_t n, int calls, void *ctx);

/* The parallel-for table, the same for every contender: for each f and N,
 * reps samples of `calls` plain loops then `calls` parallel ones (par),
 * side by side in this process; one RESULT line each, the median plain
 * time over the median parallel time. reps <= 16. */
static inline void bw_pfor_table(int quick, int reps, bw_par_calls par, void *ctx)
{
    uint64_t *out = (uint64_t *)calloc(bw_pfor_sizes[2], sizeof *out);
    bw_calibrate(out, 100000);
    for (int heavy = 0; heavy < 2; heavy++) {
        for (int si = 0; si < 3; si++) {
            size_t n = bw_pfor_sizes[si];
            int calls = bw_pfor_calls(n, heavy ? 6.0 : 0.5);
            if (quick)
                calls = calls / 4 + 1;
            uint64_t sp[16], sl[16];
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = bw_now_ns();
                for (int c = 0; c < calls; c++)
                    (heavy ? bw_range_heavy : bw_range_cheap)(out, 0, n);
                sl[r] = bw_now_ns() - t0;
                t0 = bw_now_ns();
                par(out, heavy, n, calls, ctx);
                sp[r] = bw_now_ns() - t0;
            }
            double plain = (double)bw_median(sl, reps), pt = (double)bw_median(sp, reps);
            printf("RESULT pfor_%s_%zu %.2f x_plain (plain %.1f ns/item)\n",
                   heavy ? "6ns" : "0.5ns", n, plain / pt, plain / calls / (double)n);
        }
    }
    free(out);
}

static inline int bw_arg_quick(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--quick") == 0)
            return 1;
    return 0;
}

#endif
