/*
 * exec/exec.c - the graph executor's front: dagrt_graph_run's validation, the
 * reset every mode shares, each frame's mode as the run policy says
 * (exec/policy.c): serial (exec/serial.c), plan mode (exec/plan.c) or the
 * dynamic executor (exec/dynamic.c); the started runs and the stats; and
 * node dispatch's observed half (the dispatch itself, the one place a
 * node's body runs, is rt_exec_dispatch in exec/exec.h).
 */
#include "exec.h"

#include <stddef.h>
#include <string.h>

/* Depth of graph node bodies running on this thread (see exec/exec.h). */
_Thread_local unsigned rt_exec_depth;

/* ------------------------------------------------- observed dispatch */

int rt_exec_thread_of(dagrt *rt)
{
    rt_ctx *c = rt_ctx_current(rt);   /* a real call: fibers migrate */
    return c ? (int)c->index : -1;
}

/* Each piece of a parallel task is reported on the thread that runs it; on
 * a fiber, it is what a suspend would close. */
void rt_exec_piece(void *arg, size_t begin, size_t end)
{
    const piece_arg *pa = arg;
    dagrt_node_event ev = *pa->ev;
    ev.piece = true;
    ev.begin = begin;
    ev.end = end;
    ev.thread = rt_exec_thread_of(pa->r->rt);
    dagrt_node_event *prev = rt_fiber_obs_swap(pa->r->rt, &ev);
    rt_obs_node(pa->ob, RT_OBS_BEGIN, &ev);
    pa->n->run_range(pa->r->ctx, begin, end);
    rt_obs_node(pa->ob, RT_OBS_END, &ev);
    rt_fiber_obs_swap(pa->r->rt, prev);
}

uint8_t rt_exec_node_observed(graph_rt *r, uint32_t i, node_where where, rt_obs *ob)
{
    return rt_exec_dispatch(r, i, where, ob);
}

/* ------------------------------------------------------------ public API */

bool rt_exec_in_node(void) { return rt_exec_depth > 0; }

/* A state's `running` word: who owns it. Idle to RUN_SYNC (dagrt_graph_run)
 * or RUN_STARTING (dagrt_graph_start, then RUN_STARTED until its wait takes
 * it as RUN_WAITING); back to RUN_IDLE when the run is over. */
enum { RUN_IDLE, RUN_SYNC, RUN_STARTING, RUN_STARTED, RUN_WAITING };

/* The calling thread's context, and whether it runs on a fiber. Code on
 * its thread's own stack is not on a fiber (fiber stacks are separate
 * mappings): then the inline TLS read is right and no fiber lookup is
 * needed, which is most of what an empty frame's checks would cost. */
static rt_ctx *caller(dagrt *rt, bool *fiber)
{
    rt_ctx *c = rt_ctx_here(rt);
    if (RT_LIKELY(c != NULL)) {
        char here;
        uintptr_t sp = (uintptr_t)(void *)&here;
        if (sp >= (uintptr_t)(void *)c->stack_lo && sp < (uintptr_t)(void *)c->stack_hi) {
            *fiber = false;
            return c;
        }
    }
    *fiber = dagrt_in_fiber(rt);
    return rt_ctx_current(rt);
}

/* Inside a graph task anywhere, or inside any task (workers run user code
 * only inside tasks; the main thread counts the tasks it runs while it
 * waits or pumps), or on a fiber: a run or a wait there could wait on
 * itself. Also says who calls (self) and whether it is the main thread. */
static bool nested_here(dagrt *rt, rt_ctx **self, bool *main)
{
    bool fiber;
    *self = caller(rt, &fiber);
    *main = !fiber && *self && (*self)->index == 0;
    return rt_exec_depth > 0 || (*self && ((*self)->worker || (*self)->depth > 0)) || fiber;
}

bool rt_exec_nested(dagrt *rt)
{
    rt_ctx *self;
    bool main;
    return nested_here(rt, &self, &main);
}

/* Checks a run's arguments and takes the state (RUN_IDLE to `to`).
 * Inline: on dagrt_graph_run's path, whose serial frames of empty tasks
 * cost about 150 ns in all (bench_frame). */
