/*
 * exec/plan_helper.c - plan mode between runs: the workers' helpers linger on
 * the runtime's plan slot and serve the next runs offered there.
 */
#include "exec.h"

#include <string.h>

/* ------------------------------------------------------- between runs
 *
 * A helper does not end with its run. It lingers, polling the runtime's
 * plan slot (runtime-owned, so that a lingering helper touches no graph
 * state; a late one, below, is the exception until it leaves), and serves
 * the next run offered there:
 * - The caller offers a run under a new ticket per helper list (list k,
 *   k >= 1, that has nodes): the run's state, the list and (t, OPEN) in
 *   the ticket's entry of the slot's ring, then the last ticket in `go`
 *   (the line the helpers poll). It spawns helpers only where fewer
 *   linger (`present`) than it offered tickets. Nothing stalls the caller:
 *   the stores drain while it runs its first node (G_run's, claimed
 *   before the offer: no one else could see the run yet, so no CAS either).
 * - A helper serves the tickets in the order they were offered, each one
 *   only after winning its entry (a CAS from (t, OPEN) to (t, JOINED)),
 *   and runs the ticket's list; the caller, at the end of a run whose
 *   helper lists were taken from, closes each ticket the same way ((t,
 *   OPEN) to (t, CLOSED)) if no helper won it, so a helper that comes late
 *   never joins a finished run, and at most one helper serves a list of a
 *   run. Each ticket has its own entry:
 *   a pipeline's frames (exec/pplan.c) keep several open at once, the
 *   frames of two pipelines interleave, and a close or a join of one never
 *   decides another's. The caller offers an entry again only once its
 *   last ticket was left or closed; while a ticket PLAN_RING offers back
 *   is still open, the run goes without a helper.
 * - The end of a run: if nobody took a node of a helper's list but that
 *   helper (G_run; see graph_rt.xsteal), each helper that joined ran all
 *   of its list, the last one last, and touches the run's state no more
 *   after publishing it (rt_plan_work): the caller waits for those nodes'
 *   `done`, lines it has usually just read for the sink. Else a G_run's
 *   caller waits for every node's `done` and marks each ticket a helper
 *   joined and has not left (t, LATE), without waiting for it (exec/
 *   plan_run.c, "the held return"): the helper's exchange to (t, LEFT)
 *   tells it, and it then takes itself off the state's late count, its
 *   last access. A pipelined frame's wait waits for each (t, LEFT), which
 *   the helper stores after its last access to the run.
 * - A helper leaves after PLAN_LINGER_NS without a run (after a G_run
 *   frame's, plus its plan's predicted tail without the helpers: the
 *   caller's `on main` render and present, graph_rt.plan_linger_ns), at once when other
 *   tasks are queued (its worker should run them) or when it finds itself
 *   on the caller's CPU (it would only keep the caller off it). Leaving
 *   races with an offer: the helper decrements `present` (seq_cst) and then
 *   reads `go` (seq_cst); the caller, when a helper list has no owner,
 *   fences (seq_cst) and reads `present` (rt_plan_ensure_helper): either the
 *   helper sees the new ticket and serves it, or the caller sees it gone
 *   and spawns one. Either way the run completes: the caller takes any
 *   node no helper does. A started instance's caller takes part only at
 *   its wait, so its start makes the caller's check at once (exec/pplan.c),
 *   and a helper on its caller's CPU serves it rather than leave it. */

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
        atomic_init(&s->caller_cpu, -1);
        for (unsigned k = 0; k < PLAN_RING; k++) {
            /* Ticket 0 is never offered: every entry starts left. */
            atomic_init(&s->ring[k].state, OFFER_LEFT);
            atomic_init(&s->ring[k].run, NULL);
        }
        atomic_init(&s->present, 0);
        atomic_init(&s->awake, 0);
        s->spawn_ns = 0;
        atomic_init(&s->woke_ns, 0);
        rt->exec = s;
    }
    return rt->exec;
}

/* Wins ticket t for the calling helper, or returns NULL (another helper
 * serves it, the caller closed it, or its entry holds a later ticket).
 * acquire on success: pairs with the offer's release store of the entry,
 * so the run's setup (and the run pointer) is visible to the helper that
 * serves it. Failure: relaxed, nothing is read on its strength. */
static graph_rt *plan_join(plan_slot *s, uint64_t t)
{
    plan_offer *o = &s->ring[t % PLAN_RING];
    uint64_t open = rt_offer_word(t, OFFER_OPEN);
    if (!atomic_compare_exchange_strong_explicit(&o->state, &open, rt_offer_word(t, OFFER_JOINED),
                                                 memory_order_acquire, memory_order_relaxed))
        return NULL;
    /* relaxed: see plan_offer.run. */
    return atomic_load_explicit(&o->run, memory_order_relaxed);
}

