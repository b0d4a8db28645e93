/*
 * e2e_check.h - the end-to-end checker. For every graph, dagc itself (with
 * the templates in checker/) generates implementations of the graph's user
 * functions that report here, plus a description of the graph; the checker
 * runs frames through the generated G_run on libdagrt and verifies, per
 * frame: each task ran exactly once, or was skipped because its `when` said
 * no; a task started only after its AND inputs (or one OR input) completed,
 * gates included; `on main` tasks ran on the calling thread; parallel ranges
 * covered [0, count) exactly once; G_run returned only after every node.
 * Every other frame runs as G_start, a short pause of the caller outside
 * the runtime, then G_wait, on an instance of its own.
 */
#ifndef E2E_CHECK_H
#define E2E_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

typedef struct e2e_node {
    const char *name;
    int kind, join;
    unsigned flags;
    uint32_t npred, succ_first, nsucc;
    int fid, wid;            /* distinct function / predicate, -1 if none */
    /* Every predicate the task asks, in order (wid first): inside a run node
     * with `when`, the run node's, then the task's own. It runs when all
     * say yes; the first no skips it, and the later ones are not asked. */
    int nwids;
    const int *wids;
    /* Its `prev` inputs (as the runtime counts them: an OR node's own
     * included). Outside a pipeline they are satisfied at the start, so an
     * OR node with one is ready at once. */
    uint32_t nprev;
} e2e_node;

typedef struct e2e_graph {
    const char *name;
    uint32_t nnodes;
    const e2e_node *nodes;
    const uint32_t *succ;
    int nfuncs, nwhens;
    int (*run)(dagrt *rt);
    /* The frame as a started run on an instance, and its wait. */
    int (*start)(dagrt *rt);
    int (*wait)(dagrt *rt);
} e2e_graph;

/* The graphs of the one .dag file an e2e executable is built for (defined
 * by the generated checker source). */
extern const e2e_graph *const e2e_all[];
extern const size_t e2e_nall;

/* Called by the generated implementations (the checker's state is global:
 * one graph runs at a time). */
void e2e_task(const e2e_graph *g, int fid);
void e2e_range(const e2e_graph *g, int fid, size_t begin, size_t end);
size_t e2e_count(const e2e_graph *g, int fid);
bool e2e_when(const e2e_graph *g, int wid);

/* Runs `frames` frames of g on rt (created by the caller on this thread),
 * with small random delays in task bodies (seeded), and returns the number
 * of violations seen (each also printed to stderr). */
int e2e_run_graph(const e2e_graph *g, dagrt *rt, int frames, uint64_t seed);

/* DAGC_TEST_SCALE (default 1.0) times n, at least 1. */
int e2e_scaled(int n);

/* Every graph of one file under each runtime configuration (0, 1 and 3
 * workers): the scenario both hosts (Criterion and plain) run. */
int e2e_run_all(const e2e_graph *const *graphs, size_t n, int frames);

#endif
