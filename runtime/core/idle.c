/*
 * core/idle.c - the idle protocol: how a thread with nothing to do announces
 * itself, polls, parks and is woken, and how a publisher of work decides
 * whom to wake; exposing a deque's private tail is such a publication.
 *
 * THE IDLE PROTOCOL (no lost wake-ups). A ctx that finds no work:
 *   1. announces:   idle = 1; nidle++; nspinning++          (seq_cst)
 *   2. spins a while, polling for work (or its wait condition, stop, or a
 *      claim: idle reset to 0 by someone else);
 *   3. stops:       nspinning--                             (seq_cst)
 *      re-checks every queue it could take from           (seq_cst loads)
 *      and parks only if all are empty;
 *   4. leaves:      idle = 0; nidle--.
 * A thread that publishes work (deque push, inbox exchange) then:
 *      fence(seq_cst); if nspinning > 0: done (a spinner will see it);
 *      else if nidle > 0: claim one idle ctx (CAS idle 1->0) and unpark it.
 * Dekker argument: the publisher does W(work) F(sc) R(nspinning/nidle), the
 * idler does W(counter) R(work), all sequentially consistent. In the single
 * total order either the idler's counter write precedes the publisher's
 * read (so the publisher sees a spinner, who re-checks after step 3 and
 * sees the work, or an idler, whom it claims and unparks), or the
 * publisher's fence precedes the idler's re-check, which then sees the work.
 * The unpark leaves a token (core/park.c), so one that lands before the park is
 * not lost either. A spinner that stops while work is still visible and it
 * was the last spinner (or was woken by a claim) hands the search on: it
 * wakes one more idle ctx after taking its task (Go's scheduler does the
 * same), so a burst of work ramps up all workers without every spawn paying
 * for a wake-up. Model: tests/models/park.pml (and its negative controls).
 *
 * THE ASYMMETRIC VARIANT, for the one publication that is hot: a worker
 * exposing its deque's private tail (core/deque.h; "the pusher" below). A
 * seq_cst RMW per exposure costs a locked instruction and bounces the line
 * thieves poll, so where Linux's membarrier(2) with PRIVATE_EXPEDITED is available
 * (rt->asym_fence) the pusher does
 *      W(split, release); compiler barrier; R(nspinning), R(nidle) relaxed
 * and the idler pays instead: between step 3 and its re-check it calls
 * membarrier, which makes every other running thread of the process execute
 * a full barrier (a thread not running has passed one in its context
 * switch). Either the pusher's barrier point comes after its W(split), so
 * the split is visible to the re-check, or it comes before, and then the
 * pusher's reads, later in its program order, see the idler's counter
 * writes (made before the membarrier): the Dekker pair again, with the
 * fence moved to the rare side (at most one system call per park). Model:
 * tests/models/park.pml -DASYM, negative control -DASYM -DNOMEMBARRIER.
 * Without membarrier (other systems, seccomp, DAGRT_NO_MEMBARRIER=1 in the
 * environment) exposures use the seq_cst exchange and idlers skip the call.
 *
 * THE POLLER'S DUTY (rt_poll_duty). The world's deadlines and completions
 * have no thread of their own: due timers are fired, and the reactor's
 * completions reaped, by whichever thread polls. That is every thread that
 * polls, not only an idler: a plan thread waiting for a node (exec/plan.c),
 * a caller waiting for its helpers to leave, a lingering helper. In plan
 * mode no thread goes idle while a node is missing, so if only idlers
 * served the clock, a fiber node sleeping on a timer would hold the frame
 * for good (every thread polling for it, none firing it). Each poll loop
 * calls rt_poll_duty every RT_DUTY_POLLS polls (one relaxed load of the
 * earliest deadline when no timer is queued, and the reap's own early
 * outs); what it resumes is work the loop's next help step sees. A thread
 * busy in a body serves nothing: a fiber whose deadline passed while every
 * thread runs a body could not run any earlier anyway. Model:
 * tests/models/plan_timer.pml (negative control: plan waits without the
 * duty deadlock).
 */
