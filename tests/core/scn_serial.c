/* scn_serial.c - the serial switch (dagrt_config.serial, DAGRT_SERIAL):
 * no worker starts, and every spawned task, batch, parallel-for piece,
 * asynchronous range and fiber task runs on the thread that waits (here
 * the main thread: thread index 0); and the shuffled serial switch
 * (scn_shuffle_switch, below). See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

static dagrt *ser_rt;
static atomic_int ran, off_main;

static void note(void)
{
    atomic_fetch_add(&ran, 1);
    if (dagrt_thread_index(ser_rt) != 0)
        atomic_fetch_add(&off_main, 1);
}

static void task(void *arg)
{
    (void)arg;
    note();
}

static void range(void *arg, size_t b, size_t e)
{
    (void)arg;
    for (size_t i = b; i < e; i++)
        note();
}

static void fiber(void *arg)
{
    note();
    dagrt_fiber_yield((dagrt *)arg);
    note();
}

static int run_all(dagrt *rt)
{
    int v = 0;
    ser_rt = rt;
    atomic_store(&ran, 0);
    atomic_store(&off_main, 0);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 100; i++)
        dagrt_spawn(rt, &g, task, NULL);
    dagrt_task_desc d[50];
    for (int i = 0; i < 50; i++)
        d[i] = (dagrt_task_desc){task, NULL};
    dagrt_spawn_batch(rt, &g, d, 50, 0);
    dagrt_spawn_batch(rt, &g, d, 50, DAGRT_SPAWN_HOT);
    for (int i = 0; i < 10; i++)
        dagrt_spawn_ex(rt, &g, fiber, rt, DAGRT_SPAWN_FIBER);
    dagrt_range_job j;
    dagrt_parallel_for_async(rt, &g, &j, 0, 1000, 0, range, NULL);
    dagrt_parallel_for(rt, 0, 1000, 1, range, NULL);
    dagrt_group_wait(rt, &g);
    int want = 100 + 50 + 50 + 20 + 1000 + 1000;
    if (atomic_load(&ran) != want || atomic_load(&off_main) != 0)
        FAIL("serial: %d of %d ran, %d off the waiting thread", atomic_load(&ran), want,
             atomic_load(&off_main));
    return v;
}

int scn_serial_switch(void)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.hot_workers = 1;
    cfg.serial = true;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    if (dagrt_worker_count(rt) != 0)
        FAIL("serial: %d workers", dagrt_worker_count(rt));
    v += run_all(rt);
    dagrt_destroy(rt);

    /* The environment's switch, with the defaults. */
    const char *old = getenv("DAGRT_SERIAL");
    char *saved = old ? strdup(old) : NULL;
#if defined(_WIN32)
    _putenv("DAGRT_SERIAL=1");
#else
    setenv("DAGRT_SERIAL", "1", 1);
#endif
    rt = dagrt_create(NULL);
    if (!rt || dagrt_worker_count(rt) != 0)
        FAIL("DAGRT_SERIAL=1: %d workers", rt ? dagrt_worker_count(rt) : -1);
    if (rt) {
        v += run_all(rt);
        dagrt_destroy(rt);
    }
#if defined(_WIN32)
    _putenv("DAGRT_SERIAL=");
#else
    unsetenv("DAGRT_SERIAL");
#endif
    if (saved) {
#if defined(_WIN32)
        char buf[256];
        snprintf(buf, sizeof buf, "DAGRT_SERIAL=%s", saved);
        _putenv(buf);
#else
        setenv("DAGRT_SERIAL", saved, 1);
#endif
        free(saved);
    } else {
        /* The control: without the switch, 3 workers are 3. */
        cfg.serial = false;
        rt = dagrt_create(&cfg);
        if (!rt || dagrt_worker_count(rt) != 3)
            FAIL("without the switch: %d workers", rt ? dagrt_worker_count(rt) : -1);
        if (rt)
            dagrt_destroy(rt);
    }
    return v;
}

