#include "sema.h"
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- per-graph working state ------------------------------------------ */

static uint32_t add_node(sgraph *g)
{
    if (g->n >= DG_MAX_NODES) {
        if (!g->too_many)
            dg_error(g->d, g->ag->pos, "graph '%s' has too many nodes (the limit is %u)",
                     g->ag->name, DG_MAX_NODES);
        g->too_many = 1;
        return UINT32_MAX;
    }
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->nodes = dg_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    memset(&g->nodes[g->n], 0, sizeof g->nodes[0]);
    return g->n++;
}

static void add_edge(sgraph *g, uint32_t from, uint32_t to, src_pos pos, int op)
{
    if (g->ne == g->ecap) {
        g->ecap = g->ecap ? g->ecap * 2 : 128;
        g->edges = dg_xrealloc(g->edges, g->ecap * sizeof *g->edges);
        g->eop = dg_xrealloc(g->eop, g->ecap);
    }
    g->edges[g->ne].from = from;
    g->edges[g->ne].to = to;
    g->edges[g->ne].pos = pos;
    g->eop[g->ne] = (uint8_t)op;
    g->ne++;
}

static void add_pedge(sgraph *g, uint32_t from, uint32_t to, src_pos pos)
{
    if (g->npe == g->pecap) {
        g->pecap = g->pecap ? g->pecap * 2 : 16;
        g->pedges = dg_xrealloc(g->pedges, g->pecap * sizeof *g->pedges);
    }
    g->pedges[g->npe].from = from;
    g->pedges[g->npe].to = to;
    g->pedges[g->npe].pos = pos;
    g->npe++;
}

static const char *kind_word(const snode *s)
{
    return s->kind == IR_TASK ? "task" : "gate";
}

static const char *suggest(const sgraph *g, const char *name)
{
    const char **c = dg_xmalloc((g->n + 1) * sizeof *c);
    for (uint32_t i = 0; i < g->n; i++)
        c[i] = (g->nodes[i].flags & IR_F_ANON) ? NULL : g->nodes[i].name;
    const char *s = dg_suggest(name, c, g->n);
    free(c);
    return s;
}

/* op: SREF_*, how a fix-it removes the name from its expression. */
static void add_ref(sgraph *g, uint32_t to, const ast_expr *e, int op)
{
    if (g->d->stop) return; /* past the error limit: no more suggestions to search for */
    int idx = dg_map_get(&g->names, e->name);
    if (idx < 0) {
        const char *s = suggest(g, e->name);
        if (s) {
            dg_error(g->d, e->pos, "unknown name '%s'; did you mean '%s'?", e->name, s);
            dg_fixit_replace(g->d, e->pos, s);
        } else {
            dg_error(g->d, e->pos, "unknown name '%s'", e->name);
        }
        return;
    }
    if (e->prev) {
        /* Last frame's node: no edge of this run, and no self-dependency
         * (a node already waits for its own last frame in a pipeline). */
        add_pedge(g, (uint32_t)idx, to, e->pos);
        return;
    }
    if ((uint32_t)idx == g->owner) {
        const snode *o = &g->nodes[g->owner];
        dg_error(g->d, e->pos, "%s '%s' depends on itself", kind_word(o), o->name);
        return;
    }
    add_edge(g, (uint32_t)idx, to, e->pos, op);
}

static void collect(sgraph *g, uint32_t to, const ast_expr *e, ast_expr_kind k);

static uint32_t new_anon(sgraph *g, const ast_expr *e)
{
    uint32_t i = add_node(g);
    if (i == UINT32_MAX) return i;
    snode *s = &g->nodes[i];
    s->kind = IR_GATE;
    s->join = e->kind == AST_OR ? IR_JOIN_OR : IR_JOIN_AND;
    s->flags = IR_F_ANON;
    /* Users cannot write names that start with '_' and a capital letter
     * (reserved in C), so these can never collide with theirs. */
    if (e->kind == AST_OR) s->name = dg_printf(g->a, "_Or%u", ++g->nanon_or);
    else s->name = dg_printf(g->a, "_And%u", ++g->nanon_and);
    s->pos = e->pos;
    s->key = g->owner_decl << 32 | g->seq++;
    return i;
}

