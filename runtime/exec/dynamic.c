/*
 * exec/dynamic.c - the dynamic executor: runs one frame of the const
 * tables dagc emits with join counters and a shared ready list (exec/exec.c
 * chooses it, plan mode or a serial frame, as the run policy says), and
 * hands each completion on to the next frame of a pipeline.
 *
 * How a run goes:
 * - The caller (the runtime's main thread) resets the per-node counters in
 *   the caller-owned static state (no allocation), then readies the roots.
 * - A node fires when its join counter says so (AND: the last predecessor
 *   completed; OR: the first one did). Gates, and tasks whose `when` says
 *   no, complete on the spot on the thread that fired them.
 * - Of the nodes a completion fires, the thread keeps one to run next itself
 *   (no queue traffic along chains) and publishes the rest in the run's ready
 *   list, a bounded array that never wraps: each node enters it at most once
 *   per run, so nnodes slots suffice and it needs no reuse protocol.
 * - Every thread that publishes work also drains the ready list before it
 *   leaves. That one rule makes the run complete without any worker;
 *   drainers (runtime tasks that drain the list) are spawned only when a
 *   thread publishes work while fewer drainers than workers are active, so
 *   parallelism comes from the workers without a spawn per node.
 * - `on main` nodes never enter the shared list: fired on the main thread
 *   they go to a main-only list; fired elsewhere they are spawned with
 *   DAGRT_SPAWN_MAIN, which the main thread runs while it waits. `hot` and
 *   `fiber` nodes are spawned with their flags; such a task runs its node,
 *   then drains like a drainer. `parallel` nodes call their count function
 *   once and run through dagrt_parallel_for.
 * - The caller drains, then waits (exec/dyn_wait.c) until every node has
 *   completed.
 */
#include "exec.h"

#include <string.h>

/* ------------------------------------------------------------ ready list */

static void list_push(graph_rt *r, uint32_t node)
{
    if (r->one_thread) {
        /* A one-thread run: relaxed loads and stores are plain moves. */
        uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        atomic_store_explicit(&r->tail, t + 1, memory_order_relaxed);
        atomic_store_explicit(&r->nodes[t].slot, node + 1, memory_order_relaxed);
        return;
    }
    /* Reserving a slot needs no ordering: the slot's release store below
     * is what publishes the node. */
    uint32_t t = atomic_fetch_add_explicit(&r->tail, 1, memory_order_relaxed);
    atomic_store_explicit(&r->nodes[t].slot, node + 1, memory_order_release);
}

static uint32_t list_pop(graph_rt *r)
{
    if (RT_UNLIKELY(r->shuffle == RT_SHUFFLE_SHARED))
        return rt_dyn_take_shared(r);   /* exec/dyn_shuffle.c */
    /* relaxed: a one-thread run has no other thread; otherwise the slot CAS below decides. */
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (RT_UNLIKELY(r->shuffle == RT_SHUFFLE_POPS))
        rt_dyn_shuffle_head(r, h);
    if (r->one_thread) {
        if (h >= atomic_load_explicit(&r->tail, memory_order_relaxed))
            return NONE;
        atomic_store_explicit(&r->head, h + 1, memory_order_relaxed);
        return atomic_load_explicit(&r->nodes[h].slot, memory_order_relaxed) - 1;
    }
    for (;;) {
        /* relaxed: tail only bounds the search; the slot's acquire load is
         * what synchronises with the pusher. */
        if (h >= atomic_load_explicit(&r->tail, memory_order_relaxed))
            return NONE;
        uint32_t v = atomic_load_explicit(&r->nodes[h].slot, memory_order_acquire);
        if (v == 0) {
            /* Reserved, not yet published: the pusher is between its two
             * instructions; wait for it rather than skip the slot. */
            /* relaxed: a fresh look; the slot load above is the synchronising one. */
            h = atomic_load_explicit(&r->head, memory_order_relaxed);
            continue;
        }
        /* relaxed CAS: it only decides who owns slot h; the data came
         * through the acquire load above. Heads only grow within a run, so
         * there is no ABA. */
        if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return v - 1;
    }
}

