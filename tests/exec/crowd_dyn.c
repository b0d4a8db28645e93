/* crowd_dyn.c - a crowded process runs its frames on the dynamic executor
 * (runtime/exec/crowd.c, rt_crowd_frames; docs/runtime.md, "A shared
 * CPU"): the entry crowd_dyn of exec_list.h.
 *
 * The crowded sign is switched by the runtime's tests' seam (rt_crowd_fix:
 * as DAGRT_CROWDED=1 / 0, but between frames), on and off many times, in
 * G_run frames, started runs (dagrt_graph_start / dagrt_graph_wait) and
 * pipelines of depth 2 and 3 with frames in flight at every switch. How
 * each frame runs is read from the observer's frame_begin (its mode), not
 * from a private flag. What must hold:
 * - crowded, no frame runs in plan mode ("plan" or "pipelined plan"), and
 *   frames do run on the dynamic executor; not crowded, no frame runs on
 *   it (serial frames of the run policy are allowed either way);
 * - every task once per frame, after its inputs; the same task of
 *   consecutive frames in frame order, and m1 after m6 of the frame
 *   before (`prev m6`), across every switch both ways.
 * Without the switch (rt_crowd_frames answering false, as main at
 * 7d9d483 decides) the scenario failed with 38 violations: crowded
 * cycles' frames in plan mode in G_run, started runs and both pipelines;
 * with the switch but without the pipeline's wait for its frames in
 * flight at a change of executor, 64-444 order violations in three runs.
 * Then dagrt_config.crowd_frames, on runtimes of their own with the sign
 * sampled again: DAGRT_CROWD_PLAN runs no frame on the dynamic executor,
 * DAGRT_CROWD_DYNAMIC none in plan mode, whatever the machine's load.
 * Last, frames of tiny tasks stay in plan mode while crowded at every
 * depth, and run one at a time there, as G_run runs them: no frame of
 * them starts in pipelined plan mode (run_tiny, below). No duration is
 * asserted. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench_body.h"
#include "crowd_dyn.h"
#include "dagrt.h"
#include "pipe2.h"

/* The runtime's seam (runtime/exec/exec.h; the tests link the static
 * runtime, where the symbol is visible): 1/0 fixes the crowded answer,
 * -1 goes back to sampling. */
void rt_crowd_fix(int v);

#define CD_MIDS 6
#define CD_NODES (CD_MIDS + 2)
#define CD_US 20   /* 20 us a node: well above exec/crowd.c's CROWD_DYN_NS_PER_NODE */
#define CD_CYCLES 12          /* crowded and not, in turn, per kind */
#define CD_RUN_FRAMES 30      /* G_run and started frames per cycle */
#define CD_PIPE_FRAMES 420    /* per pipeline depth, switched every 5-13 frames */

static pipe2_graph cd;
/* Modes seen at frame_begin since the last reset: plan-mode frames,
 * dynamic ones, serial and caller-alone ones. */
static int seen_plan, seen_dyn, seen_other;
/* Of seen_plan, frames started with frames in flight ("pipelined plan"). */
static int seen_piped;

static void on_frame_begin(void *user, const dagrt_frame_event *e)
{
    (void)user;
    if (strcmp(e->mode, "plan") == 0 || strcmp(e->mode, "pipelined plan") == 0) {
        seen_plan++;
        seen_piped += e->mode[0] == 'p' && e->mode[1] == 'i';
    }
    else if (strcmp(e->mode, "dynamic") == 0)
        seen_dyn++;
    else
        seen_other++;
}

/* Inputs, `prev m6` and the frame before checked (pipe2_enter), then work. */
static void cd_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    bench_spin_us(CD_US);
    pipe2_leave(c, i);
}

#define TRAMP(i) static void cd_t##i(void *c) { cd_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn cd_fns[CD_NODES] = {cd_t0, cd_t1, cd_t2, cd_t3,
                                               cd_t4, cd_t5, cd_t6, cd_t7};

/* A root, CD_MIDS middle tasks, a sink; m1 has `prev m6`. */
static const dagrt_graph *cd_table(void)
{
    pipe2_fan(&cd, "crowd_dyn", CD_NODES, NULL, cd_fns, CD_US);
    pipe2_prev(&cd, CD_MIDS, 1);
    pipe2_reset(&cd);
    return &cd.g;
}

static int next_frame;

/* One cycle's verdict: crowded, no plan-mode frame; not crowded, no
 * dynamic one. Counts the dynamic and plan frames seen for the totals. */
static int judge(const char *kind, int cycle, bool crowded, int *dyn, int *plan)
{
    int b = crowded ? seen_plan : seen_dyn;
    if (b)
        fprintf(stderr, "crowd_dyn: %s cycle %d (%s): %d frames in %s\n", kind, cycle,
                crowded ? "crowded" : "not crowded", b,
                crowded ? "plan mode" : "the dynamic executor");
    *dyn += seen_dyn;
    *plan += seen_plan;
    seen_plan = seen_dyn = seen_other = 0;
    return b;
}

