/*
 * trace/flow.c - the trace's flow events (DAGRT_TRACE_FLOWS=1,
 * trace/record.h): Perfetto's arrows from each node of a frame to each
 * node it released, drawn from the graphs' tables at write time, so that
 * recording costs nothing more. An arrow starts in the node's last slice
 * to end (on its thread) and ends in the successor's first slice to
 * begin; gates and tasks skipped by `when` report nothing, so an edge
 * into one goes on to their successors. Each node's arrow from the
 * predecessor that ended last says "released": that one made it ready.
 * Frames of one graph that overlap (frames in flight) also get arrows
 * from frame N to frame N+1: node X to node X (same-node order) and X to
 * each node with `prev X`.
 *
 * In the file: "s" then "f" (binding point "e": the enclosing slice)
 * events, cat "dagrt.flow", name "after", "order" or "prev", the same id,
 * args node/frame (from) and to_node/to_frame, released on "after"
 * arrows (docs/runtime.md, "The built-in trace").
 */
#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"

/* One node of one frame: its slices together. */
typedef struct span {
    uint32_t g;              /* the graph's slot in t->graphs */
    uint32_t node;
    uint64_t frame;
    uint64_t first_b, first_e;   /* the slice that begins first, and its thread */
    uint32_t first_tid;
    uint32_t last_tid;       /* the latest end's slice, and its thread */
    uint64_t last_b, last_e;
} span;

typedef enum { FL_AFTER, FL_ORDER, FL_PREV } flow_kind;

typedef struct edge {
    size_t u, v;             /* spans */
    flow_kind kind;
} edge;

