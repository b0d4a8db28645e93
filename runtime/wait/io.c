/*
 * wait/io.c - the I/O calls of "waiting on the world" (design/io.md): the
 * portable half. The system half is the reactor (os/reactor.h).
 *
 * A call takes an op record from its shard's pool, fills it, links it on
 * the shard's in-flight list and submits it, all under the shard's lock
 * (so a cancel, which walks that list under the same lock, never reaches
 * the reactor before its op, nor after the record went back to the pool),
 * and waits on
 * the record's one-shot group (count 1), which the reactor's done callback
 * completes: the same hand-off as every other wait of the runtime (a
 * fiber's suspend/resume handshake, fiber/sched.c, so a completion that
 * lands before the fiber finished suspending resumes it exactly once).
 * Who waits how:
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
 * (after every task has finished) frees the rest.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "cancel.h"
#include "../fiber/fiber.h"
#include "io.h"
#include "../os/reactor.h"
#include "wait.h"

#define IO_ENTRIES_DEFAULT 256u
#define IO_ENTRIES_MAX     32768u

_Static_assert((int)DAGRT_IO_KINDS == (int)RT_IO_KINDS && (int)DAGRT_IO_POLL == (int)RT_IO_POLL,
               "I/O kinds disagree");
_Static_assert((int)DAGRT_POLL_IN == (int)RT_IO_POLL_IN && (int)DAGRT_POLL_OUT == (int)RT_IO_POLL_OUT &&
               (int)DAGRT_POLL_ERR == (int)RT_IO_POLL_ERR, "poll bits disagree");

struct io_req {
    rt_io_op op;                 /* first: done() gets &op */
    rt_group g;                  /* one-shot: completed by done() */
    rt_waiter tw;                /* a foreign thread's waiter: wakes tdone */
    _Atomic uint32_t tdone;
    struct io_req *prev, *next;  /* the in-flight list; next: the free list */
    bool closing;                /* dagrt_close ended it: EBADF */
    bool canceling;              /* a cancel was handed to the reactor */
    bool timed_out;              /* its deadline's timer fired: ETIMEDOUT */
    struct rt_io *io;
    rt_io_shard *sh;             /* whose lists it is on, whose lock orders it */
    rt_timer timer;              /* the deadline (dagrt_poll) */
    rt_cancel_link link;         /* on the caller's scope */
};

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

static void io_free(rt_io *io)
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
        io_free(io);
        return NULL;
    }
    if (!shards_make(rt, io)) {
        io->r->ops->destroy(io->r);
        io_free(io);
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
    rt_group_done(&q->g);   /* may resume the waiter: q is its from here on */
}

static void thread_wake(rt_waiter *w)
{
    io_req *q = (io_req *)(void *)((char *)w - offsetof(io_req, tw));
    /* release: the waiter's acquire sees the op's result. The word stays
     * valid after: the record goes back to the pool, never to the system,
     * before dagrt_destroy. */
    atomic_store_explicit(&q->tdone, 1, memory_order_release);
    rt_os_wake32_one(&q->tdone);
}

/* deadline: the call's timer's (DAGRT_FOREVER: none queued). */
static int req_wait(dagrt *rt, io_req *q, uint64_t deadline)
{
    /* With hot workers, a completion resumes its fiber on the hot lane,
     * which they serve before other work (design/io.md). */
    bool hot = rt->cfg.hot_workers > 0;
    if (hot)
        rt_fiber_resume_hot(rt, true);
    int r = rt_fiber_group_wait(rt, &q->g);   /* a fiber suspends */
    if (r != 1) {
        if (hot)   /* done before it suspended: no resume took the flag */
            rt_fiber_resume_hot(rt, false);
        return r;
    }
    rt_ctx *c = rt_ctx_current(rt);
    if (c)
        return rt_group_wait_thread(rt, c, &q->g);   /* helps, as dagrt_event_wait does */
    q->tw.fn = thread_wake;
    /* relaxed: set before the arm, whose acq_rel RMW publishes it. */
    atomic_store_explicit(&q->tdone, 0, memory_order_relaxed);
    r = rt_group_arm_on(&q->g, NULL, &q->tw);
    if (r == 1)
        return 0;
    if (r < 0)
        return r;
    /* A thread outside the runtime sleeps until the completion, or until
     * its deadline, where it runs the due timers itself, its own among
     * them (as wait/sync.c's block_wait: with no idle thread in the runtime,
     * nobody else might), then looks again every millisecond.
     * acquire: pairs with thread_wake's release. */
    while (atomic_load_explicit(&q->tdone, memory_order_acquire) == 0) {
        if (deadline == DAGRT_FOREVER) {
            rt_os_wait32(&q->tdone, 0);
            continue;
        }
        rt_os_wait32_until(&q->tdone, 0, deadline);
        uint64_t now = rt_now_ns();
        if (now >= deadline) {
            rt_timer_run_due(rt, now);
            deadline = now + 1000000u;
        }
    }
    return 0;
}

