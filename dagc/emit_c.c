/*
 * emit_c.c - the C back end. Turns the IR into template data (one dictionary
 * per graph, one item per node) and renders the two templates. The C
 * declarations and definitions live in templates/; this file only decides
 * values: names, C expressions for the table fields (flag sets, successor
 * rows, string literals), the context type's declarators and the include
 * spellings.
 */
#include "emit_c.h"
#include "perframe.h"
#include "costs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Declares `name` with the context type, which is a C type name (an
 * abstract declarator): the name goes where the declarator's identifier
 * would be, i.e. before the first ')' or '[' or else at the end.
 *   "struct game *" -> "struct game *ctx"
 *   "void (*)(int)" -> "void (*ctx)(int)"
 *   "char *const"   -> "char *const ctx" */
static void param(dg_buf *b, const char *ctype, const char *name, bool cxx)
{
    size_t n = strlen(ctype);
    while (n && ctype[n - 1] == ' ')
        n--;
    size_t at = strcspn(ctype, ")[");
    if (cxx) {
        /* C++: a template's arguments hold no declarator
         * (std::function<void(int)> *ctx); C has no '<' outside
         * expressions, so this is for C++ type-ids only. */
        int depth = 0;
        for (at = 0; at < n; at++) {
            char ch = ctype[at];
            if (ch == '<') depth++;
            else if (ch == '>' && depth) depth--;
            else if (!depth && (ch == ')' || ch == '[')) break;
        }
    }
    if (at > n)
        at = n;
    size_t pre = at;
    while (pre && ctype[pre - 1] == ' ')
        pre--;
    dg_buf_put(b, ctype, pre);
    if (pre && ctype[pre - 1] != '*' && ctype[pre - 1] != '(' && !(cxx && ctype[pre - 1] == '&'))
        dg_buf_puts(b, " ");
    dg_buf_puts(b, name);
    dg_buf_put(b, ctype + at, n - at);
}

/* A file name inside a C comment: "*" "/" must not end the comment. */
static void comment_safe(dg_buf *b, const char *s)
{
    for (; *s; s++) {
        dg_buf_put(b, s, 1);
        if (s[0] == '*' && s[1] == '/')
            dg_buf_puts(b, " ");
        if (*s == '\n' || *s == '\r')
            b->p[b->len - 1] = ' ';
    }
}

/* A C string literal body for s. */
static void c_string(dg_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            dg_buf_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            dg_buf_printf(b, "\\%03o", ch);
        else
            dg_buf_put(b, s, 1);
    }
}

static void set_buf(tpl_dict *d, const char *key, dg_buf *b)
{
    tpl_set(d, key, b->p ? b->p : "");
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

static const char *kind_name(ir_kind k) { return k == IR_GATE ? "DAGRT_NODE_GATE" : "DAGRT_NODE_TASK"; }
static const char *join_name(ir_join j) { return j == IR_JOIN_OR ? "DAGRT_JOIN_OR" : "DAGRT_JOIN_AND"; }

static void flags_expr(dg_buf *b, unsigned f)
{
    static const struct { unsigned ir; const char *rt; } map[] = {
        {IR_F_MAIN, "DAGRT_NODE_MAIN"},         {IR_F_HOT, "DAGRT_NODE_HOT"},
        {IR_F_FIBER, "DAGRT_NODE_FIBER"},       {IR_F_PARALLEL, "DAGRT_NODE_PARALLEL"},
        {IR_F_WHEN, "DAGRT_NODE_WHEN"},
    };
    bool any = false;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!(f & map[i].ir))
            continue;
        if (any)
            dg_buf_puts(b, " | ");
        dg_buf_puts(b, map[i].rt);
        any = true;
    }
    if (!any)
        dg_buf_puts(b, "0");
}

/* The trampoline's name (G__dagc_WHAT_INDEX), or NULL where the node has
 * none. b is scratch. */
static void fn_name(tpl_dict *nd, const char *key, bool has, const char *graph,
                    const char *what, uint32_t index, dg_buf *b)
{
    if (!has) {
        tpl_set_ref(nd, key, "NULL");
        return;
    }
    dg_buf_puts(b, graph);
    dg_buf_puts(b, "__dagc_");
    dg_buf_puts(b, what);
    dg_buf_putc(b, '_');
    dg_buf_put_int(b, index);
    set_buf(nd, key, b);
}

