/* policy_dyn.c - the starvation rule on the dynamic executor (two workers:
 * runtime/exec/policy.c, exec/dynamic.c), for each way a frame runs there:
 * dagrt_graph_run, a started instance (start, a little caller work, wait)
 * and a depth-2 pipeline. Checked by what the frames do, never by how long
 * they take:
 *
 * (a) Both workers blocked in a long system call (tasks in poll() until
 *     released): every frame completes, each node exactly once and after
 *     its inputs (and, pipelined, after its own last frame), none off the
 *     caller (nothing else can run them); released, nodes run off the
 *     caller again (the executor shares again).
 * (b) (Linux, two CPUs or more) Both workers pinned to one CPU beside a
 *     competing thread that spins there: the drainers are runnable but often
 *     descheduled, holding what they popped. Every frame completes,
 *     correct, each within a generous bound (seconds); once the competitor
 *     stops and the workers may run anywhere, they run nodes again.
 * (d) (first) A drainer holding a node: its body sleeps 30 ms on a drainer,
 *     as a drainer preempted there would: the frame completes; the policy
 *     finds it held and keeps the next frames on the caller
 *     (dagrt_graph_stats.stretch_runs; dagrt_graph_run's next frame runs no
 *     node off the caller), then probes and shares again.
 * (c) An idle machine with parked workers: rounds of a pause (long enough
 *     for every worker to park) and a few frames; the drainers keep running
 *     nodes in those rounds (a slow wake-up is not a starved drainer, so the
 *     graph does not settle on the caller alone).
 *
 * Each wait for a measured choice is bounded by wall time (it can only
 * take longer on a loaded machine, never fail by being slow). */
#if defined(__linux__)
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_frame.h"
#include "frame_check.h"
#include "policy_scenario.h"

enum { M_RUN, M_INST, M_PIPE, M_MODES };
static const char *const mode_name[M_MODES] = {"G_run", "started instance", "pipeline (depth 2)"};

/* Per node: its runs so far (one line each, as in frame_check.c). */
static struct {
    _Alignas(128) _Atomic uint64_t runs;
} cnt[BENCH_NODES];
static _Atomic uint64_t off_runs;   /* node runs off the caller, all frames */
static _Atomic int errors;          /* order or exactly-once violations in bodies */
static _Atomic long body_ns = 2000;
static _Thread_local int on_caller;

/* (d): the node whose next run on a drainer sleeps (HOLD_MS), once armed. */
#define HOLD_NODE (BENCH_NODES / 2)
#define HOLD_MS 30
static _Atomic int hold_armed, held_on_worker;
static void hold_sleep(void)
{
#if defined(__linux__)
    poll(NULL, 0, HOLD_MS);
#else
    frame_check_spin_ns(HOLD_MS * 1000000L);
#endif
}

/* The k-th run of node idx: its inputs have run k times at least (their
 * k-th frame is done), and no other run of it is in progress or lost. */
static void dyn_body(struct bench_ctx *c, int idx)
{
    (void)c;
    /* relaxed: own count, written only by this node's runs, which are
     * ordered one after the other by the executor. */
    uint64_t k = atomic_load_explicit(&cnt[idx].runs, memory_order_relaxed) + 1;
    for (int j = 0; j < 2; j++) {
        int p = bench_preds[idx][j];
        /* acquire: pairs with the predecessor's release below. */
        if (p >= 0 && atomic_load_explicit(&cnt[p].runs, memory_order_acquire) < k)
            atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
    }
    if (!on_caller) {
        atomic_fetch_add_explicit(&off_runs, 1, memory_order_relaxed);   /* relaxed: a count read after frames */
        int armed = 1;
        /* (d): this run, on a drainer, stands for one preempted in a body. */
        if (idx == HOLD_NODE && atomic_compare_exchange_strong(&hold_armed, &armed, 0)) {
            hold_sleep();
            atomic_store(&held_on_worker, 1);
        }
    }
    /* relaxed: a setting changed between frames. */
    long ns = atomic_load_explicit(&body_ns, memory_order_relaxed);
    if (ns > 0)
        frame_check_spin_ns(ns);
    /* release: the successors' acquire loads above see this run's work. */
    if (atomic_fetch_add_explicit(&cnt[idx].runs, 1, memory_order_release) != k - 1)
        atomic_fetch_add_explicit(&errors, 1, memory_order_relaxed);
}

