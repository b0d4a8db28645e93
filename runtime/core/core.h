/*
 * core/core.h - libdagrt's scheduler internals, shared with the fiber layer
 * (fiber/fiber.c, wait/sync.c) and the graph executor (exec/exec.c). Not installed.
 *
 * Threads and contexts. Every thread that runs tasks has an rt_ctx: index 0
 * is the main thread (the one that called dagrt_create), 1..nworkers are the
 * worker threads (1..hot_workers of them are hot), nworkers+1..nctx-1 are
 * guest slots (core/guest.c): threads the runtime does not own hold one while
 * attached or while they wait on a group. Each ctx owns a Chase-Lev
 * deque (its spawns; anyone may steal), an MPSC inbox (work sent to it from
 * other threads; ctx 0's inbox is the main-thread queue, whose tasks only
 * the main thread runs), a parker, and a task free list.
 *
 * Fiber migration rule. rt_ctx_current() reads thread-local storage. A fiber
 * may suspend on one worker and resume on another, and compilers cache TLS
 * addresses within a function, so: never keep an rt_ctx* (or any TLS value)
 * across anything that may switch fibers (a wait in a fiber task); call
 * rt_ctx_current() again afterwards. It is a real (noinline) call for that
 * reason. Code that runs on a thread's own stack (the worker loop, waits on
 * the main thread) never migrates.
 *
 * Task lifetime. rt_task_alloc (ctx) or rt_task_alloc_any (any thread) gives
 * a descriptor; fill fn/arg/group/flags, then rt_submit. A worker that picks
 * it runs rt_task_run: plain tasks are called and then rt_task_finish'ed;
 * tasks flagged DAGRT_SPAWN_FIBER are handed to rt_fiber_run (the fiber
 * layer), which must call rt_task_finish exactly once when fn returns (on
 * whatever worker the fiber ends on). rt_task_finish frees the descriptor
 * and then completes its group (which may wake a waiter).
 *
 * Resuming a suspended fiber: make a task (fn = your resume trampoline, arg =
 * the fiber, no group) and rt_submit it from any thread: it becomes ready
 * work that some worker runs, with the usual wake-up guarantee (from a
 * ctx it goes to that ctx's deque, from elsewhere to an idle worker's inbox).
 *
 * Waiting in a fiber: rt_fiber_group_wait arms the group with an rt_waiter
 * embedded in the fiber (rt_group_arm), suspends, and is resumed by the
 * waiter's fn, which the last completer calls after its final access to the
 * group. Groups on fiber stacks have no owner (dagrt_group_init gives the
 * owner-local fast path only to groups on the calling thread's own stack),
 * so a fiber may resume and return on any worker.
 *
 * Shutdown counts: every submitted task must eventually pass through
 * rt_task_finish (or never be submitted): dagrt_destroy waits until the
 * finished count equals the submitted count.
 */
#ifndef DAGRT_SCHEDULER_H
#define DAGRT_SCHEDULER_H

/* The runtime's own view of dagrt.h's shared structures (C11 atomics)
 * comes from DAGRT_INSIDE_, which the build defines for every file of the
 * library and of the tests that reach inside (runtime/meson.build): no
 * include order to keep. */
#ifndef DAGRT_INSIDE_
#error "libdagrt's internal headers need -DDAGRT_INSIDE_=1 (runtime/meson.build's deps)"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../arch/apart.h"
#include "dagrt.h"
#include "deque.h"
#include "error.h"
#include "mpsc.h"
#include "../trace/trace.h"
#include "../os/os.h"
#include "park.h"
#include "../wait/wait.h"

/* --------------------------------------------------------------- tasks */

/* DAGRT_SPAWN_LARGE_STACK (fiber layer): only together with FIBER. */
#define RT_TASK_PUBLIC_FLAGS (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT | DAGRT_SPAWN_FIBER | \
                              DAGRT_SPAWN_LARGE_STACK)
#define RT_TASK_SELF  (1u << 16)      /* internal: fn gets the rt_task * itself, not arg */
#define RT_TASK_OWNED DAGRT__TASK_OWNED   /* counted in its group's owner-local count */
#define RT_TASK_FORKED DAGRT__TASK_FORKED /* a fork's task on its forker's stack (rt_forked) */
#define RT_HOME_SHARED UINT32_MAX     /* descriptor from the shared pool */
/* A task of the program's (dagrt_spawn and friends: core/work.c, core/batch.c)
 * spawned while something observed (an observer or the trace): its run is
 * reported as a spawned task (core/work.c, task_run; a fiber task's
 * slice by slice: fiber/sched.c, run_on_fiber). Never set on the
 * runtime's own tasks: its spawns through the same entry points go
 * through rt_spawn_own, and its other tasks (parallel-for pieces, fiber
 * resumes, asynchronous continuations, plan helpers, forks) are made
 * without it. Set at the spawn, so the run's fast path tests it together
 * with DAGRT_SPAWN_FIBER: no branch of its own when nothing observes. */
#define RT_TASK_SEEN   (1u << 19)
/* With RT_TASK_SEEN: the node that spawned it is in its slot's tail
 * (rt_task_parent), as the trace knew it on the spawning thread. */
#define RT_TASK_PARENT (1u << 20)
/* For a worker alone (rt_spawn_on_worker: plan mode's helpers): the main
 * thread's waits, which take tasks from the workers' inboxes too, leave
 * it there. On the main thread such a task would only hand itself back
 * to a worker, and a helping wait that takes it again at once keeps it
 * from ever reaching one (exec/plan_helper.c; tests/exec/plan_tail.c,
 * plan_main_wait). */
#define RT_TASK_WORKER (1u << 21)

typedef struct rt_group rt_group;

/* A task descriptor: dagrt.h's one definition of its fields (the inline
 * fork sets up a fork's). home: the ctx index whose pool owns it, or
 * RT_HOME_SHARED; fiber NULL when allocated; u: parallel-for ranges. */
