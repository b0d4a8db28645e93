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

/* The frames (see the top). 0, or the violations seen. */
static int crowd_frames(const dagrt_graph *g)
{
    static dagrt_graph_state st;
    static dagrt_node_state nst[CROWD_NODES];
    static pipe2_frame ctx = {.graph = &crowd};
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    int bad = 0;
    uint64_t w0 = 0, on0 = 0, de0 = 0, w1 = 0, on1 = 0, de1 = 0;
    bool sched = true;
    for (int f = 0; f < CROWD_WARM + CROWD_FRAMES && bad == 0; f++) {
        pipe2_store(&ctx, &f);
        if (f == CROWD_WARM) {
            caller_body_ns = caller_body_wall = 0;
            atomic_store(&on_worker, 0);
            sched = sched_ns(&on0, &de0);
            w0 = wall_ns();
        }
        int rc = dagrt_graph_start(the_rt, g, &st, &ctx, NULL, NULL);
        if (rc == 0)
            rc = dagrt_graph_wait(the_rt, &st);
        if (rc != 0) {
            fprintf(stderr, "plan_crowded: frame %d: %s\n", f, dagrt_strerror(rc));
            bad++;
            break;
        }
        pipe2_drop(&ctx);   /* every task once, in order; a message if not */
        bad = atomic_load(&crowd.frames_bad);
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

int plan_crowded_scenario(void)
{
    cpu_set_t was, one;
    int cpus[2], n = 0;
    if (sched_getaffinity(0, sizeof was, &was) != 0)
        return 1;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &was))
            cpus[n++] = c;
    if (n < 2) {
        printf("plan_crowded: fewer than 2 CPUs to run on: nothing to test (passes)\n");
        return 0;
    }
    /* The worker and the busy thread, made from here on, inherit cpus[1]. */
    CPU_ZERO(&one);
    CPU_SET(cpus[1], &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        fprintf(stderr, "plan_crowded: sched_setaffinity failed\n");
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
    the_rt = started ? dagrt_create(&cfg) : NULL;
    /* The caller on the other CPU. */
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    if (!the_rt || sched_setaffinity(0, sizeof one, &one) != 0) {
        fprintf(stderr, "plan_crowded: setup failed (busy thread, runtime, affinity)\n");
        bad = 1;
    } else {
        bad += crowd_frames(crowd_table());
    }
    if (the_rt)
        dagrt_destroy(the_rt);
    atomic_store(&busy_stop, 1);
    if (started)
        pthread_join(busy, NULL);
    sched_setaffinity(0, sizeof was, &was);
    return bad;
}
#else
typedef int plan_crowded_linux_only;   /* (not an empty translation unit) */
#endif
