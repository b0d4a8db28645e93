/*
 * costs.h - each task's cost, as the emitted tables carry it and plan
 * mode schedules by it (docs/language.md, "Costs"): a measured one (dagc
 * --costs PROFILE: a libdagrt trace's median, or a costs file that
 * `--profile TRACE --costs-out FILE` writes) over the declared `cost`; a
 * task with neither gets the median of the graph's known costs, or
 * DG_DEFAULT_COST_NS when none is known; gates cost 0. And the frame time
 * the plan's own list scheduler (runtime/exec/plan_sched.c) predicts from
 * them, for --stats and the DOT diagram.
 */
#ifndef DAGC_COSTS_H
#define DAGC_COSTS_H

#include <stdint.h>
#include <stdio.h>

#include "ir.h"
#include "util.h"

struct dg_profile;

/* A task's cost when no task of its graph has one (the runtime's
 * PS_DEFAULT_COST, runtime/exec/plan_sched.h). */
#define DG_DEFAULT_COST_NS 1000u

/* Measured costs, per graph of the program (graphs[i] parallel to
 * p->graphs; NULL: no node of it measured), per node (0: not measured). */
typedef struct dg_costs {
    const char *path;        /* where they came from */
    size_t ngraphs;
    uint64_t **graphs;
} dg_costs;

/* Reads PATH for program P: a libdagrt trace (JSON, the medians of
 * --profile) or a costs file (docs/language.md, "Costs"). Returns 0, or
 * DAGC_EINPUT (malformed: FILE:LINE:COL messages appended to err) or
 * DAGC_EUSAGE (cannot read it). */
int dg_costs_load(const char *path, const ir_program *p, dg_costs *out, dg_buf *err);
/* The same for a costs file already in memory (the tests' entry). */
int dg_costs_parse(const char *path, const char *buf, size_t len, const ir_program *p,
                   dg_costs *out, dg_buf *err);
/* The medians of a profile, as measured costs. */
void dg_costs_from_profile(const struct dg_profile *prof, const ir_program *p, dg_costs *out);
/* Writes a costs file of c (the measured nodes of each graph). */
void dg_costs_write(FILE *f, const ir_program *p, const dg_costs *c);
void dg_costs_free(dg_costs *c);
/* Measured costs override the declared ones in P's IR (the back ends then
 * see them as `cost` clauses). */
void dg_costs_apply(ir_program *p, const dg_costs *c);

/* Each node's cost as the tables carry it (see the top), into cost[0 ..
 * nnodes). Returns how many tasks had one of their own (declared or
 * measured): 0 means the tables carry none (NULL). */
uint32_t dg_costs_resolve(const ir_graph *g, uint32_t *cost);
/* The same with measured[i] (ns, 0: none; NULL: no measures) over the
 * declared costs: --dot with --profile predicts from the medians. */
uint32_t dg_costs_resolve_measured(const ir_graph *g, const uint64_t *measured, uint32_t *cost);

/* The plan's prediction for one thread count. */
typedef struct dg_prediction {
    uint32_t threads;
    uint64_t frame_ns;       /* the list scheduler's makespan */
    uint64_t bound_ns;       /* max(critical path, work / threads) */
    uint64_t piped_ns;       /* the period the pipeline's lists predict with frames in
                                flight (plan_sched.h, in_flight 2), never below pipe_ns */
    uint64_t pipe_ns;        /* the pipeline's bound: max(work / threads, the loop through `prev`) */
} dg_prediction;
/* Schedules g on `threads` lists with the costs resolved as above;
 * on_crit (nnodes bytes, or NULL) gets 1 for each node on the predicted
 * critical path (what the last node to finish waited for, back to the
 * start: inputs and the earlier nodes of its list). */
void dg_predict(const ir_graph *g, uint32_t threads, dg_prediction *out, uint8_t *on_crit);
void dg_predict_measured(const ir_graph *g, const uint64_t *measured, uint32_t threads,
                         dg_prediction *out, uint8_t *on_crit);

#endif
