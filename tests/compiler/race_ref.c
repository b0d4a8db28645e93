/*
 * race_ref.c - the brute-force reference for dagc's race check, from the
 * language contract only (docs/language.md, "Resources and races (v2)"
 * and "Frames in flight: `prev` (v2)").
 *
 * The model of one frame: a subgraph node is inlined (its graph's roots
 * wait for the node's `after`, the node completes when every task of its
 * instance has); gates and run nodes run nothing, so they complete the
 * moment their condition holds; a task takes any positive time; `when` is
 * ignored (a task that may be skipped counts as possibly running: a skip is
 * a run of length ~0, which adds no overlap); `on main` is ignored too (two
 * unordered main-thread tasks run in either order: the contract's race is
 * about ordering). Outside a pipeline `prev X` holds at the start.
 *
 * Two frames of a pipeline: frame N+1's task X also waits for frame N's X,
 * its `prev Y` for frame N's Y; frame N's `prev` inputs hold at its start,
 * and frame N+1 may start at any time.
 *
 * Exploration. A state is (C, R): the tasks completed and those running.
 * Conditions only grow with C (an OR join that fired stays fired), so (i)
 * every task of R has its condition met by C, and (ii) from (C, {}) every
 * subset of ready(C) can be started at once. Hence the states with both
 * a and b running exist iff some reachable C has a, b in ready(C), and it
 * is enough to explore every reachable completed set (adding one ready task
 * at a time). ref_literal() explores the (C, R) pairs themselves, step by
 * step, and the tests check that both agree on small graphs.
 *
 * With conditions monotone, "a and b never overlap" is the same as "one of
 * them is ordered before the other in every run" (if a can be ready while
 * b is not complete and b ready while a is not, the union of the two
 * completed sets is reachable and has both ready), so overlapping pairs
 * are exactly the unordered pairs of the contract.
 */
#include <stdlib.h>
#include <string.h>

#include "race_model.h"

/* ---- inlining */

static int add_inst(rflat *f, int gi, int parent, int runnode, const char *prefix, int depth)
{
    if (depth > RM_MAX_GRAPHS || f->ninst >= (int)(sizeof f->insts / sizeof f->insts[0]))
        return -1; /* a graph that runs itself, or too many instances */
    int id = f->ninst++;
    rflat_inst *in = &f->insts[id];
    const rgraph *g = &f->p->g[gi];
    in->graph = gi;
    in->parent = parent;
    in->runnode = runnode;
    in->all = 0;
    for (int i = 0; i < g->n; i++) {
        const rnode *x = &g->nodes[i];
        in->flat[i] = in->child[i] = -1;
        if (x->kind == RN_TASK) {
            if (f->n >= RM_MAX_FLAT)
                return -1;
            int t = f->n++;
            snprintf(f->name[t], sizeof f->name[t], "%s%s", prefix, x->name);
            f->inst[t] = id;
            f->node[t] = i;
            in->flat[i] = t;
            f->insts[id].all |= 1ull << t;
        } else if (x->kind == RN_RUN) {
            char pre[96];
            snprintf(pre, sizeof pre, "%s%s.", prefix, x->name);
            int c = add_inst(f, x->sub, id, i, pre, depth + 1);
            if (c < 0)
                return -1;
            f->insts[id].child[i] = c;
            f->insts[id].all |= f->insts[c].all;
        }
    }
    return id;
}

int ref_flatten(const rprog *p, int gi, rflat *f)
{
    memset(f, 0, sizeof *f);
    f->p = p;
    return add_inst(f, gi, -1, -1, "", 0) < 0 ? -1 : 0;
}

/* ---- conditions. D: completed tasks; frame N at bits [0, n), N+1 at
 * [n, 2n). BASE: the frame being evaluated; PREVBASE: the frame its `prev`
 * names refer to, or -1 when they hold. */

static int ev(const rflat *f, int inst, const rx *e, uint64_t D, int base, int prevbase);

static int node_done(const rflat *f, int inst, int node, uint64_t D, int base, int prevbase)
{
    const rflat_inst *in = &f->insts[inst];
    const rnode *x = &f->p->g[in->graph].nodes[node];
    switch (x->kind) {
    case RN_TASK:
        return (int)((D >> (base + in->flat[node])) & 1);
    case RN_GATE:
        return x->e ? ev(f, inst, x->e, D, base, prevbase) : 1;
    default: {
        uint64_t all = f->insts[in->child[node]].all;
        return ((D >> base) & all) == all;
    }
    }
}

