/* costs.c - each task's cost: measured (a trace or a costs file), declared
 * or defaulted, and the plan's predicted frame time (costs.h). */
#include "costs.h"

#include <stdlib.h>
#include <string.h>

#include "../runtime/exec/plan_sched.h"
#include "driver.h"
#include "profile.h"
#include "stats.h"

/* Costs files are small: a line per task. */
#define COSTS_MAX_BYTES ((size_t)64 << 20)

static void costs_alloc(dg_costs *c, const ir_program *p, const char *path)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->ngraphs = p->ngraphs;
    c->graphs = dg_xcalloc(p->ngraphs + 1, sizeof *c->graphs);
}

static uint64_t *costs_of(dg_costs *c, const ir_program *p, size_t gi)
{
    if (!c->graphs[gi])
        c->graphs[gi] = dg_xcalloc((size_t)p->graphs[gi].nnodes + 1, sizeof **c->graphs);
    return c->graphs[gi];
}

void dg_costs_free(dg_costs *c)
{
    for (size_t i = 0; c->graphs && i < c->ngraphs; i++)
        free(c->graphs[i]);
    free(c->graphs);
    memset(c, 0, sizeof *c);
}

void dg_costs_from_profile(const dg_profile *prof, const ir_program *p, dg_costs *out)
{
    costs_alloc(out, p, prof->path);
    for (size_t gi = 0; gi < p->ngraphs && gi < prof->ngraphs; gi++) {
        const dg_prof_graph *pg = &prof->graphs[gi];
        if (!pg->present)
            continue;
        const ir_graph *g = &p->graphs[gi];
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].kind == IR_TASK && pg->nodes[i].runs > 0 && pg->nodes[i].median_ns > 0)
                costs_of(out, p, gi)[i] = pg->nodes[i].median_ns;
    }
}

/* One line of a costs file: GRAPH.NODE NANOSECONDS (see costs.h). */
static void line_error(dg_buf *err, const char *path, uint32_t line, uint32_t col, const char *msg,
                       const char *name, size_t nlen)
{
    dg_buf_printf(err, "%s:%u:%u: %s", path, line, col, msg);
    if (name)
        dg_buf_printf(err, " '%.*s'", (int)(nlen > 200 ? 200 : nlen), name);
    dg_buf_putc(err, '\n');
}

