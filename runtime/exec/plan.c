/*
 * exec/plan.c - plan mode, the executor for frames worth sharing (exec/exec.h;
 * the section comment below has the design). Its lists:
 * exec/plan_build.c; a G_run frame's whole run: exec/plan_run.c; between runs:
 * exec/plan_helper.c; when its helper gets no CPU: exec/policy.c; nodes
 * that run elsewhere (fiber, hot, parallel): exec/plan_off.c.
 */
#include "exec.h"

/* ------------------------------------------------------------- plan mode
 *
 * The dynamic executor (exec/dynamic.c) pays for every node in cross-core
 * cache traffic: join counters, the shared ready list and helper spawns
 * are locked instructions on lines another core wrote last, each a
 * cross-core transfer (docs/benchmarks-log.md), several per node. Plan mode
 * runs such graphs without any of them:
 *
 * - Once per graph, the nodes are split into lists, one for the caller
 *   (list 0) and one per worker up to PLAN_LISTS (a helper each), by a
 *   critical-path list scheduler over the nodes' costs (exec/plan_build.c,
 *   exec/plan_sched.c): each node on the list where it would finish
 *   first, a hand-over between lists counted at a price, in order of its
 *   longest cost path to the frame's end (equal ones: the one that can be
 *   placed earliest first). Each
 *   list is in simulated start order, and all are subsequences of one
 *   topological order (the scheduler's order of placement). `on main`
 *   nodes all go to the caller's list. A graph no level of which is wider than a few lists
 *   gets fewer lists (no helper for a list with nothing on it).
 * - A run: each list has a cursor, the next unclaimed node; a thread waits
 *   until the node at its cursor is ready (its predecessors' `done` equals
 *   the run's epoch), claims it by advancing the cursor with a CAS (and
 *   the node after it in the same CAS if that one is ready too), runs it
 *   and stores `done`. Completed nodes are never counted, only read:
 *   nothing is reset between runs, the epoch moves on instead. Nodes are
 *   claimed only when ready, so a thread that loses its CPU holds up at
 *   most the node it is running and one more.
 * - A thread takes a ready node off another list when that list has no
 *   owner (its helper has not arrived, or has left), after waiting long on
 *   its own node (a long node only once its owner is overdue: "a shared
 *   CPU" below), or (the caller, and helpers of pipelined frames) when its
 *   own list is finished. Only the caller takes `on main` nodes.
 * - Progress without the worker: the earliest unfinished node of the
 *   common order has all its predecessors done; it is either claimed, and
 *   running, or at its list's cursor (everything before it on its list is
 *   done), where its owner, or the caller, which only leaves once every
 *   node is claimed, takes it.
 * - Between runs, the workers' helpers (runtime tasks) linger, polling a
 *   runtime-owned slot, so that a run's start costs the caller two stores
 *   per helper list and no spawn, deque push or wake-up check, and its end
 *   no task completion and no group wait; see exec/plan_helper.c,
 *   "between runs".
 */

#define plan_cursor rt_plan_cursor

/* Whether helper list k (k >= 1) has no helper running it. relaxed: a
 * hint (graph_rt.owner). */
static inline bool plan_unowned(graph_rt *r, uint32_t k)
{
    uint32_t o = atomic_load_explicit(&r->owner[k], memory_order_relaxed);
    return o == 0 || o == PLAN_LEFT;
}

/* Whether a `done` word has reached epoch e of its state: in a pipelined
 * plan frame the frame before may already have been followed there by
 * later frames of its state (exec/pplan.c), so the test is "at or after",
 * in serial number arithmetic (epochs skip 0 and are never compared more
 * than DAGRT_MAX_IN_FLIGHT runs apart). */
static inline bool plan_reached(uint32_t done, uint32_t e) { return (int32_t)(done - e) >= 0; }

/* Can node i run in this run: AND, all predecessors done; OR, any. `mine`:
 * a node the calling thread has completed but not yet published (it counts
 * as done for this thread), or NONE. A pipelined plan frame linked after
 * the frame before (r->pprev) also waits for the same node and the `prev`
 * inputs there (docs/language.md's table); unlinked, `prev` inputs hold
 * from the start (an OR node with one is ready at once). */
