/*
 * wait/io.c - the I/O calls of "waiting on the world" (design/io.md): the
 * portable half. The system half is the reactor (os/reactor.h).
 *
 * A call takes an op record from its shard's pool, fills it, links it on
 * the shard's in-flight list and submits it, all under the shard's lock
 * (so a cancel, which walks that list under the same lock, never reaches
 * the reactor before its op, nor after the record went back to the pool),
 * and waits on
 * the record's one timed wait (wait/oneshot.h: a one-shot group, count 1),
 * which the reactor's done callback completes: the same hand-off as every
 * other wait of the runtime (a fiber's suspend/resume handshake,
 * fiber/sched.c, so a completion that lands before the fiber finished
 * suspending resumes it exactly once). Who waits how:
 *   - a fiber task suspends (its worker runs other work);
 *   - a plain task on a worker, or the main thread, helps as in
 *     dagrt_event_wait and sleeps when there is nothing to run;
 *   - a thread that is not one of rt's sleeps on the record's word.
 *
 * RT_IO_SHARDS. A reactor that takes submits from several threads at once
 * (reactor.h, concurrent: io_uring, a ring per thread) gets one shard per
 * thread slot (rt_io_slot: the thread's context, or one shared by the
 * threads outside the runtime); others one for all. With one lock for
 * every call, two threads doing I/O met on it twice per call, and a
 * contended pthread mutex slept in the kernel at once: in qd32 the
 * futex wake-ups and waits were a tenth of the run. A record stays in its
 * shard for good (a call that moved with its fiber still ends there, so
 * the two threads still meet on a shard's lock, briefly: os_linux.c's
 * mutexes spin before they sleep), and
 * what walks every call (the runtime's cancel, dagrt_close, rt_io_fini)
 * walks every shard, one lock at a time.
 *
 * The reactor starts at the runtime's first call (a runtime that does no
 * I/O has no ring and no reactor thread). Each shard's pool is made in chunks of
 * io_ring_entries records, the first chunk of every shard with the
 * reactor, and never shrinks, so once warm a call allocates nothing,
 * whichever thread makes it. A call is attached to its scope (c) and, for
 * dagrt_poll's deadline, to a timer (wait/wait.h); the runtime's scope
 * (rt->waits, which dagrt_destroy cancels once only waits are left: the
 * calls then return DAGRT_ECANCELED, later ones at once) has one link for
 * all of them, which walks the in-flight list (a link per call would cost
 * every call two lock round trips on that scope's one tree lock); each
 * ends the op in the kernel through the reactor's cancel. rt_io_fini
 * (after every task has finished) frees the rest; it and dagrt_close,
 * which end calls from outside them, are in wait/io_close.c.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "cancel.h"
#include "io.h"
#include "oneshot.h"
#include "../os/reactor.h"
#include "wait.h"

#define IO_ENTRIES_DEFAULT 256u
#define IO_ENTRIES_MAX     32768u

_Static_assert((int)DAGRT_IO_KINDS == (int)RT_IO_KINDS && (int)DAGRT_IO_POLL == (int)RT_IO_POLL,
               "I/O kinds disagree");
_Static_assert((int)DAGRT_POLL_IN == (int)RT_IO_POLL_IN && (int)DAGRT_POLL_OUT == (int)RT_IO_POLL_OUT &&
               (int)DAGRT_POLL_ERR == (int)RT_IO_POLL_ERR, "poll bits disagree");


struct io_chunk {
    struct io_chunk *next;
    io_req reqs[];
};

/* sh->mu held. */
static bool pool_grow(const rt_io *io, rt_io_shard *sh)
{
    io_chunk *ch = malloc(sizeof *ch + (size_t)io->entries * sizeof(io_req));
    if (!ch)
        return false;
    memset(ch, 0, sizeof *ch + (size_t)io->entries * sizeof(io_req));
    ch->next = sh->chunks;
    sh->chunks = ch;
    for (unsigned i = 0; i < io->entries; i++) {
        ch->reqs[i].next = sh->free;
        sh->free = &ch->reqs[i];
    }
    return true;
}

