/* profile.c - `--profile`: trace reading and per-node statistics
 * (profile.h). */
#define _POSIX_C_SOURCE 200809L
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "json.h"
#include "util.h"

typedef struct pev {
    uint32_t g, node, tid;
    uint64_t frame, ts, end;   /* ns */
} pev;

/* Names in the trace that the program does not have, each once. */
typedef struct misses {
    dg_map seen;
    const char **names;
    size_t n, cap;
} misses;

typedef struct loader {
    const ir_program *p;
    dg_map graphs;             /* graph name -> index */
    dg_map *nodes;             /* per graph: node name -> index */
    pev *ev;
    size_t n, cap;
    dg_arena strs;             /* names kept for messages */
    misses bad_graph;
    misses *bad_node;          /* per graph */
} loader;

static void miss(loader *l, misses *m, const char *name)
{
    if (dg_map_get(&m->seen, name) >= 0)
        return;
    const char *s = dg_strdup(&l->strs, name);
    dg_map_put(&m->seen, s, 1);
    if (m->n == m->cap)
        m->names = dg_xrealloc(m->names, (m->cap = m->cap ? m->cap * 2 : 8) * sizeof *m->names);
    m->names[m->n++] = s;
}

/* Times up to about 115 days in microseconds, counts up to 2^53: past
 * that a double no longer holds them exactly (and ns would overflow). */
#define MAX_FIELD 1e13

static int num_field(const dg_json *obj, const char *key, double *out, char *err, size_t errsz)
{
    const dg_json *v = dg_json_get(obj, key);
    if (!v || v->kind != DG_JSON_NUM || v->num < 0) {
        snprintf(err, errsz, "a complete event needs a non-negative number \"%s\"", key);
        return -1;
    }
    if (v->num > MAX_FIELD) {
        snprintf(err, errsz, "\"%s\" is out of range (%g; at most %g)", key, v->num, MAX_FIELD);
        return -1;
    }
    *out = v->num;
    return 0;
}

/* The file has microseconds with fractions; ns, rounded (no libm). */
static uint64_t us_to_ns(double us) { return (uint64_t)(us * 1000.0 + 0.5); }

/* One element of traceEvents. Only complete events ("ph": "X") count;
 * the recorder's own ones (cat "dagrt": idle spans) and other phases are
 * skipped. */
static int on_event(void *user, const dg_json *e, char *err, size_t errsz)
{
    loader *l = user;
    if (e->kind != DG_JSON_OBJ) {
        snprintf(err, errsz, "an element of traceEvents is not an object");
        return -1;
    }
    const dg_json *ph = dg_json_get(e, "ph");
    if (!ph || ph->kind != DG_JSON_STR) {
        snprintf(err, errsz, "an event without a \"ph\" string");
        return -1;
    }
    if (strcmp(ph->str, "X") != 0)
        return 0;
    const dg_json *cat = dg_json_get(e, "cat"), *name = dg_json_get(e, "name");
    if (!cat || cat->kind != DG_JSON_STR || !name || name->kind != DG_JSON_STR) {
        snprintf(err, errsz, "a complete event needs \"name\" and \"cat\" strings");
        return -1;
    }
    if (strcmp(cat->str, "dagrt") == 0)
        return 0;
    double ts, dur, tid, frame;
    const dg_json *args = dg_json_get(e, "args");
    if (num_field(e, "ts", &ts, err, errsz) || num_field(e, "dur", &dur, err, errsz) ||
        num_field(e, "tid", &tid, err, errsz))
        return -1;
    if (!args || num_field(args, "frame", &frame, err, errsz) ||
        (double)(uint64_t)frame != frame) {
        dg_buf b = {0};
        dg_buf_printf(&b, "event '%s' of graph '%s' has no \"args\": {\"frame\": N} with a whole N",
                      name->str, cat->str);
        dg_fit(err, errsz, b.p, b.len);
        dg_buf_free(&b);
        return -1;
    }
    int gi = dg_map_get(&l->graphs, cat->str);
    if (gi < 0) {
        miss(l, &l->bad_graph, cat->str);
        return 0;
    }
    int ni = dg_map_get(&l->nodes[gi], name->str);
    if (ni < 0) {
        miss(l, &l->bad_node[gi], name->str);
        return 0;
    }
    if (l->n == l->cap)
        l->ev = dg_xrealloc(l->ev, (l->cap = l->cap ? l->cap * 2 : 1024) * sizeof *l->ev);
    pev *x = &l->ev[l->n++];
    x->g = (uint32_t)gi;
    x->node = (uint32_t)ni;
    x->tid = tid > 4e9 ? UINT32_MAX : (uint32_t)tid;
    x->frame = (uint64_t)frame;
    x->ts = us_to_ns(ts);
    x->end = x->ts + us_to_ns(dur);
    return 0;
}