#include "core.h"

/* Could c take any work now? seq_cst loads: this is the re-check half of
 * the idle protocol. The main-thread queue counts only for the main ctx. */
static bool work_visible(rt_ctx *c)
{
    dagrt *rt = c->rt;
    if (rt_mpsc_nonempty(&rt->hot) || rt_mpsc_nonempty(&c->inbox))
        return true;
    /* Our own deque, its private tail too: the idle loop's reap
     * (rt_io_reap) resumes fibers into it, and with no other thread to
     * run tasks (nctx 1) nothing exposes it (core/work.c, submit_on). relaxed:
     * the owner's own indices (a thief's top only makes it look fuller). */
    if (atomic_load_explicit(&c->deque.bottom, memory_order_relaxed) >
        atomic_load_explicit(&c->deque.top, memory_order_relaxed))
        return true;
    /* relaxed: an offer is extra work nobody waits on (pfor/pfor.c), so missing
     * one is never a lost wake-up; seeing one sends us to find_task. */
    if (atomic_load_explicit(&rt->offer, memory_order_relaxed))
        return true;
    for (int i = 0; i < rt->nctx; i++) {
        rt_ctx *v = &rt->ctx[i];
        if (rt_deque_nonempty(&v->deque))
            return true;
        if (i != 0 && rt_mpsc_nonempty(&v->inbox))
            return true;
        /* A busy owner's private tail is not visible work (the owner runs
         * it), but ask for it: the owner exposes it at its next spawn or
         * take, and that exposure wakes or feeds us. */
        if (v != c)
            rt_deque_ask(&v->deque);
    }
    return false;
}

static void wake_one(dagrt *rt)
{
    /* Workers first (1..n), then the main thread if it is waiting. */
    for (int k = 1; k <= rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k % rt->nctx];
        int one = 1;
        /* relaxed pre-check keeps the scan cheap. The CAS is acq_rel: the
         * claimed ctx, if it reads idle == 0 instead of parking, acquires
         * our published work through it. */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) == 1 &&
            atomic_compare_exchange_strong_explicit(&v->idle, &one, 0,
                memory_order_acq_rel, memory_order_relaxed)) {
            rt_wake_note(rt, v);
            rt_unpark(&v->parker);
            rt_ctx *me = rt_ctx_here(rt);   /* the waker's count, on its own line */
            if (me) {
                rt_tstat_add(&me->stats.wakes, 1);
                rt_obs *ob = rt_obs_now(&rt->obs);
                if (ob)
                    rt_obs_mark(ob, (int)me->index, RT_TRACE_WAKE);
            }
            return;
        }
    }
}

/* After publishing work (see the protocol at the top). */
void rt_notify(dagrt *rt)
{
    /* seq_cst fence: the publisher's half of the Dekker pair (top of file). */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed loads: ordered after the publication by the fence. */
    if (atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return;
    if (atomic_load_explicit(&rt->nidle, memory_order_relaxed) == 0)
        return;
    wake_one(rt);
}

/* The same after a publication that was itself a seq_cst RMW (the
 * deque's rt_deque_expose_sc_to): seq_cst loads then suffice, no separate fence. */
static inline void notify_after_sc(dagrt *rt)
{
    if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) > 0)
        return;
    if (atomic_load_explicit(&rt->nidle, memory_order_seq_cst) == 0)
        return;
    wake_one(rt);
}

/* The idler's half of the asymmetric variant (see the top of the file). */
static void idle_barrier(dagrt *rt)
{
    if (rt->asym_fence)
        rt_os_barrier();
}

/* Whether pushes may skip their fence: registration succeeds only where the
 * kernel has PRIVATE_EXPEDITED (Linux 4.14+) and no filter forbids it. */
bool rt_asym_fence_available(void)
{
    const char *off = rt_os_getenv("DAGRT_NO_MEMBARRIER");
    if (off && *off && *off != '0')
        return false;
    return rt_os_barrier_init();
}

