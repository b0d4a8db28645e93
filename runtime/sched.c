/*
 * sched.c - the scheduler: runtime creation and shutdown, task descriptors,
 * submitting work, the worker loop, helping waits, and the idle protocol.
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
 * The unpark leaves a token (park.c), so one that lands before the park is
 * not lost either. A spinner that stops while work is still visible and it
 * was the last spinner (or was woken by a claim) hands the search on: it
 * wakes one more idle ctx after taking its task (Go's scheduler does the
 * same), so a burst of work ramps up all workers without every spawn paying
 * for a wake-up. Model: tests/models/park.pml (and its negative controls).
 *
 * THE ASYMMETRIC VARIANT, for the one publication that is hot: a worker
 * exposing its deque's private tail (deque.h; "the pusher" below). A
 * seq_cst RMW per exposure costs ~6 ns on x86 and bounces the line thieves
 * poll, so where Linux's membarrier(2) with PRIVATE_EXPEDITED is available
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
 * Group waits on thread stacks are token based: the waiter registers
 * (unpark, its ctx) on the group; the task that completes the group calls
 * it. Waits help: they run other ready tasks until the group completes.
 */
#include "scheduler.h"
#include "exec.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define RT_NOINLINE __attribute__((noinline))
#define RT_INLINE inline __attribute__((always_inline))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define RT_NOINLINE
#define RT_INLINE inline
#define RT_LIKELY(x) (x)
#define RT_UNLIKELY(x) (x)
#endif

#define RT_MAX_WORKERS   1024
#define RT_SLAB_TASKS    128
#define RT_DEQUE_CAP     256
#define RT_SPIN_NS       50000   /* poll this long before sleeping */

static _Thread_local rt_ctx *tls_ctx;

/* ------------------------------------------------------------- helpers */

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static uint64_t splitmix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static inline rt_ctx *cur_ctx(const dagrt *rt)
{
    rt_ctx *c = tls_ctx;
    return (c && c->rt == rt) ? c : NULL;
}

RT_NOINLINE rt_ctx *rt_ctx_current(const dagrt *rt)
{
    return cur_ctx(rt);
}

/* Owner-only counter bump: relaxed load + store is enough for a single
 * writer; release on nfinished so destroy's acquire read of it also sees
 * the spawns that the finished task made (see quiescent()). */
static inline void bump(_Atomic uint64_t *x, memory_order mo)
{
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + 1, mo);
}

/* ------------------------------------------------------ task descriptors */

static rt_task *slab_new(rt_slab **slabs, uint32_t home)
{
    size_t hdr = 64;   /* keeps the tasks 64-byte aligned */
    unsigned char *m = aligned_alloc(64, hdr + RT_SLAB_TASKS * sizeof(rt_task));
    if (!m)
        return NULL;
    rt_slab *s = (rt_slab *)(void *)m;
    s->next = *slabs;
    *slabs = s;
    rt_task *t = (rt_task *)(void *)(m + hdr);
    for (int i = 0; i < RT_SLAB_TASKS; i++) {
        t[i].home = home;
        atomic_init(&t[i].node.next, i + 1 < RT_SLAB_TASKS ? &t[i + 1].node : NULL);
    }
    return t;
}

static void slabs_free(rt_slab *s)
{
    while (s) {
        rt_slab *n = s->next;
        free(s);
        s = n;
    }
}

static inline void task_reset(rt_task *t)
{
    t->fn = NULL;
    t->arg = NULL;
    t->group = NULL;
    t->flags = 0;
    t->fiber = NULL;
    t->u[0] = t->u[1] = 0;
}

static RT_NOINLINE rt_task *pool_refill(rt_ctx *c)
{
    /* acquire: pairs with the release CAS of threads returning descriptors;
     * taking the whole stack by exchange cannot suffer ABA. */
    rt_task *t = atomic_exchange_explicit(&c->remote, NULL, memory_order_acquire);
    if (t)
        return t;
    return slab_new(&c->slabs, c->index);
}

static RT_INLINE rt_task *task_alloc_on(rt_ctx *c)
{
    rt_task *t = c->free;
    if (RT_UNLIKELY(!t)) {
        t = pool_refill(c);
        if (!t)
            return NULL;
    }
    /* relaxed: the free list is owner-private (remote ones were acquired). */
    c->free = (rt_task *)(void *)atomic_load_explicit(&t->node.next, memory_order_relaxed);
    t->home = c->index;
    task_reset(t);   /* the stores the spawner repeats are dead and elided */
    return t;
}

rt_task *rt_task_alloc(rt_ctx *c)
{
    return task_alloc_on(c);
}

rt_task *rt_task_alloc_any(dagrt *rt)
{
    rt_ctx *c = cur_ctx(rt);
    if (c)
        return rt_task_alloc(c);
    rt_os_mutex_lock(&rt->shared_mu);
    rt_task *t = rt->shared_free;
    if (!t)
        t = atomic_exchange_explicit(&rt->shared_remote, NULL, memory_order_acquire);
    if (!t)
        t = slab_new(&rt->shared_slabs, RT_HOME_SHARED);
    if (t) {
        rt->shared_free = (rt_task *)(void *)atomic_load_explicit(&t->node.next, memory_order_relaxed);
        t->home = RT_HOME_SHARED;
        task_reset(t);
    }
    rt_os_mutex_unlock(&rt->shared_mu);
    return t;
}

/* Treiber push: release so the owner's acquire exchange sees our writes
 * (and we have finished with the descriptor) before it reuses it. */
static void remote_push(_Atomic(rt_task *) *stack, rt_task *t)
{
    rt_task *old = atomic_load_explicit(stack, memory_order_relaxed);
    do {
        atomic_store_explicit(&t->node.next, (rt_node *)(void *)old, memory_order_relaxed); /* node is first */
    } while (!atomic_compare_exchange_weak_explicit(stack, &old, t,
                 memory_order_release, memory_order_relaxed));
}

