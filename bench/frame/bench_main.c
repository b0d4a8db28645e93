/*
 * bench_main.c - the frame-graph benchmark (bench/frame/README.md): the
 * 32-node graph of bench_frame.dag with empty and ~1 us bodies, as direct
 * serial calls, as dagc-generated code on libdagrt one frame at a time
 * (bench_frame_run) and as pipelines of 2 and 3 frames in flight
 * (bench_frame_pipeline_submit, bench_frame_pipeline_drain), with no runtime at all (two
 * threads spinning on per-node flags: the floor, bench_floor.c, one frame at
 * a time and as rings of 2 and 3 frames in flight), and on the
 * peers, OpenMP tasks with depend clauses, a oneTBB flow graph, Taskflow and
 * enkiTS (the last two from the package cache when configure found it),
 * each one frame at a time and as a ring of frames in flight
 * (bench_peers.h), side by side in one run.
 *
 *   bench_frame [--frame all|uniform|game|layered[,...]] [--runs N] [--min-ms MS]
 *               [--workers N] [--only NAME[,NAME...]]
 *               [--load [N]] [--quick] [--placement auto|none|pin] [--observer] [--tracy] [--trace]
 *               [--dump FILE] [--fault] [--each]
 *
 * Prints us per frame (median and best of N timed runs of >= MS ms each
 * and >= 10000 frames), the ratio to serial calls, the distribution of
 * single frames (p50, p99, max, 1 us bodies; a pipelined frame's latency
 * runs from its start to the end of its last node), libdagrt right after
 * batches of serial calls, allocations per frame for
 * libdagrt, and a checked run per contender. The timed runs go in rounds, every
 * contender once per round, in turn forwards and backwards (A B C, C B A,
 * ...), each run after a short warm-up of its own, so that a change of the
 * machine's state during the run falls on every contender alike; the
 * cache-line round trip is printed at the start and at the end. --load
 * runs the rounds and the single frames beside N (default 1) busy-looping
 * processes (bench_load.c). --only NAME[,NAME] keeps the serial calls and
 * the contenders whose name contains a NAME (quick A/B pairs, e.g. --only
 * libdagrt,floor; the published tables use every contender). --observer
 * adds a libdagrt row with an observer whose callbacks do nothing
 * installed, --tracy one with the Tracy adapter (integrations/tracy, its
 * client on demand, no profiler connected; built with -Dtracy_src),
 * --trace one with the trace recorder on (docs/runtime.md,
 * "Observing a frame"); without them libdagrt runs with the hooks compiled
 * in and nothing observing (-Dnode_hooks=false builds the runtime without
 * them, for the A/B). --dump FILE writes every single frame of the libdagrt
 * and floor rows node by node (dump_frames; bench/frame/README.md).
 *
 * --frame picks the frames: the uniform one (everything above), and the
 * uneven ones after it (shapes.c: the game-shaped frame and the random
 * layered graph, each row over its lower bound); all of them by default.
 * --fault makes the uneven frames' checked runs fail (one node's stamp
 * left out): the smoke's negative control.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"   /* tests/fixtures: every allocation counted */
#include "bench_body.h"
#include "bench_floor.h"
#include "bench_frame.h"
#include "bench_load.h"
#include "bench_peers.h"
#include "bench_pingpong.h"
#include "shapes.h"

#ifndef BENCH_BUILD
#define BENCH_BUILD "unknown (not built by bench/meson.build)"
#endif

/* ------------------------------------------------ the pipelines' frames */

/* Each frame in flight needs a context of its own (its frame number, its
 * stamps): frame f runs on pipe_slots[f % PIPE_SLOTS]. A pipeline of depth
 * D submits frame f only after frame f - D finished, so with D + 1 slots a
 * slot is reused only after the frame after it finished too, and a body may
 * read the previous frame's slot. */
#define PIPE_SLOTS (DAGRT_MAX_IN_FLIGHT + 1)
static struct bench_ctx pipe_slots[PIPE_SLOTS];

/* The single frames of a pipeline (bench_pipe_next, bench_node). */
#define DIST_FRAMES 4000   /* single frames per contender, at most */
static int pipe_stamp;
static uint64_t pipe_end_base, pipe_end_n;
static double pipe_end_ns[DIST_FRAMES];

/* A checked pipeline frame: node idx of frame f must start after node idx
 * of frame f - 1 ended (when that frame was checked too), beside
 * bench_body's check that its predecessors ran in frame f. */
