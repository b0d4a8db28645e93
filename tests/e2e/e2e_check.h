/*
 * e2e_check.h - the end-to-end checker. For every graph, dagc itself (with
 * the templates in checker/) generates implementations of the graph's user
 * functions that report here, plus a description of the graph; the checker
 * runs frames through the generated entry points on libdagrt and verifies,
 * per frame: each task ran exactly once, or was skipped because its `when`
 * said no; a task started only after its AND inputs (or one OR input)
 * completed, gates included; `on main` tasks ran on the calling thread;
 * parallel ranges covered [0, count) exactly once; the frame's wait
 * returned only after every node.
 *
 * Frames run in turns of several modes (e2e_drive.c): G_run, G_instance_start then
 * G_instance_wait on one instance, two instances started together, and pipelines
 * of depth 1 to 4 (G_pipeline_submit, G_pipeline_drain). Pipeline frames overlap, so every
 * record is kept per frame: the context each frame is given carries its
 * frame number (e2e_tag_put), which every generated function reads back
 * from the context it receives (e2e_tag_get) and passes on. In a pipeline
 * the checker also verifies that each node of frame N+1 started after the
 * same node of frame N completed and after its `prev` inputs of frame N,
 * and counts how often frames really overlapped (see e2e_drive.c).
 */
#ifndef E2E_CHECK_H
#define E2E_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    /* Its `prev` inputs (nodes of the previous frame; itself if written),
     * ended by UINT32_MAX. */
    const uint32_t *prevs;
} e2e_node;

/* The number of pipelines the generated code keeps per graph: one per
 * depth, 1 to E2E_DEPTHS. */
#define E2E_DEPTHS 4

typedef struct e2e_graph {
    const char *name;
    uint32_t nnodes;
    const e2e_node *nodes;
    const uint32_t *succ;
    int nfuncs, nwhens;
    /* Every entry point takes the frame number that its context carries. */
    int (*run)(dagrt *rt, uint32_t frame);
    /* A frame as a started run on instance k (0 or 1), and its wait. */
    int (*start)(dagrt *rt, int k, uint32_t frame);
    int (*wait)(dagrt *rt, int k);
    /* The pipeline of depth d (1..E2E_DEPTHS): init, submit, drain. */
    int (*pipe_init)(int d);
    int (*submit)(dagrt *rt, int d, uint32_t frame);
    int (*drain)(dagrt *rt, int d);
} e2e_graph;

/* The graphs of the one .dag file an e2e executable is built for (defined
 * by the generated checker source). */
extern const e2e_graph *const e2e_all[];
extern const size_t e2e_nall;

/* The frame number in a context value of any type (the graph's context
 * type, here always a pointer of some kind: object or function): its first
 * four bytes hold frame + 1, the rest are zero. The runtime only copies a
 * context, so the value comes back intact to every task of that frame. */
static inline void e2e_tag_put(unsigned char *ctx, size_t n, uint32_t frame)
{
    uint32_t v = frame + 1;
    memset(ctx, 0, n);
    memcpy(ctx, &v, n < sizeof v ? n : sizeof v);
}

static inline uint32_t e2e_tag_get(const void *ctx, size_t n)
{
    uint32_t v = 0;
    memcpy(&v, ctx, n < sizeof v ? n : sizeof v);
    return v;
}

/* Called by the generated implementations with the tag of the context they
 * received (e2e_tag_get). One graph is checked at a time. */
void e2e_task(const e2e_graph *g, int fid, uint32_t tag);
void e2e_range(const e2e_graph *g, int fid, uint32_t tag, size_t begin, size_t end);
size_t e2e_count(const e2e_graph *g, int fid, uint32_t tag);
bool e2e_when(const e2e_graph *g, int wid, uint32_t tag);

/* Runs `frames` frames of g on rt (created by the caller on this thread
 * with `workers` workers), in every mode, with small random delays in task
 * bodies (seeded), and returns the number of violations seen (each also
 * printed to stderr). */
int e2e_run_graph(const e2e_graph *g, dagrt *rt, int workers, int frames, uint64_t seed);

/* Violations of the overlap check alone (e2e_drive.c), counted since the
 * program started: the negative control (E2E_SERIALISE) expects them. */
int e2e_overlap_failures(void);

/* Task starts before the same task of the frame before had completed,
 * counted since the program started: the negative control of the checks
 * across frames (E2E_UNLINKED) expects some. */
int e2e_cross_failures(void);

/* DAGC_TEST_SCALE (default 1.0) times n, at least 1. */
int e2e_scaled(int n);

/* Every graph of one file under each runtime configuration (0, 1 and 3
 * workers): the scenario both hosts (Criterion and plain) run. */
int e2e_run_all(const e2e_graph *const *graphs, size_t n, int frames);

#endif
