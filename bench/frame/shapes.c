/*
 * shapes.c - the uneven frames of bench_frame (shapes.h; bench/frame/README.md,
 * "Uneven frames"): the game-shaped frame and the random layered graph, each
 * as serial calls, on libdagrt one frame at a time (G_run) and as a pipeline
 * of depth 2, on the no-runtime floor (shape_floor.c) and on every peer
 * built in (shape_omp.c, shape_tbb.cpp, shape_taskflow.cpp, shape_enkits.cpp),
 * one frame at a time and as a ring of depth 2, in rounds as the uniform
 * frame's rows are (bench_main.c). Each row is printed over its lower bound,
 * computed from the costs measured in the same run (each xnode's body timed
 * alone, serially): max(critical path, work / threads) for one frame at a
 * time, work / threads for frames in flight.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "bench_body.h"   /* bench_now_ns, bench_calibrate */
#include "bench_load.h"
#include "shapes.h"

struct shape_x shape_xg;
int shape_fault;

static const struct shape *cur;           /* the shape being measured */
static int xbase[SHAPE_MAX_NODES + 1];    /* task i's xnodes: xbase[i] .. xbase[i + 1] - 1 */
static int node_of[SHAPE_MAX_X];
static uint64_t iters_x[SHAPE_MAX_X];     /* LCG steps of each xnode's body */
static double cost_x[SHAPE_MAX_X];        /* measured alone, us */

/* The frames in flight's contexts, as bench_main.c's pipe_slots: frame f on
 * slot f % PIPE_SLOTS, so a body can read the frame before's slot. */
#define PIPE_SLOTS (DAGRT_MAX_IN_FLIGHT + 1)
static struct shape_ctx pipe_slots[PIPE_SLOTS];

/* bench_body.c's chain: each step needs the one before. */
static uint64_t lcg(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

void shape_xnode(struct shape_ctx *c, int x)
{
    if (c->checked) {
        uint64_t f = c->frame;
        /* acquire: pairs with the release store of each input's stamp below. */
        for (int k = 0; k < shape_xg.npred[x]; k++)
            if (atomic_load_explicit(&c->x[shape_xg.pred[x][k]].stamp, memory_order_acquire) != f)
                atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
        /* In flight: xnode x of the frame before ended first (when that
         * frame was checked too). acquire: as above. */
        if (c == &pipe_slots[f % PIPE_SLOTS]) {
            const struct shape_ctx *last = &pipe_slots[(f - 1) % PIPE_SLOTS];
            if (last->checked && last->frame == f - 1 &&
                atomic_load_explicit(&last->x[x].stamp, memory_order_acquire) != f - 1)
                atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
        }
    }
    if (iters_x[x])
        c->x[x].sink = lcg(c->x[x].sink + (uint64_t)x, iters_x[x]);
    /* release: this body before the stamp its successors read. --fault
     * (the smoke's negative control): one xnode never says it ran. */
    if (c->checked && !(shape_fault && x == shape_xg.n / 2))
        atomic_store_explicit(&c->x[x].stamp, c->frame, memory_order_release);
}

void shape_items(struct shape_ctx *c, int i, size_t b, size_t e)
{
    for (size_t k = b; k < e && xbase[i] + (int)k < xbase[i + 1]; k++)
        shape_xnode(c, xbase[i] + (int)k);
}

void shape_frame_advance(struct shape_ctx *c) { c->frame++; }

struct shape_ctx *shape_pipe_next(struct shape_ctx *c)
{
    uint64_t f = ++c->frame;
    struct shape_ctx *s = &pipe_slots[f % PIPE_SLOTS];
    s->frame = f;
    if (s->checked != c->checked)
        s->checked = c->checked;
    return s;
}

/* ------------------------------------------------------------ contenders */

static dagrt *the_rt;
static int rt_errors;

static void serial_frames(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        for (int x = 0; x < shape_xg.n; x++)
            shape_xnode(c, x);
    }
}

static void dagrt_frames(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        if (cur->run(the_rt, c) != 0)
            rt_errors++;
    }
}

static void dagrt_ring(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++)
        if (cur->pipe_submit(the_rt, shape_pipe_next(c)) != 0)
            rt_errors++;
    if (cur->pipe_drain(the_rt) != 0)
        rt_errors++;
}

typedef struct contender {
    const char *name;
    void (*frames)(struct shape_ctx *c, long n);
    unsigned depth;
    /* A peer's setup and teardown, shared by its two rows; NULL: none. */
    void (*setup)(struct shape_ctx *c, int threads);
    void (*teardown)(void);
} contender;

