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
 * dagrt_spawn_batch, 2 hot, and 2 that spawn one child each (4): 24, all
 * but the 2 large inline ones with fan as their recorded parent. Its fiber
 * task (DAGRT_SPAWN_FIBER) is not reported. */
#define SPAWN_SEEN 24
#define SPAWN_WITH_PARENT 22

struct spawn_ctx {
    dagrt *rt;
    _Atomic uint64_t ran;        /* spawned tasks run (fiber and children included), all frames */
    _Atomic uint64_t off_thread; /* ran where dagrt_thread_index was not a runtime thread's */
    _Atomic uint64_t sink;
};

/* The spawned tasks' functions: whatever an observer reports must be one
 * of these (never one of the runtime's own). */
bool spawn_is_ours(dagrt_fn fn);
/* The tasks fan spawns, with no parent expected (the large inline ones). */
bool spawn_is_big(dagrt_fn fn);

#endif
