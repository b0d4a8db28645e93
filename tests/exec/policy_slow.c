/* policy_slow.c - a helper that runs, only slowly: the run policy's
 * reference stretch and probe window (runtime/exec/policy.c), for
 * dagrt_graph_run and a depth-2 pipeline. The entry policy_slow of
 * exec_list.h.
 *
 * The graph: a chain a1 -> a2 -> a3 of SLOW_US tasks, beside it one task b
 * of SLOW_B_US, and a sink after a3 and b, each costed so (long tasks: no
 * pair claims). With one worker, plan mode puts the chain on one list and
 * b on the other. Run off the caller, a task takes SLOW_EXTRA times as
 * long: the worker stands for a thread that shares its CPU and gets a
 * fraction of it, yet runs. A frame shared with it takes longer than the
 * same frame on the caller alone, whichever of the two runs what; the
 * policy must find that out and keep most frames on the caller alone,
 * whether or not the caller also took the worker's task (the clock-free
 * sign, which the scenario cannot rule out). Before pipelined frames were
 * judged by their time (and before the probe window and the reference
 * stretch), that sign alone kept 1026-1113 of the pipeline's 1500 frames
 * on the caller alone here (and 1438-1474 of G_run's); with them,
 * 1366-1388 (and 1464-1472). So the pipeline's bound, four in five, fails
 * the old rule; G_run's, one in two, is a check of behaviour only. What
 * it adds over the older scenarios: a worker that is slow every time, not
 * held or stopped, and a pipeline judged by its time.
 *
 * Checked by what the frames do, never by a duration: every task once per
 * frame and in order, and the share of frames the policy ran on the caller
 * alone (dagrt_graph_stats.stretch_runs): over the bounds above. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bench_body.h"
#include "dagrt.h"
#include "pipe2.h"
#include "policy_slow.h"

#define SLOW_CHAIN 3                 /* a1, a2, a3: tasks 0 .. 2 */
#define SLOW_B SLOW_CHAIN            /* b: task 3 */
#define SLOW_NODES (SLOW_CHAIN + 2)
#define SLOW_SINK (SLOW_NODES - 1)
#define SLOW_US 20
#define SLOW_B_US 40
#define SLOW_EXTRA 4
#define SLOW_FRAMES 1500

static pipe2_graph slow;
static _Atomic unsigned off_caller;   /* tasks run by the worker */
static dagrt *the_rt;

static void slow_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    bool worker = dagrt_thread_index(the_rt) != 0;
    if (worker)
        atomic_fetch_add(&off_caller, 1);
    int us = i == SLOW_B ? SLOW_B_US : SLOW_US;
    bench_spin_us(worker ? SLOW_EXTRA * us : us);
    pipe2_leave(c, i);
}

#define TRAMP(i) static void slow_t##i(void *c) { slow_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4)
static const dagrt_node_fn slow_fns[SLOW_NODES] = {slow_t0, slow_t1, slow_t2, slow_t3, slow_t4};
static const char *const slow_names[SLOW_NODES] = {"a1", "a2", "a3", "b", "sink"};

/* a1 -> a2 -> a3 -> sink, b -> sink. */
static pipe2_graph *slow_table(void)
{
    static const uint32_t edges[][2] = {{0, 1}, {1, 2}, {2, SLOW_SINK}, {SLOW_B, SLOW_SINK}};
    static const uint32_t cost[SLOW_NODES] = {SLOW_US, SLOW_US, SLOW_US, SLOW_B_US, SLOW_US};
    pipe2_table(&slow, "policy_slow", SLOW_NODES, slow_names, slow_fns, edges,
                sizeof edges / sizeof edges[0], cost);
    return &slow;
}

static void slow_reset(void)
{
    pipe2_reset(&slow);
    atomic_store(&off_caller, 0);
}

/* SLOW_FRAMES frames of dagrt_graph_run; *stretch: its stretch frames. */
static int slow_run(pipe2_graph *t, uint64_t *stretch)
{
    static dagrt_graph_state st;
    static dagrt_node_state ns[SLOW_NODES];
    static pipe2_frame ctx = {.graph = &slow};
    slow_reset();
    if (dagrt_graph_state_init(&st, ns, SLOW_NODES) != 0)
        return 1;
    for (int f = 0; f < SLOW_FRAMES; f++) {
        pipe2_store(&ctx, &f);
        int rc = dagrt_graph_run(the_rt, &t->g, &st, &ctx);
        if (rc != 0) {
            fprintf(stderr, "policy_slow: G_run frame %d: %s\n", f, dagrt_strerror(rc));
            return 1;
        }
        pipe2_drop(&ctx);
    }
    dagrt_graph_stats s;
    if (dagrt_graph_get_stats(&st, &s) != 0)
        return 1;
    *stretch = s.stretch_runs;
    return atomic_load(&t->frames_bad);
}

/* SLOW_FRAMES frames through a depth-2 pipeline; *stretch: the stretch
 * frames of both its states. */
static int slow_pipe(pipe2_graph *t, uint64_t *stretch)
{
    static pipe2_frame ctxs[2];
    slow_reset();
    return pipe2_run(the_rt, t, ctxs, SLOW_FRAMES, stretch);
}

int policy_slow_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;
    the_rt = dagrt_create(&cfg);
    if (!the_rt) {
        fprintf(stderr, "policy_slow: dagrt_create failed\n");
        return 1;
    }
    pipe2_graph *g = slow_table();
    int bad = 0;
    const char *what[2] = {"dagrt_graph_run", "depth-2 pipeline"};
    for (int m = 0; m < 2 && bad == 0; m++) {
        uint64_t stretch = 0;
        bad += m == 0 ? slow_run(g, &stretch) : slow_pipe(g, &stretch);
        unsigned off = atomic_load(&off_caller);
        printf("policy_slow: %s: %d frames, %llu on the caller alone (stretch_runs), %u tasks "
               "on the slow worker\n", what[m], SLOW_FRAMES, (unsigned long long)stretch, off);
        /* Sharing is half as slow again as serial here: most frames must
         * run on the caller alone (the stretches double, up to 4096); a
         * pipeline's, which the clock-free sign alone left sharing 26-32%
         * of the frames here (1,026-1,113 of 1,500 on the caller), three
         * in four: the rule that judges them by their time keeps
         * 1,205-1,215 there, 1,155-1,187 under TSan (four in five, 1,200,
         * failed under TSan two runs in three). */
        uint64_t want = m == 0 ? SLOW_FRAMES / 2 : SLOW_FRAMES * 3 / 4;
        if (bad == 0 && stretch < want) {
            fprintf(stderr, "policy_slow: %s: only %llu of %d frames on the caller alone: "
                    "frames shared with a slow helper, slower than serial, were not judged "
                    "by their time\n", what[m], (unsigned long long)stretch, SLOW_FRAMES);
            bad++;
        }
    }
    dagrt_destroy(the_rt);
    return bad;
}