static void pipe_check(struct bench_ctx *c, int idx)
{
    if (c != &pipe_slots[c->frame % PIPE_SLOTS])
        return; /* not a pipeline frame */
    const struct bench_ctx *last = &pipe_slots[(c->frame - 1) % PIPE_SLOTS];
    if (!last->checked || last->frame != c->frame - 1)
        return;
    /* acquire: pairs with bench_body's release store of the stamp. */
    if (atomic_load_explicit(&last->node[idx].stamp, memory_order_acquire) != c->frame - 1)
        atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
}

/* The single frames of a pipeline: bench_pipe_next stores a frame's start
 * (its submit, ns) and bench_node its end (present's end) for frames
 * pipe_end_base .. pipe_end_base + pipe_end_n - 1. Set by the caller while
 * no frame is in flight; each form's submit orders them before the bodies. */
static double pipe_sub_ns[DIST_FRAMES];

struct bench_ctx *bench_pipe_next(struct bench_ctx *c)
{
    uint64_t f = ++c->frame;
    struct bench_ctx *s = &pipe_slots[f % PIPE_SLOTS];
    s->frame = f;
    /* Only when it changed: each write costs the bodies' threads a miss. */
    if (s->iters != c->iters)
        s->iters = c->iters;
    if (s->checked != c->checked)
        s->checked = c->checked;
    if (pipe_stamp && f - pipe_end_base < pipe_end_n)
        pipe_sub_ns[f - pipe_end_base] = bench_now_ns();
    return s;
}

/* --dump FILE: every node's start and end and whether the main thread ran
 * it, for the single frames of the libdagrt and floor rows (frames pipe_end_base ..
 * pipe_end_base + pipe_end_n - 1), written after each contender's share of
 * them. Costs two clock reads per node, so only when asked for. */
static FILE *dump_file;
static int dump_on;
static _Thread_local int on_main_thread;
static double dump_beg[DIST_FRAMES][BENCH_NODES], dump_end[DIST_FRAMES][BENCH_NODES];
static unsigned char dump_who[DIST_FRAMES][BENCH_NODES];
static double pipe_ret_ns[DIST_FRAMES];   /* the submit returned (libdagrt pipelines) */
static double dump_base;

void bench_node(struct bench_ctx *c, int idx)
{
    if (dump_on && c->frame - pipe_end_base < pipe_end_n) {
        uint64_t f = c->frame - pipe_end_base;
        dump_beg[f][idx] = bench_now_ns() - dump_base;
        bench_body(c, idx);
        dump_end[f][idx] = bench_now_ns() - dump_base;
        dump_who[f][idx] = (unsigned char)on_main_thread;
    } else {
        bench_body(c, idx);
    }
    if (c->checked)
        pipe_check(c, idx);
    if (idx == BENCH_NODES - 1 && pipe_stamp && c->frame - pipe_end_base < pipe_end_n)
        pipe_end_ns[c->frame - pipe_end_base] = bench_now_ns();
}

/* --------------------------------------------- the generated graph's API */

#define NODE(name, idx) \
    void bench_frame_##name(struct bench_ctx *c) { bench_node(c, idx); }
BENCH_FRAME_NODES(NODE)

/* ------------------------------------------------------------ contenders */

static dagrt *the_rt;
static int dagrt_errors;

static void dagrt_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        if (bench_frame_run(the_rt, c) != 0)
            dagrt_errors++;
    }
}

/* Moves the slots' error counts to c, where the checked runs read them,
 * after a ring's frames all ended. */
static void pipe_collect(struct bench_ctx *c)
{
    /* relaxed: plain counters; the ring's end ordered every body's
     * increment before these reads. */
    for (int k = 0; k < PIPE_SLOTS; k++)
        if (atomic_load_explicit(&pipe_slots[k].errors, memory_order_relaxed))
            atomic_fetch_add_explicit(&c->errors,
                atomic_exchange_explicit(&pipe_slots[k].errors, 0, memory_order_relaxed),
                memory_order_relaxed);
}

/* libdagrt's pipelines as rings (bench_peers.h): bench_frame_pipeline_submit waits
 * for frame f - depth itself. */
static bench_frame_pipeline_t pipes[2];   /* depth 2 and 3 */
static const unsigned pipe_depth[2] = {2, 3};

static void pipe_ring(int k, struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        if (bench_frame_pipeline_submit(the_rt, &pipes[k], bench_pipe_next(c)) != 0)
            dagrt_errors++;
        if (pipe_stamp && c->frame - pipe_end_base < pipe_end_n)
            pipe_ret_ns[c->frame - pipe_end_base] = bench_now_ns();
    }
    if (bench_frame_pipeline_drain(the_rt, &pipes[k]) != 0)
        dagrt_errors++;
}
static void pipe2_ring(struct bench_ctx *c, long n) { pipe_ring(0, c, n); }
static void pipe3_ring(struct bench_ctx *c, long n) { pipe_ring(1, c, n); }

