/* plan_frames.c - the executor's plan mode (one worker: runtime/exec/exec.c) on
 * the benchmark's 32-node frame graph, checked: every node runs exactly
 * once per frame, after both its predecessors ran in that frame.
 *
 * Three situations, each asserted the same way and none by timing:
 * - the worker free, so it runs its list;
 * - the worker held by another task for the whole time, so the caller must
 *   take the worker's list (no owner) and finally run the spawned helper
 *   itself in its group wait;
 * - the worker held for part of the frames and released mid-way;
 * - frames on a graph state allocated for the run, released
 *   (dagrt_graph_state_fini) and freed right after it, some of them after
 *   pauses longer than the worker's helper lingers between runs: under
 *   ThreadSanitizer, a helper that touched a run's state after the release
 *   returned would be reported (the state is the caller's again once
 *   dagrt_graph_state_fini returns: a helper that joined the run and has
 *   not left it may still read it after dagrt_graph_run returned).
 * Bodies spin ~1 us (CLOCK_MONOTONIC), so the frames are never small
 * enough to run serial (on the caller alone without plan mode). The entry
 * plan_frames of exec_list.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_frame.h"
#include "frame_check.h"
#include "policy_scenario.h"

/* 64-byte aligned blocks: the Windows C library has no aligned_alloc. */
#if defined(_WIN32)
#  include <malloc.h>
static void *pf_alloc64(size_t n) { return _aligned_malloc(n, 64); }
static void pf_free64(void *p) { _aligned_free(p); }
#else
static void *pf_alloc64(size_t n) { return aligned_alloc(64, (n + 63) & ~(size_t)63); }
static void pf_free64(void *p) { free(p); }
#endif

/* The graph's bodies are policy_scenario.c's (one definition for the
 * executable); while this scenario runs, each is the fixture's checked
 * body alone. */
static void plan_body(struct bench_ctx *c, int idx) { frame_check_body(c, idx); }

/* The same graph as a hand-built table (bench_preds), so that the test
 * can run it on states of its own. The trampolines take the context
 * itself. */
#define TRAMP(i) static void tramp_##i(void *c) { frame_check_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7) TRAMP(8) TRAMP(9)
TRAMP(10) TRAMP(11) TRAMP(12) TRAMP(13) TRAMP(14) TRAMP(15) TRAMP(16) TRAMP(17) TRAMP(18)
TRAMP(19) TRAMP(20) TRAMP(21) TRAMP(22) TRAMP(23) TRAMP(24) TRAMP(25) TRAMP(26) TRAMP(27)
TRAMP(28) TRAMP(29) TRAMP(30) TRAMP(31)
static const dagrt_node_fn tramps[BENCH_NODES] = {
    tramp_0, tramp_1, tramp_2, tramp_3, tramp_4, tramp_5, tramp_6, tramp_7, tramp_8,
    tramp_9, tramp_10, tramp_11, tramp_12, tramp_13, tramp_14, tramp_15, tramp_16,
    tramp_17, tramp_18, tramp_19, tramp_20, tramp_21, tramp_22, tramp_23, tramp_24,
    tramp_25, tramp_26, tramp_27, tramp_28, tramp_29, tramp_30, tramp_31,
};
static dagrt_node table_nodes[BENCH_NODES];
static uint32_t table_succ[2 * BENCH_NODES];
static dagrt_graph table;

static void build_table(void)
{
    uint32_t ns = 0;
    for (int u = 0; u < BENCH_NODES; u++) {
        dagrt_node *n = &table_nodes[u];
        n->name = bench_names[u];
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = tramps[u];
        n->succ_first = ns;
        for (int v = u + 1; v < BENCH_NODES; v++)
            for (int k = 0; k < 2; k++)
                if (bench_preds[v][k] == u) {
                    table_succ[ns++] = (uint32_t)v;
                    n->nsucc++;
                }
        for (int k = 0; k < 2; k++)
            n->npred += bench_preds[u][k] >= 0;
    }
    table.version = DAGRT_GRAPH_VERSION;
    table.nnodes = BENCH_NODES;
    table.nsucc = ns;
    table.name = "plan_frames_table";
    table.nodes = table_nodes;
    table.succ = table_succ;
}

/* After run f of `what` returned rc: that it succeeded and every node ran
 * exactly once. Returns the violations. */
static int check_frame(const char *what, int f, int rc)
{
    if (rc != 0) {
        fprintf(stderr, "plan_frames: %s %d: %s\n", what, f, dagrt_strerror(rc));
        return 1;
    }
    char frame[64];
    snprintf(frame, sizeof frame, "%s %d", what, f);
    return frame_check_once("plan_frames", frame);
}