/* What one graph's lazy lists (nodes, succ_rows) read while the templates
 * render: their items are made per item, on demand (template.h), so the
 * template data stays small however many nodes the graph has. */
typedef struct graph_ctx {
    const ir_graph *g;
    int *fid, *wid;          /* per node: its function's and predicate's id, or -1 */
    int *wids;               /* every node's predicate ids, in order, one after another */
    uint32_t *wfirst;        /* per node: where its ids start in wids */
    uint32_t *succ_first;    /* per node: where its successors start */
    uint32_t *rows;          /* the nodes that have successors */
    size_t nrows;
    /* The next frame's side of `prev`: psucc[psucc_first[x] ...] are
     * the nodes with a `prev x` input (an AND node's own is implicit, see
     * keeps_prev), nprev[v] how many such inputs v has; prows the nodes
     * with any. */
    uint32_t *psucc_first, *psucc, *nprev, *prows;
    size_t nprows, npsucc;
    uint32_t *cost;          /* per node: its cost in the tables (costs.c) */
    dg_buf b;                /* scratch */
} graph_ctx;

static void fill_node(void *ctx, size_t i, tpl_dict *nd)
{
    graph_ctx *gc = ctx;
    const ir_graph *g = gc->g;
    const ir_node *n = &g->nodes[i];
    dg_buf *b = &gc->b;
    tpl_set_int(nd, "index", i);
    tpl_set_int(nd, "func_id", gc->fid[i]);
    tpl_set_int(nd, "when_id", gc->wid[i]);
    /* All its predicates' ids ("-1" for none), for templates that
     * implement the predicates (tests/e2e's checker). */
    tpl_set_int(nd, "nwhen_ids", gc->wfirst[i + 1] - gc->wfirst[i]);
    for (uint32_t k = gc->wfirst[i]; k < gc->wfirst[i + 1]; k++) {
        if (k > gc->wfirst[i])
            dg_buf_puts(&gc->b, ", ");
        dg_buf_put_int(&gc->b, gc->wids[k]);
    }
    if (gc->wfirst[i] == gc->wfirst[i + 1])
        dg_buf_puts(&gc->b, "-1");
    set_buf(nd, "when_ids", &gc->b);
    c_string(b, n->name);
    set_buf(nd, "name", b);
    tpl_set_ref(nd, "kind", kind_name(n->kind));
    tpl_set_ref(nd, "join", join_name(n->join));
    flags_expr(b, n->flags);
    set_buf(nd, "flags", b);
    tpl_set_int(nd, "npred", n->npred);
    tpl_set_int(nd, "succ_first", gc->succ_first[i]);
    tpl_set_int(nd, "nsucc", n->nsucc);
    tpl_set_int(nd, "grain", (n->flags & IR_F_PARALLEL) ? n->grain : 0);
    tpl_set_int(nd, "nprev", gc->nprev[i]);
    tpl_set_int(nd, "psucc_first", gc->psucc_first[i]);
    tpl_set_int(nd, "npsucc", gc->psucc_first[i + 1] - gc->psucc_first[i]);
    for (uint32_t k = 0; k < n->nprev; k++)
        tpl_set_int(tpl_add(nd, "prevs"), "prev", n->prev[k]);
    bool task = n->kind == IR_TASK;
    bool par = task && (n->flags & IR_F_PARALLEL);
    bool when = task && (n->flags & IR_F_WHEN) && n->when;
    if (task) {
        tpl_set_ref(nd, "func", n->func);
        tpl_set_ref(nd, par ? "parallel" : "plain", "1");
        /* (v2.2) A coroutine task's trampoline runs its coroutine on the
         * node's fiber (C++ output only: sema refuses it for C). */
        if (n->flags & IR_F_CORO)
            tpl_set_ref(nd, "coro", "1");
    }
    if (when) {
        tpl_set_ref(nd, "has_when", "1");
        tpl_set_ref(nd, "when", n->when);
        /* The trampoline asks them all, in order, stopping at a false one. */
        for (uint32_t k = 0; k < n->nand_when; k++)
            tpl_set_ref(tpl_add(nd, "and_when"), "pred", n->and_when[k]);
    }
    uint32_t index = (uint32_t)i;
    fn_name(nd, "run", task && !par, g->name, "run", index, b);
    fn_name(nd, "run_range", par, g->name, "range", index, b);
    fn_name(nd, "count", par, g->name, "count", index, b);
    fn_name(nd, "when_fn", when, g->name, "when", index, b);
}

