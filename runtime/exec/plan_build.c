/*
 * exec/plan_build.c - plan mode's lists: how a graph's nodes are shared out
 * among the caller and the helpers, once per graph and state (exec/plan.c
 * has the design, "plan mode", and runs them). The sharing itself is the
 * list scheduler's (exec/plan_sched.c, a pure module dagc compiles too);
 * this file feeds it the tables, the costs and the flags, and turns what it
 * places into the lists plan.c runs.
 */
#include "exec.h"
#include "plan_sched.h"

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

/* The scratch words' roles before the scheduler takes them. */
#define LEVEL scratch[0]
#define BUCKET scratch[1]
#define BUCKET_NEXT scratch[2]

/* The scheduler's view of r (plan_sched.h's calls). */
typedef struct build_view {
    graph_rt *r;
    uint32_t dflt;           /* a task's cost when it has none */
    uint32_t elsewhere;      /* DAGRT_NODE_* flags that run a node on no list's thread */
    uint32_t tail[PLAN_LISTS];
} build_view;

static uint32_t bv_flags(void *c, uint32_t i)
{
    const build_view *v = c;
    const dagrt_node *n = &v->r->g->nodes[i];
    uint32_t f = 0;
    f |= n->kind == DAGRT_NODE_GATE ? PS_GATE : 0u;
    f |= n->join == DAGRT_JOIN_OR ? PS_OR : 0u;
    f |= (n->flags & DAGRT_NODE_MAIN) ? PS_MAIN : 0u;
    f |= (n->flags & DAGRT_NODE_PARALLEL) ? PS_PARALLEL : 0u;
    f |= (n->flags & v->elsewhere) && !(n->flags & DAGRT_NODE_MAIN) ? PS_ELSEWHERE : 0u;
    return f;
}
static uint32_t bv_cost(void *c, uint32_t i)
{
    const build_view *v = c;
    uint32_t x = rt_plan_node_cost(v->r, i);
    return x ? x : v->dflt;
}
static uint32_t bv_npred(void *c, uint32_t i) { return ((build_view *)c)->r->nodes[i].plan.npl; }
static uint32_t bv_pred(void *c, uint32_t i, uint32_t k) { return ((build_view *)c)->r->nodes[i].plan.pred[k]; }
static uint32_t bv_nsucc(void *c, uint32_t i) { return ((build_view *)c)->r->g->nodes[i].nsucc; }
static uint32_t bv_succ(void *c, uint32_t i, uint32_t k)
{
    const dagrt_graph *g = ((build_view *)c)->r->g;
    return g->succ[g->nodes[i].succ_first + k];
}
static uint32_t *bv_scratch(void *c, uint32_t i) { return ((build_view *)c)->r->nodes[i].plan.scratch; }
static uint32_t bv_list_of(void *c, uint32_t i) { return ((build_view *)c)->r->nodes[i].plan.list; }
/* Node u at the end of list k (the scheduler places in a topological
 * order, so u's inputs are on their lists already: xpred now). */
static void bv_place(void *c, uint32_t u, uint32_t k)
{
    build_view *v = c;
    graph_rt *r = v->r;
    node_rt *x = &r->nodes[u];
    x->plan.list = (uint8_t)k;
    x->plan.lnext = NONE;
    x->plan.xpred = 0;
    for (uint32_t q = 0; q < x->plan.npl; q++)
        if (r->nodes[x->plan.pred[q]].plan.list != k)
            x->plan.xpred |= 1u << q;
    if (v->tail[k] == NONE)
        r->lhead[k] = u;
    else
        r->nodes[v->tail[k]].plan.lnext = u;
    v->tail[k] = u;
}

/* How long a helper of this plan lingers after a run (exec/plan_helper.c):
 * PLAN_LINGER_NS beyond the frame's predicted end, counted from its
 * list's predicted end, so that the caller's tail alone (a game's `on
 * main` render and present) does not outlast it and each frame's helper
 * is still there for the next. The longest such tail of any helper list,
 * if within PLAN_LINGER_MAX_NS; a pipeline's (in_flight 2) helpers go on
 * into the next frame during the tail: PLAN_LINGER_NS alone. After
 * ps_schedule: each node's PS_FINISH, v's tails the lists' last nodes. */
static uint32_t plan_linger_for(const graph_rt *r, const build_view *v, uint32_t nl,
                                const ps_result *res)
{
    uint64_t tail = 0;
    for (uint32_t k = 1; k < nl && !r->plan_piped; k++) {
        if (v->tail[k] == NONE)
            continue;
        uint64_t end = r->nodes[v->tail[k]].plan.scratch[PS_FINISH];
        if (res->makespan > end && res->makespan - end > tail)
            tail = res->makespan - end;
    }
    return PLAN_LINGER_NS + (tail <= PLAN_LINGER_MAX_NS ? (uint32_t)tail : 0u);
}

