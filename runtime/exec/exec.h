/*
 * exec/exec.h - the graph executor's internals (not installed), one section per
 * file. The public part is the descriptor section of dagrt.h.
 *
 *   exec/exec.c              validation, node dispatch's observed half, the
 *                       mode of each frame (as the policy says), stats
 *   exec/choose.c       the one choice of how a frame runs, and the plan,
 *                       made in one place
 *   exec/policy.c       the run policy: every timing rule that chooses how
 *                       a frame runs (moving averages, sampling, "too small
 *                       to share", the starvation rule of every mode that
 *                       shares a frame with workers)
 *   exec/dynamic.c      the dynamic executor: join counters, the ready
 *                       list, drainers, the hand-off from frame to frame
 *   exec/dyn_wait.c     its caller's wait: drain, help, poll, block
 *   exec/dyn_shuffle.c  its ready list under the shuffled serial switch
 *   exec/plan.c         plan mode: a list per thread (the caller's and
 *                       one per worker), cursors, epochs
 *   exec/plan_run.c     plan mode's G_run frame, the caller's side
 *   exec/plan_build.c   plan mode's lists, made once per graph
 *   exec/plan_off.c     plan mode's nodes that run elsewhere: fiber and
 *                       hot nodes as tasks, the help while a thread waits
 *   exec/plan_helper.c  plan mode between runs: the workers' helpers that
 *                       linger on the runtime's plan slot
 *   exec/serial.c       a serial frame: on the caller alone, in table
 *                       order, no atomics
 *   exec/pipe.c         pipelines: frames in flight, linked frame to frame
 *   exec/pplan.c        pipelined plan mode: a pipeline's frames on plan
 *                       mode's lists, linked by epochs
 *
 * Words: a "serial" frame runs on the caller alone in table order (chosen
 * for frames too small to share, and for plan mode's stretches while its
 * helper gets no CPU); a "one-thread" run is a dynamic run that only the
 * caller takes part in, so its counters and ready list may use relaxed
 * plain moves (graph_rt.one_thread). A "helper" is plan mode's: a worker's
 * task that serves one list (exec/plan_helper.c); a "drainer" is the
 * dynamic executor's: a runtime task that drains the run's ready list
 * (exec/dynamic.c). Threads that wait "help" (run other ready tasks);
 * none of them is a helper.
 */
#ifndef DAGRT_EXEC_H
#define DAGRT_EXEC_H

/* The runtime's own view of dagrt.h's shared structures (C11 atomics)
 * comes from DAGRT_INSIDE_, which the build defines for every file of the
 * library and of the tests that reach inside (runtime/meson.build): no
 * include order to keep. */
#ifndef DAGRT_INSIDE_
#error "libdagrt's internal headers need -DDAGRT_INSIDE_=1 (runtime/meson.build's deps)"
#endif

#include <stdatomic.h>
#include <stdbool.h>

#include "dagrt.h"
#include "../core/core.h"

#define NONE UINT32_MAX
/* Polls of the ready lists (each a few loads) before the caller blocks. */
#define EXEC_SPIN 256
/* The run policy's bounds (exec/policy.c): a frame whose recent runs took
 * less than EXEC_SERIAL_NS_PER_NODE per node is serial: handing a node to
 * another core costs a few hundred nanoseconds of cache traffic, more than
 * such a frame could gain. The policy corrects itself: a frame that grows
 * past the bound runs in parallel again next time, and a parallel frame
 * whose wall time falls under it becomes serial. Runs timed for it: the
 * first EXEC_TIME_EVERY, then one in EXEC_TIME_EVERY. */
#define EXEC_SERIAL_NS_PER_NODE 250
#define EXEC_TIME_EVERY 8

/* Plan mode: the most lists a plan has (the caller's and one per worker
 * up to PLAN_LISTS - 1; a runtime's further workers serve the pool), and
 * the most predecessors a node may have for a graph to run in plan mode
 * (they are kept in the node's own state, and xpred has a bit for each). */
#define PLAN_LISTS 16
#define PLAN_MAXPRED 32
/* Polls (a pause each) of a node's
 * predecessors before its claimer takes a ready node off the other
 * thread's list although that thread is there to run it. */
#define PLAN_STEAL_SPINS 64
/* A shared CPU (exec/plan.c): costs are kept per node in units of
 * PLAN_Q_NS for the claimers (node_rt.qcost). A node at most PLAN_SHORT_NS
 * long may be claimed together with the node after it, and a waiting
 * thread takes it off a list whose thread is there; a longer one only
 * once that thread is overdue: its list's cursor has not moved for twice
 * the list's longest node plus PLAN_OVERDUE_NS. */
#define PLAN_Q_NS 128u
#define PLAN_SHORT_NS 4000u
#define PLAN_OVERDUE_NS 20000u
/* Polls a worker whose list is finished makes for a node to take from the
 * caller's list before it leaves the run. Short: each poll of the caller's
 * cursor costs the caller's next claim a cache-line trip. */
#define PLAN_LINGER_SPINS 32
/* Polls (a pause each) after which a plan thread that is still waiting
 * gives its CPU away once, where threads outnumber CPUs (a loaded machine)
 * so that the one we wait for gets one. Every 1024 polls cost pipelines 5-8%
 * on an idle machine (docs/benchmarks-log.md): a helper waiting for the
 * caller's next frame polls that long. */
#define PLAN_YIELD_SPINS 0x3fffu
/* Where the process does not have its CPUs to itself (exec/crowd.c), a
 * plan thread whose wait has outlasted what its partners could be busy
 * with (twice the longest node of any list plus PLAN_OVERDUE_NS, checked
 * every 64 polls from PLAN_STEAL_SPINS on) sleeps, PLAN_NAP_NS at first,
 * instead of polling: the thread it waits for is queued behind another,
 * and a CPU that goes idle takes queued threads over (exec/plan.c, "a
 * shared CPU"). The kernel's timer slack (50 us by default) comes on top. */
#define PLAN_NAP_NS 20000u
/* ... and never before the wait has lasted PLAN_NAP_AFTER_NS: a nap lasts
 * PLAN_NAP_NS plus the timer slack and the wake-up, 50-110 us here (median
 * 94 us on a loaded 2-core VM), more than two uniform frames (32 us of
 * 1 us tasks on 2 threads), so a partner that is only slow, not off its
 * CPU, must not cost one; one that lost its CPU is gone for the
 * scheduler's slices, 0.75-3 ms. (With the 22 us bound alone, the
 * uniform frame's pipelines under --load 1 ran 1.20/1.31x serial against
 * 1.03/1.10x with the naps off, docs/benchmarks-log.md.) */
#define PLAN_NAP_AFTER_NS 100000u
/* The longest nap: a wait that has lasted eight times as long (rt_plan_nap). */
#define PLAN_NAP_MAX_NS 1000000u
/* How long a worker's helper waits between runs for the next one to be
 * offered (exec/plan_helper.c, "between runs") before it leaves and its worker
 * idles as usual: as long as an idle worker polls before it parks
 * (RT_SPIN_NS), so lingering costs no more CPU than idling would. */
#define PLAN_LINGER_NS 50000
/* ... plus, after a G_run frame, the time its plan predicts between the
 * helper's last node and the frame's end (graph_rt.plan_linger_ns): the
 * caller's `on main` tail, which the helper has nothing to do in. Without
 * it a game's frame (render and present, 180 us, on the caller alone)
 * outlasted the 50 us, the helper left, and each next frame waited for a
 * spawn and a wake-up before its list started (docs/benchmarks-log.md,
 * h-game5). No more than this bound: a longer tail would be spun through
 * for a wake-up that is small beside it. */
#define PLAN_LINGER_MAX_NS 500000
#define PLAN_LEFT UINT32_MAX
/* graph_rt.owner0's values. */
#define PLAN_CALLER_AWAY 0u
#define PLAN_CALLER_HERE 1u
#define PLAN_CALLER_AHEAD 2u
/* Offers the plan slot remembers (one per worker list and frame): more
 * than a pipeline's frames in flight times the worker lists. */
