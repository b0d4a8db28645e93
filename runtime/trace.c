/*
 * trace.c - the built-in trace recorder: per-thread rings of complete
 * events and the Chrome Trace Event Format writer (trace.h, and
 * docs/runtime.md "Tracing").
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <process.h>
#define getpid _getpid
#else
#include <unistd.h>
#endif

#include "apart.h"
#include "dagrt.h"
#include "os/os.h"

#define RT_TRACE_UNLIKELY(x) __builtin_expect(!!(x), 0)

enum { EV_NODE = 0, EV_IDLE = 1, EV_MARK = 2 };
enum { F_PIECE = 1, F_RESUMED = 2, F_SUSPENDED = 4 };

typedef struct ev {
    uint64_t ts, dur;           /* ns since the trace's start */
    const char *name, *cat;
    uint64_t frame, b, e;
    uint32_t index;
    uint8_t kind, flags;
} ev;

/* Open spans per thread: nesting comes from waits that help (a task waits
 * and runs others on its thread) and from pieces inside a task. */
#define DEPTH 32

typedef struct open_span {
    uint64_t ts;
    rt_trace_node n;
    uint8_t flags;
} open_span;

typedef struct ring {
    /* Events written so far; slot head % cap is the next. */
    _Alignas(RT_APART) _Atomic uint64_t head;
    ev *slot;
    uint64_t cap;
    uint32_t gen;                /* the start this thread's open spans belong to */
    uint32_t depth;              /* open spans, up to DEPTH stored */
    uint64_t idle_ts;            /* idle since (0: not idle) */
    open_span open[DEPTH];
} ring;

struct rt_trace {
    _Atomic bool on;
    bool use_counter;            /* ticks: counter(); else ns */
    uint64_t t0_ns;              /* the clock at t0 */
    _Atomic uint32_t gen;        /* starts so far: spans open before one are dropped */
    uint32_t nthreads;
    uint64_t frames;
    size_t max_bytes;
    uint64_t t0;                 /* ticks at creation */
    double ns_per_tick;          /* set by the writer */
    uint64_t written, cut;
    ring *rings;
};

static uint64_t now_ns(void)
{
    return rt_os_now_ns();
}

/* Events are stamped with the CPU's constant-rate counter where there is
 * one (a third of a clock call's cost or less), converted to nanoseconds
 * when the file is written, by the counter's rate over the recording
 * (measured against the monotonic clock from creation to the write). */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
