/*
 * fiber/sched.c - the fiber scheduler: running fiber tasks, suspending and
 * resuming them, the fiber layer's side of core/core.h (rt_fiber_run,
 * rt_fiber_group_wait, create/destroy hooks). The sync primitives built on
 * it are in wait/sync.c.
 *
 * RUNNING A FIBER TASK. A worker that picks a DAGRT_SPAWN_FIBER task takes
 * a fiber from the pool (or, when the pool is exhausted, parks the task on
 * the pending list: backpressure, one warning) and switches to it from its
 * own stack. The fiber runs the task and switches back, leaving a note in
 * the worker's per-thread slot (fctx.after) saying why: FINISHED (the worker
 * finishes the task and recycles the fiber, or runs a pending task on it),
 * PARKED (the fiber waits: see below) or YIELDED (queue it again). Whatever
 * concerns the fiber's stack happens there, on the worker's stack, after the
 * switch: never while the fiber is still running on its own stack. A task of
 * the program's spawned while something observed (RT_TASK_SEEN) is reported
 * around each switch to it, one slice each, there too (core/seen.c).
 *
 * SUSPEND/RESUME HANDSHAKE (no lost wake-up, no double run). Every wait is
 * a one-shot rt_group (count 1) that the waker completes. A fiber that must
 * wait sets park = 0, arms the group with wake = arrive(fiber) and switches
 * out with PARKED; its worker, back on its own stack, calls arrive(fiber)
 * too. arrive is fetch_add(park, 1): whoever arrives second (sees 1) queues
 * the fiber's resume task. So the fiber is queued exactly once, and only
 * after both the wake-up has happened and its worker has left its stack,
 * whichever order the two race in. Model: tests/models/fiber_suspend.pml,
 * whose negative control (arrive before the switch) must fail.
 *
 * THREAD-LOCAL STATE. A fiber can resume on another worker, so fiber-side
 * code never keeps an rt_ctx* or fctx* across a switch: fiber_switch_out()
 * looks its slot up through rt_ctx_current() (a real call) right before
 * switching, and uses nothing of it afterwards.
 *
 * WAITS OUTSIDE FIBERS. A plain task or the main thread waits on the same
 * one-shot group with rt_group_wait_thread, which helps (runs other tasks)
 * and parks the thread when there is nothing to do; the waker's group
 * completion unparks it. A thread outside the runtime polls with sleeps
 * (rt_group_wait_thread with no ctx).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fiber.h"
#include "../core/core.h"

enum { AFTER_NONE, AFTER_FINISHED, AFTER_PARKED, AFTER_YIELDED };

/* One per rt_ctx: the thread's own context and what runs on it. Only its
 * thread touches it (no atomics). Padded: neighbours are other threads. */
typedef struct fctx {
    rt_fiber thread;   /* the worker's own stack, as a switch target */
    rt_fiber *cur;     /* the fiber running on this thread, or NULL */
    int after;            /* set by the fiber right before it switches back */
    bool inited;
    char pad_[64];
} fctx;

typedef struct rt_fibers {
    rt_fiber_pool pool;
    rt_os_mutex mu;       /* the pending list, and pool get/put with it */
    rt_task *pending_head;    /* fiber tasks waiting for a fiber (via t->fiber) */
    rt_task *pending_tail;
    _Atomic unsigned long npending_total;  /* statistic: tasks ever made to wait */
    /* Tasks on the pending list now (written under mu; relaxed: read by
     * dagrt_destroy's "only waits are left", a count compared twice a
     * sleep apart like rt->nwaits: such a task waits for a fiber that
     * only a wait's end gives back). */
    _Atomic long npending;
    _Atomic int nblocked;     /* runtime threads blocked in plain lock waits */
    atomic_bool warned_blocked;
    fctx *per;                /* [rt->nctx] */
    bool watched;             /* the pool's guard faults are reported (fiber/overflow.c) */
} rt_fibers;

static inline rt_fibers *fibers_of(const dagrt *rt) { return (rt_fibers *)rt->fiber; }

static void fiber_main(void *arg);

