/* live_scenario.c - plan mode with costs that change under it (runtime/exec/live.c)
 * and a helper that loses its CPU (runtime/exec/plan.c, "a shared CPU"),
 * on one worker (two lists). The entries live_costs and plan_takeover of
 * exec_list.h; live_frames is also alloc_frame.c's (no allocation per
 * frame while it re-plans).
 *
 * The graph: a root, LIVE_MIDS middle tasks that need only the root, and a
 * sink that needs them all (`on main` in plan_takeover). Every body checks,
 * as it runs, that its inputs ran before it in its frame and that the same
 * task of the frame before ran before it (a pipeline's rule); each frame is
 * checked whole once it is over (every task once).
 *
 * live_costs: live costs on (every plan frame timed); task A runs 300 us and
 * the others 10 us, then at frame LIVE_CHANGE A drops to 10 us and B rises
 * to 800 us. Asserted by behaviour (dagrt_graph_stats.replans): a re-plan
 * within LIVE_WITHIN frames after the change, whichever lists A and B are
 * on (B's rise makes its list the heaviest by far), and none looping once
 * the costs are steady (at most 2 in the last LIVE_QUIET frames). The same
 * with G_run, then with a depth-2 pipeline (its re-plans, each state's,
 * summed). Before the change A runs LIVE_SPIKE_US for LIVE_SPIKE frames,
 * as a preempted run measures: a plan made from that cost kept its excess
 * as the basis for the next re-plan, which the change then fell short of
 * (seen under load in the README's test run; with the spike, every run
 * failed so until the basis followed the costs down: runtime/exec/live.c).
 *
 * plan_takeover: the middle tasks cost 50 us each (the tables' costs); now
 * and then the first middle task the worker runs in a frame sleeps 30 ms,
 * as if its thread lost its CPU mid-body. Every other middle task of that
 * frame must then run on the caller (thread 0), by the time the stalled one
 * ends: none is left stranded behind it (claimed with it), and the ready
 * ones on its list are taken over although its thread is there (it is
 * overdue). Not by timing: which thread ran what.
 *
 * plan_held: the middle tasks cost 50 us each (the tables' costs); now and
 * then the last middle task to start in a frame, when the worker runs it,
 * sleeps PLAN_HELD_MS (its thread "loses its CPU" holding the frame's last
 * open task: the caller can take nothing, and waits). The run policy must
 * take the next frame back to the caller (a serial stretch: its "held"
 * sign, exec/policy.c), though the caller stole nothing and the frame was
 * not necessarily timed. Not by timing: the modes the observer reports.
 *
 * plan_stopped (Linux): the worker's thread stopped outside any body, in
 * the scheduler between nodes, for PLAN_STOP_MS: the root's body (on the
 * caller) sends the worker a real-time signal whose handler sleeps, and
 * waits until it has begun, so the worker is stopped while it waits for
 * its first node of the frame (nothing claimed) or on its way to it. The
 * caller must then run every middle task (the worker's ready list taken
 * over although its thread is there), and the frame's work must be done
 * (the sink's end) in about its own time, under a quarter of the stop, in
 * plan frames (the observer says which), and dagrt_graph_run must return
 * by then too, though the stopped helper joined the run and has not left
 * it (exec/plan_run.c, "the held return"); so must every run on the state
 * while the worker is still stopped. "Held" is over that bound and ended
 * after the stop's end, less the time the caller waited for a CPU (its run
 * delay, /proc/thread-self/schedstat): a caller that lost its CPU meanwhile
 * is not held (seen at a load average of 15, where a frame of no stop took
 * 481 ms, and a run 150 ms into the stop was preempted past its end). The last
 * PLAN_FINIS stopped frames'
 * states are released at once (dagrt_graph_state_fini, which must wait
 * for the stopped helper: at least one of them did) and freed (under ASan
 * a helper's access after it is a use after free). The handler checks
 * that it interrupted no body. */
#if defined(__linux__)
#define _GNU_SOURCE   /* syscall: gettid, tgkill */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "dagrt.h"
#include "live_scenario.h"

#if defined(__linux__)
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define LIVE_MIDS 8
#define LIVE_NODES (LIVE_MIDS + 2)
#define LIVE_SINK (LIVE_NODES - 1)
#define LIVE_A 1
#define LIVE_B 2
#define LIVE_CHANGE 60
#define LIVE_AFTER 140
#define LIVE_WITHIN 30
#define LIVE_QUIET 40
/* live_costs' disturbance before the change (live_spike): A runs
 * LIVE_SPIKE_US for LIVE_SPIKE frames from LIVE_SPIKE_AT frames before it,
 * as a preempted node would measure, then 300 us again. */
#define LIVE_SPIKE_US 1500
#define LIVE_SPIKE 3
#define LIVE_SPIKE_AT 12

