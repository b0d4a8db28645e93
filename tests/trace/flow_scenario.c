/*
 * flow_scenario.c - the trace's flow events (DAGRT_TRACE_FLOWS=1) on the
 * benchmark's 32-node frame (bench/frame/bench_frame.dag, 58 edges): every
 * edge of every recorded frame is an arrow from the predecessor's slice to
 * the successor's, each node's latest-ending predecessor is the one that
 * released it, frames in flight that overlap get same-node arrows, and a
 * trace recorded without the variable has no arrows. Listed in
 * trace_list.h (group observe); hosted by Criterion and the plain driver.
 * On obs.dag (a gate, a task skipped in even frames, a fiber task that
 * suspends), the arrows go through the gate and the skipped task to the
 * nodes they released, and from the fiber task's last slice.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_frame.h"
#include "obs.h"
#include "trace_check.h"

int obs_trace_flows(void);

/* Bodies of a few microseconds: slices long enough to hold an arrow's
 * ends apart from their edges. */
#define X(name, idx) \
    void bench_frame_##name(struct bench_ctx *c) { bench_body(c, idx); }
BENCH_FRAME_NODES(X)
#undef X

static void tmp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/dagrt-flow-%ld-%s.json", dir && *dir ? dir : "/tmp", (long)getpid(), what);
}

/* The X slice of (frame, node) on tid that holds instant ts, or NULL. */
static const tc_event *slice_at(const tc_trace *t, int64_t frame, int64_t node, uint32_t tid,
                                uint64_t ts)
{
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph == 'X' && e->frame == frame && e->node == node && e->tid == tid &&
            e->ts <= ts && ts <= e->ts + e->dur && strcmp(e->cat, "bench_frame") == 0)
            return e;
    }
    return NULL;
}

/* The 'f' event with id, or NULL. */
static const tc_event *finish_of(const tc_trace *t, int64_t id)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'f' && t->ev[i].id == id)
            return &t->ev[i];
    return NULL;
}

/* Records `frames` frames (pipelined: depth 2) with or without flows;
 * returns the trace's path in path. */
static int record(const char *flows, unsigned frames, bool piped, char *path, size_t n)
{
    int bad = 0;
    if (flows)
        setenv("DAGRT_TRACE_FLOWS", flows, 1);
    else
        unsetenv("DAGRT_TRACE_FLOWS");
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    unsetenv("DAGRT_TRACE_FLOWS");
    static struct bench_ctx c;
    memset(&c, 0, sizeof c);
    c.iters = bench_calibrate(2000.0);
    if (piped) {
        static bench_frame_pipeline_t p;
        EXPECT(bench_frame_pipeline_init(&p, 2) == 0);
        for (unsigned f = 0; f < frames; f++) {
            bench_frame_advance(&c);
            EXPECT(bench_frame_pipeline_submit(rt, &p, &c) == 0);
        }
        EXPECT(bench_frame_pipeline_drain(rt, &p) == 0);
    } else {
        for (unsigned f = 0; f < frames; f++) {
            bench_frame_advance(&c);
            EXPECT(bench_frame_run(rt, &c) == 0);
        }
    }
    EXPECT(dagrt_trace_stop(rt) == 0);
    tmp_path(path, n, flows ? "on" : "off");
    EXPECT(dagrt_trace_write(rt, path) == 0);
    dagrt_destroy(rt);
    return bad;
}

/* Follows every edge of every frame in the file: an "after" arrow from
 * the predecessor's slice to the node's, one released per node. */
