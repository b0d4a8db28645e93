/*
 * perframe.h - (language 2.2) the per-frame resources a graph uses, for the
 * back ends: emit_c.c lays out the copies of the typed ones and their
 * accessors, cnames.c claims the accessors' names, stats.c lists them.
 */
#ifndef DAGC_PERFRAME_H
#define DAGC_PERFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

typedef struct dg_perframe {
    uint32_t res;          /* index in ir_program.resources */
    int typed;             /* has a C type: dagc lays the copies out */
    int prev;              /* some task of the graph reads the previous copy */
} dg_perframe;

/* The per-frame resources that nodes of G access, in resource order, into
 * a malloc'd array (*OUT, NULL when none); returns how many. */
size_t dg_perframe_list(const ir_program *p, const ir_graph *g, dg_perframe **out);

/* --stats: the per-frame resources G uses, each with its type and who
 * writes it, reads it and reads the previous frame's copy. */
void dg_perframe_stats(FILE *out, const ir_program *p, const ir_graph *g);

/* The accessors' C names: G_R_copy and G_R_prev_copy. */
#define DG_PERFRAME_COPY "%s_%s_copy"
#define DG_PERFRAME_PREV "%s_%s_prev_copy"

#endif