#define PEER(name, ringname, p)                                                        \
    {name, shape_##p##_frames, 0, shape_##p##_setup, shape_##p##_teardown},            \
    {ringname, shape_##p##_ring, 2, shape_##p##_setup, shape_##p##_teardown},
static const contender contenders[] = {
    {"serial calls", serial_frames, 0, NULL, NULL},
    {"dagc + libdagrt", dagrt_frames, 0, NULL, NULL},
    {"libdagrt pipeline 2", dagrt_ring, 2, NULL, NULL},
    PEER("no runtime (floor)", "floor ring 2", floor)
#ifdef HAVE_OMP
    PEER("OpenMP depend", "OpenMP depend ring 2", omp)
#endif
#ifdef HAVE_TBB
    PEER("oneTBB flow graph", "oneTBB graph ring 2", tbb)
#endif
#ifdef HAVE_TASKFLOW
    PEER("Taskflow run_n", "Taskflow async ring 2", tf)
#endif
#ifdef HAVE_ENKITS
    PEER("enkiTS dependencies", "enkiTS dep ring 2", enki)
#endif
};
#undef PEER
#define NCONT (sizeof contenders / sizeof contenders[0])

/* n frames of contender k; a ring's slots' errors then go to c. */
static void run_frames(const contender *k, struct shape_ctx *c, long n)
{
    k->frames(c, n);
    if (k->depth)
        /* relaxed: plain counters; the ring's end ordered every body's
         * increment before these reads. */
        for (int s = 0; s < PIPE_SLOTS; s++)
            if (atomic_load_explicit(&pipe_slots[s].errors, memory_order_relaxed))
                atomic_fetch_add_explicit(&c->errors,
                    atomic_exchange_explicit(&pipe_slots[s].errors, 0, memory_order_relaxed),
                    memory_order_relaxed);
}

/* One timed run: min_frames frames, then, if that took less than min_ns,
 * one more batch sized to fill it. Few batches: each ends with a ring's
 * drain, which a run of frames in flight pays once per batch. */
static double timed_run(const contender *k, struct shape_ctx *c, double min_ns, long min_frames)
{
    long frames = min_frames > 2 ? min_frames : 2;
    double t0 = bench_now_ns();
    run_frames(k, c, frames);
    double t = bench_now_ns();
    while (t - t0 < min_ns) {
        long more = (long)((min_ns - (t - t0)) / ((t - t0) / (double)frames)) + 1;
        run_frames(k, c, more);
        frames += more;
        t = bench_now_ns();
    }
    return (t - t0) / 1e3 / (double)frames;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ the graph */

/* Expands shape s into shape_xg; returns 0, or -1 with a message if s is
 * not one bench_frame can run (one root first, one sink last, sizes). */
static int expand(const struct shape *s)
{
    int n = 0;
    if (s->n < 2 || s->n > SHAPE_MAX_NODES || s->par[0] || s->par[s->n - 1])
        goto bad;
    for (int i = 0; i < s->n; i++) {
        xbase[i] = n;
        n += s->par[i] ? SHAPE_ITEMS : 1;
        if (n > SHAPE_MAX_X)
            goto bad;
        for (int x = xbase[i]; x < n; x++)
            node_of[x] = i;
    }
    xbase[s->n] = n;
    memset(&shape_xg, 0, sizeof shape_xg);
    shape_xg.n = n;
    for (int x = 0; x < n; x++) {
        int i = node_of[x];
        shape_xg.cost[x] = s->cost_us[i] / (s->par[i] ? SHAPE_ITEMS : 1);
        shape_xg.on_main[x] = s->on_main[i];
        if ((s->npred[i] == 0) != (i == 0))
            goto bad;   /* a second root */
        for (int k = 0; k < s->npred[i]; k++)
            for (int y = xbase[s->pred[i][k]]; y < xbase[s->pred[i][k] + 1]; y++) {
                if (shape_xg.npred[x] == SHAPE_MAX_XPREDS)
                    goto bad;
                shape_xg.pred[x][shape_xg.npred[x]++] = y;
                shape_xg.succ[y][shape_xg.nsucc[y]++] = x;
            }
    }
    for (int x = 0; x < n - 1; x++)
        if (shape_xg.nsucc[x] == 0)
            goto bad;   /* a second sink */
    cur = s;
    return 0;
bad:
    fprintf(stderr, "bench_frame: shape %s: not one root first and one sink last, or over "
            "shapes.h's sizes\n", s->name);
    return -1;
}

/* Each xnode's body timed alone, serially: the median of 7 calls (us). */
static void measure_costs(struct shape_ctx *c)
{
    c->checked = 0;
    for (int x = 0; x < shape_xg.n; x++) {
        double t[7];
        for (int r = 0; r < 7; r++) {
            double t0 = bench_now_ns();
            shape_xnode(c, x);
            t[r] = (bench_now_ns() - t0) / 1e3;
        }
        qsort(t, 7, sizeof t[0], cmp_double);
        cost_x[x] = t[3];
    }
}

/* Work and the critical path on `threads` threads (us), from cost_x: a
 * parallel task counts its items' sum / min(threads, items) on a path. */
static void bounds(int threads, double *work, double *cp)
{
    double fin[SHAPE_MAX_NODES], w = 0, best = 0;
    for (int i = 0; i < cur->n; i++) {
        double c = 0, start = 0;
        for (int x = xbase[i]; x < xbase[i + 1]; x++)
            c += cost_x[x];
        w += c;
        if (cur->par[i])
            c /= threads < SHAPE_ITEMS ? threads : SHAPE_ITEMS;
        for (int k = 0; k < cur->npred[i]; k++)
            if (fin[cur->pred[i][k]] > start)
                start = fin[cur->pred[i][k]];
        fin[i] = start + c;
        if (fin[i] > best)
            best = fin[i];
    }
    *work = w;
    *cp = best;
}

/* Whether every xnode of frame c->frame ran in c (the last frame of a run
 * or of a ring): a node that never ran has an older stamp. */
static int all_stamped(const struct shape_ctx *c)
{
    for (int x = 0; x < shape_xg.n; x++)
        if (atomic_load_explicit(&c->x[x].stamp, memory_order_acquire) != c->frame)
            return 0;
    return 1;
}

/* ------------------------------------------------------------ a shape */

static int run_shape(const struct shape *s, int threads, const struct shape_opts *o)
{
    static struct shape_ctx ctx;
    if (expand(s) != 0)
        return 1;
    int failed = 0;
    uint64_t iters_1us = bench_calibrate(1000.0);
    for (int x = 0; x < shape_xg.n; x++) {
        int i = node_of[x];
        iters_x[x] = (uint64_t)((double)iters_1us * s->cost_us[i] / (s->par[i] ? SHAPE_ITEMS : 1));
    }
    if (s->pipe_init(2) != 0) {
        fprintf(stderr, "bench_frame: %s: pipeline_init failed\n", s->name);
        return 1;
    }
    /* The bounds' costs first, with no peer's threads about. */
    measure_costs(&ctx);
    int setup[NCONT] = {0};
    for (size_t k = 0; k < NCONT; k++)
        setup[k] = k == 0 || o->want(contenders[k].name);
    /* Each selected peer set up once (after expand: it builds shape_xg). */
    for (size_t k = 0; k < NCONT; k++)
        if (setup[k] && contenders[k].setup && !(k > 0 && setup[k - 1] &&
                                                contenders[k - 1].setup == contenders[k].setup))
            contenders[k].setup(&ctx, threads);
    int tasks_main = 0, tasks_par = 0;
    for (int i = 0; i < s->n; i++)
        tasks_main += s->on_main[i], tasks_par += s->par[i];
    double work, cp;
    bounds(threads, &work, &cp);
    double b1 = cp > work / threads ? cp : work / threads, bp = work / threads;
    printf("\n== frame %s: %d tasks (%d on main, %d parallel of %d items), %d peer tasks, "
           "%d task thread%s\n", s->name, s->n, tasks_main, tasks_par, SHAPE_ITEMS, shape_xg.n,
           threads, threads > 1 ? "s" : "");
    printf("costs measured alone (serial): work %.1f us, critical path %.1f us on %d thread%s; "
           "bounds: one frame at a time max(cp, work/%d) = %.1f us, pipeline work/%d = %.1f us\n",
           work, cp, threads, threads > 1 ? "s" : "", threads, b1, threads, bp);
    if (o->load && bench_load_start(o->load) != 0) {
        fprintf(stderr, "bench_frame: cannot start the load\n");
        return 1;
    }
    if (o->load)
        printf("UNDER LOAD: %d busy-looping process%s beside this one\n", o->load,
               o->load > 1 ? "es" : "");

    /* Rounds: every contender once per round, forwards then backwards,
     * each after a warm-up of its own. */
    double min_ns = o->min_ms * 1e6;
    long min_frames = o->min_frames;
    static double t[NCONT][101];
    bench_cpu_sample cpu[NCONT] = {{0, 0, 0}};   /* the timed runs' totals */
    for (int r = 0; r < o->runs; r++)
        for (size_t j = 0; j < NCONT; j++) {
            size_t k = r % 2 ? NCONT - 1 - j : j;
            if (!setup[k])
                continue;
            timed_run(&contenders[k], &ctx, min_ns / (r ? 10 : 4), min_frames / (r ? 10 : 4));
            bench_cpu_sample c0, c1;
            bench_load_sample(&c0);
            t[k][r] = timed_run(&contenders[k], &ctx, min_ns, min_frames);
            bench_load_sample(&c1);
            bench_load_add(&cpu[k], &c0, &c1);
        }
    if (o->load)
        bench_load_stop();
    if (o->each) {   /* before the sort below: the rounds in order */
        printf("every run, us per frame (rounds in order):\n");
        for (size_t k = 0; k < NCONT; k++) {
            if (!setup[k])
                continue;
            printf("  %-22s", contenders[k].name);
            for (int r = 0; r < o->runs; r++)
                printf(" %.1f", t[k][r]);
            printf("\n");
        }
    }
    printf("%-22s %18s %10s %10s\n", "contender", "us/frame (best)", "x bound", "x serial");
    double serial = 0;
    for (size_t k = 0; k < NCONT; k++) {
        if (!setup[k])
            continue;
        qsort(t[k], (size_t)o->runs, sizeof t[k][0], cmp_double);
        double med = t[k][o->runs / 2];
        if (k == 0)
            serial = med;
        char e[40];
        snprintf(e, sizeof e, "%.1f (%.1f)", med, t[k][0]);
        printf("%-22s %18s %10.3f %10.3f\n", contenders[k].name, e,
               med / (contenders[k].depth ? bp : b1), med / serial);
    }
    printf("(x bound: over max(cp, work/%d) one frame at a time, over work/%d for a ring or "
           "pipeline; serial calls over the same)\n", threads, threads);
    if (o->load) {
        bench_load_cpu_header();
        for (size_t k = 0; k < NCONT; k++)
            if (setup[k])
                bench_load_cpu_row(contenders[k].name, &cpu[k]);
    }

    /* Allocations per frame on libdagrt, once warm. */
    for (size_t k = 1; k <= 2; k++) {
        if (!setup[k])
            continue;
        long n = o->quick ? 10 : 50;
        run_frames(&contenders[k], &ctx, n / 2);
        unsigned long a0 = alloc_count();
        run_frames(&contenders[k], &ctx, n);
        unsigned long a1 = alloc_count();
        printf("%s allocations per frame: %.4f (%lu in %ld frames)\n", contenders[k].name,
               (double)(a1 - a0) / (double)n, a1 - a0, n);
        failed |= a1 != a0;
    }

    /* Checked runs, bodies at 1/8 of their cost: inputs, same-node order,
     * and every xnode of the last frame ran. */
    for (int x = 0; x < shape_xg.n; x++)
        iters_x[x] /= 8;
    ctx.checked = 1;
    for (size_t k = 0; k < NCONT; k++) {
        if (!setup[k])
            continue;
        atomic_store(&ctx.errors, 0);
        long n = o->quick ? 20 : 200;
        run_frames(&contenders[k], &ctx, n);
        int e = atomic_load(&ctx.errors);
        int whole = all_stamped(contenders[k].depth ? &pipe_slots[ctx.frame % PIPE_SLOTS] : &ctx);
        printf("checked run %s %-22s %s\n", s->name, contenders[k].name,
               e ? "ORDER VIOLATED" : whole ? "ordering ok" : "NODE MISSING");
        failed |= e != 0 || !whole;
    }
    ctx.checked = 0;
    for (int s2 = 0; s2 < PIPE_SLOTS; s2++)
        pipe_slots[s2].checked = 0;
    if (rt_errors) {
        printf("%s: the generated entry points returned errors %d times\n", s->name, rt_errors);
        failed = 1;
        rt_errors = 0;
    }
    for (size_t k = 0; k < NCONT; k++)
        if (setup[k] && contenders[k].teardown && !(k > 0 && setup[k - 1] &&
                                                   contenders[k - 1].teardown == contenders[k].teardown))
            contenders[k].teardown();
    return failed;
}

int shapes_main(dagrt *rt, int threads, const char *which, const struct shape_opts *o)
{
    static const struct shape *const all[] = {&shape_game_frame, &shape_layered_frame};
    the_rt = rt;
    int failed = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        size_t len = strlen(all[k]->name);
        int want = strcmp(which, "all") == 0;
        for (const char *p = which; !want && *p;) {
            size_t n = strcspn(p, ",");
            want = n == len && strncmp(p, all[k]->name, n) == 0;
            p += n + (p[n] == ',');
        }
        if (want)
            failed |= run_shape(all[k], threads, o);
    }
    return failed;
}
