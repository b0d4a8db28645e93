/*
 * emit_dot.h - Graphviz output. Deterministic: the same program always
 * gives the same bytes.
 */
#ifndef DAGC_EMIT_DOT_H
#define DAGC_EMIT_DOT_H

#include <stdio.h>

#include "ir.h"

struct dg_profile;

typedef struct dg_dot_opts {
    int legend;  /* draw the legend cluster */
    /* --profile: measured medians in labels, fill by share of the frame,
     * the measured critical path bold (profile.h). NULL: as declared. */
    const struct dg_profile *prof;
} dg_dot_opts;

/* Returns 0, or -1 when writing failed (ferror). */
int dg_emit_dot(FILE *out, const ir_program *p, const dg_dot_opts *o);

#endif