static int run_frames(dagrt *rt, const dagrt_graph *g, bool started)
{
    static dagrt_graph_state st;
    static dagrt_node_state nst[CD_NODES];
    static pipe2_frame ctx = {.graph = &cd};
    if (dagrt_graph_state_init(&st, nst, CD_NODES) != 0)
        return 1;
    const char *kind = started ? "started" : "G_run";
    int bad = 0, dyn = 0, plan = 0;
    for (int cy = 0; cy < CD_CYCLES && bad == 0; cy++) {
        bool crowded = cy % 2 == 0;
        rt_crowd_fix(crowded);
        for (int f = 0; f < CD_RUN_FRAMES && bad == 0; f++) {
            int frame = next_frame++;
            pipe2_store(&ctx, &frame);
            int rc = started ? dagrt_graph_start(rt, g, &st, &ctx, NULL, NULL)
                             : dagrt_graph_run(rt, g, &st, &ctx);
            if (rc == 0 && started)
                rc = dagrt_graph_wait(rt, &st);
            if (rc != 0) {
                fprintf(stderr, "crowd_dyn: %s frame %d: %s\n", kind, frame,
                        dagrt_strerror(rc));
                bad++;
            }
            pipe2_drop(&ctx);
        }
        bad += judge(kind, cy, crowded, &dyn, &plan);
    }
    dagrt_graph_state_fini(&st);
    printf("crowd_dyn: %s: %d frames dynamic (crowded), %d in plan mode (not)\n", kind, dyn,
           plan);
    /* Frames did run on each executor. A started run is never serial, so
     * each of its cycles must have; G_run's frames may all be the run
     * policy's serial ones on a loaded machine (its stretches), which
     * says nothing either way: noted, not failed. */
    if (bad == 0 && (dyn == 0 || plan == 0)) {
        fprintf(stderr, "crowd_dyn: %s: no frame on %s%s\n", kind,
                dyn == 0 ? "the dynamic executor while crowded" : "plan mode while not crowded",
                started ? "" : " (the run policy ran them serial: not judged)");
        bad += started;
    }
    return bad;
}

/* A pipeline of `depth` frames in flight of graph t: its states, their
 * node states and the frames' contexts. */
typedef struct cd_pipe {
    dagrt_graph_state st[DAGRT_MAX_IN_FLIGHT];
    dagrt_node_state nst[DAGRT_MAX_IN_FLIGHT][PIPE2_MAX_NODES];
    pipe2_frame ctx[DAGRT_MAX_IN_FLIGHT];
    dagrt_pipeline pipe;
} cd_pipe;

static cd_pipe cdp;   /* static: large; one pipeline at a time */

static int cd_pipe_open(cd_pipe *q, pipe2_graph *t, unsigned depth)
{
    dagrt_graph_state *sp[DAGRT_MAX_IN_FLIGHT];
    void *cp[DAGRT_MAX_IN_FLIGHT];
    for (unsigned k = 0; k < depth; k++) {
        if (dagrt_graph_state_init(&q->st[k], q->nst[k], t->n) != 0)
            return 1;
        sp[k] = &q->st[k];
        q->ctx[k].graph = t;
        cp[k] = &q->ctx[k];
    }
    return dagrt_pipeline_init(&q->pipe, depth, sp, cp, pipe2_drop) != 0;
}

static void cd_pipe_close(cd_pipe *q, unsigned depth)
{
    for (unsigned k = 0; k < depth; k++)
        dagrt_graph_state_fini(&q->st[k]);
}

static int run_pipe(dagrt *rt, const dagrt_graph *g, unsigned depth)
{
    if (cd_pipe_open(&cdp, &cd, depth) != 0)
        return 1;
    dagrt_pipeline *pipe = &cdp.pipe;
    int bad = 0, dyn = 0, plan = 0, cycle = 0, left = 0;
    bool crowded = false;
    char kind[32];
    snprintf(kind, sizeof kind, "pipeline %u", depth);
    for (int f = 0; f < CD_PIPE_FRAMES && bad == 0; f++) {
        if (left-- == 0) {
            /* A switch with frames in flight (the pipeline is not drained). */
            if (f > 0)
                bad += judge(kind, cycle++, crowded, &dyn, &plan);
            crowded = !crowded;
            rt_crowd_fix(crowded);
            left = 5 + (f * 7) % 9;
        }
        int frame = next_frame++;
        int rc = dagrt_pipeline_submit(rt, g, pipe, pipe2_store, &frame);
        if (rc != 0) {
            fprintf(stderr, "crowd_dyn: %s frame %d: %s\n", kind, frame, dagrt_strerror(rc));
            bad++;
        }
    }
    int rc = dagrt_pipeline_drain(rt, pipe);
    if (rc != 0) {
        fprintf(stderr, "crowd_dyn: %s drain: %s\n", kind, dagrt_strerror(rc));
        bad++;
    }
    bad += judge(kind, cycle, crowded, &dyn, &plan);
    cd_pipe_close(&cdp, depth);
    printf("crowd_dyn: %s: %d switches, %d frames dynamic (crowded), %d in plan mode (not)\n",
           kind, cycle, dyn, plan);
    if (bad == 0 && (dyn == 0 || plan == 0))   /* as G_run's (run_frames) */
        fprintf(stderr, "crowd_dyn: %s: no frame on %s (the run policy ran them serial: not "
                "judged)\n", kind,
                dyn == 0 ? "the dynamic executor while crowded" : "plan mode while not crowded");
    return bad;
}

