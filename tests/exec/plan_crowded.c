/* plan_crowded.c - plan mode beside a busy thread on its worker's CPU
 * (runtime/exec/crowd.c; exec/plan.c, "a shared CPU"): the entry
 * plan_crowded of exec_list.h (Linux: thread affinity, thread CPU clocks).
 *
 * The runtime's one worker and a busy thread share one CPU (both made
 * while the main thread's mask was that CPU alone), and the caller runs on
 * another (its mask set to it afterwards; placement NONE, so the runtime
 * moves nobody). The worker's helper runs in the scheduler's slices,
 * milliseconds on and off, so the caller often waits for a node the helper
 * claimed and then lost its CPU with. The graph: a root, CROWD_MIDS middle
 * tasks of CROWD_US (their declared cost), a sink after them, run as
 * started runs (dagrt_graph_start, dagrt_graph_wait: always shared with
 * the worker, whatever the run policy would do with dagrt_graph_run).
 *
 * What must hold: the caller does not poll through its partner's lost
 * time. Of its time outside its own bodies that was up to it (on the CPU,
 * or asleep; the time it waited for a CPU, the run delay, is the
 * machine's), it spends at least CROWD_ASLEEP_PCT percent asleep
 * (/proc/thread-self/schedstat: wall time less CPU time less run delay).
 * A wait that polls, yielding now and then, never sleeps (main at 1264a79:
 * 0.0%, failing, in four runs on a loaded 2-core machine); one that steps
 * off the CPU once it is overdue slept 31-62% there (36-41% under TSan). Every task once per
 * frame, in order; the same task of consecutive frames in frame order. No
 * duration is asserted. */
#if defined(__linux__)
#define _GNU_SOURCE   /* sched_setaffinity, CPU_* */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "dagrt.h"
#include "pipe2.h"
#include "plan_crowded.h"

#define CROWD_MIDS 6
#define CROWD_NODES (CROWD_MIDS + 2)
#define CROWD_US 20
#define CROWD_WARM 100
#define CROWD_FRAMES 2000
#define CROWD_ASLEEP_PCT 10

static pipe2_graph crowd;
static dagrt *the_rt;
/* The caller's CPU and wall time in its own bodies (ns); tasks the worker ran. */
static uint64_t caller_body_ns, caller_body_wall;
static _Atomic unsigned on_worker;
static _Atomic int busy_stop;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The calling thread's time on a CPU and waiting for one (run delay), ns,
 * from /proc/thread-self/schedstat; false where it cannot be read. */
static bool sched_ns(uint64_t *oncpu, uint64_t *delay)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return false;
    unsigned long long a, b;
    bool ok = fscanf(f, "%llu %llu", &a, &b) == 2;
    fclose(f);
    *oncpu = a;
    *delay = b;
    return ok;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Checked (pipe2_enter, pipe2_leave) around its work; the caller's time
 * in it measured. */
static void crowd_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    bool worker = dagrt_thread_index(the_rt) != 0;
    uint64_t t0 = worker ? 0 : cpu_ns(), w0 = worker ? 0 : wall_ns();
    if (worker)
        atomic_fetch_add(&on_worker, 1);
    bench_spin_us(CROWD_US);
    if (!worker) {
        caller_body_ns += cpu_ns() - t0;
        caller_body_wall += wall_ns() - w0;
    }
    pipe2_leave(c, i);
}

#define TRAMP(i) static void crowd_t##i(void *c) { crowd_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn crowd_fns[CROWD_NODES] = {crowd_t0, crowd_t1, crowd_t2, crowd_t3,
                                                     crowd_t4, crowd_t5, crowd_t6, crowd_t7};

/* A root, CROWD_MIDS middle tasks, a sink. */
static const dagrt_graph *crowd_table(void)
{
    pipe2_fan(&crowd, "plan_crowded", CROWD_NODES, NULL, crowd_fns, CROWD_US);
    pipe2_reset(&crowd);
    return &crowd.g;
}

