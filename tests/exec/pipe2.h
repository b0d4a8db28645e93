/* pipe2.h - the executor scenarios' shared harness for small hand-made
 * graphs (pipe_ahead.c, policy_slow.c, crowd_dyn.c, plan_crowded.c): a
 * graph given as edges (or a fan: a root, middle tasks, a sink), `prev`
 * inputs, a frame context that checks every task ran once, after its
 * inputs, after its own run in the frame before and after its `prev`
 * inputs' run in the frame before, and a depth-2 pipeline of N frames over
 * two fresh states. What the policy did is read from the states' stretch
 * counts afterwards. */
#ifndef PIPE2_H
#define PIPE2_H

#include <stdatomic.h>
#include <stdint.h>

#include "dagrt.h"

#define PIPE2_MAX_NODES 16
#define PIPE2_MAX_EDGES 32

/* A checked graph: its tables and what the frames saw. */
typedef struct pipe2_graph {
    const char *who;                 /* the scenario's name, in messages */
    uint32_t n;
    uint32_t pred[PIPE2_MAX_NODES][PIPE2_MAX_NODES];   /* each node's inputs */
    uint32_t npred[PIPE2_MAX_NODES];
    dagrt_node nodes[PIPE2_MAX_NODES];
    uint32_t succ[PIPE2_MAX_EDGES];
    uint32_t cost[PIPE2_MAX_NODES];  /* ns */
    uint32_t psucc[PIPE2_MAX_NODES]; /* `prev` edges: next-frame successors */
    int32_t prev_src[PIPE2_MAX_NODES];   /* the node each reads `prev` of, or -1 */
    dagrt_graph g;
    _Atomic int last_frame[PIPE2_MAX_NODES];   /* the frame each task last ran in */
    _Atomic int done_frame[PIPE2_MAX_NODES];   /* the frame each task last finished */
    _Atomic int frames_bad;          /* violations found at the frames' ends */
} pipe2_graph;

/* A frame's context: its number, each task's completion mark and runs.
 * seq_cst unless said. */
typedef struct pipe2_frame {
    pipe2_graph *graph;              /* set once; the rest by pipe2_store */
    int frame;
    _Atomic unsigned seq;
    _Atomic unsigned at[PIPE2_MAX_NODES];
    _Atomic int runs[PIPE2_MAX_NODES];
    _Atomic int bad;
} pipe2_frame;

/* Fills t's tables: n nodes named names[i], running fns[i], costing
 * cost_us[i] microseconds, with the nedges edges edges[k][0] -> edges[k][1]
 * given in order of their source. Node flags are the caller's to add. */
void pipe2_table(pipe2_graph *t, const char *who, uint32_t n, const char *const *names,
                 const dagrt_node_fn *fns, const uint32_t (*edges)[2], uint32_t nedges,
                 const uint32_t *cost_us);

/* As pipe2_table, for a fan: node 0 the root, nodes 1..n-2 after it, node
 * n-1 (the sink) after them, each costing cost_us; names NULL: "root",
 * "m1".."m<n-2>", "sink". */
void pipe2_fan(pipe2_graph *t, const char *who, uint32_t n, const char *const *names,
               const dagrt_node_fn *fns, uint32_t cost_us);

/* Adds `dst: prev src` (dst of frame k after src of frame k-1). Calls come
 * in order of src, after pipe2_table or pipe2_fan; one per dst. */
void pipe2_prev(pipe2_graph *t, uint32_t src, uint32_t dst);

/* Before a scenario's frames: no task has run, no violation. */
void pipe2_reset(pipe2_graph *t);

/* Task i's checks at its start: its inputs done in its frame, its run in
 * the frame before done, and its `prev` input's run in the frame before
 * done (a violation is counted in c->bad). */
void pipe2_enter(pipe2_frame *c, uint32_t i);

/* Task i's end: counted, and marked done for the tasks after it. */
void pipe2_leave(pipe2_frame *c, uint32_t i);

/* A frame's start (the pipeline's store: src is the frame's int) and its
 * end (the drop: every task once, else a message and frames_bad). */
void pipe2_store(void *ctx, const void *src);
void pipe2_drop(void *ctx);

/* Initialises two states, submits frames 0..frames-1 of t's graph into a
 * depth-2 pipeline over them and ctx[0..1], drains, and sets *stretch to
 * both states' stretch_runs. Returns t's frames_bad, or 1 after a message
 * when the runtime refused. */
int pipe2_run(dagrt *rt, pipe2_graph *t, pipe2_frame ctx[2], int frames, uint64_t *stretch);

#endif