static RT_INLINE int claim(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, rt_ctx **self,
                           uint32_t to)
{
    if (!rt || !g || !st)
        return DAGRT_EINVAL;
    if (g->version != DAGRT_GRAPH_VERSION)
        return DAGRT_EVERSION;
    if (g->nnodes == 0 || !g->nodes || !g->succ || !st->nodes || st->nnodes < g->nnodes)
        return DAGRT_EINVAL;
    bool main;
    if (nested_here(rt, self, &main))
        return DAGRT_ENESTED;
    graph_rt *r = state_rt(st);
    uint32_t idle = RUN_IDLE;
    /* acquire: pairs with the release that ended the last run (or wait), so
     * this run sees its writes. Failure: nothing is touched, relaxed. */
    if (!atomic_compare_exchange_strong_explicit(&r->running, &idle, to, memory_order_acquire,
                                                 memory_order_relaxed))
        return DAGRT_EBUSY;
    if (!main) {
        /* release: nothing of this state was touched; hands it back as it was. */
        atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
        return DAGRT_EPERM;
    }
    return 0;
}

/* The number of this run among the runs of g started on rt (from 0), for
 * observers. Only the main thread starts runs: plain fields. */
static uint64_t frame_number(dagrt *rt, const dagrt_graph *g, uint64_t fallback)
{
    size_t h = (size_t)((uintptr_t)g >> 6) % RT_FRAME_GRAPHS;
    for (size_t k = 0; k < RT_FRAME_GRAPHS; k++) {
        size_t i = (h + k) % RT_FRAME_GRAPHS;
        if (rt->frame_no[i].g == g)
            return rt->frame_no[i].n++;
        if (!rt->frame_no[i].g) {
            rt->frame_no[i].g = g;
            rt->frame_no[i].n = 1;
            return 0;
        }
    }
    return fallback;   /* table full: the state's own count */
}

uint64_t rt_exec_shuffle_seed(const graph_rt *r)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);   /* FNV-1a over the graph's name */
    for (const char *p = r->g->name ? r->g->name : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
    return rt_splitmix(r->rt->cfg.shuffle_seed ^ rt_splitmix(h ^ rt_splitmix(r->frame)));
}

/* Reset: plain stores are enough; spawning a task publishes them to the
 * thread that runs it (the runtime's queues are release/acquire). */
static void reset(graph_rt *r, dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                  const rt_frame_id *fid)
{
    node_rt *nodes = (node_rt *)(void *)st->nodes;
    if (r->live_g != g || r->nodes != nodes) {
        /* The state meets this graph (first, or again after another):
         * nothing measured of it yet (exec/live.c). A state may be reused
         * for several graphs, and hand-made states are not always zeroed. */
        for (uint32_t i = 0; i < g->nnodes && i < st->nnodes; i++)
            nodes[i].plan.cost_live = 0;
        r->live_g = g;
        r->live_sample = 0;
        r->live_drift = 0;
        r->live_wait = 0;
    }
    if (r->plan_g != g || r->nodes != nodes || r->plan_workers != rt->nworkers)
        r->plan_state = RT_PLAN_NONE;   /* a plan is for one graph in one node array, and a worker count */
    /* A late helper of the last G_run may still read these (exec/plan_run.c,
     * "the held return"): stored only when they change, and then only
     * once it has left. */
    if (r->rt != rt || r->g != g || r->nodes != nodes || r->nnodes != g->nnodes || r->async ||
        r->piped || r->linked || r->inpipe) {
        rt_plan_late_wait(r);
        r->rt = rt;
        r->g = g;
        r->nodes = nodes;
        r->nnodes = g->nnodes;
        r->async = 0;
        r->piped = 0;
        r->linked = 0;
        r->inpipe = 0;
    }
    r->ctx = ctx;
    /* relaxed: between runs; whoever reads it later synchronised with this run's start. */
    atomic_store_explicit(&r->next, NULL, memory_order_relaxed);
    r->frame = frame_number(rt, g, r->runs);
    r->shuffle = !rt_shuffled(rt) ? 0 : rt->nguests == 0 ? RT_SHUFFLE_POPS : RT_SHUFFLE_SHARED;
    if (RT_UNLIKELY(r->shuffle))
        r->shuf = rt_exec_shuffle_seed(r);
    /* The trace's flow events read this graph's edges when it is written
     * (trace/flow.c): named once, and only while recording. */
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (RT_UNLIKELY(ob != NULL) && ob->trace)
        rt_trace_graph(ob->trace, g);
    rt_frame_begin(r, rt, fid);
}

