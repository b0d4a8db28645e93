/*
 * test_plan_sched.c - plan mode's list scheduler (runtime/exec/plan_sched.c,
 * which the runtime's plan builder and dagc's --stats both run) on random
 * DAGs and on hand-made uneven graphs: every node on exactly one list, the
 * lists in a valid (deadlock-free) order, `on main` on list 0, the
 * predicted frame time at or above its lower bound and equal to an
 * independent simulation of the lists it made, and the long task's path
 * not queued behind small ones. Pure: no threads, no runtime.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_sched_tg.h"

/* The lists run as plan mode runs them, computed afresh from the lists
 * alone: each list's next node starts once its list is free and its
 * inputs are done (the last one; an OR node's first), an input from
 * another list PS_XFER_NS later, each node PS_NODE_NS before its body; the
 * frame ends once list 0 knows every last node done (PS_XFER_NS more for
 * one on another list).
 * Fails the test on a deadlock (a round
 * in which no list can move). Returns the frame's end. */
static uint64_t simulate(const tg *g, uint32_t nl, uint64_t *fin)
{
    uint32_t pos[PS_LISTS] = {0};
    uint64_t free_at[PS_LISTS] = {0};
    uint8_t done[MAXN] = {0};
    uint32_t left = g->n;
    uint64_t end = 0;
    while (left) {
        int moved = 0;
        for (uint32_t k = 0; k < nl; k++) {
            while (pos[k] < g->len[k]) {
                uint32_t v = g->order[k][pos[k]];
                int ready = 1;
                uint64_t t = (g->flags[v] & PS_OR) && g->npred[v] ? UINT64_MAX : 0;
                for (uint32_t q = 0; q < g->npred[v]; q++) {
                    uint32_t p = g->pred[v][q];
                    if (!done[p]) {
                        ready = 0;
                        break;
                    }
                    uint64_t a = fin[p] + (g->list[p] != k ? PS_XFER_NS : 0);
                    if ((g->flags[v] & PS_OR) ? a < t : a > t)
                        t = a;
                }
                if (!ready)
                    break;
                uint64_t s = t > free_at[k] ? t : free_at[k];
                fin[v] = s + PS_NODE_NS + tcost(g, v);
                free_at[k] = fin[v];
                done[v] = 1;
                /* the frame ends on list 0: a last node elsewhere reaches it later */
                uint64_t e = fin[v] + (g->nsucc[v] == 0 && k != 0 ? PS_XFER_NS : 0);
                if (e > end)
                    end = e;
                pos[k]++;
                left--;
                moved = 1;
            }
        }
        cr_assert(moved, "the lists deadlock (%u nodes left)", left);
    }
    return end;
}

Test(plan_sched, random_dags)
{
    static tg g;
    static uint64_t fin[MAXN];
    for (int round = 0; round < 400; round++) {
        uint32_t n = 1 + rnd(round < 200 ? 60 : 600);
        uint32_t nl = 1 + rnd(PS_LISTS);
        tg_random(&g, n);
        ps_graph pg = view(&g, nl);
        ps_result r;
        cr_assert(ps_schedule(&pg, &r));
        cr_assert_eq(g.nplaced, n, "every node placed once");
        uint32_t total = 0;
        for (uint32_t k = 0; k < nl; k++)
            total += g.len[k];
        cr_assert_eq(total, n);
        for (uint32_t k = nl; k < PS_LISTS; k++)
            cr_assert_eq(g.len[k], 0, "no node beyond the lists asked for");
        uint64_t work = 0, crit = 0;
        for (uint32_t v = 0; v < n; v++) {
            cr_assert(g.list[v] < nl);
            if (g.flags[v] & PS_MAIN)
                cr_assert_eq(g.list[v], 0, "`on main` node %u on list %u", v, g.list[v]);
            for (uint32_t q = 0; q < g.npred[v]; q++)
                cr_assert(g.seq[g.pred[v][q]] < g.seq[v], "placement order is topological");
            work += tcost(&g, v);
        }
        /* The critical path, afresh: earliest finishes, an AND node after
         * its last input, an OR node after its first. */
        static uint64_t ef[MAXN];
        for (uint32_t v = 0; v < n; v++) {
            uint64_t at = 0;
            for (uint32_t k = 0; k < g.npred[v]; k++) {
                uint64_t e = ef[g.pred[v][k]];
                if (k == 0 || ((g.flags[v] & PS_OR) ? e < at : e > at))
                    at = e;
            }
            ef[v] = at + tcost(&g, v);
            if (ef[v] > crit)
                crit = ef[v];
        }
        cr_assert_eq(r.work, work);
        cr_assert_eq(r.critical, crit);
        /* Each list in simulated start order. */
        for (uint32_t k = 0; k < nl; k++)
            for (uint32_t i = 1; i < g.len[k]; i++)
                cr_assert(g.scratch[g.order[k][i]][PS_START] >=
                          g.scratch[g.order[k][i - 1]][PS_FINISH]);
        uint64_t sim = simulate(&g, nl, fin);
        cr_assert_eq(r.makespan, sim, "round %d: predicted %llu, the lists simulated %llu",
                     round, (unsigned long long)r.makespan, (unsigned long long)sim);
        for (uint32_t v = 0; v < n; v++)
            cr_assert_eq(fin[v], g.scratch[v][PS_FINISH]);
        /* The bound: no schedule beats the critical path (an OR node may
         * start on its first input, so only for graphs without OR) or
         * the work shared evenly. */
        cr_assert(r.makespan >= (work + nl - 1) / nl);
        int any_or = 0;
        for (uint32_t v = 0; v < n; v++)
            any_or |= (g.flags[v] & PS_OR) != 0;
        if (!any_or)
            cr_assert(r.makespan >= crit);
        /* The predicted critical path walks back to a node started at 0. */
        uint32_t steps = 0;
        for (uint32_t v = r.last; v != PS_NONE; steps++) {
            cr_assert(steps <= n);
            uint32_t k = g.list[v], prev = PS_NONE;
            for (uint32_t i = 1; i < g.len[k]; i++)
                if (g.order[k][i] == v)
                    prev = g.order[k][i - 1];
            uint32_t b = ps_crit_before(&pg, v, prev);
            if (b == PS_NONE)
                cr_assert_eq(g.scratch[v][PS_START], 0);
            v = b;
        }
    }
}

