/* policy_scenario.c - the executor's measured choices on the benchmark's
 * 32-node graph with one worker (runtime/exec/exec.c, exec/plan.c), checked by
 * what the frames do, never by how long they take:
 *
 * 1. Empty bodies: the frame is measured too small to share and runs on
 *    the caller alone (exec/serial.c) for good: a quarter of a second of
 *    frames in a row without the worker running a task (a stretch of the
 *    starvation policy below would probe with a helper every 4096 frames
 *    at most); a run from inside a body is still refused (DAGRT_ENESTED).
 *    Then the same graph's bodies become slow: the measured frame leaves
 *    the caller-only path and nodes run on the worker again.
 * 2. The worker kept busy on purpose (a task that spins until released):
 *    its helper never gets to run, so the frames go to the caller alone
 *    (the starvation policy); each frame still runs every node exactly
 *    once, in order, reported to the observer (begin and end) and counted
 *    in the stats; a nested run is refused. Released, the worker runs
 *    nodes again: the policy probes and returns to plan mode.
 *
 * 3. (Linux) The worker blocked in a long system call (a task in poll()
 *    until released): the frames complete, each node once and in order,
 *    none on the worker; released, the worker runs nodes again.
 * 4. (Linux, two CPUs or more) The worker pinned to one CPU and a
 *    competing thread pinned there too, spinning: the helper is runnable
 *    but often descheduled. The frames complete, each node once and in
 *    order; once the competitor stops and the worker may run anywhere
 *    again, it runs nodes again (sharing resumes).
 *
 * Every wait for a measured choice is bounded by wall time (it can only
 * take longer on a loaded machine, never fail by being slow), and each
 * phase checks ordering and exactly-once. */
#if defined(__linux__)
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "bench_frame.h"
#include "frame_check.h"
#include "policy_scenario.h"

/* What the observer saw of each node (the fixture, frame_check.h, counts
 * its runs and checks its order); one line pair each, as there. */
static struct {
    _Alignas(128) _Atomic uint32_t begins, ends;   /* observer events this frame */
    _Atomic int off_caller;                         /* ran on another thread this frame */
} node[BENCH_NODES];
static _Atomic int nested_rc;    /* a nested run's result, 1: not tried */
static _Atomic int try_nested;
static dagrt *the_rt;
/* Set on the thread that runs the scenario: the runtime's main thread. */
static _Thread_local int on_caller;

void (*policy_body_hook)(struct bench_ctx *c, int idx);

dagrt *policy_rt(int workers, const char *who)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = workers;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "%s: dagrt_create_ex: %s\n", who, dagrt_strerror(err));
    return rt;
}

static void body(struct bench_ctx *c, int idx)
{
    if (policy_body_hook) {
        policy_body_hook(c, idx);   /* set and cleared between the scenario's frames */
        return;
    }
    /* relaxed: all these are read after the frame, ordered by its return. */
    if (!on_caller)
        atomic_store_explicit(&node[idx].off_caller, 1, memory_order_relaxed);
    if (idx == 5 && atomic_load_explicit(&try_nested, memory_order_relaxed))
        atomic_store_explicit(&nested_rc, bench_frame_run(the_rt, c), memory_order_relaxed);
    frame_check_body(c, idx);
}

#define NODE(name, idx) \
    void bench_frame_##name(struct bench_ctx *c) { body(c, idx); }
BENCH_FRAME_NODES(NODE)

static void obs_begin(void *u, const dagrt_node_event *e)
{
    (void)u;
    /* relaxed: read after the frame, ordered by its return. */
    if (e->index < BENCH_NODES)
        atomic_fetch_add_explicit(&node[e->index].begins, 1, memory_order_relaxed);
}

static void obs_end(void *u, const dagrt_node_event *e)
{
    (void)u;
    if (e->index < BENCH_NODES)
        atomic_fetch_add_explicit(&node[e->index].ends, 1, memory_order_relaxed);
}

static const dagrt_observer counting = {.node_begin = obs_begin, .node_end = obs_end};

static struct bench_ctx ctx;
/* An instance rather than bench_frame_run's hidden state: its stats. */
static bench_frame_instance_t inst;

