/*
 * subgraph.c - `task X run G;`: resolved and flattened at build time.
 *
 * A run node becomes, in the enclosing graph, an entry gate (the run node
 * itself, with its own join over its inputs), a copy of every node of G
 * (flattened first, so nesting works), and an exit AND gate that the run
 * node's dependants wait for. Flattening, rather than a call into G's own
 * run state, is what makes a subgraph cost exactly what its nodes would
 * cost written inline: the runtime sees one static graph, with no nested
 * run, no extra hand-off and no per-frame work of its own (a nested
 * G_run from a task is DAGRT_ENESTED anyway). The copied tasks keep G's C
 * function names, so the user implements them once.
 *
 * The exit waits for every node that is not already waited for through an
 * AND join: G's sinks, and every input of an OR join (an OR fires on its
 * first input; the others may still be running). So "the run node has
 * completed" means every node of G has.
 */
#include "sema.h"
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NEST 256           /* run inside run inside ...: deeper is an error */
#define MAX_TOTAL (2u * DG_MAX_NODES) /* flattened nodes of all graphs together */

/* Context types compare after collapsing white space (the lexer already
 * folds runs into one space; this also ignores where spaces are). */
static int same_ctype(const char *a, const char *b)
{
    for (;;) {
        while (*a == ' ') a++;
        while (*b == ' ') b++;
        if (*a != *b) return 0;
        if (!*a) return 1;
        a++;
        b++;
    }
}

static void resolve(lgraph *L, size_t n, const dg_map *gnames, dg_diag *d, dg_arena *a)
{
    const char **cand = dg_xmalloc((n + 1) * sizeof *cand);
    for (size_t i = 0; i < n; i++) cand[i] = L[i].ag->name;
    for (size_t i = 0; i < n && !d->stop; i++) {
        lgraph *g = &L[i];
        if (!g->ok) continue;
        g->target = dg_alloc(a, (g->g.nnodes + 1) * sizeof *g->target);
        for (uint32_t v = 0; v < g->g.nnodes; v++) {
            g->target[v] = UINT32_MAX;
            if (!g->run[v]) continue;
            int t = dg_map_get(gnames, g->run[v]);
            if (t < 0) {
                const char *s = dg_suggest(g->run[v], cand, n);
                if (s) {
                    dg_error(d, g->run_pos[v], "unknown graph '%s' in 'run'; did you mean '%s'?",
                             g->run[v], s);
                    dg_fixit_replace(d, g->run_pos[v], s);
                } else {
                    dg_error(d, g->run_pos[v], "unknown graph '%s' in 'run'", g->run[v]);
                }
                g->state = 3;
                continue;
            }
            const lgraph *h = &L[t];
            const char *ht = h->ag->ctype ? h->ag->ctype : "void *";
            if (!same_ctype(ht, g->g.ctype)) {
                dg_error(d, g->run_pos[v], "graph '%s' has context type '%s', but graph '%s', "
                         "which runs it, has '%s'", h->ag->name, ht, g->g.name, g->g.ctype);
                dg_note(d, h->ag->pos, "graph '%s' is defined here", h->ag->name);
                g->state = 3;
                continue;
            }
            g->target[v] = (uint32_t)t;
        }
    }
    free(cand);
}

/* Recursion through `run`: depth-first over the graphs, the chain on a
 * stack; a graph met again while on the stack closes a loop. */
typedef struct walk {
    lgraph *L;
    dg_diag *d;
    uint32_t *stack_g, *stack_v; /* graph, and the run node it follows */
    size_t sp;
    uint8_t *color;              /* 0 new, 1 on the stack, 2 done */
} walk;

static void report_loop(walk *w, size_t from, uint32_t t, uint32_t v)
{
    /* The loop: stack entries from..sp-1, then (graph, v) back to t. */
    dg_buf msg = {0};
    size_t start = from;
    (void)t;
    for (size_t k = start; k < w->sp; k++) {
        const lgraph *g = &w->L[w->stack_g[k]];
        if (k == start) dg_buf_printf(&msg, "'%s' runs", g->g.name);
        else dg_buf_printf(&msg, " '%s', which runs", g->g.name);
    }
    dg_buf_printf(&msg, " '%s'", w->L[t].g.name);
    const lgraph *first = &w->L[w->stack_g[start]];
    uint32_t fv = start + 1 < w->sp ? w->stack_v[start + 1] : v;
    dg_error(w->d, first->run_pos[fv], "graph '%s' runs itself: %s", first->g.name, msg.p);
    for (size_t k = start; k < w->sp && w->sp - start > 1; k++) {
        const lgraph *g = &w->L[w->stack_g[k]];
        uint32_t nv = k + 1 < w->sp ? w->stack_v[k + 1] : v;
        dg_note(w->d, g->run_pos[nv], "'%s' runs '%s' here (task '%s')", g->g.name,
                g->run[nv], g->g.nodes[nv].name);
    }
    dg_buf_free(&msg);
}

