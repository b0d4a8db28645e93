#include "sema.h"

#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline",
    "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
    "void", "volatile", "while",
    /* C11 spellings and the C23 keywords, so generated code stays valid
     * under every standard a user may compile it with. */
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic",
    "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr",
    "static_assert", "thread_local", "true", "typeof", "typeof_unqual",
};

int dg_is_c_keyword(const char *name)
{
    /* Called for every name in the file: compare only with keywords that
     * share the first letter. */
    for (size_t i = 0; i < sizeof c_keywords / sizeof *c_keywords; i++)
        if (c_keywords[i][0] == name[0] && strcmp(name, c_keywords[i]) == 0) return 1;
    return 0;
}

int dg_is_reserved_c_name(const char *name)
{
    return name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'));
}

/* Reports a bad name; returns 1 when it was bad. */
static int check_name(dg_diag *d, src_pos pos, const char *name, const char *what)
{
    if (!name) return 1;
    if (dg_is_c_keyword(name)) {
        dg_error(d, pos, "%s '%s' is a C keyword", what, name);
        return 1;
    }
    if (dg_is_reserved_c_name(name)) {
        dg_error(d, pos, "%s '%s' is a reserved C identifier (names must not start "
                 "with '__' or with '_' and a capital letter)", what, name);
        return 1;
    }
    return 0;
}

/* ---- per-graph working state ------------------------------------------ */

typedef struct snode {
    ir_kind kind;
    ir_join join;
    unsigned flags;
    const char *name;
    const char *func;
    const char *when;
    uint32_t grain;
    uint64_t cost_ns;
    src_pos pos;
    uint64_t key;        /* topological tie-break: source order */
    const ast_clause *when_clause, *call_clause;
} snode;

typedef struct sedge {
    uint32_t from, to;
    src_pos pos;         /* where `from` is named in `to`'s expression */
} sedge;

typedef struct sgraph {
    dg_diag *d;
    dg_arena *a;
    const ast_graph *ag;
    snode *nodes;
    uint32_t n, cap;
    sedge *edges;
    size_t ne, ecap;
    dg_map names;        /* user name -> node index */
    uint32_t nanon_and, nanon_or, seq;
    uint32_t owner;      /* node whose expression is being lowered */
    uint64_t owner_decl;
    int too_many;
} sgraph;

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

static void add_edge(sgraph *g, uint32_t from, uint32_t to, src_pos pos)
{
    if (g->ne == g->ecap) {
        g->ecap = g->ecap ? g->ecap * 2 : 128;
        g->edges = dg_xrealloc(g->edges, g->ecap * sizeof *g->edges);
    }
    g->edges[g->ne].from = from;
    g->edges[g->ne].to = to;
    g->edges[g->ne].pos = pos;
    g->ne++;
}

static const char *kind_word(const snode *s)
{
    return s->kind == IR_TASK ? "task" : "gate";
}

/* The closest declared name, for "did you mean". */
static const char *suggest(const sgraph *g, const char *name)
{
    size_t len = strlen(name);
    unsigned cap = len <= 2 ? 1 : len <= 5 ? 2 : 3;
    unsigned best = cap + 1;
    const char *bestname = NULL;
    for (uint32_t i = 0; i < g->n; i++) {
        const snode *s = &g->nodes[i];
        if (s->flags & IR_F_ANON) continue;
        unsigned dist = dg_edit_distance(name, s->name, best - 1 < cap ? best - 1 : cap);
        /* Replacing every letter is no suggestion ('x' for 'a'). */
        if (dist < best && dist < len && dist < strlen(s->name)) {
            best = dist;
            bestname = s->name;
        }
    }
    return bestname;
}

static void add_ref(sgraph *g, uint32_t to, const ast_expr *e)
{
    if (g->d->stop) return; /* past the error limit: no more suggestions to search for */
    int idx = dg_map_get(&g->names, e->name);
    if (idx < 0) {
        const char *s = suggest(g, e->name);
        if (s) dg_error(g->d, e->pos, "unknown name '%s'; did you mean '%s'?", e->name, s);
        else dg_error(g->d, e->pos, "unknown name '%s'", e->name);
        return;
    }
    if ((uint32_t)idx == g->owner) {
        const snode *o = &g->nodes[g->owner];
        dg_error(g->d, e->pos, "%s '%s' depends on itself", kind_word(o), o->name);
        return;
    }
    add_edge(g, (uint32_t)idx, to, e->pos);
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
            add_ref(g, to, kid);
        } else if (kid->kind == k) {
            collect(g, to, kid, k); /* (a and b) and c: same join, flatten */
        } else {
            uint32_t gi = new_anon(g, kid);
            if (gi == UINT32_MAX) return;
            collect(g, gi, kid, kid->kind);
            add_edge(g, gi, to, kid->pos);
        }
    }
}

