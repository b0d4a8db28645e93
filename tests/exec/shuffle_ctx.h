/* The context of shuffle.dag's graphs (shuffle_scenario.c): the value the
 * planted bug passes without a declared edge, what each frame saw, and the
 * order its tasks ran in. */
#ifndef SHUFFLE_CTX_H
#define SHUFFLE_CTX_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define SHUFFLE_LOG 64           /* task starts logged per frame */

struct shuffle_ctx {
    dagrt *rt;
    uint64_t frame;              /* the frame being run, set before it */
    uint64_t value;              /* produce writes the frame's number here */
    uint64_t stale;              /* frames in which consume read an old value */
    uint64_t first_stale;        /* the first of them, + 1 (0: none) */
    uint32_t off_main;           /* tasks run off the calling thread */
    uint32_t items;              /* spread's count */
    uint32_t nlog;
    uint8_t log[SHUFFLE_LOG];    /* this frame's task starts (an id per task, pieces 100 + k) */
    uint64_t hash;               /* every frame's log, hashed */
    /* orjoin / orfixed: what slow wrote, and the frames whose join read an
     * old value (the first, + 1). */
    uint64_t slow_value;
    uint64_t or_stale;
    uint64_t or_first;
};

/* engined (shuffle_scenario.c, engine_scenario): its tasks may run on a
 * guest beside the caller, so what two tasks share is atomic; a task's
 * own fields are written by its one run per frame and read after the
 * frame's wait. start / end: a frame-wide sequence taken at each task's
 * start and end (0: did not run). */
#define ENGINE_TASKS 7
struct engine_ctx {
    dagrt *rt;
    uint64_t frame;
    _Atomic uint64_t value;      /* produce writes the frame's number here */
    _Atomic uint32_t seq;
    _Atomic uint32_t off_main;   /* task runs off the calling thread, all frames */
    uint32_t start[ENGINE_TASKS], end[ENGINE_TASKS], runs[ENGINE_TASKS];
    uint64_t stale;              /* frames in which consume read an old value */
    uint64_t first_stale;        /* the first of them, + 1 (0: none) */
    uint64_t hash;               /* every frame's order of starts, hashed */
};
#endif