/* mu held: hands q's cancel to the reactor once. */
static void req_cancel(rt_io *io, io_req *q)
{
    if (q->canceling)
        return;
    q->canceling = true;
    io->r->ops->cancel(io->r, &q->op);
}

/* The deadline and the scopes end the op in the kernel; each callback
 * runs outside every lock but this one, briefly (wait/wait.h, wait/cancel.h). */
static void req_timed_out(rt_timer *t)
{
    io_req *q = (io_req *)(void *)((char *)t - offsetof(io_req, timer));
    rt_os_mutex_lock(&q->sh->mu);
    if (!q->canceling)
        q->timed_out = true;
    req_cancel(q->io, q);
    rt_os_mutex_unlock(&q->sh->mu);
}

static void req_cancel_locked(io_req *q)
{
    rt_os_mutex_lock(&q->sh->mu);
    req_cancel(q->io, q);
    rt_os_mutex_unlock(&q->sh->mu);
}
static void req_scope_cancelled(rt_cancel_link *l)
{
    req_cancel_locked((io_req *)(void *)((char *)l - offsetof(io_req, link)));
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
            /* acquire: a record whose group reached 0 is done. */
            if (atomic_load_explicit(&q->g.word, memory_order_acquire) != 0)
                req_cancel(io, q);
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
 * line 0 outside the runtime, as wait/sync.c's waits do), which
 * dagrt_get_io_stats sums per runtime; errors per runtime only. A
 * worker's line has one writer, itself (rt_tstat_add, no locked
 * instruction: two threads doing I/O bounced one shared line per kind);
 * the others take an RMW: line 0 (the main thread's, shared with threads
 * outside the runtime) and guests' slots (threads take them in turn). */
static void count(dagrt *rt, rt_io *io, int kind, int what, uint64_t n)
{
    if (what == IO_ERRORS) {
        kstat(&io->errors[kind], n);
        return;
    }
    rt_ctx *c = rt_ctx_current(rt);   /* a fiber may have migrated */
    rt_tstats *t = &rt->ctx[c ? c->index : 0].stats;
    _Atomic uint64_t *line = what == IO_OPS ? &t->io_ops[kind]
                           : what == IO_BYTES ? &t->io_bytes[kind]
                           : what == IO_TIMEOUTS ? &t->io_timeouts[kind] : &t->io_cancels[kind];
    if (c && c->worker && !c->guest)
        rt_tstat_add(line, n);
    else
        kstat(line, n);   /* relaxed: as kstat says */
}

/* The end of a call whose op is done: detaches it, returns the record
 * and turns the op's outcome into the call's result (*os: the system's
 * error behind it, 0 if none). */
static int64_t io_end(dagrt *rt, rt_io *io, io_req *q, const rt_io_op *in, rt_io_op *out,
                      bool timed, bool linked, int *os)
{
    int k = in->kind;
    count(rt, io, k, IO_OPS, 1);   /* on the thread it returns on */
    /* Each returns once its callback is not running: q may go back then. */
    if (timed)
        rt_timer_cancel(rt, &q->timer);
    if (linked)
        rt_cancel_detach(&q->link);
    *out = q->op;
    rt_io_shard *sh = q->sh;
    rt_os_mutex_lock(&sh->mu);
    bool closing = q->closing, timed_out = q->timed_out;
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
    if (in->kind != RT_IO_POLL && in->kind != RT_IO_ACCEPT)
        count(rt, io, k, IO_BYTES, (uint64_t)out->res);
    return out->res;
}


