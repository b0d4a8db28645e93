/*
 * trace_scenarios.c - the trace recorder on its own (runtime/trace.c):
 * each scenario records, writes a file, reads it back with the strict JSON
 * reader and returns the number of violations. Hosted by Criterion
 * (test_trace.c, suite unit) and by a plain driver (suite tsan).
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dagrt.h"
#include "trace.h"
#include "trace_check.h"

static void tmp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/dagrt-trace-%ld-%s.json", dir && *dir ? dir : "/tmp", (long)getpid(), what);
}

static rt_trace_node node(const char *g, const char *name, uint32_t i, uint64_t frame)
{
    rt_trace_node n = {g, name, i, false, frame, 0, 0};
    return n;
}

static int load_checked(const char *path, tc_trace *t)
{
    int bad = tc_load_checked(path, t);
    if (bad < 0)
        return 1;
    if (!t->has_display_unit || !t->has_other) {
        fprintf(stderr, "%s: displayTimeUnit or otherData missing\n", path);
        bad++;
    }
    return bad;
}

static const tc_event *find(const tc_trace *t, const char *name, size_t nth)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'X' && strcmp(t->ev[i].name, name) == 0 && nth-- == 0)
            return &t->ev[i];
    return NULL;
}

/* Nested spans (a wait that helps), a piece, an end without begin. */
static int trace_nesting(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(2, 0, 0);
    EXPECT(t != NULL);
    if (!t)
        return bad;
    rt_trace_node a = node("frame", "physics", 3, 7), b = node("frame", "audio", 5, 7);
    rt_trace_node p = node("frame", "particles", 6, 7);
    p.piece = true;
    p.begin = 16;
    p.end = 32;
    rt_trace_begin(t, 0, &a);                /* off: not recorded */
    rt_trace_end(t, 0, &a);
    rt_trace_set_on(t, true);
    rt_trace_end(t, 1, &b);                  /* no begin: nothing */
    rt_trace_begin(t, 0, &a);
    rt_trace_begin(t, 0, &b);
    rt_trace_end(t, 0, &b);
    rt_trace_begin(t, 0, &p);
    rt_trace_end(t, 0, &p);
    rt_trace_end(t, 0, &a);
    rt_trace_idle(t, 1);
    rt_trace_wake(t, 1);
    rt_trace_mark(t, 1, RT_TRACE_STEAL);
    rt_trace_begin(t, 7, &a);                /* no such thread: ignored */
    rt_trace_set_on(t, false);
    char path[512];
    tmp_path(path, sizeof path, "nesting");
    EXPECT(rt_trace_write(t, path) == 0);
    rt_trace_counts c;
    rt_trace_get_counts(t, &c);
    EXPECT(c.recorded == 5 && c.written == 5 && c.dropped == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, NULL, -1) == 4);    /* three nodes and the idle span */
    const tc_event *ea = find(&tr, "physics", 0), *eb = find(&tr, "audio", 0);
    const tc_event *ep = find(&tr, "particles", 0);
    EXPECT(ea && eb && ep);
    if (ea && eb && ep) {
        EXPECT(strcmp(ea->cat, "frame") == 0 && ea->frame == 7 && ea->node == 3 && ea->tid == 0);
        EXPECT(eb->ts >= ea->ts && eb->ts + eb->dur <= ea->ts + ea->dur);
        EXPECT(ep->begin == 16 && ep->end == 32 && ep->ts >= eb->ts + eb->dur);
        EXPECT(ea->begin == -1 && !ea->resumed && !ea->suspended);
    }
    const tc_event *idle = find(&tr, "idle", 0);
    EXPECT(idle && idle->tid == 1 && strcmp(idle->cat, "dagrt") == 0);
    size_t marks = 0, names = 0;
    for (size_t i = 0; i < tr.n; i++) {
        marks += tr.ev[i].ph == 'i' && strcmp(tr.ev[i].name, "steal") == 0;
        names += tr.ev[i].ph == 'M' && (strcmp(tr.ev[i].thread_name, "dagrt-main") == 0 ||
                                        strcmp(tr.ev[i].thread_name, "dagrt-worker-1") == 0);
    }
    EXPECT(marks == 1 && names == 2);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* A span open across a stop and a start is dropped (its end may have come
 * while stopped); one begun after the start is kept. */
