#include "emit_dot.h"
#include "costs.h"
#include "perframe.h"
#include "profile.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The visual language (see docs/language.md): tasks are boxes; `on main`
 * blue and marked "main"; `hot` warm orange; `fiber` double-bordered;
 * `parallel` a 3-D box with its grain; `when` dashed with its predicate;
 * AND gates diamonds, OR gates ellipses ("or" inputs dashed); the critical
 * path by cost drawn bold; a flattened `run` node a cluster labelled
 * "NODE: run GRAPH", and `prev` inputs dotted blue back edges labelled
 * "prev" that do not shape the layout. (v2.2) A graph's per-frame
 * resources are listed under its title, and each `reads prev R` is a
 * dashed green edge labelled "prev R" from every writer of R (in the
 * previous frame) to the reader, also outside the layout. */
#define COL_TASK "#ffffff"
#define COL_MAIN "#c6dbef"
#define COL_HOT "#fdae6b"
#define COL_GATE "#f0f0f0"
#define COL_PREV "#2b6cb0"
#define COL_PCOPY "#238b45"
/* With --profile the fill is the measured share of the frame, so `on main`
 * and `hot` show as a border of their colour, darker to stand out. */
#define COL_MAIN_BORDER "#2171b5"
#define COL_HOT_BORDER "#e6550d"
/* The border of the tasks on the plan's predicted critical path, and the
 * thread count it is predicted for (a console's few cores). */
#define COL_PCRIT "#7b3294"
#define DG_DOT_PREDICT_THREADS 4u

static void put_escaped(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', o);
        fputc(*s, o);
    }
}

static void node_id(FILE *o, const ir_program *p, const ir_graph *g, const ir_node *x)
{
    /* Several graphs share one DOT file: qualify names by graph. */
    (void)p;
    fputc('"', o);
    put_escaped(o, g->name);
    fputc('.', o);
    put_escaped(o, x->name);
    fputc('"', o);
}

/* Inside a subgraph's cluster, which names the run node, a node is
 * labelled with its own name. */
static const char *label_name(const ir_node *x)
{
    const char *dot = x->sub != UINT32_MAX ? strrchr(x->name, '.') : NULL;
    return dot ? dot + 1 : x->name;
}

/* measured: the profile's label line and fill, or NULL. */
static void task_node(FILE *o, const ir_node *x, int crit, int pcrit, const char *measured,
                      const char *mfill)
{
    char cost[32];
    const char *shape = (x->flags & IR_F_PARALLEL) ? "box3d" : "box";
    const char *fill = (x->flags & IR_F_MAIN) ? COL_MAIN : (x->flags & IR_F_HOT) ? COL_HOT : COL_TASK;
    if (mfill) fill = mfill;
    fprintf(o, " [shape=%s, style=\"filled%s\", fillcolor=\"%s\"", shape,
            (x->flags & IR_F_WHEN) ? ",dashed" : "", fill);
    if (x->flags & IR_F_FIBER) fputs(", peripheries=2", o);
    const char *border = !mfill ? NULL
                         : (x->flags & IR_F_MAIN) ? COL_MAIN_BORDER
                         : (x->flags & IR_F_HOT) ? COL_HOT_BORDER : NULL;
    /* The plan's predicted path: a border of its own, where a measured
     * diagram has not given it main's or hot's. */
    if (pcrit && !border) border = COL_PCRIT;
    if (border) fprintf(o, ", color=\"%s\"", border);
    if (crit) fputs(", penwidth=2.5", o);
    else if (border) fputs(", penwidth=2", o);
    fputs(", label=\"", o);
    put_escaped(o, label_name(x));
    /* Second line: the clauses that change how it runs. */
    char tags[96] = "";
    size_t t = 0;
#define TAG(str) (t += (size_t)snprintf(tags + t, sizeof tags - t, "%s%s", t ? " " : "", str))
    if (x->flags & IR_F_MAIN) TAG("main");
    if (x->flags & IR_F_HOT) TAG("hot");
    if (x->flags & IR_F_FIBER) TAG((x->flags & IR_F_CORO) ? "coro" : "fiber");
    if (x->flags & IR_F_PARALLEL) {
        TAG("parallel");
        if (x->flags & IR_F_GRAIN)
            t += (size_t)snprintf(tags + t, sizeof tags - t, " grain %u", (unsigned)x->grain);
    }
    if (x->flags & IR_F_COST) {
        dg_fmt_duration(x->cost_ns, cost, sizeof cost);
        TAG(cost);
    }
#undef TAG
    if (t) {
        fputs("\\n", o);
        fputs(tags, o);
    }
    if (x->flags & IR_F_WHEN) {
        fputs("\\nwhen ", o);
        put_escaped(o, x->when);
        for (uint32_t k = 0; k < x->nand_when; k++) {
            fputs(" and ", o);
            put_escaped(o, x->and_when[k]);
        }
        fputc('?', o);
    }
    if (x->flags & IR_F_CALL) {
        fputs("\\ncall ", o);
        put_escaped(o, x->func);
    }
    if (measured) {
        fputs("\\n", o);
        put_escaped(o, measured);
    }
    fputs("\"];\n", o);
}

