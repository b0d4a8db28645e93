/*
 * exec.h - the graph executor's internals (not installed), one section per
 * file. The public part is the descriptor section of dagrt.h.
 *
 *   exec.c         validation, node dispatch (the one place a node's body
 *                  runs), choosing the mode, the run's timing, stats
 *   exec_dyn.c     the dynamic executor: join counters, the ready list,
 *                  helpers
 *   exec_plan.c    plan mode (one worker): two lists made once per graph,
 *                  cursors, epochs
 *   exec_linger.c  plan mode between runs: the helper that lingers
 *   exec_serial.c  a frame on the caller alone, in table order, no atomics
 *   exec_pipe.c    pipelines: frames in flight, linked frame to frame
 */
#ifndef DAGRT_EXEC_H
#define DAGRT_EXEC_H

/* The runtime's own view of dagrt.h's shared structures: C11 atomics. */
#if defined(DAGRT_H) && !defined(DAGRT_INSIDE_)
#error "include libdagrt's internal headers before dagrt.h"
#endif
#define DAGRT_INSIDE_ 1

#include <stdatomic.h>
#include <stdbool.h>

#include "dagrt.h"
#include "scheduler.h"

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
/* Polls (a pause each) of a node's
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

/* Plan mode's own per-node state (exec_plan.c): nothing of it is shared
 * with the dynamic executor's fields. */
typedef struct node_plan {
    /* The run (epoch) in which this node last completed. Written once per
     * run by the node's runner with release, read with acquire by the
     * runners of its successors: their node sees this node's effects. */
    _Atomic uint32_t done;
    uint32_t lnext;              /* next node on the same list */
    uint32_t xpred;              /* bit k: pred[k] is on the other list */
    /* plan_build's scratch, between runs only: the node's level (longest
     * path from a root) and its level's bucket (head, in the node whose
     * index is the level; link, in every node). */
    uint32_t level;
    uint32_t bucket;
    uint32_t bucket_next;
    uint8_t list;                /* which list the node is on */
    uint16_t npl;                /* entries in pred */
    uint16_t pred[PLAN_MAXPRED]; /* predecessors (read-only in a run) */
} node_plan;

