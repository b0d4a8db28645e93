/*
 * bench_box2d.c - Box2D v3's benchmark scenes (its benchmark/ app, scenes
 * from shared/benchmarks.c) stepped with four task systems side by side,
 * interleaved round by round, at 1 and 2 threads:
 *   box2d   Box2D's own scheduler (workerCount threads; 1: serial)
 *   dagrt   integrations/box2d on libdagrt (threads - 1 workers), stepped
 *           from the main thread
 *   node    the same pool, each step inside a libdagrt task that the main
 *           thread waits for (what a graph node does, docs/runtime.md)
 *   enkiTS  enkiTS (packagecache) through its C API, one task set per job
 * Each scene's time is the median over rounds of the steps after the
 * first; the table gives the ratios and their geometric means.
 *   usage: bench_box2d [--rounds N] [--steps F] [--scene NAME] [--threads T]
 *   --steps F: that fraction of each scene's step count (Box2D's own
 *   counts at 1.0, the default)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "TaskScheduler_c.h"
#include "benchmarks.h"
#include "dagrt_box2d.h"

typedef struct scene {
    const char *name;
    void (*create)(b2WorldId);
    float (*step)(b2WorldId, int);
    int steps;
} scene;

/* Box2D's benchmark/main.c table at the snapshot's commit. */
static const scene scenes[] = {
    {"compounds", CreateCompounds, NULL, 500},
    {"joint_grid", CreateJointGrid, NULL, 500},
    {"junkyard", CreateJunkyard, StepJunkyard, 800},
    {"large_pyramid", CreateLargePyramid, NULL, 500},
    {"many_pyramids", CreateManyPyramids, NULL, 200},
    {"rain", CreateRain, StepRain, 1000},
    {"smash", CreateSmash, NULL, 300},
    {"spinner", CreateSpinner, StepSpinner, 500},
    {"tumbler", CreateTumbler, NULL, 750},
    {"washer", CreateWasher, NULL, 500},
};
#define NSCENES (int)(sizeof scenes / sizeof *scenes)

enum { B_BOX2D, B_DAGRT, B_NODE, B_ENKI, NB };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ enkiTS */

#define ENKI_SLOTS 160
typedef struct enki_slot {
    enkiTaskSet *set;
    b2TaskCallback *task;
    void *context;
    _Atomic int busy;
} enki_slot;
typedef struct enki_sys {
    enkiTaskScheduler *ts;
    enki_slot slot[ENKI_SLOTS];
} enki_sys;

static void enki_exec(uint32_t start, uint32_t end, uint32_t thread, void *arg)
{
    (void)start, (void)end, (void)thread;
    enki_slot *s = arg;
    s->task(s->context);
}