static void gate_node(FILE *o, const ir_node *x, int crit)
{
    int anon = (x->flags & IR_F_ANON) != 0;
    const char *kind = x->join == IR_JOIN_OR ? "or" : "and";
    fprintf(o, " [shape=%s, style=filled, fillcolor=\"" COL_GATE "\", fontsize=9, "
               "margin=0.02, width=0.3, height=0.3",
            x->join == IR_JOIN_OR ? "ellipse" : "diamond");
    if (crit) fputs(", penwidth=2.5", o);
    fprintf(o, ", label=\"%s", kind);
    if (!anon) {
        fputs("\\n", o);
        put_escaped(o, label_name(x));
    }
    fputs("\"];\n", o);
}

static void indent(FILE *o, unsigned depth)
{
    for (unsigned i = 0; i < depth; i++) fputs("  ", o);
}

/* pg: the graph's measured times (--profile), or NULL. */
static void one_node(FILE *o, const ir_program *p, const ir_graph *g, uint32_t i,
                     const dg_analysis *an, unsigned depth, const dg_prof_graph *pg)
{
    const ir_node *x = &g->nodes[i];
    indent(o, depth);
    node_id(o, p, g, x);
    char line[96], fill[16];
    if (pg) {
        dg_profile_label(pg, i, line, sizeof line);
        dg_profile_fill(pg, i, fill, sizeof fill);
    }
    int pcrit = an->on_pcrit && an->on_pcrit[i];
    if (x->kind == IR_TASK) task_node(o, x, an->on_crit[i], pcrit, pg ? line : NULL, pg ? fill : NULL);
    else gate_node(o, x, an->on_crit[i]);
}

/* A flattened subgraph: its nodes, then its own subgraphs, in a cluster.
 * first/list: the nodes of each sub (counting sort by sub). */
static void emit_sub(FILE *o, const ir_program *p, const ir_graph *g, uint32_t s,
                     const dg_analysis *an, const uint32_t *first, const uint32_t *list,
                     unsigned depth, const dg_prof_graph *pg)
{
    const ir_sub *sb = &g->subs[s];
    indent(o, depth);
    fputs("subgraph \"cluster_", o);
    put_escaped(o, g->name);
    fputc('.', o);
    put_escaped(o, sb->name);
    fputs("\" {\n", o);
    indent(o, depth + 1);
    fputs("label=\"", o);
    put_escaped(o, sb->name);
    fputs(": run ", o);
    put_escaped(o, sb->graph);
    fputs("\"; labeljust=l; style=rounded; color=\"#777777\";\n", o);
    for (uint32_t k = first[s]; k < first[s + 1]; k++) one_node(o, p, g, list[k], an, depth + 1, pg);
    for (uint32_t c = s + 1; c < g->nsubs; c++)
        if (g->subs[c].parent == s) emit_sub(o, p, g, c, an, first, list, depth + 1, pg);
    indent(o, depth);
    fputs("}\n", o);
}