/* Per-node run state, in dagrt_node_state (128 bytes each, see dagrt.h):
 * the fields both executors use, the dynamic executor's, then plan
 * mode's in a struct of their own. */
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
    /* The main-only list's link (an `on main` node; main thread only) or
     * the fired-gate worklist's (a gate; the firing thread only): a node is
     * never both. */
    uint32_t next;
    /* (pipelines, exec_pipe.c) The hand-off of this node's completion to
     * the next frame: LINK_DONE set by the completer, LINK_LINKED by the
     * next frame's submitter, each with one exchange; whichever comes
     * second counts the completion into the next frame. */
    _Atomic uint32_t link;
    /* (pipelines) An OR node of a linked frame fires on two conditions, its
     * first input (of this frame or a `prev` one) and the same node of the
     * last frame: each takes one off `arm` (from 2), acq_rel as `pending`. */
    _Atomic uint32_t arm;
    uint8_t status;              /* 1 ran, 2 skipped; written by the runner */
    struct graph_rt *run;        /* back pointer, for spawned tasks' argument */
    node_plan plan;
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
    /* Who owns the state (exec.c: RUN_IDLE, RUN_SYNC, a started run's
     * phases). Taken with an acquire CAS, handed back with a release
     * store: a run that starts after another ended sees all its writes. */
    _Atomic uint32_t running;
    uint32_t epoch;              /* plan mode: this run's number, never 0 */
    uint64_t runs;
    uint64_t last_ns;            /* average wall time of recent runs (caller only) */
    int caller_cpu;              /* plan mode: the caller's CPU at the start, or -1 */
    uint32_t lhead[PLAN_LISTS];  /* plan mode: first node of each list */
    /* Plan mode: the last node of list 1 (NONE if empty). */
    uint32_t ltail1;
    uint8_t plan;                /* 0 none yet, 1 planned, 2 cannot plan plan_g */
    /* Started runs (dagrt_graph_start, pipelines): `on main` nodes are
     * spawned to the main thread's queue, so that any of its waits runs
     * them (a sync run keeps them on a list of its own instead). */
    uint8_t async;
    /* A pipeline frame: each completion hands off to the next frame (see
     * node_rt.link). */
    uint8_t piped;
    /* A pipeline frame linked after a frame still in flight: its nodes
     * also wait for their own last frame's node and their `prev` inputs.
     * Otherwise `prev` inputs are satisfied at the start. */
    uint8_t linked;
    /* Started by a pipeline: only the pipeline may wait for it (frames
     * are waited for oldest first, which the hand-off relies on). */
    uint8_t inpipe;
    const dagrt_graph *plan_g;   /* the graph the plan was made for */
    /* (pipelines) The frame linked after this one: stored with release by
     * the submitter (the main thread) after that frame's reset and before
     * its LINKED exchanges. Completers read it after seeing LINKED (the
     * exchange orders it), helpers looking ahead with acquire (they then
     * see the frame's reset). NULL until linked. */
    _Atomic(struct graph_rt *) next;
    /* The frame number observers see: the runs of this graph started on
     * this runtime before this one, all its states and pipelines together
     * (a pipeline's frames alternate states, and a profile must tell any
     * two runs apart). */
    uint64_t frame;
    /* policy: exec_serial.c's answer for serial_g (whether every node may
     * run inline on the caller), cached: the tables are const. Plan mode's
     * starvation policy (exec_plan.c, rt_plan_frame): frames still to run
     * on the caller alone, the length of the next such stretch, whether
     * the last frame was one of them, the probe frames' phase, whether the
     * policy wants the next frame timed, the nodes on list 1, plan frames
     * since the last good probe, and the average time of plan frames and
     * of the last stretch's frames on the caller. Caller only, between
     * runs. */
    const dagrt_graph *serial_g;
    bool serial_ok;
    bool was_solo;
    uint8_t probe;
    uint8_t time_next;
    uint16_t solo_span;
    uint32_t solo_left;
    uint32_t nlist1;
    uint32_t since_probe;
    uint64_t plan_ns;
    uint64_t solo_ns;
    /* block 1: the caller's during a run */
    _Alignas(RT_APART) _Atomic uint32_t head;   /* next slot to pop */
    /* Plan mode: the next unclaimed node of the caller's list (cursor0,
     * here) and of the worker's list (cursor1, block 2); NONE at the end.
     * Each sits in the block its owner alone writes in a normal run, so a
     * claim is a locked instruction on a line already in the owner's cache. */
    _Atomic uint32_t cursor0;
    uint32_t main_head;          /* main-only list (LIFO); main thread only */
    /* Plan mode, caller only: the nodes of list 1 the caller claimed in
     * this run (see plan_run's end, and the policy). */
    uint32_t stolen1;
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

/* Depth of graph node bodies running on this thread (exec.c): a run
 * started from inside one could wait on itself, so it is refused
 * (DAGRT_ENESTED). */
extern _Thread_local unsigned rt_exec_depth;

static inline graph_rt *state_rt(dagrt_graph_state *st) { return (graph_rt *)(void *)st->opaque_; }

/* The runtime's plan slot, where a plan run is offered to the lingering
 * helper (exec_linger.c describes the protocol). */
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

/* ------------------------------------------------------------ exec.c */

/* True while the calling thread runs the body of a graph node. */
bool rt_exec_in_node(void);
/* dagrt_graph_start, and a pipeline frame's start: inpipe, a pipeline's
 * frame (only the pipeline waits for it); piped, each completion hands off
 * to a next frame; prev (or NULL), the frame still in flight that this one
 * is linked after. */
int rt_exec_start(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                  dagrt_ctx_store_fn store, const void *src, bool inpipe, bool piped,
                  graph_rt *prev);
/* dagrt_graph_wait (pipe false), or a pipeline's wait for its own frame
 * (pipe true): each refuses the other's states (DAGRT_EBUSY). */
int rt_exec_wait(dagrt *rt, dagrt_graph_state *st, bool pipe);
/* A whole run now, on the caller, in table order (a pipeline frame too
 * small to share): the same checks as dagrt_graph_run. */
int rt_exec_run_serial(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                       dagrt_ctx_store_fn store, const void *src);
/* Whether the calling thread may not run or wait for a graph here (inside
 * a task, a node or a fiber). */
bool rt_exec_nested(dagrt *rt);
/* Node dispatch: the one place where node bodies run. */
/* Runs node i's body (or skips it): gates and skipped tasks run nothing.
 * counted: raise this thread's node depth meanwhile (see execute).
 * Returns the node's status (0 gate, 1 ran, 2 skipped); the caller stores
 * it, so that plan mode can order that store after its next claim. */
