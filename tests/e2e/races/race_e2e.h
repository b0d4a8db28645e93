/*
 * race_e2e.h - end-to-end soundness of dagc's race check: race-free graphs
 * with resources (written at build time by race_e2e_gen, which also writes
 * every task body) run thousands of frames on libdagrt under a checker that
 * counts, per resource and task, the accesses in progress, and reports a
 * violation whenever two conflicting accesses (one writing) of different
 * tasks are in progress at once. A negative control (a racy graph whose
 * conflicting writes are declared on different resources, so dagc accepts
 * it) must be caught within its frame budget.
 *
 * Included by the generated .dag files' headers: it defines the context.
 */
#ifndef RACE_E2E_H
#define RACE_E2E_H

#include <stdbool.h>
#include <stddef.h>

#include "dagrt.h"

struct rctx {
    unsigned long long frame;
    unsigned long long seed;
};

/* One access of a task body: resource id and whether it writes. */
typedef struct race_acc {
    int res, write;
} race_acc;

typedef struct race_task {
    const char *name;
    int parallel;     /* sub-ranges of one call may overlap each other */
    int touch;        /* also reads/writes plain shared data (seen by TSan) */
    unsigned spin_ns; /* how long a body stays inside its accesses, at most */
    int nacc;
    const race_acc *acc;
} race_task;

typedef struct race_graph {
    const char *name;
    int control;      /* 1: the negative control (must be caught) */
    int (*run)(dagrt *rt, struct rctx *ctx);
} race_graph;

/* Written by race_e2e_gen (race_e2e_bodies.c). */
extern const race_task race_tasks[];
extern const int race_ntasks, race_nres;
extern const race_graph race_graphs[];
extern const int race_ngraphs;

/* Called by the generated bodies. */
void race_body(struct rctx *ctx, int fid);
size_t race_count(struct rctx *ctx, int fid);
bool race_when(struct rctx *ctx, int wid);

/* The scenarios both hosts run (Criterion in suite e2e, plain in tsan).
 * race_e2e_sound: every race-free graph, FRAMES frames with 0, 1 and 3
 * workers; returns the number of violations (or problems) seen.
 * race_e2e_control: the negative control with 3 workers, up to FRAMES
 * frames; returns 0 when the checker caught its race. */
int race_e2e_sound(int frames);
int race_e2e_control(int frames);

#endif
