/*
 * exec/dyn_wait.c - the dynamic executor's caller waiting for its run
 * (exec/dynamic.c runs the frame; this is the caller's side after its
 * first drain, for dagrt_graph_run and for a started run's wait).
 *
 * The caller drains, then waits on the run's group (helping), and repeats
 * until every node has completed. Before it blocks it stays useful for
 * EXEC_SPIN polls: new ready nodes of its run, a ready node of a
 * pipeline's later frame (one, then back: exec/dynamic.c, rt_dyn_run_one),
 * the runtime's ready tasks. While a `parallel` node of the run (or of a
 * frame in flight after it) has not completed, it polls instead of
 * blocking, for up to DYN_PAR_POLL_NS without finding work: the loop's
 * offer (runtime/pfor/pfor.c) wakes nobody, so a caller parked in its
 * group wait when the loop starts would never take a piece of a short
 * loop. Its blocked waits are timed for the run policy's starvation rule
 * (exec/policy.c, "held"); in a stretch of that rule a started run's wait
 * closes the frame to drainers, which then pop no more nodes
 * (graph_rt.closed), and the caller runs the rest.
 */
#include "exec.h"

/* The waiting caller's poll for a parallel node's pieces (see the top):
 * how long it may find nothing before it blocks. */
#define DYN_PAR_POLL_NS 500000u

/* The first frame linked after r (a pipeline's, in flight) with nodes in
 * its ready list, or NULL. Such a frame cannot be reused while r's wait is
 * pending (frames are waited for oldest first). */
static graph_rt *ready_ahead(graph_rt *r)
{
    /* acquire: pairs with rt_exec_dyn_link's release (the frame's reset). */
    graph_rt *x = atomic_load_explicit(&r->next, memory_order_acquire);
    for (int k = 0; x && k < DAGRT_MAX_IN_FLIGHT; k++) {
        /* relaxed: a poll; the slot's acquire load in list_pop synchronises. */
        if (atomic_load_explicit(&x->head, memory_order_relaxed) <
            atomic_load_explicit(&x->tail, memory_order_relaxed))
            return x;
        x = atomic_load_explicit(&x->next, memory_order_acquire);   /* acquire: as above */
    }
    return NULL;
}

/* Whether a `parallel` node of r, or of a frame in flight after it, has
 * not completed (see the top). relaxed: npar is a heuristic; acquire on
 * next: as in ready_ahead. */
static bool par_left(graph_rt *r)
{
    graph_rt *x = r;
    for (int k = 0; x && k <= DAGRT_MAX_IN_FLIGHT; k++) {
        if (atomic_load_explicit(&x->npar, memory_order_relaxed) != 0)
            return true;
        x = atomic_load_explicit(&x->next, memory_order_acquire);
    }
    return false;
}

/* Runs the caller's part of the run from `next` on, and waits for the
 * rest: the caller (the main thread) drains, helps, then blocks. */
int rt_dyn_finish(graph_rt *r, rt_ctx *self, uint32_t next)
{
    const dagrt_graph *g = r->g;
    int rc = 0;
    graph_rt *outer = rt_dyn_awaited;   /* a wait inside a wait's help (a main task's run) */
    rt_dyn_awaited = r;
    for (;;) {
        rt_dyn_drain_caller(r, next);
        next = NONE;
        /* relaxed: `done` only steers this loop; the group wait below is
         * what orders the drainers' work before the return. */
        if (atomic_load_explicit(&r->done, memory_order_relaxed) == g->nnodes)
            break;
        /* Nothing for us right now, but the run goes on elsewhere. Stay
         * useful for a while: take new graph work as soon as it is
         * published, run the runtime's ready tasks (main-thread tasks,
         * drainers, parallel-for pieces); only then block on the group,
         * which wakes us when a drainer is spawned or everything is done. */
        bool work = false;
        uint64_t poll_t0 = 0;   /* a poll for pieces found nothing since then */
        for (int spin = 0; !work; spin++) {
            if (spin == EXEC_SPIN) {
                /* Out of spins: block, unless a parallel node is left (see
                 * the top); its poll is timed from here as the blocked
                 * wait would be (rt_policy_poll_end). */
                if (!par_left(r))
                    break;
                uint64_t now = rt_now_ns();
                if (poll_t0 == 0) {
                    poll_t0 = now;
                } else if (now - poll_t0 > DYN_PAR_POLL_NS) {
                    rt_policy_poll_end(r, &poll_t0, now);
                    break;
                }
                spin = 0;
            }
            /* relaxed: polls that only steer the loop; the group wait orders. */
            work = r->main_head != NONE ||
                   atomic_load_explicit(&r->head, memory_order_relaxed) <
                       atomic_load_explicit(&r->tail, memory_order_relaxed) ||
                   atomic_load_explicit(&r->done, memory_order_relaxed) == g->nnodes;
            if (work) {
                rt_policy_poll_end(r, &poll_t0, 0);
                break;
            }
            /* A pipeline's later frames: their ready nodes are as good to
             * run now as any task (the caller waits for this frame anyway). */
            graph_rt *x = ready_ahead(r);
            if (x) {
                rt_policy_poll_end(r, &poll_t0, 0);
                rt_dyn_run_one(x);
                spin = 0;
            } else if (self) {
                /* While a poll is timed, the time before the task it
                 * finds ends it (the task's own time is not held). */
                uint64_t before = poll_t0 != 0 ? rt_now_ns() : 0;
                if (rt_help_one(self)) {
                    rt_policy_poll_end(r, &poll_t0, before);
                    spin = 0;
                }
            }
        }
        if (work)
            continue;
        rc = rt_policy_held_wait(r);
        if (rc != 0)
            break;
        /* relaxed: after the group wait, which ordered every drainer's writes. */
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
        rc = rt_policy_held_wait(r);
    rt_dyn_awaited = outer;
    return rc;
}

int rt_exec_dyn_wait(graph_rt *r, rt_ctx *self)
{
    /* A stretch of the starvation rule (exec/policy.c): the caller takes
     * back what the drainers have not popped. relaxed: a hint, see
     * graph_rt.closed. */
    if (r->policy.was_serial)
        atomic_store_explicit(&r->closed, 1, memory_order_relaxed);
    return rt_dyn_finish(r, self, NONE);
}
