#include "stats.h"
#include "costs.h"
#include "util.h"
#include "perframe.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void dg_fmt_duration(uint64_t ns, char *buf, size_t n)
{
    static const struct { const char *unit; uint64_t scale; } u[] = {
        {"s", 1000000000u}, {"ms", 1000000u}, {"us", 1000u}, {"ns", 1u},
    };
    for (size_t i = 0; i < 4; i++) {
        if (ns < u[i].scale && u[i].scale > 1) continue;
        uint64_t whole = ns / u[i].scale, rest = ns % u[i].scale;
        if (rest == 0) {
            snprintf(buf, n, "%" PRIu64 "%s", whole, u[i].unit);
            return;
        }
        /* Up to three decimals, rounded, trailing zeros trimmed. */
        unsigned milli = (unsigned)((rest * 1000 + u[i].scale / 2) / u[i].scale);
        if (milli >= 1000) {
            whole++;
            milli -= 1000;
        }
        char frac[16];
        snprintf(frac, sizeof frac, "%03u", milli % 1000);
        size_t l = strlen(frac);
        while (l > 0 && frac[l - 1] == '0') frac[--l] = 0;
        if (l) snprintf(buf, n, "%" PRIu64 ".%s%s", whole, frac, u[i].unit);
        else snprintf(buf, n, "%" PRIu64 "%s", whole, u[i].unit);
        return;
    }
    snprintf(buf, n, "0ns");
}

/* Path weights compare by cost first, then by the number of tasks, so a
 * graph without any `cost` still gets its longest chain as critical path. */
typedef struct pw { uint64_t cost; uint32_t tasks; } pw;

static int pw_less(pw a, pw b)
{
    return a.cost < b.cost || (a.cost == b.cost && a.tasks < b.tasks);
}

/* What node x takes on `threads` threads: its cost, or a parallel task's
 * share of it (its range is split among the threads free while it runs:
 * it cannot end sooner than cost / threads). */
static uint64_t span_on(const ir_node *x, uint32_t threads)
{
    if (!(x->flags & IR_F_PARALLEL) || threads <= 1) return x->cost_ns;
    return (x->cost_ns + threads - 1) / threads;
}

void dg_analyze(const ir_graph *g, dg_analysis *an) { dg_analyze_on(g, 1, an); }

void dg_analyze_on(const ir_graph *g, uint32_t threads, dg_analysis *an)
{
    memset(an, 0, sizeof *an);
    uint32_t n = g->nnodes;
    an->level = dg_xcalloc(n + 1, sizeof *an->level);
    an->on_crit = dg_xcalloc(n + 1, 1);
    an->crit = dg_xmalloc((n + 1) * sizeof *an->crit);
    an->crit_from = dg_xmalloc((n + 1) * sizeof *an->crit_from);
    pw *fin = dg_xmalloc((n + 1) * sizeof *fin);
    uint32_t *per_level = dg_xcalloc(n + 1, sizeof *per_level);
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *x = &g->nodes[i];
        if (x->kind == IR_TASK) {
            an->ntasks++;
            an->total_cost += x->cost_ns;
        } else if (x->flags & IR_F_RUN) {
            an->nruns++;
        } else if (x->flags & IR_F_ANON) {
            if (x->join == IR_JOIN_OR) an->nanon_or++;
            else an->nanon_and++;
        } else {
            an->ngates++;
        }
        if (x->npred == 0) an->roots++;
        if (x->nsucc == 0) an->sinks++;
        uint32_t lv = 0;
        /* Topological order: every predecessor is already done. An OR node
         * starts when its first input finishes, an AND node after its last. */
        pw start = {0, 0};
        uint32_t from = UINT32_MAX;
        for (uint32_t k = 0; k < x->npred; k++) {
            uint32_t p = x->pred[k];
            if (an->level[p] + 1 > lv) lv = an->level[p] + 1;
            if (from == UINT32_MAX ||
                (x->join == IR_JOIN_AND ? pw_less(start, fin[p]) : pw_less(fin[p], start))) {
                start = fin[p];
                from = p;
            }
        }
        an->level[i] = lv;
        per_level[lv]++;
        if (lv + 1 > an->depth) an->depth = lv + 1;
        an->crit_from[i] = from;
        fin[i] = start;
        if (x->kind == IR_TASK) {
            fin[i].cost += span_on(x, threads);
            fin[i].tasks++;
        }
    }
    for (uint32_t l = 0; l < an->depth; l++)
        if (per_level[l] > an->width) an->width = per_level[l];
    uint32_t end = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (g->nodes[i].nsucc == 0 && (end == UINT32_MAX || pw_less(fin[end], fin[i])))
            end = i;
    if (end != UINT32_MAX) {
        an->crit_cost = fin[end].cost;
        an->crit_tasks = fin[end].tasks;
        uint32_t len = 0;
        for (uint32_t v = end; v != UINT32_MAX; v = an->crit_from[v]) an->crit[len++] = v;
        for (uint32_t i = 0; i < len / 2; i++) {
            uint32_t t = an->crit[i];
            an->crit[i] = an->crit[len - 1 - i];
            an->crit[len - 1 - i] = t;
        }
        an->ncrit = len;
        for (uint32_t i = 0; i < len; i++) an->on_crit[an->crit[i]] = 1;
    }
    free(fin);
    free(per_level);
}