static inline uint64_t counter(void)
{
    unsigned lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static bool counter_ok(void)
{
    unsigned a, b, c, d;   /* CPUID 0x80000007 EDX bit 8: invariant TSC */
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && ((d >> 8) & 1);
}
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
static inline uint64_t counter(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
static bool counter_ok(void) { return true; }   /* the generic timer: constant rate */
#else
static inline uint64_t counter(void) { return 0; }
static bool counter_ok(void) { return false; }
#endif

size_t rt_trace_event_bytes(void) { return sizeof(ev); }

rt_trace *rt_trace_create(uint32_t nthreads, size_t max_bytes, uint64_t frames)
{
    if (nthreads == 0 || nthreads > 4096)
        return NULL;
    if (max_bytes == 0)
        max_bytes = RT_TRACE_DEFAULT_BYTES;
    uint64_t per = max_bytes / sizeof(ev) / nthreads;
    if (per < RT_TRACE_MIN_RING)
        per = RT_TRACE_MIN_RING;
    rt_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->rings = aligned_alloc(RT_APART, ((nthreads * sizeof(ring) + RT_APART - 1) / RT_APART) * RT_APART);
    if (!t->rings) {
        free(t);
        return NULL;
    }
    memset(t->rings, 0, nthreads * sizeof(ring));
    t->nthreads = nthreads;
    t->frames = frames;
    t->max_bytes = (size_t)(per * nthreads * sizeof(ev));
    for (uint32_t i = 0; i < nthreads; i++) {
        ring *r = &t->rings[i];
        atomic_init(&r->head, 0);
        r->cap = per;
        r->slot = malloc(per * sizeof(ev));
        if (!r->slot) {
            rt_trace_destroy(t);
            return NULL;
        }
        /* Touched now, not as events arrive: a page fault per 64 events
         * would be the recorder's largest cost while it fills. */
        memset(r->slot, 0, per * sizeof(ev));
    }
    atomic_init(&t->on, false);
    t->use_counter = counter_ok();
    t->t0_ns = now_ns();
    t->t0 = t->use_counter ? counter() : t->t0_ns;
    t->ns_per_tick = 1.0;
    return t;
}

void rt_trace_destroy(rt_trace *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nthreads; i++)
        free(t->rings[i].slot);
    free(t->rings);
    free(t);
}

void rt_trace_set_on(rt_trace *t, bool on)
{
    /* relaxed (both): a thread that sees the change late records one event
     * more or less; the writer tolerates one in flight per ring (trace.h).
     * A thread that sees the new generation drops its open spans and idle
     * mark: begun before a stop, their ends may never have come. */
    if (on)
        atomic_store_explicit(&t->gen, atomic_load_explicit(&t->gen, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    atomic_store_explicit(&t->on, on, memory_order_relaxed);
}

bool rt_trace_is_on(const rt_trace *t)
{
    /* relaxed: a hint, as above. */
    return atomic_load_explicit(&((rt_trace *)t)->on, memory_order_relaxed);
}

static bool same_span(const rt_trace_node *a, const rt_trace_node *b);

static inline ring *ring_of(rt_trace *t, uint32_t tid)
{
    if (!t || tid >= t->nthreads || !atomic_load_explicit(&t->on, memory_order_relaxed))
        return NULL;  /* relaxed: see rt_trace_set_on */
    ring *r = &t->rings[tid];
    uint32_t g = atomic_load_explicit(&t->gen, memory_order_relaxed);  /* see rt_trace_set_on */
    if (RT_TRACE_UNLIKELY(r->gen != g)) {
        r->gen = g;
        r->depth = 0;
        r->idle_ts = 0;
    }
    return r;
}

/* While recording is off, an end still closes its open span (nothing is
 * recorded), so spans cut by a stop or a write do not linger. */
static inline void open_drop(rt_trace *t, uint32_t tid, const rt_trace_node *n)
{
    if (!t || tid >= t->nthreads)
        return;
    ring *r = &t->rings[tid];
    uint32_t k = r->depth < DEPTH ? r->depth : DEPTH;
    if (r->depth > DEPTH) {
        r->depth--;
        return;
    }
    while (k > 0 && !same_span(&r->open[k - 1].n, n))
        k--;
    if (k > 0)
        r->depth = k - 1;
}

static inline ev *slot_next(ring *r, uint64_t *h)
{
    /* relaxed: the ring's own thread is the only writer of head. */
    *h = atomic_load_explicit(&r->head, memory_order_relaxed);
    return &r->slot[*h % r->cap];
}

static inline uint64_t ticks(const rt_trace *t)
{
    return t->use_counter ? counter() : now_ns();
}

static inline void slot_done(ring *r, uint64_t h)
{
    /* release: the event's fields are visible to a writer that reads head
     * with acquire. */
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static void open_push(rt_trace *t, ring *r, const rt_trace_node *n, uint8_t flags)
{
    if (r->depth < DEPTH) {
        open_span *o = &r->open[r->depth];
        o->ts = ticks(t);
        o->n = *n;
        o->flags = flags | (n->piece ? F_PIECE : 0);
    }
    r->depth++;
}

static bool same_span(const rt_trace_node *a, const rt_trace_node *b)
{
    return a->index == b->index && a->frame == b->frame && a->piece == b->piece &&
           a->begin == b->begin && a->graph == b->graph;
}

/* Closes the open span matching n (normally the top). A span over the
 * depth cap, or one whose begin came before recording started, has no
 * entry: nothing is recorded for it. */
static void open_close(rt_trace *t, ring *r, const rt_trace_node *n, uint8_t flags)
{
    if (r->depth == 0)
        return;
    uint32_t stored = r->depth < DEPTH ? r->depth : DEPTH;
    if (r->depth > DEPTH) {
        r->depth--;
        return;
    }
    uint32_t k = stored;
    while (k > 0 && !same_span(&r->open[k - 1].n, n))
        k--;
    if (k == 0)
        return;  /* its begin was not recorded */
    open_span *o = &r->open[k - 1];
    r->depth = k - 1;  /* spans above it were left open by a restart: gone */
    uint64_t h, end = ticks(t);
    ev *e = slot_next(r, &h);
    e->ts = o->ts - t->t0;
    e->dur = end - o->ts;
    e->name = o->n.node;
    e->cat = o->n.graph;
    e->frame = o->n.frame;
    e->b = o->n.begin;
    e->e = o->n.end;
    e->index = o->n.index;
    e->kind = EV_NODE;
    e->flags = o->flags | flags;
    slot_done(r, h);
}

void rt_trace_begin(rt_trace *t, uint32_t tid, const rt_trace_node *n)
{
    ring *r = ring_of(t, tid);
    if (r)
        open_push(t, r, n, 0);
}

void rt_trace_end(rt_trace *t, uint32_t tid, const rt_trace_node *n)
{
    ring *r = ring_of(t, tid);
    if (r)
        open_close(t, r, n, 0);
    else
        open_drop(t, tid, n);
}

void rt_trace_suspend(rt_trace *t, uint32_t tid, const rt_trace_node *n)
{
    ring *r = ring_of(t, tid);
    if (r)
        open_close(t, r, n, F_SUSPENDED);
    else
        open_drop(t, tid, n);
}

void rt_trace_resume(rt_trace *t, uint32_t tid, const rt_trace_node *n)
{
    ring *r = ring_of(t, tid);
    if (r)
        open_push(t, r, n, F_RESUMED);
}

void rt_trace_idle(rt_trace *t, uint32_t tid)
{
    ring *r = ring_of(t, tid);
    if (r)
        r->idle_ts = ticks(t);
}

void rt_trace_wake(rt_trace *t, uint32_t tid)
{
    ring *r = ring_of(t, tid);
    if (!r || r->idle_ts == 0)
        return;
    uint64_t h, end = ticks(t);
    ev *e = slot_next(r, &h);
    memset(e, 0, sizeof *e);
    e->ts = r->idle_ts - t->t0;
    e->dur = end - r->idle_ts;
    e->name = "idle";
    e->cat = "dagrt";
    e->kind = EV_IDLE;
    r->idle_ts = 0;
    slot_done(r, h);
}

void rt_trace_mark(rt_trace *t, uint32_t tid, rt_trace_mark_kind m)
{
    static const char *const names[] = {"steal", "park", "wake"};
    ring *r = ring_of(t, tid);
    if (!r || (unsigned)m > RT_TRACE_WAKE)
        return;
    uint64_t h;
    ev *e = slot_next(r, &h);
    memset(e, 0, sizeof *e);
    e->ts = ticks(t) - t->t0;
    e->name = names[m];
    e->cat = "dagrt";
    e->kind = EV_MARK;
    slot_done(r, h);
}

void rt_trace_get_counts(const rt_trace *t, rt_trace_counts *out)
{
    memset(out, 0, sizeof *out);
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        /* acquire: pairs with slot_done. */
        uint64_t h = atomic_load_explicit(&t->rings[i].head, memory_order_acquire);
        out->recorded += h;
        if (h > t->rings[i].cap)
            out->dropped += h - t->rings[i].cap;
    }
    out->dropped += t->cut;
    out->written = t->written;
}

/* ------------------------------------------------------------- the writer */

typedef struct view {
    const ev *slot;
    uint64_t cap, first, last;   /* events [first, last) of the ring */
} view;

static void put_str(FILE *f, const char *s)
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
    fprintf(f, "{\"ph\":\"%s\",\"name\":", e->kind == EV_MARK ? "i" : "X");
    put_str(f, e->name);
    fputs(",\"cat\":", f);
    put_str(f, e->cat);
    fputs(",\"ts\":", f);
    uint64_t b = to_ns(e->ts, k);
    put_us(f, b);
    if (e->kind != EV_MARK) {
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
    }
    fputc('}', f);
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
     * event may be landing there, trace.h). */
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
    long pid = (long)getpid();
    fputs("{\"traceEvents\":[", f);
    bool first = true;
    fprintf(f, "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,"
               "\"args\":{\"name\":\"libdagrt\"}}", pid);
    first = false;
    for (uint32_t i = 0; i < t->nthreads; i++) {
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%u,"
                   "\"args\":{\"name\":", pid, i);
        char name[32];
        if (i == 0)
            snprintf(name, sizeof name, "dagrt-main");
        else
            snprintf(name, sizeof name, "dagrt-worker-%u", i);
        put_str(f, name);
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
    fprintf(f, ",\"dropped_events\":%llu", (unsigned long long)dropped);
    if (dropped)
        fputs(",\"note\":\"the memory cap was reached: the oldest events were dropped\"", f);
    fputs("}}\n", f);
    free(g);
    t->written = kept;
    t->cut = cut;
    return 0;
}

int rt_trace_write(rt_trace *t, const char *path)
{
    if (!t || !path || !*path)
        return DAGRT_EINVAL;
    view *v = calloc(t->nthreads, sizeof *v);
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!v || !tmp) {
        free(v);
        free(tmp);
        return DAGRT_ENOMEM;
    }
    /* Recording pauses while the rings are read. After the process-wide
     * barrier every thread that saw recording on has passed a full
     * barrier, so its next event sees it off: at most the one it is
     * writing now is in flight, in a slot the writer skips (write_file). */
    bool was_on = rt_trace_is_on(t);
    rt_trace_set_on(t, false);
    if (was_on && rt_os_barrier_init())
        rt_os_barrier();
    /* Beside the target, named by process and write: only the main thread
     * writes, so one name per write of this process. */
    static unsigned long writes;
    snprintf(tmp, n, "%s.tmp%ld.%lu", path, (long)getpid(), ++writes);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(v);
        free(tmp);
        rt_trace_set_on(t, was_on);
        return DAGRT_EINVAL;
    }
    int rc = write_file(t, f, v);
    if (fflush(f) != 0 || ferror(f))
        rc = rc ? rc : DAGRT_EINVAL;
    if (fclose(f) != 0)
        rc = rc ? rc : DAGRT_EINVAL;
#ifdef _WIN32
    if (rc == 0)
        remove(path);   /* rename does not replace a file there */
#endif
    if (rc == 0 && rename(tmp, path) != 0)
        rc = DAGRT_EINVAL;
    if (rc != 0)
        remove(tmp);
    free(v);
    free(tmp);
    rt_trace_set_on(t, was_on);
    return rc;
}