/* --------------------------------------------------------------- running */

typedef struct drain_ctx {
    graph_rt *r;
    bool on_main;
    /* Publish every fired node, keep none to run next: a thread handing a
     * completion to the next frame does not run that frame's nodes. */
    bool nokeep;
    uint32_t completed;
    /* A drainer off the main thread: it leaves once the caller has taken
     * the frame back (graph_rt.closed). */
    bool closable;
} drain_ctx;

static void task_entry(void *arg);
static void drainer_entry(void *arg);

static void spawn_node(graph_rt *r, uint32_t i, unsigned flags)
{
    node_rt *n = &r->nodes[i];
    while (rt_spawn_own(r->rt, &r->group, task_entry, n, flags) != 0) {
        /* Out of task memory: the node must still run where its flags say,
         * so retry after letting others make progress. */
        dagrt_pump_main(r->rt);
    }
}

static void maybe_spawn_drainer(graph_rt *r)
{
    /* relaxed: the drainer count is a heuristic (see graph_rt). */
    uint32_t h = atomic_load_explicit(&r->drainers, memory_order_relaxed);
    if (h >= r->max_drainers)
        return;
    if (!atomic_compare_exchange_strong_explicit(&r->drainers, &h, h + 1, memory_order_relaxed,
                                                 memory_order_relaxed))
        return;
    if (rt_spawn_own(r->rt, &r->group, drainer_entry, r, DAGRT_SPAWN_DEFAULT) != 0)
        /* relaxed: as above, a heuristic. */
        atomic_fetch_sub_explicit(&r->drainers, 1, memory_order_relaxed);   /* relaxed: a heuristic count */
}

/* Node i fired. Returns i if the calling thread should run it next itself
 * (and it has no node to run next yet), else NONE. */
static uint32_t fire(drain_ctx *d, uint32_t i, bool have_next, bool *published)
{
    graph_rt *r = d->r;
    const dagrt_node *n = &r->g->nodes[i];
    if (n->flags & DAGRT_NODE_MAIN) {
        if (d->on_main && !r->async) {
            r->nodes[i].next = r->main_head;
            r->main_head = i;
        } else {
            spawn_node(r, i, DAGRT_SPAWN_MAIN);
        }
        return NONE;
    }
    if (n->flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER)) {
        unsigned f = 0;
        if (n->flags & DAGRT_NODE_HOT)
            f |= DAGRT_SPAWN_HOT;
        if (n->flags & DAGRT_NODE_FIBER)
            f |= DAGRT_SPAWN_FIBER;
        spawn_node(r, i, f);
        return NONE;
    }
    if (!have_next)
        return i;
    list_push(r, i);
    *published = true;
    return NONE;
}

/* One less on a counter; relaxed plain moves in a one-thread run (the
 * caller alone runs the whole frame), else acq_rel: see node_rt.pending. Returns the
 * old value. */
static uint32_t count_down(graph_rt *r, _Atomic uint32_t *c)
{
    if (r->one_thread) {
        uint32_t old = atomic_load_explicit(c, memory_order_relaxed);   /* relaxed: one thread */
        atomic_store_explicit(c, old - 1, memory_order_relaxed);         /* relaxed: one thread */
        return old;
    }
    return atomic_fetch_sub_explicit(c, 1, memory_order_acq_rel);   /* acq_rel: node_rt.pending */
}

/* What an OR node's counter starts at: its inputs of this frame, and its
 * `prev` inputs, which count one each in a linked frame and as one input
 * satisfied at the start otherwise. */
static uint32_t or_start(const graph_rt *r, const dagrt_node *n)
{
    return n->npred + (r->linked ? n->nprev : n->nprev != 0);
}

/* One input of node s completed: one of this frame, or (prev) one of the
 * last frame's. Returns whether s fires now. AND: the last input fires it.
 * OR: the first input fires it; the later inputs still count down, and the
 * run still waits for them because they are nodes of the run themselves.
 * In a linked frame an OR node also waits for its own last frame (arm). */
