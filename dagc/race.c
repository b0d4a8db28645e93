/*
 * race.c - data races found at build time (v2 "Resources and races").
 *
 * Ordering. B is ordered after A when A has completed before B can start in
 * every run. With D(v) = "the nodes that have completed whenever v starts,
 * and v itself once it has", in topological order:
 *   AND join:  before(v) = union over inputs p of D(p)
 *   OR join:   before(v) = intersection over inputs p of D(p)  (it fires on
 *              whichever input completes first: only what every input
 *              guarantees is guaranteed); with a `prev` input, empty (that
 *              input orders nothing within a run)
 *   D(v) = before(v) + {v}, and, for a node inside a flattened run node,
 *          + D(that run node's entry): every node of a subgraph waits for
 *          the run node's inputs (a `prev` input holds from the start of
 *          the subgraph, not of the whole run)
 * Gates and flattened subgraphs are ordinary nodes here, so they pass
 * ordering on; `when` does not matter (a skipped task still completes).
 *
 * Scale. Only accessors matter, so the sets are bitsets over "slots": one
 * slot per (resource, accessing task), a resource's slots consecutive and in
 * topological order. One pass over the graph computes every node's set; a
 * pair (X, Y) of one resource, Y earlier, is a race when Y's bit is missing
 * from before(X), and at least one writes. Set operations run a word (64
 * slots) at a time, so the check costs O((nodes + edges) * slots / 64) time
 * and nodes * min(slots, budget) / 8 bytes: when the slots exceed the
 * memory budget they are taken in batches (whole resources where they fit),
 * one pass each. No pair of nodes is ever compared; pairs of accessors of
 * one resource are scanned a word at a time, and only reported races cost
 * one each (past the cap, cross-frame races are counted a word at a time).
 * That is still quadratic in the accessors of one resource (a chain of
 * writers: slots = nodes); docs/bench-compiler.md has the figures.
 *
 * Across frames (-Wpipeline-race). In a pipeline frame N+1's node v waits
 * for frame N's v (a task never overlaps itself) and for its `prev` inputs
 * from frame N. On the two-frame unrolled graph, for frame N+1's v:
 *   D2(v) = D(v) (frame N's v and what it had waited for)
 *         + join over inputs: frame N+1's preds p give D2(p), prev inputs q
 *           give D(q)
 * restricted to frame N's slots. Frame N's X and frame N+1's Y (X != Y)
 * race when X's bit is missing from D2(Y). Frame N's own sets need nothing
 * from frame N-1: nothing of frame N+1 can have waited for it.
 */
#include "sema_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DAGC_RACE_BUDGET_BYTES
#define DAGC_RACE_BUDGET_BYTES ((size_t)48 << 20) /* both bitset arrays together */
#endif
#define BUDGET_BYTES DAGC_RACE_BUDGET_BYTES

typedef struct slot {
    uint32_t node, res;
    uint32_t write;
    src_pos pos;
} slot;

typedef struct finding {
    uint32_t x, y;       /* slots: reported at x */
} finding;

typedef struct rctx {
    const ir_program *p;
    const ir_graph *g;
    dg_diag *d;
    slot *slots;
    uint32_t nslots;
    uint32_t *rfirst;    /* per resource: its first slot; rfirst[nres] = nslots */
    uint32_t *nfirst;    /* per node: its first entry in nslot */
    uint32_t *nslot;     /* slots by node */
    finding *cross;
    size_t ncross, crosscap, crossmore;
} rctx;

static int slot_cmp(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->res != y->res) return x->res < y->res ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* The node of a's ancestry (a itself, or a flattened run node enclosing it)
 * in the innermost graph that also holds b's; *in is that subgraph. */