static void collect(sgraph *g, uint32_t to, const ast_expr *e, ast_expr_kind k)
{
    for (const ast_expr *kid = e->kids; kid; kid = kid->next) {
        if (kid->kind == AST_NAME) {
            add_ref(g, to, kid, kid->next ? SREF_LISTED : SREF_LAST);
        } else if (kid->kind == k) {
            collect(g, to, kid, k); /* (a and b) and c: same join, flatten */
        } else {
            uint32_t gi = new_anon(g, kid);
            if (gi == UINT32_MAX) return;
            collect(g, gi, kid, kid->kind);
            add_edge(g, gi, to, kid->pos, SREF_ALONE);
        }
    }
}

static void lower(sgraph *g, uint32_t n, const ast_expr *e)
{
    if (!e) return;
    g->owner = n;
    if (e->kind == AST_NAME) {
        g->nodes[n].join = IR_JOIN_AND;
        add_ref(g, n, e, SREF_ALONE);
        return;
    }
    g->nodes[n].join = e->kind == AST_OR ? IR_JOIN_OR : IR_JOIN_AND;
    collect(g, n, e, e->kind);
}

/* ---- clauses ------------------------------------------------------------ */

static const char *clause_word(ast_clause_kind k)
{
    switch (k) {
    case CL_AFTER: return "after";
    case CL_MAIN: return "on main";
    case CL_HOT: return "hot";
    case CL_FIBER: return "fiber";
    case CL_PARALLEL: return "parallel";
    case CL_CALL: return "call";
    case CL_WHEN: return "when";
    case CL_COST: return "cost";
    case CL_RUN: return "run";
    case CL_READS: return "reads";
    case CL_WRITES: return "writes";
    case CL_CORO: return "coro";
    default: return "?";
    }
}

static int pos_before(src_pos a, src_pos b)
{
    return a.line < b.line || (a.line == b.line && a.col < b.col);
}

static void conflict(sgraph *g, const ast_clause *const *seen, ast_clause_kind x,
                     ast_clause_kind y, const char *why)
{
    const ast_clause *a = seen[x], *b = seen[y];
    if (!a || !b) return;
    if (pos_before(b->pos, a->pos)) {
        const ast_clause *t = a;
        a = b;
        b = t;
    }
    dg_error(g->d, b->pos, "'%s' cannot be combined with '%s'%s", clause_word(b->kind),
             clause_word(a->kind), why);
    dg_note(g->d, a->pos, "'%s' given here", clause_word(a->kind));
}

/* `reads R, S` / `writes R`: one access per resource and task; `writes`
 * includes reading, so a resource both read and written is written. */
static void accesses(sgraph *g, uint32_t n, const ast_clause *c)
{
    snode *s = &g->nodes[n];
    for (const ast_name *r = c->names; r; r = r->next) {
        if (!r->name) continue;
        int ri = dg_map_get(g->resources, r->name);
        if (ri < 0) {
            const char **cand = dg_xmalloc((g->nres + 1) * sizeof *cand);
            for (size_t i = 0; i < g->nres; i++) cand[i] = g->res[i].name;
            const char *sug = dg_suggest(r->name, cand, g->nres);
            free(cand);
            if (sug) {
                dg_error(g->d, r->pos, "unknown resource '%s'; did you mean '%s'?", r->name, sug);
                dg_fixit_replace(g->d, r->pos, sug);
            } else {
                dg_error(g->d, r->pos, "unknown resource '%s'", r->name);
            }
            continue;
        }
        if (r->prev && c->kind == CL_WRITES) {
            /* (v2.2) A frame writes its own copy only. */
            dg_error(g->d, r->pos, "a task cannot write the previous frame's copy of '%s'; "
                     "'prev' is for 'reads'", r->name);
            continue;
        }
        if (r->prev && !g->res[ri].per_frame) {
            dg_error(g->d, r->pos, "'reads prev %s', but '%s' is not a per-frame resource",
                     r->name, r->name);
            dg_note(g->d, g->res[ri].pos, "declared here; 'resource %s per frame;' gives it "
                    "a copy per frame in flight", r->name);
            continue;
        }
        /* One access per resource and kind: `reads prev R` (the previous
         * frame's copy) stays apart from this frame's `reads`/`writes R`. */
        uint32_t k = 0;
        while (k < s->nacc && (s->acc[k].res != (uint32_t)ri || s->acc[k].prev != (uint32_t)r->prev)) k++;
        if (k < s->nacc) {
            if (c->kind == CL_WRITES && !s->acc[k].write) {
                s->acc[k].write = 1;
                s->acc[k].pos = r->pos;
            }
            continue;
        }
        if (s->nacc == s->acap) {
            s->acap = s->acap ? s->acap * 2 : 4;
            s->acc = dg_xrealloc(s->acc, s->acap * sizeof *s->acc);
        }
        s->acc[s->nacc].res = (uint32_t)ri;
        s->acc[s->nacc].write = c->kind == CL_WRITES;
        s->acc[s->nacc].prev = (uint32_t)r->prev;
        s->acc[s->nacc].pos = r->pos;
        s->nacc++;
    }
}

