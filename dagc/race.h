/*
 * race.h - what race.c shares with race_reach.c, race_fix.c and race_prev.c: single ordering queries
 * on one flattened graph, in one frame and across two consecutive frames of
 * a pipeline (the two-frame graph of race.c's comment). Not part of the IR.
 */
#ifndef DAGC_RACE_H
#define DAGC_RACE_H

#include <stdint.h>

#include "diag.h"
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

/* The entry of the run node that v is inside, or UINT32_MAX (a run node's
 * own entry belongs to its sub, but waits for the enclosing one's). */
static inline uint32_t dg_race_enclosing_entry(const ir_graph *g, uint32_t v)
{
    uint32_t s = g->nodes[v].sub;
    if (s != UINT32_MAX && g->subs[s].entry == v) s = g->subs[s].parent;
    return s == UINT32_MAX ? UINT32_MAX : g->subs[s].entry;
}

/* race.c: the sets of nodes (as bits, W words a node) each node of frame
 * N (D1) and of frame N+1 (D2) has waited for, joined node by node in
 * topological order. dg_race_join_frame joins v's inputs into D1[v] (zero
 * before; the caller then adds v's own bits); dg_race_join_next makes
 * every D2[v] once D1 is complete. race.c's batches and race_prev.c. */
void dg_race_join_frame(const ir_graph *g, uint32_t v, uint64_t *D1, size_t W);
void dg_race_join_next(const ir_graph *g, const uint64_t *D1, uint64_t *D2, size_t W);

/* race_fix.c: the hint (and its fix-its) for the race between nodes x and
 * y just reported: within a frame (x waits for y), or across frames (y of
 * the next frame waits for prev x). */
void dg_race_hint(const ir_program *p, const ir_graph *g, dg_diag *d, uint32_t x, uint32_t y,
                  int cross);

/* race_prev.c (v2.2): each `reads prev R` of frame N+1 against frame N's
 * writers of R, a -Wpipeline-race warning per writer not ordered before it. */
void dg_race_prev(const ir_program *p, const ir_graph *g, dg_diag *d);

#endif
