/*
 * pfor/share.c - the shared side of a parallel-for (pfor/pfor.c's top comment
 * has the design): an owner's claims on its slot, a thief's split of the
 * largest remainder, invitations and the offer, and the task a taker runs.
 */
#include "pfor.h"

static _Thread_local pfor_tls pfor_tls_ = {.join_ns = 500.0, .speed_ratio = 1.0};

/* Out of line and in this file, not pfor/pfor.c's: every call looks the
 * thread-local up again (pfor/pfor.h). */
RT_NOINLINE pfor_tls *rt_pfor_here(void) { return &pfor_tls_; }

void rt_pfor_busy_hook(bool (*fn)(void *), void *arg)
{
    rt_pfor_here()->busy = fn;
    rt_pfor_here()->busy_arg = arg;
}

static void pfor_offer_task(void *p);

/* Pushes one invitation from ctx c. Returns 0 or an error (nothing
 * pushed then). u[0]: the CPU we run on; u[1]: rt_place_steer()'s token
 * when the submit is expected to wake a sleeping worker. */
int rt_pfor_invite(pfor_job *j, rt_ctx *c)
{
    rt_task *t = rt_task_alloc(c);
    if (!t)
        return DAGRT_ENOMEM;
    t->fn = rt_pfor_task;
    t->arg = j;
    t->group = j->g;      /* rt_pfor_task completes it itself (see there) */
    t->flags = RT_TASK_SELF;
    int cpu = rt_cpu_now();
    t->u[0] = (uintptr_t)(intptr_t)cpu;
    t->u[1] = rt_place_steer(j->rt, cpu);
    /* relaxed: a heuristic count (it only throttles re-invitations), made
     * before the submit so a quick taker never sees more takers than
     * invitations; the group count is the one that matters. */
    atomic_fetch_add_explicit(&j->invites, 1, memory_order_relaxed);
    rt_group_add(j->g, 1);
    int r = rt_submit(j->rt, c, t);
    if (r != 0) {
        /* relaxed: the heuristic count of invite's increment. */
        atomic_fetch_sub_explicit(&j->invites, 1, memory_order_relaxed);
        rt_place_unsteer(j->rt, t->u[1], cpu);
        rt_task_free(j->rt, t);
        rt_group_done(j->g);
    }
    return r;
}

/* Posts j's offer (see the top of the file) if the runtime's offer word is
 * free. Returns whether it did; the offer then holds one count in the
 * loop's group, which its taker completes, or the caller if it withdraws
 * the offer (finish). No wake-up goes with it: an offer is only ever
 * extra help, since the caller withdraws one nobody took, so the idle
 * protocol (core/idle.c) need not see it. */
bool rt_pfor_offer_post(pfor_job *j)
{
    dagrt *rt = j->rt;
    /* relaxed: a hint that spares the RMW while another loop's offer is
     * up; the CAS below decides. */
    if (atomic_load_explicit(&rt->offer, memory_order_relaxed) != NULL)
        return false;
    j->offer = (rt_task){.fn = pfor_offer_task, .arg = j, .group = j->g,
                         .flags = RT_TASK_SELF | RT_TASK_FORKED};
    /* relaxed: as in invite. */
    atomic_fetch_add_explicit(&j->invites, 1, memory_order_relaxed);
    rt_group_add(j->g, 1);
    rt_task *none = NULL;
    /* release: the taker's exchange (acquire, find_task) must see the job
     * (fields, presplit slots, the group's count) and the descriptor as
     * written above. relaxed on failure: nothing was published. */
    if (atomic_compare_exchange_strong_explicit(&rt->offer, &none, &j->offer,
            memory_order_release, memory_order_relaxed)) {
        j->posted = true;
        return true;
    }
    atomic_fetch_sub_explicit(&j->invites, 1, memory_order_relaxed);
    rt_group_done(j->g);
    return false;
}

/* Takes j's offer back if nobody took it. relaxed: only the CAS's outcome
 * matters, and the two sides cannot both win it: the taker's exchange and
 * this CAS are read-modify-writes of one word. On success the offer's
 * count is ours; on failure its taker completes it (release in
 * rt_group_done, acquired by the caller's wait). */
bool rt_pfor_offer_withdraw(pfor_job *j)
{
    rt_task *mine = &j->offer;
    j->posted = false;
    return atomic_load_explicit(&j->rt->offer, memory_order_relaxed) == mine &&
           atomic_compare_exchange_strong_explicit(&j->rt->offer, &mine, NULL,
               memory_order_relaxed, memory_order_relaxed);
}

/* Worth inviting one more taker now? remaining: the caller's own
 * remainder in items. *full: set once every slot is taken (nslots only
 * grows), after which the caller stops looking. The loads go from the line
 * that changes least for the caller to the one that changes most: relaxed,
 * as hunger is a heuristic (a stale value costs one late or one useless
 * invitation). */