static void fill_row(void *ctx, size_t k, tpl_dict *rd)
{
    graph_ctx *gc = ctx;
    uint32_t i = gc->rows[k];
    const ir_node *n = &gc->g->nodes[i];
    dg_buf *b = &gc->b;
    for (uint32_t j = 0; j < n->nsucc; j++) {
        dg_buf_put_int(b, n->succ[j]);
        dg_buf_puts(b, ", ");
    }
    dg_buf_puts(b, "/* ");
    comment_safe(b, n->name);
    dg_buf_puts(b, " [");
    dg_buf_put_int(b, i);
    dg_buf_puts(b, "] */");
    set_buf(rd, "row", b);
}

/* A cost row: one node's, named (costs.c resolves them). */
static void fill_cost(void *ctx, size_t i, tpl_dict *rd)
{
    graph_ctx *gc = ctx;
    dg_buf *b = &gc->b;
    dg_buf_put_int(b, gc->cost[i]);
    dg_buf_puts(b, ", /* ");
    comment_safe(b, gc->g->nodes[i].name);
    dg_buf_puts(b, " [");
    dg_buf_put_int(b, i);
    dg_buf_puts(b, "] */");
    set_buf(rd, "row", b);
}

static void fill_prow(void *ctx, size_t k, tpl_dict *rd)
{
    graph_ctx *gc = ctx;
    uint32_t i = gc->prows[k];
    dg_buf *b = &gc->b;
    for (uint32_t j = gc->psucc_first[i]; j < gc->psucc_first[i + 1]; j++) {
        dg_buf_put_int(b, gc->psucc[j]);
        dg_buf_puts(b, ", ");
    }
    dg_buf_puts(b, "/* prev ");
    comment_safe(b, gc->g->nodes[i].name);
    dg_buf_puts(b, " [");
    dg_buf_put_int(b, i);
    dg_buf_puts(b, "] */");
    set_buf(rd, "row", b);
}

static uint32_t x_of(const ir_node *v, uint32_t k) { return v->prev[k]; }

/* An AND node's `prev` of itself adds nothing to its implicit wait for its
 * own last frame; an OR node's is one of its alternatives (it can fire as
 * soon as its last frame is done), so it stays. */
static bool keeps_prev(const ir_node *v, uint32_t vi, uint32_t k)
{
    return v->prev[k] != vi || v->join == IR_JOIN_OR;
}

/* Inverts the `prev` lists: for each node x, the nodes of the next
 * frame that wait for it (an AND node not for itself), in index order. */
static void prev_lists(graph_ctx *gc)
{
    const ir_graph *g = gc->g;
    uint32_t n = g->nnodes;
    gc->psucc_first = dg_xcalloc((size_t)n + 2, sizeof *gc->psucc_first);
    gc->nprev = dg_xcalloc((size_t)n + 1, sizeof *gc->nprev);
    gc->prows = dg_xcalloc((size_t)n + 1, sizeof *gc->prows);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = 0; k < g->nodes[v].nprev; k++)
            if (keeps_prev(&g->nodes[v], v, k)) {
                gc->psucc_first[g->nodes[v].prev[k] + 2]++;
                gc->nprev[v]++;
            }
    for (uint32_t x = 0; x < n; x++)
        gc->psucc_first[x + 2] += gc->psucc_first[x + 1];
    gc->npsucc = gc->psucc_first[n + 1];
    gc->psucc = dg_xcalloc(gc->npsucc + 1, sizeof *gc->psucc);
    /* psucc_first[x + 1] is x's fill cursor; after the pass it is x's end. */
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = 0; k < g->nodes[v].nprev; k++)
            if (keeps_prev(&g->nodes[v], v, k))
                gc->psucc[gc->psucc_first[x_of(&g->nodes[v], k) + 1]++] = v;
    for (uint32_t x = 0; x < n; x++)
        if (gc->psucc_first[x + 1] > gc->psucc_first[x])
            gc->prows[gc->nprows++] = x;
}

static void graph_ctx_free(graph_ctx *gc)
{
    free(gc->psucc_first);
    free(gc->psucc);
    free(gc->nprev);
    free(gc->prows);
    free(gc->fid);
    free(gc->wid);
    free(gc->wids);
    free(gc->wfirst);
    free(gc->succ_first);
    free(gc->rows);
    free(gc->cost);
    dg_buf_free(&gc->b);
}