static RT_INLINE void task_free_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if (t->home == RT_HOME_SHARED) {
        remote_push(&rt->shared_remote, t);
        return;
    }
    if (RT_LIKELY(c && c->index == t->home)) {
        atomic_store_explicit(&t->node.next, (rt_node *)(void *)c->free, memory_order_relaxed);
        c->free = t;
    } else {
        remote_push(&rt->ctx[t->home].remote, t);
    }
}

void rt_task_free(dagrt *rt, rt_task *t)
{
    task_free_on(rt, cur_ctx(rt), t);
}

/* --------------------------------------------------------------- groups */

void dagrt_group_init(dagrt_group *g)
{
    if (!g)
        return;
    _Static_assert(sizeof(rt_group) <= sizeof(dagrt_group), "dagrt_group too small");
    rt_group *gi = rt_group_of(g);
    atomic_init(&gi->word, 0);
    /* Owner fast path only for a group on this thread's own stack: code on
     * a fiber stack (which may migrate) or memory shared by design gets
     * the plain atomic count. */
    rt_ctx *c = tls_ctx;
    char *p = (char *)(void *)g;
    gi->owner = (c && p >= c->stack_lo && p < c->stack_hi) ? c : NULL;
    gi->waiter = NULL;
    gi->local = 0;
    gi->armed = 0;
    gi->magic = RT_GROUP_MAGIC;
}

void rt_group_done(rt_group *g)
{
    /* acq_rel: release publishes this task's effects to the waiter (a
     * release sequence runs through all the group's RMWs); acquire makes
     * the waiter's rt_waiter pointer, stored before its arming RMW,
     * visible here. */
    int64_t old = atomic_fetch_sub_explicit(&g->word, 1, memory_order_acq_rel);
    if (old - 1 == RT_GROUP_WAITING) {
        rt_waiter *w = g->waiter;
        /* release: the waiter returns when it reads 0 (acquire). This is
         * our last access to *g: the waiter may free it right after. */
        atomic_store_explicit(&g->word, 0, memory_order_release);
        if (w)
            w->fn(w);
    }
}

/* Counts a task about to be spawned by ctx c (may be NULL) into g. */
static inline void group_count_spawn(rt_group *g, rt_ctx *c, rt_task *t)
{
    /* Not once armed: the waiter folded local into word, and the
     * completer decides "last" from word alone. */
    if (g->owner == c && c && !g->armed) {
        g->local++;                  /* owner only: no atomic needed */
        t->flags |= RT_TASK_OWNED;
    } else {
        rt_group_add(g, 1);
    }
}

/* The task t of group g finished on ctx c (may be NULL). */
static inline void group_count_done(rt_group *g, rt_ctx *c, uint32_t flags)
{
    /* owner and armed are read only on the owner's own thread. */
    if ((flags & RT_TASK_OWNED) && g->owner == c && !g->armed)
        g->local--;
    else
        rt_group_done(g);
}

/* pending == 0, as seen by ctx c (the owner or a thread of an ownerless
 * group). acquire: the finished tasks' effects are visible after. */
static inline bool group_is_done(rt_group *g, rt_ctx *c)
{
    int64_t w = atomic_load_explicit(&g->word, memory_order_acquire);
    return (g->owner && g->owner == c ? w + g->local : w) == 0;
}

static int group_arm(rt_group *g, rt_ctx *c, rt_waiter *w)
{
    /* A group owned by another thread of the same runtime: its owner-local
     * count is not ours to read. (An owner from another runtime never
     * counted anything here: all of this runtime's counts are atomic.) */
    if (g->owner && g->owner != c && c && g->owner->rt == c->rt)
        return DAGRT_EPERM;
    bool own = g->owner != NULL && g->owner == c;
    int64_t loc = own ? g->local : 0;
    int64_t cur = atomic_load_explicit(&g->word, memory_order_acquire);
    if (cur + loc == 0)
        return 1;
    if (cur > RT_GROUP_WAITING / 2)
        return DAGRT_EBUSY;
    g->waiter = w;
    if (own) {
        g->local = 0;
        g->armed = 1;
    }
    /* acq_rel: release hands g->waiter to the completer (it acquires
     * through its fetch_sub); acquire: if pending is already zero we see
     * the tasks' effects. */
    int64_t old = atomic_fetch_add_explicit(&g->word, loc + RT_GROUP_WAITING, memory_order_acq_rel);
    if (old + loc == 0) {
        /* Completed in between: no completer will come; undo. relaxed: no
         * one else touches a group with nothing pending. */
        atomic_store_explicit(&g->word, 0, memory_order_relaxed);
        if (own)
            g->armed = 0;
        return 1;
    }
    return 0;
}

RT_NOINLINE int rt_group_arm(rt_group *g, rt_waiter *w)
{
    return group_arm(g, tls_ctx, w);
}

/* ------------------------------------------------------ finding work */

/* Could c take any work now? seq_cst loads: this is the re-check half of
 * the idle protocol. The main-thread queue counts only for the main ctx. */
