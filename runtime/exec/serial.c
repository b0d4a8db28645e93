/*
 * exec/serial.c - a serial frame: on the caller alone, in the tables' own
 * order.
 *
 * dagc emits the nodes in topological order (every edge goes to a higher
 * index), so calling them one after another honours every AND and OR
 * input without a counter, a ready list or a single atomic: each node's
 * inputs have all completed when its turn comes (an OR node running after
 * all of its inputs rather than the first is one of its legal schedules;
 * the shuffle also draws the others).
 * The run policy (exec/policy.c) chooses it for frames measured too small
 * to share, and for plan mode's frames while its helper is measured not to
 * get a CPU; under the shuffled serial switch, for every frame that may
 * run serial, in a random topological order instead (shuffled_run).
 */
#include "exec.h"

bool rt_exec_serial_ok(const dagrt_graph *g)
{
    /* Hot and fiber tasks must run where their flag says, not serial. */
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER))
            return false;
    return true;
}

/* The shuffled serial switch (graph_rt.shuffle): a random topological
 * order, a new one each frame. Kahn's algorithm with the ready nodes in a
 * bag from which each turn draws one at random: every order the edges
 * allow can come out. Each node's inputs are counted from the edges
 * (pending), the bag lives in the nodes' `next` words (neither is used by
 * a serial frame otherwise), so the frame allocates nothing. An OR node
 * enters the bag at its first input's completion, as the dynamic executor
 * fires it (and at the start when it has a `prev` input, satisfied by the
 * frame before): it then competes with its other inputs, so it sometimes
 * runs before them, as a parallel frame may run it, and a body that relies
 * on all of an OR's inputs having run shows. Gates, `when` and `prev` are
 * as in table order; the frame before has ended. */
#define OR_FIRED UINT32_MAX   /* an OR node in the bag already: later inputs change nothing */
static void shuffled_run(graph_rt *r)
{
    node_rt *nodes = r->nodes;
    const dagrt_graph *g = r->g;
    const uint32_t n = r->nnodes;
    /* relaxed throughout: the caller alone touches this frame. */
    for (uint32_t i = 0; i < n; i++)
        atomic_store_explicit(&nodes[i].pending, 0, memory_order_relaxed);
    for (uint32_t e = 0; e < g->nsucc; e++)
        atomic_store_explicit(&nodes[g->succ[e]].pending,
                              atomic_load_explicit(&nodes[g->succ[e]].pending, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    uint32_t nready = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = atomic_load_explicit(&nodes[i].pending, memory_order_relaxed);
        bool or_now = g->nodes[i].join == DAGRT_JOIN_OR && g->nodes[i].nprev > 0;
        if (p == 0 || or_now) {
            nodes[nready++].next = i;
            if (p != 0)
                atomic_store_explicit(&nodes[i].pending, OR_FIRED, memory_order_relaxed);
        }
    }
    while (nready > 0) {
        uint32_t k = rt_shuffle_draw(&r->shuf, nready);
        uint32_t i = nodes[k].next;
        nodes[k].next = nodes[--nready].next;
        nodes[i].status = rt_exec_node_on(r, i, NODE_IN_SERIAL);
        const dagrt_node *gn = &g->nodes[i];
        for (uint32_t e = 0; e < gn->nsucc; e++) {
            uint32_t s = g->succ[gn->succ_first + e];
            uint32_t p = atomic_load_explicit(&nodes[s].pending, memory_order_relaxed);
            if (p == OR_FIRED)
                continue;
            bool or = g->nodes[s].join == DAGRT_JOIN_OR;
            uint32_t left = or ? OR_FIRED : p - 1;
            atomic_store_explicit(&nodes[s].pending, left, memory_order_relaxed);
            if (or || left == 0)
                nodes[nready++].next = s;
        }
    }
}

int rt_exec_serial_run(graph_rt *r)
{
    node_rt *nodes = r->nodes;
    const uint32_t n = r->nnodes;
    if (RT_UNLIKELY(r->shuffle)) {
        rt_exec_depth++;
        shuffled_run(r);
        rt_exec_depth--;
        return 0;
    }
    /* The caller is on its own stack, never on a fiber (the runs refuse
     * one with DAGRT_ENESTED), and nothing here migrates: the node depth
     * is raised once for the whole frame rather than per node (a run from
     * any body is still refused), and nobody asks dagrt_in_fiber per node
     * (that call, not the bodies, was most of an empty frame). */
    rt_exec_depth++;
    if (RT_UNLIKELY(r->live_sample)) {
        /* A timed frame (live costs, exec/live.c). */
        for (uint32_t i = 0; i < n; i++)
            nodes[i].status = rt_live_timed(r, i, NODE_IN_SERIAL);
    } else {
        for (uint32_t i = 0; i < n; i++)
            nodes[i].status = rt_exec_node_on(r, i, NODE_IN_SERIAL);
    }
    rt_exec_depth--;
    return 0;
}