static inline bool hungry(pfor_job *j, uint32_t remaining, bool *full)
{
    if (*full || remaining < 2 * j->grain ||
        (double)remaining * j->ns_per < 2 * PFOR_SPLIT_MIN_NS)
        return false;
    /* relaxed: heuristic reads that only decide whether to invite. */
    int slots = atomic_load_explicit(&j->nslots, memory_order_relaxed);
    if (slots >= j->maxslots) {
        *full = true;
        return false;
    }
    return atomic_load_explicit(&j->invites, memory_order_relaxed) == slots - 1 &&
           atomic_load_explicit(&j->rt->nspinning, memory_order_relaxed) > 0;
}

static inline void prefetch_others(pfor_job *j, pfor_slot *mine)
{
#if defined(__GNUC__)
    /* The hungry look that follows the last chunk reads the other slots:
     * fetch them while the chunk runs. A few at most. */
    int n = j->maxslots < 4 ? j->maxslots : 4;
    for (int v = 0; v < n; v++)
        if (&j->slot[v] != mine)
            __builtin_prefetch(&j->slot[v], 0);
#else
    (void)j;
    (void)mine;
#endif
}

/* Items the owner of a remainder of rem claims next: about 8 us of work,
 * or all of it. Claims are made large although a thief cannot take what
 * its owner has claimed, because each claim past an owner's first can cost
 * far more than its CAS (the measurements are in docs/benchmarks-log.md). The
 * end stays even through presplit and the thief's estimate of the chunk
 * its victim is in (rt_pfor_steal_into). */

/* Runs the range in slot s as its owner, a chunk per claim, until a claim
 * finds it empty (thieves may have taken the rest). per_out: if not NULL,
 * the first chunk is timed and its ns per item stored there (0 if none).
 * full: the owner knows that no more invitations can be worth making (see
 * hungry), so it need not look at the line its takers write. */
void rt_pfor_run_slot(pfor_job *j, pfor_slot *s, double *per_out, bool full)
{
    if (per_out)
        *per_out = 0.0;
    /* relaxed throughout: see the top of the file. */
    uint64_t w = atomic_load_explicit(&s->r, memory_order_relaxed);
    for (;;) {
        uint32_t b = lo(w), e = hi(w);
        if (b >= e)
            return;
        uint32_t k = claim_size(j, e - b);
        if (!atomic_compare_exchange_weak_explicit(&s->r, &w, pack(b + k, e),
                memory_order_relaxed, memory_order_relaxed))
            continue;
        if (b + k == e)
            prefetch_others(j, s);
        else if (hungry(j, e - b - k, &full)) {
            /* Fetched here, not kept: fn may switch fibers (and threads). */
            rt_ctx *c = rt_ctx_current(j->rt);
            if (c)
                (void)rt_pfor_invite(j, c);   /* on failure we just go on alone */
        }
        if (per_out) {
            uint64_t t0 = ticks();
            run_units(j, b, b + k);
            *per_out = ticks_to_ns(ticks() - t0) / (double)k;
            per_out = NULL;
        } else {
            run_units(j, b, b + k);
        }
        w = atomic_load_explicit(&s->r, memory_order_relaxed);   /* relaxed: bounds only */
    }
}

/* Takes the upper half of the largest remainder in the loop, or `most`
 * units of it if that is less (never less than a grain), into slot `mine`
 * (empty, ours). Returns false when nothing is worth splitting. */
bool rt_pfor_steal_into(pfor_job *j, int mine, uint32_t most)
{
    /* relaxed: which slots to look at; the slot CAS decides. */
    int n = atomic_load_explicit(&j->nslots, memory_order_relaxed);
    if (n > j->maxslots)
        n = j->maxslots;
    uint32_t min_items = 2 * j->grain;
    double min_ns = PFOR_SPLIT_MIN_NS;
    for (;;) {
        int best = -1;
        uint64_t bw = 0;
        uint32_t brem = 0;
        for (int v = 0; v < n; v++) {
            if (v == mine)
                continue;
            /* relaxed: bounds only */
            uint64_t w = atomic_load_explicit(&j->slot[v].r, memory_order_relaxed);
            uint32_t rem = hi(w) > lo(w) ? hi(w) - lo(w) : 0;
            if (rem > brem) {
                brem = rem;
                bw = w;
                best = v;
            }
        }
        if (best < 0 || brem < min_items || (double)brem * j->ns_per < min_ns)
            return false;
        /* The victim is still inside the chunk it claimed last (half of
         * one, on average): count that in, so that both finish together. */
        uint32_t half_chunk = claim_size(j, brem) / 2;
        uint32_t take = (brem + half_chunk) / 2;
        if (take > brem - j->grain)
            take = brem - j->grain;
        if (take > most)
            take = most > j->grain ? most : j->grain;
        uint32_t b = lo(bw), e = hi(bw), mid = e - take;
        /* relaxed: the word carries nothing but the bounds (top of file). */
        if (atomic_compare_exchange_strong_explicit(&j->slot[best].r, &bw, pack(b, mid),
                memory_order_relaxed, memory_order_relaxed)) {
            atomic_store_explicit(&j->slot[mine].r, pack(mid, e), memory_order_relaxed);
            return true;
        }
        /* The owner claimed a chunk or another thief split first: look
         * again with fresh values. */
    }
}

