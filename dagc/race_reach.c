/*
 * race_reach.c - one ordering question at a time: has frame N's node A
 * completed whenever node B (of frame N, or of frame N+1 in a pipeline)
 * has? race.c asks a few of these per accessor of a resource instead of
 * computing every node's whole set, which is what keeps a chain of writers
 * linear.
 *
 * The two-frame graph (race.c's comment): frame N's v joins its preds
 * (AND: any; OR: all, and nothing when it has a `prev` input, which orders
 * nothing within a run), and always waits for its enclosing run node's
 * entry; frame N+1's v joins its preds (of N+1) and its `prev` inputs (of
 * N) the same way, and always waits for frame N's v and for its enclosing
 * entry (of N+1). "A in D(B)" is then: B is A, or B's join holds it, or one
 * of B's always-inputs does. Ids are topological: frame N by index, then
 * frame N+1 by index.
 *
 * Each question is answered by whichever of two bounded searches finishes
 * first, with the bound growing fourfold: backward from B over the inputs
 * that can hold A (then evaluated in topological order), or forward from A
 * over the nodes that can reach B (counting an OR node's inputs). A
 * writer's successor in a chain is one step backward; a join of many
 * readers is one step forward from each.
 */
#include "race.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct rreach {
    const ir_graph *g;
    uint32_t n;
    uint32_t *ee;                /* enclosing run node's entry, or UINT32_MAX */
    uint32_t *m2;                /* the highest frame-N index that D2(v) can hold */
    uint32_t *sfirst, *slist;    /* successors (mirroring every pred entry) */
    uint32_t *vfirst, *vlist;    /* nodes that name v in `prev` (each entry) */
    uint32_t *cfirst, *clist;    /* nodes whose enclosing entry is v */
    uint32_t *stamp, *cstamp;    /* per id: in this search / counter valid */
    uint32_t *cnt;               /* per id: OR inputs seen (forward) */
    uint8_t *val;                /* per id: holds A (backward) */
    uint32_t cur;
    uint32_t *buf;
    size_t bufcap;
};

static uint32_t *csr(uint32_t n, const uint32_t *count, uint32_t **list, size_t total)
{
    uint32_t *first = dg_xcalloc((size_t)n + 1, sizeof *first);
    for (uint32_t v = 0; v < n; v++) first[v + 1] = first[v] + count[v];
    *list = dg_xmalloc((total ? total : 1) * sizeof **list);
    return first;
}

rreach *dg_reach_new(const ir_graph *g)
{
    rreach *q = dg_xcalloc(1, sizeof *q);
    uint32_t n = g->nnodes;
    q->g = g;
    q->n = n;
    q->ee = dg_xmalloc(((size_t)n + 1) * sizeof *q->ee);
    q->m2 = dg_xmalloc(((size_t)n + 1) * sizeof *q->m2);
    uint32_t *cs = dg_xcalloc((size_t)n + 1, sizeof *cs), *cv = dg_xcalloc((size_t)n + 1, sizeof *cv),
             *cc = dg_xcalloc((size_t)n + 1, sizeof *cc);
    size_t ns = 0, nv = 0, nc = 0;
    for (uint32_t v = 0; v < n; v++) {
        const ir_node *x = &g->nodes[v];
        uint32_t s = x->sub;
        if (s != UINT32_MAX && g->subs[s].entry == v) s = g->subs[s].parent;
        q->ee[v] = s == UINT32_MAX ? UINT32_MAX : g->subs[s].entry;
        for (uint32_t k = 0; k < x->npred; k++) cs[x->pred[k]]++, ns++;
        for (uint32_t k = 0; k < x->nprev; k++) cv[x->prev[k]]++, nv++;
        if (q->ee[v] != UINT32_MAX) cc[q->ee[v]]++, nc++;
    }
    q->sfirst = csr(n, cs, &q->slist, ns);
    q->vfirst = csr(n, cv, &q->vlist, nv);
    q->cfirst = csr(n, cc, &q->clist, nc);
    memcpy(cs, q->sfirst, (size_t)n * sizeof *cs);
    memcpy(cv, q->vfirst, (size_t)n * sizeof *cv);
    memcpy(cc, q->cfirst, (size_t)n * sizeof *cc);
    for (uint32_t v = 0; v < n; v++) {
        const ir_node *x = &g->nodes[v];
        uint32_t m = v;
        for (uint32_t k = 0; k < x->npred; k++) {
            q->slist[cs[x->pred[k]]++] = v;
            if (q->m2[x->pred[k]] > m) m = q->m2[x->pred[k]];
        }
        for (uint32_t k = 0; k < x->nprev; k++) {
            q->vlist[cv[x->prev[k]]++] = v;
            if (x->prev[k] > m) m = x->prev[k];
        }
        uint32_t e = q->ee[v];
        if (e != UINT32_MAX) {
            q->clist[cc[e]++] = v;
            /* An entry after its nodes would be a flattening bug; the
             * bound stays safe (only a pruning) either way. */
            m = e < v ? (q->m2[e] > m ? q->m2[e] : m) : n - 1;
        }
        q->m2[v] = m;
    }
    free(cs);
    free(cv);
    free(cc);
    size_t ids = (size_t)2 * n + 1;
    q->stamp = dg_xcalloc(ids, sizeof *q->stamp);
    q->cstamp = dg_xcalloc(ids, sizeof *q->cstamp);
    q->cnt = dg_xcalloc(ids, sizeof *q->cnt);
    q->val = dg_xcalloc(ids, 1);
    return q;
}