static void graph_data(const ir_graph *g, tpl_dict *gd, graph_ctx *gc, bool cxx)
{
    dg_buf b = {0};
    tpl_set_ref(gd, "name", g->name);
    tpl_set_ref(gd, "graph", g->name);
    const char *ctype = g->ctype && g->ctype[0] ? g->ctype : "void *";
    tpl_set_ref(gd, "ctype", ctype);
    param(&b, ctype, "ctx", cxx);
    set_buf(gd, "param", &b);
    /* The generated code carries the context as a pointer to G_run's own
     * parameter, so any object type works (function pointers included,
     * which ISO C cannot convert to void *), const or not. */
    dg_buf nm = {0};
    dg_buf_printf(&nm, "%s__dagc_ctx", g->name);
    param(&b, ctype, nm.p, cxx);
    set_buf(gd, "ctx_decl", &b);
    tpl_set(gd, "ctx_t", nm.p);
    dg_buf_free(&nm);
    /* struct/union tags in the context type get a file-scope declaration in
     * the header, so prototypes never declare a tag of their own (which C
     * scopes to the prototype) when no include declares it first. */
    for (const char *q = ctype; *q;) {
        size_t kw = strncmp(q, "struct", 6) == 0 ? 6 : strncmp(q, "union", 5) == 0 ? 5 : 0;
        bool starts = q == ctype || !(isalnum((unsigned char)q[-1]) || q[-1] == '_');
        if (kw && starts && !(isalnum((unsigned char)q[kw]) || q[kw] == '_')) {
            const char *t = q + kw;
            while (*t == ' ')
                t++;
            size_t n = 0;
            while (isalnum((unsigned char)t[n]) || t[n] == '_')
                n++;
            if (n) {
                dg_buf_put(&b, q, kw);
                dg_buf_puts(&b, " ");
                dg_buf_put(&b, t, n);
                set_buf(tpl_add(gd, "tags"), "tag", &b);
            }
            q = t + n;
            continue;
        }
        q++;
    }
    tpl_set_int(gd, "nnodes", g->nnodes);
    uint32_t nedges = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        nedges += g->nodes[i].nsucc;
    tpl_set_int(gd, "nedges", nedges);

    /* Prototypes, in node order, each function once: function names are
     * shared by tasks with the same `call`, and predicates by several tasks.
     * One map of the names declared so far keeps this linear. */
    dg_map declared = {0};
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->kind != IR_TASK)
            continue;
        if (dg_map_get(&declared, n->func) < 0) {
            dg_map_put(&declared, n->func, 1);
            /* A coroutine's is C++ (dagrtpp::task<>): the header declares
             * it apart, outside its extern "C" block. */
            tpl_dict *pd = tpl_add(gd, (n->flags & IR_F_CORO) ? "coro_protos" : "protos");
            tpl_set_ref(pd, "func", n->func);
            tpl_set_ref(pd, (n->flags & IR_F_PARALLEL) ? "parallel" : "plain", "1");
            if (n->flags & IR_F_CORO)
                tpl_set_ref(gd, "has_coro", "1");
        }
        for (uint32_t k = 0; (n->flags & IR_F_WHEN) && n->when && k <= n->nand_when; k++) {
            const char *w = k ? n->and_when[k - 1] : n->when;
            if (dg_map_get(&declared, w) >= 0)
                continue;
            dg_map_put(&declared, w, 1);
            tpl_set_ref(tpl_add(gd, "protos"), "when", w);
        }
    }
    dg_map_free(&declared);

    /* Distinct functions and predicates, for templates that implement them
     * (tests/e2e's checker does): several tasks may share one `call`. The
     * maps give each name the id of its first task. */
    int *fid = dg_xcalloc((size_t)g->nnodes + 1, sizeof *fid);
    int *wid = dg_xcalloc((size_t)g->nnodes + 1, sizeof *wid);
    size_t nwall = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == IR_TASK && (g->nodes[i].flags & IR_F_WHEN) && g->nodes[i].when)
            nwall += 1 + g->nodes[i].nand_when;
    int *wlist = dg_xcalloc(nwall + 1, sizeof *wlist);
    uint32_t *wfirst = dg_xcalloc((size_t)g->nnodes + 1, sizeof *wfirst);
    uint32_t nwl = 0;
    dg_map fids = {0}, wids = {0};
    int nf = 0, nw = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const ir_node *n = &g->nodes[i];
        fid[i] = wid[i] = -1;
        wfirst[i] = nwl;
        if (n->kind != IR_TASK)
            continue;
        fid[i] = dg_map_get(&fids, n->func);
        if (fid[i] < 0) {
            fid[i] = nf++;
            dg_map_put(&fids, n->func, fid[i]);
            tpl_dict *fd = tpl_add(gd, "funcs");
            tpl_set_ref(fd, "func", n->func);
            tpl_set_int(fd, "fid", fid[i]);
            tpl_set_ref(fd, (n->flags & IR_F_PARALLEL) ? "parallel" : "plain", "1");
        }
        if (!((n->flags & IR_F_WHEN) && n->when))
            continue;
        /* The node's id is its first predicate's; the others get theirs. */
        for (uint32_t k = 0; k <= n->nand_when; k++) {
            const char *w = k ? n->and_when[k - 1] : n->when;
            int id = dg_map_get(&wids, w);
            if (id < 0) {
                id = nw++;
                dg_map_put(&wids, w, id);
                tpl_dict *wd = tpl_add(gd, "whens");
                tpl_set_ref(wd, "when", w);
                tpl_set_int(wd, "wid", id);
            }
            if (k == 0)
                wid[i] = id;
            wlist[nwl++] = id;
        }
    }
    wfirst[g->nnodes] = nwl;
    dg_map_free(&fids);
    dg_map_free(&wids);
    tpl_set_int(gd, "nfuncs", nf);
    tpl_set_int(gd, "nwhens", nw);

    gc->g = g;
    gc->fid = fid;
    gc->wid = wid;
    gc->wids = wlist;
    gc->wfirst = wfirst;
    gc->succ_first = dg_xcalloc((size_t)g->nnodes + 1, sizeof *gc->succ_first);
    gc->rows = dg_xcalloc((size_t)g->nnodes + 1, sizeof *gc->rows);
    uint32_t first = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        gc->succ_first[i] = first;
        first += g->nodes[i].nsucc;
        if (g->nodes[i].nsucc)
            gc->rows[gc->nrows++] = i;
    }
    prev_lists(gc);
    tpl_set_int(gd, "npsucc", gc->npsucc);
    tpl_add_lazy(gd, "nodes", g->nnodes, fill_node, gc);
    tpl_add_lazy(gd, "succ_rows", gc->nrows, fill_row, gc);
    tpl_add_lazy(gd, "psucc_rows", gc->nprows, fill_prow, gc);
    /* Costs: only where some task has one (declared, or measured with
     * --costs); without any the tables say none (NULL) and plan mode
     * weighs every task the same. */
    gc->cost = dg_xcalloc((size_t)g->nnodes + 1, sizeof *gc->cost);
    if (dg_costs_resolve(g, gc->cost) > 0) {
        tpl_set_ref(gd, "has_costs", "1");
        tpl_add_lazy(gd, "cost_rows", g->nnodes, fill_cost, gc);
    }
    dg_buf_free(&b);
}