/* Runs slot `mine` (if the loop has one that high), then splits what the
 * others have left: a participant's whole part. own_end: if not NULL, gets
 * the ticks when the slot itself ran out, before the splits. */
void rt_pfor_run_part(pfor_job *j, int mine, uint64_t *own_end)
{
    if (mine >= j->maxslots)
        return;
    rt_pfor_run_slot(j, &j->slot[mine], NULL, false);
    if (own_end)
        *own_end = ticks();
    while (rt_pfor_steal_into(j, mine, UINT32_MAX))
        rt_pfor_run_slot(j, &j->slot[mine], NULL, false);
}

/* Gives the rest of slot `mine` (ours) to the slot whose range ends where
 * ours begins, if that one is not empty: its owner runs it, since an owner
 * claims until it finds its slot empty and the extension's CAS only lands
 * on a word that is not. First our word is emptied (a CAS: a thief may be
 * lowering its end), so that no unit is in two slots; if no neighbour
 * takes the rest, it goes back into our slot, which only its owner writes
 * while it is empty (a thief never splits an empty range). A thief that
 * read our word before we emptied it and splits it after we put it back
 * finds the same bounds, a split as good as before. Returns whether the
 * rest was given. Model: tests/models/pfor_handback.pml (its negative
 * controls: the neighbour extended with a plain store, or before ours is
 * emptied). */
static bool hand_back(pfor_job *j, int mine)
{
    pfor_slot *s = &j->slot[mine];
    /* relaxed throughout: the words carry nothing but bounds (top of
     * pfor/pfor.c); the units' effects reach the caller through the group. */
    uint64_t w = atomic_load_explicit(&s->r, memory_order_relaxed);
    do {
        if (lo(w) >= hi(w))
            return true;   /* thieves took the rest */
    } while (!atomic_compare_exchange_weak_explicit(&s->r, &w, pack(hi(w), hi(w)),
                                                    memory_order_relaxed, memory_order_relaxed));
    uint32_t b = lo(w), e = hi(w);
    int n = atomic_load_explicit(&j->nslots, memory_order_relaxed);   /* relaxed: which to look at */
    if (n > j->maxslots)
        n = j->maxslots;
    for (int v = 0; v < n; v++) {
        if (v == mine)
            continue;
        uint64_t x = atomic_load_explicit(&j->slot[v].r, memory_order_relaxed);
        while (hi(x) == b && lo(x) < b)
            if (atomic_compare_exchange_weak_explicit(&j->slot[v].r, &x, pack(lo(x), e),
                                                      memory_order_relaxed, memory_order_relaxed))
                return true;
    }
    atomic_store_explicit(&s->r, pack(b, e), memory_order_relaxed);
    return false;
}

/* Runs slot s as its owner, a chunk per claim as rt_pfor_run_slot does
 * (without its re-invitations: this taker is about to leave), but from
 * the top down, as a thief takes, so that what is left stays next to the
 * range it was cut from (hand_back); until the slot is empty (true) or
 * busy says so before a claim (false, units left). */
static bool run_slot_unless(pfor_job *j, pfor_slot *s, bool (*busy)(void *), void *arg)
{
    /* relaxed throughout: bounds only (top of pfor/pfor.c). */
    uint64_t w = atomic_load_explicit(&s->r, memory_order_relaxed);
    for (;;) {
        uint32_t b = lo(w), e = hi(w);
        if (b >= e)
            return true;
        if (busy(arg))
            return false;
        uint32_t k = claim_size(j, e - b);
        if (!atomic_compare_exchange_weak_explicit(&s->r, &w, pack(b, e - k),
                memory_order_relaxed, memory_order_relaxed))
            continue;
        run_units(j, e - k, e);
        w = atomic_load_explicit(&s->r, memory_order_relaxed);
    }
}