/* The helper leaves ticket t of run r: its last access to the entry, and
 * to r unless the caller ended the run without it (exec/plan_run.c, "the
 * held return"): the exchange says so, and then its decrement of r->late
 * is its last access to r. */
static void plan_leave(plan_offer *o, graph_rt *r, uint64_t t)
{
    /* release: everything this helper did in the run happens before the
     * acquire of LEFT (a pipelined frame's end, rt_plan_end; the entry's
     * next offer). The exchange, not a store: it must not overwrite the
     * caller's LATE unseen (an RMW on the word the caller's CAS marks). */
    uint64_t was = atomic_exchange_explicit(&o->state, rt_offer_word(t, OFFER_LEFT),
                                            memory_order_release);
    if (was == rt_offer_word(t, OFFER_LATE))
        /* release: pairs with rt_plan_late_wait's acquire; the caller
         * counted us before it marked us, so the count is not ours to
         * underflow for long (an RMW: it comes after the caller's add or,
         * if first, leaves the sum right). */
        atomic_fetch_sub_explicit(&r->late, 1, memory_order_release);
}

/* Serves run r of ticket t, joined: the ticket's list. Returns false when
 * this helper should stop lingering (it is stuck on the caller's CPU).
 * *linger: how long to linger after it (the plan's, graph_rt.plan_linger_ns). */
static bool plan_serve(plan_slot *s, graph_rt *r, uint64_t t, node_where where, uint64_t *linger)
{
    plan_offer *o = &s->ring[t % PLAN_RING];
    /* The plan's, read while joined: a plan is made again only once its
     * helpers left (rt_plan_late_wait), and after rt_plan_work r may not
     * be ours any more. */
    *linger = r->plan_linger_ns;
    /* relaxed: see plan_offer.run (plan_join's acquire ordered it). */
    const uint32_t k = atomic_load_explicit(&o->list, memory_order_relaxed);
    const uint32_t epoch = atomic_load_explicit(&o->epoch, memory_order_relaxed);
    /* relaxed: a hint (graph_rt.caller_cpu). */
    const int cc = atomic_load_explicit(&r->caller_cpu, memory_order_relaxed);
    /* Woken onto the caller's CPU (core/park.h), a helper left there parks
     * again each frame and the next wake-up puts it back, a cost paid in
     * every frame (docs/benchmarks-log.md): move off it once (core/placement.c). */
    int cpu = rt_cpu_leave(cc);   /* where we run, after a move if any */
    /* A started instance's caller is away until its wait: sharing its CPU
     * still moves the run on, where leaving would stop it until then. */
    bool ok = !(cpu >= 0 && cpu == cc) || rt_run_caller_away(r);
    /* Still on the caller's CPU, we could only take turns with it: leave
     * the run to the caller (it takes an unowned list's nodes at once). */
    int how = PLAN_WORK_LEFT;
    if (ok) {
        /* relaxed: a hint. (Stopped before it, a late helper stores it
         * into a later run: the cost of a wrong hint, see plan_run.c.) */
        atomic_store_explicit(&r->owner[k], (uint32_t)(cpu + 1), memory_order_relaxed);
        how = rt_plan_work(r, k, false, where, NONE, epoch);
    }
    /* After LAST, r is not ours any more (see rt_plan_work); after LATE,
     * r is a later run's. */
    if (how == PLAN_WORK_LEFT)
        atomic_store_explicit(&r->owner[k], PLAN_LEFT, memory_order_relaxed);   /* relaxed: a hint */
    plan_leave(o, r, t);
    return ok;
}

/* Serves, in order, the tickets from *next up to the latest offered one
 * (g) that it wins. Returns false when the helper should stop (see
 * plan_serve); *next: the next ticket to look at; *linger as plan_serve's. */
static bool plan_serve_upto(plan_slot *s, uint64_t *next, uint64_t g, node_where where,
                            uint64_t *linger)
{
    for (; *next <= g; ++*next) {
        graph_rt *r = plan_join(s, *next);
        if (r && !plan_serve(s, r, *next, where, linger)) {
            ++*next;
            return false;
        }
    }
    return true;
}

/* Polls for an offer until it is time to leave (see above); serves the
 * offers it wins. *next: the next ticket to look at; *linger: how long
 * to wait, the plan of the run last served (PLAN_LINGER_NS before any). */
