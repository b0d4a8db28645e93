/*
 * pfor.c - dagrt_parallel_for: lazy, thief-driven splitting.
 *
 * The caller runs the range itself, a chunk at a time. Splitting is done
 * for the hungry: a thread with nothing to do that picks up one of the
 * loop's invitations (a task in the caller's deque) splits the largest
 * range still left in the loop at that very moment, taking its upper half,
 * and runs that the same way (its half can be split by the next hungry
 * thread, the caller included once it runs out). A loop that nobody can
 * help therefore runs as a few direct calls of fn, close to the plain
 * loop, and a thief that arrives late still gets exactly half of what is
 * left, not half of what was there when the invitation was made. One
 * exception, for the common case of loops back to back with a helper
 * polling for them: the caller then sets the helper's share aside itself
 * as it invites (presplit), which spares both sides the split's cache-line
 * round trip; a helper that does not come is evened out by the same
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
 *
 * Invitations. A caller invites (pushes one helper task) when an idle
 * thread is polling for work right now (nspinning > 0), when the loop is
 * long enough to pay for waking a sleeping one (PFOR_WAKE_NS), or, rate
 * limited, when loops come back to back and the only helpers are asleep
 * (see kick_due: a sleeping worker never sees the short loops that would
 * keep it awake otherwise). Each participant re-invites while it runs if
 * someone else turned hungry and no invitation is pending, so P threads
 * ramp up one after the other without the caller paying for all of them.
 * The first invitation to a polling helper is an offer instead (offer_post):
 * a task descriptor inside the job, posted in the runtime's one offer word,
 * which pollers look at before they steal. It costs the caller one CAS
 * instead of a descriptor, a deque push and its fence, and the helper one
 * exchange instead of a steal; nobody is woken for it, and a caller whose
 * offer nobody took withdraws it (finish). A caller whose last loop a
 * helper joined a moment ago counts that helper as polling without asking:
 * it is on its way back, and the offer is the first thing it looks at.
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
 * threads need not run items at the same speed (on a VM, a vCPU whose
 * host core is shared runs slower for stretches): the caller learns the
 * ratio from the loops a helper joined and sizes the helper's share by it.
 */
#include "scheduler.h"

#if defined(__x86_64__) || defined(__i386__)
#define PFOR_TSC 1
/* The cycle counter (the compiler's builtin: no system header). */
static inline uint64_t rdtsc(void) { return __builtin_ia32_rdtsc(); }
#endif

#define PFOR_FIRST_ITEMS   64
#define PFOR_SHARE_MIN_NS  2000.0    /* a loop shorter than this runs inline */
/* A thief splits only a remainder this long: a split costs each side one
 * cache-line transfer (about 0.25 us here), and the last splits are the
 * ones that even out threads that do not run at the same speed (on this
 * VM one vCPU runs at half speed for stretches; at 1 us the caller of a
 * 6 us loop waited 1-2 us for such a worker). */
#define PFOR_SPLIT_MIN_NS  500.0
#define PFOR_CHUNK_NS      8000.0    /* owner's claim between two looks at its word */
#define PFOR_WAKE_NS       30000.0   /* remainder that pays for waking a sleeper */
#define PFOR_END_SPIN_NS   30000.0   /* caller's spin on the last helpers */
#define PFOR_KICK_GAP_NS   200000.0  /* "back to back": previous loop ended this recently */
#define PFOR_KICK_EVERY_NS 1000000.0 /* at most one speculative wake per thread this often */
#define PFOR_SLOTS         16        /* participants per loop (caller included) */
#define PFOR_BACK_NS       2000.0    /* a helper that left this recently is on its way back */
#define PFOR_UNITS_MAX     ((size_t)1 << 31)   /* units per loop (32-bit slot offsets) */

/* ------------------------------------------------------------ clock */

#ifdef PFOR_TSC
static double ns_per_tick = 1.0;
static rt_os_once tick_once;

