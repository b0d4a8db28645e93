/*
 * exec/plan_sched.h - plan mode's list scheduler, a pure module: a graph's
 * nodes, costs and flags in; for each node a list and its place on it, and
 * the frame time the lists predict, out. No runtime dependency, no memory
 * of its own (the caller lends three words per node), so that the runtime
 * (exec/plan_build.c, once per plan) and dagc (`--stats`, the DOT
 * diagram: dagc/costs.c) run the very same schedule. docs/runtime.md,
 * "How plan mode builds its lists", has the rules and a worked example.
 */
#ifndef DAGRT_PLAN_SCHED_H
#define DAGRT_PLAN_SCHED_H

#include <stdbool.h>
#include <stdint.h>

/* The most lists a schedule has (plan mode's PLAN_LISTS). */
#define PS_LISTS 16
#define PS_NONE UINT32_MAX
/* A task's cost when nothing tells it (no `cost`, no profile, nothing
 * measured, and no other task of the graph with a cost to take the mean
 * of), in ns: the order of a small task's body. */
#define PS_DEFAULT_COST 1000u
/* What the model charges an input that comes from another list, in ns:
 * the `done` line and the data it guards cross cores (a few hundred ns
 * on the machines measured, docs/benchmarks-log.md). It is what keeps a
 * chain on one list when another list would not finish it sooner. */
#define PS_XFER_NS 200u
/* How many unplaced nodes of equal priority the scheduler weighs at each
 * step (a bound on its work per node: O(n * PS_WINDOW) in all). */
#define PS_WINDOW 32u
/* What the runtime spends on each node of a list beside its body, in ns:
 * the readiness check, the claim, the `done` store, and the cache lines
 * they and the body's data cost when two threads share a frame. Measured
 * on the uniform 32-node frame (docs/runtime.md, "The model's constants");
 * it is in every node's time (a gate's too: it is claimed and marked done
 * like a task), never in the priority (the bottom level: costs alone). */
#define PS_NODE_NS 100u
/* Scratch words per node the caller lends (ps_graph.scratch). */
#define PS_SCRATCH 3

enum ps_flags {
    PS_GATE = 1u << 0,      /* runs nothing: cost 0 whatever cost() says */
    PS_OR = 1u << 1,        /* starts on its first input, not its last */
    PS_MAIN = 1u << 2,      /* on list 0 (the caller's), always */
    PS_PARALLEL = 1u << 3,  /* its range is shared with the lists that run out of work
                               while it runs (each xfer_ns after that); on the
                               critical path it counts cost / nlists */
    PS_ELSEWHERE = 1u << 4, /* claimed from a list, run by a thread of no list (a hot
                               worker): its list only spends the claim on it */
};

/* The graph, through calls (the runtime's tables and dagc's IR differ):
 * nodes 0 .. n-1 in topological order (every edge goes to a higher index). */
typedef struct ps_graph {
    uint32_t n;
    uint32_t nlists;       /* 1 .. PS_LISTS (more: PS_LISTS) */
    uint32_t xfer_ns;      /* PS_XFER_NS, or another figure for the model */
    uint32_t node_ns;      /* PS_NODE_NS, or another figure (0: bodies alone) */
    void *ctx;
    uint32_t (*flags)(void *ctx, uint32_t i);   /* PS_* */
    uint32_t (*cost)(void *ctx, uint32_t i);    /* ns, the default already applied */
    uint32_t (*npred)(void *ctx, uint32_t i);
    uint32_t (*pred)(void *ctx, uint32_t i, uint32_t k);
    uint32_t (*nsucc)(void *ctx, uint32_t i);
    uint32_t (*succ)(void *ctx, uint32_t i, uint32_t k);
    /* PS_SCRATCH words of node i's, the scheduler's during the call; after
     * it: PS_BL, PS_START and PS_FINISH below. */
    uint32_t *(*scratch)(void *ctx, uint32_t i);
    /* Node i goes at the end of list k. Called once per node, in a
     * topological order; list_of(i) must answer k from then on, and
     * nlists or more (PS_NONE, say) before: the scheduler asks it of
     * nodes not placed yet. */
    void (*place)(void *ctx, uint32_t i, uint32_t k);
    uint32_t (*list_of)(void *ctx, uint32_t i);
    /* Frames in flight the lists are for: 0 or 1, one frame at a time (the
     * frame's time is what the schedule shortens); 2 or more, a pipeline's
     * steady state, where a frame's `on main` tail (the `on main` nodes
     * after which only `on main` nodes follow: a game's render and
     * present) runs on the caller while the helpers start the next frame,
     * so list 0 counts it right after its first node of the frame instead
     * of at its end, and the lists come out even in work rather than
     * short in time (docs/runtime.md, "Pipelines: frames in flight"). */
    uint32_t in_flight;
} ps_graph;

/* The scratch words' meaning after ps_schedule: node i's bottom level
 * (its cost plus the longest cost path after it, ns) and its simulated
 * start and finish (ns from the frame's start). Times saturate at
 * UINT32_MAX (4.29 s). */
enum { PS_BL = 0, PS_START = 1, PS_FINISH = 2 };

typedef struct ps_result {
    uint64_t makespan;     /* the predicted frame time: the last finish, ns (a
                              last node off list 0 xfer_ns later: the caller
                              learns of it); with in_flight 2 or more, the
                              predicted period: the latest list's end, list 0's
                              with the `on main` tail counted early (above) */
    uint64_t work;         /* every node's cost together */
    uint64_t critical;     /* the longest cost path (no transfers; an OR node after
                              its first input; a parallel node counts cost /
                              nlists, rounded up): a lower bound */
    uint32_t last;         /* the node that finishes last (PS_NONE: no node) */
    uint32_t nlists;       /* lists the schedule had */
    uint64_t busy[PS_LISTS]; /* cost run on each list */
} ps_result;

/* Schedules g (see docs/runtime.md): each node's priority is its bottom
 * level; nodes are taken in priority order (bottom level down), and each
 * goes on the list where it would start first (list 0 for PS_MAIN), after
 * the list's last node and its inputs (plus xfer_ns for an input from
 * another list), each hand-over it commits to there counted xfer_ns more
 * (its inputs from other lists, and its successors whose placed inputs
 * all lie on one other list). Among equal priorities the node placed
 * earliest that way goes first (of the first PS_WINDOW whose inputs are
 * placed; ties in index order). Each node takes node_ns, then its cost.
 * Each list is in its simulated start order (with in_flight 2 or more,
 * but for the `on main` tail, whose time list 0 counted early), and all
 * lists are subsequences of the one order of placement, which is
 * topological: running the lists cannot deadlock. Returns false (nothing placed) for a
 * bad graph: an edge that does not go to a higher index, or n over 2^31. */
bool ps_schedule(const ps_graph *g, ps_result *out);

/* The node on the predicted critical path before node v (after
 * ps_schedule): the input, or the earlier node of v's own list, whose
 * finish v's start waited for; PS_NONE where v started at 0. prev_on_list:
 * the node placed on v's list just before it, or PS_NONE. */
uint32_t ps_crit_before(const ps_graph *g, uint32_t v, uint32_t prev_on_list);

#endif
