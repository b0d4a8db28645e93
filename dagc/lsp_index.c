/* lsp_index.c - the language server's index (lsp.h): every name the
 * loaded files define or use, from the front end's syntax trees. Names
 * resolve as sema.c resolves them: tasks and gates within their graph,
 * graphs and resources across every file of the compilation. */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "stats.h"

static void add(lsp_index *x, const lsp_occ *o)
{
    if (!o->name || !o->pos.line) return; /* a name a syntax error ate */
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 256;
        x->occ = dg_xrealloc(x->occ, x->cap * sizeof *x->occ);
    }
    x->occ[x->n++] = *o;
}

/* Keys: "g NAME", "r NAME", "n FILE GRAPH NAME" (tasks and gates share a
 * graph's namespace), "f FILE". Separated by a byte no name or path has. */
static const char *key_node(lsp_index *x, const char *file, const char *graph, const char *name)
{
    return dg_printf(&x->arena, "n\x1f%s\x1f%s\x1f%s", file, graph ? graph : "", name);
}

static void walk_expr(lsp_index *x, const ast_expr *e, const dg_source *s, const char *fid,
                      const ast_graph *g, int depth)
{
    for (; e && depth < DG_MAX_NESTING + 8; e = e->next) {
        if (e->kind == AST_NAME) {
            lsp_occ o = {0};
            o.kind = LSP_TASK;
            o.pos = e->pos;
            o.src = s;
            o.name = e->name;
            o.len = e->name ? (uint32_t)strlen(e->name) : 0;
            o.graph = g;
            o.key = key_node(x, fid, g->name, e->name ? e->name : "");
            add(x, &o);
        } else {
            walk_expr(x, e->kids, s, fid, g, depth + 1);
        }
        if (depth == 0) break; /* the root has no siblings of its own */
    }
}

static void walk_names(lsp_index *x, const ast_name *n, const dg_source *s, const ast_graph *g)
{
    for (; n; n = n->next) {
        lsp_occ o = {0};
        o.kind = LSP_RESOURCE;
        o.pos = n->pos;
        o.src = s;
        o.name = n->name;
        o.len = n->name ? (uint32_t)strlen(n->name) : 0;
        o.graph = g;
        o.key = dg_printf(&x->arena, "r\x1f%s", n->name ? n->name : "");
        add(x, &o);
    }
}

/* The source an import of file fi at `im` loaded, or NULL. */
static const dg_source *imported(const dg_files *F, size_t fi, const ast_import *im)
{
    for (size_t k = 1; k < F->n; k++) {
        const dg_source *t = F->src[k];
        if (t->importer == F->src[fi] && t->import_line == im->pos.line &&
            t->import_col == im->pos.col)
            return t;
    }
    return NULL;
}

