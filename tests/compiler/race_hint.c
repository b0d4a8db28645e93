/*
 * race_hint.c - applies a race diagnostic's hint ("to order them, add
 * 'after X' to 'Y'", "add ', X' to the 'after' of 'Y'", X possibly
 * `prev X`, either followed by " in graph 'G'" when Y is a node of another
 * graph than the one checked) to the tests' model of the program, so that
 * race_props can check the contract's promise: the hint names the `after`
 * that would order the two tasks.
 */
#include <string.h>

#include "race_model.h"

static int node_index(const rgraph *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return i;
    return -1;
}

int race_quoted(const char **s, char *out, size_t n)
{
    if (**s != '\'')
        return 0;
    const char *e = strchr(*s + 1, '\'');
    if (!e || (size_t)(e - *s - 1) >= n)
        return 0;
    memcpy(out, *s + 1, (size_t)(e - *s - 1));
    out[e - *s - 1] = 0;
    *s = e + 1;
    return 1;
}

int race_lit(const char **s, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(*s, w, n) != 0)
        return 0;
    *s += n;
    return 1;
}

/* Depth-first search for a cycle through names (not `prev`) in graph G. */
static int cyclic_from(const rgraph *g, const rx *e, int *state);

static int visit(const rgraph *g, int i, int *state)
{
    if (state[i] == 1)
        return 1;
    if (state[i] == 2)
        return 0;
    state[i] = 1;
    int c = g->nodes[i].e && cyclic_from(g, g->nodes[i].e, state);
    state[i] = 2;
    return c;
}

static int cyclic_from(const rgraph *g, const rx *e, int *state)
{
    if (e->op == RX_NAME)
        return visit(g, e->node, state);
    if (e->op == RX_PREV)
        return 0;
    for (int k = 0; k < e->nk; k++)
        if (cyclic_from(g, e->k[k], state))
            return 1;
    return 0;
}

/* E with the first name Z among its AND operands replaced by X (*DONE set
 * then), the nodes on the way copied into P's pool: the caller's P may
 * share its expressions with another program (race_props copies P). NULL
 * when the pool is full. */
static rx *replace_name(rprog *p, rx *e, int z, int x, int *done)
{
    if (*done || (e->op != RX_NAME && e->op != RX_AND && e->op != RX_COMMA) ||
        (e->op == RX_NAME && e->node != z))
        return e;
    if (p->npool >= RM_POOL)
        return NULL;
    rx *c = &p->pool[p->npool++];
    *c = *e;
    if (e->op == RX_NAME) {
        c->node = x;
        *done = 1;
        return c;
    }
    for (int k = 0; k < e->nk; k++)
        if (!(c->k[k] = replace_name(p, e->k[k], z, x, done)))
            return NULL;
    return c;
}

static int cycle_check(const rgraph *g, char *err, size_t errn);

/* "replace 'Z', 'W' and 'V' with 'X' in the 'after' of 'Y'[ in graph 'G']" */
static int apply_replace(rprog *p, int top, const char *s, char *err, size_t errn)
{
    char zs[8][64], x[64], y[64], gname[64] = "";
    int nz = 0;
    do {
        if (nz == 8 || !race_quoted(&s, zs[nz], sizeof zs[nz]))
            goto shape;
        nz++;
    } while (race_lit(&s, ", ") || race_lit(&s, " and "));
    if (!race_lit(&s, " with ") || !race_quoted(&s, x, sizeof x) ||
        !race_lit(&s, " in the 'after' of ") || !race_quoted(&s, y, sizeof y))
        goto shape;
    if (race_lit(&s, " in graph ") && !race_quoted(&s, gname, sizeof gname))
        goto shape;
    if (*s)
        goto shape;
    int gi = gname[0] ? race_graph_index(p, gname) : top;
    if (gi < 0) {
        snprintf(err, errn, "hint names an unknown graph '%s'", gname);
        return -1;
    }
    rgraph *g = &p->g[gi];
    int yi = node_index(g, y), xi = node_index(g, x);
    if (yi < 0 || xi < 0 || !g->nodes[yi].e) {
        snprintf(err, errn, "replace hint names '%s' or '%s', not nodes with an after of graph %s",
                 x, y, g->name);
        return -1;
    }
    for (int i = 0; i < nz; i++) {
        int zi = node_index(g, zs[i]), done = 0;
        rx *e = zi < 0 ? NULL : replace_name(p, g->nodes[yi].e, zi, xi, &done);
        if (e)
            g->nodes[yi].e = e;
        if (!e || !done) {
            snprintf(err, errn, "replace hint: '%s' is not an input of '%s'", zs[i], y);
            return -1;
        }
    }
    return cycle_check(g, err, errn);
shape:
    snprintf(err, errn, "hint of an unknown shape: replace %s", s);
    return -1;
}

