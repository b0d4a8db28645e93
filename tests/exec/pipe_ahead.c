/* pipe_ahead.c - a depth-2 pipeline whose helper waits for the caller's
 * `on main` task of the next frame (runtime/exec/pplan.c, "looks ahead";
 * exec/plan.c, plan_leave_frame). The entry pipe_ahead of exec_list.h.
 *
 * The graph (a game's shape, small): `input` on main, AHEAD_MIDS middle
 * tasks of 100 us that need it, and `present` on main (AHEAD_PRESENT_US)
 * that needs them all; costs in the tables. With one worker, plan mode puts
 * some middle tasks on the helper's list. In a pipeline, frame N+1 is
 * offered while the caller is still in frame N's wait: the helper, done
 * with N's middle tasks, goes on to N+1 and waits there for N+1's `input`,
 * which the caller runs only after N's long `present`, looking ahead. That
 * wait is longer than a helper's patience with an absent caller; the caller
 * is not absent, it is coming. Before the fix this scenario was written
 * for, the helper left frame N+1 every time, the caller then ran all of
 * N+1's middle tasks itself at its wait, the run policy read that as a
 * helper without CPU and put the pipeline on the caller alone (a serial
 * stretch): the pipeline ran at twice its time per frame (bench_frame
 * --frame game, docs/benchmarks-log.md).
 *
 * Checked by what the frames do, never by how long they take: every frame
 * whole and in order, and the middle tasks shared with the worker (the
 * serial stretches, dagrt_graph_stats.stretch_runs, are printed). A machine
 * so loaded that the worker gets no CPU for a while may start a stretch
 * rightly: so up to AHEAD_TRIES attempts, of which one must share; the old
 * code failed every attempt. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "dagrt.h"
#include "pipe2.h"
#include "pipe_ahead.h"

#define AHEAD_MIDS 6
#define AHEAD_NODES (AHEAD_MIDS + 2)
#define AHEAD_SINK (AHEAD_NODES - 1)
#define AHEAD_MID_US 100
#define AHEAD_PRESENT_US 600
#define AHEAD_FRAMES 60
#define AHEAD_TRIES 8

static pipe2_graph ahead;
static _Atomic unsigned mids_off;   /* middle tasks run by the worker */
static dagrt *the_rt;

static void ahead_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    if (i > 0 && i < AHEAD_SINK && dagrt_thread_index(the_rt) != 0)
        atomic_fetch_add(&mids_off, 1);
    bench_spin_us(i == 0 ? 5 : i == AHEAD_SINK ? AHEAD_PRESENT_US : AHEAD_MID_US);
    pipe2_leave(c, i);
}

#define TRAMP(i) static void ahead_t##i(void *c) { ahead_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn ahead_fns[AHEAD_NODES] = {ahead_t0, ahead_t1, ahead_t2, ahead_t3,
                                                     ahead_t4, ahead_t5, ahead_t6, ahead_t7};
static const char *const ahead_names[AHEAD_NODES] = {"input", "m1", "m2", "m3",
                                                     "m4", "m5", "m6", "present"};

/* input -> each middle task -> present; input and present on main. */
static pipe2_graph *ahead_table(void)
{
    uint32_t edges[2 * AHEAD_MIDS][2], cost[AHEAD_NODES], k = 0;
    for (uint32_t m = 1; m < AHEAD_SINK; m++)
        edges[k][0] = 0, edges[k++][1] = m;
    for (uint32_t m = 1; m < AHEAD_SINK; m++)
        edges[k][0] = m, edges[k++][1] = AHEAD_SINK;
    for (uint32_t u = 0; u < AHEAD_NODES; u++)
        cost[u] = u == 0 ? 5 : u == AHEAD_SINK ? AHEAD_PRESENT_US : AHEAD_MID_US;
    pipe2_table(&ahead, "pipe_ahead", AHEAD_NODES, ahead_names, ahead_fns,
                (const uint32_t (*)[2])edges, k, cost);
    ahead.nodes[0].flags = DAGRT_NODE_MAIN;
    ahead.nodes[AHEAD_SINK].flags = DAGRT_NODE_MAIN;
    return &ahead;
}

/* One attempt: AHEAD_FRAMES frames through a fresh pipeline. Returns the
 * violations; *stretch: serial-stretch runs of both states. */
static int ahead_attempt(pipe2_graph *t, uint64_t *stretch)
{
    static pipe2_frame ctxs[2];
    pipe2_reset(t);
    atomic_store(&mids_off, 0);
    return pipe2_run(the_rt, t, ctxs, AHEAD_FRAMES, stretch);
}

int pipe_ahead_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;
    the_rt = dagrt_create(&cfg);
    if (!the_rt) {
        fprintf(stderr, "pipe_ahead: dagrt_create failed\n");
        return 1;
    }
    pipe2_graph *g = ahead_table();
    int bad = 0;
    bool clean = false;
    for (int t = 0; t < AHEAD_TRIES && !clean && bad == 0; t++) {
        uint64_t stretch = 0;
        bad += ahead_attempt(g, &stretch);
        unsigned off = atomic_load(&mids_off);
        printf("pipe_ahead: attempt %d: %llu frames in a serial stretch, %u of %d middle tasks "
               "on the worker\n", t + 1, (unsigned long long)stretch, off,
               AHEAD_FRAMES * AHEAD_MIDS);
        /* Clean: the worker ran a real share of the middle tasks (its
         * list holds about half of them; a third of that, at least). The
         * old code left them to the caller (every attempt 19-24 of 360,
         * quiet or loaded), the fixed one shares about 240 on a quiet
         * machine and 60-170 at a load average of 14; the stretches are
         * printed, not asserted: under load they are right. */
        clean = off >= AHEAD_FRAMES * AHEAD_MIDS / 6;
    }
    if (!clean && bad == 0) {
        fprintf(stderr, "pipe_ahead: every attempt left the middle tasks to the caller: the "
                "helper does not wait for a caller that looks ahead\n");
        bad++;
    }
    dagrt_destroy(the_rt);
    return bad;
}
