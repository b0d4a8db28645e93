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

/* Up to 8 names of the tasks of G with an access to resource R of the
 * kind asked (1 write, 2 read, 3 previous copy), then how many more. */
static void names_of(FILE *out, const ir_graph *g, uint32_t r, int kind)
{
    uint32_t shown = 0, total = 0;
    for (uint32_t v = 0; v < g->nnodes; v++)
        for (uint32_t a = 0; a < g->nodes[v].nacc; a++) {
            const ir_access *ac = &g->nodes[v].acc[a];
            int k = ac->prev ? 3 : ac->write ? 1 : 2;
            if (ac->res != r || k != kind) continue;
            total++;
            if (shown < 8) fprintf(out, "%s%s", shown++ ? ", " : "", g->nodes[v].name);
        }
    if (total > shown) fprintf(out, ", ... %u more", total - shown);
}

void dg_perframe_stats(FILE *out, const ir_program *p, const ir_graph *g)
{
    dg_perframe *pf = NULL;
    size_t n = dg_perframe_list(p, g, &pf);
    for (size_t k = 0; k < n; k++) {
        const ir_resource *r = &p->resources[pf[k].res];
        if (r->ctype)
            fprintf(out, "  %-12s %s (%s; copies by dagc, " DG_PERFRAME_COPY "()%s)", k ? "" : "per frame",
                    r->name, r->ctype, g->name, r->name, pf[k].prev ? " and _prev_copy()" : "");
        else
            fprintf(out, "  %-12s %s (untyped: your copies)", k ? "" : "per frame", r->name);
        static const char *const what[] = {"", "written by", "read by", "previous copy read by"};
        const char *sep = ": ";
        for (int kind = 1; kind <= 3; kind++) {
            int any = 0;
            for (uint32_t v = 0; v < g->nnodes && !any; v++)
                for (uint32_t a = 0; a < g->nodes[v].nacc && !any; a++) {
                    const ir_access *ac = &g->nodes[v].acc[a];
                    any = ac->res == pf[k].res && kind == (ac->prev ? 3 : ac->write ? 1 : 2);
                }
            if (!any) continue;
            fprintf(out, "%s%s ", sep, what[kind]);
            names_of(out, g, pf[k].res, kind);
            sep = "; ";
        }
        fputc('\n', out);
    }
    if (n)
        fprintf(out, "               (each frame in flight has its own copy: no race across "
                "frames but through 'reads prev')\n");
    free(pf);
}