/* One frame, checked: it succeeded, every node ran once (and, observed,
 * was reported once each way), the stats say so. Returns the violations;
 * *off: whether any node ran off the caller. */
static int frame(bool observed, int *off)
{
    frame_check_next(&ctx);
    for (int i = 0; i < BENCH_NODES; i++) {
        atomic_store_explicit(&node[i].begins, 0, memory_order_relaxed);
        atomic_store_explicit(&node[i].ends, 0, memory_order_relaxed);
        atomic_store_explicit(&node[i].off_caller, 0, memory_order_relaxed);
    }
    int rc = bench_frame_instance_run(the_rt, &inst, &ctx);
    if (rc != 0) {
        fprintf(stderr, "policy: frame %llu: %s\n", (unsigned long long)ctx.frame, dagrt_strerror(rc));
        return 1;
    }
    int bad = 0;
    *off = 0;
    for (int i = 0; i < BENCH_NODES; i++) {
        unsigned r = frame_check_runs(i);
        unsigned b = atomic_load_explicit(&node[i].begins, memory_order_relaxed);
        unsigned e = atomic_load_explicit(&node[i].ends, memory_order_relaxed);
        if (r != 1 || (observed && (b != 1 || e != 1))) {
            fprintf(stderr, "policy: frame %llu: %s ran %u times, reported %u/%u\n",
                    (unsigned long long)ctx.frame, bench_names[i], r, b, e);
            bad++;
        }
        *off |= atomic_load_explicit(&node[i].off_caller, memory_order_relaxed);
    }
    dagrt_graph_stats st = {0, 0, 0, 0, 0};
    if (dagrt_graph_get_stats(&inst.state, &st) != 0 || st.last_ran != BENCH_NODES || st.last_skipped != 0) {
        fprintf(stderr, "policy: frame %llu: stats say %u ran\n", (unsigned long long)ctx.frame,
                st.last_ran);
        bad++;
    }
    return bad;
}

/* Frames until one ran a node off the caller, for at most `secs` seconds.
 * Returns 1 if that happened; adds violations to *bad. */
static int until_off_caller(bool observed, double secs, int *bad)
{
    double t0 = bench_now_ns();
    while (bench_now_ns() - t0 < secs * 1e9) {
        int off;
        *bad += frame(observed, &off);
        if (off)
            return 1;
    }
    return 0;
}

/* Empty frames until, for `quiet` seconds in a row, they all ran on the
 * caller alone and the worker ran no task (so no helper was offered a run,
 * as a stretch of plan mode's starvation policy would every 4096 frames at
 * most: a worker that stays unscheduled that long after a wake-up is not
 * plausible), for at most `secs` seconds. Returns 1 if that happened. */
static int serial_frames(double quiet, double secs, int *bad)
{
    double t0 = bench_now_ns(), since = t0;
    uint64_t last = UINT64_MAX;
    while (bench_now_ns() - t0 < secs * 1e9) {
        int off;
        *bad += frame(false, &off);
        dagrt_thread_stats ts[2];
        if (dagrt_get_stats(the_rt, ts, 2) < 2)
            return 0;
        double now = bench_now_ns();
        if (off || ts[1].tasks != last)
            since = now;
        last = ts[1].tasks;
        if (now - since >= quiet * 1e9)
            return 1;
    }
    return 0;
}

/* Checks that a body's run of the same graph is refused. */
static int nested_refused(const char *where)
{
    atomic_store(&nested_rc, 1);
    atomic_store(&try_nested, 1);
    int off, bad = frame(false, &off);
    atomic_store(&try_nested, 0);
    int rc = atomic_load(&nested_rc);
    if (rc != DAGRT_ENESTED) {
        fprintf(stderr, "policy: %s: a run from a body returned %d, not DAGRT_ENESTED\n", where, rc);
        bad++;
    }
    return bad;
}

/* Whether the caller-only phase of empty frames must be seen: under
 * ThreadSanitizer an instrumented empty body costs more than the bound
 * (EXEC_SERIAL_NS_PER_NODE), so there the frame rightly does not run
 * serial. */
#if defined(__SANITIZE_THREAD__)
#define SERIAL_EXPECTED 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SERIAL_EXPECTED 0
#endif
#endif
#ifndef SERIAL_EXPECTED
#define SERIAL_EXPECTED 1
#endif