static int follow(const tc_trace *t, int64_t f0, unsigned frames, size_t *orders)
{
    int bad = 0;
    /* edges[frame][node][pred slot]: arrows seen; released per node. */
    unsigned char (*seen)[BENCH_NODES][2] = calloc(frames, sizeof *seen);
    unsigned char (*rel)[BENCH_NODES] = calloc(frames, sizeof *rel);
    EXPECT(seen && rel);
    *orders = 0;
    for (size_t i = 0; seen && rel && i < t->n; i++) {
        const tc_event *s = &t->ev[i];
        if (s->ph != 's')
            continue;
        EXPECT(strcmp(s->cat, "dagrt.flow") == 0);
        const tc_event *fe = finish_of(t, s->id);
        EXPECT(fe != NULL);
        if (!fe)
            continue;
        EXPECT(fe->bp_e && strcmp(fe->name, s->name) == 0);
        EXPECT(fe->frame == s->frame && fe->node == s->node && fe->to_frame == s->to_frame &&
               fe->to_node == s->to_node);
        /* Both ends inside the slices they name, on their threads. */
        EXPECT(slice_at(t, s->frame, s->node, s->tid, s->ts) != NULL);
        EXPECT(slice_at(t, s->to_frame, s->to_node, fe->tid, fe->ts) != NULL);
        if (strcmp(s->name, "order") == 0) {
            EXPECT(s->to_node == s->node && s->to_frame == s->frame + 1);
            ++*orders;
            continue;
        }
        EXPECT(strcmp(s->name, "after") == 0);
        EXPECT(s->to_frame == s->frame);
        int64_t fr = s->frame - f0, v = s->to_node;
        EXPECT(fr >= 0 && fr < (int64_t)frames && v > 0 && v < BENCH_NODES);
        if (!(fr >= 0 && fr < (int64_t)frames && v > 0 && v < BENCH_NODES))
            continue;
        int slot = bench_preds[v][0] == s->node ? 0 : bench_preds[v][1] == s->node ? 1 : -1;
        EXPECT(slot >= 0);   /* an edge of the .dag, nothing else */
        if (slot < 0)
            continue;
        EXPECT(seen[fr][v][slot] == 0);   /* once */
        seen[fr][v][slot]++;
        EXPECT(s->released >= 0);
        if (s->released == 1) {
            rel[fr][v]++;
            /* The releasing predecessor ended last. */
            int o = bench_preds[v][1 - slot];
            if (o >= 0) {
                uint64_t mine = 0, other = 0;
                for (size_t k = 0; k < t->n; k++) {
                    const tc_event *x = &t->ev[k];
                    if (x->ph == 'X' && x->frame == s->frame && strcmp(x->cat, "bench_frame") == 0) {
                        if (x->node == s->node && x->ts + x->dur > mine)
                            mine = x->ts + x->dur;
                        if (x->node == o && x->ts + x->dur > other)
                            other = x->ts + x->dur;
                    }
                }
                EXPECT(mine >= other);
            }
        }
    }
    /* Every edge of every frame, and one release per node but the root. */
    size_t edges = 0;
    for (unsigned fr = 0; seen && rel && fr < frames; fr++)
        for (int v = 1; v < BENCH_NODES; v++) {
            for (int slot = 0; slot < 2; slot++)
                if (bench_preds[v][slot] >= 0) {
                    EXPECT(seen[fr][v][slot] == 1);
                    edges += seen[fr][v][slot];
                }
            EXPECT(rel[fr][v] == 1);
        }
    EXPECT(edges == 58u * frames);
    free(seen);
    free(rel);
    return bad;
}

/* The name of node index `node` in frame-independent X events, or "". */
static const char *name_of(const tc_trace *t, int64_t node)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'X' && t->ev[i].node == node && strcmp(t->ev[i].cat, "obs") == 0)
            return t->ev[i].name;
    return "";
}

/* An "after" arrow from..to in frame f (names), or NULL. */
static const tc_event *arrow(const tc_trace *t, int64_t f, const char *from, const char *to)
{
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph == 's' && e->frame == f && strcmp(e->name, "after") == 0 &&
            strcmp(name_of(t, e->node), from) == 0 && strcmp(name_of(t, e->to_node), to) == 0)
            return e;
    }
    return NULL;
}

static bool ran(const tc_trace *t, int64_t f, const char *name)
{
    return tc_count(t, name, f) > 0;
}