/* Tiny tasks: frames under exec/crowd.c's CROWD_DYN_NS_PER_NODE (3 us) a
 * node stay in plan mode while crowded, in a pipeline of any depth. A
 * frame in flight waits for `depth` submits, so its start-to-wait time is
 * about depth times the pipeline's time per frame: read as the frame's
 * size, as it was, a depth-4 pipeline of these 2 us tasks (start to wait
 * 4-8 us a node) went to the dynamic executor while depth 1 stayed
 * (bench_frame --load 1: the uniform frame's depth-3 pipeline took
 * 1.3-1.9x serial there). Judged only where the pipeline's own time per
 * frame (measured here, wall time over frames) was under TINY_US_MOST a
 * node: on a slower machine (a sanitizer's) the frames are not tiny, and
 * either executor is right. Whichever it is, no frame starts in
 * pipelined plan mode while crowded: tiny frames run alone (exec/pipe.c,
 * "one at a time"), serial or in plan mode, and others on the dynamic
 * executor. Before that change every depth started 500 frames and more
 * there. */
#define TINY_NODES 12
#define TINY_US 2
#define TINY_US_MOST 1.5
#define TINY_FRAMES 600
#define TINY_WARM 32   /* frames before the first samples: not judged */

static pipe2_graph tiny;

static void tiny_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    bench_spin_us(TINY_US);
    pipe2_leave(c, i);
}

#define TINY(i) static void tiny_t##i(void *c) { tiny_body(c, i); }
TINY(0) TINY(1) TINY(2) TINY(3) TINY(4) TINY(5) TINY(6) TINY(7) TINY(8) TINY(9) TINY(10)
TINY(11)
static const dagrt_node_fn tiny_fns[TINY_NODES] = {tiny_t0, tiny_t1, tiny_t2, tiny_t3,
                                                   tiny_t4, tiny_t5, tiny_t6, tiny_t7,
                                                   tiny_t8, tiny_t9, tiny_t10, tiny_t11};

static int run_tiny(dagrt *rt, unsigned depth)
{
    if (cd_pipe_open(&cdp, &tiny, depth) != 0)
        return 1;
    dagrt_pipeline *pipe = &cdp.pipe;
    rt_crowd_fix(1);
    int bad = 0;
    double t0 = 0;
    for (int f = 0; f < TINY_FRAMES && bad == 0; f++) {
        if (f == TINY_WARM) {
            seen_plan = seen_dyn = seen_other = seen_piped = 0;
            t0 = bench_now_ns();
        }
        int frame = next_frame++;
        int rc = dagrt_pipeline_submit(rt, &tiny.g, pipe, pipe2_store, &frame);
        if (rc != 0) {
            fprintf(stderr, "crowd_dyn: tiny, depth %u, frame %d: %s\n", depth, frame,
                    dagrt_strerror(rc));
            bad++;
        }
    }
    if (dagrt_pipeline_drain(rt, pipe) != 0)
        bad++;
    double us = (bench_now_ns() - t0) / 1e3 / (TINY_FRAMES - TINY_WARM);
    cd_pipe_close(&cdp, depth);
    rt_crowd_fix(-1);
    bool judged = us < TINY_US_MOST * TINY_NODES;
    printf("crowd_dyn: tiny, depth %u: %.1f us a frame, %d frames dynamic, %d in plan mode (%d "
           "of them with frames in flight), %d other%s\n", depth, us, seen_dyn, seen_plan,
           seen_piped, seen_other, judged ? "" : " (not tiny here: not judged)");
    if (seen_piped > 0) {
        fprintf(stderr, "crowd_dyn: tiny, depth %u: %d frames started in pipelined plan mode "
                "while crowded (they run one at a time there)\n", depth, seen_piped);
        bad++;
    }
    if (judged && seen_dyn > 0) {
        fprintf(stderr, "crowd_dyn: tiny, depth %u: %d frames of %.1f us (%.2f us a node) on "
                "the dynamic executor while crowded\n", depth, seen_dyn, us, us / TINY_NODES);
        bad++;
    }
    seen_plan = seen_dyn = seen_other = seen_piped = 0;
    return bad;
}

