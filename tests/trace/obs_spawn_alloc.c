/*
 * obs_spawn_alloc.c - zero allocations per frame while the trace records
 * the program's spawned tasks and an observer sees them (as
 * tests/exec/alloc_frame.c for the nodes): spawn.dag's fan spawns tasks
 * of every kind each frame, fiber tasks that wait among them (a slice a
 * wait); once warm, frames one at a time and started
 * ones allocate nothing, and the tasks were reported all the while.
 * Hosted by the plain driver alone: it counts every allocation of its
 * process (tests/fixtures/alloc_count.c), which Criterion's own threads
 * would add to.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc_count.h"
#include "spawn.h"

static _Atomic unsigned reported;

static void on_task_begin(void *u, const dagrt_task_event *e)
{
    (void)u;
    (void)e;
    atomic_fetch_add_explicit(&reported, 1, memory_order_relaxed);   /* relaxed: read after the frames */
}

/* A waiting fiber task's waker goes on once its wait's suspend is
 * reported (spawn_ctx.h). */
static void on_task_end(void *u, const dagrt_task_event *e)
{
    (void)u;
    spawn_fwait_note(e);
}

static const dagrt_observer count_obs = { .task_begin = on_task_begin, .task_end = on_task_end };

static int frames(dagrt *rt, struct spawn_ctx *c, spawner_instance_t *inst, unsigned n)
{
    for (unsigned f = 0; f < n; f++)
        if (spawner_run(rt, c) != 0 || spawner_instance_start(rt, inst, c) != 0 ||
            spawner_instance_wait(rt, inst) != 0)
            return 1;
    return 0;
}

static int obs_spawn_alloc(void)
{
    unsigned long c0 = alloc_count();
    void *volatile probe = malloc(16);   /* volatile: the pair must not be optimised away */
    free(probe);
    if (alloc_count() != c0 + 1) {
        printf("obs_spawn_alloc: the malloc counter does not work\n");
        return 1;
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.observer = &count_obs;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt || dagrt_trace_start(rt, NULL) != 0) {
        printf("obs_spawn_alloc: dagrt_create or dagrt_trace_start failed\n");
        return 1;
    }
    static struct spawn_ctx c;
    static spawner_instance_t inst;
    c.rt = rt;
    if (spawner_instance_init(&inst) != 0 || frames(rt, &c, &inst, 200) != 0)   /* warm */
        return 1;
    unsigned r0 = atomic_load(&reported);
    unsigned long a0 = alloc_count();
    if (frames(rt, &c, &inst, 500) != 0)
        return 1;
    unsigned long a1 = alloc_count();
    unsigned r1 = atomic_load(&reported);
    dagrt_destroy(rt);
    printf("obs_spawn_alloc: %lu allocations in 1000 frames, %u spawned tasks' slices reported\n",
           a1 - a0, r1 - r0);
    return (a1 != a0) + (r1 - r0 != 1000u * SPAWN_SLICES) + (atomic_load(&c.missed) != 0);
}

const scenario scenario_table[] = {
    {"obs_spawn_alloc", obs_spawn_alloc, NULL},
    {NULL, NULL, NULL},
};
