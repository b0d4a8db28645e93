/*
 * ir_props.c - properties of the IR on seeded random graphs: topological
 * order (every edge points forward), predecessor and successor lists that
 * mirror each other, the right join kind on every gate, every clause's flag,
 * and above all the meaning: for random task durations, the time each node
 * becomes complete computed on the IR equals the time computed directly
 * from the source expressions (`and` = latest input, `or` = earliest).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "emit_dot.h"
#include "gen.h"
#include "ir.h"
#include "stats.h"
#include "spawn.h"

enum { E_NAME, E_AND, E_OR, E_COMMA };

typedef struct gexpr {
    int op;
    int node;              /* E_NAME */
    int nkids;
    struct gexpr *kids[4];
} gexpr;

typedef struct gnode {
    char name[16];
    int is_gate;
    gexpr *e;              /* NULL: a root */
    unsigned flags;
    uint32_t grain;
    uint64_t cost;
    char call[16];
    char when[16];
} gnode;

typedef struct gprog {
    gnode *nodes;
    int n;
    int *decl;             /* declaration order: a permutation */
    gexpr *pool;
    int npool, cappool;
} gprog;

static gexpr *new_expr(gprog *p)
{
    cr_assert_lt(p->npool, p->cappool);
    gexpr *e = &p->pool[p->npool++];
    memset(e, 0, sizeof *e);
    return e;
}

/* A random expression over nodes [0, below). */
static gexpr *gen_expr(gprog *p, rng *r, int below, int depth)
{
    gexpr *e = new_expr(p);
    if (depth == 0 || below < 2 || rng_below(r, 3) == 0) {
        e->op = E_NAME;
        e->node = (int)rng_below(r, (uint32_t)below);
        return e;
    }
    e->op = depth == 3 && rng_below(r, 3) == 0 ? E_COMMA : rng_below(r, 2) ? E_AND : E_OR;
    e->nkids = 2 + (int)rng_below(r, 3);
    for (int i = 0; i < e->nkids; i++) e->kids[i] = gen_expr(p, r, below, depth - 1);
    return e;
}

static int prec(int op)
{
    return op == E_NAME ? 3 : op == E_AND ? 2 : op == E_OR ? 1 : 0;
}

static void print_expr(FILE *f, const gprog *p, const gexpr *e, int parent, rng *r)
{
    int paren = prec(e->op) <= parent && e->op != E_NAME;
    if (e->op != E_NAME && !paren && rng_below(r, 4) == 0) paren = 1; /* harmless extras */
    if (paren) fputc('(', f);
    if (e->op == E_NAME) {
        fputs(p->nodes[e->node].name, f);
    } else {
        const char *sep = e->op == E_AND ? " and " : e->op == E_OR ? " or " : ", ";
        for (int i = 0; i < e->nkids; i++) {
            if (i) fputs(sep, f);
            print_expr(f, p, e->kids[i], prec(e->op), r);
        }
    }
    if (paren) fputc(')', f);
}

/* Completion time of node i by the source's meaning. */
static int64_t eval_src(const gprog *p, const gexpr *e, const int64_t *fin)
{
    if (e->op == E_NAME) return fin[e->node];
    int64_t v = eval_src(p, e->kids[0], fin);
    for (int i = 1; i < e->nkids; i++) {
        int64_t k = eval_src(p, e->kids[i], fin);
        if (e->op == E_OR ? k < v : k > v) v = k;
    }
    return v;
}

