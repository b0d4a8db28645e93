/* scn_batch.c - batches and asynchronous ranges (runtime/core/work.c's
 * dagrt_spawn_batch, runtime/pfor/async.c's dagrt_parallel_for_async):
 * every task of a batch runs once, where its flags say, from every kind
 * of thread (main, a worker's task, an attached guest, a thread outside
 * the runtime); errors spawn nothing; an asynchronous range returns
 * before it has run and covers its range exactly once. See scenarios.h. */
#include "scenarios.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "os/os.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

typedef struct slot {
    atomic_int runs;
    atomic_int thread;     /* dagrt_thread_index of the last run */
} slot;

typedef struct batch_ctx {
    dagrt *rt;
    slot *slots;
    dagrt_task_desc *desc;
    size_t n;
} batch_ctx;

static dagrt *batch_rt;

static void hit(void *arg)
{
    slot *s = arg;
    atomic_fetch_add(&s->runs, 1);
    atomic_store(&s->thread, dagrt_thread_index(batch_rt));
}

static void fill(batch_ctx *b, size_t n)
{
    b->n = n;
    memset(b->slots, 0, sizeof(slot) * n);
    for (size_t i = 0; i < n; i++)
        b->desc[i] = (dagrt_task_desc){hit, &b->slots[i]};
}

static int check_once(const batch_ctx *b, const char *what, int want_thread)
{
    int v = 0;
    for (size_t i = 0; i < b->n; i++) {
        int r = atomic_load(&b->slots[i].runs);
        if (r != 1) {
            FAIL("%s: task %zu ran %d times", what, i, r);
            break;
        }
        if (want_thread >= 0 && atomic_load(&b->slots[i].thread) != want_thread) {
            FAIL("%s: task %zu ran on thread %d, want %d", what, i,
                 atomic_load(&b->slots[i].thread), want_thread);
            break;
        }
    }
    return v;
}

/* A batch spawned and waited for by the calling thread (any kind). */
static int batch_here(batch_ctx *b, size_t n, unsigned flags)
{
    fill(b, n);
    dagrt_group g;
    dagrt_group_init(&g);
    int r = dagrt_spawn_batch(b->rt, &g, b->desc, n, flags);
    int w = dagrt_group_wait(b->rt, &g);
    return r != 0 ? r : w;
}

static atomic_int worker_result;
static void batch_from_task(void *arg)
{
    batch_ctx *b = arg;
    atomic_store(&worker_result, batch_here(b, b->n, 0) + 1000 * (dagrt_thread_index(b->rt) < 0));
}

/* The threads below find their batch filled by the main thread. */
static void *batch_from_outside(void *arg)
{
    batch_ctx *b = arg;
    dagrt_group g;
    dagrt_group_init(&g);
    int r = dagrt_spawn_batch(b->rt, &g, b->desc, b->n, 0);
    /* Outside the runtime with no guest slot: the wait blocks. */
    int w = dagrt_group_wait(b->rt, &g);
    return (void *)(intptr_t)(r != 0 ? r : w);
}

static void *batch_from_guest(void *arg)
{
    batch_ctx *b = arg;
    if (dagrt_thread_attach(b->rt) < 0)
        return (void *)(intptr_t)-100;
    dagrt_group g;
    dagrt_group_init(&g);
    int r = dagrt_spawn_batch(b->rt, &g, b->desc, b->n, 0);
    int w = dagrt_group_wait(b->rt, &g);
    dagrt_thread_detach(b->rt);
    r = r != 0 ? r : w;
    return (void *)(intptr_t)r;
}

