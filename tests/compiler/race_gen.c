/*
 * race_gen.c - seeded random valid .dag files with resources for the race
 * tests: AND/OR joins with parentheses, gates, `when`, the other task
 * clauses, subgraph nodes (`run`, nested up to two deep, with `when` on some),
 * `prev` inputs (also inside `or`, and in gates), and random reads/writes.
 * Valid: no cycles (expressions only name earlier nodes; `prev` may name
 * any task or gate but the node itself), no unknown names, only clause
 * combinations the contract allows, every graph with a plain task.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "race_model.h"

static rx *new_rx(rprog *p)
{
    if (p->npool >= RM_POOL)
        abort(); /* the sizes below keep far from this */
    rx *e = &p->pool[p->npool++];
    memset(e, 0, sizeof *e);
    return e;
}

/* Whether `prev` may name a run node (dagc's extension: docs/language.md;
 * the contract says a task or gate). Set per program by gen_race_prog. */
static int prev_of_runs;

/* A node that `prev` may name: a task or gate other than SELF, or -1. */
static int pick_prev(const rgraph *g, rng *r, int self)
{
    for (int tries = 0; tries < 8; tries++) {
        int k = (int)rng_below(r, (uint32_t)g->n);
        if (k != self && (prev_of_runs || g->nodes[k].kind != RN_RUN))
            return k;
    }
    return -1;
}

/* A random expression over the nodes before SELF (and `prev` of any when
 * PREV is not 0; -1: not under an `or`). */
static rx *gen_expr(rprog *p, const rgraph *g, rng *r, int self, int depth, int prev)
{
    rx *e = new_rx(p);
    if (depth == 0 || self < 2 || rng_below(r, 2) == 0) {
        int k = prev && rng_below(r, 7) == 0 ? pick_prev(g, r, self) : -1;
        if (k >= 0) {
            e->op = RX_PREV;
            e->node = k;
        } else {
            e->op = RX_NAME;
            e->node = (int)rng_below(r, (uint32_t)self);
        }
        return e;
    }
    e->op = depth >= 2 && rng_below(r, 3) == 0 ? RX_COMMA : rng_below(r, 2) ? RX_AND : RX_OR;
    e->nk = 2 + (int)rng_below(r, 2);
    if (e->op == RX_OR && prev < 0)
        prev = 0; /* a subgraph's `prev` under `or`: a known dagc bug */
    for (int i = 0; i < e->nk; i++)
        e->k[i] = gen_expr(p, g, r, self, depth - 1, prev);
    return e;
}

/* Whether graph GI has a `when` anywhere inside (subgraphs included). */
static int has_when(const rprog *p, int gi)
{
    for (int i = 0; i < p->g[gi].n; i++) {
        const rnode *x = &p->g[gi].nodes[i];
        if (x->when[0] || (x->kind == RN_RUN && has_when(p, x->sub)))
            return 1;
    }
    return 0;
}

static void gen_graph(rprog *p, rng *r, int gi, int n, const rgen_opts *o)
{
    rgraph *g = &p->g[gi];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "g%c", 'a' + gi);
    g->n = n;
    int runs = 0;
    for (int i = 0; i < n; i++) {
        rnode *x = &g->nodes[i];
        snprintf(x->name, sizeof x->name, "%c%d", 'a' + gi, i);
        x->kind = RN_TASK;
        if (i == 0)
            continue; /* every graph has a plain task */
        uint32_t k = rng_below(r, 12);
        /* A subgraph runs at most one deeper graph once; the top graph
         * runs them as often as its size allows. */
        if (k < 3 && gi + 1 < p->ng && (gi == 0 || runs == 0)) {
            x->kind = RN_RUN;
            x->sub = gi + 1 + (int)rng_below(r, (uint32_t)(p->ng - gi - 1));
            runs++;
        } else if (k < 5) {
            x->kind = RN_GATE;
        }
    }
    /* Most graphs that can run another do (nesting two deep often). */
    if (runs == 0 && gi + 1 < p->ng && n >= 2 && rng_below(r, 4) != 0) {
        rnode *x = &g->nodes[1 + rng_below(r, (uint32_t)n - 1)];
        x->kind = RN_RUN;
        x->sub = gi + 1;
    }
    for (int i = 0; i < n; i++) {
        rnode *x = &g->nodes[i];
        if (x->kind == RN_GATE || (i > 0 && rng_below(r, 6) != 0))
            x->e = gen_expr(p, g, r, i, 1 + (int)rng_below(r, 3),
                            o->prev ? (gi > 0 && !(o->known_bugs & 2) ? -1 : 1) : 0);
        else if (o->prev && rng_below(r, 10) == 0 && pick_prev(g, r, i) >= 0) {
            x->e = new_rx(p); /* only a `prev` input: a root outside a pipeline */
            x->e->op = RX_PREV;
            x->e->node = pick_prev(g, r, i);
            if (x->e->node < 0)
                x->e = NULL;
        }
        if (x->kind == RN_RUN) {
            if (rng_below(r, 3) == 0 && ((o->known_bugs & 1) || !has_when(p, x->sub)))
                snprintf(x->when, sizeof x->when, "p%u", rng_below(r, 3));
            continue;
        }
        if (x->kind != RN_TASK)
            continue;
        switch (rng_below(r, 7)) { /* combinations the contract allows */
        case 0: x->flags = RF_MAIN; break;
        case 1: x->flags = RF_HOT | (rng_below(r, 2) ? RF_FIBER : 0); break;
        case 2: x->flags = RF_FIBER; break;
        case 3:
            x->flags = RF_PARALLEL;
            x->grain = rng_below(r, 2) ? 1 + rng_below(r, 64) : 0;
            break;
        default: break;
        }
        if (rng_below(r, 4) == 0)
            x->cost_us = 1 + rng_below(r, 900);
        if (rng_below(r, 5) == 0)
            snprintf(x->when, sizeof x->when, "p%u", rng_below(r, 3));
        for (int k = 0; k < p->nres; k++) {
            uint32_t a = rng_below(r, 10), d = o->dense ? 4 : 0;
            if (a < 3 + d / 2)
                x->reads |= 1u << k;
            else if (a < 5 + d)
                x->writes |= 1u << k;
        }
    }
}

