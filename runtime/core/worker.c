/*
 * core/worker.c - the runtime's threads and its life: creating a runtime (its
 * contexts, first task slabs, fiber layer and worker threads), the worker
 * loop, pause and resume, stopping and freeing (dagrt_destroy's drain is in
 * core/destroy.c).
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_MAX_WORKERS   1024
/* dagrt_config.live_costs: the most frames between timed ones. */
#define RT_LIVE_COSTS_MOST 1000000
#define RT_DEQUE_CAP     256
#define RT_SPIN_NS       50000   /* poll this long before sleeping */

_Thread_local rt_ctx *rt_tls_ctx;   /* the calling thread's ctx (core/core.h) */

RT_NOINLINE rt_ctx *rt_ctx_current(const dagrt *rt)
{
    return rt_ctx_here(rt);
}

/* Records the calling thread's stack range in c (dagrt_group_init uses it
 * to give groups on this stack the owner fast path). */
static void stack_bounds(rt_ctx *c)
{
    if (!rt_os_thread_stack(&c->stack_lo, &c->stack_hi))
        c->stack_lo = c->stack_hi = NULL;
}

/* PAUSE. dagrt_pause stores paused = 1, unparks every worker (a token:
 * one that parks later returns at once) and waits until npaused counts
 * every worker. A worker looks at paused at the top of its loop, before
 * it takes anything, and parks here: counted, asleep on the paused word
 * until dagrt_resume stores 0 and wakes them all, then uncounted. The
 * count and the flag make a Dekker pair (all four seq_cst): pause
 * stores paused, then loads npaused; a leaving worker decrements
 * npaused, then loads paused. In their single total order either pause
 * sees the decrement (it waits for the worker to park again) or the
 * worker sees paused = 1 again and parks again before taking anything:
 * no task starts on a worker once pause has returned. While parked the
 * worker is no reaper (rt_io_park) and no timers' keeper, so the
 * reactor's thread sleeps in the kernel: the process uses no CPU. */
static void pause_park(rt_ctx *c)
{
    dagrt *rt = c->rt;
    rt_io_park(c, true);
    for (;;) {
        atomic_fetch_add_explicit(&rt->npaused, 1, memory_order_seq_cst);   /* seq_cst: the pair */
        rt_os_wake32_all(&rt->npaused);
        /* acquire: resume's store; nothing is handed over by it. */
        while (atomic_load_explicit(&rt->paused, memory_order_acquire) == 1)
            rt_os_wait32(&rt->paused, 1);
        atomic_fetch_sub_explicit(&rt->npaused, 1, memory_order_seq_cst);   /* seq_cst: the pair */
        if (atomic_load_explicit(&rt->paused, memory_order_seq_cst) == 0)   /* seq_cst: the pair */
            break;
    }
    rt_io_park(c, false);
    if (c->replace) {
        /* dagrt_set_hot_workers wrote hot and place_set before resume's
         * store of paused, which our load above acquired. */
        c->replace = false;
        rt_place_self(c);
        if (c->hot)
            rt_io_thread_priority(rt);
    }
}

void rt_pause_end(dagrt *rt)
{
    /* seq_cst: PAUSE's pair (above). */
    atomic_store_explicit(&rt->paused, 0, memory_order_seq_cst);
    rt_os_wake32_all(&rt->paused);
}