/* The no-runtime floor's rings (bench_floor.c): the yardstick for the
 * pipelines' latency as the floor is for one frame at a time. */
static void floor2_ring(struct bench_ctx *c, long n) { bench_floor_ring(c, n, 2, bench_pipe_next, bench_node); }
static void floor3_ring(struct bench_ctx *c, long n) { bench_floor_ring(c, n, 3, bench_pipe_next, bench_node); }

/* The observer rows: set for the row's frames, removed after (records are
 * reused, so toggling allocates nothing after the first time). */
static void null_node(void *u, const dagrt_node_event *e)
{
    (void)u;
    (void)e;
}
static const dagrt_observer null_observer = {.node_begin = null_node, .node_end = null_node};

static void dagrt_observed_frames(struct bench_ctx *c, long n)
{
    dagrt_set_observer(the_rt, &null_observer, NULL);
    dagrt_frames(c, n);
    dagrt_set_observer(the_rt, NULL, NULL);
}

#ifdef HAVE_TRACY
/* The Tracy adapter's observer (integrations/tracy), its client on demand
 * with no profiler connected: what a shipped profiling build pays. */
#include "dagrt_tracy.h"
static void dagrt_tracy_frames(struct bench_ctx *c, long n)
{
    dagrt_tracy_install(the_rt);
    dagrt_frames(c, n);
    dagrt_set_observer(the_rt, NULL, NULL);
}
#endif

static void dagrt_traced_frames(struct bench_ctx *c, long n)
{
    dagrt_trace_start(the_rt, NULL);   /* the first start allocates the rings */
    dagrt_frames(c, n);
    dagrt_trace_stop(the_rt);
}

/* The peers (bench_omp.c, bench_tbb.cpp, bench_taskflow.cpp,
 * bench_enkits.cpp): one frame at a time, and a ring of depth
 * BENCH_RING_DEPTH (bench_peers.h). */
#ifdef HAVE_OMP
void bench_omp_frames(struct bench_ctx *c, long n);
void bench_omp_ring(struct bench_ctx *c, long n);
#endif
#ifdef HAVE_TBB
void bench_tbb_setup(struct bench_ctx *c, int threads);
void bench_tbb_frames(struct bench_ctx *c, long n);
void bench_tbb_ring(struct bench_ctx *c, long n);
void bench_tbb_teardown(void);
#endif
#ifdef HAVE_TASKFLOW
void bench_tf_setup(struct bench_ctx *c, int threads);
void bench_tf_frames(struct bench_ctx *c, long n);
void bench_tf_ring(struct bench_ctx *c, long n);
void bench_tf_teardown(void);
#endif
#ifdef HAVE_ENKITS
void bench_enki_setup(struct bench_ctx *c, int threads);
void bench_enki_frames(struct bench_ctx *c, long n);
void bench_enki_ring(struct bench_ctx *c, long n);
void bench_enki_teardown(void);
#endif

typedef struct contender {
    const char *name;
    const char *threads;
    /* n frames one at a time on c, or n frames of a ring (depth > 0). */
    void (*frames)(struct bench_ctx *c, long n);
    unsigned depth;
} contender;

