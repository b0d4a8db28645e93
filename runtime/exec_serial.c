/*
 * exec_serial.c - a frame on the caller alone, in the tables' own order.
 *
 * dagc emits the nodes in topological order (every edge goes to a higher
 * index), so calling them one after another honours every AND and OR
 * input without a counter, a ready list or a single atomic: each node's
 * inputs have all completed when its turn comes (an OR node running after
 * all of its inputs rather than the first is one of its legal schedules).
 * exec.c takes this path for frames measured too small to share, and for
 * frames whose helper is measured not to get a CPU (exec.h, "policy").
 */
#include "exec.h"

bool rt_exec_serial_ok(const dagrt_graph *g)
{
    /* Hot and fiber tasks must run where their flag says, not inline. */
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER))
            return false;
    return true;
}

bool rt_exec_serial_ok_cached(graph_rt *r, const dagrt_graph *g)
{
    /* The tables are const: one answer per graph, recomputed only when
     * the state runs another one. Kept by the caller (the main thread). */
    if (r->serial_g != g) {
        r->serial_ok = rt_exec_serial_ok(g);
        r->serial_g = g;
    }
    return r->serial_ok;
}

int rt_exec_serial_run(graph_rt *r)
{
    node_rt *nodes = r->nodes;
    const uint32_t n = r->nnodes;
    /* The caller is on its own stack, never on a fiber (the runs refuse
     * one with DAGRT_ENESTED), and nothing here migrates: the node depth
     * is raised once for the whole frame rather than per node (a run from
     * any body is still refused), and nobody asks dagrt_in_fiber per node
     * (that call, not the bodies, was most of an empty frame). counted is
     * false for that reason only: off a fiber, the observed dispatch's
     * fiber hooks do nothing. */
    rt_exec_depth++;
    for (uint32_t i = 0; i < n; i++)
        nodes[i].status = rt_exec_node_on(r, i, false);
    rt_exec_depth--;
    return 0;
}
