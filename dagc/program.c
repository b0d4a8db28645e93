/*
 * program.c - the compilation as a whole: every file's resources (one name,
 * one resource), every file's graphs lowered (sema.c), the `run` nodes
 * resolved and flattened (subgraph.c), then the checks that need the whole
 * program: unused resources, generated C names (cnames.c), races (race.c).
 * Only the input file's graphs become the program's output.
 */
#include "sema.h"
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

/* Every file's resources, in load order: one name is one resource. */
static ir_resource *declare_resources(const ast_file *const *files, size_t nfiles, dg_map *m,
                                      size_t *nres, dg_diag *d, dg_arena *a)
{
    size_t n = 0;
    for (size_t f = 0; f < nfiles; f++)
        for (const ast_name *r = files[f]->resources; r; r = r->next) n++;
    ir_resource *res = dg_alloc(a, (n + 1) * sizeof *res);
    size_t k = 0;
    for (size_t f = 0; f < nfiles; f++) {
        for (const ast_name *r = files[f]->resources; r; r = r->next) {
            if (!r->name) continue;
            int prev = dg_map_get(m, r->name);
            if (prev >= 0) {
                dg_error(d, r->pos, "resource '%s' is declared twice", r->name);
                dg_note(d, res[prev].pos, "first declared here");
                continue;
            }
            res[k].name = r->name;
            res[k].pos = r->pos;
            res[k].per_frame = r->per_frame;
            res[k].ctype = r->ctype;
            res[k].ctype_pos = r->ctype_pos;
            dg_map_put(m, r->name, (int)k);
            k++;
        }
    }
    *nres = k;
    return res;
}

static void warn_unused_resources(const lgraph *L, size_t nl, const ir_resource *res,
                                  size_t nres, dg_diag *d)
{
    uint8_t *used = dg_xcalloc(nres + 1, 1);
    for (size_t i = 0; i < nl; i++) {
        if (!L[i].ok) {
            free(used); /* a graph with errors may hide accesses */
            return;
        }
        for (uint32_t v = 0; v < L[i].g.nnodes; v++)
            for (uint32_t k = 0; k < L[i].g.nodes[v].nacc; k++)
                used[L[i].g.nodes[v].acc[k].res] = 1;
    }
    for (size_t r = 0; r < nres; r++)
        if (!used[r]) dg_warning(d, res[r].pos, "resource '%s' is never accessed "
                                 "(no task reads or writes it)", res[r].name);
    free(used);
}


/* A plain `after` list: one name, or ',' of names, none in parentheses. */
static int plain_after(const ast_expr *e)
{
    if (e->kind == AST_NAME) return !e->paren;
    if (e->kind != AST_AND || e->paren) return 0;
    for (const ast_expr *k = e->kids; k; k = k->next)
        if (k->kind != AST_NAME || k->paren) return 0;
    return 1;
}

/* The names of every plain `after` list of every graph (ir_after_ref). */
static void after_refs(ir_program *p, const lgraph *L, size_t nl, dg_arena *a)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        ir_after_ref *r = pass ? dg_alloc(a, (n + 1) * sizeof *r) : NULL;
        size_t k = 0;
        for (size_t i = 0; i < nl; i++)
            for (const ast_stmt *st = L[i].ag->stmts; st; st = st->next) {
                if (st->kind != AST_TASK) continue;
                for (const ast_clause *c = st->clauses; c; c = c->next) {
                    if (c->kind != CL_AFTER || !c->expr || !plain_after(c->expr)) continue;
                    const ast_expr *one = c->expr->kind == AST_NAME ? c->expr : c->expr->kids;
                    for (const ast_expr *e = one; e; e = c->expr->kind == AST_NAME ? NULL : e->next) {
                        if (r) r[k] = (ir_after_ref){st->pos, e->name, e->pos, e->prev};
                        k++;
                    }
                    break;
                }
            }
        if (r) {
            p->after_refs = r;
            p->nafter_refs = k;
        }
        n = k;
    }
}

/* (v2.2) A `coro` task is a C++20 coroutine: only C++ output (--cxx) can
 * call it, so C output of a graph that holds one is refused, at the task
 * (once, however many `run` copies of its graph there are). */