#define PLAN_RING 128
/* Polls a pipelined frame's helper makes with nothing ready on either list
 * while the caller is away (between its calls) before it leaves the frame
 * to the caller's wait. */
#define PPLAN_AWAY_SPINS 2048

/* The run policy's state in a graph state (exec/policy.c has the rules).
 * Written by the caller (the main thread) between runs only. */
typedef struct exec_policy {
    uint64_t frame_ns;           /* moving average of timed runs' wall time; 0: none yet */
    const dagrt_graph *serial_g; /* the graph serial_ok answers for (the tables are const) */
    bool serial_ok;              /* serial_g has no hot or fiber task: it may run serial */
    /* The starvation rule ("when the helper gets no CPU"; the drainers on
     * the dynamic executor), every mode's: */
    bool was_serial;             /* the last plan-mode frame ran serial */
    uint8_t probe;               /* PROBE_*: the probes after a serial stretch */
    uint8_t time_next : 1;       /* the rule wants the next frame timed */
    /* A probe window passed although frames in it gave the clock-free
     * sign (signs_ok): a worker with part of a CPU, whose sharing still
     * gains; a sign then opens a window rather than a stretch (exec/
     * policy.c, "signs that the clock overrules"). win_signs: the open
     * window's. win_keep: the open window only keeps sharing (opened from
     * plan mode, not after a stretch; KEEP_WIN_FRAMES long). */
    uint8_t signs_ok : 1, win_signs : 1;
    uint8_t win_keep : 1;
    /* serial_g's work by the tables' costs (their sum): known (some task
     * has a cost), and as long as the scheduler's slices (exec/policy.c,
     * "signs that the clock overrules"). Set with serial_ok. */
    uint8_t work_known : 1, work_slices : 1;
    /* The last judged shared frame gave the clock-free sign: a sign
     * starts a stretch (or fails a window) only on the second frame in a
     * row (exec/policy.c, "one sign is not starved"). */
    uint8_t sign_prev : 1;
    /* The crowded switch's answer (exec/crowd.c) for the last frame
     * (rt_policy_crowd): which executor the rule's verdicts are about. */
    uint8_t crowd_last : 1;
    uint16_t serial_span;        /* frames in the current (or last) serial stretch */
    /* Timed frames in the probe window (PROBE_WINDOW); before a rule's
     * first stretch, its timed frames (exec/policy.c, REF_SAMPLES). */
    uint16_t win_n;
    uint32_t serial_left;        /* frames of that stretch still to run */
    uint32_t since_probe;        /* plan frames since the last good probe; UINT32_MAX: none yet */
    /* Average time of timed plan frames (clamped samples); in the probe
     * window after a stretch (PROBE_WINDOW), the window's frames' sum. */
    uint64_t plan_ns;
    uint64_t serial_ns;          /* average time of the last stretch's timed serial frames */
    /* The dynamic executor's sign ("held", exec/policy.c): the caller's
     * blocked waits in this frame (written by the caller in its wait:
     * exec/dynamic.c), and their clamped average over shared frames. */
    union {
        uint64_t held_ns;
        /* A pipelined plan frame's (never the dynamic executor's, whose
         * frames alone use held_ns): the time its submit call took, the
         * caller's time per frame with frames in flight, 0 if not timed;
         * judged at its wait (exec/pipe.c). */
        uint64_t pipe_ns;
    };
    uint64_t wait_ns;
    uint64_t stretch_runs;          /* frames of the stretches (dagrt_graph_stats.stretch_runs) */
} exec_policy;

/* Plan mode's own per-node state (exec/plan.c): nothing of it is shared
 * with the dynamic executor's fields. */
typedef struct node_plan {
    /* The run (epoch) in which this node last completed. Written once per
     * run by the node's runner with release, read with acquire by the
     * runners of its successors: their node sees this node's effects. */
    _Atomic uint32_t done;
    uint32_t lnext;              /* next node on the same list */
    uint32_t xpred;              /* bit k: pred[k] is on the other list */
    /* rt_plan_build's scratch, between runs only: first the node's level
     * (longest path from a root) and its level's bucket (head, in the node
     * whose index is the level; link, in every node), then the list
     * scheduler's words (exec/plan_sched.h, PS_SCRATCH). */
    uint32_t scratch[3];
    uint8_t list;                /* which list the node is on */
    /* `prev` inputs, in pred[npl .. npl + nprv): pipelined plan frames
     * (exec/pplan.c) read them in the frame before. */
    uint8_t nprv;
    uint16_t npl;                /* entries in pred (this frame's inputs) */
    uint16_t pred[PLAN_MAXPRED]; /* predecessors, then prev inputs (read-only in a run) */
    /* The node's cost as the runtime measured it (live costs), in ns; 0:
     * not measured, so the tables' cost counts (rt_plan_node_cost). */
    uint32_t cost_live;
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
    /* (pipelines, exec/pipe.c) The hand-off of this node's completion to
     * the next frame: LINK_DONE set by the completer, LINK_LINKED by the
     * next frame's submitter, each with one exchange; whichever comes
     * second counts the completion into the next frame. */
    _Atomic uint32_t link;
    /* (pipelines) An OR node of a linked frame fires on two conditions, its
     * first input (of this frame or a `prev` one) and the same node of the
     * last frame: each takes one off `arm` (from 2), acq_rel as `pending`. */
    _Atomic uint32_t arm;
    uint8_t status;              /* 1 ran, 2 skipped; written by the runner */
    /* Plan mode: the node's cost when the plan was made, in units of
     * PLAN_Q_NS (saturated; 0 unknown). Set with each plan
     * (rt_live_planned), read-only during runs: the claimers' cost-aware
     * choices (exec/plan.c, "a shared CPU"). In the padding before `run`. */
    uint16_t qcost;
    struct graph_rt *run;        /* back pointer, for spawned tasks' argument */
    node_plan plan;
} node_rt;

/* Frame memory's arena (exec/frame.c): the chunks of one frame. A graph
 * state holds two, its runs use them in turn. gen and rt_id are set by
 * the caller at the frame's start, read-only during it; chunks and held
 * change under the runtime's frame lock. */
typedef struct rt_farena {
    uint64_t gen;        /* the frame's number on its runtime (rt->frame_gen), never 0 */
    uint64_t rt_id;      /* the runtime the chunks came from (rt->frame_id) */
    void *chunks;        /* the frame's chunks, NULL once retired */
    size_t held;         /* their bytes, against the budget */
} rt_farena;

/* A pipeline frame's number and the slots of its per-frame data (exec/pipe.c). */
typedef struct rt_frame_id {
    uint64_t seq;
    uint32_t slots;
} rt_frame_id;