static int cmp_ev(const void *pa, const void *pb)
{
    const pev *a = pa, *b = pb;
    if (a->g != b->g) return a->g < b->g ? -1 : 1;
    if (a->frame != b->frame) return a->frame < b->frame ? -1 : 1;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Nearest rank: the median is the lower middle, p99 the ceil(0.99 n)-th. */
static void ranks(uint64_t *v, size_t n, uint64_t *median, uint64_t *p99)
{
    qsort(v, n, sizeof *v, cmp_u64);
    *median = v[(n - 1) / 2];
    size_t k = (99 * n + 99) / 100;   /* ceil(0.99 n) */
    *p99 = v[k ? k - 1 : 0];
}

typedef struct span_list { uint64_t *v; size_t n, cap; } span_list;

static void span_add(span_list *s, uint64_t x)
{
    if (s->n == s->cap)
        s->v = dg_xrealloc(s->v, (s->cap = s->cap ? s->cap * 2 : 16) * sizeof *s->v);
    s->v[s->n++] = x;
}

static void aggregate(loader *l, dg_profile *out)
{
    if (l->n)   /* qsort wants a base even for none */
        qsort(l->ev, l->n, sizeof *l->ev, cmp_ev);
    for (size_t gi = 0; gi < out->ngraphs; gi++) {
        const ir_graph *g = &l->p->graphs[gi];
        dg_prof_graph *pg = &out->graphs[gi];
        span_list frames = {0};
        span_list *nodes = dg_xcalloc(g->nnodes + 1, sizeof *nodes);
        size_t i = 0;
        while (i < l->n && l->ev[i].g < gi) i++;
        while (i < l->n && l->ev[i].g == gi) {
            uint64_t f = l->ev[i].frame, fb = UINT64_MAX, fe = 0;
            while (i < l->n && l->ev[i].g == gi && l->ev[i].frame == f) {
                uint32_t nd = l->ev[i].node;
                uint64_t b = UINT64_MAX, e = 0;
                for (; i < l->n && l->ev[i].g == gi && l->ev[i].frame == f && l->ev[i].node == nd; i++) {
                    const pev *x = &l->ev[i];
                    if (x->ts < b) b = x->ts;
                    if (x->end > e) e = x->end;
                    pg->nodes[nd].threads |= x->tid < 63 ? 1ull << x->tid : 1ull << 63;
                }
                span_add(&nodes[nd], e - b);
                if (b < fb) fb = b;
                if (e > fe) fe = e;
            }
            span_add(&frames, fe - fb);
        }
        pg->present = frames.n > 0;
        pg->frames = (uint32_t)frames.n;
        if (frames.n)
            ranks(frames.v, frames.n, &pg->frame_median_ns, &pg->frame_p99_ns);
        for (uint32_t k = 0; k < g->nnodes; k++) {
            pg->nodes[k].runs = (uint32_t)nodes[k].n;
            if (nodes[k].n)
                ranks(nodes[k].v, nodes[k].n, &pg->nodes[k].median_ns, &pg->nodes[k].p99_ns);
            free(nodes[k].v);
        }
        free(nodes);
        free(frames.v);
    }
}

static void list_names(dg_buf *b, const misses *m)
{
    for (size_t i = 0; i < m->n && i < 8; i++)
        dg_buf_printf(b, "%s'%s'", i ? ", " : "", m->names[i]);
    if (m->n > 8)
        dg_buf_printf(b, " and %zu more", m->n - 8);
}

int dg_profile_load(const char *path, const ir_program *p, dg_profile *out, dg_buf *err)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *buf = NULL;
    /* The one file reader: a FIFO or device is refused before it is read. */
    char e[4096];
    if (dg_read_file(path, DG_PROFILE_MAX_BYTES, 1, &buf, &len, e, sizeof e) != 0) {
        dg_buf_puts(err, e);
        return DAGC_EUSAGE;
    }
    int rc = dg_profile_parse(path, buf, len, p, out, err);
    free(buf);
    return rc;
}