static void visit(walk *w, uint32_t gi, uint32_t via)
{
    lgraph *g = &w->L[gi];
    if (w->sp >= MAX_NEST) {
        const lgraph *up = &w->L[w->stack_g[w->sp - 1]];
        dg_error(w->d, up->run_pos[via], "subgraphs nested too deeply (the limit is %d)", MAX_NEST);
        g->state = 3;
        w->color[gi] = 2;
        return;
    }
    w->color[gi] = 1;
    w->stack_g[w->sp] = gi;
    w->stack_v[w->sp] = via;
    w->sp++;
    for (uint32_t v = 0; g->ok && g->target && v < g->g.nnodes; v++) {
        uint32_t t = g->target[v];
        if (t == UINT32_MAX) continue;
        if (w->color[t] == 1) {
            size_t from = 0;
            while (w->stack_g[from] != t) from++;
            report_loop(w, from, t, v);
            w->L[t].state = 3;
            g->state = 3;
            continue;
        }
        if (w->color[t] == 0) visit(w, t, v);
    }
    w->sp--;
    w->color[gi] = 2;
}

typedef struct fb {
    ir_node *nodes;
    uint32_t n;
    uint32_t *preds;     /* all pred lists, appended */
    size_t np, npcap;
    uint32_t *prevs;
    size_t nv, nvcap;
    ir_sub *subs;
    uint32_t ns, nscap;
    uint32_t *pfirst, *vfirst;   /* per node: offset of its pred/prev list */
} fb;

static void push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = dg_xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int flatten_one(lgraph *L, uint32_t gi, dg_diag *d, dg_arena *a, uint64_t *budget,
                       unsigned depth);

/* Appends node x with its pred and prev lists (already remapped). */
static ir_node *add(fb *B, const ir_node *x)
{
    ir_node *y = &B->nodes[B->n];
    *y = *x;
    B->pfirst[B->n] = (uint32_t)B->np;
    B->vfirst[B->n] = (uint32_t)B->nv;
    B->n++;
    return y;
}

/* z (a copy of h) asks p first, then h's own predicates; one that is
 * already asked is not asked again. */
static void and_when(ir_node *z, const char *p, const ir_node *h, dg_arena *a)
{
    const char **v = dg_alloc(a, (h->nand_when + 1) * sizeof *v);
    uint32_t n = 0;
    for (uint32_t k = 0; k <= h->nand_when; k++) {
        const char *q = k ? h->and_when[k - 1] : h->when;
        int seen = strcmp(q, p) == 0;
        for (uint32_t j = 0; j < n && !seen; j++) seen = strcmp(v[j], q) == 0;
        if (!seen) v[n++] = q;
    }
    z->and_when = v;
    z->nand_when = n;
}

