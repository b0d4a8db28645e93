/* The context of inst.dag's graph: what each task did in the current
 * frame (inst_scenario.c). */
#ifndef INST_CTX_H
#define INST_CTX_H
#include <pthread.h>
#include <stdatomic.h>

#include "dagrt.h"

enum { INST_A, INST_B, INST_C, INST_H, INST_M, INST_D, INST_N };

struct inst_ctx {
    _Atomic int seq;             /* next sequence number in this frame */
    _Atomic int runs[INST_N];    /* times each task ran in this frame */
    _Atomic int began[INST_N];   /* sequence number at the task's start */
    _Atomic int ended[INST_N];   /* and at its end */
    pthread_t thread[INST_N];    /* the thread it ran on (ordered by the run's end) */
    /* Misuse from inside a task: task a tries these when set. */
    dagrt *rt;
    void *victim;                /* an inst_instance_t */
    _Atomic int nested_start, nested_wait;
};
#endif