static bool work_visible(rt_ctx *c)
{
    dagrt *rt = c->rt;
    if (rt_mpsc_nonempty(&rt->hot) || rt_mpsc_nonempty(&c->inbox))
        return true;
    /* relaxed: an offer is extra work nobody waits on (pfor.c), so missing
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
            rt_unpark(&v->parker);
            return;
        }
    }
}

/* After publishing work (see the protocol at the top). */
static inline void notify(dagrt *rt)
{
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed loads: ordered after the publication by the fence. */
    if (atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return;
    if (atomic_load_explicit(&rt->nidle, memory_order_relaxed) == 0)
        return;
    wake_one(rt);
}

/* The same after a publication that was itself a seq_cst RMW (the
 * deque's push_sc): seq_cst loads then suffice, no separate fence. */
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
static bool asym_fence_available(void)
{
    const char *off = rt_os_getenv("DAGRT_NO_MEMBARRIER");
    if (off && *off && *off != '0')
        return false;
    return rt_os_barrier_init();
}

bool rt_work_visible(rt_ctx *c)
{
    return work_visible(c);
}

/* A spinner that stopped with work in sight hands the search on. */
static void handoff(rt_ctx *c)
{
    c->handoff = false;
    dagrt *rt = c->rt;
    if (atomic_load_explicit(&rt->nspinning, memory_order_seq_cst) == 0 &&
        atomic_load_explicit(&rt->nidle, memory_order_seq_cst) > 0 &&
        work_visible(c))
        wake_one(rt);
}

static RT_NOINLINE void expose(dagrt *rt, rt_ctx *c);

static RT_INLINE rt_task *find_task(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_node *n;
    /* Hot lane first, for everyone: hot work overtakes any backlog. The
     * relaxed count loads keep the empty case to two loads. */
    if (atomic_load_explicit(&rt->hot.n, memory_order_relaxed) > 0 &&
        (n = rt_mpsc_trypop(&rt->hot)))
        return (rt_task *)(void *)n;
    if (atomic_load_explicit(&c->inbox.n, memory_order_relaxed) > 0 &&
        (n = rt_mpsc_trypop(&c->inbox))) {
        if (c->index == 0)
            rt->main_popped++;
        return (rt_task *)(void *)n;
    }
    int nctx = rt->nctx;
    if (nctx < 2)   /* nobody can steal from us: the cheap take */
        return rt_deque_take_private(&c->deque);
    if (RT_UNLIKELY(atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed)) &&
        rt_deque_has_private(&c->deque))
        expose(rt, c);   /* a thief asked; we keep taking from the public end */
    void *x = rt_deque_take(&c->deque);
    if (x != RT_DEQUE_EMPTY)
        return x;
    /* A parallel-for's offer before a steal: its caller is waiting for a
     * helper right now. The relaxed load keeps the empty case to a read of
     * a line that rarely changes; the exchange (acquire, pairs with the
     * post's release CAS in pfor.c) decides who takes it. */
    if (atomic_load_explicit(&rt->offer, memory_order_relaxed)) {
        rt_task *o = atomic_exchange_explicit(&rt->offer, NULL, memory_order_acquire);
        if (o) {
            atomic_fetch_add_explicit(&rt->offers_taken, 1, memory_order_relaxed);
            return o;
        }
    }
    uint32_t start = (uint32_t)(xorshift(&c->rng) % (uint64_t)nctx);
    for (int k = 0; k < nctx; k++) {
        uint32_t v = (start + (uint32_t)k) % (uint32_t)nctx;
        if (v == c->index)
            continue;
        rt_ctx *vc = &rt->ctx[v];
        for (int tries = 0; tries < 4; tries++) {
            x = rt_deque_steal(&vc->deque);
            if (x != RT_DEQUE_ABORT)
                break;
            rt_cpu_relax();
        }
        if (x != RT_DEQUE_EMPTY && x != RT_DEQUE_ABORT)
            return x;
        if (x == RT_DEQUE_EMPTY)
            rt_deque_ask(&vc->deque);
        if (v != 0 && (n = rt_mpsc_trypop(&vc->inbox)))
            return (rt_task *)(void *)n;
    }
    return NULL;
}

/* Finish on a known ctx (c is the caller's, or NULL for no ctx). */
static RT_INLINE void task_finish_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    rt_group *g = t->group;
    uint32_t flags = t->flags;
    if (RT_UNLIKELY(flags & RT_TASK_FRAME)) {
        /* Not counted, not pooled (rt_frame): only its join's count, and
         * that is our last access (the frame is on its forker's stack). */
        group_count_done(g, c, flags);
        return;
    }
    if (c)
        bump(&c->nfinished, memory_order_release);
    else
        atomic_fetch_add_explicit(&rt->ext_finished, 1, memory_order_release);
    task_free_on(rt, c, t);
    if (g)
        group_count_done(g, c, flags);
}

void rt_task_finish(dagrt *rt, rt_task *t)
{
    task_finish_on(rt, cur_ctx(rt), t);
}

static RT_INLINE void task_run(rt_ctx *c, rt_task *t)
{
    if (RT_UNLIKELY(t->flags & DAGRT_SPAWN_FIBER)) {
        rt_fiber_run(c, t);
        return;
    }
    c->depth++;
    t->fn((t->flags & RT_TASK_SELF) ? (void *)t : t->arg);
    c->depth--;
    task_finish_on(c->rt, c, t);
}

void rt_task_run(rt_ctx *c, rt_task *t)
{
    task_run(c, t);
}

static RT_INLINE bool help_one(rt_ctx *c)
{
    rt_task *t = find_task(c);
    if (!t)
        return false;
    if (RT_UNLIKELY(c->handoff))
        handoff(c);
    task_run(c, t);
    return true;
}

bool rt_help_one(rt_ctx *c)
{
    return help_one(c);
}

/* ------------------------------------------------------------ idling */

/* One round of the idle protocol for c (see the top of the file). g: the
 * group c waits for, or NULL in the worker loop. Returns when c should look
 * for work again (or its wait may be over). */
