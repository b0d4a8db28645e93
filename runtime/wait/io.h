/*
 * wait/io.h - what wait/io.c (the I/O calls), wait/io_close.c (closing and
 * the runtime's end) and wait/io_reap.c (batching and reaping: who defers
 * a submit, who flushes and reaps) share: the runtime's I/O state, a
 * call's record, and the calls wait/io.c makes into wait/io_reap.c.
 * Not installed; include after core/core.h.
 */
#ifndef DAGRT_IO_INTERNAL_H
#define DAGRT_IO_INTERNAL_H

#include "cancel.h"
#include "oneshot.h"
#include "../os/reactor.h"

typedef struct io_req io_req;    /* wait/io.c: one call's op record */
typedef struct io_chunk io_chunk;

/* One slot's share of the calls (RT_IO_SHARDS, wait/io.c): the records of the
 * calls its threads make, from their start to their end (a call that
 * moved with its fiber still ends in its record's shard). */
typedef struct rt_io_shard {
    _Alignas(64) rt_os_mutex mu; /* the lists, the flags, submit and cancel of its ops */
    io_req *free;
    io_req *inflight;
    size_t ninflight;
    io_chunk *chunks;
    bool stopping;
    /* The runtime's scope (rt->waits) was cancelled (wait/io.c, io_rt_cancelled). */
    bool rt_cancelled;
    /* Its calls made by tasks that are waiting, for destroy's "only waits
     * are left" (rt->nwaits' share: a shared counter cost two threads
     * doing I/O an RMW on one line each per wait; relaxed, as nwaits). */
    _Atomic int64_t nwaits;
} rt_io_shard;

typedef struct rt_io {
    rt_reactor *r;
    const char *kind;
    unsigned entries;
    unsigned nshards;            /* 1, or one per slot (reactor.h, concurrent) */
    rt_io_shard *shards;         /* [nshards] */
    /* The runtime's scope (rt->waits): one link for every call (wait/io.c,
     * io_rt_cancelled), set before the state is published. */
    bool rtlinked;
    rt_cancel_link rtlink;
    _Atomic uint64_t errors[RT_IO_KINDS];   /* the rest: the threads' lines (wait/io.c, count) */
} rt_io;

static inline rt_io *io_of(const dagrt *rt)
{
    /* acquire: pairs with io_get's release store, so the state is whole. */
    return atomic_load_explicit(&((dagrt *)(uintptr_t)rt)->io, memory_order_acquire);
}

/* One call's op record (wait/io.c). */
struct io_req {
    rt_io_op op;                 /* first: done() gets &op */
    /* The one timed wait (wait/oneshot.h): completed by done(); its
     * deadline (dagrt_poll) and its link on the caller's scope end the op
     * through req_end. */
    rt_oneshot w;
    struct io_req *prev, *next;  /* the in-flight list; next: the free list */
    bool closing;                /* dagrt_close ended it: EBADF */
    bool canceling;              /* a cancel was handed to the reactor */
    bool timed_out;              /* its deadline's timer fired: ETIMEDOUT */
    struct rt_io *io;
    rt_io_shard *sh;             /* whose lists it is on, whose lock orders it */
};

/* mu held: hands q's cancel to the reactor once. */
static inline void rt_io_req_cancel(rt_io *io, io_req *q)
{
    if (q->canceling)
        return;
    q->canceling = true;
    io->r->ops->cancel(io->r, &q->op);
}

/* wait/io.c. Frees the I/O state (every call has ended). */
void rt_io_free(rt_io *io);

/* wait/io_reap.c. The reactor the first call starts (NULL: *err, and in
 * *os_err the system's reason, 0 if none). */
rt_reactor *rt_io_reactor_make(const dagrt *rt, unsigned entries, int *err, int *os_err);
/* The calling thread's slot (rt_io_op.slot). */
unsigned rt_io_slot(dagrt *rt);
/* Whether this call's submit may wait in the reactor's queue
 * (mu held, before the submit). */
bool rt_io_may_defer(dagrt *rt, const rt_io *io);
/* After a submit (mu released): the main thread's lease (wait/io_reap.c,
 * LEASE) and, deferred, this thread's duty to flush it. */
void rt_io_submitted(dagrt *rt, rt_io *io, bool deferred);

/* wait/io.c. One call of the public API (wait/io_api.c): op `in` submitted, waited
 * for until deadline or c's cancel, traced; its result (bytes, a handle,
 * events, or a negative DAGRT_E* code), the completed op in *out. */
int64_t rt_io_call(dagrt *rt, const rt_io_op *in, uint64_t deadline, dagrt_cancel *c,
                   rt_io_op *out);
/* rt_io_call's asynchronous form (dagrt.h, dagrt_*_async; wait/async.c):
 * DAGRT_PENDING, or the result now. fromlen / outh: where recvfrom's
 * address length and accept's handle go (NULL for the other calls). */
int64_t rt_io_call_async(dagrt *rt, dagrt_async *a, const rt_io_op *in, uint64_t deadline,
                         dagrt_cancel *c, size_t *fromlen, dagrt_handle *outh);
/* An op record of `kind` on handle h, every other field zero. */
void rt_io_op_clear(rt_io_op *op, int kind, dagrt_handle h);

#endif