/* Per-graph run state, overlaid on dagrt_graph_state's opaque words. It is
 * in five blocks of RT_APART bytes, one per writer and rate: block 0 is set
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
    uint16_t max_drainers;
    /* A one-thread run: only the caller takes part (no drainers, no hot
     * or fiber tasks that could complete nodes elsewhere: with no worker
     * they run in the caller's waits, but a guest slot may take one and
     * then drain the list), so counters and the ready list need no locked
     * instructions, which cost far more than the work of an empty node.
     * Set before the run, read-only during it. */
    uint16_t one_thread;
    uint8_t obs_mode;            /* this run's rt_mode, for the observer's frame_end */
    uint8_t ran_dyn;             /* G_run: the last shared frame was dynamic (exec/exec.c, exec_switch) */
    /* Who owns the state (exec/exec.c: RUN_IDLE, RUN_SYNC, a started run's
     * phases). Taken with an acquire CAS, handed back with a release
     * store: a run that starts after another ended sees all its writes. */
    _Atomic uint32_t running;
    uint32_t epoch;              /* plan mode: this run's number, never 0 */
    uint64_t runs;
    /* Plan mode and the dynamic executor: the caller's CPU at the start,
     * or -1 (no drainer). relaxed: a hint, which a late helper
     * (graph_rt.late) or drainer may still read while the next run stores it. */
    _Atomic int caller_cpu;
    /* Plan mode: the lists (nlists of them; list 0 the caller's, list k
     * the k-th helper's), their first and last nodes (NONE if empty), how
     * many nodes the helpers' lists hold together (the policy compares
     * `stolen` with it), and the worker count the plan was made for. */
    uint32_t lhead[PLAN_LISTS];
    uint32_t ltail[PLAN_LISTS];
    uint32_t nlistw;
    int plan_workers;
    uint8_t nlists;
    uint8_t nwl;                 /* plan mode: helper lists with nodes */
    uint8_t plan_state;          /* rt_plan_state: none yet, made for plan_g, or refused */
    uint8_t plan_piped;          /* the plan's lists are a pipeline's (in_flight 2, plan_build.c) */
    /* How long its helpers linger after one of its runs before they
     * leave (exec/plan_helper.c; PLAN_LINGER_NS, plus the plan's predicted
     * tail without them): set with the plan, read by joined helpers. */
    uint32_t plan_linger_ns;
    /* Plan mode (exec/plan_off.c, "nodes that run elsewhere"), set with the
     * plan: plan_off, the graph has nodes the claimer dispatches as
     * runtime tasks (fiber nodes; hot ones where the runtime has hot
     * workers), counted in `group`; plan_share, it has those or parallel
     * nodes, so a plan thread with nothing ready helps the pool. */
    uint8_t plan_off;
    uint8_t plan_share;
    uint32_t plan_offmask;       /* DAGRT_NODE_* flags that make a node run off the lists */
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
    /* Live costs (exec/live.c): this run's plan-mode nodes are timed
     * (set by the caller before the run, read by the runners). The rest
     * is the caller's, between runs: plan frames since the last timed
     * one, the plan's heaviest list beyond an even share in the costs it
     * was made from (ns), and the re-plans so far
     * (dagrt_graph_stats.replans). */
    uint8_t live_sample;
    uint8_t live_drift;          /* drift seen at the last look (two in a row re-plan) */
    uint32_t live_wait;
    uint64_t live_excess0;
    uint64_t replans;
    const dagrt_graph *live_g;   /* the graph its nodes' cost_live are for */
    /* Pipelined plan mode (exec/pplan.c): this started frame runs on the
     * plan's lists (its wait is rt_pplan_wait), linked after the frame
     * before (in flight when this one was offered): pprev, that frame's
     * node array (NULL: not linked; the array, not its state, whose
     * fields the next frame's reset rewrites while this one may still
     * read), whose nodes are done for this frame once their `done` has
     * reached pprev_epoch. Every plan run: pticket, its first offer on the
     * plan slot (0: none), and noffer, how many (one per helper list,
     * tickets pticket .. pticket + noffer - 1; set before the offer is
     * published, so its helpers may read them). */
    uint8_t pplan;
    uint8_t noffer;
    uint8_t pawake;              /* a helper was running at the offer (exec/policy.c) */
    /* At most this many helpers for a pipeline's frames in flight
     * together: the plan's list bound less the caller's, and no more
     * than the workers (rt_plan_build; rt_plan_spare_helpers). */
    uint8_t plan_helpers;
    node_rt *pprev;
    uint32_t pprev_epoch;
    uint64_t pticket;
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
    /* How this state's frames run (exec/policy.c); caller only, between
     * runs. */
    exec_policy policy;
    /* block 1: the caller's during a run */
    _Alignas(RT_APART) _Atomic uint32_t head;   /* next slot to pop */
    /* Plan mode: the next unclaimed node of the caller's list (cursor0,
     * here), of the first helper's list (cursor1, block 2) and of the
     * others' (xcursor, a block each); NONE at the end. Each sits in a
     * block its owner alone writes in a normal run, so a claim is a locked
     * instruction on a line already in the owner's cache. A cursor word
     * carries its run's epoch beside the node (rt_plan_cw): a helper that
     * comes back late from a run its caller has already ended (graph_rt.
     * late) finds the next run's epoch there, and its claim's CAS, which
     * expects its own, fails. */
    _Atomic uint64_t cursor0;
    uint32_t main_head;          /* main-only list (LIFO); main thread only */
    /* Plan mode, caller only: the nodes of the helpers' lists the caller
     * claimed in this run (see rt_plan_run's end, and the policy). */
    uint32_t stolen;
    /* Plan mode, caller only (the run policy's "held" sign, exec/policy.c):
     * the cost of those nodes and of all the helpers' lists (PLAN_Q_NS
     * units; hsumq set with the plan), and the caller's long waits in this
     * run with nothing it could take (held_ns; hold_t0: when the current
     * one began, 0 none). */
    uint32_t stolenq;
    uint32_t hsumq;
    uint64_t hold_t0;
    uint64_t held_ns;
    /* Plan mode, caller only: no helper was running when the run was
     * offered, and none had been asked for long enough to be late (it was
     * parked and is waking up): the policy does not judge this run
     * (exec/policy.c, "slow to wake is not starved"). The dynamic
     * executor: every worker was parked when the run began. */
    uint8_t waking;
    /* The dynamic executor, a started run's wait in a stretch of the
     * starvation rule (exec/policy.c): 1 once the caller takes the rest of
     * the frame back; drainers then pop no more nodes (exec/dynamic.c).
     * Only a hint (the caller drains whatever is left anyway): relaxed. */
    _Atomic uint32_t closed;
    /* Pipelined plan mode, caller only: the frame started after this one
     * while this one was in flight (linked after it), or NULL. Frames are
     * waited for oldest first, so it is in flight for as long as this
     * frame's wait runs, which looks ahead into it (exec/pplan.c). */
    struct graph_rt *pnext;
    /* block 2: the plan worker's during a run */
    _Alignas(RT_APART) _Atomic uint32_t tail;   /* next slot to fill */
    _Atomic uint64_t cursor1;
    /* Drainers spawned and not yet finished: only a heuristic for when to
     * spawn another, so relaxed throughout (correctness never relies on a
     * drainer existing: exec/dynamic.c's drain rule, at its top). */
    _Atomic uint32_t drainers;
    /* The dynamic executor: `parallel` nodes of this run not completed yet;
     * its caller polls for their pieces instead of blocking while one is
     * left (exec/dynamic.c). A heuristic like drainers: relaxed throughout. */
    _Atomic uint32_t npar;
    /* Nodes completed, added once per drain; the caller's final check. The
     * group wait already orders everything; relaxed is enough. */
    _Atomic uint32_t done;
    /* block 3 */
    _Alignas(RT_APART) dagrt_group group;       /* counts spawned tasks */
    /* Plan mode: owner[k], while a helper runs list k (k >= 1), 1 + the
     * CPU it started on; 0 before a helper started, PLAN_LEFT after it
     * left. The others leave that list's nodes to a running helper. Only a
     * hint: relaxed. Read while threads wait: here, not next to a cursor,
     * so that those reads never take a cursor's line away. */
    _Atomic uint32_t owner[PLAN_LISTS];
    /* Plan mode: set (relaxed, before its claim) by a helper that takes a
     * node of another helper's list, so that the list's last node may have
     * been run by a thread that goes on touching the run: the caller's end
     * then waits for every ticket (rt_plan_run). Its relaxed store comes
     * before the thief's release of a `done` the caller acquires. */
    _Atomic uint32_t xsteal;
    /* Pipelined plan mode: where the caller is (PLAN_CALLER_*): in this
     * frame's wait (HERE), in an earlier frame's wait, whose look-ahead
     * runs this frame's list too (AHEAD), or neither (AWAY). A helper
     * takes ready nodes of the caller's list at once unless HERE, and
     * leaves a frame it can do nothing in only when AWAY (exec/plan.c).
     * Written by the caller only. Only a hint: relaxed. */
    _Atomic uint32_t owner0;
    /* Plan mode, G_run: helpers still inside an ended run ("late": the
     * caller returned without waiting for them, exec/plan_run.c, "the
     * held return"). The caller adds one before it marks a joined ticket
     * late; the helper takes it off (release) as its last access to the
     * state. Whatever rewrites what such a helper may read (a re-plan, a
     * reset for another graph, nodes or runtime, a started run, a re-init,
     * dagrt_graph_state_fini) first waits until it is 0 (acquire):
     * rt_plan_late_wait. */
    _Atomic uint32_t late;
    /* Plan mode: the cursors of lists 2 .. PLAN_LISTS - 1, a block each. */
    struct {
        _Alignas(RT_APART) _Atomic uint64_t c;
    } xcursor[PLAN_LISTS - 2];
    /* block 4: the frame (exec/frame.c), set by the caller at a run's
     * start; read-only during it but for the arenas' chunk lists: this
     * run's arena (one of arena[]), its number and slots (dagrt_get_frame). */
    _Alignas(RT_APART) rt_farena *fa;
    uint64_t fseq;
    uint32_t fslots;
    uint8_t shuffle;             /* the shuffled serial switch (shuf, below) */
    rt_farena arena[2];
    /* Plan mode: each list's longest node when the plan was made, in
     * PLAN_Q_NS units (saturated): the waiters' take-over bound (exec/plan.c,
     * "a shared CPU"). Set with the plan, read-only during runs. */
    uint16_t lmaxq[PLAN_LISTS];
    /* The shuffled serial switch (core/core.h, rt_shuffled): `shuffle`
     * (after fslots) is RT_SHUFFLE_* or 0. A serial frame runs its nodes
     * in a random topological order (exec/serial.c); the dynamic
     * executor's caller pops a random ready node (exec/dynamic.c; beside
     * guest slots, which may pop the list too, by a claim per slot).
     * Drawn from shuf, seeded at the reset from the seed, the graph's
     * name and the frame's number (so frame N of a graph has the same
     * order in every run with that seed). The caller's alone: no worker
     * runs while it is on, and a guest's takes draw nothing. In this
     * block: block 0 is full with the live costs' fields. */
    uint64_t shuf;
} graph_rt;

