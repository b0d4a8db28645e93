/*
 * pfor/pfor.c - dagrt_parallel_for: lazy, thief-driven splitting.
 *
 * The caller runs the range itself, a chunk at a time. Splitting is done
 * for the hungry: a thread with nothing to do that picks up one of the
 * loop's invitations (a task in the caller's deque), a *taker*, splits
 * the largest range still left in the loop at that very moment, taking its
 * upper half, and runs that the same way (its half can be split by the next hungry
 * thread, the caller included once it runs out). A loop that nobody can
 * help therefore runs as a few direct calls of fn, close to the plain
 * loop, and a thief that arrives late still gets exactly half of what is
 * left, not half of what was there when the invitation was made. One
 * exception, for the common case of loops back to back with a taker
 * polling for them: the caller then sets the taker's share aside itself
 * as it invites (presplit), which spares both sides the split's cache-line
 * round trip; a taker that does not come is evened out by the same
 * splitting, and its share goes back to the caller with the invitation.
 *
 * Ranges. Every participant owns one slot: a single atomic word packing
 * [b, e) as two 32-bit offsets from the loop's begin. The owner claims its
 * next chunk with a CAS that advances b; a thief claims the upper half with
 * a CAS that lowers e. Both are read-modify-writes of the same word, so the
 * claims are disjoint by construction: whichever lands second sees the
 * first and recomputes. No data travels through the word but the bounds
 * themselves (fn's effects reach the caller through the group, below), so
 * these atomics are relaxed. The owner's CAS hits its own cache line unless
 * a thief just took from it: a few ns per chunk of about a microsecond.
 * (A busy taker claims its own slot from the top down instead, and may
 * hand what is left to the range below it: pfor/share.c, hand_back.)
 *
 * Invitations. A caller invites (pushes one taker task) when an idle
 * thread is polling for work right now (nspinning > 0), when the loop is
 * long enough to pay for waking a sleeping one (PFOR_WAKE_NS), or, rate
 * limited, when loops come back to back and the only takers are asleep
 * (see kick_due: a sleeping worker never sees the short loops that would
 * keep it awake otherwise). Each participant re-invites while it runs if
 * someone else turned hungry and no invitation is pending, so P threads
 * ramp up one after the other without the caller paying for all of them.
 * The first invitation to a polling taker is an offer instead (rt_pfor_offer_post):
 * a task descriptor inside the job, posted in the runtime's one offer word,
 * which pollers look at before they steal. It costs the caller one CAS
 * instead of a descriptor, a deque push and its fence, and the taker one
 * exchange instead of a steal; nobody is woken for it, and a caller whose
 * offer nobody took withdraws it (finish). A caller whose last loop a
 * taker joined a moment ago counts that taker as polling without asking:
 * it is on its way back, and the offer is the first thing it looks at.
 *
 * A loop that runs inside a frame's node (rt_ctx.frame: a node body, or a
 * piece of one's loop) posts the offer even when nobody polls at its
 * start, whatever its estimate: the frame's threads look at the offer
 * word while they wait for their next node (plan mode's help,
 * exec/plan_off.c; the dynamic executor's waiting caller; a lingering plan
 * helper), so one that runs out of work while the loop runs joins it then.
 * Such a thread is awake already: no wake-up goes with the offer, and
 * what decides the waking of a parked worker (PFOR_WAKE_NS, the kick)
 * stays as it was. An offer nobody took costs the caller two CASes.
 *
 * Completion. The invitations are counted (atomically) in a group on the
 * caller's stack. After its own range and every split it could make, the
 * caller takes back an invitation nobody picked up (it is the top of its
 * own deque), then spins briefly on the group's count: by then what is left
 * elsewhere is below a split's worth, and a park/unpark round trip would
 * cost more than the whole remainder. Past PFOR_END_SPIN_NS it does the
 * full helping wait (dagrt_group_wait), which also suspends fibers.
 *
 * Costs are judged in time, not items: the first chunk is timed (cheap
 * cycle counter where there is one) to estimate ns per item, or a
 * per-thread estimate from an earlier call of the same (fn, arg) is used,
 * which lets the first invitation go out before any item has run. Two
 * threads need not run items at the same speed (a CPU whose core is
 * shared with other work runs slower for stretches): the caller learns the
 * ratio from the loops a taker joined and sizes the taker's share by it.
 */