static int batch_on(int workers)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.guest_threads = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    batch_rt = rt;
    size_t big = (size_t)scaled(100000, 2000);
    batch_ctx b = {rt, calloc(big, sizeof(slot)), calloc(big, sizeof(dagrt_task_desc)), 0};
    if (!b.slots || !b.desc)
        return 1;
    /* From the main thread: small, large, fiber, hot, main-only. */
    size_t sizes[] = {1, 1000, big};
    for (size_t k = 0; k < 3; k++) {
        if (batch_here(&b, sizes[k], 0) != 0)
            FAIL("main batch of %zu failed", sizes[k]);
        v += check_once(&b, "main batch", -1);
    }
    if (batch_here(&b, 500, DAGRT_SPAWN_FIBER) != 0)
        FAIL("fiber batch failed");
    v += check_once(&b, "fiber batch", -1);
    if (batch_here(&b, 500, DAGRT_SPAWN_HOT) != 0)
        FAIL("hot batch failed");
    v += check_once(&b, "hot batch", -1);
    if (batch_here(&b, 500, DAGRT_SPAWN_MAIN) != 0)
        FAIL("main-only batch failed");
    v += check_once(&b, "main-only batch", 0);

    /* From a task (a worker's, or the main thread's with none). */
    b.n = 3000;
    atomic_store(&worker_result, -1);
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(rt, &g, batch_from_task, &b);
    dagrt_group_wait(rt, &g);
    if (atomic_load(&worker_result) != 0)
        FAIL("batch from a task: %d", atomic_load(&worker_result));
    v += check_once(&b, "task batch", -1);

    /* From a guest and from a thread outside the runtime. */
    void *(*fns[2])(void *) = {batch_from_guest, batch_from_outside};
    const char *names[2] = {"guest batch", "outside batch"};
    for (int k = 0; k < 2; k++) {
        pthread_t th;
        fill(&b, 3000);
        void *res = NULL;
        pthread_create(&th, NULL, fns[k], &b);
        if (workers == 0 && k == 1) {
            /* No worker: the outside batch goes to the main thread, whose
             * waits (or pump) run it. */
            while (atomic_load(&b.slots[b.n - 1].runs) == 0)
                dagrt_pump_main(rt);
        }
        pthread_join(th, &res);
        if ((intptr_t)res != 0)
            FAIL("%s: %d", names[k], (int)(intptr_t)res);
        v += check_once(&b, names[k], -1);
    }

    /* Errors spawn nothing. */
    fill(&b, 10);
    b.desc[7].fn = NULL;
    dagrt_group_init(&g);
    if (dagrt_spawn_batch(rt, &g, b.desc, 10, 0) != DAGRT_EINVAL)
        FAIL("a NULL fn in a batch was not refused");
    b.desc[7].fn = hit;
    if (dagrt_spawn_batch(rt, &g, NULL, 3, 0) != DAGRT_EINVAL ||
        dagrt_spawn_batch(NULL, &g, b.desc, 3, 0) != DAGRT_EINVAL ||
        dagrt_spawn_batch(rt, &g, b.desc, 3, DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT) != DAGRT_EINVAL ||
        dagrt_spawn_batch(rt, &g, b.desc, 3, 1u << 12) != DAGRT_EINVAL ||
        dagrt_spawn_batch(rt, &g, b.desc, 3, DAGRT_SPAWN_LARGE_STACK) != DAGRT_EINVAL)
        FAIL("bad batch arguments not refused");
    dagrt_group bad;
    memset(&bad, 0, sizeof bad);
    if (dagrt_spawn_batch(rt, &bad, b.desc, 3, 0) != DAGRT_EINVAL)
        FAIL("an uninitialised group not refused");
    if (dagrt_spawn_batch(rt, &g, b.desc, 0, 0) != 0)
        FAIL("an empty batch is not 0");
    dagrt_group_wait(rt, &g);
    for (int i = 0; i < 10; i++)
        if (atomic_load(&b.slots[i].runs) != 0)
            FAIL("a refused batch ran task %d", i);
    dagrt_destroy(rt);
    free(b.slots);
    free(b.desc);
    return v;
}

int scn_batch_spawn(void)
{
    return batch_on(0) + batch_on(1) + batch_on(3);
}