/* One frame's record. `at` is each task's place in its frame (0: not
 * run); release/acquire between a task and the tasks after it. */
struct live_ctx {
    dagrt *rt;
    int frame;
    _Atomic uint32_t seq;
    _Atomic uint32_t at[LIVE_NODES];
    _Atomic int runs[LIVE_NODES];
    _Atomic int thread[LIVE_NODES];
    _Atomic uint64_t end_ns[LIVE_NODES];   /* when each task ended (plan_takeover's figure) */
    _Atomic int started;                    /* middle tasks begun (plan_held) */
    _Atomic int bad;
};

/* What the bodies do: the phase (0 before the change, 1 after, 2 A's
 * spike before it; live_costs)
 * or the take-over's stall (plan_takeover). relaxed: set by the main thread
 * between frames; a body of a frame in flight may see either. */
static _Atomic int live_phase;
static _Atomic int takeover_mode, stall_armed, stalled_node = -1;
/* plan_held: armed for a frame; set when that frame's stall happened. */
#define PLAN_HELD_MS 5
static _Atomic int held_armed, held_done;
static _Atomic uint64_t stall_ns;   /* when the stalled task stopped */
/* The frame in which each task last ran (the same-node rule). */
static _Atomic int last_frame[LIVE_NODES];

static unsigned live_cost_us(int i)
{
    if (atomic_load_explicit(&takeover_mode, memory_order_relaxed))
        return i == 0 || i == LIVE_SINK ? 5 : 50;
    int ph = atomic_load_explicit(&live_phase, memory_order_relaxed);
    if (i == LIVE_A)
        return ph == 1 ? 10 : ph == 2 ? LIVE_SPIKE_US : 300;
    if (i == LIVE_B)
        return ph ? 800 : 10;
    return i == 0 || i == LIVE_SINK ? 5 : 10;
}

#if defined(__linux__)
/* plan_stopped's stop (see the top): the body flag the handler reads, the
 * worker's thread id, and the stop's progress. */
#define PLAN_STOP_MS 200
static _Thread_local volatile sig_atomic_t in_body;
static _Atomic int worker_tid, stop_mode, stop_armed, stop_sent, stop_began, stop_over, stop_in_body;
/* Stopped plan frames, the last PLAN_FINIS of them released at once. */
#define PLAN_STOPS 5
#define PLAN_FINIS 2
/* More stopped frames, released at once, until one release found the
 * worker inside the frame: a worker asleep when the signal came (a nap on
 * a crowded CPU, exec/crowd.c, or parked) had not joined it, and its
 * release rightly waited for nothing (seen in an ASan run: signals
 * handled 1-4 ms after they were sent, 0 of 2 releases waited). */
#define PLAN_STOPS_MOST 12
static _Atomic uint64_t stop_sent_ns, stop_began_ns, stop_over_ns;

