/*
 * exec_plan_helper.c - plan mode between runs: the worker's helper lingers on
 * the runtime's plan slot and serves the next run offered there.
 */
#include "exec.h"

#include <string.h>

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
 *   state no more after publishing it (rt_plan_work): the caller waits for
 *   that node's `done`, a line it has usually just read for the sink. Else
 *   it waits for the slot's `left`, which the helper stores after its last
 *   access.
 * - A helper leaves after PLAN_LINGER_NS without a run, at once when other
 *   tasks are queued (its worker should run them) or when it finds itself
 *   on the caller's CPU (it would only keep the caller off it). Leaving
 *   races with an offer: the helper decrements `present` (seq_cst) and then
 *   reads `go` (seq_cst); the caller, when its worker list has no owner,
 *   fences (seq_cst) and reads `present` (rt_plan_ensure_helper): either the
 *   helper sees the new ticket and serves it, or the caller sees no helper
 *   and spawns one. Either way the run completes: the caller takes any
 *   node no helper does. */

/* The runtime's slot, made at its first plan run (freed by dagrt_destroy,
 * after every task, lingering helpers included, has finished). Caller only.
 * NULL if out of memory: the caller then runs both lists itself. */
plan_slot *rt_plan_slot_of(dagrt *rt)
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
static bool plan_serve(plan_slot *s, uint64_t t, node_where where)
{
    /* relaxed: see plan_slot.run (the acquire of `go` orders it). */
    graph_rt *r = atomic_load_explicit(&s->run, memory_order_relaxed);
    /* Woken onto the caller's CPU (park.h), a helper left there parks
     * again each frame and the next wake-up puts it back, a cost paid in
     * every frame (docs/benchmarks.md): move off it once (placement.c). */
    int cpu = rt_cpu_leave(r->caller_cpu);   /* where we run, after a move if any */
    bool ok = !(cpu >= 0 && cpu == r->caller_cpu);
    /* Still on the caller's CPU, we could only take turns with it: leave
     * the run to the caller (it takes an unowned list's nodes at once). */
    if (ok) {
        atomic_store_explicit(&r->owner1, (uint32_t)(cpu + 1), memory_order_relaxed);   /* relaxed: a hint */
        if (rt_plan_work(r, 1, false, where, NONE)) {
            /* r is not ours any more (see rt_plan_work). */
            /* release: our last access to the run happens before the caller's acquire of `left`. */
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
static uint64_t plan_linger(plan_slot *s, rt_ctx *self, node_where where, uint64_t seen)
{
    uint64_t t0 = 0;
    for (unsigned i = 1;; i++) {
        /* acquire: pairs with the caller's release store of the ticket,
         * so the run's setup is visible to the helper that serves it. */
        uint64_t g = atomic_load_explicit(&s->go, memory_order_acquire);
        if (g != seen) {
            seen = g;
            if (plan_join(s, g)) {
                if (!plan_serve(s, g, where))
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
        /* relaxed: a leaving helper that never announced itself to an offer. */
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
        return;
    }
    rt_ctx *self = rt_ctx_current(rt);
    /* On a fiber only if some wait on a fiber stack ran this task. */
    node_where where = dagrt_in_fiber(rt) ? NODE_ON_FIBER : NODE_ON_THREAD;
    uint64_t seen = 0;
    for (;;) {
        seen = plan_linger(s, self, where, seen);
        /* seq_cst decrement, then seq_cst read of the offer: the Dekker
         * pair with rt_plan_ensure_helper (see "between runs"). */
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_seq_cst);
        uint64_t g = atomic_load_explicit(&s->go, memory_order_seq_cst);
        if (g == seen || !plan_join(s, g))
            return;
        seen = g;
        /* relaxed: see rt_plan_spawn_helper. */
        atomic_fetch_add_explicit(&s->present, 1, memory_order_relaxed);
        if (!plan_serve(s, g, where)) {
            atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
            return;
        }
    }
}

void rt_plan_spawn_helper(dagrt *rt, plan_slot *s)
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
void rt_plan_ensure_helper(graph_rt *r)
{
    plan_slot *s = r->rt->exec;
    /* relaxed: owner1 is a hint (graph_rt). */
    if (!s || atomic_load_explicit(&r->owner1, memory_order_relaxed) != 0)
        return;
    /* seq_cst fence between the offer (the release store of `go`) and the
     * read of `present`: the Dekker pair with a leaving helper. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->present, memory_order_relaxed) == 0)
        rt_plan_spawn_helper(r->rt, s);
}