#include "pfor.h"

/* ------------------------------------------------------------ clock */

#ifdef PFOR_TSC
double rt_pfor_ns_per_tick = 1.0;
static rt_os_once tick_once;

/* A clock read and the TSC at the same moment: the clock read between two
 * TSC reads, the tightest of a few brackets (a thread preempted inside one
 * gets a wide one, which is not used). */
static void tick_pair(uint64_t *ns, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < 5; k++) {
        uint64_t a = rt_pfor_rdtsc();
        uint64_t t = rt_now_ns();
        uint64_t b = rt_pfor_rdtsc();
        if (b > a && b - a < best) {
            best = b - a;
            *ns = t;
            *tsc = a + (b - a) / 2;
        }
    }
}

/* The TSC's rate against the clock, from two paired reads 0.2 ms apart.
 * Paired, because a thread preempted between a clock read and its TSC
 * read (once a plain pair was ms apart on a loaded machine) made every
 * tick-timed length of the process's parallel-fors too short by the
 * preemption's factor: items looked cheap, loops went unshared or a
 * busy taker's bite (pfor/share.c) took most of the loop. */
static void tick_calibrate(void)
{
    uint64_t n0 = 0, c0 = 0, n1 = 0, c1 = 0;
    tick_pair(&n0, &c0);
    do
        tick_pair(&n1, &c1);
    while (n1 - n0 < 200000);   /* 0.2 ms, once per process */
    if (c1 > c0)
        rt_pfor_ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);
}

void rt_pfor_ticks_init(void) { rt_os_once_run(&tick_once, tick_calibrate); }
#endif

/* ------------------------------------------------ per-thread hints */

/* Recent (fn, arg) -> ns per item, and when this thread's last shared loop
 * ended. Hints only: a wrong one costs an early invitation or a missed
 * one, never correctness. Thread-local, so a fiber that migrates just
 * reads another thread's hints. */

/* This thread's hints (pfor_tls, pfor/pfor.h), looked up afresh after anything
 * that may have switched fibers: fn, and the wait at a loop's end, may
 * move a fiber to another thread, and a compiler keeps a thread-local
 * address across calls (core.h's fiber migration rule; TSan saw a fiber
 * write the old thread's hints while that thread ran a loop of its own).
 * rt_pfor_here is out of line in pfor/share.c for that reason: each use
 * below is a call. */
static double hint_get(dagrt_range_fn fn, void *arg)
{
    for (int i = 0; i < PFOR_HINTS; i++)
        if (rt_pfor_here()->hints[i].fn == fn && rt_pfor_here()->hints[i].arg == arg)
            /* Every 16th use re-measures: fn's cost may change with what
             * arg points to. */
            return (++rt_pfor_here()->hints[i].uses & 15) == 0 ? 0.0 : rt_pfor_here()->hints[i].ns_per;
    return 0.0;
}

static void hint_put(dagrt_range_fn fn, void *arg, double ns_per)
{
    for (int i = 0; i < PFOR_HINTS; i++)
        if (rt_pfor_here()->hints[i].fn == fn && rt_pfor_here()->hints[i].arg == arg) {
            rt_pfor_here()->hints[i].ns_per = ns_per;
            return;
        }
    pfor_hint *h = &rt_pfor_here()->hints[rt_pfor_here()->hint_next++ % PFOR_HINTS];
    h->fn = fn;
    h->arg = arg;
    h->ns_per = ns_per;
    h->uses = 0;
}

/* A kick: wakes a sleeping worker for later loops (see kick_due). u[0]:
 * the CPU the kicking thread ran on, u[1]: rt_place_steer()'s token, arg: the
 * runtime. */
