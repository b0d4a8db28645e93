/*
 * core/work.c - finding and running work: submission (spawn, the main-thread
 * queue, the hot lane, outside threads), the private tail policy,
 * find_task (the order every thread looks for work in), running and
 * finishing a task, and the helping waits built on them (batches:
 * core/batch.c; the shuffled switch's takes: core/shuffle.c). find_task, the
 * run and the help step are inlined into the waits here: the fork-join
 * fast path (a parent waiting for the children it just pushed).
 *
 * Group waits on thread stacks are token based: the waiter registers
 * (unpark, its ctx) on the group; the task that completes the group calls
 * it. Waits help: they run other ready tasks until the group completes.
 */
#include "core.h"

#include <string.h>

static inline uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* dagrt_get_stats' count, and a mark in the trace while one records. */
static RT_INLINE void note_steal(rt_ctx *c)
{
    rt_tstat_add(&c->stats.steals, 1);
    rt_obs *ob = rt_obs_now(&c->rt->obs);
    if (RT_UNLIKELY(ob != NULL))
        rt_obs_mark(ob, (int)c->index, RT_TRACE_STEAL);
}

static RT_INLINE rt_node *pop_queue(dagrt *rt, rt_ctx *c, rt_mpsc *q)
{
    return RT_UNLIKELY(rt_shuffled(rt)) ? rt_pop_shuffled(q, &c->rng) : rt_mpsc_trypop(q);
}

/* The main thread's steal from a worker's inbox takes no task meant for
 * a worker alone (RT_TASK_WORKER). */
static bool not_worker_only(const rt_node *n)
{
    return (((const rt_task *)(const void *)n)->flags & RT_TASK_WORKER) == 0;
}

static RT_INLINE rt_task *find_task(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_node *n;
    /* Hot lane first, for everyone: hot work overtakes any backlog. The
     * relaxed count loads keep the empty case to two loads. */
    if (atomic_load_explicit(&rt->hot.n, memory_order_relaxed) > 0 &&
        (n = pop_queue(rt, c, &rt->hot)))
        return (rt_task *)(void *)n;
    if (atomic_load_explicit(&c->inbox.n, memory_order_relaxed) > 0 &&
        (n = pop_queue(rt, c, &c->inbox))) {
        if (c->index == 0)
            rt->main_popped++;
        return (rt_task *)(void *)n;
    }
    int nctx = rt->nctx;
    if (nctx < 2) {   /* nobody can steal from us: the cheap take */
        /* The shuffled serial switch: any of the tasks held, not the
         * newest (the caller's own thread, its own rng). */
        if (RT_UNLIKELY(rt_shuffled(rt)))
            return rt_deque_take_private_any(&c->deque, rt_shuffle_draw(&c->rng, UINT32_MAX));
        return rt_deque_take_private(&c->deque);
    }
    /* relaxed: a thief's request is a hint (core/work.c's tail policy). */
    if (RT_UNLIKELY(atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed)) &&
        rt_deque_has_private(&c->deque))
        rt_expose(rt, c);   /* a thief asked; we keep taking from the public end */
    void *x = RT_UNLIKELY(rt_shuffled(rt)) ? rt_take_shuffled(c) : rt_deque_take(&c->deque);
    if (x != RT_DEQUE_EMPTY)
        return x;
    /* A parallel-for's offer before a steal: its caller is waiting for a
     * taker right now. The relaxed load keeps the empty case to a read of
     * a line that rarely changes; the exchange (acquire, pairs with the
     * post's release CAS in pfor/pfor.c) decides who takes it. */
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
        if (x != RT_DEQUE_EMPTY && x != RT_DEQUE_ABORT) {
            note_steal(c);
            return x;
        }
        if (x == RT_DEQUE_EMPTY)
            rt_deque_ask(&vc->deque);
        if (v != 0 && (n = c->index == 0 ? rt_mpsc_trypop_if(&vc->inbox, not_worker_only)
                                          : rt_mpsc_trypop(&vc->inbox))) {
            note_steal(c);
            return (rt_task *)(void *)n;
        }
    }
    return NULL;
}

RT_NOINLINE rt_task *rt_find_task(rt_ctx *c)
{
    return find_task(c);
}