static bool input_done(graph_rt *r, uint32_t s, const dagrt_node *sn)
{
    /* A node with one input needs no count at all. */
    if (sn->npred == 1 && !r->linked && !(sn->join == DAGRT_JOIN_OR && sn->nprev))
        return true;
    uint32_t old = count_down(r, &r->nodes[s].pending);
    if (sn->join != DAGRT_JOIN_OR)
        return old == 1;
    if (old != or_start(r, sn))
        return false;
    return !r->linked || count_down(r, &r->nodes[s].arm) == 1;
}

/* Node s's own last frame completed (linked frames only). */
static bool same_done(graph_rt *r, uint32_t s, const dagrt_node *sn)
{
    return count_down(r, sn->join == DAGRT_JOIN_OR ? &r->nodes[s].arm : &r->nodes[s].pending) == 1;
}

static void handoff(graph_rt *r, uint32_t x);

/* Node i completed: fire the successors whose join is now satisfied. */
static uint32_t complete(drain_ctx *d, uint32_t i)
{
    graph_rt *r = d->r;
    const dagrt_graph *g = r->g;
    uint32_t next = NONE;
    bool published = false;
    /* Gates complete the moment they fire, right here on this thread, with
     * no dispatch: a fired gate goes on a worklist (linked through the
     * nodes, so chains of gates need no recursion) and its successors are
     * counted down in turn. */
    uint32_t gates = NONE;
    for (uint32_t cur = i;;) {
        const dagrt_node *n = &g->nodes[cur];
        d->completed++;
        if (RT_UNLIKELY(n->flags & DAGRT_NODE_PARALLEL) && !r->one_thread)
            /* relaxed: a hint for the caller's poll (graph_rt.npar). */
            atomic_fetch_sub_explicit(&r->npar, 1, memory_order_relaxed);
        for (uint32_t k = 0; k < n->nsucc; k++) {
            uint32_t s = g->succ[n->succ_first + k];
            const dagrt_node *sn = &g->nodes[s];
            if (!input_done(r, s, sn))
                continue;
            if (sn->kind == DAGRT_NODE_GATE) {
                r->nodes[s].next = gates;
                gates = s;
                continue;
            }
            /* Shuffled: every fired node goes through the ready list, so
             * that the next one is drawn from all that are ready. */
            uint32_t x = fire(d, s, next != NONE || d->nokeep || r->shuffle,
                              &published);
            if (x != NONE)
                next = x;
        }
        /* After this frame's successors: the next frame's nodes it frees
         * come later than this frame's in a thread's order of work. */
        if (r->piped)
            handoff(r, cur);
        if (gates == NONE)
            break;
        cur = gates;
        gates = r->nodes[cur].next;
    }
    if (published)
        maybe_spawn_drainer(r);
    return next;
}

/* Runs `next` (if any), then whatever the ready lists hold, until they are
 * empty. Every thread that publishes nodes ends here (see the top). */
/* The run the main thread is waiting for (rt_dyn_finish), or NULL: main
 * thread only. While it waits it also runs other runs' drainers; those stop
 * as soon as the awaited run is done, so that the wait returns then (in a
 * pipeline, the next frame is submitted at once rather than after the
 * frame beside it). What they leave stays on their list, which their own
 * wait drains (waits come oldest first) or a worker's drainer. */
_Thread_local graph_rt *rt_dyn_awaited;

static bool awaited_done(const graph_rt *r)
{
    graph_rt *w = rt_dyn_awaited;
    /* relaxed: a poll that only ends this drainer early; nothing is read
     * on the strength of it. */
    return w && w != r && atomic_load_explicit(&w->done, memory_order_relaxed) == w->nnodes;
}

