/*
 * exec.c - the graph executor: runs one frame of the const tables dagc emits.
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
 *   leaves. That one rule makes the run complete without any worker's help;
 *   helpers (runtime tasks that drain the list) are spawned only when a
 *   thread publishes work while fewer helpers than workers are active, so
 *   parallelism comes from the workers without a spawn per node.
 * - `on main` nodes never enter the shared list: fired on the main thread
 *   they go to a main-only list; fired elsewhere they are spawned with
 *   DAGRT_SPAWN_MAIN, which the main thread runs while it waits. `hot` and
 *   `fiber` nodes are spawned with their flags; such a task runs its node,
 *   then drains like a helper. `parallel` nodes call their count function
 *   once and run through dagrt_parallel_for.
 * - The caller drains, then waits on the run's group (helping), and repeats
 *   until every node has completed.
 */
#include "exec.h"

#include <stdatomic.h>

#include "scheduler.h"
#include <string.h>

#define NONE UINT32_MAX
/* Polls of the ready lists (each a few loads) before the caller blocks. */
#define EXEC_SPIN 256
/* A frame whose recent runs took less than this per node runs on the caller
 * alone: handing a node to another core costs a few hundred nanoseconds of
 * cache traffic, more than such a frame could gain. The policy corrects
 * itself: a frame that grows past the bound runs in parallel again next
 * time, and a parallel frame whose wall time falls under it goes inline. */
#define EXEC_INLINE_NS_PER_NODE 250
/* Runs timed for that policy: one in this many (after as many untimed). */
#define EXEC_TIME_EVERY 8

/* Plan mode: the threads' lists (the caller's and one worker's), and the
 * most predecessors a node may have for a graph to run in plan mode (they
 * are kept in the node's own state, and xpred has a bit for each). */
#define PLAN_LISTS 2
#define PLAN_MAXPRED 32
/* Polls (a pause each, ~60 ns on the development VM) of a node's
 * predecessors before its claimer takes a ready node off the other
 * thread's list although that thread is there to run it. */
#define PLAN_STEAL_SPINS 64
/* Polls a worker whose list is finished makes for a node to take from the
 * caller's list before it leaves the run. Short: each poll of the caller's
 * cursor costs the caller's next claim a cache-line trip. */
#define PLAN_LINGER_SPINS 32
/* How long a worker's helper waits between runs for the next one to be
 * offered (see "between runs" below) before it leaves and its worker
 * idles as usual: as long as an idle worker polls before it parks
 * (RT_SPIN_NS), so lingering costs no more CPU than idling would. */
#define PLAN_LINGER_NS 50000
#define PLAN_LEFT UINT32_MAX

/* Per-node run state, overlaid on dagrt_node_state (128 bytes each, see
 * dagrt.h). */
typedef struct node_rt {
    /* Predecessors not yet completed in this run. fetch_sub is acq_rel: the
     * release half publishes the completing node's effects (user data it
     * wrote), the acquire half lets the thread that fires this node see the
     * effects of every predecessor before it runs it. */
    _Atomic uint32_t pending;
    /* Slot `index` of the ready list (not this node's own entry): node + 1,
     * 0 while unpublished. Written with release, read with acquire: a pop
     * inherits the happens-before chain of the thread that fired the node. */
    _Atomic uint32_t slot;
    uint32_t main_next;          /* main-only list link; main thread only */
    uint32_t gate_next;          /* fired-gate worklist link; the firing thread only */
    uint32_t index;
    uint8_t status;              /* 1 ran, 2 skipped; written by the runner */
    /* Plan mode (see "plan mode" below): which list the node is on. */
    uint8_t list;
    uint16_t npl;                /* plan mode: entries in pred */
    struct graph_rt *run;        /* back pointer, for spawned tasks' argument */
    /* Plan mode: the run (epoch) in which this node last completed. Written
     * once per run by the node's runner with release, read with acquire by
     * the runners of its successors: their node sees this node's effects. */
    _Atomic uint32_t done;
    uint32_t lnext;              /* plan mode: next node on the same list */
    uint32_t xpred;              /* plan mode: bit k: pred[k] is on the other list */
    uint16_t pred[PLAN_MAXPRED]; /* plan mode: predecessors (read-only in a run) */
} node_rt;

/* Per-graph run state, overlaid on dagrt_graph_state's opaque words. It is
 * in four blocks of RT_APART bytes, one per writer and rate: block 0 is set
 * by the caller between runs and only read during one, block 1 is the
 * caller's during a run, block 2 the plan worker's, block 3 holds what any
 * thread may touch once a run. A block is RT_APART (128) bytes rather than a
 * 64-byte line because x86 cores fetch lines in aligned pairs (the L2's
 * adjacent-line prefetcher): a line next to one the other thread writes
 * would otherwise travel with it. */
typedef struct graph_rt {
    /* block 0: set by the caller before a run (or after it), read-only
     * during it */
    _Alignas(RT_APART) dagrt *rt;
    const dagrt_graph *g;
    void *ctx;
    node_rt *nodes;
    uint32_t nnodes;
    uint16_t max_helpers;
    /* This run happens on the caller alone (no helpers, no hot or fiber
     * tasks that could complete nodes elsewhere): counters and the ready
     * list need no locked instructions, which cost far more than the work
     * of an empty node. Set before the run, read-only during it. */
    uint16_t solo;
    /* 1 while a run is in progress. exchange with acquire / store with
     * release: a run that starts after another ended sees all its writes. */
    _Atomic uint32_t running;
    uint32_t epoch;              /* plan mode: this run's number, never 0 */
    uint64_t runs;
    uint64_t last_ns;            /* average wall time of recent runs (caller only) */
    int caller_cpu;              /* plan mode: the caller's CPU at the start, or -1 */
    uint32_t lhead[PLAN_LISTS];  /* plan mode: first node of each list */
    /* Plan mode: the last node of list 1 (NONE if empty). */
    uint32_t ltail1;
    uint8_t plan;                /* 0 none yet, 1 planned, 2 cannot plan plan_g */
    const dagrt_graph *plan_g;   /* the graph the plan was made for */
    /* block 1: the caller's during a run */
    _Alignas(RT_APART) _Atomic uint32_t head;   /* next slot to pop */
    /* Plan mode: the next unclaimed node of the caller's list (cursor0,
     * here) and of the worker's list (cursor1, block 2); NONE at the end.
     * Each sits in the block its owner alone writes in a normal run, so a
     * claim is a locked instruction on a line already in the owner's cache. */
    _Atomic uint32_t cursor0;
    uint32_t main_head;          /* main-only list (LIFO); main thread only */
    /* Plan mode, caller only: whether the caller claimed a node of list 1
     * in this run (see plan_run's end). */
    bool stole1;
    /* block 2: the plan worker's during a run */
    _Alignas(RT_APART) _Atomic uint32_t tail;   /* next slot to fill */
    _Atomic uint32_t cursor1;
    /* Helpers spawned and not yet finished: only a heuristic for when to
     * spawn another, so relaxed throughout (correctness never relies on a
     * helper existing, see the drain rule above). */
    _Atomic uint32_t helpers;
    /* Nodes completed, added once per drain; the caller's final check. The
     * group wait already orders everything; relaxed is enough. */
    _Atomic uint32_t done;
    /* block 3 */
    _Alignas(RT_APART) dagrt_group group;       /* counts spawned tasks */
    /* Plan mode: while a worker runs the worker's list, 1 + the CPU it
     * started on; 0 before a helper started, PLAN_LEFT after it left. The
     * caller leaves that list's nodes to a running helper. Only a hint:
     * relaxed. The caller reads it while it waits: here, not next to a
     * cursor, so that its reads never take a cursor's line away. */
    _Atomic uint32_t owner1;
} graph_rt;

