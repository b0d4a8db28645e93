/* stats_json.c - `--stats --stats-format json`: --stats's numbers and the
 * plan's prediction as one JSON document (docs/language.md, "--stats"). */
#include <inttypes.h>
#include <stdlib.h>

#include "costs.h"
#include "json.h"
#include "stats.h"
#include "util.h"

void dg_print_stats_json(FILE *out, const ir_program *p)
{
    static const uint32_t threads[] = {1, 2, 4, 6, 8, 16};
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"graphs\": [");
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        dg_analysis an;
        dg_analyze_on(g, DG_STATS_THREADS, &an);
        uint32_t *cost = dg_xmalloc(((size_t)g->nnodes + 1) * sizeof *cost);
        uint32_t known = dg_costs_resolve(g, cost);
        free(cost);
        dg_buf_puts(&b, gi ? ",\n  {\"name\": " : "\n  {\"name\": ");
        dg_json_write_str(&b, g->name);
        dg_buf_printf(&b, ", \"nodes\": %u, \"tasks\": %u, \"edges\": %u, \"depth\": %u, "
                          "\"width\": %u, \"total_cost_ns\": %" PRIu64 ", \"critical_ns\": %" PRIu64
                          ", \"critical_threads\": %u, \"critical_path\": [",
                      g->nnodes, an.ntasks, g->nedges, an.depth, an.width, an.total_cost,
                      an.crit_cost, (unsigned)DG_STATS_THREADS);
        int first = 1;
        for (uint32_t i = 0; i < an.ncrit; i++) {
            const ir_node *x = &g->nodes[an.crit[i]];
            if (x->kind != IR_TASK) continue;
            if (!first) dg_buf_puts(&b, ", ");
            dg_json_write_str(&b, x->name);
            first = 0;
        }
        dg_buf_printf(&b, "],\n   \"plan\": {\"costs_known\": %u, \"default_cost_ns\": %u, "
                          "\"predicted\": [",
                      known, known ? 0u : DG_DEFAULT_COST_NS);
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
            dg_prediction pr;
            dg_predict(g, threads[t], &pr, NULL);
            dg_buf_printf(&b, "%s\n     {\"threads\": %u, \"frame_ns\": %" PRIu64 ", \"bound_ns\": %" PRIu64
                              ", \"piped_ns\": %" PRIu64 ", \"pipeline_ns\": %" PRIu64 "}",
                          t ? "," : "", threads[t], pr.frame_ns, pr.bound_ns, pr.piped_ns, pr.pipe_ns);
        }
        dg_buf_puts(&b, "]}}");
        dg_analysis_free(&an);
    }
    dg_buf_puts(&b, "\n]}\n");
    fwrite(b.p, 1, b.len, out);
    dg_buf_free(&b);
}