static void drain(drain_ctx *d, uint32_t next)
{
    graph_rt *r = d->r;
    for (;;) {
        if (d->on_main && r->async && awaited_done(r)) {
            if (next != NONE) {
                list_push(r, next);   /* an async run is never a one-thread run */
                maybe_spawn_drainer(r);
            }
            break;
        }
        /* relaxed: a hint (graph_rt.closed); the node goes back to the
         * ready list, where the caller's drain finds it. */
        if (d->closable && atomic_load_explicit(&r->closed, memory_order_relaxed)) {
            if (next != NONE)
                list_push(r, next);   /* a closed run is a started one, never one-thread */
            break;
        }
        if (next == NONE && d->on_main && r->main_head != NONE) {
            next = r->main_head;
            r->main_head = r->nodes[next].next;
        }
        if (next == NONE)
            next = list_pop(r);
        if (next == NONE)
            break;
        r->nodes[next].status = rt_exec_node(r, next);
        next = complete(d, next);
    }
    if (d->completed) {
        /* relaxed: see graph_rt.done (the group wait orders the work). */
        atomic_fetch_add_explicit(&r->done, d->completed, memory_order_relaxed);
        d->completed = 0;
    }
}

void rt_dyn_drain_caller(graph_rt *r, uint32_t next)
{
    drain_ctx d = {r, true, false, 0, false};
    drain(&d, next);
}

/* A spawned main/hot/fiber node: run it, then drain. */
static void task_entry(void *arg)
{
    node_rt *n = arg;
    graph_rt *r = n->run;
    uint32_t i = (uint32_t)(n - r->nodes);
    n->status = rt_exec_node(r, i);
    /* A fiber never takes `on main` work, even on the main thread: a main
     * task must run on the caller's own stack, and a fiber may move to
     * another thread whenever something in it waits (a body, a parallel
     * for). Main tasks it makes ready are spawned to the main queue. */
    bool fiber = (r->g->nodes[i].flags & DAGRT_NODE_FIBER) != 0;
    bool main = dagrt_on_main_thread(r->rt);
    drain_ctx d = {r, !fiber && main, false, 0, !main};
    drain(&d, complete(&d, i));
}


static void drainer_entry(void *arg)
{
    graph_rt *r = arg;
    dagrt *rt = r->rt;   /* read now: r may be reused once the count drops */
    bool main = dagrt_on_main_thread(rt);
    /* Woken onto the caller's CPU, a drainer only takes turns with the
     * caller there; beside a busy thread (a crowded CPU) the kernel keeps
     * the two together, since three threads on two CPUs look balanced
     * whichever two share: move off it, as plan mode's helpers do
     * (core/placement.c; a no-op on any other CPU, on the main thread or
     * where the policy moves nobody). relaxed: a hint (graph_rt.caller_cpu);
     * a stale value costs a move or a missed one. */
    if (!main)
        (void)rt_cpu_leave(atomic_load_explicit(&r->caller_cpu, memory_order_relaxed));
    drain_ctx d = {r, main, false, 0, !main};
    drain(&d, NONE);
    atomic_fetch_sub_explicit(&r->drainers, 1, memory_order_relaxed);   /* relaxed: a heuristic count */
    /* While frames run here because the process is crowded, the workers
     * sample their run delay too (a clock read per CROWD_TICK drainers):
     * a worker beside a busy thread waits for its CPU while the caller,
     * alone on its own, may not (exec/crowd.c). After the count: r is
     * not touched. */
    (void)rt_crowd_frames(rt);
}


/* Whether every worker is parked (announced idle and no longer polling):
 * a drainer spawned now waits for a wake-up, which on a VM can take 150 us
 * (exec/policy.c: slow to wake is not starved). relaxed: a hint for the
 * policy, read once per run; a worker blocked in a system call or busy
 * elsewhere is not idle, so it counts as awake. */
static bool all_parked(dagrt *rt, int workers)
{
    int idle = atomic_load_explicit(&rt->nidle, memory_order_relaxed);
    int spinning = atomic_load_explicit(&rt->nspinning, memory_order_relaxed);   /* relaxed: as above */
    return idle - spinning >= workers;
}