static void *busy_main(void *arg)
{
    (void)arg;
    volatile uint64_t x = 1;
    while (!atomic_load_explicit(&busy_stop, memory_order_relaxed))   /* relaxed: a stop flag */
        x = x * 6364136223846793005u + 1;
    return NULL;
}

/* Each phase's graph state and frame context, made afresh by each
 * (dagrt_graph_state_init) and released at its end; they outlive the
 * frames (read until the next run): static. */
static dagrt_graph_state st;
static dagrt_node_state nst[CROWD_NODES];
static pipe2_frame ctx = {.graph = &crowd};

/* Started run f of g on st (context ctx), waited for and checked (every
 * task once, in order: pipe2). 0, or the violations seen. */
static int started_frame(const char *who, const dagrt_graph *g, int f)
{
    pipe2_store(&ctx, &f);
    int rc = dagrt_graph_start(the_rt, g, &st, &ctx, NULL, NULL);
    if (rc == 0)
        rc = dagrt_graph_wait(the_rt, &st);
    if (rc != 0) {
        fprintf(stderr, "%s: frame %d: %s\n", who, f, dagrt_strerror(rc));
        return 1;
    }
    pipe2_drop(&ctx);
    return atomic_load(&crowd.frames_bad);
}

/* Sets the calling thread's mask to CPU a, and b too where b >= 0. */
static bool mask_self(int a, int b)
{
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(a, &m);
    if (b >= 0)
        CPU_SET(b, &m);
    return sched_setaffinity(0, sizeof m, &m) == 0;
}

/* The calling thread's mask into was and its first two CPUs into cpus:
 * 1; 0 with fewer than two (said: the scenario passes); -1 on an error. */
static int first_two_cpus(const char *who, cpu_set_t *was, int cpus[2])
{
    int n = 0;
    if (sched_getaffinity(0, sizeof *was, was) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, was))
            cpus[n++] = c;
    if (n < 2)
        printf("%s: fewer than 2 CPUs to run on: nothing to test (passes)\n", who);
    return n < 2 ? 0 : 1;
}

/* The frames (see the top). 0, or the violations seen. */
static int crowd_frames(const dagrt_graph *g)
{
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    int bad = 0;
    uint64_t w0 = 0, on0 = 0, de0 = 0, w1 = 0, on1 = 0, de1 = 0;
    bool sched = true;
    for (int f = 0; f < CROWD_WARM + CROWD_FRAMES && bad == 0; f++) {
        if (f == CROWD_WARM) {
            caller_body_ns = caller_body_wall = 0;
            atomic_store(&on_worker, 0);
            sched = sched_ns(&on0, &de0);
            w0 = wall_ns();
        }
        bad = started_frame("plan_crowded", g, f);
    }
    w1 = wall_ns();
    sched = sched && sched_ns(&on1, &de1);
    dagrt_graph_state_fini(&st);
    if (bad)
        return bad;
    unsigned w = atomic_load(&on_worker);
    if (!sched) {
        printf("plan_crowded: no /proc/thread-self/schedstat here: the frames ran, nothing "
               "measured (passes)\n");
        return 0;
    }
    /* Outside its bodies (which never sleep): the caller's wall time, and
     * how it was spent: on the CPU, waiting for one, asleep. */
    uint64_t wall = w1 - w0, oncpu = on1 - on0, delay = de1 - de0;
    uint64_t waits = wall > caller_body_wall ? wall - caller_body_wall : 0;
    uint64_t asleep = wall > oncpu + delay ? wall - oncpu - delay : 0;
    uint64_t wcpu = oncpu > caller_body_ns ? oncpu - caller_body_ns : 0;
    /* Of the caller's time outside its bodies that was up to it (the
     * run delay is the machine's), the share it slept. */
    double pa = asleep + wcpu ? 100.0 * (double)asleep / (double)(asleep + wcpu) : 0.0;
    printf("plan_crowded: %d frames in %.1f ms, %u of %d tasks on the worker; the caller "
           "outside its bodies %.1f ms: on the CPU %.1f ms, waiting for one %.1f ms, asleep "
           "%.1f ms (%.1f%% of asleep and on the CPU, at least %d%%)\n",
           CROWD_FRAMES, (double)wall / 1e6, w, CROWD_FRAMES * CROWD_NODES, (double)waits / 1e6,
           (double)wcpu / 1e6, (double)delay / 1e6, (double)asleep / 1e6, pa, CROWD_ASLEEP_PCT);
    if (w < CROWD_FRAMES / 10) {
        fprintf(stderr, "plan_crowded: the worker ran %u tasks in %d frames: too few shared "
                "frames to say anything\n", w, CROWD_FRAMES);
        return 1;
    }
    if (pa < CROWD_ASLEEP_PCT) {
        fprintf(stderr, "plan_crowded: the caller slept %.1f%% of its time outside its bodies "
                "(at least %d%%): its waits kept polling while the worker had no CPU\n", pa,
                CROWD_ASLEEP_PCT);
        return 1;
    }
    return 0;
}

