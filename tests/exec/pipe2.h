/* pipe2.h - a depth-2 pipeline of N frames over two fresh states, for the
 * run-policy scenarios (pipe_ahead.c, policy_slow.c): what the policy did
 * is read from the states' stretch counts afterwards. */
#ifndef PIPE2_H
#define PIPE2_H

#include <stdint.h>

#include "dagrt.h"

/* The two states, their node states (nnodes each) and contexts: the
 * caller's (static: a pipeline's state outlives the call's frames). */
typedef struct pipe2 {
    dagrt_graph_state *st[2];
    dagrt_node_state *ns[2];
    void *ctx[2];
    uint32_t nnodes;
} pipe2;

/* Initialises both states, submits frames 0..frames-1 of g (store gets a
 * pointer to the frame's int), drains, and adds both states'
 * stretch_runs to *stretch (set to 0 first). 0, or 1 after a message
 * naming `who` on stderr. */
int pipe2_run(dagrt *rt, const dagrt_graph *g, const pipe2 *q, int frames,
              void (*store)(void *ctx, const void *src), void (*drop)(void *ctx), const char *who,
              uint64_t *stretch);

#endif