typedef struct rt_task {
    DAGRT__TASK_FIELDS_(rt_node, struct rt_group)
} rt_task;

/* A pooled descriptor (core/task.c's slabs): the task and, right after it,
 * room for dagrt_spawn_inline's storage, which starts at u (free in a user
 * task: only the parallel-for's own tasks use it) so that a small argument
 * stays in the descriptor's first cache line. Tasks that are not pooled
 * (forks, the parallel-for's caller-side ones) have no such room and are
 * never inline. */
#define RT_TASK_INLINE_AT offsetof(rt_task, u)
typedef struct rt_task_slot {
    rt_task task;
    unsigned char more[RT_TASK_INLINE_AT + DAGRT_SPAWN_INLINE_SIZE - sizeof(rt_task)];
} rt_task_slot;
_Static_assert(sizeof(rt_task) == 64 && RT_TASK_INLINE_AT == 48, "rt_task's layout moved: see rt_task_slot");
_Static_assert(sizeof(rt_task_slot) == 128, "a pooled descriptor is two cache lines");
_Static_assert(RT_TASK_INLINE_AT % DAGRT_SPAWN_INLINE_ALIGN == 0, "inline storage misaligned");
/* The inline storage of pooled descriptor t. */
static inline void *rt_task_inline(rt_task *t)
{
    return (unsigned char *)(void *)t + RT_TASK_INLINE_AT;
}

/* Where a seen task keeps its parent (RT_TASK_PARENT): the last 32 bytes
 * of its pooled slot, inside the inline storage, which a task leaves free
 * when it holds at most RT_TASK_PARENT_AT bytes there (dagrt_spawn and
 * dagrt_spawn_ex hold none, dagrt_spawn_words 16; dagrt_spawn_inline
 * with more has no parent recorded). */
#define RT_TASK_PARENT_AT 48
typedef struct rt_task_parent {
    const char *graph, *node;
    uint64_t frame;
    uint32_t index;
} rt_task_parent;
_Static_assert(RT_TASK_PARENT_AT + sizeof(rt_task_parent) <= DAGRT_SPAWN_INLINE_SIZE,
               "a task's parent is past its slot");
static inline rt_task_parent *rt_task_parent_of(rt_task *t)
{
    return (rt_task_parent *)(void *)((unsigned char *)rt_task_inline(t) + RT_TASK_PARENT_AT);
}

/* --------------------------------------------------------------- groups */

/* Who to wake when a group completes: embedded in something that outlives
 * the wait by itself (an rt_ctx for thread waits, a fiber for fiber waits),
 * because the completer calls fn(w) after its last access to the group. */
typedef struct rt_waiter rt_waiter;
struct rt_waiter {
    void (*fn)(rt_waiter *w);
};

/* The storage behind dagrt_group (32 bytes).
 *
 * Two counts make up "pending". `word` (atomic) counts what other threads
 * spawn and complete; `local` counts, without any atomic instruction, the
 * tasks that the group's owner (the thread whose stack the group lives on,
 * set by dagrt_group_init) spawned and completes itself: in fork-join the
 * common case, so a spawn + run on one thread costs no locked instruction.
 * A task counted in local but completed elsewhere decrements word (which may
 * go negative). pending = local + word; only the owner reads local.
 *
 * Waiting: the waiter folds local into word and sets RT_GROUP_WAITING in one
 * fetch_add, after storing its rt_waiter. From then on every completion is
 * atomic (armed = 1), and the task that brings word to exactly
 * RT_GROUP_WAITING (pending 0) reads the waiter, stores word = 0 as its
 * very last access to the group (the waiter returns on seeing 0 and may
 * free the group), and only then calls waiter->fn(waiter).
 *
 * Only the owner may wait on a group that has an owner (DAGRT_EPERM
 * otherwise); groups on fiber stacks or in heap memory have no owner and
 * may be waited on by any one thread or fiber at a time. */
typedef struct rt_group rt_group;
struct rt_group {
    DAGRT__COUNT_FIELDS_(struct rt_ctx, rt_waiter)   /* dagrt.h: one definition */
};
#define RT_GROUP_WAITING (INT64_C(1) << 62)
#define RT_GROUP_MAGIC   DAGRT__GROUP_MAGIC

static inline rt_group *rt_group_of(dagrt_group *g) { return (rt_group *)(void *)g; }

/* Counts n more tasks on the atomic side (any thread; tasks counted this
 * way must not carry RT_TASK_OWNED). relaxed: the increment is sequenced
 * before the submit that publishes the task (release), and while it runs
 * the count is already > 0 (the spawner is itself counted, or the waiter). */
static inline void rt_group_add(rt_group *g, int64_t n)
{
    atomic_fetch_add_explicit(&g->word, n, memory_order_relaxed);
}

/* One atomically counted task finished (any thread). */
void rt_group_done(rt_group *g);

/* For waits that suspend (fibers), on the thread the caller runs on now:
 * registers w to be woken when pending reaches zero. Returns 1 if it is
 * already zero (nothing registered: do not suspend), 0 if registered,
 * DAGRT_EBUSY if someone else waits, DAGRT_EPERM if the group has an owner
 * and this thread is not it. After 0, suspend until w->fn(w) runs; the
 * group's word is 0 by then. */
int rt_group_arm(rt_group *g, rt_waiter *w);

/* An inline fork (dagrt_forked): the task descriptor and, right
 * after it, the count its join waits on. Forked with RT_TASK_OWNED |
 * RT_TASK_FORKED, local = 1 and owner = the forking ctx: a thief that runs
 * it completes the group atomically (word -1), the forker's join folds its
 * local 1 in (pending 0); a fork taken back by its join never touches the
 * count. Forks are not counted in nspawned/nfinished (a fork cannot
 * outlive its join) and never go back to a pool. */
typedef struct rt_forked {
    rt_task task;
    rt_group group;
} rt_forked;

