/*
 * bench_frame_alloc.c - dagrt_frame_alloc against malloc (+ free) and against
 * a bare per-thread bump pointer with no frames, side by side in one run:
 * each frame's tasks (1 or 2 at once: the main thread and a worker) make
 * N allocations of one size and write a byte of each; the frame's time
 * per allocation, best of R frames. Target: frame memory within 1.5x the
 * bare bump pointer and below malloc. The bare bump pointer is inlined
 * into the loop; "bump (call)" is the same behind a call, as a library's
 * allocator is (both ratios are printed; the target is read on the first).
 *
 *   bench_frame_alloc [N per task, default 4096] [R, default 30]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dagrt.h"

enum { MODE_FRAME, MODE_MALLOC, MODE_BUMP, MODE_BUMP_CALL, MODES };
static const char *const mode_name[MODES] = {"dagrt_frame_alloc", "malloc+free", "bump pointer",
                                             "bump (call)"};

static int mode;
static size_t size, n_per_task;
static void *ptrs[2][1 << 16];
static _Atomic int failed;

/* The bare bump pointer: a buffer per thread, reset each frame. */
static _Thread_local char *bump_buf;
static _Thread_local size_t bump_at, bump_cap;

static inline void *bump(size_t sz, size_t align)
{
    size_t p = (bump_at + align - 1) & ~(align - 1);
    if (p + sz > bump_cap)
        return NULL;
    bump_at = p + sz;
    return bump_buf + p;
}

/* The same bump pointer behind a call the compiler may not inline, as a
 * library's allocator is: what a call costs, without frames. */
__attribute__((noinline)) static void *bump_call(size_t sz, size_t align)
{
    __asm__ volatile("");
    return bump(sz, align);
}

static void body(int k)
{
    void **out = ptrs[k];
    switch (mode) {
    case MODE_FRAME:
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = dagrt_frame_alloc(size, 16);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
        }
        break;
    case MODE_MALLOC:
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = malloc(size);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
            out[i] = p;
        }
        for (size_t i = 0; i < n_per_task; i++)
            free(out[i]);
        break;
    default: {
        void *(*fn)(size_t, size_t) = mode == MODE_BUMP_CALL ? bump_call : NULL;
        if (bump_cap < n_per_task * (size + 16)) {
            free(bump_buf);
            bump_cap = n_per_task * (size + 16);
            bump_buf = malloc(bump_cap);
            if (!bump_buf) {
                failed = 1;
                return;
            }
        }
        bump_at = 0;
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = fn ? fn(size, 16) : bump(size, 16);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
        }
        break;
    }
    }
}

static void task0(void *ctx) { (void)ctx; body(0); }
static void task1(void *ctx) { (void)ctx; body(1); }

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    n_per_task = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 30;
    if (n_per_task == 0 || n_per_task > (1u << 16) || reps <= 0) {
        fprintf(stderr, "usage: bench_frame_alloc [N 1..65536] [R]\n");
        return 2;
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    static const uint32_t succ[1] = {0};
    static const dagrt_node nodes[2] = {
        {.name = "a0", .kind = DAGRT_NODE_TASK, .run = task0},
        {.name = "a1", .kind = DAGRT_NODE_TASK, .run = task1},
    };
    static dagrt_node_state ns[2];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    static const size_t sizes[] = {16, 64, 256, 1024, 4096};
    printf("bench_frame_alloc: ns per allocation (each with a 1-byte write), best of %d frames "
           "of %zu allocations per task; ratios in this run\n", reps, n_per_task);
    printf("%-7s %6s %12s %12s %12s %12s %8s %9s %9s\n", "threads", "size", mode_name[0],
           mode_name[1], mode_name[2], mode_name[3], "vs bump", "vs call", "vs malloc");
    int worst = 0;
    for (int threads = 1; threads <= 2; threads++) {
        dagrt_graph g = {.version = DAGRT_GRAPH_VERSION, .nnodes = (uint32_t)threads,
                         .name = "alloc", .nodes = nodes, .succ = succ};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size = sizes[s];
            double best[MODES];
            for (int m = 0; m < MODES; m++)
                best[m] = 1e300;
            /* Modes interleaved frame by frame, so that a slow moment of
             * the machine hits all of them alike. */
            for (int r = 0; r < reps + 3; r++)
                for (int m = 0; m < MODES; m++) {
                    mode = m;
                    double t0 = now_ns();
                    if (dagrt_graph_run(rt, &g, &st, NULL) != 0 || failed) {
                        fprintf(stderr, "bench_frame_alloc: a frame failed\n");
                        return 1;
                    }
                    double per = (now_ns() - t0) / (double)n_per_task;
                    if (r >= 3 && per < best[m])   /* the first frames warm up */
                        best[m] = per;
                }
            double vb = best[MODE_FRAME] / best[MODE_BUMP];
            double vc = best[MODE_FRAME] / best[MODE_BUMP_CALL];
            double vm = best[MODE_FRAME] / best[MODE_MALLOC];
            printf("%-7d %6zu %12.2f %12.2f %12.2f %12.2f %7.2fx %8.2fx %8.2fx\n", threads, size,
                   best[MODE_FRAME], best[MODE_MALLOC], best[MODE_BUMP], best[MODE_BUMP_CALL], vb,
                   vc, vm);
            if (vb > 1.5 || vm >= 1.0)
                worst = 1;
        }
    }
    printf("target (within 1.5x the bump pointer, below malloc): %s\n", worst ? "missed" : "met");
    dagrt_destroy(rt);
    return 0;
}