static void common_level(const ir_graph *g, uint32_t a, uint32_t b, uint32_t *na, uint32_t *nb,
                         uint32_t *in)
{
    uint32_t ca[300], cb[300], la = 0, lb = 0; /* deeper than subgraphs nest (256) */
    for (uint32_t s = g->nodes[a].sub; s != UINT32_MAX && la < 300; s = g->subs[s].parent) ca[la++] = s;
    for (uint32_t s = g->nodes[b].sub; s != UINT32_MAX && lb < 300; s = g->subs[s].parent) cb[lb++] = s;
    /* The entry gate (the run node) belongs to its own sub, but is a node
     * of the enclosing graph. */
    if (la && g->subs[ca[0]].entry == a) la--, memmove(ca, ca + 1, la * sizeof *ca);
    if (lb && g->subs[cb[0]].entry == b) lb--, memmove(cb, cb + 1, lb * sizeof *cb);
    uint32_t c = UINT32_MAX;
    while (la && lb && ca[la - 1] == cb[lb - 1]) {
        c = ca[la - 1];
        la--;
        lb--;
    }
    *in = c;
    *na = la ? g->subs[ca[la - 1]].entry : a;
    *nb = lb ? g->subs[cb[lb - 1]].entry : b;
}

/* The name as the enclosing graph `in` writes it. */
static const char *local_name(const ir_graph *g, uint32_t in, uint32_t v)
{
    const char *n = g->nodes[v].name;
    return in == UINT32_MAX ? n : n + strlen(g->subs[in].name) + 1;
}

/* The entry of the run node that v is inside, or UINT32_MAX (a run node's
 * own entry belongs to its sub, but waits for the enclosing one's). */
static uint32_t enclosing_entry(const ir_graph *g, uint32_t v)
{
    uint32_t s = g->nodes[v].sub;
    if (s != UINT32_MAX && g->subs[s].entry == v) s = g->subs[s].parent;
    return s == UINT32_MAX ? UINT32_MAX : g->subs[s].entry;
}

/* Whether v has an `after` clause in its own graph (a subgraph's root
 * waits only for the run node's entry, which the user did not write). */
static int has_after(const ir_graph *g, uint32_t v)
{
    const ir_node *x = &g->nodes[v];
    if (x->nprev) return 1;
    if (x->npred == 1 && x->pred[0] == enclosing_entry(g, v)) return 0;
    return x->npred > 0;
}

/* The hint: make `to` (at level `in`) also wait for `what`. */
static void hint(const rctx *R, uint32_t to, uint32_t in, const char *prefix, uint32_t what)
{
    const ir_graph *g = R->g;
    const char *tn = local_name(g, in, to), *wn = local_name(g, in, what);
    char where[300] = "";
    if (in != UINT32_MAX) snprintf(where, sizeof where, " in graph '%s'", g->subs[in].graph);
    /* The hint names the task, so it needs no position (and JSON keeps it
     * apart from the notes). */
    if (has_after(g, to))
        dg_hint(R->d, "to order them, add ', %s%s' to the 'after' of '%s'%s", prefix, wn, tn,
                where);
    else
        dg_hint(R->d, "to order them, add 'after %s%s' to '%s'%s", prefix, wn, tn, where);
}

static void message(dg_buf *b, const rctx *R, const slot *x, const slot *y, const char *opening)
{
    const char *xn = R->g->nodes[x->node].name, *yn = R->g->nodes[y->node].name;
    const char *rn = R->p->resources[x->res].name;
    dg_buf_printf(b, "'%s' and '%s' %s", xn, yn, opening);
    if (x->write && y->write)
        dg_buf_printf(b, " and both write '%s'", rn);
    else if (x->write)
        dg_buf_printf(b, "; '%s' writes '%s' and '%s' reads it", xn, rn, yn);
    else
        dg_buf_printf(b, "; '%s' writes '%s' and '%s' reads it", yn, rn, xn);
}

static void note_other(const rctx *R, const slot *y)
{
    dg_note(R->d, y->pos, "'%s' %s '%s' here", R->g->nodes[y->node].name,
            y->write ? "writes" : "reads", R->p->resources[y->res].name);
}

static void report_race(const rctx *R, const slot *x, const slot *y)
{
    dg_buf b = {0};
    message(&b, R, x, y, "may run at the same time");
    dg_error(R->d, x->pos, "%s", b.p);
    dg_buf_free(&b);
    note_other(R, y);
    /* x is later in topological order, and so is its enclosing block at
     * the common level: waiting there for y's block adds no cycle. */
    uint32_t ax, ay, in;
    common_level(R->g, x->node, y->node, &ax, &ay, &in);
    hint(R, ax, in, "", ay);
}

