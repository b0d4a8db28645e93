/* pipe2.c - the executor scenarios' shared harness (pipe2.h). */
#include "pipe2.h"

#include <stdio.h>
#include <string.h>

void pipe2_table(pipe2_graph *t, const char *who, uint32_t n, const char *const *names,
                 const dagrt_node_fn *fns, const uint32_t (*edges)[2], uint32_t nedges,
                 const uint32_t *cost_us)
{
    memset(t->nodes, 0, sizeof t->nodes);
    memset(t->npred, 0, sizeof t->npred);
    for (uint32_t u = 0; u < PIPE2_MAX_NODES; u++)
        t->prev_src[u] = -1;
    t->who = who;
    t->n = n;
    uint32_t k = 0;
    for (uint32_t u = 0; u < n; u++) {
        dagrt_node *d = &t->nodes[u];
        d->name = names[u];
        d->kind = DAGRT_NODE_TASK;
        d->join = DAGRT_JOIN_AND;
        d->run = fns[u];
        d->succ_first = k;
        for (; k < nedges && edges[k][0] == u; k++) {
            uint32_t v = edges[k][1];
            t->succ[k] = v;
            t->pred[v][t->npred[v]++] = u;
        }
        d->nsucc = k - d->succ_first;
        t->cost[u] = cost_us[u] * 1000u;
    }
    for (uint32_t v = 0; v < n; v++)
        t->nodes[v].npred = t->npred[v];
    memset(&t->g, 0, sizeof t->g);
    t->g.version = DAGRT_GRAPH_VERSION;
    t->g.nnodes = n;
    t->g.nsucc = nedges;
    t->g.name = who;
    t->g.nodes = t->nodes;
    t->g.succ = t->succ;
    t->g.cost = t->cost;
}

void pipe2_fan(pipe2_graph *t, const char *who, uint32_t n, const char *const *names,
               const dagrt_node_fn *fns, uint32_t cost_us)
{
    static const char *const fan_names[PIPE2_MAX_NODES] = {
        "root", "m1", "m2", "m3", "m4", "m5", "m6", "m7",
        "m8", "m9", "m10", "m11", "m12", "m13", "m14", "m15"};
    const char *named[PIPE2_MAX_NODES];
    if (!names) {
        for (uint32_t u = 0; u < n; u++)
            named[u] = u + 1 == n ? "sink" : fan_names[u];
        names = named;
    }
    uint32_t edges[2 * PIPE2_MAX_NODES][2], cost[PIPE2_MAX_NODES], ne = 0;
    for (uint32_t m = 1; m + 1 < n; m++)
        edges[ne][0] = 0, edges[ne++][1] = m;
    for (uint32_t m = 1; m + 1 < n; m++)
        edges[ne][0] = m, edges[ne++][1] = n - 1;
    for (uint32_t u = 0; u < n; u++)
        cost[u] = cost_us;
    pipe2_table(t, who, n, names, fns, (const uint32_t(*)[2])edges, ne, cost);
}

void pipe2_prev(pipe2_graph *t, uint32_t src, uint32_t dst)
{
    uint32_t k = t->g.npsucc++;
    dagrt_node *s = &t->nodes[src];
    if (s->npsucc == 0)
        s->psucc_first = k;
    s->npsucc++;
    t->psucc[k] = dst;
    t->nodes[dst].nprev++;
    t->prev_src[dst] = (int32_t)src;
    t->g.psucc = t->psucc;
}

void pipe2_reset(pipe2_graph *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        atomic_store(&t->last_frame[i], -1);
        atomic_store(&t->done_frame[i], -1);
    }
    atomic_store(&t->frames_bad, 0);
}