static void *enki_enqueue(b2TaskCallback *task, void *ctx, void *user)
{
    enki_sys *e = user;
    for (int i = 0; i < ENKI_SLOTS; i++) {
        enki_slot *s = &e->slot[i];
        int zero = 0;
        /* acquire: the slot's previous finish (release) is done with it. */
        if (!atomic_compare_exchange_strong_explicit(&s->busy, &zero, 1, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        s->task = task;
        s->context = ctx;
        enkiAddTaskSetArgs(e->ts, s->set, s, 1);
        return s;
    }
    task(ctx);
    return NULL;
}

static void enki_finish(void *ut, void *user)
{
    enki_sys *e = user;
    enki_slot *s = ut;
    if (!s)
        return;
    enkiWaitForTaskSet(e->ts, s->set);
    /* release: hands the slot back to the next enqueue's acquire CAS. */
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

static void enki_init(enki_sys *e, int threads)
{
    e->ts = enkiNewTaskScheduler();
    enkiInitTaskSchedulerNumThreads(e->ts, (uint32_t)threads);
    for (int i = 0; i < ENKI_SLOTS; i++) {
        e->slot[i].set = enkiCreateTaskSet(e->ts, enki_exec);
        atomic_init(&e->slot[i].busy, 0);
    }
}

static void enki_fini(enki_sys *e)
{
    for (int i = 0; i < ENKI_SLOTS; i++)
        enkiDeleteTaskSet(e->ts, e->slot[i].set);
    enkiDeleteTaskScheduler(e->ts);
}

/* ------------------------------------------------------------ a run */

typedef struct step_arg {
    b2WorldId world;
    dagrt *rt;
} step_arg;

static int counters;       /* --counters: print the runtime's per-thread counts per run */
static int step_on_main;   /* --counters: steps the node column ran on the main thread */

static void step_task(void *p)
{
    step_arg *a = p;
    if (dagrt_thread_index(a->rt) == 0)
        step_on_main++;
    b2World_Step(a->world, 1.0f / 60.0f, 4);
}

static dagrt_box2d dagrt_tasks;
static enki_sys enki;

/* --counters: each Box2D job through a probe that notes whether it ran on
 * the thread that enqueued it (a ring: Box2D keeps a handful in flight). */
typedef struct job_probe {
    b2TaskCallback *task;
    void *context;
    int enq_thread;
} job_probe;
static job_probe probes[256];
static atomic_uint probe_next;
static atomic_ulong jobs_total, jobs_elsewhere;

static void probe_run(void *p)
{
    job_probe *j = p;
    atomic_fetch_add_explicit(&jobs_total, 1, memory_order_relaxed);   /* a statistic */
    if (dagrt_thread_index(dagrt_tasks.rt) != j->enq_thread)
        atomic_fetch_add_explicit(&jobs_elsewhere, 1, memory_order_relaxed);   /* a statistic */
    j->task(j->context);
}

static void *probe_enqueue(b2TaskCallback *task, void *ctx, void *user)
{
    /* relaxed: only the index; the enqueue's spawn publishes the probe. */
    job_probe *j = &probes[atomic_fetch_add_explicit(&probe_next, 1, memory_order_relaxed) % 256];
    j->task = task;
    j->context = ctx;
    j->enq_thread = dagrt_thread_index(dagrt_tasks.rt);
    return dagrt_box2d_enqueue(probe_run, j, user);
}

/* One scene, one backend: ms for steps 1 .. n-1 (the first step builds
 * Box2D's caches and is left out, as Box2D's app does). */
static double run(const scene *sc, int backend, int threads, int nsteps, dagrt *rt)
{
    b2WorldDef def = b2DefaultWorldDef();
    if (backend == B_DAGRT || backend == B_NODE) {
        dagrt_box2d_world_def(&dagrt_tasks, &def);
        def.workerCount = threads;
        if (counters)
            def.enqueueTask = probe_enqueue;
    } else if (backend == B_ENKI) {
        def.workerCount = threads;
        def.enqueueTask = enki_enqueue;
        def.finishTask = enki_finish;
        def.userTaskContext = &enki;
    } else {
        def.workerCount = threads;
    }
    b2WorldId w = b2CreateWorld(&def);
    sc->create(w);
    if (sc->step)
        sc->step(w, 0);
    b2World_Step(w, 1.0f / 60.0f, 4);
    step_arg a = {w, rt};
    dagrt_thread_stats st0[2], st1[2];
    int nst = rt ? dagrt_get_stats(rt, st0, 2) : 0;
    step_on_main = 0;
    atomic_store(&jobs_total, 0);
    atomic_store(&jobs_elsewhere, 0);
    double t0 = now_ms();
    for (int i = 1; i < nsteps; i++) {
        if (sc->step)
            sc->step(w, i);
        if (backend == B_NODE) {
            dagrt_group g;
            dagrt_group_init(&g);
            dagrt_spawn(rt, &g, step_task, &a);
            dagrt_group_wait(rt, &g);
        } else {
            b2World_Step(w, 1.0f / 60.0f, 4);
        }
    }
    double ms = now_ms() - t0;
    if (counters && (backend == B_DAGRT || backend == B_NODE) && nst > 0) {
        dagrt_get_stats(rt, st1, 2);
        printf("  counters %-14s %-5s T%d steps %d on-main %d", sc->name,
               backend == B_NODE ? "node" : "dagrt", threads, nsteps - 1,
               backend == B_NODE ? step_on_main : nsteps - 1);
        printf(" jobs %lu on-other-thread %lu", atomic_load(&jobs_total), atomic_load(&jobs_elsewhere));
        for (int k = 0; k < nst && k < 2; k++)
            printf(" | t%d tasks %llu steals %llu parks %llu wakes %llu idle %.1fms", k,
                   (unsigned long long)(st1[k].tasks - st0[k].tasks),
                   (unsigned long long)(st1[k].steals - st0[k].steals),
                   (unsigned long long)(st1[k].parks - st0[k].parks),
                   (unsigned long long)(st1[k].wakes - st0[k].wakes),
                   (double)(st1[k].idle_ns - st0[k].idle_ns) / 1e6);
        printf("\n");
    }
    b2DestroyWorld(w);
    return ms;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_ROUNDS 32

int main(int argc, char **argv)
{
    int rounds = 3, only_threads = 0, only_backend = -1, idle_spin = 0;
    double frac = 1.0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            frac = atof(argv[++i]);
        else if (!strcmp(argv[i], "--scene") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
            const char *nm = argv[++i];
            static const char *const names[NB] = {"box2d", "dagrt", "node", "enkiTS"};
            for (int b = 0; b < NB; b++)
                if (!strcmp(nm, names[b]))
                    only_backend = b;
            if (only_backend < 0) {
                fprintf(stderr, "bench_box2d: --backend box2d|dagrt|node|enkiTS\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--idle-spin"))
            idle_spin = 1;
        else if (!strcmp(argv[i], "--counters"))
            counters = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            only_threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--steps F] [--scene NAME] [--threads T] [--counters] [--backend B] [--idle-spin]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || frac <= 0) {
        fprintf(stderr, "bench_box2d: --rounds 1..%d, --steps > 0\n", MAX_ROUNDS);
        return 2;
    }
    printf("bench_box2d: Box2D benchmark scenes, %d interleaved rounds, %.2f of each scene's steps; "
           "median ms of steps 1..n-1\n", rounds, frac);
    for (int threads = 1; threads <= 2; threads++) {
        if (only_threads && threads != only_threads)
            continue;
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = threads - 1;
        if (idle_spin)
            cfg.idle = DAGRT_IDLE_SPIN;   /* idle threads never park: every exposure races a spinner */
        dagrt *rt = dagrt_create(&cfg);
        if (!rt)
            return 1;
        dagrt_box2d_init(&dagrt_tasks, rt);
        enki_init(&enki, threads);
        static double t[NSCENES][NB][MAX_ROUNDS];
        for (int r = 0; r < rounds; r++)
            for (int s = 0; s < NSCENES; s++) {
                if (only && strcmp(only, scenes[s].name))
                    continue;
                int n = (int)(scenes[s].steps * frac);
                if (n < 2)
                    n = 2;
                for (int k = 0; k < NB; k++) {
                    int b = (k + r + s) % NB;   /* a different backend goes first each time */
                    if (only_backend >= 0 && b != only_backend) {
                        t[s][b][r] = 0;   /* --backend: the others are not run */
                        continue;
                    }
                    t[s][b][r] = run(&scenes[s], b, threads, n, rt);
                }
            }
        printf("\nthreads %d (libdagrt: %d workers + the main thread)\n", threads, threads - 1);
        printf("%-14s %9s %9s %9s %9s   %11s %11s %10s\n", "scene", "box2d", "dagrt", "node", "enkiTS",
               "dagrt/box2d", "dagrt/enki", "node/dagrt");
        double lg[3] = {0, 0, 0};
        int ns = 0;
        for (int s = 0; s < NSCENES; s++) {
            if (only && strcmp(only, scenes[s].name))
                continue;
            double med[NB], lo[NB], hi[NB];
            for (int b = 0; b < NB; b++) {
                double v[MAX_ROUNDS];
                memcpy(v, t[s][b], sizeof(double) * (size_t)rounds);
                qsort(v, (size_t)rounds, sizeof *v, cmp_d);
                med[b] = v[rounds / 2];
                lo[b] = v[0];
                hi[b] = v[rounds - 1];
            }
            double r1 = med[B_DAGRT] / med[B_BOX2D], r2 = med[B_DAGRT] / med[B_ENKI],
                   r3 = med[B_NODE] / med[B_DAGRT];
            printf("%-14s %9.1f %9.1f %9.1f %9.1f   %11.3f %11.3f %10.3f   (dagrt %.1f-%.1f)\n",
                   scenes[s].name, med[B_BOX2D], med[B_DAGRT], med[B_NODE], med[B_ENKI], r1, r2, r3,
                   lo[B_DAGRT], hi[B_DAGRT]);
            lg[0] += log(r1);
            lg[1] += log(r2);
            lg[2] += log(r3);
            ns++;
        }
        if (ns)
            printf("%-14s %9s %9s %9s %9s   %11.3f %11.3f %10.3f\n", "geomean", "", "", "", "",
                   exp(lg[0] / ns), exp(lg[1] / ns), exp(lg[2] / ns));
        enki_fini(&enki);
        dagrt_destroy(rt);
    }
    return 0;
}