/* The observer's load sample (dagrt.h, load): only when one asks for it. */
static void obs_load(dagrt *rt, rt_obs *ob, int thread)
{
    if (!ob->cb.load)
        return;
    int64_t ready = 0;
    for (int k = 0; k < rt->nctx; k++) {
        /* relaxed: a sample for a plot; the indices may move meanwhile and a
         * thief's top makes a deque look fuller, never emptier than 0. */
        int64_t n = atomic_load_explicit(&rt->ctx[k].deque.bottom, memory_order_relaxed) -
                    atomic_load_explicit(&rt->ctx[k].deque.top, memory_order_relaxed);
        ready += n > 0 ? n : 0;
    }
    /* relaxed: counts for the same sample. */
    int parked = atomic_load_explicit(&rt->nidle, memory_order_relaxed) -
                 atomic_load_explicit(&rt->nspinning, memory_order_relaxed);
    rt_obs_load(ob, thread, ready > INT32_MAX ? INT32_MAX : (int)ready, parked > 0 ? parked : 0);
}

bool rt_work_visible(rt_ctx *c)
{
    return work_visible(c);
}

/* A spinner that stopped with work in sight hands the search on. */
void rt_handoff(rt_ctx *c)
{
    c->handoff = false;
    dagrt *rt = c->rt;
    /* seq_cst: the handoff reads are re-checks of the protocol. */
    if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) == 0 &&
        atomic_load_explicit(&rt->nidle, memory_order_seq_cst) > 0 &&
        work_visible(c))
        wake_one(rt);
}

void rt_poll_duty(dagrt *rt, rt_ctx *c)
{
    /* relaxed load inside rt_timer_next: a hint; run_due takes the
     * timers' mutex before acting on it. A timer added just after this
     * load is seen at the next duty (the adder's own wake-up rules cover
     * the threads that park instead: wait/timer.c). */
    if (rt_timer_next(rt) != UINT64_MAX)
        rt_timer_run_due(rt, rt_now_ns());
    if (c)
        rt_io_reap(c);
}

/* WAKE-UP LATENCY (dagrt_config.wake_stats, dagrt_thread_stats.wake_*).
 * A waker that claims or unparks an idle ctx for new work stores the time
 * in its wake_t0 just before the unpark (rt_wake_note); the ctx, back
 * from a park, takes it (exchange to 0): the wake is from then to now,
 * and its search starts now (search_from) and ends at the first task it
 * finds (rt_wake_search_end, from rt_help_one) or, finding none, at its next
 * idle round. A stale note (the ctx was claimed while still polling, and
 * never parked) is dropped as the ctx announces itself idle again: no
 * waker can note it before that announcement. */
static void max_in(_Atomic uint64_t *m, uint64_t v)
{
    /* relaxed: the owner's own counter (trace/trace.h, rt_tstat_add). */
    if (v > atomic_load_explicit(m, memory_order_relaxed))
        atomic_store_explicit(m, v, memory_order_relaxed);
}

static void search_end(rt_ctx *c, uint64_t now)
{
    uint64_t ns = now > c->search_from ? now - c->search_from : 0;
    c->search_from = 0;
    rt_tstat_add(&c->stats.search_ns, ns);
    max_in(&c->stats.search_ns_max, ns);
}

void rt_wake_search_end(rt_ctx *c)
{
    search_end(c, rt_now_ns());
}

static void wake_begin(rt_ctx *c)
{
    /* relaxed: ordered after the waker's note by the park's acquire. */
    uint64_t t0 = atomic_exchange_explicit(&c->wake_t0, 0, memory_order_relaxed);
    if (!t0)
        return;   /* a timeout, a stop, a pause: no push woke us */
    uint64_t now = rt_now_ns();
    uint64_t ns = now > t0 ? now - t0 : 0;
    rt_tstat_add(&c->stats.wakeups, 1);
    rt_tstat_add(&c->stats.wake_ns, ns);
    max_in(&c->stats.wake_ns_max, ns);
    c->search_from = now ? now : 1;
}

