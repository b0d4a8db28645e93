/*
 * race_prev.c - (language 2.2) reads of the previous frame's copy of a
 * per-frame resource (docs/language.md, "Data across frames").
 *
 * A per-frame resource has one copy per frame in flight, so its accesses in
 * two frames never meet (race.c leaves its pairs across frames out), except
 * through `reads prev R`: frame N+1's task Y reads frame N's copy, which
 * frame N's writers of R write. Y must wait for each of them: frame N's
 * writer X must be in D2(Y) of the two-frame graph (race.c's comment).
 * Each writer that is not is a -Wpipeline-race warning at Y's `prev R`,
 * with a note at X's access and the hint that orders them (`prev X` in
 * Y's `after`).
 *
 * One reachability pass answers every pair: a bit ("slot") per node that
 * writes a resource read through `prev`, D(v) and D2(v) over those bits
 * for every node in topological order (race.c's formulas, restricted to
 * these slots), then per `reads prev R` the writers of R missing from
 * D2(Y), a word (64 writers) at a time. O((nodes + edges) * slots / 64)
 * time; in batches of slots when the two bitset arrays would exceed the
 * race check's memory budget (DAGC_RACE_BUDGET_BYTES, as race.c).
 *
 * Reports come in the order of the readers' accesses, then the writers',
 * and only the first -fmax-errors are shown (the rest counted in one
 * note): a first pass counts each access's missing writers, a second
 * collects the writers of the accesses that are shown (from the same
 * sets, or from sets made again when they took several batches), so the
 * memory for findings is bounded by what is shown.
 */
#include "race.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#ifndef DAGC_RACE_BUDGET_BYTES
#define DAGC_RACE_BUDGET_BYTES ((size_t)48 << 20) /* both bitset arrays together */
#endif

typedef struct pfind {
    uint32_t acc;    /* the reader's access: index into the `prev` accesses */
    uint32_t x;      /* the writer (node) */
} pfind;

typedef struct prace {
    const ir_program *p;
    const ir_graph *g;
    uint32_t n;
    uint32_t *slot_node;    /* slot -> writer node, in node order */
    uint32_t *node_slot;    /* node -> its slot, or UINT32_MAX */
    uint32_t nslots;
    uint32_t *wfirst;       /* per resource: its writers' slots, [wfirst[r], wfirst[r+1]) */
    uint32_t *wlist;
    uint32_t *ay, *aa;      /* the `prev` accesses: reader node, access index */
    uint32_t nacc;
    uint64_t *count;        /* per access: writers it misses */
    pfind *found;
    size_t nfound, foundcap;
    uint32_t collect_below; /* accesses below this one are collected (check) */
} prace;

static int pfind_cmp(const void *a, const void *b)
{
    const pfind *x = a, *y = b;
    if (x->acc != y->acc) return x->acc < y->acc ? -1 : 1;
    return x->x < y->x ? -1 : x->x > y->x;
}

/* The first write access of node x to resource r (not a `prev` read). */
static const ir_access *write_of(const ir_node *X, uint32_t r)
{
    for (uint32_t b = 0; b < X->nacc; b++)
        if (X->acc[b].res == r && X->acc[b].write && !X->acc[b].prev) return &X->acc[b];
    return NULL;
}

/* D1 and D2 over slots [b0, b1) (W words a node): race.c's joins
 * (race.h), a node's own bit its one slot. */
static void sets(const prace *P, uint32_t b0, uint32_t b1, uint64_t *D1, uint64_t *D2, size_t W)
{
    const ir_graph *g = P->g;
    uint32_t n = P->n;
    memset(D1, 0, (size_t)n * W * sizeof *D1);
    memset(D2, 0, (size_t)n * W * sizeof *D2);
    for (uint32_t v = 0; v < n; v++) {
        dg_race_join_frame(g, v, D1, W);
        uint32_t s = P->node_slot[v];
        if (s != UINT32_MAX && s >= b0 && s < b1) D1[(size_t)v * W + ((s - b0) >> 6)] |= 1ull << ((s - b0) & 63);
    }
    dg_race_join_next(g, D1, D2, W);
}

static void add_found(prace *P, uint32_t acc, uint32_t x)
{
    if (P->nfound == P->foundcap) {
        P->foundcap = P->foundcap ? P->foundcap * 2 : 64;
        P->found = dg_xrealloc(P->found, P->foundcap * sizeof *P->found);
    }
    P->found[P->nfound].acc = acc;
    P->found[P->nfound].x = x;
    P->nfound++;
}