/* ----------------------------------------------- the asynchronous range */

typedef struct cover {
    atomic_uchar *seen;
    atomic_int *release;    /* pieces wait until the caller returned */
    atomic_long items;
} cover;

static void cover_range(void *arg, size_t b, size_t e)
{
    cover *c = arg;
    while (c->release && !atomic_load(c->release))
        ;
    for (size_t i = b; i < e; i++)
        atomic_fetch_add(&c->seen[i], 1);
    atomic_fetch_add(&c->items, (long)(e - b));
}

static int check_cover(cover *c, size_t n, const char *what)
{
    int v = 0;
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&c->seen[i]) != 1) {
            FAIL("%s: item %zu seen %d times", what, i, atomic_load(&c->seen[i]));
            break;
        }
    return v;
}

typedef struct outside_range {
    dagrt *rt;
    cover *c;
    size_t n;
    int r;
} outside_range;

static void *range_from_outside(void *arg)
{
    outside_range *o = arg;
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_range_job j;
    o->r = dagrt_parallel_for_async(o->rt, &g, &j, 0, o->n, 0, cover_range, o->c);
    if (o->r == 0)
        o->r = dagrt_group_wait(o->rt, &g);
    return NULL;
}

static int async_on(int workers)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    size_t n = (size_t)scaled(200000, 5000);
    cover c = {calloc(n, 1), NULL, 0};
    size_t grains[] = {0, 1, 7, 1000, n};
    for (size_t k = 0; k < 5; k++) {
        memset((void *)c.seen, 0, n);
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_range_job j;
        size_t len = grains[k] == 1 ? n / 50 : n;   /* one item a task: a smaller range */
        if (dagrt_parallel_for_async(rt, &g, &j, 0, len, grains[k], cover_range, &c) != 0)
            FAIL("async range (grain %zu) refused", grains[k]);
        dagrt_group_wait(rt, &g);
        v += check_cover(&c, len, "async range");
    }
    /* It returns before the range has run: the pieces wait for a flag
     * the caller sets only after the call returned (with no worker the
     * range can only run in the caller's wait). */
    atomic_int release = 0;
    memset((void *)c.seen, 0, n);
    c.release = &release;
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_range_job j;
    if (dagrt_parallel_for_async(rt, &g, &j, 0, n, 0, cover_range, &c) != 0)
        FAIL("async range refused");
    if (dagrt_group_done(&g) != 0)
        FAIL("async range done before its pieces were let through");
    atomic_store(&release, 1);
    dagrt_group_wait(rt, &g);
    v += check_cover(&c, n, "released range");
    c.release = NULL;

    /* From a thread outside the runtime. */
    if (workers > 0) {
        memset((void *)c.seen, 0, n);
        outside_range o = {rt, &c, n, -1};
        pthread_t th;
        pthread_create(&th, NULL, range_from_outside, &o);
        pthread_join(th, NULL);
        if (o.r != 0)
            FAIL("outside async range: %d", o.r);
        v += check_cover(&c, n, "outside range");
    }

    /* Errors. */
    dagrt_group_init(&g);
    if (dagrt_parallel_for_async(rt, &g, &j, 5, 4, 0, cover_range, &c) != DAGRT_EINVAL ||
        dagrt_parallel_for_async(rt, NULL, &j, 0, 4, 0, cover_range, &c) != DAGRT_EINVAL ||
        dagrt_parallel_for_async(rt, &g, NULL, 0, 4, 0, cover_range, &c) != DAGRT_EINVAL ||
        dagrt_parallel_for_async(rt, &g, &j, 0, 4, 0, NULL, &c) != DAGRT_EINVAL ||
        dagrt_parallel_for_async(NULL, &g, &j, 0, 4, 0, cover_range, &c) != DAGRT_EINVAL)
        FAIL("bad async range arguments not refused");
    if (dagrt_parallel_for_async(rt, &g, &j, 3, 3, 0, cover_range, &c) != 0 || dagrt_group_done(&g) != 1)
        FAIL("an empty async range is not 0 with its group done");
    dagrt_destroy(rt);
    free((void *)c.seen);
    return v;
}

