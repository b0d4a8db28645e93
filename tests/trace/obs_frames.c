/*
 * obs_frames.c - the observer's frame events and load samples (dagrt.h:
 * frame_begin, frame_end, load) on the benchmark's 32-node frame: one
 * begin and one end per run, on the main thread, in order, numbered like
 * the node events, one at a time for dagrt_graph_run and in flight for a
 * pipeline's started frames, each with a mode the run policy names; load
 * samples within bounds. Listed in trace_list.h (group observe).
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <stdatomic.h>
#include <string.h>

#include "bench_frame.h"

int obs_frame_events(void);

typedef struct frames_seen {
    dagrt *rt;
    unsigned begins, ends, in_flight, open, max_open, bad;
    uint64_t last_begin;
    _Atomic unsigned nodes, loads, load_bad;
    int workers;
} frames_seen;

static bool known_mode(const char *m)
{
    static const char *const modes[] = {"serial", "plan", "pipelined plan", "dynamic",
                                        "caller alone"};
    for (size_t i = 0; m && i < sizeof modes / sizeof *modes; i++)
        if (strcmp(m, modes[i]) == 0)
            return true;
    return false;
}

static void on_frame_begin(void *u, const dagrt_frame_event *e)
{
    frames_seen *s = u;
    s->bad += !dagrt_on_main_thread(s->rt) || strcmp(e->graph, "bench_frame") != 0 ||
              !known_mode(e->mode) || (s->begins > 0 && e->frame != s->last_begin + 1);
    s->last_begin = e->frame;
    s->begins++;
    s->in_flight += e->in_flight;
    if (++s->open > s->max_open)
        s->max_open = s->open;
}

static void on_frame_end(void *u, const dagrt_frame_event *e)
{
    frames_seen *s = u;
    s->bad += !dagrt_on_main_thread(s->rt) || !known_mode(e->mode) || s->open == 0;
    s->ends++;
    s->open--;
}

static void on_node(void *u, const dagrt_node_event *e)
{
    frames_seen *s = u;
    /* bench_frame's nodes are plain tasks: no flag. */
    if (e->flags == 0)
        atomic_fetch_add_explicit(&s->nodes, 1, memory_order_relaxed);   /* relaxed: a count */
}

static void on_load(void *u, int thread, int ready, int parked)
{
    frames_seen *s = u;
    (void)thread;
    /* relaxed (both): counts read after the runtime is destroyed. */
    atomic_fetch_add_explicit(&s->loads, 1, memory_order_relaxed);
    if (ready < 0 || parked < 0 || parked > s->workers + 1)
        atomic_fetch_add_explicit(&s->load_bad, 1, memory_order_relaxed);
}

int obs_frame_events(void)
{
    int bad = 0;
    static frames_seen s;
    memset(&s, 0, sizeof s);
    s.workers = 3;
    static const dagrt_observer obs = {.node_begin = on_node, .frame_begin = on_frame_begin,
                                       .frame_end = on_frame_end, .load = on_load};
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = s.workers;
    cfg.observer = &obs;
    cfg.observer_user = &s;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    s.rt = rt;
    static struct bench_ctx c;
    memset(&c, 0, sizeof c);
    c.iters = bench_calibrate(1000.0);
    enum { SYNC = 30, PIPED = 30 };
    for (unsigned f = 0; f < SYNC; f++) {
        bench_frame_advance(&c);
        EXPECT(bench_frame_run(rt, &c) == 0);
    }
    EXPECT(s.begins == SYNC && s.ends == SYNC && s.in_flight == 0 && s.max_open == 1);
    static bench_frame_pipeline_t p;
    EXPECT(bench_frame_pipeline_init(&p, 2) == 0);
    for (unsigned f = 0; f < PIPED; f++) {
        bench_frame_advance(&c);
        EXPECT(bench_frame_pipeline_submit(rt, &p, &c) == 0);
    }
    EXPECT(bench_frame_pipeline_drain(rt, &p) == 0);
    /* Every frame begun and ended; started ones in flight (a pipeline's
     * serial frames, if its policy chose any, one at a time), never more
     * open than the depth. */
    EXPECT(s.begins == SYNC + PIPED && s.ends == SYNC + PIPED && s.open == 0);
    EXPECT(s.max_open <= 2 && s.bad == 0);
    EXPECT(s.in_flight <= PIPED);
    dagrt_destroy(rt);
    EXPECT(atomic_load(&s.nodes) == 32u * (SYNC + PIPED));
    EXPECT(atomic_load(&s.load_bad) == 0);
    return bad;
}