/* Resets the run's counters and fires the roots. keep: the caller runs
 * one root itself next (returned); otherwise every root is published, so
 * that drainers start the run while its caller does other things. */
static uint32_t dyn_begin(graph_rt *r, int workers, bool keep, uint64_t frame_ns)
{
    const dagrt_graph *g = r->g;
    r->main_head = NONE;
    /* relaxed: reset before anything is published; the first spawn releases it. */
    atomic_store_explicit(&r->head, 0, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&r->drainers, 0, memory_order_relaxed);
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    atomic_store_explicit(&r->closed, 0, memory_order_relaxed);   /* relaxed: as above */
    dagrt_group_init(&r->group);
    bool spawns = false, orprev = false;
    uint32_t npar = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        node_rt *n = &r->nodes[i];
        const dagrt_node *gn = &g->nodes[i];
        spawns |= (gn->flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER)) != 0;
        npar += (gn->flags & DAGRT_NODE_PARALLEL) != 0;
        bool or = gn->join == DAGRT_JOIN_OR;
        orprev |= or && gn->nprev;
        /* AND: every input of this frame, and in a linked frame the same
         * node's and the prev inputs of the last frame; OR: see or_start,
         * with the last frame's own node on `arm`. relaxed: as above. */
        uint32_t pending = or ? or_start(r, gn) : gn->npred + (r->linked ? 1 + gn->nprev : 0);
        atomic_store_explicit(&n->pending, pending, memory_order_relaxed);
        atomic_store_explicit(&n->arm, 2, memory_order_relaxed);   /* relaxed: as above */
        atomic_store_explicit(&n->link, LINK_NONE, memory_order_relaxed);   /* relaxed: as above */
        atomic_store_explicit(&n->slot, 0, memory_order_relaxed);   /* relaxed: as above */
        n->status = 0;
        n->run = r;
    }

    /* Hot and fiber tasks are spawned, and may run on a worker even when
     * no drainer is; a pipeline frame's counters are counted down from the
     * frames beside it too. */
    /* A guest slot may take a spawned hot or fiber node's task even when
     * there is no worker (then it drains this list too). */
    r->one_thread = r->max_drainers == 0 && (!spawns || (workers == 0 && r->rt->nguests == 0)) &&
                    !r->piped;
    r->waking = r->max_drainers > 0 && all_parked(r->rt, workers);
    /* For the drainers' move off this CPU (drainer_entry), in frames long
     * enough to gain from it (DYN_LEAVE_NS; not known: moved). relaxed: a
     * hint; the first spawn publishes it anyway. */
    bool leave = r->max_drainers > 0 && (frame_ns == 0 || frame_ns >= DYN_LEAVE_NS);
    atomic_store_explicit(&r->caller_cpu, leave ? rt_cpu_now() : -1, memory_order_relaxed);
    /* relaxed: as the resets above. */
    atomic_store_explicit(&r->npar, npar, memory_order_relaxed);

    drain_ctx d = {r, true, false, 0, false};
    uint32_t next = NONE;
    bool published = false;
    /* A linked frame has no roots: every node waits for its own last frame
     * (rt_exec_dyn_link hands those completions over). Otherwise the roots,
     * and the OR nodes whose prev input is satisfied at the start. */
    for (uint32_t i = 0; i < g->nnodes && !r->linked; i++) {
        const dagrt_node *gn = &g->nodes[i];
        bool orp = orprev && gn->join == DAGRT_JOIN_OR && gn->nprev;
        if (orp ? input_done(r, i, gn) : gn->npred == 0) {
            uint32_t x = fire(&d, i, !keep || next != NONE || r->shuffle,
                              &published);
            if (x != NONE)
                next = x;
        }
    }
    if (published)
        maybe_spawn_drainer(r);
    return next;
}

/* ------------------------------------------------ frames in flight */

/* The completer's half of the hand-off (node_rt.link). acq_rel: the
 * release half publishes x's effects to a submitter that comes second;
 * the acquire half, when the submitter came first, makes its reset of the
 * next frame and r->next visible here. */
