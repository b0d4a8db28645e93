/* alloc_frame.c - after the first frames, running a frame allocates
 * nothing: the example game's whole frame graph (main, hot, fiber and
 * parallel tasks, a gate, an OR join, a `when`) runs 1000 frames while every
 * malloc/calloc/realloc of every thread is counted; then as many frames of
 * two instances started together (frame_instance_start, frame_instance_wait) and of
 * frame_instance_run; then of two pipelines at once (frame_pipeline_submit,
 * frame_pipeline_drain). Live costs are on throughout (every plan frame
 * timed), and a last phase runs live_scenario.c's graph, whose costs change
 * mid-run, with G_run and a pipeline: its re-plans allocate nothing either.
 * The streaming task reads the example's asset
 * files through the reactor (frame-assets beside this program), so the
 * I/O calls from a fiber are counted too; and before the frames, each
 * worker's first I/O call, after the main thread's made the reactor. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc_count.h"
#include "fmem.h"
#include "fmem_scenario.h"
#include "frame.h"
#include "live_scenario.h"
#include "scenario.h"

/* Workers seen running a task. A worker thread allocates once when it
 * starts (glibc's pthread_getattr_np, for its stack bounds), and on a
 * loaded machine it may first run only after the warm-up frames: measured,
 * 4 runs in 100 counted that start-up in the frames. So the test first
 * waits until every worker has run a task. */
static pthread_t main_thread;
static _Thread_local int marked;
static _Atomic int workers_seen;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void mark(void *arg)
{
    (void)arg;
    if (!marked && !pthread_equal(pthread_self(), main_thread)) {
        marked = 1;
        /* relaxed: only counted; the group wait orders it before the read. */
        atomic_fetch_add_explicit(&workers_seen, 1, memory_order_relaxed);
    }
    /* Long enough that idle workers take some of the tasks. */
    double t0 = now_s();
    while (now_s() - t0 < 20e-6)
        ;
}

/* Where an allocation in a counted stretch came from: its thread and call
 * stack (addresses for addr2line), kept for the first few and printed
 * when the count is not 0, so that a rare one names its cause. */
#define STRAYS 4
static struct {
    void *pc[32];
    int n;
    size_t size;
    char thread[16];
} stray[STRAYS];
static _Atomic int counting, nstray;
static _Thread_local int in_hook;

static void on_alloc(size_t size)
{
    /* relaxed: the flag is set and cleared by the main thread between
     * frames; an allocation racing its change is counted either way. */
    if (in_hook || !atomic_load_explicit(&counting, memory_order_relaxed))
        return;
    in_hook = 1;   /* backtrace itself must not be recorded */
    /* relaxed: a slot index; the slots are read after the threads are joined. */
    int i = atomic_fetch_add_explicit(&nstray, 1, memory_order_relaxed);
    if (i < STRAYS) {
        stray[i].size = size;
        if (pthread_getname_np(pthread_self(), stray[i].thread, sizeof stray[i].thread) != 0)
            stray[i].thread[0] = 0;
        stray[i].n = backtrace(stray[i].pc, 32);
    }
    in_hook = 0;
}

static void count_from_here(bool on) { atomic_store(&counting, on); }

static void print_strays(void)
{
    int n = atomic_load(&nstray);
    for (int i = 0; i < n && i < STRAYS; i++) {
        fprintf(stderr, "alloc_frame: allocation %d of %d (%zu bytes) on thread '%s':\n", i + 1, n,
                stray[i].size, stray[i].thread);
        fflush(stderr);
        backtrace_symbols_fd(stray[i].pc, stray[i].n, 2);
    }
}

/* Each thread's first I/O call, once the reactor exists (made by the
 * main thread's first call): the task that streams may first run on a
 * worker many frames in, after the warm-up, so a worker's first call must
 * allocate nothing either (its ring and its records come with the
 * reactor: io.c, RT_IO_SHARDS). */
static const struct game_assets *first_assets;
static _Thread_local int read_once;
static _Atomic int workers_read, first_read_bad;

static void first_read(void *arg)
{
    dagrt *rt = arg;
    if (read_once || pthread_equal(pthread_self(), main_thread))
        return;
    read_once = 1;
    unsigned char b[64];
    if (dagrt_read(rt, first_assets->row[0], b, sizeof b, 0, NULL) != (int64_t)sizeof b)
        atomic_store(&first_read_bad, 1);
    /* relaxed: only counted; the group wait orders it before the read. */
    atomic_fetch_add_explicit(&workers_read, 1, memory_order_relaxed);
}

/* Rounds of 4 tasks per worker, each beside a busy `mark` (so that idle
 * workers take some), until *seen reaches the worker count: 0, or 1 on a
 * failed spawn or wait or after 10 s. */
