/*
 * exec/plan_build.c - plan mode's lists: how a graph's nodes are shared out
 * among the caller and the helpers, once per graph and state (exec/plan.c
 * has the design, "plan mode", and runs them).
 */
#include "exec.h"

#include <stdlib.h>

/* The most lists a plan makes: one per CPU (a list is a thread the plan
 * waits for: more of them than CPUs only take turns, each turn a stall of
 * the others; counted at the runtime's create, since counting reads files
 * and allocates, and plans are made again between frames: exec/live.c),
 * or DAGRT_PLAN_LISTS (2 .. PLAN_LISTS; the tests use it to run several
 * helper lists on small machines), read at each build. */
static uint32_t plan_lists_most(const dagrt *rt)
{
    const char *v = rt_os_getenv("DAGRT_PLAN_LISTS");
    long n = v ? strtol(v, NULL, 10) : 0;
    if (n <= 0)
        n = rt->cpus;
    return n < 2 ? 2 : n > PLAN_LISTS ? PLAN_LISTS : (uint32_t)n;
}

/* Makes the lists for r->g (see the top of this section). Plain
 * stores: it runs on the caller between runs. Returns false when the graph
 * cannot run in plan mode. Its scratch (levels, buckets) is the nodes'
 * node_plan fields for it. */
