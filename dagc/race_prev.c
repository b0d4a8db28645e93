/*
 * race_prev.c - (language 2.2) reads of the previous frame's copy of a
 * per-frame resource (docs/language.md, "Data across frames").
 *
 * A per-frame resource has one copy per frame in flight, so its accesses in
 * two frames never meet (race.c leaves its pairs across frames out), except
 * through `reads prev R`: frame N+1's task Y reads frame N's copy, which
 * frame N's writers of R write. Y must wait for each of them: frame N's
 * writer X must be in D2(Y) of the two-frame graph (race.c's comment),
 * which one ordering question answers (race_reach.c). Each writer that is
 * not is a -Wpipeline-race warning at Y's `prev R`, with a note at X's
 * access and the hint that orders them (`prev X` in Y's `after`).
 *
 * Cost: one question per (reader, writer) pair of a resource, each a
 * bounded search; readers of the previous copy are few in practice.
 */
#include "race.h"

#include <stdint.h>

#include "util.h"

void dg_race_prev(const ir_program *p, const ir_graph *g, dg_diag *d)
{
    uint32_t n = g->nnodes;
    int any = 0;
    for (uint32_t v = 0; v < n && !any; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) any |= g->nodes[v].acc[a].prev != 0;
    if (!any) return;
    rreach *q = dg_reach_new(g);
    size_t shown = 0, more = 0;
    size_t cap = d->max_errors > 0 ? (size_t)d->max_errors : SIZE_MAX;
    for (uint32_t y = 0; y < n && !d->stop; y++) {
        const ir_node *Y = &g->nodes[y];
        for (uint32_t a = 0; a < Y->nacc && !d->stop; a++) {
            const ir_access *ya = &Y->acc[a];
            if (!ya->prev) continue;
            for (uint32_t x = 0; x < n && !d->stop; x++) {
                const ir_node *X = &g->nodes[x];
                const ir_access *xa = NULL;
                for (uint32_t b = 0; b < X->nacc && !xa; b++)
                    if (X->acc[b].res == ya->res && X->acc[b].write && !X->acc[b].prev)
                        xa = &X->acc[b];
                if (!xa) continue;
                int64_t budget = INT64_MAX; /* exact: no fallback here */
                if (dg_reach(q, x, y + n, &budget) > 0) continue;
                if (shown == cap) {
                    more++;
                    continue;
                }
                shown++;
                const char *rn = p->resources[ya->res].name;
                dg_warning(d, ya->pos,
                           "'%s' may read the previous frame's '%s' while '%s' of that frame "
                           "writes it [-Wpipeline-race]",
                           Y->name, rn, X->name);
                dg_note(d, xa->pos, "'%s' writes '%s' here", X->name, rn);
                dg_race_hint(p, g, d, x, y, 1);
            }
        }
    }
    if (more) {
        src_pos none = {0};
        dg_note(d, none, "%zu more reads of a previous frame's copy in graph '%s' not shown",
                more, g->name);
    }
    dg_reach_free(q);
}