/* Removes accesses of graph GI (or of what it runs) until it has no race
 * (in one frame; across frames too when CROSS). */
static void strip(rprog *p, int gi, rng *r, int cross)
{
    rresult *res = malloc(sizeof *res);
    for (int round = 0; round < 4096; round++) {
        if (ref_races(p, gi, res) < 0)
            break;
        const rrace *k = NULL;
        for (int i = 0; i < res->nraces && !k; i++)
            if (cross || !res->races[i].cross)
                k = &res->races[i];
        if (!k)
            break;
        int t = rng_below(r, 2) ? k->x : k->y;
        const rflat_inst *in = &res->f.insts[res->f.inst[t]];
        rnode *x = &p->g[in->graph].nodes[res->f.node[t]];
        x->reads &= ~(1u << k->res);
        x->writes &= ~(1u << k->res);
        x->reads_prev &= ~(1u << k->res);
    }
    free(res);
}

void gen_race_prog(rprog *p, rng *r, const rgen_opts *o)
{
    memset(p, 0, sizeof *p);
    prev_of_runs = o->prev_of_runs;
    p->nres = o->dense ? 5 + (int)rng_below(r, RM_MAX_RES - 4) : 1 + (int)rng_below(r, 4);
    for (int k = 0; k < p->nres; k++)
        snprintf(p->res[k], sizeof p->res[k], "r%d", k);
    p->ng = o->subgraphs ? 2 + (int)rng_below(r, 2) : 1;
    for (int gi = p->ng - 1; gi >= 1; gi--) {
        gen_graph(p, r, gi, (gi + 1 < p->ng ? 2 : 1) + (int)rng_below(r, 3), o);
        if (!o->sub_races)
            strip(p, gi, r, 1);
    }
    int max_flat = o->max_flat > 0 && o->max_flat <= RM_MAX_FLAT ? o->max_flat : 12;
    int pool0 = p->npool;
    rflat *f = malloc(sizeof *f);
    for (int tries = 0;; tries++) {
        p->npool = pool0;
        int n = 2 + (int)rng_below(r, (uint32_t)(o->max_top > 2 ? o->max_top - 1 : 1));
        gen_graph(p, r, 0, n, o);
        if (ref_flatten(p, 0, f) == 0 && f->n <= max_flat)
            break;
        if (tries > 50)
            p->ng = 1; /* keep the sizes; drop the subgraphs */
    }
    free(f);
    /* (v2.2) Last, so that the other options draw what they drew before. */
    if (o->per_frame) {
        p->per_frame = rng_below(r, 1u << p->nres);
        for (int gi = 0; gi < p->ng; gi++)
            for (int i = 0; i < p->g[gi].n; i++) {
                rnode *x = &p->g[gi].nodes[i];
                for (int k = 0; k < p->nres && x->kind == RN_TASK; k++)
                    if ((p->per_frame >> k & 1) && rng_below(r, 10) < 3)
                        x->reads_prev |= 1u << k;
            }
    }
    if (o->race_free)
        strip(p, 0, r, 0);
}

