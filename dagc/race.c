/*
 * race.c - data races found at build time (docs/language.md, "Resources and
 * races").
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
 * Scale. Resource by resource, in resource order. First a handful of
 * single questions per accessor (race.h, race_reach.c: "is A ordered before
 * B?"): a resource without a race within a run is proven so by checking
 * each accessor against the writer before it and each writer against the
 * readers since that writer (clean_in_frame), and its cross-frame pairs are
 * then counted, not enumerated (cross_clean): O(accessors * log) questions,
 * each a bounded local search, so a chain of writers, a layered graph and a
 * fan-out cost time linear in nodes plus accessors. A resource with a race
 * within a run, or whose questions would cost more than its bitsets, takes
 * the bitsets below: sets over "slots", one slot per (resource, accessing
 * task) in topological order; one pass over the graph computes every
 * node's set; a pair (X, Y), Y earlier, is a race when Y's bit is missing
 * from before(X), and at least one writes. Set operations run a word (64
 * slots) at a time: O((nodes + edges) * slots / 64) time and
 * nodes * min(slots, budget) / 8 bytes, in slices when over the memory
 * budget. Either way only reported races cost one each; past the cap the
 * cross-frame ones are counted (exactly), and a summary names each
 * resource's count and first pair. docs/bench-compiler.md has the figures.
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
 *
 * (v2.2) A per-frame resource has a copy per frame: its accesses are
 * checked within a run only, and a `reads prev R` (the previous frame's
 * copy) not here at all but by race_prev.c against frame N's writers.
 */
#include "sema_int.h"
#include "race.h"

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
    size_t cap;          /* cross pairs shown (-fmax-errors) */
    uint32_t fx, fy;     /* the current resource's first cross pair (bitsets) */
} rctx;

static int slot_cmp(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->res != y->res) return x->res < y->res ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
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
    dg_race_hint(R->p, R->g, R->d, x->node, y->node, 0);
}