/* The observer's frame events (dagrt.h, frame_begin / frame_end): one
 * load and a predictable branch per run when nothing observes. */
static void obs_frame(graph_rt *r, bool end, rt_mode mode)
{
    rt_obs *ob = rt_obs_now(&r->rt->obs);
    if (RT_LIKELY(ob == NULL))
        return;
    static const char *const names[] = {
        [RT_MODE_SERIAL] = "serial", [RT_MODE_PLAN] = "plan", [RT_MODE_PPLAN] = "pipelined plan",
        [RT_MODE_DYNAMIC] = "dynamic", [RT_MODE_ALONE] = "caller alone"};
    if (!end)
        r->obs_mode = (uint8_t)mode;
    dagrt_frame_event e = {r->g->name, r->frame, r, r->async != 0, names[r->obs_mode]};
    rt_obs_frame(ob, end, &e);
}

/* A G_run frame's executor, where it shares (exec/crowd.c: crowded
 * frames run on the dynamic executor). On a state that has run plan mode,
 * a helper of its last plan frame may still be inside, late (exec/
 * plan_run.c, "the held return"), and a dynamic run rewrites the state's
 * shared words: it waits for that one first (one acquire load when none
 * is late, which is nearly always; only the first dynamic frame after
 * plan frames can find one). The run policy's usual wait means waits with
 * nothing to claim in plan mode and blocked waits on the dynamic
 * executor: started afresh at a change. */
static void exec_switch(graph_rt *r, rt_mode mode)
{
    if (mode == RT_MODE_SERIAL)
        return;
    bool dyn = mode != RT_MODE_PLAN;
    if (dyn)
        rt_plan_late_wait(r);
    if (RT_UNLIKELY(dyn != r->ran_dyn)) {
        r->policy.wait_ns = 0;
        r->ran_dyn = dyn;
    }
}

/* A plan made for a pipeline's frames in flight (its steady state's lists,
 * exec/plan_build.c) is made again for one frame (G_run's, a pipeline's
 * run alone: rt_exec_run_sync) when the plan is next asked for, as rt_exec_start does the other way (rt_plan_build waits for
 * a late helper first). */
static void plan_one(graph_rt *r)
{
    if (r->plan_state == RT_PLAN_MADE && r->plan_piped)
        r->plan_state = RT_PLAN_NONE;
}

static uint16_t drainers_for(int workers)
{
    return (uint16_t)(workers < 65534 ? workers + 1 : 65535);
}

int dagrt_graph_run(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx)
{
    rt_ctx *self;
    int rc = claim(rt, g, st, &self, RUN_SYNC);
    if (rc != 0)
        return rc;
    graph_rt *r = state_rt(st);
    reset(r, rt, g, st, ctx, NULL);
    /* One drainer per worker, plus one: the caller, once it waits on the
     * group, takes a drainer task like any other, so a drainer that keeps
     * publishing work can still hand some to the caller. None for a frame
     * too small to share. */
    int workers = dagrt_worker_count(rt);
    bool share = workers > 0 && !rt_policy_small(r->policy.frame_ns, g->nnodes);
    r->max_drainers = share ? drainers_for(workers) : 0;
    /* On a crowded CPU it shares on the dynamic executor rather than in
     * plan mode (exec/crowd.c); a change restarts the run policy's
     * verdicts (exec/policy.c, "a change of executor"), before the clock
     * is asked, so that a probe it starts is timed. */
    bool crowd = rt_crowd_dyn(rt, r->policy.frame_ns, g->nnodes);
    if (rt_exec_env_plan())
        rt_policy_crowd(&r->policy, crowd);
    bool timed = rt_policy_timed(r, share);
    uint64_t t0 = timed ? rt_now_ns() : 0;
    plan_one(r);
    /* Live costs drifted since the plan was made: made again, now, while
     * nothing runs on the state (exec/live.c). */
    if (rt_exec_planned(r, g) && rt_live_drifted(r))
        rt_live_replan(r);
    /* How it runs: the one choice (exec/policy.c). */
    rt_choice c = rt_exec_choose(r, g, workers, RT_FRAME_RUN, !crowd, NULL, 0);
    exec_switch(r, c.mode);
    rt_live_frame(r, c.mode);
    obs_frame(r, false, c.mode);
    switch (c.mode) {
    case RT_MODE_SERIAL:
        rc = rt_exec_serial_run(r);
        break;
    case RT_MODE_PLAN:
        rc = rt_plan_run(r);
        break;
    case RT_MODE_ALONE:
        r->max_drainers = 0;
        /* fall through */
    default:
        rc = rt_exec_dyn_run(r, self, workers, r->policy.frame_ns);
        break;
    }
    uint64_t ns = timed ? rt_now_ns() - t0 : 0;
    if (c.judge == RT_JUDGE_DYN)
        rt_policy_dyn_after(r, timed, ns);
    else
        rt_policy_after(r, timed, ns, c.judge == RT_JUDGE_PLAN);
    obs_frame(r, true, c.mode);
    rt_frame_end(r);
    r->runs++;
    /* release: the next run (or get_stats) acquires everything this run wrote. */
    atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
    return rc;
}

