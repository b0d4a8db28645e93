/* crowd_held.c - on a crowded CPU the run policy judges the dynamic
 * executor's frames by the clock, not by "held" (runtime/exec/policy.c,
 * rt_policy_dyn_after; docs/runtime.md, "A shared CPU"): the entry
 * crowd_held of exec_list.h.
 *
 * The crowded sign is fixed by the runtime's tests' seam (rt_crowd_fix(1),
 * as DAGRT_CROWDED=1), so every frame runs on the dynamic executor. One
 * worker; a hand-made graph (a root, 6 middle tasks, a sink; 20 us each).
 * A drainer "preempted while it holds a node" is a body that sleeps when
 * it runs off the main thread in an armed frame: the caller, with nothing
 * left to take, waits blocked for it (the held sign of exec/policy.c).
 * - (a) G_run, every 4th frame armed, HOLD_MS: the caller is held, and
 *   the policy starts no serial stretch (dagrt_graph_stats.stretch_runs
 *   stays 0): on a crowded CPU such waits are the norm, and sharing is
 *   judged by the frames' times. Not crowded, each such frame is a
 *   verdict (tests/exec/policy_dyn.c, (d)).
 * - (b) the same with started runs (dagrt_graph_start / dagrt_graph_wait).
 * - (c) G_run, every frame armed, SLOW_MS on every node a drainer runs:
 *   shared frames take far longer than serial ones, and the clock says
 *   so: after the reference stretch (REF_SAMPLES timed frames, then
 *   PLAN_SERIAL_MIN serial frames) the probes fail and the stretches go
 *   on (stretch_runs past PLAN_SERIAL_MIN). Judged once SLOW_JUDGED
 *   frames were slowed (a worker that seldom wakes in time runs few
 *   nodes, and then sharing costs nothing).
 * Every task once per frame, after its inputs, throughout.
 * Checked against the change undone: with the held sign taken whether
 * crowded or not (main 5b49118), (a) and (b) failed (71 and 16
 * serial-stretch frames after the first held frames); with held ignored
 * but no reference stretch for a dynamic-only state (its since_probe not
 * "none yet"), (c) failed (0 serial-stretch frames: no serial time to
 * compare with). Only (c)'s ratio of times is a timing, and it is a
 * factor of ten and more. */
#if defined(__linux__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "crowd_held.h"
#include "dagrt.h"
#include "pipe2.h"

#if defined(_WIN32)
#include <windows.h>
#endif

/* The runtime's seam (runtime/exec/exec.h): 1 fixes "crowded", -1 samples. */
void rt_crowd_fix(int v);

#define CH_MIDS 6
#define CH_NODES (CH_MIDS + 2)
#define CH_SINK (CH_NODES - 1)
#define CH_US 20         /* a node's work: above exec/crowd.c's tiny-node floor */
#define HOLD_MS 5        /* (a), (b): one drainer's node, every 4th frame */
#define SLOW_MS 2        /* (c): every node a drainer runs */
#define HELD_FRAMES 100  /* (a), (b): fewer timed frames than REF_SAMPLES (32) */
#define PLAN_SERIAL_MIN 16   /* exec/policy.c: a stretch's first span */

typedef struct ch_ctx {
    int frame;
    _Atomic unsigned at[CH_NODES];
} ch_ctx;

static dagrt *the_rt;
static _Atomic int runs[CH_NODES];
static _Atomic int bad_order;
/* 0 not armed; HOLD_MS: the first node a drainer runs this frame sleeps;
 * SLOW_MS: every node a drainer runs sleeps. */
static _Atomic int armed;
static _Atomic int slept;   /* frames in which a drainer slept */
static _Atomic int slow_frame;   /* (c): this frame already counted */

static void ch_sleep_ms(int ms)
{
#if defined(_WIN32)
    Sleep((DWORD)ms);
#else
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
#endif
}

static void ch_body(ch_ctx *c, int i)
{
    /* Inputs of this frame before it (acquire: pairs with the release below). */
    if (i == CH_SINK) {
        for (int k = 1; k <= CH_MIDS; k++)
            if (atomic_load_explicit(&c->at[k], memory_order_acquire) == 0)
                atomic_fetch_add(&bad_order, 1);
    } else if (i != 0 && atomic_load_explicit(&c->at[0], memory_order_acquire) == 0) {
        atomic_fetch_add(&bad_order, 1);
    }
    if (atomic_load_explicit(&c->at[i], memory_order_relaxed) != 0)
        atomic_fetch_add(&bad_order, 1);   /* twice in one frame */
    if (!dagrt_on_main_thread(the_rt)) {
        int a = atomic_load(&armed);
        if (a == SLOW_MS) {
            if (atomic_exchange(&slow_frame, 1) == 0)
                atomic_fetch_add(&slept, 1);   /* frames slowed, once each */
            ch_sleep_ms(SLOW_MS);
        } else if (a == HOLD_MS && atomic_exchange(&armed, 0) == HOLD_MS) {
            atomic_fetch_add(&slept, 1);
            ch_sleep_ms(HOLD_MS);   /* holds the frame, as a preempted drainer */
        }
    }
    bench_spin_us(CH_US);
    atomic_fetch_add_explicit(&runs[i], 1, memory_order_relaxed);
    /* release: the tasks after it read it with acquire. */
    atomic_store_explicit(&c->at[i], 1, memory_order_release);
}

#define TRAMP(i) static void ch_t##i(void *c) { ch_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn ch_fns[CH_NODES] = {ch_t0, ch_t1, ch_t2, ch_t3,
                                               ch_t4, ch_t5, ch_t6, ch_t7};
static pipe2_graph ch;   /* its tables only: the checks are ch_body's */