static int rounds_until(dagrt *rt, _Atomic int *seen, void (*task)(void *), void *arg)
{
    int n = dagrt_worker_count(rt);
    double t0 = now_s();
    while (atomic_load(seen) < n) {
        if (now_s() - t0 > 10.0)
            return 1;
        dagrt_group grp;
        dagrt_group_init(&grp);
        for (int i = 0; i < 4 * n; i++)
            if (dagrt_spawn(rt, &grp, task, arg) != 0 || dagrt_spawn(rt, &grp, mark, NULL) != 0)
                return 1;
        if (dagrt_group_wait(rt, &grp) != 0)
            return 1;
    }
    return 0;
}

static int first_reads(dagrt *rt)
{
    return rounds_until(rt, &workers_read, first_read, rt) || atomic_load(&first_read_bad);
}

static int wait_for_workers(dagrt *rt) { return rounds_until(rt, &workers_seen, mark, NULL); }

static int alloc_frame(void)
{
    main_thread = pthread_self();
    static struct game g, g2;
    static frame_instance_t ia, ib;
    /* A control first: the counter does see allocations. Before the
     * runtime exists: a worker starting up allocates too (see above), and
     * would make the count differ (seen once in 544 runs). */
    void *pcs[4];
    (void)backtrace(pcs, 4);   /* its first call loads the unwinder, which allocates */
    alloc_count_set_hook(on_alloc);
    unsigned long c0 = alloc_count();
    void *volatile probe = malloc(16); /* volatile: the pair must not be optimised away */
    free(probe);
    if (alloc_count() != c0 + 1) {
        printf("alloc_frame: the malloc counter does not work\n");
        return 1;
    }
    /* Frame memory's chunks made at create: one per thread for each frame
     * alive at once (the frame memory phase below: an instance and a
     * pipeline of depth 3, two frames alive per state, 8 in all), and as
     * many again for a thread that needs a second chunk in a frame. */
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg.frame_reserve = (size_t)(cpus > 0 ? cpus : 1) * 8 * 2 * 65536;
    cfg.live_costs = 1;   /* every plan frame timed, re-plans where costs drift */
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    /* The asset files beside this program (written on its first run). */
    static struct game_assets assets;
    char dir[1024], self[900], why[1200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    const char *slash = strrchr(self, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s/frame-assets", (int)(slash - self), self);
    else
        snprintf(dir, sizeof dir, "frame-assets");
    if (game_assets_open(&assets, rt, dir, why, sizeof why) != 0) {
        printf("alloc_frame: %s\n", why);
        return 1;
    }
    game_init(&g, rt, &assets);
    game_init(&g2, rt, &assets);
    frame_instance_init(&ia);
    frame_instance_init(&ib);
    if (wait_for_workers(rt) != 0) {
        printf("alloc_frame: the workers did not all start within 10 s\n");
        return 1;
    }
    /* The main thread's first call makes the reactor; then each worker's
     * first call, counted. */
    unsigned char b0buf[64];
    if (dagrt_read(rt, assets.row[0], b0buf, sizeof b0buf, 0, NULL) != (int64_t)sizeof b0buf) {
        printf("alloc_frame: the main thread's first read failed\n");
        return 1;
    }
    first_assets = &assets;
    unsigned long r0 = alloc_count();
    count_from_here(true);
    if (first_reads(rt) != 0) {
        printf("alloc_frame: the workers' first reads failed or did not all run within 10 s\n");
        return 1;
    }
    count_from_here(false);
    unsigned long r1 = alloc_count();
    if (r1 != r0) {
        printf("alloc_frame: %lu allocations in the workers' first I/O calls (%d workers)\n", r1 - r0,
               dagrt_worker_count(rt));
        print_strays();
        return 1;
    }
    for (int f = 0; f < 20; f++)
        if (frame_run(rt, &g) != 0)
            return 1;
    unsigned long a0 = alloc_count();
    count_from_here(true);
    for (int f = 0; f < 1000; f++)
        if (frame_run(rt, &g) != 0)
            return 1;
    count_from_here(false);
    unsigned long a1 = alloc_count();
    /* Started runs: two instances in flight, then a synchronous one. */
    unsigned long b0 = 0;
    for (int f = 0; f < 1020; f++) {
        if (f == 20) {
            b0 = alloc_count();   /* after the instances' own warm-up */
            count_from_here(true);
        }
        if (frame_instance_start(rt, &ia, &g) != 0 || frame_instance_start(rt, &ib, &g2) != 0 ||
            frame_instance_wait(rt, &ia) != 0 || frame_instance_wait(rt, &ib) != 0 ||
            frame_instance_run(rt, &ia, &g) != 0)
            return 1;
    }
    count_from_here(false);
    unsigned long b1 = alloc_count();
    /* Two pipelines at once, of depth 2 and 3 (frame_pipeline_submit, frame_pipeline_drain),
     * drained now and then so that they idle and start again. Each frame
     * of a pipeline has a game of its own slot: overlapping frames share
     * no game. */
    static struct game p2g[2], p3g[3];
    static frame_pipeline_t p2, p3;
    for (int k = 0; k < 2; k++)
        game_init(&p2g[k], rt, &assets);
    for (int k = 0; k < 3; k++)
        game_init(&p3g[k], rt, &assets);
    if (frame_pipeline_init(&p2, 2) != 0 || frame_pipeline_init(&p3, 3) != 0)
        return 1;
    unsigned long p0 = 0;
    for (int f = 0; f < 1020; f++) {
        if (f == 20) {
            p0 = alloc_count();   /* after the pipelines' own warm-up */
            count_from_here(true);
        }
        if (frame_pipeline_submit(rt, &p2, &p2g[f % 2]) != 0 || frame_pipeline_submit(rt, &p3, &p3g[f % 3]) != 0)
            return 1;
        if (f % 100 == 99 && (frame_pipeline_drain(rt, &p2) != 0 || frame_pipeline_drain(rt, &p3) != 0))
            return 1;
    }
    if (frame_pipeline_drain(rt, &p2) != 0 || frame_pipeline_drain(rt, &p3) != 0)
        return 1;
    count_from_here(false);
    unsigned long p1 = alloc_count();
    /* Frame memory in use (fmem.dag: every task allocates in its frame,
     * small sizes, no allocation over a chunk): an instance and a pipeline
     * of depth 3; after their warm-up, chunks come back for reuse. */
    static struct fmem_ctx fc, fc2;
    static fmem_instance_t fi;
    static fmem_pipeline_t fp;
    fmem_ctx_init(&fc, rt, 8, 32);
    fmem_ctx_init(&fc2, rt, 8, 32);
    fc.max_size = fc2.max_size = 256;
    fc.big_every = fc2.big_every = 0;
    if (fmem_instance_init(&fi) != 0 || fmem_pipeline_init(&fp, 3) != 0)
        return 1;
    unsigned long m0 = 0;
    for (int f = 0; f < 1100; f++) {
        if (f == 100) {
            m0 = alloc_count();   /* after the chunks' warm-up */
            count_from_here(true);
        }
        if (fmem_instance_run(rt, &fi, &fc) != 0 || fmem_pipeline_submit(rt, &fp, &fc2) != 0)
            return 1;
    }
    if (fmem_pipeline_drain(rt, &fp) != 0)
        return 1;
    count_from_here(false);
    unsigned long m1 = alloc_count();
    if (atomic_load(&fc.bad) != 0 || atomic_load(&fc2.bad) != 0 ||
        atomic_load(&fc.checked) != 1100 || atomic_load(&fc2.checked) != 1100) {
        printf("alloc_frame: the frame memory graph failed its checks\n");
        return 1;
    }
    /* Costs that change mid-run (live_scenario.c): re-plans between
     * frames, of G_run's state and of a pipeline's (after its frames in
     * flight). A first pass of each warms up, uncounted. */
    live_result lr[2];
    for (int pipe = 0; pipe < 2; pipe++)
        if (live_frames(rt, pipe, 60, 100, &lr[pipe]) != 0)
            return 1;
    unsigned long l0 = alloc_count();
    count_from_here(true);
    for (int pipe = 0; pipe < 2; pipe++)
        if (live_frames(rt, pipe, 60, 100, &lr[pipe]) != 0)
            return 1;
    count_from_here(false);
    unsigned long l1 = alloc_count();
    if (lr[0].all <= lr[0].before || lr[1].all <= lr[1].before) {
        printf("alloc_frame: the live costs phase did not re-plan after its cost change (G_run "
               "%llu, pipeline %llu re-plans)\n", (unsigned long long)(lr[0].all - lr[0].before),
               (unsigned long long)(lr[1].all - lr[1].before));
        return 1;
    }
    uint64_t streamed = g.streamed + g2.streamed, bad = g.stream_bad + g2.stream_bad;
    game_assets_close(&assets, rt);
    dagrt_destroy(rt);
    if (streamed == 0 || bad != 0) {
        printf("alloc_frame: %llu cells streamed, %llu bad: the streaming task did not read its "
               "files\n", (unsigned long long)streamed, (unsigned long long)bad);
        return 1;
    }
    printf("alloc_frame: %lu allocations in 1000 frames after warm-up, %lu in 1000 of two "
           "started instances and one instance_run, %lu in 1000 frames of two pipelines "
           "(depth 2 and 3), %lu in 1000 frames of an instance and a pipeline using frame "
           "memory, %lu in 320 frames whose costs change (%llu re-plans)\n", a1 - a0, b1 - b0,
           p1 - p0, m1 - m0, l1 - l0, (unsigned long long)(lr[0].all + lr[1].all));
    if (a1 != a0 || b1 != b0 || p1 != p0 || m1 != m0 || l1 != l0) {
        print_strays();
        return 1;
    }
    return 0;
}

/* Hosted by the plain driver alone (tests/scenario/driver.c): it counts
 * every allocation of its process, which Criterion's own threads would
 * add to. */
const scenario scenario_table[] = {
    {"alloc_frame", alloc_frame, NULL},
    {NULL, NULL, NULL},
};