/* claim, then (only once the state is taken, so that a refused call
 * changes nothing) the context's copy and the reset. */
static int take(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                dagrt_ctx_store_fn store, const void *src, uint32_t to, graph_rt **out,
                const rt_frame_id *fid)
{
    rt_ctx *self;
    int rc = claim(rt, g, st, &self, to);
    if (rc != 0)
        return rc;
    if (store)
        store(ctx, src);
    *out = state_rt(st);
    /* A started run rewrites what a late helper of a G_run on this state
     * may still read (exec/plan_run.c, "the held return"). */
    rt_plan_late_wait(*out);
    reset(*out, rt, g, st, ctx, fid);
    return 0;
}

/* A started run (never serial: that assumes the caller takes part from
 * the start) runs in pipelined plan mode where it may (plan: the pipeline,
 * or for dagrt_graph_start the environment, allows it; a worker or more; a plan
 * for the graph; prev, if any, then runs in it too: exec/pplan.c), else on
 * the dynamic executor with drainers. It is not timed: its wall time
 * includes whatever the caller does between start and wait. */
int rt_exec_start(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                  dagrt_ctx_store_fn store, const void *src, bool inpipe, bool piped,
                  graph_rt *prev, bool plan, const rt_frame_id *fid, uint64_t frame_ns)
{
    graph_rt *r;
    int rc = take(rt, g, st, ctx, store, src, RUN_STARTING, &r, fid);
    if (rc != 0)
        return rc;
    r->async = 1;
    r->piped = piped;
    r->linked = prev != NULL;
    r->inpipe = inpipe;
    /* A plan made for the other use (G_run's one frame, or a pipeline's
     * frames in flight: exec/plan_build.c) is made again for this one. */
    if (r->plan_state == RT_PLAN_MADE && r->plan_piped != (inpipe && piped))
        r->plan_state = RT_PLAN_NONE;
    int workers = dagrt_worker_count(rt);
    r->max_drainers = workers > 0 ? drainers_for(workers) : 0;
    /* Every state of a pipeline makes the same plan for its one graph
     * (rt_plan_build reads only the tables), so a frame and the one before
     * it are always in the same mode. */
    /* Live costs (exec/live.c): a pipeline's frame was looked at before
     * its frames in flight were waited for (exec/pipe.c); a started run
     * here, while nothing runs on its state. */
    if (!inpipe && rt_exec_planned(r, g) && rt_live_drifted(r))
        rt_live_replan(r);
    rt_mode mode = rt_exec_choose(r, g, workers, RT_FRAME_START, plan, NULL, 0).mode;
    rt_live_frame(r, mode);
    obs_frame(r, false, mode);
    if (mode == RT_MODE_PPLAN) {
        rt_pplan_start(r, prev);
    } else {
        r->pplan = 0;
        rt_exec_dyn_start(r, workers, frame_ns);
        if (prev)
            rt_exec_dyn_link(prev, r);
    }
    /* release: the wait that takes RUN_STARTED (acquire) sees the reset. */
    atomic_store_explicit(&r->running, RUN_STARTED, memory_order_release);
    return 0;
}

