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
 *   again   the dagrt column once more, in another place of the round's
 *           order: again/dagrt is the dagrt column's own spread, the
 *           yardstick for node/dagrt
 * Each scene's time is the median over rounds of the steps after the
 * first; the table gives the ratios and their geometric means, and per
 * scene the range over rounds of the paired ratios node/dagrt and
 * again/dagrt (each round's two runs of the same scene). "wrap" is what
 * the node column pays per step for the task itself, measured with an
 * empty body (one spawn and one helping wait, 2000 times), as a share of
 * the scene's dagrt time. A second table, "floor", gives the same columns
 * from the sum over steps of each step's fastest round: on a shared
 * machine, where other processes only add time, it is the steadier
 * figure (its again/dagrt says how steady). At 2 threads the last line
 * gives, per column, the round trip of a cache line between the main
 * thread's CPU and another measured right after each run: on a virtual
 * machine the host moves the virtual CPUs, and how far apart they sat
 * changes Box2D's 2-thread times by up to 2x (docs/benchmarks-log.md); a last
 * table gives dagrt/enkiTS and dagrt/box2d per scene from the rounds whose
 * three runs all sat near, and from those whose three all sat far.
 *   usage: bench_box2d [--rounds N] [--steps F] [--scene NAME] [--threads T]
 *          [--counters] [--jobs] [--jobs-csv FILE]
 *          [--backend box2d|dagrt|node|enkiTS|again] [--idle-spin]
 *   --steps F: that fraction of each scene's step count (Box2D's own
 *   counts at 1.0, the default)
 *   --jobs: per place of a job in the step (Box2D enqueues the same
 *   sequence every step), for the dagrt and enkiTS columns at 2 threads:
 *   how often it ran off the enqueuing thread, its start delay there, its
 *   run times, the main thread's finishTask wait; --jobs-csv FILE appends
 *   every job's and step's timestamps to FILE as well
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdatomic.h>
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif
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

enum { B_BOX2D, B_DAGRT, B_NODE, B_ENKI, B_AGAIN, NB };

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

/* ------------------------------------------------------------ distance */

/* How far apart two CPUs are right now: the round trip of one cache line
 * between a thread on the main thread's CPU and one on another, in ns
 * (the fastest of 10 batches of 200, so a batch the scheduler interrupted
 * is left out). On a virtual machine the host moves the virtual CPUs, and
 * a line that crosses the host's L3 domains costs several times one that
 * stays inside one: Box2D's 2-thread times follow it. Measured after each
 * 2-thread run; -1 where it cannot be (one CPU, no affinity calls). */
#ifdef __linux__
typedef struct xcpu {
    _Alignas(64) atomic_int flag;
    atomic_int stop;
    int n;
} xcpu;

