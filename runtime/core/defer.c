/*
 * core/defer.c - main-queue tasks held back while this thread runs a node's
 * body (core/core.h, "core/defer.c"). Thread-local: no ordering.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>

_Thread_local unsigned rt_deferred_n;
static _Thread_local struct {
    dagrt_fn fn;
    void *arg;
} held[RT_DEFERRED_MAX];

bool rt_defer_main(dagrt_fn fn, void *arg)
{
    if (rt_deferred_n == RT_DEFERRED_MAX)
        return false;
    held[rt_deferred_n].fn = fn;
    held[rt_deferred_n].arg = arg;
    rt_deferred_n++;
    return true;
}

void rt_deferred_flush(dagrt *rt)
{
    /* In the order they were held; a task queued here may be held again
     * (by a later node) only after this loop: it runs on the main queue. */
    unsigned n = rt_deferred_n;
    rt_deferred_n = 0;
    for (unsigned k = 0; k < n; k++)
        if (rt_spawn_own(rt, NULL, held[k].fn, held[k].arg, DAGRT_SPAWN_MAIN) != 0) {
            fprintf(stderr, "dagrt: fatal: could not queue a held main-thread task again\n");
            abort();
        }
}