_Static_assert(sizeof(node_rt) <= sizeof(dagrt_node_state), "node state too small");
_Static_assert(sizeof(graph_rt) <= sizeof(((dagrt_graph_state *)0)->opaque_),
               "graph state too small");
_Static_assert(_Alignof(graph_rt) <= _Alignof(dagrt_graph_state), "graph state alignment");

/* Depth of graph node bodies running on this thread: a run started from
 * inside one could wait on itself, so it is refused (DAGRT_ENESTED). */
static _Thread_local unsigned tl_node_depth;

static inline graph_rt *state_rt(dagrt_graph_state *st) { return (graph_rt *)(void *)st->opaque_; }

/* ------------------------------------------------------------ ready list */

static void list_push(graph_rt *r, uint32_t node)
{
    if (r->solo) {
        /* One thread: relaxed loads and stores are plain moves. */
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
    uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (r->solo) {
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
    uint32_t completed;
} drain_ctx;

static void task_entry(void *arg);
static void helper_entry(void *arg);

static void spawn_node(graph_rt *r, uint32_t i, unsigned flags)
{
    node_rt *n = &r->nodes[i];
    while (dagrt_spawn_ex(r->rt, &r->group, task_entry, n, flags) != 0) {
        /* Out of task memory: the node must still run where its flags say,
         * so retry after letting others make progress. */
        dagrt_pump_main(r->rt);
    }
}

static void maybe_spawn_helper(graph_rt *r)
{
    uint32_t h = atomic_load_explicit(&r->helpers, memory_order_relaxed);
    if (h >= r->max_helpers)
        return;
    if (!atomic_compare_exchange_strong_explicit(&r->helpers, &h, h + 1, memory_order_relaxed,
                                                 memory_order_relaxed))
        return;
    if (dagrt_spawn_ex(r->rt, &r->group, helper_entry, r, DAGRT_SPAWN_DEFAULT) != 0)
        atomic_fetch_sub_explicit(&r->helpers, 1, memory_order_relaxed);
}

/* Node i fired. Returns i if the calling thread should run it next itself
 * (and it has no node to run next yet), else NONE. */
static uint32_t fire(drain_ctx *d, uint32_t i, bool have_next, bool *published)
{
    graph_rt *r = d->r;
    const dagrt_node *n = &r->g->nodes[i];
    if (n->flags & DAGRT_NODE_MAIN) {
        if (d->on_main) {
            r->nodes[i].main_next = r->main_head;
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
        for (uint32_t k = 0; k < n->nsucc; k++) {
            uint32_t s = g->succ[n->succ_first + k];
            const dagrt_node *sn = &g->nodes[s];
            /* AND: the last input fires it. OR: the first input fires it;
             * the later inputs still count down, and the run still waits
             * for them because they are nodes of the run themselves. A node
             * with one input needs no count at all, nor does any node in a
             * solo run. */
            bool fires;
            if (sn->npred == 1) {
                fires = true;
            } else {
                uint32_t old;
                if (r->solo) {
                    old = atomic_load_explicit(&r->nodes[s].pending, memory_order_relaxed);
                    atomic_store_explicit(&r->nodes[s].pending, old - 1, memory_order_relaxed);
                } else {
                    old = atomic_fetch_sub_explicit(&r->nodes[s].pending, 1, memory_order_acq_rel);
                }
                fires = sn->join == DAGRT_JOIN_OR ? old == sn->npred : old == 1;
            }
            if (!fires)
                continue;
            if (sn->kind == DAGRT_NODE_GATE) {
                r->nodes[s].gate_next = gates;
                gates = s;
                continue;
            }
            uint32_t x = fire(d, s, next != NONE, &published);
            if (x != NONE)
                next = x;
        }
        if (gates == NONE)
            break;
        cur = gates;
        gates = r->nodes[cur].gate_next;
    }
    if (published)
        maybe_spawn_helper(r);
    return next;
}

/* Runs node i's body (or skips it): gates and skipped tasks run nothing.
 * counted: raise this thread's node depth meanwhile (see execute).
 * Returns the node's status (0 gate, 1 ran, 2 skipped); the caller stores
 * it, so that plan mode can order that store after its next claim. */
static uint8_t execute_on(graph_rt *r, uint32_t i, bool counted)
{
    const dagrt_node *n = &r->g->nodes[i];
    if (n->kind == DAGRT_NODE_GATE)
        return 0;
    uint8_t status = 1;
    if (counted)
        tl_node_depth++;
    if ((n->flags & DAGRT_NODE_WHEN) && n->when && !n->when(r->ctx)) {
        status = 2;
    } else if (n->flags & DAGRT_NODE_PARALLEL) {
        size_t count = n->count ? n->count(r->ctx) : 0;
        if (count > 0 && n->run_range &&
            dagrt_parallel_for(r->rt, 0, count, n->grain, n->run_range, r->ctx) != 0) {
            /* The runtime could not split it: run it whole, still exactly once. */
            n->run_range(r->ctx, 0, count);
        }
    } else if (n->run) {
        n->run(r->ctx);
    }
    if (counted)
        tl_node_depth--;   /* same thread as the ++: nothing here migrates */
    return status;
}

static uint8_t execute(graph_rt *r, uint32_t i)
{
    /* (fiber layer) On a fiber the node may suspend and resume on another
     * thread, so a per-thread depth would be raised on one thread and
     * lowered on another; nodes running on a fiber are recognised by
     * dagrt_in_fiber() in dagrt_graph_run instead. */
    return execute_on(r, i, !dagrt_in_fiber(r->rt));
}

/* Runs `next` (if any), then whatever the ready lists hold, until they are
 * empty. Every thread that publishes nodes ends here (see the top). */
static void drain(drain_ctx *d, uint32_t next)
{
    graph_rt *r = d->r;
    for (;;) {
        if (next == NONE && d->on_main && r->main_head != NONE) {
            next = r->main_head;
            r->main_head = r->nodes[next].main_next;
        }
        if (next == NONE)
            next = list_pop(r);
        if (next == NONE)
            break;
        r->nodes[next].status = execute(r, next);
        next = complete(d, next);
    }
    if (d->completed) {
        atomic_fetch_add_explicit(&r->done, d->completed, memory_order_relaxed);
        d->completed = 0;
    }
}

/* A spawned main/hot/fiber node: run it, then help drain. */
static void task_entry(void *arg)
{
    node_rt *n = arg;
    graph_rt *r = n->run;
    n->status = execute(r, n->index);
    /* A fiber never takes `on main` work, even on the main thread: a main
     * task must run on the caller's own stack, and a fiber may move to
     * another thread whenever something in it waits (a body, a parallel
     * for). Main tasks it makes ready are spawned to the main queue. */
    bool fiber = (r->g->nodes[n->index].flags & DAGRT_NODE_FIBER) != 0;
    drain_ctx d = {r, !fiber && dagrt_on_main_thread(r->rt), 0};
    drain(&d, complete(&d, n->index));
}

static void helper_entry(void *arg)
{
    graph_rt *r = arg;
    drain_ctx d = {r, dagrt_on_main_thread(r->rt), 0};
    drain(&d, NONE);
    atomic_fetch_sub_explicit(&r->helpers, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------- plan mode
 *
 * With one worker, the dynamic scheme above pays for every node in cross-
 * core cache traffic: join counters, the shared ready list and helper
 * spawns are locked instructions on lines the other core wrote last, about
 * 250 ns each on a VM (docs/benchmarks.md), several times per 1 us node.
 * Plan mode runs such graphs without any of them:
 *
 * - Once per graph, the nodes are split into two lists, one for the caller
 *   and one for a worker, level by level (a node's level is its longest
 *   path from a root), each level shared out evenly, every node going to the
 *   list that holds most of its predecessors: chains stay on one thread and
 *   few edges cross between them. Each list is in (level, index) order, so
 *   both are subsequences of one topological order. `on main` nodes all go
 *   to the caller's list.
 * - A run: each list has a cursor, the next unclaimed node; a thread waits
 *   until the node at its cursor is ready (its predecessors' `done` equals
 *   the run's epoch), claims it by advancing the cursor with a CAS (and
 *   the node after it in the same CAS if that one is ready too), runs it
 *   and stores `done`. Completed nodes are never counted, only read:
 *   nothing is reset between runs, the epoch moves on instead. Nodes are
 *   claimed only when ready, so a thread that loses its CPU holds up at
 *   most the node it is running and one more.
 * - A thread takes a ready node off the other list when that list has no
 *   owner (the worker has not arrived, or has left), after waiting long on
 *   its own node, or when its own list is finished. Only the caller takes
 *   `on main` nodes.
 * - Progress without the worker: the earliest unfinished node of the
 *   common order has all its predecessors done; it is either claimed, and
 *   running, or at its list's cursor (everything before it on its list is
 *   done), where its owner, or the caller, which only leaves once every
 *   node is claimed, takes it.
 * - Between runs, the worker's helper (a runtime task) lingers, polling a
 *   runtime-owned slot, so that a run's start costs the caller two stores
 *   and no spawn, deque push or wake-up check, and its end no task
 *   completion and no group wait; see "between runs" below.
 */

static inline _Atomic uint32_t *plan_cursor(graph_rt *r, uint32_t k)
{
    return k == 0 ? &r->cursor0 : &r->cursor1;
}

/* Can node i run in this run: AND, all predecessors done; OR, any. `mine`:
 * a node the calling thread has completed but not yet published (it counts
 * as done for this thread), or NONE. */
static inline bool plan_ready(graph_rt *r, uint32_t i, uint32_t epoch, uint32_t mine)
{
    const node_rt *n = &r->nodes[i];
    uint32_t np = n->npl;
    if (np == 0)
        return true;
    bool any = r->g->nodes[i].join == DAGRT_JOIN_OR;
    for (uint32_t k = 0; k < np; k++) {
        /* acquire: pairs with the predecessor runner's release store, so
         * its effects are visible to whoever runs node i next. */
        bool d = n->pred[k] == mine ||
                 atomic_load_explicit(&r->nodes[n->pred[k]].done, memory_order_acquire) == epoch;
        if (d == any)
            return any;
    }
    return !any;
}

/* Claims the next node of list k (not the caller's own) if it is ready
 * now, or returns NONE; never an `on main` node unless the caller. */
static uint32_t plan_claim(graph_rt *r, uint32_t k, bool on_main, uint32_t epoch)
{
    _Atomic uint32_t *cur = plan_cursor(r, k);
    /* relaxed loads and CAS: the cursor only decides who runs which node
     * (the CAS makes that exclusive); what a node needs from the nodes
     * before it comes through the acquire loads of their `done`, and the
     * lists themselves were written before the run started (published to
     * the worker by the spawn of its helper). */
    uint32_t c = atomic_load_explicit(cur, memory_order_relaxed);
    while (c != NONE) {
        if ((!on_main && (r->g->nodes[c].flags & DAGRT_NODE_MAIN)) || !plan_ready(r, c, epoch, NONE))
            return NONE;
        if (atomic_compare_exchange_weak_explicit(cur, &c, r->nodes[c].lnext, memory_order_relaxed,
                                                  memory_order_relaxed))
            return c;
    }
    return NONE;
}

static inline void plan_publish(graph_rt *r, uint32_t i, uint8_t status, uint32_t epoch)
{
    r->nodes[i].status = status;
    /* release: see plan_ready. */
    atomic_store_explicit(&r->nodes[i].done, epoch, memory_order_release);
}

static inline void plan_prefetch(graph_rt *r, uint32_t i)
{
#if defined(__GNUC__)
    /* The predecessors of our next node that another thread runs: their
     * lines cross cores anyway; asking now lets that overlap this body. */
    if (i == NONE)
        return;
    const node_rt *n = &r->nodes[i];
    for (uint32_t m = n->xpred, k = 0; m; m >>= 1, k++)
        if (m & 1)
            __builtin_prefetch(&r->nodes[n->pred[k]].done);
#else
    (void)r;
    (void)i;
#endif
}

/* One poll of a wait. `other_cpu`: where the thread we wait for runs, or -1
 * if unknown. */
static inline void plan_relax(unsigned spins, int other_cpu)
{
    rt_cpu_relax();
    /* On a VM whose idle vCPUs look busy, a worker can be put on the
     * caller's CPU (park.h) and stay there: spinning then only keeps the
     * thread we wait for off the CPU. Give it the CPU when we share it, and
     * after long waits in any case. */
    if ((spins & 63) == 63 && other_cpu >= 0 && rt_cpu_now() == other_cpu)
        rt_os_yield();
    else if ((spins & 0x3fff) == 0x3fff)
        rt_os_yield();
}

/* Where the other thread of the run is, for plan_relax. */
static inline int plan_other_cpu(graph_rt *r, uint32_t own)
{
    if (own == 1)
        return r->caller_cpu;
    uint32_t o = atomic_load_explicit(&r->owner1, memory_order_relaxed);
    return o == 0 || o == PLAN_LEFT ? -1 : (int)(o - 1);
}

/* Takes and runs one ready node of list k (not ours). */
static bool plan_steal(graph_rt *r, uint32_t k, bool on_main, bool counted, uint32_t epoch)
{
    uint32_t s = plan_claim(r, k, on_main, epoch);
    if (s == NONE)
        return false;
    if (k == 1)
        r->stole1 = true;   /* only the caller takes from list 1 */
    plan_publish(r, s, execute_on(r, s, counted), epoch);
    return true;
}

static void plan_ensure_helper(graph_rt *r);

/* One thread's part of a run: its own list `own`, then whatever it can take
 * from the other one. The caller (on_main) stays until every node is
 * claimed; the worker's helper may leave earlier. counted: as for
 * execute_on, decided once (the thread's stack cannot change meanwhile).
 * first: a node of list `own` the caller claimed before the run was
 * offered, run first, or NONE. Returns true when the helper (own == 1) ran
 * the last node of its own list: publishing it was then its last access to
 * the run's state (see plan_run's end). */
static bool plan_work(graph_rt *r, uint32_t own, bool on_main, bool counted, uint32_t first)
{
    const uint32_t epoch = r->epoch;
    const uint32_t other = own ^ 1u;
    _Atomic uint32_t *cur = plan_cursor(r, own);
    uint32_t prev = NONE;
    uint8_t prev_status = 0;
    unsigned spins = 0;
    bool ensured = false;
    if (first != NONE) {
        plan_prefetch(r, r->nodes[first].lnext);
        prev_status = execute_on(r, first, counted);
        prev = first;
    }
    for (;;) {
        /* relaxed: see plan_claim. */
        uint32_t i = atomic_load_explicit(cur, memory_order_relaxed);
        if (i == NONE)
            break;
        /* The node just run counts as done here, so a chain continues
         * with the claim first and the publication after it (below). */
        if (!plan_ready(r, i, epoch, prev)) {
            /* Nothing is claimed while it waits: a thread that loses its
             * CPU here holds up no node, the other thread can take it. And
             * the node we completed goes out first: someone may need it. */
            if (prev != NONE) {
                plan_publish(r, prev, prev_status, epoch);
                prev = NONE;
            }
            plan_relax(++spins, plan_other_cpu(r, own));
            /* The caller takes the worker's list at once while no helper
             * runs it, and makes sure one is coming (once a run). */
            bool unowned = own == 0 && plan_other_cpu(r, 0) < 0;
            if (unowned && !ensured) {
                ensured = true;
                plan_ensure_helper(r);
            }
            if ((spins >= PLAN_STEAL_SPINS || unowned) &&
                plan_steal(r, other, on_main, counted, epoch))
                spins = 0;
            continue;
        }
        /* The node after it, if it is ready now as well (without i), is
         * claimed by the same CAS: a claim costs 40-80 ns (a locked
         * instruction, which waits for the body's stores to drain), on the
         * path of every node, and a level's nodes on one list are mostly
         * ready together. Only two, so a thread that loses its CPU holds
         * up at most the node it runs and one more. */
        uint32_t next = r->nodes[i].lnext;
        uint32_t pair = NONE;
        if (next != NONE && plan_ready(r, next, epoch, prev)) {
            pair = next;
            next = r->nodes[pair].lnext;
        }
        /* relaxed CAS: see plan_claim. It fails when the other thread took
         * the node meanwhile: look again. */
        if (!atomic_compare_exchange_weak_explicit(cur, &i, next, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        spins = 0;
        /* Completing the previous node only now puts its store after the
         * claim's locked instruction: the store's trip to the other core
         * (which read `done` last run) overlaps the next body instead of
         * stalling the claim. */
        if (prev != NONE)
            plan_publish(r, prev, prev_status, epoch);
        plan_prefetch(r, next);
        prev_status = execute_on(r, i, counted);
        prev = i;
        if (pair != NONE) {
            plan_publish(r, i, prev_status, epoch);
            prev_status = execute_on(r, pair, counted);
            prev = pair;
        }
        if (next == NONE && own == 1) {
            /* The helper's list is done, and the helper leaves without
             * taking the caller's last nodes: its last access to the run
             * is this publication, which the caller reads anyway before
             * it returns (plan_run), instead of one more cache-line trip
             * for a separate "left" word on every run. */
            plan_publish(r, prev, prev_status, epoch);
            return true;
        }
    }
    if (prev != NONE)
        plan_publish(r, prev, prev_status, epoch);
    unsigned idle = 0;
    while (atomic_load_explicit(plan_cursor(r, other), memory_order_relaxed) != NONE) {
        if (plan_steal(r, other, on_main, counted, epoch)) {
            idle = 0;
            continue;
        }
        if (!on_main && ++idle > PLAN_LINGER_SPINS)
            break;
        plan_relax(idle, plan_other_cpu(r, own));
    }
    return false;
}

/* ------------------------------------------------------- between runs
 *
 * The worker's helper does not end with its run. It lingers, polling the
 * runtime's plan slot (runtime-owned, so that no helper ever touches a
 * graph state between runs: the caller may free one as soon as
 * dagrt_graph_run returns), and serves the next run offered there:
 * - The caller offers a run by storing its state and a new ticket in the
 *   slot (one line the helper polls), and spawns a helper only when none
 *   lingers (`present`). Nothing stalls the caller: the stores drain while
 *   it runs its first node, which it claimed before the offer (no one else
 *   could see the run yet, so no CAS either).
 * - A helper serves ticket t only after winning `join` for it (a CAS from
 *   a lower ticket to t); the caller, at the end of a run whose worker list
 *   it had to take nodes from, closes t the same way if no helper won it,
 *   so a helper that comes late never joins a finished run. At most one
 *   helper serves a run.
 * - The end of a run: if the caller took no node of list 1, the helper
 *   that joined ran all of them, the last one last, and touches the run's
 *   state no more after publishing it (plan_work): the caller waits for
 *   that node's `done`, a line it has usually just read for the sink. Else
 *   it waits for the slot's `left`, which the helper stores after its last
 *   access.
 * - A helper leaves after PLAN_LINGER_NS without a run, at once when other
 *   tasks are queued (its worker should run them) or when it finds itself
 *   on the caller's CPU (it would only keep the caller off it). Leaving
 *   races with an offer: the helper decrements `present` (seq_cst) and then
 *   reads `go` (seq_cst); the caller, when its worker list has no owner,
 *   fences (seq_cst) and reads `present` (plan_ensure_helper): either the
 *   helper sees the new ticket and serves it, or the caller sees no helper
 *   and spawns one. Either way the run completes: the caller takes any
 *   node no helper does. */

typedef struct plan_slot {
    /* block 0 (RT_APART bytes, as in graph_rt): the offer, written by the
     * caller (the main thread) */
    _Alignas(RT_APART) _Atomic uint64_t go;     /* latest ticket offered, 0 none */
    /* The offered run's state. relaxed: the acquire load of `go` orders
     * it; a helper reads it only after winning `join` for that ticket, and
     * the run (so the state) cannot end before that helper is done with it,
     * so the helper never reads a later run's pointer for an earlier ticket. */
    _Atomic(graph_rt *) run;
    _Atomic int caller_cpu;               /* a hint for lingering helpers */
    uint64_t ticket;                      /* caller only: tickets issued */
    dagrt *rt;
    /* block 1: written by the helper that serves a run (and the caller's
     * closing CAS) */
    _Alignas(RT_APART) _Atomic uint64_t join;   /* ticket << 1 joined, | 1 closed */
    _Atomic uint64_t left;                /* last ticket whose helper left */
    /* block 2: helpers lingering; changes only when one starts or stops,
     * so the caller's read at each run's start stays in its cache. */
    _Alignas(RT_APART) _Atomic uint32_t present;
} plan_slot;

/* The runtime's slot, made at its first plan run (freed by dagrt_destroy,
 * after every task, lingering helpers included, has finished). Caller only.
 * NULL if out of memory: the caller then runs both lists itself. */
static plan_slot *plan_slot_of(dagrt *rt)
{
    if (!rt->exec) {
        plan_slot *s = rt_os_alloc_aligned(RT_APART, sizeof(plan_slot));
        if (!s)
            return NULL;
        memset(s, 0, sizeof *s);
        s->rt = rt;
        atomic_init(&s->go, 0);
        atomic_init(&s->run, NULL);
        atomic_init(&s->caller_cpu, -1);
        atomic_init(&s->join, 0);
        atomic_init(&s->left, 0);
        atomic_init(&s->present, 0);
        rt->exec = s;
    }
    return rt->exec;
}

/* Wins ticket t for the calling helper, or returns false (another helper
 * serves it, or the caller closed it). relaxed: `join` only decides who
 * serves; what the helper reads of the run came through `go`'s acquire,
 * and what the caller reads of the helper's work comes through `done` or
 * `left`. Tickets only grow, so there is no ABA. */
static bool plan_join(plan_slot *s, uint64_t t)
{
    uint64_t j = atomic_load_explicit(&s->join, memory_order_relaxed);
    while (t != 0 && (j >> 1) < t)
        if (atomic_compare_exchange_weak_explicit(&s->join, &j, t << 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

/* Serves run t, joined. Returns false when this helper should stop
 * lingering (it is stuck on the caller's CPU). */
static bool plan_serve(plan_slot *s, uint64_t t, bool counted)
{
    graph_rt *r = atomic_load_explicit(&s->run, memory_order_relaxed);
    /* Woken onto the caller's CPU (park.h), a helper left there parks
     * again each frame and the next wake-up puts it back (22 us per frame
     * in the spawn alone on the development VM): move off it once. */
    int cpu = rt_cpu_leave(r->caller_cpu);   /* where we run, after a move if any */
    bool ok = !(cpu >= 0 && cpu == r->caller_cpu);
    /* Still on the caller's CPU, we could only take turns with it: leave
     * the run to the caller (it takes an unowned list's nodes at once). */
    if (ok) {
        atomic_store_explicit(&r->owner1, (uint32_t)(cpu + 1), memory_order_relaxed);
        if (plan_work(r, 1, false, counted, NONE)) {
            /* r is not ours any more (see plan_work). */
            atomic_store_explicit(&s->left, t, memory_order_release);
            return true;
        }
    }
    atomic_store_explicit(&r->owner1, PLAN_LEFT, memory_order_relaxed);
    /* release: everything this helper did in the run happens before the
     * caller's acquire of `left`, and after it the caller owns r again. */
    atomic_store_explicit(&s->left, t, memory_order_release);
    return ok;
}

/* Polls for an offer until it is time to leave (see above); serves the
 * offers it wins. Returns the last ticket it saw. */
static uint64_t plan_linger(plan_slot *s, rt_ctx *self, bool counted, uint64_t seen)
{
    uint64_t t0 = 0;
    for (unsigned i = 1;; i++) {
        /* acquire: pairs with the caller's release store of the ticket,
         * so the run's setup is visible to the helper that serves it. */
        uint64_t g = atomic_load_explicit(&s->go, memory_order_acquire);
        if (g != seen) {
            seen = g;
            if (plan_join(s, g)) {
                if (!plan_serve(s, g, counted))
                    return seen;
                t0 = 0;
                i = 0;
                continue;
            }
        }
        rt_cpu_relax();
        if ((i & 63) != 0)
            continue;
        if (self && rt_work_visible(self))
            return seen;
        /* On the caller's CPU we would only keep the caller off it: move
         * (as plan_serve does), or leave if we cannot. relaxed: a hint; a
         * wrong value costs a spin, a move or an early leave. */
        int cc = atomic_load_explicit(&s->caller_cpu, memory_order_relaxed);
        if (cc >= 0 && rt_cpu_leave(cc) == cc)
            return seen;
        uint64_t now = rt_now_ns();
        if (t0 == 0)
            t0 = now;
        else if (now - t0 > PLAN_LINGER_NS)
            return seen;
    }
}

static void plan_helper_entry(void *arg)
{
    plan_slot *s = arg;
    dagrt *rt = s->rt;
    /* The caller runs both lists itself when no worker serves it; a
     * helper that the main thread picks up (in some later wait) only ends. */
    if (dagrt_on_main_thread(rt)) {
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
        return;
    }
    rt_ctx *self = rt_ctx_current(rt);
    /* On a fiber only if some wait on a fiber stack ran this task. */
    bool counted = !dagrt_in_fiber(rt);
    uint64_t seen = 0;
    for (;;) {
        seen = plan_linger(s, self, counted, seen);
        /* seq_cst decrement, then seq_cst read of the offer: the Dekker
         * pair with plan_ensure_helper (see "between runs"). */
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_seq_cst);
        uint64_t g = atomic_load_explicit(&s->go, memory_order_seq_cst);
        if (g == seen || !plan_join(s, g))
            return;
        seen = g;
        /* relaxed: see plan_spawn_helper. */
        atomic_fetch_add_explicit(&s->present, 1, memory_order_relaxed);
        if (!plan_serve(s, g, counted)) {
            atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
            return;
        }
    }
}

static void plan_spawn_helper(dagrt *rt, plan_slot *s)
{
    /* A helper counts as present from its spawn, not from its start:
     * while the worker wakes up (microseconds), the next runs must not
     * spawn more, each of which would only make the one before leave
     * (it sees queued work). relaxed: a count for this decision; the
     * leaving side carries the ordering (plan_helper_entry). */
    atomic_fetch_add_explicit(&s->present, 1, memory_order_relaxed);
    /* No group: the helper outlives the run. dagrt_destroy waits for it
     * like for any task. A failed spawn leaves both lists to the caller. */
    if (dagrt_spawn_ex(rt, NULL, plan_helper_entry, s, DAGRT_SPAWN_DEFAULT) != 0)
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
}

/* The caller found its worker list without an owner: make sure a helper
 * is coming, unless one lingers (then it has seen, or will see, the
 * offer). Once a run at most. */
static void plan_ensure_helper(graph_rt *r)
{
    plan_slot *s = r->rt->exec;
    if (!s || atomic_load_explicit(&r->owner1, memory_order_relaxed) != 0)
        return;
    /* seq_cst fence between the offer (the release store of `go`) and the
     * read of `present`: the Dekker pair with a leaving helper. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->present, memory_order_relaxed) == 0)
        plan_spawn_helper(r->rt, s);
}

/* Makes the two lists for r->g (see the top of this section). Plain
 * stores: it runs on the caller between runs. Returns false when the graph
 * cannot run in plan mode. Scratch space: the nodes' dynamic-mode fields
 * (pending = level, main_next/gate_next = per-level buckets). */
static bool plan_build(graph_rt *r)
{
    const dagrt_graph *g = r->g;
    uint32_t n = g->nnodes;
    if (n > UINT16_MAX)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        if (g->nodes[i].flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER | DAGRT_NODE_PARALLEL))
            return false;   /* spawned or split: the dynamic scheme runs those */
        node_rt *x = &r->nodes[i];
        x->npl = 0;
        x->index = i;
        x->run = r;
        x->status = 0;
        atomic_store_explicit(&x->done, 0, memory_order_relaxed);
        atomic_store_explicit(&x->pending, 0, memory_order_relaxed);   /* level */
        x->gate_next = NONE;                                            /* bucket head */
    }
    /* Predecessors and levels; the tables are in topological order. */
    uint32_t maxlevel = 0;
    for (uint32_t u = 0; u < n; u++) {
        const dagrt_node *un = &g->nodes[u];
        uint32_t lu = atomic_load_explicit(&r->nodes[u].pending, memory_order_relaxed);
        if (un->succ_first > g->nsucc || un->nsucc > g->nsucc - un->succ_first)
            return false;
        for (uint32_t k = 0; k < un->nsucc; k++) {
            uint32_t s = g->succ[un->succ_first + k];
            if (s <= u || s >= n || r->nodes[s].npl >= PLAN_MAXPRED)
                return false;
            node_rt *sx = &r->nodes[s];
            sx->pred[sx->npl++] = (uint16_t)u;
            if (atomic_load_explicit(&sx->pending, memory_order_relaxed) < lu + 1)
                atomic_store_explicit(&sx->pending, lu + 1, memory_order_relaxed);
        }
        if (lu > maxlevel)
            maxlevel = lu;
    }
    for (uint32_t i = 0; i < n; i++)
        if (r->nodes[i].npl != g->nodes[i].npred)
            return false;
    /* Buckets per level, each in index order (pushed in reverse). */
    for (uint32_t u = n; u-- > 0;) {
        uint32_t l = atomic_load_explicit(&r->nodes[u].pending, memory_order_relaxed);
        r->nodes[u].main_next = r->nodes[l].gate_next;
        r->nodes[l].gate_next = u;
    }
    uint32_t tail[PLAN_LISTS] = {NONE, NONE};
    r->lhead[0] = r->lhead[1] = NONE;
    for (uint32_t l = 0; l <= maxlevel; l++) {
        uint32_t width = 0;
        for (uint32_t u = r->nodes[l].gate_next; u != NONE; u = r->nodes[u].main_next)
            width += g->nodes[u].kind != DAGRT_NODE_GATE;
        uint32_t cap = (width + PLAN_LISTS - 1) / PLAN_LISTS;
        uint32_t count[PLAN_LISTS] = {0, 0};
        uint32_t last = 0;
        for (uint32_t u = r->nodes[l].gate_next; u != NONE; u = r->nodes[u].main_next) {
            node_rt *x = &r->nodes[u];
            uint32_t k;
            if (g->nodes[u].flags & DAGRT_NODE_MAIN) {
                k = 0;
            } else {
                uint32_t aff[PLAN_LISTS] = {0, 0};
                for (uint32_t q = 0; q < x->npl; q++)
                    aff[r->nodes[x->pred[q]].list]++;
                /* Most predecessors, among lists with room; ties stay with
                 * the previous node's list, keeping neighbours together. */
                k = NONE;
                for (uint32_t c = 0; c < PLAN_LISTS; c++) {
                    if (count[c] >= cap && g->nodes[u].kind != DAGRT_NODE_GATE)
                        continue;
                    if (k == NONE || aff[c] > aff[k] || (aff[c] == aff[k] && c == last))
                        k = c;
                }
                if (k == NONE)
                    k = count[0] <= count[1] ? 0 : 1;
            }
            if (g->nodes[u].kind != DAGRT_NODE_GATE)
                count[k]++;
            last = k;
            x->list = (uint8_t)k;
            x->lnext = NONE;
            x->xpred = 0;
            for (uint32_t q = 0; q < x->npl; q++)
                if (r->nodes[x->pred[q]].list != k)
                    x->xpred |= 1u << q;
            if (tail[k] == NONE)
                r->lhead[k] = u;
            else
                r->nodes[tail[k]].lnext = u;
            tail[k] = u;
        }
    }
    r->ltail1 = tail[1];
    return true;
}

/* A whole run in plan mode. */
static int plan_run(graph_rt *r)
{
    if (++r->epoch == 0) {
        /* 2^32 runs: `done` words from the last wrap could match again. */
        for (uint32_t i = 0; i < r->nnodes; i++)
            atomic_store_explicit(&r->nodes[i].done, 0, memory_order_relaxed);
        r->epoch = 1;
    }
    const uint32_t epoch = r->epoch;
    plan_slot *s = plan_slot_of(r->rt);
    r->caller_cpu = rt_cpu_now();
    r->stole1 = false;
    atomic_store_explicit(&r->cursor1, r->lhead[1], memory_order_relaxed);
    atomic_store_explicit(&r->owner1, 0, memory_order_relaxed);
    /* The caller's first node, if it is a root, is claimed before the run
     * is offered: nobody else can claim it yet, so a plain store does it,
     * and the offer's stores below (to lines the helper polls) drain
     * during its body instead of before a locked claim. */
    uint32_t first = r->lhead[0];
    if (first != NONE && r->nodes[first].npl == 0) {
        atomic_store_explicit(&r->cursor0, r->nodes[first].lnext, memory_order_relaxed);
    } else {
        atomic_store_explicit(&r->cursor0, first, memory_order_relaxed);
        first = NONE;
    }
    uint64_t t = 0;
    if (s && r->lhead[1] != NONE) {
        t = ++s->ticket;
        atomic_store_explicit(&s->run, r, memory_order_relaxed);
        atomic_store_explicit(&s->caller_cpu, r->caller_cpu, memory_order_relaxed);
        /* release: the run's setup above (and the plan) before the ticket. */
        atomic_store_explicit(&s->go, t, memory_order_release);
        /* relaxed: a stale "present" is caught by plan_ensure_helper. */
        if (atomic_load_explicit(&s->present, memory_order_relaxed) == 0)
            plan_spawn_helper(r->rt, s);
    }
    plan_work(r, 0, true, true, first);   /* dagrt_graph_run refuses fibers */
    if (t == 0)
        return 0;   /* no worker list, or no slot: the caller ran everything */
    /* Every node is claimed; a helper may still run its last ones. */
    if (!r->stole1) {
        /* The helper that joined ran all of list 1, and its last access to
         * r is the publication of the list's last node (plan_work).
         * acquire: its effects, and all the helper's, before we return. */
        _Atomic uint32_t *d = &r->nodes[r->ltail1].done;
        for (unsigned spins = 0; atomic_load_explicit(d, memory_order_acquire) != epoch;)
            plan_relax(++spins, plan_other_cpu(r, 0));
        return 0;
    }
    /* We took nodes of list 1: perhaps no helper joined. Close the ticket
     * if so (relaxed: see plan_join); else wait until the helper left. */
    uint64_t j = atomic_load_explicit(&s->join, memory_order_relaxed);
    while ((j >> 1) < t)
        if (atomic_compare_exchange_weak_explicit(&s->join, &j, (t << 1) | 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return 0;
    /* acquire: pairs with plan_serve's release of `left`. */
    for (unsigned spins = 0; atomic_load_explicit(&s->left, memory_order_acquire) != t;)
        plan_relax(++spins, plan_other_cpu(r, 0));
    return 0;
}

/* ------------------------------------------------------------ public API */

bool dagrt__exec_in_node(void) { return tl_node_depth > 0; }

int dagrt_graph_run(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx)
{
    if (!rt || !g || !st)
        return DAGRT_EINVAL;
    if (g->version != DAGRT_GRAPH_VERSION)
        return DAGRT_EVERSION;
    if (g->nnodes == 0 || !g->nodes || !g->succ || !st->nodes || st->nnodes < g->nnodes)
        return DAGRT_EINVAL;
    /* Inside a graph task anywhere, or inside any task (workers run user
     * code only inside tasks; the main thread counts the tasks it runs
     * while it waits or pumps): the run could wait on itself. */
    rt_ctx *self = rt_ctx_current(rt);
    if (tl_node_depth > 0 || (self && (self->worker || self->depth > 0)) ||
        dagrt_in_fiber(rt))   /* fiber: see execute */
        return DAGRT_ENESTED;
    graph_rt *r = state_rt(st);
    if (atomic_exchange_explicit(&r->running, 1, memory_order_acquire) != 0)
        return DAGRT_EBUSY;
    if (!dagrt_on_main_thread(rt)) {
        atomic_store_explicit(&r->running, 0, memory_order_release);
        return DAGRT_EPERM;
    }

    /* Reset: plain stores are enough; spawning a task publishes them to
     * the thread that runs it (the runtime's queues are release/acquire). */
    node_rt *nodes = (node_rt *)(void *)st->nodes;
    if (r->plan_g != g || r->nodes != nodes)
        r->plan = 0;   /* a plan is for one graph in one node array */
    r->rt = rt;
    r->g = g;
    r->ctx = ctx;
    r->nodes = nodes;
    r->nnodes = g->nnodes;
    /* One helper per worker, plus one: the caller, once it waits on the
     * group, takes a helper task like any other, so a helper that keeps
     * publishing work can still hand some to the caller. None for a frame
     * too short to share (EXEC_INLINE_NS_PER_NODE). */
    int workers = dagrt_worker_count(rt);
    bool tiny = r->last_ns && r->last_ns < (uint64_t)g->nnodes * EXEC_INLINE_NS_PER_NODE;
    r->max_helpers = workers > 0 && !tiny ? (uint16_t)(workers < 65534 ? workers + 1 : 65535) : 0;
    /* The policy's clock: a clock read costs about 100 ns on a VM (kvm-clock),
     * as much as a node's overhead here, so only one run in
     * EXEC_TIME_EVERY is timed, the first ones always. */
    uint64_t t0 = 0;
    bool timed = r->runs < EXEC_TIME_EVERY || r->runs % EXEC_TIME_EVERY == 0;
    if (timed)
        t0 = rt_now_ns();
    int rc = 0;
    /* One worker and a frame worth sharing: plan mode, if the graph allows. */
    if (workers == 1 && !tiny) {
        if (r->plan == 0) {
            r->plan = plan_build(r) ? 1 : 2;
            r->plan_g = g;
        }
        if (r->plan == 1) {
            rc = plan_run(r);
            goto finish;
        }
    }
    r->main_head = NONE;
    atomic_store_explicit(&r->head, 0, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&r->helpers, 0, memory_order_relaxed);
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    dagrt_group_init(&r->group);
    bool spawns = false;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        node_rt *n = &r->nodes[i];
        spawns |= (g->nodes[i].flags & (DAGRT_NODE_HOT | DAGRT_NODE_FIBER)) != 0;
        atomic_store_explicit(&n->pending, g->nodes[i].npred, memory_order_relaxed);
        atomic_store_explicit(&n->slot, 0, memory_order_relaxed);
        n->index = i;
        n->status = 0;
        n->run = r;
    }

    /* Hot and fiber tasks are spawned, and may run on a worker even when
     * no helper is. */
    r->solo = r->max_helpers == 0 && (workers == 0 || !spawns);

    drain_ctx d = {r, true, 0};
    uint32_t next = NONE;
    bool published = false;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].npred == 0) {
            uint32_t x = fire(&d, i, next != NONE, &published);
            if (x != NONE)
                next = x;
        }
    if (published)
        maybe_spawn_helper(r);
    for (;;) {
        drain(&d, next);
        next = NONE;
        /* relaxed: `done` only steers this loop; the group wait below is
         * what orders the helpers' work before the return. */
        if (atomic_load_explicit(&r->done, memory_order_relaxed) == g->nnodes)
            break;
        /* Nothing for us right now, but the run goes on elsewhere. Stay
         * useful for a while: take new graph work as soon as it is
         * published, run the runtime's ready tasks (main-thread tasks,
         * helpers, parallel-for pieces); only then block on the group,
         * which wakes us when a helper is spawned or everything is done. */
        bool work = false;
        for (int spin = 0; spin < EXEC_SPIN && !work; spin++) {
            work = r->main_head != NONE ||
                   atomic_load_explicit(&r->head, memory_order_relaxed) <
                       atomic_load_explicit(&r->tail, memory_order_relaxed) ||
                   atomic_load_explicit(&r->done, memory_order_relaxed) == g->nnodes;
            if (!work && self && rt_help_one(self))
                spin = 0;
        }
        if (work)
            continue;
        rc = dagrt_group_wait(rt, &r->group);
        if (rc != 0)
            break;
        if (r->main_head == NONE &&
            atomic_load_explicit(&r->head, memory_order_relaxed) >=
                atomic_load_explicit(&r->tail, memory_order_relaxed) &&
            atomic_load_explicit(&r->done, memory_order_relaxed) != g->nnodes) {
            /* Nothing queued, nothing running, nodes left: impossible for
             * a well-formed table (e.g. a node whose npred is wrong). */
            rc = DAGRT_EINVAL;
            break;
        }
    }
    /* Every node is done; spawned tasks may still be on their way out. */
    if (rc == 0)
        rc = dagrt_group_wait(rt, &r->group);
finish:;
    if (timed) {
        /* A moving average (1/8 weight per timed frame): one frame stretched
         * by a preemption or a page fault must not flip a tiny graph to
         * parallel. */
        uint64_t ns = rt_now_ns() - t0;
        r->last_ns = r->last_ns ? (r->last_ns * 7 + ns) / 8 : ns;
    }
    r->runs++;
    atomic_store_explicit(&r->running, 0, memory_order_release);
    return rc;
}

int dagrt_graph_get_stats(const dagrt_graph_state *st, dagrt_graph_stats *out)
{
    if (!st || !out)
        return DAGRT_EINVAL;
    memset(out, 0, sizeof *out);
    const graph_rt *r = (const graph_rt *)(const void *)st->opaque_;
    if (atomic_load_explicit(&((graph_rt *)(void *)(uintptr_t)r)->running, memory_order_acquire))
        return DAGRT_EBUSY;
    out->runs = r->runs;
    if (!r->runs)
        return 0;
    for (uint32_t i = 0; i < r->nnodes; i++) {
        const node_rt *n = &r->nodes[i];
        if (n->status == 1)
            out->last_ran++;
        else if (n->status == 2)
            out->last_skipped++;
    }
    return 0;
}