/* Runs *in through the reactor and waits. The result: bytes (or value) >= 0
 * or a dagrt error code; *out gets the op's out fields, *os the system's
 * error behind the result (0: none). deadline: the call's own; a scope's
 * (dagrt_cancel_init_deadline, on c or above it) that comes first
 * replaces it, so every call ends by its scope's deadline. */
static int64_t io_call_(dagrt *rt, const rt_io_op *in, uint64_t deadline, dagrt_cancel *c,
                        rt_io_op *out, int *os)
{
    int err = 0;
    rt_io *io = io_get(rt, &err, os);
    if (!io)
        return err;
    uint64_t scope_deadline = rt_cancel_deadline(c);
    if (scope_deadline < deadline)
        deadline = scope_deadline;
    if (dagrt_cancel_requested(c) || dagrt_cancel_requested(&rt->waits)) {
        count(rt, io, in->kind, IO_CANCELS, 1);
        return DAGRT_ECANCELED;
    }
    /* A deadline already past: a poll still looks once (a ready handle
     * returns its set; the op is cancelled at once below, as if its timer
     * had fired); every other call ends here. */
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
    atomic_init(&q->g.word, 1);
    q->g.owner = NULL;
    q->g.waiter = NULL;
    q->g.local = 0;
    q->g.armed = 0;
    q->g.magic = RT_GROUP_MAGIC;
    q->prev = NULL;
    q->next = sh->inflight;
    if (sh->inflight)
        sh->inflight->prev = q;
    sh->inflight = q;
    sh->ninflight++;
    q->op.slot = slot;
    bool deferred = q->op.defer = rt_io_may_defer(rt, io);
    io->r->ops->submit(io->r, &q->op);
    if (sh->rt_cancelled)   /* the runtime's scope (io_rt_cancelled) */
        req_cancel(io, q);
    rt_os_mutex_unlock(&sh->mu);
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
     * acquire: the completer's release of the group's word, so the op's
     * result is visible. */
    if (io->r->ops->reap && !deferred)
        io->r->ops->reap(io->r, q->op.slot, 32);
    if (atomic_load_explicit(&q->g.word, memory_order_acquire) == 0)
        return io_end(rt, io, q, in, out, false, false, os);

    /* The deadline and the links, after the submit (outside sh->mu: the
     * callbacks take it): one that fires at once cancels an op that is
     * already in the reactor. */
    bool timed = false, linked = false, early = false;
    if (past) {
        rt_os_mutex_lock(&sh->mu);
        q->timed_out = true;   /* as if its timer fired now */
        rt_os_mutex_unlock(&sh->mu);
        early = true;
    } else if (deadline != DAGRT_FOREVER) {
        q->timer.deadline_ns = deadline;
        q->timer.fire = req_timed_out;
        timed = rt_timer_add(rt, &q->timer) == 0;
        if (!timed) {
            rt_os_mutex_lock(&sh->mu);
            q->timed_out = true;   /* no room for the timer: as if it fired */
            rt_os_mutex_unlock(&sh->mu);
            early = true;
        }
    }
    if (c) {
        q->link.on_cancel = req_scope_cancelled;
        linked = rt_cancel_attach(c, &q->link) == 0;
        early |= !linked;
    }
    if (early)
        req_cancel_locked(q);
    rt_ctx *wc = rt_ctx_current(rt);
    bool task = (wc && wc->depth > 0) || dagrt_in_fiber(rt);
    if (task)   /* destroy's "only waits are left" (core/worker.c): the record's shard's count */
        atomic_fetch_add_explicit(&sh->nwaits, 1, memory_order_relaxed);   /* relaxed: see core/core.h */

    int w = req_wait(rt, q, timed ? deadline : DAGRT_FOREVER);
    if (task)
        atomic_fetch_sub_explicit(&sh->nwaits, 1, memory_order_relaxed);   /* relaxed: as above */
    /* Whatever req_wait said, the op is done only when done() ran: a wait
     * that failed (it cannot, on a fresh group) must still not free it. */
    if (w != 0) {
        req_cancel_locked(q);
        /* acquire: the completer's release of the word. */
        while (atomic_load_explicit(&q->g.word, memory_order_acquire) != 0)
            rt_os_yield();
    }
    return io_end(rt, io, q, in, out, timed, linked, os);
}