void rt_io_free(rt_io *io)
{
    for (unsigned i = 0; i < io->nshards; i++) {
        rt_io_shard *sh = &io->shards[i];
        while (sh->chunks) {
            io_chunk *n = sh->chunks->next;
            free(sh->chunks);
            sh->chunks = n;
        }
        rt_os_mutex_fini(&sh->mu);
    }
    if (io->shards)
        rt_os_free_aligned(io->shards);
    free(io);
}

/* The shard of a call made on this thread (RT_IO_SHARDS). */
static rt_io_shard *shard_of(const rt_io *io, unsigned slot)
{
    return &io->shards[slot < io->nshards ? slot : 0];   /* one shard: every slot's */
}

/* The shards, one per slot for a concurrent reactor (reactor.h: a ring
 * per thread), else one: NULL on no memory. */
static bool shards_make(dagrt *rt, rt_io *io)
{
    unsigned n = io->r->concurrent ? (unsigned)rt->nctx + 1u : 1u;
    io->shards = rt_os_alloc_aligned(64, (size_t)n * sizeof *io->shards);
    if (!io->shards)
        return false;
    memset(io->shards, 0, (size_t)n * sizeof *io->shards);
    for (; io->nshards < n; io->nshards++)
        if (rt_os_mutex_init(&io->shards[io->nshards].mu) != 0)
            return false;
    /* Every slot's records now: a slot's first call may come many frames
     * in (a task that moved to another worker) and must not allocate. */
    for (unsigned i = 0; i < n; i++)
        if (!pool_grow(io, &io->shards[i]))
            return false;
    return true;
}

static void io_rt_cancelled(rt_cancel_link *l);

/* The runtime's I/O state, made (rt->io_make_mu held). NULL: *err, and
 * *os the system's reason (EMFILE with every descriptor taken), 0 if none. */