static dagrt *rt;
static struct bench_ctx ctx;
static bench_frame_instance_t inst;
static bench_frame_pipeline_t pipe_;
static uint64_t frames;   /* frames run or submitted so far (all modes) */
static int mode;
static int bad;

#define FAIL(...)                                                                        \
    do {                                                                                 \
        fprintf(stderr, "policy_dyn: %s: ", mode_name[mode]);                            \
        fprintf(stderr, __VA_ARGS__);                                                    \
        fputc('\n', stderr);                                                             \
        bad++;                                                                           \
    } while (0)

/* Every node has run exactly `frames` times. */
static void check_counts(const char *when)
{
    for (int i = 0; i < BENCH_NODES; i++) {
        uint64_t r = atomic_load_explicit(&cnt[i].runs, memory_order_relaxed);   /* relaxed: after the frames */
        if (r != frames) {
            FAIL("%s: %s ran %llu times in %llu frames", when, bench_names[i],
                 (unsigned long long)r, (unsigned long long)frames);
            return;
        }
    }
}

/* A frame's bound: generous (a loaded machine), but a frame held hostage
 * by a drainer that never runs would exceed it. */
#define FRAME_BOUND_NS 20e9

/* One frame in the current mode, checked. */
static void frame(void)
{
    double t0 = bench_now_ns();
    int rc = 0;
    ctx.frame++;
    if (mode == M_RUN) {
        rc = bench_frame_instance_run(rt, &inst, &ctx);
    } else if (mode == M_INST) {
        rc = bench_frame_instance_start(rt, &inst, &ctx);
        if (rc == 0) {
            frame_check_spin_ns(5000);   /* the caller's own work meanwhile */
            rc = bench_frame_instance_wait(rt, &inst);
        }
    } else {
        rc = bench_frame_pipeline_submit(rt, &pipe_, &ctx);
    }
    if (rc != 0) {
        FAIL("frame %llu: %s", (unsigned long long)frames, dagrt_strerror(rc));
        return;
    }
    frames++;
    if (bench_now_ns() - t0 > FRAME_BOUND_NS)
        FAIL("frame %llu took more than %.0f s", (unsigned long long)frames, FRAME_BOUND_NS / 1e9);
    if (mode != M_PIPE)
        check_counts("after a frame");
}

/* The pipeline's frames in flight, waited for (other modes: nothing). */
static void settle(const char *when)
{
    if (mode == M_PIPE) {
        int rc = bench_frame_pipeline_drain(rt, &pipe_);
        if (rc != 0)
            FAIL("drain: %s", dagrt_strerror(rc));
    }
    check_counts(when);
}

static uint64_t off_now(void) { return atomic_load(&off_runs); }

/* Frames until a node runs off the caller, for at most secs seconds. */
static int until_shared(double secs)
{
    uint64_t before = off_now();
    double t0 = bench_now_ns();
    while (bench_now_ns() - t0 < secs * 1e9) {
        for (int k = 0; k < 8; k++)
            frame();
        settle("sharing again");
        if (off_now() != before)
            return 1;
    }
    return 0;
}

/* ------------------------------------------ tasks that must run on a worker */

/* Tasks that must run on a worker: one that runs on the main thread (a
 * wait of ours ran it) only says so, and is spawned again. */
#if defined(__linux__)
static _Atomic int on_workers, on_main;
static _Atomic int phase_gen;        /* which pinning phase a worker joined */
static _Thread_local int joined_gen;

static void blocker(void *arg)
{
    (void)arg;
    if (dagrt_on_main_thread(rt)) {
        atomic_fetch_add(&on_main, 1);
        return;
    }
    atomic_fetch_add(&on_workers, 1);
    policy_hold_in_syscall();
}

static int pin_cpu = -1;
static void pinner(void *arg)
{
    (void)arg;
    if (dagrt_on_main_thread(rt)) {
        atomic_fetch_add(&on_main, 1);
        return;
    }
    int gen = atomic_load(&phase_gen);
    if (policy_pin_self(pin_cpu) && joined_gen != gen) {
        joined_gen = gen;
        atomic_fetch_add(&on_workers, 1);   /* one count per worker and phase */
        /* Held until the other worker has joined too (at most 10 s), so
         * that it is the one that takes the next task. */
        double t0 = bench_now_ns();
        while (atomic_load(&on_workers) < 2 && bench_now_ns() - t0 < 10e9)
            poll(NULL, 0, 1);
    } else {
        atomic_fetch_add(&on_main, 1);      /* this worker again: spawn another */
    }
}