int scn_pfor_async(void)
{
    return async_on(0) + async_on(1) + async_on(3);
}

/* ---------------------------------------------------------------------------
 * Out of memory (the system layer's seam, rt_os_alloc_refuse: every
 * allocation the runtime makes fails while it is on). A batch that cannot
 * be handed over whole returns DAGRT_ENOMEM and none of its tasks runs,
 * whichever allocation failed: the deque's growth (checked first, before
 * any descriptor), a descriptor half-way through (the pushed ones taken
 * back), an outside thread's descriptor half-way (none queued yet); the
 * tasks spawned before it still run once, its group is as before, and the
 * runtime works again once memory does. An asynchronous range that cannot
 * spawn its first task returns DAGRT_ENOMEM with no item run; one whose
 * pieces cannot be spawned runs them where it is, each item once. No
 * workers: nothing runs or frees a descriptor until the main thread
 * waits, so the pools' sizes are known. */
#define OOM_WARM 3000     /* pool: 24 slabs of 128 = 3,072 descriptors; deque: 4,096 slots */
#define OOM_BIG 3500      /* more than the pool, fewer than the deque's slots */
#define OOM_HUGE 5000     /* more than the deque's slots */

static atomic_int oom_before, oom_batch;
static void oom_hit_before(void *arg) { (void)arg; atomic_fetch_add(&oom_before, 1); }
static void oom_hit(void *arg) { (void)arg; atomic_fetch_add(&oom_batch, 1); }

static dagrt_task_desc oom_desc[OOM_HUGE];

typedef struct oom_outside {
    dagrt *rt;
    dagrt_group *g;
    size_t n;
    int rc;
} oom_outside;

static void *oom_batch_outside(void *arg)
{
    oom_outside *o = arg;
    o->rc = dagrt_spawn_batch(o->rt, o->g, oom_desc, o->n, 0);
    return NULL;
}

static atomic_int oom_items[20000];
static void oom_range(void *arg, size_t b, size_t e)
{
    (void)arg;
    for (size_t i = b; i < e; i++)
        atomic_fetch_add(&oom_items[i], 1);
}