_Static_assert(sizeof(node_rt) <= sizeof(dagrt_node_state), "node state too small");
_Static_assert(sizeof(graph_rt) <= sizeof(((dagrt_graph_state *)0)->opaque_),
               "graph state too small");
_Static_assert(_Alignof(graph_rt) <= _Alignof(dagrt_graph_state), "graph state alignment");

/* Depth of graph node bodies running on this thread (exec/exec.c): a run
 * started from inside one could wait on itself, so it is refused
 * (DAGRT_ENESTED). */
extern _Thread_local unsigned rt_exec_depth;

static inline graph_rt *state_rt(dagrt_graph_state *st) { return (graph_rt *)(void *)st->opaque_; }

/* One offer of the plan slot: ticket t lives in ring[t % PLAN_RING].
 * LATE: joined, and the caller ended the run without waiting for the
 * helper to leave (exec/plan_run.c, "the held return"). */
enum { OFFER_OPEN, OFFER_JOINED, OFFER_LEFT, OFFER_CLOSED, OFFER_LATE };
#define OFFER_BITS 3u
#define OFFER_MASK 7u
/* An entry's state word: ticket t in OFFER_* state s. */
static inline uint64_t rt_offer_word(uint64_t t, unsigned s) { return t << OFFER_BITS | s; }
typedef struct plan_offer {
    /* rt_offer_word(ticket, OFFER_*): written by the caller (the offer,
     * release; the close or the late mark, a CAS) and the helper that
     * serves it (join, a CAS; leave, an exchange). Each ticket's own value,
     * so that closing or joining one ticket never touches another's. */
    _Atomic uint64_t state;
    /* The offered run's state and the list (>= 1) the ticket serves.
     * relaxed: the acquire of `state` orders them; a helper reads them
     * only after winning the join of that ticket, and the entry is
     * offered again only once its ticket was left or closed. */
    _Atomic(graph_rt *) run;
    _Atomic uint32_t list;
    /* The run's epoch (relaxed, as run and list): a helper runs the
     * ticket's run at this epoch, never at the state's epoch field, which
     * the next run rewrites while a late helper may still be inside. */
    _Atomic uint32_t epoch;
} plan_offer;

/* The runtime's plan slot, where a plan run is offered to the lingering
 * helper (exec/plan_helper.c describes the protocol). */
typedef struct plan_slot {
    /* block 0 (RT_APART bytes, as in graph_rt): written by the caller (the
     * main thread) */
    _Alignas(RT_APART) _Atomic uint64_t go;     /* latest ticket offered, 0 none */
    _Atomic int caller_cpu;               /* a hint for lingering helpers */
    uint64_t ticket;                      /* caller only: tickets issued */
    uint64_t spawn_ns;                    /* caller only: when it last spawned a helper */
    dagrt *rt;
    /* block 1: the offers (caller and serving helper) */
    _Alignas(RT_APART) plan_offer ring[PLAN_RING];
    /* block 2: helpers lingering; changes only when one starts or stops,
     * so the caller's read at each run's start stays in its cache. */
    _Alignas(RT_APART) _Atomic uint32_t present;
    /* Helpers running (started on a worker, lingering or serving): a
     * helper counts here only once it runs, so a parked helper that is
     * being woken up is told apart from one that gets no CPU. relaxed: a
     * hint for the policy. */
    _Atomic uint32_t awake;
    /* When a helper last started on its worker (relaxed: a hint for the
     * policy, compared with spawn_ns: rt_plan_helper_waking). */
    _Atomic uint64_t woke_ns;
} plan_slot;

/* ------------------------------------------------------------ exec/exec.c */

/* rt_exec_in_node: core/core.h (the core asks it). */
/* dagrt_graph_start, and a pipeline frame's start: inpipe, a pipeline's
 * frame (only the pipeline waits for it); piped, each completion hands off
 * to a next frame; prev (or NULL), the frame still in flight that this one
 * is linked after. */
int rt_exec_start(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                  dagrt_ctx_store_fn store, const void *src, bool inpipe, bool piped,
                  graph_rt *prev, bool plan, const rt_frame_id *fid, uint64_t frame_ns);
/* dagrt_graph_wait (pipe false), or a pipeline's wait for its own frame
 * (pipe true): each refuses the other's states (DAGRT_EBUSY). */
int rt_exec_wait(dagrt *rt, dagrt_graph_state *st, bool pipe);
/* rt_exec_wait in its halves, for a wait that another thread or a later
 * task carries out (exec/await.c) and for a pipeline's own waits (its
 * calls checked the thread already): take, from any thread, makes the
 * started run st this wait's (0; DAGRT_EINVAL never started or another
 * runtime's, DAGRT_EBUSY in use or the wrong kind: nothing changed);
 * give hands a taken run back untouched; run, on the main thread (on its
 * own stack, in a task too), does the taken wait: the caller's part of the
 * frame, then its end, and returns the run's result. */
int rt_exec_wait_take(dagrt *rt, dagrt_graph_state *st, bool pipe);
void rt_exec_wait_give(dagrt_graph_state *st);
int rt_exec_wait_run(dagrt *rt, dagrt_graph_state *st);
/* graph_rt.shuffle: serial frames shuffled, and the dynamic executor's
 * ready list: POPS, nobody but the caller pops it (a random slot swapped
 * to the head); SHARED, guest slots may pop it too (each take claims a
 * slot by CAS, exec/dyn_shuffle.c rt_dyn_take_shared). */
enum { RT_SHUFFLE_SHARED = 1, RT_SHUFFLE_POPS = 2 };
/* A frame's order's seed under the shuffled serial switch: the seed,
 * the graph's name and the frame's number mixed (exec/exec.c). */
uint64_t rt_exec_shuffle_seed(const graph_rt *r);
/* A whole run now, on the caller with the same checks as dagrt_graph_run
 * (a pipeline's frame that runs alone: exec/pipe.c): serial, or, share,
 * in plan mode as G_run runs it where the graph has a plan and rt a
 * worker (*shared: it did). */