static rt_io *io_make(dagrt *rt, int *err, int *os)
{
    rt_io *io = calloc(1, sizeof *io);
    if (!io) {
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    unsigned n = rt->cfg.io_ring_entries > 0 ? (unsigned)rt->cfg.io_ring_entries : IO_ENTRIES_DEFAULT;
    io->entries = n > IO_ENTRIES_MAX ? IO_ENTRIES_MAX : n;
    io->r = rt_io_reactor_make(rt, io->entries, err, os);
    if (!io->r) {
        rt_io_free(io);
        return NULL;
    }
    if (!shards_make(rt, io)) {
        io->r->ops->destroy(io->r);
        rt_io_free(io);
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    io->kind = io->r->ops->name;
    if (io->r->ops->reap) {
        /* The reactor's thread resumes a fiber only now and then (the
         * workers reap first), so its descriptors, from the pool of threads
         * outside the runtime, would not be warm by the time it needs one:
         * a slab for that pool now, not in some later frame. */
        rt_os_mutex_lock(&rt->shared_mu);
        if (!rt->shared_free) {
            rt_task *t = rt_slab_new(&rt->shared_slabs, RT_HOME_SHARED);
            if (t)
                rt->shared_free = t;   /* its descriptors come chained */
        }
        rt_os_mutex_unlock(&rt->shared_mu);
    }
    /* release: the reactor thread's acquire load sees the counter whole. */
    atomic_store_explicit(&io->r->awake, &rt->io_awake, memory_order_release);
    /* The runtime's scope, before the state is published: a request from
     * here on walks the in-flight lists (empty until then); one made
     * already refuses the link, and every call is cancelled as it
     * submits (io_call_). */
    io->rtlink.on_cancel = io_rt_cancelled;
    io->rtlinked = rt_cancel_attach(&rt->waits, &io->rtlink) == 0;
    /* Only when refused: once linked, a request (dagrt_destroy, from
     * another thread) may already be setting them under each shard's
     * lock; they start false (shards_make zeroed them). */
    if (!io->rtlinked)
        for (unsigned i = 0; i < io->nshards; i++)
            io->shards[i].rt_cancelled = true;
    return io;
}

/* The runtime's I/O state, started by the first call. NULL: *err. Two
 * first calls at once make one state: the second waits for the first
 * (one made and thrown away meant a reactor thread and rings made and
 * unmapped for nothing, and memory the kernel maps again at the same
 * address for the next ring, written by another thread with no order
 * that ThreadSanitizer can see). */
static rt_io *io_get(dagrt *rt, int *err, int *os)
{
    rt_io *io = io_of(rt);
    if (RT_LIKELY(io != NULL))
        return io;
    rt_os_mutex_lock(&rt->io_make_mu);
    io = io_of(rt);
    if (!io && (io = io_make(rt, err, os)) != NULL)
        /* release: publishes the whole state to io_of's acquire. */
        atomic_store_explicit(&rt->io, io, memory_order_release);
    rt_os_mutex_unlock(&rt->io_make_mu);
    return io;
}

/* ------------------------------------------------------------- waiting */

static void req_done(rt_io_op *op)
{
    io_req *q = (io_req *)(void *)op;
    rt_oneshot_done(&q->w);   /* may resume the waiter: q is its from here on */
}


/* The one timed wait's end (wait/oneshot.h): the deadline and the scope
 * end the op in the kernel; runs outside every lock but this one, briefly
 * (wait/wait.h, wait/cancel.h). */
static void req_end(rt_oneshot *w, int why)
{
    io_req *q = (io_req *)(void *)((char *)w - offsetof(io_req, w));
    rt_os_mutex_lock(&q->sh->mu);
    if (why == DAGRT_ETIMEDOUT && !q->canceling)
        q->timed_out = true;
    rt_io_req_cancel(q->io, q);
    rt_os_mutex_unlock(&q->sh->mu);
}

/* The runtime's scope (dagrt_destroy): every call in flight, and from
 * now on every call as it submits. One that is done already (its group
 * at 0) is left to its end. */
static void io_rt_cancelled(rt_cancel_link *l)
{
    rt_io *io = (rt_io *)(void *)((char *)l - offsetof(rt_io, rtlink));
    for (unsigned i = 0; i < io->nshards; i++) {
        rt_io_shard *sh = &io->shards[i];
        rt_os_mutex_lock(&sh->mu);
        sh->rt_cancelled = true;
        for (io_req *q = sh->inflight; q; q = q->next)
            if (!rt_oneshot_over(&q->w))   /* a record whose group reached 0 is done */
                rt_io_req_cancel(io, q);
        rt_os_mutex_unlock(&sh->mu);
    }
}

/* ---------------------------------------------------------- one call */

static void kstat(_Atomic uint64_t *c, uint64_t n)
{
    /* relaxed: a statistic, summed by readers without an order. */
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

enum { IO_OPS, IO_BYTES, IO_TIMEOUTS, IO_CANCELS, IO_ERRORS };

/* Counts in dagrt_get_stats (per thread: the one the call returns on,
 * line 0 outside the runtime, as wait/sync.c's waits do: rt_oneshot_count),
 * which dagrt_get_io_stats sums per runtime; errors per runtime only. */
static void count(dagrt *rt, rt_io *io, int kind, int what, uint64_t n)
{
    if (what == IO_ERRORS) {
        kstat(&io->errors[kind], n);
        return;
    }
    size_t f = what == IO_OPS ? offsetof(rt_tstats, io_ops)
             : what == IO_BYTES ? offsetof(rt_tstats, io_bytes)
             : what == IO_TIMEOUTS ? offsetof(rt_tstats, io_timeouts) : offsetof(rt_tstats, io_cancels);
    rt_oneshot_count(rt, f + (size_t)kind * sizeof(_Atomic uint64_t), n);
}

/* The end of a call whose op is done: detaches it, returns the record
 * and turns the op's outcome into the call's result (*os: the system's
 * error behind it, 0 if none). */
static int64_t io_end(dagrt *rt, rt_io *io, io_req *q, int kind, rt_io_op *out, int *os)
{
    int k = kind;
    count(rt, io, k, IO_OPS, 1);   /* on the thread it returns on */
    rt_oneshot_disarm(rt, &q->w);   /* q may go back after it */
    /* The op's out fields (what the calls read of it). */
    out->res = q->op.res;
    out->err = q->op.err;
    out->canceled = q->op.canceled;
    out->addrlen = q->op.addrlen;
    rt_io_shard *sh = q->sh;
    rt_os_mutex_lock(&sh->mu);
    bool closing = q->closing, timed_out = q->timed_out, once = q->op.once;
    if (q->prev)
        q->prev->next = q->next;
    else
        sh->inflight = q->next;
    if (q->next)
        q->next->prev = q->prev;
    sh->ninflight--;
    q->next = sh->free;
    sh->free = q;
    rt_os_mutex_unlock(&sh->mu);

    if (out->canceled) {
        if (timed_out && !closing) {
            count(rt, io, k, IO_TIMEOUTS, 1);
            return DAGRT_ETIMEDOUT;
        }
        count(rt, io, k, IO_CANCELS, 1);
        return closing ? DAGRT_EBADF : DAGRT_ECANCELED;
    }
    if (out->err) {
        count(rt, io, k, IO_ERRORS, 1);
        /* Keep the system's own reason for every OS error, not only EIO
         * (rt_io_call stores it on the thread the call returns on). */
        *os = out->err;
        return rt_os_error_code(out->err);
    }
    if (once && out->res == 0) {   /* looked once, nothing ready: the deadline */
        count(rt, io, k, IO_TIMEOUTS, 1);
        return DAGRT_ETIMEDOUT;
    }
    if (kind != RT_IO_POLL && kind != RT_IO_ACCEPT)
        count(rt, io, k, IO_BYTES, (uint64_t)out->res);
    return out->res;
}

/* An asynchronous call's record (dagrt_async): the op's record and what
 * the continuation writes back. */
typedef struct io_async {
    rt_async a;           /* first */
    rt_io *io;
    io_req *q;
    int kind;
    size_t *fromlen;      /* recvfrom: the address's length */
    dagrt_handle *outh;   /* accept: the new handle */
    dagrt_handle h;       /* the call's handle, for the trace */
    uint64_t t0;          /* the call's start while the trace records, else 0 */
} io_async;
_Static_assert(sizeof(io_async) <= sizeof(dagrt_async), "dagrt_async too small for an I/O call");

/* A finished call's result as the public call returns it (wait/io_api.c
 * does the same for the blocking ones). */
static int64_t io_result(io_async *ia, int64_t r, const rt_io_op *out)
{
    if (r >= 0 && ia->fromlen)
        *ia->fromlen = out->addrlen;
    if (ia->kind == RT_IO_ACCEPT && r >= 0) {
        *ia->outh = (dagrt_handle)r;
        r = 0;
    }
    if (ia->kind == RT_IO_CONNECT && r > 0)
        r = 0;
    return r;
}

static const char *const op_names[RT_IO_KINDS] = {
    "io read", "io write", "io recvfrom", "io sendto", "io accept", "io connect", "io poll",
};

/* What the trace records of a call (trace/record.h, rt_trace_io), on the
 * thread the call returns on: a fiber's, which may have moved, or an
 * asynchronous call's continuation's (or its caller's, when it ended at
 * once). t0: the call's start, 0 when the trace did not record then. */
static void io_traced(dagrt *rt, int kind, dagrt_handle h, int64_t r, uint64_t t0)
{
    if (!t0)
        return;
    rt_obs *ob = rt_obs_now(&rt->obs);   /* again: it may have changed meanwhile */
    rt_ctx *cx = rt_ctx_current(rt);
    if (ob && ob->trace && cx)
        rt_trace_io(ob->trace, cx->index, op_names[kind], (int64_t)h, r, rt_now_ns() - t0);
}

/* The continuation (wait/async.c): io_end on a runtime thread, then fn. */
static void io_finish(rt_async *a)
{
    io_async *ia = (io_async *)(void *)a;
    rt_io_op out;
    int os = 0;
    int64_t r = io_end(a->rt, ia->io, ia->q, ia->kind, &out, &os);
    rt_error_set(0, os);
    io_traced(a->rt, ia->kind, ia->h, r, ia->t0);
    a->fn(a->arg, io_result(ia, r, &out));   /* the last access to the record */
}


/* Runs *in through the reactor and waits. The result: bytes (or value) >= 0
 * or a dagrt error code; *out gets the op's out fields, *os the system's
 * error behind the result (0: none). deadline: the call's own; a scope's
 * (dagrt_cancel_init_deadline, on c or above it) that comes first
 * replaces it, so every call ends by its scope's deadline. */
static int64_t io_call_(dagrt *rt, const rt_io_op *in, uint64_t deadline, dagrt_cancel *c,
                        rt_io_op *out, int *os, rt_async *a)
{
    int err = 0;
    rt_io *io = io_get(rt, &err, os);
    if (!io)
        return err;
    deadline = rt_oneshot_deadline(deadline, c);
    if (dagrt_cancel_requested(c) || dagrt_cancel_requested(&rt->waits)) {
        count(rt, io, in->kind, IO_CANCELS, 1);
        return DAGRT_ECANCELED;
    }
    /* A deadline already past: a poll still looks once, as poll(2) with a
     * timeout of 0 (a once op: the reactor looks on this thread and answers
     * inside its submit, io_end makes "nothing ready" DAGRT_ETIMEDOUT);
     * every other call ends here. A poll submitted as usual and cancelled
     * by its deadline at once raced that cancel: on the Windows lane the
     * cancel often won, and a ready handle timed out. */
    bool past = deadline != DAGRT_FOREVER && deadline <= rt_now_ns();
    if (past && in->kind != RT_IO_POLL) {
        count(rt, io, in->kind, IO_TIMEOUTS, 1);
        return DAGRT_ETIMEDOUT;
    }
    unsigned slot = rt_io_slot(rt);
    rt_io_shard *sh = shard_of(io, slot);
    rt_os_mutex_lock(&sh->mu);
    if (sh->stopping) {
        rt_os_mutex_unlock(&sh->mu);
        count(rt, io, in->kind, IO_CANCELS, 1);
        return DAGRT_ECANCELED;
    }
    if (!sh->free && !pool_grow(io, sh)) {
        rt_os_mutex_unlock(&sh->mu);
        return DAGRT_ENOMEM;
    }
    io_req *q = sh->free;
    sh->free = q->next;
    q->op = *in;
    q->op.done = req_done;
    q->op.res = 0;
    q->op.err = 0;
    q->op.canceled = false;
    atomic_init(&q->op.rflags, 0);
    q->closing = q->canceling = q->timed_out = false;
    q->io = io;
    q->sh = sh;
    rt_oneshot_init(&q->w, req_end);
    q->prev = NULL;
    q->next = sh->inflight;
    if (sh->inflight)
        sh->inflight->prev = q;
    sh->inflight = q;
    sh->ninflight++;
    q->op.slot = slot;
    q->op.once = past;
    bool deferred = q->op.defer = !past && rt_io_may_defer(rt, io);
    io->r->ops->submit(io->r, &q->op);
    if (sh->rt_cancelled && !past)   /* the runtime's scope (io_rt_cancelled); a once op is done */
        rt_io_req_cancel(io, q);
    rt_os_mutex_unlock(&sh->mu);
    if (past)   /* answered inside the submit (reactor.h, once) */
        return io_end(rt, io, q, in->kind, out, os);
    /* A reactor with flush leaves the system call of a submit that was
     * not deferred to us, after the lock (reactor.h): the kernel may run
     * the op inside it, and the lock's other users need not wait. */
    if (!deferred && io->r->ops->flush)
        io->r->ops->flush(io->r, slot);
    rt_io_submitted(rt, io, deferred);

    /* The fast path: what the kernel finished inside the submit (a read
     * from the page cache) is served here, on this thread; when that was
     * our own op the call continues without suspending and without the
     * deadline, the links and the wait. io_uring's flush above served it
     * already, holding the completion queue across its system call so
     * that an idle worker peeking the queue cannot take it first
     * (reactor_uring.c, RESERVE); this reap is for what that could not.
     * rt_oneshot_over's acquire sees the op's result. */
    if (io->r->ops->reap && !deferred)
        io->r->ops->reap(io->r, q->op.slot, 32);
    if (rt_oneshot_over(&q->w))
        return io_end(rt, io, q, in->kind, out, os);

    /* The deadline and the link, after the submit (outside sh->mu: the
     * callbacks take it): one that fires at once cancels an op that is
     * already in the reactor. No link on the runtime's scope: io_make's
     * one link serves every call. */
    int early = rt_oneshot_arm(rt, &q->w, deadline, c, false);
    if (early) {
        /* As the callback would have: a deadline that passed since the
         * check above, or no room for its timer, ends the call as timed
         * out. */
        rt_os_mutex_lock(&sh->mu);
        if (early != DAGRT_ECANCELED)
            q->timed_out = true;
        rt_io_req_cancel(io, q);
        rt_os_mutex_unlock(&sh->mu);
    }
    /* With hot workers, a completion resumes its fiber on the hot lane,
     * which they serve before other work (design/io.md). Counted in the
     * record's shard for destroy's "only waits are left" (core/destroy.c). */
    unsigned how = RT_ONESHOT_HELP | (rt->cfg.hot_workers > 0 ? RT_ONESHOT_HOT : 0u);
    if (a) {
        /* No one waits: the continuation ends the call (io_finish). */
        io_async *ia = (io_async *)(void *)a;
        ia->io = io;
        ia->q = q;
        if (rt_async_arm(a, &q->w.g, NULL, io_finish, &sh->nwaits, (how & RT_ONESHOT_HOT) != 0) == 0)
            return DAGRT_PENDING;
    } else {
        rt_oneshot_wait(rt, &q->w, &sh->nwaits, how);
    }
    return io_end(rt, io, q, in->kind, out, os);
}

/* io_call_, and what the trace records of it (io_traced). */
int64_t rt_io_call(dagrt *rt, const rt_io_op *in, uint64_t deadline, dagrt_cancel *c,
                   rt_io_op *out)
{
    if (!rt || (c && !rt_cancel_valid(c)))
        return rt_error_set(DAGRT_EINVAL, 0);
    /* A handle the system cannot have (a descriptor above INT_MAX) is
     * refused here, before any (int) cast below could make it another
     * descriptor (reactor.h, rt_os_handle_check). */
    int os = rt_os_handle_check(in->h);
    if (os)
        return rt_error_set(rt_os_error_code(os), os);
    /* A thread outside the runtime: counted while in the call, refused
     * once dagrt_destroy has begun (core/destroy.c, "DESTROY AND THREADS
     * OUTSIDE"). On rt's own threads, one TLS read. */
    int in_ = rt_oneshot_enter(rt, RT_DRAINING);
    if (in_ < 0)
        return rt_error_set(DAGRT_ECANCELED, 0);
    rt_obs *ob = rt_obs_now(&rt->obs);
    uint64_t t0 = ob && ob->trace ? rt_now_ns() : 0;
    int64_t r = io_call_(rt, in, deadline, c, out, &os, NULL);
    /* On the thread the call returns on (a fiber may have moved):
     * dagrt_last_os_error is the system's error behind this result, 0
     * when there is none (dagrt.h). */
    rt_error_set(0, os);
    io_traced(rt, in->kind, in->h, r, t0);
    rt_oneshot_leave(rt, in_);   /* the call's last access to rt */
    return r;
}

int64_t rt_io_call_async(dagrt *rt, dagrt_async *a, const rt_io_op *in, uint64_t deadline,
                         dagrt_cancel *c, size_t *fromlen, dagrt_handle *outh)
{
    int e = rt_async_check(rt, a);
    if (e)
        return e;
    if (c && !rt_cancel_valid(c))
        return DAGRT_EINVAL;
    int os = rt_os_handle_check(in->h);
    if (os)
        return rt_error_set(rt_os_error_code(os), os);
    io_async *ia = (io_async *)(void *)rt_async_of(a);
    ia->kind = in->kind;
    ia->fromlen = fromlen;
    ia->outh = outh;
    ia->io = NULL;
    ia->q = NULL;
    ia->h = in->h;
    /* The trace's io span, as the blocking call's: from here to the end,
     * recorded where the continuation runs (io_finish) or now. */
    rt_obs *ob = rt_obs_now(&rt->obs);
    ia->t0 = ob && ob->trace ? rt_now_ns() : 0;
    uint64_t t0 = ia->t0;   /* past a PENDING, the record is the continuation's */
    rt_io_op out;
    int64_t r = io_call_(rt, in, deadline, c, &out, &os, &ia->a);
    if (r == DAGRT_PENDING)
        return r;
    rt_error_set(0, os);
    io_traced(rt, in->kind, in->h, r, t0);
    return io_result(ia, r, &out);
}

int64_t rt_io_waits(const dagrt *rt)
{
    rt_io *io = io_of(rt);
    int64_t n = 0;
    for (unsigned i = 0; io && i < io->nshards; i++)
        n += atomic_load_explicit(&io->shards[i].nwaits, memory_order_relaxed);   /* relaxed: as rt->nwaits */
    return n;
}

void rt_io_op_clear(rt_io_op *op, int kind, dagrt_handle h)
{
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->h = h;
}