static char *gen_program(gprog *p, rng *r, int n, size_t *len)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->nodes = calloc((size_t)n, sizeof *p->nodes);
    p->decl = malloc((size_t)n * sizeof *p->decl);
    p->cappool = n * 90 + 16;
    p->pool = malloc((size_t)p->cappool * sizeof *p->pool);
    for (int i = 0; i < n; i++) {
        gnode *g = &p->nodes[i];
        snprintf(g->name, sizeof g->name, "n%d_%u", i, rng_below(r, 1000));
        g->is_gate = i > 0 && rng_below(r, 5) == 0;
        if (g->is_gate || (i > 0 && rng_below(r, 6) != 0))
            g->e = gen_expr(p, r, i, 3);
        if (!g->is_gate) {
            /* Valid clause combinations only. */
            switch (rng_below(r, 6)) {
            case 0: g->flags |= IR_F_MAIN; break;
            case 1: g->flags |= IR_F_HOT; if (rng_below(r, 2)) g->flags |= IR_F_FIBER; break;
            case 2: g->flags |= IR_F_FIBER; break;
            case 3:
                g->flags |= IR_F_PARALLEL;
                if (rng_below(r, 2)) { g->flags |= IR_F_GRAIN; g->grain = 1 + rng_below(r, 1000); }
                break;
            default: break;
            }
            if (rng_below(r, 3) == 0) { g->flags |= IR_F_COST; g->cost = 1 + rng_below(r, 5000); }
            if (rng_below(r, 5) == 0) { g->flags |= IR_F_WHEN; snprintf(g->when, sizeof g->when, "pred%u", rng_below(r, 3)); }
            if (rng_below(r, 6) == 0) { g->flags |= IR_F_CALL; snprintf(g->call, sizeof g->call, "fn_%d", i); }
        }
        p->decl[i] = i;
    }
    for (int i = n - 1; i > 0; i--) { /* declaration order is random: forward references */
        int j = (int)rng_below(r, (uint32_t)i + 1), t = p->decl[i];
        p->decl[i] = p->decl[j];
        p->decl[j] = t;
    }
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    fprintf(f, "graph rg(struct  rg_ctx *) {\n");
    for (int k = 0; k < n; k++) {
        const gnode *g = &p->nodes[p->decl[k]];
        if (g->is_gate) {
            fprintf(f, "    gate %s = ", g->name);
            print_expr(f, p, g->e, -1, r);
            fputs(";\n", f);
            continue;
        }
        fprintf(f, "    task %s", g->name);
        if (g->e) { fputs(" after ", f); print_expr(f, p, g->e, -1, r); }
        if (g->flags & IR_F_MAIN) fputs(" on main", f);
        if (g->flags & IR_F_HOT) fputs(" hot", f);
        if (g->flags & IR_F_FIBER) fputs(" fiber", f);
        if (g->flags & IR_F_PARALLEL) fputs(" parallel", f);
        if (g->flags & IR_F_GRAIN) fprintf(f, " grain %u", g->grain);
        if (g->flags & IR_F_COST) fprintf(f, " cost %lluus", (unsigned long long)g->cost);
        if (g->flags & IR_F_WHEN) fprintf(f, " when %s", g->when);
        if (g->flags & IR_F_CALL) fprintf(f, " call %s", g->call);
        fputs(";\n", f);
    }
    fputs("}\n", f);
    fclose(f);
    return buf;
}

static void free_prog(gprog *p)
{
    free(p->nodes);
    free(p->decl);
    free(p->pool);
}

static const ir_node *find(const ir_graph *g, const char *name, uint32_t *idx)
{
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) {
            *idx = i;
            return &g->nodes[i];
        }
    return NULL;
}

static void check_structure(const ir_graph *g)
{
    uint64_t npred = 0, nsucc = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const ir_node *x = &g->nodes[i];
        for (uint32_t k = 0; k < x->npred; k++) {
            cr_assert_lt(x->pred[k], i, "edge %u -> %u points backward", x->pred[k], i);
            if (k) cr_assert_lt(x->pred[k - 1], x->pred[k], "pred list not sorted/unique");
            /* The mirror edge exists. */
            const ir_node *p = &g->nodes[x->pred[k]];
            int found = 0;
            for (uint32_t q = 0; q < p->nsucc; q++) found |= p->succ[q] == i;
            cr_assert(found, "succ list of %s lacks %s", p->name, x->name);
        }
        for (uint32_t k = 0; k < x->nsucc; k++) {
            cr_assert_gt(x->succ[k], i, "successor edge points backward");
            if (k) cr_assert_lt(x->succ[k - 1], x->succ[k]);
        }
        npred += x->npred;
        nsucc += x->nsucc;
        if (x->flags & IR_F_ANON) {
            cr_assert_eq(x->kind, IR_GATE);
            int is_or = strncmp(x->name, "_Or", 3) == 0, is_and = strncmp(x->name, "_And", 4) == 0;
            cr_assert(is_or || is_and, "generated gate name %s", x->name);
            cr_assert_eq(x->join, is_or ? IR_JOIN_OR : IR_JOIN_AND, "join kind of %s", x->name);
            cr_assert_eq(x->nsucc, 1, "a generated gate feeds exactly one node");
            cr_assert_geq(x->npred, 1);
        }
        if (x->kind == IR_TASK) cr_assert_not_null(x->func);
        else cr_assert_null(x->func);
    }
    cr_assert_eq(npred, g->nedges);
    cr_assert_eq(nsucc, g->nedges);
}

