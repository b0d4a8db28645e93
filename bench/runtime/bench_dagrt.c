/* bench_dagrt.c - the runtime workloads on libdagrt (see workloads.h).
 * 2 task-executing threads: the main thread + 1 worker. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dagrt.h"
#include "workloads.h"

BW_DEFINE_RANGES

static dagrt *g_rt;

/* ------------------------------------------------------- spawn tree */

static void tree_node(void *p)
{
    intptr_t d = (intptr_t)p;
    if (d == 0)
        return;
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(g_rt, &g, tree_node, (void *)(d - 1));
    dagrt_spawn(g_rt, &g, tree_node, (void *)(d - 1));
    dagrt_group_wait(g_rt, &g);
}

/* -------------------------------------------------------------- fib */

typedef struct fib_arg {
    int n;
    long r;
} fib_arg;

static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(g_rt, &g, fib_task, &x);
    dagrt_spawn(g_rt, &g, fib_task, &y);
    dagrt_group_wait(g_rt, &g);
    a->r = x.r + y.r;
}

/* The same with inline fork-join (dagrt_fork / dagrt_join_take):
 * every call is still a task that a thief may steal; the parent takes
 * back what nobody stole and runs it as a direct call. */
static long fibf(dagrt_worker *w, int n);

static void fibf_task(void *p)
{
    fib_arg *a = p;
    a->r = fibf(dagrt_worker_get(g_rt), a->n);
}

static long fibf(dagrt_worker *w, int n)
{
    if (n < 2)
        return n;
    fib_arg x = {n - 1, 0}, y = {n - 2, 0};
    dagrt_forked fx, fy;
    dagrt_fork(w, &fx, fibf_task, &x);
    dagrt_fork(w, &fy, fibf_task, &y);
    if (dagrt_join_take(w, &fy))
        y.r = fibf(w, y.n);
    if (dagrt_join_take(w, &fx))
        x.r = fibf(w, x.n);
    return x.r + y.r;
}

/* ------------------------------------------------------ parallel for */

static void body_cheap(void *arg, size_t b, size_t e) { bw_range_cheap(arg, b, e); }
static void body_heavy(void *arg, size_t b, size_t e) { bw_range_heavy(arg, b, e); }

static void par_calls(uint64_t *out, int heavy, size_t n, int calls, void *ctx)
{
    (void)ctx;
    for (int c = 0; c < calls; c++)
        dagrt_parallel_for(g_rt, 0, n, 0, heavy ? body_heavy : body_cheap, out);
}

/* ------------------------------------ parallel-for floor, no runtime */

/* The floor under the 1,000 x 6 ns parallel-for row: the same loop split
 * between this thread and a plain pthread that spins on a flag and never
 * sleeps, at a split point chosen by measurement. A call costs one
 * cache-line trip to start the helper and one to hear that it finished,
 * and nothing else. Measured like the row: plain loops, then as many split
 * calls, the median of reps samples of each. */
/* 128 bytes apart: x86 moves cache lines in aligned pairs (runtime/arch/apart.h). */
static _Alignas(128) _Atomic uint64_t g_fl_go;
static _Alignas(128) _Atomic uint64_t g_fl_done;
static uint64_t *g_fl_out;
static size_t g_fl_b, g_fl_e;     /* the helper's part; set while it waits */
static uint64_t g_fl_seq;

static inline void fl_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void *fl_helper(void *p)
{
    (void)p;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g;
        /* acquire: its bounds were written before the go. */
        while ((g = atomic_load_explicit(&g_fl_go, memory_order_acquire)) == seen)
            fl_pause();
        if (g == UINT64_MAX)
            return NULL;
        seen = g;
        bw_range_heavy(g_fl_out, g_fl_b, g_fl_e);
        /* release: our items before the caller goes on. */
        atomic_store_explicit(&g_fl_done, g, memory_order_release);
    }
}

static void fl_call(size_t n, size_t mid)
{
    g_fl_b = mid;
    g_fl_e = n;
    atomic_store_explicit(&g_fl_go, ++g_fl_seq, memory_order_release);
    bw_range_heavy(g_fl_out, 0, mid);
    while (atomic_load_explicit(&g_fl_done, memory_order_acquire) != g_fl_seq)
        fl_pause();
}