int scn_batch_oom(void)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.no_workers = true;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    for (size_t i = 0; i < OOM_HUGE; i++)
        oom_desc[i] = (dagrt_task_desc){oom_hit, NULL};
    dagrt_group before, g;
    dagrt_group_init(&before);
    dagrt_group_init(&g);
    /* Warm: the main thread's pool and deque grown, then all free. */
    for (int i = 0; i < OOM_WARM; i++)
        dagrt_spawn(rt, &before, oom_hit_before, NULL);
    dagrt_group_wait(rt, &before);
    atomic_store(&oom_before, 0);

    const size_t sizes[2] = {OOM_HUGE, OOM_BIG};
    const char *what[2] = {"the deque's growth", "a descriptor half-way"};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 10; i++)   /* queued before the batch */
            dagrt_spawn(rt, &before, oom_hit_before, NULL);
        rt_os_alloc_refuse(true);
        int rc = dagrt_spawn_batch(rt, &g, oom_desc, sizes[k], 0);
        rt_os_alloc_refuse(false);
        if (rc != DAGRT_ENOMEM)
            FAIL("batch oom, %s: %d, want DAGRT_ENOMEM", what[k], rc);
        if (!dagrt_group_done(&g))
            FAIL("batch oom, %s: the group counts tasks", what[k]);
        dagrt_group_wait(rt, &before);
        dagrt_group_wait(rt, &g);
        if (atomic_load(&oom_batch) != 0 || atomic_load(&oom_before) != 10)
            FAIL("batch oom, %s: %d of the batch ran (want 0), %d of the 10 before", what[k],
                 atomic_load(&oom_batch), atomic_load(&oom_before));
        atomic_store(&oom_before, 0);
    }
    /* Memory again: the same batch, whole. */
    if (dagrt_spawn_batch(rt, &g, oom_desc, OOM_HUGE, 0) != 0)
        FAIL("batch after oom: refused");
    dagrt_group_wait(rt, &g);
    if (atomic_load(&oom_batch) != OOM_HUGE)
        FAIL("batch after oom: %d of %d ran", atomic_load(&oom_batch), OOM_HUGE);
    atomic_store(&oom_batch, 0);

    /* From a thread outside the runtime: the shared pool warmed with 200
     * (two slabs), then a batch of 300 runs out half-way. */
    oom_outside o = {rt, &g, 200, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, oom_batch_outside, &o) != 0)
        return v + 1;
    pthread_join(th, NULL);
    dagrt_group_wait(rt, &g);
    if (o.rc != 0 || atomic_load(&oom_batch) != 200)
        FAIL("outside batch: %d, %d of 200 ran", o.rc, atomic_load(&oom_batch));
    atomic_store(&oom_batch, 0);
    o.n = 300;
    rt_os_alloc_refuse(true);   /* before the thread starts: its start orders it */
    if (pthread_create(&th, NULL, oom_batch_outside, &o) != 0) {
        rt_os_alloc_refuse(false);
        return v + 1;
    }
    pthread_join(th, NULL);
    rt_os_alloc_refuse(false);
    if (o.rc != DAGRT_ENOMEM || !dagrt_group_done(&g))
        FAIL("outside batch oom: %d (want DAGRT_ENOMEM), group %s", o.rc,
             dagrt_group_done(&g) ? "done" : "counting");
    dagrt_pump_main(rt);   /* a task queued for the main thread would run here */
    dagrt_group_wait(rt, &g);
    if (atomic_load(&oom_batch) != 0)
        FAIL("outside batch oom: %d of the batch ran", atomic_load(&oom_batch));

    /* The asynchronous range: no descriptor at all (the pool spent on
     * tasks held in the deque), then one whose pieces run out. */
    int held = 0;
    rt_os_alloc_refuse(true);
    while (held < 100000 && dagrt_spawn(rt, &before, oom_hit_before, NULL) == 0)
        held++;
    dagrt_range_job job;
    int rc = dagrt_parallel_for_async(rt, &g, &job, 0, 20000, 1, oom_range, NULL);
    rt_os_alloc_refuse(false);
    if (rc != DAGRT_ENOMEM || !dagrt_group_done(&g))
        FAIL("range oom: %d (want DAGRT_ENOMEM)", rc);
    dagrt_group_wait(rt, &before);
    dagrt_group_wait(rt, &g);
    for (int i = 0; i < 20000; i++)
        if (atomic_load(&oom_items[i]) != 0) {
            FAIL("range oom: item %d ran", i);
            break;
        }
    if (atomic_load(&oom_before) != held)
        FAIL("range oom: %d of the %d held ran", atomic_load(&oom_before), held);
    /* All held descriptors free again: the range's pieces take them and
     * run out; the rest runs inline. */
    rt_os_alloc_refuse(true);
    rc = dagrt_parallel_for_async(rt, &g, &job, 0, 20000, 1, oom_range, NULL);
    dagrt_group_wait(rt, &g);
    rt_os_alloc_refuse(false);
    if (rc != 0)
        FAIL("range, pieces out of memory: %d", rc);
    for (int i = 0; i < 20000; i++)
        if (atomic_load(&oom_items[i]) != 1) {
            FAIL("range, pieces out of memory: item %d ran %d times", i, atomic_load(&oom_items[i]));
            break;
        }
    dagrt_destroy(rt);
    return v;
}
