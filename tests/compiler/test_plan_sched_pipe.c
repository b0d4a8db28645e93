/*
 * test_plan_sched_pipe.c - the list scheduler's lists for a pipeline's
 * steady state (runtime/exec/plan_sched.c, ps_graph.in_flight 2): the
 * caller's `on main` tail counted once its next frame has started, so the
 * lists come out even in work and frames in flight run at about work /
 * lists. Checked on a game's frame against a simulation of frames in flight
 * (each list runs its nodes frame after frame, as exec/pplan.c does), and
 * on random DAGs for the lists' validity. Pure: no threads, no runtime.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plan_sched_tg.h"

static ps_graph view_pipe(tg *g, uint32_t nl, uint32_t in_flight)
{
    ps_graph pg = view(g, nl);
    pg.in_flight = in_flight;
    return pg;
}

#define FRAMES 24
static uint64_t sfin[FRAMES][MAXN];
static uint8_t sdone[FRAMES][MAXN];

/* Frames in flight on the lists g was given, depth frames at most: list
 * k >= 1 runs its nodes frame after frame in list order; list 0, the
 * caller, those of the oldest frame it has nodes left in, and, while that
 * frame's next one is not ready when the caller is free, the next list-0
 * node of the frame after it if that one is ready sooner (exec/pplan.c:
 * the caller looks ahead). Node v of frame f starts once its inputs of
 * frame f are done (PS_XFER_NS later from another list), v of frame f - 1
 * is done, and frame f - depth has ended (a pipeline's submit waits for
 * it); PS_NODE_NS, then its cost. Among the lists whose next node has its
 * inputs simulated, the one starting first moves. Fails on a deadlock.
 * Returns the steady state's period: the mean time between frame ends over
 * the second half. */
static uint64_t pipe_period(const tg *g, uint32_t nl, uint32_t depth)
{
    memset(sdone, 0, sizeof sdone);
    uint32_t pos[PS_LISTS] = {0}, frame[PS_LISTS] = {0}, cpos[FRAMES] = {0};
    uint64_t free_at[PS_LISTS] = {0}, end[FRAMES] = {0};
    uint32_t ended[FRAMES] = {0}, sinks = 0, left = FRAMES * g->n;
    for (uint32_t v = 0; v < g->n; v++)
        sinks += g->nsucc[v] == 0;
    while (left) {
        uint32_t bk = PS_NONE, bf = 0, bv = 0;
        uint64_t bs = UINT64_MAX;
        for (uint32_t k = 0; k < nl; k++) {
            uint32_t fs[2], nf = 0;
            if (k == 0) {
                uint32_t f0 = 0;
                while (f0 < FRAMES && cpos[f0] >= g->len[0])
                    f0++;
                if (f0 < FRAMES)
                    fs[nf++] = f0;
                if (f0 + 1 < FRAMES)
                    fs[nf++] = f0 + 1;
            } else if (frame[k] < FRAMES && g->len[k] > 0) {
                fs[nf++] = frame[k];
            }
            uint64_t own = UINT64_MAX;
            for (uint32_t z = 0; z < nf; z++) {
                uint32_t f = fs[z], p = k == 0 ? cpos[f] : pos[k];
                if (p >= g->len[k])
                    continue;
                uint32_t v = g->order[k][p];
                uint64_t t = free_at[k];
                int ok = f < depth || ended[f - depth] == sinks;
                if (ok && f >= depth && end[f - depth] > t)
                    t = end[f - depth];
                if (ok && f > 0)
                    ok = sdone[f - 1][v], t = ok && sfin[f - 1][v] > t ? sfin[f - 1][v] : t;
                for (uint32_t q = 0; q < g->npred[v] && ok; q++) {
                    uint32_t u = g->pred[v][q];
                    ok = sdone[f][u];
                    uint64_t a = sfin[f][u] + (g->list[u] != k ? PS_XFER_NS : 0);
                    if (ok && a > t)
                        t = a;
                }
                if (!ok)
                    continue;
                if (z == 0)
                    own = t;
                /* the look-ahead only where the own frame would wait */
                if (z == 1 && (own <= free_at[0] || t >= own))
                    continue;
                if (t < bs || (t == bs && k < bk)) {
                    bs = t;
                    bk = k;
                    bf = f;
                    bv = v;
                }
            }
        }
        cr_assert(bk != PS_NONE, "frames in flight deadlock (%u nodes left)", left);
        uint64_t fin = bs + PS_NODE_NS + tcost(g, bv);
        sfin[bf][bv] = fin;
        sdone[bf][bv] = 1;
        free_at[bk] = fin;
        if (bk == 0) {
            cpos[bf]++;
        } else if (++pos[bk] == g->len[bk]) {
            pos[bk] = 0;
            frame[bk]++;
        }
        if (g->nsucc[bv] == 0) {
            uint64_t e = fin + (bk != 0 ? PS_XFER_NS : 0);
            end[bf] = e > end[bf] ? e : end[bf];
            ended[bf]++;
        }
        left--;
    }
    return (end[FRAMES - 1] - end[FRAMES / 2]) / (FRAMES - 1 - FRAMES / 2);
}