void dg_reach_free(rreach *q)
{
    if (!q) return;
    free(q->ee);
    free(q->m2);
    free(q->sfirst);
    free(q->slist);
    free(q->vfirst);
    free(q->vlist);
    free(q->cfirst);
    free(q->clist);
    free(q->stamp);
    free(q->cstamp);
    free(q->cnt);
    free(q->val);
    free(q->buf);
    free(q);
}

static uint32_t next_stamp(rreach *q)
{
    if (++q->cur == 0) {
        size_t ids = (size_t)2 * q->n + 1;
        memset(q->stamp, 0, ids * sizeof *q->stamp);
        memset(q->cstamp, 0, ids * sizeof *q->cstamp);
        q->cur = 1;
    }
    return q->cur;
}

static void push(rreach *q, size_t *len, uint32_t id)
{
    if (*len == q->bufcap) {
        q->bufcap = q->bufcap ? 2 * q->bufcap : 256;
        q->buf = dg_xrealloc(q->buf, q->bufcap * sizeof *q->buf);
    }
    q->buf[(*len)++] = id;
}

/* Whether id W may hold frame N's node A (ia), and may lead to B. */
static int may_hold(const rreach *q, uint32_t w, uint32_t ia)
{
    return w < q->n ? w >= ia : q->m2[w - q->n] >= ia;
}

static int may_reach(const rreach *q, uint32_t w, uint32_t b)
{
    uint32_t n = q->n;
    if (b < n) return w <= b;
    if (w < n) return w <= q->m2[b - n];
    return w <= b;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int held(const rreach *q, uint32_t id, uint32_t s)
{
    return q->stamp[id] == s && q->val[id];
}

/* Backward: 1, 0, or -1 past LIMIT steps. */
static int backward(rreach *q, uint32_t a, uint32_t b, int64_t limit, int64_t *spent)
{
    const ir_graph *g = q->g;
    uint32_t n = q->n, s = next_stamp(q);
    size_t len = 0;
    int64_t steps = 0;
    q->stamp[b] = s;
    push(q, &len, b);
    for (size_t i = 0; i < len; i++) {
        uint32_t w = q->buf[i], v = w < n ? w : w - n;
        const ir_node *x = &g->nodes[v];
        uint32_t in[3], nin = 0;
        steps += 1 + x->npred + (w < n ? 0 : x->nprev);
        if (steps > limit) {
            *spent += steps;
            return -1;
        }
        if (w < n) {
            if (q->ee[v] != UINT32_MAX) in[nin++] = q->ee[v];
            if (x->join == IR_JOIN_OR && x->nprev) x = NULL; /* its join holds nothing */
        } else {
            in[nin++] = v;
            if (q->ee[v] != UINT32_MAX) in[nin++] = q->ee[v] + n;
        }
        for (uint32_t k = 0; x && k < x->npred; k++) {
            uint32_t p = x->pred[k] + (w < n ? 0 : n);
            if (q->stamp[p] != s && may_hold(q, p, a)) q->stamp[p] = s, push(q, &len, p);
        }
        for (uint32_t k = 0; x && w >= n && k < x->nprev; k++) {
            uint32_t p = x->prev[k];
            if (q->stamp[p] != s && may_hold(q, p, a)) q->stamp[p] = s, push(q, &len, p);
        }
        for (uint32_t k = 0; k < nin; k++)
            if (q->stamp[in[k]] != s && may_hold(q, in[k], a))
                q->stamp[in[k]] = s, push(q, &len, in[k]);
    }
    qsort(q->buf, len, sizeof *q->buf, cmp_u32);
    for (size_t i = 0; i < len; i++) q->val[q->buf[i]] = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t w = q->buf[i], v = w < n ? w : w - n, off = w < n ? 0 : n;
        const ir_node *x = &g->nodes[v];
        int h = w == a;
        if (!h && w >= n) h = held(q, v, s) || (q->ee[v] != UINT32_MAX && held(q, q->ee[v] + n, s));
        if (!h && w < n) h = q->ee[v] != UINT32_MAX && held(q, q->ee[v], s);
        if (!h && x->join == IR_JOIN_AND) {
            for (uint32_t k = 0; k < x->npred && !h; k++) h = held(q, x->pred[k] + off, s);
            for (uint32_t k = 0; w >= n && k < x->nprev && !h; k++) h = held(q, x->prev[k], s);
        } else if (!h && (x->npred || (w >= n && x->nprev)) && (w >= n || !x->nprev)) {
            h = 1;
            for (uint32_t k = 0; k < x->npred && h; k++) h = held(q, x->pred[k] + off, s);
            for (uint32_t k = 0; w >= n && k < x->nprev && h; k++) h = held(q, x->prev[k], s);
        }
        q->val[w] = (uint8_t)h;
    }
    *spent += steps + (int64_t)len;
    return q->val[b];
}