/* One round of the idle protocol for c (see the top of the file). g: the
 * group c waits for, or NULL in the worker loop. Returns when c should look
 * for work again (or its wait may be over). */
void rt_ctx_idle(rt_ctx *c, rt_group *g)
{
    dagrt *rt = c->rt;
    bool forever = c->hot || rt->cfg.idle == DAGRT_IDLE_SPIN;
    uint64_t idle_from = rt_now_ns();   /* dagrt_get_stats' idle time */
    if (RT_UNLIKELY(rt->cfg.wake_stats)) {
        if (c->search_from)
            search_end(c, idle_from);   /* woken, and found nothing */
        /* relaxed: before our announcement below (seq_cst), which every
         * waker's note comes after (WAKE-UP LATENCY). */
        atomic_store_explicit(&c->wake_t0, 0, memory_order_relaxed);
    }
    /* seq_cst: step 1, the idler's writes of the Dekker pair (top of file). */
    atomic_store_explicit(&c->idle, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rt->nidle, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_seq_cst);

    bool leave = false;
    bool keep_on = false;   /* was the timers' keeper, timers still queued */
    uint64_t t0 = 0;
    /* I/O completions that are there are served by the idler itself (hot
     * workers first: every round; others now and then): what they resume
     * is work this round sees. The reactor's thread serves the rest. */
    bool reaper = c->hot || rt->cfg.hot_workers == 0;
    for (unsigned i = 0;; i++) {
        if ((i & (RT_DUTY_POLLS - 1)) == 0)
            rt_poll_duty(rt, c);   /* timers and completions, as every poller */
        else if (reaper)
            rt_io_reap(c);
        if (work_visible(c) ||
            (g && rt_group_is_done(g, c)) ||
            /* acquire: a claimer's CAS or destroy's stop publishes what we act on. */
            atomic_load_explicit(&rt->stop, memory_order_acquire) ||
            /* relaxed: a worker's own loop parks for dagrt_pause (core/worker.c,
             * PAUSE), where the order is argued; a late look costs nothing,
             * pause's unpark leaves a token. */
            (!g && c->worker && atomic_load_explicit(&rt->paused, memory_order_relaxed)) ||
            atomic_load_explicit(&c->idle, memory_order_acquire) == 0) {
            leave = true;
            break;
        }
        /* Polling on the CPU of the thread that woke us only keeps that
         * thread off it (core/park.h): go back to sleep instead. */
        if (!forever && (c->beside_waker ||
                         /* relaxed: spin_ns is a tuning knob. */
                         atomic_load_explicit(&rt->spin_ns, memory_order_relaxed) == 0))
            break;
        rt_cpu_relax();
        if ((i & 63) == 63) {
            if (forever) {
                if ((i & 1023) == 1023)
                    rt_os_yield();   /* be polite when oversubscribed */
                continue;
            }
            uint64_t t = rt_now_ns();
            if (t0 == 0)
                t0 = t;
            /* relaxed: the knob */
            else if (t - t0 > atomic_load_explicit(&rt->spin_ns, memory_order_relaxed))
                break;
        }
    }
    /* seq_cst: step 3, before the re-check. */
    int left = atomic_fetch_sub_explicit(&rt->nspinning, 1, memory_order_seq_cst) - 1;
    c->beside_waker = false;   /* one short poll per such wake-up */
    if (!leave) {
        bool claimed = false;
        idle_barrier(rt);      /* pushes that skipped their fence are visible now */
        if (!work_visible(c) &&
            !(g && rt_group_is_done(g, c)) &&
            /* seq_cst: the re-check half of the pair. */
            !atomic_load_explicit(&rt->stop, memory_order_seq_cst) &&
            atomic_load_explicit(&c->idle, memory_order_seq_cst) == 1) {
            rt_tstat_add(&c->stats.parks, 1);
            rt_obs *ob = rt_obs_now(&rt->obs);
            if (ob) {
                rt_obs_idle(ob, true, (int)c->index);
                obs_load(rt, ob, (int)c->index);
            }
            /* The timers' keeper parks until the earliest deadline (wait/wait.h);
             * an earlier one added meanwhile unparks it. With no timer
             * queued this is one load, no lock (wait/timer.c). */
            uint64_t until = rt_timer_keeper_enter(rt, c);
            rt_io_park(c, true);   /* the last reaper to park sends the reactor's thread to the kernel */
            c->beside_waker = rt_park_until(&c->parker, until) != 0;
            if (RT_UNLIKELY(rt->cfg.wake_stats))
                wake_begin(c);   /* WAKE-UP LATENCY, above */
            rt_io_park(c, false);
            keep_on = until != UINT64_MAX && rt_timer_keeper_leave(rt, c);
            if (ob) {
                rt_obs_idle(ob, false, (int)c->index);
                obs_load(rt, ob, (int)c->index);
            }
            /* relaxed: our own word after the park, which acquired the claim. */
            claimed = atomic_load_explicit(&c->idle, memory_order_relaxed) == 0;
        }
        if (claimed)
            c->handoff = true;   /* Go-style: a woken ctx hands on too */
    }
    if (left == 0)
        c->handoff = true;
    /* seq_cst: leaving must not be reordered before the re-checks above. */
    atomic_exchange_explicit(&c->idle, 0, memory_order_seq_cst);
    atomic_fetch_sub_explicit(&rt->nidle, 1, memory_order_seq_cst);
    rt_tstat_add(&c->stats.idle_ns, rt_now_ns() - idle_from);
    /* A keeper leaving for work, or out of its wait, while timers are
     * queued hands the role on: an idler that wakes keeps them (wait/wait.h).
     * After our own idle = 0, so the wake cannot claim us. */
    if (keep_on && (g || work_visible(c)))
        rt_wake_idle(rt);
}

