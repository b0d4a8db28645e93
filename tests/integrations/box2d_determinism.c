/* box2d_determinism.c - Box2D's determinism check on libdagrt: the
 * falling-hinges world (Box2D's shared/determinism.c) stepped with every
 * Box2D job on the pool through integrations/box2d, at several runtime
 * worker counts and world worker counts, must reach the sleep step and
 * world hash that Box2D's own test/test_determinism.c expects. While it
 * steps, once warm, nothing but Box2D itself allocates (every malloc of
 * every thread is counted; Box2D's allocations go through b2SetAllocator
 * to an uncounted path). The last run steps the world from an engine
 * thread the runtime does not own, attached as a guest
 * (dagrt_thread_attach): the same hash, and that thread ran some of
 * Box2D's jobs itself while it waited in finishTask. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alloc_count.h"
#include "dagrt_box2d.h"
#include "determinism.h"
#include "scenario.h"

/* From Box2D's test/test_determinism.c at the snapshot's commit (float
 * build): what the world must reach on every backend. */
#define EXPECTED_SLEEP_STEP 274
#define EXPECTED_HASH 0xE86690F4u

/* Box2D's own allocations bypass the count (tests/fixtures/alloc_count.c
 * counts every other one): glibc's allocator underneath it. */
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void *b2_alloc(size_t size, int alignment)
{
    size_t a = alignment < 16 ? 16 : (size_t)alignment;
    return __libc_memalign(a, (size + a - 1) & ~(a - 1));
}
static void b2_free(void *p, size_t size)
{
    (void)size;
    __libc_free(p);
}

#define WARM_STEPS 20

/* A worker thread allocates as it starts (glibc's pthread_getattr_np, for
 * its stack bounds), which on a loaded machine may come after the warm
 * steps (tests/exec/alloc_frame.c measured it): so first every worker runs
 * a task. */
static dagrt *seen_rt;
static _Atomic int seen[64];
static void mark(void *arg)
{
    (void)arg;
    int i = dagrt_thread_index(seen_rt);
    if (i >= 0 && i < 64)
        atomic_store(&seen[i], 1);
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
}

static void all_workers_started(dagrt *rt)
{
    int n = dagrt_thread_count(rt);
    seen_rt = rt;
    for (int i = 0; i < 64; i++)
        atomic_store(&seen[i], 0);
    for (int round = 0; round < 10000; round++) {
        int missing = 0;
        for (int i = 1; i < n && i < 64; i++)
            missing += !atomic_load(&seen[i]);
        if (!missing)
            return;
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < 2 * n; i++)
            dagrt_spawn(rt, &g, mark, NULL);
        dagrt_group_wait(rt, &g);
    }
}

static int one(int rt_workers, int world_workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = rt_workers;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        printf("box2d_determinism: dagrt_create_ex: %s\n", dagrt_strerror(err));
        return 1;
    }
    all_workers_started(rt);
    static dagrt_box2d tasks;   /* big (its slots): not on the stack */
    dagrt_box2d_init(&tasks, rt);
    b2WorldDef def = b2DefaultWorldDef();
    dagrt_box2d_world_def(&tasks, &def);
    if (world_workers > 0)
        def.workerCount = world_workers;   /* more Box2D workers than threads: still one pool */
    b2WorldId world = b2CreateWorld(&def);
    FallingHingeData data = CreateFallingHinges(world);
    unsigned long warm = 0;
    for (int i = 0; i < 500; i++) {
        if (i == WARM_STEPS)
            warm = alloc_count();
        b2World_Step(world, 1.0f / 60.0f, 4);
        if (UpdateFallingHinges(world, &data))
            break;
    }
    unsigned long counted = alloc_count() - warm;
    b2DestroyWorld(world);
    int bad = 0;
    if (data.sleepStep != EXPECTED_SLEEP_STEP || data.hash != EXPECTED_HASH) {
        printf("box2d_determinism: workers=%d world workers=%d: sleep step %d hash 0x%08X, expected %d 0x%08X\n",
               rt_workers, def.workerCount, data.sleepStep, data.hash, EXPECTED_SLEEP_STEP, EXPECTED_HASH);
        bad++;
    }
    unsigned long spawned = dagrt_box2d_spawned(&tasks), inl = dagrt_box2d_inline_runs(&tasks);
    if (spawned == 0 || inl != 0) {
        printf("box2d_determinism: workers=%d: %lu tasks on the pool, %lu inline (want >0, 0)\n",
               rt_workers, spawned, inl);
        bad++;
    }
    if (counted != 0) {
        printf("box2d_determinism: workers=%d: %lu allocations outside Box2D after %d warm steps\n",
               rt_workers, counted, WARM_STEPS);
        bad++;
    }
    DestroyFallingHinges(&data);
    dagrt_destroy(rt);
    printf("box2d_determinism: workers=%d world workers=%d: sleep step %d hash 0x%08X, %lu tasks: %s\n",
           rt_workers, def.workerCount, data.sleepStep, data.hash, spawned, bad ? "FAIL" : "ok");
    return bad;
}