static const contender contenders[] = {
    {"serial calls", "1 (caller)", bench_serial_frames, 0},
    {"dagc + libdagrt", "caller + 1 worker", dagrt_frames, 0},
    {"no runtime (floor)", "caller + 1 pthread", bench_floor_frames, 0},
    {"libdagrt pipeline 2", "caller + 1 worker", pipe2_ring, 2},
    {"libdagrt pipeline 3", "caller + 1 worker", pipe3_ring, 3},
    {"floor ring 2", "caller + 1 pthread", floor2_ring, 2},
    {"floor ring 3", "caller + 1 pthread", floor3_ring, 3},
#ifdef HAVE_OMP
    {"OpenMP depend", "2 (single + 1)", bench_omp_frames, 0},
    {"OpenMP depend ring 2", "2 (single + 1)", bench_omp_ring, BENCH_RING_DEPTH},
#endif
#ifdef HAVE_TBB
    {"oneTBB flow graph", "caller + 1 worker", bench_tbb_frames, 0},
    {"oneTBB graph ring 2", "caller + 1 worker", bench_tbb_ring, BENCH_RING_DEPTH},
#endif
#ifdef HAVE_TASKFLOW
    {"Taskflow run_n", "2 (caller waits)", bench_tf_frames, 0},
    {"Taskflow async ring 2", "2 (caller waits)", bench_tf_ring, BENCH_RING_DEPTH},
#endif
#ifdef HAVE_ENKITS
    {"enkiTS dependencies", "caller + 1 worker", bench_enki_frames, 0},
    {"enkiTS dep ring 2", "caller + 1 worker", bench_enki_ring, BENCH_RING_DEPTH},
#endif
#ifdef HAVE_TRACY
    {"libdagrt + Tracy hooks", "caller + 1 worker", dagrt_tracy_frames, 0},
#endif
    {"libdagrt + observer", "caller + 1 worker", dagrt_observed_frames, 0},
    {"libdagrt + trace", "caller + 1 worker", dagrt_traced_frames, 0},
};
#define NCONT (sizeof contenders / sizeof contenders[0])
#define DAGRT 1   /* contenders[DAGRT]: libdagrt */
#define FLOOR 2   /* contenders[FLOOR]: bench_floor.c */
#define PIPE2 3   /* contenders[PIPE2], [PIPE2 + 1]: pipelines of depth 2 and 3 */
#define OBSERVED (NCONT - 2)   /* the --observer and --trace rows, last */
#define TRACED (NCONT - 1)
#ifdef HAVE_TRACY
#define TRACY_ROW (NCONT - 3)   /* the --tracy row, before them */
#else
#define TRACY_ROW NCONT
#endif
static int want_observer, want_trace, want_tracy;