/* ------------------------------------------------------------ contexts */

typedef struct rt_ctx rt_ctx;

typedef struct rt_slab {
    struct rt_slab *next;
} rt_slab;

/* One entry of a thread's frame-memory cache (exec/frame.c). */
#define RT_FCACHE 8
typedef struct rt_fcache {
    const void *arena;
    uint64_t gen;
    void *chunk;
} rt_fcache;

struct rt_ctx {
    /* The head the inline dagrt_fork reads (dagrt.h, one definition): the
     * deque, and fj_nidle = &rt->nidle, constant after creation. */
    DAGRT_WORKER_VIEW_FIELDS_
    rt_mpsc inbox;
    dagrt *rt;
    uint32_t index;
    bool hot;
    bool worker;               /* a worker thread (not the main thread) */
    bool guest;                /* a guest slot (core/guest.c), constant after creation */
    uint64_t rng;              /* victim selection (xorshift), owner only */
    /* Task pool: owner-only free list; other threads return descriptors to
     * `remote` (a Treiber stack that only the owner pops, all at once by
     * exchange, so there is no ABA). */
    rt_task *free;
    rt_slab *slabs;
    _Alignas(RT_APART) _Atomic(rt_task *) remote;
    /* Idle protocol (core/idle.c): 1 while announced idle; a notifier claims the
     * ctx by CAS 1->0 and then unparks it. */
    _Alignas(RT_APART) _Atomic int idle;
    rt_parker parker;
    /* Wake-up latency (dagrt_config.wake_stats, core/idle.c): when a waker
     * claimed or unparked this ctx for new work (0: none since it went
     * idle), beside the idle word the waker writes anyway; and, owner
     * only, when it ran again after such a wake (0: not searching). */
    _Atomic uint64_t wake_t0;
    uint64_t search_from;
    rt_waiter waiter;          /* group waits on this thread: unparks it */
    char *stack_lo, *stack_hi; /* this thread's own stack (group ownership) */
    bool handoff;              /* owner only: hand the search on (core/idle.c) */
    bool beside_waker;         /* owner only: woken onto its waker's CPU (core/idle.c) */
    uint32_t depth;            /* owner only: plain tasks running nested on this thread */
    /* Spawned / finished task counts, each written only by this ctx's
     * thread (relaxed load + store; finished with release), summed by
     * dagrt_destroy to know when everything spawned has run. */
    _Alignas(RT_APART) _Atomic uint64_t nspawned;
    _Atomic uint64_t nfinished;
    rt_os_thread thread;
    bool started;
    void *ext_thread;          /* the engine's handle (dagrt_config.thread_create) */
    /* Placement (core/placement.c, rt_place_plan): the CPU and class
     * suggested, and the set the worker moves itself onto (empty: none). */
    int place_cpu, place_class;
    rt_os_cpuset place_set;
    /* Set by dagrt_set_hot_workers while the worker is parked for a
     * pause (hot and place_set may have changed): it places itself again
     * as it leaves the park; its own field after that. */
    bool replace;
    /* Guest slots only (core/guest.c): 1 while a thread holds the slot, taken by
     * CAS 0->1 (then 2 when dagrt_thread_attach holds it, not a wait),
     * given back by a release store of 0. The rest is the
     * holder's: attach nesting, whether a wait attached it, its previous
     * rt_tls_ctx. */
    _Alignas(RT_APART) _Atomic int taken;
    unsigned attached;
    rt_ctx *guest_prev;
    /* dagrt_get_stats' counts (trace/trace.h): this thread's own lines. */
    rt_tstats stats;
    /* Frame memory (exec/frame.c), owner only. frame: the graph run
     * (exec's graph_rt) whose node body or loop piece runs on this thread
     * now, or NULL: set around each node body, cleared around every other
     * task, swapped with the fiber's own as a fiber task switches in and
     * out (fiber/sched.c); always written with rt_ctx_set_frame. fhome:
     * while the thread's window (dagrt__fwin) bumps a chunk of `frame`,
     * that chunk's bump pointer, which the window's cursor is written
     * back to when it closes (every change of `frame` or of rt_tls_ctx
     * away from this ctx), else NULL. fcache: the chunk this thread bumps
     * for each of a few frames, tagged with the frame's arena and number. */
    void *frame;
    char **fhome;
    rt_fcache fcache[RT_FCACHE];
};

/* --------------------------------------------------------------- runtime */

#define RT_FRAME_GRAPHS 64   /* graphs numbered apart; more share a state's own count */