static void tick_calibrate(void)
{
    uint64_t n0 = rt_now_ns(), c0 = rdtsc(), n1;
    do
        n1 = rt_now_ns();
    while (n1 - n0 < 200000);   /* 0.2 ms, once per process */
    uint64_t c1 = rdtsc();
    if (c1 > c0)
        ns_per_tick = (double)(n1 - n0) / (double)(c1 - c0);
}

static inline uint64_t ticks(void) { return rdtsc(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t * ns_per_tick; }
static inline void ticks_init(void) { rt_os_once_run(&tick_once, tick_calibrate); }
#else
static inline uint64_t ticks(void) { return rt_now_ns(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t; }
static inline void ticks_init(void) {}
#endif

/* ------------------------------------------------ per-thread hints */

/* Recent (fn, arg) -> ns per item, and when this thread's last shared loop
 * ended. Hints only: a wrong one costs an early invitation or a missed
 * one, never correctness. Thread-local, so a fiber that migrates just
 * reads another thread's hints. */
#define PFOR_HINTS 4
typedef struct pfor_hint {
    dagrt_range_fn fn;
    void *arg;
    double ns_per;
    unsigned uses;
} pfor_hint;

static _Thread_local pfor_hint hints[PFOR_HINTS];
static _Thread_local unsigned hint_next;
static _Thread_local uint64_t last_end;    /* ticks; 0: none yet */
/* How long after its invitation a polling helper starts on its share, in
 * ns: the head start the caller gets when it splits for such a helper
 * (presplit). Learnt from the loops that did, so it follows the machine
 * (about 0.3-1 us here, depending on where the lines are). */
static _Thread_local double join_ns = 500.0;
static _Thread_local uint64_t last_kick;
/* Whether a helper joined this thread's last shared loop (it took slot 1). */
static _Thread_local bool last_helped;
/* A helper's ns per item over the caller's, in the loops one joined: how
 * to share between the two (presplit). Learnt like join_ns. */
static _Thread_local double speed_ratio = 1.0;

static double hint_get(dagrt_range_fn fn, void *arg)
{
    for (int i = 0; i < PFOR_HINTS; i++)
        if (hints[i].fn == fn && hints[i].arg == arg)
            /* Every 16th use re-measures: fn's cost may change with what
             * arg points to. */
            return (++hints[i].uses & 15) == 0 ? 0.0 : hints[i].ns_per;
    return 0.0;
}

static void hint_put(dagrt_range_fn fn, void *arg, double ns_per)
{
    for (int i = 0; i < PFOR_HINTS; i++)
        if (hints[i].fn == fn && hints[i].arg == arg) {
            hints[i].ns_per = ns_per;
            return;
        }
    pfor_hint *h = &hints[hint_next++ % PFOR_HINTS];
    h->fn = fn;
    h->arg = arg;
    h->ns_per = ns_per;
    h->uses = 0;
}

/* -------------------------------------------------------- the loop */

typedef struct pfor_slot {
    _Alignas(RT_APART) _Atomic uint64_t r;   /* e << 32 | b, offsets from base */
} pfor_slot;

typedef struct pfor_job {
    /* Written before the first invitation, read-only after: the submit
     * (release) and the steal (acquire) publish them to helpers. */
    dagrt *rt;
    dagrt_range_fn fn;
    void *arg;
    size_t base;
    size_t end;        /* the loop's end (the last unit may be short) */
    size_t unit;       /* items per unit: slots count units (see dagrt_parallel_for) */
    uint32_t grain;    /* smallest piece a thief takes (and leaves), in units */
    uint32_t chunk;    /* items per owner claim (see claim_size) */
    double ns_per;     /* estimate, ns per item */
    rt_group *g;
    int maxslots;      /* slots in use at most: min(threads, PFOR_SLOTS) */
    /* Written by helpers as they arrive; RT_APART bytes away so that the
     * caller's reads of the fields above stay hits. */
    _Alignas(RT_APART) _Atomic int nslots;   /* slots handed out; slot 0 is the caller's */
    _Atomic int invites;               /* invitations made (pending: invites - (nslots - 1)) */
    /* The helper that got slot 1: ticks when it started on it (0: none
     * did) and when its own share ran out, and how many items that share
     * held then. Plain: written by that helper before its completion is
     * counted, read by the caller after the count reached 0
     * (release/acquire there). */
    uint64_t t_join;
    uint64_t t_hend;
    uint32_t h_items;
    bool posted;       /* caller only: offer points to this job's offer */
    rt_task offer;     /* the offer's descriptor (offer_post) */
    pfor_slot slot[PFOR_SLOTS];
} pfor_job;

static inline uint64_t pack(uint32_t b, uint32_t e) { return (uint64_t)e << 32 | b; }
static inline uint32_t lo(uint64_t w) { return (uint32_t)w; }
static inline uint32_t hi(uint64_t w) { return (uint32_t)(w >> 32); }

/* Steering a wake-up. On the same VMs, the worker a futex wake puts beside
 * its waker then waits in that CPU's run queue until the waker's time slice
 * ends (milliseconds: the caller of a loop does not block), while the loop
 * it was woken for is long over. So before a submit that will wake a
 * sleeping worker, take our CPU out of that worker's allowed set: the
 * kernel then has to wake it elsewhere. Whoever runs the task puts the CPU
 * back (unsteer). Rare (it needs a sleeping worker, and kicks are rate
 * limited), so one mutex keeps concurrent steers of one worker consistent.
 * Returns the steered ctx index + 1, or 0 when nothing was done. */
static uintptr_t steer(dagrt *rt, int cpu)
{
    /* relaxed: heuristic reads; a wrong guess only skips the steering or
     * steers a worker that someone else then wakes. */
    if (cpu < 0 || atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return 0;
    for (int k = 1; k < rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k];
        /* The first idle worker is the one the submit's wake_one claims. */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) != 1)
            continue;
        uintptr_t r = 0;
        rt_os_cpuset m;
        rt_os_mutex_lock(&rt->steer_mu);
        if (rt_os_affinity_get(&v->thread, &m) == 0 &&
            rt_os_cpuset_has(&m, cpu) && rt_os_cpuset_count(&m) > 1) {
            rt_os_cpuset_del(&m, cpu);
            if (rt_os_affinity_set(&v->thread, &m) == 0)
                r = (uintptr_t)k + 1;
        }
        rt_os_mutex_unlock(&rt->steer_mu);
        return r;
    }
    return 0;
}

