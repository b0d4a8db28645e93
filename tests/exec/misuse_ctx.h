#ifndef MISUSE_CTX_H
#define MISUSE_CTX_H
#include <stdatomic.h>
#include "dagrt.h"
struct misuse_ctx {
    dagrt *rt;
    int mode;                 /* 0 plain, 1 nested call, 2 hold for a concurrent call,
                                 3 nested G_pipeline_submit and G_pipeline_drain (pipe_misuse.c) */
    int nested_rc_first, nested_rc_second;
    int nested_drain_first, nested_drain_second;
    void *pipe;               /* mode 3: the misuse_pipeline_t the tasks submit to */
    int slow;                 /* `first` takes 20 us: a frame worth sharing */
    _Atomic int holding;      /* mode 2: `first` is running and waits for `release` */
    _Atomic int release;
    _Atomic int runs;         /* times `first` ran */
    _Atomic int seconds;      /* times `second` ran */
};
#endif