/* Finish on a known ctx (c is the caller's, or NULL for no ctx). */
static RT_INLINE void task_finish_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    rt_group *g = t->group;
    uint32_t flags = t->flags;
    if (RT_UNLIKELY(flags & RT_TASK_FORKED)) {
        /* Not counted, not pooled (rt_forked): only its join's count, and
         * that is our last access (the fork is on its forker's stack). */
        rt_group_count_done(g, c, flags);
        return;
    }
    if (c)
        rt_bump(&c->nfinished, memory_order_release);
    else
        /* release: as nfinished (core/destroy.c, quiescent). */
        atomic_fetch_add_explicit(&rt->ext_finished, 1, memory_order_release);
    rt_task_free_on(rt, c, t);
    if (g)
        rt_group_count_done(g, c, flags);
}

void rt_task_finish(dagrt *rt, rt_task *t)
{
    task_finish_on(rt, rt_ctx_here(rt), t);
}

static RT_INLINE void task_run(rt_ctx *c, rt_task *t)
{
    rt_tstat_add(&c->stats.tasks, 1);
    /* One test for both: a task of the program's spawned while something
     * observed (RT_TASK_SEEN: set at its spawn) costs nothing here when
     * nothing observes. A fiber task with the mark is reported by slice
     * (fiber/sched.c, run_on_fiber). */
    if (RT_UNLIKELY(t->flags & (DAGRT_SPAWN_FIBER | RT_TASK_SEEN))) {
        if (t->flags & DAGRT_SPAWN_FIBER)
            rt_fiber_run(c, t);
        else
            rt_task_run_seen(c, t);   /* core/seen.c */
        return;
    }
    c->depth++;
    /* A task is in no frame (exec/frame.c) unless it runs a node body,
     * which sets its own: not the frame of a node that helps while it
     * waits. On the thread's own stack, so c stays this thread's. */
    void *frame = c->frame;
    rt_ctx_set_frame(c, NULL);
    t->fn((t->flags & RT_TASK_SELF) ? (void *)t : t->arg);
    rt_ctx_set_frame(c, frame);
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
        rt_handoff(c);
    task_run(c, t);
    return true;
}

bool rt_help_one(rt_ctx *c)
{
    /* A thread woken for new work times its search (core/idle.c,
     * WAKE-UP LATENCY); search_from is 0 unless wake_stats is on. */
    if (RT_UNLIKELY(c->search_from)) {
        rt_task *t = find_task(c);
        if (!t)
            return false;
        rt_wake_search_end(c);
        if (RT_UNLIKELY(c->handoff))
            rt_handoff(c);
        task_run(c, t);
        return true;
    }
    return help_one(c);
}

static inline void count_spawn(dagrt *rt, rt_ctx *c)
{
    if (c)
        rt_bump(&c->nspawned, memory_order_relaxed);
    else
        /* relaxed: before the publishing push */
        atomic_fetch_add_explicit(&rt->ext_spawned, 1, memory_order_relaxed);
}

/* Into the main thread's queue; wakes the main thread if it is idle in a
 * wait (same Dekker pair as notify, with the main ctx's announcement). */
static void push_main(dagrt *rt, rt_ctx *c, rt_task *t, bool count)
{
    rt_ctx *m = &rt->ctx[0];
    if (count)
        count_spawn(rt, c);
    rt_mpsc_push(&m->inbox, &t->node);
    /* seq_cst fence: publisher's half of the Dekker pair with the main ctx's idle. */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed: ordered after the push by the fence. */
    if (atomic_load_explicit(&m->idle, memory_order_relaxed)) {
        rt_wake_note(rt, m);
        rt_unpark(&m->parker);
    }
}

