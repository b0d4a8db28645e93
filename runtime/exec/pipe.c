/*
 * exec/pipe.c - pipelines: up to DAGRT_MAX_IN_FLIGHT frames of one graph in
 * flight, frame k on the caller's state k % depth.
 *
 * Each frame is a started run (exec/exec.c) with two more rules, kept by the
 * dynamic executor (exec/dynamic.c): every node of frame N+1 waits for the same
 * node of frame N, and a node with `prev X` inputs waits for node X of
 * frame N. The link between two frames is made when frame N+1 is
 * submitted, while frame N may still run: a link word per node of frame N,
 * exchanged by the node's completer (DONE) and by the submitter (LINKED);
 * whichever comes second counts the completion into frame N+1, so each is
 * counted exactly once without a lock (tests/models/pipe_link.pml).
 *
 * A frame's state is reused `depth` frames later, only after its wait has
 * returned: frames are waited for oldest first, and a wait returns once
 * every task of the frame's group (every thread that ran one of its nodes,
 * and so every hand-off from it) is done.
 */
#include "exec.h"

#include <string.h>

/* The runtime's view of dagrt_pipeline's opaque words. */
typedef struct pipe_rt {
    /* 0, or 1 while a call is inside (any thread). The acquire CAS that
     * takes it sees everything the last call did (release store). */
    _Atomic uint32_t owner;
    uint32_t magic;          /* PIPE_MAGIC once initialised */
    const void *self;        /* the pipeline's own address once initialised */
    uint32_t depth;
    uint32_t inflight;       /* frames started and not yet waited for */
    uint64_t submitted;      /* frames started since init */
    dagrt *rt;               /* the runtime of the frames in flight */
    /* The run policy's (exec/policy.c) state for the serial choice, as a
     * graph state's: a moving average of sampled frames' time from start
     * to the end of their wait, and each slot's start time while it is
     * sampled (0: not sampled). */
    uint64_t frame_ns;
    uint64_t t_start[DAGRT_MAX_IN_FLIGHT];
    /* A frame's share of the pipeline's time, for the crowded switch
     * (exec/crowd.c, rt_crowd_small): a moving average of the same
     * samples, a frame's time from start to wait over the depth (with the
     * pipeline full, the time between two submits), a serial frame's own
     * time. Not frame_ns: a frame in flight waits for `depth` submits, so
     * its start-to-wait time grows with the depth, and a depth-3
     * pipeline of the uniform frame's 1 us tasks (start to wait about
     * 100 us) read as large beside a busy loop and went to the dynamic
     * executor, 44-77 us a frame against 33-36 serial, where depth 2
     * (about 66 us) stayed in plan mode (bench_frame --load 1;
     * docs/benchmarks-log.md). */
    uint64_t period_ns;
    /* Frames may run in pipelined plan mode (exec/pplan.c) where the
     * runtime has a worker: true unless DAGRT_PIPE=dynamic is in the
     * environment (rt_exec_env_plan: read once per process; tests run
     * both executors; docs/runtime.md). */
    bool plan_ok;
    /* The plan argument the last frame was started with (plan_ok, less
     * crowding: exec/crowd.c). A frame started with another one runs in
     * the other executor, which links frames differently (pplan reads the
     * frame before's `done` epochs, the dynamic executor hands each
     * completion over through link words): the frames in flight are
     * waited for first, and the frame starts unlinked, as after a drain. */
    bool last_plan;
    /* Frame memory (exec/frame.c): the arena of the last frame waited for
     * and that frame's number on it, retired at the next frame's wait. */
    rt_farena *last_fa;
    uint64_t last_gen;
} pipe_rt;

_Static_assert(sizeof(pipe_rt) <= sizeof(((dagrt_pipeline *)0)->opaque_), "pipeline too small");

#define PIPE_MAGIC 0x70697065u

static pipe_rt *pipe_of(dagrt_pipeline *p) { return (pipe_rt *)(void *)p->opaque_; }

static void leave(pipe_rt *q)
{
    /* release: the next call (acquire CAS) sees this one's bookkeeping. */
    atomic_store_explicit(&q->owner, 0, memory_order_release);
}