/* Makes the lists for r->g (see the top of this section). Plain
 * stores: it runs on the caller between runs, allocates nothing, and may
 * run again between any two runs (a re-plan with new costs). Returns false
 * when the graph cannot run in plan mode. Its scratch (levels, buckets,
 * the scheduler's words) is the nodes' node_plan.scratch. */
bool rt_plan_build(graph_rt *r)
{
    /* A late helper of the last G_run reads the lists (exec/plan_run.c). */
    rt_plan_late_wait(r);
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
        x->plan.LEVEL = 0;
        x->plan.BUCKET = NONE;
        x->plan.list = UINT8_MAX;   /* not placed yet (plan_sched.h, list_of) */
    }
    /* Predecessors and levels (a node's level: the most tasks on a path
     * from a root before it); the tables are in topological order. */
    uint32_t maxlevel = 0;
    for (uint32_t u = 0; u < n; u++) {
        const dagrt_node *un = &g->nodes[u];
        uint32_t lu = r->nodes[u].plan.LEVEL;
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
            if (sx->plan.LEVEL < ls)
                sx->plan.LEVEL = ls;
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
        uint32_t l = r->nodes[u].plan.LEVEL;
        r->nodes[u].plan.BUCKET_NEXT = r->nodes[l].plan.BUCKET;
        r->nodes[l].plan.BUCKET = u;
    }
    /* A list per thread, but no more than the widest level has tasks
     * (two at least: one helper's list is what the plan is for). */
    uint32_t maxwidth = 0;
    for (uint32_t l = 0; l <= maxlevel; l++) {
        uint32_t width = 0;
        for (uint32_t u = r->nodes[l].plan.BUCKET; u != NONE; u = r->nodes[u].plan.BUCKET_NEXT)
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
    /* The lists: the list scheduler's (exec/plan_sched.c). A task with
     * no cost known counts the mean of those known, or PS_DEFAULT_COST
     * when none is: with no costs at all every task weighs the same and
     * the schedule is by shape alone. Each list comes out in simulated
     * start order, and all lists are subsequences of the scheduler's one
     * order of placement, which is topological: the earliest unfinished
     * node of that order always has its inputs done, so the lists cannot
     * deadlock (plan.c, "progress without the worker"). */
    build_view v = {r, PS_DEFAULT_COST, hot_workers ? DAGRT_NODE_HOT : 0u, {0}};
    uint64_t known = 0, nknown = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = g->nodes[i].kind == DAGRT_NODE_GATE ? 0 : rt_plan_node_cost(r, i);
        known += c;
        nknown += c != 0;
    }
    if (nknown)
        v.dflt = (uint32_t)(known / nknown);
    for (uint32_t k = 0; k < PLAN_LISTS; k++)
        r->lhead[k] = v.tail[k] = NONE;
    /* A pipeline's frames with frames in flight (depth 2 or more: piped)
     * get the lists of its steady state, where the caller runs a frame's
     * `on main` tail while the helpers start the next frame (plan_sched.h,
     * in_flight); every state of the pipeline makes the same ones. G_run
     * and started runs get the one-frame schedule. A state's plan is made
     * for the way it is first run on a graph (rt_exec_start sets inpipe
     * and piped before the plan is asked for). */
    uint32_t in_flight = r->inpipe && r->piped ? 2 : 1;
    ps_graph pg = {n, nl, PS_XFER_NS, PS_NODE_NS, &v, bv_flags, bv_cost, bv_npred, bv_pred,
                   bv_nsucc, bv_succ, bv_scratch, bv_place, bv_list_of, in_flight};
    ps_result res;
    if (!ps_schedule(&pg, &res))
        return false;
    r->plan_piped = in_flight > 1;
    r->plan_linger_ns = plan_linger_for(r, &v, nl, &res);
    /* Helper lists the schedule left empty go: the others close up (a
     * list is only its number; xpred only says "another list"), and the
     * plan keeps its two lists at least. */
    uint32_t to = 1;
    for (uint32_t k = 1; k < nl; k++) {
        if (r->lhead[k] == NONE)
            continue;
        if (to != k) {
            r->lhead[to] = r->lhead[k];
            v.tail[to] = v.tail[k];
            r->lhead[k] = v.tail[k] = NONE;
            for (uint32_t u = r->lhead[to]; u != NONE; u = r->nodes[u].plan.lnext)
                r->nodes[u].plan.list = (uint8_t)to;
        }
        to++;
    }
    nl = to < 2 ? 2 : to;
    r->nlists = (uint8_t)nl;
    uint32_t *tail = v.tail;
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

/* Tests' seam (tests/exec/plan_tail.c; the tests link the static runtime):
 * the list node i of st's plan is on (0: the caller's), or -1 when st holds
 * no plan (or i is out of range). Between runs. */
int rt_plan_list_of(const dagrt_graph_state *st, uint32_t i);
int rt_plan_list_of(const dagrt_graph_state *st, uint32_t i)
{
    const graph_rt *r = (const graph_rt *)(const void *)st->opaque_;
    if (r->plan_state != RT_PLAN_MADE || i >= r->nnodes)
        return -1;
    return r->nodes[i].plan.list;
}
