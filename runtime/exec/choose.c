/*
 * exec/choose.c - the one choice of how a frame runs (exec/exec.h,
 * "exec/choose.c"): serial, plan mode, pipelined plan mode or the dynamic
 * executor, from the run policy's answers (exec/policy.c) and the plan,
 * made here and nowhere else.
 */
#include "exec.h"

#include <string.h>

/* How a frame runs is chosen here and nowhere else: dagrt_graph_run,
 * dagrt_graph_start (and a pipeline's frame once started) and a
 * pipeline's next frame all ask rt_exec_choose, and act on its answer.
 * - The shuffled serial switch: serial whenever nothing must run
 *   elsewhere (exec/serial.c then shuffles the frame).
 * - Too small to share (the average frame time) and nothing that must run
 *   elsewhere: serial, on the caller (a pipeline's frame after the frames
 *   in flight).
 * - dagrt_graph_run, with workers, worth sharing, plan mode allowed (not
 *   DAGRT_PIPE=dynamic, and the process not crowded: rt_crowd_frames) and a
 *   plan for the graph: plan mode, or serial during a stretch of the
 *   starvation rule (exec/policy.c) where the graph may run serial; otherwise the
 *   dynamic executor, or serial (hot or fiber tasks: the dynamic executor
 *   with no drainer) during its stretches.
 * - A started run: pipelined plan mode where plan mode is allowed (as
 *   above; a pipeline decides for its frames, exec/pipe.c) and the
 *   graph has a plan (any worker count from one), else the dynamic
 *   executor, which notes a stretch (the run's wait takes the frame back).
 * - A pipeline's next frame in plan mode whose pipeline's rule is in a
 *   stretch, with a graph that may run serial: serial after the frames in
 *   flight, judged by that rule; else it is started (above).
 * The plan is made in one place (rt_exec_plan), and DAGRT_PIPE is read
 * once per process (rt_exec_env_plan). */

bool rt_exec_env_plan(void)
{
    /* 0 not read yet, 1 plan mode allowed, 2 DAGRT_PIPE=dynamic. relaxed:
     * every thread that reads the environment finds the same answer. */
    static _Atomic int cached;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v == 0) {
        const char *mode = rt_os_getenv("DAGRT_PIPE");
        v = mode && strcmp(mode, "dynamic") == 0 ? 2 : 1;
        atomic_store_explicit(&cached, v, memory_order_relaxed);   /* relaxed: as above */
    }
    return v == 1;
}

bool rt_exec_plan(graph_rt *r)
{
    if (r->plan_state == RT_PLAN_NONE) {
        r->plan_state = rt_plan_build(r) ? RT_PLAN_MADE : RT_PLAN_REFUSED;
        r->plan_g = r->g;
        if (r->plan_state == RT_PLAN_MADE)
            rt_live_planned(r);   /* the costs it was made from (exec/live.c) */
    }
    return r->plan_state == RT_PLAN_MADE;
}

rt_choice rt_exec_choose(graph_rt *r, const dagrt_graph *g, int workers, rt_frame_kind kind,
                         bool plan, graph_rt *rule, uint64_t frame_ns)
{
    exec_policy *p = &r->policy;
    /* The shuffled serial switch: every frame that may run serial does
     * (exec/serial.c shuffles it); a started run stays dynamic (below).
     * (A pipeline's frame asks rt_exec_shuffle_serial first: its idle
     * state may not know its runtime yet.) */
    if (kind == RT_FRAME_RUN && rt_exec_shuffle_serial(r->rt, r, g))
        return (rt_choice){RT_MODE_SERIAL, RT_JUDGE_TIME};
    if (kind == RT_FRAME_START) {
        /* (A started run is judged at its wait: exec/exec.c, exec/pipe.c.) */
        if (plan && workers >= 1 && rt_exec_plan(r))
            return (rt_choice){RT_MODE_PPLAN, RT_JUDGE_TIME};
        /* In a stretch, drainers still start the frame (it goes on while
         * the caller is away); its wait takes back what they have not
         * popped. */
        if (workers > 0)
            (void)rt_policy_stretch(r);
        return (rt_choice){RT_MODE_DYNAMIC, RT_JUDGE_TIME};
    }
    bool small = rt_policy_small(kind == RT_FRAME_PIPE ? frame_ns : p->frame_ns, g->nnodes);
    if (small && rt_policy_serial_ok(p, g))
        return (rt_choice){RT_MODE_SERIAL, RT_JUDGE_TIME};
    if (kind == RT_FRAME_PIPE) {
        /* Only a state planned for g is asked (its policy is that plan's;
         * the state is idle here, its last frame waited for). */
        if (plan && rt_exec_planned(r, g) && rt_policy_serial_ok(p, g) && rt_policy_pipe_serial(rule, r))
            return (rt_choice){RT_MODE_SERIAL, RT_JUDGE_PIPE};
        return (rt_choice){RT_MODE_PPLAN, RT_JUDGE_PIPE};   /* started: RT_FRAME_START decides */
    }
    /* (plan false: the process is crowded, exec/crowd.c; the dynamic
     * executor below, with its stretches.) */
    if (workers >= 1 && !small && plan && rt_exec_env_plan() && rt_exec_plan(r)) {
        /* The starvation rule's stretches only for graphs whose nodes may
         * all run serial (no hot or fiber task); others always run the
         * plan (the caller takes what no helper does). */
        if (!rt_policy_serial_ok(p, g))
            return (rt_choice){RT_MODE_PLAN, RT_JUDGE_TIME};
        return (rt_choice){rt_policy_plan_serial(r) ? RT_MODE_SERIAL : RT_MODE_PLAN, RT_JUDGE_PLAN};
    }
    if (workers == 0 || small)
        return (rt_choice){RT_MODE_DYNAMIC, RT_JUDGE_TIME};
    if (rt_policy_stretch(r))
        return (rt_choice){rt_policy_serial_ok(p, g) ? RT_MODE_SERIAL : RT_MODE_ALONE, RT_JUDGE_DYN};
    return (rt_choice){RT_MODE_DYNAMIC, RT_JUDGE_DYN};
}

bool rt_exec_shuffle_serial(dagrt *rt, graph_rt *r, const dagrt_graph *g)
{
    return RT_UNLIKELY(rt_shuffled(rt)) && rt_policy_serial_ok(&r->policy, g);
}