/* ------------------------------------------------- create / destroy hooks */

int rt_fiber_rt_init(dagrt *rt)
{
    rt_fibers *fs = calloc(1, sizeof *fs);
    if (!fs)
        return DAGRT_ENOMEM;
    fs->per = rt_os_alloc_aligned(64, ((size_t)rt->nctx * sizeof(fctx) + 63) & ~(size_t)63);
    if (!fs->per) {
        free(fs);
        return DAGRT_ENOMEM;
    }
    memset(fs->per, 0, (size_t)rt->nctx * sizeof(fctx));
    int r = rt_fiber_pool_init(&fs->pool, rt->cfg.fiber_pool_size, rt->cfg.fiber_stack_size,
                                   rt->cfg.fiber_large_stack_size, fiber_main);
    if (r != 0) {
        rt_os_free_aligned(fs->per);
        free(fs);
        return r;
    }
    rt_os_mutex_init(&fs->mu);
    fs->watched = !rt->cfg.no_overflow_report && rt_overflow_watch(&fs->pool) == 0;
    atomic_init(&fs->npending_total, 0);
    atomic_init(&fs->npending, 0);
    atomic_init(&fs->nblocked, 0);
    atomic_init(&fs->warned_blocked, false);
    rt->fiber = fs;
    return 0;
}

void rt_fiber_rt_fini(dagrt *rt)
{
    rt_fibers *fs = fibers_of(rt);
    if (!fs)
        return;
    /* Destroy runs only once every task has finished, so every fiber is
     * back in the pool, parked at the top of its loop. */
    if (fs->watched)
        rt_overflow_unwatch(&fs->pool);
    rt_fiber_pool_fini(&fs->pool);
    rt_os_mutex_fini(&fs->mu);
    rt_os_free_aligned(fs->per);
    free(fs);
    rt->fiber = NULL;
}

void rt_fiber_thread_leave(dagrt *rt, rt_ctx *c)
{
    rt_fibers *fs = fibers_of(rt);
    if (fs)
        fs->per[c->index].inited = false;   /* the holder's own slot: no atomics */
}

/* ----------------------------------------------------- running on fibers */

/* The calling thread's slot, looked up afresh (see the top of the file). */
static fctx *slot_now(dagrt *rt)
{
    rt_ctx *c = rt_ctx_current(rt);
    rt_fibers *fs = fibers_of(rt);
    return (c && fs) ? &fs->per[c->index] : NULL;
}

static rt_fiber *current_fiber(const dagrt *rt)
{
    fctx *pc = slot_now((dagrt *)rt);
    return pc ? pc->cur : NULL;
}

/* Fiber side: back to the worker's own stack, telling it why. Returns when
 * some worker (maybe another) switches to this fiber again. */
static void fiber_switch_out(rt_fiber *f, int after)
{
    fctx *pc = slot_now((dagrt *)f->owner);
    pc->after = after;
    rt_fiber_switch(f, &pc->thread);
    /* pc is stale now if we migrated: not used again. */
}

static void fiber_main(void *arg)
{
    rt_fiber *f = arg;
    rt_fiber_started(f);
    for (;;) {
        rt_task *t = f->task;
        t->fn((t->flags & RT_TASK_SELF) ? (void *)t : t->arg);
        fiber_switch_out(f, AFTER_FINISHED);
    }
}

static void submit_resume(dagrt *rt, rt_fiber *f);

/* Unlinks pending task t (prev: the one before it, or NULL). fs->mu held. */
static void pending_unlink(rt_fibers *fs, rt_task *prev, rt_task *t)
{
    if (prev)
        prev->fiber = t->fiber;
    else
        fs->pending_head = t->fiber;
    if (fs->pending_tail == t)
        fs->pending_tail = prev;
    t->fiber = NULL;
    atomic_fetch_sub_explicit(&fs->npending, 1, memory_order_relaxed);   /* relaxed: see npending */
}

/* Worker side, f just finished its task: returns f to the pool, unless a
 * pending task can have it. Returns that task with t->fiber = its fiber. */