/* A root, CH_MIDS middle tasks, a sink (pipe2.h). */
static const dagrt_graph *ch_table(void)
{
    pipe2_fan(&ch, "crowd_held", CH_NODES, NULL, ch_fns, CH_US);
    return &ch.g;
}

static int frames_total;

/* n frames on st (started: dagrt_graph_start + wait), armed with `arm`
 * every `every` frames. The state's stretch_runs after, or -1 on an error. */
static long run_frames(const dagrt_graph *g, dagrt_graph_state *st, bool started, int n,
                       int every, int arm)
{
    static ch_ctx ctx;
    for (int f = 0; f < n; f++) {
        ctx.frame = frames_total++;
        for (int i = 0; i < CH_NODES; i++)
            atomic_store_explicit(&ctx.at[i], 0, memory_order_relaxed);   /* before the run */
        atomic_store(&slow_frame, 0);
        atomic_store(&armed, f % every == 0 ? arm : 0);
        int rc = started ? dagrt_graph_start(the_rt, g, st, &ctx, NULL, NULL)
                         : dagrt_graph_run(the_rt, g, st, &ctx);
        if (rc == 0 && started)
            rc = dagrt_graph_wait(the_rt, st);
        if (rc != 0) {
            fprintf(stderr, "crowd_held: frame %d: %s\n", ctx.frame, dagrt_strerror(rc));
            return -1;
        }
    }
    atomic_store(&armed, 0);
    dagrt_graph_stats s;
    if (dagrt_graph_get_stats(st, &s) != 0)
        return -1;
    return (long)s.stretch_runs;
}

/* (a) or (b): held frames while crowded start no stretch. */
static int held_part(const dagrt_graph *g, bool started)
{
    static dagrt_graph_state st;
    static dagrt_node_state nst[CH_NODES];
    const char *kind = started ? "started runs" : "G_run";
    if (dagrt_graph_state_init(&st, nst, CH_NODES) != 0)
        return 1;
    atomic_store(&slept, 0);
    long stretch = run_frames(g, &st, started, HELD_FRAMES, 4, HOLD_MS);
    dagrt_graph_state_fini(&st);
    int held = atomic_load(&slept);
    printf("crowd_held: %s: %d frames held by a drainer (%d ms), %ld serial-stretch frames\n",
           kind, held, HOLD_MS, stretch);
    if (stretch != 0) {
        fprintf(stderr, "crowd_held: %s: crowded, %ld frames of a serial stretch after %d held "
                "frames (held must not start one)\n", kind, stretch, held);
        return 1;
    }
    if (held == 0)   /* the worker never ran a node: nothing judged, nothing to fail */
        fprintf(stderr, "crowd_held: %s: no drainer ran a node (not judged)\n", kind);
    return 0;
}

/* (c): shared frames slower than serial ones go serial, by the clock.
 * Only frames in which a drainer slept are judged by the policy at all
 * (a worker parked at a frame's start that finds nothing left is "slow to
 * wake", exec/policy.c): so in chunks until the stretches come, or
 * SLOW_FRAMES_MOST frames; failed only if SLOW_JUDGED frames were slowed
 * by then (about 40 timed ones among them, past REF_SAMPLES). */
#define SLOW_CHUNK 100
#define SLOW_FRAMES_MOST 4000
#define SLOW_JUDGED 300
static int slow_part(const dagrt_graph *g)
{
    static dagrt_graph_state st;
    static dagrt_node_state nst[CH_NODES];
    if (dagrt_graph_state_init(&st, nst, CH_NODES) != 0)
        return 1;
    atomic_store(&slept, 0);
    long stretch = 0;
    int frames = 0;
    while (stretch <= PLAN_SERIAL_MIN && frames < SLOW_FRAMES_MOST) {
        stretch = run_frames(g, &st, false, SLOW_CHUNK, 1, SLOW_MS);
        frames += SLOW_CHUNK;
        if (stretch < 0)
            break;
    }
    dagrt_graph_state_fini(&st);
    int slowed = atomic_load(&slept);
    printf("crowd_held: slow drainers: %d of %d frames slowed (%d ms a node on a drainer), %ld "
           "serial-stretch frames\n", slowed, frames, SLOW_MS, stretch);
    if (stretch < 0)
        return 1;
    if (stretch > PLAN_SERIAL_MIN)
        return 0;
    if (slowed < SLOW_JUDGED) {   /* the worker seldom ran a node: nothing to judge */
        fprintf(stderr, "crowd_held: slow drainers: too few frames slowed to judge\n");
        return 0;
    }
    fprintf(stderr, "crowd_held: crowded, %d frames slowed %d ms a node on a drainer: %ld "
            "serial-stretch frames (want more than the reference stretch's %d)\n", slowed,
            SLOW_MS, stretch, PLAN_SERIAL_MIN);
    return 1;
}

int crowd_held_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    the_rt = dagrt_create(&cfg);
    if (!the_rt)
        return 1;
    const dagrt_graph *g = ch_table();
    for (int i = 0; i < CH_NODES; i++)
        atomic_store(&runs[i], 0);
    atomic_store(&bad_order, 0);
    frames_total = 0;
    rt_crowd_fix(1);
    int bad = held_part(g, false);
    bad += held_part(g, true);
    bad += slow_part(g);
    rt_crowd_fix(-1);
    dagrt_destroy(the_rt);
    int order = atomic_load(&bad_order);
    if (order)
        fprintf(stderr, "crowd_held: %d tasks out of order (an input not done, or run twice)\n",
                order);
    for (int i = 0; i < CH_NODES; i++)
        if (atomic_load(&runs[i]) != frames_total) {
            fprintf(stderr, "crowd_held: task %d ran %d times in %d frames\n", i,
                    atomic_load(&runs[i]), frames_total);
            order++;
        }
    return bad + order;
}
