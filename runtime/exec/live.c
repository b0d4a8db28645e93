/*
 * exec/live.c - live costs: plan mode times its own nodes now and then and
 * makes a state's plan again, between frames, when the costs it measures
 * have drifted from the ones the plan was made from (dagrt_config.live_costs,
 * DAGRT_LIVE_COSTS; docs/runtime.md, "Live costs").
 *
 * - Measuring: every live_costs-th plan-mode frame of a state (G_run's
 *   plan frames, started runs and pipeline frames on the lists) is timed:
 *   its runner reads the clock before and after each node it runs on a
 *   list (rt_live_timed, from plan_do in exec/plan.c), and folds the time
 *   into the node's cost_live (ns; 0: never measured). A node runs once a
 *   frame on one thread, and a run's end orders everything its runners did
 *   before the caller's next look, so the runner alone writes the field
 *   during a run and the caller reads it between runs. A planned state's
 *   serial frames (the run policy's stretches) are timed the same way, on
 *   the caller. Not timed: nodes that run off the lists (fiber and hot
 *   tasks, whose time may be a wait), dynamic frames, frames of a state
 *   without a plan (too small to share). A parallel task's time is its
 *   claimer's wall time over the whole range.
 * - Smoothing: what disturbs a node's time (a preemption, a page fault,
 *   a cache another core took) only ever lengthens it, so a sample below
 *   the cost so far is taken as it is, and one above it counts half,
 *   clamped to 4 times the cost: one disturbed run moves a cost up by at
 *   most 2.5x and the next undisturbed one takes it back, while a real
 *   rise of 50x is reached in five samples.
 * - The threshold: the plan's lists' loads in the current costs. Its
 *   "excess" is the heaviest list's load beyond an even share (work /
 *   lists): the time the frame waits on that list alone. The plan is made
 *   again when the excess has grown, since the plan was made, by more than
 *   an eighth of an even share and by more than LIVE_FLOOR_NS, at two
 *   timed frames in a row (one disturbed sample never re-plans). After a
 *   re-plan the basis is the new plan's excess, so a re-plan that cannot
 *   do better (a builder that ignores costs, a frame that cannot be
 *   balanced) is not repeated until the costs move again: the hysteresis.
 *   The basis also follows the excess down at each look, so that a plan
 *   made from a cost that read high is judged by the costs once they read
 *   true again.
 * - When: only at a frame's start, on the caller, with the state idle and
 *   no other frame reading it: before a G_run or a started run; for a
 *   pipeline (exec/pipe.c), after the frames in flight are waited for
 *   (a frame in flight reads the `done` words of the frame before, which a
 *   new plan resets), then every state of the pipeline from the same
 *   costs, so that its frames keep one plan (tests/models/live_replan.pml).
 *   The drift is only looked at after a timed frame. Nothing allocates:
 *   rt_plan_build works in the nodes' own fields.
 */
#include "exec.h"

/* The excess must grow by at least this much (ns) to re-plan: below it a
 * frame gains nothing a re-plan's wake-up noise would not eat. */
#define LIVE_FLOOR_NS 20000u

/* The plan's lists' loads in the current costs: the heaviest list's
 * excess over an even share, and that share. */
static void live_loads(const graph_rt *r, uint64_t *excess, uint64_t *share)
{
    uint64_t load[PLAN_LISTS] = {0};
    uint32_t nl = r->nlists > PLAN_LISTS ? PLAN_LISTS : r->nlists;
    for (uint32_t i = 0; i < r->nnodes; i++) {
        uint32_t k = r->nodes[i].plan.list;
        if (k < nl && r->g->nodes[i].kind != DAGRT_NODE_GATE)
            load[k] += rt_plan_node_cost(r, i);
    }
    uint64_t work = 0, most = 0;
    uint32_t used = 0;
    for (uint32_t k = 0; k < nl; k++) {
        work += load[k];
        most = load[k] > most ? load[k] : most;
        used += r->lhead[k] != NONE;
    }
    *share = used ? work / used : work;
    *excess = most - *share;
}