static void stop_handler(int sig)
{
    (void)sig;
    /* Lock-free atomics and nanosleep: async-signal-safe. */
    atomic_store(&stop_in_body, (int)in_body);
    atomic_store(&stop_began_ns, (uint64_t)(bench_now_s() * 1e9));   /* clock_gettime: signal-safe */
    atomic_store(&stop_began, 1);
    struct timespec ts = {0, PLAN_STOP_MS * 1000L * 1000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
    atomic_store(&stop_over_ns, (uint64_t)(bench_now_s() * 1e9));
    atomic_store(&stop_over, 1);
}

/* The root's body on the caller, in an armed frame: 300 us in, stop the
 * worker and wait (up to 2 s) until its handler runs. */
static void stop_worker(void)
{
    bench_spin_us(300);
    int tid = atomic_load(&worker_tid);
    atomic_store(&stop_sent_ns, (uint64_t)(bench_now_s() * 1e9));
    if (syscall(SYS_tgkill, (int)getpid(), tid, SIGRTMIN + 3) != 0)
        return;
    atomic_store(&stop_sent, 1);
    double t0 = bench_now_s();
    while (!atomic_load(&stop_began) && bench_now_s() - t0 < 2.0)
        ;
}
#endif

static void live_body(struct live_ctx *c, int i)
{
#if defined(__linux__)
    in_body = 1;
    /* relaxed: a pre-check; the one worker stores its own id once. */
    int known = atomic_load_explicit(&worker_tid, memory_order_relaxed);
    if (dagrt_thread_index(c->rt) != 0 && known == 0)
        atomic_store(&worker_tid, (int)syscall(SYS_gettid));
    if (i == 0 && dagrt_thread_index(c->rt) == 0 && atomic_load(&stop_mode) &&
        atomic_load(&worker_tid) != 0 && atomic_exchange(&stop_armed, 0))
        stop_worker();
#endif
    /* Inputs done first (acquire: pairs with their release below). */
    if (i > 0 && i < LIVE_SINK && atomic_load_explicit(&c->at[0], memory_order_acquire) == 0)
        atomic_fetch_add(&c->bad, 1);
    if (i == LIVE_SINK)
        for (int m = 1; m < LIVE_SINK; m++)
            if (atomic_load_explicit(&c->at[m], memory_order_acquire) == 0)
                atomic_fetch_add(&c->bad, 1);
    /* The same task of the frame before (relaxed: the runtime orders the
     * two frames' runs of a task; this only reads what it wrote). */
    if (atomic_load_explicit(&last_frame[i], memory_order_relaxed) != c->frame - 1)
        atomic_fetch_add(&c->bad, 1);
    atomic_store_explicit(&last_frame[i], c->frame, memory_order_relaxed);
    int th = dagrt_thread_index(c->rt);
    atomic_store_explicit(&c->thread[i], th, memory_order_relaxed);
    bool last_mid = i > 0 && i < LIVE_SINK && atomic_fetch_add(&c->started, 1) + 1 == LIVE_MIDS;
    if (last_mid && th != 0 && atomic_exchange(&held_armed, 0)) {
        struct timespec ts = {0, PLAN_HELD_MS * 1000L * 1000L};
        nanosleep(&ts, NULL);
        atomic_store(&held_done, 1);
    } else if (i > 0 && i < LIVE_SINK && th != 0 && atomic_load(&takeover_mode) &&
               atomic_exchange(&stall_armed, 0)) {
        atomic_store(&stalled_node, i);
        atomic_store(&stall_ns, (uint64_t)(bench_now_s() * 1e9));
        struct timespec ts = {0, 30 * 1000 * 1000};   /* its thread "loses its CPU" */
        nanosleep(&ts, NULL);
    } else {
        bench_spin_us(live_cost_us(i));
    }
    atomic_fetch_add_explicit(&c->runs[i], 1, memory_order_relaxed);
    atomic_store_explicit(&c->end_ns[i], (uint64_t)(bench_now_s() * 1e9), memory_order_relaxed);
    /* release: the tasks after it read it with acquire. */
    atomic_store_explicit(&c->at[i], atomic_fetch_add(&c->seq, 1) + 1, memory_order_release);
#if defined(__linux__)
    in_body = 0;
#endif
}

#define TRAMP(i) static void live_t##i(void *c) { live_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7) TRAMP(8) TRAMP(9)
static const dagrt_node_fn live_fns[LIVE_NODES] = {live_t0, live_t1, live_t2, live_t3, live_t4,
                                                   live_t5, live_t6, live_t7, live_t8, live_t9};
static const char *const live_names[LIVE_NODES] = {"root", "a", "b", "m3", "m4",
                                                   "m5", "m6", "m7", "m8", "sink"};
static dagrt_node live_nodes[LIVE_NODES];
static uint32_t live_succ[2 * LIVE_MIDS];
static uint32_t live_costs_ns[LIVE_NODES];
static dagrt_graph live_graph;

/* The table; sink_main: the sink is `on main`; costs: the tables carry
 * each task's cost (plan_takeover's), else none. */
static const dagrt_graph *live_table(bool sink_main, bool costs)
{
    memset(live_nodes, 0, sizeof live_nodes);
    uint32_t ns = 0;
    for (int u = 0; u < LIVE_NODES; u++) {
        dagrt_node *n = &live_nodes[u];
        n->name = live_names[u];
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = live_fns[u];
        n->succ_first = ns;
        if (u == 0)
            for (int m = 1; m < LIVE_SINK; m++)
                live_succ[ns++] = (uint32_t)m;
        else if (u < LIVE_SINK)
            live_succ[ns++] = LIVE_SINK;
        n->nsucc = ns - n->succ_first;
        n->npred = u == 0 ? 0 : u < LIVE_SINK ? 1 : LIVE_MIDS;
        live_costs_ns[u] = (u == 0 || u == LIVE_SINK ? 5 : 50) * 1000u;
    }
    if (sink_main)
        live_nodes[LIVE_SINK].flags = DAGRT_NODE_MAIN;
    memset(&live_graph, 0, sizeof live_graph);
    live_graph.version = DAGRT_GRAPH_VERSION;
    live_graph.nnodes = LIVE_NODES;
    live_graph.nsucc = ns;
    live_graph.name = sink_main ? "live_takeover" : "live_costs";
    live_graph.nodes = live_nodes;
    live_graph.succ = live_succ;
    live_graph.cost = costs ? live_costs_ns : NULL;
    return &live_graph;
}

static void ctx_start(struct live_ctx *c, dagrt *rt, int frame)
{
    c->rt = rt;
    c->frame = frame;
    atomic_store(&c->seq, 0);
    atomic_store(&c->bad, 0);
    atomic_store(&c->started, 0);
    for (int i = 0; i < LIVE_NODES; i++) {
        atomic_store(&c->at[i], 0);
        atomic_store(&c->runs[i], 0);
        atomic_store(&c->thread[i], -1);
    }
}

/* A frame over: every task once, in order. Returns the violations. */
static int ctx_check(const char *who, const struct live_ctx *c)
{
    int bad = atomic_load(&c->bad);
    for (int i = 0; i < LIVE_NODES; i++)
        bad += atomic_load(&c->runs[i]) != 1;
    if (bad)
        fprintf(stderr, "%s: frame %d: %d violations (a task not run exactly once, or out of "
                "order)\n", who, c->frame, bad);
    return bad;
}

/* The pipeline's contexts: a frame number in, checked when dropped. */
static _Atomic int pipe_bad;
static void pipe_store(void *ctx, const void *src)
{
    const struct live_ctx *s = src;
    ctx_start(ctx, s->rt, s->frame);
}
static void pipe_drop(void *ctx) { atomic_fetch_add(&pipe_bad, ctx_check("live_frames", ctx)); }

static void live_reset(void)
{
    for (int i = 0; i < LIVE_NODES; i++)
        atomic_store(&last_frame[i], -1);
    atomic_store(&live_phase, 0);
    atomic_store(&pipe_bad, 0);
}

/* The re-plans of both states now (a state whose frame is in flight
 * keeps its last count); whether any rose above was[]. */
static bool replans_now(dagrt_graph_state *st, uint64_t *now, const uint64_t *was)
{
    bool rose = false;
    for (int k = 0; k < 2; k++) {
        dagrt_graph_stats s;
        if (dagrt_graph_get_stats(&st[k], &s) == 0)
            now[k] = s.replans;
        rose |= was && now[k] > was[k];
    }
    return rose;
}

/* live_costs: A's spike before the change (LIVE_SPIKE_AT). */
static bool live_spike;

int live_frames(dagrt *rt, bool pipe, int before, int after, live_result *out)
{
    static dagrt_graph_state st[2];
    static dagrt_node_state ns[2][LIVE_NODES];
    static struct live_ctx ctxs[2];
    int bad = 0;
    live_reset();
    /* The states first: a re-init waits for a helper of the last G_run on
     * them that may still read the tables rewritten below (docs/runtime.md,
     * "The return is never held"). */
    for (int k = 0; k < 2; k++)
        if (dagrt_graph_state_init(&st[k], ns[k], LIVE_NODES) != 0)
            return 1;
    const dagrt_graph *g = live_table(false, false);
    dagrt_pipeline p;
    memset(&p, 0, sizeof p);
    dagrt_graph_state *const sts[2] = {&st[0], &st[1]};
    void *const cs[2] = {&ctxs[0], &ctxs[1]};
    if (pipe && dagrt_pipeline_init(&p, 2, sts, cs, pipe_drop) != 0)
        return 1;
    uint64_t at_change[2] = {0, 0}, now[2] = {0, 0}, quiet[2] = {0, 0};
    memset(out, 0, sizeof *out);
    out->first = -1;
    const int quiet_from = before + after - LIVE_QUIET;
    for (int f = 0; f < before + after; f++) {
        /* (relaxed: as live_phase.) */
        if (live_spike && f == before - LIVE_SPIKE_AT)
            atomic_store_explicit(&live_phase, 2, memory_order_relaxed);
        if (live_spike && f == before - LIVE_SPIKE_AT + LIVE_SPIKE)
            atomic_store_explicit(&live_phase, 0, memory_order_relaxed);
        if (f == before || f == quiet_from) {
            /* Every state idle, so that its count is current. */
            if (pipe && dagrt_pipeline_drain(rt, &p) != 0)
                return bad + 1;
            replans_now(st, f == before ? at_change : quiet, NULL);
            if (f == before)
                atomic_store_explicit(&live_phase, 1, memory_order_relaxed);
        }
        int rc;
        if (pipe) {
            struct live_ctx src;
            src.rt = rt;
            src.frame = f;
            rc = dagrt_pipeline_submit(rt, g, &p, pipe_store, &src);
        } else {
            ctx_start(&ctxs[0], rt, f);
            rc = dagrt_graph_run(rt, g, &st[0], &ctxs[0]);
            bad += ctx_check("live_frames", &ctxs[0]);
        }
        if (rc != 0) {
            fprintf(stderr, "live_frames: frame %d: %s\n", f, dagrt_strerror(rc));
            return bad + 1;
        }
        if (f >= before && out->first < 0 && replans_now(st, now, at_change))
            out->first = f - before;
    }
    if (pipe && dagrt_pipeline_drain(rt, &p) != 0)
        return bad + 1;
    replans_now(st, now, NULL);
    out->before = at_change[0] + at_change[1];
    out->all = now[0] + now[1];
    out->quiet = out->all - quiet[0] - quiet[1];
    return bad + atomic_load(&pipe_bad);
}

static dagrt *live_rt(uint32_t live)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;
    cfg.live_costs = live;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        fprintf(stderr, "live: dagrt_create failed\n");
    return rt;
}

