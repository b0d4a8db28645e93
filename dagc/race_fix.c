/*
 * race_fix.c - how to order a race that race.c found: the hint in words
 * ("add 'after X' to 'Y'", "replace Z with X ...") at the level of the
 * graph the user wrote, and the same as fix-its where the source says
 * exactly where (ir_after_ref).
 */
#include "sema_int.h"
#include "race.h"

#include <stdio.h>
#include <string.h>

/* The node of a's ancestry (a itself, or a flattened run node enclosing it)
 * in the innermost graph that also holds b's; *in is that subgraph. */
static void common_level(const ir_graph *g, uint32_t a, uint32_t b, uint32_t *na, uint32_t *nb,
                         uint32_t *in)
{
    uint32_t ca[300], cb[300], la = 0, lb = 0; /* deeper than subgraphs nest (256) */
    for (uint32_t s = g->nodes[a].sub; s != UINT32_MAX && la < 300; s = g->subs[s].parent) ca[la++] = s;
    for (uint32_t s = g->nodes[b].sub; s != UINT32_MAX && lb < 300; s = g->subs[s].parent) cb[lb++] = s;
    /* The entry gate (the run node) belongs to its own sub, but is a node
     * of the enclosing graph. */
    if (la && g->subs[ca[0]].entry == a) la--, memmove(ca, ca + 1, la * sizeof *ca);
    if (lb && g->subs[cb[0]].entry == b) lb--, memmove(cb, cb + 1, lb * sizeof *cb);
    uint32_t c = UINT32_MAX;
    while (la && lb && ca[la - 1] == cb[lb - 1]) {
        c = ca[la - 1];
        la--;
        lb--;
    }
    *in = c;
    *na = la ? g->subs[ca[la - 1]].entry : a;
    *nb = lb ? g->subs[cb[lb - 1]].entry : b;
}

/* The name as the enclosing graph `in` writes it. */
static const char *local_name(const ir_graph *g, uint32_t in, uint32_t v)
{
    const char *n = g->nodes[v].name;
    return in == UINT32_MAX ? n : n + strlen(g->subs[in].name) + 1;
}

/* Whether v has an `after` clause in its own graph (a subgraph's root
 * waits only for the run node's entry, which the user did not write). */
static int has_after(const ir_graph *g, uint32_t v)
{
    const ir_node *x = &g->nodes[v];
    if (x->nprev) return 1;
    if (x->npred == 1 && x->pred[0] == dg_race_enclosing_entry(g, v)) return 0;
    return x->npred > 0;
}

/* The graph level v is a node of: its sub, or for a run node's entry gate
 * (which belongs to its own sub) the enclosing one. */
static uint32_t level_of(const ir_graph *g, uint32_t v)
{
    uint32_t s = g->nodes[v].sub;
    return s != UINT32_MAX && g->subs[s].entry == v ? g->subs[s].parent : s;
}

/* The inputs of `to` that waiting for `what` too would make redundant
 * (sema_order.c's "redundant dependency" warning: reached from `what`
 * through AND joins only), into z; how many (at most zmax). Only plain
 * tasks and gates of `to`'s own level are named; the search is bounded
 * (past it, none: the hint then just adds). */
static uint32_t made_redundant(const ir_graph *g, uint32_t to, uint32_t what, uint32_t *z,
                               uint32_t zmax)
{
    const ir_node *t = &g->nodes[to];
    /* A run node waits at its entry and is waited for at its exit (an AND
     * join over the whole subgraph); both are of the enclosing level. */
    uint32_t wx = what;
    if (g->nodes[what].flags & IR_F_RUN) wx = g->subs[g->nodes[what].sub].exit;
    const ir_node *w = &g->nodes[wx];
    uint32_t level = level_of(g, to);
    if (t->join != IR_JOIN_AND || (g->nodes[what].flags & IR_F_ANON) || w->join != IR_JOIN_AND ||
        level_of(g, what) != level)
        return 0;
    uint32_t lo = UINT32_MAX, nz = 0;
    for (uint32_t k = 0; k < t->npred; k++)
        if (t->pred[k] < lo) lo = t->pred[k];
    enum { LIMIT = 4096 };
    uint32_t seen[LIMIT], stack[LIMIT], ns = 0, sp = 0;
    /* Reached: `what`'s inputs, then through AND joins (index >= lo). */
    for (uint32_t k = 0; k < w->npred && ns < LIMIT; k++)
        if (w->pred[k] >= lo) seen[ns++] = w->pred[k], stack[sp++] = w->pred[k];
    while (sp) {
        const ir_node *u = &g->nodes[stack[--sp]];
        if (u->join != IR_JOIN_AND) continue;
        for (uint32_t k = 0; k < u->npred; k++) {
            uint32_t v = u->pred[k], dup = 0;
            if (v < lo) continue;
            for (uint32_t i = 0; i < ns && !dup; i++) dup = seen[i] == v;
            if (dup) continue;
            if (ns == LIMIT) return 0;
            seen[ns++] = v;
            stack[sp++] = v;
        }
    }
    for (uint32_t k = 0; k < t->npred && nz < zmax; k++) {
        const ir_node *p = &g->nodes[t->pred[k]];
        if ((p->flags & (IR_F_ANON | IR_F_RUN)) || p->sub != level) continue;
        for (uint32_t i = 0; i < ns; i++)
            if (seen[i] == t->pred[k]) {
                z[nz++] = t->pred[k];
                break;
            }
    }
    return nz;
}

