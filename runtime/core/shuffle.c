/*
 * core/shuffle.c - the shuffled serial switch's takes (cfg.shuffle): the
 * random pops from the FIFO queues and the random takes from a thread's
 * own deque that find_task (core/work.c) calls when the switch is on. Kept
 * out of line: the switch's path is a test run's, never a game's.
 */
#include "core.h"

/* THE SHUFFLED SERIAL SWITCH (core/core.h, rt_shuffled) on the queues a
 * serial runtime keeps. Its orders come from the taker's rng alone, so a
 * program that does the same things draws the same orders.
 * - A FIFO queue (the main thread's, where DAGRT_SPAWN_MAIN and outside
 *   threads' tasks go; the hot lane): before a pop the queue turns by a
 *   random k below its length (at most SHUFFLE_TURN: each of the first k
 *   popped and pushed back at its end), so the task taken is any of its
 *   first SHUFFLE_TURN at random. A pop another thread makes meanwhile
 *   (a guest serving the hot lane) only takes one of them sooner; each
 *   task is still popped once to run.
 * - A deque with guest slots beside it, whose public part guests may
 *   steal (without them, rt_deque_take_private_any takes any item): any
 *   item of the private tail, or else the newest (take) or the oldest
 *   (our own steal) of the public part at random. Not every order of the
 *   public part can come out, but any two tasks run in either order about
 *   half the time, which is what an undeclared dependency needs to show. */
#define SHUFFLE_TURN 64
rt_node *rt_pop_shuffled(rt_mpsc *q, uint64_t *rng)
{
    /* relaxed: a bound for the draw (pushes in progress count too). */
    long n = atomic_load_explicit(&q->n, memory_order_relaxed);
    if (n <= 0)
        return NULL;
    uint32_t k = rt_shuffle_draw(rng, n < SHUFFLE_TURN ? (uint32_t)n : SHUFFLE_TURN);
    for (uint32_t i = 0; i < k; i++) {
        rt_node *x = rt_mpsc_trypop(q);
        if (!x)
            break;   /* busy or mid-push: take what is at the front now */
        rt_mpsc_push(q, x);
    }
    return rt_mpsc_trypop(q);
}

void *rt_take_shuffled(rt_ctx *c)
{
    rt_deque *d = &c->deque;
    if (rt_deque_has_private(d)) {   /* our own indices: exact for the owner */
        rt_deque_private_swap(d, rt_shuffle_draw(&c->rng, UINT32_MAX));
        return rt_deque_take(d);
    }
    if (rt_shuffle_draw(&c->rng, 2)) {
        for (int tries = 0; tries < 4; tries++) {
            void *x = rt_deque_steal(d);
            if (x != RT_DEQUE_ABORT)
                return x != RT_DEQUE_EMPTY ? x : rt_deque_take(d);
        }
    }
    return rt_deque_take(d);
}
