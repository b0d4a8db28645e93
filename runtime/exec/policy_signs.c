/*
 * exec/policy_signs.c - the run policy's reports (exec/exec.h,
 * "exec/policy.c"): each mode's frame into the starvation rule of
 * exec/policy.c, with its own clock-free sign that a worker got no CPU:
 * plan mode's "held" and the share of the helper's list the caller took,
 * the dynamic executor's held waits (and the caller's clock for them),
 * a pipeline's frames into its one rule. The rule itself, its stretches,
 * probes and windows, is exec/policy.c's.
 */
#include "exec.h"

/* Held, in plan mode: the caller waited, with nothing it could take,
 * longer than the helpers' work in the frame (their lists' costs less
 * what it took of them: rt_plan_hold times only waits of
 * PLAN_STEAL_SPINS polls and more), and at least PLAN_HELD_NS and
 * HELD_SHARE times its usual such wait. The frame then ran slower than
 * serial would have: the caller alone runs the helpers' work in less than
 * it waited. While a helper runs, the caller's wait for it is at most the
 * work the helper does meanwhile; a longer one is a helper that lost its
 * CPU (preempted holding a node, or stopped), which neither of the other
 * signs sees: the caller cannot take a claimed node (nothing stolen), and
 * the timed frames are one in EXEC_TIME_EVERY and clamped, so a stall of
 * milliseconds every hundred frames, which doubles a small frame's mean,
 * passes them by. The usual wait (wait_ns, as the dynamic executor's)
 * keeps a graph whose costs are unknown, or too low, and whose caller
 * always waits long for its helpers, from reading as held. */
#define PLAN_HELD_NS 250000u
#define HELD_SHARE 2

static bool plan_held(exec_policy *p, uint64_t held, uint64_t gain_ns)
{
    bool sign = held >= PLAN_HELD_NS && held > gain_ns && held > HELD_SHARE * p->wait_ns;
    /* Every judged frame enters the usual wait, at most twice the average
     * (one stall moves it an eighth); the first at most the helpers' work,
     * so that a first frame held while the helper started up cannot hide
     * the frames after it. */
    p->wait_ns = p->wait_ns ? rt_policy_average_clamped(p->wait_ns, held) : (held < gain_ns ? held : gain_ns);
    return sign;
}

static uint64_t plan_gain_ns(const graph_rt *r)
{
    return (uint64_t)(r->hsumq > r->stolenq ? r->hsumq - r->stolenq : 0) * PLAN_Q_NS;
}

/* A plan-mode frame's end: starved when the caller claimed more than half
 * of list 1, or when it was held (above). */
static void plan_after(graph_rt *r, uint64_t ns)
{
    /* Not with live costs (exec/live.c): there a frame after the work
     * changed waits on costs the plan no longer matches until the re-plan,
     * which the plan frames' measurements make, and a stretch would put
     * off. */
    bool held = !r->policy.was_serial && !r->waking && r->rt->cfg.live_costs == 0 &&
                plan_held(&r->policy, r->held_ns, plan_gain_ns(r));
    /* On a crowded CPU, the clock alone (exec/policy.c, "a crowded CPU's
     * plan-mode frames"). */
    rt_policy_judge(r, r->stolen > r->nlistw / 2 || held, held, ns, r->rt->cfg.live_costs == 0,
                    rt_crowd_now(r->rt));
}

/* ------------------------------------- the dynamic executor's frames
 *
 * The same rule, with the dynamic executor's own sign. Its ready list
 * belongs to no thread: what a drainer has not popped yet, the caller
 * drains itself, and a drainer task that no worker has begun is run by the
 * caller's group wait (it finds the list empty and returns), so work
 * meant for a drainer that has not started is taken back as it is. What
 * the caller cannot take back is a node a drainer has popped: a drainer
 * preempted there (a competing thread on its core) or a worker that does
 * not come back to finish its drainer (blocked in a system call) holds the
 * frame, and the caller waits, blocked, on the run's group. So the caller
 * times its blocked waits (only those: it reads the clock only when it
 * has nothing to do anyway), and a frame is "held" when they came to at
 * least PLAN_WAKE_NS and to more than twice their usual share (the clamped
 * average of the frames shared before, so that a graph whose nodes are
 * simply long, and whose caller always waits for them, is not held).
 * Held, or slower than the last stretch's serial frames (timed frames of
 * dagrt_graph_run), starts a serial stretch: dagrt_graph_run runs those
 * frames serial (or on the caller alone where hot or fiber tasks forbid
 * serial), a started run's or a pipeline frame's wait takes the frame
 * back from its drainers (graph_rt.closed: the caller runs the rest), and
 * the probes return to sharing as in plan mode.
 * Slow to wake: a frame that started while every worker was parked
 * (announced idle and no longer polling) is not judged, unless the caller
 * was held for PLAN_WAKE_NS anyway; a worker that is busy elsewhere, or
 * blocked in a system call, is not parked, so its frames are judged. */
bool rt_policy_stretch(graph_rt *r)
{
    r->policy.was_serial = r->policy.serial_left > 0;
    r->policy.held_ns = 0;
    r->policy.stretch_runs += r->policy.was_serial;
    return r->policy.was_serial;
}

