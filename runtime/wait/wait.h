/*
 * wait/wait.h - runtime-wide deadlines (internal; wait/timer.c).
 *
 * A timer is caller-owned storage (an rt_timer, usually inside a waiter on
 * the waiting stack) holding a deadline and a fire function. Any thread may
 * add or cancel one; due timers are fired by whichever thread runs
 * rt_timer_run_due. fire runs on that thread, outside every lock of this
 * file, must not block, and may add other timers (never cancel one).
 *
 * WHO RUNS DUE TIMERS (the choice; docs/runtime-internals.md, "Timers"):
 * the runtime's own idle threads. No thread of its own, none spins:
 *  - an idle ctx (a worker with no work, or the main thread / a plain task
 *    in a helping wait: rt_ctx_idle) runs due timers while it polls, and
 *    before it parks it may become THE KEEPER (one at a time): it parks
 *    with a timeout of the earliest deadline (rt_park_until) instead of for
 *    good, and runs what is due when it wakes. With zero workers the main
 *    thread waiting in the runtime is that idler.
 *  - rt_timer_add with a deadline earlier than the keeper's wakes the
 *    keeper; with no keeper it wakes one idle ctx (which becomes it), so a
 *    deadline added while every thread parks is not slept through. A
 *    keeper woken for work while timers are pending hands the role on.
 *  - a thread outside the runtime that waits with a deadline (the one
 *    timed wait, wait/oneshot.c) sleeps until its own deadline and then
 *    runs what is due itself.
 *  - every thread that polls rather than runs a body serves due timers
 *    as an idler does (rt_poll_duty, core/idle.c "THE POLLER'S DUTY"): a plan
 *    thread waiting for a node too, since in plan mode no thread goes idle
 *    while a node is missing and the node may be the fiber the timer
 *    resumes;
 *  - while every thread of the runtime runs a body, a due timer waits for
 *    the first one to poll (the fiber it would resume could not run any
 *    earlier on a busy runtime).
 * THE REACTOR HOOK (for io-core): a thread that sleeps in the kernel for
 * I/O (io_uring_wait_cqe_timeout, epoll_wait, GetQueuedCompletionStatus)
 * may serve timers too: sleep no later than rt_timer_next(rt), call
 * rt_timer_run_due(rt, now) on waking, and register rt_timer_set_kick so
 * that an earlier deadline added meanwhile interrupts its sleep (kick runs
 * on the adding thread, outside the lock, and must not block).
 *
 * Lifetime: a timer's storage must stay valid until rt_timer_cancel has
 * returned for it, or until its fire has been called (fire may end it:
 * after calling fire, the runner never touches the timer again).
 */
#ifndef DAGRT_TIMER_H
#define DAGRT_TIMER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../os/os.h"

struct dagrt;
struct rt_ctx;

typedef struct rt_timer {
    uint64_t deadline_ns;                /* rt_now_ns's clock; set before rt_timer_add */
    void (*fire)(struct rt_timer *t);    /* set before rt_timer_add */
    uint32_t slot;                       /* wait/timer.c: index in the heap + 1, 0: not queued */
} rt_timer;

/* The runtime's timers: a binary min-heap of pointers under a mutex (the
 * heap's array grows by doubling and is kept: no allocation per timer once
 * warm), one timer being fired at a time, and the keeper. */
typedef struct rt_timers {
    rt_os_mutex mu;
    rt_timer **heap;            /* under mu */
    uint32_t n, cap;            /* under mu */
    rt_timer *firing;           /* under mu: the timer whose fire runs now, or NULL */
    bool running;               /* under mu: some thread is in rt_timer_run_due */
    struct rt_ctx *keeper;      /* under mu: the ctx parked until keeper_ns, or NULL */
    uint64_t keeper_ns;         /* under mu */
    void (*kick)(void *);       /* the reactor's hook (rt_timer_set_kick), under mu */
    void *kick_arg;
    /* The earliest deadline (UINT64_MAX: none), written under mu, read
     * without it by pollers (a hint: they take mu before acting). */
    _Atomic uint64_t next;
} rt_timers;

/* Create / destroy (core/worker.c). init: 0 or DAGRT_ENOMEM. */
int rt_timers_init(rt_timers *q);
void rt_timers_fini(rt_timers *q);

/* Queues t (any thread). t must not be queued already. Returns 0, or
 * DAGRT_ENOMEM when the heap could not grow (t is not queued). */
int rt_timer_add(struct dagrt *rt, rt_timer *t);
/* Takes t out (any thread). True if it had not fired (it never will);
 * false if it fired or was never queued. After it returns, t's fire is
 * not running. */
bool rt_timer_cancel(struct dagrt *rt, rt_timer *t);
/* The earliest deadline queued, or UINT64_MAX. */
uint64_t rt_timer_next(struct dagrt *rt);
/* Fires every timer due at `now` (any thread; one runner at a time: a
 * second caller returns at once, the first keeps going until none is due). */
void rt_timer_run_due(struct dagrt *rt, uint64_t now);
/* The reactor hook (see the top); kick NULL removes it. */
void rt_timer_set_kick(struct dagrt *rt, void (*kick)(void *), void *arg);

/* The idle protocol's side (core/idle.c). keeper_enter: c is about to park; if
 * timers are queued and there is no keeper, c becomes it and the deadline
 * to park until is returned, else UINT64_MAX (with none queued: one load
 * of `next`, no lock; wait/timer.c, ARMED VERSUS PARKING). keeper_leave: after the park;
 * runs what is due and returns true if c was the keeper and timers are
 * still queued (the caller hands the role on when it leaves for work). */
uint64_t rt_timer_keeper_enter(struct dagrt *rt, struct rt_ctx *c);
bool rt_timer_keeper_leave(struct dagrt *rt, struct rt_ctx *c);

/* An asynchronous wait (dagrt.h, dagrt_*_async) that the main thread
 * carries out (wait/async.c; exec/await.c's started runs and pipelines,
 * whose waits run their caller's part there): rt_async_ready checks a
 * as every async call does (0, DAGRT_EINVAL, DAGRT_EPERM); then
 * rt_async_on_main queues body(data, n) as a task of the main thread's
 * queue, which does the wait and returns its result; fn is then called
 * with it as for every async wait (by that task when a's flags say
 * DAGRT_SPAWN_MAIN, else by a task queued with a's flags). 0: queued (the
 * call returns DAGRT_PENDING), or dagrt_spawn_ex's error (nothing queued). */
struct dagrt_async;
int rt_async_ready(struct dagrt *rt, struct dagrt_async *a);
int rt_async_on_main(struct dagrt *rt, struct dagrt_async *a, int64_t (*body)(void *data, uint64_t n),
                     void *data, uint64_t n);

#endif