void lsp_index_build(lsp_index *x, const dg_files *F)
{
    memset(x, 0, sizeof *x);
    dg_arena_init(&x->arena);
    x->files = F;
    for (size_t fi = 0; fi < F->n; fi++) {
        const ast_file *f = F->ast[fi];
        const dg_source *s = F->src[fi];
        const char *fid = F->id[fi];
        if (!f) continue;
        for (const ast_import *im = f->imports; im; im = im->next) {
            lsp_occ o = {0};
            o.kind = LSP_FILE;
            o.pos = im->pos;
            o.src = s;
            o.name = im->path;
            /* the string with its quotes (escapes make it longer; rare) */
            o.len = (uint32_t)strlen(im->path) + 2;
            o.target = imported(F, fi, im);
            o.key = dg_printf(&x->arena, "f\x1f%s", im->path);
            add(x, &o);
        }
        for (const ast_name *r = f->resources; r; r = r->next) {
            lsp_occ o = {0};
            o.kind = LSP_RESOURCE;
            o.def = 1;
            o.pos = r->pos;
            o.src = s;
            o.name = r->name;
            o.len = r->name ? (uint32_t)strlen(r->name) : 0;
            o.key = dg_printf(&x->arena, "r\x1f%s", r->name ? r->name : "");
            add(x, &o);
        }
        for (const ast_graph *g = f->graphs; g; g = g->next) {
            if (!g->name) continue;
            lsp_occ o = {0};
            o.kind = LSP_GRAPH;
            o.def = 1;
            o.pos = g->pos;
            o.src = s;
            o.name = g->name;
            o.len = (uint32_t)strlen(g->name);
            o.graph = g;
            o.key = dg_printf(&x->arena, "g\x1f%s", g->name);
            add(x, &o);
            for (const ast_stmt *st = g->stmts; st; st = st->next) {
                lsp_occ d = {0};
                d.kind = st->kind == AST_GATE ? LSP_GATE : LSP_TASK;
                d.def = 1;
                d.pos = st->pos;
                d.src = s;
                d.name = st->name;
                d.len = st->name ? (uint32_t)strlen(st->name) : 0;
                d.graph = g;
                d.stmt = st;
                d.key = key_node(x, fid, g->name, st->name ? st->name : "");
                add(x, &d);
                if (st->kind == AST_GATE) walk_expr(x, st->expr, s, fid, g, 0);
                for (const ast_clause *c = st->clauses; c; c = c->next) {
                    if (c->kind == CL_AFTER) walk_expr(x, c->expr, s, fid, g, 0);
                    if (c->kind == CL_READS || c->kind == CL_WRITES) walk_names(x, c->names, s, g);
                    if (c->kind == CL_RUN && c->name) {
                        lsp_occ r = {0};
                        r.kind = LSP_GRAPH;
                        r.pos = c->arg_pos;
                        r.src = s;
                        r.name = c->name;
                        r.len = (uint32_t)strlen(c->name);
                        r.graph = g;
                        r.key = dg_printf(&x->arena, "g\x1f%s", c->name);
                        add(x, &r);
                    }
                }
            }
        }
    }
    dg_map_reserve(&x->defs, x->n);
    for (size_t i = 0; i < x->n; i++)
        if (x->occ[i].def && dg_map_get(&x->defs, x->occ[i].key) < 0)
            dg_map_put(&x->defs, x->occ[i].key, (int)i);
    /* The kind of a use follows its definition's (a name in an `after`
     * may be a task or a gate). */
    for (size_t i = 0; i < x->n; i++) {
        lsp_occ *o = &x->occ[i];
        if (o->def || o->kind != LSP_TASK) continue;
        const lsp_occ *d = lsp_index_def(x, o->key);
        if (d) o->kind = d->kind;
    }
}

void lsp_index_free(lsp_index *x)
{
    free(x->occ);
    dg_map_free(&x->defs);
    dg_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

const lsp_occ *lsp_index_at(const lsp_index *x, const dg_source *src, uint32_t line, uint32_t col)
{
    for (size_t i = 0; i < x->n; i++) {
        const lsp_occ *o = &x->occ[i];
        if (o->src == src && o->pos.line == line && col >= o->pos.col && col <= o->pos.col + o->len)
            return o;
    }
    return NULL;
}

const lsp_occ *lsp_index_def(const lsp_index *x, const char *key)
{
    int i = dg_map_get(&x->defs, key);
    return i >= 0 ? &x->occ[i] : NULL;
}

const dg_source *lsp_index_src(const lsp_index *x, const char *path)
{
    if (!path || !x->files) return NULL;
    for (size_t i = 0; i < x->files->n; i++)
        if (strcmp(x->files->src[i]->path, path) == 0) return x->files->src[i];
    return NULL;
}

int lsp_valid_name(const char *s)
{
    static const char *const kw[] = {
        "graph", "task", "gate", "include", "after", "on", "main", "hot", "fiber", "parallel",
        "grain", "call", "cost", "when", "and", "or", "import", "run", "resource", "reads",
        "writes", "prev", "coro",
    };
    if (!s || !*s || strlen(s) > 255) return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(p > s && c >= '0' && c <= '9')) return 0;
    }
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (strcmp(s, kw[i]) == 0) return 0;
    return 1;
}

/* ------------------------------------------------------------- hover */

static void put_expr(dg_buf *b, const ast_expr *e, int depth)
{
    if (!e) return;
    if (depth > 32) {
        dg_buf_puts(b, "...");
        return;
    }
    if (e->paren && depth > 0) dg_buf_putc(b, '(');
    if (e->kind == AST_NAME) {
        dg_buf_printf(b, "%s%s", e->prev ? "prev " : "", e->name ? e->name : "?");
    } else {
        int first = 1;
        for (const ast_expr *k = e->kids; k; k = k->next) {
            if (!first) dg_buf_puts(b, e->kind == AST_AND ? " and " : " or ");
            put_expr(b, k, depth + 1);
            first = 0;
        }
    }
    if (e->paren && depth > 0) dg_buf_putc(b, ')');
}

