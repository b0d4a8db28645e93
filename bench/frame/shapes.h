/*
 * shapes.h - the uneven frames of bench_frame (bench/frame/README.md,
 * "Uneven frames"): the game-shaped frame (game_frame.dag) and the random
 * layered graph (shape_gen.py layered), their tables, their bodies and
 * what every contender calls of them (shapes.c).
 *
 * A shape is a graph of tasks in topological order, task 0 its only root
 * and the last task its only sink, each with a cost (us) that its body
 * spins for. A `parallel` task has SHAPE_ITEMS items of cost / SHAPE_ITEMS
 * each. The peers and the floor run the *expanded* graph (struct shape_x):
 * one peer task per item ("xnode"), so a parallel task is SHAPE_ITEMS peer
 * tasks, each after every xnode of the task's predecessors. Every body
 * checks (checked runs) that each xnode it waits for ran in this frame,
 * and, in a frame in flight, that its own xnode ran in the frame before.
 */
#ifndef SHAPES_H
#define SHAPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_MAX_NODES 80
#define SHAPE_MAX_PREDS 24   /* a task's predecessors, at most */
#define SHAPE_ITEMS 16       /* the items of a `parallel` task */
#define SHAPE_MAX_X 128      /* xnodes, at most */
#define SHAPE_MAX_XPREDS 64  /* an xnode's predecessors, at most */

struct shape_ctx;

/* The expanded graph of the shape being measured (shapes.c fills it before
 * the peers' setup): xnode 0 is the root, xnode n - 1 the sink, in
 * topological order. */
struct shape_x {
    int n;
    int npred[SHAPE_MAX_X], pred[SHAPE_MAX_X][SHAPE_MAX_XPREDS];
    int nsucc[SHAPE_MAX_X], succ[SHAPE_MAX_X][SHAPE_MAX_X];
    double cost[SHAPE_MAX_X];           /* declared, us (the floor's plan) */
    unsigned char on_main[SHAPE_MAX_X]; /* `on main` (the floor's caller) */
};
extern struct shape_x shape_xg;

/* Xnode x's body in c's frame, with its checks (one frame at a time and in
 * flight alike). */
void shape_xnode(struct shape_ctx *c, int x);
/* Starts c's next frame (one frame at a time). */
void shape_frame_advance(struct shape_ctx *c);
/* The slot of c's next frame in flight, ready for its bodies; a ring calls
 * it when it submits the frame, and runs xnode x of that frame as
 * shape_xnode(slot, x) after its predecessors in the frame and after xnode
 * x of the frame before (bench_peers.h says the same of the uniform frame). */
struct shape_ctx *shape_pipe_next(struct shape_ctx *c);

/* The peers' forms for the shape in shape_xg: setup with the task threads
 * (the caller among them where the peer lets it), n frames one at a time,
 * n frames as a ring of depth 2, teardown. */
#define SHAPE_PEER(p)                                                   \
    void shape_##p##_setup(struct shape_ctx *c, int threads);           \
    void shape_##p##_frames(struct shape_ctx *c, long n);               \
    void shape_##p##_ring(struct shape_ctx *c, long n);                 \
    void shape_##p##_teardown(void);
SHAPE_PEER(tf)
SHAPE_PEER(tbb)
SHAPE_PEER(enki)
SHAPE_PEER(omp)
SHAPE_PEER(floor)
#undef SHAPE_PEER

#ifdef __cplusplus
}
#else

#include <stdatomic.h>

#include "dagrt.h"

/* A frame's context: its number, the stamps of its xnodes. */
struct shape_ctx {
    int checked;                 /* check inputs and same-node order */
    _Alignas(128) uint64_t frame;
    _Atomic int errors;
    /* 128 bytes per xnode: bodies on different threads share no line. */
    struct { _Alignas(128) _Atomic uint64_t stamp; uint64_t sink; } x[SHAPE_MAX_X];
};

/* A shape's table and its generated graph's entry points (shape_gen.py
 * table writes one per .dag). */
struct shape {
    const char *name;
    int n;
    const char *const *names;
    const int *npred;
    const int (*pred)[SHAPE_MAX_PREDS];
    const double *cost_us;       /* declared: `cost` */
    const unsigned char *on_main;
    const unsigned char *par;    /* `parallel`: SHAPE_ITEMS items */
    int (*run)(dagrt *rt, struct shape_ctx *c);
    int (*pipe_init)(unsigned depth);
    int (*pipe_submit)(dagrt *rt, struct shape_ctx *c);
    int (*pipe_drain)(dagrt *rt);
};
extern const struct shape shape_game_frame, shape_layered_frame;

/* bench_frame --fault: checked runs leave one xnode's stamp out, as if it
 * had not run, so that the checks must fail (the smoke's negative
 * control). */
extern int shape_fault;

/* Items [b, e) of task i (a task that is not parallel has item 0 only). */
void shape_items(struct shape_ctx *c, int i, size_t b, size_t e);

/* The shapes' sections of bench_frame: each shape named in `which`
 * ("all" or a comma list of game, layered) run and printed, on rt with
 * `threads` task threads, with bench_main.c's options; want(name) says
 * whether a contender runs (--only). Returns nonzero if a check failed. */
struct shape_opts {
    int runs, quick, load;
    int each;   /* --each: every timed run's figure, round by round */
    double min_ms;
    long min_frames;
    int (*want)(const char *name);
};
int shapes_main(dagrt *rt, int threads, const char *which, const struct shape_opts *o);

#endif

#endif