static const char *const op_names[RT_IO_KINDS] = {
    "io read", "io write", "io recvfrom", "io sendto", "io accept", "io connect", "io poll",
};

/* io_call_, and what the trace records of it (trace/record.h, rt_trace_io: on
 * the thread the call returns on, which a fiber may have moved to). */
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
     * once dagrt_destroy has begun (core/worker.c, "DESTROY AND THREADS
     * OUTSIDE"). On rt's own threads, one TLS read. */
    int in_ = rt_ctx_here(rt) ? 0 : rt_call_enter(rt, RT_DRAINING);
    if (in_ < 0)
        return rt_error_set(DAGRT_ECANCELED, 0);
    rt_obs *ob = rt_obs_now(&rt->obs);
    uint64_t t0 = ob && ob->trace ? rt_now_ns() : 0;
    int64_t r = io_call_(rt, in, deadline, c, out, &os);
    /* On the thread the call returns on (a fiber may have moved):
     * dagrt_last_os_error is the system's error behind this result, 0
     * when there is none (dagrt.h). */
    rt_error_set(0, os);
    if (ob && ob->trace) {
        ob = rt_obs_now(&rt->obs);   /* again: it may have changed meanwhile */
        rt_ctx *cx = rt_ctx_current(rt);
        if (ob && ob->trace && cx)
            rt_trace_io(ob->trace, cx->index, op_names[in->kind], (int64_t)in->h, r, rt_now_ns() - t0);
    }
    if (in_)
        rt_call_leave(rt);   /* the call's last access to rt */
    return r;
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

/* ------------------------------------------------------------- close */

int dagrt_close(dagrt *rt, dagrt_handle h)
{
    if (!rt)
        return rt_error_set(DAGRT_EINVAL, 0);
    int bad = rt_os_handle_check(h);   /* as rt_io_call: never another descriptor */
    if (bad)
        return rt_error_set(rt_os_error_code(bad), bad);
    /* A thread outside the runtime (core/worker.c, "DESTROY AND THREADS
     * OUTSIDE"): refused only once every task has finished, and then it
     * just closes h: destroy is ending every call left. */
    int in_ = rt_ctx_here(rt) ? 0 : rt_call_enter(rt, RT_SEALED);
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
                    /* acquire: a record whose group reached 0 is done. */
                    if (q->op.h != h || atomic_load_explicit(&q->g.word, memory_order_acquire) == 0)
                        continue;
                    any = true;
                    if (!q->canceling) {
                        q->closing = true;
                        req_cancel(io, q);
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
    if (in_ > 0)
        rt_call_leave(rt);
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
     * in a call (cancelled by rt_io_shutdown): wait until the reactor has
     * let go of every buffer. */
    for (;;) {
        size_t n = 0;
        for (unsigned i = 0; i < io->nshards; i++) {
            rt_io_shard *sh = &io->shards[i];
            rt_os_mutex_lock(&sh->mu);
            sh->stopping = true;   /* a straggler's new call: DAGRT_ECANCELED */
            n += sh->ninflight;
            for (io_req *q = sh->inflight; q; q = q->next)
                req_cancel(io, q);
            rt_os_mutex_unlock(&sh->mu);
        }
        if (n == 0)
            break;
        rt_os_sleep_ns(100000);
    }
    if (io->rtlinked)
        rt_cancel_detach(&io->rtlink);
    io->r->ops->destroy(io->r);
    io_free(io);
    atomic_store_explicit(&rt->io, NULL, memory_order_relaxed);   /* relaxed: no thread is left */
}