/* A frame with a game's unevenness: input, then a 220 us solve followed
 * by a 60 us step, beside twelve 10 us tasks, all joined by present. The
 * solve's path must start at once after input, not behind small tasks,
 * and the frame must come out at its bound: max(critical path, work / 2)
 * with the transfers the model charges. */
Test(plan_sched, long_path_first)
{
    static tg g;
    tg_init(&g, 16);
    g.cost[0] = 10000;                   /* input */
    for (uint32_t i = 1; i <= 12; i++) { /* small tasks, indices before the solve */
        g.cost[i] = 10000;
        tg_edge(&g, 0, i);
    }
    g.cost[13] = 220000;                 /* the solve */
    tg_edge(&g, 0, 13);
    g.cost[14] = 60000;                  /* after it */
    tg_edge(&g, 13, 14);
    g.cost[15] = 10000;                  /* present, on main */
    g.flags[15] = PS_MAIN;
    for (uint32_t i = 1; i <= 14; i++)
        if (i != 13)
            tg_edge(&g, i, 15);
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(g.scratch[13][PS_START], 10000 + PS_NODE_NS, "the solve starts at once (at %u)",
                 g.scratch[13][PS_START]);
    cr_assert_eq(g.list[15], 0);
    /* critical path 300 us; work 440 us: every small task on the other list */
    cr_assert_eq(r.critical, 300000);
    cr_assert(r.makespan <= 300000 + 2 * PS_XFER_NS + 4 * PS_NODE_NS, "predicted %llu",
              (unsigned long long)r.makespan);
}

/* The 32-node benchmark frame (bench/frame/bench_frame.dag): input, then
 * levels of 4, 8, 8, 4, 4, 2 and present, each task after two of the level
 * before; no costs (each PS_DEFAULT_COST). */
static void tg_bench_frame(tg *g)
{
    static const uint8_t p2[31][2] = {
        {0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, 2}, {1, 2}, {2, 3}, {2, 3}, {3, 4}, {3, 4},
        {4, 1}, {4, 1}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}, {11, 12}, {12, 5},
        {13, 14}, {15, 16}, {17, 18}, {19, 20}, {21, 22}, {22, 23}, {23, 24}, {24, 21},
        {25, 26}, {27, 28}, {29, 30},
    };
    tg_init(g, 32);
    for (uint32_t v = 0; v < 32; v++)
        g->cost[v] = PS_DEFAULT_COST;
    for (uint32_t v = 1; v < 32; v++) {
        tg_edge(g, p2[v - 1][0], v);
        if (p2[v - 1][1] != p2[v - 1][0])
            tg_edge(g, p2[v - 1][1], v);
    }
}

/* The split plan mode made before the list scheduler (main 230a842,
 * exec_plan_build.c), the reference for graphs without costs: each level
 * (most tasks on a path before it) shared out by count, ceil(width /
 * lists) a list, each task on the list with room that holds most of its
 * inputs, ties to the list of the task before it. Fills g's lists as
 * view() and ps_schedule would (no gates or `on main` in its graphs). */
