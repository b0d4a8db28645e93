/*
 * wait/oneshot.h - the one timed wait (internal to wait/; wait/oneshot.c):
 * the one-shot, timed, cancellable, fiber-aware wait that the sync
 * objects and sleeps (wait/sync.c) and the I/O calls (wait/io.c) are both
 * built on. Include after core/core.h.
 *
 * An rt_oneshot is a one-shot group (count 1) that exactly one completion
 * ends (rt_oneshot_done: a hand-off, an I/O op's end), and what may cut it
 * short: a deadline (a timer, wait/wait.h), the caller's cancel scope and,
 * when asked, the runtime's (rt->waits, which dagrt_destroy cancels once
 * only waits are left; wait/cancel.h). None of those completes the group
 * itself: each calls its owner's `end` with why (DAGRT_ETIMEDOUT for the
 * deadline, DAGRT_ECANCELED for a scope), and the owner decides against
 * the completion and brings it about (sync.c takes its waiter out of the
 * queue and wakes it, io.c hands a cancel to the reactor). `end` runs on
 * the timer's or the requester's thread, outside every lock of theirs; it
 * must not block.
 *
 * A wait's life, on the waiting thread:
 *   rt_oneshot_init      the group (count 1) and `end`;
 *   (the owner publishes it: queues the waiter, submits the op)
 *   rt_oneshot_arm       the deadline and the links; an answer that came
 *                        before the wait (a deadline already past, no room
 *                        for the timer, a scope cancelled already) is
 *                        returned for the owner to act on, as a callback
 *                        would have;
 *   rt_oneshot_wait      until the completion: a fiber suspends (fiber/
 *                        sched.c); a plain task or the main thread helps
 *                        (rt_group_wait_thread) or, with `help` off (a lock
 *                        waiter must not run tasks that may need the lock),
 *                        blocks; a thread outside the runtime blocks on a
 *                        word of its own and, past the deadline, runs the
 *                        due timers itself (its own among them), so it
 *                        never depends on an idle thread of the runtime;
 *   rt_oneshot_disarm    the timer and the links taken down: each returns
 *                        only once its callback is not running, so the
 *                        storage may end after it.
 * Models: tests/models/timed_wait.pml (the sync side's one-winner take),
 * tests/models/io_complete.pml (the I/O side's).
 */
#ifndef DAGRT_WAIT_ONESHOT_H
#define DAGRT_WAIT_ONESHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cancel.h"

typedef struct rt_oneshot rt_oneshot;
struct rt_oneshot {
    rt_group g;                 /* one-shot: count 1, ended by rt_oneshot_done */
    void (*end)(rt_oneshot *o, int why);   /* set by init (top of file) */
    uint64_t deadline;          /* set by arm: the wait's own or its scope's */
    bool timed, linked, rtlinked;   /* what arm set up, for disarm */
    rt_timer timer;
    rt_cancel_link link;        /* on the caller's scope */
    rt_cancel_link rtlink;      /* on the runtime's (rt->waits: dagrt_destroy) */
    rt_waiter tw;               /* a blocked thread's wake-up: sets `woke` */
    _Atomic uint32_t woke;
};

/* arm's answer for a deadline that had passed before the wait began (no
 * DAGRT_E* code: those are negative). */
#define RT_ONESHOT_PAST 1

/* rt_oneshot_wait's ways. HELP: a thread of the runtime helps (runs other
 * tasks) while it waits, else it blocks. HOT: a fiber's resume goes to the
 * hot lane (design/io.md: I/O completions resume on hot workers first). */
#define RT_ONESHOT_HELP 1u
#define RT_ONESHOT_HOT  2u

void rt_oneshot_init(rt_oneshot *o, void (*end)(rt_oneshot *o, int why));

/* The completion (any thread). After it the waiter may return and o's
 * storage end: rt_group_done touches the group last. */
static inline void rt_oneshot_done(rt_oneshot *o)
{
    rt_group_done(&o->g);
}

/* Whether the completion has happened. acquire: the completer's release
 * of the group's word, so what it wrote before is visible. */
static inline bool rt_oneshot_over(const rt_oneshot *o)
{
    return atomic_load_explicit(&((rt_oneshot *)(uintptr_t)o)->g.word, memory_order_acquire) == 0;
}

/* A wait's deadline: its own or its scope's (on cs or above it;
 * wait/cancel.c, DEADLINES), whichever comes first. */
static inline uint64_t rt_oneshot_deadline(uint64_t own, const dagrt_cancel *cs)
{
    uint64_t d = rt_cancel_deadline(cs);
    return d < own ? d : own;
}

