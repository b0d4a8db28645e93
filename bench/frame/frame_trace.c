/*
 * frame_trace.c - where a frame of the benchmark graph spends its time.
 *
 * Runs the 32-node benchmark graph (1 us bodies) for many frames three ways,
 * serial calls, the dagc-generated code on libdagrt and the no-runtime floor
 * (bench_floor.c), with bodies that stamp when they start and end and on
 * which thread, then prints:
 *   - per way: mean, p50, p99 per frame, and the frames over 1.5x the
 *     median with their cost (the VM's stalls hit every way: compare their
 *     cost per frame before blaming the runtime for a mean);
 *   - per node, over the last frames, for libdagrt and for the floor side by
 *     side: median start and end (us from the frame's start, i.e. from the
 *     call that runs it) and how often the caller ran it: the plan, its
 *     gaps, who waits for whom, and what the runtime adds to the floor.
 *
 * The tracer must not add the cross-core traffic it is there to show: each
 * thread appends its stamps to a log of its own (one ring per thread, read
 * only after the run), and the frame a stamp belongs to is found afterwards
 * from the caller's own record of when each frame started. A stamp is a
 * cycle counter read where there is one (x86: lfence + rdtsc, scaled by a
 * calibration against CLOCK_MONOTONIC); the lfence makes it wait for the
 * instructions before it, so a claim's cache miss is not counted in the
 * body that follows it. Diagnostic output only, never asserted.
 *
 * usage: frame_trace [--frames N] [--workers W]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "bench_floor.h"
#include "bench_frame.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t stamp(void)
{
    _mm_lfence();
    return __rdtsc();
}
#else
static inline uint64_t stamp(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif

#define KEEP 2000     /* frames whose per-node stamps are analysed (the last ones) */
#define MAXLOGS 64    /* threads that may run nodes */
#define RING (KEEP * BENCH_NODES)   /* records per thread: all of KEEP frames */

typedef struct rec {
    uint64_t t0, t1;
    int idx;
} rec;

/* One thread's ring of stamps. Only its thread writes it while frames run. */
typedef struct tlog {
    rec *r;
    long n;   /* records appended so far (the ring keeps the last RING) */
} tlog;

static tlog logs[MAXLOGS];
static _Atomic int nlogs;
static _Thread_local int tl_log = -1;
static double ns_per_stamp = 1.0;

/* The calling thread's log (claims one on its first node). */
static tlog *my_log(void)
{
    if (tl_log < 0) {
        /* relaxed: the slot number only has to be unique. */
        int k = atomic_fetch_add_explicit(&nlogs, 1, memory_order_relaxed);
        if (k >= MAXLOGS || !logs[k].r) {
            fprintf(stderr, "frame_trace: more than %d threads ran nodes\n", MAXLOGS);
            exit(1);
        }
        tl_log = k;
    }
    return &logs[tl_log];
}

static void traced_body(struct bench_ctx *c, int idx)
{
    tlog *l = my_log();
    rec *x = &l->r[l->n % RING];
    x->t0 = stamp();
    bench_body(c, idx);
    x->t1 = stamp();
    x->idx = idx;
    l->n++;
}

#define X(name, idx) \
    void bench_frame_##name(struct bench_ctx *c) { traced_body(c, idx); }
BENCH_FRAME_NODES(X)
#undef X

static void calibrate_stamps(void)
{
    double n0 = bench_now_ns();
    uint64_t s0 = stamp();
    while (bench_now_ns() - n0 < 5e6)
        ;
    double n1 = bench_now_ns();
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
 * median with their excess over it, per frame. Returns the mean. */
static double summary(const char *who, const double *t, int n, double serial_mean)
{
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return 0;
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
    printf("%-18s mean %7.2f  p50 %7.2f  p99 %7.2f us", who, mean / 1e3, p50 / 1e3,
           s[n * 99 / 100] / 1e3);
    printf("  | frames > 1.5x p50: %5.2f%%, costing %.2f us per frame", 100.0 * tails / n,
           excess / n / 1e3);
    if (serial_mean > 0)
        printf("  | x serial: mean %.3f", mean / serial_mean);
    printf("\n");
    free(s);
    return mean;
}

/* Per-node medians of one way's last KEEP frames. */
typedef struct nodes_med {
    double st[BENCH_NODES], en[BENCH_NODES];
    int on_caller[BENCH_NODES], runs[BENCH_NODES];
} nodes_med;

static double *st_buf, *en_buf;   /* BENCH_NODES x KEEP each */

/* Sorts the logs' records of the frames starting at fs[0..KEEP) (stamps;
 * the frame after the last starts at fend) into per-node medians, then
 * empties the logs for the next way. */
static void analyse(const uint64_t *fs, uint64_t fend, nodes_med *m)
{
    int cnt[BENCH_NODES] = {0};
    memset(m, 0, sizeof *m);
    int n = atomic_load(&nlogs);
    for (int k = 0; k < n; k++) {
        tlog *l = &logs[k];
        long first = l->n > RING ? l->n - RING : 0;
        for (long j = first; j < l->n; j++) {
            const rec *x = &l->r[j % RING];
            if (x->t0 < fs[0] || x->t0 >= fend)
                continue;
            /* The frame whose start is the last one at or before t0. */
            int lo = 0, hi = KEEP - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (fs[mid] <= x->t0)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            int i = x->idx;
            if (cnt[i] < KEEP) {
                st_buf[i * KEEP + cnt[i]] = (double)(x->t0 - fs[lo]) * ns_per_stamp;
                en_buf[i * KEEP + cnt[i]] = (double)(x->t1 - fs[lo]) * ns_per_stamp;
                cnt[i]++;
            }
            m->runs[i]++;
            m->on_caller[i] += k == 0;
        }
        l->n = 0;
    }
    for (int i = 0; i < BENCH_NODES; i++) {
        if (cnt[i] == 0)
            continue;
        qsort(st_buf + i * KEEP, (size_t)cnt[i], sizeof *st_buf, cmp_double);
        qsort(en_buf + i * KEEP, (size_t)cnt[i], sizeof *en_buf, cmp_double);
        m->st[i] = st_buf[i * KEEP + cnt[i] / 2] / 1e3;
        m->en[i] = en_buf[i * KEEP + cnt[i] / 2] / 1e3;
    }
}

typedef void (*frames_fn)(struct bench_ctx *c, long n);
static dagrt *the_rt;
static int run_errors;

static void dagrt_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        if (bench_frame_run(the_rt, c) != 0)
            run_errors++;
    }
}