/* Each `prev` access against the writers of its resource in slots
 * [b0, b1) (a mask per resource read through `prev`, rmask): counts
 * them (count), or collects those of accesses below collect_below. */
static void check(prace *P, uint32_t b0, uint32_t b1, const uint64_t *D2, size_t W,
                  uint64_t *rmask, const uint32_t *rid, uint32_t nrid, int count)
{
    memset(rmask, 0, (size_t)nrid * W * sizeof *rmask);
    for (size_t r = 0; r < P->p->nresources; r++) {
        if (rid[r] == UINT32_MAX) continue;
        uint64_t *m = rmask + (size_t)rid[r] * W;
        for (uint32_t k = P->wfirst[r]; k < P->wfirst[r + 1]; k++) {
            uint32_t s = P->wlist[k];
            if (s >= b0 && s < b1) m[(s - b0) >> 6] |= 1ull << ((s - b0) & 63);
        }
    }
    uint32_t top = count ? P->nacc : P->collect_below;
    for (uint32_t i = 0; i < top; i++) {
        uint32_t y = P->ay[i];
        const uint64_t *m = rmask + (size_t)rid[P->g->nodes[y].acc[P->aa[i]].res] * W;
        const uint64_t *d = D2 + (size_t)y * W;
        for (size_t w = 0; w < W; w++) {
            uint64_t c = m[w] & ~d[w];
            if (count) {
                P->count[i] += (uint64_t)__builtin_popcountll(c);
                continue;
            }
            while (c) {
                uint32_t s = b0 + (uint32_t)(w * 64) + (uint32_t)__builtin_ctzll(c);
                c &= c - 1;
                add_found(P, i, P->slot_node[s]);
            }
        }
    }
}