static void unsteer(dagrt *rt, uintptr_t steered, int cpu)
{
    if (steered == 0)
        return;
    rt_ctx *v = &rt->ctx[steered - 1];
    rt_os_cpuset m;
    rt_os_mutex_lock(&rt->steer_mu);
    if (rt_os_affinity_get(&v->thread, &m) == 0) {
        rt_os_cpuset_add(&m, cpu);
        (void)rt_os_affinity_set(&v->thread, &m);
    }
    rt_os_mutex_unlock(&rt->steer_mu);
}

static void pfor_task(void *p);
static void pfor_offer_task(void *p);

/* Pushes one invitation from ctx c. Returns 0 or an error (nothing
 * pushed then). u[0]: the CPU we run on; u[1]: steer()'s token when the
 * submit is expected to wake a sleeping worker. */
static int invite(pfor_job *j, rt_ctx *c)
{
    rt_task *t = rt_task_alloc(c);
    if (!t)
        return DAGRT_ENOMEM;
    t->fn = pfor_task;
    t->arg = j;
    t->group = j->g;      /* pfor_task completes it itself (see there) */
    t->flags = RT_TASK_SELF;
    int cpu = rt_cpu_now();
    t->u[0] = (uintptr_t)(intptr_t)cpu;
    t->u[1] = steer(j->rt, cpu);
    /* relaxed: a heuristic count (it only throttles re-invitations), made
     * before the submit so a quick helper never sees more takers than
     * invitations; the group count is the one that matters. */
    atomic_fetch_add_explicit(&j->invites, 1, memory_order_relaxed);
    rt_group_add(j->g, 1);
    int r = rt_submit(j->rt, c, t);
    if (r != 0) {
        atomic_fetch_sub_explicit(&j->invites, 1, memory_order_relaxed);
        unsteer(j->rt, t->u[1], cpu);
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
 * protocol (sched.c) need not see it. */
static bool offer_post(pfor_job *j)
{
    dagrt *rt = j->rt;
    /* relaxed: a hint that spares the RMW while another loop's offer is
     * up; the CAS below decides. */
    if (atomic_load_explicit(&rt->offer, memory_order_relaxed) != NULL)
        return false;
    j->offer = (rt_task){.fn = pfor_offer_task, .arg = j, .group = j->g,
                         .flags = RT_TASK_SELF | RT_TASK_FRAME};
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
static bool offer_withdraw(pfor_job *j)
{
    rt_task *mine = &j->offer;
    j->posted = false;
    return atomic_load_explicit(&j->rt->offer, memory_order_relaxed) == mine &&
           atomic_compare_exchange_strong_explicit(&j->rt->offer, &mine, NULL,
               memory_order_relaxed, memory_order_relaxed);
}

/* Worth inviting one more helper now? remaining: the caller's own
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
 * its owner has claimed: on this VM each claim past an owner's first cost
 * far more than its CAS (with 0.4 us claims a 1000 x 6 ns loop ran its
 * items ~1.5x slower on both threads than the plain loop, a cost that
 * went with the number of claims, not with the work). Pairs of variants
 * measured side by side in one process (median of 60 samples of the bench
 * loop, x the plain loop): 1000 x 6 ns, 2 us vs 0.4 us claims 1.34 vs
 * 1.29, 8 us vs 2 us 1.45 vs 1.35; 8 us vs 0.4 us at 100000 x 0.5 ns 1.90
 * vs 1.78, at 100000 x 6 ns 1.98 vs 1.97. The end stays even through
 * presplit and the thief's estimate of the chunk its victim is in
 * (steal_into). */
/* Calls fn on units [b, e) of the loop. */
static inline void run_units(const pfor_job *j, uint32_t b, uint32_t e)
{
    size_t n = j->end - j->base, hi_off = (size_t)e * j->unit;
    j->fn(j->arg, j->base + (size_t)b * j->unit, hi_off >= n ? j->end : j->base + hi_off);
}

static inline uint32_t claim_size(const pfor_job *j, uint32_t rem)
{
    /* Never leave a remainder smaller than a grain behind: it would become
     * a piece of its own. */
    return j->chunk < rem && rem - j->chunk >= j->grain ? j->chunk : rem;
}

/* Runs the range in slot s as its owner, a chunk per claim, until a claim
 * finds it empty (thieves may have taken the rest). per_out: if not NULL,
 * the first chunk is timed and its ns per item stored there (0 if none).
 * full: the owner knows that no more invitations can be worth making (see
 * hungry), so it need not look at the line its helpers write. */
static void run_slot(pfor_job *j, pfor_slot *s, double *per_out, bool full)
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
                (void)invite(j, c);   /* on failure we just go on alone */
        }
        if (per_out) {
            uint64_t t0 = ticks();
            run_units(j, b, b + k);
            *per_out = ticks_to_ns(ticks() - t0) / (double)k;
            per_out = NULL;
        } else {
            run_units(j, b, b + k);
        }
        w = atomic_load_explicit(&s->r, memory_order_relaxed);
    }
}

