/*
 * trace/write.c - the trace recorder's writer: Chrome Trace Event Format
 * (object form) through a temporary file renamed into place, or in place
 * on a device or FIFO (trace/record.h; the file calls are os/os.h's).
 */
#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"

typedef struct view {
    const ev *slot;
    uint64_t cap, first, last;   /* events [first, last) of the ring */
} view;

void rt_trace_put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Microseconds with three decimals, as the format wants them. */
static void put_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* Per graph (by name): the highest frame seen, for DAGRT_TRACE_FRAMES. */
typedef struct gmax { const char *name; uint64_t max; } gmax;

static gmax *gmax_find(gmax *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].name == name || strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static bool keep_event(const rt_trace *t, const ev *e, uint64_t cutoff, const gmax *g, size_t ng,
                       uint64_t from_ts)
{
    if (e->ts < cutoff)
        return false;
    if (t->frames == 0)
        return true;
    if (e->kind != EV_NODE)
        return e->ts + e->dur >= from_ts;
    const gmax *m = gmax_find((gmax *)g, ng, e->cat);
    return m && e->frame + t->frames > m->max;
}

/* Ticks since t0 to ns; begin and end each, so that nesting survives
 * the rounding. */
static uint64_t to_ns(uint64_t ticks, double k) { return (uint64_t)((double)ticks * k + 0.5); }

static void put_event(FILE *f, const ev *e, uint32_t tid, long pid, double k, bool *first)
{
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    if (e->kind == EV_IO) {
        /* An I/O wait: an async slice ("b" ... "e", its own lane under the
         * thread the call returned on), from the call's start to its end,
         * with the operation, the handle, the bytes and the result. */
        uint64_t end = to_ns(e->ts, k);
        uint64_t beg = end > e->e ? end - e->e : 0;
        int64_t res = (int64_t)e->b;
        unsigned long long id = (unsigned long long)(uintptr_t)e;
        fputs("{\"ph\":\"b\",\"name\":", f);
        rt_trace_put_str(f, e->name);
        fputs(",\"cat\":", f);
        rt_trace_put_str(f, e->cat);
        fprintf(f, ",\"id\":\"0x%llx\",\"ts\":", id);
        put_us(f, beg);
        fprintf(f, ",\"pid\":%ld,\"tid\":%u", pid, tid);
        fprintf(f, ",\"args\":{\"handle\":%lld,\"bytes\":%lld,\"result\":%lld,\"wait_us\":",
                (long long)(int64_t)e->frame, (long long)(res > 0 ? res : 0), (long long)res);
        put_us(f, e->e);
        fputs("}},\n{\"ph\":\"e\",\"name\":", f);
        rt_trace_put_str(f, e->name);
        fputs(",\"cat\":", f);
        rt_trace_put_str(f, e->cat);
        fprintf(f, ",\"id\":\"0x%llx\",\"ts\":", id);
        put_us(f, end);
        fprintf(f, ",\"pid\":%ld,\"tid\":%u}", pid, tid);
        return;
    }
    bool instant = e->kind == EV_MARK;
    fprintf(f, "{\"ph\":\"%s\",\"name\":", instant ? "i" : "X");
    /* A spawned task: "task" in the recorder's own category (which
     * dagc --profile skips), its parent in args. */
    rt_trace_put_str(f, e->kind == EV_TASK ? "task" : e->name);
    fputs(",\"cat\":", f);
    rt_trace_put_str(f, e->kind == EV_TASK ? "dagrt" : e->cat);
    fputs(",\"ts\":", f);
    uint64_t b = to_ns(e->ts, k);
    put_us(f, b);
    if (!instant) {
        fputs(",\"dur\":", f);
        put_us(f, to_ns(e->ts + e->dur, k) - b);
    } else {
        fputs(",\"s\":\"t\"", f);
    }
    fprintf(f, ",\"pid\":%ld,\"tid\":%u", pid, tid);
    if (e->kind == EV_NODE) {
        fprintf(f, ",\"args\":{\"frame\":%llu,\"node\":%u", (unsigned long long)e->frame, e->index);
        if (e->flags & F_PIECE)
            fprintf(f, ",\"begin\":%llu,\"end\":%llu", (unsigned long long)e->b,
                    (unsigned long long)e->e);
        if (e->flags & F_RESUMED)
            fputs(",\"resumed\":true", f);
        if (e->flags & F_SUSPENDED)
            fputs(",\"suspended\":true", f);
        fputc('}', f);
    } else if (e->kind == EV_TASK) {
        fprintf(f, ",\"args\":{\"fn\":\"0x%llx\"", (unsigned long long)e->e);
        if (e->name) {
            fputs(",\"parent\":", f);
            rt_trace_put_str(f, e->name);
            fputs(",\"graph\":", f);
            rt_trace_put_str(f, e->cat);
            fprintf(f, ",\"frame\":%llu,\"node\":%u", (unsigned long long)e->frame, e->index);
        }
        /* A fiber task's slice, as a fiber node's; "task" (the task's
         * descriptor, reused once it ends) ties the slices of one task. */
        if (e->flags & (F_RESUMED | F_SUSPENDED))
            fprintf(f, ",\"task\":\"0x%llx\"", (unsigned long long)e->b);
        if (e->flags & F_RESUMED)
            fputs(",\"resumed\":true", f);
        if (e->flags & F_SUSPENDED)
            fputs(",\"suspended\":true", f);
        fputc('}', f);
    }
    fputc('}', f);
}