static int same_pos(src_pos a, src_pos b)
{
    return a.line == b.line && a.col == b.col && a.file && b.file && strcmp(a.file, b.file) == 0;
}

/* The plain `after` list of task `to` (ir_after_ref): its first entry and
 * how many; 0 when it has none or a clause that is not plain. */
static size_t after_list(const ir_program *p, const ir_graph *g, uint32_t to,
                         const ir_after_ref **first)
{
    src_pos at = g->nodes[to].pos;
    for (size_t i = 0; i < p->nafter_refs; i++)
        if (same_pos(p->after_refs[i].task, at)) {
            size_t n = 1;
            while (i + n < p->nafter_refs && same_pos(p->after_refs[i + n].task, at)) n++;
            *first = &p->after_refs[i];
            return n;
        }
    return 0;
}

/* The hint: make `to` (at level `in`) also wait for `what`. */
static void hint(const ir_program *p, const ir_graph *g, dg_diag *d, uint32_t to, uint32_t in,
                 const char *prefix, uint32_t what)
{
    const char *tn = local_name(g, in, to), *wn = local_name(g, in, what);
    char where[300] = "";
    if (in != UINT32_MAX) snprintf(where, sizeof where, " in graph '%s'", g->subs[in].graph);
    /* The hint names the task, so it needs no position (and JSON keeps it
     * apart from the notes). Followed literally, it must not earn a
     * "redundant dependency" warning: an input that `what` already waits
     * for is replaced by it instead. */
    uint32_t z[8], nz = has_after(g, to) && !*prefix ? made_redundant(g, to, what, z, 8) : 0;
    if (nz) {
        dg_buf b = {0};
        for (uint32_t i = 0; i < nz; i++)
            dg_buf_printf(&b, "%s'%s'", i == 0 ? "" : i + 1 == nz ? " and " : ", ",
                          local_name(g, in, z[i]));
        dg_hint(d, "to order them, replace %s with '%s' in the 'after' of '%s'%s", b.p, wn, tn,
                where);
        dg_buf_free(&b);
    } else if (has_after(g, to))
        dg_hint(d, "to order them, add ', %s%s' to the 'after' of '%s'%s", prefix, wn, tn,
                where);
    else
        dg_hint(d, "to order them, add 'after %s%s' to '%s'%s", prefix, wn, tn, where);
    /* The same as an edit, where the source says exactly where: a task's
     * or a run node's plain `after` list (the names replaced, or the new
     * one added after its last), or one with no `after` (added after its
     * name). */
    if (g->nodes[to].kind != IR_TASK && !(g->nodes[to].flags & IR_F_RUN)) return;
    const ir_after_ref *al = NULL;
    size_t na = after_list(p, g, to, &al);
    char text[600];
    if (nz && na) {
        /* The last of them in the list becomes `what`, the others go with
         * the separator after each: edits that never overlap. */
        size_t hit[8], nh = 0;
        for (size_t i = 0; i < na; i++)
            for (uint32_t k = 0; k < nz && nh < 8; k++)
                if (!al[i].prev && strcmp(al[i].name, local_name(g, in, z[k])) == 0) {
                    hit[nh++] = i;
                    break;
                }
        if (nh != nz) return; /* not each once in this list: the words say it */
        for (size_t k = 0; k + 1 < nh; k++) dg_fixit_remove_operand(d, al[hit[k]].pos, 0);
        dg_fixit_replace(d, al[hit[nh - 1]].pos, wn);
    } else if (!nz && has_after(g, to) && na) {
        snprintf(text, sizeof text, ", %s%s", prefix, wn);
        dg_fixit_insert_after(d, al[na - 1].pos, text);
    } else if (!nz && !has_after(g, to)) {
        snprintf(text, sizeof text, " after %s%s", prefix, wn);
        dg_fixit_insert_after(d, g->nodes[to].pos, text);
    }
}

void dg_race_hint(const ir_program *p, const ir_graph *g, dg_diag *d, uint32_t x, uint32_t y,
                  int cross)
{
    /* Within a frame x is later in topological order, and so is its
     * enclosing block at the common level: waiting there for y's block
     * adds no cycle. Across frames y of the next frame waits for x. */
    uint32_t ax, ay, in;
    common_level(g, x, y, &ax, &ay, &in);
    if (cross)
        hint(p, g, d, ay, in, "prev ", ax);
    else
        hint(p, g, d, ax, in, "", ay);
}