static double pfor_floor(int quick, int reps, size_t *split)
{
    size_t n = 1000;
    int calls = bw_pfor_calls(n, 6.0);
    if (quick)
        calls = calls / 4 + 1;
    *split = n / 2;
    g_fl_out = calloc(n, sizeof *g_fl_out);
    pthread_t th;
    if (!g_fl_out || pthread_create(&th, NULL, fl_helper, NULL) != 0)
        return -1;
    uint64_t t[64], bt = UINT64_MAX;
    for (size_t mid = 400; mid <= 700; mid += 25) {
        for (int k = 0; k < 64; k++) {
            uint64_t t0 = bw_now_ns();
            fl_call(n, mid);
            t[k] = bw_now_ns() - t0;
        }
        uint64_t m = bw_median(t, 64);
        if (m < bt) {
            bt = m;
            *split = mid;
        }
    }
    uint64_t sp[16], sl[16];
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = bw_now_ns();
        for (int c = 0; c < calls; c++)
            bw_range_heavy(g_fl_out, 0, n);
        sl[r] = bw_now_ns() - t0;
        t0 = bw_now_ns();
        for (int c = 0; c < calls; c++)
            fl_call(n, *split);
        sp[r] = bw_now_ns() - t0;
    }
    atomic_store_explicit(&g_fl_go, UINT64_MAX, memory_order_release);
    pthread_join(th, NULL);
    free(g_fl_out);
    return (double)bw_median(sl, reps) / (double)bw_median(sp, reps);
}

/* ------------------------------------------------------- wake latency */

static _Atomic int g_flag;
static _Atomic int g_on_main;

static void flag_task(void *p)
{
    (void)p;
    if (dagrt_on_main_thread(g_rt))
        atomic_store(&g_on_main, 1);
    atomic_store_explicit(&g_flag, 1, memory_order_release);
}

/* --placement auto|none: the A/B of the placement default. */
static dagrt_placement g_placement = DAGRT_PLACEMENT_AUTO;
/* --workers N: the workers beside the main thread in every row but the
 * one-thread ones (default 1: the rows' "2t"); scripts/scaling.sh runs
 * 1, 3, 7 and 15. The row names stay, the printed `workers:` line says. */
static int g_workers = 1;

static bool g_wake_stats;   /* wake_us with dagrt_config.wake_stats */

static dagrt *make(int workers, bool none, dagrt_idle_policy idle)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.wake_stats = g_wake_stats;
    c.placement = g_placement;
    c.workers = workers;
    c.no_workers = none;
    c.idle = idle;
    c.seed = 1;
    dagrt *rt = dagrt_create(&c);
    if (!rt) {
        fprintf(stderr, "dagrt_create failed\n");
        exit(1);
    }
    return rt;
}

static double wake_us(dagrt_idle_policy idle, int trips)
{
    g_rt = make(g_workers, false, idle);
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)trips);
    for (int i = 0; i < trips; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        atomic_store(&g_flag, 0);
        dagrt_group g;
        dagrt_group_init(&g);
        uint64_t t0 = bw_now_ns();
        dagrt_spawn(g_rt, &g, flag_task, NULL);
        BENCH_WAIT_UNTIL(atomic_load_explicit(&g_flag, memory_order_acquire));
        lat[i] = bw_now_ns() - t0;
        dagrt_group_wait(g_rt, &g);
    }
    if (atomic_load(&g_on_main))
        fprintf(stderr, "wake: a task ran on the main thread\n");
    double r = (double)bw_median(lat, trips) / 1000.0;
    free(lat);
    if (g_wake_stats) {
        /* The wake-up latency counters (dagrt_thread_stats.wake_*): the
         * trip's parts as the woken workers saw them, their lines summed. */
        dagrt_thread_stats st[256];
        int n = dagrt_get_stats(g_rt, st, 256);
        uint64_t w = 0, wns = 0, wmax = 0, sns = 0, smax = 0;
        for (int k = 1; k < n; k++) {
            w += st[k].wakeups;
            wns += st[k].wake_ns;
            sns += st[k].search_ns;
            wmax = st[k].wake_ns_max > wmax ? st[k].wake_ns_max : wmax;
            smax = st[k].search_ns_max > smax ? st[k].search_ns_max : smax;
        }
        double d = w ? (double)w : 1.0;
        printf("RESULT wake_split_wake %.2f us (parked wake, mean of %llu wake-ups; max %.1f us)\n",
               (double)wns / d / 1000.0, (unsigned long long)w, (double)wmax / 1000.0);
        printf("RESULT wake_split_search %.3f us (running to the task's start, mean; max %.1f us)\n",
               (double)sns / d / 1000.0, (double)smax / 1000.0);
    }
    dagrt_destroy(g_rt);
    return r;
}

