/*
 * dagrt_box2d.h - Box2D v3's task system on libdagrt: b2WorldDef's
 * enqueueTask / finishTask run Box2D's jobs as libdagrt tasks on the
 * engine's one pool (docs/runtime.md, "Middleware on the same pool").
 *
 *     dagrt_box2d tasks;                       // lives as long as the world
 *     dagrt_box2d_init(&tasks, rt);
 *     b2WorldDef def = b2DefaultWorldDef();
 *     dagrt_box2d_world_def(&tasks, &def);     // workerCount, callbacks, context
 *     b2WorldId world = b2CreateWorld(&def);
 *
 * One adapter may serve several worlds, stepped from any threads (a slot
 * is claimed by a CAS). Each enqueue takes a slot (a wait
 * group kept off the stack: a task handle finished later, in any order) and
 * spawns one task; finishTask waits on the slot's group, helping on a
 * runtime thread. Nothing is allocated per task: the slots are here, the
 * task descriptors come from the runtime's pools.
 */
#ifndef DAGRT_BOX2D_H
#define DAGRT_BOX2D_H

#include "box2d/box2d.h"
#include "dagrt.h"

/* The adapter's shared words: C11 atomics inside dagrt_box2d.c (which
 * defines DAGRT_BOX2D_INSIDE_ and includes <stdatomic.h>), plain words of
 * the same size and alignment to everyone else, so the header includes no
 * <stdatomic.h> and C++ engines include it as it is (dagrt.h does the
 * same with its DAGRT__SHARED_). Only the adapter's code touches them. */
#if defined(DAGRT_BOX2D_INSIDE_) && !defined(__cplusplus)
#define DAGRT_BOX2D_SHARED_(T) _Atomic(T)
#else
#define DAGRT_BOX2D_SHARED_(T) T
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Box2D has at most workerCount parallel-for tasks and its tree task in
 * flight per world (B2_MAX_WORKERS is 64): twice that is never full. */
#define DAGRT_BOX2D_SLOTS 160

typedef struct dagrt_box2d_slot {
    dagrt_group group;
    b2TaskCallback *task;
    void *context;
    DAGRT_BOX2D_SHARED_(int) busy;        /* 1 from enqueue until its finish returned */
} dagrt_box2d_slot;

typedef struct dagrt_box2d {
    dagrt *rt;
    DAGRT_BOX2D_SHARED_(unsigned) next;   /* where the next slot search starts (a hint) */
    DAGRT_BOX2D_SHARED_(unsigned long) spawned;      /* tasks spawned on the pool */
    DAGRT_BOX2D_SHARED_(unsigned long) inline_runs;  /* tasks run inside enqueue (no slot, or spawn failed) */
    dagrt_box2d_slot slot[DAGRT_BOX2D_SLOTS];
} dagrt_box2d;

/* 0, or DAGRT_EINVAL for a NULL a or rt. */
int dagrt_box2d_init(dagrt_box2d *a, dagrt *rt);
/* Points def at the adapter: workerCount = dagrt_thread_count(rt) (Box2D
 * clamps it to its maximum), enqueueTask, finishTask, userTaskContext. */
void dagrt_box2d_world_def(dagrt_box2d *a, b2WorldDef *def);

/* Statistics: tasks spawned on the pool, and tasks run inside enqueue
 * (no free slot, or no descriptor). Any thread. */
unsigned long dagrt_box2d_spawned(const dagrt_box2d *a);
unsigned long dagrt_box2d_inline_runs(const dagrt_box2d *a);

/* The callbacks themselves (userContext: the dagrt_box2d). */
void *dagrt_box2d_enqueue(b2TaskCallback *task, void *taskContext, void *userContext);
void dagrt_box2d_finish(void *userTask, void *userContext);

#ifdef __cplusplus
}
#endif
#endif
