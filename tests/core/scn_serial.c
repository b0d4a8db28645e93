/* scn_serial.c - the serial switch (dagrt_config.serial, DAGRT_SERIAL):
 * no worker starts, and every spawned task, batch, parallel-for piece,
 * asynchronous range and fiber task runs on the thread that waits (here
 * the main thread: thread index 0); and the shuffled serial switch
 * (scn_shuffle_switch, below). See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

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