/* Takes the upper half of the largest remainder in the loop into slot
 * `mine` (empty, ours). Returns false when nothing is worth splitting. */
static bool steal_into(pfor_job *j, int mine)
{
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
static void run_part(pfor_job *j, int mine, uint64_t *own_end)
{
    if (mine >= j->maxslots)
        return;
    run_slot(j, &j->slot[mine], NULL, false);
    if (own_end)
        *own_end = ticks();
    while (steal_into(j, mine))
        run_slot(j, &j->slot[mine], NULL, false);
}

/* A helper's arrival: takes a slot index. */
static inline int join_job(pfor_job *j)
{
#if defined(__GNUC__)
    /* Lines the caller wrote, all needed before our first item: ask for
     * them at once, so that the misses overlap instead of queueing behind
     * the locked instruction below. Slot 1 is the one a first helper gets
     * (presplit); slot 0 is not fetched: taking it from the caller, who
     * claims from it next, would cost the caller a miss for nothing. */
    __builtin_prefetch(&j->nslots, 1);
    __builtin_prefetch(&j->slot[1], 1);
#endif
    /* relaxed: the slot index only has to be unique (an RMW gives that);
     * it also counts the invitation as picked up (see hungry). */
    return atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed);
}

/* A helper's part: its slot, then whatever it can split off the others. */
static void help_job(pfor_job *j, int mine)
{
    /* Slot 1 may hold a share the caller set aside for us (presplit); any
     * other slot is empty and we go straight to splitting. The first
     * helper times its own share, so that the caller learns how fast it
     * runs items (speed_ratio). (Slot 1 always exists: a loop is shared
     * only with at least two threads.) */
    if (mine == 1) {
        /* relaxed: the bounds only (top of file). */
        uint64_t w = atomic_load_explicit(&j->slot[1].r, memory_order_relaxed);
        j->h_items = hi(w) > lo(w) ? hi(w) - lo(w) : 0;
        j->t_join = ticks();
    }
    run_part(j, mine, mine == 1 ? &j->t_hend : NULL);
}