/* obs.dag: through the gate `sim` and the skipped `shadows`. */
static int gates_and_skips(void)
{
    int bad = 0;
    setenv("DAGRT_TRACE_FLOWS", "1", 1);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    unsetenv("DAGRT_TRACE_FLOWS");
    static struct obs_ctx c;
    c.rt = rt;
    for (unsigned f = 0; f < 6; f++) {
        c.frame = f;
        EXPECT(obs_run(rt, &c) == 0);
    }
    EXPECT(dagrt_trace_stop(rt) == 0);
    char path[512];
    tmp_path(path, sizeof path, "obs");
    EXPECT(dagrt_trace_write(rt, path) == 0);
    dagrt_destroy(rt);
    tc_trace t;
    int v = tc_load_checked(path, &t);
    EXPECT(v == 0);
    if (v < 0)
        return bad;
    unsigned skipped = 0;
    for (int64_t f = 0; f < 6; f++) {
        EXPECT(arrow(&t, f, "physics", "particles") && arrow(&t, f, "ai", "particles"));
        EXPECT(arrow(&t, f, "particles", "render") && arrow(&t, f, "loader", "render"));
        EXPECT(!arrow(&t, f, "input", "render"));   /* not an edge, not through one */
        if (ran(&t, f, "shadows")) {
            EXPECT(arrow(&t, f, "physics", "shadows") && arrow(&t, f, "shadows", "render"));
            EXPECT(!arrow(&t, f, "physics", "render"));
        } else {
            /* Skipped: its inputs released render through it. */
            skipped++;
            EXPECT(arrow(&t, f, "physics", "render") && arrow(&t, f, "ai", "render"));
        }
    }
    EXPECT(skipped == 3);
    tc_free(&t);
    unlink(path);
    return bad;
}

int obs_trace_flows(void)
{
    int bad = 0;
    unsigned frames = 20;
    char on[512], off[512];
    bad += record("1", frames, false, on, sizeof on);
    bad += record(NULL, 4, false, off, sizeof off);
    tc_trace t;
    int v = tc_load_checked(on, &t);
    EXPECT(v == 0);
    if (v >= 0) {
        int64_t f0 = INT64_MAX;
        for (size_t i = 0; i < t.n; i++)
            if (t.ev[i].ph == 'X' && strcmp(t.ev[i].cat, "bench_frame") == 0 && t.ev[i].frame < f0)
                f0 = t.ev[i].frame;
        size_t orders;
        bad += follow(&t, f0, frames, &orders);
        EXPECT(orders == 0);   /* frames one at a time never overlap */
        tc_free(&t);
    }
    unlink(on);
    /* Off by default: not one flow event. */
    v = tc_load_checked(off, &t);
    EXPECT(v == 0);
    if (v >= 0) {
        size_t flows = 0;
        for (size_t i = 0; i < t.n; i++)
            flows += t.ev[i].ph == 's' || t.ev[i].ph == 'f';
        EXPECT(flows == 0);
        EXPECT(tc_count(&t, NULL, -1) > 0);
        tc_free(&t);
    }
    unlink(off);
    /* Frames in flight: every edge still, and where two frames overlap,
     * all 32 same-node arrows between them. */
    bad += record("1", frames, true, on, sizeof on);
    v = tc_load_checked(on, &t);
    EXPECT(v == 0);
    if (v >= 0) {
        int64_t f0 = INT64_MAX;
        for (size_t i = 0; i < t.n; i++)
            if (t.ev[i].ph == 'X' && strcmp(t.ev[i].cat, "bench_frame") == 0 && t.ev[i].frame < f0)
                f0 = t.ev[i].frame;
        size_t orders;
        bad += follow(&t, f0, frames, &orders);
        EXPECT(orders % BENCH_NODES == 0);
        tc_free(&t);
    }
    unlink(on);
    bad += gates_and_skips();
    return bad;
}
