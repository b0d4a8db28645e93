/* The context of pieces.dag (pieces_scenario.c): what each frame saw of
 * its parallel task: which thread claimed it (called its count) and how
 * many pieces each thread ran. */
#ifndef PIECES_CTX_H
#define PIECES_CTX_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define PIECES_THREADS 4     /* thread indexes counted: 0 .. 3 */

struct pieces_ctx {
    dagrt *rt;
    size_t items;            /* spread's count */
    uint64_t item_ns;        /* each item spins this long */
    int claimer;             /* the thread that called spread's count, this frame */
    _Atomic uint32_t pieces[PIECES_THREADS];   /* this frame's pieces per thread */
    _Atomic uint32_t items_run;                /* this frame's items, all threads */
    _Atomic uint32_t other;                    /* pieces on a thread index >= PIECES_THREADS */
    uint64_t seed_ns;        /* seed spins this long (the started way; 0 elsewhere) */
    _Atomic int seeder;      /* the thread that began seed this frame, -1 before */
    uint64_t seed_t0;        /* when seed began (dagrt_now_ns), written before seeder */
    _Atomic int holder;      /* the thread running the started way's hold task, -1 none */
    _Atomic int go;          /* the hold task may end */
};
#endif
