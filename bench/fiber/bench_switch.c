/*
 * bench_switch.c - fiber switch cost, side by side in one run:
 *   rt_arch_switch  the raw backend switch (asm, or ucontext fallback)
 *   rt_fiber_switch the runtime's switch (+ sanitizer hooks, none here)
 *   swapcontext        glibc's ucontext switch (a sigprocmask syscall each)
 * A round trip is two switches (there and back); the table prints ns per
 * switch, median and best of the runs, and the ratio to swapcontext.
 * usage: bench_switch [round_trips_per_run] [runs]
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "fiber/fiber.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long N;

/* raw ctx */
static rt_arch_ctx raw_main;
static rt_fiber raw_f;
static void raw_entry(void *arg)
{
    (void)arg;
    for (;;) rt_arch_switch(&raw_f.ctx, &raw_main);
}
static double run_raw(void)
{
    double t0 = now_ns();
    for (long i = 0; i < N; i++) rt_arch_switch(&raw_main, &raw_f.ctx);
    return (now_ns() - t0) / (2.0 * (double)N);
}

/* runtime switch */
static rt_fiber fb_main, fb_f;
static void fb_entry(void *arg)
{
    (void)arg;
    rt_fiber_started(&fb_f);
    for (;;) rt_fiber_switch(&fb_f, &fb_main);
}
static double run_fb(void)
{
    double t0 = now_ns();
    for (long i = 0; i < N; i++) rt_fiber_switch(&fb_main, &fb_f);
    return (now_ns() - t0) / (2.0 * (double)N);
}

/* swapcontext */
static ucontext_t uc_main, uc_f;
static void uc_entry(void)
{
    for (;;) swapcontext(&uc_f, &uc_main);
}
static double run_uc(void)
{
    double t0 = now_ns();
    for (long i = 0; i < N; i++) swapcontext(&uc_main, &uc_f);
    return (now_ns() - t0) / (2.0 * (double)N);
}

int main(int argc, char **argv)
{
    N = argc > 1 ? atol(argv[1]) : 2000000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (N < 1 || runs < 1 || runs > 64) { fprintf(stderr, "bad arguments\n"); return 2; }

    if (rt_fiber_create(&raw_f, 0, raw_entry, NULL)) return 1;
    rt_fiber_init_thread(&fb_main);
    if (rt_fiber_create(&fb_f, 0, fb_entry, NULL)) return 1;
    static char uc_stack[256 * 1024];
    getcontext(&uc_f);
    uc_f.uc_stack.ss_sp = uc_stack;
    uc_f.uc_stack.ss_size = sizeof uc_stack;
    uc_f.uc_link = NULL;
    makecontext(&uc_f, uc_entry, 0);

    static const char *names[3] = { "rt_arch_switch", "rt_fiber_switch", "swapcontext" };
    double (*fns[3])(void) = { run_raw, run_fb, run_uc };
    double t[3][64];
    long n_all = N;
    N = n_all / 10 + 1;                      /* warm-up */
    for (int k = 0; k < 3; k++) fns[k]();
    N = n_all;
    for (int r = 0; r < runs; r++)           /* interleaved: same noise for all */
        for (int k = 0; k < 3; k++) t[k][r] = fns[k]();
    double med[3], best[3];
    for (int k = 0; k < 3; k++) {
        qsort(t[k], (size_t)runs, sizeof(double), cmp_d);
        med[k] = t[k][runs / 2];
        best[k] = t[k][0];
    }
    printf("fiber switch, backend: %s; %ld round trips x %d runs\n",
           rt_arch_backend, N, runs);
    printf("%-22s %12s %12s %16s\n", "switch", "median ns", "best ns", "swapcontext/this");
    for (int k = 0; k < 3; k++)
        printf("%-22s %12.2f %12.2f %16.1f\n", names[k], med[k], best[k], med[2] / med[k]);
    rt_fiber_destroy(&raw_f);
    rt_fiber_destroy(&fb_f);
    return 0;
}