struct dagrt {
    dagrt_config cfg;
    int nworkers;
    /* The CPUs the process may use, read at create (rt_os_cpu_count reads
     * files and allocates: a plan made again between frames may not). */
    int cpus;
    int nctx;                          /* nworkers + 1 + nguests */
    int nguests;                       /* guest slots, ctx[nworkers + 1 ..] (core/guest.c) */
    rt_ctx *ctx;                       /* [nctx], ctx[0] = main thread */
    rt_ctx *prev_tls;                  /* creator thread's ctx before (restored by destroy) */
    rt_mpsc hot;                       /* the hot lane */
    bool asym_fence;                   /* deque pushes skip their fence; idlers membarrier (core/idle.c) */
    _Alignas(RT_APART) _Atomic int nidle;    /* ctxs announced idle (spinning or parked) */
    _Atomic int nspinning;             /* idle ctxs still polling (not asleep) */
    _Atomic int stop;                  /* destroy: workers exit */
    /* dagrt_pause (core/worker.c, PAUSE): 1 while paused; the workers
     * parked for it. Futex words both. */
    _Atomic uint32_t paused;
    _Atomic uint32_t npaused;
    _Atomic uint64_t ext_spawned;      /* spawns/finishes by threads without a ctx */
    _Atomic uint64_t ext_finished;
    _Atomic uint64_t main_pushed;      /* main-queue pushes, for dagrt_pump_main's bound */
    uint64_t main_popped;              /* main thread only */
    _Atomic uint32_t rr;               /* round robin for spawns from outside threads */
    _Atomic uint64_t spin_ns;          /* idle ctxs poll this long before parking (tests set 0; relaxed: a tuning knob) */
    /* Shared task pool for threads without a ctx. */
    rt_os_mutex shared_mu;
    /* CPU placement (core/placement.c): whether the policy moves threads, and
     * the mask the creator had at dagrt_create (threads with another one
     * are the user's and stay where they are). Constant after create. */
    bool place_on;
    rt_os_cpuset place_mask;
    rt_os_mutex steer_mu;              /* one affinity change of a worker at a time */
    rt_os_mutex io_make_mu;            /* wait/io.c's first call: one reactor made, never two */
    rt_task *shared_free;
    rt_slab *shared_slabs;
    _Atomic(rt_task *) shared_remote;
    /* Fiber layer state (owned by fiber/sched.c; NULL until it sets it). */
    void *fiber;
    /* The executor's plan slot (owned by exec/plan_helper.c; NULL until
     * the first plan run makes it). */
    void *exec;
    /* I/O state (wait/io.c): NULL until the first I/O call starts the reactor. */
    _Atomic(struct rt_io *) io;
    _Atomic uint64_t prio_refused;     /* hot workers whose priority was refused (relaxed: a statistic) */
    /* Runs started per graph table (exec/exec.c; the main thread only, which
     * starts every run): observers number a graph's frames across all of
     * its states and pipelines, so a profile never mixes two runs. */
    struct { const void *g; uint64_t n; } frame_no[RT_FRAME_GRAPHS];
    /* Frame memory (exec/frame.c): its lock (taking a chunk, retiring a
     * frame), the free chunks, every chunk (freed by destroy), the frames
     * numbered so far (main thread only: frames start there) and this
     * runtime's number among all runtimes of the process. */
    rt_os_mutex frame_mu;
    void *frame_free;
    void *frame_big;
    void *frame_all;
    uint64_t frame_gen;
    uint64_t frame_id;
    /* The parallel-for's offer (pfor/share.c): a task on its caller's stack that
     * any thread looking for work may take with an exchange (find_task),
     * or NULL. RT_APART bytes of its own: pollers read it, posters and
     * takers write it. */
    _Alignas(RT_APART) _Atomic(rt_task *) offer;
    /* Offers taken, counted by their takers on the line they just wrote
     * (relaxed: a statistic, for tests and diagnostics). */
    _Atomic uint64_t offers_taken;
    /* Observers and the trace recorder (trace/observe.c): read once per node
     * and per sleep, changed between frames. */
    _Alignas(RT_APART) rt_observe obs;
    /* Waiting on the world (wait/timer.c, wait/cancel.c, wait/sync.c): the runtime's
     * timers, and the scope every slow-path wait is attached to besides
     * its own, which dagrt_destroy cancels once only waits are left. */
    _Alignas(RT_APART) rt_timers timers;
    dagrt_cancel waits;
    /* Waits in progress made by tasks (fiber or plain; not by threads
     * outside the runtime), for destroy's "only waits are left" (relaxed:
     * a count destroy compares twice, not an order); the I/O calls count
     * theirs per I/O shard (wait/io.c, rt_io_waits). */
    _Atomic int64_t nwaits;
    /* Reaping workers that are not parked (wait/io_reap.c, rt_io_park; seq_cst: the
     * reactor thread's gate, os/reactor_uring.c "REAPING"). */
    _Atomic int io_awake;
    /* dagrt_destroy against threads outside the runtime (core/destroy.c,
     * "DESTROY AND THREADS OUTSIDE"): how far destroy has gone
     * (RT_OPEN, RT_DRAINING, RT_SEALED), and how many threads with no
     * ctx in rt are inside one of its calls (or attached as guests). A
     * Dekker pair, both sides seq_cst: model tests/models/destroy_calls.pml. */
    _Alignas(RT_APART) _Atomic int closing;
    _Atomic int64_t calls;
};

enum { RT_OPEN = 0, RT_DRAINING = 1, RT_SEALED = 2 };

#if defined(__GNUC__)
#define RT_NOINLINE __attribute__((noinline))
#define RT_INLINE inline __attribute__((always_inline))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define RT_NOINLINE
#define RT_INLINE inline
#define RT_LIKELY(x) (x)
#define RT_UNLIKELY(x) (x)
#endif

/* One poll of a spin: the CPU's hint that we are waiting on memory. */
static inline void rt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A monotonic clock in ns: the runtime's clock for spin and linger limits. */
static inline uint64_t rt_now_ns(void)
{
    return rt_os_now_ns();
}

/* The shuffled serial switch (dagrt_config.shuffle, read at create by
 * core/worker.c): whether this runtime shuffles (a serial runtime: no
 * worker), and its generator. Each user keeps its own state word (a
 * ctx's rng for spawned tasks and loop pieces, a frame's own for its
 * nodes), so an order depends on the seed and the program alone. */
static inline uint64_t rt_splitmix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}
/* A number in [0, n), n > 0, from the state word *s (SplitMix64). */
static inline uint32_t rt_shuffle_draw(uint64_t *s, uint32_t n)
{
    *s += UINT64_C(0x9e3779b97f4a7c15);
    uint64_t x = rt_splitmix(*s);
    return (uint32_t)(((x >> 32) * (uint64_t)n) >> 32);
}

/* Owner-only counter bump: relaxed load + store is enough for a single
 * writer; release on nfinished so destroy's acquire read of it also sees
 * the spawns that the finished task made (core/destroy.c, quiescent()). */
static inline void rt_bump(_Atomic uint64_t *x, memory_order mo)
{
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + 1, mo);
}

/* =====================================================================
 * The rooms, one section per file. Each section declares what its file
 * offers the others; the inline fast paths live here so the hot callers
 * in other files keep them inlined.
 * ===================================================================== */