/* Frames, each on a state allocated for it and freed after it. */
static int fresh_state_frames(dagrt *rt, struct bench_ctx *c, int n)
{
    int bad = 0;
    for (int f = 0; f < n; f++) {
        dagrt_graph_state *st = pf_alloc64(sizeof *st);
        dagrt_node_state *ns = pf_alloc64(BENCH_NODES * sizeof *ns);
        if (!st || !ns) {
            fprintf(stderr, "plan_frames: out of memory\n");
            pf_free64(st);
            pf_free64(ns);
            return bad + 1;
        }
        memset(st, 0, sizeof *st);
        memset(ns, 0, BENCH_NODES * sizeof *ns);
        st->nodes = ns;
        st->nnodes = BENCH_NODES;
        /* Two frames per state: the first makes the plan, the second runs
         * on a plan already made. */
        for (int rep = 0; rep < 2; rep++) {
            frame_check_next(c);
            bad += check_frame("fresh state", f, dagrt_graph_run(rt, &table, st, c));
        }
        /* Released, then scribbled over before it is freed: a late helper
         * that read it would go astray even where no sanitizer watches. */
        int frc = dagrt_graph_state_fini(st);
        if (frc != 0) {
            fprintf(stderr, "plan_frames: fresh state %d's release: %s\n", f, dagrt_strerror(frc));
            bad++;
        }
        memset(ns, 0xa5, BENCH_NODES * sizeof *ns);
        memset(st, 0xa5, sizeof *st);
        pf_free64(ns);
        pf_free64(st);
        /* Every 8th frame, a pause longer than a helper lingers
         * (PLAN_LINGER_NS, 50 us): the next run spawns a new one. */
        if (f % 8 == 7) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
    }
    return bad;
}

static int frames(dagrt *rt, struct bench_ctx *c, int n, int release_at)
{
    int bad = 0;
    for (int f = 0; f < n; f++) {
        if (f == release_at)
            atomic_store_explicit(&frame_check_hold, 0, memory_order_release);
        frame_check_next(c);
        bad += check_frame("frame", f, bench_frame_run(rt, c));
    }
    return bad;
}

static int scale(int n)
{
    const char *e = getenv("DAGC_TEST_SCALE");
    double k = e ? atof(e) : 1.0;
    int v = (int)(n * (k > 0 ? k : 1.0));
    return v < 10 ? 10 : v;
}

int plan_frames_scenario(void)
{
    /* The fixture's state is the process's: as this scenario expects it
     * (exec_drv may run the policy scenarios before it). */
    atomic_store(&frame_check_errors, 0);
    atomic_store(&frame_check_body_ns, 1000);
    policy_body_hook = plan_body;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;   /* plan mode: the caller and one worker */
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        fprintf(stderr, "plan_frames: dagrt_create_ex: %s\n", dagrt_strerror(err));
        policy_body_hook = NULL;
        return 1;
    }
    static struct bench_ctx ctx;
    int bad = 0;

    /* 1. The worker free. */
    bad += frames(rt, &ctx, scale(2000), -1);

    /* 2. and 3. The worker held by another task, released half-way. */
    dagrt_group g;
    dagrt_group_init(&g);
    if (frame_check_hold_worker(rt, &g) != 0) {
        fprintf(stderr, "plan_frames: spawn failed\n");
        policy_body_hook = NULL;
        return 1;
    }
    /* Wait until it holds the worker; the spawn may also be run by this
     * thread's own wait later, so give up waiting after a while. */
    for (int i = 0; i < 100000 && !atomic_load(&frame_check_holding); i++)
        frame_check_spin_ns(1000);
    int n = scale(400);
    int held = atomic_load(&frame_check_holding);
    printf("plan_frames: the worker %s held\n", held ? "was" : "was not");
    bad += frames(rt, &ctx, n, held ? n / 2 : 0);
    atomic_store(&frame_check_hold, 0);
    if (dagrt_group_wait(rt, &g) != 0)
        bad++;

    /* 4. States of the caller's, freed after each run. */
    build_table();
    bad += fresh_state_frames(rt, &ctx, scale(200));

    bad += atomic_load(&frame_check_errors);
    printf("plan_frames: %d errors (%d ordering)\n", bad, atomic_load(&frame_check_errors));
    dagrt_destroy(rt);
    policy_body_hook = NULL;
    return bad;
}