static void worker_main(void *arg)
{
    rt_ctx *c = arg;
    dagrt *rt = c->rt;
    rt_tls_ctx = c;
    if (!rt->cfg.thread_create)
        rt_os_thread_name("dagrt-worker");   /* the engine names its own threads */
    rt_place_self(c);
    stack_bounds(c);
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_enter();
    if (c->hot)
        rt_io_thread_priority(rt);   /* dagrt_config.hot_priority; a refusal is counted */
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (ob)
        rt_obs_thread(ob, true, (int)c->index);
    /* acquire: pairs with destroy's store of stop. */
    bool reaper = c->hot || rt->cfg.hot_workers == 0;   /* hot workers serve completions first */
    rt_io_park(c, false);   /* awake: counted for the reactor thread's gate */
    while (!atomic_load_explicit(&rt->stop, memory_order_acquire)) {
        /* relaxed: PAUSE above; pause_park re-reads it seq_cst. A worker
         * that misses the store runs one more task, before pause sees it
         * counted. */
        if (RT_UNLIKELY(atomic_load_explicit(&rt->paused, memory_order_relaxed))) {
            pause_park(c);
            reaper = c->hot || rt->cfg.hot_workers == 0;   /* dagrt_set_hot_workers */
            continue;
        }
        if (reaper)
            rt_io_reap(c);   /* between tasks: completions resume here, no hand-off */
        if (rt_help_one(c))
            continue;
        rt_ctx_idle(c, NULL);
    }
    rt_io_park(c, true);
    if ((ob = rt_obs_now(&rt->obs)))
        rt_obs_thread(ob, false, (int)c->index);
    if (!rt->cfg.no_overflow_report)
        rt_overflow_thread_leave();
    rt_ctx_window_close(c);
    rt_tls_ctx = NULL;
}

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

void rt_free_all(dagrt *rt)
{
    if (rt->ctx) {
        for (int i = 0; i < rt->nctx; i++) {
            rt_ctx *c = &rt->ctx[i];
            rt_deque_fini(&c->deque);
            rt_parker_fini(&c->parker);
            rt_slabs_free(c->slabs);
        }
        rt_os_free_aligned(rt->ctx);
    }
    rt_observe_fini(&rt->obs);   /* writes DAGRT_TRACE's file: every thread has stopped */
    rt_slabs_free(rt->shared_slabs);
    rt_timers_fini(&rt->timers);
    rt_os_mutex_fini(&rt->shared_mu);
    rt_os_mutex_fini(&rt->steer_mu);
    rt_os_mutex_fini(&rt->io_make_mu);
    rt_frame_pool_fini(rt);   /* every frame chunk: nothing runs any more */
    /* The plan slot (exec/plan_helper.c): its helpers finished before the join. */
    rt_os_free_aligned(rt->exec);
    rt_os_free_aligned(rt);
}

void rt_stop_and_join(dagrt *rt)
{
    /* seq_cst: against the idlers' seq_cst re-check of stop before they park. */
    atomic_store_explicit(&rt->stop, 1, memory_order_seq_cst);
    /* Unconditional unparks leave tokens, so no worker can sleep through
     * the stop flag. */
    for (int i = 1; i < rt->nctx; i++)
        rt_unpark(&rt->ctx[i].parker);
    for (int i = 1; i < rt->nctx; i++) {
        if (!rt->ctx[i].started)
            continue;
        if (rt->cfg.thread_create)
            rt->cfg.thread_join(rt->cfg.thread_user, rt->ctx[i].ext_thread);
        else
            rt_os_thread_join(&rt->ctx[i].thread);
    }
}