/* ------------------------------------------ core/worker.c, core/destroy.c: threads, create/destroy */

/* The calling thread's ctx (of whichever runtime it belongs to), or NULL. */
extern _Thread_local rt_ctx *rt_tls_ctx;

/* The calling thread's ctx in rt, or NULL. Inline TLS read: only in code
 * that cannot migrate between threads (see the fiber migration rule). */
static inline rt_ctx *rt_ctx_here(const dagrt *rt)
{
    rt_ctx *c = rt_tls_ctx;
    return (c && c->rt == rt) ? c : NULL;
}

/* The same as a real call: re-do it after any fiber switch (top of file). */
rt_ctx *rt_ctx_current(const dagrt *rt);
/* Stops the workers (the stop flag, a token each) and joins them. */
void rt_stop_and_join(dagrt *rt);
/* Frees everything of rt, rt included; every thread has stopped. */
void rt_free_all(dagrt *rt);
/* dagrt_destroy of a paused runtime: the pause ends first. */
void rt_pause_end(dagrt *rt);

/* The calling thread's window of frame memory (exec/frame.c): the rest
 * of the chunk it bumps in its ctx's frame, [cur, end), or empty (NULL,
 * NULL). dagrt.h's inline dagrt_frame_alloc bumps it by its name, so it
 * is exported. */
#if defined(__GNUC__) && !defined(_WIN32)
#define RT_EXPORT __attribute__((visibility("default")))
#else
#define RT_EXPORT
#endif
extern RT_EXPORT _Thread_local dagrt__frame_window dagrt__fwin;

/* Closes the window if c (the calling thread's ctx) has it open: its
 * cursor goes back to its chunk, and it is empty. Before any change of
 * c->frame, and before rt_tls_ctx leaves c: the window is only ever the
 * current ctx's current frame's. */
static inline void rt_ctx_window_close(rt_ctx *c)
{
    if (RT_UNLIKELY(c->fhome != NULL)) {
        *c->fhome = dagrt__fwin.cur;
        dagrt__fwin.cur = dagrt__fwin.end = NULL;
        c->fhome = NULL;
    }
}

/* The frame c now runs in (exec/frame.c), or NULL; the one way to set it,
 * so that the window c bumped for the frame before is never used for
 * this one: the next dagrt_frame_alloc finds this frame's again. c is
 * the calling thread's ctx. */
static inline void rt_ctx_set_frame(rt_ctx *c, void *frame)
{
    rt_ctx_window_close(c);
    c->frame = frame;
}

/* The shuffled serial switch is on (see rt_shuffle_draw): constant after
 * create, so a plain read. */
static inline bool rt_shuffled(const dagrt *rt) { return rt->cfg.shuffle; }

/* A public call that a thread outside the runtime may make while another
 * thread destroys rt (core/destroy.c, "DESTROY AND THREADS OUTSIDE"): enter
 * before the call's first access to rt, leave after its last one.
 * rt_call_enter returns 0 on one of rt's own threads (nothing counted:
 * leave is not called), 1 when the calling thread is counted in
 * rt->calls (then rt_call_leave once), and -1, counted out again, when
 * destroy has reached refuse_at (RT_DRAINING: waits on the world, which
 * then return DAGRT_ECANCELED; RT_SEALED: the rest): the call must then
 * return without touching rt again. */
int rt_call_enter(dagrt *rt, int refuse_at);
void rt_call_leave(dagrt *rt);

/* ------------------------------------------ core/guest.c: threads the runtime does not own */

/* dagrt_group_wait from a thread with no ctx in rt: holds a free guest slot
 * for the length of the wait, so the thread helps. Returns the wait's
 * result, or 1 when there is no free slot (the caller polls instead). */
int rt_guest_wait(dagrt *rt, rt_group *g);
/* dagrt_destroy's check (core/guest.c): how many threads other than self are
 * attached as guests. (A slot that a wait holds belongs to a thread
 * counted in rt->calls for the wait, which destroy waits for.) */
int rt_guest_attached(dagrt *rt, const rt_ctx *self);
/* The calling thread's exit hook (core/guest.c, "A GUEST THAT EXITS
 * ATTACHED") armed again from its rt_tls_ctx chain: after a destroy made
 * from a guest slot, which ends that slot without a detach. */
void rt_guest_exit_rearm(void);
/* dagrt_destroy of rt from a thread where rt's creator ctx is in the
 * chain of rt_tls_ctx values but not on top (runtimes destroyed in
 * another order than made): takes it out of the chain, so that the ctx
 * above it leads to the one below, never to freed memory. */
void rt_chain_unlink(const dagrt *rt);

/* ------------------------------------------------- core/task.c: descriptors */

#define RT_SLAB_TASKS 128

/* A slab of RT_SLAB_TASKS descriptors linked as a free list, pushed on
 * *slabs (freed by rt_slabs_free). NULL when out of memory. */
rt_task *rt_slab_new(rt_slab **slabs, uint32_t home);
void rt_slabs_free(rt_slab *s);
/* c's free list ran dry: what other threads returned, else a new slab. */
rt_task *rt_task_refill(rt_ctx *c);
/* Returns t to a remote-free stack (a Treiber push). */
void rt_task_push_remote(_Atomic(rt_task *) *stack, rt_task *t);

/* Descriptors. rt_task_alloc: c must be the calling thread's ctx (fast, no
 * lock, no malloc once warm). rt_task_alloc_any: any thread. Both return
 * NULL only when out of memory. The fields are zeroed except node. */
rt_task *rt_task_alloc(rt_ctx *c);
rt_task *rt_task_alloc_any(dagrt *rt);
/* Returns a descriptor to its pool without running it (any thread). */
void rt_task_free(dagrt *rt, rt_task *t);

