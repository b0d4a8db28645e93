/*
 * race.h - what race.c shares with race_reach.c: single ordering queries
 * on one flattened graph, in one frame and across two consecutive frames of
 * a pipeline (the two-frame graph of race.c's comment). Not part of the IR.
 */
#ifndef DAGC_RACE_H
#define DAGC_RACE_H

#include <stdint.h>

#include "ir.h"

typedef struct rreach rreach;

/* Ids: node v of frame N is v, node v of frame N+1 is v + nnodes. */
rreach *dg_reach_new(const ir_graph *g);
void dg_reach_free(rreach *q);

/* Whether frame N's node A has completed whenever id B has (A in D(B), or
 * in D2(B) when B is of frame N+1): 1 or 0, or -1 when answering would
 * take more than *BUDGET steps (nodes and edges looked at), which it
 * decrements by what it spent. */
int dg_reach(rreach *q, uint32_t a, uint32_t b, int64_t *budget);

#endif