/* bench/frame/game_frame.dag, its particles one task: input `on main`; a
 * physics chain; 12 animation samples, each with its blend, joined by
 * two skinning tasks; camera, AI, audio and its mix, UI, streaming; cull,
 * render prep; render and present `on main`. Costs in us. */
static void tg_game(tg *g)
{
    static const struct { uint32_t us, main, np, p[6]; } t[43] = {
        {40, 1, 0, {0}},                            /* 0 input */
        {90, 0, 1, {0}}, {120, 0, 1, {1}}, {220, 0, 1, {2}}, {60, 0, 1, {3}},   /* 1-4 physics */
        {30, 0, 1, {0}}, {18, 0, 1, {0}}, {40, 0, 1, {0}}, {12, 0, 1, {0}},     /* 5-16 samples */
        {26, 0, 1, {0}}, {35, 0, 1, {0}}, {10, 0, 1, {0}}, {22, 0, 1, {0}},
        {38, 0, 1, {0}}, {15, 0, 1, {0}}, {28, 0, 1, {0}}, {20, 0, 1, {0}},
        {14, 0, 1, {5}}, {25, 0, 1, {6}}, {10, 0, 1, {7}}, {32, 0, 1, {8}},     /* 17-28 blends */
        {18, 0, 1, {9}}, {12, 0, 1, {10}}, {36, 0, 1, {11}}, {20, 0, 1, {12}},
        {16, 0, 1, {13}}, {30, 0, 1, {14}}, {22, 0, 1, {15}}, {11, 0, 1, {16}},
        {40, 0, 6, {17, 18, 19, 20, 21, 22}},       /* 29 skin_a */
        {40, 0, 6, {23, 24, 25, 26, 27, 28}},       /* 30 skin_b */
        {240, 0, 1, {0}},                           /* 31 particles */
        {20, 0, 1, {0}},                            /* 32 camera */
        {60, 0, 1, {0}}, {100, 0, 1, {33}},         /* 33-34 ai */
        {80, 0, 1, {0}}, {60, 0, 1, {35}},          /* 35-36 audio, mix */
        {40, 0, 1, {0}}, {50, 0, 1, {0}},           /* 37 ui, 38 streaming */
        {60, 0, 4, {4, 29, 30, 32}},                /* 39 cull */
        {120, 0, 5, {39, 31, 34, 37, 38}},          /* 40 render_prep */
        {150, 1, 2, {40, 36}},                      /* 41 render */
        {30, 1, 1, {41}},                           /* 42 present */
    };
    tg_init(g, 43);
    for (uint32_t v = 0; v < 43; v++) {
        g->cost[v] = t[v].us * 1000;
        g->flags[v] = t[v].main ? PS_MAIN : 0;
        for (uint32_t q = 0; q < t[v].np; q++)
            tg_edge(g, t[v].p[q], v);
    }
}

/* The one-frame lists leave the caller the frame's whole `on main` tail
 * (render, present: 180 us) on top of its share, and frames in flight then
 * run at the caller's list's pace, about 10% over work / 2; the steady
 * state's lists share the work evenly and come within 3% of it. The
 * predicted period is the simulated one within 2%. (Before in_flight both
 * calls made the one-frame lists: this test fails there.) */
