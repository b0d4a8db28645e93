/* spawn_ctx.h - the context of tests/trace/spawn.dag and what its bodies
 * (spawn_bodies.c) share with the scenarios (obs_spawn.c,
 * obs_spawn_alloc.c). */
#ifndef SPAWN_CTX_H
#define SPAWN_CTX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define SPAWN_ITEMS 1024
/* What fan spawns each frame that an observer sees: 4 dagrt_spawn, 4
 * dagrt_spawn_words, 4 small and 2 large dagrt_spawn_inline, 4 in a
 * dagrt_spawn_batch, 2 hot, 2 that spawn one child each (4), and fiber
 * tasks (DAGRT_SPAWN_FIBER): 1 of dagrt_spawn_ex and 2 in a batch that
 * never wait, and SPAWN_FWAIT that wait SPAWN_FWAITS times each, one of
 * dagrt_spawn_ex and one of dagrt_spawn_inline (a yield, an event and a
 * timed semaphore wait, the last two ended by a waker task each spawns:
 * 4 more tasks): 33, all but the 2 large inline ones with fan as their
 * recorded parent. */
#define SPAWN_SEEN 33
#define SPAWN_WITH_PARENT 31
#define SPAWN_FWAIT 2
#define SPAWN_FWAITS 3
/* Slices a frame (task_begin calls): one a task, and one more a wait. */
#define SPAWN_SLICES (SPAWN_SEEN + SPAWN_FWAIT * SPAWN_FWAITS)

/* A waiting fiber task's record (fan sets it up each frame; the task
 * counts its waits; the scenario's observer follows its slices).
 *
 * Every wait must suspend for the counts to be exact, and a wait whose
 * wake-up comes before the fiber parks returns without suspending. So
 * the waker waits for the observer's word that the slice its wait ends
 * ended suspended (spawn_fwait_note, from task_end: `parked`)
 * before it sets the event or releases the unit: without that report it
 * gives up after SPAWN_WAKER_NS, wakes the task anyway and counts a miss.
 */
#define SPAWN_WAKER_NS 2000000000u
struct spawn_fwait {
    struct spawn_ctx *c;
    dagrt_group *g;              /* fan's group, which the wakers join */
    dagrt_event ev;
    dagrt_sem sem;
    _Atomic unsigned parked;     /* the observer: slices ended by a suspend so far */
    unsigned waits;              /* waits the task made (written by the task) */
    /* The observer's (obs_spawn.c): the slice it expects next, the thread
     * of the slice open, slices ended by a suspend, ends of the task. */
    unsigned next, susp, finals;
    int open_on;                 /* -1: no slice open */
};

struct spawn_ctx {
    dagrt *rt;
    _Atomic uint64_t ran;        /* spawned tasks run (fiber and children included), all frames */
    _Atomic uint64_t off_thread; /* ran where dagrt_thread_index was not a runtime thread's */
    _Atomic uint64_t sink;
    _Atomic uint64_t missed;     /* wakers that never saw their wait's suspend reported */
    struct spawn_fwait fw[SPAWN_FWAIT];
};

/* The spawned tasks' functions: whatever an observer reports must be one
 * of these (never one of the runtime's own). */
bool spawn_is_ours(dagrt_fn fn);
/* The tasks fan spawns, with no parent expected (the large inline ones). */
bool spawn_is_big(dagrt_fn fn);
/* The waiting fiber task's record that task event fn(arg) runs, or NULL
 * (another task). */
struct spawn_fwait *spawn_fwait_of(dagrt_fn fn, void *arg);
/* The waiting fiber tasks' functions, SPAWN_FWAIT of them. */
void spawn_fwait_fns(dagrt_fn out[SPAWN_FWAIT]);
/* An observer's task_end: a waiting fiber task's slice that ended
 * suspended lets its waker go on (`parked`). Touches nothing else. */
void spawn_fwait_note(const dagrt_task_event *e);

#endif