static void ctx_idle(rt_ctx *c, rt_group *g)
{
    dagrt *rt = c->rt;
    bool forever = c->hot || rt->cfg.idle == DAGRT_IDLE_SPIN;
    atomic_store_explicit(&c->idle, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rt->nidle, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_seq_cst);

    bool leave = false;
    uint64_t t0 = 0;
    for (unsigned i = 0;; i++) {
        if (work_visible(c) ||
            (g && group_is_done(g, c)) ||
            atomic_load_explicit(&rt->stop, memory_order_acquire) ||
            atomic_load_explicit(&c->idle, memory_order_acquire) == 0) {
            leave = true;
            break;
        }
        /* Polling on the CPU of the thread that woke us only keeps that
         * thread off it (park.h): go back to sleep instead. */
        if (!forever && (c->beside_waker ||
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
            else if (t - t0 > atomic_load_explicit(&rt->spin_ns, memory_order_relaxed))
                break;
        }
    }
    int left = atomic_fetch_sub_explicit(&rt->nspinning, 1, memory_order_seq_cst) - 1;
    c->beside_waker = false;   /* one short poll per such wake-up */
    if (!leave) {
        bool claimed = false;
        idle_barrier(rt);      /* pushes that skipped their fence are visible now */
        if (!work_visible(c) &&
            !(g && group_is_done(g, c)) &&
            !atomic_load_explicit(&rt->stop, memory_order_seq_cst) &&
            atomic_load_explicit(&c->idle, memory_order_seq_cst) == 1) {
            c->beside_waker = rt_park(&c->parker) != 0;
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
}

/* ------------------------------------------------------------ submit */

static inline void count_spawn(dagrt *rt, rt_ctx *c)
{
    if (c)
        bump(&c->nspawned, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&rt->ext_spawned, 1, memory_order_relaxed);
}

/* Into the main thread's queue; wakes the main thread if it is idle in a
 * wait (same Dekker pair as notify, with the main ctx's announcement). */
static void push_main(dagrt *rt, rt_ctx *c, rt_task *t)
{
    rt_ctx *m = &rt->ctx[0];
    count_spawn(rt, c);
    rt_mpsc_push(&m->inbox, &t->node);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&m->idle, memory_order_relaxed))
        rt_unpark(&m->parker);
}

/* THE PRIVATE TAIL POLICY (deque.h). A worker's spawns go to the private
 * tail of its deque, where pushing and taking them back cost no fence, and
 * are exposed to thieves (moved into the public part, then notified as a
 * publication of the idle protocol) when
 *   - the public part is empty: so whenever a thread has spawned work, at
 *     least its oldest task is stealable (in fork-join code the oldest is
 *     the biggest: what a thief wants);
 *   - some thread is idle (nidle > 0): it may be looking, or asleep;
 *   - a thief asked (splitreq): it found the public part empty, or took
 *     its last item (deque.h, rt_deque_steal);
 *   - the spawner is not inside a task (depth 0: the main thread's own
 *     code), which goes off to run code of its own between runtime calls
 *     and would sit on its tail meanwhile.
 * A worker answers requests whenever it spawns or takes, so an exposed
 * tail is never further away than the worker's current task. The reads
 * are relaxed hints: a stale one exposes early (a cost) or late (until the
 * next spawn or take), never loses a task, and the exposure itself is the
 * publication the idle protocol argues about. */
static RT_INLINE bool must_expose(dagrt *rt, rt_ctx *c)
{
    /* relaxed: hints, see above. */
    return c->depth == 0 ||
           atomic_load_explicit(&rt->nidle, memory_order_relaxed) > 0 ||
           rt_deque_public_empty(&c->deque) ||
           atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed);
}

int rt_cpu_now(void)
{
    return rt_os_cpu_current();
}

int rt_cpu_leave(int cpu)
{
    rt_os_cpuset old, away;
    int now = rt_os_cpu_current();
    if (cpu < 0 || cpu >= RT_OS_CPUSET_BITS || now != cpu)
        return now;
    if (rt_os_affinity_get(NULL, &old) != 0 || !rt_os_cpuset_has(&old, cpu))
        return cpu;
    away = old;
    rt_os_cpuset_del(&away, cpu);
    if (rt_os_cpuset_count(&away) == 0)
        return cpu;   /* pinned there: stay */
    if (rt_os_affinity_set(NULL, &away) != 0)
        return cpu;
    (void)rt_os_affinity_set(NULL, &old);
    return rt_os_cpu_current();
}

void rt_ctx_leave_waker(rt_ctx *c, int from)
{
    /* Still there (pinned, or the calls failed): keep sleeping at once. */
    if (rt_cpu_leave(from) != from)
        c->beside_waker = false;   /* owner's own field: c is this thread's ctx */
}

void rt_ctx_publish_tail(rt_ctx *c)
{
    if (c && c->rt->nctx >= 2 && rt_deque_has_private(&c->deque))
        expose(c->rt, c);
}

/* Makes c's tail public up to index `to` and notifies (the idle
 * protocol's publication). */
static RT_NOINLINE void expose_to(dagrt *rt, rt_ctx *c, int64_t to)
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
static RT_NOINLINE void expose(dagrt *rt, rt_ctx *c)
{
    /* relaxed: the owner's own index. */
    expose_to(rt, c, atomic_load_explicit(&c->deque.bottom, memory_order_relaxed));
}

static RT_NOINLINE int submit_slow(dagrt *rt, rt_ctx *c, rt_task *t);

/* The common case inline: a plain task from a runtime thread. */
static RT_INLINE int submit_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if (RT_UNLIKELY((t->flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT)) || !c))
        return submit_slow(rt, c, t);
    /* Count before publishing: a thief may run and finish the task at
     * once, and destroy's quiescence test needs every counted finish to
     * have its spawn counted already (see quiescent()). */
    uint64_t ns = atomic_load_explicit(&c->nspawned, memory_order_relaxed);
    atomic_store_explicit(&c->nspawned, ns + 1, memory_order_relaxed);
    bool ok;
    if (RT_UNLIKELY(rt->nctx < 2)) {
        /* No other thread runs tasks: nobody to wake, nobody to steal;
         * everything stays in the private tail. */
        ok = rt_deque_push_private(&c->deque, t);
    } else {
        ok = rt_deque_push_private(&c->deque, t);
        if (RT_LIKELY(ok) && must_expose(rt, c))
            expose(rt, c);
    }
    if (RT_UNLIKELY(!ok)) {
        atomic_store_explicit(&c->nspawned, ns, memory_order_relaxed);
        return DAGRT_ENOMEM;
    }
    return 0;
}