/* (v2.2) The copies of the typed per-frame resources that G's tasks access
 * and their accessors (perframe.h): `per_frame` set when there are any,
 * one `copies` item each (the member, the accessors' declarators). */
static void perframe_data(const ir_program *prog, const ir_graph *g, tpl_dict *gd, bool cxx)
{
    dg_perframe *pf = NULL;
    size_t n = dg_perframe_list(prog, g, &pf);
    dg_buf b = {0}, nm = {0};
    bool any = false;
    for (size_t k = 0; k < n; k++) {
        if (!pf[k].typed) continue;
        const ir_resource *r = &prog->resources[pf[k].res];
        tpl_dict *cd = tpl_add(gd, "copies");
        any = true;
        tpl_set_ref(cd, "res", r->name);
        param(&b, r->ctype, r->name, cxx);
        set_buf(cd, "member", &b);
        dg_buf_printf(&nm, DG_PERFRAME_COPY, g->name, r->name);
        set_buf(cd, "copy_fn", &nm);
        /* A pointer to the type is returned: `T *G_R_copy(void)`, or with
         * parentheses before an array's bounds: `int (*G_R_copy(void))[4]`
         * (a function pointer's own parentheses do: `void (**f(void))(int)`). */
        char at = r->ctype[strcspn(r->ctype, ")[")];
        bool paren = at == '[';
        for (int prev = 0; prev <= pf[k].prev; prev++) {
            /* The previous copy is const: `const T *`, but for a function
             * pointer the pointer itself: `void (*const *f(void))(int)`. */
            bool inner = prev && at == ')';
            dg_buf_printf(&nm, paren ? "(*" : inner ? "const *" : "*");
            dg_buf_printf(&nm, prev ? DG_PERFRAME_PREV : DG_PERFRAME_COPY, g->name, r->name);
            dg_buf_printf(&nm, paren ? "(void))" : "(void)");
            if (prev && !inner) dg_buf_puts(&b, "const ");
            param(&b, r->ctype, nm.p, cxx);
            set_buf(prev ? tpl_add(cd, "prev") : cd, prev ? "prev_decl" : "copy_decl", &b);
            nm.len = 0;
            nm.p[0] = '\0';
        }
    }
    if (any) tpl_set_ref(gd, "per_frame", "1");
    dg_buf_free(&b);
    dg_buf_free(&nm);
    free(pf);
}