/* n frames of contender k; a ring's slots' errors then go to c. */
static void run_frames(const contender *k, struct bench_ctx *c, long n)
{
    k->frames(c, n);
    if (k->depth)
        pipe_collect(c);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed run: batches of frames until both minimums are met. */
static double timed_run(const contender *k, struct bench_ctx *c, double min_ns, long min_frames)
{
    long frames = 0;
    double t0 = bench_now_ns(), t;
    long batch = min_frames < 10000 ? min_frames : 10000;
    do {
        run_frames(k, c, batch);
        frames += batch;
        t = bench_now_ns();
    } while (frames < min_frames || t - t0 < min_ns);
    return (t - t0) / 1e3 / (double)frames;
}

/* The --dump lines of n single frames of contender k, latencies t: per
 * frame its latency, submit and submit-return stamps, then per node who
 * ran it (1: the main thread) and its start and end, us from dump_base. */
static void dump_frames(const contender *k, long n, const double *t, const double *sub)
{
    for (long f = 0; f < n; f++) {
        fprintf(dump_file, "%s\t%ld\t%.3f\t%.3f\t%.3f", k->name, f, t[f],
                sub ? (sub[f] - dump_base) / 1e3 : 0.0,
                sub && k->depth ? (pipe_ret_ns[f] - dump_base) / 1e3 : 0.0);
        for (int i = 0; i < BENCH_NODES; i++)
            fprintf(dump_file, "\t%d %.3f %.3f", dump_who[f][i], dump_beg[f][i] / 1e3,
                    dump_end[f][i] / 1e3);
        fputc('\n', dump_file);
    }
}

static int dumps(const contender *k);

/* Single pipelined frames: frame f's latency runs from its start to the
 * end of present, its last node. It starts at its submit or, with depth
 * frames in flight, at the end of frame f - depth if later (the submit
 * waits for that one first): the wait for a place in the pipeline is not
 * latency. */
static void ring_dist(const contender *k, struct bench_ctx *c, long frames, double *t)
{
    if (frames > DIST_FRAMES)
        frames = DIST_FRAMES;
    run_frames(k, c, frames / 4 + 1);   /* warm-up */
    pipe_end_base = c->frame + 1;
    pipe_end_n = (uint64_t)frames;
    pipe_stamp = 1;
    dump_on = dumps(k);
    run_frames(k, c, frames);
    dump_on = 0;
    pipe_stamp = 0;
    long d = (long)k->depth;
    for (long f = 0; f < frames; f++) {
        double start = f >= d && pipe_end_ns[f - d] > pipe_sub_ns[f] ? pipe_end_ns[f - d] : pipe_sub_ns[f];
        t[f] = (pipe_end_ns[f] - start) / 1e3;
    }
    if (dumps(k))
        dump_frames(k, frames, t, pipe_sub_ns);
}

/* Single frames timed one by one: the mean above says what a frame costs on
 * average, preemptions included; the percentiles say what a typical frame
 * costs, and how long the slow ones take. One clock read per frame (tens of
 * ns) is in each figure, the same for every contender. Appends frames
 * times (us) to t, after a warm-up of a quarter as many. */
static void frame_dist(const contender *k, struct bench_ctx *c, long frames, double *t)
{
    if (k->depth) {
        ring_dist(k, c, frames, t);
        return;
    }
    run_frames(k, c, frames / 4 + 1);   /* warm-up */
    if (frames > DIST_FRAMES)
        frames = DIST_FRAMES;
    pipe_end_base = c->frame + 1;
    pipe_end_n = (uint64_t)frames;
    dump_on = dumps(k);
    double prev = bench_now_ns();
    for (long f = 0; f < frames; f++) {
        pipe_sub_ns[f] = prev;
        run_frames(k, c, 1);
        double now = bench_now_ns();
        t[f] = (now - prev) / 1e3;
        prev = now;
    }
    dump_on = 0;
    pipe_end_n = 0;
    if (dumps(k))
        dump_frames(k, frames, t, pipe_sub_ns);
}

/* Whether --dump records contender k: the libdagrt rows. */
static int dumps(const contender *k)
{
    return dump_file && (strstr(k->name, "libdagrt") || strstr(k->name, "floor"));
}

/* Contender k of round r: forwards in even rounds, backwards in odd ones. */
static size_t round_order(int r, size_t j)
{
    return r % 2 ? NCONT - 1 - j : j;
}

static void print_pingpong(const char *when, int quick)
{
    double lo, hi, med = bench_pingpong_ns(quick ? 20000 : 200000, quick ? 3 : 5, quick ? 20 : 1000, &lo, &hi);
    if (med < 0)
        printf("cache-line round trip at the %s: not measured (no thread)\n", when);
    else
        printf("cache-line round trip at the %s: %.0f ns (median of %d; min %.0f, max %.0f)\n",
               when, med, quick ? 3 : 5, lo, hi);
}

static const char *only_name;
/* Whether a contender named name runs (--only NAME[,NAME...]: any NAME is
 * part of its name). */
static int name_selected(const char *name)
{
    if (!only_name)
        return 1;
    for (const char *p = only_name; *p;) {
        size_t n = strcspn(p, ",");
        char want[64];
        if (n > 0 && n < sizeof want) {
            memcpy(want, p, n);
            want[n] = '\0';
            if (strstr(name, want))
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Whether contender k runs; the serial calls always run, every ratio is
 * over them. */
static int selected(size_t k)
{
    if ((k == OBSERVED && !want_observer) || (k == TRACED && !want_trace) ||
        (k == TRACY_ROW && !want_tracy))
        return 0;
    return k == 0 || name_selected(contenders[k].name);
}

/* --each: every timed run's us per frame, round by round (a median hides
 * one slow round: the run policy's reference stretch showed in one round
 * in five this way, docs/benchmarks-log.md). */
static void print_each(const char *what, double t[][101], int runs, int prec)
{
    printf("every run, %s, us per frame (rounds in order):\n", what);
    for (size_t k = 0; k < NCONT; k++) {
        if (!selected(k))
            continue;
        printf("  %-22s", contenders[k].name);
        for (int r = 0; r < runs; r++)
            printf(" %.*f", prec, t[k][r]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int runs = 5;
    double min_ms = 100;
    long min_frames = 10000;
    int workers = 1;
    int load = 0, quick = 0;
    const char *only = NULL;
    const char *frames = "all";
    int each = 0;
    dagrt_placement placement = DAGRT_PLACEMENT_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc)
            min_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--frame") == 0 && i + 1 < argc)
            frames = argv[++i];
        else if (strcmp(argv[i], "--fault") == 0)
            shape_fault = 1;
        else if (strcmp(argv[i], "--each") == 0)
            each = 1;
        else if (strcmp(argv[i], "--load") == 0) {
            load = 1;
            if (i + 1 < argc && argv[i + 1][0] >= '1' && argv[i + 1][0] <= '9')
                load = atoi(argv[++i]);
            if (load > 16)
                load = 16;
        } else if (strcmp(argv[i], "--quick") == 0)
            runs = 1, min_ms = 5, min_frames = 200, quick = 1;
        else if (strcmp(argv[i], "--placement") == 0 && i + 1 < argc &&
                 (strcmp(argv[i + 1], "auto") == 0 || strcmp(argv[i + 1], "none") == 0 ||
                  strcmp(argv[i + 1], "pin") == 0)) {
            i++;
            placement = strcmp(argv[i], "none") == 0  ? DAGRT_PLACEMENT_NONE
                      : strcmp(argv[i], "pin") == 0   ? DAGRT_PLACEMENT_PIN
                                                       : DAGRT_PLACEMENT_AUTO;
        }
        else if (strcmp(argv[i], "--observer") == 0)
            want_observer = 1;
        else if (strcmp(argv[i], "--tracy") == 0)
            want_tracy = 1;
        else if (strcmp(argv[i], "--trace") == 0)
            want_trace = 1;
        else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
            if (!(dump_file = fopen(argv[++i], "w"))) {
                fprintf(stderr, "bench_frame: cannot write %s\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [--frame all|uniform|game|layered[,...]] [--fault] [--runs N] [--min-ms MS] [--workers N] [--only NAME[,NAME...]] [--load [N]] [--quick] [--placement auto|none|pin] [--observer] [--tracy] [--trace] [--dump FILE] [--each]\n",
                    argv[0]);
            return 2;
        }
    }
    /* --frame: the uniform frame's sections and the uneven frames
     * (shapes.c), any of them, by name; "all" (the default): every one. */
    int want_uniform = strcmp(frames, "all") == 0;
    for (const char *p = frames; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 7 && strncmp(p, "uniform", 7) == 0)
            want_uniform = 1;
        else if (n == 3 && strncmp(p, "all", 3) == 0)
            want_uniform = 1, frames = "all";   /* all, whatever else the list names */
        else if (!(n == 4 && strncmp(p, "game", 4) == 0) &&
                 !(n == 7 && strncmp(p, "layered", 7) == 0)) {
            fprintf(stderr, "bench_frame: --frame: not a frame: %.*s (all, uniform, game, layered)\n",
                    (int)n, p);
            return 2;
        }
        p += n + (p[n] == ',');
    }
    if (runs < 1 || runs > 101)
        runs = 5;
    only_name = only;
    on_main_thread = 1;
    dump_base = bench_now_ns();

    static struct bench_ctx ctx;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;      /* 1 + the calling thread: 2 task threads */
    cfg.no_workers = workers == 0;
    cfg.placement = placement;  /* A/B of the placement default (docs/benchmarks-log.md) */
    int err = 0;
    the_rt = dagrt_create_ex(&cfg, &err);
    if (!the_rt) {
        fprintf(stderr, "bench_frame: dagrt_create_ex: %s\n", dagrt_strerror(err));
        return 1;
    }
    /* What the runtime uses: DAGRT_PLACEMENT replaces the default. */
    placement = dagrt_get_placement(the_rt);
    printf("placement: %s\n", placement == DAGRT_PLACEMENT_NONE    ? "none"
                             : placement == DAGRT_PLACEMENT_PIN   ? "pin"
                             : placement == DAGRT_PLACEMENT_CLASS ? "class"
                                                                   : "auto");
    for (int k = 0; k < 2; k++)
        if (bench_frame_pipeline_init(&pipes[k], pipe_depth[k]) != 0) {
            fprintf(stderr, "bench_frame: bench_frame_pipeline_init failed\n");
            return 1;
        }
    int failed = 0;
    if (!want_uniform)
        goto uneven;
#ifdef HAVE_TBB
    bench_tbb_setup(&ctx, 2);
#endif
#ifdef HAVE_TASKFLOW
    bench_tf_setup(&ctx, 2);
#endif
#ifdef HAVE_ENKITS
    bench_enki_setup(&ctx, 2);
#endif
    if (bench_floor_setup(&ctx, bench_body) != 0) {
        fprintf(stderr, "bench_frame: cannot start the floor's pthread\n");
        return 1;
    }
    printf("build: %s\n", BENCH_BUILD);
    print_pingpong("start", quick);
    uint64_t iters_1us = bench_calibrate(1000.0);
    printf("frame graph: 32 nodes, 58 edges, critical path 8; 1 us body = %llu LCG steps\n",
           (unsigned long long)iters_1us);
    printf("us per frame, median (best) of %d runs of >= %.0f ms and >= %ld frames, in rounds "
           "(contenders forwards, then backwards)\n", runs, min_ms, min_frames);
    if (load) {
        if (bench_load_start(load) != 0) {
            fprintf(stderr, "bench_frame: cannot start the load\n");
            return 1;
        }
        printf("UNDER LOAD: %d busy-looping process%s beside this one, from here to the single "
               "frames; every ratio is over the serial calls measured under the same load\n",
               load, load > 1 ? "es" : "");
    }
    printf("\n");

    const uint64_t iters[2] = {0, iters_1us};
    const char *label[2] = {"empty bodies", "1 us bodies"};
    double serial_med[2] = {0, 0};
    printf("%-22s %-20s %18s %18s %10s %10s\n", "contender", "task threads", label[0], label[1],
           "x serial", "x serial");
    double res[NCONT][2][2];
    static bench_cpu_sample cpu[NCONT];   /* the timed runs' totals, 1 us bodies */
    for (int b = 0; b < 2; b++) {
        ctx.iters = iters[b];
        ctx.checked = 0;
        static double t[NCONT][101];
        for (int r = 0; r < runs; r++) {
            for (size_t j = 0; j < NCONT; j++) {
                size_t k = round_order(r, j);
                if (!selected(k))
                    continue;
                /* Its own warm-up: the previous contender's threads may
                 * still be spinning, and this one's are asleep. */
                timed_run(&contenders[k], &ctx, min_ms * 1e6 / (r ? 10 : 4),
                          min_frames / (r ? 10 : 4));
                bench_cpu_sample c0, c1;
                bench_load_sample(&c0);
                t[k][r] = timed_run(&contenders[k], &ctx, min_ms * 1e6, min_frames);
                bench_load_sample(&c1);
                if (b == 1)
                    bench_load_add(&cpu[k], &c0, &c1);
            }
        }
        if (each)   /* before the sort: the rounds in order */
            print_each(label[b], t, runs, 2);
        for (size_t k = 0; k < NCONT; k++) {
            if (!selected(k))
                continue;
            qsort(t[k], (size_t)runs, sizeof t[k][0], cmp_double);
            res[k][b][0] = t[k][runs / 2];
            res[k][b][1] = t[k][0];
        }
        serial_med[b] = res[0][b][0];
    }
    for (size_t k = 0; k < NCONT; k++) {
        if (!selected(k))
            continue;
        char e[2][40];
        for (int b = 0; b < 2; b++)
            snprintf(e[b], sizeof e[b], "%.2f (%.2f)", res[k][b][0], res[k][b][1]);
        printf("%-22s %-20s %18s %18s %10.2f %10.2f\n", contenders[k].name, contenders[k].threads,
               e[0], e[1], res[k][0][0] / serial_med[0], res[k][1][0] / serial_med[1]);
    }
    if (load) {
        bench_load_cpu_header();
        for (size_t k = 0; k < NCONT; k++)
            if (selected(k))
                bench_load_cpu_row(contenders[k].name, &cpu[k]);
    }
    printf("\n2-core ideal with 1 us bodies: 16 us/frame (32 us of work on 2 threads)\n");
    /* Only with 1 us bodies: the floor always runs both threads, while
     * libdagrt runs a frame of empty bodies on the caller alone. */
    if (selected(DAGRT) && selected(FLOOR))
        printf("libdagrt over the no-runtime floor, 1 us bodies: %.3f\n",
               res[DAGRT][1][0] / res[FLOOR][1][0]);
    /* The pipelines against the 2-core limit (0.50x serial) and the target. */
    for (size_t k = PIPE2; k <= PIPE2 + 1; k++)
        if (selected(k))
            printf("%s, 1 us bodies: %.3f x serial (2-core limit 0.50, target <= 0.53)\n",
                   contenders[k].name, res[k][1][0] / serial_med[1]);
    /* G_run right after a batch of other work, as the peer harnesses run
     * it: batches of serial calls and of bench_frame_run alternate, each
     * timed alone; the policy must not take the worker that parked during
     * the serial batch for one that gets no CPU. */
    if (selected(DAGRT)) {
        ctx.iters = iters_1us;
        long batch = quick ? 200 : 3000;
        int pairs = runs < 3 ? 3 : runs;
        static double ts[101], tg[101];
        for (int r = 0; r < pairs; r++) {
            double t0 = bench_now_ns();
            run_frames(&contenders[0], &ctx, batch);
            double t1 = bench_now_ns();
            run_frames(&contenders[DAGRT], &ctx, batch);
            double t2 = bench_now_ns();
            ts[r] = (t1 - t0) / 1e3 / (double)batch;
            tg[r] = (t2 - t1) / 1e3 / (double)batch;
        }
        qsort(ts, (size_t)pairs, sizeof ts[0], cmp_double);
        qsort(tg, (size_t)pairs, sizeof tg[0], cmp_double);
        printf("libdagrt right after serial calls, 1 us bodies, %d alternating batches of %ld frames: "
               "%.2f us (range %.2f-%.2f) against serial %.2f: %.3f x serial (target <= 0.60)\n",
               pairs, batch, tg[pairs / 2], tg[0], tg[pairs - 1], ts[pairs / 2],
               tg[pairs / 2] / ts[pairs / 2]);
    }
    /* What observing costs, against the plain libdagrt row of this run. */
    for (size_t k = OBSERVED; k <= TRACED; k++)
        if (selected(k) && selected(DAGRT))
            printf("%s: %+.1f%% with 1 us bodies, %+.1f ns per node on empty frames\n",
                   contenders[k].name, 100.0 * (res[k][1][0] / res[DAGRT][1][0] - 1.0),
                   (res[k][0][0] - res[DAGRT][0][0]) * 1e3 / 32.0);


    /* The distribution of single frames with 1 us bodies, in the same
     * rounds as the means above, each round a share of the frames. */
    ctx.iters = iters_1us;
    long dist = min_frames < DIST_FRAMES ? min_frames : (long)DIST_FRAMES;
    long per_round = dist / runs > 0 ? dist / runs : 1;
    dist = per_round * runs;
    static double d[NCONT][DIST_FRAMES];
    for (int r = 0; r < runs; r++)
        for (size_t j = 0; j < NCONT; j++)
            if (selected(round_order(r, j)))
                frame_dist(&contenders[round_order(r, j)], &ctx, per_round,
                           d[round_order(r, j)] + r * per_round);
    if (load)
        bench_load_stop();
    printf("\nsingle frames, 1 us bodies, %ld frames each in %d rounds (us):\n", dist, runs);
    printf("%-22s %9s %9s %9s %9s\n", "contender", "p50", "p99", "max", "p99/p50");
    for (size_t k = 0; k < NCONT; k++) {
        if (!selected(k))
            continue;
        qsort(d[k], (size_t)dist, sizeof d[k][0], cmp_double);
        double p50 = d[k][dist / 2], p99 = d[k][dist * 99 / 100];
        printf("%-22s %9.2f %9.2f %9.2f %9.2f\n", contenders[k].name, p50, p99, d[k][dist - 1],
               p99 / p50);
    }
    if (load)
        printf("(load stopped)\n");
    printf("\n");

    /* Allocations per frame on libdagrt, after the first frames: empty
     * bodies (the frame runs on the caller alone) and 1 us bodies (with one
     * worker, the executor's plan mode, runtime/exec/exec.c), one at a time and
     * in the pipelines. */
    static const contender *const counted[] = {&contenders[DAGRT], &contenders[PIPE2],
                                               &contenders[PIPE2 + 1]};
    for (int b = 0; b < 2; b++)
        for (size_t k = 0; k < sizeof counted / sizeof counted[0]; k++) {
            long n = b ? min_frames : 10000;
            ctx.iters = iters[b];
            run_frames(counted[k], &ctx, 200);   /* also lets the inline policy settle */
            unsigned long a0 = alloc_count();
            run_frames(counted[k], &ctx, n);
            unsigned long a1 = alloc_count();
            printf("%s allocations per frame, %s: %.4f (%lu in %ld frames)\n",
                   k ? counted[k]->name : "libdagrt", label[b], (double)(a1 - a0) / (double)n,
                   a1 - a0, n);
            failed |= a1 != a0;
        }

    /* Checked runs: every node verifies its predecessors ran this frame. */
    ctx.iters = iters_1us / 8;
    ctx.checked = 1;
    for (size_t k = 0; k < NCONT; k++) {
        if (!selected(k))
            continue;
        atomic_store(&ctx.errors, 0);
        run_frames(&contenders[k], &ctx, min_frames / 5 + 1);
        int e = atomic_load(&ctx.errors);
        printf("checked run %-22s %s\n", contenders[k].name, e ? "ORDER VIOLATED" : "ordering ok");
        failed |= e != 0;
    }
    if (dagrt_errors) {
        printf("bench_frame_run returned errors %d times\n", dagrt_errors);
        failed = 1;
    }
#ifdef HAVE_TBB
    bench_tbb_teardown();
#endif
#ifdef HAVE_TASKFLOW
    bench_tf_teardown();
#endif
#ifdef HAVE_ENKITS
    bench_enki_teardown();
#endif
    bench_floor_teardown();
    print_pingpong("end", quick);
uneven:
    if (!want_uniform)
        printf("build: %s\n", BENCH_BUILD);
    /* The uneven frames, after the uniform frame's peers are gone (oneTBB's
     * global_control would cap the threads of the next one). */
    struct shape_opts so = {.runs = runs, .quick = quick, .load = load, .each = each,
                            .min_ms = min_ms, .min_frames = quick ? 10 : 50,
                            .want = name_selected};
    failed |= shapes_main(the_rt, workers + 1, frames, &so);
    dagrt_destroy(the_rt);
    if (dump_file)
        fclose(dump_file);
    return failed;
}