Test(plan_sched_pipe, game_frame)
{
    static tg g;
    tg_game(&g);
    ps_graph one = view_pipe(&g, 2, 1);
    ps_result r1;
    cr_assert(ps_schedule(&one, &r1));
    uint64_t p1 = pipe_period(&g, 2, 2);
    cr_assert(r1.busy[0] > r1.busy[1] + 150000, "one frame: lists %llu / %llu",
              (unsigned long long)r1.busy[0], (unsigned long long)r1.busy[1]);
    ps_graph two = view_pipe(&g, 2, 2);
    ps_result r2;
    cr_assert(ps_schedule(&two, &r2));
    cr_assert_eq(g.nplaced, 43);
    cr_assert_eq(g.list[0], 0);
    cr_assert_eq(g.list[41], 0);
    cr_assert_eq(g.list[42], 0);
    uint64_t p2 = pipe_period(&g, 2, 2);
    uint64_t half = r2.work / 2;
    printf("game frame, 2 lists: one-frame lists %llu / %llu ns, frames in flight every %llu ns; "
           "steady-state lists %llu / %llu ns, every %llu ns (predicted %llu); work / 2 %llu ns\n",
           (unsigned long long)r1.busy[0], (unsigned long long)r1.busy[1], (unsigned long long)p1,
           (unsigned long long)r2.busy[0], (unsigned long long)r2.busy[1], (unsigned long long)p2,
           (unsigned long long)r2.makespan, (unsigned long long)half);
    uint64_t d = r2.busy[0] > r2.busy[1] ? r2.busy[0] - r2.busy[1] : r2.busy[1] - r2.busy[0];
    cr_assert(d <= 60000, "steady state: lists %llu / %llu", (unsigned long long)r2.busy[0],
              (unsigned long long)r2.busy[1]);
    cr_assert(p1 * 100 > half * 108, "one-frame lists in flight: %llu", (unsigned long long)p1);
    cr_assert(p2 * 100 <= half * 103, "steady-state lists in flight: %llu", (unsigned long long)p2);
    cr_assert(r2.makespan * 100 >= p2 * 98 && r2.makespan * 100 <= p2 * 102,
              "predicted period %llu, simulated %llu", (unsigned long long)r2.makespan,
              (unsigned long long)p2);
    /* One frame alone on the steady state's lists is slower: G_run keeps
     * the one-frame lists. */
    cr_assert(pipe_period(&g, 2, 1) > r1.makespan);
}

/* Random DAGs (gates, OR joins, `on main` tasks; no parallel or elsewhere
 * node): the steady state's lists are valid lists (each node once, `on
 * main` on list 0, placed in a topological order, frames in flight never
 * deadlock), the period is at least the work shared evenly, and a graph
 * without an `on main` tail gets exactly the one-frame lists. */
Test(plan_sched_pipe, random_dags)
{
    static tg g;
    static uint32_t list1[MAXN];
    for (int round = 0; round < 200; round++) {
        uint32_t n = 1 + rnd(round < 100 ? 60 : 300);
        uint32_t nl = 1 + rnd(round < 100 ? 4 : PS_LISTS);
        tg_random(&g, n);
        if (round % 2)   /* half without a tail: the last node off main */
            g.flags[n - 1] &= ~(uint32_t)PS_MAIN;
        int tail = 0;
        for (uint32_t v = 0; v < n; v++)
            tail |= (g.flags[v] & PS_MAIN) && g.nsucc[v] == 0;
        ps_graph one = view_pipe(&g, nl, 1);
        ps_result r1;
        cr_assert(ps_schedule(&one, &r1));
        memcpy(list1, g.list, n * sizeof *list1);
        ps_graph two = view_pipe(&g, nl, 2);
        ps_result r2;
        cr_assert(ps_schedule(&two, &r2));
        cr_assert_eq(g.nplaced, n);
        uint64_t work = 0;
        for (uint32_t v = 0; v < n; v++) {
            cr_assert(g.list[v] < nl);
            if (g.flags[v] & PS_MAIN)
                cr_assert_eq(g.list[v], 0);
            for (uint32_t q = 0; q < g.npred[v]; q++)
                cr_assert(g.seq[g.pred[v][q]] < g.seq[v]);
            work += tcost(&g, v);
        }
        cr_assert_eq(r2.work, work);
        cr_assert_eq(r2.critical, r1.critical);
        cr_assert(r2.makespan >= (work + nl - 1) / nl, "round %d: period %llu, work %llu on %u",
                  round, (unsigned long long)r2.makespan, (unsigned long long)work, nl);
        if (!tail)
            cr_assert(memcmp(list1, g.list, n * sizeof *list1) == 0,
                      "round %d: no tail, yet other lists", round);
        if (n <= 60)
            (void)pipe_period(&g, nl, 2);   /* never deadlocks */
    }
}
