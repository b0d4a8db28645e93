/* scn_serial.c - the serial switch (dagrt_config.serial, DAGRT_SERIAL):
 * no worker starts, and every spawned task, batch, parallel-for piece,
 * asynchronous range and fiber task runs on the thread that waits (here
 * the main thread: thread index 0). See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <stdatomic.h>
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