/* Wakes one idle ctx if any (wait/timer.c, for a deadline with no keeper). */
void rt_wake_idle(dagrt *rt)
{
    /* seq_cst fence: the publisher's half of the Dekker pair, as in
     * rt_notify (the timer's publication is its store of timers.next,
     * which the idler's keeper_enter loads after announcing: wait/timer.c,
     * ARMED VERSUS PARKING). */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed: ordered after the insert by the fence. */
    if (atomic_load_explicit(&rt->nidle, memory_order_relaxed) > 0)
        wake_one(rt);
}

void rt_ctx_publish_tail(rt_ctx *c)
{
    if (c && c->rt->nctx >= 2 && rt_deque_has_private(&c->deque))
        rt_expose(c->rt, c);
}

/* Makes c's tail public up to index `to` and notifies (the idle
 * protocol's publication). */
RT_NOINLINE void rt_expose_to(dagrt *rt, rt_ctx *c, int64_t to)
{
    rt_deque_take_request(&c->deque);
    if (RT_LIKELY(rt->asym_fence)) {
        rt_deque_expose_to(&c->deque, to);
        /* The pusher's half of the asymmetric variant (top of the file):
         * only the compiler may not move the reads above the exposure; the
         * idler's membarrier supplies the hardware barrier. relaxed loads:
         * their order against the store comes from that argument. */
        atomic_signal_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&rt->nspinning, memory_order_relaxed) == 0 &&
            atomic_load_explicit(&rt->nidle, memory_order_relaxed) > 0)
            wake_one(rt);
    } else {
        rt_deque_expose_sc_to(&c->deque, to);
        notify_after_sc(rt);
    }
}

/* The whole tail. */
RT_NOINLINE void rt_expose(dagrt *rt, rt_ctx *c)
{
    /* relaxed: the owner's own index. */
    rt_expose_to(rt, c, atomic_load_explicit(&c->deque.bottom, memory_order_relaxed));
}