/* Spawns fn until `want` workers have run it (each task spawned once it
 * is known where the last one ran), running frames meanwhile: the tasks
 * sit in the main thread's queue and the workers take them. At most 10 s. */
static int on_each_worker(void (*fn)(void *), dagrt_group *g, int want, bool frames_between)
{
    atomic_store(&on_workers, 0);
    atomic_store(&on_main, 0);
    int spawned = 0;
    double t0 = bench_now_ns();
    while (atomic_load(&on_workers) < want && bench_now_ns() - t0 < 10e9) {
        /* Spawned, less those that ran where they were of no use. */
        if (spawned - atomic_load(&on_main) < want) {
            if (dagrt_spawn(rt, g, fn, NULL) != 0)
                return 0;
            spawned++;
        }
        if (frames_between)
            frame();
        else {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return atomic_load(&on_workers) >= want;
}

/* (a) */
static void blocked(void)
{
    dagrt_group g;
    dagrt_group_init(&g);
    atomic_store(&frame_check_hold, 1);
    int both = on_each_worker(blocker, &g, 2, true);
    settle("while blocking the workers");
    if (!both) {
        printf("policy_dyn: %s: the workers could not both be blocked: phase skipped\n",
               mode_name[mode]);
    } else {
        uint64_t before = off_now();
        for (int f = 0; f < 300; f++)
            frame();
        settle("workers blocked");
        if (off_now() != before)
            FAIL("%llu nodes ran off the caller while both workers were blocked",
                 (unsigned long long)(off_now() - before));
        printf("policy_dyn: %s: 300 frames with both workers blocked in poll()\n", mode_name[mode]);
    }
    atomic_store(&frame_check_hold, 0);
    if (dagrt_group_wait(rt, &g) != 0)
        FAIL("blockers' group wait");
    if (!until_shared(60.0))
        FAIL("no node ran off the caller again after the workers' system calls");
}

/* (b) */
static void pinned(void)
{
    int here = sched_getcpu();
    pin_cpu = policy_other_cpu(here);
    if (pin_cpu < 0) {
        printf("policy_dyn: fewer than two CPUs: no competitor phase\n");
        return;
    }
    dagrt_group g;
    dagrt_group_init(&g);
    atomic_fetch_add(&phase_gen, 1);
    if (!on_each_worker(pinner, &g, 2, false) || dagrt_group_wait(rt, &g) != 0) {
        printf("policy_dyn: could not pin the workers: no competitor phase\n");
        pin_cpu = -1;
        atomic_fetch_add(&phase_gen, 1);
        (void)on_each_worker(pinner, &g, 2, false);
        (void)dagrt_group_wait(rt, &g);
        return;
    }
    (void)policy_pin_self(here);   /* the caller off the competitor's CPU */
    if (policy_compete_start(pin_cpu) != 0) {
        FAIL("pthread_create");
        return;
    }
    uint64_t before = off_now();
    double t0 = bench_now_ns();
    int n = 0;
    for (; n < 2000 && bench_now_ns() - t0 < 5e9; n++)
        frame();
    settle("workers beside a competitor");
    printf("policy_dyn: %s: %d frames with both workers pinned to CPU %d beside a competing "
           "thread (%.1f%% of node runs off the caller)\n",
           mode_name[mode], n, pin_cpu,
           100.0 * (double)(off_now() - before) / ((double)n * BENCH_NODES));
    policy_compete_stop();
    int keep = pin_cpu;
    pin_cpu = -1;
    atomic_fetch_add(&phase_gen, 1);
    if (!on_each_worker(pinner, &g, 2, false))
        FAIL("could not unpin the workers from CPU %d", keep);
    (void)dagrt_group_wait(rt, &g);
    (void)policy_pin_self(-1);
    if (!until_shared(60.0))
        FAIL("no node ran off the caller again after the competitor stopped");
}
#endif

/* The run policy's stretches so far (dagrt_graph_stats.stretch_runs) on
 * this mode's states. */
static uint64_t solo_now(void)
{
    uint64_t n = 0;
    dagrt_graph_stats st;
    if (mode == M_PIPE) {
        for (int k = 0; k < 2; k++)
            if (dagrt_graph_get_stats(&pipe_.frames[k].state, &st) == 0)
                n += st.stretch_runs;
    } else if (dagrt_graph_get_stats(&inst.state, &st) == 0) {
        n = st.stretch_runs;
    }
    return n;
}

/* (d) A drainer that holds a node: frames until one of them ran the hold
 * node on a drainer (it sleeps HOLD_MS there, the caller waiting for it),
 * then a few frames: the policy found the frame held and ran frames on
 * the caller alone (its stats count them; for dagrt_graph_run the next
 * frame ran no node off the caller at all); then it shares again. Up to 5
 * tries: a held frame that is a stretch's first probe is only judged by
 * the probe after it. */
static void hostage(void)
{
    bool solo = false;
    for (int t = 0; t < 5 && !solo; t++) {
        uint64_t before = solo_now();
        atomic_store(&held_on_worker, 0);
        atomic_store(&hold_armed, 1);
        double t0 = bench_now_ns();
        while (!atomic_load(&held_on_worker) && bench_now_ns() - t0 < 20e9) {
            frame();
            settle("holding a node");
        }
        atomic_store(&hold_armed, 0);
        if (!atomic_load(&held_on_worker)) {
            printf("policy_dyn: %s: the hold node never ran on a drainer: phase skipped\n",
                   mode_name[mode]);
            return;
        }
        /* This frame's own count: a stretch begun by a frame before the
         * held one (a loaded machine starves drainers by itself) may be at
         * its probes, which share. */
        uint64_t off = off_now(), solo0 = solo_now();
        frame();
        if (mode == M_RUN && solo_now() != solo0 && off_now() != off)
            FAIL("the frame after a held one ran a node off the caller, yet the policy kept it there");
        for (int f = 0; f < 4; f++)
            frame();
        settle("after a held frame");
        solo = solo_now() != before;
    }
    printf("policy_dyn: %s: a node held %d ms by a drainer %s the frames after it on the caller\n",
           mode_name[mode], HOLD_MS, solo ? "put" : "did not put");
    if (!solo)
        FAIL("a frame held by a drainer never made the policy keep frames on the caller");
    if (!until_shared(60.0))
        FAIL("no node ran off the caller again after the held frames");
}

/* (c) Rounds of a pause (the workers park: they poll for about 50 us
 * first) and a few frames; at least `want` rounds must see a node off the
 * caller, within 60 s. */
static void idle_rounds(int want)
{
    int shared = 0, rounds = 0;
    double t0 = bench_now_ns();
    while (shared < want && bench_now_ns() - t0 < 60e9) {
        struct timespec ts = {0, 3000000};
        nanosleep(&ts, NULL);
        uint64_t before = off_now();
        for (int f = 0; f < 20; f++)
            frame();
        settle("idle rounds");
        shared += off_now() != before;
        rounds++;
    }
    printf("policy_dyn: %s: %d of %d rounds after a pause ran nodes off the caller\n",
           mode_name[mode], shared, rounds);
    if (shared < want)
        FAIL("only %d rounds after a pause (of %d) ran a node off the caller: settled serial", shared,
             rounds);
}

int policy_dyn_scenario(void)
{
    rt = policy_rt(2, "policy_dyn");   /* the dynamic executor for every mode */
    if (!rt)
        return 1;
    on_caller = 1;
    policy_body_hook = dyn_body;
    for (mode = 0; mode < M_MODES; mode++) {
        /* A fresh instance (or pipeline) per mode: its own policy state. */
        if (bench_frame_instance_init(&inst) != 0 || bench_frame_pipeline_init(&pipe_, 2) != 0) {
            FAIL("init");
            break;
        }
        atomic_store(&body_ns, 2000);
        if (!until_shared(60.0))
            FAIL("no node ever ran off the caller");
        hostage();
#if defined(__linux__)
        blocked();
        pinned();
#endif
        idle_rounds(10);
        settle("end");
    }
    policy_body_hook = NULL;
    int e = atomic_load(&errors);
    if (e)
        fprintf(stderr, "policy_dyn: %d order or exactly-once violations in bodies\n", e);
    bad += e;
    printf("policy_dyn: %d errors in %llu frames\n", bad, (unsigned long long)frames);
    dagrt_destroy(rt);
    return bad;
}