/* A graph run as the frame marker shows it: from its first node's begin
 * to its last node's end (ticks), on one lane of the graph's track. */
typedef struct frun {
    uint32_t g;                 /* index in the gmax table */
    uint32_t lane;
    uint64_t frame, b, e;
} frun;

static int cmp_frun_frame(const void *pa, const void *pb)
{
    const frun *a = pa, *b = pb;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    return a->frame < b->frame ? -1 : a->frame > b->frame;
}

static int cmp_frun_begin(const void *pa, const void *pb)
{
    const frun *a = pa, *b = pb;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The frame marker (docs/design/observability.md's deviation, docs/runtime.md "The
 * built-in trace"): one async span per graph run, cat "dagrt.frame",
 * numbered like the nodes' frames. Runs of one graph that overlap (frames
 * in flight) go on lanes of their own, the lane the span's id, so each
 * lane is one track of spans that never overlap. Returns the spans
 * written, or -1 when out of memory. */
static long long put_frames(rt_trace *t, FILE *f, const view *v, uint64_t cutoff, const gmax *g,
                            size_t ng, uint64_t from_ts, long pid, double k)
{
    size_t n = 0, cap = 0;
    frun *r = NULL;
    for (uint32_t i = 0; i < t->nthreads; i++)
        for (uint64_t j = v[i].first; j < v[i].last; j++) {
            const ev *e = &v[i].slot[j % v[i].cap];
            if (e->kind != EV_NODE || !keep_event(t, e, cutoff, g, ng, from_ts))
                continue;
            if (n == cap) {
                frun *nr = realloc(r, (cap = cap ? cap * 2 : 256) * sizeof *r);
                if (!nr) {
                    free(r);
                    return -1;
                }
                r = nr;
            }
            const gmax *m = gmax_find((gmax *)g, ng, e->cat);
            r[n++] = (frun){(uint32_t)(m - g), 0, e->frame, e->ts, e->ts + e->dur};
        }
    if (n == 0) {
        free(r);
        return 0;
    }
    /* One span per (graph, frame): the union of its nodes' events. */
    qsort(r, n, sizeof *r, cmp_frun_frame);
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (runs > 0 && r[runs - 1].g == r[i].g && r[runs - 1].frame == r[i].frame) {
            if (r[i].b < r[runs - 1].b)
                r[runs - 1].b = r[i].b;
            if (r[i].e > r[runs - 1].e)
                r[runs - 1].e = r[i].e;
        } else {
            r[runs++] = r[i];
        }
    }
    /* Lanes, first fit in order of begin: as many as runs overlap. */
    qsort(r, runs, sizeof *r, cmp_frun_begin);
    uint64_t lane_end[64];
    uint32_t lanes = 0, lane_base = 0;
    for (size_t i = 0; i < runs; i++) {
        if (i > 0 && r[i].g != r[i - 1].g) {
            lane_base += lanes;
            lanes = 0;
        }
        uint32_t l = 0;
        while (l < lanes && lane_end[l] > r[i].b)
            l++;
        if (l == lanes && lanes < 64)
            lanes++;
        if (l == 64)
            l = 63;   /* over 64 runs of one graph at once: they share the last lane */
        lane_end[l] = r[i].e;
        r[i].lane = lane_base + l;
    }
    for (size_t i = 0; i < runs; i++) {
        for (int end = 0; end < 2; end++) {
            fprintf(f, ",\n{\"ph\":\"%s\",\"name\":\"frame %llu\",\"cat\":\"dagrt.frame\","
                       "\"id\":%u,\"pid\":%ld,\"tid\":0,\"ts\":",
                    end ? "e" : "b", (unsigned long long)r[i].frame, r[i].lane, pid);
            put_us(f, to_ns(end ? r[i].e : r[i].b, k));
            fputs(",\"args\":{\"graph\":", f);
            rt_trace_put_str(f, g[r[i].g].name);
            fprintf(f, ",\"frame\":%llu}}", (unsigned long long)r[i].frame);
        }
    }
    free(r);
    return (long long)runs;
}