int rt_submit(dagrt *rt, rt_ctx *c, rt_task *t)
{
    return submit_on(rt, c, t);
}

static RT_NOINLINE int submit_slow(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if (t->flags & DAGRT_SPAWN_MAIN) {
        atomic_fetch_add_explicit(&rt->main_pushed, 1, memory_order_relaxed); /* a bound only */
        push_main(rt, c, t);
        return 0;
    }
    if (t->flags & DAGRT_SPAWN_HOT) {
        count_spawn(rt, c);
        rt_mpsc_push(&rt->hot, &t->node);
        notify(rt);
        return 0;
    }
    /* From a thread outside the runtime. */
    if (rt->nworkers == 0) {
        atomic_fetch_add_explicit(&rt->main_pushed, 1, memory_order_relaxed);
        push_main(rt, c, t);
        return 0;
    }
    atomic_fetch_add_explicit(&rt->ext_spawned, 1, memory_order_relaxed);
    /* Prefer a worker that is idle: claim it, give it the task, wake it. */
    for (int k = 1; k < rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k];
        int one = 1;
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) == 1 &&
            atomic_compare_exchange_strong_explicit(&v->idle, &one, 0,
                memory_order_acq_rel, memory_order_relaxed)) {
            rt_mpsc_push(&v->inbox, &t->node);
            rt_unpark(&v->parker);
            return 0;
        }
    }
    uint32_t k = atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed);
    rt_mpsc_push(&rt->ctx[1 + k % (uint32_t)rt->nworkers].inbox, &t->node);
    notify(rt);
    return 0;
}

/* ------------------------------------------------------------- waits */

static void wake_ctx(rt_waiter *w)
{
    rt_ctx *c = (rt_ctx *)(void *)((char *)w - offsetof(rt_ctx, waiter));
    rt_unpark(&c->parker);
}

int rt_group_wait_thread(dagrt *rt, rt_ctx *c, rt_group *g)
{
    if (!c) {
        if (g->owner && g->owner->rt == rt)
            return DAGRT_EPERM;
        /* A thread outside the runtime cannot help: poll with backoff. */
        unsigned spins = 0;
        while (atomic_load_explicit(&g->word, memory_order_acquire) != 0) {
            if (spins < 2000) {
                rt_cpu_relax();
                spins++;
            } else if (spins < 2100) {
                rt_os_yield();
                spins++;
            } else {
                rt_os_sleep_ns(50000);
            }
        }
        return 0;
    }
    if (g->owner && g->owner != c && g->owner->rt == rt)
        return DAGRT_EPERM;
    /* Help first; arm (one RMW) only when there is nothing left to run.
     * This loop is the fork-join fast path (a parent waiting for children
     * it just pushed): everything in it is inlined. */
    for (;;) {
        if (group_is_done(g, c))
            return 0;
        if (!help_one(c))
            break;
    }
    int r = group_arm(g, c, &c->waiter);
    if (r != 0)
        return r == 1 ? 0 : r;
    for (;;) {
        if (group_is_done(g, c))
            break;
        if (rt_help_one(c))
            continue;
        if (group_is_done(g, c))
            break;
        ctx_idle(c, g);
        /* After a wake-up, look for work once before returning (a claimer
         * may have picked us for it). */
        if (rt_help_one(c))
            continue;
    }
    if (g->owner == c)
        g->armed = 0;    /* owner's own field; nothing of g is pending */
    if (c->handoff)
        handoff(c);
    return 0;
}

int dagrt_group_wait(dagrt *rt, dagrt_group *g)
{
    if (!rt || !g)
        return DAGRT_EINVAL;
    rt_group *gi = rt_group_of(g);
    if (gi->magic != RT_GROUP_MAGIC)
        return DAGRT_EINVAL;
    /* Code running on its thread's own stack is not on a fiber (fiber
     * stacks are separate mappings): skip the fiber layer's lookup. */
    rt_ctx *c = cur_ctx(rt);
    if (RT_LIKELY(c != NULL)) {
        char here;
        uintptr_t sp = (uintptr_t)(void *)&here;
        if (sp >= (uintptr_t)(void *)c->stack_lo && sp < (uintptr_t)(void *)c->stack_hi)
            return rt_group_wait_thread(rt, c, gi);
    }
    int r = rt_fiber_group_wait(rt, gi);
    if (r != 1)
        return r;
    /* Not on a fiber: this code cannot migrate, the inline TLS read is fine. */
    return rt_group_wait_thread(rt, cur_ctx(rt), gi);
}

/* --------------------------------------------- inline fork-join frames */

/* dagrt.h's inline fork and join read the head of rt_ctx and of rt_frame
 * through their own view structs; these keep the two layouts one. */
#if defined(__GNUC__) || defined(__clang__)
#define RT_SAME_OFFSET(a, fa, b, fb) \
    _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa " moved: update dagrt.h's " #b)
RT_SAME_OFFSET(rt_ctx, deque.top, dagrt__wview, top);
RT_SAME_OFFSET(rt_ctx, deque.splitreq, dagrt__wview, splitreq);
RT_SAME_OFFSET(rt_ctx, deque.split, dagrt__wview, split);
RT_SAME_OFFSET(rt_ctx, deque.bottom, dagrt__wview, bottom);
RT_SAME_OFFSET(rt_ctx, deque.buf, dagrt__wview, buf);
RT_SAME_OFFSET(rt_ctx, fj_nidle, dagrt__wview, nidle);
RT_SAME_OFFSET(rt_deque_buf, mask, struct dagrt__dbuf, mask);
RT_SAME_OFFSET(rt_deque_buf, slot, struct dagrt__dbuf, slot);
RT_SAME_OFFSET(rt_frame, task.fn, dagrt__fview, fn);
RT_SAME_OFFSET(rt_frame, task.arg, dagrt__fview, arg);
RT_SAME_OFFSET(rt_frame, task.group, dagrt__fview, group_);
RT_SAME_OFFSET(rt_frame, task.flags, dagrt__fview, flags);
RT_SAME_OFFSET(rt_frame, group.word, dagrt__fview, word);
RT_SAME_OFFSET(rt_frame, group.owner, dagrt__fview, owner);
RT_SAME_OFFSET(rt_frame, group.local, dagrt__fview, local);
RT_SAME_OFFSET(rt_frame, group.armed, dagrt__fview, armed);
RT_SAME_OFFSET(rt_frame, group.magic, dagrt__fview, magic);
_Static_assert(sizeof(_Atomic int64_t) == sizeof(int64_t) && sizeof(_Atomic int) == sizeof(int32_t) &&
               sizeof(_Atomic(void *)) == sizeof(void *), "atomics are not plain-sized");