/* The offer, run by the thread that took it (find_task in sched.c). It is
 * RT_TASK_FRAME: not pooled, not counted, and the count it holds in the
 * loop's group is completed by the task's finish, after this returns:
 * that is the taker's last access to the job. */
static void pfor_offer_task(void *p)
{
    rt_task *t = p;
    pfor_job *j = t->arg;
    help_job(j, join_job(j));
}

static void pfor_task(void *p)
{
    rt_task *t = p;
    pfor_job *j = t->arg;
    rt_group *g = j->g;
    dagrt *rt = j->rt;
    int mine = join_job(j);
    rt_ctx *c = rt_ctx_current(rt);
    if (c && c->worker)
        rt_ctx_leave_waker(c, (int)(intptr_t)t->u[0]);
    help_job(j, mine);
    /* Complete the group here, not after the descriptor is recycled: the
     * caller spins on it, and the free may cost a cache miss of its own.
     * This is our last access to the job and the group. */
    t->group = NULL;
    rt_group_done(g);
    /* Only now give back the CPU a steered wake took from our allowed set
     * (two system calls: not worth delaying the loop for, and until the
     * loop ends that CPU is its caller's anyway). rt outlives the job. */
    unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
}

/* A kick: wakes a sleeping worker for later loops (see kick_due). u[0]:
 * the CPU the kicking thread ran on, u[1]: steer()'s token, arg: the
 * runtime. */
static void pfor_kick(void *p)
{
    rt_task *t = p;
    dagrt *rt = t->arg;
    unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
    rt_ctx *c = rt_ctx_current(rt);
    if (c && c->worker)   /* not a thread that waits and took it back */
        rt_ctx_leave_waker(c, (int)(intptr_t)t->u[0]);
}

/* A kick (pfor_kick) is due when loops come back to back (so a worker kept
 * awake serves the next ones), the helpers are asleep, and this thread has
 * not kicked for PFOR_KICK_EVERY_NS (a wake costs the caller a system
 * call; a loop that is called rarely never pays it). */