static void check_coro_output(const ir_program *p, dg_diag *d)
{
    size_t cap = 0, nseen = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++)
        cap += p->graphs[gi].nnodes;
    src_pos *seen = dg_xcalloc(cap + 1, sizeof *seen);
    for (size_t gi = 0; gi < p->ngraphs && !d->stop; gi++) {
        const ir_graph *g = &p->graphs[gi];
        for (uint32_t i = 0; i < g->nnodes && !d->stop; i++) {
            const ir_node *n = &g->nodes[i];
            if (!(n->flags & IR_F_CORO))
                continue;
            int dup = 0;
            for (size_t k = 0; k < nseen && !dup; k++)
                dup = seen[k].file == n->pos.file && seen[k].line == n->pos.line &&
                      seen[k].col == n->pos.col;
            if (dup)
                continue;
            seen[nseen++] = n->pos;
            dg_error(d, n->pos, "task '%s' is a coroutine ('coro'), which only C++ output runs",
                     n->name);
            dg_hint(d, "compile with --cxx (the coroutine returns dagrtpp::task<>, from "
                    "dagrt_coro.hpp, C++20), or drop 'coro' for a plain task");
        }
    }
    free(seen);
}

ir_program *dg_sema(const ast_file *const *files, size_t nfiles, const dg_sema_opts *o,
                    dg_diag *d, dg_arena *a)
{
    ir_program *p = dg_alloc(a, sizeof *p);
    const ast_file *f = files[0];
    p->path = f->path;
    size_t ninc = 0, ng = 0;
    for (const ast_include *i = f->includes; i; i = i->next) ninc++;
    const char **incs = dg_alloc(a, (ninc + 1) * sizeof *incs);
    ninc = 0;
    for (const ast_include *i = f->includes; i; i = i->next) incs[ninc++] = i->path;
    p->includes = incs;
    p->nincludes = ninc;
    const char **paths = dg_alloc(a, (nfiles + 1) * sizeof *paths);
    for (size_t i = 0; i < nfiles; i++) paths[i] = files[i]->path;
    p->files = paths;
    p->nfiles = nfiles;

    dg_map rmap = {0};
    size_t nres = 0;
    ir_resource *res = declare_resources(files, nfiles, &rmap, &nres, d, a);
    p->resources = res;
    p->nresources = nres;

    for (size_t fi = 0; fi < nfiles; fi++)
        for (const ast_graph *g = files[fi]->graphs; g; g = g->next) ng++;
    lgraph *L = dg_xcalloc(ng + 1, sizeof *L);
    int *want = dg_xcalloc(ng + 1, sizeof *want);
    dg_map gnames = {0};
    size_t nl = 0;
    int ok = d->nerrors == 0;
    for (size_t fi = 0; fi < nfiles; fi++) {
        for (const ast_graph *ag = files[fi]->graphs; ag && !d->stop; ag = ag->next) {
            if (!ag->name) continue;
            dg_check_name(d, ag->pos, ag->name, "graph name");
            int prev = dg_map_get(&gnames, ag->name);
            if (prev >= 0) {
                dg_error(d, ag->pos, "graph '%s' is defined twice", ag->name);
                dg_note(d, L[prev].ag->pos, "previous definition is here");
                ok = 0;
                continue;
            }
            lgraph *lg = &L[nl];
            lg->ag = ag;
            lg->file = fi;
            want[nl] = fi == 0;
            dg_map_put(&gnames, ag->name, (int)nl);
            nl++;
            sgraph g;
            memset(&g, 0, sizeof g);
            g.d = d;
            g.a = a;
            g.ag = ag;
            g.resources = &rmap;
            g.res = res;
            g.nres = nres;
            lg->ok = dg_lower_graph(&g, lg) == 0;
            if (!lg->ok) {
                ok = 0;
                lg->g.name = ag->name;
                lg->g.ctype = ag->ctype ? ag->ctype : "void *";
                lg->g.pos = ag->pos;
            }
            for (uint32_t i = 0; i < g.n; i++) free(g.nodes[i].acc);
            free(g.nodes);
            free(g.edges);
            free(g.eop);
            free(g.pedges);
            dg_map_free(&g.names);
        }
    }
    if (!d->stop) dg_flatten(L, nl, &gnames, want, d, a);
    after_refs(p, L, nl, a);
    ir_graph *graphs = dg_alloc(a, (nl + 1) * sizeof *graphs);
    size_t out = 0;
    for (size_t i = 0; i < nl; i++) {
        if (!want[i]) continue;
        if (L[i].state != 2) ok = 0;
        graphs[out++] = L[i].state == 2 ? L[i].flat : L[i].g;
    }
    p->graphs = graphs;
    p->ngraphs = out;
    if (!d->stop && ok) warn_unused_resources(L, nl, res, nres, d);
    /* Both need every graph lowered and flattened, nothing more: a warning
     * made an error by -Werror, or a C name collision, hides no race. */
    if (ok && !d->stop && o && o->c_output) check_coro_output(p, d);
    if (ok && !d->stop) dg_check_c_names(p, d, a);
    if (ok && !d->stop) dg_check_races(p, o ? o->pipeline_warnings : 1, d);
    dg_map_free(&gnames);
    dg_map_free(&rmap);
    free(L);
    free(want);
    return p;
}