/* The busy thread beside the runtime's one worker on one CPU (both made
 * while the caller's mask was that CPU alone; placement NONE), the caller
 * alone on another: `frames` run there (0, or the violations seen);
 * `crowding`: the runtime's crowd_frames. */
static int beside_busy(const char *who, dagrt_crowd_frames crowding, int (*frames)(void))
{
    cpu_set_t was;
    int cpus[2];
    int two = first_two_cpus(who, &was, cpus);
    if (two <= 0)
        return two < 0;
    /* The worker and the busy thread, made from here on, inherit cpus[1]. */
    if (!mask_self(cpus[1], -1)) {
        fprintf(stderr, "%s: sched_setaffinity failed\n", who);
        return 1;
    }
    int bad = 0;
    pthread_t busy;
    atomic_store(&busy_stop, 0);
    bool started = pthread_create(&busy, NULL, busy_main, NULL) == 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.placement = DAGRT_PLACEMENT_NONE;
    cfg.crowd_frames = crowding;
    the_rt = started ? dagrt_create(&cfg) : NULL;
    /* The caller on the other CPU. */
    if (!the_rt || !mask_self(cpus[0], -1)) {
        fprintf(stderr, "%s: setup failed (busy thread, runtime, affinity)\n", who);
        bad = 1;
    } else {
        bad += frames();
    }
    if (the_rt)
        dagrt_destroy(the_rt);
    atomic_store(&busy_stop, 1);
    if (started)
        pthread_join(busy, NULL);
    sched_setaffinity(0, sizeof was, &was);
    return bad;
}

static int crowd_run(void) { return crowd_frames(crowd_table()); }

int plan_crowded_scenario(void)
{
    return beside_busy("plan_crowded", DAGRT_CROWD_AUTO, crowd_run);
}

/* ------------------------------------------------------------ dyn_leave
 *
 * The dynamic executor's drainers leave the caller's CPU (runtime/exec/
 * dynamic.c, drainer_entry). The runtime's one worker may use two CPUs,
 * A and B (the caller's mask when it is made, so placement AUTO may move
 * it between them); then a busy thread takes B and the caller A, both
 * pinned. A worker woken while both CPUs are busy lands on its waker's CPU
 * (A), and three threads on two CPUs look balanced whichever two share:
 * left there, it only takes turns with the caller. Frames run on the
 * dynamic executor (DAGRT_CROWD_DYNAMIC), as started runs (drainers start
 * each one). What must hold: of the tasks the worker runs, at most
 * LEAVE_BESIDE_PCT percent run on A. With the move: 0.0-0.1% on a quiet
 * 2-core machine; without it: 72-95% (the kernel leaves the worker on A,
 * beside the caller). Then G_run frames check the gate on the frame's time
 * (DYN_LEAVE_NS): 0.1 ms frames do not ask their drainers to leave, 2 ms
 * frames do (read through the runtime's seam). Every task once per frame,
 * in order, as above. */
