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
};
#endif