static void lower(sgraph *g, uint32_t n, const ast_expr *e)
{
    if (!e) return;
    g->owner = n;
    if (e->kind == AST_NAME) {
        g->nodes[n].join = IR_JOIN_AND;
        add_ref(g, n, e);
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
            if (!check_name(g->d, c->arg_pos, c->name, "call name")) {
                s->func = c->name;
                s->flags |= IR_F_CALL;
                s->call_clause = c;
            }
            break;
        case CL_WHEN:
            if (!check_name(g->d, c->arg_pos, c->name, "predicate name")) {
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
        default: break;
        }
    }
    conflict(g, seen, CL_HOT, CL_MAIN, ": main-thread tasks are run by the caller, not by hot workers");
    conflict(g, seen, CL_FIBER, CL_MAIN, ": main-thread tasks run on the caller's own stack");
    conflict(g, seen, CL_PARALLEL, CL_FIBER, "");
    conflict(g, seen, CL_PARALLEL, CL_MAIN, "");
}

/* ---- topological order and cycles --------------------------------------- */

/* A binary min-heap of (key, node): the key travels with the node so that
 * sifting does not chase pointers into the node array. */
typedef struct hent {
    uint64_t key;
    uint32_t v;
} hent;

typedef struct heap {
    hent *e;
    size_t n;
} heap;

static void hpush(heap *h, uint64_t key, uint32_t v)
{
    size_t i = h->n++;
    hent x = {key, v};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h->e[p].key <= key) break;
        h->e[i] = h->e[p];
        i = p;
    }
    h->e[i] = x;
}

static uint32_t hpop(heap *h)
{
    uint32_t top = h->e[0].v;
    hent x = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= h->n) break;
        if (r < h->n && h->e[r].key < h->e[l].key) m = r;
        if (x.key <= h->e[m].key) break;
        h->e[i] = h->e[m];
        i = m;
    }
    if (h->n) h->e[i] = x;
    return top;
}

/* Compressed adjacency over the (deduplicated) edges. */
typedef struct adj {
    uint32_t *pstart, *plist;  /* preds of each node: edge indices */
    uint32_t *sstart, *slist;  /* succs of each node: edge indices */
} adj;