/* Times frames one by one into ft[], keeping the start stamps of the last
 * KEEP in fs[] and the end of the last in *fend. */
static void timed_frames(frames_fn fn, struct bench_ctx *c, int frames, double *ft, uint64_t *fs,
                         uint64_t *fend)
{
    fn(c, 200);   /* warm-up: a plan, a helper, caches */
    int n = atomic_load(&nlogs);
    for (int k = 0; k < n; k++)
        logs[k].n = 0;
    for (int f = 0; f < frames; f++) {
        uint64_t t0 = stamp();
        fn(c, 1);
        uint64_t t1 = stamp();
        ft[f] = (double)(t1 - t0) * ns_per_stamp;
        int k = f - (frames - KEEP);
        if (k >= 0)
            fs[k] = t0;
        *fend = t1;
    }
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
    if (workers < 1 || workers > MAXLOGS - 2) {
        fprintf(stderr, "frame_trace: --workers must be 1..%d\n", MAXLOGS - 2);
        return 2;
    }
    /* Logs for the caller, the workers and the floor's helper. */
    for (int k = 0; k < workers + 2; k++)
        if (!(logs[k].r = malloc(sizeof(rec) * RING)))
            return 1;
    my_log();   /* the caller's log is logs[0] */
    calibrate_stamps();
    static struct bench_ctx ctx;
    ctx.iters = bench_calibrate(1000.0);

    double *ft = malloc(sizeof *ft * (size_t)frames);
    uint64_t *fs = malloc(sizeof *fs * KEEP);
    st_buf = malloc(sizeof *st_buf * (size_t)BENCH_NODES * KEEP);
    en_buf = malloc(sizeof *en_buf * (size_t)BENCH_NODES * KEEP);
    if (!ft || !fs || !st_buf || !en_buf)
        return 1;
    uint64_t fend = 0;

    /* Serial calls in topological order, timed per frame like the others. */
    timed_frames(bench_serial_frames, &ctx, frames, ft, fs, &fend);
    printf("frame trace: %d frames, 32 nodes, 1 us bodies (%llu LCG steps), caller + %d worker%s\n",
           frames, (unsigned long long)ctx.iters, workers, workers == 1 ? "" : "s");
    double serial_mean = summary("serial calls", ft, frames, 0);

    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    the_rt = dagrt_create(&cfg);
    if (!the_rt) {
        fprintf(stderr, "dagrt_create failed\n");
        return 1;
    }
    timed_frames(dagrt_frames, &ctx, frames, ft, fs, &fend);
    dagrt_destroy(the_rt);
    if (run_errors) {
        fprintf(stderr, "bench_frame_run failed %d times\n", run_errors);
        return 1;
    }
    summary("dagc + libdagrt", ft, frames, serial_mean);
    static nodes_med rt_med, fl_med;
    analyse(fs, fend, &rt_med);

    if (bench_floor_setup(&ctx, traced_body) != 0) {
        fprintf(stderr, "frame_trace: cannot start the floor's pthread\n");
        return 1;
    }
    timed_frames(bench_floor_frames, &ctx, frames, ft, fs, &fend);
    bench_floor_teardown();
    summary("no runtime (floor)", ft, frames, serial_mean);
    analyse(fs, fend, &fl_med);

    printf("\nper node, last %d frames: median start / end (us from the frame's start); "
           "frames in which the caller ran it\n", KEEP);
    printf("  %-8s %-26s %s\n", "", "dagc + libdagrt", "no runtime (floor)");
    for (int i = 0; i < BENCH_NODES; i++)
        printf("  %-8s %7.2f %7.2f %5d/%-5d   %7.2f %7.2f %5d/%d\n", bench_names[i],
               rt_med.st[i], rt_med.en[i], rt_med.on_caller[i], rt_med.runs[i], fl_med.st[i],
               fl_med.en[i], fl_med.on_caller[i], fl_med.runs[i]);
    free(ft);
    free(fs);
    free(st_buf);
    free(en_buf);
    return 0;
}
