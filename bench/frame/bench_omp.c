/* bench_omp.c - the frame graph as OpenMP tasks with depend clauses, created
 * per frame inside one parallel/single region. 2 threads: the one running
 * `single` creates the tasks and also executes them while it waits, so the
 * calling thread counts as one of the two.
 *
 * One frame at a time: a taskwait after each frame. Frames in flight (the
 * ring, bench_peers.h): no taskwait between frames; node i of frame f also
 * depends on node i of frame f - 1, and a `taskwait depend` on present of
 * frame f - BENCH_RING_DEPTH before frame f's tasks are created caps the
 * frames in flight. */
#include <omp.h>

#include "bench_body.h"
#include "bench_peers.h"

int bench_omp_threads = 2;

void bench_omp_frames(struct bench_ctx *c, long n);
void bench_omp_ring(struct bench_ctx *c, long n);

void bench_omp_frames(struct bench_ctx *c, long n)
{
    char dep[BENCH_NODES];
    (void)dep; /* only named in depend clauses, which gcc does not count as uses */
#pragma omp parallel num_threads(bench_omp_threads)
#pragma omp single
    for (long f = 0; f < n; f++) {
        c->frame++;
        for (int i = 0; i < BENCH_NODES; i++) {
            int a = bench_preds[i][0], b = bench_preds[i][1];
            if (a < 0) {
#pragma omp task depend(out : dep[i]) firstprivate(i)
                bench_body(c, i);
            } else if (b < 0) {
#pragma omp task depend(in : dep[a]) depend(out : dep[i]) firstprivate(i)
                bench_body(c, i);
            } else {
#pragma omp task depend(in : dep[a], dep[b]) depend(out : dep[i]) firstprivate(i)
                bench_body(c, i);
            }
        }
#pragma omp taskwait
    }
}

void bench_omp_ring(struct bench_ctx *c, long n)
{
    /* One row of dependence objects per frame in flight plus the frame
     * before them, so a frame's `out` never waits on the readers of a
     * frame still in flight (no false anti-dependence). */
    enum { ROWS = BENCH_RING_DEPTH + 1 };
    char dep[ROWS][BENCH_NODES];
    (void)dep;
#pragma omp parallel num_threads(bench_omp_threads)
#pragma omp single
    /* The region's end waits for every task: the ring's end. */
    for (long f = 0; f < n; f++) {
        int cur = (int)(f % ROWS), prev = (int)((f + ROWS - 1) % ROWS);
        int old = (int)((f + ROWS - BENCH_RING_DEPTH) % ROWS);
        struct bench_ctx *s = bench_pipe_next(c);
        if (f >= BENCH_RING_DEPTH) {
#pragma omp taskwait depend(in : dep[old][BENCH_NODES - 1])
        }
        for (int i = 0; i < BENCH_NODES; i++) {
            int a = bench_preds[i][0], b = bench_preds[i][1];
            if (a < 0) {
#pragma omp task depend(in : dep[prev][i]) depend(out : dep[cur][i]) firstprivate(i, s)
                bench_node(s, i);
            } else if (b < 0) {
#pragma omp task depend(in : dep[prev][i], dep[cur][a]) depend(out : dep[cur][i]) firstprivate(i, s)
                bench_node(s, i);
            } else {
#pragma omp task depend(in : dep[prev][i], dep[cur][a], dep[cur][b]) depend(out : dep[cur][i]) firstprivate(i, s)
                bench_node(s, i);
            }
        }
    }
}
