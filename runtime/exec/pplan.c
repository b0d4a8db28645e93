/*
 * exec/pplan.c - pipelined plan mode: a pipeline's frames (exec/pipe.c) on
 * plan mode's lists (exec/plan.c), for runtimes with workers.
 *
 * The dynamic executor links frame N+1 to frame N with a hand-off per node
 * (an exchange by the completer and one by the submitter, then counts into
 * the next frame's join counters): several locked instructions per node and
 * frame, on lines the other core wrote last. Plan mode needs none of them:
 * a node's readiness is read, never counted, from its inputs' `done`
 * epochs, so a frame linked after the one before simply reads that frame's
 * state too:
 * - Each frame runs on its own state (the pipeline's slot), with the same
 *   plan (every state of the pipeline builds the same lists from the same
 *   tables) and its own epoch. Node i of frame N+1 is ready once its inputs
 *   of frame N+1 are done (== its epoch) and, while frame N was in flight
 *   when N+1 was offered, node i and i's `prev` inputs of frame N have
 *   reached frame N's epoch ("at or after": frame N's state may be running
 *   frame N+D already once frame N was waited for; exec/plan.c,
 *   plan_ready). That is docs/language.md's table: AND, all of them; OR,
 *   (an input of N+1 or a `prev` input of N) and itself of N.
 * - The helpers serve the frames in the order they were offered
 *   (exec/plan_helper.c: a ticket per helper list and frame), each running
 *   a list frame after frame, so the same node of consecutive frames
 *   usually runs on one thread, in list order, and the same-node test
 *   reads a line in its own cache (with one helper always; with more, a
 *   helper takes the first ticket it wins, which is often, not always, the
 *   same list as in the frame before). A frame offered while helpers
 *   still serve the frame before gets helpers of its own where workers
 *   are spare, up to the plan's bound (rt_plan_spare_helpers): frames in
 *   flight then run side by side, a chain's frames too. While the caller is away (between
 *   its pipeline calls) a helper also takes the caller's ready nodes,
 *   except `on main` ones, and those of helper lists nobody runs; with
 *   nothing to run for PLAN_LINGER_NS while the caller is away (not in
 *   an earlier frame's wait, which looks ahead into this one: owner0) it
 *   leaves the frame to the caller's wait, or goes on to the next frame
 *   offered.
 * - The caller's part is in the frame's wait (frames are waited for oldest
 *   first): its list, then whatever is left of the helpers', exactly as in
 *   a G_run plan run; then each ticket's end (closed if no helper joined,
 *   else waited for until its helper left). While the caller can run
 *   nothing of the frame it waits for, it looks ahead: it claims ready
 *   nodes of the frames in flight after it (its own list of each, `on
 *   main` nodes included),
 *   by the same cursor CAS as in the frame's own wait. That is what lets
 *   frame N+1's first `on main` node (a game's input) run while frame N
 *   still waits for its last nodes; without it, a frame's caller list
 *   would start only once every earlier frame was over.
 * - A frame's state is reused D frames later, after its wait returned, so
 *   nobody runs its nodes any more; the frame after it may still read its
 *   `done` words, which only move forward.
 * - Nodes that run elsewhere (fiber nodes, hot ones with hot workers:
 *   exec/plan.c) complete off the lists, on a runtime task that stores
 *   their `done` as a list's runner would; the next frame reads it the
 *   same way. A frame's wait ends with the wait for those tasks, so its
 *   state is reused only after all of them are over.
 * - Started instances (dagrt_graph_start) use the same frames, never
 *   linked (prev NULL: `prev` inputs hold from the start), their wait the
 *   caller's part; waits may come in any order, since a frame needs no
 *   other frame and the caller can run all of its own.
 * Not served here (the dynamic executor runs them, docs/runtime.md):
 * graphs a plan cannot hold (exec/plan.c, rt_plan_build), runtimes
 * without a worker, and DAGRT_PIPE=dynamic.
 */
#include "exec.h"