#define LEAVE_FRAMES 1500
#define LEAVE_BESIDE_PCT 20

static _Atomic unsigned leave_off, leave_beside;
static int leave_cpu = -1;
static int leave_us = CROWD_US;   /* each task's time */

/* The runtime's seam (runtime/exec/dynamic.c). */
int rt_dyn_leave_cpu(const dagrt_graph_state *st, uint64_t *frame_ns);

static void leave_body(pipe2_frame *c, uint32_t i)
{
    pipe2_enter(c, i);
    if (dagrt_thread_index(the_rt) != 0) {
        atomic_fetch_add(&leave_off, 1);
        if (sched_getcpu() == leave_cpu)
            atomic_fetch_add(&leave_beside, 1);
    }
    bench_spin_us((unsigned)leave_us);
    pipe2_leave(c, i);
}

#define LTRAMP(i) static void leave_t##i(void *c) { leave_body(c, i); }
LTRAMP(0) LTRAMP(1) LTRAMP(2) LTRAMP(3) LTRAMP(4) LTRAMP(5) LTRAMP(6) LTRAMP(7)
static const dagrt_node_fn leave_fns[CROWD_NODES] = {leave_t0, leave_t1, leave_t2, leave_t3,
                                                     leave_t4, leave_t5, leave_t6, leave_t7};

static _Atomic int busy_unpinned;

static void *busy_on(void *arg)
{
    if (!mask_self(*(int *)arg, -1)) {
        atomic_store(&busy_unpinned, 1);   /* the scenario fails: see its end */
        return NULL;
    }
    return busy_main(NULL);
}

/* G_run frames of us-long tasks: after them, whether the state's last
 * frame asked its drainers to leave the caller's CPU must be `want`
 * (frames shorter than DYN_LEAVE_NS, 1 ms, do not: a drainer that moves
 * to a busy thread's CPU there mostly stalls them). 0, or 1. */
static int leave_timed(const dagrt_graph *g, int us, int frames, bool want, int *f)
{
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    leave_us = us;
    int bad = 0;
    for (int k = 0; k < frames && bad == 0; k++, ++*f) {
        pipe2_store(&ctx, f);
        if (dagrt_graph_run(the_rt, g, &st, &ctx) != 0) {
            fprintf(stderr, "dyn_leave: G_run frame %d failed\n", *f);
            bad++;
        }
        pipe2_drop(&ctx);
        bad += atomic_load(&crowd.frames_bad);
    }
    uint64_t ns = 0;
    int cpu = rt_dyn_leave_cpu(&st, &ns);
    dagrt_graph_state_fini(&st);
    leave_us = CROWD_US;
    printf("dyn_leave: %d G_run frames of %d us tasks (their average %.3f ms): drainers asked "
           "to leave CPU %d\n", frames, us, (double)ns / 1e6, cpu);
    /* The frames' time is the machine's: short frames that a loaded
     * machine stretched to half the gate's 1 ms or more on average (the
     * average moves an eighth per timed frame, so the last dynamic frame
     * may have read more) are not judged. */
    if (bad == 0 && !want && ns >= 500000u) {
        printf("dyn_leave: the machine stretched these frames to %.3f ms: not judged\n",
               (double)ns / 1e6);
    } else if (bad == 0 && (cpu >= 0) != want) {
        fprintf(stderr, "dyn_leave: G_run frames of %d us tasks %s their drainers leave the "
                "caller's CPU\n", us, want ? "did not have" : "had");
        bad++;
    }
    return bad;
}