static void handoff(graph_rt *r, uint32_t x)
{
    if (atomic_exchange_explicit(&r->nodes[x].link, LINK_DONE, memory_order_acq_rel) ==
        LINK_LINKED)
        /* relaxed: the exchange above acquired the submitter's store. */
        rt_exec_cross(atomic_load_explicit(&r->next, memory_order_relaxed), x);
}

void rt_exec_cross(graph_rt *nx, uint32_t x)
{
    const dagrt_graph *g = nx->g;
    drain_ctx d = {nx, false, true, 0, false};
    bool published = false;
    for (uint32_t k = 0;; k++) {
        uint32_t s;
        bool fires;
        if (k == 0) {
            s = x;
            fires = same_done(nx, s, &g->nodes[s]);
        } else {
            const dagrt_node *xn = &g->nodes[x];
            if (k > xn->npsucc || !g->psucc)
                break;
            s = g->psucc[xn->psucc_first + k - 1];
            fires = input_done(nx, s, &g->nodes[s]);
        }
        if (!fires)
            continue;
        if (g->nodes[s].kind == DAGRT_NODE_GATE)
            (void)complete(&d, s);   /* nokeep: it returns NONE */
        else
            (void)fire(&d, s, true, &published);
    }
    if (published)
        maybe_spawn_drainer(nx);
    if (d.completed)
        /* relaxed: see graph_rt.done. */
        atomic_fetch_add_explicit(&nx->done, d.completed, memory_order_relaxed);
}

void rt_exec_dyn_link(graph_rt *prev, graph_rt *r)
{
    /* release: a drainer of prev that reads it (acquire) sees r's reset. */
    atomic_store_explicit(&prev->next, r, memory_order_release);
    for (uint32_t x = 0; x < r->nnodes; x++)
        /* acq_rel: see handoff; the release half publishes r's reset and
         * prev->next to a completer that comes second. */
        if (atomic_exchange_explicit(&prev->nodes[x].link, LINK_LINKED, memory_order_acq_rel) ==
            LINK_DONE)
            rt_exec_cross(r, x);
}


/* One ready node of a later frame x, on the caller waiting for an earlier
 * one: one node and back, publishing whatever it frees (nokeep), so that
 * the wait returns as soon as its own frame is done and the next frame
 * is submitted without delay. */
void rt_dyn_run_one(graph_rt *x)
{
    uint32_t i = list_pop(x);
    if (i == NONE)
        return;
    drain_ctx dx = {x, true, true, 0, false};
    x->nodes[i].status = rt_exec_node(x, i);
    (void)complete(&dx, i);   /* nokeep: NONE */
    /* relaxed: see graph_rt.done. */
    atomic_fetch_add_explicit(&x->done, dx.completed, memory_order_relaxed);
}



/* A whole run (after exec/exec.c's checks and reset of the shared fields). */
int rt_exec_dyn_run(graph_rt *r, rt_ctx *self, int workers, uint64_t frame_ns)
{
    return rt_dyn_finish(r, self, dyn_begin(r, workers, true, frame_ns));
}

/* Tests' seam: the CPU the state's last dynamic frame asked its drainers
 * to leave, or -1 (none: no drainer, or a frame under DYN_LEAVE_NS), and
 * the G_run frames' average time now (*frame_ns: what the gate reads
 * for the next one). Between runs.
 * relaxed: a hint (graph_rt.caller_cpu). */
int rt_dyn_leave_cpu(const dagrt_graph_state *st, uint64_t *frame_ns);
int rt_dyn_leave_cpu(const dagrt_graph_state *st, uint64_t *frame_ns)
{
    graph_rt *r = (graph_rt *)(void *)st->opaque_;
    *frame_ns = r->policy.frame_ns;
    return atomic_load_explicit(&r->caller_cpu, memory_order_relaxed);
}

void rt_exec_dyn_start(graph_rt *r, int workers, uint64_t frame_ns)
{
    (void)dyn_begin(r, workers, false, frame_ns);
}

