/* misuse_scenario.c - G_run misuse returns error codes instead of hanging: called
 * from inside a running task (DAGRT_ENESTED), concurrently on the same
 * state (DAGRT_EBUSY), from a thread that is not the runtime's main thread
 * (DAGRT_EPERM); bad descriptors (DAGRT_EVERSION, DAGRT_EINVAL); then
 * pipeline misuse (pipe_misuse.c). One
 * scenario function, hosted by Criterion (test_misuse.c) and by a plain
 * driver (misuse_plain.c) for ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "misuse.h"
#include "misuse_scenario.h"

void misuse_first(struct misuse_ctx *c)
{
    atomic_fetch_add(&c->runs, 1);
    if (c->slow)
        pipe_misuse_spin_us(20);
    if (c->mode == 1)
        c->nested_rc_first = misuse_run(c->rt, c);
    if (c->mode == 3)
        pipe_misuse_nested(c, &c->nested_rc_first, &c->nested_drain_first);
    if (c->mode == 2) {
        atomic_store(&c->holding, 1);
        while (!atomic_load(&c->release))
            sched_yield();
    }
}

void misuse_second(struct misuse_ctx *c)
{
    atomic_fetch_add(&c->seconds, 1);
    if (c->mode == 1)
        c->nested_rc_second = misuse_run(c->rt, c);
    if (c->mode == 3)
        pipe_misuse_nested(c, &c->nested_rc_second, &c->nested_drain_second);
}

static struct misuse_ctx ctx;

typedef struct plain_call {
    struct misuse_ctx *c;
    int rc;
} plain_call;

static void plain_main_task(void *p)
{
    plain_call *pc = p;
    pc->rc = misuse_run(pc->c->rt, pc->c);
}

static void *other_thread(void *arg)
{
    int *rc = arg;
    /* mode 2: runs while `first` is held inside a run on the main thread. */
    while (ctx.mode == 2 && !atomic_load(&ctx.holding))
        sched_yield();
    *rc = misuse_run(ctx.rt, &ctx);
    atomic_store(&ctx.release, 1);
    return NULL;
}

#define EXPECT(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); bad++; } } while (0)

int misuse_scenario(void)
{
    int bad = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    ctx.rt = rt;

    /* A plain run works, and again (state is reset each run). */
    ctx.mode = 0;
    EXPECT(misuse_run(rt, &ctx) == 0, "plain run failed");
    EXPECT(misuse_run(rt, &ctx) == 0, "second plain run failed");
    EXPECT(atomic_load(&ctx.runs) == 2, "first ran %d times in 2 runs", atomic_load(&ctx.runs));

    /* From inside a task: a worker's task and a main-thread task. */
    ctx.mode = 1;
    ctx.nested_rc_first = ctx.nested_rc_second = 1;
    EXPECT(misuse_run(rt, &ctx) == 0, "outer run failed");
    EXPECT(ctx.nested_rc_first == DAGRT_ENESTED, "nested call in `first` returned %d",
           ctx.nested_rc_first);
    EXPECT(ctx.nested_rc_second == DAGRT_ENESTED, "nested call in main task `second` returned %d",
           ctx.nested_rc_second);

    /* From a plain task that runs on the main thread while it waits: a
     * task too, so nested (not EBUSY, not a run inside the wait). */
    {
        plain_call pc = {&ctx, 1};
        dagrt_group g;
        dagrt_group_init(&g);
        EXPECT(dagrt_spawn_ex(rt, &g, plain_main_task, &pc, DAGRT_SPAWN_MAIN) == 0, "spawn to main failed");
        EXPECT(dagrt_group_wait(rt, &g) == 0, "wait for the main task failed");
        EXPECT(pc.rc == DAGRT_ENESTED, "call from a plain main-thread task returned %d, want ENESTED", pc.rc);
    }

    /* Concurrently on the same state, from another thread. */
    for (int round = 0; round < 20; round++) {
        ctx.mode = 2;
        atomic_store(&ctx.holding, 0);
        atomic_store(&ctx.release, 0);
        int other_rc = 1;
        pthread_t t;
        pthread_create(&t, NULL, other_thread, &other_rc);
        int rc = misuse_run(rt, &ctx);
        pthread_join(t, NULL);
        EXPECT(rc == 0, "run with a concurrent caller failed: %d", rc);
        EXPECT(other_rc == DAGRT_EBUSY, "concurrent call returned %d, want EBUSY", other_rc);
    }

    /* From a thread that is not the runtime's main thread, no run going on. */
    ctx.mode = 0;
    int other_rc = 1;
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &other_rc);
    pthread_join(t, NULL);
    EXPECT(other_rc == DAGRT_EPERM, "call from another thread returned %d, want EPERM", other_rc);

    /* Descriptors the runtime must refuse before touching anything. */
    static const uint32_t succ[] = {UINT32_MAX};
    static const dagrt_node nodes[1] = {{.name = "x", .kind = DAGRT_NODE_GATE}};
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    dagrt_graph g = {.version = DAGRT_GRAPH_VERSION + 1, .nnodes = 1, .nodes = nodes, .succ = succ};
    EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == DAGRT_EVERSION, "version mismatch not refused");
    g.version = DAGRT_GRAPH_VERSION;
    g.nnodes = 2;
    EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == DAGRT_EINVAL, "state too small not refused");
    g.nnodes = 1;
    EXPECT(dagrt_graph_run(NULL, &g, &st, NULL) == DAGRT_EINVAL, "NULL runtime not refused");
    EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == 0, "one-gate graph failed");
    dagrt_graph_stats stats;
    EXPECT(dagrt_graph_get_stats(&st, &stats) == 0 && stats.runs == 1 && stats.last_ran == 0,
           "stats of the one-gate graph wrong");

    bad += pipe_misuse_scenario(rt);
    dagrt_destroy(rt);
    return bad;
}
