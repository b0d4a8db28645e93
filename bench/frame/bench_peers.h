/*
 * bench_peers.h - what the peer harnesses of bench_frame (OpenMP, oneTBB,
 * Taskflow, enkiTS; C and C++ alike) call of the benchmark: the bodies and
 * the graph's edges (bench_body.h, which is C11 and so not for C++), and
 * the frames in flight's slots (bench_main.c).
 *
 * A ring (a peer's form with frames in flight) runs n frames: for each it
 * takes the next frame's slot with bench_pipe_next, at the moment it would
 * submit the frame (before waiting for a place among the frames in
 * flight: the latency of a pipelined frame starts there or at the end of
 * the frame depth before it, whichever is later), runs node i of the frame
 * as bench_node(slot, i) after its predecessors in that frame and after
 * node i of the frame before, lets at most its depth frames be in flight,
 * and returns once all n frames ended.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BENCH_NODES
#define BENCH_NODES 32
#endif
struct bench_ctx;

extern const int bench_preds[BENCH_NODES][2];
void bench_body(struct bench_ctx *c, int idx);
void bench_frame_advance(struct bench_ctx *c);

/* The depth of every peer's ring: frames in flight at most. */
#define BENCH_RING_DEPTH 2

/* The slot of the next frame of c, ready for its bodies (bench_main.c). */
struct bench_ctx *bench_pipe_next(struct bench_ctx *c);

/* Node idx of a slot's frame: its body, the check that the same node of
 * the frame before had ended (checked runs) and present's end stamp. */
void bench_node(struct bench_ctx *slot, int idx);

#ifdef __cplusplus
}
#endif

#endif