/* A taker with work of its own to go back to (rt_pfor_busy_hook, read
 * once: a taker runs on its thread's own stack): its slot, a claim at a
 * time while busy says no, then bites of at most PFOR_BITE_NS, each split
 * off like a thief's half, and none once busy says so. Once busy, the
 * rest of its slot goes to the neighbour it was cut from (hand_back): a
 * presplit share is about half the loop, which a taker that ran it whole
 * took to the loop's end however soon its own work was ready (a caller
 * presplits for a taker that left its last loop a moment ago, as one
 * polling in a plan thread's wait does). Only when no neighbour can take
 * it does the taker run its slot whole. With nothing of its own ready the
 * bites go on to the loop's end: one more split per bite. */
static void run_bites(pfor_job *j, int mine, uint64_t *own_end, bool (*busy)(void *), void *arg)
{
    if (mine >= j->maxslots)
        return;
    if (!run_slot_unless(j, &j->slot[mine], busy, arg)) {
        if (hand_back(j, mine)) {
            /* Not a share run as one claim: nothing for the caller to
             * learn our speed from (pfor_run). Plain: see pfor_job. */
            j->h_items = 0;
            return;
        }
        rt_pfor_run_slot(j, &j->slot[mine], NULL, false);
    }
    if (own_end)
        *own_end = ticks();
    double b = PFOR_BITE_NS / j->ns_per;
    uint32_t most = b < (double)j->grain ? j->grain : (b > 1e9 ? 1000000000u : (uint32_t)b);
    while (!busy(arg) && rt_pfor_steal_into(j, mine, most))
        rt_pfor_run_slot(j, &j->slot[mine], NULL, false);
}

/* A taker's arrival: takes a slot index. */
static inline int join_job(pfor_job *j)
{
#if defined(__GNUC__)
    /* Lines the caller wrote, all needed before our first item: ask for
     * them at once, so that the misses overlap instead of queueing behind
     * the locked instruction below. Slot 1 is the one a first taker gets
     * (presplit); slot 0 is not fetched: taking it from the caller, who
     * claims from it next, would cost the caller a miss for nothing. */
    __builtin_prefetch(&j->nslots, 1);
    __builtin_prefetch(&j->slot[1], 1);
#endif
    /* relaxed: the slot index only has to be unique (an RMW gives that);
     * it also counts the invitation as picked up (see hungry). */
    return atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed);
}

/* A taker's part: its slot, then whatever it can split off the others. */
static void take_part(pfor_job *j, int mine)
{
    /* Slot 1 may hold a share the caller set aside for us (presplit); any
     * other slot is empty and we go straight to splitting. The first
     * taker times its own share, so that the caller learns how fast it
     * runs items (speed_ratio). (Slot 1 always exists: a loop is shared
     * only with at least two threads.) */
    if (mine == 1) {
        /* relaxed: the bounds only (top of file). */
        uint64_t w = atomic_load_explicit(&j->slot[1].r, memory_order_relaxed);
        j->h_items = hi(w) > lo(w) ? hi(w) - lo(w) : 0;
        j->t_join = ticks();
    }
    /* The pieces are in the caller's frame (exec/frame.c). A taker runs
     * on its thread's own stack (the offer and the invitation are plain
     * tasks), so c stays this thread's. */
    rt_ctx *c = rt_ctx_current(j->rt);
    void *frame = c ? c->frame : NULL;
    if (c)
        rt_ctx_set_frame(c, j->frame);
    bool (*busy)(void *) = rt_pfor_here()->busy;
    if (busy)
        run_bites(j, mine, mine == 1 ? &j->t_hend : NULL, busy, rt_pfor_here()->busy_arg);
    else
        rt_pfor_run_part(j, mine, mine == 1 ? &j->t_hend : NULL);
    if (c)
        rt_ctx_set_frame(c, frame);
}

/* The offer, run by the thread that took it (find_task in core/work.c). It is
 * finished as a fork is (RT_TASK_FORKED): not pooled, not counted, and the count it holds in the
 * loop's group is completed by the task's finish, after this returns:
 * that is the taker's last access to the job. */
static void pfor_offer_task(void *p)
{
    rt_task *t = p;
    pfor_job *j = t->arg;
    take_part(j, join_job(j));
}

void rt_pfor_task(void *p)
{
    rt_task *t = p;
    pfor_job *j = t->arg;
    rt_group *g = j->g;
    dagrt *rt = j->rt;
    int mine = join_job(j);
    rt_ctx *c = rt_ctx_current(rt);
    if (c && c->worker)
        rt_ctx_leave_waker(c, (int)(intptr_t)t->u[0]);
    take_part(j, mine);
    /* Complete the group here, not after the descriptor is recycled: the
     * caller spins on it, and the free may cost a cache miss of its own.
     * This is our last access to the job and the group. */
    t->group = NULL;
    rt_group_done(g);
    /* Only now give back the CPU a steered wake took from our allowed set
     * (two system calls: not worth delaying the loop for, and until the
     * loop ends that CPU is its caller's anyway). rt outlives the job. */
    rt_place_unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
}