/* The floor under wake_park: one bare futex wake of a thread that slept
 * 5 ms, the waker waiting (bench_wait.h) until the woken thread stores a flag. No
 * runtime in between, so wake_park / this is what the runtime adds. */
#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint32_t g_fx_word;
static int g_fx_cpu = -1;   /* the sleeper's CPU, or -1: anywhere */

static void pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *fx_sleeper(void *p)
{
    (void)p;
    if (g_fx_cpu >= 0)
        pin_self(g_fx_cpu);
    for (;;) {
        while (atomic_load(&g_fx_word) == 0)
            syscall(SYS_futex, (uint32_t *)&g_fx_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        if (atomic_load(&g_fx_word) == 2)
            return NULL;
        atomic_store(&g_fx_word, 0);
        atomic_store_explicit(&g_flag, 1, memory_order_release);
    }
}

/* place: 0 the kernel places the sleeper; 1 on the waker's CPU; 2 on
 * another CPU than the waker's (both pinned for the measurement). The
 * pinned forms show the VM's two wake paths: a context switch on the
 * waker's CPU, or an interrupt to a halted virtual CPU. */
static double wake_floor_us(int trips, int place)
{
    cpu_set_t saved;
    pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
    g_fx_cpu = -1;
    if (place) {
        int here = sched_getcpu(), other = -1;
        for (int c = 0; c < CPU_SETSIZE && other < 0; c++)
            if (c != here && CPU_ISSET(c, &saved))
                other = c;
        if (here < 0 || other < 0)
            return -1;
        pin_self(here);
        g_fx_cpu = place == 1 ? here : other;
    }
    atomic_store(&g_fx_word, 0);   /* 2 (exit) from the previous call */
    pthread_t th;
    if (pthread_create(&th, NULL, fx_sleeper, NULL) != 0)
        return -1;
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)trips);
    for (int i = 0; i < trips; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        atomic_store(&g_flag, 0);
        uint64_t t0 = bw_now_ns();
        atomic_store(&g_fx_word, 1);
        syscall(SYS_futex, (uint32_t *)&g_fx_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        BENCH_WAIT_UNTIL(atomic_load_explicit(&g_flag, memory_order_acquire));
        lat[i] = bw_now_ns() - t0;
    }
    atomic_store(&g_fx_word, 2);
    syscall(SYS_futex, (uint32_t *)&g_fx_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    double r = (double)bw_median(lat, trips) / 1000.0;
    free(lat);
    return r;
}
#endif

/* Handing a frame's jobs over: a loop of dagrt_spawn against one
 * dagrt_spawn_batch of the same tasks (spawn to the end of the wait, 2
 * threads), and the asynchronous range's submission cost per item (the
 * call alone). Side by side, alternating, in one run. */
static void noop_task(void *p)
{
    (void)p;
}

static void noop_range(void *arg, size_t b, size_t e)
{
    (void)arg;
    (void)b;
    (void)e;
}

static void batch_rows(int reps)
{
    dagrt *rt = make(1, false, DAGRT_IDLE_PARK);
    static dagrt_task_desc desc[100000];
    for (size_t i = 0; i < 100000; i++)
        desc[i] = (dagrt_task_desc){noop_task, NULL};
    size_t sizes[2] = {1000, 100000};
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        int inner = (int)(200000 / n);   /* about 200k tasks a sample */
        uint64_t loop[16], batch[16];
        for (int r = 0; r < reps + 1; r++) {   /* the first round warms up */
            dagrt_group g;
            dagrt_group_init(&g);
            uint64_t t0 = bw_now_ns();
            for (int i = 0; i < inner; i++) {
                for (size_t j = 0; j < n; j++)
                    dagrt_spawn(rt, &g, noop_task, NULL);
                dagrt_group_wait(rt, &g);
            }
            uint64_t t1 = bw_now_ns();
            for (int i = 0; i < inner; i++) {
                dagrt_spawn_batch(rt, &g, desc, n, 0);
                dagrt_group_wait(rt, &g);
            }
            uint64_t t2 = bw_now_ns();
            if (r > 0) {
                loop[r - 1] = t1 - t0;
                batch[r - 1] = t2 - t1;
            }
        }
        double ns_loop = (double)bw_median(loop, reps) / ((double)n * inner);
        double ns_batch = (double)bw_median(batch, reps) / ((double)n * inner);
        printf("RESULT spawn_loop_%zu %.1f ns/task\n", n, ns_loop);
        printf("RESULT spawn_batch_%zu %.1f ns/task\n", n, ns_batch);
        printf("RESULT spawn_batch_%zu_vs_loop %.2f x\n", n, ns_loop / ns_batch);
    }
    /* The asynchronous range: the call alone, then to the end of its wait. */
    size_t items = 1000000;
    uint64_t call[16], whole[16];
    for (int r = 0; r < reps; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_range_job j;
        uint64_t t0 = bw_now_ns();
        dagrt_parallel_for_async(rt, &g, &j, 0, items, 0, noop_range, NULL);
        uint64_t t1 = bw_now_ns();
        dagrt_group_wait(rt, &g);
        uint64_t t2 = bw_now_ns();
        call[r] = t1 - t0;
        whole[r] = t2 - t0;
    }
    double c_ns = (double)bw_median(call, reps), w_ns = (double)bw_median(whole, reps);
    printf("RESULT pfor_async_submit %.0f ns/call = %.6f ns/item (%zu items)\n", c_ns,
           c_ns / (double)items, items);
    printf("RESULT pfor_async_whole %.1f us (to the end of the wait, empty body)\n", w_ns / 1e3);
    dagrt_destroy(rt);
}