/* One run of live_frames, judged. */
static int live_judged(dagrt *rt, bool pipe)
{
    const char *what = pipe ? "depth-2 pipeline" : "G_run";
    live_result r;
    live_spike = true;
    int bad = live_frames(rt, pipe, LIVE_CHANGE, LIVE_AFTER, &r);
    live_spike = false;
    printf("live_costs (%s): %llu re-plans before the change; the first after it %d frames "
           "after; %llu in all, %llu in the last %d frames\n", what, (unsigned long long)r.before,
           r.first, (unsigned long long)r.all, (unsigned long long)r.quiet, LIVE_QUIET);
    if (r.first < 0 || r.first > LIVE_WITHIN) {
        fprintf(stderr, "live_costs (%s): no re-plan within %d frames of the cost change\n", what,
                LIVE_WITHIN);
        bad++;
    }
    /* A pipeline's states each count their own re-plan. */
    if (r.quiet > (pipe ? 4u : 2u)) {
        fprintf(stderr, "live_costs (%s): %llu re-plans in the last %d frames, costs steady\n",
                what, (unsigned long long)r.quiet, LIVE_QUIET);
        bad++;
    }
    return bad;
}

int live_costs_scenario(void)
{
    atomic_store(&takeover_mode, 0);
    int bad = 0;
    /* Past the bound: refused, with its error. */
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;
    cfg.live_costs = 1000001;
    int err = 0;
    dagrt *no = dagrt_create_ex(&cfg, &err);
    if (no || err != DAGRT_EINVAL) {
        fprintf(stderr, "live_costs: live_costs 1000001 not refused with DAGRT_EINVAL (%d)\n", err);
        if (no)
            dagrt_destroy(no);
        bad++;
    }
    dagrt *rt = live_rt(1);
    if (!rt)
        return bad + 1;
    bad += live_judged(rt, false) + live_judged(rt, true);
    /* Off: never a re-plan. */
    dagrt *off = live_rt(0);
    if (!off) {
        dagrt_destroy(rt);
        return bad + 1;
    }
    live_result r;
    bad += live_frames(off, false, LIVE_CHANGE, LIVE_AFTER, &r);
    if (r.all != 0) {
        fprintf(stderr, "live_costs: %llu re-plans with live costs off\n", (unsigned long long)r.all);
        bad++;
    }
    dagrt_destroy(off);
    dagrt_destroy(rt);
    return bad;
}

