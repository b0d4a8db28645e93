/* obs_ctx.h - the context of tests/trace/obs.dag. */
#ifndef OBS_CTX_H
#define OBS_CTX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define OBS_PARTICLES 4096
#define OBS_LOADER_YIELDS 2

struct obs_ctx {
    dagrt *rt;
    uint64_t frame;              /* set by the caller before each run */
    _Atomic uint64_t items;      /* particles run, all frames */
    _Atomic uint64_t sink;
};

#endif
