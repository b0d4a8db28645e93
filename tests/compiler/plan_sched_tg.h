/*
 * plan_sched_tg.h - the test graphs of plan mode's list scheduler tests
 * (test_plan_sched.c, test_plan_sched_pipe.c): a graph in arrays, the
 * calls plan_sched.h asks for, and random DAGs. Static functions, one
 * copy per test program.
 */
#ifndef PLAN_SCHED_TG_H
#define PLAN_SCHED_TG_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../../runtime/exec/plan_sched.h"

#define MAXN 1200
#define MAXE 16

typedef struct tg {
    uint32_t n;
    uint32_t flags[MAXN], cost[MAXN];
    uint32_t npred[MAXN], pred[MAXN][MAXE];
    uint32_t nsucc[MAXN], succ[MAXN][MAXE * 2];
    uint32_t scratch[MAXN][PS_SCRATCH];
    uint32_t list[MAXN];
    uint32_t seq[MAXN];      /* order of placement */
    uint32_t nplaced;
    uint32_t order[PS_LISTS][MAXN];
    uint32_t len[PS_LISTS];
} tg;

static inline uint32_t t_flags(void *c, uint32_t i) { return ((tg *)c)->flags[i]; }
static inline uint32_t t_cost(void *c, uint32_t i) { return ((tg *)c)->cost[i]; }
static inline uint32_t t_npred(void *c, uint32_t i) { return ((tg *)c)->npred[i]; }
static inline uint32_t t_pred(void *c, uint32_t i, uint32_t k) { return ((tg *)c)->pred[i][k]; }
static inline uint32_t t_nsucc(void *c, uint32_t i) { return ((tg *)c)->nsucc[i]; }
static inline uint32_t t_succ(void *c, uint32_t i, uint32_t k) { return ((tg *)c)->succ[i][k]; }
static inline uint32_t *t_scratch(void *c, uint32_t i) { return ((tg *)c)->scratch[i]; }
static inline uint32_t t_list_of(void *c, uint32_t i) { return ((tg *)c)->list[i]; }
static inline void t_place(void *c, uint32_t i, uint32_t k)
{
    tg *g = c;
    cr_assert(g->list[i] == PS_NONE, "node %u placed twice", i);
    cr_assert(k < PS_LISTS);
    g->list[i] = k;
    g->seq[i] = g->nplaced++;
    g->order[k][g->len[k]++] = i;
}

static inline void tg_init(tg *g, uint32_t n)
{
    memset(g, 0, sizeof *g);
    g->n = n;
}

static inline void tg_edge(tg *g, uint32_t a, uint32_t b)
{
    g->pred[b][g->npred[b]++] = a;
    g->succ[a][g->nsucc[a]++] = b;
}

static inline ps_graph view(tg *g, uint32_t nlists)
{
    for (uint32_t i = 0; i < g->n; i++)
        g->list[i] = PS_NONE;
    g->nplaced = 0;
    memset(g->len, 0, sizeof g->len);
    ps_graph pg = {g->n, nlists, PS_XFER_NS, PS_NODE_NS, g, t_flags, t_cost, t_npred, t_pred,
                   t_nsucc, t_succ, t_scratch, t_place, t_list_of, 0};
    return pg;
}

static uint64_t rnd_state = 88172645463325252ull;
static inline uint32_t rnd(uint32_t m)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % m);
}

/* A random DAG: each node takes up to 4 inputs among the 40 before it; a
 * few gates (cost 0), OR joins and `on main` tasks; costs 1 us .. 300 us,
 * log-spread. */
static inline void tg_random(tg *g, uint32_t n)
{
    tg_init(g, n);
    for (uint32_t v = 0; v < n; v++) {
        uint32_t k = v ? rnd(5) : 0;
        for (uint32_t q = 0; q < k && v > 0; q++) {
            uint32_t lo = v > 40 ? v - 40 : 0;
            uint32_t p = lo + rnd(v - lo);
            int dup = 0;
            for (uint32_t z = 0; z < g->npred[v]; z++)
                dup |= g->pred[v][z] == p;
            if (!dup && g->nsucc[p] < MAXE * 2)
                tg_edge(g, p, v);
        }
        uint32_t r = rnd(20);
        g->flags[v] = r == 0 ? PS_GATE : r == 1 ? PS_MAIN : 0;
        if (g->npred[v] > 1 && rnd(8) == 0)
            g->flags[v] |= PS_OR;
        uint32_t c = 1000u << rnd(9);
        g->cost[v] = c + rnd(c);
    }
}

static inline uint64_t tcost(const tg *g, uint32_t v) { return (g->flags[v] & PS_GATE) ? 0 : g->cost[v]; }

#endif
