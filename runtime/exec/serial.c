/*
 * exec/serial.c - a serial frame: on the caller alone, in the tables' own
 * order.
 *
 * dagc emits the nodes in topological order (every edge goes to a higher
 * index), so calling them one after another honours every AND and OR
 * input without a counter, a ready list or a single atomic: each node's
 * inputs have all completed when its turn comes (an OR node running after
 * all of its inputs rather than the first is one of its legal schedules).
 * The run policy (exec/policy.c) chooses it for frames measured too small
 * to share, and for plan mode's frames while its helper is measured not to
 * get a CPU.
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

int rt_exec_serial_run(graph_rt *r)
{
    node_rt *nodes = r->nodes;
    const uint32_t n = r->nnodes;
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