void dg_race_prev(const ir_program *p, const ir_graph *g, dg_diag *d)
{
    uint32_t n = g->nnodes;
    size_t nres = p->nresources;
    prace P = {.p = p, .g = g, .n = n};
    uint8_t *read_prev = dg_xcalloc(nres + 1, 1);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++)
            if (g->nodes[v].acc[a].prev) {
                read_prev[g->nodes[v].acc[a].res] = 1;
                P.nacc++;
            }
    if (!P.nacc) {
        free(read_prev);
        return;
    }
    /* The `prev` accesses in report order; the writers' slots. */
    P.ay = dg_xmalloc(P.nacc * sizeof *P.ay);
    P.aa = dg_xmalloc(P.nacc * sizeof *P.aa);
    P.count = dg_xcalloc(P.nacc, sizeof *P.count);
    P.node_slot = dg_xmalloc((size_t)n * sizeof *P.node_slot);
    P.slot_node = dg_xmalloc((size_t)(n ? n : 1) * sizeof *P.slot_node);
    P.wfirst = dg_xcalloc(nres + 2, sizeof *P.wfirst);
    size_t nw = 0;
    uint32_t i = 0;
    for (uint32_t v = 0; v < n; v++) {
        const ir_node *X = &g->nodes[v];
        P.node_slot[v] = UINT32_MAX;
        for (uint32_t a = 0; a < X->nacc; a++) {
            const ir_access *xa = &X->acc[a];
            if (xa->prev) {
                P.ay[i] = v;
                P.aa[i++] = a;
            } else if (xa->write && read_prev[xa->res] && write_of(X, xa->res) == xa) {
                if (P.node_slot[v] == UINT32_MAX) {
                    P.node_slot[v] = P.nslots;
                    P.slot_node[P.nslots++] = v;
                }
                P.wfirst[xa->res + 1]++;
                nw++;
            }
        }
    }
    for (size_t r = 0; r < nres; r++) P.wfirst[r + 1] += P.wfirst[r];
    P.wlist = dg_xmalloc((nw ? nw : 1) * sizeof *P.wlist);
    uint32_t *fill = dg_xmalloc((nres + 1) * sizeof *fill);
    memcpy(fill, P.wfirst, (nres + 1) * sizeof *fill);
    for (uint32_t v = 0; v < n; v++) {
        const ir_node *X = &g->nodes[v];
        for (uint32_t a = 0; a < X->nacc; a++) {
            const ir_access *xa = &X->acc[a];
            if (!xa->prev && xa->write && read_prev[xa->res] && write_of(X, xa->res) == xa)
                P.wlist[fill[xa->res]++] = P.node_slot[v];
        }
    }
    free(fill);

    size_t cap = d->max_errors > 0 ? (size_t)d->max_errors : SIZE_MAX;
    if (P.nslots) {
        /* Resources read through `prev`, numbered for their masks. */
        uint32_t *rid = dg_xmalloc((nres + 1) * sizeof *rid);
        uint32_t nrid = 0;
        for (size_t r = 0; r < nres; r++) rid[r] = read_prev[r] ? nrid++ : UINT32_MAX;
        /* Slots per batch: D1, D2 and the masks within the budget, a word
         * at least. */
        size_t per_word = ((size_t)n * 2 + nrid) * sizeof(uint64_t);
        size_t words = DAGC_RACE_BUDGET_BYTES / per_word;
        if (words < 1) words = 1;
        size_t span = words * 64 < P.nslots ? words * 64 : P.nslots;
        size_t W = (span + 63) / 64;
        uint64_t *D1 = dg_xmalloc((size_t)n * W * sizeof *D1);
        uint64_t *D2 = dg_xmalloc((size_t)n * W * sizeof *D2);
        uint64_t *rmask = dg_xmalloc((size_t)nrid * W * sizeof *rmask);
        int one = span >= P.nslots;
        /* First each access's missing writers counted, then those of the
         * accesses shown (the first `cap` findings) collected: again from
         * the sets when they took several batches. */
        for (uint32_t b0 = 0; b0 < P.nslots; b0 += (uint32_t)span) {
            uint32_t b1 = b0 + (uint32_t)span < P.nslots ? b0 + (uint32_t)span : P.nslots;
            size_t Wb = (b1 - b0 + 63) / 64;
            sets(&P, b0, b1, D1, D2, Wb);
            check(&P, b0, b1, D2, Wb, rmask, rid, nrid, 1);
        }
        uint64_t sum = 0;
        uint32_t k = 0;
        while (k < P.nacc && sum < cap) sum += P.count[k++];
        P.collect_below = k;
        if (sum)
            for (uint32_t b0 = 0; b0 < P.nslots; b0 += (uint32_t)span) {
                uint32_t b1 = b0 + (uint32_t)span < P.nslots ? b0 + (uint32_t)span : P.nslots;
                size_t Wb = (b1 - b0 + 63) / 64;
                if (!one) sets(&P, b0, b1, D1, D2, Wb);
                check(&P, b0, b1, D2, Wb, rmask, rid, nrid, 0);
            }
        free(D1);
        free(D2);
        free(rmask);
        free(rid);
    }
    if (P.nfound > 1)   /* qsort(NULL, 0, ...) is undefined: found is NULL when empty */
        qsort(P.found, P.nfound, sizeof *P.found, pfind_cmp);

    uint64_t total = 0;
    for (uint32_t k = 0; k < P.nacc; k++) total += P.count[k];
    size_t shown = 0;
    for (size_t k = 0; k < P.nfound && shown < cap && !d->stop; k++) {
        uint32_t y = P.ay[P.found[k].acc], x = P.found[k].x;
        const ir_node *Y = &g->nodes[y], *X = &g->nodes[x];
        const ir_access *ya = &Y->acc[P.aa[P.found[k].acc]];
        const char *rn = p->resources[ya->res].name;
        shown++;
        dg_warning(d, ya->pos,
                   "'%s' may read the previous frame's '%s' while '%s' of that frame "
                   "writes it [-Wpipeline-race]",
                   Y->name, rn, X->name);
        dg_note(d, write_of(X, ya->res)->pos, "'%s' writes '%s' here", X->name, rn);
        dg_race_hint(p, g, d, x, y, 1);
    }
    /* Past the cap the rest is counted (not after the error limit). */
    if (shown == cap && total > shown && !d->stop) {
        src_pos none = {0};
        dg_note(d, none, "%llu more reads of a previous frame's copy in graph '%s' not shown",
                (unsigned long long)(total - shown), g->name);
    }
    free(P.found);
    free(P.count);
    free(P.ay);
    free(P.aa);
    free(P.node_slot);
    free(P.slot_node);
    free(P.wfirst);
    free(P.wlist);
    free(read_prev);
}