void dg_analysis_free(dg_analysis *an)
{
    free(an->level);
    free(an->on_crit);
    free(an->crit);
    free(an->crit_from);
    free(an->on_pcrit);
    memset(an, 0, sizeof *an);
}

/* The shortest period between frames of a pipeline on `threads` threads:
 * no frame can start a node before the same node of the last frame ends
 * (so the longest task bounds it; a parallel task is split, and its share
 * never exceeds total cost / threads, below), and a `prev q` input of v
 * closes a loop v -> ... -> q -> v of the next frame: the earliest q can
 * finish after v starts bounds it too (a parallel task on it counted at
 * its share). That earliest finish follows AND joins after their latest
 * input and OR joins after their earliest, from v alone (everything else
 * taken as done), so it is a lower bound. Work bounds it as well: total
 * cost / threads. */
uint64_t dg_prev_loop_bound(const ir_graph *g, uint32_t threads, uint32_t *from)
{
    uint64_t best = 0;
    *from = UINT32_MAX;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (span_on(&g->nodes[i], threads) > best) best = span_on(&g->nodes[i], threads);
    if (g->nprev == 0) return best;
    uint64_t *fin = dg_xmalloc((g->nnodes + 1) * sizeof *fin);
    const uint64_t none = UINT64_MAX;
    size_t budget = 50u * 1000 * 1000; /* past it, the node bound alone */
    for (uint32_t v = 0; v < g->nnodes; v++) {
        const ir_node *x = &g->nodes[v];
        uint32_t hi = 0;
        for (uint32_t k = 0; k < x->nprev; k++)
            if (x->prev[k] >= v && x->prev[k] + 1 > hi) hi = x->prev[k] + 1;
        if (hi == 0 || budget < (size_t)(hi - v)) continue;
        budget -= hi - v;
        fin[v] = span_on(x, threads);
        for (uint32_t u = v + 1; u < hi; u++) {
            const ir_node *y = &g->nodes[u];
            uint64_t t = none;
            int all = 1;
            for (uint32_t k = 0; k < y->npred; k++) {
                uint32_t p = y->pred[k];
                uint64_t f = p >= v ? fin[p] : none;
                if (f == none) all = 0;
                else if (y->join == IR_JOIN_AND ? (t == none || f > t) : 0) t = f;
            }
            if (y->join == IR_JOIN_OR) {
                t = none;
                for (uint32_t k = 0; k < y->npred && all; k++)
                    if (t == none || fin[y->pred[k]] < t) t = fin[y->pred[k]];
                if (!all) t = none;
            }
            fin[u] = t == none ? none : t + span_on(y, threads);
        }
        for (uint32_t k = 0; k < x->nprev; k++) {
            uint32_t q = x->prev[k];
            if (q >= v && fin[q] != none && fin[q] > best) {
                best = fin[q];
                *from = v;
            }
        }
    }
    free(fin);
    return best;
}

void dg_print_path(FILE *out, const ir_graph *g, const dg_analysis *an)
{
    uint32_t shown = 0;
    /* Only the tasks, which the count before the list ("over N tasks")
     * counts: gates and run nodes cost nothing, and a task inside a run
     * node already names it (sim.ragdoll.broad). */
    for (uint32_t i = 0; i < an->ncrit; i++) {
        const ir_node *x = &g->nodes[an->crit[i]];
        if (x->kind != IR_TASK) continue;
        if (shown < 32) fprintf(out, "%s%s", shown ? " -> " : " ", x->name);
        else if (shown == 32) fputs(" -> ...", out);
        shown++;
    }
    fputc('\n', out);
}

static void list_names(FILE *out, const ir_graph *g, int roots)
{
    uint32_t shown = 0, total = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const ir_node *x = &g->nodes[i];
        if ((roots ? x->npred : x->nsucc) != 0) continue;
        total++;
        if (shown < 8) fprintf(out, "%s%s", shown++ ? ", " : " (", x->name);
    }
    if (total > shown) fprintf(out, ", ... %u more", total - shown);
    if (shown) fputc(')', out);
}

/* The plan's own list scheduler on 1 .. 16 threads (costs.c): what one
 * frame at a time takes, beside its bound, the period of frames in flight
 * on the pipeline's lists, and the pipeline's bound. */