/* Re-initialising a pipeline in use would forget its frames in flight:
 * refused (DAGRT_EBUSY), nothing changed. It is told apart from zeroed or
 * uninitialised storage by what only an init writes, the magic and the
 * pipeline's own address: a first init pays two compares, a re-init takes
 * the pipeline as a call does and checks that nothing is in flight and no
 * state of the last init runs. */
int dagrt_pipeline_init(dagrt_pipeline *p, unsigned depth, dagrt_graph_state *const *states,
                        void *const *ctxs, dagrt_ctx_drop_fn drop)
{
    if (!p || !states || !ctxs || depth == 0 || depth > DAGRT_MAX_IN_FLIGHT)
        return DAGRT_EINVAL;
    for (unsigned k = 0; k < depth; k++)
        if (!states[k] || !ctxs[k])
            return DAGRT_EINVAL;
    pipe_rt *q = pipe_of(p);
    if (q->magic == PIPE_MAGIC && q->self == p) {
        uint32_t idle = 0;
        /* acquire: as enter's, this sees the last call's bookkeeping.
         * Failure: a call is inside; relaxed, nothing is touched. */
        if (!atomic_compare_exchange_strong_explicit(&q->owner, &idle, 1, memory_order_acquire,
                                                     memory_order_relaxed))
            return DAGRT_EBUSY;
        bool busy = q->inflight > 0;
        for (unsigned k = 0; k < q->depth && k < DAGRT_MAX_IN_FLIGHT && !busy; k++)
            busy = p->states[k] && !rt_exec_idle(p->states[k]);
        if (busy) {
            leave(q);
            return DAGRT_EBUSY;
        }
    }
    /* Field by field, leaving the words another thread's call may read
     * meanwhile (and fail on) alone: the ownership word, and the magic on
     * a re-init (it is written only by a first init). */
    q->depth = depth;
    q->inflight = 0;
    q->submitted = 0;
    q->rt = NULL;
    q->frame_ns = q->period_ns = 0;
    memset(q->t_start, 0, sizeof q->t_start);
    q->plan_ok = rt_exec_env_plan();
    q->last_plan = q->plan_ok;
    q->last_fa = NULL;
    q->last_gen = 0;
    if (q->magic != PIPE_MAGIC || q->self != p) {
        q->magic = PIPE_MAGIC;
        q->self = p;
    }
    memset(p->states, 0, sizeof p->states);
    memset(p->ctxs, 0, sizeof p->ctxs);
    for (unsigned k = 0; k < depth; k++) {
        p->states[k] = states[k];
        p->ctxs[k] = ctxs[k];
    }
    p->drop = drop;
    leave(q);   /* release: the next call (acquire CAS) sees the pipeline initialised */
    return 0;
}