void rt_live_planned(graph_rt *r)
{
    uint64_t hsum = 0;
    for (uint32_t k = 0; k < PLAN_LISTS; k++)
        r->lmaxq[k] = 0;
    for (uint32_t i = 0; i < r->nnodes; i++) {
        uint32_t c = rt_plan_node_cost(r, i);
        uint32_t q = c / PLAN_Q_NS + (c % PLAN_Q_NS != 0);
        uint16_t q16 = (uint16_t)(q > UINT16_MAX ? UINT16_MAX : q);
        r->nodes[i].qcost = q16;
        uint32_t k = r->nodes[i].plan.list;
        if (k < PLAN_LISTS && q16 > r->lmaxq[k])
            r->lmaxq[k] = q16;
        if (k != 0)
            hsum += q16;
    }
    r->hsumq = hsum > UINT32_MAX ? UINT32_MAX : (uint32_t)hsum;
    uint64_t share;
    live_loads(r, &r->live_excess0, &share);
}

bool rt_live_drifted(graph_rt *r)
{
    if (r->rt->cfg.live_costs == 0 || !r->live_sample)
        return false;   /* off, or nothing measured since the last look */
    /* A helper of the last run still inside (exec/plan_run.c, "the held
     * return") reads the plan: look again at a later frame rather than
     * wait for it. relaxed: rt_plan_build's wait acquires. */
    if (atomic_load_explicit(&r->late, memory_order_relaxed) != 0)
        return false;
    uint64_t excess, share;
    live_loads(r, &excess, &share);
    /* The basis follows the costs down (see the top): a plan made while a
     * node's cost read high (a preempted run, twice) kept that excess as
     * its basis, and a later real change that fell short of it never
     * re-planned (live_costs under load: no re-plan after the change). */
    if (excess < r->live_excess0)
        r->live_excess0 = excess;
    bool now = excess > r->live_excess0 + share / 8 && excess - r->live_excess0 > LIVE_FLOOR_NS;
    bool twice = now && r->live_drift;
    r->live_drift = now;
    r->live_sample = 0;   /* looked at: wait for the next timed frame */
    return twice;
}

void rt_live_replan(graph_rt *r)
{
    /* The run policy's state is the frames' (their starvation rule), not
     * the plan's: a re-plan keeps it (rt_plan_build starts it afresh). */
    exec_policy keep = r->policy;
    if (!rt_plan_build(r)) {
        r->plan_state = RT_PLAN_REFUSED;   /* (the same tables built before: not seen) */
        return;
    }
    r->policy = keep;
    rt_live_planned(r);
    r->live_sample = 0;
    r->live_drift = 0;
    r->replans++;
}

void rt_live_frame(graph_rt *r, int mode)
{
    uint32_t every = r->rt->cfg.live_costs;
    r->live_sample = 0;
    /* Serial frames of a planned state too (the run policy's stretches,
     * exec/policy.c): the plan is still the state's, and its costs are
     * measured best with nothing beside them. */
    bool planned = mode == RT_MODE_PLAN || mode == RT_MODE_PPLAN ||
                   (mode == RT_MODE_SERIAL && rt_exec_planned(r, r->g));
    if (every == 0 || !planned)
        return;
    if (++r->live_wait >= every) {
        r->live_wait = 0;
        r->live_sample = 1;
    }
}

uint8_t rt_live_timed(graph_rt *r, uint32_t i, node_where where)
{
    uint64_t t0 = rt_now_ns();
    uint8_t st = rt_exec_node_on(r, i, where);
    uint64_t ns = rt_now_ns() - t0;
    uint32_t *c = &r->nodes[i].plan.cost_live;
    uint64_t old = *c;
    if (ns == 0)
        ns = 1;
    else if (old != 0 && ns > old)
        ns = (old + (ns > 4 * old ? 4 * old : ns)) / 2;   /* up: half, clamped (see the top) */
    *c = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
    return st;
}

void rt_live_copy(graph_rt *r, const graph_rt *src)
{
    uint32_t n = r->nnodes < src->nnodes ? r->nnodes : src->nnodes;
    for (uint32_t i = 0; i < n; i++)
        r->nodes[i].plan.cost_live = src->nodes[i].plan.cost_live;
}
