/*
 * dagrt_tracy.c - libdagrt's observer hooks driving Tracy's C API
 * (dagrt_tracy.h; docs/runtime.md, "In Tracy").
 *
 * Zones are opened and closed on one thread, last in first out: a fiber
 * task's zone closes as the fiber suspends and reopens as it resumes (on
 * whichever thread), inside TracyCFiberEnter/Leave, as Tracy's fibers
 * want. So each thread keeps its open zones in a stack of its own and no
 * zone context ever crosses threads. Frame events come on the main
 * thread only (dagrt.h), which keeps the per-graph tables below
 * without locks.
 */
#include "dagrt_tracy.h"

#include <stdio.h>
#include <string.h>

#include "tracy/TracyC.h"

#ifdef TRACY_ENABLE

#ifndef TRACY_FIBERS
#error "dagrt_tracy.c needs Tracy's fibers: build the Tracy client and this file with TRACY_FIBERS"
#endif

/* ------------------------------------------------------------- zones */

/* Open zones of this thread; deeper nesting than this (waits that help
 * inside waits that help) is not shown, and stays balanced. */
#define ZONES 64
static _Thread_local TracyCZoneCtx zone_stack[ZONES];
static _Thread_local int zone_depth;

static const char *kind_of(const dagrt_node_event *e, uint32_t *color)
{
    if (e->piece) {
        *color = 0x4f9d69;
        return "parallel chunk";
    }
    if (e->flags & DAGRT_NODE_FIBER) {
        *color = 0x8e6bbf;
        return "fiber";
    }
    if (e->flags & DAGRT_NODE_MAIN) {
        *color = 0x3b7dd8;
        return "on main";
    }
    if (e->flags & DAGRT_NODE_HOT) {
        *color = 0xd8703b;
        return "hot";
    }
    *color = 0x7a8a99;
    return "task";
}