int rt_exec_run_sync(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                     dagrt_ctx_store_fn store, const void *src, const rt_frame_id *fid, bool share,
                     bool *shared);
/* Whether the calling thread may not run or wait for a graph here (inside
 * a task, a node or a fiber). */
bool rt_exec_nested(dagrt *rt);
/* Whether nothing runs on st (no run, no started run): a pipeline's
 * re-init asks it of its states. */
bool rt_exec_idle(dagrt_graph_state *st);

/* exec/pipe.c, for exec/await.c (dagrt_pipeline_wait_async): take p as
 * a call does, from any of rt's threads (0, DAGRT_EINVAL, DAGRT_EBUSY),
 * and hold it; its frames in flight (p taken); on the main thread, wait
 * oldest first until at most keep frames are in flight, then hand p back
 * (the first error, as dagrt_pipeline_drain's; rt NULL: the frames'). */
int rt_pipe_take(dagrt *rt, dagrt_pipeline *p);
uint32_t rt_pipe_inflight(dagrt_pipeline *p);
int rt_pipe_settle(dagrt *rt, dagrt_pipeline *p, unsigned keep);

/* ---------------------------------------------- node dispatch (exec/exec.c)
 *
 * The one place a node's body runs, written once (rt_exec_dispatch) and
 * used twice: inline with no observer (rt_exec_node_on; the observer's
 * code folds away, ob being a constant NULL there), and out of line with
 * one (rt_exec_node_observed, exec/exec.c), taken only while something
 * observes. */

/* Where a node's body runs, which decides who counts the node depth and
 * how an observer follows the node. */
typedef enum node_where {
    /* On a thread's own stack: the thread's node depth is raised around
     * the body, so a run started from it is refused (DAGRT_ENESTED). */
    NODE_ON_THREAD,
    /* On a fiber, which may suspend in the body and resume on another
     * thread: a per-thread depth would be raised on one thread and lowered
     * on another, so none is kept (the runs refuse fibers by
     * dagrt_in_fiber instead); an observer follows the node through the
     * fiber's suspend and resume hooks. */
    NODE_ON_FIBER,
    /* In a serial frame (exec/serial.c): on the caller's own stack, the
     * depth raised once for the whole frame, not per node. */
    NODE_IN_SERIAL,
} node_where;

/* The calling thread's index for node events (a real call: fibers migrate). */
int rt_exec_thread_of(dagrt *rt);
/* A parallel node's pieces under an observer: each piece is reported on
 * the thread that runs it (arg: a piece_arg). */
typedef struct piece_arg {
    graph_rt *r;
    const dagrt_node *n;
    rt_obs *ob;
    const dagrt_node_event *ev;
} piece_arg;
void rt_exec_piece(void *arg, size_t begin, size_t end);

/* ------------------------------------------------------ exec/frame.c */

/* A run of r starts (the caller, at its reset; fid: a pipeline frame's
 * number and slots, else NULL) / ends (the caller, once every node is
 * done, before the state is handed back): the arena's turn, and the
 * retirement of the state's previous frame. */
void rt_frame_begin(graph_rt *r, dagrt *rt, const rt_frame_id *fid);
void rt_frame_end(graph_rt *r);
/* A pipeline's frame retires once the frame after it has ended too
 * (exec/pipe.c): a, the arena that frame used, if it still holds that
 * frame (gen) and its chunks. */
void rt_frame_retire(dagrt *rt, rt_farena *a, uint64_t gen);
/* A node body on a fiber enters / leaves frame r: real calls, the fiber
 * may have moved to another thread in between (fiber/fiber.h). */
void *rt_frame_enter_fiber(graph_rt *r);
void rt_frame_leave_fiber(dagrt *rt, void *prev);

/* Runs node i's body (or skips it): gates and skipped tasks run nothing.
 * ob: the observer to report to, or NULL. Returns the node's status (0
 * gate, 1 ran, 2 skipped); the caller stores it, so that plan mode can
 * order that store after its next claim. */
static RT_INLINE uint8_t rt_exec_dispatch(graph_rt *r, uint32_t i, node_where where, rt_obs *ob)
{
    const dagrt_node *n = &r->g->nodes[i];
    if (n->kind == DAGRT_NODE_GATE)
        return 0;
    uint8_t status = 1;
    if (where == NODE_ON_THREAD)
        rt_exec_depth++;
    /* r->frame: set by the caller between runs, read-only during one. The
     * state's address is the dagrt_graph_state's (graph_rt overlays it).
     * Without an observer the event is never read and is not built. */
    dagrt_node_event ev = {r->g->name, n->name, i, ob ? rt_exec_thread_of(r->rt) : -1,
                           r->frame, r, false, 0, 0, n->flags};
    /* The body's frame (exec/frame.c): on the thread's own stack the
     * thread cannot change under us; on a fiber, real calls. */
    rt_ctx *fc = NULL;
    void *fprev = NULL;
    if (where == NODE_ON_FIBER) {
        fprev = rt_frame_enter_fiber(r);
    } else if ((fc = rt_ctx_here(r->rt)) != NULL) {
        fprev = fc->frame;
        rt_ctx_set_frame(fc, r);
    }
    if ((n->flags & DAGRT_NODE_WHEN) && n->when && !n->when(r->ctx)) {
        status = 2;
    } else if (n->flags & DAGRT_NODE_PARALLEL) {
        size_t count = n->count ? n->count(r->ctx) : 0;
        if (count > 0 && n->run_range) {
            piece_arg pa = {r, n, ob, &ev};
            void (*fn)(void *, size_t, size_t) = ob ? rt_exec_piece : n->run_range;
            void *arg = ob ? (void *)&pa : r->ctx;
            if (dagrt_parallel_for(r->rt, 0, count, n->grain, fn, arg) != 0)
                fn(arg, 0, count);   /* the runtime could not split it: whole, still exactly once */
        }
    } else if (n->run) {
        /* On a fiber the suspend/resume hooks report this node and keep
         * ev.thread current as it migrates. */
        dagrt_node_event *prev = NULL;
        if (ob) {
            if (where == NODE_ON_FIBER)
                prev = rt_fiber_obs_swap(r->rt, &ev);
            rt_obs_node(ob, RT_OBS_BEGIN, &ev);
        }
        n->run(r->ctx);
        if (ob) {
            rt_obs_node(ob, RT_OBS_END, &ev);
            if (where == NODE_ON_FIBER)
                rt_fiber_obs_swap(r->rt, prev);
        }
    }
    if (where == NODE_ON_FIBER)
        rt_frame_leave_fiber(r->rt, fprev);
    else if (fc)
        rt_ctx_set_frame(fc, fprev);
    if (where == NODE_ON_THREAD) {
        rt_exec_depth--;   /* same thread as the ++: nothing here migrates */
        /* Main-queue tasks held while we were in a node (core/defer.c). */
        if (RT_UNLIKELY(rt_deferred_n != 0) && rt_exec_depth == 0)
            rt_deferred_flush(r->rt);
    }
    return status;
}

/* The same with node events for an observer or the trace recorder. */
uint8_t rt_exec_node_observed(graph_rt *r, uint32_t i, node_where where, rt_obs *ob);

static inline uint8_t rt_exec_node_on(graph_rt *r, uint32_t i, node_where where)
{
    /* The one predictable branch per node when nothing observes. */
#ifndef DAGRT_NO_NODE_HOOKS
    rt_obs *ob = rt_obs_now(&r->rt->obs);
    if (RT_UNLIKELY(ob != NULL))
        return rt_exec_node_observed(r, i, where, ob);
#endif
    return rt_exec_dispatch(r, i, where, NULL);
}

/* A node where it may run on a fiber (spawned tasks, drainers). */
static inline uint8_t rt_exec_node(graph_rt *r, uint32_t i)
{
    return rt_exec_node_on(r, i, dagrt_in_fiber(r->rt) ? NODE_ON_FIBER : NODE_ON_THREAD);
}