int rt_exec_run_sync(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                     dagrt_ctx_store_fn store, const void *src, const rt_frame_id *fid, bool share,
                     bool *shared)
{
    graph_rt *r;
    int rc = take(rt, g, st, ctx, store, src, RUN_SYNC, &r, fid);
    if (rc != 0)
        return rc;
    /* Shared: plan mode as G_run runs it, with G_run's plan (one made for
     * frames in flight is made again, as dagrt_graph_run does); serial
     * where the graph has no plan or no worker. */
    rt_mode mode = RT_MODE_SERIAL;
    if (share && dagrt_worker_count(rt) > 0) {
        plan_one(r);
        if (rt_exec_plan(r))
            mode = RT_MODE_PLAN;
    }
    *shared = mode == RT_MODE_PLAN;
    r->policy.was_serial = mode == RT_MODE_SERIAL;
    exec_switch(r, mode);
    rt_live_frame(r, mode);
    obs_frame(r, false, mode);
    rc = mode == RT_MODE_PLAN ? rt_plan_run(r) : rt_exec_serial_run(r);
    obs_frame(r, true, mode);
    rt_frame_end(r);
    r->runs++;
    /* release: the next run (or get_stats) acquires everything this run wrote. */
    atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
    return rc;
}

int dagrt_graph_start(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                      dagrt_ctx_store_fn store, const void *src)
{
    /* Crowded: on the dynamic executor (exec/crowd.c). */
    /* (A started run is not timed: its frame time is not known.) */
    return rt_exec_start(rt, g, st, ctx, store, src, false, false, NULL,
                         rt_exec_env_plan() && !rt_crowd_frames(rt), NULL, 0);
}

int dagrt_graph_wait(dagrt *rt, dagrt_graph_state *st)
{
    return rt_exec_wait(rt, st, false);
}

int rt_exec_wait_take(dagrt *rt, dagrt_graph_state *st, bool pipe)
{
    graph_rt *r = state_rt(st);
    uint32_t s = RUN_STARTED;
    /* acquire: pairs with the start's release (the reset and the roots).
     * Failure: relaxed, only the value decides the error. */
    if (!atomic_compare_exchange_strong_explicit(&r->running, &s, RUN_WAITING,
                                                 memory_order_acquire, memory_order_relaxed))
        return s == RUN_IDLE ? DAGRT_EINVAL : DAGRT_EBUSY;
    int bad = r->rt != rt ? DAGRT_EINVAL
              : r->inpipe != pipe ? DAGRT_EBUSY   /* a pipeline's frame, or not one */
              : 0;
    if (bad)
        rt_exec_wait_give(st);
    return bad;
}

void rt_exec_wait_give(dagrt_graph_state *st)
{
    /* release: hands the started run back untouched. */
    atomic_store_explicit(&state_rt(st)->running, RUN_STARTED, memory_order_release);
}

int rt_exec_wait_run(dagrt *rt, dagrt_graph_state *st)
{
    graph_rt *r = state_rt(st);
    rt_ctx *self = rt_ctx_current(rt);
    int rc = r->pplan ? rt_pplan_wait(r) : rt_exec_dyn_wait(r, self);
    if (!r->pplan && dagrt_worker_count(rt) > 0)
        rt_policy_dyn_after(r, false, 0);   /* the starvation rule (exec/policy.c) */
    obs_frame(r, true, RT_MODE_DYNAMIC);
    rt_frame_end(r);
    r->runs++;
    /* release: the next run (or get_stats) acquires everything this run wrote. */
    atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
    return rc;
}

int rt_exec_wait(dagrt *rt, dagrt_graph_state *st, bool pipe)
{
    if (!rt || !st)
        return DAGRT_EINVAL;
    rt_ctx *self;
    bool main;
    if (nested_here(rt, &self, &main))
        return DAGRT_ENESTED;
    int rc = rt_exec_wait_take(rt, st, pipe);
    if (rc != 0)
        return rc;
    /* Only the thread that started the run (the main thread of its
     * runtime) may wait for it: its `on main` tasks run there. */
    if (!main) {
        rt_exec_wait_give(st);
        return DAGRT_EBUSY;
    }
    return rt_exec_wait_run(rt, st);
}

/* Re-initialising a state in use would clear it under its run: refused.
 * A state in use is told apart from zeroed or uninitialised storage by
 * what only an init writes: a nodes pointer to this very node array and
 * its count (other bytes hold that address only where a state over these
 * nodes lived before). So a first init pays two compares; only a re-init
 * takes the state as a run does, so that no run starts while it is
 * cleared, and a state in use is left as it was. */