static inline void rt_task_reset(rt_task *t)
{
    t->fn = NULL;
    t->arg = NULL;
    t->group = NULL;
    t->flags = 0;
    t->fiber = NULL;
    t->u[0] = t->u[1] = 0;
}

/* rt_task_alloc inline: c is the calling thread's ctx. */
static RT_INLINE rt_task *rt_task_alloc_on(rt_ctx *c)
{
    rt_task *t = c->free;
    if (RT_UNLIKELY(!t)) {
        t = rt_task_refill(c);
        if (!t)
            return NULL;
    }
    /* relaxed: the free list is owner-private (remote ones were acquired). */
    c->free = (rt_task *)(void *)atomic_load_explicit(&t->node.next, memory_order_relaxed);
    t->home = c->index;
    rt_task_reset(t);   /* the stores the spawner repeats are dead and elided */
    return t;
}

/* A task descriptor for fn(arg), from c's pool (or any, off the runtime's
 * threads), or NULL when out of task memory. */
static RT_INLINE rt_task *rt_task_make(dagrt *rt, rt_ctx *c, dagrt_fn fn, void *arg, rt_group *g,
                                       unsigned flags)
{
    rt_task *t = RT_LIKELY(c != NULL) ? rt_task_alloc_on(c) : rt_task_alloc_any(rt);
    if (RT_LIKELY(t != NULL)) {
        t->fn = fn;
        t->arg = arg;
        t->group = g;
        t->flags = flags;
    }
    return t;
}

/* Frees t from the thread whose ctx is c (NULL: none). */
static RT_INLINE void rt_task_free_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if (t->home == RT_HOME_SHARED) {
        rt_task_push_remote(&rt->shared_remote, t);
        return;
    }
    if (RT_LIKELY(c && c->index == t->home)) {
        /* relaxed: the owner's private free list. */
        atomic_store_explicit(&t->node.next, (rt_node *)(void *)c->free, memory_order_relaxed);
        c->free = t;
    } else {
        rt_task_push_remote(&rt->ctx[t->home].remote, t);
    }
}

/* ----------------------------------------------- core/group.c: wait groups */

/* Arms g for waiter w on behalf of ctx c (rt_group_arm's body). */
int rt_group_arm_on(rt_group *g, rt_ctx *c, rt_waiter *w);
/* The waiter of every thread wait: unparks the ctx it is embedded in. */
void rt_ctx_wake(rt_waiter *w);

/* Counts a task about to be spawned by ctx c (may be NULL) into g. */
static inline void rt_group_count_spawn(rt_group *g, rt_ctx *c, rt_task *t)
{
    /* Not once armed: the waiter folded local into word, and the
     * completer decides "last" from word alone. */
    if (g->owner == c && c && !g->armed) {
        g->local++;                  /* owner only: no atomic needed */
        t->flags |= RT_TASK_OWNED;
    } else {
        rt_group_add(g, 1);
    }
}

/* A task of group g with these flags finished on ctx c (may be NULL). */
static inline void rt_group_count_done(rt_group *g, rt_ctx *c, uint32_t flags)
{
    /* owner and armed are read only on the owner's own thread. */
    if ((flags & RT_TASK_OWNED) && g->owner == c && !g->armed)
        g->local--;
    else
        rt_group_done(g);
}

/* pending == 0, as seen by ctx c (the owner or a thread of an ownerless
 * group). acquire: the finished tasks' effects are visible after. */
static inline bool rt_group_is_done(rt_group *g, rt_ctx *c)
{
    int64_t w = atomic_load_explicit(&g->word, memory_order_acquire);
    return (g->owner && g->owner == c ? w + g->local : w) == 0;
}

/* -------------------------------------------- core/idle.c: the idle protocol */

/* Whether pushes may skip their fence (membarrier registered, not turned
 * off by DAGRT_NO_MEMBARRIER). */
bool rt_asym_fence_available(void);
/* After publishing work with a plain store: wakes an idle ctx if needed. */
void rt_notify(dagrt *rt);
/* One round of the idle protocol for c; g: the group c waits for, or NULL
 * in the worker loop. Returns when c should look for work again. */
void rt_ctx_idle(rt_ctx *c, rt_group *g);
/* A spinner that stopped with work in sight hands the search on. */
void rt_handoff(rt_ctx *c);
/* Wake-up latency (dagrt_config.wake_stats): a waker notes when it woke v
 * for new work, just before the unpark; the woken thread's search ends at
 * the task it finds, at its next idle round, or when its wait returns
 * (rt_wake_search_end). */
static inline void rt_wake_note(dagrt *rt, rt_ctx *v)
{
    /* relaxed: the unpark that follows is a release exchange, which the
     * woken thread's park acquires before it reads this. */
    if (RT_UNLIKELY(rt->cfg.wake_stats))
        atomic_store_explicit(&v->wake_t0, rt_now_ns(), memory_order_relaxed);
}
void rt_wake_search_end(rt_ctx *c);
/* THE POLLER'S DUTY (core/idle.c, top; wait/wait.h, "who runs due timers"): what
 * every thread that polls for another thread's progress owes the world,
 * once every RT_DUTY_POLLS polls: due timers, then the reactor's
 * completions for it. An idler and a plan thread waiting for a node alike;
 * c may be NULL (a thread outside the runtime: timers only). */
#define RT_DUTY_POLLS 64u
void rt_poll_duty(dagrt *rt, rt_ctx *c);
/* Wakes one idle ctx, if any (a timer added with no keeper: wait/wait.h). */
void rt_wake_idle(dagrt *rt);
/* Makes c's private tail public (up to index `to`, or all of it) and
 * notifies: the idle protocol's publication. */
void rt_expose_to(dagrt *rt, rt_ctx *c, int64_t to);
void rt_expose(dagrt *rt, rt_ctx *c);
/* Whether c could find a task now (relaxed hints: for a thread that spins
 * outside the idle protocol and should leave it when there is work). */