static inline bool plan_ready(graph_rt *r, uint32_t i, uint32_t epoch, uint32_t mine)
{
    const node_rt *n = &r->nodes[i];
    uint32_t np = n->plan.npl, nv = n->plan.nprv;
    if (np == 0 && nv == 0 && RT_LIKELY(r->pprev == NULL))
        return true;
    bool any = r->g->nodes[i].join == DAGRT_JOIN_OR && np + nv > 0;
    const node_rt *pr = r->pprev;
    if (RT_UNLIKELY(pr != NULL)) {
        const uint32_t pe = r->pprev_epoch;
        /* acquire: pairs with the release store of the frame before's
         * runner (rt_plan_publish), as for this frame's inputs below. */
        if (!plan_reached(atomic_load_explicit(&pr[i].plan.done, memory_order_acquire), pe))
            return false;
        for (uint32_t k = np; k < np + nv; k++) {
            /* acquire: as above. */
            bool d = plan_reached(
                atomic_load_explicit(&pr[n->plan.pred[k]].plan.done, memory_order_acquire), pe);
            if (d == any)
                return any;
        }
    } else if (any && nv) {
        return true;
    }
    for (uint32_t k = 0; k < np; k++) {
        /* acquire: pairs with the predecessor runner's release store, so
         * its effects are visible to whoever runs node i next. */
        bool d = n->plan.pred[k] == mine ||
                 atomic_load_explicit(&r->nodes[n->plan.pred[k]].plan.done, memory_order_acquire) == epoch;
        if (d == any)
            return any;
    }
    return !any;
}

/* ------------------------------------------------------- a shared CPU
 *
 * A thread that loses its CPU (a render thread, the driver, another
 * process) holds up what it has claimed: the node it runs, and the node
 * after it if it claimed both in one CAS. Its list's ready nodes after
 * those are taken by the others. Both choices are made from the costs the
 * plan was made from (node_rt.qcost; the tables' `cost`, a profile, or
 * live costs, exec/live.c):
 * - Only a short node (at most PLAN_SHORT_NS, or of unknown cost) is
 *   claimed with the node after it: for a short one the saved locked
 *   instruction matters; after a long one, the pair would be the node a
 *   preempted thread strands for as long as it is off its CPU.
 * - A thread waiting for its own next node takes a ready node off a list
 *   whose thread is there (after PLAN_STEAL_SPINS polls) only if the node
 *   is short, or if that thread is overdue: its list's cursor has not
 *   moved, while the node at it was ready, for longer than twice the
 *   list's longest node plus PLAN_OVERDUE_NS, longer than a running owner
 *   could be busy with what it claimed. A long node taken from an owner
 *   that is running would delay the taker's own next node (often the one
 *   the frame waits for) by the node's length; taken from an owner that
 *   lost its CPU, it runs now instead of when that thread comes back.
 *   The wait measures this with its own clock reads, only while it has
 *   nothing to run; the owner's path pays nothing.
 * - A list without its thread (no helper yet, or left), and every list
 *   once a thread's own is finished, is taken from at once, as before.
 * - Where the process does not have its CPUs to itself (exec/crowd.c), a
 *   wait that is overdue by the same bound (any list's longest node)
 *   sleeps instead of polling (rt_plan_nap): the thread it waits for is
 *   queued for a CPU, and the one the waiter frees takes it over. */

/* A waiter's view of the owned lists it may take long nodes from: the
 * cursor it last saw at each, and since when (0: not looked at yet). */
typedef struct plan_watch {
    uint32_t cur[PLAN_LISTS];
    uint64_t since[PLAN_LISTS];
} plan_watch;

/* Whether the waiter with watch w may take ready node c at list k's
 * cursor now (list k has its thread): short, or that thread overdue. */
static bool plan_may_take(graph_rt *r, plan_watch *w, uint32_t k, uint32_t c)
{
    if (w == NULL || r->nodes[c].qcost * PLAN_Q_NS <= PLAN_SHORT_NS)
        return true;
    uint64_t now = rt_now_ns();
    if (w->since[k] == 0 || w->cur[k] != c) {
        w->cur[k] = c;
        w->since[k] = now;
        return false;
    }
    return now - w->since[k] > 2ull * r->lmaxq[k] * PLAN_Q_NS + PLAN_OVERDUE_NS;
}

/* Claims the next node of list k (not the caller's own) if it is ready
 * now, or returns NONE; never an `on main` node unless the caller. w: a
 * waiter's watch (plan_may_take), or NULL to take any ready node. */