/* ---------------------------------------------------------------------------
 * The shuffled serial switch (dagrt_config.shuffle, DAGRT_SERIAL=shuffle:SEED):
 * spawned tasks and a parallel-for's pieces run on the waiting thread, each
 * once, in an order drawn from the seed: neither the plain switch's newest
 * first nor spawn order, the same again for the same seed, another for
 * another seed. (The graphs' shuffle: tests/exec/shuffle_scenario.c.) */

#define SH_TASKS 64
#define SH_ITEMS 1000
#define SH_GRAIN 10

static int sh_order[SH_TASKS], sh_n;
static size_t sh_piece[SH_ITEMS], sh_np;
static unsigned char sh_seen[SH_ITEMS];

static void sh_task(void *arg)
{
    note();
    sh_order[sh_n++] = (int)(intptr_t)arg;   /* one thread: the switch's */
}

static void sh_range(void *arg, size_t b, size_t e)
{
    (void)arg;
    note();
    sh_piece[sh_np++] = b;
    for (size_t i = b; i < e; i++)
        sh_seen[i]++;
}

/* One round on rt: the task order into tasks[], the pieces' starts into
 * pieces[] (their count returned through *npieces). */
static int sh_round(dagrt *rt, int *tasks, size_t *pieces, size_t *npieces)
{
    int v = 0;
    ser_rt = rt;
    atomic_store(&ran, 0);
    atomic_store(&off_main, 0);
    sh_n = 0;
    sh_np = 0;
    memset(sh_seen, 0, sizeof sh_seen);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < SH_TASKS; i++)
        dagrt_spawn(rt, &g, sh_task, (void *)(intptr_t)i);
    dagrt_group_wait(rt, &g);
    dagrt_parallel_for(rt, 0, SH_ITEMS, SH_GRAIN, sh_range, NULL);
    if (sh_n != SH_TASKS || atomic_load(&off_main) != 0)
        FAIL("shuffle: %d of %d tasks ran, %d off the waiting thread", sh_n, SH_TASKS,
             atomic_load(&off_main));
    unsigned char once[SH_TASKS] = {0};
    bool fifo = true, lifo = true;
    for (int i = 0; i < sh_n; i++) {
        once[sh_order[i]]++;
        fifo &= sh_order[i] == i;
        lifo &= sh_order[i] == SH_TASKS - 1 - i;
    }
    for (int i = 0; i < SH_TASKS; i++)
        if (once[i] != 1)
            FAIL("shuffle: task %d ran %d times", i, once[i]);
    if (fifo || lifo)
        FAIL("shuffle: the tasks ran in %s order", fifo ? "spawn" : "reverse spawn");
    for (size_t i = 0; i < SH_ITEMS; i++)
        if (sh_seen[i] != 1) {
            FAIL("shuffle: item %zu ran %d times", i, sh_seen[i]);
            break;
        }
    bool ascending = sh_np > 1;
    for (size_t k = 1; k < sh_np; k++)
        ascending &= sh_piece[k] > sh_piece[k - 1];
    if (sh_np < 2 || ascending)
        FAIL("shuffle: %zu pieces, %s", sh_np, ascending ? "in ascending order" : "not split");
    memcpy(tasks, sh_order, sizeof sh_order);
    memcpy(pieces, sh_piece, sh_np * sizeof *pieces);
    *npieces = sh_np;
    return v;
}

static dagrt *sh_create(uint64_t seed)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.shuffle = true;
    cfg.shuffle_seed = seed;
    return dagrt_create(&cfg);
}

static void sh_setenv(const char *value)
{
#if defined(_WIN32)
    char buf[256];
    snprintf(buf, sizeof buf, "DAGRT_SERIAL=%s", value ? value : "");
    _putenv(buf);
#else
    if (value)
        setenv("DAGRT_SERIAL", value, 1);
    else
        unsetenv("DAGRT_SERIAL");
#endif
}