static void report_cross(const rctx *R, const slot *x, const slot *y)
{
    dg_buf b = {0};
    message(&b, R, x, y, "of the next frame may run at the same time");
    dg_warning(R->d, x->pos, "%s [-Wpipeline-race]", b.p);
    dg_buf_free(&b);
    note_other(R, y);
    uint32_t ax, ay, in;
    common_level(R->g, x->node, y->node, &ax, &ay, &in);
    hint(R, ay, in, "prev ", ax);
}

/* Only below the cap: past it the caller counts. */
static void add_cross(rctx *R, uint32_t x, uint32_t y)
{
    if (R->ncross == R->crosscap) {
        R->crosscap = R->crosscap ? R->crosscap * 2 : 64;
        R->cross = dg_xrealloc(R->cross, R->crosscap * sizeof *R->cross);
    }
    R->cross[R->ncross].x = x;
    R->cross[R->ncross].y = y;
    R->ncross++;
}

/* One batch: slots [b0, b1). D1 and D2 hold W words per node. */
static void batch(rctx *R, uint32_t b0, uint32_t b1, uint32_t r0, uint32_t r1, uint64_t *D1,
                  uint64_t *D2, size_t W, int cross, size_t crosscap)
{
    const ir_graph *g = R->g;
    uint32_t n = g->nnodes;
    memset(D1, 0, (size_t)n * W * sizeof *D1);
    if (cross) memset(D2, 0, (size_t)n * W * sizeof *D2);
    uint64_t *wmask = dg_xcalloc(W, sizeof *wmask);
    for (uint32_t s = b0; s < b1; s++)
        if (R->slots[s].write) wmask[(s - b0) >> 6] |= 1ull << ((s - b0) & 63);
#define OWN(v, D)                                                                    \
    for (uint32_t k_ = R->nfirst[v]; k_ < R->nfirst[(v) + 1]; k_++) {                \
        uint32_t s_ = R->nslot[k_];                                                  \
        if (s_ >= b0 && s_ < b1) (D)[(s_ - b0) >> 6] |= 1ull << ((s_ - b0) & 63);    \
    }
    for (uint32_t v = 0; v < n; v++) {
        const ir_node *x = &g->nodes[v];
        uint64_t *d = D1 + (size_t)v * W;
        if (x->npred && x->join == IR_JOIN_AND) {
            for (uint32_t k = 0; k < x->npred; k++) {
                const uint64_t *q = D1 + (size_t)x->pred[k] * W;
                for (size_t w = 0; w < W; w++) d[w] |= q[w];
            }
        } else if (x->npred && x->nprev == 0) {
            memcpy(d, D1 + (size_t)x->pred[0] * W, W * sizeof *d);
            for (uint32_t k = 1; k < x->npred; k++) {
                const uint64_t *q = D1 + (size_t)x->pred[k] * W;
                for (size_t w = 0; w < W; w++) d[w] &= q[w];
            }
        }
        uint32_t e = enclosing_entry(g, v);
        if (e != UINT32_MAX) {
            const uint64_t *q = D1 + (size_t)e * W;
            for (size_t w = 0; w < W; w++) d[w] |= q[w];
        }
        OWN(v, d);
    }
    if (cross) {
        uint64_t *t = dg_xmalloc(W * sizeof *t);
        for (uint32_t v = 0; v < n; v++) {
            const ir_node *x = &g->nodes[v];
            uint64_t *d = D2 + (size_t)v * W;
            uint32_t nin = x->npred + x->nprev;
            if (nin && x->join == IR_JOIN_AND) {
                memset(t, 0, W * sizeof *t);
                for (uint32_t k = 0; k < x->npred; k++) {
                    const uint64_t *q = D2 + (size_t)x->pred[k] * W;
                    for (size_t w = 0; w < W; w++) t[w] |= q[w];
                }
                for (uint32_t k = 0; k < x->nprev; k++) {
                    const uint64_t *q = D1 + (size_t)x->prev[k] * W;
                    for (size_t w = 0; w < W; w++) t[w] |= q[w];
                }
            } else if (nin) {
                memset(t, 0xff, W * sizeof *t);
                for (uint32_t k = 0; k < x->npred; k++) {
                    const uint64_t *q = D2 + (size_t)x->pred[k] * W;
                    for (size_t w = 0; w < W; w++) t[w] &= q[w];
                }
                for (uint32_t k = 0; k < x->nprev; k++) {
                    const uint64_t *q = D1 + (size_t)x->prev[k] * W;
                    for (size_t w = 0; w < W; w++) t[w] &= q[w];
                }
            } else {
                memset(t, 0, W * sizeof *t);
            }
            uint32_t e = enclosing_entry(g, v);
            if (e != UINT32_MAX) {
                const uint64_t *q = D2 + (size_t)e * W;
                for (size_t w = 0; w < W; w++) t[w] |= q[w];
            }
            const uint64_t *own = D1 + (size_t)v * W;
            for (size_t w = 0; w < W; w++) d[w] = own[w] | t[w];
        }
        free(t);
    }
#undef OWN
    /* Within one run: every later accessor X against the earlier ones in
     * this batch; across frames: every accessor Y of frame N+1 against every
     * other accessor X of frame N. */
    for (uint32_t r = r0; r < r1 && !R->d->stop; r++) {
        uint32_t lo = R->rfirst[r] > b0 ? R->rfirst[r] : b0;
        uint32_t hi = R->rfirst[r + 1] < b1 ? R->rfirst[r + 1] : b1;
        for (uint32_t sx = R->rfirst[r]; sx < R->rfirst[r + 1] && !R->d->stop; sx++) {
            const slot *X = &R->slots[sx];
            const uint64_t *d = D1 + (size_t)X->node * W;
            uint32_t top = sx < hi ? sx : hi;
            for (uint32_t w0 = lo; w0 < top;) {
                /* Slots [w0, end) share one word. */
                uint32_t rel = w0 - b0, word = rel >> 6;
                uint32_t end = (rel | 63) + 1 + b0;
                if (end > top) end = top;
                uint64_t m = (end - w0 == 64 ? ~0ull : ((1ull << (end - w0)) - 1)) << (rel & 63);
                uint64_t c = m & ~d[word] & (X->write ? ~0ull : wmask[word]);
                while (c && !R->d->stop) {
                    uint32_t sy = b0 + word * 64 + (uint32_t)__builtin_ctzll(c);
                    c &= c - 1;
                    report_race(R, X, &R->slots[sy]);
                }
                w0 = end;
            }
        }
        if (!cross) continue;
        for (uint32_t sy = R->rfirst[r]; sy < R->rfirst[r + 1]; sy++) {
            const slot *Y = &R->slots[sy];
            const uint64_t *d = D2 + (size_t)Y->node * W;
            for (uint32_t w0 = lo; w0 < hi;) {
                uint32_t rel = w0 - b0, word = rel >> 6;
                uint32_t end = ((w0 - b0) | 63) + 1 + b0;
                if (end > hi) end = hi;
                uint64_t m = (end - w0 == 64 ? ~0ull : ((1ull << (end - w0)) - 1)) << (rel & 63);
                if (sy >= w0 && sy < end) m &= ~(1ull << ((sy - b0) & 63));
                uint64_t c = m & ~d[word] & (Y->write ? ~0ull : wmask[word]);
                while (c && R->ncross < crosscap) {
                    uint32_t sx = b0 + word * 64 + (uint32_t)__builtin_ctzll(c);
                    c &= c - 1;
                    add_cross(R, sx, sy);
                }
                /* Past the cap only the count is reported: a word at a
                 * time, not a pair at a time (a chain has n^2/2 of them). */
                R->crossmore += (size_t)__builtin_popcountll(c);
                w0 = end;
            }
        }
    }
    free(wmask);
}