/* THE PRIVATE TAIL POLICY (core/deque.h). A worker's spawns go to the private
 * tail of its deque, where pushing and taking them back cost no fence, and
 * are exposed to thieves (moved into the public part, then notified as a
 * publication of the idle protocol) when
 *   - the public part is empty: so whenever a thread has spawned work, at
 *     least its oldest task is stealable (in fork-join code the oldest is
 *     the biggest: what a thief wants);
 *   - some thread is idle (nidle > 0): it may be looking, or asleep;
 *   - a thief asked (splitreq): it found the public part empty, or took
 *     its last item (core/deque.h, rt_deque_steal);
 *   - the spawner is not inside a task (depth 0: the main thread's own
 *     code), which goes off to run code of its own between runtime calls
 *     and would sit on its tail meanwhile.
 * A worker answers requests whenever it spawns or takes, so an exposed
 * tail is never further away than the worker's current task; code that
 * then runs long without calling the runtime (middleware between its
 * enqueue and its finish) exposes explicitly with dagrt_publish. The reads
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

static RT_NOINLINE int submit_slow(dagrt *rt, rt_ctx *c, rt_task *t, bool count);
static int submit_outside(dagrt *rt, rt_ctx *c, rt_task *t, bool count);

/* The common case inline: a plain task from a runtime thread. */
static RT_INLINE int submit_on(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if (RT_UNLIKELY((t->flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT)) || !c))
        return submit_slow(rt, c, t, true);
    /* Count before publishing: a thief may run and finish the task at
     * once, and destroy's quiescence test needs every counted finish to
     * have its spawn counted already (see quiescent()). */
    /* relaxed: our own counter (single writer); destroy reads it with acquire. */
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
            rt_expose(rt, c);
    }
    if (RT_UNLIKELY(!ok)) {
        /* relaxed: undoing our own count; the task was never published. */
        atomic_store_explicit(&c->nspawned, ns, memory_order_relaxed);
        return DAGRT_ENOMEM;
    }
    return 0;
}

int rt_submit(dagrt *rt, rt_ctx *c, rt_task *t)
{
    return submit_on(rt, c, t);
}

int rt_submit_counted(dagrt *rt, rt_ctx *c, rt_task *t)
{
    if ((t->flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT)) || !c)
        return submit_slow(rt, c, t, false);
    /* A plain task from a runtime thread: as submit_on, less the count. */
    bool ok = rt_deque_push_private(&c->deque, t);
    if (!ok)
        return DAGRT_ENOMEM;
    if (rt->nctx >= 2 && must_expose(rt, c))
        rt_expose(rt, c);
    return 0;
}

/* count false: t's spawn was counted already (rt_submit_counted). */
static RT_NOINLINE int submit_slow(dagrt *rt, rt_ctx *c, rt_task *t, bool count)
{
    if (t->flags & DAGRT_SPAWN_MAIN) {
        /* relaxed: a bound for dagrt_pump_main only. */
        atomic_fetch_add_explicit(&rt->main_pushed, 1, memory_order_relaxed); /* a bound only */
        push_main(rt, c, t, count);
        return 0;
    }
    if (t->flags & DAGRT_SPAWN_HOT) {
        if (count)
            count_spawn(rt, c);
        rt_mpsc_push(&rt->hot, &t->node);
        rt_notify(rt);
        return 0;
    }
    return submit_outside(rt, c, t, count);
}

/* A task for the workers alone, as from a thread outside the runtime:
 * into an idle worker's inbox (woken) or, with none idle, some worker's. */
static int submit_outside(dagrt *rt, rt_ctx *c, rt_task *t, bool count)
{
    if (rt->nworkers == 0) {
        /* relaxed: a bound only */
        atomic_fetch_add_explicit(&rt->main_pushed, 1, memory_order_relaxed);
        push_main(rt, c, t, count);
        return 0;
    }
    /* relaxed: counted before the push that publishes the task (release). */
    if (count)
        atomic_fetch_add_explicit(&rt->ext_spawned, 1, memory_order_relaxed);
    /* Prefer a worker that is idle: claim it, give it the task, wake it.
     * Workers only: a guest's inbox stays empty, so a guest that leaves
     * owns no queued work (core/guest.c). */
    for (int k = 1; k <= rt->nworkers; k++) {
        rt_ctx *v = &rt->ctx[k];
        int one = 1;
        /* relaxed pre-check; acq_rel CAS: as in wake_one (core/idle.c). */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) == 1 &&
            atomic_compare_exchange_strong_explicit(&v->idle, &one, 0,
                memory_order_acq_rel, memory_order_relaxed)) {
            rt_mpsc_push(&v->inbox, &t->node);
            rt_unpark(&v->parker);
            return 0;
        }
    }
    /* relaxed: round robin, any value will do. */
    uint32_t k = atomic_fetch_add_explicit(&rt->rr, 1, memory_order_relaxed);
    rt_mpsc_push(&rt->ctx[1 + k % (uint32_t)rt->nworkers].inbox, &t->node);
    rt_notify(rt);
    return 0;
}

