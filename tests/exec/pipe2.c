/* pipe2.c - a depth-2 pipeline of N frames over two fresh states
 * (pipe2.h). */
#include "pipe2.h"

#include <stdio.h>
#include <string.h>

int pipe2_run(dagrt *rt, const dagrt_graph *g, const pipe2 *q, int frames,
              void (*store)(void *ctx, const void *src), void (*drop)(void *ctx), const char *who,
              uint64_t *stretch)
{
    *stretch = 0;
    for (int k = 0; k < 2; k++)
        if (dagrt_graph_state_init(q->st[k], q->ns[k], q->nnodes) != 0) {
            fprintf(stderr, "%s: dagrt_graph_state_init failed\n", who);
            return 1;
        }
    dagrt_pipeline p;
    memset(&p, 0, sizeof p);
    dagrt_graph_state *const sts[2] = {q->st[0], q->st[1]};
    void *const cs[2] = {q->ctx[0], q->ctx[1]};
    if (dagrt_pipeline_init(&p, 2, sts, cs, drop) != 0) {
        fprintf(stderr, "%s: dagrt_pipeline_init failed\n", who);
        return 1;
    }
    for (int f = 0; f < frames; f++) {
        int rc = dagrt_pipeline_submit(rt, g, &p, store, &f);
        if (rc != 0) {
            fprintf(stderr, "%s: pipeline frame %d: %s\n", who, f, dagrt_strerror(rc));
            return 1;
        }
    }
    if (dagrt_pipeline_drain(rt, &p) != 0) {
        fprintf(stderr, "%s: dagrt_pipeline_drain failed\n", who);
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        dagrt_graph_stats s;
        if (dagrt_graph_get_stats(q->st[k], &s) != 0)
            return 1;
        *stretch += s.stretch_runs;
    }
    return 0;
}