void pipe2_enter(pipe2_frame *c, uint32_t i)
{
    pipe2_graph *t = c->graph;
    /* Inputs before it, in its frame (acquire: pairs with pipe2_leave's
     * release). */
    for (uint32_t k = 0; k < t->npred[i]; k++)
        if (atomic_load_explicit(&c->at[t->pred[i][k]], memory_order_acquire) == 0)
            atomic_fetch_add(&c->bad, 1);
    /* The same task of the frame before ran before it (the pipeline's
     * rule; relaxed: the runtime orders the two runs of a task). */
    if (atomic_load_explicit(&t->last_frame[i], memory_order_relaxed) != c->frame - 1)
        atomic_fetch_add(&c->bad, 1);
    /* Its `prev` input's run of the frame before finished (acquire: pairs
     * with pipe2_leave's release of done_frame). */
    int32_t p = t->prev_src[i];
    if (p >= 0 && atomic_load_explicit(&t->done_frame[p], memory_order_acquire) < c->frame - 1)
        atomic_fetch_add(&c->bad, 1);
    atomic_store_explicit(&t->last_frame[i], c->frame, memory_order_relaxed);
}

void pipe2_leave(pipe2_frame *c, uint32_t i)
{
    /* relaxed: read at the frame's end, after the runtime's ordering. */
    atomic_fetch_add_explicit(&c->runs[i], 1, memory_order_relaxed);
    /* release: the tasks after it read it with acquire. */
    atomic_store_explicit(&c->at[i], atomic_fetch_add(&c->seq, 1) + 1, memory_order_release);
    /* release: a `prev` reader of the next frame reads it with acquire. */
    atomic_store_explicit(&c->graph->done_frame[i], c->frame, memory_order_release);
}

void pipe2_store(void *ctx, const void *src)
{
    pipe2_frame *c = ctx;
    c->frame = *(const int *)src;
    atomic_store(&c->seq, 0);
    atomic_store(&c->bad, 0);
    for (uint32_t i = 0; i < PIPE2_MAX_NODES; i++) {
        atomic_store(&c->at[i], 0);
        atomic_store(&c->runs[i], 0);
    }
}

/* A frame over: every task once, in order. */
void pipe2_drop(void *ctx)
{
    pipe2_frame *c = ctx;
    int bad = atomic_load(&c->bad);
    for (uint32_t i = 0; i < c->graph->n; i++)
        bad += atomic_load(&c->runs[i]) != 1;
    if (bad)
        fprintf(stderr, "%s: frame %d: %d violations (a task not run exactly once, or "
                "out of order)\n", c->graph->who, c->frame, bad);
    atomic_fetch_add(&c->graph->frames_bad, bad);
}

int pipe2_run(dagrt *rt, pipe2_graph *t, pipe2_frame ctx[2], int frames, uint64_t *stretch)
{
    /* The states outlive this call's frames (a pipeline's state is read
     * until its next run), so they are static; one pipeline at a time. */
    static dagrt_graph_state st[2];
    static dagrt_node_state ns[2][PIPE2_MAX_NODES];
    *stretch = 0;
    for (int k = 0; k < 2; k++) {
        ctx[k].graph = t;
        if (dagrt_graph_state_init(&st[k], ns[k], t->n) != 0) {
            fprintf(stderr, "%s: dagrt_graph_state_init failed\n", t->who);
            return 1;
        }
    }
    dagrt_pipeline p;
    memset(&p, 0, sizeof p);
    dagrt_graph_state *const sts[2] = {&st[0], &st[1]};
    void *const cs[2] = {&ctx[0], &ctx[1]};
    if (dagrt_pipeline_init(&p, 2, sts, cs, pipe2_drop) != 0) {
        fprintf(stderr, "%s: dagrt_pipeline_init failed\n", t->who);
        return 1;
    }
    for (int f = 0; f < frames; f++) {
        int rc = dagrt_pipeline_submit(rt, &t->g, &p, pipe2_store, &f);
        if (rc != 0) {
            fprintf(stderr, "%s: pipeline frame %d: %s\n", t->who, f, dagrt_strerror(rc));
            return 1;
        }
    }
    if (dagrt_pipeline_drain(rt, &p) != 0) {
        fprintf(stderr, "%s: dagrt_pipeline_drain failed\n", t->who);
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        dagrt_graph_stats s;
        if (dagrt_graph_get_stats(&st[k], &s) != 0)
            return 1;
        *stretch += s.stretch_runs;
    }
    return atomic_load(&t->frames_bad);
}