static int leave_frames(const dagrt_graph *g)
{
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    int bad = 0;
    for (int f = 0; f < CROWD_WARM + LEAVE_FRAMES && bad == 0; f++) {
        if (f == CROWD_WARM) {
            atomic_store(&leave_off, 0);
            atomic_store(&leave_beside, 0);
        }
        bad = started_frame("dyn_leave", g, f);
    }
    dagrt_graph_state_fini(&st);
    if (bad)
        return bad;
    unsigned off = atomic_load(&leave_off), beside = atomic_load(&leave_beside);
    double pct = off ? 100.0 * beside / off : 0.0;
    printf("dyn_leave: %d frames, %u of %d tasks on the worker, %u of them (%.1f%%, at most "
           "%d%%) on the caller's CPU %d\n", LEAVE_FRAMES, off, LEAVE_FRAMES * CROWD_NODES,
           beside, pct, LEAVE_BESIDE_PCT, leave_cpu);
    if (off < LEAVE_FRAMES / 10) {
        fprintf(stderr, "dyn_leave: the worker ran %u tasks in %d frames: too few to say "
                "anything\n", off, LEAVE_FRAMES);
        return 1;
    }
    if (pct > LEAVE_BESIDE_PCT) {
        fprintf(stderr, "dyn_leave: %.1f%% of the worker's tasks ran on the caller's CPU: its "
                "drainers stayed beside the caller\n", pct);
        return 1;
    }
    return 0;
}