static int flatten_one(lgraph *L, uint32_t gi, dg_diag *d, dg_arena *a, uint64_t *budget,
                       unsigned depth)
{
    lgraph *g = &L[gi];
    if (g->state == 2) return 0;
    if (g->state == 3 || !g->ok) return -1;
    if (depth > MAX_NEST) {
        dg_error(d, g->g.pos, "subgraphs nested too deeply in graph '%s' (the limit is %d)",
                 g->g.name, MAX_NEST);
        g->state = 3;
        return -1;
    }
    const ir_graph *G = &g->g;
    uint64_t total = 0;
    int any = 0;
    for (uint32_t v = 0; v < G->nnodes; v++) {
        uint32_t t = g->target ? g->target[v] : UINT32_MAX;
        if (t == UINT32_MAX) {
            total++;
            continue;
        }
        if (flatten_one(L, t, d, a, budget, depth + 1) != 0) {
            g->state = 3;
            return -1;
        }
        total += 2 + L[t].flat.nnodes;
        any = 1;
    }
    if (!any) {
        g->flat = *G;
        g->state = 2;
        return 0;
    }
    if (total > DG_MAX_NODES || total > *budget) {
        dg_error(d, G->pos, "graph '%s' has too many nodes with its subgraphs flattened "
                 "(the limit is %u, and %u for all graphs together)", G->name, DG_MAX_NODES,
                 MAX_TOTAL);
        g->state = 3;
        return -1;
    }
    *budget -= total;
    fb B;
    memset(&B, 0, sizeof B);
    B.nodes = dg_alloc(a, (size_t)total * sizeof *B.nodes);
    B.pfirst = dg_xmalloc((total + 1) * sizeof *B.pfirst);
    B.vfirst = dg_xmalloc((total + 1) * sizeof *B.vfirst);
    uint32_t *exit_of = dg_xmalloc((G->nnodes + 1) * sizeof *exit_of);
    for (uint32_t v = 0; v < G->nnodes; v++) {
        const ir_node *x = &G->nodes[v];
        uint32_t t = g->target ? g->target[v] : UINT32_MAX;
        ir_node *y = add(&B, x);
        for (uint32_t k = 0; k < x->npred; k++) push_u32(&B.preds, &B.np, &B.npcap, exit_of[x->pred[k]]);
        /* prev of a later node: its exit is not placed yet; fixed below. */
        for (uint32_t k = 0; k < x->nprev; k++) push_u32(&B.prevs, &B.nv, &B.nvcap, x->prev[k]);
        if (t == UINT32_MAX) {
            exit_of[v] = B.n - 1;
            continue;
        }
        /* The run node: entry gate, G's nodes, exit gate. */
        const ir_graph *H = &L[t].flat;
        uint32_t entry = B.n - 1, base = B.n, s = B.ns;
        y->flags = IR_F_RUN;
        y->when = NULL;
        y->sub = s;
        if (B.ns + H->nsubs + 1 > B.nscap) {
            B.nscap = (B.ns + H->nsubs + 1) * 2;
            B.subs = dg_xrealloc(B.subs, B.nscap * sizeof *B.subs);
        }
        ir_sub *sb = &B.subs[B.ns++];
        sb->name = x->name;
        sb->graph = H->name;
        sb->parent = UINT32_MAX;
        sb->entry = entry;
        for (uint32_t k = 0; k < H->nsubs; k++) {
            ir_sub *c = &B.subs[B.ns++];
            *c = H->subs[k];
            c->name = dg_printf(a, "%s.%s", x->name, H->subs[k].name);
            c->parent = H->subs[k].parent == UINT32_MAX ? s : s + 1 + H->subs[k].parent;
            c->entry += base;
            c->exit += base;
        }
        for (uint32_t k = 0; k < H->nnodes; k++) {
            const ir_node *h = &H->nodes[k];
            ir_node *z = add(&B, h);
            z->name = dg_printf(a, "%s.%s", x->name, h->name);
            z->sub = h->sub == UINT32_MAX ? s : s + 1 + h->sub;
            if (h->npred == 0) push_u32(&B.preds, &B.np, &B.npcap, entry);
            for (uint32_t q = 0; q < h->npred; q++) push_u32(&B.preds, &B.np, &B.npcap, base + h->pred[q]);
            for (uint32_t q = 0; q < h->nprev; q++)
                push_u32(&B.prevs, &B.nv, &B.nvcap, UINT32_MAX - 1 - (base + h->prev[q]));
            /* `when p` on the run node skips the whole subgraph: each of its
             * tasks asks p when it becomes ready, and then its own. */
            if ((x->flags & IR_F_WHEN) && h->kind == IR_TASK) {
                if (h->flags & IR_F_WHEN) and_when(z, x->when, h, a);
                z->flags |= IR_F_WHEN;
                z->when = x->when;
            }
        }
        /* Exit: every sink and every OR input. */
        ir_node ex;
        memset(&ex, 0, sizeof ex);
        ex.kind = IR_GATE;
        ex.join = IR_JOIN_AND;
        ex.flags = IR_F_ANON;
        ex.name = dg_printf(a, "%s._End", x->name);
        ex.pos = x->pos;
        ex.sub = s;
        add(&B, &ex);
        size_t p0 = B.np;
        if (H->nnodes == 0) push_u32(&B.preds, &B.np, &B.npcap, entry); /* after syntax errors */
        for (uint32_t k = 0; k < H->nnodes; k++) {
            const ir_node *h = &H->nodes[k];
            if (h->nsucc == 0) push_u32(&B.preds, &B.np, &B.npcap, base + k);
            if (h->join == IR_JOIN_OR)
                for (uint32_t q = 0; q < h->npred; q++) push_u32(&B.preds, &B.np, &B.npcap, base + h->pred[q]);
        }
        qsort(B.preds + p0, B.np - p0, sizeof *B.preds, cmp_u32);
        size_t w = p0;
        for (size_t k = p0; k < B.np; k++)
            if (w == p0 || B.preds[w - 1] != B.preds[k]) B.preds[w++] = B.preds[k];
        B.np = w;
        exit_of[v] = B.n - 1;
        sb->exit = B.n - 1;
    }
    /* Lists: preds in place; prevs of this graph's own nodes name local
     * indices (mapped to exits now that all are placed), copied ones were
     * stored as UINT32_MAX - 1 - index. Successors mirror predecessors. */
    uint32_t n = B.n;
    B.pfirst[n] = (uint32_t)B.np;
    B.vfirst[n] = (uint32_t)B.nv;
    uint32_t *lists = dg_alloc(a, (2 * B.np + B.nv + 1) * sizeof *lists);
    uint32_t *scount = dg_xcalloc(n + 1, sizeof *scount);
    if (B.np) memcpy(lists, B.preds, B.np * sizeof *lists);
    uint32_t *prevs = lists + 2 * B.np;
    for (size_t k = 0; k < B.nv; k++) {
        uint32_t x = B.prevs[k];
        prevs[k] = x >= UINT32_MAX / 2 ? UINT32_MAX - 1 - x : exit_of[x];
    }
    uint64_t nprev = 0;
    for (uint32_t i = 0; i < n; i++) {
        ir_node *y = &B.nodes[i];
        y->pred = lists + B.pfirst[i];
        y->npred = B.pfirst[i + 1] - B.pfirst[i];
        y->prev = prevs + B.vfirst[i];
        y->nprev = B.vfirst[i + 1] - B.vfirst[i];
        uint32_t *pv = (uint32_t *)y->prev;
        qsort(pv, y->nprev, sizeof *pv, cmp_u32);
        nprev += y->nprev;
        for (uint32_t k = 0; k < y->npred; k++) scount[y->pred[k]]++;
    }
    uint32_t *sl = lists + B.np, off = 0;
    for (uint32_t i = 0; i < n; i++) {
        B.nodes[i].succ = sl + off;
        off += scount[i];
        scount[i] = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        ir_node *y = &B.nodes[i];
        for (uint32_t k = 0; k < y->npred; k++) {
            ir_node *p = &B.nodes[y->pred[k]];
            ((uint32_t *)p->succ)[scount[y->pred[k]]++] = i;
        }
    }
    for (uint32_t i = 0; i < n; i++) B.nodes[i].nsucc = scount[i];
    ir_sub *subs = dg_alloc(a, (B.ns + 1) * sizeof *subs);
    if (B.ns) memcpy(subs, B.subs, B.ns * sizeof *subs);
    g->flat = *G;
    g->flat.nodes = B.nodes;
    g->flat.nnodes = n;
    g->flat.nedges = (uint32_t)B.np;
    g->flat.subs = subs;
    g->flat.nsubs = B.ns;
    g->flat.nprev = (uint32_t)nprev;
    free(scount);
    free(exit_of);
    free(B.pfirst);
    free(B.vfirst);
    free(B.preds);
    free(B.prevs);
    free(B.subs);
    g->state = 2;
    return 0;
}

void dg_flatten(lgraph *L, size_t n, const dg_map *gnames, const int *want, dg_diag *d,
                dg_arena *a)
{
    resolve(L, n, gnames, d, a);
    walk w;
    memset(&w, 0, sizeof w);
    w.L = L;
    w.d = d;
    w.stack_g = dg_xmalloc((n + 1) * sizeof *w.stack_g);
    w.stack_v = dg_xmalloc((n + 1) * sizeof *w.stack_v);
    w.color = dg_xcalloc(n + 1, 1);
    for (size_t i = 0; i < n; i++)
        if (w.color[i] == 0) visit(&w, (uint32_t)i, UINT32_MAX);
    free(w.stack_g);
    free(w.stack_v);
    free(w.color);
    uint64_t budget = MAX_TOTAL;
    for (size_t i = 0; i < n && !d->stop; i++)
        if (want[i]) flatten_one(L, (uint32_t)i, d, a, &budget, 0);
}
