/* e2e_drive.c - the modes in which the checker runs a graph's frames (see
 * e2e_check.h): G_run; G_instance_start, a pause, G_instance_wait; two instances started
 * together, then both waited for; pipelines of depth 1 to 4 (G_pipeline_submit,
 * G_pipeline_drain, now and then a drain mid-way so that the pipeline idles and
 * starts again). Each frame is checked once it is known to be complete:
 * after its wait, or in a pipeline of depth D after the G_pipeline_submit of frame
 * N + D returned (that one waited for frame N) or after G_pipeline_drain.
 *
 * The overlap check: in graphs named overlap* (long bodies, e2e_check.c),
 * run with 3 workers, pipelines of depth 2 and more must start some task of
 * frame N+1 while frame N still has tasks to finish, and at depth 1 never.
 * Built with E2E_SERIALISE, the checker drains before every G_pipeline_submit (a
 * runtime that serialised frames): the negative control, whose overlap
 * check must fail. Built with E2E_UNLINKED, "pipelines" are two instances
 * started in turn that nothing links: the negative control of the checks
 * across frames, which must fail (e2e_cross_failures). */
#define _POSIX_C_SOURCE 200809L
#include "e2e_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E2E_OVERLAP_FRAMES 1200

static int overlap_failures;

int e2e_overlap_failures(void) { return overlap_failures; }

static void caller_elsewhere(void)
{
    /* The caller outside the runtime for a moment: started runs go on. */
    for (volatile int k = 0; k < 2000; k++)
        ;
}

static void one_frame(e2e_state *s, dagrt *rt, uint32_t f, bool started)
{
    e2e_frame *fr = e2e_frame_begin(s, f, false);
    int rc;
    if (!started) {
        rc = s->g->run(rt, f);
    } else {
        rc = s->g->start(rt, 0, f);
        caller_elsewhere();
        if (rc == 0)
            rc = s->g->wait(rt, 0);
    }
    e2e_frame_end(s, fr, rc);
    atomic_store(&s->waited, f + 1);
}

/* Frames f and f + 1 on two instances at once, waited for in either order. */
static void two_instances(e2e_state *s, dagrt *rt, uint32_t f)
{
    e2e_frame *a = e2e_frame_begin(s, f, false), *b = e2e_frame_begin(s, f + 1, false);
    int ra = s->g->start(rt, 0, f);
    int rb = s->g->start(rt, 1, f + 1);
    caller_elsewhere();
    if (f % 4 == 0) {
        ra = ra ? ra : s->g->wait(rt, 0);
        rb = rb ? rb : s->g->wait(rt, 1);
    } else {
        rb = rb ? rb : s->g->wait(rt, 1);
        ra = ra ? ra : s->g->wait(rt, 0);
    }
    e2e_frame_end(s, a, ra);
    e2e_frame_end(s, b, rb);
    atomic_store(&s->waited, f + 2);
}

/* Checks the frames from *oldest up to `upto` (exclusive): they are
 * complete, their wait returned rc. */
static void complete(e2e_state *s, uint32_t *oldest, uint32_t upto, int rc)
{
    for (; *oldest < upto; ++*oldest) {
        e2e_frame_end(s, &s->fr[*oldest % E2E_RING], rc);
        atomic_store(&s->waited, *oldest + 1);
    }
}