bool rt_work_visible(rt_ctx *c);
/* Makes the private tail of c's deque stealable, for a thread about to
 * block outside the runtime's helping waits. c may be NULL. */
void rt_ctx_publish_tail(rt_ctx *c);

/* ------------------------------------ core/work.c: submission, find_task, waits */

/* Makes t ready, from any thread (c = the caller's ctx or NULL):
 *  MAIN  -> the main-thread queue (only the main thread runs it);
 *  HOT   -> the hot lane;
 *  else  -> c's deque when c is a ctx, otherwise some worker's inbox.
 * Then wakes a sleeping thread if that is needed for the task to run.
 * Returns 0 or DAGRT_ENOMEM (deque growth failed; t is not queued). */
int rt_submit(dagrt *rt, rt_ctx *c, rt_task *t);
/* rt_submit for a task whose spawn was counted already (rt_count_spawn,
 * by the ctx that promised it: wait/async.c counts a continuation when its
 * wait is armed, inside the task that armed it, and submits it from
 * whichever thread ends the wait). */
int rt_submit_counted(dagrt *rt, rt_ctx *c, rt_task *t);
/* Spawns fn(arg), in no group, for a worker to run: never on the calling
 * thread's own queues, where a wait of the caller's could take it (plan
 * mode's helpers, which must not run on the thread they help). Counted
 * like a spawn from outside the runtime. 0 or DAGRT_ENOMEM. */
int rt_spawn_on_worker(dagrt *rt, dagrt_fn fn, void *arg);
/* core/outside.c: a group wait from a thread with no ctx in rt. The
 * foreign wait blocks until g completes (DAGRT_EPERM for a runtime
 * thread's own group); the outside one also counts the call against
 * dagrt_destroy and helps in a free guest slot first. 0 or an error. */
int rt_group_wait_foreign(dagrt *rt, rt_group *g);
int rt_group_wait_outside(dagrt *rt, rt_group *gi);
/* dagrt_spawn_ex for the runtime's own tasks (the dynamic executor's node
 * tasks, plan mode's offloaded nodes, the asynchronous waits' main-thread
 * continuations): the same checks and path, never reported as the
 * program's spawned tasks (RT_TASK_SEEN). */
int rt_spawn_own(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags);
/* A task of the program's just made (before its submit), while ob
 * observes: marks it RT_TASK_SEEN and, where the trace knows the node
 * open on the spawning thread (c) and inline bytes leave the tail free,
 * records that node as its parent (core/work.c). */
void rt_task_seen(rt_obs *ob, rt_ctx *c, rt_task *t, size_t inline_bytes);
/* Runs and finishes a task marked RT_TASK_SEEN on c's thread, reported
 * around its body (core/seen.c; core/work.c's task_run calls it). */
void rt_task_run_seen(rt_ctx *c, rt_task *t);
/* A slice of fiber task t (marked RT_TASK_SEEN) begins on c's thread
 * (slice 0: its start, k: its k-th resume): reports task_begin if
 * something observes now, and returns that record (NULL: none) for the
 * slice's end, which reports task_end to it on the same thread, suspended
 * when the slice ended in a wait or a yield (fiber/sched.c). */
rt_obs *rt_task_slice_begin(rt_ctx *c, rt_task *t, uint32_t slice);
void rt_task_slice_end(rt_ctx *c, rt_obs *ob, rt_task *t, uint32_t slice, bool suspended);
/* One ready task for c (hot lane, own queue, own deque, the offer, steal),
 * or NULL. */
rt_task *rt_find_task(rt_ctx *c);
/* Runs t on the calling ctx's thread (plain call, or rt_fiber_run). */
void rt_task_run(rt_ctx *c, rt_task *t);
/* The task has finished: free it, complete its group. Any thread. */
void rt_task_finish(dagrt *rt, rt_task *t);
/* Finds one ready task for c and runs it. Returns true if it ran one. The
 * "help" step of every wait. */
bool rt_help_one(rt_ctx *c);
/* pfor/share.c: while fn(arg) is set (NULL clears it), a parallel-for's
 * share this thread takes is taken a bite at a time, and no more bites
 * once fn says the thread has work of its own (a plan thread's next node
 * is ready: exec/plan_off.c). The calling thread's own, like its hints. */
void rt_pfor_busy_hook(bool (*fn)(void *), void *arg);
/* Helps until *g completes, sleeping when there is nothing to do. Thread
 * stacks only (a fiber suspends instead; see rt_group_arm). */
int rt_group_wait_thread(dagrt *rt, rt_ctx *c, rt_group *g);

/* ------------------------------- core/shuffle.c: the shuffled serial switch */

/* A task from q, any of its first few at random (rng: the taker's). */
rt_node *rt_pop_shuffled(rt_mpsc *q, uint64_t *rng);
/* A task from c's own deque, in a random order (the caller is c's owner). */
void *rt_take_shuffled(rt_ctx *c);

/* ---------------------------------- core/batch.c: many tasks at one publication */
/* dagrt_spawn_batch only: nothing of it is called from the other rooms. */

/* ------------------------------------------------ core/placement.c: CPUs */

/* Where idle CPUs look busy to the kernel (some virtual machines), a wake
 * can put the woken thread on its waker's CPU (core/park.h), where the two can
 * only take turns; the parallel-for and the executor's plan helpers move
 * off it with rt_cpu_leave. */

/* The policy a runtime being created uses: DAGRT_PLACEMENT (none, auto,
 * pin, class) where the program left cfg's at the default (AUTO), else
 * cfg's; DAGRT_EINVAL for a value it does not know (said on stderr). */
int rt_place_env(dagrt_placement cfg, dagrt_placement *out);
/* Decides the policy for a runtime being created (on its creator). */
void rt_place_init(dagrt *rt);
/* Where each worker goes (PIN / CLASS, and the thread hook's suggestion),
 * into its ctx, once the ctxs exist. 0 or DAGRT_ENOMEM. */