/* Takes the pipeline for one call on the calling thread. */
static int enter(dagrt *rt, dagrt_pipeline *p)
{
    if (!rt || !p || pipe_of(p)->magic != PIPE_MAGIC)
        return DAGRT_EINVAL;
    if (rt_exec_nested(rt))
        return DAGRT_ENESTED;
    pipe_rt *q = pipe_of(p);
    uint32_t idle = 0;
    /* acquire: pairs with leave's release, so this call sees the last
     * one's bookkeeping. Failure: relaxed, nothing is touched. */
    if (!atomic_compare_exchange_strong_explicit(&q->owner, &idle, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return DAGRT_EBUSY;
    int bad = 0;
    if (q->inflight > 0 && (q->rt != rt || !dagrt_on_main_thread(rt)))
        bad = DAGRT_EBUSY;   /* frames in flight belong to one runtime's main thread */
    else if (!dagrt_on_main_thread(rt))
        bad = DAGRT_EPERM;
    if (bad)
        /* release: hands the pipeline back untouched. */
        atomic_store_explicit(&q->owner, 0, memory_order_release);
    return bad;
}

/* The state whose run policy (exec/policy.c) rules the pipelined plan
 * frames of g: the pipeline's first state when it is planned for g, else
 * (it has not run g yet) the frame's own state r. */
static graph_rt *rule_of(dagrt_pipeline *p, graph_rt *r, const dagrt_graph *g)
{
    graph_rt *o = state_rt(p->states[0]);
    return rt_exec_planned(o, g) ? o : r;
}

/* Frame r (state r) has ended, and so every frame before it: the one
 * before it retires its frame memory (exec/frame.c), r's waits for the
 * next one. */
static void retire_before(dagrt *rt, pipe_rt *q, graph_rt *r)
{
    rt_frame_retire(rt, q->last_fa, q->last_gen);
    q->last_fa = r->fa;
    q->last_gen = r->fa->gen;
}

/* Waits (helping) for the oldest frame in flight and lets its context go. */
static int wait_oldest(dagrt *rt, dagrt_pipeline *p)
{
    pipe_rt *q = pipe_of(p);
    unsigned k = (unsigned)((q->submitted - q->inflight) % q->depth);
    /* The pipeline's calls checked the thread (enter), an asynchronous
     * wait's task runs on the main thread (exec/await.c): the wait's
     * halves, without rt_exec_wait's check for a task. */
    int rc = rt_exec_wait_take(rt, p->states[k], true);
    if (rc != 0)
        return rc;   /* refused (the state is used outside the pipeline): still in flight */
    rc = rt_exec_wait_run(rt, p->states[k]);
    graph_rt *r = state_rt(p->states[k]);
    retire_before(rt, q, r);
    if (r->pplan && rt_policy_serial_ok(&r->policy, r->g))
        /* The starvation rule judges it, with its submit's time if timed. */
        rt_policy_pipe_after(rule_of(p, r, r->g), r, r->policy.pipe_ns);
    if (q->t_start[k]) {
        uint64_t ns = rt_now_ns() - q->t_start[k];
        q->frame_ns = rt_policy_average_size(q->frame_ns, ns);
        q->period_ns = rt_policy_average_size(q->period_ns, ns / q->depth);
        q->t_start[k] = 0;
    }
    q->inflight--;
    if (p->drop)
        p->drop(p->ctxs[k]);
    return rc;
}

int dagrt_pipeline_submit(dagrt *rt, const dagrt_graph *g, dagrt_pipeline *p,
                          dagrt_ctx_store_fn store, const void *src)
{
    if (!g)
        return DAGRT_EINVAL;
    int rc = enter(rt, p);
    if (rc != 0)
        return rc;
    pipe_rt *q = pipe_of(p);
    /* One pipeline runs one graph: checked before anything is waited for. */
    if (q->inflight > 0 && state_rt(p->states[(q->submitted - 1) % q->depth])->g != g) {
        rc = DAGRT_EINVAL;
        goto out;
    }
    unsigned k = (unsigned)(q->submitted % q->depth);
    void *ctx = store ? p->ctxs[k] : (void *)(uintptr_t)src;
    graph_rt *rk = state_rt(p->states[k]);
    /* Crowded (exec/crowd.c): this frame on the dynamic executor, as with
     * DAGRT_PIPE=dynamic; a change of executor restarts the rule's
     * verdicts (exec/policy.c, "a change of executor"), before its clock
     * is asked, and at a frame boundary waits for the frames in flight
     * first (pipe_rt.last_plan, below). */
    bool crowd = rt_crowd_dyn(rt, q->period_ns, g->nnodes);
    bool plan = q->plan_ok && !crowd;
    if (q->plan_ok && rk->rt == rt && rt_exec_planned(rk, g))
        rt_policy_crowd(&rule_of(p, rk, g)->policy, crowd);
    /* The run policy's sample of a pipelined frame: this call's time, the
     * caller's time per frame with frames in flight (exec/policy.c), only
     * when it waits for the oldest frame (a pipeline filling up waits for
     * none). Sampled in runs of `depth` consecutive calls, so that every
     * slot is sampled alike (one in EXEC_TIME_EVERY frames would always
     * be the same slot's with depth 2). */
    uint64_t call_t0 = q->inflight == q->depth && rk->rt == rt && rt_exec_planned(rk, g) &&
                               (rt_policy_sampled(q->submitted / q->depth) ||
                                rule_of(p, rk, g)->policy.time_next)
                           ? rt_now_ns()
                           : 0;
    /* (The slot's state keeps its policy's notes; only the main thread
     * reads or writes them, even while that state's frame is in flight.)
     * Its own last frame must be over before it is asked: the choice reads
     * the state's plan and policy. */
    if (q->inflight == q->depth && (rc = wait_oldest(rt, p)) != 0)
        goto out;
    /* How it runs: the one choice (exec/policy.c). Serial now: frames
     * measured too small to share gain nothing from overlapping, and a
     * stretch of the pipeline's run policy (its helpers without CPU) runs
     * frames on the caller alone; either way after the frames in flight,
     * on the caller in table order, without a counter or an atomic
     * (exec/serial.c). The rule's probes start frames in flight again. */
    /* The frame's number and the slots of per-frame data (dagrt_get_frame):
     * the frames in flight and the one before the oldest. */
    rt_frame_id fid = {q->submitted, q->depth + 1};
    /* Live costs drifted (exec/live.c): the frames in flight are waited
     * for first (the next one reads this state's `done` words, which a new
     * plan resets; and each frame's helpers hold tickets on its lists),
     * then every idle state planned for g is made again from this state's
     * costs, so the frames keep one plan; this frame starts unlinked, as
     * after a drain (tests/models/live_replan.pml). */
    if (rk->rt == rt && rt_exec_planned(rk, g) && rt_live_drifted(rk)) {
        while (q->inflight > 0)
            if ((rc = wait_oldest(rt, p)) != 0)
                goto out;
        for (unsigned j = 0; j < q->depth; j++) {
            graph_rt *s = state_rt(p->states[j]);
            if (s != rk && s->rt == rt && rt_exec_planned(s, g) && rt_exec_idle(p->states[j])) {
                rt_live_copy(s, rk);
                rt_live_replan(s);
            }
        }
        rt_live_replan(rk);
    }
    bool shuffled = rt_exec_shuffle_serial(rt, rk, g);
    /* One at a time: crowded, frames of tiny nodes (plan mode, above).
     * Frames in flight then lose to the same frames one at a time: a
     * helper that lost its CPU holds its list of two frames, and the
     * caller, which cannot take a claimed node, waits for it (beside a
     * busy loop, bench_frame --frame uniform --load 1: pipelines that
     * always shared ran at 1.27-1.40x serial, the rule kept them serial
     * at 1.02-1.13x, G_run read 0.85-1.04x). So each frame runs alone, after
     * the frames in flight, as G_run runs it: in plan mode or, in the
     * rule's stretches, serial; the rule judges it by its time alone, as
     * it does G_run's plan frames on a crowded CPU (exec/policy.c, "a
     * crowded CPU's plan-mode frames"). */
    bool alone = plan && !shuffled && dagrt_worker_count(rt) > 0 && rt_crowd_now(rt) &&
                 rt_policy_serial_ok(&rk->policy, g);
    rt_choice c = shuffled ? (rt_choice){RT_MODE_SERIAL, RT_JUDGE_TIME}
                  : alone  ? (rt_choice){RT_MODE_SERIAL, RT_JUDGE_PIPE}
                           : rt_exec_choose(rk, g, dagrt_worker_count(rt), RT_FRAME_PIPE, plan,
                                            rule_of(p, rk, g), q->frame_ns);
    if (c.mode == RT_MODE_SERIAL) {
        while (q->inflight > 0)
            if ((rc = wait_oldest(rt, p)) != 0)
                goto out;
        /* (Alone: the rule's own stretch says serial, its state idle now.) */
        graph_rt *o = rule_of(p, rk, g);
        bool share = alone && !rt_policy_pipe_serial(o, rk);
        bool timed = rt_policy_sampled(q->submitted) || (alone && o->policy.time_next);
        uint64_t t0 = timed ? rt_now_ns() : 0;
        uint64_t gen0 = rt->frame_gen;   /* main thread only */
        bool shared = false;
        rc = rt_exec_run_sync(rt, g, p->states[k], ctx, store, src, &fid, share, &shared);
        if (rt->frame_gen != gen0)
            retire_before(rt, q, rk);   /* it started (a frame was numbered), and has ended */
        if (rc == 0) {
            uint64_t ns = timed ? rt_now_ns() - t0 : 0;
            if (timed) {
                q->frame_ns = rt_policy_average_size(q->frame_ns, ns);
                q->period_ns = rt_policy_average_size(q->period_ns, ns);
            }
            if (c.judge == RT_JUDGE_PIPE) {
                if (timed)
                    rk->policy.frame_ns = rt_policy_average_size(rk->policy.frame_ns, ns);
                /* (Alone and meant to share, it ran serial only where the
                 * graph has no plan: no stretch's frame, not judged.) */
                if (alone && (shared || !share))
                    rt_policy_alone_after(o, rk, !shared, timed ? (ns ? ns : 1) : 0);
                else if (!alone)
                    rt_policy_pipe_after(o, rk, timed ? (ns ? ns : 1) : 0);
            }
            q->rt = rt;
            q->submitted++;
            if (p->drop)
                p->drop(ctx);
        }
        goto out;
    }
    if (plan != q->last_plan) {
        while (q->inflight > 0)
            if ((rc = wait_oldest(rt, p)) != 0)
                goto out;
        q->last_plan = plan;
    }
    /* The frame before this one, if it is still in flight: this frame is
     * linked after it. With depth 1 it has always been waited for. */
    graph_rt *prev = NULL;
    if (q->inflight > 0)
        prev = state_rt(p->states[(q->submitted - 1) % q->depth]);
    bool timed = rt_policy_sampled(q->submitted);
    uint64_t t0 = timed ? rt_now_ns() : 0;
    /* Depth 1 never links (the last frame has always been waited for):
     * its completions need no hand-off. */
    /* (q->frame_ns: a frame's time from its start to its wait.) */
    rc = rt_exec_start(rt, g, p->states[k], ctx, store, src, true, q->depth > 1, prev, plan,
                       &fid, q->frame_ns);
    if (rc == 0) {
        if (rk->pplan)   /* (a dynamic frame's state uses held_ns: exec_policy) */
            rk->policy.pipe_ns = call_t0 ? rt_now_ns() - call_t0 : 0;
        q->t_start[k] = t0;
        q->rt = rt;
        q->submitted++;
        q->inflight++;
    }
out:
    leave(q);
    return rc;
}

int dagrt_pipeline_drain(dagrt *rt, dagrt_pipeline *p)
{
    int rc = enter(rt, p);
    if (rc != 0)
        return rc;
    pipe_rt *q = pipe_of(p);
    int first = 0;
    while (q->inflight > 0) {
        rc = wait_oldest(rt, p);
        if (rc == DAGRT_EBUSY || rc == DAGRT_EINVAL) {
            first = rc;
            break;
        }
        if (rc != 0 && first == 0)
            first = rc;   /* a frame's own error: the first one, after all are done */
    }
    leave(q);
    return first;
}

/* An asynchronous wait (exec/await.c): the pipeline taken as a call takes
 * it, from any of rt's threads (frames in flight are rt's), and held
 * until rt_pipe_settle, run on the main thread, has waited for the
 * frames beyond `keep`. */
int rt_pipe_take(dagrt *rt, dagrt_pipeline *p)
{
    if (!rt || !p || pipe_of(p)->magic != PIPE_MAGIC)
        return DAGRT_EINVAL;
    pipe_rt *q = pipe_of(p);
    uint32_t idle = 0;
    /* acquire: as enter's. Failure: relaxed, nothing is touched. */
    if (!atomic_compare_exchange_strong_explicit(&q->owner, &idle, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return DAGRT_EBUSY;
    if (q->inflight > 0 && q->rt != rt) {
        leave(q);   /* release: handed back untouched */
        return DAGRT_EBUSY;
    }
    return 0;
}

uint32_t rt_pipe_inflight(dagrt_pipeline *p) { return pipe_of(p)->inflight; }

int rt_pipe_settle(dagrt *rt, dagrt_pipeline *p, unsigned keep)
{
    pipe_rt *q = pipe_of(p);
    if (!rt)
        rt = q->rt;
    int first = 0;
    while (q->inflight > keep) {
        int rc = wait_oldest(rt, p);
        if (rc == DAGRT_EBUSY || rc == DAGRT_EINVAL) {
            first = rc;
            break;
        }
        if (rc != 0 && first == 0)
            first = rc;   /* a frame's own error: the first one, as drain's */
    }
    leave(q);
    return first;
}