static uint64_t draw(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

#ifdef E2E_UNLINKED
/* The cross-frame checks' negative control: a "pipeline" of two instances
 * that are not linked (G_instance_start, and G_instance_wait of the one used two frames
 * before), so that nothing orders a frame's nodes after the frame before. */
static bool unlinked_busy[2];
static int drain(e2e_state *s, dagrt *rt, int d);

static int submit(e2e_state *s, dagrt *rt, int d, uint32_t f)
{
    int k = (int)(f % 2), rc = d == 1 ? drain(s, rt, d) : 0;
    if (rc == 0 && unlinked_busy[k])
        rc = s->g->wait(rt, k);
    unlinked_busy[k] = false;
    if (rc == 0)
        rc = s->g->start(rt, k, f);
    unlinked_busy[k] = rc == 0;
    return rc;
}

static int drain(e2e_state *s, dagrt *rt, int d)
{
    (void)d;
    int rc = 0;
    for (int k = 0; k < 2; k++)
        if (unlinked_busy[k]) {
            int r = s->g->wait(rt, k);
            rc = rc ? rc : r;
            unlinked_busy[k] = false;
        }
    return rc;
}
#define E2E_PIPE_DEPTH(d) ((d) < 2 ? (d) : 2)
#else
static int submit(e2e_state *s, dagrt *rt, int d, uint32_t f) { return s->g->submit(rt, d, f); }
static int drain(e2e_state *s, dagrt *rt, int d) { return s->g->drain(rt, d); }
#define E2E_PIPE_DEPTH(d) (d)
#endif

/* n frames from f0 through the pipeline of depth d; returns how many
 * frame numbers it used. */
static uint32_t pipeline(e2e_state *s, dagrt *rt, int d, uint32_t f0, int n)
{
    d = E2E_PIPE_DEPTH(d);
    uint64_t r = (s->seed + f0) | 1;
    uint32_t f = f0, oldest = f0;
    for (int k = 0; k < n; k++, f++) {
        e2e_frame *fr = e2e_frame_begin(s, f, true);
#ifdef E2E_SERIALISE
        complete(s, &oldest, f, drain(s, rt, d));
#endif
        int rc = submit(s, rt, d, f);
        if (rc != 0) {
            e2e_violation(s, fr, "G_pipeline_submit (depth %d) returned %s", d, dagrt_strerror(rc));
            complete(s, &oldest, f, drain(s, rt, d));
            oldest = f + 1;   /* never started: nothing to check */
            atomic_store(&s->waited, oldest);
            return (uint32_t)k + 1;
        }
        /* This submit waited for frame f - d, if there was one. */
        if (f + 1 >= (uint32_t)d)
            complete(s, &oldest, f + 1 - (uint32_t)d, 0);
        if (draw(&r) % 16 == 0)
            complete(s, &oldest, f + 1, drain(s, rt, d));
    }
    complete(s, &oldest, f, drain(s, rt, d));
    return (uint32_t)n;
}

int e2e_run_graph(const e2e_graph *g, dagrt *rt, int workers, int frames, uint64_t seed)
{
    static const char *const pipe_mode[] = {"", "pipeline depth 1", "pipeline depth 2",
                                            "pipeline depth 3", "pipeline depth 4"};
    e2e_state *s = malloc(sizeof *s);
    if (!s || !e2e_state_init(s, g, seed)) {
        fprintf(stderr, "e2e %s: out of memory\n", g->name);
        if (s)
            e2e_state_free(s);
        free(s);
        return 1;
    }
    e2e_state_use(s);
    /* The overlap check counts events that need a thread to get a core in
     * time: on a loaded machine only some frames show one, so it always
     * gets enough frames (about 200 per depth), whatever the scale. */
    bool must_overlap = strncmp(g->name, "overlap", 7) == 0 && workers >= 3;
    if (must_overlap && frames < E2E_OVERLAP_FRAMES)
        frames = E2E_OVERLAP_FRAMES;
    for (int d = 1; d <= E2E_DEPTHS; d++) {
        int rc = g->pipe_init(d);
        if (rc != 0)
            e2e_violation(s, NULL, "G_pipeline_init(depth %d) returned %s", d, dagrt_strerror(rc));
    }
    /* Turns of every mode, long enough for a pipeline to fill and drain. */
    long overlap[E2E_DEPTHS + 1] = {0};
    int seg = frames / 24 < 8 ? 8 : frames / 24;
    uint32_t f = 0;
    for (int m = 0; (int)f < frames && atomic_load(&s->violations) < 20; m = (m + 1) % (2 + E2E_DEPTHS)) {
        int n = frames - (int)f < seg ? frames - (int)f : seg;
        if (m == 0) {
            s->mode = "run, start/wait";
            for (int k = 0; k < n; k++, f++)
                one_frame(s, rt, f, f % 2 == 1);
        } else if (m == 1) {
            s->mode = "two instances";
            for (int k = 0; k < n; k += 2, f += 2)
                two_instances(s, rt, f);
        } else {
            int d = m - 1;
            s->mode = pipe_mode[d];
            long before = atomic_load(&s->overlap);
            f += pipeline(s, rt, d, f, n);
            overlap[d] += atomic_load(&s->overlap) - before;
        }
    }
    s->mode = "overlap";
    if (overlap[1] != 0)
        e2e_violation(s, NULL, "at depth 1, %ld task starts of a frame while the frame before "
                      "was running", overlap[1]);
    /* DAGC_E2E_VERBOSE: how much frames overlapped, for every graph. */
    if (must_overlap || getenv("DAGC_E2E_VERBOSE"))
        fprintf(stderr, "e2e %s, %d workers: task starts while the frame before was running: "
                "depth 2 %ld, 3 %ld, 4 %ld; looks into a frame before waited for meanwhile %ld\n",
                g->name, workers, overlap[2], overlap[3], overlap[4], atomic_load(&s->stale_looks));
    if (must_overlap) {
        for (int d = 2; d <= E2E_DEPTHS; d++)
            if (overlap[d] == 0) {
                overlap_failures++;
                e2e_violation(s, NULL, "pipeline of depth %d: frames never overlapped", d);
            }
    }
    e2e_state_use(NULL);
    int v = atomic_load(&s->violations);
    e2e_state_free(s);
    free(s);
    return v;
}

int e2e_scaled(int n)
{
    const char *e = getenv("DAGC_TEST_SCALE");
    double k = e ? atof(e) : 1.0;
    if (k <= 0)
        k = 1.0;
    int v = (int)(n * k);
    return v < 1 ? 1 : v;
}

int e2e_run_all(const e2e_graph *const *graphs, size_t n, int frames)
{
    /* One worker twice: plan mode runs hot nodes on the thread that claims
     * them without a hot worker, as runtime tasks on the hot lane with one
     * (runtime/exec_plan_off.c, "nodes that run elsewhere"). */
    static const int workers[] = {0, 1, 1, 3};
    static const int hot[] = {0, 0, 1, 1};
    int bad = 0;
    for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers[w];
        cfg.no_workers = workers[w] == 0;
        cfg.hot_workers = hot[w];
        int err = 0;
        dagrt *rt = dagrt_create_ex(&cfg, &err);
        if (!rt) {
            fprintf(stderr, "e2e: dagrt_create_ex(%d workers): %s\n", workers[w], dagrt_strerror(err));
            return bad + 1;
        }
        for (size_t i = 0; i < n; i++) {
            int v = e2e_run_graph(graphs[i], rt, workers[w], frames,
                                  0x5eed0000u + (uint64_t)w * 131 + i);
            if (v)
                fprintf(stderr, "e2e: graph %s, %d workers (%d hot): %d violations\n",
                        graphs[i]->name, workers[w], hot[w], v);
            bad += v;
        }
        dagrt_destroy(rt);
    }
    return bad;
}