static void pfor_kick(void *p)
{
    rt_task *t = p;
    dagrt *rt = t->arg;
    rt_place_unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
    rt_ctx *c = rt_ctx_current(rt);
    if (c && c->worker)   /* not a thread that waits and took it back */
        rt_ctx_leave_waker(c, (int)(intptr_t)t->u[0]);
}

/* A kick (pfor_kick) is due when loops come back to back (so a worker kept
 * awake serves the next ones), the takers are asleep, and this thread has
 * not kicked for PFOR_KICK_EVERY_NS (a wake costs the caller a system
 * call; a loop that is called rarely never pays it). */
static bool kick_due(dagrt *rt, uint64_t now)
{
    /* relaxed: heuristic reads. */
    if (atomic_load_explicit(&rt->nidle, memory_order_relaxed) == 0)
        return false;
    if (rt_pfor_here()->last_end == 0 || ticks_to_ns(now - rt_pfor_here()->last_end) > PFOR_KICK_GAP_NS)
        return false;
    if (rt_pfor_here()->last_kick != 0 && ticks_to_ns(now - rt_pfor_here()->last_kick) < PFOR_KICK_EVERY_NS)
        return false;
    rt_pfor_here()->last_kick = now;
    return true;
}

static void kick(dagrt *rt, rt_ctx *c)
{
    rt_task *t = rt_task_alloc(c);
    if (!t)
        return;
    t->fn = pfor_kick;
    t->arg = rt;
    t->flags = RT_TASK_SELF;
    int cpu = rt_cpu_now();
    t->u[0] = (uintptr_t)(intptr_t)cpu;
    t->u[1] = rt_place_steer(rt, cpu);
    if (rt_submit(rt, c, t) != 0) {
        rt_place_unsteer(rt, t->u[1], cpu);
        rt_task_free(rt, t);
    }
}

/* The caller's end of the loop: everything it could split is done. */
static int finish(pfor_job *j, dagrt_group *dg)
{
    rt_group *g = j->g;
    dagrt *rt = j->rt;
    rt_ctx *c = rt_ctx_current(rt);   /* fresh: fn may have moved us */
    uint64_t t0 = 0;
    bool look = c != NULL;    /* still worth looking at our deque */
    /* An offer is most likely taken by now, often finished too: look at
     * the count first, whose line the taker's completion sends us anyway,
     * and at the offer word (which its taker's exchange took away from
     * us, a second miss in a row) only if the loop is not over. acquire:
     * as in the loop below; a count of 0 includes the offer's, so it was
     * taken (and the word emptied) and completed. */
    if (j->posted && atomic_load_explicit(&g->word, memory_order_acquire) == 0)
        return 0;
    if (j->posted && rt_pfor_offer_withdraw(j)) {
        /* Nobody came for it: run what it would have (slot 1 may hold a
         * presplit share), as for a withdrawn invitation below, then
         * complete its count ourselves. relaxed: as in join_job. */
        rt_pfor_run_part(j, atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed), NULL);
        rt_group_done(g);
        c = rt_ctx_current(rt);   /* fn may have moved us */
        look = c != NULL;
    }
    for (unsigned i = 0;; i++) {
        /* acquire: every taker's effects (its fn calls) are visible once
         * its completion is counted (release in rt_group_done). No waiter
         * is armed, so a taker's fetch_sub there is its last access to
         * the group and to the job: once the count is 0 we may return. */
        if (atomic_load_explicit(&g->word, memory_order_acquire) == 0)
            return 0;
        if (look && rt_deque_nonempty(&c->deque)) {
            /* Our own invitation, still unclaimed, is normally on top of
             * our deque: withdraw it. Anything else (tasks fn spawned) is
             * put back for the full wait below, which runs it. */
            void *x = rt_deque_take(&c->deque);
            rt_task *t = x;
            if (x != RT_DEQUE_EMPTY && t->fn == rt_pfor_task && t->arg == j) {
                /* Withdrawn = taken, by us: a slot it gets (slot 1 may
                 * hold a presplit share nobody came for) is ours to run.
                 * relaxed: the index only has to be unique (see
                 * rt_pfor_task). */
                int mine = atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed);
                rt_place_unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
                rt_task_finish(rt, t);
                if (mine < j->maxslots) {
                    rt_pfor_run_part(j, mine, NULL);
                    c = rt_ctx_current(rt);   /* fn may have moved us */
                    look = c != NULL;
                }
                continue;
            }
            if (x != RT_DEQUE_EMPTY) {
                if (!rt_deque_push(&c->deque, x))
                    rt_task_run(c, t);   /* cannot happen: its slot was just freed */
                if (t->fn != pfor_kick)
                    break;
                look = false;   /* a kick is for a worker: leave it there */
            }
        }
        if ((i & 63) == 63) {
            uint64_t t = ticks();
            if (t0 == 0)
                t0 = t;
            else if (ticks_to_ns(t - t0) > PFOR_END_SPIN_NS)
                break;
        }
        rt_cpu_relax();
    }
    return dagrt_group_wait(rt, dg);
}

