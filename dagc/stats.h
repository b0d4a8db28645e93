/*
 * stats.h - graph measures shared by `--stats` and the DOT back end:
 * levels, depth, width, total cost and the critical path.
 */
#ifndef DAGC_STATS_H
#define DAGC_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "ir.h"

typedef struct dg_analysis {
    uint32_t *level;      /* per node: longest path (in nodes) from a root, 0-based */
    uint32_t depth;       /* levels: the longest path, counted in nodes */
    uint32_t width;       /* most nodes on one level */
    uint32_t roots, sinks;
    uint32_t ntasks, ngates, nanon_and, nanon_or;
    uint32_t nruns;       /* flattened run nodes (their entry gates; not in ngates) */
    uint64_t total_cost;  /* sum of task costs, ns */
    uint64_t crit_cost;   /* cost along the critical path, ns */
    uint32_t *crit;       /* node indices along the critical path, in order */
    uint32_t ncrit;
    uint32_t crit_tasks;  /* tasks on it */
    uint8_t *on_crit;     /* per node: 1 when on the critical path */
    uint32_t *crit_from;  /* per node: its predecessor on the path, or UINT32_MAX */
    uint8_t *on_pcrit;    /* per node: on the plan's predicted critical path (DOT; NULL: none) */
} dg_analysis;

/* The thread count the critical path of `--stats` (its *critical*,
 * *parallelism* and *pipeline* lines) and of the diagram is taken on: a
 * `parallel` task counts its share there, as in the plan's bound. */
#define DG_STATS_THREADS 2

/* The measures, with every task's declared cost whole (a profile's
 * medians, already the wall time of a shared `parallel` task). */
void dg_analyze(const ir_graph *g, dg_analysis *an);
/* The same with a `parallel` task at its share on `threads` threads
 * (cost / threads, rounded up) on the critical path; total_cost stays
 * whole. */
void dg_analyze_on(const ir_graph *g, uint32_t threads, dg_analysis *an);
void dg_analysis_free(dg_analysis *an);

/* "2ms", "1.5ms", "800ns", "250us": shortest exact-enough form. */
void dg_fmt_duration(uint64_t ns, char *buf, size_t n);

/* Prints the critical path's named nodes (the first 32), then a newline. */
void dg_print_path(FILE *out, const ir_graph *g, const dg_analysis *an);

/* Prints the plan's predicted frame time per thread count (costs.h). */
void dg_print_prediction(FILE *out, const ir_graph *g);
/* The longest loop through `prev` (a node of frame N+1 waiting, through
 * its `prev` input, for a path of frame N that starts at that node's own
 * frame-N run): no pipeline starts frames faster. *from: the node it
 * starts at, UINT32_MAX for none. Declared costs; a parallel task counts
 * its share on `threads` threads. */
uint64_t dg_prev_loop_bound(const ir_graph *g, uint32_t threads, uint32_t *from);

/* The same numbers and the prediction as one JSON document
 * (--stats-format json; stats_json.c). */
void dg_print_stats_json(FILE *out, const ir_program *p);

/* Prints --stats for every graph of the program. */
void dg_print_stats(FILE *out, const ir_program *p);

#endif