/* The gates an expression names, each once, with what they stand for. */
static void put_gates(const lsp_index *x, const lsp_occ *at, const ast_expr *e, dg_buf *b,
                      int depth)
{
    for (; e && depth < 32; e = e->next) {
        if (e->kind != AST_NAME) {
            put_gates(x, at, e->kids, b, depth + 1);
        } else if (e->name) {
            for (const ast_stmt *st = at->graph->stmts; st; st = st->next)
                if (st->kind == AST_GATE && st->name && strcmp(st->name, e->name) == 0) {
                    dg_buf_printf(b, "\n- gate `%s` = `", st->name);
                    put_expr(b, st->expr, 0);
                    dg_buf_puts(b, "`");
                    break;
                }
        }
        if (depth == 0) break;
    }
}

static const char *base_name(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}

static void hover_task(const lsp_index *x, const lsp_occ *d, dg_buf *b)
{
    const ast_stmt *st = d->stmt;
    const ast_clause *after = NULL;
    for (const ast_clause *c = st->clauses; c; c = c->next)
        if (c->kind == CL_AFTER && !after) after = c;
    dg_buf_printf(b, "**task** `%s` in graph `%s` (%s:%u)\n\n", st->name, d->graph->name,
                  base_name(d->src->path), d->pos.line);
    if (after && after->expr) {
        dg_buf_puts(b, "waits for: `");
        put_expr(b, after->expr, 0);
        dg_buf_puts(b, "`");
        put_gates(x, d, after->expr, b, 0);
        dg_buf_puts(b, "\n\n");
    } else {
        dg_buf_puts(b, "waits for nothing: a root of the graph\n\n");
    }
    dg_buf clauses = {0};
    uint64_t cost = 0;
    int has_cost = 0;
    for (const ast_clause *c = st->clauses; c; c = c->next) {
        if (c->kind == CL_AFTER) continue;
        if (clauses.len) dg_buf_puts(&clauses, ", ");
        switch (c->kind) {
        case CL_MAIN: dg_buf_puts(&clauses, "`on main`"); break;
        case CL_HOT: dg_buf_puts(&clauses, "`hot`"); break;
        case CL_FIBER: dg_buf_puts(&clauses, "`fiber`"); break;
        case CL_CORO: dg_buf_puts(&clauses, "`coro`"); break;
        case CL_PARALLEL:
            if (c->has_grain) dg_buf_printf(&clauses, "`parallel grain %llu`", (unsigned long long)c->value);
            else dg_buf_puts(&clauses, "`parallel`");
            break;
        case CL_CALL: dg_buf_printf(&clauses, "`call %s`", c->name ? c->name : "?"); break;
        case CL_WHEN: dg_buf_printf(&clauses, "`when %s`", c->name ? c->name : "?"); break;
        case CL_RUN: dg_buf_printf(&clauses, "`run %s`", c->name ? c->name : "?"); break;
        case CL_COST: {
            char t[32];
            dg_fmt_duration(c->value, t, sizeof t);
            dg_buf_printf(&clauses, "`cost %s`", t);
            cost = c->value;
            has_cost = !c->bad;
            break;
        }
        case CL_READS:
        case CL_WRITES:
            dg_buf_puts(&clauses, c->kind == CL_READS ? "`reads " : "`writes ");
            for (const ast_name *n = c->names; n; n = n->next)
                dg_buf_printf(&clauses, "%s%s%s", n->prev ? "prev " : "", n->name ? n->name : "?",
                              n->next ? ", " : "");
            dg_buf_putc(&clauses, '`');
            break;
        default: break;
        }
    }
    if (clauses.len) dg_buf_printf(b, "clauses: %s\n\n", clauses.p);
    else dg_buf_puts(b, "clauses: none (runs on any worker)\n\n");
    dg_buf_free(&clauses);
    if (has_cost) {
        char t[32];
        dg_fmt_duration(cost, t, sizeof t);
        dg_buf_printf(b, "declared cost: %s\n", t);
    } else {
        dg_buf_puts(b, "declared cost: none\n");
    }
}

/* The `reads`/`writes` name a resource's use u is, or NULL. */
static const ast_name *use_name(const lsp_occ *u)
{
    for (const ast_stmt *st = u->graph ? u->graph->stmts : NULL; st; st = st->next)
        for (const ast_clause *c = st->clauses; c; c = c->next)
            for (const ast_name *n = c->names; n; n = n->next)
                if (n->pos.line == u->pos.line && n->pos.col == u->pos.col &&
                    n->pos.file == u->pos.file)
                    return n;
    return NULL;
}

/* Whether the use u is in a `writes` clause. */
static int use_writes(const lsp_occ *u)
{
    for (const ast_stmt *st = u->graph ? u->graph->stmts : NULL; st; st = st->next)
        for (const ast_clause *c = st->clauses; c; c = c->next)
            for (const ast_name *n = c->names; n; n = n->next)
                if (n->pos.line == u->pos.line && n->pos.col == u->pos.col &&
                    n->pos.file == u->pos.file)
                    return c->kind == CL_WRITES;
    return 0;
}

