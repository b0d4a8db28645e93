/*
 * core/placement.c - the CPU placement policy, all of it (dagrt_config.placement;
 * docs/runtime.md, "CPU placement").
 *
 * Why: where idle CPUs look busy to the kernel (some virtual machines), a
 * futex wake can put the woken worker on its waker's CPU, where the two
 * only take turns (docs/benchmarks-log.md has the measurements). Two moves
 * undo that: a woken worker leaves its waker's CPU (rt_cpu_leave: two
 * affinity calls on itself), and a caller about to wake a sleeping worker
 * for a parallel-for first takes its own CPU out of that worker's mask
 * (rt_place_steer; the worker puts it back when it runs, rt_place_unsteer).
 *
 * The rules: DAGRT_PLACEMENT_NONE makes no affinity call at all (every
 * entry point returns before one). DAGRT_PLACEMENT_AUTO (the default) moves
 * only threads whose mask is still the one the runtime's creator had at
 * dagrt_create (what its workers inherit): a thread whose mask the user set
 * differs from it and is left alone; so is the main thread, always. Moves
 * only ever narrow a mask for a moment and give the same mask back.
 * DAGRT_PLACEMENT_PIN and _CLASS move each worker once, as it starts, onto
 * the CPUs rt_place_plan chose from the topology (dagrt_get_topology,
 * here too); a refusal is counted, and the worker stays where it was.
 */
#include "core.h"
#include "../pfor/pfor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DAGRT_PLACEMENT: try a policy without a rebuild (bench_frame pinned and
 * not, side by side: scripts/scaling.sh). It replaces only the default: a
 * program that chose NONE, PIN or CLASS in cfg chose it for its machine,
 * and keeps it (said once per process, so the variable is not taken for
 * applied). A value it does not know is refused, never guessed. */
int rt_place_env(dagrt_placement cfg, dagrt_placement *out)
{
    static const char *const names[] = {[DAGRT_PLACEMENT_AUTO] = "auto",
                                         [DAGRT_PLACEMENT_NONE] = "none",
                                         [DAGRT_PLACEMENT_PIN] = "pin",
                                         [DAGRT_PLACEMENT_CLASS] = "class"};
    *out = cfg;
    const char *v = rt_os_getenv("DAGRT_PLACEMENT");
    if (!v || !v[0])
        return 0;
    int k = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(v, names[i]) == 0)
            k = i;
    if (k < 0) {
        fprintf(stderr, "dagrt: DAGRT_PLACEMENT=%s: not one of none, auto, pin, class\n", v);
        return DAGRT_EINVAL;
    }
    if (cfg != DAGRT_PLACEMENT_AUTO) {
        static _Atomic int said;
        /* relaxed: only whether the line was printed. */
        if ((dagrt_placement)k != cfg && !atomic_exchange_explicit(&said, 1, memory_order_relaxed))
            fprintf(stderr, "dagrt: DAGRT_PLACEMENT=%s ignored: the program set "
                    "dagrt_config.placement to %s\n", v, names[cfg]);
        return 0;
    }
    *out = (dagrt_placement)k;
    return 0;
}

void rt_place_init(dagrt *rt)
{
    /* Steering moves a worker from another thread through its handle: not
     * for threads the engine made (the runtime holds no handle of them). */
    rt->place_on = rt->cfg.placement == DAGRT_PLACEMENT_AUTO && !rt->cfg.thread_create &&
                   rt_os_affinity_get(NULL, &rt->place_mask) == 0;
}

/* ------------------------------------------------ the CPUs granted */