static int ev(const rflat *f, int inst, const rx *e, uint64_t D, int base, int prevbase)
{
    switch (e->op) {
    case RX_NAME:
        return node_done(f, inst, e->node, D, base, prevbase);
    case RX_PREV:
        return prevbase < 0 ? 1 : node_done(f, inst, e->node, D, prevbase, -1);
    case RX_OR:
        for (int i = 0; i < e->nk; i++)
            if (ev(f, inst, e->k[i], D, base, prevbase))
                return 1;
        return 0;
    default:
        for (int i = 0; i < e->nk; i++)
            if (!ev(f, inst, e->k[i], D, base, prevbase))
                return 0;
        return 1;
    }
}

/* Can flat task T (of frame FRAME) start once D has completed? */
static int can_start(const rflat *f, int t, int frame, uint64_t D)
{
    int base = frame * f->n, prevbase = frame ? 0 : -1;
    if (frame && !((D >> t) & 1))
        return 0; /* frame N+1's task waits for frame N's */
    int inst = f->inst[t];
    const rx *e = f->p->g[f->insts[inst].graph].nodes[f->node[t]].e;
    if (e && !ev(f, inst, e, D, base, prevbase))
        return 0;
    for (int i = inst; f->insts[i].parent >= 0; i = f->insts[i].parent) {
        const rflat_inst *in = &f->insts[i];
        const rx *re = f->p->g[f->insts[in->parent].graph].nodes[in->runnode].e;
        if (re && !ev(f, in->parent, re, D, base, prevbase))
            return 0;
    }
    return 1;
}

static uint64_t ready(const rflat *f, int frames, uint64_t D)
{
    uint64_t R = 0;
    for (int fr = 0; fr < frames; fr++)
        for (int t = 0; t < f->n; t++) {
            int b = fr * f->n + t;
            if (!((D >> b) & 1) && can_start(f, t, fr, D))
                R |= 1ull << b;
        }
    return R;
}

/* ---- a set of 64-bit states (open addressing; key 0 is stored aside) */

typedef struct sset {
    uint64_t *k;
    size_t cap, n;
    int has0;
} sset;

static int sset_add(sset *s, uint64_t key)
{
    if (key == 0) {
        int had = s->has0;
        s->has0 = 1;
        return !had;
    }
    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 1024;
        uint64_t *nk = calloc(ncap, sizeof *nk);
        for (size_t i = 0; i < s->cap; i++)
            if (s->k[i]) {
                size_t h = (size_t)((s->k[i] * 0x9e3779b97f4a7c15ull) >> 20) & (ncap - 1);
                while (nk[h]) h = (h + 1) & (ncap - 1);
                nk[h] = s->k[i];
            }
        free(s->k);
        s->k = nk;
        s->cap = ncap;
    }
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);
    while (s->k[h]) {
        if (s->k[h] == key)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->k[h] = key;
    s->n++;
    return 1;
}

typedef struct stack {
    uint64_t *v;
    size_t n, cap;
} stack;

static void push(stack *s, uint64_t v)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = v;
}

/* Every reachable completed set of FRAMES frames (1 or 2). */
static long explore(const rflat *f, int frames, uint64_t *conc, uint64_t *cross)
{
    uint64_t lowmask = f->n == 64 ? ~0ull : (1ull << f->n) - 1;
    sset seen = {0};
    stack st = {0};
    sset_add(&seen, 0);
    push(&st, 0);
    long states = 0;
    while (st.n) {
        uint64_t D = st.v[--st.n];
        uint64_t R = ready(f, frames, D);
        states++;
        for (int t = 0; t < f->n; t++) {
            if (!((R >> t) & 1))
                continue;
            if (frames == 1)
                conc[t] |= R & ~(1ull << t);
            else
                cross[t] |= (R >> f->n) & lowmask;
        }
        for (int b = 0; b < frames * f->n; b++)
            if (((R >> b) & 1) && sset_add(&seen, D | 1ull << b))
                push(&st, D | 1ull << b);
    }
    free(seen.k);
    free(st.v);
    return states;
}

