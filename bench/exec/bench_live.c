/* bench_live.c - what live costs cost and how fast they react (runtime/exec/live.c),
 * one worker (two plan lists), each figure measured side by side in one run.
 *
 *   bench_live [--quick]
 *
 * 1. Measuring: a 64-task layered frame (8 levels of 8, two inputs each,
 *    1 us bodies) run with live costs off and with every frame timed, in
 *    interleaved rounds (a runtime each, made and destroyed per round);
 *    the medians' difference per task is the price of a timed frame (two
 *    clock reads per task and the fold), and per frame amortised at
 *    DAGRT_LIVE_COSTS=8 it is an eighth of that. The clock read pair
 *    alone is timed too.
 * 2. Re-planning: a re-plan of that frame's state on its own (rt_plan_build
 *    and the costs noted), and the drift check each timed frame makes.
 * 3. Reacting: a root, 8 middle tasks and a sink (live_scenario.c's shape);
 *    one middle task rises from 10 us to 800 us at frame 100 and another
 *    drops from 300 us to 10 us: the frames from the change to the first
 *    re-plan, and until five frames in a row take at most 1.10x the new
 *    lower bound max(critical path, work / 2).
 * Not a test: figures only (docs/runtime.md, "Live costs"). */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < ns)
        ;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return v[n / 2];
}

/* ------------------------------------------------- the layered frame */

#define LV 8
#define WD 8
#define NL (LV * WD)
static dagrt_node lnodes[NL];
static uint32_t lsucc[2 * NL];
static dagrt_graph lgraph;
static _Atomic uint64_t body_ns = 1000;

static void lbody(void *ctx)
{
    (void)ctx;
    spin_ns(atomic_load_explicit(&body_ns, memory_order_relaxed));
}

static void layered(void)
{
    uint32_t ns = 0;
    for (int u = 0; u < NL; u++) {
        int l = u / WD, w = u % WD;
        dagrt_node *n = &lnodes[u];
        n->name = "t";
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = lbody;
        n->succ_first = ns;
        if (l + 1 < LV) {
            int a = (l + 1) * WD + w, b = (l + 1) * WD + (w + WD - 1) % WD;
            lsucc[ns++] = (uint32_t)(a < b ? a : b);
            lsucc[ns++] = (uint32_t)(a < b ? b : a);
        }
        n->nsucc = ns - n->succ_first;
        n->npred = l == 0 ? 0 : 2;
    }
    lgraph.version = DAGRT_GRAPH_VERSION;
    lgraph.nnodes = NL;
    lgraph.nsucc = ns;
    lgraph.name = "bench_live_layered";
    lgraph.nodes = lnodes;
    lgraph.succ = lsucc;
}

static dagrt *make_rt(uint32_t live)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.live_costs = live;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        fprintf(stderr, "bench_live: dagrt_create failed\n");
        exit(1);
    }
    return rt;
}

static dagrt_graph_state lst;
static dagrt_node_state lns[NL];

/* ns per frame of `frames` frames after a warm-up, on a fresh runtime. */
static uint64_t frame_ns(uint32_t live, int frames)
{
    dagrt *rt = make_rt(live);
    dagrt_graph_state_init(&lst, lns, NL);
    for (int f = 0; f < 200; f++)
        dagrt_graph_run(rt, &lgraph, &lst, NULL);
    uint64_t t0 = now_ns();
    for (int f = 0; f < frames; f++)
        dagrt_graph_run(rt, &lgraph, &lst, NULL);
    uint64_t ns = (now_ns() - t0) / (uint64_t)frames;
    dagrt_destroy(rt);
    return ns;
}

/* ------------------------------------------- the changing frame */

#define NM 8
#define NC (NM + 2)
static dagrt_node cnodes[NC];
static uint32_t csucc[2 * NM];
static dagrt_graph cgraph;
static _Atomic int phase;

static uint64_t ccost(int i, int ph)
{
    if (i == 1)
        return ph ? 10000 : 300000;
    if (i == 2)
        return ph ? 800000 : 10000;
    return i == 0 || i == NC - 1 ? 5000 : 10000;
}

#define CT(i) static void c##i(void *x) { (void)x; spin_ns(ccost(i, atomic_load(&phase))); }
CT(0) CT(1) CT(2) CT(3) CT(4) CT(5) CT(6) CT(7) CT(8) CT(9)
static const dagrt_node_fn cfns[NC] = {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9};