_Static_assert(DAGRT__FRAME_FLAGS == (RT_TASK_OWNED | RT_TASK_FRAME), "frame flags");
_Static_assert(DAGRT__GROUP_MAGIC == RT_GROUP_MAGIC, "group magic");
#endif
_Static_assert(sizeof(rt_frame) <= sizeof(dagrt_frame), "dagrt_frame too small");

dagrt_worker *dagrt_worker_get(dagrt *rt)
{
    rt_ctx *c = rt ? cur_ctx(rt) : NULL;
    if (!c)
        return NULL;
    /* Frames live in their thread's deque and are joined there: code on a
     * fiber (which may migrate between its fork and its join) gets NULL. */
    char here;
    uintptr_t sp = (uintptr_t)(void *)&here;
    if (sp < (uintptr_t)(void *)c->stack_lo || sp >= (uintptr_t)(void *)c->stack_hi)
        return NULL;
    return (dagrt_worker *)(void *)c;
}

/* The inline fork's rule (dagrt.h): a thief asked, or a thread is idle. */
static inline bool frame_policy_expose(rt_ctx *c)
{
    /* relaxed: hints, see dagrt_fork. */
    return atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed) ||
           atomic_load_explicit(c->fj_nidle, memory_order_relaxed) > 0;
}

/* How much of the tail a frame exposure makes public: in fork-join the
 * oldest frame is the biggest piece of work, and one is what a thief takes,
 * so normally just that one; the frames left private are joined on the fast
 * path. One per idle thread when several are idle (at most half the tail),
 * so many thieves ramp up without a round trip each. */
static void frame_expose(rt_ctx *c)
{
    /* relaxed: the owner's own indices; the other two are hints. */
    int64_t s = atomic_load_explicit(&c->deque.split, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&c->deque.bottom, memory_order_relaxed);
    if (b <= s) {
        rt_deque_take_request(&c->deque);   /* nothing to give */
        return;
    }
    int64_t n = atomic_load_explicit(c->fj_nidle, memory_order_relaxed), half = (b - s + 1) / 2;
    n = n < 1 ? 1 : n > half ? half : n;
    expose_to(c->rt, c, s + n);
}

/* The inline fork found the deque full: push with growth. */
RT_NOINLINE void dagrt__fork_slow(dagrt_worker *w, dagrt_frame *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_frame *fr = (rt_frame *)(void *)f;
    if (RT_UNLIKELY(!rt_deque_push_private(&c->deque, &fr->task))) {
        /* Out of memory: run it now; its join then finds it done. */
        fr->task.fn(fr->task.arg);
        fr->group.local = 0;
        return;
    }
    if (frame_policy_expose(c))
        frame_expose(c);
}

RT_NOINLINE void dagrt__fork_expose(dagrt_worker *w)
{
    frame_expose((rt_ctx *)(void *)w);
}

/* The frame is not on top of the private tail: it is public, was stolen,
 * or was run by this thread's own helping (or joins came out of order).
 * Help until it is ours again or done. */
RT_NOINLINE bool dagrt__join_slow(dagrt_worker *w, dagrt_frame *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_frame *fr = (rt_frame *)(void *)f;
    for (;;) {
        if (group_is_done(&fr->group, c))
            return false;
        rt_task *t = find_task(c);
        if (!t)
            break;
        if (t == &fr->task)
            return true;      /* still public, nobody took it: ours again */
        if (RT_UNLIKELY(c->handoff))
            handoff(c);
        task_run(c, t);
    }
    /* Stolen and still running: the group wait helps, then sleeps. */
    (void)rt_group_wait_thread(c->rt, c, &fr->group);
    return false;
}

#if !defined(__GNUC__) && !defined(__clang__)
/* Other compilers get dagrt.h's inline functions out of line here. */
int dagrt_fork(dagrt_worker *w, dagrt_frame *f, dagrt_fn fn, void *arg)
{
    rt_frame *fr = (rt_frame *)(void *)f;
    if (!f || !fn) {
        if (f) {
            fr->group.owner = (rt_ctx *)(void *)w;
            atomic_init(&fr->group.word, 0);
            fr->group.local = 0;
            fr->group.armed = 0;
        }
        return DAGRT_EINVAL;
    }
    fr->task.fn = fn;
    fr->task.arg = arg;
    if (!w) {
        fn(arg);
        return 0;
    }
    rt_ctx *c = (rt_ctx *)(void *)w;
    fr->task.group = &fr->group;
    fr->task.flags = RT_TASK_OWNED | RT_TASK_FRAME;
    atomic_init(&fr->group.word, 0);
    fr->group.owner = c;
    fr->group.local = 1;
    fr->group.armed = 0;
    fr->group.magic = RT_GROUP_MAGIC;
    dagrt__fork_slow(w, f);
    return 0;
}

bool dagrt_join_take(dagrt_worker *w, dagrt_frame *f)
{
    return w && f ? dagrt__join_slow(w, f) : false;
}