static bool kick_due(dagrt *rt, uint64_t now)
{
    /* relaxed: heuristic reads. */
    if (atomic_load_explicit(&rt->nidle, memory_order_relaxed) == 0)
        return false;
    if (last_end == 0 || ticks_to_ns(now - last_end) > PFOR_KICK_GAP_NS)
        return false;
    if (last_kick != 0 && ticks_to_ns(now - last_kick) < PFOR_KICK_EVERY_NS)
        return false;
    last_kick = now;
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
    t->u[1] = steer(rt, cpu);
    if (rt_submit(rt, c, t) != 0) {
        unsteer(rt, t->u[1], cpu);
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
     * the count first, whose line the helper's completion sends us anyway,
     * and at the offer word (which its taker's exchange took away from
     * us, a second miss in a row) only if the loop is not over. acquire:
     * as in the loop below; a count of 0 includes the offer's, so it was
     * taken (and the word emptied) and completed. */
    if (j->posted && atomic_load_explicit(&g->word, memory_order_acquire) == 0)
        return 0;
    if (j->posted && offer_withdraw(j)) {
        /* Nobody came for it: run what it would have (slot 1 may hold a
         * presplit share), as for a withdrawn invitation below, then
         * complete its count ourselves. relaxed: as in join_job. */
        run_part(j, atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed), NULL);
        rt_group_done(g);
        c = rt_ctx_current(rt);   /* fn may have moved us */
        look = c != NULL;
    }
    for (unsigned i = 0;; i++) {
        /* acquire: every helper's effects (its fn calls) are visible once
         * its completion is counted (release in rt_group_done). No waiter
         * is armed, so a helper's fetch_sub there is its last access to
         * the group and to the job: once the count is 0 we may return. */
        if (atomic_load_explicit(&g->word, memory_order_acquire) == 0)
            return 0;
        if (look && rt_deque_nonempty(&c->deque)) {
            /* Our own invitation, still unclaimed, is normally on top of
             * our deque: withdraw it. Anything else (tasks fn spawned) is
             * put back for the full wait below, which runs it. */
            void *x = rt_deque_take(&c->deque);
            rt_task *t = x;
            if (x != RT_DEQUE_EMPTY && t->fn == pfor_task && t->arg == j) {
                /* Withdrawn = taken, by us: a slot it gets (slot 1 may
                 * hold a presplit share nobody came for) is ours to run.
                 * relaxed: the index only has to be unique (see
                 * pfor_task). */
                int mine = atomic_fetch_add_explicit(&j->nslots, 1, memory_order_relaxed);
                unsteer(rt, t->u[1], (int)(intptr_t)t->u[0]);
                rt_task_finish(rt, t);
                if (mine < j->maxslots) {
                    run_part(j, mine, NULL);
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

/* The caller is about to invite a helper that is polling right now: it will
 * start on the loop about join_ns from now, and will then spend that time
 * finding what to take and (with a CAS on the caller's word) splitting it,
 * while the caller's next claim waits for its word to come back. Instead,
 * set the helper's share aside in slot 1 now: the upper part of [done, n),
 * sized so that both finish together given the helper's later start. Both
 * run their own slot and split the other's as usual, so a wrong guess (a
 * helper that comes late or not at all) is evened out by the same lazy
 * splitting, and an invitation nobody takes gives slot 1 back to the
 * caller (finish). The first invitation's post or submit (release)
 * publishes the slot. The helper's share is g items of rem, with the
 * helper's time per item speed_ratio times ours: both end together when
 * (rem - g) * per = join_ns + g * per * speed_ratio. Returns whether it
 * split. */
static bool presplit(pfor_job *j, uint32_t done, uint32_t n, double per)
{
    if (j->maxslots < 2)
        return false;
    double rem = (double)(n - done);
    double give = (rem - join_ns / per) / (1.0 + speed_ratio);
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
    /* Only the slots helpers can get: one per other thread. (A thread may
     * pick up a second invitation of the same loop while fn waits; that
     * one finds no slot and leaves.) */
    j.maxslots = rt->nctx < PFOR_SLOTS ? rt->nctx : PFOR_SLOTS;
    for (int i = 1; i < j.maxslots; i++)
        atomic_init(&j.slot[i].r, 0);
    double est = (double)(n - done) * per;
    uint64_t t_inv = 0;       /* set when we invite a polling helper */
    bool invited = false;
    /* A helper that joined our last loop and left it a moment ago is
     * polling again, or about to: then skip the read of the spinner count
     * (a line it has just written). relaxed: a heuristic read. */
    bool polling = (last_helped && ticks_to_ns(now - last_end) < PFOR_BACK_NS) ||
                   atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0;
    if (polling || est >= PFOR_WAKE_NS) {
        rt_ctx *c = rt_ctx_current(rt);   /* fresh: fn may have moved us */
        if (c) {
            bool split = polling && presplit(&j, done, n, per);
            /* On failure we run it alone. A polling helper's lag counts
             * from when we start on our own share; it is learnt from every
             * such loop, split or not (an estimate that only split loops
             * taught could grow until they no longer split). */
            invited = (polling && offer_post(&j)) || invite(&j, c) == 0;
            if (invited && polling) {
                t_inv = ticks();
            } else if (split) {
                /* Nobody will come for slot 1: it is all ours again.
                 * relaxed: still unpublished. */
                atomic_store_explicit(&j.slot[0].r, pack(done, n), memory_order_relaxed);
                atomic_store_explicit(&j.slot[1].r, 0, memory_order_relaxed);
            }
        }
    } else if (kick_due(rt, now)) {
        rt_ctx *c = rt_ctx_current(rt);
        if (c)
            kick(rt, c);
    }
    double fresh = 0.0;
    /* With one other thread, our one invitation is all there can be: then
     * we never read the line our helper writes as it arrives (a transfer
     * per loop, paid while our chunk waits on it). */
    run_slot(&j, &j.slot[0], done == 0 ? &fresh : NULL, invited && j.maxslots <= 2);
    if (fresh > 0.0 && keep_hints)   /* timed: done == 0 */
        hint_put(fn, arg, fresh < 0.01 ? 0.01 : fresh);
    while (steal_into(&j, 0))
        run_slot(&j, &j.slot[0], NULL, invited && j.maxslots <= 2);
    int r = finish(&j, &dg);
    last_end = ticks();
    last_helped = j.t_join != 0;
    /* The helper's speed, from a share it ran as one claim (nobody can
     * have taken part of it then) against our first chunk's: clamped and
     * averaged like the lag, for the same reason. */
    if (j.t_join != 0 && j.t_hend > j.t_join && j.h_items > 0 && j.h_items <= j.chunk &&
        fresh > 0.0) {
        double rm = ticks_to_ns(j.t_hend - j.t_join) / (double)j.h_items / fresh;
        rm = rm < 0.33 ? 0.33 : (rm > 3.0 ? 3.0 : rm);
        speed_ratio += (rm - speed_ratio) / 4;
    }
    if (t_inv != 0 && j.t_join != 0) {
        /* A late join (a helper that was preempted, a page fault) must not
         * make the next loops hand out less than half for long: clamp what
         * one loop can teach, then average over a few. */
        double lag = j.t_join > t_inv ? ticks_to_ns(j.t_join - t_inv) : 0.0;
        if (lag > 4 * join_ns + 1000.0)
            lag = 4 * join_ns + 1000.0;
        join_ns += (lag - join_ns) / 4;
    }
    return r;
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
    ticks_init();
    return pfor_run(rt, begin, end, unit, (uint32_t)nu, (uint32_t)gu, fn, arg, per);
}