int dagrt_get_topology(dagrt_topology *out, dagrt_cpu *cpus, int n)
{
    if (n < 0 || (n > 0 && !cpus))
        return DAGRT_EINVAL;
    rt_os_cpu_info *recs = malloc(sizeof *recs * RT_OS_CPUSET_BITS);
    if (!recs)
        return DAGRT_ENOMEM;
    int quota = 0;
    int k = rt_os_topology(recs, RT_OS_CPUSET_BITS, &quota);
    if (k <= 0) {
        free(recs);
        return DAGRT_EIO;
    }
    dagrt_topology t = {.cpus = k, .quota = quota, .usable = quota > 0 && quota < k ? quota : k};
    int last_group = -1;
    for (int i = 0; i < k; i++) {
        const rt_os_cpu_info *r = &recs[i];
        if (i < n)
            cpus[i] = (dagrt_cpu){.id = r->cpu, .core = r->core, .group = r->group,
                                  .core_class = r->klass == RT_OS_CLASS_EFF ? DAGRT_CORE_EFFICIENCY
                                                                            : DAGRT_CORE_PERFORMANCE};
        if (r->klass == RT_OS_CLASS_EFF)
            t.efficiency++;
        else
            t.performance++;
        bool first = true, shared = false;
        for (int j = 0; j < k; j++)
            if (j != i && recs[j].core == r->core) {
                shared = true;
                if (recs[j].cpu < r->cpu)
                    first = false;
            }
        t.cores += first;
        t.smt += shared;
        if (r->group != last_group) {   /* sorted by id: a group's CPUs are together */
            t.groups++;
            last_group = r->group;
        }
    }
    free(recs);
    if (out)
        *out = t;
    return k;
}

/* The place of cpus[i] in the order: class, then its rank among its
 * core's CPUs (every core's first CPU before any second), then id. */
static void order_key(const dagrt_cpu *cpus, int n, int i, int key[3])
{
    int sib = 0;
    for (int j = 0; j < n; j++)
        if (cpus[j].core == cpus[i].core && cpus[j].id < cpus[i].id)
            sib++;
    key[0] = cpus[i].core_class;
    key[1] = sib;
    key[2] = cpus[i].id;
}

