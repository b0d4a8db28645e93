/*
 * exec/plan_run.c - a whole G_run frame in plan mode, the caller's side:
 * the epoch, the offer to the helpers, the caller's own part
 * (rt_plan_work, exec/plan.c), the wait for the helpers' last nodes and
 * the end of the offers, which never waits for a helper ("the held
 * return"); the helpers' lists' start.
 */
#include "exec.h"

/* A run's start for the helpers' lists (G_run's and a pipelined frame's):
 * their cursors at this run's epoch, owners, and nothing stolen yet.
 * Relaxed stores: the offer (release) publishes them; a late helper of an
 * earlier run that reads them only learns that its run is over (its
 * epoch is not in them). */
void rt_plan_begin_lists(graph_rt *r)
{
    r->stolen = 0;
    r->stolenq = 0;
    r->hold_t0 = 0;
    r->held_ns = 0;
    for (uint32_t k = 1; k < r->nlists; k++) {
        atomic_store_explicit(rt_plan_cursor(r, k), rt_plan_cw(r->epoch, r->lhead[k]),
                              memory_order_relaxed);
        atomic_store_explicit(&r->owner[k], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&r->xsteal, 0, memory_order_relaxed);
}

/* ------------------------------------------------------ the held return
 *
 * A helper that joined a G_run (exec/plan_helper.c) may lose its CPU at any
 * instruction: preempted, or stopped by a signal, between two nodes. The
 * caller takes its ready nodes over ("a shared CPU", exec/plan.c), and the
 * run's return must not wait for it either. So the caller ends a run once
 * every node is done, whatever its helpers are doing:
 * - plan_wait_done: every node's `done`, those that run off the lists too
 *   (their claimer may not have spawned their task yet), then
 *   rt_plan_end_all: a ticket nobody joined is closed (OPEN to CLOSED); a
 *   joined one the helper has not left is marked late (JOINED to LATE, a
 *   CAS, after graph_rt.late was counted up), and the caller returns.
 * - The late helper still holds a pointer to the state, which the user may
 *   run again at once. What it may still do there is harmless to the next
 *   run: it claims only through a CAS of a cursor word that expects its
 *   own run's epoch (the next run stored its own, rt_plan_begin_lists), so
 *   it claims nothing of a later run and writes no `done`; it publishes
 *   nothing of its own run late either (the caller returned only once
 *   every node was done); its other reads are of the plan (rewritten only
 *   after rt_plan_late_wait) and of atomics; its other writes are the
 *   owner hints (relaxed; a stale one costs the next run a wait of at most
 *   PLAN_STEAL_SPINS polls or an overdue bound, never a node). It finds a
 *   later epoch in its own cursor, or nothing left to claim, and leaves:
 *   its exchange to LEFT tells it the caller marked it late, and it takes
 *   itself off graph_rt.late (release), its last access to the state.
 * - So the next run on the state does not wait for it: a late helper may
 *   well still be stopped there (a thread that lost its CPU for a whole
 *   timeslice, while the game runs the same graph back to back). What
 *   rewrites the plan or the state's identity first waits for late == 0
 *   (acquire): a re-plan (deferred instead while a helper is late), a
 *   reset for another graph, node array or runtime, a started run or a
 *   pipeline's frame on the state, dagrt_graph_state_init again, and
 *   dagrt_graph_state_fini, which releases a state's memory to its owner.
 *   dagrt_destroy waits for every helper task anyway.
 * tests/models/plan_late.pml checks the protocol with the helper stopped
 * at every step. Pipelined frames (exec/pplan.c) still wait for their
 * helpers at the frame's wait: their states are the pipeline's, reused D
 * frames later, and a frame after them reads their `done` words. */

void rt_plan_late_wait(graph_rt *r)
{
    /* acquire: pairs with each late helper's release decrement, its last
     * access to the state, so what the caller writes next comes after. */
    for (unsigned spins = 0; atomic_load_explicit(&r->late, memory_order_acquire) != 0;) {
        rt_cpu_relax();
        if (++spins > 64)
            rt_os_yield();   /* a late helper is one without a CPU: give it ours */
    }
}

/* The end of a G_run's offers, once every node is done: closes the
 * tickets no helper joined, marks late those a helper joined and has not
 * left (see above). Never waits. */
void rt_plan_end_all(graph_rt *r)
{
    plan_slot *s = r->rt->exec;
    for (uint32_t j = 0; j < r->noffer; j++) {
        const uint64_t t = r->pticket + j;
        plan_offer *o = &s->ring[t % PLAN_RING];
        uint64_t st = rt_offer_word(t, OFFER_OPEN);
        /* acquire on failure: a LEFT seen here pairs with the helper's
         * release, so that its reads of the plan come before what the
         * caller rewrites next (a re-plan). On success it orders nothing
         * (no helper joined; the close only keeps a late one out), but C11
         * wants the failure order no stronger than the success one. */
        if (atomic_compare_exchange_strong_explicit(&o->state, &st, rt_offer_word(t, OFFER_CLOSED),
                                                    memory_order_acquire, memory_order_acquire))
            continue;
        if (st != rt_offer_word(t, OFFER_JOINED))
            continue;   /* LEFT: the helper is out (it published what it ran; we read every `done`) */
        /* Counted before the mark, so that the helper, which takes itself
         * off once it sees the mark, never finds the count without it.
         * relaxed: the count is the caller's to read (rt_plan_late_wait,
         * acquire); the helper's decrement is an RMW on the same word. */
        atomic_fetch_add_explicit(&r->late, 1, memory_order_relaxed);
        /* acquire on failure: LEFT, as above. On success the mark orders
         * nothing (the helper's exchange reads it, an RMW: it sees the
         * mark or this CAS sees LEFT; its decrement releases); acquire
         * only because the failure order may not be stronger. */
        if (!atomic_compare_exchange_strong_explicit(&o->state, &st, rt_offer_word(t, OFFER_LATE),
                                                     memory_order_acquire, memory_order_acquire))
            /* It left meanwhile, without a decrement: take ours back.
             * relaxed: as the add. */
            atomic_fetch_sub_explicit(&r->late, 1, memory_order_relaxed);
    }
}

/* Waits until every node of run r at epoch is done: those the helpers
 * claimed may still run. Those that run off the lists too (a fiber or hot
 * node's task, exec/plan_off.c): the group wait after it counts only the
 * tasks spawned so far, and a helper that claimed such a node may not have
 * spawned it yet (the wait for its LEFT used to cover that). Meanwhile it
 * helps and yields as plan_work's waits do, since such a task may need
 * this thread, or wait long (a fiber in I/O). acquire: each node's effects
 * (and, for a spawned one, its task's spawn into the group) before the
 * run ends. */
static void plan_wait_done(graph_rt *r, uint32_t epoch)
{
    for (uint32_t i = 0; i < r->nnodes; i++) {
        _Atomic uint32_t *d = &r->nodes[i].plan.done;
        uint64_t since = 0;   /* rt_plan_nap's */
        for (unsigned spins = 0; atomic_load_explicit(d, memory_order_acquire) != epoch;) {
            rt_plan_relax(r, 0, ++spins, &since);
            rt_plan_hold(r, spins);
            if (RT_UNLIKELY(r->plan_share) && (spins & 15) == 0)
                rt_plan_help(r, NODE_ON_THREAD);
            if (RT_UNLIKELY(r->plan_off) && (spins & 255) == 0)
                rt_os_yield();
        }
    }
}

/* A whole run in plan mode. */
int rt_plan_run(graph_rt *r)
{
    if (++r->epoch == 0) {
        /* 2^32 runs: `done` words from the last wrap could match again,
         * and so could a late helper's epoch. */
        rt_plan_late_wait(r);
        for (uint32_t i = 0; i < r->nnodes; i++)
            /* relaxed: as in rt_plan_build: before the run is offered. */
            atomic_store_explicit(&r->nodes[i].plan.done, 0, memory_order_relaxed);
        r->epoch = 1;
    }
    const uint32_t epoch = r->epoch;
    plan_slot *s = rt_plan_slot_of(r->rt);
    /* Stored only when they change: a late helper of the last run may
     * read them (see "the held return"); they change only after a started
     * run on the state, which waited for late helpers. */
    if (r->pplan)
        r->pplan = 0;
    if (r->pprev)
        r->pprev = NULL;   /* G_run: `prev` inputs hold from the start */
    r->pnext = NULL;   /* and no frame after it to look ahead into (the caller's) */
    /* relaxed: a hint (graph_rt.caller_cpu). */
    atomic_store_explicit(&r->caller_cpu, rt_cpu_now(), memory_order_relaxed);
    rt_plan_begin_lists(r);
    /* The caller's first node, if it is a root, is claimed before the run
     * is offered: nobody else can claim it yet, so a plain store does it,
     * and the offer's stores below (to lines the helpers poll) drain
     * during its body instead of before a locked claim. */
    uint32_t first = r->lhead[0];
    if (first != NONE && r->nodes[first].plan.npl == 0 && !r->plan_off) {
        atomic_store_explicit(&r->cursor0, rt_plan_cw(epoch, r->nodes[first].plan.lnext),
                              memory_order_relaxed);
    } else {
        atomic_store_explicit(&r->cursor0, rt_plan_cw(epoch, first), memory_order_relaxed);
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
    rt_plan_work(r, 0, true, NODE_ON_THREAD, first, epoch);   /* dagrt_graph_run refuses fibers */
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
            uint64_t since = 0;   /* rt_plan_nap's */
            for (unsigned spins = 0; atomic_load_explicit(d, memory_order_acquire) != epoch;) {
                rt_plan_relax(r, 0, ++spins, &since);
                rt_plan_hold(r, spins);
            }
        }
        rt_plan_unhold(r);
        /* relaxed: ordered by the acquires above (graph_rt.xsteal). With
         * one helper list there is no other helper to take from. */
        if (r->nlists <= 2 || atomic_load_explicit(&r->xsteal, memory_order_relaxed) == 0)
            return 0;
    }
    /* We, or helpers of other lists, took nodes of a helper's list: a
     * node may be running on any thread, and a helper that joined may be
     * anywhere, stopped too. Wait for the nodes, not for the helpers
     * ("the held return"): each ticket closed, or marked late if its
     * helper has not left. */
    plan_wait_done(r, epoch);
    rt_plan_unhold(r);
    rt_plan_end_all(r);
    return rt_plan_off_end(r);
}