/* ------------------------------------------------------ exec/choose.c */

/* graph_rt.plan_state: a state's plan (made by rt_exec_plan, the one place). */
typedef enum rt_plan_state {
    RT_PLAN_NONE = 0,       /* not made yet (or dropped by a reset for another graph) */
    RT_PLAN_MADE = 1,       /* lists made for plan_g */
    RT_PLAN_REFUSED = 2,    /* plan_g cannot run in plan mode (exec/plan_build.c) */
} rt_plan_state;

/* How a frame runs: the one choice (rt_exec_choose), for dagrt_graph_run,
 * a started run and a pipeline's next frame alike. */
typedef enum rt_mode {
    RT_MODE_SERIAL,    /* on the caller in table order (exec/serial.c) */
    RT_MODE_PLAN,      /* plan mode (exec/plan.c): dagrt_graph_run */
    RT_MODE_PPLAN,     /* pipelined plan mode (exec/pplan.c): started runs, pipeline frames */
    RT_MODE_DYNAMIC,   /* the dynamic executor (exec/dynamic.c), with drainers */
    RT_MODE_ALONE,     /* the dynamic executor on the caller alone: a serial
                          stretch where hot or fiber tasks forbid serial */
} rt_mode;
/* Which frame the choice is for. */
typedef enum rt_frame_kind {
    RT_FRAME_RUN,      /* dagrt_graph_run: the caller takes part from the start */
    RT_FRAME_START,    /* a started run (dagrt_graph_start, or a pipeline's frame started) */
    RT_FRAME_PIPE,     /* a pipeline's next frame, before it is started: serial now, or started */
} rt_frame_kind;
/* Which rule judges the frame at its end (exec/exec.c, exec/pipe.c). */
typedef enum rt_judge {
    RT_JUDGE_TIME,     /* only its time into the averages (rt_policy_after, not planned) */
    RT_JUDGE_PLAN,     /* plan mode's starvation rule (rt_policy_after, planned) */
    RT_JUDGE_DYN,      /* the dynamic executor's (rt_policy_dyn_after) */
    RT_JUDGE_PIPE,     /* the pipeline's rule in its first state (rt_policy_pipe_after) */
} rt_judge;
typedef struct rt_choice {
    rt_mode mode;
    rt_judge judge;
} rt_choice;
/* The whole choice of how a frame of g on state r runs, with `workers`
 * workers. RUN and PIPE: r has been reset for g (RUN), or is the idle
 * state the frame will take (PIPE: nothing of it is changed but its
 * policy's notes; `rule` the pipeline's rule state, frame_ns the
 * pipeline's average frame time, plan whether the pipeline may use plan
 * mode). START: r reset for g, plan whether plan mode is allowed. May
 * make r's plan (RUN, START: rt_exec_plan). */
rt_choice rt_exec_choose(graph_rt *r, const dagrt_graph *g, int workers, rt_frame_kind kind,
                         bool plan, graph_rt *rule, uint64_t frame_ns);
/* The shuffled serial switch is on for rt and a frame of g on state r may
 * run serial: then it does (rt_exec_choose for dagrt_graph_run; a
 * pipeline's submit asks it before rt_exec_choose). */
bool rt_exec_shuffle_serial(dagrt *rt, graph_rt *r, const dagrt_graph *g);
/* r's plan for r->g (r reset for it): made the first time (the one place
 * plans are made); whether r->g runs in plan mode. */
bool rt_exec_plan(graph_rt *r);
/* Whether state r holds a plan made for g (makes nothing). */
static inline bool rt_exec_planned(const graph_rt *r, const dagrt_graph *g)
{
    return r->plan_state == RT_PLAN_MADE && r->plan_g == g;
}
/* Whether plan mode may run started runs and pipelines at all: false when
 * DAGRT_PIPE=dynamic is in the environment (read once per process). */
bool rt_exec_env_plan(void);

/* ------------------------------------- exec/policy.c, exec/policy_signs.c */

/* The sampling rule: whether frame number `frame` (from 0) is timed. */
bool rt_policy_sampled(uint64_t frame);
/* Too small to share: frames averaging avg_ns (0: not measured yet) of a
 * graph of nnodes nodes are better run serial. */
bool rt_policy_small(uint64_t avg_ns, uint32_t nnodes);
/* Whether g may run serial (no hot or fiber task), cached in p. */
bool rt_policy_serial_ok(exec_policy *p, const dagrt_graph *g);
/* dagrt_graph_run's clock: whether this run is timed (plan: it would run
 * in plan mode, whose starvation rule may want it timed). */
bool rt_policy_timed(const graph_rt *r, bool plan);
/* A plan-mode frame: whether it runs serial (a starvation stretch). */
bool rt_policy_plan_serial(graph_rt *r);
/* The same for a frame of any mode that shares (the dynamic executor's
 * too): whether it runs on the caller alone, a stretch of the starvation
 * rule; also starts the frame's "held" measure. */
bool rt_policy_stretch(graph_rt *r);
/* After a dynamic frame (dagrt_graph_run's, timed or not; a started run's
 * or a pipeline frame's wait, never timed): its time into the average,
 * and the frame into the starvation rule. */
void rt_policy_dyn_after(graph_rt *r, bool timed, uint64_t ns);
/* The dynamic caller's waits, timed for the "held" sign: its blocked wait
 * on the run's group, and the end of a poll for a parallel task's pieces
 * that stood in for one (*t0: its start, 0 none; now 0: read the clock). */
int rt_policy_held_wait(graph_rt *r);
void rt_policy_poll_end(graph_rt *r, uint64_t *t0, uint64_t now);
/* After dagrt_graph_run's frame: its time (ns, if timed) into the average
 * and, for a plan-mode frame, into the starvation rule. */
void rt_policy_after(graph_rt *r, bool timed, uint64_t ns, bool planned);
/* A moving average (1/8 weight per sample), each sample at most twice the
 * average (one stall moves it an eighth). */
uint64_t rt_policy_average_clamped(uint64_t avg_ns, uint64_t ns);
/* A moving average of a frame's size (1/8 weight per sample), each sample
 * at most 4 times it: one frame stretched by a preemption or a page fault
 * must not flip a choice (exec/policy.c). */
uint64_t rt_policy_average_size(uint64_t avg_ns, uint64_t ns);
/* One shared (or stretch) frame into the starvation rule (exec/policy.c,
 * judge_in's comment): the modes' reports (exec/policy_signs.c) call it
 * with their own sign; judge_in for a pipeline's rule, kept in another
 * state than the frame's. */
void rt_policy_judge(graph_rt *r, bool starved_sign, bool at_once, uint64_t ns, bool ref,
                     bool clock);
void rt_policy_judge_in(exec_policy *p, const dagrt_graph *g, bool serial, bool waking,
                        bool starved_sign, bool at_once, uint64_t ns, bool ref, bool clock);
/* A new plan starts in plan mode, with nothing measured of it. */
void rt_policy_plan_reset(exec_policy *p);
/* Before a frame's choice: crowd, whether the crowded switch sends the
 * frame's sharing to the dynamic executor (exec/crowd.c). A change ends a
 * stretch that judged the other executor, or restarts its window. */
void rt_policy_crowd(exec_policy *p, bool crowd);
/* A pipelined plan frame of state r, whose pipeline's rule lives in state
 * o (its first state, planned for the same graph; else r itself): one rule
 * per pipeline, not one per state. pipe_serial: whether the frame runs
 * serial (o's stretch), noted in r; pipe_after: the frame (serial, ns if
 * timed, judged at once; else at its wait) into o's rule. */
bool rt_policy_pipe_serial(graph_rt *o, graph_rt *r);
void rt_policy_pipe_after(graph_rt *o, graph_rt *r, uint64_t ns);
/* A pipeline's frame run alone on a crowded CPU (exec/pipe.c), serial or
 * in plan mode, into the pipeline's rule o: judged by its time alone. */