void dagrt_join(dagrt_worker *w, dagrt_frame *f)
{
    if (dagrt_join_take(w, f))
        ((rt_frame *)(void *)f)->task.fn(((rt_frame *)(void *)f)->task.arg);
}
#endif

/* ------------------------------------------------------------ spawning */

/* The body of both spawn entry points; with flags a constant 0 (plain
 * dagrt_spawn) the flag checks fold away. */
static RT_INLINE int spawn(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags)
{
    if (RT_UNLIKELY(!rt || !fn))
        return DAGRT_EINVAL;
    if (flags && RT_UNLIKELY((flags & ~(unsigned)RT_TASK_PUBLIC_FLAGS) ||
                    ((flags & DAGRT_SPAWN_MAIN) && (flags & (DAGRT_SPAWN_HOT | DAGRT_SPAWN_FIBER))) ||
                    ((flags & DAGRT_SPAWN_LARGE_STACK) && !(flags & DAGRT_SPAWN_FIBER))))
        return DAGRT_EINVAL;
    rt_group *gi = NULL;
    if (g) {
        gi = rt_group_of(g);
        if (RT_UNLIKELY(gi->magic != RT_GROUP_MAGIC))
            return DAGRT_EINVAL;
    }
    rt_ctx *c = cur_ctx(rt);
    rt_task *t = RT_LIKELY(c != NULL) ? task_alloc_on(c) : rt_task_alloc_any(rt);
    if (RT_UNLIKELY(!t))
        return DAGRT_ENOMEM;
    t->fn = fn;
    t->arg = arg;
    t->group = gi;
    t->flags = flags;
    if (gi)
        group_count_spawn(gi, c, t);
    int r = submit_on(rt, c, t);
    if (RT_UNLIKELY(r != 0)) {
        uint32_t fl = t->flags;
        rt_task_free(rt, t);
        if (gi)
            group_count_done(gi, c, fl);
    }
    return r;
}

int dagrt_spawn_ex(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags)
{
    return spawn(rt, g, fn, arg, flags);
}

int dagrt_spawn(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg)
{
    return spawn(rt, g, fn, arg, 0);
}

int dagrt_pump_main(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c || c->index != 0)
        return DAGRT_EPERM;
    /* Bound: only what was queued when we started, so tasks that queue
     * more main-thread work cannot keep us here forever. */
    uint64_t avail = atomic_load_explicit(&rt->main_pushed, memory_order_acquire) - rt->main_popped;
    int n = 0;
    while (avail-- > 0 && n < 0x7fffffff) {
        rt_node *nd = rt_mpsc_trypop(&c->inbox);
        if (!nd)
            break;
        rt->main_popped++;
        rt_task_run(c, (rt_task *)(void *)nd);
        n++;
    }
    return n;
}

/* ------------------------------------------------------------- workers */

/* Records the calling thread's stack range in c (dagrt_group_init uses it
 * to give groups on this stack the owner fast path). */
static void stack_bounds(rt_ctx *c)
{
    if (!rt_os_thread_stack(&c->stack_lo, &c->stack_hi))
        c->stack_lo = c->stack_hi = NULL;
}

static void worker_main(void *arg)
{
    rt_ctx *c = arg;
    dagrt *rt = c->rt;
    tls_ctx = c;
    rt_os_thread_name("dagrt-worker");
    stack_bounds(c);
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_enter();
    while (!atomic_load_explicit(&rt->stop, memory_order_acquire)) {
        if (rt_help_one(c))
            continue;
        ctx_idle(c, NULL);
    }
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_leave();
    tls_ctx = NULL;
}

/* ----------------------------------------------------- create / destroy */

void dagrt_config_init(dagrt_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->workers = DAGRT_WORKERS_AUTO;
    cfg->idle = DAGRT_IDLE_PARK;
}

static int online_cpus(void)
{
    int n = rt_os_cpu_count();
    return n > RT_MAX_WORKERS ? RT_MAX_WORKERS : n;
}

static void rt_free_all(dagrt *rt)
{
    if (rt->ctx) {
        for (int i = 0; i < rt->nctx; i++) {
            rt_ctx *c = &rt->ctx[i];
            rt_deque_fini(&c->deque);
            rt_parker_fini(&c->parker);
            slabs_free(c->slabs);
        }
        free(rt->ctx);
    }
    slabs_free(rt->shared_slabs);
    rt_os_mutex_fini(&rt->shared_mu);
    rt_os_mutex_fini(&rt->steer_mu);
    free(rt->exec);   /* exec.c's slot; its helpers finished before the join */
    free(rt);
}

static void stop_and_join(dagrt *rt)
{
    atomic_store_explicit(&rt->stop, 1, memory_order_seq_cst);
    /* Unconditional unparks leave tokens, so no worker can sleep through
     * the stop flag. */
    for (int i = 1; i < rt->nctx; i++)
        rt_unpark(&rt->ctx[i].parker);
    for (int i = 1; i < rt->nctx; i++)
        if (rt->ctx[i].started)
            rt_os_thread_join(&rt->ctx[i].thread);
}