int plan_takeover_scenario(void)
{
    dagrt *rt = live_rt(0);
    if (!rt)
        return 1;
    const dagrt_graph *g = live_table(true, true);
    static dagrt_graph_state st;
    static dagrt_node_state ns[LIVE_NODES];
    static struct live_ctx c;
    if (dagrt_graph_state_init(&st, ns, LIVE_NODES) != 0)
        return 1;
    live_reset();
    atomic_store(&takeover_mode, 1);
    int bad = 0, stalls = 0, frames = 0;
    double t0 = bench_now_s();
    for (int f = 0; stalls < 4 && bench_now_s() - t0 < 20.0; f++, frames++) {
        atomic_store(&stalled_node, -1);
        if (f % 8 == 7 && !atomic_load(&stall_armed))
            atomic_store(&stall_armed, 1);
        ctx_start(&c, rt, f);
        int rc = dagrt_graph_run(rt, g, &st, &c);
        if (rc != 0) {
            fprintf(stderr, "plan_takeover: frame %d: %s\n", f, dagrt_strerror(rc));
            bad++;
            break;
        }
        bad += ctx_check("plan_takeover", &c);
        int s = atomic_load(&stalled_node);
        if (s < 0)
            continue;
        stalls++;
        int on_caller = 0;
        uint64_t last = 0;
        for (int m = 1; m < LIVE_SINK; m++) {
            if (m == s)
                continue;
            if (atomic_load(&c.thread[m]) == 0)
                on_caller++;
            uint64_t e = atomic_load(&c.end_ns[m]);
            last = e > last ? e : last;
        }
        /* A figure, not a check: how long after the worker stopped the
         * other middle tasks were all done (7 of 50 us, on the caller). */
        uint64_t t0s = atomic_load(&stall_ns);
        printf("plan_takeover: frame %d: the other middle tasks done %.0f us after the worker "
               "stopped (their work: %d us)\n", f, last > t0s ? (double)(last - t0s) / 1e3 : 0.0,
               (LIVE_MIDS - 1) * 50);
        if (on_caller != LIVE_MIDS - 1) {
            fprintf(stderr, "plan_takeover: frame %d: task %d's thread stopped, but only %d of "
                    "the %d other middle tasks ran on the caller\n", f, s, on_caller, LIVE_MIDS - 1);
            bad++;
        }
    }
    atomic_store(&takeover_mode, 0);
    atomic_store(&stall_armed, 0);
    printf("plan_takeover: %d frames, %d with the worker stopped\n", frames, stalls);
    if (stalls < 2) {
        fprintf(stderr, "plan_takeover: the worker ran a middle task in only %d armed frames\n",
                stalls);
        bad++;
    }
    dagrt_destroy(rt);
    return bad;
}