static void plan_linger(plan_slot *s, rt_ctx *self, node_where where, uint64_t *next,
                        uint64_t *linger)
{
    uint64_t t0 = 0;
    for (unsigned i = 1;; i++) {
        /* acquire: a ticket seen here has its entry written (the entry's
         * own acquire, in plan_join, is what orders the run's setup). */
        uint64_t g = atomic_load_explicit(&s->go, memory_order_acquire);
        if (g >= *next) {
            if (!plan_serve_upto(s, next, g, where, linger))
                return;
            t0 = 0;
            i = 0;
            continue;
        }
        rt_cpu_relax();
        if ((i & (RT_DUTY_POLLS - 1)) != 0)
            continue;
        rt_poll_duty(s->rt, self);   /* a poller's duty (core/idle.c) */
        if (self && rt_work_visible(self))
            return;
        /* On the caller's CPU we would only keep the caller off it: move
         * (as plan_serve does), or leave if we cannot. relaxed: a hint; a
         * wrong value costs a spin, a move or an early leave. */
        int cc = atomic_load_explicit(&s->caller_cpu, memory_order_relaxed);
        if (cc >= 0 && rt_cpu_leave(cc) == cc)
            return;
        uint64_t now = rt_now_ns();
        if (t0 == 0)
            t0 = now;
        else if (now - t0 > PLAN_LINGER_NS &&
                 (now - t0 > *linger || rt_crowded()))
            /* Beyond PLAN_LINGER_NS only for the plan's tail, and not
             * where the process is crowded: a CPU another thread of it
             * is queued for is not ours to spin on. */
            return;
    }
}

static void plan_helper_run(plan_slot *s);

static void plan_helper_entry(void *arg)
{
    plan_slot *s = arg;
    dagrt *rt = s->rt;
    /* Offers counted this helper present, but here it would serve nothing
     * or worse, so it is handed on to a worker, still present:
     * - on the main thread, a wait of the main thread's took it (waits
     *   steal from workers' inboxes too; a started instance's caller
     *   sleeping in dagrt_sleep, say), and the caller runs its own lists;
     * - inside a node's body or a plan run's part on this thread (a
     *   parallel node's loop, or a plan thread's help, ran it): a run it
     *   served could wait for the node this thread's outer frame holds,
     *   which cannot go on until the helper returns.
     * Only out of task memory does it leave, as a lingering helper leaves
     * (the Dekker half of plan_helper_run); then a run it was counted for
     * goes on in its caller's wait. */
    if (dagrt_on_main_thread(rt) || rt_plan_nest != 0 || rt_exec_depth != 0) {
        if (rt_spawn_on_worker(rt, plan_helper_entry, s) != 0)
            /* seq_cst: as in plan_helper_run. */
            atomic_fetch_sub_explicit(&s->present, 1, memory_order_seq_cst);
        return;
    }
    /* relaxed: hints for the policy (plan_slot.awake, woke_ns). */
    atomic_fetch_add_explicit(&s->awake, 1, memory_order_relaxed);
    atomic_store_explicit(&s->woke_ns, rt_now_ns(), memory_order_relaxed);
    plan_helper_run(s);
    atomic_fetch_sub_explicit(&s->awake, 1, memory_order_relaxed);   /* relaxed: as above */
}

/* The helper's life on a worker: linger, serve, leave. */
static void plan_helper_run(plan_slot *s)
{
    dagrt *rt = s->rt;
    rt_ctx *self = rt_ctx_current(rt);
    /* On a fiber only if some wait on a fiber stack ran this task. */
    node_where where = dagrt_in_fiber(rt) ? NODE_ON_FIBER : NODE_ON_THREAD;
    /* The oldest ticket that may still be open: at most PLAN_RING back. */
    /* acquire: as in plan_linger. */
    uint64_t g = atomic_load_explicit(&s->go, memory_order_acquire);
    uint64_t next = g >= PLAN_RING ? g - PLAN_RING + 1 : 1;
    bool linger = true;
    uint64_t linger_ns = PLAN_LINGER_NS;
    for (;;) {
        if (linger)
            plan_linger(s, self, where, &next, &linger_ns);
        /* seq_cst decrement, then seq_cst read of the offer: the Dekker
         * pair with rt_plan_ensure_helper (see "between runs"). Every way
         * out goes through it: an offer that counted this helper present
         * is seen here, or the caller's fenced check sees it gone. */
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_seq_cst);
        g = atomic_load_explicit(&s->go, memory_order_seq_cst);
        /* A ticket it can still win: serve from there, present again. */
        graph_rt *r = NULL;
        for (; next <= g && !r; next++)
            r = plan_join(s, next);
        if (!r)
            return;
        /* relaxed: see rt_plan_spawn_helper. */
        atomic_fetch_add_explicit(&s->present, 1, memory_order_relaxed);
        /* Stuck on the caller's CPU (plan_serve): no more lingering, but
         * the leave above once more, for the offers made meanwhile. */
        linger = plan_serve(s, r, next - 1, where, &linger_ns) &&
                 plan_serve_upto(s, &next, g, where, &linger_ns);
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
    s->spawn_ns = rt_now_ns();
    /* No group: the helper outlives the run. dagrt_destroy waits for it
     * like for any task. A failed spawn leaves both lists to the caller. */
    /* On a worker's own inbox: a helper task in the caller's deque could
     * be taken by the caller's next helping wait (a started instance's
     * caller sleeping in dagrt_sleep), and a helper on the caller serves
     * nothing. */
    if (rt_spawn_on_worker(rt, plan_helper_entry, s) != 0)
        atomic_fetch_sub_explicit(&s->present, 1, memory_order_relaxed);
}