static rt_task *fiber_release(rt_fibers *fs, rt_fiber *f)
{
    rt_task *next = NULL;
    rt_os_mutex_lock(&fs->mu);
    /* The oldest pending task of f's stack size reuses f directly. */
    for (rt_task *prev = NULL, *t = fs->pending_head; t; prev = t, t = t->fiber) {
        if (((t->flags & DAGRT_SPAWN_LARGE_STACK) != 0) == f->large) {
            pending_unlink(fs, prev, t);
            next = t;
            break;
        }
    }
    if (!next) {
        rt_fiber_pool_put(&fs->pool, f);
        if (fs->pending_head) {
            /* Only tasks of the other size wait: the pool can reclaim the
             * fiber just returned to make one of the right size. */
            rt_task *t = fs->pending_head;
            rt_fiber *g = rt_fiber_pool_get(&fs->pool,
                                                   (t->flags & DAGRT_SPAWN_LARGE_STACK) != 0);
            if (g) {
                pending_unlink(fs, NULL, t);
                next = t;
                f = g;
            }
        }
    }
    rt_os_mutex_unlock(&fs->mu);
    if (next)
        next->fiber = f;
    return next;
}

/* A fiber's node leaves or comes back to thread `thread` (trace/trace.h). */
static void obs_fiber(dagrt *rt, rt_fiber *f, int what, uint32_t thread)
{
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (!ob)
        return;
    f->obs_ev->thread = (int)thread;
    rt_obs_node(ob, what, f->obs_ev);
}

dagrt_node_event *rt_fiber_obs_swap(dagrt *rt, dagrt_node_event *e)
{
    rt_fiber *f = current_fiber(rt);
    if (!f)
        return NULL;
    dagrt_node_event *old = f->obs_ev;
    f->obs_ev = e;
    return old;
}

/* Worker side: f is to run task t from its start. */
static inline void fiber_take(rt_fiber *f, rt_task *t)
{
    f->task = t;
    f->seen = (t->flags & RT_TASK_SEEN) != 0;
    f->slice = 0;
}

/* Worker side: runs f (fresh task or resumed wait) until it leaves again. */
static void run_on_fiber(rt_ctx *c, rt_fiber *f)
{
    dagrt *rt = c->rt;
    rt_fibers *fs = fibers_of(rt);
    fctx *pc = &fs->per[c->index];
    if (pc->cur) {
        /* Only a thread stack may switch into a fiber. Every wait the
         * runtime offers suspends a fiber instead of helping, so this needs
         * a helping call made from a fiber task (see docs/runtime.md). */
        fprintf(stderr, "dagrt: fatal: a fiber task helped run another fiber task "
                        "(dagrt_pump_main or another helping call inside a fiber task)\n");
        abort();
    }
    if (!pc->inited) {
        rt_fiber_init_thread(&pc->thread);   /* on this very thread */
        pc->inited = true;
    }
    for (;;) {
        f->owner = rt;
        pc->cur = f;
        pc->after = AFTER_NONE;
        /* A task of the program's that something observed at its spawn: one
         * slice begins (core/seen.c), outside its node's resume if it runs
         * one; the one test of the mark on this path while nothing
         * observes (kept in a local for the slice's end). */
        bool seen = f->seen;
        rt_obs *tob = NULL;
        if (RT_UNLIKELY(seen))
            tob = rt_task_slice_begin(c, (rt_task *)f->task, f->slice);
        if (f->obs_ev)
            obs_fiber(rt, f, RT_OBS_RESUME, c->index);
        /* The frame of the node the fiber runs (exec/frame.c) goes with
         * it from thread to thread: the thread's own comes back after. We
         * are on the thread's stack, so c is this thread's throughout. */
        void *thread_frame = c->frame;
        rt_ctx_set_frame(c, f->frame);
        rt_fiber_switch(&pc->thread, f);
        f->frame = c->frame;
        rt_ctx_set_frame(c, thread_frame);
        pc->cur = NULL;
        /* Before the handshake below: once it is done, f may run (and its
         * stack, where obs_ev lives, change) on another thread. */
        if (f->obs_ev && (pc->after == AFTER_PARKED || pc->after == AFTER_YIELDED))
            obs_fiber(rt, f, RT_OBS_SUSPEND, c->index);
        /* The slice ends here, on the thread it began on, before the
         * handshake (after it the task may begin its next slice elsewhere)
         * and, at its end, before rt_task_finish completes its group. */
        if (RT_UNLIKELY(seen)) {
            bool susp = pc->after != AFTER_FINISHED;
            rt_task_slice_end(c, tob, (rt_task *)f->task, f->slice, susp);
            f->slice += susp;
        }
        /* Off f's stack now: act on what it asked for. */
        switch (pc->after) {
        case AFTER_FINISHED: {
            f->frame = NULL;   /* (a node's dispatch has put it back already) */
            rt_task *t = f->task;
            f->task = NULL;
            rt_task *next = fiber_release(fs, f);
            rt_task_finish(rt, t);
            if (!next)
                return;
            f = next->fiber;
            next->fiber = NULL;
            fiber_take(f, next);
            continue;
        }
        case AFTER_PARKED:
            /* Our half of the handshake (the waker does the other). acq_rel:
             * release publishes f's saved context to whoever resumes it;
             * acquire: if the waker came first, we see its effects. */
            if (atomic_fetch_add_explicit(&f->park, 1, memory_order_acq_rel) == 1)
                submit_resume(rt, f);
            return;
        case AFTER_YIELDED:
            submit_resume(rt, f);
            return;
        default:
            fprintf(stderr, "dagrt: fatal: fiber switched back without a reason\n");
            abort();
        }
    }
}