static int cycle_check(const rgraph *g, char *err, size_t errn)
{
    int state[RM_MAX_NODES] = {0};
    for (int i = 0; i < g->n; i++)
        if (visit(g, i, state)) {
            snprintf(err, errn, "the hint makes a dependency cycle in graph %s", g->name);
            return -1;
        }
    return 0;
}

int race_apply_hint(rprog *p, int top, const char *hint, int lenient, char *err, size_t errn)
{
    const char *s = hint;
    if (race_lit(&s, "to order them, replace "))
        return apply_replace(p, top, s, err, errn);
    char x[64], y[64], gname[64] = "";
    int comma;
    if (!race_lit(&s, "to order them, add "))
        goto shape;
    comma = race_lit(&s, "', ");
    if (!comma && !race_lit(&s, "'after "))
        goto shape;
    int prev = race_lit(&s, "prev ");
    size_t n = strcspn(s, "'");
    if (!n || n >= sizeof x || s[n] != '\'')
        goto shape;
    memcpy(x, s, n);
    x[n] = 0;
    s += n + 1;
    if (!race_lit(&s, comma ? " to the 'after' of " : " to ") || !race_quoted(&s, y, sizeof y))
        goto shape;
    if (race_lit(&s, " in graph ") && !race_quoted(&s, gname, sizeof gname))
        goto shape;
    if (*s)
        goto shape;
    int gi = gname[0] ? race_graph_index(p, gname) : top;
    if (gi < 0) {
        snprintf(err, errn, "hint names an unknown graph '%s'", gname);
        return -1;
    }
    rgraph *g = &p->g[gi];
    int yi = node_index(g, y), xi = node_index(g, x);
    if (yi < 0 || xi < 0) {
        snprintf(err, errn, "hint names '%s' or '%s', not nodes of graph %s", x, y, g->name);
        return -1;
    }
    /* A known dagc bug (race_repro): for a run node inside a subgraph that
     * has no `after`, the hint says to extend its `after`. */
    if (lenient && comma && !g->nodes[yi].e && g->nodes[yi].kind == RN_RUN)
        comma = 0;
    if (comma != (g->nodes[yi].e != NULL)) {
        snprintf(err, errn, "hint %s an 'after' that %s", comma ? "extends" : "adds",
                 comma ? "is not there" : "is there already");
        return -1;
    }
    if (p->npool + 2 > RM_POOL) {
        snprintf(err, errn, "expression pool full");
        return -1;
    }
    rx *add = &p->pool[p->npool++];
    memset(add, 0, sizeof *add);
    add->op = prev ? RX_PREV : RX_NAME;
    add->node = xi;
    if (comma) {
        rx *and_ = &p->pool[p->npool++];
        memset(and_, 0, sizeof *and_);
        and_->op = RX_COMMA;
        and_->nk = 2;
        and_->k[0] = g->nodes[yi].e;
        and_->k[1] = add;
        g->nodes[yi].e = and_;
    } else {
        g->nodes[yi].e = add;
    }
    int state[RM_MAX_NODES] = {0};
    for (int i = 0; i < g->n; i++)
        if (visit(g, i, state)) {
            snprintf(err, errn, "the hint makes a dependency cycle in graph %s", g->name);
            return -1;
        }
    return 0;
shape:
    snprintf(err, errn, "hint of an unknown shape: %s", hint);
    return -1;
}