#if defined(__linux__)
/* 3: holds the worker in a system call (poll with no descriptors) until
 * released; on the main thread (a wait ran it there) it only says so. */
void policy_hold_in_syscall(void)
{
    /* acquire: a plain flag between the scenario's threads. */
    while (atomic_load_explicit(&frame_check_hold, memory_order_acquire))
        poll(NULL, 0, 5);
}

static cpu_set_t all_cpus;

int policy_other_cpu(int avoid)
{
    if (sched_getaffinity(0, sizeof all_cpus, &all_cpus) != 0 || CPU_COUNT(&all_cpus) < 2)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all_cpus) && c != avoid)
            return c;
    return -1;
}

bool policy_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu >= 0)
        CPU_SET(cpu, &set);
    else
        set = all_cpus;
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

static _Atomic int compete;
static pthread_t competitor_thread;

static void *competitor(void *arg)
{
    (void)policy_pin_self(*(int *)arg);
    while (atomic_load_explicit(&compete, memory_order_relaxed))   /* relaxed: a stop flag */
        ;
    return NULL;
}

int policy_compete_start(int cpu)
{
    static int on;
    on = cpu;
    atomic_store(&compete, 1);
    if (pthread_create(&competitor_thread, NULL, competitor, &on) != 0) {
        atomic_store(&compete, 0);
        return -1;
    }
    return 0;
}

void policy_compete_stop(void)
{
    atomic_store(&compete, 0);
    pthread_join(competitor_thread, NULL);
}

static _Atomic int blocked_on_worker;
static void blocker(void *arg)
{
    (void)arg;
    if (dagrt_on_main_thread(the_rt))
        return;
    /* release: pairs with the scenario's acquire loads of the flag. */
    atomic_store_explicit(&blocked_on_worker, 1, memory_order_release);
    policy_hold_in_syscall();
}

/* 4: pins the calling worker to CPU `pin_cpu` (or back to every CPU of
 * the process, pin_cpu < 0); on the main thread it does nothing. */
static int pin_cpu;
static _Atomic int pinned_on_worker;
static void pinner(void *arg)
{
    (void)arg;
    if (dagrt_on_main_thread(the_rt))
        return;
    if (policy_pin_self(pin_cpu))
        atomic_store(&pinned_on_worker, 1);
}

/* Runs fn as a task until it has run on the worker (a group wait may run
 * it on the main thread instead), for at most 10 s; returns whether it did. */
static int on_worker(void (*fn)(void *), _Atomic int *ran)
{
    atomic_store(ran, 0);
    double t0 = bench_now_ns();
    while (!atomic_load(ran) && bench_now_ns() - t0 < 10e9) {
        dagrt_group g;
        dagrt_group_init(&g);
        if (dagrt_spawn(the_rt, &g, fn, NULL) != 0 || dagrt_group_wait(the_rt, &g) != 0)
            return 0;
    }
    return atomic_load(ran);
}

/* Frames for `n` frames, checked; with none off the caller if `none_off`. */
static int frames_checked(int n, bool none_off, const char *what)
{
    int bad = 0;
    for (int f = 0; f < n; f++) {
        int off;
        bad += frame(false, &off);
        if (none_off && off) {
            fprintf(stderr, "policy: a node ran off the caller while %s\n", what);
            bad++;
        }
    }
    return bad;
}