int scn_shuffle_switch(void)
{
    int v = 0;
    static int t1[SH_TASKS], t2[SH_TASKS], t3[SH_TASKS];
    static size_t p1[SH_ITEMS], p2[SH_ITEMS], p3[SH_ITEMS];
    size_t n1 = 0, n2 = 0, n3 = 0;
    const char *old = getenv("DAGRT_SERIAL");
    char *saved = old ? strdup(old) : NULL;
    sh_setenv(NULL);

    dagrt *rt = sh_create(41);
    if (!rt)
        return 1;
    if (dagrt_worker_count(rt) != 0 || dagrt_shuffle_seed(rt) != 41)
        FAIL("shuffle: %d workers, seed %llu", dagrt_worker_count(rt),
             (unsigned long long)dagrt_shuffle_seed(rt));
    v += sh_round(rt, t1, p1, &n1);
    v += run_all(rt);   /* everything else still runs, on the waiting thread */
    dagrt_destroy(rt);
    /* The same seed: the same orders. */
    rt = sh_create(41);
    if (!rt)
        return v + 1;
    v += sh_round(rt, t2, p2, &n2);
    dagrt_destroy(rt);
    if (memcmp(t1, t2, sizeof t1) != 0 || n1 != n2 || memcmp(p1, p2, n1 * sizeof *p1) != 0)
        FAIL("shuffle: seed 41 twice, two orders");
    /* Another seed: another order (64! task orders; the chance that two
     * seeds draw the same one is nil). */
    rt = sh_create(42);
    if (!rt)
        return v + 1;
    v += sh_round(rt, t3, p3, &n3);
    dagrt_destroy(rt);
    if (memcmp(t1, t3, sizeof t1) == 0)
        FAIL("shuffle: seeds 41 and 42 drew the same order");

    /* The environment: its seed wins, and one that is no number is refused. */
    sh_setenv("shuffle:41");
    rt = dagrt_create(NULL);
    if (!rt || dagrt_worker_count(rt) != 0 || dagrt_shuffle_seed(rt) != 41)
        FAIL("DAGRT_SERIAL=shuffle:41: %s, seed %llu", rt ? "made" : "refused",
             (unsigned long long)dagrt_shuffle_seed(rt));
    if (rt) {
        v += sh_round(rt, t2, p2, &n2);
        if (memcmp(t1, t2, sizeof t1) != 0)
            FAIL("DAGRT_SERIAL=shuffle:41: not seed 41's order");
        dagrt_destroy(rt);
    }
    sh_setenv("shuffle");
    rt = dagrt_create(NULL);
    if (!rt || dagrt_shuffle_seed(rt) == 0)
        FAIL("DAGRT_SERIAL=shuffle: no seed drawn");
    if (rt)
        dagrt_destroy(rt);
    sh_setenv("shuffle:4x");
    int err = 0;
    rt = dagrt_create_ex(NULL, &err);
    if (rt || err != DAGRT_EINVAL)
        FAIL("DAGRT_SERIAL=shuffle:4x: %s (%d)", rt ? "made" : "refused", err);
    if (rt)
        dagrt_destroy(rt);
    bool had = saved != NULL;
    sh_setenv(saved);
    free(saved);
    /* The control: the plain switch takes the newest task first. */
    if (!had) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.serial = true;
        rt = dagrt_create(&cfg);
        if (!rt || dagrt_shuffle_seed(rt) != 0)
            return v + 1;
        ser_rt = rt;
        sh_n = 0;
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < SH_TASKS; i++)
            dagrt_spawn(rt, &g, sh_task, (void *)(intptr_t)i);
        dagrt_group_wait(rt, &g);
        for (int i = 0; i < SH_TASKS; i++)
            if (sh_order[i] != SH_TASKS - 1 - i) {
                FAIL("plain serial: task %d ran %d-th", sh_order[i], i);
                break;
            }
        dagrt_destroy(rt);
    }
    return v;
}