dagrt *dagrt_create_ex(const dagrt_config *cfg, int *err)
{
    dagrt_config d;
    int e = DAGRT_EINVAL;
    if (!cfg) {
        dagrt_config_init(&d);
        cfg = &d;
    }
    if (cfg->workers < 0 || cfg->workers > RT_MAX_WORKERS || cfg->hot_workers < 0 ||
        (cfg->idle != DAGRT_IDLE_PARK && cfg->idle != DAGRT_IDLE_SPIN) ||
        cfg->fiber_pool_size < 0 || (cfg->no_workers && cfg->workers > 0))
        goto fail;
    int nworkers = cfg->no_workers ? 0
                 : cfg->workers == DAGRT_WORKERS_AUTO ? online_cpus() - 1 : cfg->workers;
    if (cfg->hot_workers > nworkers)
        goto fail;
    e = DAGRT_ENOMEM;
    dagrt *rt = aligned_alloc(RT_APART, (sizeof(dagrt) + RT_APART - 1) & ~(size_t)(RT_APART - 1));
    if (!rt)
        goto fail;
    memset(rt, 0, sizeof *rt);
    rt->cfg = *cfg;
    rt->nworkers = nworkers;
    rt->nctx = nworkers + 1;
    atomic_init(&rt->spin_ns, RT_SPIN_NS);
    atomic_init(&rt->offer, NULL);
    atomic_init(&rt->offers_taken, 0);
    rt_os_mutex_init(&rt->shared_mu);
    rt_os_mutex_init(&rt->steer_mu);
    rt_mpsc_init(&rt->hot);
    rt->asym_fence = asym_fence_available();
    size_t csz = ((size_t)rt->nctx * sizeof(rt_ctx) + RT_APART - 1) & ~(size_t)(RT_APART - 1);
    rt->ctx = aligned_alloc(RT_APART, csz);
    if (!rt->ctx) {
        rt->nctx = 0;
        rt_free_all(rt);
        goto fail;
    }
    memset(rt->ctx, 0, csz);
    int ok = 1;
    for (int i = 0; i < rt->nctx; i++) {
        rt_ctx *c = &rt->ctx[i];
        if (rt_deque_init(&c->deque, RT_DEQUE_CAP) != 0)
            ok = 0;
        rt_mpsc_init(&c->inbox);
        rt_parker_init(&c->parker);
        c->rt = rt;
        c->index = (uint32_t)i;
        c->worker = i > 0;
        c->hot = i > 0 && i <= cfg->hot_workers;
        c->rng = splitmix(cfg->seed + (uint64_t)i * 7919u) | 1;
        c->waiter.fn = wake_ctx;
        c->fj_nidle = &rt->nidle;
        /* Each ctx's first task slab now, not at its first spawn: that may
         * come in any later frame (the first time a worker spawns), and a
         * frame after the first must not allocate (tests/e2e/alloc_frame). */
        c->free = slab_new(&c->slabs, c->index);
        if (!c->free)
            ok = 0;
    }
    if (!ok) {
        rt_free_all(rt);
        goto fail;
    }
    int fe = rt_fiber_rt_init(rt);   /* its own error: a bad fiber config is EINVAL */
    if (fe != 0) {
        e = fe;
        rt_free_all(rt);
        goto fail;
    }
    stack_bounds(&rt->ctx[0]);
    rt->prev_tls = tls_ctx;     /* a runtime created from inside another's thread */
    tls_ctx = &rt->ctx[0];
    for (int i = 1; i < rt->nctx; i++) {
        rt_ctx *c = &rt->ctx[i];
        if (rt_os_thread_start(&c->thread, worker_main, c) != 0) {
            stop_and_join(rt);
            tls_ctx = rt->prev_tls;
            rt_fiber_rt_fini(rt);
            rt_free_all(rt);
            e = DAGRT_ETHREAD;
            goto fail;
        }
        c->started = true;
    }
    if (!cfg->no_overflow_report)
        rt_overflow_thread_enter();   /* the main thread runs fiber tasks too */
    if (err)
        *err = 0;
    return rt;
fail:
    if (err)
        *err = e;
    return NULL;
}

dagrt *dagrt_create(const dagrt_config *cfg)
{
    return dagrt_create_ex(cfg, NULL);
}

/* Everything spawned has finished. Reads every finished count (acquire),
 * then every spawned count. A finished task's spawns happened before its
 * finish was counted (release), so they are in the second sum; equal sums
 * then mean every counted task has finished, and by induction from the
 * roots (spawned before destroy began) so has every descendant. */
static bool quiescent(dagrt *rt)
{
    uint64_t f = atomic_load_explicit(&rt->ext_finished, memory_order_acquire);
    for (int i = 0; i < rt->nctx; i++)
        f += atomic_load_explicit(&rt->ctx[i].nfinished, memory_order_acquire);
    uint64_t s = atomic_load_explicit(&rt->ext_spawned, memory_order_acquire);
    for (int i = 0; i < rt->nctx; i++)
        s += atomic_load_explicit(&rt->ctx[i].nspawned, memory_order_acquire);
    return f == s;
}

void dagrt_destroy(dagrt *rt)
{
    if (!rt)
        return;
    rt_ctx *c = rt_ctx_current(rt);
    /* From one of its own workers it would join itself; from a task (on
     * the main thread too: a plain task, a fiber task, a graph node) it
     * would wait for that task to finish. Refused alike, with a message. */
    if (c && (c->worker || c->depth > 0 || dagrt_in_fiber(rt) || dagrt__exec_in_node())) {
        fprintf(stderr, "dagrt_destroy: called from %s of the same runtime; ignored\n",
                c->worker ? "a worker thread" : "inside a running task");
        return;
    }
    /* Run everything already spawned (main-thread tasks included) to
     * completion, helping when we can. */
    unsigned idle_rounds = 0;
    while (!quiescent(rt)) {
        if (c && rt_help_one(c)) {
            idle_rounds = 0;
            continue;
        }
        if (++idle_rounds < 64) {
            rt_cpu_relax();
        } else {
            rt_os_sleep_ns(20000);
        }
    }
    stop_and_join(rt);
    rt_fiber_rt_fini(rt);
    /* The creator's alternate stack: only from its own thread (from
     * another one, the creator keeps it until it exits). */
    if (c == &rt->ctx[0] && !rt->cfg.no_overflow_report)
        rt_overflow_thread_leave();
    if (c)
        tls_ctx = rt->prev_tls;
    rt_free_all(rt);
}

int dagrt_worker_count(const dagrt *rt)
{
    return rt ? rt->nworkers : DAGRT_EINVAL;
}

bool dagrt_on_main_thread(const dagrt *rt)
{
    rt_ctx *c = rt ? cur_ctx(rt) : NULL;
    return c && c->index == 0;
}
