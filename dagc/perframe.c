/*
 * perframe.c - (language 2.2) which per-frame resources a graph uses
 * (perframe.h). The checks are in sema.c (`reads prev` of a resource that
 * is not per frame), race.c and race_prev.c.
 */
#include "perframe.h"

#include <stdlib.h>

#include "util.h"

size_t dg_perframe_list(const ir_program *p, const ir_graph *g, dg_perframe **out)
{
    *out = NULL;
    size_t nres = p->nresources, n = 0;
    int any = 0;
    for (size_t r = 0; r < nres && !any; r++) any = p->resources[r].per_frame;
    if (!any) return 0;
    /* Per resource: 1 accessed, 2 read as the previous copy too. */
    unsigned char *use = dg_xcalloc(nres + 1, 1);
    for (uint32_t v = 0; v < g->nnodes; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) {
            const ir_access *ac = &g->nodes[v].acc[a];
            if (!p->resources[ac->res].per_frame) continue;
            use[ac->res] |= (unsigned char)(ac->prev ? 3 : 1);
        }
    for (size_t r = 0; r < nres; r++) n += use[r] != 0;
    if (n) {
        dg_perframe *v = dg_xmalloc(n * sizeof *v);
        size_t k = 0;
        for (size_t r = 0; r < nres; r++) {
            if (!use[r]) continue;
            v[k].res = (uint32_t)r;
            v[k].typed = p->resources[r].ctype != NULL;
            v[k].prev = (use[r] & 2) != 0;
            k++;
        }
        *out = v;
    }
    free(use);
    return n;
}