int rt_place_plan(dagrt *rt);
/* A worker, as it starts: moves itself onto c->place_set, counting a
 * refusal. */
void rt_place_self(rt_ctx *c);
/* The CPU the calling thread runs on, or -1 where that is unknown. */
int rt_cpu_now(void);
/* If the calling thread is a worker the policy may move, runs on `cpu` and
 * may run on another, moves it there: two affinity calls, the first forbidding `cpu` (the kernel
 * migrates the thread before it returns), the second giving the thread's
 * own mask back (it stays where it went). A thread pinned to `cpu` stays.
 * Returns the CPU the thread runs on afterwards (or -1). */
int rt_cpu_leave(int cpu);
/* c is the calling thread's ctx, woken for work that the thread on CPU
 * `from` published: leaves that CPU and, once off it, lets c's next idle
 * round poll again instead of sleeping at once (rt_ctx_idle). */
void rt_ctx_leave_waker(rt_ctx *c, int from);

/* ------------------------------ fiber/sched.c: the fiber layer's hooks */

/* Runs a DAGRT_SPAWN_FIBER task on a fiber; must rt_task_finish it once its
 * fn has returned. */
void rt_fiber_run(rt_ctx *c, rt_task *t);
/* If the caller is running on a fiber, waits for g by suspending and
 * returns 0 (or an error); returns 1 if the caller is not on a fiber. */
int rt_fiber_group_wait(dagrt *rt, rt_group *g);
/* A plain task or the main thread (ctx c, may be NULL) waits for g without
 * helping (mutex and semaphore waits, wait/sync.c). */
int rt_fiber_block_wait(dagrt *rt, rt_ctx *c, rt_group *g);
/* On a fiber: its next resume is queued on the hot lane (wait/io.c: I/O
 * completions resume on hot workers first); elsewhere does nothing. */
void rt_fiber_resume_hot(dagrt *rt, bool on);
/* On a fiber: makes e the node event its suspend/resume hooks report
 * (trace/trace.h) and returns the previous one; elsewhere does nothing and
 * returns NULL. */
dagrt_node_event *rt_fiber_obs_swap(dagrt *rt, dagrt_node_event *e);
/* A guest leaves its slot (core/guest.c): the slot's thread context, made on
 * the thread that held it, is not the next holder's. */
void rt_fiber_thread_leave(dagrt *rt, rt_ctx *c);
/* Fiber tasks waiting for a fiber now (the pool is exhausted): dagrt_destroy
 * counts them as waits (core/worker.c, only_waits_left). */
long rt_fiber_pending_now(const dagrt *rt);
/* Create/destroy hooks: rt->fiber state. create returns 0 or an error. */
int rt_fiber_rt_init(dagrt *rt);
void rt_fiber_rt_fini(dagrt *rt);

/* -------------------------- wait/io.c, wait/io_reap.c: the I/O calls' hooks */

/* (An I/O call waits like any other: on rt->waits too, which destroy
 * cancels once only waits are left.) dagrt_destroy, once every thread has
 * stopped: cancels what threads outside the runtime still have in flight,
 * waits for the reactor to let go of it, frees the reactor and the pool. */
void rt_io_fini(dagrt *rt);
/* The I/O calls that tasks are waiting in (only_waits_left, with nwaits). */
int64_t rt_io_waits(const dagrt *rt);
/* On each hot worker as it starts: the configured thread priority. */
void rt_io_thread_priority(dagrt *rt);
/* Serves I/O completions that are already there on this thread, without a
 * system call (wait/io_reap.c); how many. Cheap when there are none or no I/O. */
unsigned rt_io_reap(rt_ctx *c);
/* A worker that reaps completions parks (enter) or is back (wait/io_reap.c): the
 * last one to park sends the reactor's thread back to the kernel. */
void rt_io_park(rt_ctx *c, bool enter);

/* ----------------------------- exec/exec.c: what the core asks the executor */

/* True while the calling thread runs the body of a graph node (destroy and
 * a guest's detach refuse to run there). */
bool rt_exec_in_node(void);

/* ------------------------------------ core/defer.c: main-queue tasks held
 * back while this thread runs a node's body
 *
 * A main-queue task that must not run inside a node (a graph's
 * asynchronous wait, wait/async.c: it may wait for the very run whose
 * node this thread holds further down its stack) is held on the thread's
 * list instead, and goes back to the main thread's queue when the
 * thread's outermost node ends (exec/exec.h, rt_exec_dispatch). Queued
 * again at once instead, it would be taken again by the same helping
 * wait, which takes the main queue before its own deque: no progress with
 * no worker to take that deque's tasks. Thread-local: no ordering. */
#define RT_DEFERRED_MAX 64
extern _Thread_local unsigned rt_deferred_n;
/* Holds fn(arg); false when RT_DEFERRED_MAX are held already (the caller
 * then queues it again itself). */
bool rt_defer_main(dagrt_fn fn, void *arg);
/* Queues every held task on rt's main queue again (out of task memory:
 * fatal, as the asynchronous waits' own requeue). */
void rt_deferred_flush(dagrt *rt);
/* Frame memory's pool (exec/frame.c): made at create (with the
 * configured reserve: 0, or DAGRT_ENOMEM), every chunk freed at destroy. */
int rt_frame_pool_init(dagrt *rt);
void rt_frame_pool_fini(dagrt *rt);

/* ---------------------------------------- fiber/overflow.c: the overflow report */

struct rt_fiber_pool;
/* Reports faults in the guard pages of p's fibers (installs the fault
 * handler while any pool is watched). 0, or -1: p goes unwatched. */
int rt_overflow_watch(struct rt_fiber_pool *p);
void rt_overflow_unwatch(struct rt_fiber_pool *p);
/* An alternate stack for the calling thread, so the report can run when
 * the stack that overflowed is the one in use (counted per thread). */
void rt_overflow_thread_enter(void);
void rt_overflow_thread_leave(void);

#endif
