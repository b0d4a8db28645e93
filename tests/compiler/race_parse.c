/*
 * race_parse.c - reads the part of the .dag language the race tests write
 * by hand into the tests' own model (race_model.h), so that hand-made cases
 * and reproducers are plain .dag text for both dagc and the reference.
 * Deliberately small: valid input is assumed, and anything else is refused
 * with a message (it is test input, not user input).
 */
#include <ctype.h>
#include <string.h>

#include "race_model.h"

typedef struct lx {
    const char *s;
    int line;
    char tok[64];   /* the current token; "" at the end */
    int tline;
    char *err;
    size_t errn;
    int failed;
    /* names waiting for the end of their graph or file */
    char ename[RM_POOL][24];
    char runname[RM_MAX_GRAPHS][RM_MAX_NODES][24];
} lx;

static void next(lx *l)
{
    for (;;) {
        while (*l->s && isspace((unsigned char)*l->s))
            l->line += *l->s++ == '\n';
        if (l->s[0] == '/' && l->s[1] == '/') {
            while (*l->s && *l->s != '\n')
                l->s++;
            continue;
        }
        break;
    }
    l->tline = l->line;
    size_t n = 0;
    if (isalnum((unsigned char)*l->s) || *l->s == '_' || *l->s == '.') {
        while ((isalnum((unsigned char)*l->s) || *l->s == '_' || *l->s == '.') && n < 63)
            l->tok[n++] = *l->s++;
    } else if (*l->s == '"') {
        l->tok[n++] = *l->s++;
        while (*l->s && *l->s != '"' && n < 62)
            l->tok[n++] = *l->s++;
        if (*l->s)
            l->tok[n++] = *l->s++;
    } else if (*l->s) {
        l->tok[n++] = *l->s++;
    }
    l->tok[n] = 0;
}

static void fail(lx *l, const char *what)
{
    if (!l->failed)
        snprintf(l->err, l->errn, "line %d: %s (at '%s')", l->tline, what, l->tok);
    l->failed = 1;
}

static int is(lx *l, const char *t) { return strcmp(l->tok, t) == 0; }

static void expect(lx *l, const char *t)
{
    if (!is(l, t))
        fail(l, t);
    next(l);
}

static void name(lx *l, char *out, size_t n)
{
    if (!(isalpha((unsigned char)l->tok[0]) || l->tok[0] == '_'))
        fail(l, "a name");
    snprintf(out, n, "%.*s", (int)n - 1, l->tok);
    next(l);
}

static rx *new_rx(rprog *p, lx *l, int op)
{
    if (p->npool >= RM_POOL) {
        fail(l, "too many expression nodes");
        p->npool = 0;
    }
    rx *e = &p->pool[p->npool++];
    memset(e, 0, sizeof *e);
    e->op = op;
    return e;
}

static rx *expr(rprog *p, lx *l, int level);

static rx *primary(rprog *p, lx *l)
{
    if (is(l, "(")) {
        next(l);
        rx *e = expr(p, l, 0);
        expect(l, ")");
        return e;
    }
    int prev = is(l, "prev");
    if (prev)
        next(l);
    rx *e = new_rx(p, l, prev ? RX_PREV : RX_NAME);
    name(l, l->ename[e - p->pool], sizeof l->ename[0]);
    return e;
}

/* level 0: ',' ; 1: 'or' ; 2: 'and'. A list longer than four nests. */
static rx *expr(rprog *p, lx *l, int level)
{
    static const char *sep[] = {",", "or", "and"};
    static const int op[] = {RX_COMMA, RX_OR, RX_AND};
    rx *first = level == 2 ? primary(p, l) : expr(p, l, level + 1);
    if (!is(l, sep[level]) || l->failed)
        return first;
    rx *e = new_rx(p, l, op[level]);
    e->k[e->nk++] = first;
    while (is(l, sep[level]) && !l->failed) {
        next(l);
        if (e->nk == 4) {
            rx *up = new_rx(p, l, op[level]);
            up->k[up->nk++] = e;
            e = up;
        }
        e->k[e->nk++] = level == 2 ? primary(p, l) : expr(p, l, level + 1);
    }
    return e;
}

/* A `reads`/`writes` list; (v2.2) `prev R` items go to *PREV. */
static uint32_t res_list(rprog *p, lx *l, uint32_t *prev)
{
    uint32_t m = 0;
    int first = 1;
    do {
        if (!first)
            next(l);
        first = 0;
        int is_prev = prev && is(l, "prev");
        if (is_prev)
            next(l);
        char r[24];
        name(l, r, sizeof r);
        int k = 0;
        while (k < p->nres && strcmp(p->res[k], r) != 0)
            k++;
        if (k == p->nres)
            fail(l, "a declared resource");
        if (is_prev)
            *prev |= 1u << k;
        else
            m |= 1u << k;
    } while (is(l, ",") && !l->failed);
    return m;
}