static int cross_cmp(const void *a, const void *b)
{
    const finding *x = a, *y = b;
    if (x->x != y->x) return x->x < y->x ? -1 : 1;
    return x->y < y->y ? -1 : x->y > y->y;
}

static void check_graph(const ir_program *p, const ir_graph *g, int pipeline, dg_diag *d)
{
    rctx R;
    memset(&R, 0, sizeof R);
    R.p = p;
    R.g = g;
    R.d = d;
    uint32_t n = g->nnodes;
    for (uint32_t v = 0; v < n; v++) R.nslots += g->nodes[v].nacc;
    if (R.nslots == 0) return;
    R.slots = dg_xmalloc(R.nslots * sizeof *R.slots);
    uint32_t k = 0;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) {
            const ir_access *ac = &g->nodes[v].acc[a];
            R.slots[k].node = v;
            R.slots[k].res = ac->res;
            R.slots[k].write = ac->write;
            R.slots[k].pos = ac->pos;
            k++;
        }
    qsort(R.slots, R.nslots, sizeof *R.slots, slot_cmp);
    size_t nres = p->nresources;
    R.rfirst = dg_xcalloc(nres + 2, sizeof *R.rfirst);
    for (uint32_t s = 0; s < R.nslots; s++) R.rfirst[R.slots[s].res + 1]++;
    for (size_t r = 0; r < nres; r++) R.rfirst[r + 1] += R.rfirst[r];
    R.nfirst = dg_xcalloc(n + 2, sizeof *R.nfirst);
    R.nslot = dg_xmalloc(R.nslots * sizeof *R.nslot);
    for (uint32_t s = 0; s < R.nslots; s++) R.nfirst[R.slots[s].node + 1]++;
    for (uint32_t v = 0; v < n; v++) R.nfirst[v + 1] += R.nfirst[v];
    {
        uint32_t *fill = dg_xmalloc((n + 1) * sizeof *fill);
        memcpy(fill, R.nfirst, (n + 1) * sizeof *fill);
        for (uint32_t s = 0; s < R.nslots; s++) R.nslot[fill[R.slots[s].node]++] = s;
        free(fill);
    }
    /* Words per node: every slot at once when the budget allows. */
    size_t need = ((size_t)R.nslots + 63) / 64;
    size_t fit = BUDGET_BYTES / (2 * sizeof(uint64_t) * (n ? n : 1));
    size_t W = need < fit ? need : fit ? fit : 1;
    uint64_t *D1 = dg_xmalloc((size_t)n * W * sizeof *D1 + 8);
    uint64_t *D2 = pipeline ? dg_xmalloc((size_t)n * W * sizeof *D2 + 8) : NULL;
    size_t crosscap = d->max_errors > 0 ? (size_t)d->max_errors : (size_t)1 << 20;
    /* Batches of whole resources; a resource larger than a batch alone. */
    uint32_t r = 0;
    while (r < nres && !d->stop) {
        if (R.rfirst[r] == R.rfirst[r + 1]) {
            r++;
            continue;
        }
        uint32_t b0 = R.rfirst[r], r1 = r;
        while (r1 < nres && R.rfirst[r1 + 1] - b0 <= W * 64) r1++;
        if (r1 == r) {
            /* Too large: slices of it, each checked against all of it. */
            for (uint32_t s0 = R.rfirst[r]; s0 < R.rfirst[r + 1] && !d->stop; s0 += (uint32_t)(W * 64)) {
                uint32_t s1 = s0 + (uint32_t)(W * 64);
                if (s1 > R.rfirst[r + 1]) s1 = R.rfirst[r + 1];
                batch(&R, s0, s1, r, r + 1, D1, D2, W, pipeline, crosscap);
            }
            r++;
            continue;
        }
        batch(&R, b0, R.rfirst[r1], r, r1, D1, D2, W, pipeline, crosscap);
        r = r1;
    }
    if (pipeline && !d->stop) {
        if (R.ncross) qsort(R.cross, R.ncross, sizeof *R.cross, cross_cmp);
        for (size_t i = 0; i < R.ncross; i++)
            report_cross(&R, &R.slots[R.cross[i].x], &R.slots[R.cross[i].y]);
        if (R.crossmore) {
            src_pos none = {0};
            dg_note(d, none, "%zu more pipeline races in graph '%s' not shown", R.crossmore,
                    g->name);
        }
    }
    free(D1);
    free(D2);
    free(R.cross);
    free(R.slots);
    free(R.rfirst);
    free(R.nfirst);
    free(R.nslot);
}

void dg_check_races(const ir_program *p, int pipeline_warnings, dg_diag *d)
{
    for (size_t i = 0; i < p->ngraphs && !d->stop; i++)
        check_graph(p, &p->graphs[i], pipeline_warnings, d);
}