int dyn_leave_scenario(void)
{
    cpu_set_t was;
    int cpus[2];
    int got = first_two_cpus("dyn_leave", &was, cpus);
    if (got <= 0)
        return got < 0;
    /* The runtime's worker inherits {A, B}, its placement's own mask. */
    if (!mask_self(cpus[0], cpus[1])) {
        fprintf(stderr, "dyn_leave: sched_setaffinity failed\n");
        return 1;
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.placement = DAGRT_PLACEMENT_AUTO;
    cfg.crowd_frames = DAGRT_CROWD_DYNAMIC;
    the_rt = dagrt_create(&cfg);
    int bad = 0;
    pthread_t busy;
    atomic_store(&busy_stop, 0);
    bool started = the_rt && pthread_create(&busy, NULL, busy_on, &cpus[1]) == 0;
    leave_cpu = cpus[0];
    if (!started || !mask_self(cpus[0], -1)) {
        fprintf(stderr, "dyn_leave: setup failed (runtime, busy thread, affinity)\n");
        bad = 1;
    } else {
        pipe2_fan(&crowd, "dyn_leave", CROWD_NODES, NULL, leave_fns, CROWD_US);
        pipe2_reset(&crowd);
        bad += leave_frames(&crowd.g);
        /* The frame-time gate: frames of 8 tasks of 10 us (under 0.1 ms)
         * stay; of 400 us (2 ms and more) leave. The frame numbers go on
         * (pipe2 checks each task's run after its run in the frame before). */
        int f = CROWD_WARM + LEAVE_FRAMES;
        if (bad == 0)
            bad += leave_timed(&crowd.g, 10, 100, false, &f);
        if (bad == 0)
            bad += leave_timed(&crowd.g, 400, 30, true, &f);
    }
    if (the_rt)
        dagrt_destroy(the_rt);
    atomic_store(&busy_stop, 1);
    if (started)
        pthread_join(busy, NULL);
    if (atomic_load(&busy_unpinned)) {
        fprintf(stderr, "dyn_leave: the busy thread could not be pinned\n");
        bad++;
    }
    sched_setaffinity(0, sizeof was, &was);
    return bad;
}

/* ---------------------------------------------------------- plan_partial
 *
 * A worker with part of a CPU (runtime/exec/policy.c, "signs that the
 * clock overrules"): the runtime's one worker and a busy thread share CPU
 * B (made while the caller's mask was B alone; placement NONE), the caller
 * runs alone on A. G_run frames of PARTIAL_US tasks (a root, six middle
 * tasks, a sink: serial 3.2 ms) in plan mode (crowd_frames PLAN). The
 * helper runs in the scheduler's slices, so some frames give the rule's
 * clock-free signs (the caller took most of its list, or waited on a node
 * it held), yet sharing gains on average: 2.5-2.8 ms a frame against 3.2
 * ms serial on a quiet 2-core machine. What must hold: the run policy keeps
 * sharing, at most half of the frames in serial stretches (0-32 here; main
 * at 93e4351, where each sign started a stretch: 286-287, failing), and
 * the worker runs tasks. Judged only where the machine left the caller its CPU (its
 * run delay under PARTIAL_DELAY_PCT of the frames' wall time): on a
 * loaded machine serial may truly be faster. No duration is asserted. */
#define PARTIAL_US 400
#define PARTIAL_WARM 40
#define PARTIAL_FRAMES 300
#define PARTIAL_DELAY_PCT 10

static int partial_frames(const dagrt_graph *g)
{
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    int bad = 0;
    uint64_t on0 = 0, de0 = 0, on1 = 0, de1 = 0, w0 = 0;
    dagrt_graph_stats s0 = {0}, s1 = {0};
    bool sched = true;
    for (int f = 0; f < PARTIAL_WARM + PARTIAL_FRAMES && bad == 0; f++) {
        if (f == PARTIAL_WARM) {
            atomic_store(&leave_off, 0);
            sched = sched_ns(&on0, &de0);
            bad += dagrt_graph_get_stats(&st, &s0) != 0;
            w0 = wall_ns();
        }
        pipe2_store(&ctx, &f);
        if (dagrt_graph_run(the_rt, g, &st, &ctx) != 0) {
            fprintf(stderr, "plan_partial: G_run frame %d failed\n", f);
            bad++;
        }
        pipe2_drop(&ctx);
        bad += atomic_load(&crowd.frames_bad);
    }
    uint64_t wall = wall_ns() - w0;
    sched = sched && sched_ns(&on1, &de1);
    bad += dagrt_graph_get_stats(&st, &s1) != 0;
    dagrt_graph_state_fini(&st);
    if (bad)
        return bad;
    unsigned off = atomic_load(&leave_off);
    uint64_t serial = s1.stretch_runs - s0.stretch_runs;
    double delay = sched ? 100.0 * (double)(de1 - de0) / (double)wall : 0.0;
    printf("plan_partial: %d frames in %.1f ms (%.2f ms each; serial work %.1f ms), %llu in "
           "serial stretches (at most %d), %u of %d tasks on the worker; the caller waited "
           "for its CPU %.1f%% of the time\n", PARTIAL_FRAMES, (double)wall / 1e6,
           (double)wall / 1e6 / PARTIAL_FRAMES, CROWD_NODES * PARTIAL_US / 1000.0,
           (unsigned long long)serial, PARTIAL_FRAMES / 2, off, PARTIAL_FRAMES * CROWD_NODES,
           delay);
    if (!sched || delay >= PARTIAL_DELAY_PCT) {
        printf("plan_partial: %s: not judged (passes)\n",
               sched ? "the machine kept the caller from its CPU" : "no schedstat here");
        return 0;
    }
    if (serial > PARTIAL_FRAMES / 2) {
        fprintf(stderr, "plan_partial: %llu of %d frames ran in serial stretches: the rule's "
                "signs kept a helper with part of a CPU from sharing\n",
                (unsigned long long)serial, PARTIAL_FRAMES);
        return 1;
    }
    if (off < PARTIAL_FRAMES / 2) {
        fprintf(stderr, "plan_partial: the worker ran %u tasks in %d frames\n", off,
                PARTIAL_FRAMES);
        return 1;
    }
    return 0;
}

/* plan_partial's frames (the runtime made by beside_busy). */
static int partial_run(void)
{
    leave_cpu = -1;
    leave_us = PARTIAL_US;
    pipe2_fan(&crowd, "plan_partial", CROWD_NODES, NULL, leave_fns, PARTIAL_US);
    pipe2_reset(&crowd);
    int bad = partial_frames(&crowd.g);
    leave_us = CROWD_US;
    return bad;
}

int plan_partial_scenario(void)
{
    /* crowd_frames PLAN: plan mode's rule, whatever the sampled sign. */
    return beside_busy("plan_partial", DAGRT_CROWD_PLAN, partial_run);
}
#else
typedef int plan_crowded_linux_only;   /* (not an empty translation unit) */
#endif