static int resolve(const rgraph *g, const char *nm)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->nodes[i].name, nm) == 0)
            return i;
    return -1;
}

static void graph(rprog *p, lx *l)
{
    if (p->ng >= RM_MAX_GRAPHS)
        fail(l, "fewer graphs");
    int gi = p->ng++ % RM_MAX_GRAPHS;
    rgraph *g = &p->g[gi];
    memset(g, 0, sizeof *g);
    name(l, g->name, sizeof g->name);
    if (is(l, "(")) {
        int depth = 0;
        do {
            depth += is(l, "(") - is(l, ")");
            next(l);
        } while (depth > 0 && l->tok[0]);
    }
    expect(l, "{");
    int pool0 = p->npool;
    while (!is(l, "}") && l->tok[0] && !l->failed) {
        if (g->n >= RM_MAX_NODES) {
            fail(l, "fewer nodes");
            break;
        }
        rnode *x = &g->nodes[g->n];
        memset(x, 0, sizeof *x);
        x->line = l->tline;
        int gate = is(l, "gate");
        if (!gate && !is(l, "task"))
            fail(l, "task or gate");
        next(l);
        name(l, x->name, sizeof x->name);
        x->kind = gate ? RN_GATE : RN_TASK;
        if (gate) {
            expect(l, "=");
            x->e = expr(p, l, 0);
        }
        while (!gate && !is(l, ";") && l->tok[0] && !l->failed) {
            if (is(l, "after")) { next(l); x->e = expr(p, l, 0); }
            else if (is(l, "on")) { next(l); expect(l, "main"); x->flags |= RF_MAIN; }
            else if (is(l, "hot")) { next(l); x->flags |= RF_HOT; }
            else if (is(l, "fiber")) { next(l); x->flags |= RF_FIBER; }
            else if (is(l, "parallel")) { next(l); x->flags |= RF_PARALLEL; }
            else if (is(l, "grain") || is(l, "cost")) { next(l); next(l); }
            else if (is(l, "call")) { next(l); next(l); }
            else if (is(l, "when")) { next(l); name(l, x->when, sizeof x->when); }
            else if (is(l, "run")) {
                next(l);
                x->kind = RN_RUN;
                name(l, l->runname[gi][g->n], sizeof l->runname[0][0]);
            }
            else if (is(l, "reads")) { next(l); x->reads |= res_list(p, l, &x->reads_prev); }
            else if (is(l, "writes")) { next(l); x->writes |= res_list(p, l, NULL); }
            else fail(l, "a clause");
        }
        expect(l, ";");
        g->n++;
    }
    expect(l, "}");
    for (int i = pool0; i < p->npool && !l->failed; i++) {
        rx *e = &p->pool[i];
        if (e->op != RX_NAME && e->op != RX_PREV)
            continue;
        e->node = resolve(g, l->ename[i]);
        if (e->node < 0)
            snprintf(l->err, l->errn, "graph %s: unknown name %s", g->name, l->ename[i]),
                l->failed = 1;
    }
}

int race_graph_index(const rprog *p, const char *nm)
{
    for (int i = 0; i < p->ng; i++)
        if (strcmp(p->g[i].name, nm) == 0)
            return i;
    return -1;
}

int parse_race_prog(const char *src, rprog *p, char *err, size_t errn)
{
    static lx l; /* large; the tests are single-threaded */
    memset(&l, 0, sizeof l);
    memset(p, 0, sizeof *p);
    l.s = src;
    l.line = 1;
    l.err = err;
    l.errn = errn;
    next(&l);
    while (l.tok[0] && !l.failed) {
        if (is(&l, "resource")) {
            do {
                next(&l);
                if (p->nres >= RM_MAX_RES)
                    fail(&l, "fewer resources");
                name(&l, p->res[p->nres++ % RM_MAX_RES], sizeof p->res[0]);
                if (is(&l, "per")) { /* (v2.2) */
                    next(&l);
                    expect(&l, "frame");
                    p->per_frame |= 1u << ((p->nres - 1) % RM_MAX_RES);
                }
            } while (is(&l, ",") && !l.failed);
            expect(&l, ";");
        } else if (is(&l, "include")) {
            next(&l);
            next(&l);
            expect(&l, ";");
        } else if (is(&l, "graph")) {
            next(&l);
            graph(p, &l);
        } else {
            fail(&l, "resource, include or graph");
        }
    }
    for (int gi = 0; gi < p->ng && !l.failed; gi++)
        for (int i = 0; i < p->g[gi].n; i++) {
            rnode *x = &p->g[gi].nodes[i];
            if (x->kind != RN_RUN)
                continue;
            x->sub = race_graph_index(p, l.runname[gi][i]);
            if (x->sub < 0)
                snprintf(err, errn, "unknown graph %s", l.runname[gi][i]), l.failed = 1;
        }
    return l.failed ? -1 : 0;
}
