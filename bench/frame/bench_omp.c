/* bench_omp.c - the frame graph as OpenMP tasks with depend clauses, created
 * per frame inside one parallel/single region, then taskwait. 2 threads: the
 * one running `single` creates the tasks and also executes them at taskwait,
 * so the calling thread counts as one of the two. */
#include <omp.h>

#include "bench_body.h"

int bench_omp_threads = 2;

void bench_omp_frames(struct bench_ctx *c, long n);

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
