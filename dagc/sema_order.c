/*
 * sema_order.c - the order of one graph's nodes: the heap Kahn's algorithm
 * takes ready nodes from, the adjacency it walks, the report of a cycle when
 * there is one, and the redundant-dependency warning on the IR.
 */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- topological order and cycles --------------------------------------- */

void dg_heap_push(heap *h, uint64_t key, uint32_t v)
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

uint32_t dg_heap_pop(heap *h)
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

void dg_adj_build(const sgraph *g, adj *A)
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

void dg_adj_free(adj *A)
{
    free(A->pstart);
    free(A->plist);
    free(A->sstart);
    free(A->slist);
}

void dg_report_cycle(sgraph *g, const adj *A, const uint8_t *done)
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
void dg_warn_implied(sgraph *g, const ir_node *nodes, uint32_t n, sref *const *predpos)
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
            const sref *at = &predpos[v][k];
            if (by->flags & IR_F_ANON)
                dg_warning(g->d, at->pos, "redundant dependency: '%s' is already "
                           "waited for through another dependency", pn->name);
            else
                dg_warning(g->d, at->pos, "redundant dependency: '%s' already waits for '%s'",
                           by->name, pn->name);
            /* The name removed from its list: what the message says to do. */
            if (at->op != SREF_ALONE) dg_fixit_remove_operand(g->d, at->pos, at->op == SREF_LAST);
        }
    }
    free(mark);
    free(origin);
    free(stack);
    free(level);
}