static void emit_nodes(FILE *o, const ir_program *p, const ir_graph *g, const dg_analysis *an,
                       const dg_prof_graph *pg)
{
    if (g->nsubs == 0) {
        for (uint32_t i = 0; i < g->nnodes; i++) one_node(o, p, g, i, an, 2, pg);
        return;
    }
    uint32_t ns = g->nsubs;
    uint32_t *first = dg_xcalloc(ns + 2, sizeof *first);
    uint32_t *list = dg_xmalloc((g->nnodes + 1) * sizeof *list);
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].sub != UINT32_MAX) first[g->nodes[i].sub + 1]++;
    for (uint32_t s = 0; s < ns; s++) first[s + 1] += first[s];
    uint32_t *fill = dg_xmalloc((ns + 1) * sizeof *fill);
    memcpy(fill, first, (ns + 1) * sizeof *fill);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        uint32_t s = g->nodes[i].sub;
        if (s == UINT32_MAX) one_node(o, p, g, i, an, 2, pg);
        else list[fill[s]++] = i;
    }
    for (uint32_t s = 0; s < ns; s++)
        if (g->subs[s].parent == UINT32_MAX) emit_sub(o, p, g, s, an, first, list, 2, pg);
    free(fill);
    free(first);
    free(list);
}

/* Legend ids contain '-', which no .dag name can, so a graph named
 * 'legend' cannot collide with them. */
static void legend(FILE *o)
{
    fputs("  subgraph \"cluster-legend\" {\n"
          "    label=\"legend\"; fontsize=10; style=dashed; color=\"#999999\";\n"
          "    node [fontsize=9];\n"
          "    \"-legend-task\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", label=\"task\\ncost\"];\n"
          "    \"-legend-main\" [shape=box, style=filled, fillcolor=\"" COL_MAIN "\", label=\"on main\"];\n"
          "    \"-legend-hot\" [shape=box, style=filled, fillcolor=\"" COL_HOT "\", label=\"hot\"];\n"
          "    \"-legend-fiber\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", peripheries=2, label=\"fiber\"];\n"
          "    \"-legend-parallel\" [shape=box3d, style=filled, fillcolor=\"" COL_TASK "\", label=\"parallel\\ngrain\"];\n"
          "    \"-legend-when\" [shape=box, style=\"filled,dashed\", fillcolor=\"" COL_TASK "\", label=\"when p?\"];\n"
          "    \"-legend-and\" [shape=diamond, style=filled, fillcolor=\"" COL_GATE "\", fontsize=9, margin=0.02, width=0.3, height=0.3, label=\"and\"];\n"
          "    \"-legend-or\" [shape=ellipse, style=filled, fillcolor=\"" COL_GATE "\", fontsize=9, margin=0.02, width=0.3, height=0.3, label=\"or\"];\n"
          "    \"-legend-crit\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", penwidth=2.5, label=\"critical path\"];\n"
          "    subgraph \"cluster-legend-run\" { label=\"node: run graph\"; style=rounded; color=\"#777777\"; fontsize=9;\n"
          "      \"-legend-sub\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", label=\"its tasks\"]; }\n"
          "    \"-legend-prev\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", label=\"after prev x\"];\n"
          "    \"-legend-prev\" -> \"-legend-prev\" [style=dotted, color=\"" COL_PREV "\", label=\" prev\", fontsize=8, fontcolor=\"" COL_PREV "\"];\n"
          "    \"-legend-task\" -> \"-legend-main\" -> \"-legend-hot\" [style=invis];\n"
          "    \"-legend-fiber\" -> \"-legend-parallel\" -> \"-legend-when\" [style=invis];\n"
          "    \"-legend-and\" -> \"-legend-or\" [style=dashed, label=\" any\", fontsize=8];\n"
          "    \"-legend-or\" -> \"-legend-crit\" [style=bold, penwidth=2.5];\n"
          "  }\n", o);
}

/* With --profile the fill means time, not placement: say so beside the
 * legend; main and hot keep their colour as a border (and their names in
 * each label), fiber, parallel and when their shapes. */
