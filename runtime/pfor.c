/*
 * pfor.c - dagrt_parallel_for: lazy, steal-driven splitting.
 *
 * The caller runs the range itself, a chunk at a time. Between chunks it
 * looks whether anyone is hungry (an idle ctx still spinning, i.e. polling
 * for work right now); only then does it split off the upper half of what
 * is left as a task, which a thief takes and treats the same way. A loop
 * that nobody can help therefore runs as a few direct calls of fn, close to
 * the plain loop.
 *
 * Costs are judged in time, not items: the first chunk is timed (cheap
 * cycle counter where there is one) to estimate ns per item. We never split
 * off less than PFOR_SPLIT_MIN_NS of work (moving work to another core
 * costs about a microsecond), and we split without waiting for hunger when
 * the remaining work is long enough (PFOR_WAKE_NS) to pay for waking a
 * sleeping worker.
 */
#define _GNU_SOURCE
#include "scheduler.h"

#include <pthread.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PFOR_TSC 1
#endif

#define PFOR_FIRST_ITEMS   64
#define PFOR_SPLIT_MIN_NS  2000.0
#define PFOR_CHUNK_NS      500.0
#define PFOR_WAKE_NS       30000.0

/* ------------------------------------------------------------ clock */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef PFOR_TSC
static double ns_per_tick = 1.0;
static pthread_once_t tick_once = PTHREAD_ONCE_INIT;

static void tick_calibrate(void)
{
    uint64_t n0 = mono_ns(), c0 = __rdtsc(), n1;
    do
        n1 = mono_ns();
    while (n1 - n0 < 200000);   /* 0.2 ms, once per process */
    uint64_t c1 = __rdtsc();
    if (c1 > c0)
        ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);
}

static inline uint64_t ticks(void) { return __rdtsc(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t * ns_per_tick; }
static inline void ticks_init(void) { pthread_once(&tick_once, tick_calibrate); }
#else
static inline uint64_t ticks(void) { return mono_ns(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t; }
static inline void ticks_init(void) {}
#endif

/* -------------------------------------------------------- the loop */

typedef struct pfor_job {
    dagrt *rt;
    dagrt_range_fn fn;
    void *arg;
    size_t grain;      /* smallest piece handed to another thread */
    size_t chunk;      /* items per direct call between hunger checks */
    double ns_per;     /* estimated ns per item (set before any split) */
    rt_group *g;
} pfor_job;

static void pfor_loop(pfor_job *j, rt_ctx *c, size_t b, size_t e);

static void pfor_task(void *p)
{
    rt_task *t = p;
    pfor_job *j = t->arg;
    pfor_loop(j, rt_ctx_current(j->rt), (size_t)t->u[0], (size_t)t->u[1]);
}

static int split_off(pfor_job *j, rt_ctx *c, size_t b, size_t e)
{
    rt_task *t = rt_task_alloc(c);
    if (!t)
        return DAGRT_ENOMEM;
    t->fn = pfor_task;
    t->arg = j;
    t->flags = RT_TASK_SELF;
    t->group = j->g;
    t->u[0] = b;
    t->u[1] = e;
    rt_group_add(j->g, 1);
    int r = rt_submit(j->rt, c, t);
    if (r != 0) {
        rt_task_free(j->rt, t);
        rt_group_done(j->g);
    }
    return r;
}

static void pfor_loop(pfor_job *j, rt_ctx *c, size_t b, size_t e)
{
    dagrt *rt = j->rt;
    while (b < e) {
        size_t n = e - b;
        double est = (double)n * j->ns_per;
        /* relaxed: hunger is a heuristic; correctness never depends on it. */
        if (n >= 2 * j->grain && est >= PFOR_SPLIT_MIN_NS &&
            (est >= PFOR_WAKE_NS ||
             atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)) {
            size_t mid = b + n / 2;
            if (split_off(j, c, mid, e) == 0) {
                e = mid;
                continue;
            }
        }
        size_t k = n < j->chunk ? n : j->chunk;
        j->fn(j->arg, b, b + k);
        b += k;
    }
}

int dagrt_parallel_for(dagrt *rt, size_t begin, size_t end, size_t grain,
                       dagrt_range_fn fn, void *arg)
{
    if (!rt || !fn || begin > end)
        return DAGRT_EINVAL;
    if (begin == end)
        return 0;
    if (grain == 0)
        grain = 1;
    size_t n = end - begin;
    rt_ctx *c = rt_ctx_current(rt);
    /* Nobody could help (a thread outside the runtime runs it alone too). */
    if (!c || rt->nctx < 2 || n < 2 * grain) {
        fn(arg, begin, end);
        return 0;
    }
    ticks_init();
    size_t k0 = grain > PFOR_FIRST_ITEMS ? grain : PFOR_FIRST_ITEMS;
    if (k0 > n)
        k0 = n;
    uint64_t t0 = ticks();
    fn(arg, begin, begin + k0);
    uint64_t t1 = ticks();
    size_t b = begin + k0;
    if (b == end)
        return 0;
    double per = ticks_to_ns(t1 - t0) / (double)k0;
    if (per < 0.01)
        per = 0.01;
    if ((double)(end - b) * per < PFOR_SPLIT_MIN_NS) {
        fn(arg, b, end);     /* too short to be worth sharing */
        return 0;
    }
    dagrt_group dg;
    dagrt_group_init(&dg);
    pfor_job j = {
        .rt = rt, .fn = fn, .arg = arg, .grain = grain,
        .ns_per = per, .g = rt_group_of(&dg),
    };
    double ch = PFOR_CHUNK_NS / per;
    j.chunk = ch < (double)grain ? grain : (ch > (double)n ? n : (size_t)ch);
    pfor_loop(&j, c, b, end);
    return dagrt_group_wait(rt, &dg);
}