/* The observer's frame_begin: the mode of the frame being run (plan_held,
 * plan_stopped: plan frames only). Main thread. */
static const char *stop_frame_mode;
static void stop_frame_begin(void *user, const dagrt_frame_event *e)
{
    (void)user;
    stop_frame_mode = e->mode;
}

static bool mode_is(const char *m) { return stop_frame_mode && strcmp(stop_frame_mode, m) == 0; }

int plan_held_scenario(void)
{
    dagrt *rt = live_rt(0);
    if (!rt)
        return 1;
    static const dagrt_observer obs = {.frame_begin = stop_frame_begin};
    dagrt_set_observer(rt, &obs, NULL);
    const dagrt_graph *g = live_table(true, true);
    static dagrt_graph_state st;
    static dagrt_node_state ns[LIVE_NODES];
    static struct live_ctx c;
    if (dagrt_graph_state_init(&st, ns, LIVE_NODES) != 0)
        return 1;
    live_reset();
    atomic_store(&takeover_mode, 1);   /* the middle tasks' 50 us, no stall of theirs */
    stop_frame_mode = NULL;
    int bad = 0, held = 0, back = 0, frames = 0, plans = 0;
    bool pending = false;   /* the frame before was a plan frame with the stall */
    double t0 = bench_now_s();
    for (int f = 0; held < 4 && bench_now_s() - t0 < 60.0; f++, frames++) {
        /* Armed in a plan frame after 3 plan frames in a row: the policy
         * judges a frame only where a helper was running at its offer. */
        bool plan_before = mode_is("plan");
        plans = plan_before ? plans + 1 : 0;
        atomic_store(&held_armed, plans >= 3 && !pending);
        atomic_store(&held_done, 0);
        ctx_start(&c, rt, f);
        int rc = dagrt_graph_run(rt, g, &st, &c);
        atomic_store(&held_armed, 0);
        if (rc != 0) {
            fprintf(stderr, "plan_held: frame %d: %s\n", f, dagrt_strerror(rc));
            bad++;
            break;
        }
        bad += ctx_check("plan_held", &c);
        if (pending) {
            /* The frame after the stall: its mode was reported at its begin. */
            pending = false;
            held++;
            back += !mode_is("plan");
            printf("plan_held: the frame after frame %d's stall ran %s\n", f - 1,
                   stop_frame_mode ? stop_frame_mode : "?");
            plans = 0;
        }
        pending = atomic_load(&held_done) && mode_is("plan");
    }
    atomic_store(&takeover_mode, 0);
    printf("plan_held: %d frames, %d plan frames held %d ms, %d of them followed by a frame "
           "taken back\n", frames, held, PLAN_HELD_MS, back);
    /* One frame may go unjudged on a loaded machine (its helper was not
     * running when it was offered: "slow to wake is not starved"). */
    if (held < 3 || back < held - 1) {
        fprintf(stderr, "plan_held: %d of %d held plan frames followed by a frame taken back "
                "(want all but one, of 3 or more)\n", back, held);
        bad++;
    }
    dagrt_destroy(rt);
    return bad;
}

#if defined(__linux__)

/* plan_stopped's states: on the heap, so that a helper access after
 * dagrt_graph_state_fini (then free) is a use after free (ASan). */
static int stopped_state(dagrt_graph_state **st, dagrt_node_state **ns)
{
    *st = aligned_alloc(_Alignof(dagrt_graph_state), sizeof **st);
    *ns = aligned_alloc(_Alignof(dagrt_node_state), LIVE_NODES * sizeof **ns);
    if (!*st || !*ns || dagrt_graph_state_init(*st, *ns, LIVE_NODES) != 0) {
        free(*st);
        free(*ns);
        return 1;
    }
    return 0;
}

static double ms_since(uint64_t t0_ns) { return (bench_now_s() * 1e9 - (double)t0_ns) / 1e6; }

/* The calling thread's run delay so far, ns: the time it was ready to run
 * but waited for a CPU (the second field of /proc/thread-self/schedstat),
 * or 0 where the system does not say. A run's wall time less its run
 * delay is the time it ran or waited for something else: a wait for the
 * stopped worker shows there, a caller that lost its CPU does not. */