/* Spawn flags that dagrt_spawn_ex refuses. */
static inline bool flags_bad(unsigned flags)
{
    return (flags & ~(unsigned)RT_TASK_PUBLIC_FLAGS) ||
           ((flags & DAGRT_SPAWN_MAIN) && (flags & (DAGRT_SPAWN_HOT | DAGRT_SPAWN_FIBER))) ||
           ((flags & DAGRT_SPAWN_LARGE_STACK) && !(flags & DAGRT_SPAWN_FIBER));
}

/* The body of the spawn entry points; with flags a constant 0 (plain
 * dagrt_spawn) the flag checks fold away. words (a constant): fn gets the
 * task's inline storage, holding w0 and w1 (dagrt_spawn_words), instead of
 * arg. */
static RT_INLINE int spawn(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags,
                           bool words, uintptr_t w0, uintptr_t w1, bool own)
{
    if (RT_UNLIKELY(!rt || !fn))
        return DAGRT_EINVAL;
    if (flags && RT_UNLIKELY(flags_bad(flags)))
        return DAGRT_EINVAL;
    rt_group *gi = NULL;
    if (g) {
        gi = rt_group_of(g);
        if (RT_UNLIKELY(gi->magic != RT_GROUP_MAGIC))
            return DAGRT_EINVAL;
    }
    rt_ctx *c = rt_ctx_here(rt);
    rt_task *t = rt_task_make(rt, c, fn, arg, gi, flags);
    if (RT_UNLIKELY(!t))
        return DAGRT_ENOMEM;
    if (words) {
        /* The inline storage starts at u (core.h, rt_task_slot): two
         * plain stores, which replace rt_task_reset's zeroes, before the
         * submit publishes the task. */
        t->u[0] = w0;
        t->u[1] = w1;
        t->arg = t->u;
    }
    if (gi)
        rt_group_count_spawn(gi, c, t);
    /* The program's task, while something observes (own: a constant).
     * After the group's count, not before: the call would make the flags
     * unknown to it, whose owner fast path then left the straight line
     * (the spawn rows of bench_rt_dagrt, 1 thread: 2 ns a task). */
    if (!own) {
        rt_obs *ob = rt_obs_now(&rt->obs);
        if (RT_UNLIKELY(ob != NULL))
            rt_task_seen(ob, c, t, words ? 2 * sizeof(uintptr_t) : 0);
    }
    int r = submit_on(rt, c, t);
    if (RT_UNLIKELY(r != 0)) {
        uint32_t fl = t->flags;
        rt_task_free(rt, t);
        if (gi)
            rt_group_count_done(gi, c, fl);
    }
    return r;
}

/* dagrt_spawn_inline's failed submit, out of the fast path: undo place,
 * return the descriptor, uncount the group. */
static RT_NOINLINE int spawn_inline_undo(dagrt *rt, rt_ctx *c, rt_task *t, rt_group *gi,
                                         dagrt_place_fn place, int r)
{
    uint32_t fl = t->flags;
    if (place)
        place(t->arg, NULL);
    rt_task_free(rt, t);
    if (gi)
        rt_group_count_done(gi, c, fl);
    return r;
}

int dagrt_spawn_inline(dagrt *rt, dagrt_group *g, dagrt_fn fn, dagrt_place_fn place, void *src,
                       size_t n, unsigned flags)
{
    if (RT_UNLIKELY(!rt || !fn || n > DAGRT_SPAWN_INLINE_SIZE || (!src && !place && n) ||
                    (flags && flags_bad(flags))))
        return DAGRT_EINVAL;
    rt_group *gi = NULL;
    if (g) {
        gi = rt_group_of(g);
        if (RT_UNLIKELY(gi->magic != RT_GROUP_MAGIC))
            return DAGRT_EINVAL;
    }
    rt_ctx *c = rt_ctx_here(rt);
    rt_task *t = rt_task_make(rt, c, fn, NULL, gi, flags);
    if (RT_UNLIKELY(!t))
        return DAGRT_ENOMEM;
    /* Every descriptor task_make returns is pooled, so it has the room.
     * Filled before the submit below publishes the task. */
    void *p = rt_task_inline(t);
    t->arg = p;
    if (place)
        place(p, src);
    else if (n == 16)
        memcpy(p, src, 16);   /* the common sizes as constant copies, not a call */
    else if (n == 8)
        memcpy(p, src, 8);
    else if (n)
        memcpy(p, src, n);
    if (gi)
        rt_group_count_spawn(gi, c, t);
    rt_obs *ob = rt_obs_now(&rt->obs);   /* after the count, as in spawn() */
    if (RT_UNLIKELY(ob != NULL))
        rt_task_seen(ob, c, t, n);
    int r = submit_on(rt, c, t);
    if (RT_UNLIKELY(r != 0))
        return spawn_inline_undo(rt, c, t, gi, place, r);
    return 0;
}