static void level_split(tg *g, uint32_t nl)
{
    static uint32_t lev[MAXN];
    uint32_t maxl = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        lev[v] = 0;
        g->list[v] = PS_NONE;
    }
    for (uint32_t u = 0; u < g->n; u++) {
        for (uint32_t k = 0; k < g->nsucc[u]; k++)
            if (lev[g->succ[u][k]] < lev[u] + 1)
                lev[g->succ[u][k]] = lev[u] + 1;
        maxl = lev[u] > maxl ? lev[u] : maxl;
    }
    memset(g->len, 0, sizeof g->len);
    for (uint32_t l = 0; l <= maxl; l++) {
        uint32_t width = 0, count[PS_LISTS] = {0}, last = 0;
        for (uint32_t u = 0; u < g->n; u++)
            width += lev[u] == l;
        uint32_t cap = (width + nl - 1) / nl;
        for (uint32_t u = 0; u < g->n; u++) {
            if (lev[u] != l)
                continue;
            uint32_t aff[PS_LISTS] = {0}, k = PS_NONE;
            for (uint32_t q = 0; q < g->npred[u]; q++)
                aff[g->list[g->pred[u][q]]]++;
            for (uint32_t c = 0; c < nl; c++)
                if (count[c] < cap && (k == PS_NONE || aff[c] > aff[k] || (aff[c] == aff[k] && c == last)))
                    k = c;
            count[k]++;
            last = k;
            g->list[u] = k;
            g->order[k][g->len[k]++] = u;
        }
    }
}

/* Edges between two lists: each a hand-over between threads at run time. */
static uint32_t cross_edges(const tg *g)
{
    uint32_t x = 0;
    for (uint32_t v = 0; v < g->n; v++)
        for (uint32_t q = 0; q < g->npred[v]; q++)
            x += g->list[g->pred[v][q]] != g->list[v];
    return x;
}

/* Without costs (all the same) a uniform layered frame is shared evenly
 * and level by level, as before costs existed: the 32-node benchmark's
 * shape on 2 lists comes out at 16 and 16. */
Test(plan_sched, uniform_even)
{
    static tg g;
    tg_bench_frame(&g);
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    cr_assert(g.len[0] >= 15 && g.len[0] <= 17, "list 0 has %u of 32", g.len[0]);
    /* 32 us of work on 2 lists: 16 us, plus a few transfers at most */
    cr_assert(r.makespan <= 16 * (PS_DEFAULT_COST + PS_NODE_NS) + 8 * PS_XFER_NS, "predicted %llu",
              (unsigned long long)r.makespan);
}

/* A parallel task's range is shared with the lists that run out of work
 * while it runs (each PS_XFER_NS after that: its poll and its split); a
 * node run elsewhere (a hot worker) costs its list only the claim. */
Test(plan_sched, parallel_and_elsewhere)
{
    static tg g;
    tg_init(&g, 2);
    g.cost[0] = 1000;
    g.cost[1] = 400000;
    g.flags[1] = PS_PARALLEL;
    tg_edge(&g, 0, 1);
    ps_graph pg = view(&g, 4);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    /* input on one list; the range over all four once input is done: the
     * claimer from b = 1000 + 2 * PS_NODE_NS, the three others from
     * b + PS_XFER_NS, ending together */
    uint64_t b = 1000 + 2 * PS_NODE_NS;
    cr_assert_eq(r.makespan, (400000 + b + 3 * (b + PS_XFER_NS) + 3) / 4, "predicted %llu",
                 (unsigned long long)r.makespan);
    cr_assert_eq(r.critical, 1000 + 100000, "critical %llu", (unsigned long long)r.critical);
    cr_assert_eq(r.work, 401000);
    g.flags[1] = 0;
    pg = view(&g, 4);
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(r.makespan, 401000 + 2 * PS_NODE_NS);

    tg_init(&g, 3);
    g.cost[0] = 50000;
    g.cost[1] = 50000;
    g.cost[2] = 50000;
    g.flags[0] = PS_ELSEWHERE;
    g.flags[1] = PS_ELSEWHERE;
    pg = view(&g, 1);
    cr_assert(ps_schedule(&pg, &r));
    /* one list: both claimed at once, run elsewhere; the third runs on it */
    cr_assert_eq(r.makespan, 50000 + 3 * PS_NODE_NS);
    cr_assert_eq(r.busy[0], 50000);
}