static int blocked_and_pinned(void)
{
    int bad = 0;
    atomic_store(&frame_check_body_ns, 2000);
    /* 3. Blocked in a system call. */
    dagrt_group g;
    dagrt_group_init(&g);
    atomic_store(&frame_check_hold, 1);
    atomic_store(&blocked_on_worker, 0);
    double t0 = bench_now_ns();
    /* Until the blocker started on the worker (respawned if a wait of
     * ours ran it on the main thread instead). */
    while (!atomic_load(&blocked_on_worker) && bench_now_ns() - t0 < 10e9) {
        if (dagrt_spawn(the_rt, &g, blocker, NULL) != 0)
            return bad + 1;
        for (int k = 0; k < 20 && !atomic_load(&blocked_on_worker); k++) {
            int off;
            bad += frame(false, &off);
        }
    }
    int blocked = atomic_load(&blocked_on_worker);
    printf("policy: the worker %s blocked in a system call\n", blocked ? "was" : "was not");
    if (blocked)
        bad += frames_checked(300, true, "the worker was blocked in a system call");
    atomic_store(&frame_check_hold, 0);
    if (dagrt_group_wait(the_rt, &g) != 0)
        bad++;
    if (!until_off_caller(false, 60.0, &bad)) {
        fprintf(stderr, "policy: the worker never ran a node again after its system call\n");
        bad++;
    }

    /* 4. A competitor pinned to the worker's CPU. */
    pin_cpu = policy_other_cpu(sched_getcpu());
    if (pin_cpu < 0) {
        printf("policy: fewer than two CPUs: no competitor phase\n");
        return bad;
    }
    if (!on_worker(pinner, &pinned_on_worker)) {
        printf("policy: could not pin the worker: no competitor phase\n");
        return bad;
    }
    if (policy_compete_start(pin_cpu) != 0)
        return bad + 1;
    printf("policy: the worker and a competing thread pinned to CPU %d\n", pin_cpu);
    bad += frames_checked(2000, false, "");
    policy_compete_stop();
    int keep = pin_cpu;
    pin_cpu = -1;
    if (!on_worker(pinner, &pinned_on_worker)) {
        fprintf(stderr, "policy: could not unpin the worker from CPU %d\n", keep);
        bad++;
    }
    if (!until_off_caller(false, 60.0, &bad)) {
        fprintf(stderr, "policy: the worker never ran a node again after the competitor stopped\n");
        bad++;
    }
    return bad;
}
#endif

int policy_scenario(void)
{
    the_rt = policy_rt(1, "policy");   /* plan mode for frames worth sharing */
    if (!the_rt)
        return 1;
    on_caller = 1;
    bench_frame_instance_init(&inst);
    int bad = 0;

    /* 1. Tiny, then slow. */
    atomic_store(&frame_check_body_ns, 0);
    int serial = serial_frames(0.25, 20.0, &bad);
    printf("policy: empty frames %s on the caller alone\n", serial ? "ran" : "did not run");
    if (!serial && SERIAL_EXPECTED) {
        fprintf(stderr, "policy: empty frames never ran on the caller alone\n");
        bad++;
    }
    bad += nested_refused("empty frames");
    atomic_store(&frame_check_body_ns, 20000);
    if (!until_off_caller(false, 60.0, &bad)) {
        fprintf(stderr, "policy: slow frames never ran a node on the worker\n");
        bad++;
    }

    /* 2. The worker held, then released. */
    atomic_store(&frame_check_body_ns, 2000);
    dagrt_group g;
    dagrt_group_init(&g);
    if (frame_check_hold_worker(the_rt, &g) != 0) {
        fprintf(stderr, "policy: spawn failed\n");
        dagrt_destroy(the_rt);
        return bad + 1;
    }
    /* The holder may only start once this thread waits (in the group wait
     * below); frames meanwhile are still checked. */
    double t0 = bench_now_ns();
    while (!atomic_load(&frame_check_holding) && bench_now_ns() - t0 < 10e9) {
        int off;
        bad += frame(false, &off);
    }
    int held = atomic_load(&frame_check_holding);
    printf("policy: the worker %s held\n", held ? "was" : "was not");
    if (dagrt_set_observer(the_rt, &counting, NULL) != 0)
        bad++;
    for (int f = 0; f < 300; f++) {
        int off;
        bad += frame(true, &off);
        if (held && off) {
            fprintf(stderr, "policy: a node ran off the caller while the worker was held\n");
            bad++;
        }
    }
    bad += nested_refused("worker held");
    atomic_store(&frame_check_hold, 0);
    if (!until_off_caller(true, 60.0, &bad)) {
        fprintf(stderr, "policy: the released worker never ran a node again\n");
        bad++;
    }
    if (dagrt_group_wait(the_rt, &g) != 0)
        bad++;
    dagrt_set_observer(the_rt, NULL, NULL);
#if defined(__linux__)
    bad += blocked_and_pinned();
#endif

    bad += atomic_load(&frame_check_errors);
    printf("policy: %d errors (%d ordering)\n", bad, atomic_load(&frame_check_errors));
    dagrt_destroy(the_rt);
    return bad;
}