static void measured_legend(FILE *o)
{
    fputs("  subgraph \"cluster-measured\" {\n"
          "    label=\"measured\"; fontsize=10; style=dashed; color=\"#999999\";\n"
          "    node [fontsize=9, shape=box, style=filled];\n"
          "    \"-measured-low\" [fillcolor=\"#ffffff\", label=\"small share\\nof the frame\"];\n"
          "    \"-measured-high\" [fillcolor=\"#ef3b2c\", label=\"whole frame\\n(median)\"];\n"
          "    \"-measured-crit\" [fillcolor=\"#ffffff\", penwidth=2.5, label=\"measured\\ncritical path\"];\n"
          "    \"-measured-main\" [fillcolor=\"#ffffff\", color=\"" COL_MAIN_BORDER "\", penwidth=2, label=\"on main\"];\n"
          "    \"-measured-hot\" [fillcolor=\"#ffffff\", color=\"" COL_HOT_BORDER "\", penwidth=2, label=\"hot\"];\n"
          "    \"-measured-low\" -> \"-measured-high\" -> \"-measured-crit\" [style=invis];\n"
          "    \"-measured-main\" -> \"-measured-hot\" [style=invis];\n"
          "  }\n", o);
}

/* Where costs are known: the tasks on the path the plan's list scheduler
 * predicts for DG_DOT_PREDICT_THREADS threads (costs.h, dg_predict). */
static void predicted_legend(FILE *o)
{
    fprintf(o, "  subgraph \"cluster-predicted\" {\n"
               "    label=\"plan\"; fontsize=10; style=dashed; color=\"#999999\";\n"
               "    \"-predicted-crit\" [shape=box, style=filled, fillcolor=\"#ffffff\", fontsize=9, "
               "color=\"" COL_PCRIT "\", label=\"predicted critical path\\n(%u threads)\"];\n"
               "  }\n", DG_DOT_PREDICT_THREADS);
}

/* (v2.2) Under the graph's title: its per-frame resources, each with its
 * C type where it has one. */
static void perframe_title(FILE *o, const ir_program *p, const ir_graph *g)
{
    dg_perframe *pf = NULL;
    size_t n = dg_perframe_list(p, g, &pf);
    for (size_t k = 0; k < n; k++) {
        const ir_resource *r = &p->resources[pf[k].res];
        fputs(k ? ", " : "\\nper frame: ", o);
        put_escaped(o, r->name);
        if (r->ctype) {
            fputs(" (", o);
            put_escaped(o, r->ctype);
            fputc(')', o);
        }
    }
    free(pf);
}

/* (v2.2) Each `reads prev R` of node y: an edge from every writer of R,
 * whose previous frame's copy y reads. Returns whether it drew one. */
static int perframe_edges(FILE *o, const ir_program *p, const ir_graph *g, uint32_t y)
{
    const ir_node *Y = &g->nodes[y];
    int drew = 0;
    for (uint32_t a = 0; a < Y->nacc; a++) {
        const ir_access *ya = &Y->acc[a];
        if (!ya->prev) continue;
        /* a resource named twice in one task's reads draws once */
        int seen = 0;
        for (uint32_t b = 0; b < a && !seen; b++) seen = Y->acc[b].prev && Y->acc[b].res == ya->res;
        if (seen) continue;
        for (uint32_t x = 0; x < g->nnodes; x++) {
            const ir_node *X = &g->nodes[x];
            int writes = 0;
            for (uint32_t b = 0; b < X->nacc && !writes; b++)
                writes = X->acc[b].res == ya->res && X->acc[b].write && !X->acc[b].prev;
            if (!writes) continue;
            fputs("    ", o);
            node_id(o, p, g, X);
            fputs(" -> ", o);
            node_id(o, p, g, Y);
            fputs(" [style=dashed, color=\"" COL_PCOPY "\", constraint=false, label=\" prev ", o);
            put_escaped(o, p->resources[ya->res].name);
            fputs("\", fontsize=8, fontcolor=\"" COL_PCOPY "\"];\n", o);
            drew = 1;
        }
    }
    return drew;
}

/* Where some task reads a previous frame's copy: what its edge means. */
static void perframe_legend(FILE *o)
{
    fputs("  subgraph \"cluster-perframe\" {\n"
          "    label=\"per frame\"; fontsize=10; style=dashed; color=\"#999999\";\n"
          "    \"-perframe-writer\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", fontsize=9, label=\"writes r\"];\n"
          "    \"-perframe-reader\" [shape=box, style=filled, fillcolor=\"" COL_TASK "\", fontsize=9, label=\"reads prev r\"];\n"
          "    \"-perframe-writer\" -> \"-perframe-reader\" [style=dashed, color=\"" COL_PCOPY "\", label=\" prev r\", fontsize=8, fontcolor=\"" COL_PCOPY "\"];\n"
          "  }\n", o);
}

