/*
 * cnames.c - the C names the back end will generate (run functions, task
 * functions, count functions, predicates), claimed across every output
 * graph so that two of them never collide. A function that a flattened
 * subgraph shares with the graph it came from is one declaration (the same
 * source position), not a collision. Also the check of every name against
 * C's keywords and reserved identifiers.
 */
#include "sema.h"
#include "sema_int.h"
#include "perframe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- C keywords and reserved names ------------------------------------------------------------ */

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
int dg_check_name(dg_diag *d, src_pos pos, const char *name, const char *what)
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

/* ---- generated C names, across the whole file ----------------------------- */

typedef enum cname_kind { CN_RUN, CN_TASK, CN_PARALLEL, CN_COUNT, CN_PRED } cname_kind;

typedef struct cname {
    const char *name;
    cname_kind kind;
    const char *ctype;
    int via_call;        /* named by `call`, so sharing it is intended */
    src_pos pos;
    const char *owner;   /* the task, or the graph for CN_RUN */
    const char *graph;   /* the graph it belongs to */
} cname;

typedef struct cnames {
    dg_map map;
    cname *v;
    size_t n, cap;
} cnames;

/* Messages are only built when there is something to report: a 100k-node
 * graph should not format 100k descriptions it never prints. A task's
 * function is named with its graph when the other name is of another
 * graph, so that a collision across graphs says where both are. */
static const char *describe(const cname *c, const cname *other, char *buf, size_t n)
{
    if (c->kind != CN_RUN && strcmp(c->graph, other->graph) != 0) {
        char t[300];
        cname only = *c;
        only.graph = other->graph;
        snprintf(buf, n, "%s of graph '%s'", describe(&only, other, t, sizeof t), c->graph);
        return buf;
    }
    switch (c->kind) {
    case CN_RUN:
        snprintf(buf, n, "%s of graph '%s'",
                 strcmp(c->name + strlen(c->owner), "_run") == 0 ? "the run function"
                                                                  : "an entry point",
                 c->owner);
        break;
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
        if (e->kind == x.kind && same_ctype && e->pos.file == x.pos.file &&
            e->pos.line == x.pos.line && e->pos.col == x.pos.col)
            return; /* one task seen again through a flattened subgraph */
        if (e->kind == x.kind && same_ctype && (x.kind == CN_PRED ||
            (e->via_call && x.via_call && (x.kind == CN_TASK || x.kind == CN_PARALLEL ||
                                          x.kind == CN_COUNT))))
            return; /* one user function shared on purpose */
        if (e->via_call && x.via_call &&
            ((e->kind == CN_TASK && x.kind == CN_PARALLEL) ||
             (e->kind == CN_PARALLEL && x.kind == CN_TASK))) {
            dg_error(d, x.pos, "call name '%s' is used by tasks of different shapes "
                     "(parallel and not)", x.name);
            dg_note(d, e->pos, "%s is here", describe(e, &x, de, sizeof de));
            return;
        }
        if (e->kind == x.kind && !same_ctype && x.via_call && e->via_call) {
            dg_error(d, x.pos, "C function '%s' would be declared with two context types "
                     "('%s' and '%s')", x.name, e->ctype, x.ctype);
            dg_note(d, e->pos, "%s is here", describe(e, &x, de, sizeof de));
            return;
        }
        if (x.kind == CN_COUNT && e->kind == CN_COUNT) return; /* reported with its task */
        dg_error(d, x.pos, "generated C name '%s' of %s collides with %s", x.name,
                 describe(&x, e, dx, sizeof dx), describe(e, &x, de, sizeof de));
        dg_note(d, e->pos, "%s is here", de);
        /* Only a task's function can be renamed (a graph's entry points are
         * fixed by the contract): say how, whichever came first. */
        const cname *t = x.kind == CN_TASK || x.kind == CN_PARALLEL ? &x
                         : e->kind == CN_TASK || e->kind == CN_PARALLEL ? e : NULL;
        if (t && t->via_call && (e->kind == CN_RUN || x.kind == CN_RUN)) {
            /* It has a `call` already: another one would be given twice. */
            dg_hint(d, "give task '%s' another 'call' name, for example 'call %s_task'", t->owner,
                    t->name);
        } else if (t && (e->kind == CN_RUN || x.kind == CN_RUN)) {
            dg_hint(d, "name the function of task '%s' with a 'call' clause, for example "
                    "'task %s call %s_task'", t->owner, t->owner, t->name);
            char fix[600];
            snprintf(fix, sizeof fix, " call %s_task", t->name);
            dg_fixit_insert_after(d, t->pos, fix);
        }
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

void dg_check_c_names(const ir_program *p, dg_diag *d, dg_arena *a)
{
    cnames C = {0};
    size_t total = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++) total += p->graphs[gi].nnodes + 10;
    dg_map_reserve(&C.map, total);
    C.cap = total + 16;
    C.v = dg_xmalloc(C.cap * sizeof *C.v);
    for (size_t gi = 0; gi < p->ngraphs && !d->stop; gi++) {
        const ir_graph *g = &p->graphs[gi];
        /* The run function and the instance's and the pipeline's
         * types and functions. Their struct tags (G_instance, G_pipeline)
         * live apart from functions in C and may share a function's name in
         * C++, so tasks named 'instance' and 'pipeline' keep theirs. */
        static const char *const entry[] = {
            "run",          "instance_t",     "instance_init", "instance_run",
            "instance_start", "instance_wait", "pipeline_t",   "pipeline_init",
            "pipeline_submit", "pipeline_drain"};
        for (size_t k = 0; k < sizeof entry / sizeof entry[0] && !d->stop; k++) {
            cname r = {dg_printf(a, "%s_%s", g->name, entry[k]), CN_RUN, g->ctype, 0, g->pos,
                       g->name, g->name};
            claim(&C, d, r);
        }
        /* (v2.2) The accessors of the typed per-frame resources. */
        dg_perframe *pf = NULL;
        size_t npf = dg_perframe_list(p, g, &pf);
        for (size_t k = 0; k < npf && !d->stop; k++) {
            if (!pf[k].typed) continue;
            const char *rn = p->resources[pf[k].res].name;
            cname r = {dg_printf(a, DG_PERFRAME_COPY, g->name, rn), CN_RUN, g->ctype, 0, g->pos,
                       g->name, g->name};
            claim(&C, d, r);
            if (pf[k].prev) {
                cname q = {dg_printf(a, DG_PERFRAME_PREV, g->name, rn), CN_RUN, g->ctype, 0,
                           g->pos, g->name, g->name};
                claim(&C, d, q);
            }
        }
        free(pf);
        for (uint32_t i = 0; i < g->nnodes; i++) {
            const ir_node *x = &g->nodes[i];
            if (x->kind != IR_TASK) continue;
            int par = (x->flags & IR_F_PARALLEL) != 0, call = (x->flags & IR_F_CALL) != 0;
            cname t = {x->func, par ? CN_PARALLEL : CN_TASK, g->ctype, call, x->pos, x->name,
                       g->name};
            claim(&C, d, t);
            if (par) {
                cname c = {dg_printf(a, "%s_count", x->func), CN_COUNT, g->ctype, call, x->pos,
                           x->name, g->name};
                claim(&C, d, c);
            }
            for (uint32_t k = 0; x->when && k <= x->nand_when; k++) {
                cname w = {k ? x->and_when[k - 1] : x->when, CN_PRED, g->ctype, 1, x->pos,
                           x->name, g->name};
                claim(&C, d, w);
            }
        }
    }
    dg_map_free(&C.map);
    free(C.v);
}