static void task_clauses(sgraph *g, uint32_t n, const ast_stmt *st)
{
    const ast_clause *seen[CL_COUNT_] = {0};
    for (const ast_clause *c = st->clauses; c; c = c->next) {
        if (seen[c->kind]) {
            dg_error(g->d, c->pos, "'%s' given twice", clause_word(c->kind));
            dg_note(g->d, seen[c->kind]->pos, "first given here");
            continue;
        }
        seen[c->kind] = c;
        snode *s = &g->nodes[n];
        switch (c->kind) {
        case CL_AFTER: lower(g, n, c->expr); break;
        case CL_MAIN: s->flags |= IR_F_MAIN; break;
        case CL_HOT: s->flags |= IR_F_HOT; break;
        case CL_FIBER: s->flags |= IR_F_FIBER; break;
        /* A coroutine's node runs on a fiber that waits for the coroutine:
         * every executor mode and the race check treat it as a fiber task. */
        case CL_CORO: s->flags |= IR_F_CORO | IR_F_FIBER; break;
        case CL_PARALLEL:
            s->flags |= IR_F_PARALLEL;
            if (c->has_grain && !c->bad) {
                if (c->value == 0) {
                    dg_error(g->d, c->arg_pos, "'grain' must be at least 1 "
                             "(leave it out to let the runtime choose)");
                } else {
                    s->grain = (uint32_t)c->value;
                    s->flags |= IR_F_GRAIN;
                }
            }
            break;
        case CL_CALL:
            if (!dg_check_name(g->d, c->arg_pos, c->name, "call name")) {
                s->func = c->name;
                s->flags |= IR_F_CALL;
                s->call_clause = c;
            }
            break;
        case CL_WHEN:
            if (!dg_check_name(g->d, c->arg_pos, c->name, "predicate name")) {
                s->when = c->name;
                s->flags |= IR_F_WHEN;
                s->when_clause = c;
            }
            break;
        case CL_COST:
            if (!c->bad) {
                s->cost_ns = c->value;
                s->flags |= IR_F_COST;
            }
            break;
        case CL_RUN:
            s->run = c->name;
            s->run_pos = c->arg_pos;
            break;
        case CL_READS:
        case CL_WRITES: accesses(g, n, c); break;
        default: break;
        }
    }
    if (seen[CL_RUN]) {
        /* The subgraph's own tasks say where and what they run. */
        for (const ast_clause *c = st->clauses; c; c = c->next) {
            if (c->kind == CL_AFTER || c->kind == CL_WHEN || c->kind == CL_RUN ||
                seen[c->kind] != c)
                continue;
            dg_error(g->d, c->pos, "'%s' has no meaning on a 'run' node (the tasks of "
                     "graph '%s' say where and what they run)", clause_word(c->kind),
                     seen[CL_RUN]->name);
        }
        snode *s = &g->nodes[n];
        s->kind = IR_GATE;
        s->flags = IR_F_RUN | (s->flags & IR_F_WHEN);
        s->nacc = 0;
        return;
    }
    conflict(g, seen, CL_HOT, CL_MAIN, ": main-thread tasks are run by the caller, not by hot workers");
    conflict(g, seen, CL_FIBER, CL_MAIN, ": main-thread tasks run on the caller's own stack");
    conflict(g, seen, CL_PARALLEL, CL_FIBER, "");
    conflict(g, seen, CL_PARALLEL, CL_MAIN, "");
    conflict(g, seen, CL_CORO, CL_MAIN, ": a coroutine task's node runs on a fiber, and main-thread "
             "tasks run on the caller's own stack");
    conflict(g, seen, CL_PARALLEL, CL_CORO, "");
    conflict(g, seen, CL_FIBER, CL_CORO, ": a coroutine task runs on a fiber already");
}

typedef struct pred_pair {
    uint32_t idx;
    sref ref;
} pred_pair;