/* dagrt_config.crowd_frames on a runtime of its own, the sign back to
 * sampling: PLAN never runs a frame on the dynamic executor, DYNAMIC never
 * in plan mode, whatever the machine's load (started runs, which are never
 * serial, and a depth-2 pipeline); a value out of range is refused. */
static int run_config(dagrt_crowd_frames mode)
{
    const char *name = mode == DAGRT_CROWD_PLAN ? "DAGRT_CROWD_PLAN" : "DAGRT_CROWD_DYNAMIC";
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.crowd_frames = mode;
    dagrt *rt = dagrt_create(&cfg);
    static const dagrt_observer obs = {.frame_begin = on_frame_begin};
    if (!rt || dagrt_set_observer(rt, &obs, NULL) != 0) {
        fprintf(stderr, "crowd_dyn: %s: dagrt_create or dagrt_set_observer failed\n", name);
        if (rt)
            dagrt_destroy(rt);
        return 1;
    }
    seen_plan = seen_dyn = seen_other = 0;
    static dagrt_graph_state st;
    static dagrt_node_state nst[CD_NODES];
    static pipe2_frame ctx = {.graph = &cd};
    int bad = dagrt_graph_state_init(&st, nst, CD_NODES) != 0;
    for (int f = 0; f < CD_RUN_FRAMES && bad == 0; f++) {
        int frame = next_frame++;
        pipe2_store(&ctx, &frame);
        if (dagrt_graph_start(rt, &cd.g, &st, &ctx, NULL, NULL) != 0 ||
            dagrt_graph_wait(rt, &st) != 0)
            bad++;
        pipe2_drop(&ctx);
    }
    dagrt_graph_state_fini(&st);
    bad += atomic_load(&cd.frames_bad);
    pipe2_reset(&cd);   /* pipe2_run's frames count from 0 again */
    static pipe2_frame pctx[2];
    uint64_t stretch;
    bad += pipe2_run(rt, &cd, pctx, CD_RUN_FRAMES, &stretch);
    dagrt_destroy(rt);
    int wrong = mode == DAGRT_CROWD_PLAN ? seen_dyn : seen_plan;
    int right = mode == DAGRT_CROWD_PLAN ? seen_plan : seen_dyn;
    printf("crowd_dyn: %s: %d frames in plan mode, %d dynamic, %d other\n", name, seen_plan,
           seen_dyn, seen_other);
    if (wrong || right == 0) {
        fprintf(stderr, "crowd_dyn: %s: %d frames on the other executor, %d on its own\n", name,
                wrong, right);
        bad++;
    }
    seen_plan = seen_dyn = seen_other = 0;
    return bad;
}

int crowd_dyn_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    static const dagrt_observer obs = {.frame_begin = on_frame_begin};
    if (dagrt_set_observer(rt, &obs, NULL) != 0) {
        dagrt_destroy(rt);
        return 1;
    }
    const dagrt_graph *g = cd_table();
    next_frame = 0;
    int bad = run_frames(rt, g, false);
    bad += run_frames(rt, g, true);
    bad += run_pipe(rt, g, 2);
    bad += run_pipe(rt, g, 3);
    pipe2_fan(&tiny, "crowd_dyn tiny", TINY_NODES, NULL, tiny_fns, TINY_US);
    pipe2_reset(&tiny);
    next_frame = 0;
    for (unsigned depth = 1; depth <= DAGRT_MAX_IN_FLIGHT; depth++)
        bad += run_tiny(rt, depth);
    bad += atomic_load(&tiny.frames_bad);
    rt_crowd_fix(-1);
    dagrt_destroy(rt);
    /* Each frame's verdict came at its end (pipe2_drop). */
    int order = atomic_load(&cd.frames_bad);
    if (order)
        fprintf(stderr, "crowd_dyn: %d violations in all (an input, `prev m6` or the same "
                "task of the frame before not done, or a task not run exactly once)\n", order);
    /* The per-runtime setting, on fresh order checks. */
    for (int m = DAGRT_CROWD_PLAN; m <= DAGRT_CROWD_DYNAMIC; m++) {
        pipe2_reset(&cd);
        next_frame = 0;
        bad += run_config((dagrt_crowd_frames)m);
    }
    dagrt_config out;
    dagrt_config_init(&out);
    out.crowd_frames = (dagrt_crowd_frames)3;
    int err = 0;
    if (dagrt_create_ex(&out, &err) != NULL || err != DAGRT_EINVAL) {
        fprintf(stderr, "crowd_dyn: crowd_frames 3 not refused with DAGRT_EINVAL\n");
        bad++;
    }
    return bad + order;
}