/* A list busy when a parallel task starts takes its pieces once its own
 * work is done (the late taker of pfor/pfor.c): the range's end is where
 * both lists' time on it adds up to its cost, not the claimer's alone. A
 * list that would be free only after the range ends alone never joins. */
Test(plan_sched, parallel_late_joiner)
{
    static tg g;
    /* 0: a (1 us) -> 2: p (parallel, 20 us); 1: q (5 us) -> 3: q2 (20 us).
     * q's chain goes first (the longer), a beside it, then p (placed
     * before q2: it can start earlier) while q still runs. */
    tg_init(&g, 4);
    g.cost[0] = 1000;
    g.cost[1] = 5000;
    g.cost[2] = 20000;
    g.flags[2] = PS_PARALLEL;
    g.cost[3] = 20000;
    tg_edge(&g, 0, 2);
    tg_edge(&g, 1, 3);
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_neq(g.list[0], g.list[1], "a and q run side by side");
    cr_assert_eq(g.list[2], g.list[0], "p stays with its input");
    cr_assert_lt(g.seq[2], g.seq[3], "p placed before q2");
    uint64_t b = g.scratch[2][PS_START] + PS_NODE_NS;   /* p's body starts */
    uint64_t j = g.scratch[1][PS_FINISH] + PS_XFER_NS;  /* q's list joins */
    cr_assert_gt(j, b, "q's list is busy when p starts");
    cr_assert_lt(j, b + 20000, "and free before p would end alone");
    uint64_t end = (20000 + b + j + 1) / 2;
    cr_assert_eq(g.scratch[2][PS_FINISH], end, "p ends at %u, want %llu", g.scratch[2][PS_FINISH],
                 (unsigned long long)end);
    cr_assert_eq(r.busy[g.list[0]], 1000 + (end - b));
    cr_assert_eq(r.busy[g.list[1]], 5000 + (end - j) + 20000);
    cr_assert_geq(g.scratch[3][PS_START], end, "q2 after q's list left p");
    cr_assert_eq(r.critical, 25000);

    /* q too long: its list is free only after p would end: p runs on its
     * claimer alone, q's list untouched by it */
    g.cost[1] = 30000;
    pg = view(&g, 2);
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_neq(g.list[0], g.list[1]);
    cr_assert_eq(g.scratch[2][PS_FINISH], g.scratch[2][PS_START] + PS_NODE_NS + 20000);
    cr_assert_eq(r.busy[g.list[0]], 1000 + 20000);
    cr_assert_eq(r.busy[g.list[1]], 30000 + 20000);

    /* one list: the whole cost, on the critical path too */
    g.cost[1] = 5000;
    pg = view(&g, 1);
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(r.critical, 25000);
    cr_assert_eq(r.makespan, 46000 + 4 * PS_NODE_NS);
}

/* The critical path counts a parallel task's share on n lists, and an OR
 * node after its first input: a lower bound of the frame time, which the
 * prediction never goes under. The priority still counts the whole cost
 * (placed early, the range holds the lists that join it only for its
 * share). */
Test(plan_sched, parallel_critical)
{
    static tg g;
    /* 0 -> 1 (parallel, 40 us); 2 -> 3 (plain, 12 us each); 3 -> 4, an OR
     * of 1 and 3 */
    tg_init(&g, 5);
    g.cost[0] = 1000;
    g.cost[1] = 40000;
    g.flags[1] = PS_PARALLEL;
    g.cost[2] = 12000;
    g.cost[3] = 12000;
    g.cost[4] = 1000;
    g.flags[4] = PS_OR;
    tg_edge(&g, 0, 1);
    tg_edge(&g, 2, 3);
    tg_edge(&g, 1, 4);
    tg_edge(&g, 3, 4);
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(g.scratch[0][PS_BL], 1000 + 40000 + 1000);
    cr_assert_eq(g.seq[0], 0, "the parallel task's chain goes first");
    /* 0 -> 1 -> 4: 1 + 20 + 1 us (4 after its first input); 2 -> 3: 24 us */
    cr_assert_eq(r.critical, 24000, "critical %llu", (unsigned long long)r.critical);
    cr_assert_geq(r.makespan, r.critical);
    pg = view(&g, 4);
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(r.critical, 24000);
    g.flags[4] = 0;   /* AND, one list: after both, the range whole */
    pg = view(&g, 1);
    cr_assert(ps_schedule(&pg, &r));
    cr_assert_eq(r.critical, 1000 + 40000 + 1000);
    cr_assert_geq(r.makespan, r.critical);
}

/* The benchmark frame without costs: no more hand-overs between the
 * lists than the level split made (11; a list scheduler that places each
 * task where it starts first alternates the lists among a level's equal
 * tasks, and made 29), and a frame no longer in the model. */