int dg_emit_dot(FILE *o, const ir_program *p, const dg_dot_opts *opt)
{
    int predicted = 0, pcopy = 0;
    fputs("// Generated by dagc from ", o);
    fputs(p->path ? p->path : "<input>", o);
    fputs(". Do not edit.\n", o);
    fputs("digraph dagc {\n"
          "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, nodesep=0.3, ranksep=0.4];\n"
          "  node [fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [color=\"#444444\", arrowsize=0.7, fontname=\"Helvetica\"];\n", o);
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        dg_analysis an;
        const dg_prof_graph *pg = opt && opt->prof && opt->prof->graphs[gi].present
                                      ? &opt->prof->graphs[gi] : NULL;
        if (pg) dg_profile_analyze(g, pg, &an);
        else dg_analyze_on(g, DG_STATS_THREADS, &an);   /* as --stats */
        /* Only with costs (declared, --costs, or the profile's medians):
         * without any, the schedule is by shape alone. */
        uint32_t *cost = dg_xmalloc(((size_t)g->nnodes + 1) * sizeof *cost);
        uint64_t *med = NULL;
        if (pg) {
            med = dg_xcalloc((size_t)g->nnodes + 1, sizeof *med);
            for (uint32_t i = 0; i < g->nnodes; i++)
                med[i] = pg->nodes[i].runs ? pg->nodes[i].median_ns : 0;
        }
        if (dg_costs_resolve_measured(g, med, cost) > 0) {
            an.on_pcrit = dg_xcalloc((size_t)g->nnodes + 1, 1);
            dg_prediction pr;
            dg_predict_measured(g, med, DG_DOT_PREDICT_THREADS, &pr, an.on_pcrit);
            predicted = 1;
        }
        free(med);
        free(cost);
        fputs("  subgraph \"cluster_", o);
        put_escaped(o, g->name);
        fputs("\" {\n    label=\"graph ", o);
        put_escaped(o, g->name);
        fputs("(", o);
        put_escaped(o, g->ctype);
        fputs(")", o);
        if (pg) {
            char m[32];
            dg_fmt_duration(pg->frame_median_ns, m, sizeof m);
            fprintf(o, "\\nmeasured: %u frames, median frame %s", pg->frames, m);
        }
        perframe_title(o, p, g);
        fputs("\"; labeljust=l; color=\"#bbbbbb\";\n", o);
        emit_nodes(o, p, g, &an, pg);
        for (uint32_t i = 0; i < g->nnodes; i++) {
            const ir_node *x = &g->nodes[i];
            for (uint32_t k = 0; k < x->npred; k++) {
                uint32_t pi = x->pred[k];
                int crit = an.on_crit[i] && an.crit_from[i] == pi;
                fputs("    ", o);
                node_id(o, p, g, &g->nodes[pi]);
                fputs(" -> ", o);
                node_id(o, p, g, x);
                if (x->join == IR_JOIN_OR && crit) fputs(" [style=\"dashed,bold\", penwidth=2.5]", o);
                else if (x->join == IR_JOIN_OR) fputs(" [style=dashed]", o);
                else if (crit) fputs(" [style=bold, penwidth=2.5]", o);
                fputs(";\n", o);
            }
            for (uint32_t k = 0; k < x->nprev; k++) {
                fputs("    ", o);
                node_id(o, p, g, &g->nodes[x->prev[k]]);
                fputs(" -> ", o);
                node_id(o, p, g, x);
                fputs(" [style=dotted, color=\"" COL_PREV "\", constraint=false, label=\" prev\", "
                      "fontsize=8, fontcolor=\"" COL_PREV "\"];\n", o);
            }
            pcopy |= perframe_edges(o, p, g, i);
        }
        fputs("  }\n", o);
        dg_analysis_free(&an);
    }
    if (opt && opt->legend) legend(o);
    if (opt && opt->legend && opt->prof) measured_legend(o);
    if (opt && opt->legend && predicted) predicted_legend(o);
    if (opt && opt->legend && pcopy) perframe_legend(o);
    fputs("}\n", o);
    return ferror(o) ? -1 : 0;
}