void rt_fiber_run(rt_ctx *c, rt_task *t)
{
    dagrt *rt = c->rt;
    rt_fibers *fs = fibers_of(rt);
    bool large = (t->flags & DAGRT_SPAWN_LARGE_STACK) != 0;
    rt_os_mutex_lock(&fs->mu);
    /* FIFO fairness: with tasks already pending, a new one queues behind. */
    rt_fiber *f = fs->pending_head ? NULL : rt_fiber_pool_get(&fs->pool, large);
    if (!f) {
        t->fiber = NULL;
        if (fs->pending_tail)
            fs->pending_tail->fiber = t;
        else
            fs->pending_head = t;
        fs->pending_tail = t;
        atomic_fetch_add_explicit(&fs->npending, 1, memory_order_relaxed);   /* relaxed: see npending */
    }
    rt_os_mutex_unlock(&fs->mu);
    if (!f) {
        /* relaxed: a statistic. */
        atomic_fetch_add_explicit(&fs->npending_total, 1, memory_order_relaxed);
        rt_fiber_pool_warn_once(&fs->pool);
        return;   /* runs when a fiber is released (fiber_release) */
    }
    fiber_take(f, t);
    run_on_fiber(c, f);
}

/* The resume task: runs on a worker's own stack. */
static void resume_entry(void *arg)
{
    rt_fiber *f = arg;
    rt_ctx *c = rt_ctx_current((dagrt *)f->owner);
    run_on_fiber(c, f);
}

static void submit_resume(dagrt *rt, rt_fiber *f)
{
    rt_ctx *c = rt_ctx_current(rt);
    rt_task *t = c ? rt_task_alloc(c) : rt_task_alloc_any(rt);
    if (!t) {
        fprintf(stderr, "dagrt: fatal: out of memory resuming a fiber task\n");
        abort();
    }
    t->fn = resume_entry;
    t->arg = f;
    t->flags = f->task ? (((rt_task *)f->task)->flags & DAGRT_SPAWN_HOT) : 0;
    if (f->resume_hot) {
        t->flags |= DAGRT_SPAWN_HOT;
        f->resume_hot = false;
    }
    if (rt_submit(rt, c, t) != 0) {
        fprintf(stderr, "dagrt: fatal: could not queue a resumed fiber task\n");
        abort();
    }
}