/* The flow events (trace/flow.c) between the kept node events. */
static long long put_flows(rt_trace *t, FILE *f, const view *v, uint64_t cutoff, const gmax *g,
                           size_t ng, uint64_t from_ts, long pid)
{
    size_t n = 0, cap = 256;
    rt_trace_pick *pk = malloc(cap * sizeof *pk);
    if (!pk)
        return -1;
    for (uint32_t i = 0; i < t->nthreads; i++)
        for (uint64_t j = v[i].first; j < v[i].last; j++) {
            const ev *e = &v[i].slot[j % v[i].cap];
            if (e->kind != EV_NODE || !keep_event(t, e, cutoff, g, ng, from_ts))
                continue;
            if (n == cap) {
                rt_trace_pick *np = realloc(pk, (cap *= 2) * sizeof *pk);
                if (!np) {
                    free(pk);
                    return -1;
                }
                pk = np;
            }
            pk[n++] = (rt_trace_pick){e, i};
        }
    long long r = rt_trace_put_flows(t, f, pk, n, pid, t->ns_per_tick);
    free(pk);
    return r;
}

static int write_file(rt_trace *t, FILE *f, view *v)
{
    if (t->use_counter) {
        uint64_t c1 = counter(), n1 = now_ns();
        if (c1 > t->t0 && n1 > t->t0_ns)
            t->ns_per_tick = (double)(n1 - t->t0_ns) / (double)(c1 - t->t0);
    }
    /* One window for all threads: from the newest of the wrapped rings'
     * earliest events. The oldest slot of a wrapped ring is skipped (a late
     * event may be landing there, trace/record.h). */
    uint64_t cutoff = 0, dropped = 0, cut = 0, kept = 0;
    size_t ng = 0, gcap = 0;
    gmax *g = NULL;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        ring *r = &t->rings[i];
        /* acquire: pairs with slot_done, the events before head are whole. */
        uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
        v[i].slot = r->slot;
        v[i].cap = r->cap;
        v[i].last = h;
        v[i].first = h > r->cap ? h - r->cap + 1 : 0;
        dropped += v[i].first;
        if (v[i].first > 0) {
            /* Events are in the order they ended: the earliest begin kept
             * may be past the oldest slot (an enclosing span ends later). */
            uint64_t lo = UINT64_MAX;
            for (uint64_t k = v[i].first; k < h; k++)
                if (r->slot[k % r->cap].ts < lo)
                    lo = r->slot[k % r->cap].ts;
            if (lo != UINT64_MAX && lo > cutoff)
                cutoff = lo;
        }
    }
    for (uint32_t i = 0; i < t->nthreads; i++)
        for (uint64_t k = v[i].first; k < v[i].last; k++) {
            const ev *e = &v[i].slot[k % v[i].cap];
            if (e->kind != EV_NODE || e->ts < cutoff)
                continue;
            gmax *m = gmax_find(g, ng, e->cat);
            if (!m) {
                if (ng == gcap) {
                    gmax *n = realloc(g, (gcap = gcap ? gcap * 2 : 8) * sizeof *g);
                    if (!n) {
                        free(g);
                        return DAGRT_ENOMEM;
                    }
                    g = n;
                }
                m = &g[ng++];
                m->name = e->cat;
                m->max = 0;
            }
            if (e->frame > m->max)
                m->max = e->frame;
        }
    /* With a frame limit, idle spans and marks start with the kept frames. */
    uint64_t from_ts = UINT64_MAX;
    if (t->frames)
        for (uint32_t i = 0; i < t->nthreads; i++)
            for (uint64_t k = v[i].first; k < v[i].last; k++) {
                const ev *e = &v[i].slot[k % v[i].cap];
                if (e->kind == EV_NODE && keep_event(t, e, cutoff, g, ng, 0) && e->ts < from_ts)
                    from_ts = e->ts;
            }
    if (t->speedscope) {
        rt_trace_pick *pk = malloc((t->nthreads * 16 + 1) * sizeof *pk);
        size_t n = 0, cap = pk ? t->nthreads * 16 + 1 : 0;
        int rc = pk ? 0 : DAGRT_ENOMEM;
        for (uint32_t i = 0; rc == 0 && i < t->nthreads; i++)
            for (uint64_t k = v[i].first; rc == 0 && k < v[i].last; k++) {
                const ev *e = &v[i].slot[k % v[i].cap];
                if (!keep_event(t, e, cutoff, g, ng, from_ts)) {
                    cut++;
                    continue;
                }
                if (n == cap) {
                    rt_trace_pick *np = realloc(pk, (cap *= 2) * sizeof *pk);
                    if (!np) {
                        rc = DAGRT_ENOMEM;
                        break;
                    }
                    pk = np;
                }
                pk[n++] = (rt_trace_pick){e, i};
            }
        if (rc == 0)
            rc = rt_trace_put_speedscope(f, pk, n, t->nthreads, t->nworkers, t->ns_per_tick);
        free(pk);
        free(g);
        if (rc == 0) {
            t->written = n;
            t->cut = cut;
        }
        return rc;
    }
    long pid = rt_os_pid();
    fputs("{\"traceEvents\":[", f);
    bool first = true;
    fprintf(f, "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
               "\"args\":{\"name\":\"libdagrt\"}}", pid);
    first = false;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%u,"
                   "\"args\":{\"name\":", pid, i);
        char name[32];
        rt_trace_thread_name(t->nworkers, i, name, sizeof name);
        rt_trace_put_str(f, name);
        fputs("}}", f);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%ld,\"tid\":%u,"
                   "\"args\":{\"sort_index\":%u}}", pid, i, i);
    }
    for (uint32_t i = 0; i < t->nthreads; i++)
        for (uint64_t k = v[i].first; k < v[i].last; k++) {
            const ev *e = &v[i].slot[k % v[i].cap];
            if (!keep_event(t, e, cutoff, g, ng, from_ts)) {
                cut++;
                continue;
            }
            put_event(f, e, i, pid, t->ns_per_tick, &first);
            kept++;
        }
    long long runs = put_frames(t, f, v, cutoff, g, ng, from_ts, pid, t->ns_per_tick);
    long long flows = runs < 0 ? -1 : t->flows ? put_flows(t, f, v, cutoff, g, ng, from_ts, pid) : 0;
    if (runs < 0 || flows < 0) {
        free(g);
        return DAGRT_ENOMEM;
    }
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"recorder\":\"libdagrt\"", f);
    fprintf(f, ",\"version\":\"%d.%d.%d\",\"clock\":\"%s\"", DAGRT_VERSION_MAJOR,
            DAGRT_VERSION_MINOR, DAGRT_VERSION_PATCH,
            t->use_counter ? "CPU counter, scaled to the monotonic clock" : "monotonic clock");
    fprintf(f, ",\"threads\":%u,\"events\":%llu,\"event_bytes\":%zu,\"cap_bytes\":%zu",
            t->nthreads, (unsigned long long)kept, sizeof(ev), t->max_bytes);
    if (t->frames)
        fprintf(f, ",\"frames_kept\":%llu", (unsigned long long)t->frames);
    else
        fputs(",\"frames_kept\":\"all\"", f);
    fprintf(f, ",\"frame_runs\":%lld", runs);
    if (t->flows)
        fprintf(f, ",\"flows\":%lld", flows);
    fprintf(f, ",\"dropped_events\":%llu", (unsigned long long)dropped);
    if (dropped)
        fputs(",\"note\":\"the memory cap was reached: the oldest events were dropped\"", f);
    fputs("}}\n", f);
    free(g);
    t->written = kept;
    t->cut = cut;
    return 0;
}

