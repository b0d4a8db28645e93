/* The context of shuffle.dag's graphs (shuffle_scenario.c): the value the
 * planted bug passes without a declared edge, what each frame saw, and the
 * order its tasks ran in. */
#ifndef SHUFFLE_CTX_H
#define SHUFFLE_CTX_H
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
#endif