static void *xcpu_pong(void *p)
{
    xcpu *x = p;
    for (int i = 0; i < x->n; i++) {
        /* acquire/release: the ping-pong itself (what it measures is the
         * line's trip; the orders only keep the pair in step). relaxed
         * stop: a flag that ends a stranded run, guarding no data. */
        while (atomic_load_explicit(&x->flag, memory_order_acquire) != 2 * i + 1)
            if (atomic_load_explicit(&x->stop, memory_order_relaxed))
                return NULL;
        atomic_store_explicit(&x->flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static double xcpu_round_trip_ns(void)
{
    cpu_set_t mask, here, there;
    int cpu = sched_getcpu(), other = -1;
    if (cpu < 0 || sched_getaffinity(0, sizeof mask, &mask) != 0)
        return -1;
    for (int i = 0; i < CPU_SETSIZE && other < 0; i++)
        if (i != cpu && CPU_ISSET(i, &mask))
            other = i;
    if (other < 0)
        return -1;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    CPU_ZERO(&there);
    CPU_SET(other, &there);
    static xcpu x;
    /* relaxed: before the helper exists; pthread_create publishes them. */
    atomic_store_explicit(&x.flag, 0, memory_order_relaxed);
    atomic_store_explicit(&x.stop, 0, memory_order_relaxed);
    x.n = 2000;
    pthread_attr_t at;
    pthread_t t;
    pthread_attr_init(&at);
    pthread_attr_setaffinity_np(&at, sizeof there, &there);
    int ok = pthread_create(&t, &at, xcpu_pong, &x) == 0;
    pthread_attr_destroy(&at);
    if (!ok)
        return -1;
    /* The main thread stays on its CPU for the measurement only. */
    sched_setaffinity(0, sizeof here, &here);
    /* The fastest of 10 batches of 200: a batch that the scheduler
     * interrupted (the other CPU busy with another process) is left out. */
    double t0 = now_ms(), tb = t0, r = -1;
    for (int i = 0; i < x.n; i++) {
        atomic_store_explicit(&x.flag, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&x.flag, memory_order_acquire) != 2 * i + 2)
            if (now_ms() - t0 > 200)
                goto out;   /* the other CPU never ran the helper */
        if (i % 200 == 199) {
            double te = now_ms(), b = (te - tb) * 1e6 / 200;
            if (r < 0 || b < r)
                r = b;
            tb = te;
        }
    }
out:
    atomic_store_explicit(&x.stop, 1, memory_order_relaxed);   /* relaxed: see xcpu_pong */
    pthread_join(t, NULL);
    sched_setaffinity(0, sizeof mask, &mask);
    return r;
}
#else
static double xcpu_round_trip_ns(void)
{
    return -1;
}
#endif

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
static atomic_ulong jobs_by[2][2];   /* [enqueuing thread][running thread], threads 0 and 1 */

static void probe_run(void *p)
{
    job_probe *j = p;
    atomic_fetch_add_explicit(&jobs_total, 1, memory_order_relaxed);   /* a statistic */
    int here = dagrt_thread_index(dagrt_tasks.rt);
    if (here != j->enq_thread)
        atomic_fetch_add_explicit(&jobs_elsewhere, 1, memory_order_relaxed);   /* a statistic */
    if (here >= 0 && here < 2 && j->enq_thread >= 0 && j->enq_thread < 2)
        atomic_fetch_add_explicit(&jobs_by[j->enq_thread][here], 1, memory_order_relaxed);   /* a statistic */
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

/* --jobs: every Box2D job of the dagrt and enkiTS columns through a probe
 * that stamps its enqueue, start and end and its finishTask's wait, with
 * the job's place in its step (Box2D enqueues the same sequence each
 * step), and which thread enqueued and ran it. Printed per place after
 * each run: where the two systems differ in when the other thread starts
 * a job and how long the main thread then waits. */
#define JT_MAX 16384
typedef struct jt_ev {
    b2TaskCallback *task;
    void *context;
    void *handle;
    int k, step, enq_thread, run_thread;
    double enq, start, end, fin_begin, fin_end;   /* ns; 0: not (yet) */
} jt_ev;
static int jobs_trace;
static const char *jobs_csv;   /* --jobs-csv FILE: every job and step appended, for offline analysis */
static int jt_backend;
static jt_ev jt[JT_MAX];
static int jt_n, jt_k, jt_step;
static double jt_step_t[JT_MAX][2];

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int jt_thread(void)
{
    return jt_backend == B_ENKI ? (int)enkiGetThreadNum(enki.ts) : dagrt_thread_index(dagrt_tasks.rt);
}

static void jt_run(void *p)
{
    jt_ev *e = p;
    e->start = now_ns();
    e->run_thread = jt_thread();
    e->task(e->context);
    e->end = now_ns();
}

static jt_ev jt_spare;   /* past JT_MAX: stamped, not reported */

static void *jt_enqueue(b2TaskCallback *task, void *ctx, void *user)
{
    /* Box2D enqueues from the thread that steps (or a job of it): one
     * writer at a time, so the plain counters are safe. */
    jt_ev *e = jt_n < JT_MAX ? &jt[jt_n++] : &jt_spare;
    memset(e, 0, sizeof *e);
    e->task = task;
    e->context = ctx;
    e->k = jt_k++;
    e->step = jt_step;
    e->enq_thread = jt_thread();
    e->enq = now_ns();
    e->handle = jt_backend == B_ENKI ? enki_enqueue(jt_run, e, user) : dagrt_box2d_enqueue(jt_run, e, user);
    return e->handle ? e : NULL;
}

static void jt_finish(void *ut, void *user)
{
    jt_ev *e = ut;
    e->fin_begin = now_ns();
    if (jt_backend == B_ENKI)
        enki_finish(e->handle, user);
    else
        dagrt_box2d_finish(e->handle, user);
    e->fin_end = now_ns();
}

static double jt_median(double *v, int n)
{
    if (n == 0)
        return 0;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v[n / 2];
}

/* Per place in the step: how many ran off the enqueuing thread, the
 * median delay from enqueue to start there, the median run time on each
 * side, and the median and total time the main thread spent in its
 * finishTask for that place. */
static void jt_report(const char *scn, const char *backend, int steps)
{
    static double v[4][JT_MAX];
    int places = 0;
    for (int i = 0; i < jt_n; i++)
        places = jt[i].k + 1 > places ? jt[i].k + 1 : places;
    int nsteps = 0;
    for (int i = 1; i <= steps && i < JT_MAX; i++)
        v[0][nsteps++] = jt_step_t[i][1] - jt_step_t[i][0];
    printf("  jobs %-14s %-6s %d jobs in %d steps (%.2f per step), step median %.1f us\n", scn, backend, jt_n,
           steps, (double)jt_n / steps, jt_median(v[0], nsteps) / 1e3);
    for (int k = 0; k < places && k < 16; k++) {
        int n = 0, nother = 0, nd = 0, n0 = 0, n1 = 0, nf = 0, ns = 0;
        static double span[JT_MAX];
        double fin_sum = 0;
        for (int i = 0; i < jt_n; i++) {
            jt_ev *e = &jt[i];
            if (e->k != k)
                continue;
            n++;
            if (e->run_thread != e->enq_thread) {
                nother++;
                v[0][nd++] = e->start - e->enq;
                v[1][n1++] = e->end - e->start;
            } else
                v[2][n0++] = e->end - e->start;
            if (e->fin_end > 0) {
                v[3][nf++] = e->fin_end - e->fin_begin;
                fin_sum += e->fin_end - e->fin_begin;
                span[ns++] = e->fin_end - e->enq;
            }
        }
        if (n == 0)
            continue;
        printf("    place %2d: n %4d  off-thread %4d  start delay there %7.1f us  run here %7.1f us  there %7.1f us"
               "  finish wait median %6.1f us total %7.2f ms  enqueue to finished %7.1f us\n",
               k, n, nother, jt_median(v[0], nd) / 1e3, jt_median(v[2], n0) / 1e3, jt_median(v[1], n1) / 1e3,
               jt_median(v[3], nf) / 1e3, fin_sum / 1e6, jt_median(span, ns) / 1e3);
    }
}

/* The fastest time of each step over the rounds (floor[i - 1] for step
 * i), for every scene and column: their sum is the scene's cost with most
 * of a shared machine's noise left out (noise only adds time, and Box2D
 * computes the same steps in every run). */
static double *floor_of[NSCENES][NB];

/* One scene, one backend: ms for steps 1 .. n-1 (the first step builds
 * Box2D's caches and is left out, as Box2D's app does); each step's time
 * lowers floor[] where it is faster. */
static double run(const scene *sc, int backend, int threads, int nsteps, dagrt *rt, double *floor)
{
    b2WorldDef def = b2DefaultWorldDef();
    if (backend == B_DAGRT || backend == B_NODE || backend == B_AGAIN) {
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
    int traced = jobs_trace && (backend == B_DAGRT || backend == B_ENKI) && threads > 1;
    if (traced) {
        jt_backend = backend;
        def.enqueueTask = jt_enqueue;
        def.finishTask = jt_finish;
    }
    b2WorldId w = b2CreateWorld(&def);
    sc->create(w);
    if (sc->step)
        sc->step(w, 0);
    b2World_Step(w, 1.0f / 60.0f, 4);
    step_arg a = {w, rt};
    jt_n = 0;
    dagrt_thread_stats st0[2], st1[2];
    int nst = rt ? dagrt_get_stats(rt, st0, 2) : 0;
    step_on_main = 0;
    atomic_store(&jobs_total, 0);
    atomic_store(&jobs_elsewhere, 0);
    for (int e = 0; e < 4; e++)
        atomic_store(&jobs_by[e / 2][e % 2], 0);
    double t0 = now_ms(), ts = t0;
    for (int i = 1; i < nsteps; i++) {
        if (sc->step)
            sc->step(w, i);
        jt_k = 0;
        jt_step = i;
        if (traced && i < JT_MAX)
            jt_step_t[i][0] = now_ns();
        if (backend == B_NODE) {
            dagrt_group g;
            dagrt_group_init(&g);
            dagrt_spawn(rt, &g, step_task, &a);
            dagrt_group_wait(rt, &g);
        } else {
            b2World_Step(w, 1.0f / 60.0f, 4);
        }
        if (traced && i < JT_MAX)
            jt_step_t[i][1] = now_ns();
        double te = now_ms();
        if (te - ts < floor[i - 1])
            floor[i - 1] = te - ts;
        ts = te;
    }
    double ms = now_ms() - t0;
    if (counters && (backend == B_DAGRT || backend == B_NODE || backend == B_AGAIN) && nst > 0) {
        dagrt_get_stats(rt, st1, 2);
        printf("  counters %-14s %-5s T%d steps %d on-main %d", sc->name,
               backend == B_NODE ? "node" : backend == B_AGAIN ? "again" : "dagrt", threads, nsteps - 1,
               backend == B_NODE ? step_on_main : nsteps - 1);
        printf(" jobs %lu on-other-thread %lu (from t0: %lu on t1; from t1: %lu on t0)", atomic_load(&jobs_total),
               atomic_load(&jobs_elsewhere), atomic_load(&jobs_by[0][1]), atomic_load(&jobs_by[1][0]));
        for (int k = 0; k < nst && k < 2; k++)
            printf(" | t%d tasks %llu steals %llu parks %llu wakes %llu idle %.1fms", k,
                   (unsigned long long)(st1[k].tasks - st0[k].tasks),
                   (unsigned long long)(st1[k].steals - st0[k].steals),
                   (unsigned long long)(st1[k].parks - st0[k].parks),
                   (unsigned long long)(st1[k].wakes - st0[k].wakes),
                   (double)(st1[k].idle_ns - st0[k].idle_ns) / 1e6);
        printf("\n");
    }
    if (traced) {
        jt_report(sc->name, backend == B_ENKI ? "enkiTS" : "dagrt", nsteps - 1);
        if (jobs_csv) {
            FILE *f = fopen(jobs_csv, "a");
            static int runid;
            runid++;
            for (int i = 0; f && i < jt_n; i++)
                fprintf(f, "%d,%s,%s,J,%d,%d,%d,%d,%.0f,%.0f,%.0f,%.0f,%.0f\n", runid, sc->name,
                        backend == B_ENKI ? "enkiTS" : "dagrt", jt[i].step, jt[i].k, jt[i].enq_thread,
                        jt[i].run_thread, jt[i].enq, jt[i].start, jt[i].end, jt[i].fin_begin, jt[i].fin_end);
            for (int i = 1; f && i < nsteps && i < JT_MAX; i++)
                fprintf(f, "%d,%s,%s,S,%d,0,0,0,%.0f,%.0f,0,0,0\n", runid, sc->name,
                        backend == B_ENKI ? "enkiTS" : "dagrt", i, jt_step_t[i][0], jt_step_t[i][1]);
            if (f)
                fclose(f);
        }
    }
    b2DestroyWorld(w);
    return ms;
}

static void empty_task(void *p)
{
    (void)p;
}

/* The node column's own cost per step: its spawn and helping wait around
 * an empty body, from the main thread, as in run(). Median of 5 batches. */
static double wrap_us(dagrt *rt)
{
    double v[5];
    for (int b = 0; b < 5; b++) {
        double t0 = now_ms();
        for (int i = 0; i < 2000; i++) {
            dagrt_group g;
            dagrt_group_init(&g);
            dagrt_spawn(rt, &g, empty_task, NULL);
            dagrt_group_wait(rt, &g);
        }
        v[b] = (now_ms() - t0) * 1e3 / 2000;
    }
    for (int i = 1; i < 5; i++)   /* 5 values: insertion sort */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v[2];
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
            static const char *const names[NB] = {"box2d", "dagrt", "node", "enkiTS", "again"};
            for (int b = 0; b < NB; b++)
                if (!strcmp(nm, names[b]))
                    only_backend = b;
            if (only_backend < 0) {
                fprintf(stderr, "bench_box2d: --backend box2d|dagrt|node|enkiTS|again\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--idle-spin"))
            idle_spin = 1;
        else if (!strcmp(argv[i], "--counters"))
            counters = 1;
        else if (!strcmp(argv[i], "--jobs"))
            jobs_trace = 1;
        else if (!strcmp(argv[i], "--jobs-csv") && i + 1 < argc) {
            jobs_trace = 1;
            jobs_csv = argv[++i];
        }
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            only_threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--steps F] [--scene NAME] [--threads T] [--counters] [--jobs] [--jobs-csv FILE] [--backend B] [--idle-spin]\n", argv[0]);
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
        static double t[NSCENES][NB][MAX_ROUNDS], dist[NSCENES][NB][MAX_ROUNDS];
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
                    if (!floor_of[s][b]) {
                        floor_of[s][b] = malloc(sizeof(double) * (size_t)n);
                        if (!floor_of[s][b])
                            return 1;
                    }
                    if (r == 0)
                        for (int i = 0; i < n; i++)
                            floor_of[s][b][i] = 1e300;
                    t[s][b][r] = run(&scenes[s], b, threads, n, rt, floor_of[s][b]);
                    dist[s][b][r] = threads > 1 ? xcpu_round_trip_ns() : -1;
                }
            }
        double wrap = wrap_us(rt);
        printf("\nthreads %d (libdagrt: %d workers + the main thread); node's task per step (empty body) %.2f us\n",
               threads, threads - 1, wrap);
        printf("%-14s %9s %9s %9s %9s   %11s %11s %10s %11s %6s  %s\n", "scene", "box2d", "dagrt", "node", "enkiTS",
               "dagrt/box2d", "dagrt/enki", "node/dagrt", "again/dagrt", "wrap",
               "per round: node/dagrt, again/dagrt");
        double lg[4] = {0, 0, 0, 0};
        int ns = 0;
        for (int s = 0; s < NSCENES; s++) {
            if (only && strcmp(only, scenes[s].name))
                continue;
            double med[NB];
            for (int b = 0; b < NB; b++) {
                double v[MAX_ROUNDS];
                memcpy(v, t[s][b], sizeof(double) * (size_t)rounds);
                qsort(v, (size_t)rounds, sizeof *v, cmp_d);
                med[b] = v[rounds / 2];
            }
            /* Paired per round: the two runs of one round sat side by side. */
            double pn_lo = 1e9, pn_hi = 0, pa_lo = 1e9, pa_hi = 0;
            for (int r = 0; r < rounds; r++) {
                if (t[s][B_DAGRT][r] <= 0)
                    continue;
                double pn = t[s][B_NODE][r] / t[s][B_DAGRT][r], pa = t[s][B_AGAIN][r] / t[s][B_DAGRT][r];
                pn_lo = pn < pn_lo ? pn : pn_lo;
                pn_hi = pn > pn_hi ? pn : pn_hi;
                pa_lo = pa < pa_lo ? pa : pa_lo;
                pa_hi = pa > pa_hi ? pa : pa_hi;
            }
            double r1 = med[B_DAGRT] / med[B_BOX2D], r2 = med[B_DAGRT] / med[B_ENKI],
                   r3 = med[B_NODE] / med[B_DAGRT], r4 = med[B_AGAIN] / med[B_DAGRT];
            int n = (int)(scenes[s].steps * frac);
            double w = wrap * 1e-3 * (n > 2 ? n - 1 : 1) / med[B_DAGRT];
            printf("%-14s %9.1f %9.1f %9.1f %9.1f   %11.3f %11.3f %10.3f %11.3f %5.1f%%  %.3f-%.3f, %.3f-%.3f\n",
                   scenes[s].name, med[B_BOX2D], med[B_DAGRT], med[B_NODE], med[B_ENKI], r1, r2, r3, r4,
                   100 * w, pn_lo, pn_hi, pa_lo, pa_hi);
            lg[0] += log(r1);
            lg[1] += log(r2);
            lg[2] += log(r3);
            lg[3] += log(r4);
            ns++;
        }
        if (ns)
            printf("%-14s %9s %9s %9s %9s   %11.3f %11.3f %10.3f %11.3f\n", "geomean", "", "", "", "",
                   exp(lg[0] / ns), exp(lg[1] / ns), exp(lg[2] / ns), exp(lg[3] / ns));
        /* The same columns from each step's fastest round (floor_of). */
        if (only_backend < 0)
            printf("floor: per scene the sum over steps of each step's fastest round, ms, and the same ratios\n");
        double lf[4] = {0, 0, 0, 0};
        ns = 0;
        for (int s = 0; s < NSCENES; s++) {
            if ((only && strcmp(only, scenes[s].name)) || only_backend >= 0)
                continue;
            int n = (int)(scenes[s].steps * frac);
            if (n < 2)
                n = 2;
            double f[NB];
            for (int b = 0; b < NB; b++) {
                f[b] = 0;
                for (int i = 0; i < n - 1; i++)
                    f[b] += floor_of[s][b][i];
            }
            double r1 = f[B_DAGRT] / f[B_BOX2D], r2 = f[B_DAGRT] / f[B_ENKI], r3 = f[B_NODE] / f[B_DAGRT],
                   r4 = f[B_AGAIN] / f[B_DAGRT];
            printf("%-14s %9.1f %9.1f %9.1f %9.1f   %11.3f %11.3f %10.3f %11.3f\n", scenes[s].name, f[B_BOX2D],
                   f[B_DAGRT], f[B_NODE], f[B_ENKI], r1, r2, r3, r4);
            lf[0] += log(r1);
            lf[1] += log(r2);
            lf[2] += log(r3);
            lf[3] += log(r4);
            ns++;
        }
        if (ns)
            printf("%-14s %9s %9s %9s %9s   %11.3f %11.3f %10.3f %11.3f\n", "geomean", "", "", "", "",
                   exp(lf[0] / ns), exp(lf[1] / ns), exp(lf[2] / ns), exp(lf[3] / ns));
        if (threads > 1) {
            /* The distance after each run, per column (xcpu_round_trip_ns). */
            static const char *const names[NB] = {"box2d", "dagrt", "node", "enkiTS", "again"};
            printf("cross-CPU round trip after each run, ns, per column: median (min-max), runs over 250 ns:");
            for (int b = 0; b < NB; b++) {
                double v[NSCENES * MAX_ROUNDS];
                int m = 0, far = 0;
                for (int s = 0; s < NSCENES; s++)
                    for (int r = 0; r < rounds; r++)
                        if (t[s][b][r] > 0 && dist[s][b][r] > 0) {
                            v[m++] = dist[s][b][r];
                            far += dist[s][b][r] > 250;
                        }
                if (m == 0)
                    continue;
                qsort(v, (size_t)m, sizeof *v, cmp_d);
                printf("  %s %.0f (%.0f-%.0f) %d/%d", names[b], v[m / 2], v[0], v[m - 1], far, m);
            }
            printf("\n");
            /* Placement apart: per scene the median of the paired ratios
             * (one round's runs) over the rounds whose box2d, dagrt and
             * enkiTS runs all sat near, and over those where all sat far. */
            if (only_backend < 0) {
                printf("paired per round, box2d, dagrt and enkiTS all near (< 250 ns) / all far: rounds, median dagrt/enkiTS, dagrt/box2d\n");
                for (int s = 0; s < NSCENES; s++) {
                    if (only && strcmp(only, scenes[s].name))
                        continue;
                    printf("%-14s", scenes[s].name);
                    for (int want_far = 0; want_far < 2; want_far++) {
                        double re[MAX_ROUNDS], rb[MAX_ROUNDS];
                        int m = 0;
                        for (int r = 0; r < rounds; r++) {
                            double dd = dist[s][B_DAGRT][r], de = dist[s][B_ENKI][r], db = dist[s][B_BOX2D][r];
                            if (dd <= 0 || de <= 0 || db <= 0 || (dd > 250) != want_far || (de > 250) != want_far ||
                                (db > 250) != want_far)
                                continue;
                            re[m] = t[s][B_DAGRT][r] / t[s][B_ENKI][r];
                            rb[m++] = t[s][B_DAGRT][r] / t[s][B_BOX2D][r];
                        }
                        if (m == 0) {
                            printf("   %s: none         ", want_far ? "far" : "near");
                            continue;
                        }
                        qsort(re, (size_t)m, sizeof *re, cmp_d);
                        qsort(rb, (size_t)m, sizeof *rb, cmp_d);
                        printf("   %s: %2d %6.3f %6.3f", want_far ? "far" : "near", m, re[m / 2], rb[m / 2]);
                    }
                    printf("\n");
                }
            }
        }
        enki_fini(&enki);
        dagrt_destroy(rt);
    }
    return 0;
}