Test(ir, random_graphs_keep_their_meaning, .timeout = 120)
{
    int cases = scaled(300), rendered = 0;
    for (int c = 0; c < cases; c++) {
        rng r = {0x5eedULL * 1000003u + (uint64_t)c};
        gprog gp;
        size_t len;
        int n = 2 + (int)rng_below(&r, 60);
        char *src = gen_program(&gp, &r, n, &len);
        char *diag = NULL;
        size_t dlen = 0;
        FILE *df = open_memstream(&diag, &dlen);
        dagc_opts o = {.diag_out = df};
        ir_program *p = NULL;
        int rc = dagc_compile_memory("rand.dag", src, len, &o, &p);
        fclose(df);
        cr_assert_eq(rc, DAGC_OK, "case %d failed to compile:\n%s\n%s", c, src, diag);
        cr_assert_eq(p->ngraphs, 1);
        const ir_graph *g = &p->graphs[0];
        cr_assert_str_eq(g->ctype, "struct rg_ctx *");
        check_structure(g);

        /* Clauses and names. */
        uint32_t *idx = malloc((size_t)n * sizeof *idx);
        for (int i = 0; i < n; i++) {
            const gnode *gn = &gp.nodes[i];
            const ir_node *x = find(g, gn->name, &idx[i]);
            cr_assert_not_null(x, "node %s missing", gn->name);
            cr_assert_eq(x->kind, gn->is_gate ? IR_GATE : IR_TASK);
            if (gn->is_gate) continue;
            unsigned want = gn->flags;
            cr_assert_eq(x->flags, want, "flags of %s: %#x, want %#x", gn->name, x->flags, want);
            cr_assert_eq(x->grain, gn->grain);
            cr_assert_eq(x->cost_ns, gn->cost * 1000);
            if (gn->flags & IR_F_WHEN) cr_assert_str_eq(x->when, gn->when);
            else cr_assert_null(x->when);
            char fn[64];
            snprintf(fn, sizeof fn, "rg_%s", gn->name);
            cr_assert_str_eq(x->func, (gn->flags & IR_F_CALL) ? gn->call : fn);
        }

        /* Meaning: completion times agree for random durations. */
        int64_t *fin = malloc((size_t)n * sizeof *fin);
        int64_t *ifin = malloc((size_t)g->nnodes * sizeof *ifin);
        for (int trial = 0; trial < 4; trial++) {
            for (int i = 0; i < n; i++) {
                const gnode *gn = &gp.nodes[i];
                int64_t start = gn->e ? eval_src(&gp, gn->e, fin) : 0;
                fin[i] = start + (gn->is_gate ? 0 : 1 + (int64_t)rng_below(&r, 1000));
            }
            /* Durations are keyed by IR index through the name map. */
            int64_t *dur = calloc(g->nnodes, sizeof *dur);
            for (int i = 0; i < n; i++) {
                const gnode *gn = &gp.nodes[i];
                int64_t start = gn->e ? eval_src(&gp, gn->e, fin) : 0;
                dur[idx[i]] = fin[i] - start;
            }
            for (uint32_t i = 0; i < g->nnodes; i++) {
                const ir_node *x = &g->nodes[i];
                int64_t s = 0;
                for (uint32_t k = 0; k < x->npred; k++) {
                    int64_t v = ifin[x->pred[k]];
                    if (k == 0 || (x->join == IR_JOIN_OR ? v < s : v > s)) s = v;
                }
                ifin[i] = s + dur[i];
            }
            for (int i = 0; i < n; i++)
                cr_assert_eq(ifin[idx[i]], fin[i], "case %d: %s completes at %lld, want %lld\n%s",
                             c, gp.nodes[i].name, (long long)ifin[idx[i]], (long long)fin[i], src);
            free(dur);
        }
        /* The back ends accept every valid program; a sample of the DOT
         * outputs goes through Graphviz, which must not complain. */
        FILE *sink = fopen("/dev/null", "w");
        dg_dot_opts dopt = {1, NULL};
        cr_assert_eq(dg_emit_dot(sink, p, &dopt), 0);
        dg_print_stats(sink, p);
        fclose(sink);
        const char *dot = getenv("DOT");
        /* Small graphs only: dot's layout of a dense 60-node random graph
         * takes seconds, and the golden files cover the large shapes. */
        if (dot && n <= 16 && rendered < 12) {
            rendered++;
            char *tmp = make_temp_dir();
            char path[600];
            snprintf(path, sizeof path, "%s/g.dot", tmp);
            FILE *df2 = fopen(path, "w");
            cr_assert_eq(dg_emit_dot(df2, p, &dopt), 0);
            fclose(df2);
            char *argv[] = {(char *)dot, "-Tsvg", path, "-o", "/dev/null", NULL};
            spawn_result sr;
            cr_assert_eq(spawn_capture(NULL, argv, &sr), 0);
            cr_assert_eq(sr.status, 0, "dot failed on case %d: %s", c, sr.err);
            cr_assert_str_eq(sr.err, "", "dot warned on case %d", c);
            spawn_free(&sr);
            remove_dir(tmp);
            free(tmp);
        }

        free(fin);
        free(ifin);
        free(idx);
        dagc_program_free(p);
        free(diag);
        free(src);
        free_prog(&gp);
    }
}

