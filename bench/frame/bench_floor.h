/*
 * bench_floor.h - the frame graph with no runtime (bench_floor.c): the floor
 * that bench_frame and frame_trace read the runtimes' figures against.
 */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

#include "bench_body.h"

/* Starts the floor's helper pthread; every node runs body(c, index).
 * Returns 0 or pthread_create's error. */
int bench_floor_setup(struct bench_ctx *c, void (*body)(struct bench_ctx *c, int idx));
/* Runs n frames (each advances c->frame) on the caller and the helper. */
void bench_floor_frames(struct bench_ctx *c, long n);
/* Runs n frames as a ring of depth frames in flight (1 to 7) on the same
 * two threads: each frame's slot from next(c) at its submit, node i of it
 * as node(slot, i) (bench_peers.h); returns once all n ended. */
void bench_floor_ring(struct bench_ctx *c, long n, unsigned depth,
                      struct bench_ctx *(*next)(struct bench_ctx *c),
                      void (*node)(struct bench_ctx *slot, int idx));
/* Stops and joins the helper. */
void bench_floor_teardown(void);

#endif