void dg_print_prediction(FILE *out, const ir_graph *g)
{
    static const uint32_t threads[] = {1, 2, 4, 6, 8, 16};
    uint32_t *cost = dg_xmalloc(((size_t)g->nnodes + 1) * sizeof *cost);
    uint32_t known = dg_costs_resolve(g, cost);
    free(cost);
    char d[32];
    dg_fmt_duration(DG_DEFAULT_COST_NS, d, sizeof d);
    if (known == 0)
        fprintf(out, "  plan         predicted frame time (no costs given: %s a task)\n", d);
    else
        fprintf(out, "  plan         predicted frame time (tasks without a cost: the median)\n");
    fprintf(out, "               threads  predicted  bound      piped      pipeline\n");
    for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
        dg_prediction pr;
        dg_predict(g, threads[i], &pr, NULL);
        char b1[32], b2[32], b3[32], b4[32];
        dg_fmt_duration(pr.frame_ns, b1, sizeof b1);
        dg_fmt_duration(pr.bound_ns, b2, sizeof b2);
        dg_fmt_duration(pr.piped_ns, b4, sizeof b4);
        dg_fmt_duration(pr.pipe_ns, b3, sizeof b3);
        fprintf(out, "               %-8u %-10s %-10s %-10s %s\n", threads[i], b1, b2, b4, b3);
    }
}

void dg_print_stats(FILE *out, const ir_program *p)
{
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        dg_analysis an;
        dg_analyze_on(g, DG_STATS_THREADS, &an);
        char b1[32], b2[32];
        fprintf(out, "graph %s(%s)\n", g->name, g->ctype);
        if (an.nruns)
            fprintf(out, "  nodes        %u: %u tasks, %u gates, %u run nodes, %u generated gates "
                    "(%u and, %u or)\n", g->nnodes, an.ntasks, an.ngates, an.nruns,
                    an.nanon_and + an.nanon_or, an.nanon_and, an.nanon_or);
        else
            fprintf(out, "  nodes        %u: %u tasks, %u gates, %u generated gates (%u and, %u or)\n",
                    g->nnodes, an.ntasks, an.ngates, an.nanon_and + an.nanon_or, an.nanon_and,
                    an.nanon_or);
        for (uint32_t s = 0; s < g->nsubs; s++) {
            uint32_t inner = g->subs[s].exit - g->subs[s].entry + 1;
            fprintf(out, "  %-12s %s: run %s, %u nodes\n", s ? "" : "subgraphs", g->subs[s].name,
                    g->subs[s].graph, inner);
            if (s == 15 && g->nsubs > 16) {
                fprintf(out, "               ... %u more\n", g->nsubs - 16);
                break;
            }
        }
        fprintf(out, "  edges        %u\n", g->nedges);
        fprintf(out, "  roots        %u", an.roots);
        list_names(out, g, 1);
        fprintf(out, "\n  sinks        %u", an.sinks);
        list_names(out, g, 0);
        fprintf(out, "\n  depth        %u (longest path, in nodes)\n", an.depth);
        fprintf(out, "  width        %u (most nodes on one level)\n", an.width);
        dg_fmt_duration(an.total_cost, b1, sizeof b1);
        dg_fmt_duration(an.crit_cost, b2, sizeof b2);
        fprintf(out, "  total cost   %s\n", b1);
        /* A `parallel` task on the path counts its share (dg_analyze_on):
         * said where one is, so that the figure reads as the bound's. */
        int shared = 0;
        for (uint32_t i = 0; i < an.ncrit; i++)
            shared |= g->nodes[an.crit[i]].kind == IR_TASK &&
                      (g->nodes[an.crit[i]].flags & IR_F_PARALLEL) && g->nodes[an.crit[i]].cost_ns;
        if (shared)
            fprintf(out, "  critical     %s over %u tasks (on %u threads: a parallel task's share):", b2,
                    an.crit_tasks, DG_STATS_THREADS);
        else
            fprintf(out, "  critical     %s over %u tasks:", b2, an.crit_tasks);
        dg_print_path(out, g, &an);
        if (an.crit_cost > 0)
            fprintf(out, "  parallelism  %.2f (total cost / critical-path cost)\n",
                    (double)an.total_cost / (double)an.crit_cost);
        else if (an.crit_tasks > 0)
            fprintf(out, "  parallelism  %.2f (tasks / tasks on the longest chain; no costs given)\n",
                    (double)an.ntasks / (double)an.crit_tasks);
        if (an.total_cost > 0) {
            /* The loop bound as on 2 threads (more threads only shrink a
             * parallel task's share); each column uses its own. */
            uint32_t from;
            uint64_t loop = dg_prev_loop_bound(g, 2, &from);
            char b3[32];
            dg_fmt_duration(loop, b3, sizeof b3);
            fprintf(out, "  pipeline     a frame every max(total cost / threads, %s) at best: ", b3);
            for (unsigned t = 2; t <= 8; t *= 2) {
                uint32_t f2;
                uint64_t per = (an.total_cost + t - 1) / t, lt = dg_prev_loop_bound(g, t, &f2);
                dg_fmt_duration(per > lt ? per : lt, b1, sizeof b1);
                fprintf(out, "%s%s at %u threads", t > 2 ? ", " : "", b1, t);
            }
            fprintf(out, " (one at a time: %s)\n", b2);
            if (from != UINT32_MAX)
                fprintf(out, "               %s: the loop through 'prev' from '%s'\n", b3,
                        g->nodes[from].name);
        }
        dg_print_prediction(out, g);
        dg_perframe_stats(out, p, g); /* (v2.2) */
        dg_analysis_free(&an);
    }
}