/* The caller found a helper list without an owner: make sure helpers
 * are coming for the lists not joined yet, unless as many linger (then
 * they have seen, or will see, the offer). Once a run at most. */
void rt_plan_ensure_helper(graph_rt *r)
{
    plan_slot *s = r->rt->exec;
    if (!s || r->noffer == 0)
        return;
    uint32_t need = 0;
    for (uint32_t j = 0; j < r->noffer; j++) {
        const plan_offer *o = &s->ring[(r->pticket + j) % PLAN_RING];
        /* relaxed: a hint; a ticket joined meanwhile needs no helper. */
        need += atomic_load_explicit(&((plan_offer *)(uintptr_t)o)->state, memory_order_relaxed) ==
                rt_offer_word(r->pticket + j, OFFER_OPEN);
    }
    if (need == 0)
        return;
    /* seq_cst fence between the offer (the release store of `go`) and the
     * read of `present`: the Dekker pair with a leaving helper. */
    atomic_thread_fence(memory_order_seq_cst);
    uint32_t p = atomic_load_explicit(&s->present, memory_order_relaxed);
    for (; p < need; p++)
        rt_plan_spawn_helper(r->rt, s);
}

void rt_plan_spare_helpers(plan_slot *s, graph_rt *r, const graph_rt *prev)
{
    /* A helper serves the tickets in order: one still in the frame before
     * (its ticket joined) comes to this frame's only once it left that
     * one, so with the frame before's helpers counted as present this
     * frame would run on the caller's look-ahead alone, and frames in
     * flight would share one helper, whatever the cores (a chain's
     * pipeline at 1 frame per helper). With workers to spare, this frame
     * gets helpers of its own: as many as the offer's tickets beside
     * those serving the frame before, within the plan's bound. */
    /* relaxed: a count for this decision, as in rt_plan_offer. */
    uint32_t p = atomic_load_explicit(&s->present, memory_order_relaxed);
    if (p >= r->plan_helpers)
        return;
    uint32_t want = r->noffer;
    for (uint32_t j = 0; j < prev->noffer; j++) {
        const uint64_t t = prev->pticket + j;
        /* relaxed: a hint; a helper that leaves meanwhile serves this
         * frame next (or lingers, and leaves). */
        want += atomic_load_explicit(&((plan_offer *)(uintptr_t)&s->ring[t % PLAN_RING])->state,
                                     memory_order_relaxed) == rt_offer_word(t, OFFER_JOINED);
    }
    if (want > r->plan_helpers)
        want = r->plan_helpers;
    for (; p < want; p++)
        rt_plan_spawn_helper(r->rt, s);
}

/* Whether a run offers list k (k >= 1) to a helper: if it has nodes; and
 * a pipelined frame whose helper lists are all empty (a chain: every node
 * on the caller's list) offers list 1 all the same, so that a helper
 * runs the caller's nodes while the caller is away, and frames overlap. */
static bool plan_offers_list(const graph_rt *r, uint32_t k)
{
    return r->lhead[k] != NONE || (k == 1 && r->nwl == 0 && r->pplan);
}