static int trace_restart(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(1, 0, 0);
    if (!t)
        return 1;
    rt_trace_node a = node("g", "across", 0, 0), b = node("g", "after", 1, 0);
    rt_trace_set_on(t, true);
    rt_trace_begin(t, 0, &a);
    rt_trace_idle(t, 0);
    rt_trace_set_on(t, false);
    rt_trace_set_on(t, true);
    rt_trace_wake(t, 0);                     /* its idle began before the stop */
    rt_trace_begin(t, 0, &b);
    rt_trace_end(t, 0, &b);
    rt_trace_end(t, 0, &a);
    char path[512];
    tmp_path(path, sizeof path, "restart");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "after", -1) == 1);
    EXPECT(tc_count(&tr, "across", -1) == 0);
    EXPECT(tc_count(&tr, "idle", -1) == 0);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* A fiber task that suspends on one thread and resumes on another is two
 * slices, one per thread. */
static int trace_fiber_slices(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(3, 0, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    rt_trace_node f = node("g", "load", 1, 0), o = node("g", "other", 2, 0);
    rt_trace_begin(t, 1, &f);
    rt_trace_suspend(t, 1, &f);
    rt_trace_begin(t, 1, &o);               /* the thread runs something else */
    rt_trace_resume(t, 2, &f);
    rt_trace_end(t, 1, &o);
    rt_trace_suspend(t, 2, &f);
    rt_trace_resume(t, 2, &f);
    rt_trace_end(t, 2, &f);
    char path[512];
    tmp_path(path, sizeof path, "fiber");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "load", 0) == 3);
    const tc_event *s0 = find(&tr, "load", 0), *s1 = find(&tr, "load", 1), *s2 = find(&tr, "load", 2);
    if (s0 && s1 && s2) {
        EXPECT(s0->tid == 1 && !s0->resumed && s0->suspended);
        EXPECT(s1->tid == 2 && s1->resumed && s1->suspended);
        EXPECT(s2->tid == 2 && s2->resumed && !s2->suspended);
        EXPECT(s1->ts + s1->dur <= s2->ts);
    }
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* Past the cap the oldest events go; the file says so, and every thread's
 * events start at one common point. */
static int trace_cap(void)
{
    int bad = 0;
    size_t bytes = 2 * RT_TRACE_MIN_RING * rt_trace_event_bytes();
    rt_trace *t = rt_trace_create(2, bytes, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    rt_trace_node n = node("g", "tick", 0, 0);
    rt_trace_begin(t, 1, &n);               /* the oldest on thread 1 */
    rt_trace_end(t, 1, &n);
    for (uint64_t i = 0; i < 5 * RT_TRACE_MIN_RING; i++) {
        n.frame = i;
        rt_trace_begin(t, 0, &n);
        rt_trace_end(t, 0, &n);
    }
    char path[512];
    tmp_path(path, sizeof path, "cap");
    EXPECT(rt_trace_write(t, path) == 0);
    rt_trace_counts c;
    rt_trace_get_counts(t, &c);
    EXPECT(c.recorded == 5 * RT_TRACE_MIN_RING + 1);
    EXPECT(c.written == RT_TRACE_MIN_RING - 1);   /* thread 1's one is before the window */
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tr.has_note && tr.dropped == 4 * RT_TRACE_MIN_RING + 1);
    EXPECT(tc_count(&tr, NULL, -1) == RT_TRACE_MIN_RING - 1);
    EXPECT(tc_count(&tr, NULL, 5 * RT_TRACE_MIN_RING - 1) == 1);   /* the newest is kept */
    EXPECT(tc_count(&tr, NULL, 4 * RT_TRACE_MIN_RING) == 0);       /* the oldest slot is not */
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* DAGRT_TRACE_FRAMES: the last N frames of each graph. */
static int trace_frames(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(1, 0, 2);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    for (uint64_t f = 0; f < 10; f++) {
        rt_trace_node a = node("a", "x", 0, f), b = node("b", "y", 0, f / 2);
        rt_trace_begin(t, 0, &a);
        rt_trace_end(t, 0, &a);
        rt_trace_begin(t, 0, &b);
        rt_trace_end(t, 0, &b);
        rt_trace_idle(t, 0);
        rt_trace_wake(t, 0);
    }
    char path[512];
    tmp_path(path, sizeof path, "frames");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "x", -1) == 2 && tc_count(&tr, "x", 8) == 1 && tc_count(&tr, "x", 9) == 1);
    EXPECT(tc_count(&tr, "y", -1) == 4 && tc_count(&tr, "y", 3) == 2 && tc_count(&tr, "y", 4) == 2);
    /* idle spans from the first kept frame on (graph b's frame 3 began at a's 6) */
    EXPECT(tc_count(&tr, "idle", -1) == 4);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* Bad arguments: a clear code, nothing half-written. */