/* ---------------------------------------------------------------------------
 * The shuffled serial switch on the queues beside the deque (core/work.c,
 * "THE SHUFFLED SERIAL SWITCH"): the main thread's queue (DAGRT_SPAWN_MAIN,
 * one by one and as a batch), the hot lane, and a deque beside guest slots
 * (whose public part a guest may steal). A planted bug in each: `consume`
 * reads what `produce`, spawned just before it, writes, with nothing
 * saying so; in FIFO order (the main queue's, the hot lane's) or newest
 * first it never or always shows, shuffled it shows in half the frames:
 * within Q_BOUND frames for every seed (a seed it misses: 2^-20). Declared
 * (produce spawns consume), never; the same seed replays the same orders.
 * Then a guest that really helps: every task once. */

#define Q_BOUND 20
#define Q_SEEDS 16
enum { Q_MAIN, Q_MAIN_BATCH, Q_HOT, Q_GUESTSLOT, Q_NMODES };
static const char *const q_name[] = {"DAGRT_SPAWN_MAIN", "a DAGRT_SPAWN_MAIN batch",
                                     "DAGRT_SPAWN_HOT", "beside a guest slot"};

typedef struct q_ctx {
    dagrt *rt;
    dagrt_group *g;
    unsigned flags;
    bool declared;
    uint64_t frame, value, stale, first, hash;
    int off_main;
} q_ctx;

static void q_note(q_ctx *q, unsigned id)
{
    if (dagrt_thread_index(q->rt) != 0)
        q->off_main++;
    q->hash = (q->hash ^ id) * UINT64_C(0x100000001b3);
}

static void q_consume(void *arg)
{
    q_ctx *q = arg;
    q_note(q, 2);
    if (q->value != q->frame) {   /* the planted bug: produce has not run */
        if (!q->stale)
            q->first = q->frame + 1;
        q->stale++;
    }
}

static void q_produce(void *arg)
{
    q_ctx *q = arg;
    q_note(q, 1);
    q->value = q->frame;
    if (q->declared)   /* the dependency said: consume follows produce */
        dagrt_spawn_ex(q->rt, q->g, q_consume, q, q->flags);
}

/* `frames` frames of the pair spawned `mode` on a shuffled runtime (seed;
 * the plain serial switch for 0). */
static q_ctx q_frames(uint64_t seed, int mode, bool declared, int frames)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.serial = seed == 0;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = seed;
    cfg.guest_threads = mode == Q_HOT || mode == Q_GUESTSLOT ? 2 : 0;
    q_ctx q;
    memset(&q, 0, sizeof q);
    q.value = UINT64_MAX;
    q.hash = UINT64_C(0xcbf29ce484222325);
    q.declared = declared;
    q.flags = mode == Q_HOT ? DAGRT_SPAWN_HOT : mode == Q_GUESTSLOT ? 0 : DAGRT_SPAWN_MAIN;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        q.off_main = -1;
        return q;
    }
    q.rt = rt;
    dagrt_group g;
    dagrt_group_init(&g);
    q.g = &g;
    for (int f = 0; f < frames; f++) {
        q.frame = (uint64_t)f;
        if (mode == Q_MAIN_BATCH && !declared) {
            dagrt_task_desc d[2] = {{q_produce, &q}, {q_consume, &q}};
            dagrt_spawn_batch(rt, &g, d, 2, DAGRT_SPAWN_MAIN);
        } else {
            dagrt_spawn_ex(rt, &g, q_produce, &q, q.flags);
            if (!declared)
                dagrt_spawn_ex(rt, &g, q_consume, &q, q.flags);
        }
        dagrt_group_wait(rt, &g);
        q.hash = (q.hash ^ 0xff) * UINT64_C(0x100000001b3);
    }
    dagrt_destroy(rt);
    return q;
}

/* A guest that really helps beside the shuffle: it spawns and waits for
 * its own tasks while the main thread does the same (suite tsan: the
 * shuffled takes race the guest's steals). */
