/* trace_check.c - see trace_check.h. */
#include "trace_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct acc {
    tc_trace *t;
    size_t cap;
} acc;

static void copy_str(char *dst, size_t n, const dg_json *v)
{
    snprintf(dst, n, "%s", v && v->kind == DG_JSON_STR ? v->str : "");
}

static int64_t num_or(const dg_json *v, int64_t dflt)
{
    return v && v->kind == DG_JSON_NUM ? (int64_t)v->num : dflt;
}

static uint64_t us_to_ns(const dg_json *v)
{
    return v && v->kind == DG_JSON_NUM ? (uint64_t)llround(v->num * 1000.0) : 0;
}

static int each(void *user, const dg_json *e, char *err, size_t errsz)
{
    acc *a = user;
    if (e->kind != DG_JSON_OBJ) {
        snprintf(err, errsz, "an event is not an object");
        return -1;
    }
    const dg_json *ph = dg_json_get(e, "ph");
    if (!ph || ph->kind != DG_JSON_STR || strlen(ph->str) != 1) {
        snprintf(err, errsz, "an event without a one-letter \"ph\"");
        return -1;
    }
    if (!dg_json_get(e, "pid") || !dg_json_get(e, "tid") || !dg_json_get(e, "name")) {
        snprintf(err, errsz, "an event without pid, tid or name");
        return -1;
    }
    if (a->t->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->t->ev = realloc(a->t->ev, a->cap * sizeof *a->t->ev);
    }
    tc_event *x = &a->t->ev[a->t->n++];
    memset(x, 0, sizeof *x);
    x->ph = ph->str[0];
    copy_str(x->name, sizeof x->name, dg_json_get(e, "name"));
    copy_str(x->cat, sizeof x->cat, dg_json_get(e, "cat"));
    x->ts = us_to_ns(dg_json_get(e, "ts"));
    x->dur = us_to_ns(dg_json_get(e, "dur"));
    x->tid = (uint32_t)num_or(dg_json_get(e, "tid"), 0);
    const dg_json *args = dg_json_get(e, "args");
    x->frame = num_or(dg_json_get(args, "frame"), -1);
    x->node = num_or(dg_json_get(args, "node"), -1);
    x->begin = num_or(dg_json_get(args, "begin"), -1);
    x->end = num_or(dg_json_get(args, "end"), -1);
    x->resumed = dg_json_get(args, "resumed") != NULL;
    x->suspended = dg_json_get(args, "suspended") != NULL;
    x->id = num_or(dg_json_get(e, "id"), -1);
    copy_str(x->graph, sizeof x->graph, dg_json_get(args, "graph"));
    copy_str(x->parent, sizeof x->parent, dg_json_get(args, "parent"));
    copy_str(x->fn, sizeof x->fn, dg_json_get(args, "fn"));
    copy_str(x->task, sizeof x->task, dg_json_get(args, "task"));
    x->to_frame = num_or(dg_json_get(args, "to_frame"), -1);
    x->to_node = num_or(dg_json_get(args, "to_node"), -1);
    const dg_json *rel = dg_json_get(args, "released");
    x->released = !rel ? -1 : rel->kind == DG_JSON_BOOL && rel->b;
    const dg_json *bp = dg_json_get(e, "bp");
    x->bp_e = bp && bp->kind == DG_JSON_STR && strcmp(bp->str, "e") == 0;
    if (x->ph == 'M' && strcmp(x->name, "thread_name") == 0)
        copy_str(x->thread_name, sizeof x->thread_name, dg_json_get(args, "name"));
    if (x->ph == 'X' && (!dg_json_get(e, "ts") || !dg_json_get(e, "dur"))) {
        snprintf(err, errsz, "a complete event without ts or dur");
        return -1;
    }
    return 0;
}

int tc_load(const char *path, tc_trace *t, char *err, size_t errsz)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "cannot open %s", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    acc a = {t, 0};
    dg_json_stream s = {"traceEvents", each, &a};
    dg_arena ar;
    dg_arena_init(&ar);
    dg_json *root = dg_json_parse(&ar, path, buf, len, &s, err, errsz);
    int rc = -1;
    if (root && root->kind == DG_JSON_OBJ && dg_json_get(root, "traceEvents")) {
        const dg_json *du = dg_json_get(root, "displayTimeUnit");
        t->has_display_unit = du && du->kind == DG_JSON_STR && strcmp(du->str, "ns") == 0;
        const dg_json *od = dg_json_get(root, "otherData");
        t->has_other = od && od->kind == DG_JSON_OBJ;
        t->dropped = (uint64_t)num_or(dg_json_get(od, "dropped_events"), 0);
        t->has_note = dg_json_get(od, "note") != NULL;
        rc = 0;
    } else if (root) {
        snprintf(err, errsz, "%s: not an object with traceEvents", path);
    }
    dg_arena_free(&ar);
    free(buf);
    return rc;
}

void tc_free(tc_trace *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

static int by_thread_time(const void *pa, const void *pb)
{
    const tc_event *a = *(const tc_event *const *)pa, *b = *(const tc_event *const *)pb;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur)
        return a->dur > b->dur ? -1 : 1;  /* the enclosing one first */
    return 0;
}

int tc_check(const tc_trace *t)
{
    int bad = 0;
    size_t nx = 0;
    const tc_event **x = malloc((t->n + 1) * sizeof *x);
    static unsigned char named[4096];
    memset(named, 0, sizeof named);
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'M' && t->ev[i].thread_name[0] && t->ev[i].tid < 4096)
            named[t->ev[i].tid] = 1;
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph != 'X')
            continue;
        x[nx++] = e;
        if (strcmp(e->cat, "dagrt") != 0 && (e->frame < 0 || e->node < 0)) {
            fprintf(stderr, "trace: %s/%s has no frame/node args\n", e->cat, e->name);
            bad++;
        }
        if ((e->tid >= 4096 || !named[e->tid]) && bad < 20) {
            fprintf(stderr, "trace: thread %u has events but no thread_name\n", e->tid);
            bad++;
        }
    }
    qsort(x, nx, sizeof *x, by_thread_time);
    uint64_t *stack = malloc((nx + 1) * sizeof *stack);
    size_t depth = 0;
    for (size_t i = 0; i < nx; i++) {
        if (i > 0 && x[i]->tid != x[i - 1]->tid)
            depth = 0;
        while (depth > 0 && stack[depth - 1] <= x[i]->ts)
            depth--;
        uint64_t end = x[i]->ts + x[i]->dur;
        if (depth > 0 && end > stack[depth - 1]) {
            if (bad < 20)
                fprintf(stderr, "trace: thread %u: %s [%llu, %llu) overlaps an enclosing event ending at %llu\n",
                        x[i]->tid, x[i]->name, (unsigned long long)x[i]->ts,
                        (unsigned long long)end, (unsigned long long)stack[depth - 1]);
            bad++;
        }
        stack[depth++] = end;
    }
    free(stack);
    free(x);
    return bad;
}

size_t tc_count(const tc_trace *t, const char *name, int64_t frame)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'X' && (!name || strcmp(t->ev[i].name, name) == 0) &&
            (frame < 0 || t->ev[i].frame == frame))
            n++;
    return n;
}

int tc_load_checked(const char *path, tc_trace *t)
{
    char err[600];
    if (tc_load(path, t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return tc_check(t);
}