static void build_adj(const sgraph *g, adj *A)
{
    A->pstart = dg_xcalloc(g->n + 1, sizeof(uint32_t));
    A->sstart = dg_xcalloc(g->n + 1, sizeof(uint32_t));
    A->plist = dg_xmalloc((g->ne + 1) * sizeof(uint32_t));
    A->slist = dg_xmalloc((g->ne + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < g->ne; i++) {
        A->pstart[g->edges[i].to + 1]++;
        A->sstart[g->edges[i].from + 1]++;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        A->pstart[i + 1] += A->pstart[i];
        A->sstart[i + 1] += A->sstart[i];
    }
    uint32_t *pf = dg_xmalloc((g->n + 1) * sizeof(uint32_t));
    uint32_t *sf = dg_xmalloc((g->n + 1) * sizeof(uint32_t));
    memcpy(pf, A->pstart, (g->n + 1) * sizeof(uint32_t));
    memcpy(sf, A->sstart, (g->n + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < g->ne; i++) {
        A->plist[pf[g->edges[i].to]++] = (uint32_t)i;
        A->slist[sf[g->edges[i].from]++] = (uint32_t)i;
    }
    free(pf);
    free(sf);
}

static void free_adj(adj *A)
{
    free(A->pstart);
    free(A->plist);
    free(A->sstart);
    free(A->slist);
}

static void report_cycle(sgraph *g, const adj *A, const uint8_t *done)
{
    /* Every unfinished node has an unfinished predecessor, so walking
     * predecessors from one must revisit a node: that loop is a cycle. */
    uint32_t start = UINT32_MAX;
    for (uint32_t i = 0; i < g->n; i++)
        if (!done[i] && !(g->nodes[i].flags & IR_F_ANON) &&
            (start == UINT32_MAX || g->nodes[i].key < g->nodes[start].key))
            start = i;
    if (start == UINT32_MAX)
        for (uint32_t i = 0; i < g->n && start == UINT32_MAX; i++)
            if (!done[i]) start = i;
    uint32_t *step = dg_xmalloc(g->n * sizeof *step);
    for (uint32_t i = 0; i < g->n; i++) step[i] = UINT32_MAX;
    uint32_t *path = dg_xmalloc((g->n + 1) * sizeof *path);
    uint32_t *via = dg_xmalloc((g->n + 1) * sizeof *via); /* edge into path[i] */
    uint32_t len = 0, v = start;
    while (step[v] == UINT32_MAX) {
        step[v] = len;
        path[len] = v;
        uint32_t e = UINT32_MAX;
        for (uint32_t k = A->pstart[v]; k < A->pstart[v + 1]; k++)
            if (!done[g->edges[A->plist[k]].from]) {
                e = A->plist[k];
                break;
            }
        via[len++] = e;
        v = g->edges[e].from;
    }
    /* path[b..len-1] is the loop: path[i] waits for path[i+1] (edge via[i]),
     * and path[len-1] waits for path[b]. Start it at its first named node
     * in source order so the message reads like the file. */
    uint32_t b = step[v], m = len - b;
    uint32_t first = b;
    for (uint32_t i = b; i < len; i++) {
        const snode *s = &g->nodes[path[i]];
        if (!(s->flags & IR_F_ANON) &&
            ((g->nodes[path[first]].flags & IR_F_ANON) || s->key < g->nodes[path[first]].key))
            first = i;
    }
    dg_buf msg = {0};
    uint32_t named = 0;
    for (uint32_t k = 0; k <= m; k++) {
        uint32_t i = b + (first - b + k) % m;
        const snode *s = &g->nodes[path[i]];
        if (s->flags & IR_F_ANON) continue;
        if (named == 32 && k < m) { /* a long loop: the notes show its start */
            dg_buf_puts(&msg, ", ...");
            break;
        }
        if (named++ == 0) dg_buf_printf(&msg, "'%s'", s->name);
        else if (named == 2) dg_buf_printf(&msg, " waits for '%s'", s->name);
        else dg_buf_printf(&msg, ", which waits for '%s'", s->name);
    }
    const snode *fs = &g->nodes[path[first]];
    dg_error(g->d, fs->pos, "dependency cycle: %s", msg.p);
    /* One note per hop, at the name that closes it. */
    uint32_t from_named = path[first], notes = 0;
    for (uint32_t k = 0; k < m && notes < 32; k++) {
        uint32_t i = b + (first - b + k) % m;
        uint32_t e = via[i];
        uint32_t next = g->edges[e].from;
        if (g->nodes[next].flags & IR_F_ANON) continue;
        dg_note(g->d, g->edges[e].pos, "'%s' waits for '%s' here",
                g->nodes[from_named].name, g->nodes[next].name);
        notes++;
        from_named = next;
    }
    dg_buf_free(&msg);
    free(step);
    free(path);
    free(via);
}

/* ---- warnings ------------------------------------------------------------- */

/* Warns when a predecessor of an AND node is also reached through another
 * predecessor. Only AND joins imply their inputs; an OR node implies none
 * of its own, so the search does not pass through it. The search from each
 * node is bounded to nodes after the earliest predecessor in topological
 * order, and a global budget keeps pathological graphs linear: past it the
 * (optional) warning is simply not looked for. */
static void warn_implied(sgraph *g, const ir_node *nodes, uint32_t n, src_pos *const *predpos)
{
    uint32_t *mark = dg_xcalloc(n ? n : 1, sizeof *mark);   /* search id that reached it */
    uint32_t *origin = dg_xcalloc(n ? n : 1, sizeof *origin);
    uint32_t *stack = dg_xmalloc((n + 1) * sizeof *stack);
    /* Longest-path level: an ancestor of a node is on a lower level, so a
     * search for the node's fellow predecessors never needs to go below the
     * lowest of their levels. In layered frame graphs that keeps each
     * search to a level or two. */
    uint32_t *level = dg_xcalloc(n ? n : 1, sizeof *level);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = 0; k < nodes[v].npred; k++)
            if (level[nodes[v].pred[k]] + 1 > level[v]) level[v] = level[nodes[v].pred[k]] + 1;
    long budget = 20L * 1000 * 1000;
    uint32_t id = 0;
    for (uint32_t v = 0; v < n && budget > 0; v++) {
        const ir_node *x = &nodes[v];
        if (x->join != IR_JOIN_AND || x->npred < 2) continue;
        id++;
        uint32_t lo = UINT32_MAX;
        for (uint32_t k = 0; k < x->npred; k++)
            if (level[x->pred[k]] < lo) lo = level[x->pred[k]];
        size_t sp = 0;
        for (uint32_t k = 0; k < x->npred; k++) {
            uint32_t p = x->pred[k];
            if (nodes[p].join != IR_JOIN_AND) continue;
            for (uint32_t q = 0; q < nodes[p].npred; q++) {
                uint32_t u = nodes[p].pred[q];
                if (level[u] < lo || mark[u] == id) continue;
                mark[u] = id;
                origin[u] = p;
                if (level[u] > lo) stack[sp++] = u; /* below lo: nothing to find */
            }
        }
        while (sp > 0 && budget > 0) {
            uint32_t u = stack[--sp];
            budget--;
            if (nodes[u].join != IR_JOIN_AND) continue;
            for (uint32_t q = 0; q < nodes[u].npred; q++) {
                uint32_t w = nodes[u].pred[q];
                budget--;
                if (level[w] < lo || mark[w] == id) continue;
                mark[w] = id;
                origin[w] = origin[u];
                if (level[w] > lo) stack[sp++] = w;
            }
        }
        for (uint32_t k = 0; k < x->npred; k++) {
            uint32_t p = x->pred[k];
            if (mark[p] != id) continue;
            const ir_node *pn = &nodes[p], *by = &nodes[origin[p]];
            if (pn->flags & IR_F_ANON) continue;
            if (by->flags & IR_F_ANON)
                dg_warning(g->d, predpos[v][k], "redundant dependency: '%s' is already "
                           "waited for through another dependency", pn->name);
            else
                dg_warning(g->d, predpos[v][k], "redundant dependency: '%s' already waits for '%s'",
                           by->name, pn->name);
        }
    }
    free(mark);
    free(origin);
    free(stack);
    free(level);
}

typedef struct pred_pair {
    uint32_t idx;
    src_pos pos;
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

/* ---- one graph ------------------------------------------------------------ */

static int lower_graph(sgraph *g, ir_graph *out)
{
    const ast_graph *ag = g->ag;
    dg_diag *d = g->d;
    int errors0 = d->nerrors;
    uint64_t decl = 0;

    /* Pass 1: declare every name first, so uses may come before them. */
    uint32_t *stmt_node = NULL;
    size_t nstmts = 0;
    for (const ast_stmt *st = ag->stmts; st; st = st->next) nstmts++;
    stmt_node = dg_xmalloc((nstmts + 1) * sizeof *stmt_node);
    /* Sized up front: growing these by doubling costs copies and, for big
     * graphs, twice the peak memory. */
    g->cap = (uint32_t)(nstmts < DG_MAX_NODES ? nstmts : DG_MAX_NODES) + 16;
    g->nodes = dg_xmalloc(g->cap * sizeof *g->nodes);
    g->ecap = 2 * nstmts + 16;
    g->edges = dg_xmalloc(g->ecap * sizeof *g->edges);
    dg_map_reserve(&g->names, nstmts);
    size_t si = 0;
    for (const ast_stmt *st = ag->stmts; st; st = st->next, si++) {
        stmt_node[si] = UINT32_MAX;
        if (!st->name) continue;
        const char *what = st->kind == AST_TASK ? "task name" : "gate name";
        check_name(d, st->pos, st->name, what);
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
    /* Pass 2: clauses and expressions. */
    si = 0;
    decl = 0;
    for (const ast_stmt *st = ag->stmts; st && !g->too_many && !d->stop; st = st->next, si++) {
        uint32_t n = stmt_node[si];
        if (n == UINT32_MAX) continue;
        g->owner_decl = g->nodes[n].key >> 32;
        g->seq = 0;
        if (st->kind == AST_TASK) {
            task_clauses(g, n, st);
            snode *s = &g->nodes[n];
            if (!s->func) s->func = dg_printf(g->a, "%s_%s", ag->name, s->name);
        } else {
            lower(g, n, st->expr);
        }
    }
    free(stmt_node);

    uint32_t ntasks = 0;
    for (uint32_t i = 0; i < g->n; i++) ntasks += g->nodes[i].kind == IR_TASK;
    if (ntasks == 0 && !ag->syntax_errors && !g->too_many)
        dg_error(d, ag->pos, "graph '%s' has no tasks", ag->name);
    if (g->too_many || d->stop) return -1;
    /* With other errors (an unknown name, a name defined twice) the edges
     * that could be resolved still form a graph: look for cycles in it too,
     * so one run reports every error instead of the cycle only after the
     * names are fixed. Unresolved references add no edge, so no cycle is
     * made up. */
    int had_errors = d->nerrors != errors0;

    /* Deduplicate edges (a, a): the second mention is redundant. */
    adj A;
    build_adj(g, &A);
    {
        uint32_t *stamp = dg_xcalloc(g->n, sizeof *stamp);
        uint8_t *dead = dg_xcalloc(g->ne + 1, 1);
        int any = 0;
        for (uint32_t v = 0; v < g->n; v++) {
            for (uint32_t k = A.pstart[v]; k < A.pstart[v + 1]; k++) {
                const sedge *e = &g->edges[A.plist[k]];
                if (stamp[e->from] == v + 1) {
                    dead[A.plist[k]] = 1;
                    any = 1;
                    if (!ag->syntax_errors && !had_errors)
                        dg_warning(d, e->pos, "'%s' is listed more than once",
                                   g->nodes[e->from].name);
                    continue;
                }
                stamp[e->from] = v + 1;
            }
        }
        if (any) {
            size_t w = 0;
            for (size_t i = 0; i < g->ne; i++)
                if (!dead[i]) g->edges[w++] = g->edges[i];
            g->ne = w;
            free_adj(&A);
            build_adj(g, &A);
        }
        free(stamp);
        free(dead);
    }

    /* Kahn's algorithm, taking the ready node that comes first in the source
     * so the order (and every output) is deterministic and reads naturally. */
    uint32_t *indeg = dg_xcalloc(g->n, sizeof *indeg);
    uint8_t *done = dg_xcalloc(g->n, 1);
    uint32_t *order = dg_xmalloc((g->n + 1) * sizeof *order);
    heap h = {dg_xmalloc((g->n + 1) * sizeof(hent)), 0};
    for (uint32_t v = 0; v < g->n; v++) {
        indeg[v] = A.pstart[v + 1] - A.pstart[v];
        if (!indeg[v]) hpush(&h, g->nodes[v].key, v);
    }
    uint32_t no = 0;
    while (h.n) {
        uint32_t v = hpop(&h);
        done[v] = 1;
        order[no++] = v;
        for (uint32_t k = A.sstart[v]; k < A.sstart[v + 1]; k++) {
            uint32_t w = g->edges[A.slist[k]].to;
            if (--indeg[w] == 0) hpush(&h, g->nodes[w].key, w);
        }
    }
    free(h.e);
    free(indeg);
    if (no < g->n) {
        report_cycle(g, &A, done);
        free(done);
        free(order);
        free_adj(&A);
        return -1;
    }
    free(done);
    if (had_errors) {
        free(order);
        free_adj(&A);
        return -1;
    }

    /* Build the IR in that order. */
    uint32_t *rank = dg_xmalloc((g->n + 1) * sizeof *rank);
    for (uint32_t i = 0; i < g->n; i++) rank[order[i]] = i;
    ir_node *nodes = dg_alloc(g->a, (g->n ? g->n : 1) * sizeof *nodes);
    uint32_t *lists = dg_alloc(g->a, (2 * g->ne + 1) * sizeof *lists);
    /* Where each predecessor is named, aligned with the pred lists: only
     * the warnings need it, so it stays out of the IR. */
    src_pos *pposbuf = dg_xmalloc((g->ne + 1) * sizeof *pposbuf);
    src_pos **predpos = dg_xmalloc((g->n + 1) * sizeof *predpos);
    pred_pair *pairs = dg_xmalloc((g->ne + 1) * sizeof *pairs);
    size_t lp = 0, pp = 0;
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
        /* Ascending index order: deterministic, and back ends may rely on it. */
        uint32_t *pl = lists + lp;
        x->npred = A.pstart[v + 1] - A.pstart[v];
        for (uint32_t k = 0; k < x->npred; k++) {
            const sedge *e = &g->edges[A.plist[A.pstart[v] + k]];
            pairs[k].idx = rank[e->from];
            pairs[k].pos = e->pos;
        }
        qsort(pairs, x->npred, sizeof *pairs, cmp_pair);
        predpos[i] = pposbuf + pp;
        for (uint32_t k = 0; k < x->npred; k++) {
            pl[k] = pairs[k].idx;
            pposbuf[pp++] = pairs[k].pos;
        }
        lp += x->npred;
        uint32_t *sl = lists + lp;
        x->nsucc = A.sstart[v + 1] - A.sstart[v];
        for (uint32_t k = 0; k < x->nsucc; k++)
            sl[k] = rank[g->edges[A.slist[A.sstart[v] + k]].to];
        qsort(sl, x->nsucc, sizeof *sl, cmp_u32);
        lp += x->nsucc;
        x->pred = pl;
        x->succ = sl;
    }
    free(pairs);
    free(rank);
    free(order);
    free_adj(&A);

    out->name = ag->name;
    out->ctype = ag->ctype ? ag->ctype : "void *";
    out->pos = ag->pos;
    out->nodes = nodes;
    out->nnodes = g->n;
    out->nedges = (uint32_t)g->ne;

    if (!ag->syntax_errors) {
        for (uint32_t i = 0; i < g->n; i++)
            if (nodes[i].kind == IR_GATE && !(nodes[i].flags & IR_F_ANON) && nodes[i].nsucc == 0)
                dg_warning(d, nodes[i].pos, "gate '%s' is never waited for", nodes[i].name);
        warn_implied(g, nodes, g->n, predpos);
    }
    free(predpos);
    free(pposbuf);
    return 0;
}

/* ---- generated C names, across the whole file ----------------------------- */

typedef enum cname_kind { CN_RUN, CN_TASK, CN_PARALLEL, CN_COUNT, CN_PRED } cname_kind;

typedef struct cname {
    const char *name;
    cname_kind kind;
    const char *ctype;
    int via_call;        /* named by `call`, so sharing it is intended */
    src_pos pos;
    const char *owner;   /* the task, or the graph for CN_RUN */
} cname;

typedef struct cnames {
    dg_map map;
    cname *v;
    size_t n, cap;
} cnames;

/* Messages are only built when there is something to report: a 100k-node
 * graph should not format 100k descriptions it never prints. */
static const char *describe(const cname *c, char *buf, size_t n)
{
    switch (c->kind) {
    case CN_RUN: snprintf(buf, n, "the run function of graph '%s'", c->owner); break;
    case CN_COUNT: snprintf(buf, n, "the count function of task '%s'", c->owner); break;
    case CN_PRED: snprintf(buf, n, "the predicate of task '%s'", c->owner); break;
    default: snprintf(buf, n, "the function of task '%s'", c->owner); break;
    }
    return buf;
}

static void claim(cnames *C, dg_diag *d, cname x)
{
    char dx[300], de[300];
    int i = dg_map_get(&C->map, x.name);
    if (i >= 0) {
        const cname *e = &C->v[i];
        int same_ctype = strcmp(e->ctype, x.ctype) == 0;
        if (e->kind == x.kind && same_ctype && (x.kind == CN_PRED ||
            (e->via_call && x.via_call && (x.kind == CN_TASK || x.kind == CN_PARALLEL ||
                                          x.kind == CN_COUNT))))
            return; /* one user function shared on purpose */
        if (e->via_call && x.via_call &&
            ((e->kind == CN_TASK && x.kind == CN_PARALLEL) ||
             (e->kind == CN_PARALLEL && x.kind == CN_TASK))) {
            dg_error(d, x.pos, "call name '%s' is used by tasks of different shapes "
                     "(parallel and not)", x.name);
            dg_note(d, e->pos, "%s is here", describe(e, de, sizeof de));
            return;
        }
        if (e->kind == x.kind && !same_ctype && x.via_call && e->via_call) {
            dg_error(d, x.pos, "C function '%s' would be declared with two context types "
                     "('%s' and '%s')", x.name, e->ctype, x.ctype);
            dg_note(d, e->pos, "%s is here", describe(e, de, sizeof de));
            return;
        }
        if (x.kind == CN_COUNT && e->kind == CN_COUNT) return; /* reported with its task */
        dg_error(d, x.pos, "generated C name '%s' of %s collides with %s", x.name,
                 describe(&x, dx, sizeof dx), describe(e, de, sizeof de));
        dg_note(d, e->pos, "%s is here", describe(e, de, sizeof de));
        return;
    }
    if (C->n == C->cap) {
        C->cap = C->cap ? C->cap * 2 : 64;
        C->v = dg_xrealloc(C->v, C->cap * sizeof *C->v);
    }
    C->v[C->n] = x;
    dg_map_put(&C->map, x.name, (int)C->n);
    C->n++;
}

static void check_c_names(const ir_program *p, dg_diag *d, dg_arena *a)
{
    cnames C = {0};
    size_t total = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++) total += p->graphs[gi].nnodes + 1;
    dg_map_reserve(&C.map, total);
    C.cap = total + 16;
    C.v = dg_xmalloc(C.cap * sizeof *C.v);
    for (size_t gi = 0; gi < p->ngraphs && !d->stop; gi++) {
        const ir_graph *g = &p->graphs[gi];
        cname r = {dg_printf(a, "%s_run", g->name), CN_RUN, g->ctype, 0, g->pos, g->name};
        claim(&C, d, r);
        for (uint32_t i = 0; i < g->nnodes; i++) {
            const ir_node *x = &g->nodes[i];
            if (x->kind != IR_TASK) continue;
            int par = (x->flags & IR_F_PARALLEL) != 0, call = (x->flags & IR_F_CALL) != 0;
            cname t = {x->func, par ? CN_PARALLEL : CN_TASK, g->ctype, call, x->pos, x->name};
            claim(&C, d, t);
            if (par) {
                cname c = {dg_printf(a, "%s_count", x->func), CN_COUNT, g->ctype, call, x->pos,
                           x->name};
                claim(&C, d, c);
            }
            if (x->when) {
                cname w = {x->when, CN_PRED, g->ctype, 1, x->pos, x->name};
                claim(&C, d, w);
            }
        }
    }
    dg_map_free(&C.map);
    free(C.v);
}

/* ---- the file ------------------------------------------------------------- */

ir_program *dg_sema(const ast_file *f, const char *path, dg_diag *d, dg_arena *a)
{
    ir_program *p = dg_alloc(a, sizeof *p);
    p->path = path;
    size_t ninc = 0, ng = 0;
    for (const ast_include *i = f->includes; i; i = i->next) ninc++;
    for (const ast_graph *g = f->graphs; g; g = g->next) ng++;
    const char **incs = dg_alloc(a, (ninc + 1) * sizeof *incs);
    ninc = 0;
    for (const ast_include *i = f->includes; i; i = i->next) incs[ninc++] = i->path;
    p->includes = incs;
    p->nincludes = ninc;
    const char **files = dg_alloc(a, sizeof *files);
    files[0] = path;
    p->files = files;
    p->nfiles = 1;

    ir_graph *graphs = dg_alloc(a, (ng + 1) * sizeof *graphs);
    dg_map gnames = {0};
    const ast_graph **gdecl = dg_xmalloc((ng + 1) * sizeof *gdecl);
    size_t out = 0;
    int ok = 1;
    for (const ast_graph *ag = f->graphs; ag && !d->stop; ag = ag->next) {
        if (!ag->name) continue;
        check_name(d, ag->pos, ag->name, "graph name");
        int prev = dg_map_get(&gnames, ag->name);
        if (prev >= 0) {
            dg_error(d, ag->pos, "graph '%s' is defined twice", ag->name);
            dg_note(d, gdecl[prev]->pos, "previous definition is here");
            ok = 0;
            continue;
        }
        gdecl[out] = ag;
        dg_map_put(&gnames, ag->name, (int)out);
        sgraph g;
        memset(&g, 0, sizeof g);
        g.d = d;
        g.a = a;
        g.ag = ag;
        if (lower_graph(&g, &graphs[out]) == 0) out++;
        else {
            ok = 0;
            /* Keep the slot's name reserved for the duplicate check. */
            graphs[out].name = ag->name;
            graphs[out].ctype = "void *";
            graphs[out].pos = ag->pos;
            out++;
        }
        free(g.nodes);
        free(g.edges);
        dg_map_free(&g.names);
    }
    dg_map_free(&gnames);
    free(gdecl);
    p->graphs = graphs;
    p->ngraphs = out;
    if (ok && !d->stop) check_c_names(p, d, a);
    return p;
}