#define Q_HELP 2000
static atomic_int q_runs[2 * Q_HELP];
static void q_count(void *arg) { atomic_fetch_add(&q_runs[(intptr_t)arg], 1); }
static void *q_guest(void *arg)
{
    dagrt *rt = arg;
    if (dagrt_thread_attach(rt) < 0)
        return NULL;
    dagrt_group g;
    dagrt_group_init(&g);
    for (intptr_t i = Q_HELP; i < 2 * Q_HELP; i++)
        dagrt_spawn(rt, &g, q_count, (void *)i);
    dagrt_group_wait(rt, &g);
    dagrt_thread_detach(rt);
    return NULL;
}

int scn_shuffle_queues(void)
{
    int v = 0;
    for (int mode = 0; mode < Q_NMODES; mode++) {
        for (uint64_t seed = 1; seed <= Q_SEEDS; seed++) {
            q_ctx q = q_frames(seed * 7777, mode, false, Q_BOUND);
            if (q.stale == 0 || q.off_main != 0)
                FAIL("shuffle, %s, seed %llu: the planted bug did not show in %d frames (%d off main)",
                     q_name[mode], (unsigned long long)(seed * 7777), Q_BOUND, q.off_main);
            q = q_frames(seed * 7777, mode, true, Q_BOUND);
            if (q.stale != 0 || q.off_main != 0)
                FAIL("shuffle, %s, seed %llu: declared, yet stale in %llu frames (%d off main)",
                     q_name[mode], (unsigned long long)(seed * 7777), (unsigned long long)q.stale,
                     q.off_main);
        }
        q_ctx a = q_frames(1234, mode, false, 60), b = q_frames(1234, mode, false, 60);
        q_ctx o = q_frames(4321, mode, false, 60);
        if (a.hash != b.hash || a.first != b.first || a.stale != b.stale)
            FAIL("shuffle, %s: seed 1234 twice, two runs", q_name[mode]);
        if (a.hash == o.hash)
            FAIL("shuffle, %s: seeds 1234 and 4321 drew the same orders", q_name[mode]);
        if (a.stale < 12 || a.stale > 48)   /* binomial(60, 1/2): 30 +- 4 */
            FAIL("shuffle, %s: stale in %llu of 60 frames", q_name[mode], (unsigned long long)a.stale);
        /* The control: the plain switch's FIFO queues never show it (the
         * deque's newest first always does: not a control). */
        q_ctx t = q_frames(0, mode, false, 60);
        if (mode != Q_GUESTSLOT && t.stale != 0)
            FAIL("plain serial, %s: stale in %llu frames", q_name[mode], (unsigned long long)t.stale);
    }

    /* A loop beside guest slots: its pieces shuffled on the caller. */
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.shuffle = true;
    cfg.shuffle_seed = 99;
    cfg.guest_threads = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return v + 1;
    static int t1[SH_TASKS];
    static size_t p1[SH_ITEMS];
    size_t n1 = 0;
    v += sh_round(rt, t1, p1, &n1);

    /* A guest that helps: every task once, main's and its own. */
    for (int i = 0; i < 2 * Q_HELP; i++)
        atomic_store(&q_runs[i], 0);
    pthread_t th;
    if (pthread_create(&th, NULL, q_guest, rt) != 0) {
        dagrt_destroy(rt);
        return v + 1;
    }
    dagrt_group g;
    dagrt_group_init(&g);
    for (intptr_t i = 0; i < Q_HELP; i++)
        dagrt_spawn(rt, &g, q_count, (void *)i);
    dagrt_group_wait(rt, &g);
    pthread_join(th, NULL);
    for (int i = 0; i < 2 * Q_HELP; i++)
        if (atomic_load(&q_runs[i]) != 1) {
            FAIL("shuffle beside a guest: task %d ran %d times", i, atomic_load(&q_runs[i]));
            break;
        }
    dagrt_destroy(rt);
    return v;
}