/* The same with node events for an observer or the trace recorder
 * (exec.c): out of line, taken only while something observes. */
uint8_t rt_exec_node_observed(graph_rt *r, uint32_t i, bool counted, rt_obs *ob);

static inline uint8_t rt_exec_node_on(graph_rt *r, uint32_t i, bool counted)
{
    /* The one predictable branch per node when nothing observes. */
#ifndef DAGRT_NO_NODE_HOOKS
    rt_obs *ob = rt_obs_now(&r->rt->obs);
    if (RT_UNLIKELY(ob != NULL))
        return rt_exec_node_observed(r, i, counted, ob);
#endif
    const dagrt_node *n = &r->g->nodes[i];
    if (n->kind == DAGRT_NODE_GATE)
        return 0;
    uint8_t status = 1;
    if (counted)
        rt_exec_depth++;
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
        rt_exec_depth--;   /* same thread as the ++: nothing here migrates */
    return status;
}

static inline uint8_t rt_exec_node(graph_rt *r, uint32_t i)
{
    /* (fiber layer) On a fiber the node may suspend and resume on another
     * thread, so a per-thread depth would be raised on one thread and
     * lowered on another; nodes running on a fiber are recognised by
     * dagrt_in_fiber() in dagrt_graph_run instead. */
    return rt_exec_node_on(r, i, !dagrt_in_fiber(r->rt));
}

/* -------------------------------------------------------- exec_dyn.c */

/* A whole run with the dynamic executor (self: the caller's ctx). */
int rt_exec_dyn_run(graph_rt *r, rt_ctx *self, int workers);
/* The same in two halves: start (reset, publish every root, spawn a
 * helper; returns at once) and wait (the caller's part, then the end). */
void rt_exec_dyn_start(graph_rt *r, int workers);
/* Links r (reset by rt_exec_dyn_start with r->linked) after the frame
 * still in flight before it (exec_dyn.c, the submitter's half of the
 * hand-off). */
void rt_exec_dyn_link(graph_rt *prev, graph_rt *r);
int rt_exec_dyn_wait(graph_rt *r, rt_ctx *self);

/* Values of node_rt.link. */
enum { LINK_NONE = 0, LINK_DONE = 1, LINK_LINKED = 2 };

/* Counts node x's completion (in the frame before nx) into frame nx: its
 * same-node input and the `prev x` input of each node in psucc(x); fires
 * what becomes ready (published, never run here). */
void rt_exec_cross(graph_rt *nx, uint32_t x);

/* ------------------------------------------------------- exec_plan.c */

/* Makes the two lists for r->g; false when it cannot run in plan mode. */
bool rt_plan_build(graph_rt *r);
/* A whole run in plan mode. */
int rt_plan_run(graph_rt *r);
/* A frame of a planned graph: in plan mode, or on the caller alone while
 * the worker's helper is measured not to get a CPU (the policy). Then
 * rt_plan_after with the frame's time (ns, 0 if it was not timed). */
int rt_plan_frame(graph_rt *r);
void rt_plan_after(graph_rt *r, uint64_t ns);
/* One thread's part of a plan run (own: its list; first: a node it has
 * claimed already, or NONE). */
bool rt_plan_work(graph_rt *r, uint32_t own, bool on_main, bool counted, uint32_t first);

/* ----------------------------------------------------- exec_serial.c */

/* Whether every node of g may run inline on the caller (no hot or fiber
 * task, which must run where its flag says). */
bool rt_exec_serial_ok(const dagrt_graph *g);
/* The same, kept in r: computed once per graph and state (main thread). */
bool rt_exec_serial_ok_cached(graph_rt *r, const dagrt_graph *g);
/* The whole frame on the caller in table order (topological): no counter,
 * no ready list, no atomic. The caller must be on its own stack (not a
 * fiber). */
int rt_exec_serial_run(graph_rt *r);

/* ----------------------------------------------------- exec_linger.c */

/* The runtime's slot (made at the first plan run), or NULL. */
plan_slot *rt_plan_slot_of(dagrt *rt);
/* Spawns a lingering helper on s. */
void rt_plan_spawn_helper(dagrt *rt, plan_slot *s);
/* Makes sure a helper will serve the run just offered. */
void rt_plan_ensure_helper(graph_rt *r);

#endif