int rt_spawn_on_worker(dagrt *rt, dagrt_fn fn, void *arg)
{
    rt_ctx *c = rt_ctx_here(rt);
    rt_task *t = rt_task_make(rt, c, fn, arg, NULL, 0);
    if (RT_UNLIKELY(t == NULL))
        return DAGRT_ENOMEM;
    t->flags |= RT_TASK_WORKER;   /* the main thread's waits leave it alone */
    return submit_outside(rt, c, t, true);
}

int dagrt_spawn_ex(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags)
{
    return spawn(rt, g, fn, arg, flags, false, 0, 0, false);
}

int rt_spawn_own(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags)
{
    return spawn(rt, g, fn, arg, flags, false, 0, 0, true);
}

int dagrt_spawn(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg)
{
    return spawn(rt, g, fn, arg, 0, false, 0, 0, false);
}

/* dagrt_spawn's path, the two words stored where dagrt_spawn_inline's
 * storage is: no size, source or place to check, nothing to undo. */
int dagrt_spawn_words(dagrt *rt, dagrt_group *g, dagrt_fn fn, uintptr_t w0, uintptr_t w1)
{
    return spawn(rt, g, fn, NULL, 0, true, w0, w1, false);
}

int dagrt_publish(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    /* The exposure is the idle protocol's publication (core/idle.c): it
     * notifies, so a parked or spinning thread comes for the tasks. */
    /* rt_ctx_current, a real call: a fiber may have migrated since its
     * last TLS read, and only the owner may touch its private tail. */
    rt_ctx_publish_tail(rt_ctx_current(rt));
    return 0;
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
    /* acquire: the pushes counted here are visible to the pops below. */
    uint64_t avail = atomic_load_explicit(&rt->main_pushed, memory_order_acquire) - rt->main_popped;
    int n = 0;
    while (avail-- > 0 && n < 0x7fffffff) {
        rt_node *nd = pop_queue(rt, c, &c->inbox);
        if (!nd)
            break;
        rt->main_popped++;
        rt_task_run(c, (rt_task *)(void *)nd);
        n++;
    }
    return n;
}

int rt_group_wait_thread(dagrt *rt, rt_ctx *c, rt_group *g)
{
    if (!c)
        return rt_group_wait_foreign(rt, g);   /* core/outside.c */
    if (g->owner && g->owner != c && g->owner->rt == rt)
        return DAGRT_EPERM;
    /* Help first; arm (one RMW) only when there is nothing left to run.
     * This loop is the fork-join fast path (a parent waiting for children
     * it just pushed): everything in it is inlined. */
    for (;;) {
        if (rt_group_is_done(g, c))
            return 0;
        if (!help_one(c))
            break;
    }
    int r = rt_group_arm_on(g, c, &c->waiter);
    if (r != 0)
        return r == 1 ? 0 : r;
    for (;;) {
        if (rt_group_is_done(g, c))
            break;
        if (rt_help_one(c))
            continue;
        if (rt_group_is_done(g, c))
            break;
        rt_ctx_idle(c, g);
        /* After a wake-up, look for work once before returning (a claimer
         * may have picked us for it). */
        if (rt_help_one(c))
            continue;
    }
    if (RT_UNLIKELY(c->search_from))
        rt_wake_search_end(c);   /* woken, then the group completed: no task found */
    if (g->owner == c)
        g->armed = 0;    /* owner's own field; nothing of g is pending */
    if (c->handoff)
        rt_handoff(c);
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
    rt_ctx *c = rt_ctx_here(rt);
    if (RT_LIKELY(c != NULL)) {
        char here;
        uintptr_t sp = (uintptr_t)(void *)&here;
        if (sp >= (uintptr_t)(void *)c->stack_lo && sp < (uintptr_t)(void *)c->stack_hi)
            return rt_group_wait_thread(rt, c, gi);
    }
    if (!c)
        return rt_group_wait_outside(rt, gi);   /* core/outside.c */
    int r = rt_fiber_group_wait(rt, gi);
    if (r != 1)
        return r;
    return rt_group_wait_thread(rt, c, gi);
}