void rt_plan_offer(plan_slot *s, graph_rt *r)
{
    /* The tickets first (their count and the first), so that everything a
     * helper may read of them is written before the first release below. */
    uint32_t n = 0;
    for (uint32_t k = 1; k < r->nlists; k++) {
        if (!plan_offers_list(r, k))
            continue;
        const plan_offer *o = &s->ring[(s->ticket + 1 + n) % PLAN_RING];
        /* acquire: a LEFT here pairs with the helper's release (it is done
         * with the entry's run); relaxed would do for CLOSED, ours. */
        uint64_t st = atomic_load_explicit(&((plan_offer *)(uintptr_t)o)->state, memory_order_acquire);
        if ((st & OFFER_MASK) == OFFER_OPEN || (st & OFFER_MASK) == OFFER_JOINED ||
            (st & OFFER_MASK) == OFFER_LATE)
            break;   /* a ticket PLAN_RING back is still open: the rest go without a helper */
        n++;
    }
    r->noffer = (uint8_t)n;
    r->pticket = n ? s->ticket + 1 : 0;
    if (n == 0)
        return;
    /* relaxed: hints. */
    atomic_store_explicit(&s->caller_cpu, atomic_load_explicit(&r->caller_cpu, memory_order_relaxed),
                          memory_order_relaxed);
    for (uint32_t k = 1, j = 0; j < n; k++) {
        if (!plan_offers_list(r, k))
            continue;
        uint64_t t = ++s->ticket;
        plan_offer *o = &s->ring[t % PLAN_RING];
        /* relaxed: ordered by the release store of the entry below. */
        atomic_store_explicit(&o->run, r, memory_order_relaxed);
        atomic_store_explicit(&o->list, k, memory_order_relaxed);
        atomic_store_explicit(&o->epoch, r->epoch, memory_order_relaxed);
        /* release: the run's setup (and the plan) before the entry's ticket. */
        atomic_store_explicit(&o->state, rt_offer_word(t, OFFER_OPEN), memory_order_release);
        j++;
    }
    /* release: a helper that sees a ticket here finds its entry written. */
    atomic_store_explicit(&s->go, s->ticket, memory_order_release);
    /* relaxed: a stale "present" is caught by rt_plan_ensure_helper. */
    uint32_t p = atomic_load_explicit(&s->present, memory_order_relaxed);
    for (; p < n; p++)
        rt_plan_spawn_helper(r->rt, s);
}

bool rt_plan_end(plan_slot *s, graph_rt *r, uint64_t t)
{
    plan_offer *o = &s->ring[t % PLAN_RING];
    uint64_t open = rt_offer_word(t, OFFER_OPEN);
    /* relaxed: no helper joined, so none touched the run; the close only
     * keeps a late one out. */
    if (atomic_compare_exchange_strong_explicit(&o->state, &open, rt_offer_word(t, OFFER_CLOSED),
                                                memory_order_relaxed, memory_order_relaxed))
        return false;
    /* Until the helper left t, or the entry holds a later ticket: it was
     * offered again, which this thread does only once t was left (its own
     * acquire there ordered the helper's work). acquire: pairs with
     * plan_serve's release of LEFT. */
    uint64_t since = 0;   /* rt_plan_nap's */
    for (unsigned spins = 0;;) {
        uint64_t st = atomic_load_explicit(&o->state, memory_order_acquire);
        if (st == rt_offer_word(t, OFFER_LEFT) || (st >> OFFER_BITS) != t)
            return true;
        rt_cpu_relax();
        /* relaxed: hints, as in plan_relax (exec/plan.c). */
        uint32_t w = atomic_load_explicit(&r->owner[atomic_load_explicit(&o->list, memory_order_relaxed)],
                                          memory_order_relaxed);
        if ((++spins & (RT_DUTY_POLLS - 1)) == 0)
            rt_poll_duty(r->rt, rt_ctx_current(r->rt));   /* as plan_relax (exec/plan.c) */
        rt_plan_hold(r, spins);   /* the caller's wait: the policy's "held" (exec/plan.c) */
        if ((spins & 63) == 63 && rt_plan_nap(r, spins, &since))
            continue;   /* crowded, and the helper overdue: it needs a CPU (exec/plan.c) */
        if ((spins & 63) == 63 && w != 0 && w != PLAN_LEFT && rt_cpu_now() == (int)(w - 1))
            rt_os_yield();
        else if ((spins & PLAN_YIELD_SPINS) == PLAN_YIELD_SPINS)
            rt_os_yield();
    }
}

bool rt_plan_helper_awake(plan_slot *s)
{
    /* relaxed: a hint (plan_slot.awake). */
    return atomic_load_explicit(&s->awake, memory_order_relaxed) > 0;
}

bool rt_plan_helper_waking(plan_slot *s)
{
    if (!s->spawn_ns)
        return false;
    /* relaxed: a hint (plan_slot.woke_ns). A start before the last spawn
     * was an earlier helper's: this one has not started yet. */
    uint64_t woke = atomic_load_explicit(&s->woke_ns, memory_order_relaxed);
    uint64_t until = woke >= s->spawn_ns ? woke : rt_now_ns();
    return until - s->spawn_ns < PLAN_WAKE_NS;
}