void rt_policy_alone_after(graph_rt *o, graph_rt *r, bool serial, uint64_t ns);

/* ----------------------------------------------------- exec/dynamic.c */

/* Frames that take at least this long (frame_ns below) have drainers
 * that move off their caller's CPU (exec/dynamic.c, drainer_entry): on a
 * busy thread's CPU a drainer gets half of it, in the scheduler's slices
 * (a millisecond and more); a shorter frame mostly ends without it, and
 * each slice it loses while holding a node stalls the frame, where beside
 * the caller it only ran while the caller waited. */
#define DYN_LEAVE_NS 1000000u
/* A whole run with the dynamic executor (self: the caller's ctx);
 * frame_ns: the frame's usual time (0: not known), for DYN_LEAVE_NS. */
int rt_exec_dyn_run(graph_rt *r, rt_ctx *self, int workers, uint64_t frame_ns);
/* The same in two halves: start (reset, publish every root, spawn a
 * drainer; returns at once) and wait (the caller's part, then the end). */
void rt_exec_dyn_start(graph_rt *r, int workers, uint64_t frame_ns);
/* Links r (reset by rt_exec_dyn_start with r->linked) after the frame
 * still in flight before it (the submitter's half of the hand-off). */
void rt_exec_dyn_link(graph_rt *prev, graph_rt *r);
/* The caller's shares of a run, for exec/dyn_wait.c: drain r's ready
 * lists from `next` (NONE: none) on the main thread; run one ready node
 * of a later frame x of a pipeline and publish what it frees. */
void rt_dyn_drain_caller(graph_rt *r, uint32_t next);
void rt_dyn_run_one(graph_rt *x);
/* The run the main thread is waiting for (rt_dyn_finish), or NULL: main
 * thread only. While it waits it also runs other runs' drainers; those
 * stop as soon as the awaited run is done (exec/dynamic.c, drain). */
extern _Thread_local graph_rt *rt_dyn_awaited;

/* ------------------------------------------------- exec/dyn_wait.c */

/* Runs the caller's part of run r from `next` on and waits for the rest
 * (drains, helps, then blocks). 0 or an error code. */
int rt_dyn_finish(graph_rt *r, rt_ctx *self, uint32_t next);
/* A started run's wait (its caller's part, then the end). */
int rt_exec_dyn_wait(graph_rt *r, rt_ctx *self);

/* ------------------------------------------------- exec/dyn_shuffle.c */

/* The ready list under the shuffled serial switch (graph_rt.shuffle).
 * POPS: a random published node trades places with the one at head h
 * (only the caller's thread pops). SHARED: one node taken by CAS, at a
 * random slot for the caller and the oldest for a guest, or NONE. */
void rt_dyn_shuffle_head(graph_rt *r, uint32_t h);
uint32_t rt_dyn_take_shared(graph_rt *r);

/* Values of node_rt.link. */
enum { LINK_NONE = 0, LINK_DONE = 1, LINK_LINKED = 2 };

/* Counts node x's completion (in the frame before nx) into frame nx: its
 * same-node input and the `prev x` input of each node in psucc(x); fires
 * what becomes ready (published, never run here). */
void rt_exec_cross(graph_rt *nx, uint32_t x);

/* ------------------------------------------------- exec/plan_build.c */

/* Makes the lists for r->g; false when it cannot run in plan mode. */
bool rt_plan_build(graph_rt *r);

/* --------------------------------------------------- exec/plan_run.c */

/* A whole run in plan mode. */
int rt_plan_run(graph_rt *r);
/* A plan run's start for the helpers' lists (cursors at r->epoch,
 * owners, thefts), before its offer; and a G_run's end of its offers,
 * once every node is done: each ticket closed, left, or marked late (its
 * helper still inside, counted in graph_rt.late; never waited for). */
void rt_plan_begin_lists(graph_rt *r);
void rt_plan_end_all(graph_rt *r);

/* ------------------------------------------------------- exec/plan.c */

/* How deep the calling thread is in plan runs' parts (rt_plan_work): a
 * helper that a wait inside one would run must go elsewhere (see
 * exec/plan_helper.c, plan_helper_entry). */
extern _Thread_local unsigned rt_plan_nest;
/* One thread's part of a plan run at epoch (own: its list; first: a node
 * it has claimed already, or NONE). Returns PLAN_WORK_LAST when a helper
 * (own >= 1) published its list's last node, its last access to the
 * run's state; PLAN_WORK_LATE when it found a later run's epoch in a
 * cursor (its caller had ended the run: it touches the state no more);
 * else PLAN_WORK_LEFT. */
enum { PLAN_WORK_LEFT, PLAN_WORK_LAST, PLAN_WORK_LATE };
int rt_plan_work(graph_rt *r, uint32_t own, bool on_main, node_where where, uint32_t first,
                 uint32_t epoch);
/* Waits until no late helper (graph_rt.late) is inside state r; the caller
 * only, between runs. */
void rt_plan_late_wait(graph_rt *r);
/* The caller in pipelined frame r's wait: claims and runs one ready node
 * of a later frame in flight (r->pnext on); false when none is ready. */
bool rt_plan_ahead(graph_rt *r, node_where where);
/* One poll of a plan run's wait by the thread of list `own` (the duty,
 * yielding where the CPU is shared: exec/plan.c, plan_relax). */
void rt_plan_relax(graph_rt *r, uint32_t own, unsigned spins, uint64_t *since);
/* Within a plan thread's wait (spins polls so far, *since its clock, kept
 * by the wait: 0 to start): sleeps (PLAN_NAP_NS to PLAN_NAP_MAX_NS) and
 * returns true where the process is crowded and the wait overdue (see
 * PLAN_NAP_NS). Where it is not crowded, a wait pays one clock read (and
 * a sample at most every 10 ms: exec/crowd.c), once it is long. */
bool rt_plan_nap(graph_rt *r, unsigned spins, uint64_t *since);

/* The caller's long waits in a plan run (the run policy's "held" sign,
 * exec/policy.c): a wait of the caller's that lasted PLAN_STEAL_SPINS
 * polls without anything it could take is timed from there (a clock read
 * only then, when it has nothing to do anyway) until it runs something
 * again or the run ends. Caller only; inline, as the end is asked at
 * every node the caller claims. */
static inline void rt_plan_hold(graph_rt *r, unsigned spins)
{
    if (spins == PLAN_STEAL_SPINS && r->hold_t0 == 0)
        r->hold_t0 = rt_now_ns();
}

static inline void rt_plan_unhold(graph_rt *r)
{
    if (RT_UNLIKELY(r->hold_t0 != 0)) {
        r->held_ns += rt_now_ns() - r->hold_t0;
        r->hold_t0 = 0;
    }
}

/* Publishes plan node i of the run at epoch: its status, then its `done`. */
static inline void rt_plan_publish(graph_rt *r, uint32_t i, uint8_t status, uint32_t epoch)
{
    r->nodes[i].status = status;
    /* release: see plan_ready (exec/plan.c). */
    atomic_store_explicit(&r->nodes[i].plan.done, epoch, memory_order_release);
}

/* ----------------------------------------------------- exec/crowd.c */

/* A plan thread at a long wait's start (now: the clock): samples its run
 * delay, at most once per window (exec/crowd.c). */
void rt_crowd_sample(uint64_t now);
/* Whether the process looked crowded lately: more threads wanted its CPUs
 * than it had (a hint, any thread). */
bool rt_crowded(void);
/* Whether frames that would run in plan mode (G_run, started runs,
 * pipeline frames) run on the dynamic executor instead: crowded, and
 * until uncrowded for a second (exec/crowd.c). One or two relaxed loads;
 * while true, also the caller's sample tick. Any thread. */
bool rt_crowd_frames(const dagrt *rt);
/* rt_crowd_frames' answer without the sample tick (the run policy's
 * verdict at a frame's end, exec/policy.c). */
