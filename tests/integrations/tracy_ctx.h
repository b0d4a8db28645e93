/* tracy_ctx.h - the context of tracy_frame.dag (tracy_main.c). */
#ifndef TRACY_CTX_H
#define TRACY_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define TRACY_PARTICLES 4096

struct tracy_ctx {
    dagrt *rt;
    intptr_t rd, wr;             /* a pipe: input writes a byte a frame, net reads it */
    int errors;
    float pos[TRACY_PARTICLES];
    uint64_t sink;
};

#endif
