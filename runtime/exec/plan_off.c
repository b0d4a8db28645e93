/*
 * exec/plan_off.c - plan mode's nodes that run elsewhere: fiber and hot
 * nodes dispatched as runtime tasks that store their own `done` epoch,
 * and the help a plan thread gives the pool (those tasks, a parallel
 * node's pieces) while it waits. Separate from exec/plan.c (the lists, cursors and claims) because
 * none of it is on the path of a plain node: plan_do's one flag test
 * there sends a node here, and the per-node helpers it shares with
 * exec/plan.c (rt_plan_publish, rt_plan_hot_waiting) are static inline in
 * exec/exec.h.
 */
#include "exec.h"

/* ------------------------------------------ nodes that run elsewhere
 *
 * Plan mode serves every graph's flags; each node is still claimed from
 * its list when it is ready, and only what happens at the claim differs:
 * - `fiber` nodes (and `hot` ones, where the runtime has hot workers) must
 *   run where their flag says: the claimer spawns the node as a runtime
 *   task with its flags (DAGRT_SPAWN_FIBER, DAGRT_SPAWN_HOT), counted in
 *   the run's group, and goes on with its list at once. The task runs the
 *   node and stores its `done` epoch with release, exactly as a list's
 *   runner does (rt_plan_publish), so successors, of this frame or of the
 *   next one in a pipeline, read it like any other node's. The caller waits for
 *   the group before the run ends (rt_plan_off_end), and for a graph with
 *   such nodes always takes the helper's end through its ticket (the
 *   helper's "last publication" shortcut assumes it published everything
 *   of its list itself).
 * - `hot` nodes without hot workers run on the thread that claims them: in
 *   plan mode that is the moment they are ready, ahead of everything later
 *   on either list, which is what the hot lane gives them elsewhere.
 * - `parallel` nodes run on the claimer through dagrt_parallel_for, which
 *   shares the range with the pool.
 * - A plan thread with nothing ready in such a graph helps: it runs one
 *   task the runtime has for it (hot lane first), every few polls, so a
 *   spawned node or a parallel node's pieces never wait for a thread while
 *   one polls; with `hot` nodes spawned, both threads also look at the hot
 *   lane before each claim, so hot work overtakes the lists.
 * - `on main` always wins: such a node (never hot or fiber: dagc and the
 *   spawn refuse the mix) is run by the caller on its own stack. */

/* A spawned node's task: runs node i, then publishes it (rt_plan_publish).
 * Its epoch is its state's current one: the state is reused only after
 * the run's end has waited for this task (rt_plan_off_end). */
static void plan_off_entry(void *arg)
{
    node_rt *n = arg;
    graph_rt *r = n->run;
    uint32_t i = (uint32_t)(n - r->nodes);
    uint8_t st = rt_exec_node(r, i);
    rt_plan_publish(r, i, st, r->epoch);
}

/* One poll's help to the pool (see above). */
void rt_plan_help(graph_rt *r, node_where where)
{
    if (where != NODE_ON_THREAD)
        return;   /* a plan thread on a fiber stack does not run tasks nested on it */
    rt_ctx *c = rt_ctx_current(r->rt);
    if (c && rt_work_visible(c))
        (void)rt_help_one(c);
}

/* A plan thread waiting for its list's next node (rt_plan_help_for). */
typedef struct plan_wait {
    graph_rt *r;
    uint32_t k, i, epoch;
} plan_wait;

static bool plan_wait_over(void *p)
{
    const plan_wait *w = p;
    return rt_plan_next_ready(w->r, w->k, w->i, w->epoch);
}

void rt_plan_help_for(graph_rt *r, node_where where, uint32_t i, uint32_t epoch)
{
    if (where != NODE_ON_THREAD)
        return;
    rt_ctx *c = rt_ctx_current(r->rt);
    if (!c || !rt_work_visible(c))
        return;
    /* The list: the one whose next node i is (its own, i waits on it). */
    plan_wait w = {r, r->nodes[i].plan.list, i, epoch};
    rt_pfor_busy_hook(plan_wait_over, &w);
    (void)rt_help_one(c);
    rt_pfor_busy_hook(NULL, NULL);
}

/* Claimed node i, whose flags send it off the lists (exec/plan.c's
 * plan_do): spawned as a task with its flags (see above); its task
 * publishes it. */
void rt_plan_off_spawn(graph_rt *r, uint32_t i, node_where where)
{
    uint32_t f = r->g->nodes[i].flags;
    unsigned sf = ((f & DAGRT_NODE_FIBER) ? DAGRT_SPAWN_FIBER : 0u) |
                  ((f & DAGRT_NODE_HOT) ? DAGRT_SPAWN_HOT : 0u);
    while (rt_spawn_own(r->rt, &r->group, plan_off_entry, &r->nodes[i], sf) != 0) {
        /* Out of task memory: the node must still run where its flag says;
         * let running tasks finish and free theirs. */
        rt_plan_help(r, where);
        rt_os_yield();
    }
    /* A task spawned on a worker's private tail (runtime/core/work.c) is stolen
     * only once exposed; this thread may poll for a while before it next
     * spawns or takes, so expose it now. */
    rt_ctx_publish_tail(rt_ctx_current(r->rt));
}

void rt_plan_off_begin(graph_rt *r)
{
    if (r->plan_off)
        dagrt_group_init(&r->group);
}

int rt_plan_off_end(graph_rt *r)
{
    /* The group wait's acquire orders every spawned node's effects (and its
     * `done`) before the run's end; it helps while it waits. */
    return r->plan_off ? dagrt_group_wait(r->rt, &r->group) : 0;
}