static int prec(int op)
{
    return op == RX_NAME || op == RX_PREV ? 3 : op == RX_AND ? 2 : op == RX_OR ? 1 : 0;
}

static void print_expr(FILE *f, const rgraph *g, const rx *e, int parent, rng *r)
{
    int atom = e->op == RX_NAME || e->op == RX_PREV;
    int paren = !atom && (prec(e->op) <= parent || rng_below(r, 5) == 0);
    if (paren)
        fputc('(', f);
    if (atom) {
        fprintf(f, "%s%s", e->op == RX_PREV ? "prev " : "", g->nodes[e->node].name);
    } else {
        const char *sep = e->op == RX_AND ? " and " : e->op == RX_OR ? " or " : ", ";
        for (int i = 0; i < e->nk; i++) {
            if (i)
                fputs(sep, f);
            print_expr(f, g, e->k[i], prec(e->op), r);
        }
    }
    if (paren)
        fputc(')', f);
}

static void print_res(FILE *f, const rprog *p, const char *kw, uint32_t m, uint32_t prev)
{
    if (!m && !prev)
        return;
    fprintf(f, " %s", kw);
    const char *sep = " ";
    for (int k = 0; k < p->nres; k++)
        if (m >> k & 1) {
            fprintf(f, "%s%s", sep, p->res[k]);
            sep = ", ";
        }
    for (int k = 0; k < p->nres; k++) /* (v2.2) */
        if (prev >> k & 1) {
            fprintf(f, "%sprev %s", sep, p->res[k]);
            sep = ", ";
        }
}

static void shuffle(int *v, int n, rng *r)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint32_t)i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

char *print_race_prog(rprog *p, rng *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    int line = 1;
    if (p->include[0]) {
        fprintf(f, "include \"%s\";\n", p->include);
        line++;
    }
    /* Resources in one or two declarations. */
    int nres = p->nres;
    if (p->hide_access)
        p->nres = 0;
    int split = p->nres > 1 && rng_below(r, 2) ? 1 + (int)rng_below(r, (uint32_t)p->nres - 1) : p->nres;
    for (int k = 0; k < p->nres; k++)
        fprintf(f, "%s%s%s%s", k == 0 || k == split ? "resource " : ", ", p->res[k],
                p->per_frame >> k & 1 ? " per frame" : "",
                k + 1 == split || k + 1 == p->nres ? ";\n" : "");
    line += p->nres == 0 ? 0 : split < p->nres ? 2 : 1;
    int gorder[RM_MAX_GRAPHS];
    for (int i = 0; i < p->ng; i++)
        gorder[i] = i;
    shuffle(gorder, p->ng, r);
    for (int gk = 0; gk < p->ng; gk++) {
        rgraph *g = &p->g[gorder[gk]];
        fprintf(f, "graph %s(struct rctx *) {\n", g->name);
        line++;
        int order[RM_MAX_NODES];
        for (int i = 0; i < g->n; i++)
            order[i] = i;
        shuffle(order, g->n, r); /* names may be used before they are declared */
        for (int k = 0; k < g->n; k++) {
            rnode *x = &g->nodes[order[k]];
            x->line = line++;
            if (x->kind == RN_GATE) {
                fprintf(f, "    gate %s = ", x->name);
                print_expr(f, g, x->e, -1, r);
                fputs(";\n", f);
                continue;
            }
            fprintf(f, "    task %s", x->name);
            if (x->e) {
                fputs(" after ", f);
                print_expr(f, g, x->e, -1, r);
            }
            if (x->kind == RN_RUN)
                fprintf(f, " run %s", p->g[x->sub].name);
            if (x->flags & RF_MAIN) fputs(" on main", f);
            if (x->flags & RF_HOT) fputs(" hot", f);
            if (x->flags & RF_FIBER) fputs(" fiber", f);
            if (x->flags & RF_PARALLEL) fputs(" parallel", f);
            if (x->grain) fprintf(f, " grain %u", x->grain);
            if (x->cost_us) fprintf(f, " cost %uus", x->cost_us);
            int w_first = rng_below(r, 2);
            if (p->nres) {
                if (w_first) print_res(f, p, "writes", x->writes, 0);
                print_res(f, p, "reads", x->reads, x->reads_prev);
                if (!w_first) print_res(f, p, "writes", x->writes, 0);
            }
            if (x->when[0]) fprintf(f, " when %s", x->when);
            fputs(";\n", f);
        }
        fputs("}\n", f);
        line++;
    }
    fclose(f);
    p->nres = nres;
    return buf;
}