static void changing(void)
{
    uint32_t ns = 0;
    for (int u = 0; u < NC; u++) {
        dagrt_node *n = &cnodes[u];
        n->name = "c";
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = cfns[u];
        n->succ_first = ns;
        if (u == 0)
            for (int m = 1; m <= NM; m++)
                csucc[ns++] = (uint32_t)m;
        else if (u <= NM)
            csucc[ns++] = NC - 1;
        n->nsucc = ns - n->succ_first;
        n->npred = u == 0 ? 0 : u <= NM ? 1 : NM;
    }
    cgraph.version = DAGRT_GRAPH_VERSION;
    cgraph.nnodes = NC;
    cgraph.nsucc = ns;
    cgraph.name = "bench_live_changing";
    cgraph.nodes = cnodes;
    cgraph.succ = csucc;
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int rounds = quick ? 3 : 9, frames = quick ? 300 : 3000;
    printf("bench_live: %s\n", BENCH_BUILD);
    layered();
    changing();

    /* 1. Measuring. */
    uint64_t off[16], on[16];
    for (int r = 0; r < rounds; r++) {
        if (r & 1) {
            on[r] = frame_ns(1, frames);
            off[r] = frame_ns(0, frames);
        } else {
            off[r] = frame_ns(0, frames);
            on[r] = frame_ns(1, frames);
        }
    }
    uint64_t moff = median(off, rounds), mon = median(on, rounds);
    double per_node = ((double)mon - (double)moff) / NL;
    uint64_t pairs = 1000000, t0 = rt_now_ns(), sink = 0;
    for (uint64_t k = 0; k < pairs; k++)
        sink += rt_now_ns() - rt_now_ns();
    double pair_ns = (double)(rt_now_ns() - t0) / (double)pairs;
    printf("measuring (%d tasks of 1 us, 1 worker, medians of %d interleaved rounds of %d frames):\n"
           "  frame, live costs off:          %8.1f us\n"
           "  frame, every frame timed:       %8.1f us (%+.1f%%)\n"
           "  per task in a timed frame:      %8.1f ns\n"
           "  per frame, one in 8 timed:      %8.1f ns (computed: the timed frame's extra / 8)\n"
           "  one clock read pair alone:      %8.1f ns%s\n",
           NL, rounds, frames, moff / 1e3, mon / 1e3,
           100.0 * ((double)mon - (double)moff) / (double)moff, per_node,
           per_node * NL / 8.0, pair_ns, sink == 12345 ? " " : "");

    /* 2. Re-planning: a state with a plan and measured costs. */
    dagrt *rt = make_rt(1);
    dagrt_graph_state_init(&lst, lns, NL);
    for (int f = 0; f < 50; f++)
        dagrt_graph_run(rt, &lgraph, &lst, NULL);
    graph_rt *r = state_rt(&lst);
    int n = quick ? 200 : 5000;
    uint64_t rp[16], dc[16];
    for (int k = 0; k < rounds; k++) {
        uint64_t a = rt_now_ns();
        for (int i = 0; i < n; i++)
            rt_live_replan(r);
        uint64_t b = rt_now_ns();
        for (int i = 0; i < n; i++) {
            r->live_sample = 1;
            (void)rt_live_drifted(r);
        }
        uint64_t c = rt_now_ns();
        rp[k] = (b - a) / (uint64_t)n;
        dc[k] = (c - b) / (uint64_t)n;
    }
    dagrt_graph_run(rt, &lgraph, &lst, NULL);   /* still runs after all that */
    dagrt_destroy(rt);
    printf("re-planning the %d-task frame (medians of %d rounds of %d):\n"
           "  a re-plan:                      %8llu ns\n"
           "  the drift check (timed frames): %8llu ns\n",
           NL, rounds, n, (unsigned long long)median(rp, rounds),
           (unsigned long long)median(dc, rounds));

    /* 3. Reacting. */
    static dagrt_graph_state cst;
    static dagrt_node_state cns[NC];
    const int change = 100, after = quick ? 100 : 300;
    for (uint32_t live = 1; live <= 8; live *= 8) {
        rt = make_rt(live);
        dagrt_graph_state_init(&cst, cns, NC);
        atomic_store(&phase, 0);
        int first = -1, within = -1, run = 0;
        uint64_t bound = 0, work = 0;
        for (int i = 0; i < NC; i++)
            work += ccost(i, 1);
        bound = ccost(0, 1) + ccost(2, 1) + ccost(NC - 1, 1);
        if (work / 2 > bound)
            bound = work / 2;
        uint64_t last = 0;
        for (int f = 0; f < change + after; f++) {
            if (f == change) {
                atomic_store(&phase, 1);
                dagrt_graph_stats s;
                dagrt_graph_get_stats(&cst, &s);
                last = s.replans;
            }
            uint64_t a = now_ns();
            dagrt_graph_run(rt, &cgraph, &cst, NULL);
            uint64_t t = now_ns() - a;
            if (f < change)
                continue;
            dagrt_graph_stats s;
            dagrt_graph_get_stats(&cst, &s);
            if (first < 0 && s.replans > last)
                first = f - change;
            run = t * 10 <= bound * 11 ? run + 1 : 0;
            if (within < 0 && run == 5)
                within = f - change - 4;
        }
        dagrt_graph_stats s;
        dagrt_graph_get_stats(&cst, &s);
        dagrt_destroy(rt);
        printf("reacting (live costs every %u frame%s; new bound %.0f us): first re-plan %d frames "
               "after the change, within 1.10x of the bound from frame %d on (-1: not in %d "
               "frames), %llu re-plans in all\n",
               live, live > 1 ? "s" : "", bound / 1e3, first, within, after,
               (unsigned long long)s.replans);
    }
    return 0;
}