/* Forward: 1, 0, or -1 past LIMIT steps. */
static int forward(rreach *q, uint32_t a, uint32_t b, int64_t limit, int64_t *spent)
{
    const ir_graph *g = q->g;
    uint32_t n = q->n, s = next_stamp(q);
    size_t len = 0;
    int64_t steps = 0;
    q->stamp[a] = s;
    push(q, &len, a);
    /* ENTER: W holds A now; COUNT: one more of W's OR inputs does. */
#define ENTER(w)                                                                     \
    do {                                                                             \
        uint32_t w_ = (w);                                                           \
        if (q->stamp[w_] != s && may_reach(q, w_, b)) {                              \
            if (w_ == b) {                                                           \
                *spent += steps;                                                     \
                return 1;                                                            \
            }                                                                        \
            q->stamp[w_] = s;                                                        \
            push(q, &len, w_);                                                       \
        }                                                                            \
    } while (0)
#define COUNT(w, need)                                                               \
    do {                                                                             \
        uint32_t c_ = (w);                                                           \
        if (q->stamp[c_] != s && may_reach(q, c_, b)) {                              \
            if (q->cstamp[c_] != s) q->cstamp[c_] = s, q->cnt[c_] = 0;               \
            if (++q->cnt[c_] == (need)) ENTER(c_);                                   \
        }                                                                            \
    } while (0)
    if (a == b) return 1;
    for (size_t i = 0; i < len; i++) {
        uint32_t w = q->buf[i], v = w < n ? w : w - n, off = w < n ? 0 : n;
        steps += 1 + (q->sfirst[v + 1] - q->sfirst[v]) + (q->cfirst[v + 1] - q->cfirst[v]) +
                 (w < n ? 1 + (q->vfirst[v + 1] - q->vfirst[v]) : 0);
        if (steps > limit) {
            *spent += steps;
            return -1;
        }
        for (uint32_t k = q->sfirst[v]; k < q->sfirst[v + 1]; k++) {
            uint32_t t = q->slist[k];
            const ir_node *y = &g->nodes[t];
            if (y->join == IR_JOIN_AND) ENTER(t + off);
            else if (w >= n) COUNT(t + n, y->npred + y->nprev);
            else if (!y->nprev) COUNT(t, y->npred);
        }
        for (uint32_t k = q->cfirst[v]; k < q->cfirst[v + 1]; k++) ENTER(q->clist[k] + off);
        if (w < n) {
            ENTER(v + n);
            for (uint32_t k = q->vfirst[v]; k < q->vfirst[v + 1]; k++) {
                uint32_t t = q->vlist[k];
                const ir_node *y = &g->nodes[t];
                if (y->join == IR_JOIN_AND) ENTER(t + n);
                else COUNT(t + n, y->npred + y->nprev);
            }
        }
    }
#undef ENTER
#undef COUNT
    *spent += steps;
    return 0;
}

int dg_reach(rreach *q, uint32_t a, uint32_t b, int64_t *budget)
{
    if (a == b || b == a + q->n) return 1;
    if (!may_reach(q, a, b)) return 0;
    for (int64_t limit = 16;; limit *= 4) {
        int64_t spent = 0;
        int r = backward(q, a, b, limit, &spent);
        if (r < 0) r = forward(q, a, b, limit, &spent);
        *budget -= spent;
        if (r >= 0) return r;
        if (*budget < 0) return -1;
    }
}
