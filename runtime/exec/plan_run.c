/*
 * exec/plan_run.c - a whole G_run frame in plan mode, the caller's side:
 * the epoch, the offer to the helpers, the caller's own part
 * (rt_plan_work, exec/plan.c), the wait for the helpers' last nodes and
 * the end of the offers; the helpers' lists' start.
 */
#include "exec.h"

/* A run's start for the helpers' lists (G_run's and a pipelined frame's):
 * their cursors and owners, and nothing stolen yet. Relaxed stores: the
 * offer (release) publishes them. */
void rt_plan_begin_lists(graph_rt *r)
{
    r->stolen = 0;
    r->stolenq = 0;
    r->hold_t0 = 0;
    r->held_ns = 0;
    for (uint32_t k = 1; k < r->nlists; k++) {
        atomic_store_explicit(rt_plan_cursor(r, k), r->lhead[k], memory_order_relaxed);
        atomic_store_explicit(&r->owner[k], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&r->xsteal, 0, memory_order_relaxed);
}

/* The end of a run's offers, once every node is claimed: closes the
 * tickets no helper joined, waits until the helpers of the others left. */
void rt_plan_end_all(graph_rt *r)
{
    plan_slot *s = r->rt->exec;
    for (uint32_t j = 0; j < r->noffer; j++)
        rt_plan_end(s, r, r->pticket + j);
}

/* A whole run in plan mode. */
int rt_plan_run(graph_rt *r)
{
    if (++r->epoch == 0) {
        /* 2^32 runs: `done` words from the last wrap could match again. */
        for (uint32_t i = 0; i < r->nnodes; i++)
            /* relaxed: as in rt_plan_build: before the run is offered. */
            atomic_store_explicit(&r->nodes[i].plan.done, 0, memory_order_relaxed);
        r->epoch = 1;
    }
    const uint32_t epoch = r->epoch;
    plan_slot *s = rt_plan_slot_of(r->rt);
    r->pplan = 0;
    r->pprev = NULL;   /* G_run: `prev` inputs hold from the start */
    r->pnext = NULL;   /* and no frame after it to look ahead into */
    r->caller_cpu = rt_cpu_now();
    rt_plan_begin_lists(r);
    /* The caller's first node, if it is a root, is claimed before the run
     * is offered: nobody else can claim it yet, so a plain store does it,
     * and the offer's stores below (to lines the helpers poll) drain
     * during its body instead of before a locked claim. */
    uint32_t first = r->lhead[0];
    if (first != NONE && r->nodes[first].plan.npl == 0 && !r->plan_off) {
        atomic_store_explicit(&r->cursor0, r->nodes[first].plan.lnext, memory_order_relaxed);
    } else {
        atomic_store_explicit(&r->cursor0, first, memory_order_relaxed);
        first = NONE;
    }
    r->waking = 0;
    r->noffer = 0;
    r->pticket = 0;
    rt_plan_off_begin(r);
    /* Before the offer, which may spawn one: was a helper running? */
    bool awake = s && rt_plan_helper_awake(s);
    if (s)
        rt_plan_offer(s, r);
    rt_plan_work(r, 0, true, NODE_ON_THREAD, first);   /* dagrt_graph_run refuses fibers */
    rt_plan_unhold(r);
    if (r->noffer == 0)
        return rt_plan_off_end(r);   /* no helper list offered: the caller ran everything */
    /* The caller ran most of the helpers' lists and no helper was running
     * at the offer: if one was asked for only just now, it is waking up
     * (slow, not starved: exec/policy.c). A clock read only then. */
    if (r->stolen > r->nlistw / 2 && !awake)
        r->waking = rt_plan_helper_waking(s);
    /* Every node is claimed; helpers may still run their last ones. */
    if (r->stolen == 0 && !r->plan_off) {
        /* Each helper list was run by a helper that joined it, unless
         * helpers took nodes of each other's lists (xsteal; so too a list
         * no helper joined, or that was not offered): then a list's last
         * node may have been run by a helper that went on. Else each
         * helper's last access to r is the publication of its list's last
         * node (rt_plan_work). acquire: its effects, and all the helper's,
         * before we return (and before xsteal is read). */
        for (uint32_t k = 1; k < r->nlists; k++) {
            if (r->ltail[k] == NONE)
                continue;
            _Atomic uint32_t *d = &r->nodes[r->ltail[k]].plan.done;
            for (unsigned spins = 0; atomic_load_explicit(d, memory_order_acquire) != epoch;) {
                rt_plan_relax(r, 0, ++spins);
                rt_plan_hold(r, spins);
            }
        }
        rt_plan_unhold(r);
        /* relaxed: ordered by the acquires above (graph_rt.xsteal). With
         * one helper list there is no other helper to take from. */
        if (r->nlists <= 2 || atomic_load_explicit(&r->xsteal, memory_order_relaxed) == 0)
            return 0;
    }
    /* We, or helpers of other lists, took nodes of a helper's list:
     * perhaps no helper joined it. Close its ticket if so; else wait until
     * its helper left (exec/plan_helper.c). */
    rt_plan_end_all(r);
    rt_plan_unhold(r);
    return rt_plan_off_end(r);
}