static uint64_t run_delay_ns(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return 0;
    unsigned long long on_cpu = 0, delay = 0;
    int n = fscanf(f, "%llu %llu", &on_cpu, &delay);
    fclose(f);
    return n == 2 ? (uint64_t)delay : 0;
}

int plan_stopped_scenario(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = stop_handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGRTMIN + 3, &sa, NULL) != 0)
        return 1;
    dagrt *rt = live_rt(0);
    if (!rt)
        return 1;
    static const dagrt_observer obs = {.frame_begin = stop_frame_begin};
    dagrt_set_observer(rt, &obs, NULL);
    const dagrt_graph *g = live_table(true, true);
    dagrt_graph_state *st;
    dagrt_node_state *ns;
    static struct live_ctx c;
    if (stopped_state(&st, &ns) != 0)
        return 1;
    live_reset();
    atomic_store(&takeover_mode, 1);   /* the middle tasks' 50 us, no stall of theirs */
    atomic_store(&stop_mode, 1);
    atomic_store(&stop_over, 1);
    const double bound = PLAN_STOP_MS / 4.0;   /* "not held": well under the stop */
    int bad = 0, stops = 0, frames = 0, last_stop = -100, finis = 0, fini_waited = 0;
    int late_frames = 0;
    double late_max = 0, other_max = 0;
    bool pending = false;   /* a stop was sent; its handler may still sleep */
    bool worker_ran = false;
    double t0 = bench_now_s();
    for (int f = 0; (stops < PLAN_STOPS || (fini_waited == 0 && stops < PLAN_STOPS_MOST) || pending) &&
                    bench_now_s() - t0 < 40.0;
         f++, frames++) {
        if (pending && atomic_load(&stop_over)) {
            pending = false;
            if (atomic_load(&stop_in_body)) {
                fprintf(stderr, "plan_stopped: the stop before frame %d interrupted a body\n", f);
                bad++;
            }
        }
        /* Armed after a plan frame (the policy keeps a mode for a while;
         * after a stop it may run serial frames for a stretch, see
         * exec/policy.c's starvation rule), 8 frames after the last stop,
         * once the last stop is over. */
        bool more = stops < PLAN_STOPS || (fini_waited == 0 && stops < PLAN_STOPS_MOST);
        bool armed = !pending && more && f - last_stop >= 8 && mode_is("plan") &&
                     worker_ran;
        if (armed) {
            atomic_store(&stop_began, 0);
            atomic_store(&stop_over, 0);
            atomic_store(&stop_sent, 0);
        }
        atomic_store(&stop_armed, armed);
        ctx_start(&c, rt, f);
        bool stopped_at_call = pending && !atomic_load(&stop_over);
        bool timed = armed || stopped_at_call;   /* its run delay read (two file reads) */
        uint64_t delay0 = timed ? run_delay_ns() : 0;
        uint64_t call = (uint64_t)(bench_now_s() * 1e9);
        int rc = dagrt_graph_run(rt, g, st, &c);
        uint64_t end = (uint64_t)(bench_now_s() * 1e9);
        bool over_at_end = atomic_load(&stop_over);
        /* The run's time without the caller's wait for a CPU, ms. */
        double delay_ms = timed ? (double)(run_delay_ns() - delay0) / 1e6 : 0.0;
        atomic_store(&stop_armed, 0);
        if (rc != 0) {
            fprintf(stderr, "plan_stopped: frame %d: %s\n", f, dagrt_strerror(rc));
            bad++;
            break;
        }
        bad += ctx_check("plan_stopped", &c);
        /* The worker ran a task of this frame: its helper lingers, and
         * joins the next frame's offer at once (so the stop finds it
         * inside the frame, not parked). */
        worker_ran = false;
        for (int m = 1; m < LIVE_SINK; m++)
            worker_ran |= atomic_load(&c.thread[m]) > 0;
        if (!pending) {
            double ms = (double)(end - call) / 1e6;
            other_max = ms > other_max ? ms : other_max;
        } else if (stopped_at_call) {
            /* A run on the state while the worker is still stopped, maybe
             * inside the last frame: it must not wait for it either. Held
             * is long and ended only after the stop did; long alone is a
             * caller that lost its CPU (a run of no stop took 481 ms once,
             * at a load average of 15). */
            double ms = (double)(end - call) / 1e6;
            late_frames++;
            late_max = ms > late_max ? ms : late_max;
            if (ms - delay_ms > bound && over_at_end) {
                fprintf(stderr, "plan_stopped: frame %d, run while the worker was stopped, took "
                        "%.2f ms (%.2f of them waiting for a CPU) and returned after the stop's "
                        "end\n", f, ms, delay_ms);
                bad++;
            }
        }
        if (!armed || !atomic_load(&stop_sent))
            continue;
        pending = true;
        last_stop = f;
        if (!atomic_load(&stop_began))
            continue;   /* not stopped in time (2 s): not this test's case */
        bool plan = mode_is("plan");
        /* From the handler's start: a parked worker's signal waits for a
         * CPU first (milliseconds on a loaded machine), which is no part
         * of the take-over. */
        uint64_t began = atomic_load(&stop_began_ns);
        double ms = (double)(atomic_load(&c.end_ns[LIVE_SINK]) - began) / 1e6;
        double ret_ms = (double)(end - began) / 1e6;
        double late_ms = (double)(began - atomic_load(&stop_sent_ns)) / 1e6;
        /* Held: the work or the return after the stop's end (0: not over). */
        uint64_t over_ns = over_at_end ? atomic_load(&stop_over_ns) : UINT64_MAX;
        bool work_held = atomic_load(&c.end_ns[LIVE_SINK]) > over_ns, ret_held = end > over_ns;
        int on_caller = 0;
        for (int m = 1; m < LIVE_SINK; m++)
            on_caller += atomic_load(&c.thread[m]) == 0;
        if (!plan)
            continue;   /* the policy ran it another way: not this test's case */
        stops++;
        /* The work (the sink, last, after every middle task) must be done
         * in about its own time, and dagrt_graph_run must return then too:
         * it waits for the nodes, never for a helper that joined the run
         * and lost its CPU (exec/plan_run.c, "the held return"). */
        printf("plan_stopped: frame %d: the work done %.2f ms and dagrt_graph_run returned %.2f ms "
               "after the worker's stop of %d ms began (%.2f ms after the signal; %d of %d middle "
               "tasks on the caller)\n",
               f, ms, ret_ms, PLAN_STOP_MS, late_ms, on_caller, LIVE_MIDS);
        /* Over the bound and after the stop's end, i.e. waited for the
         * worker; over it alone, the caller lost its CPU meanwhile. */
        if ((ms - delay_ms > bound && work_held) || (ret_ms - delay_ms > bound && ret_held) ||
            on_caller != LIVE_MIDS) {
            fprintf(stderr, "plan_stopped: frame %d: the work done %.2f ms, the return %.2f ms "
                    "after the stop of %d ms began (%.2f ms of the run waiting for a CPU; want "
                    "under %.0f besides, or before its end), %d of %d middle tasks on the "
                    "caller\n", f, ms, ret_ms, PLAN_STOP_MS, delay_ms, bound, on_caller, LIVE_MIDS);
            bad++;
        }
        if (stops <= PLAN_STOPS - PLAN_FINIS)
            continue;
        /* The last stops: the state is released at once, the worker maybe
         * still stopped inside the frame, and freed. fini must wait for
         * it (ASan: a helper access after the free), a re-init too. */
        uint64_t f0 = (uint64_t)(bench_now_s() * 1e9);
        rc = dagrt_graph_state_fini(st);
        double fini_ms = ms_since(f0);
        bool waited = atomic_load(&stop_over);
        finis++;
        fini_waited += waited;
        printf("plan_stopped: frame %d: dagrt_graph_state_fini returned after %.2f ms, %s the "
               "stop's end\n", f, fini_ms, waited ? "after" : "before");
        if (rc != 0) {
            fprintf(stderr, "plan_stopped: dagrt_graph_state_fini: %s\n", dagrt_strerror(rc));
            bad++;
        }
        memset(st, 0xa5, sizeof *st);   /* what a reuse of the memory could leave there */
        memset(ns, 0xa5, LIVE_NODES * sizeof *ns);
        free(st);
        free(ns);
        if (stopped_state(&st, &ns) != 0) {
            bad++;
            break;
        }
    }
    while (!atomic_load(&stop_over))
        ;
    atomic_store(&stop_mode, 0);
    atomic_store(&takeover_mode, 0);
    printf("plan_stopped: %d frames, %d plan frames with the worker stopped; %d runs while it was "
           "still stopped (the longest %.2f ms; of the others %.2f ms); %d of %d releases waited "
           "for it\n", frames, stops, late_frames, late_max, other_max, fini_waited, finis);
    if (stops < PLAN_STOPS) {
        fprintf(stderr, "plan_stopped: only %d plan frames with the worker stopped\n", stops);
        bad++;
    }
    /* The worker joins a frame within microseconds of its offer and the
     * stop comes 300 us into the root: a release that never waited would
     * mean the late helper went unseen. */
    if (finis >= PLAN_FINIS && fini_waited == 0) {
        fprintf(stderr, "plan_stopped: no release waited for the stopped worker\n");
        bad++;
    }
    dagrt_destroy(rt);
    signal(SIGRTMIN + 3, SIG_DFL);
    dagrt_graph_state_fini(st);
    free(st);
    free(ns);
    return bad;
}
#endif