static int cmp_pair(const void *a, const void *b)
{
    uint32_t x = ((const pred_pair *)a)->idx, y = ((const pred_pair *)b)->idx;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- one graph, in phases ------------------------------------------------- */
/* Each phase takes what the previous one produced:
 *   declare_nodes  AST statements -> one node per task and gate (names first,
 *                  so uses may come before declarations)
 *   lower_stmts    clauses and expressions -> node flags, edges, prev edges
 *   dedup_edges    edges -> each (from, to) once
 *   topo_order     edges -> nodes in topological order, or the cycle
 *   build_ir       nodes, edges and order -> the ir_graph
 *   warn_graph     the ir_graph -> the optional warnings */

static uint32_t *declare_nodes(sgraph *g)
{
    const ast_graph *ag = g->ag;
    dg_diag *d = g->d;
    uint64_t decl = 0;
    size_t nstmts = 0;
    for (const ast_stmt *st = ag->stmts; st; st = st->next) nstmts++;
    uint32_t *stmt_node = dg_xmalloc((nstmts + 1) * sizeof *stmt_node);
    /* Sized up front: growing these by doubling costs copies and, for big
     * graphs, twice the peak memory. */
    g->cap = (uint32_t)(nstmts < DG_MAX_NODES ? nstmts : DG_MAX_NODES) + 16;
    g->nodes = dg_xmalloc(g->cap * sizeof *g->nodes);
    g->ecap = 2 * nstmts + 16;
    g->edges = dg_xmalloc(g->ecap * sizeof *g->edges);
    g->eop = dg_xmalloc(g->ecap);
    dg_map_reserve(&g->names, nstmts);
    size_t si = 0;
    for (const ast_stmt *st = ag->stmts; st; st = st->next, si++) {
        stmt_node[si] = UINT32_MAX;
        if (!st->name) continue;
        const char *what = st->kind == AST_TASK ? "task name" : "gate name";
        dg_check_name(d, st->pos, st->name, what);
        int prev = dg_map_get(&g->names, st->name);
        if (prev >= 0) {
            const snode *p = &g->nodes[prev];
            dg_error(d, st->pos, "'%s' is defined twice in graph '%s'", st->name, ag->name);
            dg_note(d, p->pos, "previous definition is here");
            continue;
        }
        uint32_t n = add_node(g);
        if (n == UINT32_MAX) break;
        snode *s = &g->nodes[n];
        s->kind = st->kind == AST_TASK ? IR_TASK : IR_GATE;
        s->join = IR_JOIN_AND;
        s->name = st->name;
        s->pos = st->pos;
        s->key = (decl << 32) | 0xFFFFFFFFu; /* after gates its expression makes */
        decl++;
        dg_map_put(&g->names, st->name, (int)n);
        stmt_node[si] = n;
    }
    return stmt_node;
}

static void lower_stmts(sgraph *g, const uint32_t *stmt_node)
{
    size_t si = 0;
    for (const ast_stmt *st = g->ag->stmts; st && !g->too_many && !g->d->stop;
         st = st->next, si++) {
        uint32_t n = stmt_node[si];
        if (n == UINT32_MAX) continue;
        g->owner_decl = g->nodes[n].key >> 32;
        g->seq = 0;
        if (st->kind == AST_TASK) {
            task_clauses(g, n, st);
            snode *s = &g->nodes[n];
            if (!s->func && s->kind == IR_TASK)
                s->func = dg_printf(g->a, "%s_%s", g->ag->name, s->name);
        } else {
            lower(g, n, st->expr);
        }
    }
}

/* Drops the second mention of an edge (warning unless other errors make
 * the warning noise); rebuilds the adjacency when something was dropped. */
static void dedup_edges(sgraph *g, adj *A, int quiet)
{
    uint32_t *stamp = dg_xcalloc(g->n + 1, sizeof *stamp);
    uint8_t *dead = dg_xcalloc(g->ne + 1, 1);
    int any = 0;
    for (uint32_t v = 0; v < g->n; v++) {
        for (uint32_t k = A->pstart[v]; k < A->pstart[v + 1]; k++) {
            const sedge *e = &g->edges[A->plist[k]];
            if (stamp[e->from] == v + 1) {
                dead[A->plist[k]] = 1;
                any = 1;
                if (!quiet) {
                    dg_warning(g->d, e->pos, "'%s' is listed more than once",
                               g->nodes[e->from].name);
                    if (g->eop[A->plist[k]] != SREF_ALONE)
                        dg_fixit_remove_operand(g->d, e->pos, g->eop[A->plist[k]] == SREF_LAST);
                }
                continue;
            }
            stamp[e->from] = v + 1;
        }
    }
    if (any) {
        size_t w = 0;
        for (size_t i = 0; i < g->ne; i++)
            if (!dead[i]) g->eop[w] = g->eop[i], g->edges[w++] = g->edges[i];
        g->ne = w;
        dg_adj_free(A);
        dg_adj_build(g, A);
    }
    free(stamp);
    free(dead);
}

/* Kahn's algorithm, taking the ready node that comes first in the source
 * so the order (and every output) is deterministic and reads naturally.
 * Returns the order, or NULL after reporting the cycle. */
static uint32_t *topo_order(sgraph *g, const adj *A)
{
    uint32_t *indeg = dg_xcalloc(g->n + 1, sizeof *indeg);
    uint8_t *done = dg_xcalloc(g->n + 1, 1);
    uint32_t *order = dg_xmalloc((g->n + 1) * sizeof *order);
    heap h = {dg_xmalloc((g->n + 1) * sizeof(hent)), 0};
    for (uint32_t v = 0; v < g->n; v++) {
        indeg[v] = A->pstart[v + 1] - A->pstart[v];
        if (!indeg[v]) dg_heap_push(&h, g->nodes[v].key, v);
    }
    uint32_t no = 0;
    while (h.n) {
        uint32_t v = dg_heap_pop(&h);
        done[v] = 1;
        order[no++] = v;
        for (uint32_t k = A->sstart[v]; k < A->sstart[v + 1]; k++) {
            uint32_t w = g->edges[A->slist[k]].to;
            if (--indeg[w] == 0) dg_heap_push(&h, g->nodes[w].key, w);
        }
    }
    free(h.e);
    free(indeg);
    if (no < g->n) {
        dg_report_cycle(g, A, done);
        free(order);
        order = NULL;
    }
    free(done);
    return order;
}

/* The IR in that order; predpos gets, aligned with each node's pred list,
 * where the predecessor is named (only the warnings need it). */
static void build_ir(sgraph *g, const adj *A, const uint32_t *order, lgraph *L,
                     sref ***predpos_out, sref **pposbuf_out)
{
    uint32_t *rank = dg_xmalloc((g->n + 1) * sizeof *rank);
    for (uint32_t i = 0; i < g->n; i++) rank[order[i]] = i;
    ir_node *nodes = dg_alloc(g->a, (g->n ? g->n : 1) * sizeof *nodes);
    uint32_t *lists = dg_alloc(g->a, (2 * g->ne + g->npe + 1) * sizeof *lists);
    sref *pposbuf = dg_xmalloc((g->ne + 1) * sizeof *pposbuf);
    sref **predpos = dg_xmalloc((g->n + 1) * sizeof *predpos);
    pred_pair *pairs = dg_xmalloc((g->ne + 1) * sizeof *pairs);
    L->run = dg_alloc(g->a, (g->n + 1) * sizeof *L->run);
    L->run_pos = dg_alloc(g->a, (g->n + 1) * sizeof *L->run_pos);
    /* prev inputs per node: counted, then placed, then sorted and unique. */
    uint32_t *pstart = dg_xcalloc(g->n + 2, sizeof *pstart);
    for (size_t i = 0; i < g->npe; i++) pstart[rank[g->pedges[i].to] + 2]++;
    for (uint32_t i = 0; i < g->n; i++) pstart[i + 2] += pstart[i + 1];
    uint32_t *prevs = lists + 2 * g->ne;
    for (size_t i = 0; i < g->npe; i++)
        prevs[pstart[rank[g->pedges[i].to] + 1]++] = rank[g->pedges[i].from];
    size_t lp = 0, pp = 0, nprev = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t v = order[i];
        const snode *s = &g->nodes[v];
        ir_node *x = &nodes[i];
        x->kind = s->kind;
        x->join = s->join;
        x->flags = s->flags;
        x->name = s->name;
        x->func = s->kind == IR_TASK ? s->func : NULL;
        x->when = s->when;
        x->grain = s->grain;
        x->cost_ns = s->cost_ns;
        x->pos = s->pos;
        x->sub = UINT32_MAX;
        if (s->nacc) {
            ir_access *acc = dg_alloc(g->a, s->nacc * sizeof *acc);
            memcpy(acc, s->acc, s->nacc * sizeof *acc);
            x->acc = acc;
            x->nacc = s->nacc;
        }
        L->run[i] = s->run;
        L->run_pos[i] = s->run_pos;
        /* Ascending index order: deterministic, and back ends may rely on it. */
        uint32_t *pl = lists + lp;
        x->npred = A->pstart[v + 1] - A->pstart[v];
        for (uint32_t k = 0; k < x->npred; k++) {
            uint32_t ei = A->plist[A->pstart[v] + k];
            pairs[k].idx = rank[g->edges[ei].from];
            pairs[k].ref.pos = g->edges[ei].pos;
            pairs[k].ref.op = g->eop[ei];
        }
        qsort(pairs, x->npred, sizeof *pairs, cmp_pair);
        predpos[i] = pposbuf + pp;
        for (uint32_t k = 0; k < x->npred; k++) {
            pl[k] = pairs[k].idx;
            pposbuf[pp++] = pairs[k].ref;
        }
        lp += x->npred;
        uint32_t *sl = lists + lp;
        x->nsucc = A->sstart[v + 1] - A->sstart[v];
        for (uint32_t k = 0; k < x->nsucc; k++)
            sl[k] = rank[g->edges[A->slist[A->sstart[v] + k]].to];
        qsort(sl, x->nsucc, sizeof *sl, cmp_u32);
        lp += x->nsucc;
        x->pred = pl;
        x->succ = sl;
        uint32_t *pv = prevs + pstart[i], np = pstart[i + 1] - pstart[i], w = 0;
        qsort(pv, np, sizeof *pv, cmp_u32);
        for (uint32_t k = 0; k < np; k++)
            if (w == 0 || pv[w - 1] != pv[k]) pv[w++] = pv[k];
        x->prev = pv;
        x->nprev = w;
        nprev += w;
    }
    free(pstart);
    free(pairs);
    free(rank);
    ir_graph *out = &L->g;
    out->name = g->ag->name;
    out->ctype = g->ag->ctype ? g->ag->ctype : "void *";
    out->pos = g->ag->pos;
    out->nodes = nodes;
    out->nnodes = g->n;
    out->nedges = (uint32_t)g->ne;
    out->nprev = (uint32_t)nprev;
    *predpos_out = predpos;
    *pposbuf_out = pposbuf;
}

