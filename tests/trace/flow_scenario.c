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

/* The trace's bench_frame slices and flow finishes, indexed: slices by
 * (frame - f0, node), finishes by id (the writer numbers arrows from 1). */
#define SLICES 4
typedef struct index {
    int64_t f0;
    unsigned frames;
    const tc_event *(*x)[BENCH_NODES][SLICES];
    uint64_t (*end)[BENCH_NODES];          /* the node's latest end in the frame */
    const tc_event **fin;
    size_t nfin;
} index_t;

static int index_build(const tc_trace *t, int64_t f0, unsigned frames, index_t *ix)
{
    memset(ix, 0, sizeof *ix);
    ix->f0 = f0;
    ix->frames = frames + 1;   /* order arrows reach one frame past the last */
    ix->x = calloc(ix->frames, sizeof *ix->x);
    ix->end = calloc(ix->frames, sizeof *ix->end);
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'f' && t->ev[i].id > 0 && (size_t)t->ev[i].id > ix->nfin)
            ix->nfin = (size_t)t->ev[i].id;
    ix->fin = calloc(ix->nfin + 1, sizeof *ix->fin);
    if (!ix->x || !ix->end || !ix->fin)
        return 1;
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph == 'f' && e->id > 0)
            ix->fin[e->id] = e;
        if (e->ph != 'X' || strcmp(e->cat, "bench_frame") != 0 || e->frame < f0 ||
            e->frame - f0 >= (int64_t)ix->frames || e->node < 0 || e->node >= BENCH_NODES)
            continue;
        int64_t fr = e->frame - f0;
        for (int k = 0; k < SLICES; k++)
            if (!ix->x[fr][e->node][k]) {
                ix->x[fr][e->node][k] = e;
                break;
            }
        if (e->ts + e->dur > ix->end[fr][e->node])
            ix->end[fr][e->node] = e->ts + e->dur;
    }
    return 0;
}

static void index_free(index_t *ix)
{
    free(ix->x);
    free(ix->end);
    free(ix->fin);
}

/* Whether a slice of (frame, node) on tid holds instant ts. */
static bool slice_at(const index_t *ix, int64_t frame, int64_t node, uint32_t tid, uint64_t ts)
{
    int64_t fr = frame - ix->f0;
    if (fr < 0 || fr >= (int64_t)ix->frames || node < 0 || node >= BENCH_NODES)
        return false;
    for (int k = 0; k < SLICES; k++) {
        const tc_event *e = ix->x[fr][node][k];
        if (e && e->tid == tid && e->ts <= ts && ts <= e->ts + e->dur)
            return true;
    }
    return false;
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
    /* 4 MiB: plenty for these frames, and quick to touch (under TSan too). */
    static const dagrt_trace_config small = {4u << 20, 0};
    EXPECT(dagrt_trace_start(rt, &small) == 0);
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
    index_t ix;
    /* seen[frame][node][pred slot]: arrows seen; rel: released per node. */
    unsigned char (*seen)[BENCH_NODES][2] = calloc(frames, sizeof *seen);
    unsigned char (*rel)[BENCH_NODES] = calloc(frames, sizeof *rel);
    int ierr = index_build(t, f0, frames, &ix);
    EXPECT(seen && rel && ierr == 0);
    *orders = 0;
    for (size_t i = 0; seen && rel && ierr == 0 && i < t->n; i++) {
        const tc_event *s = &t->ev[i];
        if (s->ph != 's')
            continue;
        EXPECT(strcmp(s->cat, "dagrt.flow") == 0);
        const tc_event *fe = s->id > 0 && (size_t)s->id <= ix.nfin ? ix.fin[s->id] : NULL;
        EXPECT(fe != NULL);
        if (!fe)
            continue;
        EXPECT(fe->bp_e && strcmp(fe->name, s->name) == 0);
        EXPECT(fe->frame == s->frame && fe->node == s->node && fe->to_frame == s->to_frame &&
               fe->to_node == s->to_node);
        /* Both ends inside the slices they name, on their threads. */
        EXPECT(slice_at(&ix, s->frame, s->node, s->tid, s->ts));
        EXPECT(slice_at(&ix, s->to_frame, s->to_node, fe->tid, fe->ts));
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
            if (o >= 0)
                EXPECT(ix.end[fr][s->node] >= ix.end[fr][o]);
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
    index_free(&ix);
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
    /* 4 MiB: plenty for these frames, and quick to touch (under TSan too). */
    static const dagrt_trace_config small = {4u << 20, 0};
    EXPECT(dagrt_trace_start(rt, &small) == 0);
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
    /* DAGC_TEST_SCALE (the sanitizers' smoke: 0.1) scales the frames. */
    const char *sc = getenv("DAGC_TEST_SCALE");
    double k = sc ? atof(sc) : 1.0;
    unsigned frames = (unsigned)(20 * (k > 0 ? k : 1.0));
    if (frames < 4)
        frames = 4;
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