static uint32_t plan_claim(graph_rt *r, uint32_t k, bool on_main, uint32_t epoch, plan_watch *w)
{
    _Atomic uint64_t *cur = plan_cursor(r, k);
    /* relaxed loads and CAS: the cursor only decides who runs which node
     * (the CAS makes that exclusive); what a node needs from the nodes
     * before it comes through the acquire loads of their `done`, and the
     * lists themselves were written before the run started (published to
     * the worker by the spawn of its helper). The word's epoch half keeps
     * a late helper's claim out of a later run (exec/plan_run.c, "the
     * held return"): the CAS expects this run's. */
    uint64_t cw = atomic_load_explicit(cur, memory_order_relaxed);
    for (;;) {
        uint32_t c = (uint32_t)cw;
        if (c == NONE || (uint32_t)(cw >> 32) != epoch)
            return NONE;
        if ((!on_main && (r->g->nodes[c].flags & DAGRT_NODE_MAIN)) || !plan_ready(r, c, epoch, NONE) ||
            !plan_may_take(r, w, k, c))
            return NONE;
        if (atomic_compare_exchange_weak_explicit(cur, &cw, rt_plan_cw(epoch, r->nodes[c].plan.lnext),
                                                  memory_order_relaxed, memory_order_relaxed))
            return c;
    }
}

static inline void plan_prefetch(graph_rt *r, uint32_t i)
{
#if defined(__GNUC__)
    /* The predecessors of our next node that another thread runs: their
     * lines cross cores anyway; asking now lets that overlap this body. */
    if (i == NONE)
        return;
    const node_rt *n = &r->nodes[i];
    for (uint32_t m = n->plan.xpred, k = 0; m; m >>= 1, k++)
        if (m & 1)
            __builtin_prefetch(&r->nodes[n->plan.pred[k]].plan.done);
#else
    (void)r;
    (void)i;
#endif
}

/* Whether another thread of the run started on the CPU we run on now
 * (own: our list). */
static bool plan_shares_cpu(graph_rt *r, uint32_t own)
{
    int now = rt_cpu_now();
    if (now < 0)
        return false;
    /* relaxed: a hint (graph_rt.caller_cpu). */
    if (own != 0 && atomic_load_explicit(&r->caller_cpu, memory_order_relaxed) == now)
        return true;
    for (uint32_t k = 1; k < r->nlists; k++) {
        if (k == own)
            continue;
        /* relaxed: a hint (graph_rt.owner). */
        uint32_t o = atomic_load_explicit(&r->owner[k], memory_order_relaxed);
        if (o != 0 && o != PLAN_LEFT && (int)(o - 1) == now)
            return true;
    }
    return false;
}

/* One poll of a wait by the thread of list `own` (spins: the wait's polls
 * so far; since: its clock, for rt_plan_nap). Every RT_DUTY_POLLS polls it
 * serves due timers and completions (core/idle.c, THE POLLER'S DUTY): in
 * plan mode no thread goes idle while a node is missing, and the node may
 * be a fiber waiting for one of them. */
static inline void plan_relax(graph_rt *r, uint32_t own, unsigned spins, uint64_t *since)
{
    rt_cpu_relax();
    if ((spins & (RT_DUTY_POLLS - 1)) == 0 && spins != 0)
        rt_poll_duty(r->rt, rt_ctx_current(r->rt));
    /* Where idle CPUs look busy to the kernel, a worker can be put on the
     * caller's CPU (core/park.h) and stay there, and more helpers than CPUs
     * share them on a loaded machine: spinning then only keeps the thread
     * we wait for off the CPU. Give it the CPU when we share it, and after
     * long waits in any case; where the process is crowded, sleep once the
     * wait is overdue (rt_plan_nap; "a shared CPU" above). */
    if ((spins & 63) == 63) {
        if (rt_plan_nap(r, spins, since))
            return;
        if (plan_shares_cpu(r, own)) {
            rt_os_yield();
            return;
        }
    }
    if ((spins & PLAN_YIELD_SPINS) == PLAN_YIELD_SPINS)
        rt_os_yield();
}

/* A pipelined frame's helper with nothing to run: whether that has lasted
 * PLAN_LINGER_NS since *since (0: from now on). */
