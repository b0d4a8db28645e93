/*
 * profile.h - `--profile TRACE.json`: reads a Chrome Trace Event Format
 * file written by libdagrt's recorder (docs/runtime.md, "The built-in
 * trace") for the graphs of the program being compiled, and measures each
 * node per frame.
 *
 * A node's time in a frame is its span: from the start of its first event
 * to the end of its last one in that frame (a parallel task's pieces and a
 * fiber task's slices together: what its successors waited for). A frame's
 * time is the span of all its graph's events. Medians and p99 are nearest
 * rank over the frames the node ran in. The measured critical path runs
 * along the graph's edges by median spans (stats.c's walk, with medians
 * for costs).
 */
#ifndef DAGC_PROFILE_H
#define DAGC_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "ir.h"
#include "stats.h"
#include "util.h"

/* Traces larger than this are refused (the reader streams the events, but
 * keeps 40 bytes per node event). */
#define DG_PROFILE_MAX_BYTES ((size_t)1 << 30)

typedef struct dg_prof_node {
    uint32_t runs;           /* frames it ran in */
    uint64_t median_ns, p99_ns;
    uint64_t threads;        /* bit t: ran on thread t (t < 63); bit 63: on a higher one */
} dg_prof_node;

typedef struct dg_prof_graph {
    int present;             /* the trace had events of this graph */
    uint32_t frames;         /* frames seen */
    uint64_t frame_median_ns, frame_p99_ns;
    dg_prof_node *nodes;     /* one per ir node */
} dg_prof_graph;

typedef struct dg_profile {
    const char *path;
    size_t ngraphs;
    dg_prof_graph *graphs;   /* parallel to the program's graphs */
} dg_profile;

/* Reads PATH for program P. Returns 0, or DAGC_EINPUT (a trace that is not
 * valid JSON, lacks fields, names nodes or graphs P does not have, or has
 * no events of P's graphs) or DAGC_EUSAGE (cannot read it), with the
 * message appended to err, whole (one error a line). */
int dg_profile_load(const char *path, const ir_program *p, dg_profile *out, dg_buf *err);
/* The same for a trace already in memory, buf[0, len), named PATH in
 * messages (the fuzzer's entry; PATH must outlive OUT). */
int dg_profile_parse(const char *path, const char *buf, size_t len, const ir_program *p,
                     dg_profile *out, dg_buf *err);
void dg_profile_free(dg_profile *prof);

/* The graph's measures with medians for costs (critical path by them). */
void dg_profile_analyze(const ir_graph *g, const dg_prof_graph *pg, dg_analysis *an);

/* For the DOT back end: the label line ("median 12us  p99 20us" or "not
 * run") and the fill colour by share of the median frame. */
void dg_profile_label(const dg_prof_graph *pg, uint32_t node, char *buf, size_t n);
void dg_profile_fill(const dg_prof_graph *pg, uint32_t node, char *buf, size_t n);

/* --stats with --profile: a table per profiled graph. */
void dg_profile_print_stats(FILE *out, const ir_program *p, const dg_profile *prof);

#endif