void rt_pplan_start(graph_rt *r, graph_rt *prev)
{
    /* A G_run on this state may have left a helper inside (exec/plan_run.c,
     * "the held return"), which reads pplan and pprev: rewritten below. */
    rt_plan_late_wait(r);
    /* Epochs only move forward and skip 0 (the `done` words' start): the
     * frame after this one compares "at or after" (plan_reached). */
    if (++r->epoch == 0)
        r->epoch = 1;
    r->pplan = 1;
    r->pnext = NULL;
    if (prev)
        prev->pnext = r;   /* caller only: prev's wait looks ahead into r */
    r->pprev = prev ? prev->nodes : NULL;
    r->pprev_epoch = prev ? prev->epoch : 0;
    atomic_store_explicit(&r->caller_cpu, rt_cpu_now(), memory_order_relaxed);   /* relaxed: a hint */
    rt_plan_begin_lists(r);
    /* relaxed: the offer (a release store) publishes the frame's start. */
    atomic_store_explicit(&r->cursor0, rt_plan_cw(r->epoch, r->lhead[0]), memory_order_relaxed);
    atomic_store_explicit(&r->owner0, PLAN_CALLER_AWAY, memory_order_relaxed);   /* relaxed: as above */
    r->pticket = 0;   /* rt_plan_offer sets them */
    r->noffer = 0;
    r->waking = 0;
    rt_plan_off_begin(r);
    plan_slot *s = rt_plan_slot_of(r->rt);
    /* Before the offer, which may spawn one: was a helper running? (The
     * policy's "slow to wake", exec/policy.c; kept until the wait.) */
    r->pawake = s && rt_plan_helper_awake(s);
    if (s) {
        rt_plan_offer(s, r);
        if (prev && r->noffer != 0)
            rt_plan_spare_helpers(s, r, prev);
    }
    if (r->noffer != 0 && rt_run_caller_away(r))
        /* A started instance goes on while its caller is away: a helper
         * leaving as the offer lands must not leave it for the caller's
         * wait (the rescue G_run and pipelines get from the caller's own
         * part), so check for them now, fenced. */
        rt_plan_ensure_helper(r);
}

/* The frames in flight after r: where the caller is for them while it
 * waits for r (it looks ahead into them) and once it has returned. */
static void pplan_mark_ahead(graph_rt *r, uint32_t where)
{
    graph_rt *x = r->pnext;
    for (int k = 0; x && k < DAGRT_MAX_IN_FLIGHT; k++, x = x->pnext)
        /* relaxed: a hint for the helper (graph_rt.owner0); only the
         * caller writes it. */
        atomic_store_explicit(&x->owner0, where, memory_order_relaxed);
}

int rt_pplan_wait(graph_rt *r)
{
    /* relaxed: a hint for the helper (graph_rt.owner0). */
    atomic_store_explicit(&r->owner0, PLAN_CALLER_HERE, memory_order_relaxed);
    /* A helper already in a later frame, waiting there for a node of the
     * caller's list (a game's `on main` input), must not take the caller
     * for away and leave: the look-ahead below runs that node as soon as
     * this frame leaves the caller nothing to do. Leaving would park the
     * helper, and the caller would find that frame's list unowned at its
     * own wait and run all of it (stolen, then a serial stretch). */
    pplan_mark_ahead(r, PLAN_CALLER_AHEAD);
    /* dagrt_graph_wait refuses fibers: the caller is on its own stack. */
    rt_plan_work(r, 0, true, NODE_ON_THREAD, NONE, r->epoch);
    /* Every node is claimed; helpers may still run their last ones.
     * Meanwhile the caller looks ahead (see the top), while a helper that
     * joined one of this frame's tickets has not left it. */
    plan_slot *s = r->rt->exec;
    bool joined = false;
    for (uint32_t j = 0; j < r->noffer; j++) {
        const uint64_t t = r->pticket + j;
        const plan_offer *o = &s->ring[t % PLAN_RING];
        while (r->pnext) {
            /* relaxed: a hint; rt_plan_end's acquire of LEFT orders the
             * helper's work before the frame's end. */
            uint64_t st = atomic_load_explicit(&((plan_offer *)(uintptr_t)o)->state,
                                               memory_order_relaxed);
            if (st != rt_offer_word(t, OFFER_JOINED) || !rt_plan_ahead(r, NODE_ON_THREAD))
                break;
        }
        joined |= rt_plan_end(s, r, t);
    }
    /* Slow to wake is not starved (exec/policy.c): a frame offered with no
     * helper running is judged only if the helper asked for never came to
     * it and was spawned long enough ago. A pipeline's frame is waited for
     * a frame later than it was offered, so the spawn's age at the wait
     * says little; whether a helper joined one of its tickets says it. */
    if (r->noffer != 0 && r->stolen > r->nlistw / 2 && !r->pawake)
        r->waking = joined || rt_plan_helper_waking(s);
    /* Back to the caller's own work until its next pipeline call. */
    pplan_mark_ahead(r, PLAN_CALLER_AWAY);
    return rt_plan_off_end(r);
}