static bool plan_away_long(uint64_t *since)
{
    uint64_t now = rt_now_ns();
    if (*since == 0) {
        *since = now;
        return false;
    }
    return now - *since > PLAN_LINGER_NS;
}

/* Whether a later run was offered than pipelined frame r (its helpers may
 * go on to it). relaxed: a hint; plan_join's acquire orders the run. */
static bool plan_offered_after(graph_rt *r)
{
    const plan_slot *s = r->rt->exec;
    return s && atomic_load_explicit(&((plan_slot *)(uintptr_t)s)->go, memory_order_relaxed) >
                    r->pticket + r->noffer - 1;
}

/* Claimed node i: runs it here and returns i (its status in *status, to be
 * published by the caller), or dispatches it as a task and returns NONE:
 * its task publishes it (exec/plan_off.c, "nodes that run elsewhere"). */
static RT_INLINE uint32_t plan_do(graph_rt *r, uint32_t i, node_where where, uint8_t *status)
{
    uint32_t f = r->g->nodes[i].flags;
    if (RT_LIKELY(!(f & r->plan_offmask)) || (f & DAGRT_NODE_MAIN)) {
        /* A timed frame (live costs, exec/live.c): one predictable branch
         * on a line every claim reads anyway. */
        *status = RT_UNLIKELY(r->live_sample) ? rt_live_timed(r, i, where)
                                              : rt_exec_node_on(r, i, where);
        return i;
    }
    rt_plan_off_spawn(r, i, where);
    return NONE;
}

/* Takes and runs one ready node of list k (not ours: own); w as in
 * plan_claim. */
static bool plan_steal(graph_rt *r, uint32_t k, uint32_t own, bool on_main, node_where where,
                       uint32_t epoch, plan_watch *w)
{
    uint32_t s = plan_claim(r, k, on_main, epoch, w);
    if (s == NONE)
        return false;
    /* A helper's theft from another helper's list, before the node's
     * publication (graph_rt.xsteal). relaxed: that release orders it;
     * checked first so that the line is written once a run. */
    if (own != 0 && k != 0 && atomic_load_explicit(&r->xsteal, memory_order_relaxed) == 0)
        atomic_store_explicit(&r->xsteal, 1, memory_order_relaxed);
    /* The caller's count (helpers' thefts set xsteal): the run policy's
     * sign of a helper without CPU. In a pipelined frame, only from a list
     * no helper joined: one that joined had a CPU, and the caller taking
     * its ready nodes is the frames' sharing out (its helper takes the
     * caller's too, and leaves a frame while the caller is away).
     * relaxed: a hint (graph_rt.owner). */
    if (on_main && k != 0 &&
        !(r->pplan && atomic_load_explicit(&r->owner[k], memory_order_relaxed) != 0)) {
        r->stolen++;
        r->stolenq += r->nodes[s].qcost;   /* its cost: not the helper's gain (the policy) */
    }
    if (on_main)
        rt_plan_unhold(r);
    uint8_t st;
    if (plan_do(r, s, where, &st) != NONE)
        rt_plan_publish(r, s, st, epoch);
    return true;
}

/* Whether list k may be taken from at once by the thread of list own: a
 * helper's list without its helper, or (a pipelined frame's helper) the
 * caller's list while the caller is away. */
static inline bool plan_open(graph_rt *r, uint32_t k, uint32_t own)
{
    if (k != 0)
        return plan_unowned(r, k);
    /* relaxed: a hint (graph_rt.owner0). */
    return own != 0 && r->pplan &&
           atomic_load_explicit(&r->owner0, memory_order_relaxed) != PLAN_CALLER_HERE;
}

/* A pipelined frame's helper with nothing to run: whether to leave the
 * frame, after PLAN_LINGER_NS of that (counted in *since) while its caller
 * is away (between its pipeline calls: it runs nothing of the frame until
 * its wait), or while the caller looks ahead into it from an earlier
 * frame's wait only if the pool has other work for this thread. Else the
 * caller comes (or is there): the clock starts again. */
static bool plan_leave_frame(graph_rt *r, uint64_t *since)
{
    /* relaxed: a hint (graph_rt.owner0). */
    uint32_t where = atomic_load_explicit(&r->owner0, memory_order_relaxed);
    if (where == PLAN_CALLER_AWAY)
        return plan_away_long(since);
    rt_ctx *c = where == PLAN_CALLER_AHEAD ? rt_ctx_current(r->rt) : NULL;
    if (c && rt_work_visible(c))
        return plan_away_long(since);
    *since = 0;
    return false;
}