static void report_cross(const rctx *R, const slot *x, const slot *y)
{
    dg_buf b = {0};
    message(&b, R, x, y, "of the next frame may run at the same time");
    dg_warning(R->d, x->pos, "%s [-Wpipeline-race]", b.p);
    dg_buf_free(&b);
    note_other(R, y);
    dg_race_hint(R->p, R->g, R->d, x->node, y->node, 1);
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

/* The sets' joins, shared with race_prev.c (race.h). Frame N's node v:
 * its inputs' sets joined (AND: any; OR: all, and nothing with a `prev`
 * input) and its enclosing entry's, into D1[v] (zero before); the caller
 * adds v's own bits after. */
void dg_race_join_frame(const ir_graph *g, uint32_t v, uint64_t *D1, size_t W)
{
    const ir_node *x = &g->nodes[v];
    uint64_t *d = D1 + (size_t)v * W;
    if (x->npred && x->join == IR_JOIN_AND) {
        for (uint32_t k = 0; k < x->npred; k++) {
            const uint64_t *q = D1 + (size_t)x->pred[k] * W;
            for (size_t w = 0; w < W; w++) d[w] |= q[w];
        }
    } else if (x->npred && x->nprev == 0) {
        /* OR: what every input guarantees; with a `prev` input, nothing. */
        memcpy(d, D1 + (size_t)x->pred[0] * W, W * sizeof *d);
        for (uint32_t k = 1; k < x->npred; k++) {
            const uint64_t *q = D1 + (size_t)x->pred[k] * W;
            for (size_t w = 0; w < W; w++) d[w] &= q[w];
        }
    }
    uint32_t e = dg_race_enclosing_entry(g, v);
    if (e != UINT32_MAX) {
        const uint64_t *q = D1 + (size_t)e * W;
        for (size_t w = 0; w < W; w++) d[w] |= q[w];
    }
}

/* Frame N+1's sets from frame N's (D1, complete): each node joins its
 * preds (of N+1) and its `prev` inputs (of N), its enclosing entry (of
 * N+1), and frame N's same node with what that waited for. */
void dg_race_join_next(const ir_graph *g, const uint64_t *D1, uint64_t *D2, size_t W)
{
    uint64_t *t = dg_xmalloc(W * sizeof *t);
    for (uint32_t v = 0; v < g->nnodes; v++) {
        const ir_node *x = &g->nodes[v];
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
        uint32_t e = dg_race_enclosing_entry(g, v);
        if (e != UINT32_MAX) {
            const uint64_t *q = D2 + (size_t)e * W;
            for (size_t w = 0; w < W; w++) t[w] |= q[w];
        }
        uint64_t *d = D2 + (size_t)v * W;
        const uint64_t *own = D1 + (size_t)v * W;
        for (size_t w = 0; w < W; w++) d[w] = own[w] | t[w];
    }
    free(t);
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
        uint64_t *d = D1 + (size_t)v * W;
        dg_race_join_frame(g, v, D1, W);
        OWN(v, d);
    }
    if (cross) dg_race_join_next(g, D1, D2, W);
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
                if (c && (R->fy == UINT32_MAX || sy < R->fy ||
                          (sy == R->fy && b0 + word * 64 + (uint32_t)__builtin_ctzll(c) < R->fx))) {
                    R->fy = sy;
                    R->fx = b0 + word * 64 + (uint32_t)__builtin_ctzll(c);
                }
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

/* ---- One resource without the bitsets (race.h's queries). */

/* Whether resource r (slots [lo, hi)) has no race within a run: 1, 0, or
 * -1 when the queries ran out of budget. Writers must form a chain (each
 * ordered after the writer before it, directly or through the readers
 * between them) and each reader must come after the writer before it and
 * before the writer after it; then every writer is ordered with every
 * other accessor (transitivity), and a failed check is itself a race. */
static int clean_in_frame(const rctx *R, rreach *q, uint32_t lo, uint32_t hi, int64_t *budget)
{
    uint32_t lastw = UINT32_MAX, from = lo; /* readers since the last writer: [from, s) */
    for (uint32_t s = lo; s < hi; s++) {
        uint32_t x = R->slots[s].node;
        int ok = 1;
        if (!R->slots[s].write) {
            if (lastw != UINT32_MAX) ok = dg_reach(q, R->slots[lastw].node, x, budget);
            if (ok <= 0) return ok;
            continue;
        }
        if (from == s && lastw != UINT32_MAX) ok = dg_reach(q, R->slots[lastw].node, x, budget);
        for (uint32_t t = from; t < s && ok > 0; t++) ok = dg_reach(q, R->slots[t].node, x, budget);
        if (ok <= 0) return ok;
        lastw = s;
        from = s + 1;
    }
    return 1;
}

typedef struct rpairs {
    uint64_t count;      /* every cross pair of the resource */
    uint32_t fx, fy;     /* its first one (slots), frame N+1's first */
} rpairs;

/* Across frames for a resource without a race within a run (slots [lo, hi),
 * k of them): with its writers w_1 < ... < w_m a chain and each reader
 * between two consecutive writers, D2(Y) holds a prefix w_1..w_mu(Y) of the
 * writers, every reader before w_mu and some of those between w_mu and
 * w_mu+1, and nothing later (D2 sets are closed downward). mu grows along
 * the chain, so the writers' mu take one pointer walk, a reader's a binary
 * search between its writers' mu; whether a reader between w_mu and
 * w_mu+1 is in D2 of the writers whose mu it is grows along them too (a
 * binary search per reader). The pairs then follow by counting: frame N+1's
 * reader Y races with w_mu(Y)+1..w_m, its writer Y with every accessor
 * from w_mu(Y)+1 on and the readers before it that D2(Y) misses. The first
 * CAP - ncross pairs, in the order of the bitset path (Y, then X), are
 * added to R->cross. Returns 0, or -1 when the queries ran out of budget. */
static int cross_clean(rctx *R, rreach *q, uint32_t lo, uint32_t hi, int64_t *budget, rpairs *out)
{
    uint32_t n = R->g->nnodes, k = hi - lo, m = 0;
    uint32_t *wpos = dg_xmalloc(((size_t)k + 2) * sizeof *wpos); /* 1-based: writer j's position */
    uint32_t *mu = dg_xmalloc(((size_t)k + 1) * sizeof *mu);     /* per position */
    uint32_t *blk = dg_xmalloc(((size_t)k + 1) * sizeof *blk);   /* per position: writers before */
    uint32_t *thr = dg_xmalloc(((size_t)k + 1) * sizeof *thr);   /* readers: first writer holding it */
    uint32_t *ge = dg_xcalloc((size_t)k + 2, sizeof *ge);
    int rc = 0;
#define NODE(pos) (R->slots[lo + (pos)].node)
#define ASK(ok, a, b)                                                                \
    do {                                                                             \
        (ok) = dg_reach(q, (a), (b), budget);                                        \
        if ((ok) < 0) {                                                              \
            rc = -1;                                                                 \
            goto done;                                                               \
        }                                                                            \
    } while (0)
    int ok;
    for (uint32_t p = 0; p < k; p++) {
        blk[p] = m;
        if (R->slots[lo + p].write) wpos[++m] = p;
    }
    memset(out, 0, sizeof *out);
    out->fx = out->fy = UINT32_MAX;
    if (m == 0) goto done;
    /* Writers: mu(w_j) >= max(mu(w_j-1), j). */
    for (uint32_t j = 1, cur = 1; j <= m; j++) {
        if (cur < j) cur = j;
        while (cur < m) {
            ASK(ok, NODE(wpos[cur + 1]), NODE(wpos[j]) + n);
            if (!ok) break;
            cur++;
        }
        mu[wpos[j]] = cur;
    }
    /* Readers: between mu of the writers around them. */
    for (uint32_t p = 0; p < k; p++) {
        if (R->slots[lo + p].write) continue;
        uint32_t b = blk[p], l = b ? mu[wpos[b]] : 0, h = b < m ? mu[wpos[b + 1]] : m;
        while (l < h) {
            uint32_t mid = l + (h - l + 1) / 2;
            ASK(ok, NODE(wpos[mid]), NODE(p) + n);
            if (ok) l = mid;
            else h = mid - 1;
        }
        mu[p] = l;
    }
    /* Readers between w_u and w_u+1 against the writers whose mu is u (a
     * run of the chain, [ja, jb]): the first one whose D2 holds them. */
    for (uint32_t ja = 1; ja <= m;) {
        uint32_t u = mu[wpos[ja]], jb = ja;
        while (jb < m && mu[wpos[jb + 1]] == u) jb++;
        uint32_t r0 = wpos[u] + 1, r1 = u < m ? wpos[u + 1] : k;
        for (uint32_t p = r0; p < r1; p++) {
            uint32_t l = ja, h = jb + 1;
            while (l < h) {
                uint32_t mid = l + (h - l) / 2;
                ASK(ok, NODE(p), NODE(wpos[mid]) + n);
                if (ok) h = mid;
                else l = mid + 1;
            }
            thr[p] = l;
            if (l <= jb) ge[l]++; /* jb + 1: none of them (the next run's first writer) */
        }
        ja = jb + 1;
    }
    /* Count, and list the first pairs. */
    size_t want = R->cap > R->ncross ? R->cap - R->ncross : 0;
    uint32_t seen_u = UINT32_MAX, below = 0; /* readers of block u with thr <= j so far */
    for (uint32_t p = 0; p < k; p++) {
        uint32_t u = mu[p];
        uint64_t c;
        if (R->slots[lo + p].write) {
            uint32_t j = blk[p] + 1, r0 = wpos[u] + 1, r1 = u < m ? wpos[u + 1] : k;
            if (seen_u != u) seen_u = u, below = 0;
            below += ge[j];
            c = (uint64_t)(r1 - r0) - below + (u < m ? k - wpos[u + 1] : 0);
            for (uint32_t x = r0; x < k && (want || out->fy == UINT32_MAX); x++) {
                if (x < r1 && thr[x] <= j) continue;
                if (x == r1 && u == m) break;
                if (out->fy == UINT32_MAX) out->fy = lo + p, out->fx = lo + x;
                if (want) add_cross(R, lo + x, lo + p), want--;
            }
        } else {
            c = m - u;
            for (uint32_t j = u + 1; j <= m && (want || out->fy == UINT32_MAX); j++) {
                if (out->fy == UINT32_MAX) out->fy = lo + p, out->fx = lo + wpos[j];
                if (want) add_cross(R, lo + wpos[j], lo + p), want--;
            }
        }
        out->count += c;
    }
#undef ASK
#undef NODE
done:
    free(wpos);
    free(mu);
    free(blk);
    free(thr);
    free(ge);
    return rc;
}

/* ---- The bitsets, for a resource the queries cannot settle cheaply. */

typedef struct bitsets {
    uint64_t *D1, *D2;
    size_t W;            /* words per node allocated */
} bitsets;

/* Resource r by the bitset pass (in batches when it exceeds the budget);
 * its pairs across frames when CROSS (PIPELINE: D2 is needed at all). */
static void by_bitsets(rctx *R, bitsets *B, uint32_t r, int pipeline, int cross, rpairs *out)
{
    uint32_t n = R->g->nnodes, lo = R->rfirst[r], hi = R->rfirst[r + 1];
    size_t need = ((size_t)(hi - lo) + 63) / 64;
    size_t fit = BUDGET_BYTES / (2 * sizeof(uint64_t) * (n ? n : 1));
    size_t W = need < fit ? need : fit ? fit : 1;
    if (W > B->W) {
        free(B->D1);
        free(B->D2);
        B->D1 = dg_xmalloc((size_t)n * W * sizeof *B->D1 + 8);
        B->D2 = pipeline ? dg_xmalloc((size_t)n * W * sizeof *B->D2 + 8) : NULL;
        B->W = W;
    }
    size_t before = R->ncross + R->crossmore;
    R->fx = R->fy = UINT32_MAX;
    /* A resource larger than a batch: slices of it, each checked against
     * all of it. */
    for (uint32_t s0 = lo; s0 < hi && !R->d->stop; s0 += (uint32_t)(W * 64)) {
        uint32_t s1 = s0 + (uint32_t)(W * 64);
        if (s1 > hi) s1 = hi;
        batch(R, s0, s1, r, r + 1, B->D1, B->D2, W, cross, R->cap);
    }
    out->count = R->ncross + R->crossmore - before;
    out->fx = R->fx;
    out->fy = R->fy;
}

static void check_graph(const ir_program *p, const ir_graph *g, int pipeline, dg_diag *d)
{
    rctx R;
    memset(&R, 0, sizeof R);
    R.p = p;
    R.g = g;
    R.d = d;
    uint32_t n = g->nnodes;
    /* (v2.2) `reads prev R` reads another frame's copy: it takes no part
     * here (race_prev.c checks it). */
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) R.nslots += !g->nodes[v].acc[a].prev;
    if (R.nslots == 0) return;
    R.slots = dg_xmalloc(R.nslots * sizeof *R.slots);
    uint32_t k = 0;
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) {
            const ir_access *ac = &g->nodes[v].acc[a];
            if (ac->prev) continue;
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
    R.cap = d->max_errors > 0 ? (size_t)d->max_errors : (size_t)1 << 20;
    rreach *q = NULL;
    bitsets B = {0};
    rpairs *sum = NULL;  /* per resource with cross pairs, for the summary */
    uint32_t *sumres = NULL;
    size_t nsum = 0;
    /* Resource by resource, in order: the diagnostics come out as one
     * bitset pass over every slot would print them. */
    for (uint32_t r = 0; r < nres && !d->stop; r++) {
        uint32_t lo = R.rfirst[r], hi = R.rfirst[r + 1], nw = 0;
        for (uint32_t s = lo; s < hi; s++) nw += R.slots[s].write;
        if (hi - lo < 2 || nw == 0) continue; /* nothing to race with */
        if (!q) q = dg_reach_new(g);
        /* The queries may spend what the bitsets would on this resource;
         * past that, the bitsets (at most twice the old cost). */
        int64_t budget = ((int64_t)n + g->nedges + g->nprev + 64) * (int64_t)((hi - lo + 63) / 64);
#ifdef DAGC_RACE_QUERY_STEPS
        budget = DAGC_RACE_QUERY_STEPS; /* tests: both paths, and giving up halfway */
#endif
        rpairs rp = {0, UINT32_MAX, UINT32_MAX};
        size_t ncross0 = R.ncross;
        /* (v2.2) Frames touch their own copies of a per-frame resource:
         * no pair across frames (but the usual ones within a frame). */
        int cross = pipeline && !p->resources[r].per_frame;
        int clean = clean_in_frame(&R, q, lo, hi, &budget);
        if (clean > 0 && cross && cross_clean(&R, q, lo, hi, &budget, &rp) < 0) {
            R.ncross = ncross0; /* undo what the queries listed */
            clean = -1;
        }
        if (clean <= 0) by_bitsets(&R, &B, r, pipeline, cross, &rp);
        else if (cross) R.crossmore += rp.count - (R.ncross - ncross0);
        if (cross && rp.count) {
            sum = dg_xrealloc(sum, (nsum + 1) * sizeof *sum);
            sumres = dg_xrealloc(sumres, (nsum + 1) * sizeof *sumres);
            sum[nsum] = rp;
            sumres[nsum++] = r;
        }
    }
    if (pipeline && !d->stop) {
        if (R.ncross) qsort(R.cross, R.ncross, sizeof *R.cross, cross_cmp);
        for (size_t i = 0; i < R.ncross; i++)
            report_cross(&R, &R.slots[R.cross[i].x], &R.slots[R.cross[i].y]);
        if (R.crossmore) {
            src_pos none = {0};
            dg_note(d, none, "%zu more pipeline races in graph '%s' not shown", R.crossmore,
                    g->name);
            /* Capped: what each resource has, so that the fix can go where
             * the pairs are (one snapshot often settles a resource). */
            for (size_t i = 0; i < nsum; i++)
                dg_note(d, none,
                        "%llu pipeline races on '%s', the first between '%s' and '%s' of the "
                        "next frame",
                        (unsigned long long)sum[i].count, p->resources[sumres[i]].name,
                        g->nodes[R.slots[sum[i].fx].node].name,
                        g->nodes[R.slots[sum[i].fy].node].name);
        }
    }
    dg_reach_free(q);
    free(sum);
    free(sumres);
    free(B.D1);
    free(B.D2);
    free(R.cross);
    free(R.slots);
    free(R.rfirst);
    free(R.nfirst);
    free(R.nslot);
}

void dg_check_races(const ir_program *p, int pipeline_warnings, dg_diag *d)
{
    for (size_t i = 0; i < p->ngraphs && !d->stop; i++) {
        check_graph(p, &p->graphs[i], pipeline_warnings, d);
        if (pipeline_warnings && !d->stop) dg_race_prev(p, &p->graphs[i], d);
    }
}