/* The caller is about to invite a taker that is polling right now: it will
 * start on the loop about join_ns from now, and will then spend that time
 * finding what to take and (with a CAS on the caller's word) splitting it,
 * while the caller's next claim waits for its word to come back. Instead,
 * set the taker's share aside in slot 1 now: the upper part of [done, n),
 * sized so that both finish together given the taker's later start. Both
 * run their own slot and split the other's as usual, so a wrong guess (a
 * taker that comes late or not at all) is evened out by the same lazy
 * splitting, and an invitation nobody takes gives slot 1 back to the
 * caller (finish). The first invitation's post or submit (release)
 * publishes the slot. The taker's share is g items of rem, with the
 * taker's time per item speed_ratio times ours: both end together when
 * (rem - g) * per = join_ns + g * per * speed_ratio. Returns whether it
 * split. */
static bool presplit(pfor_job *j, uint32_t done, uint32_t n, double per)
{
    if (j->maxslots < 2)
        return false;
    double rem = (double)(n - done);
    double give = (rem - rt_pfor_here()->join_ns / per) / (1.0 + rt_pfor_here()->speed_ratio);
    if (give < (double)j->grain || give * per < PFOR_SPLIT_MIN_NS ||
        rem - give < (double)j->grain)
        return false;
    uint32_t mid = n - (uint32_t)give;
    /* relaxed: nobody else sees the job before the invitation's submit. */
    atomic_store_explicit(&j->slot[0].r, pack(done, mid), memory_order_relaxed);
    atomic_store_explicit(&j->slot[1].r, pack(mid, n), memory_order_relaxed);
    return true;
}