Test(ir, precedence_and_generated_gates)
{
    const char *src =
        "graph p {\n"
        "  task a; task b; task c; task d;\n"
        "  task t1 after a or b and c;\n"        /* OR(a, AND(b, c)) */
        "  task t2 after a, b or c;\n"           /* AND(a, OR(b, c)) */
        "  task t3 after ((a and b) and (c and d));\n" /* flat AND of 4 */
        "}\n";
    ir_program *p = NULL;
    dagc_opts o = {.diag_out = NULL};
    cr_assert_eq(dagc_compile_memory("p.dag", src, strlen(src), &o, &p), DAGC_OK);
    const ir_graph *g = &p->graphs[0];
    uint32_t i;
    const ir_node *t1 = find(g, "t1", &i), *t2 = find(g, "t2", &i), *t3 = find(g, "t3", &i);
    cr_assert_eq(t1->join, IR_JOIN_OR);
    cr_assert_eq(t1->npred, 2);
    cr_assert_eq(t2->join, IR_JOIN_AND);
    cr_assert_eq(t2->npred, 2);
    cr_assert_eq(t3->join, IR_JOIN_AND);
    cr_assert_eq(t3->npred, 4, "nested ANDs flatten into one join");
    const ir_node *and1 = find(g, "_And1", &i), *or1 = find(g, "_Or1", &i);
    cr_assert_not_null(and1);
    cr_assert_not_null(or1);
    cr_assert_eq(and1->join, IR_JOIN_AND);
    cr_assert_eq(or1->join, IR_JOIN_OR);
    cr_assert_eq(g->nnodes, 9);
    dagc_program_free(p);
}

Test(ir, durations_are_exact)
{
    const char *src = "graph d { task a cost 800ns; task b cost 250us; task c cost 1.5ms;"
                      " task e cost 2s; task f cost 0.000000001s; task h cost 1.0000005ms; }\n";
    ir_program *p = NULL;
    dagc_opts o = {.diag_out = NULL};
    cr_assert_eq(dagc_compile_memory("d.dag", src, strlen(src), &o, &p), DAGC_OK);
    const ir_graph *g = &p->graphs[0];
    uint32_t i;
    cr_assert_eq(find(g, "a", &i)->cost_ns, 800);
    cr_assert_eq(find(g, "b", &i)->cost_ns, 250000);
    cr_assert_eq(find(g, "c", &i)->cost_ns, 1500000);
    cr_assert_eq(find(g, "e", &i)->cost_ns, 2000000000ull);
    cr_assert_eq(find(g, "f", &i)->cost_ns, 1);
    cr_assert_eq(find(g, "h", &i)->cost_ns, 1000001); /* 1000000.5 rounds up */
    dagc_program_free(p);
}

Test(ir, format_durations)
{
    char b[32];
    dg_fmt_duration(0, b, sizeof b);           cr_expect_str_eq(b, "0ns");
    dg_fmt_duration(800, b, sizeof b);         cr_expect_str_eq(b, "800ns");
    dg_fmt_duration(1500, b, sizeof b);        cr_expect_str_eq(b, "1.5us");
    dg_fmt_duration(2000000, b, sizeof b);     cr_expect_str_eq(b, "2ms");
    dg_fmt_duration(1234567, b, sizeof b);     cr_expect_str_eq(b, "1.235ms");
    dg_fmt_duration(1999999999, b, sizeof b);  cr_expect_str_eq(b, "2s");
    dg_fmt_duration(9200000, b, sizeof b);     cr_expect_str_eq(b, "9.2ms");
}
