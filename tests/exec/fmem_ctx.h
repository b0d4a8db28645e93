/* The context of fmem.dag's graph (fmem_scenario.c): where each frame's
 * allocations are listed, one slot per frame copy (dagrt_get_frame). */
#ifndef FMEM_CTX_H
#define FMEM_CTX_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

/* One allocation, itself in frame memory: its bytes hold `tag`'s pattern. */
struct fmem_rec {
    struct fmem_rec *next;
    unsigned char *p;
    uint32_t size;
    uint32_t tag;
};

struct fmem_slot {
    _Atomic(struct fmem_rec *) head;   /* this frame's allocations */
    _Atomic uint64_t number;           /* the frame that owns the slot now */
    _Atomic uint32_t count;            /* allocations listed */
};

struct fmem_ctx {
    dagrt *rt;
    uint32_t per_task;                 /* allocations per task (per item: 1) */
    uint32_t items;                    /* the parallel task's count */
    uint32_t big_every;
    uint32_t max_size;                 /* largest allocation (0: 4096) */
    uint64_t first;                    /* the first frame's number in this run of frames */                /* one allocation in this many is over a chunk (0: none) */
    struct fmem_slot slot[DAGRT_FRAME_SLOTS];
    _Atomic int bad;                   /* violations seen by tasks */
    _Atomic uint64_t checked;          /* frames the check task saw */
    _Atomic uint64_t prev_checked;     /* of which the previous frame was re-checked */
    _Atomic uint64_t numbers;          /* sum of the frame numbers seen by check */
    void *keep;                        /* frame 0's first allocation (the ASan checks) */
};


/* The context of fcopy.dag's graph: a copy per slot, each filled with its
 * frame's number. */
#define FCOPY_WORDS 1024
struct fcopy_ctx {
    uint64_t copy[DAGRT_FRAME_SLOTS][FCOPY_WORDS];
    uint64_t first;                    /* the first frame's number in this run */
    _Atomic int bad;
    _Atomic uint64_t reads;            /* copies checked whole */
};
#endif