/* The wake-up rows: wake_park (with and without the wake-up latency
 * counters, and their split), wake_spin, and the bare futex floors. */
static void wake_rows(int quick)
{
    int trips = quick ? 400 : 10000;
    double park_us = wake_us(DAGRT_IDLE_PARK, trips);
    printf("RESULT wake_park %.2f us\n", park_us);
    /* The same trip with the wake-up latency counters on: their split,
     * and what the clock reads cost the trip (a ratio, this run). */
    g_wake_stats = true;
    double stats_us = wake_us(DAGRT_IDLE_PARK, trips);
    g_wake_stats = false;
    printf("RESULT wake_park_stats %.2f us (counters on)\n", stats_us);
    printf("RESULT wake_park_stats_vs_off %.2f x\n", park_us > 0 ? stats_us / park_us : 0.0);
    printf("RESULT wake_spin %.2f us\n", wake_us(DAGRT_IDLE_SPIN, trips));
#if defined(__linux__)
    printf("RESULT wake_futex_floor %.2f us\n", wake_floor_us(trips, 0));
    printf("RESULT wake_futex_same_cpu %.2f us\n", wake_floor_us(trips, 1));
    printf("RESULT wake_futex_other_cpu %.2f us\n", wake_floor_us(trips, 2));
#endif
}