static void zone_open(const dagrt_node_event *e, bool resumed)
{
    if (zone_depth >= ZONES) {
        zone_depth++;
        return;
    }
#ifdef TRACY_ON_DEMAND
    /* No profiler connected: an inactive zone keeps the stack balanced
     * (closing it sends nothing), and costs no name or text. */
    if (!___tracy_connected()) {
        zone_stack[zone_depth++] = (TracyCZoneCtx){.active = 0};
        return;
    }
#endif
    uint32_t color;
    const char *kind = kind_of(e, &color);
    /* The zone's source location: the node's name, the graph as its file
     * and the node's index as its line, the kind as its function. Tracy
     * copies them. */
    uint64_t loc = ___tracy_alloc_srcloc_name(e->index, e->graph, strlen(e->graph), kind,
                                              strlen(kind), e->node, strlen(e->node), color);
    TracyCZoneCtx z = ___tracy_emit_zone_begin_alloc(loc, 1);
    char text[96];
    int n = e->piece ? snprintf(text, sizeof text, "frame %llu [%zu, %zu)",
                                (unsigned long long)e->frame, e->begin, e->end)
                     : snprintf(text, sizeof text, "frame %llu%s", (unsigned long long)e->frame,
                                resumed ? " resumed" : "");
    if (n > 0)
        ___tracy_emit_zone_text(z, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    zone_stack[zone_depth++] = z;
}

static void zone_close(void)
{
    if (zone_depth == 0)
        return;   /* opened before the observer was installed */
    if (--zone_depth < ZONES)
        ___tracy_emit_zone_end(zone_stack[zone_depth]);
}

/* A fiber track per fiber task, named after its node (the name's storage
 * is dagc's static table, as Tracy wants). */
static bool fiber_node(const dagrt_node_event *e)
{
    return (e->flags & DAGRT_NODE_FIBER) && !e->piece;
}

static void on_begin(void *user, const dagrt_node_event *e)
{
    (void)user;
    if (fiber_node(e))
        ___tracy_fiber_enter(e->node);
    zone_open(e, false);
}

static void on_end(void *user, const dagrt_node_event *e)
{
    (void)user;
    zone_close();
    if (fiber_node(e))
        ___tracy_fiber_leave();
}

static void on_suspend(void *user, const dagrt_node_event *e)
{
    (void)user;
    zone_close();
    if (fiber_node(e))
        ___tracy_fiber_leave();
}

static void on_resume(void *user, const dagrt_node_event *e)
{
    (void)user;
    if (fiber_node(e))
        ___tracy_fiber_enter(e->node);
    zone_open(e, true);
}

/* ------------------------------------------------------------ frames */

/* Per graph (by name): a frame set per state of its frames in flight,
 * and each state's last mode for the policy's messages. Main thread only. */
#define GRAPHS 32
#define STATES 16
typedef struct graph_slot {
    const char *name;
    const void *state[STATES];
    const char *mode[STATES];
    bool open[STATES];           /* a frame in flight begun (the observer may come mid-run) */
    char set[STATES][80];        /* "GRAPH #k": Tracy keeps the pointer */
    int nstates;
} graph_slot;
static graph_slot graphs[GRAPHS];
static int ngraphs;

static graph_slot *graph_of(const char *name)
{
    for (int i = 0; i < ngraphs; i++)
        if (graphs[i].name == name || strcmp(graphs[i].name, name) == 0)
            return &graphs[i];
    if (ngraphs == GRAPHS)
        return NULL;
    graphs[ngraphs].name = name;
    return &graphs[ngraphs++];
}

static int state_of(graph_slot *g, const void *state)
{
    for (int i = 0; i < g->nstates; i++)
        if (g->state[i] == state)
            return i;
    if (g->nstates == STATES)
        return -1;
    int k = g->nstates++;
    g->state[k] = state;
    snprintf(g->set[k], sizeof g->set[k], "%s #%d", g->name, k);
    return k;
}

static void on_frame_begin(void *user, const dagrt_frame_event *e)
{
    (void)user;
    graph_slot *g = graph_of(e->graph);
    int k = g ? state_of(g, e->state) : -1;
    if (k >= 0 && g->mode[k] != e->mode) {
        char msg[160];
        int n = g->mode[k] ? snprintf(msg, sizeof msg, "%s #%d: %s (was %s), frame %llu", g->name,
                                      k, e->mode, g->mode[k], (unsigned long long)e->frame)
                           : snprintf(msg, sizeof msg, "%s #%d: %s, frame %llu", g->name, k,
                                      e->mode, (unsigned long long)e->frame);
        if (n > 0)
            ___tracy_emit_logString(TracyMessageSeverityInfo, 0, 0,
                                    (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1, msg);
        g->mode[k] = e->mode;
    }
    if (!e->in_flight)
        ___tracy_emit_frame_mark(e->graph);   /* continuous: each run starts the next frame */
    else if (k >= 0) {
        ___tracy_emit_frame_mark_start(g->set[k]);
        g->open[k] = true;
    }
}

static void on_frame_end(void *user, const dagrt_frame_event *e)
{
    (void)user;
    if (!e->in_flight)
        return;
    graph_slot *g = graph_of(e->graph);
    int k = g ? state_of(g, e->state) : -1;
    if (k >= 0 && g->open[k]) {
        ___tracy_emit_frame_mark_end(g->set[k]);
        g->open[k] = false;
    }
}

/* ------------------------------------------------- threads and plots */

static void on_thread_start(void *user, int thread, const char *name)
{
    (void)user;
    (void)thread;
    ___tracy_set_thread_name(name);
}

static void on_load(void *user, int thread, int ready, int parked)
{
    (void)user;
    (void)thread;
    ___tracy_emit_plot("dagrt ready tasks", (double)ready);
    ___tracy_emit_plot("dagrt parked workers", (double)parked);
}

static const dagrt_observer tracy_observer = {
    .node_begin = on_begin,
    .node_end = on_end,
    .fiber_suspend = on_suspend,
    .fiber_resume = on_resume,
    .thread_start = on_thread_start,
    .frame_begin = on_frame_begin,
    .frame_end = on_frame_end,
    .load = on_load,
};

const dagrt_observer *dagrt_tracy_observer(void) { return &tracy_observer; }

int dagrt_tracy_install(dagrt *rt) { return dagrt_set_observer(rt, &tracy_observer, NULL); }

#else /* Tracy compiled out: nothing to drive. */

const dagrt_observer *dagrt_tracy_observer(void) { return NULL; }

int dagrt_tracy_install(dagrt *rt)
{
    (void)rt;
    return 0;
}

#endif