/* The declaration a resource's definition d is (its `per frame` and C
 * type), from its file's syntax tree, or NULL. */
static const ast_name *def_name(const lsp_index *x, const lsp_occ *d)
{
    for (size_t fi = 0; fi < x->files->n; fi++) {
        if (x->files->src[fi] != d->src || !x->files->ast[fi]) continue;
        for (const ast_name *r = x->files->ast[fi]->resources; r; r = r->next)
            if (r->pos.line == d->pos.line && r->pos.col == d->pos.col) return r;
    }
    return NULL;
}

void lsp_index_hover(const lsp_index *x, const lsp_occ *o, dg_buf *b,
                     void (*prof_line)(void *user, const lsp_occ *task, dg_buf *b), void *user)
{
    const lsp_occ *d = o->def ? o : lsp_index_def(x, o->key);
    switch (o->kind) {
    case LSP_FILE:
        if (o->target) dg_buf_printf(b, "**import** `%s`", o->target->path);
        else dg_buf_printf(b, "**import** `%s` (not loaded)", o->name);
        return;
    case LSP_RESOURCE: {
        size_t readers = 0, writers = 0, prevs = 0;
        for (size_t i = 0; i < x->n; i++) {
            const lsp_occ *u = &x->occ[i];
            if (u->def || strcmp(u->key, o->key) != 0) continue;
            /* a use is a `reads` or `writes` name: which one, from its clause */
            const ast_name *n = use_name(u);
            if (n && n->prev) prevs++;
            else if (n && use_writes(u)) writers++;
            else readers++;
        }
        const ast_name *dn = d ? def_name(x, d) : NULL;
        dg_buf_printf(b, "**resource** `%s`", o->name);
        if (dn && dn->per_frame) {
            dg_buf_puts(b, " per frame");
            if (dn->ctype) dg_buf_printf(b, " (`%s`)", dn->ctype);
        }
        if (d) dg_buf_printf(b, " (%s:%u)", base_name(d->src->path), d->pos.line);
        const ast_name *un = o->def ? NULL : use_name(o);
        if (un && un->prev)
            dg_buf_puts(b, "\n\n`reads prev`: the previous frame's copy, written by that frame's "
                           "writers; this task must wait for them through `prev`");
        if (dn && dn->per_frame) {
            dg_buf_puts(b, "\n\none copy per frame in flight, ");
            if (dn->ctype)
                dg_buf_printf(b, "laid out by dagc (`G_%s_copy()` in graph G)", o->name);
            else
                dg_buf_puts(b, "untyped (the copies are yours)");
            dg_buf_puts(b, ": no race across frames but through `reads prev`");
        }
        dg_buf_printf(b, "\n\nread by %zu task%s, written by %zu", readers, readers == 1 ? "" : "s",
                      writers);
        if (prevs || (dn && dn->per_frame))
            dg_buf_printf(b, ", previous copy read by %zu", prevs);
        dg_buf_puts(b, " in the loaded files\n");
        return;
    }
    case LSP_GRAPH:
        dg_buf_printf(b, "**graph** `%s`", o->name);
        if (d) {
            size_t tasks = 0, gates = 0;
            for (const ast_stmt *st = d->graph->stmts; st; st = st->next)
                st->kind == AST_GATE ? gates++ : tasks++;
            dg_buf_printf(b, " (%s) (%s:%u)\n\n%zu task%s, %zu gate%s\n",
                          d->graph->ctype ? d->graph->ctype : "void *", base_name(d->src->path),
                          d->pos.line, tasks, tasks == 1 ? "" : "s", gates, gates == 1 ? "" : "s");
        } else {
            dg_buf_puts(b, "\n\nnot defined in the loaded files\n");
        }
        return;
    case LSP_GATE:
        if (d && d->stmt) {
            dg_buf_printf(b, "**gate** `%s` in graph `%s` = `", d->name, d->graph->name);
            put_expr(b, d->stmt->expr, 0);
            dg_buf_puts(b, "`\n");
        } else {
            dg_buf_printf(b, "**gate** `%s`\n", o->name);
        }
        return;
    default:
        if (d && d->stmt) {
            hover_task(x, d, b);
            if (prof_line) prof_line(user, d, b);
        } else {
            dg_buf_printf(b, "`%s`: no task or gate of this name in graph `%s`\n", o->name,
                          o->graph && o->graph->name ? o->graph->name : "?");
        }
        return;
    }
}
