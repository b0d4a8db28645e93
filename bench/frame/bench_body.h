/*
 * bench_body.h - the node bodies every contender of the frame benchmark
 * runs, identical for all of them (see bench/frame/README.md).
 */
#ifndef BENCH_BODY_H
#define BENCH_BODY_H

#include <stdatomic.h>
#include <stdint.h>

#define BENCH_NODES 32

struct bench_ctx {
    uint64_t iters;              /* LCG steps per body; 0: empty bodies */
    int checked;                 /* check predecessors ran this frame */
    uint64_t frame;
    _Atomic int errors;
    /* One cache line per node so bodies on different threads never share. */
    struct { _Alignas(64) _Atomic uint64_t stamp; uint64_t sink; } node[BENCH_NODES];
};

/* Predecessors of each node (index into the topological order), -1: none. */
extern const int bench_preds[BENCH_NODES][2];
extern const char *const bench_names[BENCH_NODES];

/* Starts the next frame (for callers that cannot see the struct). */
void bench_frame_advance(struct bench_ctx *c);

/* The body of node idx. */
void bench_body(struct bench_ctx *c, int idx);

/* Calibrates iters so one body takes about target_ns. */
uint64_t bench_calibrate(double target_ns);

#endif