int main(int argc, char **argv)
{
    int quick = bw_arg_quick(argc, argv);
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--placement") == 0 && strcmp(argv[i + 1], "none") == 0)
            g_placement = DAGRT_PLACEMENT_NONE;
        if (strcmp(argv[i], "--workers") == 0) {
            g_workers = atoi(argv[i + 1]);
            if (g_workers < 1 || g_workers > 255) {
                fprintf(stderr, "bench_rt_dagrt: --workers takes 1 to 255\n");
                return 2;
            }
        }
    }
    printf("placement: %s\n", g_placement == DAGRT_PLACEMENT_NONE ? "none" : "auto");
    printf("workers: %d (+ the main thread)\n", g_workers);
    int reps = quick ? 3 : 7;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--batch") == 0) {   /* only the batch rows */
            batch_rows(reps);
            return 0;
        } else if (strcmp(argv[i], "--wake") == 0) {   /* only the wake-up rows */
            wake_rows(quick);
            return 0;
        }
    uint64_t s[16];
    bw_print_info();
    int fn = 30;
    double serial = bw_time_fib_serial(fn, s, reps);   /* before any thread */
    printf("RESULT fib30_serial %.2f ms\n", serial / 1e6);

    /* spawn tree, 2 threads */
    g_rt = make(g_workers, false, DAGRT_IDLE_PARK);
    int depth = 19;                          /* 2^20 - 1 nodes */
    double nodes = (double)((1L << (depth + 1)) - 1);
    tree_node((void *)(intptr_t)depth);      /* warm-up */
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = bw_now_ns();
        tree_node((void *)(intptr_t)depth);
        s[r] = bw_now_ns() - t0;
    }
    printf("RESULT spawn_tree %.1f Mtasks/s\n", nodes / ((double)bw_median(s, reps) / 1e3));

    /* fib(30), every call a task: 1 thread (no workers) and 2 threads */
    double frames_t[2] = {0, 0};
    for (int threads = 1; threads <= 2; threads++) {
        dagrt *rt = threads == 1 ? make(0, true, DAGRT_IDLE_PARK) : g_rt;
        dagrt *keep = g_rt;
        g_rt = rt;
        for (int r = 0; r < reps; r++) {
            fib_arg a = {fn, 0};
            uint64_t t0 = bw_now_ns();
            fib_task(&a);
            s[r] = bw_now_ns() - t0;
            if (a.r != bw_fib_serial(fn))
                fprintf(stderr, "fib wrong\n");
        }
        char row[32];
        snprintf(row, sizeof row, "fib30_%dt", threads);
        bw_print_fib(row, (double)bw_median(s, reps), serial);
        for (int r = 0; r < reps; r++) {
            uint64_t t0 = bw_now_ns();
            long v = fibf(dagrt_worker_get(rt), fn);
            s[r] = bw_now_ns() - t0;
            if (v != bw_fib_serial(fn))
                fprintf(stderr, "fib (frames) wrong\n");
        }
        frames_t[threads - 1] = (double)bw_median(s, reps);
        snprintf(row, sizeof row, "fib30_frames_%dt", threads);
        bw_print_fib(row, frames_t[threads - 1], serial);
        if (threads == 2)
            printf("RESULT fib30_frames_2t_vs_1t %.2f x\n", frames_t[0] / frames_t[1]);
        if (threads == 1) {
            /* The same in CPU time (only one thread runs): on a shared,
             * oversubscribed machine this is the figure that means
             * something. */
            uint64_t cs[16], cp[16];
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = bw_cpu_ns();
                volatile long x = bw_fib_serial(fn);
                (void)x;
                cs[r] = bw_cpu_ns() - t0;
                fib_arg a = {fn, 0};
                t0 = bw_cpu_ns();
                fib_task(&a);
                cp[r] = bw_cpu_ns() - t0;
            }
            printf("RESULT fib30_1t_cpu %.2f x_serial\n",
                   (double)bw_median(cp, reps) / (double)bw_median(cs, reps));
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = bw_cpu_ns();
                dagrt *keep2 = g_rt;
                g_rt = rt;
                tree_node((void *)(intptr_t)depth);
                g_rt = keep2;
                cp[r] = bw_cpu_ns() - t0;
            }
            printf("RESULT spawn_tree_1t_cpu %.1f Mtasks/s\n", nodes / ((double)bw_median(cp, reps) / 1e3));
            dagrt_destroy(rt);
        }
        g_rt = keep;
    }

    /* parallel-for speed-up over the plain loop, 2 threads */
    bw_pfor_table(quick, reps, par_calls, NULL);
    dagrt_destroy(g_rt);
    size_t split;
    double fl = pfor_floor(quick, reps, &split);
    printf("RESULT pfor_6ns_1000_floor %.2f x_plain (no runtime: a spinning pthread, split at %zu)\n",
           fl, split);

    batch_rows(reps);

    wake_rows(quick);
    return 0;
}
