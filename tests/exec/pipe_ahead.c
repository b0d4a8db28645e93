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

/* A frame's context: its number, each task's completion order and runs,
 * and the middle tasks that ran off the caller. seq_cst unless said. */
struct ahead_ctx {
    int frame;
    _Atomic unsigned seq;
    _Atomic unsigned at[AHEAD_NODES];
    _Atomic int runs[AHEAD_NODES];
    _Atomic int bad;
};

static _Atomic int last_frame[AHEAD_NODES];
static _Atomic unsigned mids_off;   /* middle tasks run by the worker */
static dagrt *the_rt;

static void ahead_body(struct ahead_ctx *c, int i)
{
    /* Inputs before it, in its frame (acquire: pairs with the release
     * below). */
    if (i > 0 && i < AHEAD_SINK && atomic_load_explicit(&c->at[0], memory_order_acquire) == 0)
        atomic_fetch_add(&c->bad, 1);
    if (i == AHEAD_SINK)
        for (int m = 1; m < AHEAD_SINK; m++)
            if (atomic_load_explicit(&c->at[m], memory_order_acquire) == 0)
                atomic_fetch_add(&c->bad, 1);
    /* The same task of the frame before ran before it (the pipeline's
     * rule; relaxed: the runtime orders the two runs of a task). */
    if (atomic_load_explicit(&last_frame[i], memory_order_relaxed) != c->frame - 1)
        atomic_fetch_add(&c->bad, 1);
    atomic_store_explicit(&last_frame[i], c->frame, memory_order_relaxed);
    if (i > 0 && i < AHEAD_SINK && dagrt_thread_index(the_rt) != 0)
        atomic_fetch_add(&mids_off, 1);
    bench_spin_us(i == 0 ? 5 : i == AHEAD_SINK ? AHEAD_PRESENT_US : AHEAD_MID_US);
    atomic_fetch_add_explicit(&c->runs[i], 1, memory_order_relaxed);
    /* release: the tasks after it read it with acquire. */
    atomic_store_explicit(&c->at[i], atomic_fetch_add(&c->seq, 1) + 1, memory_order_release);
}

#define TRAMP(i) static void ahead_t##i(void *c) { ahead_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn ahead_fns[AHEAD_NODES] = {ahead_t0, ahead_t1, ahead_t2, ahead_t3,
                                                     ahead_t4, ahead_t5, ahead_t6, ahead_t7};
static const char *const ahead_names[AHEAD_NODES] = {"input", "m1", "m2", "m3",
                                                     "m4", "m5", "m6", "present"};
static dagrt_node ahead_nodes[AHEAD_NODES];
static uint32_t ahead_succ[2 * AHEAD_MIDS];
static uint32_t ahead_costs[AHEAD_NODES];
static dagrt_graph ahead_graph;

static const dagrt_graph *ahead_table(void)
{
    memset(ahead_nodes, 0, sizeof ahead_nodes);
    uint32_t ns = 0;
    for (int u = 0; u < AHEAD_NODES; u++) {
        dagrt_node *n = &ahead_nodes[u];
        n->name = ahead_names[u];
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = ahead_fns[u];
        n->succ_first = ns;
        if (u == 0)
            for (int m = 1; m < AHEAD_SINK; m++)
                ahead_succ[ns++] = (uint32_t)m;
        else if (u < AHEAD_SINK)
            ahead_succ[ns++] = AHEAD_SINK;
        n->nsucc = ns - n->succ_first;
        n->npred = u == 0 ? 0 : u < AHEAD_SINK ? 1 : AHEAD_MIDS;
        ahead_costs[u] = (u == 0 ? 5 : u == AHEAD_SINK ? AHEAD_PRESENT_US : AHEAD_MID_US) * 1000u;
    }
    ahead_nodes[0].flags = DAGRT_NODE_MAIN;
    ahead_nodes[AHEAD_SINK].flags = DAGRT_NODE_MAIN;
    memset(&ahead_graph, 0, sizeof ahead_graph);
    ahead_graph.version = DAGRT_GRAPH_VERSION;
    ahead_graph.nnodes = AHEAD_NODES;
    ahead_graph.nsucc = ns;
    ahead_graph.name = "pipe_ahead";
    ahead_graph.nodes = ahead_nodes;
    ahead_graph.succ = ahead_succ;
    ahead_graph.cost = ahead_costs;
    return &ahead_graph;
}

static _Atomic int drop_bad;

static void ahead_store(void *ctx, const void *src)
{
    struct ahead_ctx *c = ctx;
    c->frame = *(const int *)src;
    atomic_store(&c->seq, 0);
    atomic_store(&c->bad, 0);
    for (int i = 0; i < AHEAD_NODES; i++) {
        atomic_store(&c->at[i], 0);
        atomic_store(&c->runs[i], 0);
    }
}

/* A frame over: every task once, in order. */
static void ahead_drop(void *ctx)
{
    struct ahead_ctx *c = ctx;
    int bad = atomic_load(&c->bad);
    for (int i = 0; i < AHEAD_NODES; i++)
        bad += atomic_load(&c->runs[i]) != 1;
    if (bad)
        fprintf(stderr, "pipe_ahead: frame %d: %d violations (a task not run exactly once, or "
                "out of order)\n", c->frame, bad);
    atomic_fetch_add(&drop_bad, bad);
}

/* One attempt: AHEAD_FRAMES frames through a fresh pipeline. Returns the
 * violations; *stretch: serial-stretch runs of both states. */
static int ahead_attempt(const dagrt_graph *g, uint64_t *stretch)
{
    static dagrt_graph_state st[2];
    static dagrt_node_state ns[2][AHEAD_NODES];
    static struct ahead_ctx ctxs[2];
    for (int i = 0; i < AHEAD_NODES; i++)
        atomic_store(&last_frame[i], -1);
    atomic_store(&drop_bad, 0);
    atomic_store(&mids_off, 0);
    const pipe2 q = {{&st[0], &st[1]}, {ns[0], ns[1]}, {&ctxs[0], &ctxs[1]}, AHEAD_NODES};
    if (pipe2_run(the_rt, g, &q, AHEAD_FRAMES, ahead_store, ahead_drop, "pipe_ahead", stretch) != 0)
        return 1;
    return atomic_load(&drop_bad);
}

int pipe_ahead_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    the_rt = dagrt_create(&cfg);
    if (!the_rt) {
        fprintf(stderr, "pipe_ahead: dagrt_create failed\n");
        return 1;
    }
    const dagrt_graph *g = ahead_table();
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