/*
 * On a crowded CPU (exec/crowd.c: more threads want the CPUs than there
 * are) the clock judges, not "held". There every thread, the caller's too,
 * loses its CPU for the scheduler's slices, milliseconds, and a drainer
 * preempted while it holds a node holds the frame that long: frames that
 * share are held every few frames, each a verdict that started a stretch
 * (16 frames and more, doubling), though sharing beat serial on average
 * (bench_frame --load 1, the layered frame: a third of G_run's frames ran
 * serial, 0.99x serial, where the peers that always share ran 0.83-0.88x).
 * What decides is whether shared frames take longer than serial ones, so
 * while crowded a held frame starts no stretch; the timed frames do
 * (above: their clamped average against the last stretch's serial frames,
 * and the probe window), and where the rule has no serial time yet it runs
 * the reference stretch (REF_SAMPLES) to measure one. Started runs and
 * pipeline frames are not timed here: while crowded they keep sharing
 * (frames in flight give the caller other frames' nodes while a drainer
 * holds one). */
void rt_policy_dyn_after(graph_rt *r, bool timed, uint64_t ns)
{
    exec_policy *p = &r->policy;
    if (timed)
        p->frame_ns = rt_policy_average_size(p->frame_ns, ns);
    uint64_t held = p->held_ns;
    bool long_wait = held >= PLAN_WAKE_NS;
    bool crowded = rt_crowd_now(r->rt);
    bool sign = long_wait && held > HELD_SHARE * p->wait_ns && !crowded;
    if (long_wait)
        r->waking = 0;   /* late, not waking: judged */
    if (!p->was_serial && !r->waking)
        p->wait_ns = rt_policy_average_clamped(p->wait_ns, held);
    rt_policy_judge(r, sign, sign, timed ? (ns ? ns : 1) : 0, crowded, false);
}

/* ------------------------------------------------------ after a frame */

/* A pipeline's frames in flight belong to several states, one rule: each
 * state keeping its own would probe, and be held by a starved worker at
 * each probe, once per state (depth times as often), and a stretch begun
 * by one state's frame would leave the others sharing until their own
 * frames failed. So the pipeline's first state holds the rule for all.
 * A frame still in flight when a stretch began (it was offered before) is
 * not judged: its verdict is the one that began the stretch. */
bool rt_policy_pipe_serial(graph_rt *o, graph_rt *r)
{
    bool serial = o->policy.serial_left > 0;
    r->policy.was_serial = serial;
    r->policy.stretch_runs += serial;   /* counted in the frame's own state */
    return serial;
}

void rt_policy_pipe_after(graph_rt *o, graph_rt *r, uint64_t ns)
{
    bool serial = r->policy.was_serial;
    if (!serial && o->policy.serial_left > 0) {
        return;
    }
    rt_policy_serial_ok(&o->policy, r->g);   /* (work_slices: this graph's) */
    /* (A pipeline's sign counts at once: "one sign is not starved".) */
    rt_policy_judge_in(&o->policy, r->g, serial, !serial && r->waking,
                       !serial && r->stolen > r->nlistw / 2, true, ns,
                       r->rt->cfg.live_costs == 0, false);
}

/* A pipeline's frame run alone (exec/pipe.c: crowded, tiny nodes): into
 * the pipeline's rule, as a G_run frame on a crowded CPU, by its time
 * alone. */
void rt_policy_alone_after(graph_rt *o, graph_rt *r, bool serial, uint64_t ns)
{
    rt_policy_serial_ok(&o->policy, r->g);   /* (work_slices: this graph's) */
    rt_policy_judge_in(&o->policy, r->g, serial, !serial && r->waking, false, false, ns,
                       r->rt->cfg.live_costs == 0, true);
}

void rt_policy_after(graph_rt *r, bool timed, uint64_t ns, bool planned)
{
    if (timed)
        r->policy.frame_ns = rt_policy_average_size(r->policy.frame_ns, ns);
    if (planned)
        plan_after(r, timed ? (ns ? ns : 1) : 0);   /* a timed frame never reads as untimed */
}

/* The dynamic executor's caller (exec/dyn_wait.c, rt_dyn_finish). A poll for
 * pieces begun at *t0 (0: none) ended at `now` (0: read it):
 * its time counts as the blocked wait it replaced would (rt_policy_held_wait). */
void rt_policy_poll_end(graph_rt *r, uint64_t *t0, uint64_t now)
{
    if (*t0 != 0 && r->max_drainers != 0)
        r->policy.held_ns += (now ? now : rt_now_ns()) - *t0;   /* the caller's own field */
    *t0 = 0;
}

/* The caller's blocked wait on the run's group, timed for the run
 * policy's "held" sign: only here, where the caller has
 * nothing to do, does it read the clock. A run without drainers is never
 * held by one (a hot or fiber task it waits for is work it could not
 * run itself), so it is not timed. */
int rt_policy_held_wait(graph_rt *r)
{
    if (r->max_drainers == 0)
        return dagrt_group_wait(r->rt, &r->group);
    uint64_t t0 = rt_now_ns();
    int rc = dagrt_group_wait(r->rt, &r->group);
    r->policy.held_ns += rt_now_ns() - t0;   /* the caller's own field */
    return rc;
}