dagrt *dagrt_create_ex(const dagrt_config *cfg, int *err)
{
    dagrt_config d;
    int e = DAGRT_EINVAL;
    if (!cfg) {
        dagrt_config_init(&d);
        cfg = &d;
    }
    if (cfg->workers < DAGRT_WORKERS_AUTO || cfg->workers > RT_MAX_WORKERS || cfg->hot_workers < 0 ||
        (cfg->idle != DAGRT_IDLE_PARK && cfg->idle != DAGRT_IDLE_SPIN) ||
        cfg->fiber_pool_size < 0 || (cfg->no_workers && cfg->workers > 0) ||
        cfg->guest_threads < 0 || cfg->guest_threads > RT_MAX_WORKERS ||
        cfg->io_ring_entries < 0 || !cfg->thread_create != !cfg->thread_join ||
        cfg->placement < DAGRT_PLACEMENT_AUTO || cfg->placement > DAGRT_PLACEMENT_CLASS ||
        (uint64_t)cfg->frame_reserve > ((uint64_t)1 << 40) ||
        cfg->live_costs > RT_LIVE_COSTS_MOST ||
        cfg->crowd_frames < DAGRT_CROWD_AUTO || cfg->crowd_frames > DAGRT_CROWD_DYNAMIC ||
        (cfg->hot_priority != DAGRT_PRIORITY_NORMAL && cfg->hot_priority != DAGRT_PRIORITY_ELEVATED))
        goto fail;
    /* 0 is none: no_workers only says the same thing the old way. */
    int nworkers = cfg->no_workers ? 0
                 : cfg->workers == DAGRT_WORKERS_AUTO ? online_cpus() - 1 : cfg->workers;
    if (cfg->hot_workers > nworkers)
        goto fail;
    /* The serial switch: no worker at all, whatever was asked, so every
     * task runs on a thread that waits (the caller's own, in a valid
     * order: the one its waits take them in). Said once per process on
     * standard error, so that a run under it is never taken for a
     * parallel one. */
    const char *env_serial = rt_os_getenv("DAGRT_SERIAL");
    bool serial = cfg->serial || cfg->shuffle ||
                  (env_serial && env_serial[0] && strcmp(env_serial, "0") != 0);
    /* The shuffled serial switch: DAGRT_SERIAL=shuffle or shuffle:SEED
     * (decimal), else cfg. Its line names the seed, once per runtime (each
     * may have its own), so that a failing run can be replayed. */
    bool env_shuffle = env_serial && strncmp(env_serial, "shuffle", 7) == 0 &&
                       (env_serial[7] == '\0' || env_serial[7] == ':');
    bool shuffle = cfg->shuffle || env_shuffle;
    uint64_t seed = cfg->shuffle_seed;
    if (env_shuffle && env_serial[7] == ':') {
        char *end = NULL;
        unsigned long long v = strtoull(env_serial + 8, &end, 10);
        if (!end || *end || end == env_serial + 8 || env_serial[8] == '-') {
            /* A seed that is no number: refused, never guessed. */
            fprintf(stderr, "dagrt: DAGRT_SERIAL=%s: the seed is not a decimal number\n", env_serial);
            goto fail;
        }
        seed = (uint64_t)v;
    }
    if (shuffle && seed == 0)
        seed = rt_splitmix(rt_now_ns()) % UINT64_C(1000000000000) + 1;   /* short enough to type */
    if (shuffle)
        fprintf(stderr, "dagrt: shuffled serial (%s), seed %llu: replay with "
                "DAGRT_SERIAL=shuffle:%llu\n", env_shuffle ? "DAGRT_SERIAL" : "dagrt_config.shuffle",
                (unsigned long long)seed, (unsigned long long)seed);
    if (serial) {
        static _Atomic int said;
        /* relaxed: only whether the line was printed. */
        if (!shuffle && !atomic_exchange_explicit(&said, 1, memory_order_relaxed))
            fprintf(stderr, "dagrt: serial (%s): no worker threads, every task runs on the "
                    "thread that waits\n", cfg->serial ? "dagrt_config.serial" : "DAGRT_SERIAL");
        nworkers = 0;
    }
    int nhot = serial ? 0 : cfg->hot_workers;
    dagrt_placement placement;   /* DAGRT_PLACEMENT (core/placement.c) */
    if (rt_place_env(cfg->placement, &placement) != 0)
        goto fail;
    e = DAGRT_ENOMEM;
    dagrt *rt = rt_os_alloc_aligned(RT_APART, (sizeof(dagrt) + RT_APART - 1) & ~(size_t)(RT_APART - 1));
    if (!rt)
        goto fail;
    memset(rt, 0, sizeof *rt);
    rt->cfg = *cfg;
    rt->cfg.hot_workers = nhot;   /* the serial switch has none */
    rt->cfg.placement = placement;
    rt->cfg.serial = serial;
    rt->cfg.shuffle = shuffle;
    /* Wake-up latency counters (core/idle.c): cfg, or DAGRT_WAKE_STATS=1. */
    const char *env_wake = rt_os_getenv("DAGRT_WAKE_STATS");
    rt->cfg.wake_stats = cfg->wake_stats || (env_wake && env_wake[0] && strcmp(env_wake, "0") != 0);
    rt->cfg.shuffle_seed = shuffle ? seed : 0;
    /* Live costs (exec/live.c): DAGRT_LIVE_COSTS=k tries them without a
     * rebuild where the configuration leaves them off. */
    if (rt->cfg.live_costs == 0) {
        const char *lc = rt_os_getenv("DAGRT_LIVE_COSTS");
        long k = lc ? strtol(lc, NULL, 10) : 0;
        rt->cfg.live_costs = k > 0 && k <= RT_LIVE_COSTS_MOST ? (uint32_t)k : 0;
    }
    rt->nworkers = nworkers;
    rt->cpus = rt_os_cpu_count();
    rt->nguests = cfg->guest_threads;
    rt->nctx = nworkers + 1 + cfg->guest_threads;
    atomic_init(&rt->spin_ns, RT_SPIN_NS);
    atomic_init(&rt->offer, NULL);
    atomic_init(&rt->offers_taken, 0);
    atomic_init(&rt->io, NULL);
    atomic_init(&rt->prio_refused, 0);
    rt_os_mutex_init(&rt->shared_mu);
    rt_os_mutex_init(&rt->steer_mu);
    rt_os_mutex_init(&rt->io_make_mu);
    int frame_rc = rt_frame_pool_init(rt);
    rt_mpsc_init(&rt->hot);
    dagrt_cancel_init(&rt->waits, NULL);
    atomic_init(&rt->nwaits, 0);
    atomic_init(&rt->closing, RT_OPEN);
    atomic_init(&rt->calls, 0);
    atomic_init(&rt->paused, 0);
    atomic_init(&rt->npaused, 0);
    if (frame_rc != 0 || rt_timers_init(&rt->timers) != 0) {
        rt_frame_pool_fini(rt);
        rt_os_mutex_fini(&rt->shared_mu);
        rt_os_mutex_fini(&rt->steer_mu);
        rt_os_mutex_fini(&rt->io_make_mu);
        rt_os_free_aligned(rt);
        goto fail;
    }
    rt->asym_fence = rt_asym_fence_available();
    rt_place_init(rt);   /* before the workers start: they read it */
    size_t csz = ((size_t)rt->nctx * sizeof(rt_ctx) + RT_APART - 1) & ~(size_t)(RT_APART - 1);
    rt->ctx = rt_os_alloc_aligned(RT_APART, csz);
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
        c->worker = i > 0 && i <= nworkers;
        c->guest = i > nworkers;
        atomic_init(&c->taken, 0);
        atomic_init(&c->wake_t0, 0);
        c->hot = i > 0 && i <= nhot;
        /* Shuffled: the seed also orders the thread's spawned tasks and
         * loop pieces (core/work.c, pfor/pfor.c), so one seed replays all. */
        c->rng = rt_splitmix((shuffle ? seed : cfg->seed) + (uint64_t)i * 7919u) | 1;
        c->waiter.fn = rt_ctx_wake;
        c->fj_nidle = &rt->nidle;
        /* Each ctx's first task slab now, not at its first spawn: that may
         * come in any later frame (the first time a worker spawns), and a
         * frame after the first must not allocate (tests/e2e/alloc_frame). */
        c->free = rt_slab_new(&c->slabs, c->index);
        if (!c->free)
            ok = 0;
        c->stats.start_ns = rt_now_ns();
    }
    if (!ok || rt_place_plan(rt) != 0) {
        rt_free_all(rt);
        goto fail;
    }
    int fe = rt_fiber_rt_init(rt);   /* its own error: a bad fiber config is EINVAL */
    if (fe != 0) {
        e = fe;
        rt_free_all(rt);
        goto fail;
    }
    if (rt_observe_init(&rt->obs, rt->nctx, rt->nworkers, cfg->observer, cfg->observer_user) != 0) {
        rt_fiber_rt_fini(rt);
        rt_free_all(rt);
        goto fail;
    }
    stack_bounds(&rt->ctx[0]);
    rt->prev_tls = rt_tls_ctx;     /* a runtime created from inside another's thread */
    if (rt->prev_tls)
        rt_ctx_window_close(rt->prev_tls);   /* frame memory's window is the current ctx's */
    rt_tls_ctx = &rt->ctx[0];
    rt_obs *ob = rt_obs_now(&rt->obs);
    if (ob)
        rt_obs_thread(ob, true, 0);
    for (int i = 1; i <= rt->nworkers; i++) {
        rt_ctx *c = &rt->ctx[i];
        int started;
        if (cfg->thread_create) {
            char name[32];
            snprintf(name, sizeof name, "dagrt-worker-%d", i);
            dagrt_thread_spec spec = {.entry = worker_main, .arg = c, .index = i, .hot = c->hot,
                                      .cpu = c->place_cpu, .core_class = c->place_class,
                                      .name = name};
            started = cfg->thread_create(cfg->thread_user, &spec, &c->ext_thread);
        } else {
            started = rt_os_thread_start(&c->thread, worker_main, c);
        }
        if (started != 0) {
            rt_stop_and_join(rt);
            rt_tls_ctx = rt->prev_tls;
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

int dagrt_pause(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c || c->index != 0)
        return DAGRT_EPERM;
    if (c->depth > 0 || dagrt_in_fiber(rt) || rt_exec_in_node())
        return DAGRT_ENESTED;
    /* seq_cst: PAUSE's pair (above). */
    atomic_store_explicit(&rt->paused, 1, memory_order_seq_cst);
    for (int i = 1; i <= rt->nworkers; i++)
        rt_unpark(&rt->ctx[i].parker);   /* out of an idle park, to the loop's look */
    /* Until every worker is parked, help: a worker's task may wait for
     * work only this thread runs (main-thread tasks). */
    for (;;) {
        uint32_t n = atomic_load_explicit(&rt->npaused, memory_order_seq_cst);   /* seq_cst: the pair */
        if (n >= (uint32_t)rt->nworkers)
            break;
        if (!rt_help_one(c))
            rt_os_wait32_until(&rt->npaused, n, rt_now_ns() + 1000000);
    }
    return 0;
}

int dagrt_set_hot_workers(dagrt *rt, int n)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c || c->index != 0)
        return DAGRT_EPERM;
    /* Whether a runtime has hot workers at all shapes its plans and its
     * reactor's roles (made at create): only which workers are hot moves. */
    if (rt->cfg.hot_workers == 0 || n < 1 || n > rt->nworkers)
        return DAGRT_EINVAL;
    /* relaxed: the main thread's own store; the workers are parked (their
     * count, seq_cst above, says so once pause has returned). */
    if (atomic_load_explicit(&rt->paused, memory_order_relaxed) == 0)
        return DAGRT_EBUSY;
    for (int i = 1; i <= rt->nworkers; i++) {
        rt_ctx *w = &rt->ctx[i];
        bool hot = i <= n;
        if (w->hot != hot) {
            w->hot = hot;
            w->replace = true;
        }
    }
    int e = rt_place_plan(rt);   /* CLASS keeps hot workers on performance cores */
    return e;
}

int dagrt_resume(dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_ctx_current(rt);
    if (!c || c->index != 0)
        return DAGRT_EPERM;
    rt_pause_end(rt);
    return 0;
}

int dagrt_worker_count(const dagrt *rt)
{
    return rt ? rt->nworkers : DAGRT_EINVAL;
}

uint64_t dagrt_shuffle_seed(const dagrt *rt)
{
    return rt ? rt->cfg.shuffle_seed : 0;
}

dagrt_placement dagrt_get_placement(const dagrt *rt)
{
    return rt ? rt->cfg.placement : DAGRT_PLACEMENT_AUTO;
}

int dagrt_thread_index(const dagrt *rt)
{
    rt_ctx *c = rt ? rt_ctx_current(rt) : NULL;   /* a real call: fibers migrate */
    return c ? (int)c->index : -1;
}

int dagrt_thread_count(const dagrt *rt)
{
    return rt ? rt->nctx : DAGRT_EINVAL;
}

bool dagrt_on_main_thread(const dagrt *rt)
{
    rt_ctx *c = rt ? rt_ctx_here(rt) : NULL;
    return c && c->index == 0;
}