Test(plan_sched, uniform_handovers)
{
    static tg g;
    static uint64_t fin[MAXN];
    tg_bench_frame(&g);
    level_split(&g, 2);
    uint32_t split_x = cross_edges(&g);
    uint64_t split_t = simulate(&g, 2, fin);
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(ps_schedule(&pg, &r));
    uint32_t x = cross_edges(&g);
    cr_assert(x <= split_x, "%u edges between the lists, the level split's %u", x, split_x);
    cr_assert(r.makespan <= split_t, "predicted %llu, the level split %llu",
              (unsigned long long)r.makespan, (unsigned long long)split_t);
    cr_assert(g.len[0] >= 15 && g.len[0] <= 17, "list 0 has %u of 32", g.len[0]);
}

/* A uniform layered graph (each level's tasks after 1 to 3 nearby tasks
 * of the level before, every task the same cost) on 2 to 4 lists, over
 * many such graphs: frames no longer than the level split's in the model,
 * and hand-overs at most a fifth more than it (the scheduler moves a task
 * to another list where it starts sooner, which the split, by count within
 * a level, never does; placing each task where it starts first alone made
 * 1.85 times the split's). */
Test(plan_sched, uniform_layered_handovers)
{
    static tg g;
    static uint64_t fin[MAXN];
    uint64_t sx = 0, nx = 0, st = 0, nt = 0;
    for (int round = 0; round < 300; round++) {
        uint32_t levels = 3 + rnd(8), n = 0, prev_lo = 0, prev_n = 0;
        tg_init(&g, 0);
        for (uint32_t l = 0; l < levels; l++) {
            uint32_t w = l == 0 ? 1 + rnd(2) : 1 + rnd(12);
            for (uint32_t i = 0; i < w && n < MAXN; i++, n++) {
                g.cost[n] = PS_DEFAULT_COST;
                if (l == 0)
                    continue;
                uint32_t k = 1 + rnd(3);
                uint32_t centre = prev_n * i / w;
                for (uint32_t q = 0; q < k; q++) {
                    uint32_t p = prev_lo + (centre + q) % prev_n;
                    int dup = 0;
                    for (uint32_t z = 0; z < g.npred[n]; z++)
                        dup |= g.pred[n][z] == p;
                    if (!dup)
                        tg_edge(&g, p, n);
                }
            }
            prev_lo = n - w;
            prev_n = w;
        }
        g.n = n;
        uint32_t nl = 2 + rnd(3);
        level_split(&g, nl);
        sx += cross_edges(&g);
        st += simulate(&g, nl, fin);
        ps_graph pg = view(&g, nl);
        ps_result r;
        cr_assert(ps_schedule(&pg, &r));
        nx += cross_edges(&g);
        nt += r.makespan;
    }
    fprintf(stderr, "plan_sched: uniform layered graphs: %llu hand-overs (level split %llu), "
            "frames %llu us (level split %llu)\n", (unsigned long long)nx, (unsigned long long)sx,
            (unsigned long long)nt / 1000, (unsigned long long)st / 1000);
    cr_assert(nx * 5 <= sx * 6, "%llu hand-overs, the level split's %llu", (unsigned long long)nx,
              (unsigned long long)sx);
    cr_assert(nt <= st, "frames %llu ns in all, the level split's %llu", (unsigned long long)nt,
              (unsigned long long)st);
}

/* Bad tables: an edge back to an earlier node places nothing. */
Test(plan_sched, bad_edge)
{
    static tg g;
    tg_init(&g, 2);
    tg_edge(&g, 0, 1);
    g.succ[1][g.nsucc[1]++] = 0;
    ps_graph pg = view(&g, 2);
    ps_result r;
    cr_assert(!ps_schedule(&pg, &r));
    cr_assert_eq(g.nplaced, 0);
}

/* A 1,000-node graph's schedule on 16 lists, timed (printed, not
 * asserted: the figure goes to docs/runtime.md). */
Test(plan_sched, thousand_nodes)
{
    static tg g;
    tg_random(&g, 1000);
    struct timespec a, b;
    ps_result r;
    int reps = 20;
    timespec_get(&a, TIME_UTC);
    for (int i = 0; i < reps; i++) {
        ps_graph pg = view(&g, 16);
        cr_assert(ps_schedule(&pg, &r));
    }
    timespec_get(&b, TIME_UTC);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / reps;
    cr_log_info("1000 nodes, 16 lists: %.0f us per schedule", us);
    fprintf(stderr, "plan_sched: 1000 nodes, 16 lists: %.0f us per schedule\n", us);
}