int ref_literal(const rflat *f, uint64_t *conc, uint64_t *cross)
{
    if (f->n > 7)
        return -1;
    for (int frames = 1; frames <= 2; frames++) {
        sset seen = {0};
        stack st = {0};
        sset_add(&seen, 0);
        push(&st, 0);
        while (st.n) {
            uint64_t s = st.v[--st.n];
            uint64_t C = s & 0xffffffffu, Run = s >> 32;
            for (int t = 0; t < f->n; t++) {
                if (!((Run >> t) & 1))
                    continue;
                if (frames == 1)
                    conc[t] |= Run & ~(1ull << t);
                else
                    cross[t] |= (Run >> f->n) & ((1ull << f->n) - 1);
            }
            uint64_t startable = ready(f, frames, C) & ~Run;
            for (int b = 0; b < frames * f->n; b++) {
                uint64_t bit = 1ull << b, next;
                if ((startable >> b) & 1)
                    next = C | (Run | bit) << 32;       /* start b */
                else if ((Run >> b) & 1)
                    next = (C | bit) | (Run & ~bit) << 32; /* b completes */
                else
                    continue;
                if (sset_add(&seen, next))
                    push(&st, next);
            }
        }
        free(seen.k);
        free(st.v);
    }
    return 0;
}

/* ---- races */

static void access_of(const rflat *f, int t, uint32_t *rd, uint32_t *wr)
{
    const rnode *x = &f->p->g[f->insts[f->inst[t]].graph].nodes[f->node[t]];
    *rd = x->reads;
    *wr = x->writes;
}

int ref_races(const rprog *p, int gi, rresult *r)
{
    memset(r, 0, sizeof *r);
    if (ref_flatten(p, gi, &r->f) < 0)
        return -1;
    const rflat *f = &r->f;
    r->states = explore(f, 1, r->conc, r->cross);
    r->states += explore(f, 2, r->conc, r->cross);
    for (int res = 0; res < p->nres; res++) {
        uint32_t bit = 1u << res;
        for (int x = 0; x < f->n; x++)
            for (int y = 0; y < f->n; y++) {
                uint32_t rx_, wx, ry, wy;
                access_of(f, x, &rx_, &wx);
                access_of(f, y, &ry, &wy);
                int ax = ((rx_ | wx) & bit) != 0, ay = ((ry | wy) & bit) != 0;
                int wrx = (wx & bit) != 0, wry = (wy & bit) != 0;
                if (x == y || !ax || !ay || !(wrx || wry))
                    continue;
                int writer = wrx && wry ? -1 : wrx ? x : y;
                int size = (int)(sizeof r->races / sizeof r->races[0]);
                /* (v2.2) Frames touch their own copies of a per-frame
                 * resource: no race across frames (but through `reads prev`,
                 * below). */
                int ncross = (p->per_frame & bit) ? 1 : 2;
                for (int cross = 0; cross < ncross; cross++) {
                    uint64_t rel = cross ? r->cross[x] : x < y ? r->conc[x] : 0;
                    if (!((rel >> y) & 1))
                        continue;
                    if (r->nraces == size)
                        return -1; /* more races than the model holds */
                    r->races[r->nraces++] = (rrace){cross, x, y, res, writer};
                }
            }
        /* (v2.2) Frame N+1's y reads frame N's copy, which frame N's x
         * writes: a race when they can overlap. */
        for (int x = 0; x < f->n && (p->per_frame & bit); x++)
            for (int y = 0; y < f->n; y++) {
                uint32_t rx_, wx, ry, wy;
                access_of(f, x, &rx_, &wx);
                access_of(f, y, &ry, &wy);
                const rnode *ny = &p->g[f->insts[f->inst[y]].graph].nodes[f->node[y]];
                if (!(wx & bit) || !(ny->reads_prev & bit) || !((r->cross[x] >> y) & 1))
                    continue;
                if (r->nraces == (int)(sizeof r->races / sizeof r->races[0]))
                    return -1;
                r->races[r->nraces++] = (rrace){2, x, y, res, x};
            }
    }
    return 0;
}

void ref_race_text(const rresult *r, const rrace *k, char *buf, size_t n)
{
    const char *x = r->f.name[k->x], *y = r->f.name[k->y];
    if (!k->cross && strcmp(x, y) > 0) {
        const char *t = x;
        x = y;
        y = t;
    }
    if (k->cross == 2) {
        snprintf(buf, n, "prev '%s' '%s' %s", x, y, r->f.p->res[k->res]);
        return;
    }
    char kind[112];
    if (k->writer < 0)
        snprintf(kind, sizeof kind, "both");
    else
        snprintf(kind, sizeof kind, "w=%s", r->f.name[k->writer]);
    snprintf(buf, n, "%s '%s' '%s' %s %s", k->cross ? "pipe" : "race", x, y,
             r->f.p->res[k->res], kind);
}