int dagrt_graph_state_init(dagrt_graph_state *st, dagrt_node_state *nodes, uint32_t nnodes)
{
    if (!st || !nodes)
        return DAGRT_EINVAL;
    graph_rt *r = state_rt(st);
    bool again = st->nodes == nodes && st->nnodes == nnodes;
    uint32_t idle = RUN_IDLE;
    /* acquire: pairs with the release that ended the last run, so the
     * clearing below comes after its writes. Failure: nothing is touched,
     * relaxed. */
    if (again && !atomic_compare_exchange_strong_explicit(&r->running, &idle, RUN_SYNC,
                                                          memory_order_acquire,
                                                          memory_order_relaxed))
        return DAGRT_EBUSY;
    if (again)
        rt_plan_late_wait(r);   /* no helper of its last run still reads it (exec/plan_run.c) */
    /* All but the ownership word, which another thread's claim may read
     * meanwhile (and fail on); plain stores. A re-init keeps the frame
     * memory arenas (exec/frame.c): the state's next run gives their chunks
     * back to their runtime, or drops them if that runtime is gone (its
     * number never comes back), instead of leaving them unused until the
     * runtime's destroy. */
    unsigned char *o = (unsigned char *)(void *)st->opaque_;
    const size_t at = offsetof(graph_rt, running), after = at + sizeof r->running;
    rt_farena keep[2];
    if (again)
        memcpy(keep, r->arena, sizeof keep);
    memset(o, 0, at);
    memset(o + after, 0, sizeof st->opaque_ - after);
    if (again)
        memcpy(r->arena, keep, sizeof keep);
    /* No probe yet: the run policy's reference stretch may run (exec/
     * policy.c, REF_SAMPLES; plan mode sets it again with its plan, the
     * dynamic executor's crowded frames rely on this one). */
    r->policy.since_probe = UINT32_MAX;
    memset(nodes, 0, (size_t)nnodes * sizeof *nodes);
    if (!again) {
        st->nodes = nodes;
        st->nnodes = nnodes;
    }
    /* release: a run that takes the state (acquire CAS) sees it cleared. */
    atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
    return 0;
}

int dagrt_graph_state_fini(dagrt_graph_state *st)
{
    if (!st)
        return DAGRT_EINVAL;
    graph_rt *r = state_rt(st);
    uint32_t idle = RUN_IDLE;
    /* acquire: pairs with the release that ended the last run, so the
     * late count it left is seen. Failure: nothing is touched, relaxed. */
    if (!atomic_compare_exchange_strong_explicit(&r->running, &idle, RUN_SYNC, memory_order_acquire,
                                                 memory_order_relaxed))
        return DAGRT_EBUSY;
    rt_plan_late_wait(r);   /* the helpers its runs left behind (exec/plan_run.c) */
    /* release: a claim (a run, an init) that follows sees it idle. */
    atomic_store_explicit(&r->running, RUN_IDLE, memory_order_release);
    return 0;
}

bool rt_exec_idle(dagrt_graph_state *st)
{
    /* acquire: pairs with the release that ended the state's last run, as
     * claim's CAS would (the caller relies on nothing else of it). */
    return atomic_load_explicit(&state_rt(st)->running, memory_order_acquire) == RUN_IDLE;
}

int dagrt_graph_get_stats(const dagrt_graph_state *st, dagrt_graph_stats *out)
{
    if (!st || !out)
        return DAGRT_EINVAL;
    memset(out, 0, sizeof *out);
    const graph_rt *r = (const graph_rt *)(const void *)st->opaque_;
    /* acquire: pairs with the run's final release, so the statuses read below are complete. */
    if (atomic_load_explicit(&((graph_rt *)(void *)(uintptr_t)r)->running, memory_order_acquire))
        return DAGRT_EBUSY;
    out->runs = r->runs;
    out->stretch_runs = r->policy.stretch_runs;
    out->replans = r->replans;
    if (!r->runs)
        return 0;
    for (uint32_t i = 0; i < r->nnodes; i++) {
        const node_rt *n = &r->nodes[i];
        if (n->status == 1)
            out->last_ran++;
        else if (n->status == 2)
            out->last_skipped++;
    }
    return 0;
}