/* A fiber's registration on a group: on the fiber's own stack. The group's
 * completer calls fiber_wake after its last access to the group; the
 * waiter is still there then, because the fiber cannot resume before
 * fiber_wake's own arrive, and fiber_wake reads f before that. */
typedef struct fiber_waiter {
    rt_waiter w;          /* first: fiber_wake gets &w */
    rt_fiber *f;
} fiber_waiter;

/* The waker's half of the handshake (see run_on_fiber, AFTER_PARKED). */
static void fiber_wake(rt_waiter *w)
{
    rt_fiber *f = ((fiber_waiter *)(void *)w)->f;   /* before the arrive */
    /* acq_rel: see AFTER_PARKED. */
    if (atomic_fetch_add_explicit(&f->park, 1, memory_order_acq_rel) == 1)
        submit_resume((dagrt *)f->owner, f);
}

/* Fiber side: suspends f until g completes. */
static int fiber_wait_group(rt_fiber *f, rt_group *g)
{
    fiber_waiter fw = { { fiber_wake }, f };
    /* relaxed: the arm below is an acq_rel RMW on g that the waker's
     * completion acquires before it can call fiber_wake. */
    atomic_store_explicit(&f->park, 0, memory_order_relaxed);
    int r = rt_group_arm(g, &fw.w);
    if (r == 1)
        return 0;     /* already complete: no suspend */
    if (r < 0)
        return r;
    fiber_switch_out(f, AFTER_PARKED);
    return 0;
}

int rt_fiber_group_wait(dagrt *rt, rt_group *g)
{
    rt_fiber *f = current_fiber(rt);
    if (!f)
        return 1;
    return fiber_wait_group(f, g);
}

void rt_fiber_resume_hot(dagrt *rt, bool on)
{
    rt_fiber *f = current_fiber(rt);
    if (f)
        f->resume_hot = on;
}

bool dagrt_in_fiber(const dagrt *rt)
{
    return rt && current_fiber(rt) != NULL;
}

int dagrt_fiber_yield(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_fiber *f = current_fiber(rt);
    if (!f)
        return DAGRT_ENOTFIBER;
    fiber_switch_out(f, AFTER_YIELDED);
    return 0;
}

/* A plain task or the main thread blocks (no help) on g: counted, so that
 * when every thread of the runtime is blocked so, a warning says why fiber
 * tasks holding the lock cannot resume. */
int rt_fiber_block_wait(dagrt *rt, rt_ctx *c, rt_group *g)
{
    rt_fibers *fs = fibers_of(rt);
    if (!c || !fs)
        return rt_group_wait_thread(rt, c, g);
    /* relaxed: a heuristic for the warning only. */
    int n = atomic_fetch_add_explicit(&fs->nblocked, 1, memory_order_relaxed) + 1;
    /* relaxed: only "one thread prints" matters; the RMW gives that. */
    if (n >= rt->nctx && !atomic_exchange_explicit(&fs->warned_blocked, true, memory_order_relaxed))
        fprintf(stderr, "dagrt: warning: every thread of the runtime is blocked in a plain-task "
                        "mutex/semaphore wait; a fiber task holding it cannot resume until one "
                        "is released from outside (spawn such tasks with DAGRT_SPAWN_FIBER)\n");
    rt_ctx_publish_tail(c);   /* what this thread spawned must stay stealable */
    int r = rt_group_wait_thread(rt, NULL, g);   /* no ctx: blocks, never helps */
    /* relaxed: as above. */
    atomic_fetch_sub_explicit(&fs->nblocked, 1, memory_order_relaxed);
    return r;
}

long rt_fiber_pending_now(const dagrt *rt)
{
    rt_fibers *fs = fibers_of(rt);
    /* relaxed: see npending. */
    return fs ? atomic_load_explicit(&fs->npending, memory_order_relaxed) : 0;
}

/* ------------------------------------------------------------- for tests */

unsigned long rt_fiber_pending_total(const dagrt *rt)
{
    rt_fibers *fs = fibers_of(rt);
    /* relaxed: a statistic. */
    return fs ? atomic_load_explicit(&fs->npending_total, memory_order_relaxed) : 0;
}

