/*
 * trace/record.c - the built-in trace recorder: per-thread rings of complete
 * events (trace/record.h; the file is written by trace/write.c, and
 * docs/runtime.md "Observing a frame" is the user's view).
 */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rt_trace_event_bytes(void) { return sizeof(ev); }

void rt_trace_set_workers(rt_trace *t, uint32_t nworkers) { t->nworkers = nworkers; }

void rt_trace_thread_name(uint32_t nworkers, uint32_t tid, char *buf, size_t n)
{
    if (tid == 0)
        snprintf(buf, n, "dagrt-main");
    else if (tid <= nworkers)
        snprintf(buf, n, "dagrt-worker-%u", tid);
    else
        snprintf(buf, n, "dagrt-guest-%u", tid - nworkers);
}

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
    t->rings = rt_os_alloc_aligned(RT_APART, ((nthreads * sizeof(ring) + RT_APART - 1) / RT_APART) * RT_APART);
    if (!t->rings) {
        free(t);
        return NULL;
    }
    memset(t->rings, 0, nthreads * sizeof(ring));
    t->nthreads = nthreads;
    t->nworkers = nthreads - 1;   /* no guest slots until rt_trace_set_workers */
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
    atomic_init(&t->ngraphs, 0);
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
    rt_os_free_aligned(t->rings);
    free(t);
}

void rt_trace_set_on(rt_trace *t, bool on)
{
    /* relaxed (both): a thread that sees the change late records one event
     * more or less; the writer tolerates one in flight per ring (trace/record.h).
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
    e->kind = (o->flags & F_TASK) ? EV_TASK : EV_NODE;
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

/* A task's span as the open stack keeps it: its parent's identity, and
 * the task itself in begin (no node span has a begin without piece). */
static rt_trace_node task_span(const rt_trace_node *parent, const void *id, const void *fn)
{
    rt_trace_node n = { NULL, NULL, 0, false, 0, 0, 0 };
    if (parent && parent->graph) {
        n.graph = parent->graph;
        n.node = parent->node;
        n.index = parent->index;
        n.frame = parent->frame;
    }
    n.begin = (uint64_t)(uintptr_t)id;
    n.end = (uint64_t)(uintptr_t)fn;
    return n;
}

void rt_trace_task_begin(rt_trace *t, uint32_t tid, const rt_trace_node *parent, const void *id,
                         const void *fn, bool resumed)
{
    ring *r = ring_of(t, tid);
    if (r) {
        rt_trace_node n = task_span(parent, id, fn);
        open_push(t, r, &n, F_TASK | (resumed ? F_RESUMED : 0));
    }
}

void rt_trace_task_end(rt_trace *t, uint32_t tid, const rt_trace_node *parent, const void *id,
                       const void *fn, bool suspended)
{
    rt_trace_node n = task_span(parent, id, fn);
    ring *r = ring_of(t, tid);
    if (r)
        open_close(t, r, &n, suspended ? F_SUSPENDED : 0);
    else
        open_drop(t, tid, &n);
}

bool rt_trace_current(rt_trace *t, uint32_t tid, rt_trace_node *out)
{
    ring *r = ring_of(t, tid);
    if (!r || r->depth == 0 || r->depth > DEPTH)
        return false;   /* over the cap: the top is not stored */
    const open_span *o = &r->open[r->depth - 1];
    if (!o->n.graph)
        return false;   /* a task whose parent was not known */
    *out = o->n;
    out->piece = false;
    out->begin = out->end = 0;
    return true;
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

void rt_trace_io(rt_trace *t, uint32_t tid, const char *op, int64_t handle, int64_t result,
                 uint64_t wait_ns)
{
    ring *r = ring_of(t, tid);
    if (!r)
        return;
    uint64_t h;
    ev *e = slot_next(r, &h);
    memset(e, 0, sizeof *e);
    e->ts = ticks(t) - t->t0;
    e->name = op;
    e->cat = "io";
    e->frame = (uint64_t)handle;
    e->b = (uint64_t)result;
    e->e = wait_ns;
    e->kind = EV_IO;
    slot_done(r, h);
}

void rt_trace_set_flows(rt_trace *t, bool on) { t->flows = on; }

bool rt_trace_flows(const rt_trace *t) { return t && t->flows; }

void rt_trace_graph(rt_trace *t, const struct dagrt_graph *g)
{
    if (!t || !t->flows)
        return;
    /* relaxed: this (main) thread is the only writer of ngraphs. */
    uint32_t n = atomic_load_explicit(&t->ngraphs, memory_order_relaxed);
    for (uint32_t i = n; i-- > 0;)
        if (t->graphs[i] == g)
            return;
    if (n == RT_TRACE_GRAPHS)
        return;
    t->graphs[n] = g;
    /* release: a writer on another thread that reads ngraphs with acquire
     * sees the slot filled. */
    atomic_store_explicit(&t->ngraphs, n + 1, memory_order_release);
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