/* Takes and runs one ready node of another list than own: of the lists
 * open to it (plan_open) or, with `any`, of every list (those with their
 * thread as watch w allows, or NULL: any ready node). Each thread starts
 * at the list after its own, so that thieves spread out. */
static bool plan_steal_some(graph_rt *r, uint32_t own, bool any, bool on_main, node_where where,
                            uint32_t epoch, plan_watch *w)
{
    const uint32_t n = r->nlists;
    for (uint32_t d = 1; d < n; d++) {
        uint32_t k = own + d < n ? own + d : own + d - n;
        bool open = plan_open(r, k, own);
        if ((any || open) && plan_steal(r, k, own, on_main, where, epoch, open ? NULL : w))
            return true;
    }
    return false;
}

/* Whether a list other than own still has unclaimed nodes in the run at
 * epoch (none once a later run's epoch shows: that run is over). relaxed:
 * the claims are the CASes; this only waits for them. */
static bool plan_others_left(graph_rt *r, uint32_t own, uint32_t epoch)
{
    for (uint32_t k = 0; k < r->nlists; k++) {
        if (k == own)
            continue;
        uint64_t cw = atomic_load_explicit(plan_cursor(r, k), memory_order_relaxed);
        if ((uint32_t)(cw >> 32) != epoch)
            return false;
        if ((uint32_t)cw != NONE)
            return true;
    }
    return false;
}

/* The caller in a pipelined frame's wait with nothing of r ready: one
 * ready node of a later frame in flight (exec/pplan.c, "looks ahead"),
 * claimed and run, from its own list of each frame only: the helper's
 * list of a later frame often has no owner yet (its helper is still in
 * an earlier frame, or was not spawned: rt_plan_spare_helpers), and nodes
 * taken from it would read to the run policy as a starved helper
 * (stolen). Returns whether it ran one. */
bool rt_plan_ahead(graph_rt *r, node_where where)
{
    graph_rt *x = r->pnext;
    for (int k = 0; x && k < DAGRT_MAX_IN_FLIGHT; k++, x = x->pnext)
        if (plan_steal(x, 0, 0, true, where, x->epoch, NULL))
            return true;
    return false;
}

/* One thread's part of a run: its own list `own`, then whatever it can take
 * from the others. The caller (on_main) stays until every node is
 * claimed; a helper may leave earlier. where: where this
 * thread runs nodes (exec/exec.h), decided once (its stack cannot change meanwhile).
 * first: a node of list `own` the caller claimed before the run was
 * offered, run first, or NONE. epoch: the run's (a helper's from its
 * ticket: the state's field belongs to the next run once the caller
 * ended this one). Returns PLAN_WORK_LAST when a helper (own >= 1) ran
 * the last node of its own list: publishing it was then its last access
 * to the run's state (see rt_plan_run's end); PLAN_WORK_LATE when a helper
 * found its run over (a later epoch in a cursor). */
_Thread_local unsigned rt_plan_nest;

static int plan_work(graph_rt *r, uint32_t own, bool on_main, node_where where, uint32_t first,
                     uint32_t epoch);

int rt_plan_work(graph_rt *r, uint32_t own, bool on_main, node_where where, uint32_t first,
                 uint32_t epoch)
{
    rt_plan_nest++;
    int how = plan_work(r, own, on_main, where, first, epoch);
    rt_plan_nest--;
    return how;
}

