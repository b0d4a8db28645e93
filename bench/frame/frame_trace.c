/*
 * frame_trace.c - where a frame of the benchmark graph spends its time.
 *
 * Runs the dagc-generated bench_frame graph (1 us bodies, caller + workers)
 * for many frames with bodies that stamp when they start and end and on
 * which thread, then prints:
 *   - serial calls and libdagrt side by side: mean, p50, p99 per frame, and
 *     the frames over 1.5x the median (the VM's stalls hit both: compare
 *     their cost per frame before blaming the runtime for a mean);
 *   - per node, over the last frames: median start and end (us from the
 *     frame's start, i.e. from the call of bench_frame_run) and how often
 *     each thread ran it: the plan, the gaps in it, and who waits for whom.
 * A stamp is a cycle counter read where there is one (x86: rdtsc, scaled
 * by a calibration against CLOCK_MONOTONIC), so it costs ~10 ns; it is
 * not serializing, so a body that follows a cache miss may look a little
 * longer than it is. Diagnostic output only, never asserted.
 *
 * usage: frame_trace [--frames N] [--workers W]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "bench_frame.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t stamp(void) { return __rdtsc(); }
#else
static inline uint64_t stamp(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif

#define KEEP 2000   /* frames whose per-node stamps are kept (the last ones) */

static double ns_per_stamp = 1.0;
static _Thread_local int tl_thread = 1;   /* 0: the caller; 1: any other */
static struct {
    uint64_t t0, t1;
    int thread;
} node_now[BENCH_NODES];

#define X(name, idx)                                 \
    void bench_frame_##name(struct bench_ctx *c)     \
    {                                                \
        node_now[idx].t0 = stamp();                  \
        bench_body(c, idx);                          \
        node_now[idx].t1 = stamp();                  \
        node_now[idx].thread = tl_thread;            \
    }
BENCH_FRAME_NODES(X)
#undef X

static double mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void calibrate_stamps(void)
{
    double n0 = mono_ns();
    uint64_t s0 = stamp();
    while (mono_ns() - n0 < 5e6)
        ;
    double n1 = mono_ns();
    uint64_t s1 = stamp();
    if (s1 > s0)
        ns_per_stamp = (n1 - n0) / (double)(s1 - s0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean, p50, p99 of t[0..n) (sorts a copy), and the frames over 1.5x the
 * median with their excess over it, per frame. */
static void summary(const char *who, const double *t, int n, double serial_mean)
{
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return;
    memcpy(s, t, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double mean = 0, p50 = s[n / 2], excess = 0;
    int tails = 0;
    for (int i = 0; i < n; i++) {
        mean += s[i];
        if (s[i] > 1.5 * p50) {
            tails++;
            excess += s[i] - p50;
        }
    }
    mean /= n;
    printf("%-16s mean %7.2f  p50 %7.2f  p99 %7.2f us", who, mean / 1e3, p50 / 1e3,
           s[n * 99 / 100] / 1e3);
    printf("  | frames > 1.5x p50: %5.2f%%, costing %.2f us per frame", 100.0 * tails / n,
           excess / n / 1e3);
    if (serial_mean > 0)
        printf("  | x serial: mean %.3f", mean / serial_mean);
    printf("\n");
    free(s);
}

int main(int argc, char **argv)
{
    int frames = 20000, workers = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--frames N] [--workers W]\n", argv[0]);
            return 2;
        }
    }
    if (frames < KEEP)
        frames = KEEP;
    tl_thread = 0;
    calibrate_stamps();
    static struct bench_ctx ctx;
    ctx.iters = bench_calibrate(1000.0);

    double *ft = malloc(sizeof *ft * (size_t)frames);
    double *st = malloc(sizeof *st * (size_t)BENCH_NODES * KEEP);
    double *en = malloc(sizeof *en * (size_t)BENCH_NODES * KEEP);
    int (*ran)[2] = calloc(BENCH_NODES, sizeof *ran);
    if (!ft || !st || !en || !ran)
        return 1;

    /* Serial calls in topological order, timed per frame like the graph. */
    for (int f = 0; f < frames; f++) {
        uint64_t t0 = stamp();
        for (int i = 0; i < BENCH_NODES; i++)
            bench_body(&ctx, i);
        ft[f] = (double)(stamp() - t0) * ns_per_stamp;
    }
    double serial_mean = 0;
    for (int f = 0; f < frames; f++)
        serial_mean += ft[f];
    serial_mean /= frames;
    printf("frame trace: %d frames, 32 nodes, 1 us bodies (%llu LCG steps), caller + %d worker%s\n",
           frames, (unsigned long long)ctx.iters, workers, workers == 1 ? "" : "s");
    summary("serial calls", ft, frames, 0);

    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        fprintf(stderr, "dagrt_create failed\n");
        return 1;
    }
    for (int f = 0; f < 200; f++)   /* warm-up: the plan, the helper */
        bench_frame_run(rt, &ctx);
    for (int f = 0; f < frames; f++) {
        uint64_t t0 = stamp();
        int r = bench_frame_run(rt, &ctx);
        uint64_t t1 = stamp();
        if (r != 0) {
            fprintf(stderr, "bench_frame_run: %s\n", dagrt_strerror(r));
            return 1;
        }
        ft[f] = (double)(t1 - t0) * ns_per_stamp;
        int k = f - (frames - KEEP);
        if (k >= 0)
            for (int i = 0; i < BENCH_NODES; i++) {
                st[i * KEEP + k] = (double)(int64_t)(node_now[i].t0 - t0) * ns_per_stamp;
                en[i * KEEP + k] = (double)(int64_t)(node_now[i].t1 - t0) * ns_per_stamp;
                ran[i][node_now[i].thread]++;
            }
    }
    dagrt_destroy(rt);
    summary("dagc + libdagrt", ft, frames, serial_mean);

    printf("\nper node, last %d frames: median start / end (us from the frame's start), "
           "runs on the caller / elsewhere\n", KEEP);
    for (int i = 0; i < BENCH_NODES; i++) {
        qsort(st + i * KEEP, KEEP, sizeof *st, cmp_double);
        qsort(en + i * KEEP, KEEP, sizeof *en, cmp_double);
        printf("  %-8s %7.2f %7.2f   %5d %5d\n", bench_names[i], st[i * KEEP + KEEP / 2] / 1e3,
               en[i * KEEP + KEEP / 2] / 1e3, ran[i][0], ran[i][1]);
    }
    free(ft);
    free(st);
    free(en);
    free(ran);
    return 0;
}