static int pfor_run(dagrt *rt, size_t begin, size_t end, size_t unit, uint32_t n,
                    uint32_t grain, dagrt_range_fn fn, void *arg, double per)
{
    /* Hints are ns per item: only a loop of one-item units keeps them. */
    bool keep_hints = unit == 1;
    pfor_job j;
    j.fn = fn;
    j.arg = arg;
    j.base = begin;
    j.end = end;
    j.unit = unit;
    uint64_t now = ticks();
    uint32_t done = 0;
    if (per <= 0.0) {
        /* No estimate: time a first chunk. */
        uint32_t k0 = grain > PFOR_FIRST_ITEMS ? grain : PFOR_FIRST_ITEMS;
        if (k0 > n)
            k0 = n;
        run_units(&j, 0, k0);
        uint64_t t1 = ticks();
        done = k0;
        per = ticks_to_ns(t1 - now) / (double)k0;
        if (per < 0.01)
            per = 0.01;
        if (keep_hints)
            hint_put(fn, arg, per);
        now = t1;
        if (done == n)
            return 0;
    }
    if ((double)(n - done) * per < PFOR_SHARE_MIN_NS) {
        run_units(&j, done, n);     /* too short to be worth sharing */
        return 0;
    }
    dagrt_group dg;
    dagrt_group_init(&dg);
    j.rt = rt;
    /* The caller's frame (exec/frame.c), which its takers' pieces are in
     * too (fresh: fn may have moved us). */
    rt_ctx *fc = rt_ctx_current(rt);
    j.frame = fc ? fc->frame : NULL;
    j.grain = grain;
    j.ns_per = per;
    j.g = rt_group_of(&dg);
    double ch = PFOR_CHUNK_NS / per;
    j.chunk = ch < (double)grain ? grain : (ch > (double)n ? n : (uint32_t)ch);
    /* relaxed: nothing has been published yet; the first invitation's
     * submit (release) does that. */
    atomic_init(&j.nslots, 1);
    atomic_init(&j.invites, 0);
    j.t_join = 0;
    j.t_hend = 0;
    j.h_items = 0;
    j.posted = false;
    atomic_init(&j.slot[0].r, pack(done, n));
    /* Only the slots takers can get: one per other thread. (A thread may
     * pick up a second invitation of the same loop while fn waits; that
     * one finds no slot and leaves.) */
    j.maxslots = rt->nctx < PFOR_SLOTS ? rt->nctx : PFOR_SLOTS;
    for (int i = 1; i < j.maxslots; i++)
        atomic_init(&j.slot[i].r, 0);
    double est = (double)(n - done) * per;
    uint64_t t_inv = 0;       /* set when we invite a polling taker */
    bool invited = false;
    /* A taker that joined our last loop and left it a moment ago is
     * polling again, or about to: then skip the read of the spinner count
     * (a line it has just written). relaxed: a heuristic read. */
    bool polling = (rt_pfor_here()->last_joined && ticks_to_ns(now - rt_pfor_here()->last_end) < PFOR_BACK_NS) ||
                   atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0;
    if (polling || est >= PFOR_WAKE_NS) {
        rt_ctx *c = rt_ctx_current(rt);   /* fresh: fn may have moved us */
        if (c) {
            bool split = polling && presplit(&j, done, n, per);
            /* On failure we run it alone. A polling taker's lag counts
             * from when we start on our own share; it is learnt from every
             * such loop, split or not (an estimate that only split loops
             * taught could grow until they no longer split). */
            invited = (polling && rt_pfor_offer_post(&j)) || rt_pfor_invite(&j, c) == 0;
            if (invited && polling) {
                t_inv = ticks();
            } else if (split) {
                /* Nobody will come for slot 1: it is all ours again.
                 * relaxed: still unpublished. */
                atomic_store_explicit(&j.slot[0].r, pack(done, n), memory_order_relaxed);
                atomic_store_explicit(&j.slot[1].r, 0, memory_order_relaxed);
            }
        }
    } else {
        /* A loop inside a frame's node (j.frame): see the top of the
         * file. No presplit (nobody is known to come), no lag learnt: a
         * late taker splits half of what is left. */
        if (j.frame != NULL)
            invited = rt_pfor_offer_post(&j);
        if (kick_due(rt, now)) {
            rt_ctx *c = rt_ctx_current(rt);
            if (c)
                kick(rt, c);
        }
    }
    double fresh = 0.0;
    /* With one other thread, our one invitation is all there can be: then
     * we never read the line our taker writes as it arrives (a transfer
     * per loop, paid while our chunk waits on it). */
    rt_pfor_run_slot(&j, &j.slot[0], done == 0 ? &fresh : NULL, invited && j.maxslots <= 2);
    if (fresh > 0.0 && keep_hints)   /* timed: done == 0 */
        hint_put(fn, arg, fresh < 0.01 ? 0.01 : fresh);
    while (rt_pfor_steal_into(&j, 0, UINT32_MAX))
        rt_pfor_run_slot(&j, &j.slot[0], NULL, invited && j.maxslots <= 2);
    int r = finish(&j, &dg);
    rt_pfor_here()->last_end = ticks();
    rt_pfor_here()->last_joined = j.t_join != 0;
    /* The taker's speed, from a share it ran as one claim (nobody can
     * have taken part of it then) against our first chunk's: clamped and
     * averaged like the lag, for the same reason. */
    if (j.t_join != 0 && j.t_hend > j.t_join && j.h_items > 0 && j.h_items <= j.chunk &&
        fresh > 0.0) {
        double rm = ticks_to_ns(j.t_hend - j.t_join) / (double)j.h_items / fresh;
        rm = rm < 0.33 ? 0.33 : (rm > 3.0 ? 3.0 : rm);
        rt_pfor_here()->speed_ratio += (rm - rt_pfor_here()->speed_ratio) / 4;
    }
    if (t_inv != 0 && j.t_join != 0) {
        /* A late join (a taker that was preempted, a page fault) must not
         * make the next loops hand out less than half for long: clamp what
         * one loop can teach, then average over a few. */
        double lag = j.t_join > t_inv ? ticks_to_ns(j.t_join - t_inv) : 0.0;
        if (lag > 4 * rt_pfor_here()->join_ns + 1000.0)
            lag = 4 * rt_pfor_here()->join_ns + 1000.0;
        rt_pfor_here()->join_ns += (lag - rt_pfor_here()->join_ns) / 4;
    }
    return r;
}

