/* shape_omp.c - the uneven frames (shapes.h) as OpenMP tasks with depend
 * clauses, in the forms bench_omp.c gives the uniform frame: the tasks of
 * each frame created inside one parallel/single region of `threads`
 * threads (the one in `single` runs tasks while it waits). An xnode's
 * inputs are an OpenMP 5 depend iterator over its predecessors. One frame
 * at a time: a taskwait after each frame. Frames in flight (depth 2): xnode
 * x of frame f also depends on xnode x of frame f - 1, and a `taskwait
 * depend` on the sink of frame f - 2 comes before frame f's tasks. `on
 * main` has no meaning here: those tasks run on any thread. */
#include <omp.h>

#include "shapes.h"

static int omp_threads = 2;

void shape_omp_setup(struct shape_ctx *c, int threads)
{
    (void)c;
    omp_threads = threads;
}

void shape_omp_teardown(void) {}

void shape_omp_frames(struct shape_ctx *c, long n)
{
    char dep[SHAPE_MAX_X];
    (void)dep; /* only named in depend clauses */
    const int N = shape_xg.n;
#pragma omp parallel num_threads(omp_threads)
#pragma omp single
    for (long f = 0; f < n; f++) {
        c->frame++;
        for (int x = 0; x < N; x++) {
            const int np = shape_xg.npred[x];
            const int *pr = shape_xg.pred[x];
            (void)np;   /* only named in the depend iterator, which gcc does not count as a use */
#pragma omp task depend(iterator(k = 0 : np), in : dep[pr[k]]) depend(out : dep[x]) firstprivate(x)
            shape_xnode(c, x);
        }
#pragma omp taskwait
    }
}

void shape_omp_ring(struct shape_ctx *c, long n)
{
    /* A row of dependence objects per frame in flight plus the frame
     * before them (bench_omp.c says why). */
    enum { D = 2, ROWS = D + 1 };
    char dep[ROWS][SHAPE_MAX_X];
    (void)dep;
    const int N = shape_xg.n;
#pragma omp parallel num_threads(omp_threads)
#pragma omp single
    for (long f = 0; f < n; f++) {
        int cur = (int)(f % ROWS), prev = (int)((f + ROWS - 1) % ROWS);
        int old = (int)((f + ROWS - D) % ROWS);
        struct shape_ctx *s = shape_pipe_next(c);
        if (f >= D) {
#pragma omp taskwait depend(in : dep[old][N - 1])
        }
        for (int x = 0; x < N; x++) {
            const int np = shape_xg.npred[x];
            const int *pr = shape_xg.pred[x];
            (void)np;
#pragma omp task depend(iterator(k = 0 : np), in : dep[cur][pr[k]]) depend(in : dep[prev][x]) depend(out : dep[cur][x]) firstprivate(x, s)
            shape_xnode(s, x);
        }
    }
}