int dg_costs_parse(const char *path, const char *buf, size_t len, const ir_program *p,
                   dg_costs *out, dg_buf *err)
{
    costs_alloc(out, p, path);
    dg_map graphs = {0};
    for (size_t gi = 0; gi < p->ngraphs; gi++)
        dg_map_put(&graphs, p->graphs[gi].name, (int)gi);
    dg_map *nodes = dg_xcalloc(p->ngraphs + 1, sizeof *nodes);
    int built = 0;
    uint32_t nerr = 0, line = 0, entries = 0;
    char *key = NULL;
    size_t keycap = 0;
    for (size_t pos = 0; pos < len && nerr < 20;) {
        line++;
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        size_t e = end;
        if (e > pos && buf[e - 1] == '\r')
            e--;
        size_t i = pos;
        while (i < e && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        size_t next = end + 1;
        if (i == e || buf[i] == '#') {
            pos = next;
            continue;
        }
        size_t ns = i;
        while (i < e && buf[i] != ' ' && buf[i] != '\t')
            i++;
        size_t nlen = i - ns;
        const char *dot = memchr(buf + ns, '.', nlen);
        if (!dot || dot == buf + ns || dot == buf + i - 1) {
            line_error(err, path, line, (uint32_t)(ns - pos + 1),
                       "expected GRAPH.TASK NANOSECONDS, not", buf + ns, nlen);
            nerr++;
            pos = next;
            continue;
        }
        if (nlen + 1 > keycap)
            key = dg_xrealloc(key, keycap = nlen + 1);
        size_t glen = (size_t)(dot - (buf + ns));
        memcpy(key, buf + ns, glen);
        key[glen] = 0;
        int gi = dg_map_get(&graphs, key);
        if (gi < 0) {
            line_error(err, path, line, (uint32_t)(ns - pos + 1), "no graph named", buf + ns, glen);
            nerr++;
            pos = next;
            continue;
        }
        if (!built) {
            for (size_t g = 0; g < p->ngraphs; g++)
                for (uint32_t v = 0; v < p->graphs[g].nnodes; v++)
                    dg_map_put(&nodes[g], p->graphs[g].nodes[v].name, (int)v);
            built = 1;
        }
        memcpy(key, dot + 1, nlen - glen - 1);
        key[nlen - glen - 1] = 0;
        int v = dg_map_get(&nodes[gi], key);
        const ir_node *x = v >= 0 ? &p->graphs[gi].nodes[v] : NULL;
        if (!x || x->kind != IR_TASK) {
            line_error(err, path, line, (uint32_t)(dot - (buf + pos) + 2),
                       x ? "not a task (a gate costs nothing):" : "no task named", dot + 1,
                       nlen - glen - 1);
            nerr++;
            pos = next;
            continue;
        }
        while (i < e && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        size_t vs = i;
        uint64_t val = 0;
        int over = 0;
        while (i < e && buf[i] >= '0' && buf[i] <= '9') {
            val = val * 10 + (uint64_t)(buf[i] - '0');
            over |= val > UINT32_MAX;
            i++;
        }
        size_t ve = i;
        while (i < e && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        if (ve == vs || i != e) {
            line_error(err, path, line, (uint32_t)((ve == vs ? vs : i) - pos + 1),
                       "expected a whole number of nanoseconds after the task", NULL, 0);
            nerr++;
        } else if (over || val == 0) {
            line_error(err, path, line, (uint32_t)(vs - pos + 1),
                       "a cost is 1 to 4294967295 nanoseconds, not", buf + vs, ve - vs);
            nerr++;
        } else if (costs_of(out, p, (size_t)gi)[v] != 0) {
            line_error(err, path, line, (uint32_t)(ns - pos + 1), "a second cost for", buf + ns, nlen);
            nerr++;
        } else {
            costs_of(out, p, (size_t)gi)[v] = val;
            entries++;
        }
        pos = next;
    }
    free(key);
    for (size_t g = 0; g < p->ngraphs; g++)
        dg_map_free(&nodes[g]);
    free(nodes);
    dg_map_free(&graphs);
    if (nerr == 0 && entries == 0) {
        dg_buf_printf(err, "%s:1:1: no costs (lines GRAPH.TASK NANOSECONDS)\n", path);
        nerr++;
    }
    if (nerr) {
        dg_costs_free(out);
        return DAGC_EINPUT;
    }
    return 0;
}

int dg_costs_load(const char *path, const ir_program *p, dg_costs *out, dg_buf *err)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *buf = NULL;
    char e[4096];
    if (dg_read_file(path, COSTS_MAX_BYTES > DG_PROFILE_MAX_BYTES ? COSTS_MAX_BYTES : DG_PROFILE_MAX_BYTES,
                     1, &buf, &len, e, sizeof e) != 0) {
        dg_buf_puts(err, e);
        return DAGC_EUSAGE;
    }
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    int rc;
    if (i < len && (buf[i] == '{' || buf[i] == '[')) {
        /* A trace: its medians (what --profile shows). */
        dg_profile prof;
        rc = dg_profile_parse(path, buf, len, p, &prof, err);
        if (rc == 0) {
            dg_costs_from_profile(&prof, p, out);
            dg_profile_free(&prof);
        }
    } else if (len > COSTS_MAX_BYTES) {
        dg_buf_printf(err, "%s: a costs file is at most %zu MiB", path, COSTS_MAX_BYTES >> 20);
        rc = DAGC_EINPUT;
    } else {
        rc = dg_costs_parse(path, buf, len, p, out, err);
    }
    free(buf);
    return rc;
}

void dg_costs_write(FILE *f, const ir_program *p, const dg_costs *c)
{
    fputs("# dagc costs: GRAPH.TASK NANOSECONDS (dagc --costs FILE reads it)\n", f);
    for (size_t gi = 0; gi < p->ngraphs && gi < c->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        for (uint32_t i = 0; c->graphs[gi] && i < g->nnodes; i++)
            if (c->graphs[gi][i])
                fprintf(f, "%s.%s %llu\n", g->name, g->nodes[i].name,
                        (unsigned long long)(c->graphs[gi][i] > UINT32_MAX ? UINT32_MAX
                                                                            : c->graphs[gi][i]));
    }
}

void dg_costs_apply(ir_program *p, const dg_costs *c)
{
    for (size_t gi = 0; gi < p->ngraphs && gi < c->ngraphs; gi++) {
        if (!c->graphs[gi])
            continue;
        /* The IR is the front end's, built in memory the compile owns
         * (never const storage): the measured costs become its `cost`. */
        ir_node *nodes = (ir_node *)(uintptr_t)p->graphs[gi].nodes;
        for (uint32_t i = 0; i < p->graphs[gi].nnodes; i++)
            if (c->graphs[gi][i] && nodes[i].kind == IR_TASK) {
                nodes[i].cost_ns = c->graphs[gi][i];
                nodes[i].flags |= IR_F_COST;
            }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t dg_costs_resolve(const ir_graph *g, uint32_t *cost)
{
    return dg_costs_resolve_measured(g, NULL, cost);
}

uint32_t dg_costs_resolve_measured(const ir_graph *g, const uint64_t *measured, uint32_t *cost)
{
    uint32_t n = g->nnodes, known = 0;
    uint32_t *k = dg_xmalloc(((size_t)n + 1) * sizeof *k);
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *x = &g->nodes[i];
        uint64_t c = x->kind != IR_TASK ? 0
                     : measured && measured[i] ? measured[i]
                     : (x->flags & IR_F_COST) ? x->cost_ns : 0;
        cost[i] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
        if (c > 0)
            k[known++] = cost[i];
    }
    uint32_t dflt = DG_DEFAULT_COST_NS;
    if (known) {
        qsort(k, known, sizeof *k, cmp_u32);
        /* The median (the lower middle of an even count). */
        dflt = k[(known - 1) / 2];
    }
    for (uint32_t i = 0; i < n; i++)
        if (g->nodes[i].kind == IR_TASK && cost[i] == 0)
            cost[i] = dflt;
    free(k);
    return known;
}

/* The scheduler's view of an IR graph (plan_sched.h's calls). */
typedef struct pview {
    const ir_graph *g;
    const uint32_t *cost;
    uint32_t (*scratch)[PS_SCRATCH];
    uint32_t *list;
    uint32_t *prev_on_list;  /* the node placed before on the same list */
    uint32_t tail[PS_LISTS];
} pview;

static uint32_t pv_flags(void *c, uint32_t i)
{
    const ir_node *x = &((pview *)c)->g->nodes[i];
    uint32_t f = 0;
    f |= x->kind == IR_GATE ? PS_GATE : 0u;
    f |= x->join == IR_JOIN_OR ? PS_OR : 0u;
    f |= (x->flags & IR_F_MAIN) ? PS_MAIN : 0u;
    f |= (x->flags & IR_F_PARALLEL) ? PS_PARALLEL : 0u;
    return f;
}
static uint32_t pv_cost(void *c, uint32_t i) { return ((pview *)c)->cost[i]; }
static uint32_t pv_npred(void *c, uint32_t i) { return ((pview *)c)->g->nodes[i].npred; }
static uint32_t pv_pred(void *c, uint32_t i, uint32_t k) { return ((pview *)c)->g->nodes[i].pred[k]; }
static uint32_t pv_nsucc(void *c, uint32_t i) { return ((pview *)c)->g->nodes[i].nsucc; }
static uint32_t pv_succ(void *c, uint32_t i, uint32_t k) { return ((pview *)c)->g->nodes[i].succ[k]; }
static uint32_t *pv_scratch(void *c, uint32_t i) { return ((pview *)c)->scratch[i]; }
static uint32_t pv_list_of(void *c, uint32_t i) { return ((pview *)c)->list[i]; }
static void pv_place(void *c, uint32_t i, uint32_t k)
{
    pview *v = c;
    v->list[i] = k;
    v->prev_on_list[i] = v->tail[k];
    v->tail[k] = i;
}

void dg_predict(const ir_graph *g, uint32_t threads, dg_prediction *out, uint8_t *on_crit)
{
    dg_predict_measured(g, NULL, threads, out, on_crit);
}

void dg_predict_measured(const ir_graph *g, const uint64_t *measured, uint32_t threads,
                         dg_prediction *out, uint8_t *on_crit)
{
    uint32_t n = g->nnodes;
    pview v;
    memset(&v, 0, sizeof v);
    v.g = g;
    uint32_t *cost = dg_xmalloc(((size_t)n + 1) * sizeof *cost);
    dg_costs_resolve_measured(g, measured, cost);
    v.cost = cost;
    v.scratch = dg_xcalloc((size_t)n + 1, sizeof *v.scratch);
    v.list = dg_xmalloc(((size_t)n + 1) * sizeof *v.list);
    v.prev_on_list = dg_xmalloc(((size_t)n + 1) * sizeof *v.prev_on_list);
    for (uint32_t k = 0; k < PS_LISTS; k++)
        v.tail[k] = PS_NONE;
    for (uint32_t i = 0; i < n; i++)
        v.list[i] = PS_NONE;
    ps_graph pg = {n, threads, PS_XFER_NS, PS_NODE_NS, &v, pv_flags, pv_cost, pv_npred, pv_pred,
                   pv_nsucc, pv_succ, pv_scratch, pv_place, pv_list_of, 1 /* one frame at a time */};
    ps_result r;
    memset(out, 0, sizeof *out);
    out->threads = threads;
    if (on_crit)
        memset(on_crit, 0, n);
    if (ps_schedule(&pg, &r)) {
        out->frame_ns = r.makespan;
        uint64_t t = threads ? threads : 1;
        out->pipe_ns = (r.work + t - 1) / t;
        uint32_t from;
        uint64_t loop = dg_prev_loop_bound(g, threads, &from);
        if (loop > out->pipe_ns)
            out->pipe_ns = loop;   /* no pipeline beats its loop through `prev` */
        out->bound_ns = r.critical > out->pipe_ns ? r.critical : out->pipe_ns;
        for (uint32_t x = r.last; on_crit && x != PS_NONE;) {
            on_crit[x] = 1;
            x = ps_crit_before(&pg, x, v.prev_on_list[x]);
        }
        /* The lists a pipeline with frames in flight runs (the runtime's,
         * exec/plan_build.c): their period, which models no `prev` loop,
         * so never below the pipeline's bound. */
        for (uint32_t k = 0; k < PS_LISTS; k++)
            v.tail[k] = PS_NONE;
        for (uint32_t i = 0; i < n; i++)
            v.list[i] = PS_NONE;
        pg.in_flight = 2;
        ps_result rp;
        out->piped_ns = out->pipe_ns;
        if (ps_schedule(&pg, &rp) && rp.makespan > out->piped_ns)
            out->piped_ns = rp.makespan;
    }
    free(cost);
    free(v.scratch);
    free(v.list);
    free(v.prev_on_list);
}