/* A new temporary beside target (os/file.h): *tmp (malloc'd) and *f. */
static int make_tmp(const char *target, char **tmp, FILE **f)
{
    size_t n = strlen(target) + RT_OS_FILE_TEMP_EXTRA;
    *tmp = malloc(n);
    if (!*tmp)
        return DAGRT_ENOMEM;
    int e = rt_os_file_temp(target, *tmp, n, f);
    if (e == 0)
        return 0;
    free(*tmp);
    *tmp = NULL;
    return rt_error_os(e, "cannot create the temporary file beside it");
}

int rt_trace_write(rt_trace *t, const char *path)
{
    if (!t || !path || !*path)
        return DAGRT_EINVAL;
    char *target = NULL, *tmp = NULL;
    rt_os_file_kind kind;
    FILE *f = NULL;
    int e = rt_os_file_resolve(path, &target, &kind);
    if (e != 0)
        return rt_error_os(e, "cannot reach it");
    int rc = 0;
    if (kind == RT_OS_FILE_OTHER)
        rc = rt_error_refuse("it is not a regular file, a character device or a FIFO");
    else if (kind == RT_OS_FILE_STREAM)
        rc = (e = rt_os_file_open_stream(target, false, &f)) ? rt_error_os(e, "cannot open it") : 0;
    else
        rc = make_tmp(target, &tmp, &f);
    view *v = rc == 0 ? calloc(t->nthreads, sizeof *v) : NULL;
    if (rc == 0 && !v)
        rc = DAGRT_ENOMEM;
    if (rc != 0) {
        if (f)
            fclose(f);
        if (tmp)
            rt_os_file_remove(tmp);
        free(tmp);
        free(target);
        return rc;
    }
    /* Recording pauses while the rings are read. After the process-wide
     * barrier every thread that saw recording on has passed a full
     * barrier, so its next event sees it off: at most the one it is
     * writing now is in flight, in a slot the writer skips (write_file). */
    bool was_on = rt_trace_is_on(t);
    rt_trace_set_on(t, false);
    if (was_on && rt_os_barrier_init())
        rt_os_barrier();
    /* By the name the user gave: speedscope's own format on request. */
    size_t pl = strlen(path), sl = strlen(".speedscope.json");
    t->speedscope = pl >= sl && strcmp(path + pl - sl, ".speedscope.json") == 0;
    rc = write_file(t, f, v);
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = rt_error_os(rt_os_last_error(), "cannot write it");
    if (fclose(f) != 0 && rc == 0)
        rc = rt_error_os(rt_os_last_error(), "cannot write it");
    if (rc == 0 && tmp && (e = rt_os_file_replace(tmp, target)) != 0)
        rc = rt_error_os(e, "cannot rename the temporary file over it");
    if (rc != 0 && tmp)
        rt_os_file_remove(tmp);
    free(v);
    free(tmp);
    free(target);
    rt_trace_set_on(t, was_on);
    return rc;
}