static int cmp_span(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    if (a->frame != b->frame)
        return a->frame < b->frame ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* The span of (g, frame, node), or (size_t)-1. */
static size_t find(const span *s, size_t n, uint32_t g, uint64_t frame, uint32_t node)
{
    span key = {.g = g, .frame = frame, .node = node};
    const span *p = bsearch(&key, s, n, sizeof *s, cmp_span);
    return p ? (size_t)(p - s) : (size_t)-1;
}

static bool push(edge **e, size_t *n, size_t *cap, size_t u, size_t v, flow_kind k)
{
    if (*n == *cap) {
        edge *ne = realloc(*e, (*cap = *cap ? *cap * 2 : 256) * sizeof **e);
        if (!ne)
            return false;
        *e = ne;
    }
    (*e)[(*n)++] = (edge){u, v, k};
    return true;
}

static uint64_t to_ns(uint64_t ticks, double k) { return (uint64_t)((double)ticks * k + 0.5); }

static void put_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* The frame's extent: [first begin, last end] of its spans, from span i
 * (the first of its frame) on. */
static void frame_extent(const span *s, size_t n, size_t i, uint64_t *b, uint64_t *e)
{
    *b = UINT64_MAX;
    *e = 0;
    for (size_t j = i; j < n && s[j].g == s[i].g && s[j].frame == s[i].frame; j++) {
        if (s[j].first_b < *b)
            *b = s[j].first_b;
        if (s[j].last_e > *e)
            *e = s[j].last_e;
    }
}

long long rt_trace_put_flows(rt_trace *t, FILE *f, const rt_trace_pick *pick, size_t n, long pid,
                             double k)
{
    /* acquire: pairs with rt_trace_graph's release, the slots are whole. */
    uint32_t ng = atomic_load_explicit(&t->ngraphs, memory_order_acquire);
    if (ng == 0 || n == 0)
        return 0;
    span *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    size_t ns = 0;
    uint32_t maxnodes = 0;
    for (uint32_t g = 0; g < ng; g++)
        if (t->graphs[g]->nnodes > maxnodes)
            maxnodes = t->graphs[g]->nnodes;
    for (size_t i = 0; i < n; i++) {
        const ev *e = pick[i].e;
        if (e->kind != EV_NODE)
            continue;
        uint32_t g = 0;
        while (g < ng && t->graphs[g]->name != e->cat && strcmp(t->graphs[g]->name, e->cat) != 0)
            g++;
        if (g == ng || e->index >= t->graphs[g]->nnodes)
            continue;   /* a graph that ran before flows were on, or after the table filled */
        s[ns++] = (span){g, e->index, e->frame, e->ts, e->ts + e->dur, pick[i].tid, pick[i].tid,
                         e->ts, e->ts + e->dur};
    }
    qsort(s, ns, sizeof *s, cmp_span);
    size_t m = 0;
    for (size_t i = 0; i < ns; i++) {
        if (m > 0 && cmp_span(&s[m - 1], &s[i]) == 0) {
            span *a = &s[m - 1];
            if (s[i].first_b < a->first_b) {
                a->first_b = s[i].first_b;
                a->first_e = s[i].first_e;
                a->first_tid = s[i].first_tid;
            }
            if (s[i].last_e > a->last_e) {
                a->last_e = s[i].last_e;
                a->last_b = s[i].last_b;
                a->last_tid = s[i].last_tid;
            }
        } else {
            s[m++] = s[i];
        }
    }
    ns = m;

    edge *ed = NULL;
    size_t ne = 0, ecap = 0;
    /* Walking through unreported nodes: a stack and a stamp per node. */
    uint32_t *stack = malloc((maxnodes + 1) * sizeof *stack);
    size_t *stamp = calloc(maxnodes + 1, sizeof *stamp);
    bool ok = stack && stamp;
    uint64_t fb = 0, fe = 0, nb = 0, ne_ = 0;
    bool overlap = false;
    for (size_t i = 0; ok && i < ns; i++) {
        const span *u = &s[i];
        const dagrt_graph *G = t->graphs[u->g];
        if (i == 0 || u->g != s[i - 1].g || u->frame != s[i - 1].frame) {
            /* A new frame: does the next one of this graph overlap it? */
            frame_extent(s, ns, i, &fb, &fe);
            size_t j = i;
            while (j < ns && s[j].g == u->g && s[j].frame == u->frame)
                j++;
            overlap = j < ns && s[j].g == u->g && s[j].frame == u->frame + 1;
            if (overlap) {
                frame_extent(s, ns, j, &nb, &ne_);
                overlap = nb < fe;
            }
        }
        /* Each node is stacked at most once per span (stamped as it is
         * pushed), so the stack never holds more than nnodes. */
        const dagrt_node *nd = &G->nodes[u->node];
        size_t top = 0;
        for (uint32_t q = 0; q < nd->nsucc; q++) {
            uint32_t x = G->succ[nd->succ_first + q];
            if (x < G->nnodes && stamp[x] != i + 1) {
                stamp[x] = i + 1;
                stack[top++] = x;
            }
        }
        while (ok && top > 0) {
            uint32_t x = stack[--top];
            size_t v = find(s, ns, u->g, u->frame, x);
            if (v != (size_t)-1) {
                ok = push(&ed, &ne, &ecap, i, v, FL_AFTER);
                continue;
            }
            const dagrt_node *xn = &G->nodes[x];
            for (uint32_t q = 0; q < xn->nsucc; q++) {
                uint32_t y = G->succ[xn->succ_first + q];
                if (y < G->nnodes && stamp[y] != i + 1) {
                    stamp[y] = i + 1;
                    stack[top++] = y;
                }
            }
        }
        if (ok && overlap) {
            size_t v = find(s, ns, u->g, u->frame + 1, u->node);
            if (v != (size_t)-1)
                ok = push(&ed, &ne, &ecap, i, v, FL_ORDER);
            for (uint32_t q = 0; ok && q < nd->npsucc && G->psucc; q++) {
                v = find(s, ns, u->g, u->frame + 1, G->psucc[nd->psucc_first + q]);
                if (v != (size_t)-1)
                    ok = push(&ed, &ne, &ecap, i, v, FL_PREV);
            }
        }
    }
    free(stack);
    free(stamp);
    /* Per node, the "after" arrow from the predecessor that ended last. */
    size_t *rel = ok ? malloc((ns + 1) * sizeof *rel) : NULL;
    if (!rel) {
        free(ed);
        free(s);
        return -1;
    }
    for (size_t i = 0; i < ns; i++)
        rel[i] = (size_t)-1;
    for (size_t i = 0; i < ne; i++)
        if (ed[i].kind == FL_AFTER &&
            (rel[ed[i].v] == (size_t)-1 || s[ed[i].u].last_e > s[ed[rel[ed[i].v]].u].last_e))
            rel[ed[i].v] = i;
    static const char *const names[] = {"after", "order", "prev"};
    for (size_t i = 0; i < ne; i++) {
        const span *u = &s[ed[i].u], *v = &s[ed[i].v];
        /* Inside the slices, not on their edges: a slice that begins as
         * another ends on the same thread would otherwise share the
         * instant (the "s" a nanosecond before u's end, the "f" one after
         * v's begin, where the slices are that long). */
        uint64_t ub = to_ns(u->last_b, k), ue = to_ns(u->last_e, k);
        uint64_t vb = to_ns(v->first_b, k), ve = to_ns(v->first_e, k);
        uint64_t sts = ue > ub ? ue - 1 : ue, fts = ve > vb ? vb + 1 : vb;
        for (int end = 0; end < 2; end++) {
            fprintf(f, ",\n{\"ph\":\"%s\",%s\"name\":\"%s\",\"cat\":\"dagrt.flow\",\"id\":%zu,"
                       "\"pid\":%ld,\"tid\":%u,\"ts\":",
                    end ? "f" : "s", end ? "\"bp\":\"e\"," : "", names[ed[i].kind], i + 1, pid,
                    end ? v->first_tid : u->last_tid);
            put_us(f, end ? fts : sts);
            fprintf(f, ",\"args\":{\"frame\":%llu,\"node\":%u,\"to_frame\":%llu,\"to_node\":%u",
                    (unsigned long long)u->frame, u->node, (unsigned long long)v->frame, v->node);
            if (ed[i].kind == FL_AFTER)
                fprintf(f, ",\"released\":%s", rel[ed[i].v] == i ? "true" : "false");
            fputs("}}", f);
        }
    }
    free(rel);
    free(ed);
    free(s);
    return (long long)ne;
}