/* DAGC_<NAME>_ from the header's name: a guard no user macro is likely to use. */
static void guard_name(dg_buf *b, const char *header_name)
{
    const char *base = strrchr(header_name, '/');
    base = base ? base + 1 : header_name;
    dg_buf_puts(b, "DAGC_");
    for (const char *s = base; *s; s++) {
        char ch = *s;
        if (ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        else if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
            ch = '_';
        dg_buf_put(b, &ch, 1);
    }
    dg_buf_puts(b, "_");
}

bool emit_c(const ir_program *prog, const char *header_name, const char *source_name,
            const emit_c_templates *t, dg_buf *h, dg_buf *c, char *err, size_t errlen)
{
    tpl_dict *d = tpl_dict_new();
    dg_buf b = {0};
    const char *path = prog->path ? prog->path : "input.dag";
    comment_safe(&b, path);
    set_buf(d, "source", &b);
    /* The file's stem (frame.dag -> frame), for templates that name files. */
    const char *base;
    size_t blen = dg_path_stem(path, &base);
    dg_buf_put(&b, base, blen);
    set_buf(d, "stem", &b);
    c_string(&b, header_name);
    set_buf(d, "header", &b);
    comment_safe(&b, header_name);
    set_buf(d, "header_comment", &b);
    comment_safe(&b, source_name ? source_name : "");
    set_buf(d, "source_name", &b);
    guard_name(&b, header_name);
    set_buf(d, "guard", &b);
    /* The header of --cxx output may see a C++ type (a reference, say). */
    if (t->cxx) tpl_set_ref(d, "cxx", "1");
    for (size_t i = 0; i < prog->nincludes; i++) {
        const char *inc = prog->includes[i];
        size_t n = strlen(inc);
        /* include "<stdio.h>" asks for a system header. C header names
         * have no escapes: a name with '"' can only be written <...>, one
         * with both '"' and '>' (or a newline) not at all. */
        if (n >= 2 && inc[0] == '<' && inc[n - 1] == '>' && !strchr(inc, '\n')) {
            dg_buf_puts(&b, inc);
        } else if (strchr(inc, '\n') || (strchr(inc, '"') && strchr(inc, '>'))) {
            dg_buf_puts(&b, "\"dagc: this include name cannot be written in C\"\n#error dagc: an include name contains both '\"' and '>'");
        } else if (strchr(inc, '"')) {
            dg_buf_printf(&b, "<%s>", inc);
        } else {
            dg_buf_printf(&b, "\"%s\"", inc);
        }
        set_buf(tpl_add(d, "includes"), "include", &b);
    }
    graph_ctx *gcs = dg_xcalloc(prog->ngraphs + 1, sizeof *gcs);
    for (size_t i = 0; i < prog->ngraphs; i++)
    {
        tpl_dict *gd = tpl_add(d, "graphs");
        graph_data(&prog->graphs[i], gd, &gcs[i], t->cxx);
        perframe_data(prog, &prog->graphs[i], gd, t->cxx);
        for (uint32_t k = 0; k < prog->graphs[i].nnodes; k++)
            if (prog->graphs[i].nodes[k].flags & IR_F_CORO)
                tpl_set_ref(d, "any_coro", "1");
    }
    dg_buf_free(&b);

    bool ok = tpl_render(t->header_name, t->header, d, h, err, errlen) &&
              tpl_render(t->source_name, t->source, d, c, err, errlen);
    tpl_dict_free(d);
    for (size_t i = 0; i < prog->ngraphs; i++)
        graph_ctx_free(&gcs[i]);
    free(gcs);
    return ok;
}
