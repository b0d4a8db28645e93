/*
 * wait/io_close.c - ending I/O calls from outside them: dagrt_close (the
 * calls parked on a handle end with DAGRT_EBADF before it closes) and
 * rt_io_fini (dagrt_destroy's end of every call left, then the reactor's).
 * The calls themselves are wait/io.c's.
 */

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "io.h"
#include "oneshot.h"

/* ------------------------------------------------------------- close */

int dagrt_close(dagrt *rt, dagrt_handle h)
{
    if (!rt)
        return rt_error_set(DAGRT_EINVAL, 0);
    int bad = rt_os_handle_check(h);   /* as rt_io_call: never another descriptor */
    if (bad)
        return rt_error_set(rt_os_error_code(bad), bad);
    /* A thread outside the runtime (core/destroy.c, "DESTROY AND THREADS
     * OUTSIDE"): refused only once every task has finished, and then it
     * just closes h: destroy is ending every call left. */
    int in_ = rt_oneshot_enter(rt, RT_SEALED);
    rt_io *io = in_ < 0 ? NULL : io_of(rt);
    if (io) {
        /* End the calls parked on h, then wait until the reactor has let
         * go of every one of them (a cancel is answered at once; a lane
         * read of a regular file finishes by itself). */
        for (unsigned spins = 0;; spins++) {
            bool any = false;
            for (unsigned i = 0; i < io->nshards; i++) {
                rt_io_shard *sh = &io->shards[i];
                rt_os_mutex_lock(&sh->mu);
                for (io_req *q = sh->inflight; q; q = q->next) {
                    /* A record whose group reached 0 is done. */
                    if (q->op.h != h || rt_oneshot_over(&q->w))
                        continue;
                    any = true;
                    if (!q->canceling) {
                        q->closing = true;
                        rt_io_req_cancel(io, q);
                    }
                }
                rt_os_mutex_unlock(&sh->mu);
            }
            if (!any)
                break;
            if (spins < 64)
                rt_os_yield();
            else
                rt_os_sleep_ns(50000);
        }
    }
    rt_oneshot_leave(rt, in_);
    int e = rt_os_handle_close(h);
    return rt_error_set(e ? rt_os_error_code(e) : 0, e);
}

/* ------------------------------------------- create / destroy hooks */

void rt_io_fini(dagrt *rt)
{
    rt_io *io = io_of(rt);
    if (!io)
        return;
    /* Every task has finished; a thread outside the runtime may still be
     * in a call (cancelled by destroy's cancel of rt->waits): wait until the reactor has
     * let go of every buffer. */
    for (;;) {
        size_t n = 0;
        for (unsigned i = 0; i < io->nshards; i++) {
            rt_io_shard *sh = &io->shards[i];
            rt_os_mutex_lock(&sh->mu);
            sh->stopping = true;   /* a straggler's new call: DAGRT_ECANCELED */
            n += sh->ninflight;
            for (io_req *q = sh->inflight; q; q = q->next)
                rt_io_req_cancel(io, q);
            rt_os_mutex_unlock(&sh->mu);
        }
        if (n == 0)
            break;
        rt_os_sleep_ns(100000);
    }
    if (io->rtlinked)
        rt_cancel_detach(&io->rtlink);
    io->r->ops->destroy(io->r);
    rt_io_free(io);
    atomic_store_explicit(&rt->io, NULL, memory_order_relaxed);   /* relaxed: no thread is left */
}
