/*
 * stall_probe.c - the machine's own stalls, without any runtime: one thread
 * per CPU reads the clock in a loop, and every gap between two reads over
 * STALL_NS is time the thread lost (a timer tick, an interrupt, the
 * hypervisor, another thread). It prints, per CPU, how often and how long,
 * and, for frame windows of the lengths bench_frame's rows have, the share
 * of windows that hold a stall on one CPU and on either CPU: where that
 * share is over 1%, the p99 of such frames is a stalled frame whatever
 * runs them (bench/frame/README.md, "single frames").
 *
 *   stall_probe [--secs S] [--cpus N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STALL_NS 2000.0
#define MAX_GAPS 200000
#define MAX_CPUS 16

typedef struct probe {
    int cpu;
    double secs, t0;
    long n;
    double *beg, *end;   /* each gap: the read before it, the read after */
} probe;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void *spin(void *arg)
{
    probe *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        fprintf(stderr, "stall_probe: cannot pin to CPU %d, probing unpinned\n", p->cpu);
    double last = now_ns(), stop = p->t0 + p->secs * 1e9;
    while (last < p->t0)   /* every probe starts at the same time */
        last = now_ns();
    while (last < stop) {
        double t = now_ns();
        if (t - last > STALL_NS && p->n < MAX_GAPS && last >= p->t0) {
            p->beg[p->n] = last;
            p->end[p->n] = t;
            p->n++;
        }
        last = t;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct span {
    double a, b;
} span;

static int cmp_span(const void *x, const void *y)
{
    double a = ((const span *)x)->a, b = ((const span *)y)->a;
    return (a > b) - (a < b);
}

/* The union's measure of n spans (sorted here). */
static double measure(span *s, long n)
{
    qsort(s, (size_t)n, sizeof s[0], cmp_span);
    double covered = 0, a = 0, b = -1;
    for (long j = 0; j < n; j++) {
        if (s[j].a > b) {
            if (b > a)
                covered += b - a;
            a = s[j].a;
            b = s[j].b;
        } else if (s[j].b > b) {
            b = s[j].b;
        }
    }
    return b > a ? covered + (b - a) : covered;
}

/* The share of frames of length w that a stall of the given probes' CPUs
 * reaches: of the start times t at which those CPUs all run (a frame is
 * started by a running thread), the measure of those whose window [t, t +
 * w] meets a stall's start, the union of [begin - w, begin], over the run
 * less the stalls. */
static double hit_share(probe *ps, int np, double w, span *s)
{
    long n = 0;
    const double lo = ps[0].t0, hi = ps[0].t0 + ps[0].secs * 1e9 - w;
    for (int k = 0; k < np; k++)
        for (long j = 0; j < ps[k].n; j++)
            if (ps[k].end[j] > lo && ps[k].beg[j] < hi)
                s[n++] = (span){ps[k].beg[j] < lo ? lo : ps[k].beg[j], ps[k].end[j] > hi ? hi : ps[k].end[j]};
    double stalled = measure(s, n);
    n = 0;
    for (int k = 0; k < np; k++)
        for (long j = 0; j < ps[k].n; j++) {
            double a = ps[k].beg[j] - w, b = ps[k].beg[j];
            a = a < lo ? lo : a;
            b = b > hi ? hi : b;
            if (b > a)
                s[n++] = (span){a, b};
        }
    return measure(s, n) / (hi - lo - stalled);
}

int main(int argc, char **argv)
{
    double secs = 2;
    int cpus = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--secs") == 0 && i + 1 < argc)
            secs = atof(argv[++i]);
        else if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc)
            cpus = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--secs S] [--cpus N]\n", argv[0]);
            return 2;
        }
    }
    if (secs <= 0 || secs > 60)
        secs = 2;
    if (cpus < 1 || cpus > MAX_CPUS)
        cpus = 2;
    static probe ps[MAX_CPUS];
    pthread_t th[MAX_CPUS];
    double t0 = now_ns() + 1e7;   /* every thread starts its loop by then */
    for (int k = 0; k < cpus; k++) {
        ps[k] = (probe){.cpu = k, .secs = secs, .t0 = t0};
        ps[k].beg = malloc(MAX_GAPS * sizeof(double));
        ps[k].end = malloc(MAX_GAPS * sizeof(double));
        if (!ps[k].beg || !ps[k].end || pthread_create(&th[k], NULL, spin, &ps[k]) != 0) {
            fprintf(stderr, "stall_probe: out of memory or threads\n");
            return 1;
        }
    }
    for (int k = 0; k < cpus; k++)
        pthread_join(th[k], NULL);
    printf("stalls over %.0f us of a thread spinning on the clock, %.1f s, one thread per CPU:\n",
           STALL_NS / 1e3, secs);
    long total = 0;
    for (int k = 0; k < cpus; k++) {
        probe *p = &ps[k];
        double lost = 0;
        double *len = malloc((size_t)(p->n ? p->n : 1) * sizeof(double));
        if (!len)
            return 1;
        for (long j = 0; j < p->n; j++) {
            len[j] = (p->end[j] - p->beg[j]) / 1e3;
            lost += len[j];
        }
        qsort(len, (size_t)p->n, sizeof len[0], cmp_double);
        if (p->n)
            printf("CPU %d: %ld stalls (%.0f/s), %.2f%% of the time; length p50 %.1f us, "
                   "p90 %.1f us, max %.1f us\n", p->cpu, p->n, (double)p->n / secs,
                   100.0 * lost / (secs * 1e6), len[p->n / 2], len[p->n * 9 / 10], len[p->n - 1]);
        else
            printf("CPU %d: no stalls\n", p->cpu);
        total += p->n;
        free(len);
    }
    span *s = malloc((size_t)(total ? total : 1) * sizeof(span));
    if (!s)
        return 1;
    printf("share of frame windows that hold a stall (over 1%%: their p99 is a stalled frame):\n");
    static const double windows[] = {17, 33, 50};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        printf("  %2.0f us window: %5.2f%% on CPU 0 alone, %5.2f%% on any of the %d CPUs\n",
               windows[w], 100.0 * hit_share(ps, 1, windows[w] * 1e3, s),
               100.0 * hit_share(ps, cpus, windows[w] * 1e3, s), cpus);
    free(s);
    return 0;
}