/* Box2D's jobs wrapped to see which thread runs them: a ring of wrappers
 * (Box2D has at most workerCount + 1 jobs of a world in flight). */
typedef struct job_wrap {
    b2TaskCallback *task;
    void *context;
} job_wrap;
static job_wrap wraps[256];
static _Atomic unsigned wrap_next;
static int guest_index;
static _Atomic long jobs_total, jobs_on_guest;

static void wrapped_job(void *p)
{
    job_wrap *w = p;
    atomic_fetch_add(&jobs_total, 1);
    if (dagrt_thread_index(seen_rt) == guest_index)
        atomic_fetch_add(&jobs_on_guest, 1);
    w->task(w->context);
}

static void *wrap_enqueue(b2TaskCallback *task, void *taskContext, void *userContext)
{
    job_wrap *w = &wraps[atomic_fetch_add(&wrap_next, 1) % 256];
    w->task = task;
    w->context = taskContext;
    return dagrt_box2d_enqueue(wrapped_job, w, userContext);
}

typedef struct guest_run {
    dagrt *rt;
    int attach, detach;
    FallingHingeData data;
} guest_run;

static void *engine_thread(void *p)
{
    guest_run *g = p;
    g->attach = guest_index = dagrt_thread_attach(g->rt);
    static dagrt_box2d tasks;
    dagrt_box2d_init(&tasks, g->rt);
    b2WorldDef def = b2DefaultWorldDef();
    dagrt_box2d_world_def(&tasks, &def);
    def.enqueueTask = wrap_enqueue;
    b2WorldId world = b2CreateWorld(&def);
    g->data = CreateFallingHinges(world);
    for (int i = 0; i < 500; i++) {
        b2World_Step(world, 1.0f / 60.0f, 4);
        if (UpdateFallingHinges(world, &g->data))
            break;
    }
    b2DestroyWorld(world);
    g->detach = dagrt_thread_detach(g->rt);
    return NULL;
}

static int guest(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.guest_threads = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    seen_rt = rt;
    guest_run g = {rt, -100, -100, {0}};
    pthread_t th;
    pthread_create(&th, NULL, engine_thread, &g);
    pthread_join(th, NULL);
    int bad = 0;
    if (g.attach != 2 || g.detach != 0) {
        printf("box2d_determinism: guest: attach %d (want slot 2), detach %d\n", g.attach, g.detach);
        bad++;
    }
    if (g.data.sleepStep != EXPECTED_SLEEP_STEP || g.data.hash != EXPECTED_HASH) {
        printf("box2d_determinism: guest: sleep step %d hash 0x%08X, expected %d 0x%08X\n",
               g.data.sleepStep, g.data.hash, EXPECTED_SLEEP_STEP, EXPECTED_HASH);
        bad++;
    }
    long total = atomic_load(&jobs_total), mine = atomic_load(&jobs_on_guest);
    if (mine == 0) {
        printf("box2d_determinism: guest: the engine thread ran none of the %ld jobs\n", total);
        bad++;
    }
    DestroyFallingHinges(&g.data);
    dagrt_destroy(rt);
    printf("box2d_determinism: guest thread + 1 worker: sleep step %d hash 0x%08X, %ld of %ld jobs on the guest: %s\n",
           g.data.sleepStep, g.data.hash, mine, total, bad ? "FAIL" : "ok");
    return bad;
}

static int box2d_determinism(void)
{
    b2SetAllocator(b2_alloc, b2_free);
    /* The control: the counter sees allocations. */
    unsigned long before = alloc_count();
    void *volatile probe = malloc(16);
    free(probe);
    if (alloc_count() == before) {
        printf("box2d_determinism: the malloc counter does not work\n");
        return 1;
    }
    int bad = 0;
    static const int rt_workers[] = {0, 1, 2, 3};
    for (size_t i = 0; i < sizeof rt_workers / sizeof *rt_workers; i++)
        bad += one(rt_workers[i], 0);
    static const int world_workers[] = {1, 5, 16, 32};
    for (size_t i = 0; i < sizeof world_workers / sizeof *world_workers; i++)
        bad += one(1, world_workers[i]);
    bad += guest();
    return bad ? 1 : 0;
}

/* Hosted by the plain driver (tests/scenario/driver.c): it counts every
 * allocation of its process, which Criterion's own threads would add to. */
const scenario scenario_table[] = {
    {"box2d_determinism", box2d_determinism, NULL},
    {NULL, NULL, NULL},
};
