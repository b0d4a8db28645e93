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
    /* Written by the caller every frame (frame) or by any body on an error:
     * apart from iters and checked, or every body's read of those would
     * miss once per frame on the threads other than the caller's (a
     * cross-core transfer inside the first body each runs). */
    _Alignas(128) uint64_t frame;
    _Atomic int errors;
    /* 128 bytes per node so that bodies on different threads never share
     * a line, nor a pair of lines (x86 cores move lines in aligned pairs). */
    struct { _Alignas(128) _Atomic uint64_t stamp; uint64_t sink; } node[BENCH_NODES];
};

/* The graph's nodes in bench_frame.dag's (topological) order, X(name,
 * index): for defining the functions its generated code calls. */
#define BENCH_FRAME_NODES(X) \
    X(input, 0) X(n1, 1) X(n2, 2) X(n3, 3) X(n4, 4) X(n5, 5) X(n6, 6) X(n7, 7) \
    X(n8, 8) X(n9, 9) X(n10, 10) X(n11, 11) X(n12, 12) X(n13, 13) X(n14, 14) \
    X(n15, 15) X(n16, 16) X(n17, 17) X(n18, 18) X(n19, 19) X(n20, 20) X(n21, 21) \
    X(n22, 22) X(n23, 23) X(n24, 24) X(n25, 25) X(n26, 26) X(n27, 27) X(n28, 28) \
    X(n29, 29) X(n30, 30) X(present, 31)

/* Predecessors of each node (index into the topological order), -1: none. */
extern const int bench_preds[BENCH_NODES][2];
extern const char *const bench_names[BENCH_NODES];

/* Starts the next frame (for callers that cannot see the struct). */
void bench_frame_advance(struct bench_ctx *c);

/* The body of node idx. */
void bench_body(struct bench_ctx *c, int idx);

/* n frames of the 32 bodies as direct calls in topological order: the
 * serial yardstick of every ratio. */
void bench_serial_frames(struct bench_ctx *c, long n);

/* Calibrates iters so one body takes about target_ns. */
uint64_t bench_calibrate(double target_ns);

/* CLOCK_MONOTONIC in ns, for the frame programs' timings. */
double bench_now_ns(void);

/* One poll of a spin-wait: the CPU's hint that we wait on memory. */
static inline void bench_spin_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