static int trace_errors(void)
{
    int bad = 0;
    EXPECT(rt_trace_create(0, 0, 0) == NULL);
    rt_trace *t = rt_trace_create(1, 0, 0);
    if (!t)
        return 1;
    EXPECT(rt_trace_write(t, "/nonexistent-dir/x.json") == DAGRT_EINVAL);
    EXPECT(rt_trace_write(t, "") == DAGRT_EINVAL);
    EXPECT(rt_trace_write(NULL, "x.json") == DAGRT_EINVAL);
    EXPECT(access("/nonexistent-dir", F_OK) != 0);
    char path[512];
    tmp_path(path, sizeof path, "empty");
    EXPECT(rt_trace_write(t, path) == 0);   /* nothing recorded: a valid, empty trace */
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, NULL, -1) == 0);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    rt_trace_destroy(NULL);
    return bad;
}

/* Threads record into their own rings at once, and the writer reads while
 * they still run (recording pauses; each ring tolerates the one event in
 * flight when it starts). */
typedef struct rec_arg {
    rt_trace *t;
    uint32_t tid;
    unsigned n;
} rec_arg;

static void *recorder(void *p)
{
    rec_arg *a = p;
    rt_trace_node outer = node("g", "outer", 0, 0), inner = node("g", "inner", 1, 0);
    for (unsigned i = 0; i < a->n; i++) {
        outer.frame = inner.frame = i;
        rt_trace_begin(a->t, a->tid, &outer);
        rt_trace_begin(a->t, a->tid, &inner);
        rt_trace_end(a->t, a->tid, &inner);
        rt_trace_end(a->t, a->tid, &outer);
    }
    return NULL;
}

static int trace_threads(void)
{
    int bad = 0;
    const char *sc = getenv("DAGC_TEST_SCALE");
    double scale = sc ? atof(sc) : 1.0;
    unsigned n = (unsigned)(20000 * (scale > 0 ? scale : 1.0));
    enum { T = 4 };
    rt_trace *t = rt_trace_create(T, T * 4096 * rt_trace_event_bytes(), 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    pthread_t th[T];
    rec_arg args[T];
    for (uint32_t i = 0; i < T; i++) {
        args[i] = (rec_arg){t, i, n};
        pthread_create(&th[i], NULL, recorder, &args[i]);
    }
    char path[512];
    tmp_path(path, sizeof path, "threads-live");
    EXPECT(rt_trace_write(t, path) == 0);   /* while they record */
    tc_trace tr;
    bad += load_checked(path, &tr);
    tc_free(&tr);
    for (uint32_t i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    /* Writing paused recording; now a batch with nobody writing. */
    EXPECT(rt_trace_is_on(t));               /* the pause ended with the write */
    for (uint32_t i = 0; i < T; i++)
        pthread_create(&th[i], NULL, recorder, &args[i]);
    for (uint32_t i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    rt_trace_set_on(t, false);
    EXPECT(rt_trace_write(t, path) == 0);
    bad += load_checked(path, &tr);
    /* Every ring wrapped. The file is one window for all threads: it
     * starts at the newest of the rings' oldest events, so at least the
     * ring that set the start is whole (4095: its oldest slot is skipped),
     * and no thread has an event before the start. */
    size_t outer = tc_count(&tr, "outer", -1), inner = tc_count(&tr, "inner", -1);
    EXPECT(outer + inner <= T * 4095 && outer + inner >= 4095);
    uint64_t start = UINT64_MAX, latest_first = 0;
    for (uint32_t k = 0; k < T; k++) {
        uint64_t first = UINT64_MAX;
        for (size_t i = 0; i < tr.n; i++)
            if (tr.ev[i].ph == 'X' && tr.ev[i].tid == k && tr.ev[i].ts < first)
                first = tr.ev[i].ts;
        if (first < start)
            start = first;
        if (first != UINT64_MAX && first > latest_first)
            latest_first = first;
    }
    EXPECT(start != UINT64_MAX && start <= latest_first);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "trace_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