int dg_profile_parse(const char *path, const char *buf, size_t len, const ir_program *p,
                     dg_profile *out, dg_buf *err)
{
    memset(out, 0, sizeof *out);
    /* The JSON parser's messages name one file or one event: a fixed
     * buffer, cut at a character boundary if need be. The lists of missing
     * names below have no cap. */
    char e[4096];
    loader l;
    memset(&l, 0, sizeof l);
    l.p = p;
    dg_arena_init(&l.strs);
    l.nodes = dg_xcalloc(p->ngraphs + 1, sizeof *l.nodes);
    l.bad_node = dg_xcalloc(p->ngraphs + 1, sizeof *l.bad_node);
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        dg_map_put(&l.graphs, p->graphs[gi].name, (int)gi);
        for (uint32_t k = 0; k < p->graphs[gi].nnodes; k++)
            dg_map_put(&l.nodes[gi], p->graphs[gi].nodes[k].name, (int)k);
    }
    out->path = path;
    out->ngraphs = p->ngraphs;
    out->graphs = dg_xcalloc(p->ngraphs + 1, sizeof *out->graphs);
    for (size_t gi = 0; gi < p->ngraphs; gi++)
        out->graphs[gi].nodes = dg_xcalloc(p->graphs[gi].nnodes + 1, sizeof(dg_prof_node));
    dg_arena ar;
    dg_arena_init(&ar);
    dg_json_stream s = {"traceEvents", on_event, &l};
    int rc = DAGC_EINPUT;
    dg_json *root = dg_json_parse(&ar, path, buf, len, &s, e, sizeof e);
    const char *in = p->path ? p->path : "the input";
    if (!root) {
        dg_buf_puts(err, e);
        goto done;
    }
    if (root->kind != DG_JSON_OBJ || !dg_json_get(root, "traceEvents") ||
        dg_json_get(root, "traceEvents")->kind != DG_JSON_ARR) {
        dg_buf_printf(err, "%s:%u:%u: not a trace: expected an object with a \"traceEvents\" array",
                      path, root->line, root->col);
        goto done;
    }
    dg_buf msg = {0};
    if (l.bad_graph.n) {
        dg_buf_printf(&msg, "%s: the trace has events of graph%s ", path, l.bad_graph.n > 1 ? "s" : "");
        list_names(&msg, &l.bad_graph);
        dg_buf_printf(&msg, ", which %s does not define", in);
    }
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        if (!l.bad_node[gi].n)
            continue;
        dg_buf_printf(&msg, "%s%s: graph '%s' of %s has no node%s ", msg.len ? "\n" : "", path,
                      p->graphs[gi].name, in, l.bad_node[gi].n > 1 ? "s" : "");
        list_names(&msg, &l.bad_node[gi]);
        dg_buf_puts(&msg, " (named in the trace)");
    }
    if (msg.len) {
        dg_buf_put(err, msg.p, msg.len);
        dg_buf_free(&msg);
        goto done;
    }
    aggregate(&l, out);
    int any = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++)
        any |= out->graphs[gi].present;
    if (!any) {
        dg_buf_printf(&msg, "%s: no node events of graph%s ", path, p->ngraphs > 1 ? "s" : "");
        for (size_t gi = 0; gi < p->ngraphs && gi < 8; gi++)
            dg_buf_printf(&msg, "%s'%s'", gi ? ", " : "", p->graphs[gi].name);
        dg_buf_printf(&msg, " in the trace");
        dg_buf_put(err, msg.p, msg.len);
        dg_buf_free(&msg);
        goto done;
    }
    rc = DAGC_OK;
done:
    dg_arena_free(&ar);
    free(l.ev);
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        dg_map_free(&l.nodes[gi]);
        dg_map_free(&l.bad_node[gi].seen);
        free(l.bad_node[gi].names);
    }
    free(l.nodes);
    free(l.bad_node);
    dg_map_free(&l.graphs);
    dg_map_free(&l.bad_graph.seen);
    free(l.bad_graph.names);
    dg_arena_free(&l.strs);
    if (rc != DAGC_OK)
        dg_profile_free(out);
    return rc;
}

void dg_profile_free(dg_profile *prof)
{
    for (size_t gi = 0; gi < prof->ngraphs; gi++)
        free(prof->graphs[gi].nodes);
    free(prof->graphs);
    memset(prof, 0, sizeof *prof);
}