/* Arms the deadline (DAGRT_FOREVER: none), the link on cs (NULL: none)
 * and, with rt_link, the one on rt->waits, in that order, stopping at the
 * first that fails. 0, or the early answer: RT_ONESHOT_PAST (deadline had
 * passed), DAGRT_ENOMEM (no room for the timer), DAGRT_ECANCELED (a scope
 * was cancelled already); o is then not waited for by anything armed, and
 * the owner must end it as its `end` would have. */
int rt_oneshot_arm(dagrt *rt, rt_oneshot *o, uint64_t deadline, dagrt_cancel *cs, bool rt_link);
/* Waits until the completion (top of file; how: RT_ONESHOT_*). Counted in
 * *nwaits meanwhile when the caller is a task (destroy's "only waits are
 * left", core/destroy.c). */
void rt_oneshot_wait(dagrt *rt, rt_oneshot *o, _Atomic int64_t *nwaits, unsigned how);
/* Takes down what arm set up. */
void rt_oneshot_disarm(dagrt *rt, rt_oneshot *o);

/* ---------------------------------------------------- asynchronous waits
 * (dagrt.h, dagrt_*_async; wait/async.c) The same waits with no one
 * waiting: where a blocking call would call rt_oneshot_wait, the async
 * form arms the group with a->w (rt_async_arm) and returns DAGRT_PENDING.
 * Whoever completes the group (a hand-off, a timer, a cancel, an I/O
 * completion: any thread) queues a task, the continuation, which runs
 * a->finish on a runtime thread: what the blocking call does after its
 * wait (disarm, the result), ending with a->fn(a->arg, result), its last
 * access to the record.
 *
 * DESTROY. The continuation is counted as spawned when the wait is armed,
 * by the ctx that arms it, inside the task (or the main thread's call)
 * that arms it, before that one finishes: the same argument as a spawn
 * (core/destroy.c, quiescent), so a pending wait keeps dagrt_destroy's
 * drain from ending; it is counted in *nwaits too (the owner's count of
 * waits, for "only waits are left"), so the drain cancels rt->waits as
 * it does for a parked fiber. The waker submits the continuation without
 * counting it again (rt_submit_counted). */
typedef struct rt_async rt_async;
struct rt_async {
    rt_waiter w;                    /* the group's waiter: queues the continuation */
    dagrt *rt;
    dagrt_async_fn fn;
    void *arg;
    unsigned flags;                 /* the continuation's: 0, DAGRT_SPAWN_MAIN, _HOT */
    uint32_t magic;
    void (*finish)(rt_async *a);    /* the continuation's body (the owner's) */
    _Atomic int64_t *nwaits;        /* counted in while pending, or NULL */
    /* rt_async_on_main's wait (wait/wait.h): its body and data, and the
     * result for the task that calls fn. */
    int64_t (*body)(void *data, uint64_t n);
    void *data;
    uint64_t n;
    int64_t result;
};
#define RT_ASYNC_MAGIC 0x61737963u   /* "asyc" */

/* The record behind a (NULL if a was never dagrt_async_init'ed). */
rt_async *rt_async_of(dagrt_async *a);
/* The checks every async call makes first: 0 to go on, DAGRT_EINVAL (no
 * rt, a bad record), DAGRT_EPERM (not one of rt's threads). */
int rt_async_check(dagrt *rt, dagrt_async *a);
/* Arms g (the wait's group; c: the caller's ctx for a group with an
 * owner, else NULL) to queue a's continuation, which will run finish.
 * 0: armed (the caller returns DAGRT_PENDING); 1: g was complete
 * already (the caller ends the wait now, as after rt_oneshot_wait); < 0:
 * DAGRT_EBUSY / DAGRT_EPERM from the arm. hot: the continuation goes to the hot lane. */
int rt_async_arm(rt_async *a, rt_group *g, rt_ctx *c, void (*finish)(rt_async *a),
                 _Atomic int64_t *nwaits, bool hot);

/* Adds n to a statistic of rt_tstats (field: its offset) on the line of
 * the thread the wait returns on (dagrt_get_stats; line 0 outside the
 * runtime). */
void rt_oneshot_count(dagrt *rt, size_t field, uint64_t n);

/* A timed call made by a thread with no ctx in rt while another thread
 * may destroy rt (core/destroy.c, "DESTROY AND THREADS OUTSIDE";
 * rt_call_enter, whose answers these are): counted for the call's length
 * and refused (< 0) once destroy has reached refuse_at. On rt's own
 * threads, one TLS read. */
static inline int rt_oneshot_enter(dagrt *rt, int refuse_at)
{
    return rt_ctx_here(rt) ? 0 : rt_call_enter(rt, refuse_at);
}

static inline void rt_oneshot_leave(dagrt *rt, int in)
{
    if (in > 0)
        rt_call_leave(rt);   /* the call's last access to rt */
}

#endif
