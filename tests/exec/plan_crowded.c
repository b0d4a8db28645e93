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
#include "plan_crowded.h"

#define CROWD_MIDS 6
#define CROWD_NODES (CROWD_MIDS + 2)
#define CROWD_SINK (CROWD_NODES - 1)
#define CROWD_US 20
#define CROWD_WARM 100
#define CROWD_FRAMES 2000
#define CROWD_ASLEEP_PCT 10

struct crowd_ctx {
    int frame;
    _Atomic unsigned seq;
    _Atomic unsigned at[CROWD_NODES];
    _Atomic int runs[CROWD_NODES];
    _Atomic int bad;
};

static dagrt *the_rt;
static _Atomic int last_frame[CROWD_NODES];
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

static void crowd_body(struct crowd_ctx *c, int i)
{
    /* Inputs before it (acquire: pairs with the release below). */
    if (i == CROWD_SINK) {
        for (int k = 1; k <= CROWD_MIDS; k++)
            if (atomic_load_explicit(&c->at[k], memory_order_acquire) == 0)
                atomic_fetch_add(&c->bad, 1);
    } else if (i != 0 && atomic_load_explicit(&c->at[0], memory_order_acquire) == 0) {
        atomic_fetch_add(&c->bad, 1);
    }
    /* relaxed: the runtime orders a task's runs in consecutive frames. */
    if (atomic_load_explicit(&last_frame[i], memory_order_relaxed) != c->frame - 1)
        atomic_fetch_add(&c->bad, 1);
    atomic_store_explicit(&last_frame[i], c->frame, memory_order_relaxed);
    bool worker = dagrt_thread_index(the_rt) != 0;
    uint64_t t0 = worker ? 0 : cpu_ns(), w0 = worker ? 0 : wall_ns();
    if (worker)
        atomic_fetch_add(&on_worker, 1);
    bench_spin_us(CROWD_US);
    if (!worker) {
        caller_body_ns += cpu_ns() - t0;
        caller_body_wall += wall_ns() - w0;
    }
    atomic_fetch_add_explicit(&c->runs[i], 1, memory_order_relaxed);
    /* release: the tasks after it read it with acquire. */
    atomic_store_explicit(&c->at[i], atomic_fetch_add(&c->seq, 1) + 1, memory_order_release);
}

#define TRAMP(i) static void crowd_t##i(void *c) { crowd_body(c, i); }
TRAMP(0) TRAMP(1) TRAMP(2) TRAMP(3) TRAMP(4) TRAMP(5) TRAMP(6) TRAMP(7)
static const dagrt_node_fn crowd_fns[CROWD_NODES] = {crowd_t0, crowd_t1, crowd_t2, crowd_t3,
                                                     crowd_t4, crowd_t5, crowd_t6, crowd_t7};
static dagrt_node crowd_nodes[CROWD_NODES];
static uint32_t crowd_succ[2 * CROWD_MIDS];
static uint32_t crowd_costs[CROWD_NODES];
static dagrt_graph crowd_graph;

static const dagrt_graph *crowd_table(void)
{
    static const char *const names[CROWD_NODES] = {"root", "m1", "m2", "m3", "m4", "m5", "m6",
                                                   "sink"};
    memset(crowd_nodes, 0, sizeof crowd_nodes);
    uint32_t ns = 0;
    for (int u = 0; u < CROWD_NODES; u++) {
        dagrt_node *n = &crowd_nodes[u];
        n->name = names[u];
        n->kind = DAGRT_NODE_TASK;
        n->join = DAGRT_JOIN_AND;
        n->run = crowd_fns[u];
        n->succ_first = ns;
        if (u == 0)
            for (int k = 1; k <= CROWD_MIDS; k++)
                crowd_succ[ns++] = (uint32_t)k;
        else if (u != CROWD_SINK)
            crowd_succ[ns++] = CROWD_SINK;
        n->nsucc = ns - n->succ_first;
        n->npred = u == 0 ? 0 : u == CROWD_SINK ? CROWD_MIDS : 1;
        crowd_costs[u] = CROWD_US * 1000u;
    }
    memset(&crowd_graph, 0, sizeof crowd_graph);
    crowd_graph.version = DAGRT_GRAPH_VERSION;
    crowd_graph.nnodes = CROWD_NODES;
    crowd_graph.nsucc = ns;
    crowd_graph.name = "plan_crowded";
    crowd_graph.nodes = crowd_nodes;
    crowd_graph.succ = crowd_succ;
    crowd_graph.cost = crowd_costs;
    return &crowd_graph;
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
    static struct crowd_ctx ctx;
    if (dagrt_graph_state_init(&st, nst, CROWD_NODES) != 0)
        return 1;
    for (int i = 0; i < CROWD_NODES; i++)
        atomic_store(&last_frame[i], -1);
    int bad = 0;
    uint64_t w0 = 0, on0 = 0, de0 = 0, w1 = 0, on1 = 0, de1 = 0;
    bool sched = true;
    for (int f = 0; f < CROWD_WARM + CROWD_FRAMES && bad == 0; f++) {
        ctx.frame = f;
        atomic_store(&ctx.seq, 0);
        atomic_store(&ctx.bad, 0);
        for (int i = 0; i < CROWD_NODES; i++) {
            atomic_store(&ctx.at[i], 0);
            atomic_store(&ctx.runs[i], 0);
        }
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
        int b = atomic_load(&ctx.bad);
        for (int i = 0; i < CROWD_NODES; i++)
            b += atomic_load(&ctx.runs[i]) != 1;
        if (b)
            fprintf(stderr, "plan_crowded: frame %d: %d violations (a task not run exactly "
                    "once, or out of order)\n", f, b);
        bad += b;
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