bool rt_crowd_now(const dagrt *rt);
/* A sample once per CROWD_TICK calls on this thread (a clock read, then
 * rt_crowd_sample): the dynamic executor's drainers while frames run
 * dynamically. */
void rt_crowd_tick(void);
/* Too small for the crowded switch: frames of avg_ns (the policy's moving
 * average of timed frames; 0: not measured, not small) under
 * CROWD_DYN_NS_PER_NODE per node stay in plan mode while crowded
 * (exec/crowd.c). */
bool rt_crowd_small(uint64_t avg_ns, uint32_t nnodes);
/* The crowded switch for a frame that would share in plan mode: rt has a
 * worker, its frames are crowded (rt_crowd_frames) and they are not
 * tiny (rt_crowd_small of avg_ns): on the dynamic executor instead. */
bool rt_crowd_dyn(const dagrt *rt, uint64_t avg_ns, uint32_t nnodes);
/* Tests' seam: 0/1 fixes the crowded answer (as DAGRT_CROWDED), -1 goes
 * back to sampling; frames' flag cleared. Between frames. */
void rt_crowd_fix(int v);

/* ------------------------------------------------------ exec/live.c */

/* A plan was just made for r (built or re-built): notes the costs it was
 * made from (the claimers' qcost and lmaxq, the drift basis). */
void rt_live_planned(graph_rt *r);
/* Before a frame of r (planned for r->g, idle, no frame reading its
 * state): whether live costs are on and the costs measured since the plan
 * was made have drifted past the threshold. */
bool rt_live_drifted(graph_rt *r);
/* Re-plans r (rt_live_drifted, or a pipeline's hand-over) from its
 * nodes' costs, keeping its run policy's state; counted in r->replans. */
void rt_live_replan(graph_rt *r);
/* After the choice of a frame of r (mode: its rt_mode): whether its nodes
 * are timed (every live_costs-th plan, pipelined plan or, r planned,
 * serial frame of r). */
void rt_live_frame(graph_rt *r, int mode);
/* Claimed node i, run here and timed: its status; its time folded into
 * its cost_live (the runner alone writes it during a run). */
uint8_t rt_live_timed(graph_rt *r, uint32_t i, node_where where);
/* r's nodes take src's measured costs (same graph; both idle). */
void rt_live_copy(graph_rt *r, const graph_rt *src);

/* ------------------------------------------------- exec/plan_off.c */

/* A plan run's start for nodes that run off the lists (r->plan_off): the
 * group that counts their tasks; and its end: waits (helping) until they
 * have all completed. Caller only. */
void rt_plan_off_begin(graph_rt *r);
int rt_plan_off_end(graph_rt *r);
/* Claimed node i, which runs off the lists: spawned as a task that
 * publishes it. */
void rt_plan_off_spawn(graph_rt *r, uint32_t i, node_where where);
/* One poll's help to the pool from a plan thread with nothing ready. */
void rt_plan_help(graph_rt *r, node_where where);
/* The same from a plan thread whose list's next node i (of run `epoch`)
 * is not ready yet: a parallel-for's share it takes, it takes in bites,
 * and it comes back once i is ready (rt_pfor_busy_hook). */
void rt_plan_help_for(graph_rt *r, node_where where, uint32_t i, uint32_t epoch);
/* exec/plan.c: whether node i of run `epoch` has its inputs done, or is
 * no longer the next of list k (taken meanwhile). */
bool rt_plan_next_ready(graph_rt *r, uint32_t k, uint32_t i, uint32_t epoch);
/* Whether hot work waits in the hot lane, for a graph whose hot nodes are
 * spawned there. relaxed: a hint; the pop in rt_help_one decides. */
static inline bool rt_plan_hot_waiting(const graph_rt *r)
{
    return RT_UNLIKELY(r->plan_offmask & DAGRT_NODE_HOT) &&
           atomic_load_explicit(&((graph_rt *)(uintptr_t)r)->rt->hot.n, memory_order_relaxed) > 0;
}

/* ----------------------------------------------------- exec/serial.c */

/* Whether every node of g may run serial, on the caller (no hot or fiber
 * task, which must run where its flag says). */
bool rt_exec_serial_ok(const dagrt_graph *g);
/* The whole frame serial: on the caller in table order (topological), no
 * counter, no ready list, no atomic. The caller must be on its own stack
 * (not a fiber). */
int rt_exec_serial_run(graph_rt *r);

/* ------------------------------------------------------ exec/pplan.c */

/* Starts r (reset by exec/exec.c) in pipelined plan mode after prev (a
 * pipelined plan frame still in flight, or NULL): offers it to the helper
 * and returns at once. */
void rt_pplan_start(graph_rt *r, graph_rt *prev);
/* The caller's part of a pipelined plan frame, then its end. */
int rt_pplan_wait(graph_rt *r);

/* ------------------------------------------------ exec/plan_helper.c */

/* The runtime's slot (made at the first plan run), or NULL. */
plan_slot *rt_plan_slot_of(dagrt *rt);
/* Spawns a lingering helper on s. */
void rt_plan_spawn_helper(dagrt *rt, plan_slot *s);
/* Offers run r on s: a new ticket for each helper list that has nodes,
 * in r->pticket and r->noffer (fewer, or none, while tickets PLAN_RING
 * back are still in use: those lists run without a helper), and spawns
 * helpers where fewer linger than tickets were offered. */
void rt_plan_offer(plan_slot *s, graph_rt *r);
/* The end of ticket t (r's) for the caller: closes it if no helper
 * joined (returns false), else waits until the helper that did has left
 * it (returns true). */
bool rt_plan_end(plan_slot *s, graph_rt *r, uint64_t t);
/* Cursor of plan list k. */
static inline _Atomic uint64_t *rt_plan_cursor(graph_rt *r, uint32_t k)
{
    return k == 0 ? &r->cursor0 : k == 1 ? &r->cursor1 : &r->xcursor[k - 2].c;
}
/* A cursor word: node (NONE at the list's end) in the run at epoch. */
static inline uint64_t rt_plan_cw(uint32_t epoch, uint32_t node) { return (uint64_t)epoch << 32 | node; }
/* How many lists a plan on rt has: the caller's and one per worker, at
 * most PLAN_LISTS. */
static inline uint32_t rt_plan_lists_for(int nworkers)
{
    return nworkers + 1 > PLAN_LISTS ? PLAN_LISTS : (uint32_t)nworkers + 1;
}
/* Makes sure a helper will serve the run just offered. */
void rt_plan_ensure_helper(graph_rt *r);
/* Pipelined frame r, just offered after prev (still in flight): spawns
 * helpers for those still serving prev, within r->plan_helpers. */
void rt_plan_spare_helpers(plan_slot *s, graph_rt *r, const graph_rt *prev);
/* A started instance (dagrt_graph_start, not a pipeline's frame): its
 * caller takes part only at its wait, so nothing may leave it for then. */
/* The cost plan mode schedules node i by, in ns: what the runtime
 * measured, else the tables' (`cost` or a profile), else 0 (unknown: the
 * plan builder chooses a default). Between runs only. */
static inline uint32_t rt_plan_node_cost(const graph_rt *r, uint32_t i)
{
    uint32_t live = r->nodes[i].plan.cost_live;
    if (live)
        return live;
    return r->g->cost ? r->g->cost[i] : 0;
}

static inline bool rt_run_caller_away(const graph_rt *r) { return r->async && !r->inpipe; }
/* At a run's offer: whether a helper runs now. After it: whether the
 * helper last asked for was slow to wake rather than starved: it started
 * within PLAN_WAKE_NS of its spawn, or has not started and was asked for
 * less than PLAN_WAKE_NS ago. */
bool rt_plan_helper_awake(plan_slot *s);
bool rt_plan_helper_waking(plan_slot *s);
/* How long after its spawn a helper that has not started yet is late: a
 * parked worker's wake-up on a VM costs up to about 150 us; one that is
 * still not running after this gets no CPU. */
#define PLAN_WAKE_NS 1000000u

#endif