bool rt_plan_build(graph_rt *r)
{
    const dagrt_graph *g = r->g;
    uint32_t n = g->nnodes;
    if (n > UINT16_MAX)
        return false;
    /* Nodes that run elsewhere (exec/plan_off.c): fiber
     * nodes always, hot ones where the runtime has hot workers. */
    dagrt *rt = r->rt;
    bool hot_workers = rt->cfg.hot_workers > 0;
    r->plan_offmask = DAGRT_NODE_FIBER | (hot_workers ? DAGRT_NODE_HOT : 0u);
    r->plan_off = 0;
    r->plan_share = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = g->nodes[i].flags;
        if ((f & r->plan_offmask) && !(f & DAGRT_NODE_MAIN))
            r->plan_off = 1;
        if (f & (r->plan_offmask | DAGRT_NODE_PARALLEL))
            r->plan_share = 1;
        node_rt *x = &r->nodes[i];
        x->plan.npl = 0;
        x->plan.nprv = 0;
        x->run = r;
        x->status = 0;
        /* relaxed: between runs, on the caller; a run's start publishes it. */
        atomic_store_explicit(&x->plan.done, 0, memory_order_relaxed);
        x->plan.level = 0;
        x->plan.bucket = NONE;
    }
    /* Predecessors and levels (a node's level: the most tasks on a path
     * from a root before it); the tables are in topological order. */
    uint32_t maxlevel = 0;
    for (uint32_t u = 0; u < n; u++) {
        const dagrt_node *un = &g->nodes[u];
        uint32_t lu = r->nodes[u].plan.level;
        if (un->succ_first > g->nsucc || un->nsucc > g->nsucc - un->succ_first)
            return false;
        for (uint32_t k = 0; k < un->nsucc; k++) {
            uint32_t s = g->succ[un->succ_first + k];
            if (s <= u || s >= n || r->nodes[s].plan.npl >= PLAN_MAXPRED)
                return false;
            node_rt *sx = &r->nodes[s];
            sx->plan.pred[sx->plan.npl++] = (uint16_t)u;
            /* A gate costs nothing: what follows it is on its level, so
             * that a task after a gate is shared out beside the tasks it
             * may run with (the order stays topological: a gate comes
             * before its successors in the tables). */
            uint32_t ls = lu + (un->kind != DAGRT_NODE_GATE);
            if (sx->plan.level < ls)
                sx->plan.level = ls;
        }
        if (lu > maxlevel)
            maxlevel = lu;
    }
    for (uint32_t i = 0; i < n; i++)
        if (r->nodes[i].plan.npl != g->nodes[i].npred)
            return false;
    /* `prev` inputs, after each node's predecessors (plan_ready), from
     * the tables' psucc lists (the nodes that name x as `prev x`). */
    for (uint32_t x = 0; x < n; x++) {
        const dagrt_node *xn = &g->nodes[x];
        if (xn->npsucc == 0)
            continue;
        if (!g->psucc)
            return false;
        for (uint32_t k = 0; k < xn->npsucc; k++) {
            uint32_t s = g->psucc[xn->psucc_first + k];
            if (s >= n)
                return false;
            node_plan *sp = &r->nodes[s].plan;
            if (sp->npl + sp->nprv >= PLAN_MAXPRED || sp->nprv == UINT8_MAX)
                return false;
            sp->pred[sp->npl + sp->nprv++] = (uint16_t)x;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        if (r->nodes[i].plan.nprv != g->nodes[i].nprev)
            return false;
    /* Buckets per level, each in index order (pushed in reverse). */
    for (uint32_t u = n; u-- > 0;) {
        uint32_t l = r->nodes[u].plan.level;
        r->nodes[u].plan.bucket_next = r->nodes[l].plan.bucket;
        r->nodes[l].plan.bucket = u;
    }
    /* A list per thread, but no more than the widest level has tasks
     * (two at least: one helper's list is what the plan is for). */
    uint32_t maxwidth = 0;
    for (uint32_t l = 0; l <= maxlevel; l++) {
        uint32_t width = 0;
        for (uint32_t u = r->nodes[l].plan.bucket; u != NONE; u = r->nodes[u].plan.bucket_next)
            width += g->nodes[u].kind != DAGRT_NODE_GATE;
        if (width > maxwidth)
            maxwidth = width;
    }
    uint32_t nl = rt_plan_lists_for(rt->nworkers);
    uint32_t most = plan_lists_most(rt);
    if (nl > most)
        nl = most;
    if (nl > maxwidth)
        nl = maxwidth > 2 ? maxwidth : 2;
    r->nlists = (uint8_t)nl;
    r->plan_workers = rt->nworkers;
    r->plan_helpers = (uint8_t)(most - 1 < (uint32_t)rt->nworkers ? most - 1 : (uint32_t)rt->nworkers);
    uint32_t tail[PLAN_LISTS];
    for (uint32_t k = 0; k < PLAN_LISTS; k++)
        r->lhead[k] = tail[k] = NONE;
    for (uint32_t l = 0; l <= maxlevel; l++) {
        uint32_t width = 0;
        for (uint32_t u = r->nodes[l].plan.bucket; u != NONE; u = r->nodes[u].plan.bucket_next)
            width += g->nodes[u].kind != DAGRT_NODE_GATE;
        uint32_t cap = (width + nl - 1) / nl;
        uint32_t count[PLAN_LISTS] = {0};
        uint32_t last = 0;
        for (uint32_t u = r->nodes[l].plan.bucket; u != NONE; u = r->nodes[u].plan.bucket_next) {
            node_rt *x = &r->nodes[u];
            uint32_t k;
            if (g->nodes[u].flags & DAGRT_NODE_MAIN) {
                k = 0;
            } else {
                uint32_t aff[PLAN_LISTS] = {0};
                for (uint32_t q = 0; q < x->plan.npl; q++)
                    aff[r->nodes[x->plan.pred[q]].plan.list]++;
                /* Most predecessors, among lists with room; ties stay with
                 * the previous node's list, keeping neighbours together. */
                k = NONE;
                for (uint32_t c = 0; c < nl; c++) {
                    if (count[c] >= cap && g->nodes[u].kind != DAGRT_NODE_GATE)
                        continue;
                    if (k == NONE || aff[c] > aff[k] || (aff[c] == aff[k] && c == last))
                        k = c;
                }
                if (k == NONE) {   /* (every list full: the least filled) */
                    k = 0;
                    for (uint32_t c = 1; c < nl; c++)
                        if (count[c] < count[k])
                            k = c;
                }
            }
            if (g->nodes[u].kind != DAGRT_NODE_GATE)
                count[k]++;
            last = k;
            x->plan.list = (uint8_t)k;
            x->plan.lnext = NONE;
            x->plan.xpred = 0;
            for (uint32_t q = 0; q < x->plan.npl; q++)
                if (r->nodes[x->plan.pred[q]].plan.list != k)
                    x->plan.xpred |= 1u << q;
            if (tail[k] == NONE)
                r->lhead[k] = u;
            else
                r->nodes[tail[k]].plan.lnext = u;
            tail[k] = u;
        }
    }
    r->nlistw = 0;
    r->nwl = 0;
    for (uint32_t k = 0; k < nl; k++) {
        r->ltail[k] = tail[k];
        r->nwl += k != 0 && tail[k] != NONE;
        for (uint32_t u = r->lhead[k]; k != 0 && u != NONE; u = r->nodes[u].plan.lnext)
            r->nlistw++;
    }
    rt_policy_plan_reset(&r->policy);
    r->epoch = 0;   /* the `done` words are 0 again: the next run is epoch 1 */
    return true;
}