int dagrt_topology_order(const dagrt_cpu *cpus, int n, int *order)
{
    if (n < 0 || (n > 0 && (!cpus || !order)))
        return DAGRT_EINVAL;
    /* Insertion sort of indices on the key: at most a few hundred CPUs,
     * once per dagrt_create. */
    for (int i = 0; i < n; i++) {
        int ki[3];
        order_key(cpus, n, i, ki);
        int j = i;
        for (; j > 0; j--) {
            int kj[3];
            order_key(cpus, n, order[j - 1], kj);
            if (kj[0] < ki[0] || (kj[0] == ki[0] && (kj[1] < ki[1] || (kj[1] == ki[1] && kj[2] < ki[2]))))
                break;
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
    return 0;
}

/* Where each worker goes (dagrt_config.placement, and the suggestion the
 * thread hook gets): c->place_cpu, c->place_class and, for the policies
 * that move workers, c->place_set (empty: leave it). Made once at create. */
int rt_place_plan(dagrt *rt)
{
    for (int i = 1; i <= rt->nworkers; i++) {
        rt->ctx[i].place_cpu = -1;
        rt->ctx[i].place_class = DAGRT_CORE_PERFORMANCE;
        memset(&rt->ctx[i].place_set, 0, sizeof rt->ctx[i].place_set);
    }
    bool want = rt->cfg.placement == DAGRT_PLACEMENT_PIN || rt->cfg.placement == DAGRT_PLACEMENT_CLASS;
    if (rt->nworkers == 0 || (!want && !rt->cfg.thread_create))
        return 0;
    dagrt_cpu *cpus = malloc(sizeof *cpus * RT_OS_CPUSET_BITS);
    int *order = malloc(sizeof *order * RT_OS_CPUSET_BITS);
    int n = cpus && order ? dagrt_get_topology(NULL, cpus, RT_OS_CPUSET_BITS) : DAGRT_ENOMEM;
    if (n == DAGRT_ENOMEM) {
        free(cpus);
        free(order);
        return DAGRT_ENOMEM;
    }
    if (n > 0) {
        dagrt_topology_order(cpus, n, order);
        rt_os_cpuset perf, eff;
        memset(&perf, 0, sizeof perf);
        memset(&eff, 0, sizeof eff);
        for (int j = 0; j < n; j++)
            rt_os_cpuset_add(cpus[j].core_class == DAGRT_CORE_EFFICIENCY ? &eff : &perf, cpus[j].id);
        bool hybrid = rt_os_cpuset_count(&eff) > 0;
        for (int i = 1; i <= rt->nworkers; i++) {
            rt_ctx *c = &rt->ctx[i];
            /* Worker k takes the (k % n)-th: the first is the main thread's. */
            c->place_cpu = cpus[order[i % n]].id;
            c->place_class = !c->hot && hybrid ? DAGRT_CORE_EFFICIENCY : DAGRT_CORE_PERFORMANCE;
            memset(&c->place_set, 0, sizeof c->place_set);
            if (rt->cfg.placement == DAGRT_PLACEMENT_PIN)
                rt_os_cpuset_add(&c->place_set, c->place_cpu);
            else if (rt->cfg.placement == DAGRT_PLACEMENT_CLASS && (c->hot || hybrid))
                c->place_set = c->hot ? perf : eff;
        }
    }
    free(cpus);
    free(order);
    return 0;   /* a system that tells nothing: nobody moves, suggestions -1 */
}

void rt_place_self(rt_ctx *c)
{
    if (rt_os_cpuset_count(&c->place_set) == 0)
        return;
    if (rt_os_affinity_set(NULL, &c->place_set) != 0)
        /* relaxed: a count (trace/trace.h); the owner writes it once. */
        atomic_store_explicit(&c->stats.pin_refused, 1, memory_order_relaxed);
}

int rt_cpu_now(void)
{
    return rt_os_cpu_current();
}

int rt_cpu_leave(int cpu)
{
    int now = rt_os_cpu_current();
    rt_ctx *c = rt_tls_ctx;
    /* Only a worker of a runtime whose policy moves threads. */
    if (!c || !c->worker || !c->rt->place_on)
        return now;
    rt_os_cpuset old, away;
    if (cpu < 0 || cpu >= RT_OS_CPUSET_BITS || now != cpu)
        return now;
    if (rt_os_affinity_get(NULL, &old) != 0 || !rt_os_cpuset_has(&old, cpu))
        return cpu;
    if (!rt_os_cpuset_equal(&old, &c->rt->place_mask))
        return cpu;   /* the user set this thread's mask: leave it alone */
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
    /* Still there (pinned, policy off, or the calls failed): keep sleeping
     * at once. */
    if (rt_cpu_leave(from) != from)
        c->beside_waker = false;   /* owner's own field: c is this thread's ctx */
}

/* Steering a wake-up. Where wakes land beside the waker, the worker a
 * futex wake puts beside its waker then waits in that CPU's run queue
 * until the waker's time slice
 * ends (milliseconds: the caller of a loop does not block), while the loop
 * it was woken for is long over. So before a submit that will wake a
 * sleeping worker, take our CPU out of that worker's allowed set: the
 * kernel then has to wake it elsewhere. Whoever runs the task puts the CPU
 * back (unsteer). Rare (it needs a sleeping worker, and kicks are rate
 * limited), so one mutex keeps concurrent steers of one worker consistent.
 * Returns the steered ctx index + 1, or 0 when nothing was done. */
uintptr_t rt_place_steer(dagrt *rt, int cpu)
{
    /* relaxed: heuristic reads; a wrong guess only skips the steering or
     * steers a worker that someone else then wakes. */
    if (!rt->place_on || cpu < 0 || atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0)
        return 0;
    for (int k = 1; k < rt->nctx; k++) {
        rt_ctx *v = &rt->ctx[k];
        /* The first idle worker is the one the submit's wake_one claims. */
        /* relaxed: a guess at which worker the submit will wake. */
        if (atomic_load_explicit(&v->idle, memory_order_relaxed) != 1)
            continue;
        uintptr_t r = 0;
        rt_os_cpuset m;
        rt_os_mutex_lock(&rt->steer_mu);
        /* Only a worker whose mask is the runtime's own (not the user's). */
        if (rt_os_affinity_get(&v->thread, &m) == 0 && rt_os_cpuset_equal(&m, &rt->place_mask) &&
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

void rt_place_unsteer(dagrt *rt, uintptr_t steered, int cpu)
{
    if (steered == 0)
        return;
    rt_ctx *v = &rt->ctx[steered - 1];
    rt_os_cpuset m;
    rt_os_mutex_lock(&rt->steer_mu);
    if (rt_os_affinity_get(&v->thread, &m) == 0) {
        rt_os_cpuset_add(&m, cpu);
        /* Only the mask we narrowed: a user's change since stays. */
        if (rt_os_cpuset_equal(&m, &rt->place_mask))
            (void)rt_os_affinity_set(&v->thread, &m);
    }
    rt_os_mutex_unlock(&rt->steer_mu);
}