static void warn_graph(sgraph *g, const ir_graph *out, sref *const *predpos)
{
    for (uint32_t i = 0; i < out->nnodes; i++) {
        const ir_node *x = &out->nodes[i];
        if (x->kind == IR_GATE && !(x->flags & (IR_F_ANON | IR_F_RUN)) && x->nsucc == 0)
            dg_warning(g->d, x->pos, "gate '%s' is never waited for", x->name);
    }
    dg_warn_implied(g, out->nodes, out->nnodes, predpos);
}

int dg_lower_graph(sgraph *g, lgraph *L)
{
    const ast_graph *ag = g->ag;
    dg_diag *d = g->d;
    int errors0 = d->nerrors;

    uint32_t *stmt_node = declare_nodes(g);
    lower_stmts(g, stmt_node);
    free(stmt_node);

    uint32_t ntasks = 0;
    for (uint32_t i = 0; i < g->n; i++)
        ntasks += g->nodes[i].kind == IR_TASK || g->nodes[i].run;
    if (ntasks == 0 && !ag->syntax_errors && !g->too_many)
        dg_error(d, ag->pos, "graph '%s' has no tasks", ag->name);
    if (g->too_many || d->stop) return -1;
    /* With other errors (an unknown name, a name defined twice) the edges
     * that could be resolved still form a graph: look for cycles in it too,
     * so one run reports every error instead of the cycle only after the
     * names are fixed. Unresolved references add no edge, so no cycle is
     * made up. */
    int had_errors = d->nerrors != errors0;

    adj A;
    dg_adj_build(g, &A);
    dedup_edges(g, &A, ag->syntax_errors || had_errors);
    uint32_t *order = topo_order(g, &A);
    if (!order || had_errors) {
        free(order);
        dg_adj_free(&A);
        return -1;
    }
    sref **predpos, *pposbuf;
    build_ir(g, &A, order, L, &predpos, &pposbuf);
    free(order);
    dg_adj_free(&A);
    if (!ag->syntax_errors) warn_graph(g, &L->g, predpos);
    free(predpos);
    free(pposbuf);
    return 0;
}