/* The shuffled serial switch (core/core.h): the range in up to
 * PFOR_SHUFFLE_PIECES pieces of at least a grain each, run by the caller
 * in a random order from its own rng, each exactly once. A loop whose
 * pieces secretly depend on the order of their items shows here. */
#define PFOR_SHUFFLE_PIECES 64
static int shuffled(rt_ctx *c, size_t begin, size_t n, size_t grain, dagrt_range_fn fn, void *arg)
{
    size_t np = n / grain < PFOR_SHUFFLE_PIECES ? n / grain : PFOR_SHUFFLE_PIECES;
    size_t per = n / np, extra = n % np;   /* the first `extra` pieces one item longer */
    uint8_t order[PFOR_SHUFFLE_PIECES];
    for (size_t k = 0; k < np; k++)
        order[k] = (uint8_t)k;
    for (size_t k = np - 1; k > 0; k--) {   /* Fisher-Yates */
        size_t j = rt_shuffle_draw(&c->rng, (uint32_t)k + 1);
        uint8_t x = order[k];
        order[k] = order[j];
        order[j] = x;
    }
    for (size_t k = 0; k < np; k++) {
        size_t p = order[k];
        size_t b = begin + p * per + (p < extra ? p : extra);
        fn(arg, b, b + per + (p < extra));
    }
    return 0;
}

int dagrt_parallel_for(dagrt *rt, size_t begin, size_t end, size_t grain,
                       dagrt_range_fn fn, void *arg)
{
    if (!rt || !fn || begin > end)
        return DAGRT_EINVAL;
    if (begin == end)
        return 0;
    if (grain == 0)
        grain = 1;
    size_t n = end - begin;
    rt_ctx *c = rt_ctx_current(rt);
    /* Nobody could help (a thread outside the runtime runs it alone too),
     * or the range holds fewer than two grains (n / 2: 2 * grain may
     * overflow). */
    /* Shuffled: on the caller alone, guest slots or not (a serial
     * runtime's loops run on the thread that waits). */
    if (RT_UNLIKELY(c && rt_shuffled(rt)) && n / 2 >= grain)
        return shuffled(c, begin, n, grain, fn, arg);
    if (!c || rt->nctx < 2 || n / 2 < grain) {
        fn(arg, begin, end);
        return 0;
    }
    /* Slots hold 32-bit offsets: a longer range is shared in units of
     * `unit` items (the last one shorter), at most 2^31 of them, and its
     * grain in whole units rounded up, so no piece but the last is ever
     * smaller than the caller's grain. (n <= 2^31 implies grain <= 2^30.) */
    size_t unit = 1;
    if (n > PFOR_UNITS_MAX)
        unit = n / PFOR_UNITS_MAX + (n % PFOR_UNITS_MAX != 0);
    size_t nu = n / unit + (n % unit != 0);
    size_t gu = grain / unit + (grain % unit != 0);
    double per = unit == 1 ? hint_get(fn, arg) : 0.0;
    if (per > 0.0 && (double)n * per < PFOR_SHARE_MIN_NS) {
        fn(arg, begin, end);    /* known to be too short to share */
        return 0;
    }
    rt_pfor_ticks_init();
    return pfor_run(rt, begin, end, unit, (uint32_t)nu, (uint32_t)gu, fn, arg, per);
}