static int plan_work(graph_rt *r, uint32_t own, bool on_main, node_where where, uint32_t first,
                     uint32_t epoch)
{
    _Atomic uint64_t *cur = plan_cursor(r, own);
    uint32_t prev = NONE;
    uint8_t prev_status = 0;
    unsigned spins = 0;
    bool ensured = false;
    /* A pipelined frame's helper (exec/pplan.c): the caller is in this
     * frame only while it waits for it; the rest of the time the helper
     * takes the caller's ready nodes at once, and a helper with nothing to
     * run leaves once that lasted PLAN_LINGER_NS (the caller's wait runs
     * what is left). */
    const bool away_ok = own != 0 && r->pplan;
    uint64_t stuck_since = 0;
    uint64_t wait_t0 = 0;   /* plan_relax's clock of a long wait (rt_plan_nap) */
    plan_watch watch;
    for (uint32_t k = 0; k < PLAN_LISTS; k++)
        watch.since[k] = 0;
    if (first != NONE) {
        plan_prefetch(r, r->nodes[first].plan.lnext);
        prev = plan_do(r, first, where, &prev_status);
    }
    for (;;) {
        /* relaxed: see plan_claim. A later epoch: a late helper, whose
         * caller ended the run (every node done, so nothing is left to
         * publish either: prev is NONE). */
        uint64_t cw = atomic_load_explicit(cur, memory_order_relaxed);
        if (RT_UNLIKELY((uint32_t)(cw >> 32) != epoch))
            return PLAN_WORK_LATE;
        uint32_t i = (uint32_t)cw;
        if (i == NONE)
            break;
        if (RT_UNLIKELY(r->plan_off) && rt_plan_hot_waiting(r)) {
            /* Hot work first (exec/plan_off.c). */
            if (prev != NONE) {
                rt_plan_publish(r, prev, prev_status, epoch);
                prev = NONE;
            }
            rt_plan_help(r, where);
        }
        /* The node just run counts as done here, so a chain continues
         * with the claim first and the publication after it (below). */
        if (!plan_ready(r, i, epoch, prev)) {
            /* Nothing is claimed while it waits: a thread that loses its
             * CPU here holds up no node, the other thread can take it. And
             * the node we completed goes out first: someone may need it. */
            if (prev != NONE) {
                rt_plan_publish(r, prev, prev_status, epoch);
                prev = NONE;
            }
            plan_relax(r, own, ++spins, &wait_t0);
            if (on_main)
                rt_plan_hold(r, spins);
            if (RT_UNLIKELY(r->plan_share) && (spins & 15) == 0)
                rt_plan_help_for(r, where, i, epoch);   /* back once i is ready */
            /* A node that runs elsewhere may wait long (a fiber blocked
             * in I/O): give the CPU away more often than plan_relax
             * does, so that a loaded machine's other threads, and the
             * task we wait for, get it. */
            if (RT_UNLIKELY(r->plan_off) && (spins & 255) == 0)
                rt_os_yield();
            /* A list without its thread is taken from at once, and the
             * caller makes sure helpers are coming (once a run). A
             * pipelined frame's helper leaves a frame whose caller is away
             * once nothing was ready for PLAN_LINGER_NS. */
            bool open = false;
            for (uint32_t k = 0; k < r->nlists && !open; k++)
                open = k != own && plan_open(r, k, own);
            if (away_ok && (spins & 255) == 0 && plan_leave_frame(r, &stuck_since))
                return PLAN_WORK_LEFT;
            if (open && !ensured && own == 0) {
                ensured = true;
                rt_plan_ensure_helper(r);
            }
            /* A pipelined frame's helper takes any ready node then, long
             * ones of a running caller too: its own next node may wait
             * for the caller's `on main` one for a whole frame's tail,
             * and the frames in flight are the work to share out. */
            if ((spins >= PLAN_STEAL_SPINS || open) &&
                plan_steal_some(r, own, spins >= PLAN_STEAL_SPINS, on_main, where, epoch,
                                away_ok ? NULL : &watch)) {
                spins = 0;
                stuck_since = 0;
            } else if (on_main && r->pnext && rt_plan_ahead(r, where)) {
                spins = 0;
                rt_plan_unhold(r);
            }
            continue;
        }
        /* The node after it, if it is ready now as well (without i), is
         * claimed by the same CAS: a claim costs 40-80 ns (a locked
         * instruction, which waits for the body's stores to drain), on the
         * path of every node, and a level's nodes on one list are mostly
         * ready together. Only two, and only after a short node (see "a
         * shared CPU"), so a thread that loses its CPU holds up at most
         * the node it runs and, after a short one, one more. */
        uint32_t next = r->nodes[i].plan.lnext;
        uint32_t pair = NONE;
        if (next != NONE && r->nodes[i].qcost * PLAN_Q_NS <= PLAN_SHORT_NS &&
            plan_ready(r, next, epoch, prev)) {
            pair = next;
            next = r->nodes[pair].plan.lnext;
        }
        /* relaxed CAS: see plan_claim. It fails when the other thread took
         * the node meanwhile (or the run is over: a late helper): look again. */
        if (!atomic_compare_exchange_weak_explicit(cur, &cw, rt_plan_cw(epoch, next),
                                                   memory_order_relaxed, memory_order_relaxed))
            continue;
        spins = 0;
        stuck_since = 0;
        if (on_main)
            rt_plan_unhold(r);
        /* Completing the previous node only now puts its store after the
         * claim's locked instruction: the store's trip to the other core
         * (which read `done` last run) overlaps the next body instead of
         * stalling the claim. */
        if (prev != NONE)
            rt_plan_publish(r, prev, prev_status, epoch);
        plan_prefetch(r, next);
        prev = plan_do(r, i, where, &prev_status);
        if (pair != NONE) {
            if (prev != NONE)
                rt_plan_publish(r, prev, prev_status, epoch);
            prev = plan_do(r, pair, where, &prev_status);
        }
        if (next == NONE && own != 0 && !away_ok && !r->plan_off) {
            /* The helper's list is done, and the helper leaves without
             * taking the others' last nodes: its last access to the run
             * is this publication, which the caller reads anyway before
             * it returns (rt_plan_run), instead of one more cache-line trip
             * for a separate "left" word on every run. (Not where nodes
             * run as tasks: the list's last node may be one of them.) */
            if (prev != NONE)
                rt_plan_publish(r, prev, prev_status, epoch);
            return PLAN_WORK_LAST;
        }
    }
    if (prev != NONE)
        rt_plan_publish(r, prev, prev_status, epoch);
    unsigned idle = 0, waits = 0;   /* waits: the caller's, since it last ran a node */
    while (plan_others_left(r, own, epoch)) {
        if (plan_steal_some(r, own, true, on_main, where, epoch, NULL)) {
            idle = 0;
            waits = 0;
            stuck_since = 0;
            continue;
        }
        if (on_main && r->pnext && rt_plan_ahead(r, where)) {
            idle = 0;
            waits = 0;
            rt_plan_unhold(r);
            continue;
        }
        /* A pipelined frame's helper stays unless the caller is HERE (relaxed: a hint). */
        if (!on_main && ++idle > PLAN_LINGER_SPINS &&
            (!away_ok || atomic_load_explicit(&r->owner0, memory_order_relaxed) == PLAN_CALLER_HERE ||
             plan_offered_after(r) || ((idle & 255) == 0 && plan_leave_frame(r, &stuck_since))))
            break;
        /* The caller's `idle` stays 0 (it never leaves early): its polls
         * since it last ran a node count for plan_relax (the duty, the
         * nap) instead. */
        if (on_main)
            ++waits;
        plan_relax(r, own, on_main ? waits : idle, &wait_t0);
        if (on_main)
            rt_plan_hold(r, waits);
        if (RT_UNLIKELY(r->plan_share) && (idle & 15) == 0)
            rt_plan_help(r, where);
        if (RT_UNLIKELY(r->plan_off) && (idle & 255) == 0)
            rt_os_yield();   /* as above */
    }
    /* relaxed: as above; a helper that saw the run end through a later
     * epoch stores no owner hint into the next run (plan_serve). */
    if (own != 0 && (uint32_t)(atomic_load_explicit(cur, memory_order_relaxed) >> 32) != epoch)
        return PLAN_WORK_LATE;
    return PLAN_WORK_LEFT;
}

bool rt_plan_next_ready(graph_rt *r, uint32_t k, uint32_t i, uint32_t epoch)
{
    /* relaxed: a hint (a taker's bites end early or late); the claim decides. */
    return (uint32_t)atomic_load_explicit(plan_cursor(r, k), memory_order_relaxed) != i ||
           plan_ready(r, i, epoch, NONE);
}

/* plan_relax for exec/plan_run.c's tail wait (a spinning wait: the call
 * costs nothing it would notice). The caller waits there on the thread's
 * own stack for the helpers' last nodes; one of them may be a parallel
 * node whose offer it can take (exec/plan_off.c), as its other waits do. */
void rt_plan_relax(graph_rt *r, uint32_t own, unsigned spins, uint64_t *since)
{
    plan_relax(r, own, spins, since);
    if (RT_UNLIKELY(r->plan_share) && (spins & 15) == 0)
        rt_plan_help(r, NODE_ON_THREAD);
}
