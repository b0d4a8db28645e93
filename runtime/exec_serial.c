/*
 * exec_serial.c - a frame on the caller alone, in the tables' own order.
 *
 * dagc emits the nodes in topological order (every edge goes to a higher
 * index), so calling them one after another honours every AND and OR
 * input without a counter, a ready list or a single atomic: each node's
 * inputs have all completed when its turn comes (an OR node running after
 * all of its inputs rather than the first is one of its legal schedules).
 * exec.c takes this path for frames measured too small to share.
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

int rt_exec_serial_run(graph_rt *r)
{
    node_rt *nodes = r->nodes;
    for (uint32_t i = 0; i < r->nnodes; i++)
        nodes[i].status = rt_exec_node(r, i);
    return 0;
}