void dg_profile_analyze(const ir_graph *g, const dg_prof_graph *pg, dg_analysis *an)
{
    ir_node *nodes = dg_xmalloc((g->nnodes + 1) * sizeof *nodes);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        nodes[i] = g->nodes[i];
        nodes[i].cost_ns = g->nodes[i].kind == IR_TASK ? pg->nodes[i].median_ns : 0;
        nodes[i].flags |= nodes[i].kind == IR_TASK ? IR_F_COST : 0;
    }
    ir_graph copy = *g;
    copy.nodes = nodes;
    dg_analyze(&copy, an);
    free(nodes);
}

void dg_profile_label(const dg_prof_graph *pg, uint32_t node, char *buf, size_t n)
{
    const dg_prof_node *x = &pg->nodes[node];
    if (!x->runs) {
        snprintf(buf, n, "not run");
        return;
    }
    char m[32], q[32];
    dg_fmt_duration(x->median_ns, m, sizeof m);
    dg_fmt_duration(x->p99_ns, q, sizeof q);
    snprintf(buf, n, "median %s  p99 %s", m, q);
}

/* White to red by the node's median share of the median frame. */
void dg_profile_fill(const dg_prof_graph *pg, uint32_t node, char *buf, size_t n)
{
    double share = pg->frame_median_ns ? (double)pg->nodes[node].median_ns /
                                         (double)pg->frame_median_ns : 0;
    if (share > 1) share = 1;
    static const int lo[3] = {0xff, 0xff, 0xff}, hi[3] = {0xef, 0x3b, 0x2c};
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = lo[k] - (int)((lo[k] - hi[k]) * share + 0.5);
    snprintf(buf, n, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void threads_str(uint64_t t, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < 63 && k < n; i++)
        if (t & (1ull << i))
            k += (size_t)snprintf(buf + k, n - k, "%s%d", k ? "," : "", i);
    if ((t >> 63) && k < n)
        snprintf(buf + k, n - k, "%s63+", k ? "," : "");
}

void dg_profile_print_stats(FILE *out, const ir_program *p, const dg_profile *prof)
{
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        const dg_prof_graph *pg = &prof->graphs[gi];
        if (!pg->present) {
            fprintf(out, "profile %s: no events in %s\n", g->name, prof->path);
            continue;
        }
        char b1[32], b2[32], b3[32], th[64];
        dg_fmt_duration(pg->frame_median_ns, b1, sizeof b1);
        dg_fmt_duration(pg->frame_p99_ns, b2, sizeof b2);
        fprintf(out, "profile %s (%s): %u frames, median frame %s, p99 %s\n", g->name,
                prof->path, pg->frames, b1, b2);
        size_t w = 4;
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].kind == IR_TASK && strlen(g->nodes[i].name) > w)
                w = strlen(g->nodes[i].name);
        fprintf(out, "  %-*s  %10s  %10s  %10s  %6s  %s\n", (int)w, "task", "declared", "median",
                "p99", "frames", "threads");
        for (uint32_t i = 0; i < g->nnodes; i++) {
            const ir_node *x = &g->nodes[i];
            const dg_prof_node *m = &pg->nodes[i];
            if (x->kind != IR_TASK)
                continue;
            if (x->flags & IR_F_COST) dg_fmt_duration(x->cost_ns, b1, sizeof b1);
            else snprintf(b1, sizeof b1, "-");
            if (m->runs) {
                dg_fmt_duration(m->median_ns, b2, sizeof b2);
                dg_fmt_duration(m->p99_ns, b3, sizeof b3);
                threads_str(m->threads, th, sizeof th);
            } else {
                snprintf(b2, sizeof b2, "-");
                snprintf(b3, sizeof b3, "-");
                snprintf(th, sizeof th, "(not run)");
            }
            fprintf(out, "  %-*s  %10s  %10s  %10s  %6u  %s\n", (int)w, x->name, b1, b2, b3, m->runs, th);
        }
        dg_analysis an;
        dg_profile_analyze(g, pg, &an);
        dg_fmt_duration(an.crit_cost, b1, sizeof b1);
        fprintf(out, "  measured critical path %s over %u tasks:", b1, an.crit_tasks);
        dg_print_path(out, g, &an);
        if (pg->frame_median_ns)
            fprintf(out, "  critical path / median frame  %.0f%%\n",
                    100.0 * (double)an.crit_cost / (double)pg->frame_median_ns);
        dg_analysis_free(&an);
    }
}
