/*
 * os/reactor_uring.c - the reactor on io_uring (liburing), Linux.
 *
 * The rings' lives and the completion thread (making a ring, the drain
 * of every ring and the sleep on all of them, create and destroy) are
 * os/reactor_uring_ring.c's; os/reactor_uring.h is what the two share.
 *
 * RINGS. One ring per thread slot (the runtime's thread contexts: the
 * main thread, each worker, each guest slot, and one slot shared by the
 * threads outside the runtime; wait/io.c says which in op->slot), all made
 * when the reactor is (a slot's first call, perhaps a task that moved to
 * another thread many frames in, must allocate nothing) and put in use,
 * watched by the completion thread, by that slot's first submit; only the
 * rings in use are drained and watched. The kernel runs a page-cache read inline,
 * inside the system call that hands it over, under the ring's own lock:
 * on one ring shared by every thread those calls serialise (a second
 * submitter spins in the kernel on that lock while the first copies its
 * batch), so two threads reading files ran no faster than one. On a ring
 * of its own each thread's reads run beside the others'. Each ring is
 * what the rest of this comment describes, on its own: its submission
 * queue has one writer at a time (its `sq` lock, taken under wait/io.c's lock
 * for a submit, alone for a flush or a cancel, which goes to the op's own
 * ring: rwhere), and its completion queue one consumer at a time (its
 * `reaping`). The system call that hands SQEs to the kernel comes after
 * both locks (ENTERING, at rt_uring_enter).
 *
 * BATCHING (who hands queued SQEs to the kernel). A submit with op->defer
 * (wait/io.c sets it for a fiber on a reaping worker, or on the main thread
 * while such a worker is awake, that has other work in sight) fills its SQE and leaves it in the SQ, counted in base.pending;
 * one flush later hands the kernel every SQE queued so far (publishes
 * them under sq, then enters: ENTERING). It is submitted by whichever
 * comes first: the SQ filling up (rt_uring_sqe_get); a
 * cancel or destroy (which submit everything queued before their own SQE,
 * so a cancel never overtakes its op); a flush from wait/io.c: by the worker
 * that queued it, once its deque is empty (between tasks, or as it goes
 * idle), and by every reaping worker as it parks (rt_io_park: after its
 * count of awake reapers drops, which the main thread reads after it
 * deferred, flushing itself on 0), so SQEs are never left queued while
 * the runtime sleeps; and by the
 * completion thread at every turn of its loop (while gated, at least once
 * per GATE_TICK_NS). The cost: a deferred read waits for the tasks that
 * were queued after its fiber on that worker, unless another worker
 * parks or the completion thread turns first. A submit without defer
 * publishes its SQE (and what was queued before it) at once, and wait/io.c's
 * flush right after its lock makes the system call. Model:
 * tests/models/io_batch.pml.
 *
 * REAPING (who consumes the completion queue). The CQ has one consumer at
 * a time: whoever holds `reaping` (a try-lock: exchange 0->1). Two kinds of
 * thread consume it:
 *   - any thread of the runtime, through the reactor's reap op (wait/io.c calls
 *     it right after a submit, so a read the kernel finished inside the
 *     submit, from the page cache, continues without suspending: a lone
 *     read's submitter holds the lock across that system call already and
 *     drains before it lets go, RESERVE at owed_enter; workers
 *     call it between tasks and as they go idle, so a completion resumes
 *     its fiber on the thread that found it, with no hand-off). They peek
 *     the CQ without a system call (the tail against the head) and skip it
 *     when another consumer holds it: their own slot's ring first, then
 *     one other ring in turn (so a worker busy in a long task leaves its
 *     ring's completions, a socket's say, to the next idle peek);
 *   - the completion thread, the last resort: it drains every ring's CQ
 *     under its lock (waiting for a consumer in progress). Then, while a
 *     reaping worker is awake (rt_reactor.awake > 0: wait/io_reap.c counts them
 *     around each park), it sleeps on rt_reactor.gate with a 1 ms tick
 *     (not in the kernel, whose wake-up per completion would cost every
 *     submit a cross-CPU wake); the last worker to park bumps the gate
 *     and wakes it, when the thread says it is `gated` (Dekker pairs: it
 *     writes gated, reads the gate, then the count; the worker writes the
 *     count, then reads gated and bumps the gate), so a park costs no
 *     system call while the thread already sleeps in the kernel. With every reaper parked
 *     it sleeps in the kernel on every ring at once (epoll_wait on the
 *     rings' descriptors, put in the set for that sleep only, at
 *     kernel_sleep, level-triggered: a ring's descriptor is ready
 *     while its CQ holds an entry, or while completions wait in its
 *     overflow list, which the thread then moves into the CQ with a
 *     GETEVENTS call), which returns at once while a CQ holds an entry (a
 *     level, not an edge). So a completion that lands while every worker is parked, or
 *     that a consumer's drain missed after its peek, is still served: an
 *     idle runtime with I/O in flight burns no CPU and loses no wake-up.
 *     Model: tests/models/io_reap.pml (negative controls: an edge instead
 *     of the level, the gate bumped before the count drops, STOP reaped).
 * TAG_STOP (on the shared slot's ring, which the reactor makes first) stays
 * in the CQ for the completion thread (reap stops at it).
 *
 * FIFO WRITES (no SIGPIPE: io_linux.c, SIGPIPE). IORING_OP_WRITE to a
 * pipe whose reader is gone makes the kernel send SIGPIPE to the task that
 * runs the write: the thread that entered the ring, or, for a write that
 * waited for room, the submitting thread as it runs its task work, at
 * some later moment in whatever it is doing; the default action ends the
 * process. So a write to a socket goes as IORING_OP_SENDMSG with
 * MSG_NOSIGNAL (as sendto does), and a write to a pipe never goes to the
 * ring as a write: the submit makes it at once (rt_os_write_nosigpipe,
 * RWF_NOWAIT, SIGPIPE blocked on this thread alone and its own taken back)
 * and answers it there when it did not have to wait; else it queues a
 * POLL_ADD for POLLOUT (RF_FIFO), and whoever reaps that completion writes
 * again the same way, outside the CQ's lock (rt_uring_serve, fifo_again),
 * and either answers the op or queues the next poll (its ring's sq held,
 * RF_CANCEL read under it: a cancel sets that flag before it takes sq, so
 * either the new poll is published before the cancel's SQE, which then
 * finds it, or the flag is seen and the op ends cancelled). Costs an
 * fstat per write (which kind of descriptor), three system calls around a
 * pipe write (the mask, the pending set) and none more on a socket.
 *
 * Each SQE's user data is its rt_io_op; a cancel is IORING_OP_ASYNC_CANCEL
 * on that user data, on the op's ring, issued under wait/io.c's lock while the op is still wait/io.c's
 * (so the record cannot have been reused for another op meanwhile), and
 * the kernel answers the op itself with -ECANCELED (or -EINTR for one that
 * a worker of the ring was running), or with its result when that won the
 * race.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "reactor_uring.h"

static void count_submit(uring_reactor *u)
{
    atomic_fetch_add_explicit(&u->base.submits, 1, memory_order_relaxed);   /* relaxed: a statistic */
}

/* sq held. */
struct io_uring_sqe *rt_uring_sqe_get(uring_reactor *u, uring_ring *g)
{
    struct io_uring_sqe *s;
    /* A full queue: hand what is there to the kernel, which takes it at
     * once (no SQPOLL), and try again. */
    while ((s = io_uring_get_sqe(&g->ring)) == NULL) {
        count_submit(u);
        if (io_uring_submit(&g->ring) < 0)
            rt_os_yield();
        else
            atomic_store_explicit(&g->pending, 0, memory_order_relaxed);   /* relaxed: a hint (sq orders it) */
    }
    return s;
}

/* sq held: makes every queued SQE the kernel's to take (its tail), and
 * returns how many it has not taken yet; the system call that hands them
 * over is rt_uring_enter's, after sq (ENTERING). The first half of
 * io_uring_submit, which liburing 2.3 does not export alone (the
 * fields are struct io_uring_sq's public ones; no SQPOLL here). */
unsigned rt_uring_publish(uring_ring *g)
{
    struct io_uring_sq *sq = &g->ring.sq;
    if (sq->sqe_head != sq->sqe_tail) {
        sq->sqe_head = sq->sqe_tail;
        /* release: the SQEs written before it, for the kernel's acquire of
         * the tail in whichever thread's system call takes them. */
        atomic_store_explicit((_Atomic unsigned *)(void *)sq->ktail, sq->sqe_tail, memory_order_release);
    }
    atomic_store_explicit(&g->pending, 0, memory_order_relaxed);   /* relaxed: a hint (sq orders it) */
    /* relaxed: the kernel's head, only a count (the kernel takes what is there). */
    return sq->sqe_tail - atomic_load_explicit((_Atomic unsigned *)(void *)sq->khead, memory_order_relaxed);
}

/* Whether SQEs are published that the kernel has not taken. acquire on
 * the tail: another submitter's release in rt_uring_publish (so its SQEs are
 * whole before our system call hands them over); relaxed on the head:
 * the kernel's, a count. */
static unsigned sq_unentered(uring_ring *g)
{
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)(void *)g->ring.sq.ktail, memory_order_acquire);
    unsigned head = atomic_load_explicit((_Atomic unsigned *)(void *)g->ring.sq.khead, memory_order_relaxed);
    return tail - head;
}

/* One system call handing over up to n published SQEs: its result, or
 * -errno (liburing builds that return -1 and errno). */
static int enter_once(uring_ring *g, unsigned n)
{
    int r = io_uring_enter((unsigned)g->ring.ring_fd, n, 0, 0, NULL);
    return r == -1 ? -errno : r;
}

/* -EBUSY/-EAGAIN: the completion side is backed up for a moment. */
static bool enter_again(int r)
{
    return r == -EBUSY || r == -EAGAIN || r == -EINTR;
}

/* ENTERING: the system call that hands the kernel what is published, made
 * outside sq and outside wait/io.c's lock. The kernel runs a page-cache read
 * inline, inside this call, so a lock held across it (20 reads of a batch
 * take tens of microseconds) stalls every other submitter, and wait/io.c's
 * lock with them, the ends of calls included. Calls from two threads
 * serialise in the kernel (its ring lock), each taking what is published
 * when it gets there: one that finds nothing left returns at once, and an
 * SQE published before a thread's call is taken by it or by an earlier
 * one, in ring order (so a cancel published after its op never overtakes
 * it). */
void rt_uring_enter(uring_reactor *u, uring_ring *g, unsigned n)
{
    if (n == 0)
        return;
    count_submit(u);
    while (enter_again(enter_once(g, n)))
        rt_os_yield();
}

/* Hands the kernel what is queued on g (re-checked under its sq). What
 * another thread published is left to its own system call, which always
 * follows (a lone read's submitter, entering it right after wait/io.c's lock,
 * keeps its fast path: a parking worker or the completion thread that
 * entered it instead would run the read, and often reap it, in its
 * place). */
static void ring_flush_pending(uring_reactor *u, uring_ring *g)
{
    /* seq_cst: a hint, but the parking worker's half of a Dekker pair
     * with the main thread's deferral (wait/io_reap.c, main_deferred: it
     * counts in its ring's pending, then reads the count of awake
     * reapers; the worker drops that count, then reads every ring's
     * pending here). */
    if (atomic_load_explicit(&g->pending, memory_order_seq_cst) == 0)
        return;
    unsigned n = 0;
    rt_os_mutex_lock(&g->sq);
    if (atomic_load_explicit(&g->pending, memory_order_relaxed) != 0)   /* relaxed: sq orders it */
        n = rt_uring_publish(g);
    rt_os_mutex_unlock(&g->sq);
    rt_uring_enter(u, g, n);
}

/* Every ring's: a parking worker's and the completion thread's flush
 * (BATCHING). A thread's flush between tasks is its own ring's only: its
 * duty is what it queued itself, and entering another thread's ring
 * meant waiting in the kernel, on that ring's lock, for the batch that
 * thread was entering, and then running that thread's reads for it. */
void rt_uring_flush_all(uring_reactor *u)
{
    unsigned nl = rings_made(u);
    for (unsigned i = 0; i < nl; i++)
        ring_flush_pending(u, ring_live(u, i));
}

/* The ring whose SQE this thread's submit without defer published, and
 * whose system call it owes (rt_uring_flush, right after wait/io.c's lock:
 * nothing suspends in between, so the thread is the submitter's; made
 * holding the CQ's lock, RESERVE at owed_enter). */
static _Thread_local uring_ring *enter_owed;

static void owed_enter(uring_reactor *u, uring_ring *g);

void rt_uring_flush(rt_reactor *r, unsigned slot)
{
    uring_reactor *u = (uring_reactor *)r;
    uring_ring *g = enter_owed;
    if (g) {
        enter_owed = NULL;
        owed_enter(u, g);   /* RESERVE */
    }
    if (slot == RT_IO_SLOT_ALL)
        rt_uring_flush_all(u);
    else if (slot < u->nslots && (g = ring_at(u, slot)) != NULL)
        ring_flush_pending(u, g);
}

/* A pipe write, without waiting and without SIGPIPE (FIFO WRITES): true
 * with op's result set, false when the pipe has no room. */
static bool fifo_write(rt_io_op *op)
{
    int e = 0;
    int64_t n = rt_os_write_nosigpipe(op->h, op->buf, op->n, op->off, true, &e);
    if (e == EAGAIN || e == EWOULDBLOCK)
        return false;
    op->res = n < 0 ? 0 : n;
    op->err = e;
    op->canceled = false;
    return true;
}

void rt_uring_submit(rt_reactor *r, rt_io_op *op)
{
    uring_reactor *u = (uring_reactor *)r;
    if (op->once) {
        /* A poll past its deadline: one look, answered here (reactor.h).
         * Not a POLL_ADD: its completion may come after this returns (a
         * deferred SQE, or the completion thread's reap), and the cancel
         * that the deadline then sends could win over a ready handle. */
        rt_os_poll_once(op);
        op->done(op);
        return;
    }
    uring_ring *g = rt_uring_ring_for(u, op->slot);
    op->rwhere = (int)g->slot;   /* a cancel goes to the same ring */
    int fd = (int)op->h;
    uring_priv *p = (uring_priv *)(void *)op->rpriv;
    /* A write on a socket or a pipe never goes as IORING_OP_WRITE (FIFO
     * WRITES); a pipe's is made here when it need not wait, and answered
     * at once, as reactor.h allows. */
    int wkind = op->kind == RT_IO_WRITE ? rt_os_fd_kind(op->h) : RT_FD_OTHER;
    uint32_t fifo = 0;
    if (wkind == RT_FD_FIFO) {
        if (fifo_write(op)) {
            op->done(op);
            return;
        }
        fifo = RF_FIFO;
        p->u = u;
    }
    rt_os_mutex_lock(&g->sq);
    struct io_uring_sqe *s = rt_uring_sqe_get(u, g);
    switch (op->kind) {
    case RT_IO_READ:
        io_uring_prep_read(s, fd, op->buf, (unsigned)op->n, op->off < 0 ? (uint64_t)-1 : (uint64_t)op->off);
        break;
    case RT_IO_WRITE:
        if (fifo) {
            io_uring_prep_poll_add(s, fd, POLLOUT);   /* room, then fifo_again writes */
            break;
        }
        if (wkind != RT_FD_SOCK) {
            io_uring_prep_write(s, fd, op->buf, (unsigned)op->n, op->off < 0 ? (uint64_t)-1 : (uint64_t)op->off);
            break;
        }
        /* A socket: a send with MSG_NOSIGNAL, below (op->addr is NULL). */
        /* fall through */
    case RT_IO_RECVFROM:
    case RT_IO_SENDTO:
        memset(&p->m, 0, sizeof p->m);
        p->v.iov_base = op->buf;
        p->v.iov_len = op->n;
        p->m.msg_iov = &p->v;
        p->m.msg_iovlen = 1;
        p->m.msg_name = op->addr;
        p->m.msg_namelen = op->addr ? (socklen_t)op->addrlen : 0;
        if (op->kind == RT_IO_RECVFROM)
            io_uring_prep_recvmsg(s, fd, &p->m, 0);
        else
            io_uring_prep_sendmsg(s, fd, &p->m, MSG_NOSIGNAL);
        break;
    case RT_IO_ACCEPT:
        io_uring_prep_accept(s, fd, NULL, NULL, SOCK_CLOEXEC);
        break;
    case RT_IO_CONNECT:
        io_uring_prep_connect(s, fd, (const struct sockaddr *)op->addr, (socklen_t)op->addrlen);
        break;
    case RT_IO_POLL: {
        unsigned m = 0;
        if (op->events & RT_IO_POLL_IN)
            m |= POLLIN;
        if (op->events & RT_IO_POLL_OUT)
            m |= POLLOUT;
        io_uring_prep_poll_add(s, fd, m);
        break;
    }
    default:
        io_uring_prep_nop(s);
        break;
    }
    io_uring_sqe_set_data(s, op);
    /* release: the completion thread reaches op through the kernel, which
     * orders nothing for the memory model (nor for TSan); its acquire of
     * rflags after the completion sees everything wait/io.c wrote into op. */
    atomic_store_explicit(&op->rflags, RF_QUEUED | fifo, memory_order_release);
    /* Deferred: one flush later submits it with the others (BATCHING).
     * Else published now, and entered by wait/io.c's flush after its lock. */
    if (op->defer)
        atomic_fetch_add_explicit(&g->pending, 1, memory_order_seq_cst);   /* seq_cst: see rt_uring_flush_all */
    else {
        rt_uring_publish(g);
        enter_owed = g;
    }
    rt_os_mutex_unlock(&g->sq);
}

void rt_uring_cancel(rt_reactor *r, rt_io_op *op)
{
    uring_reactor *u = (uring_reactor *)r;
    /* The op's own ring (set by its submit, which wait/io.c's lock orders
     * before this): ASYNC_CANCEL finds only its own ring's ops. */
    uring_ring *g = ring_at(u, (unsigned)op->rwhere);
    /* release: the completion thread's acquire of rflags, after the op's
     * completion, sees that the -EINTR it got came from this cancel. */
    atomic_fetch_or_explicit(&op->rflags, RF_CANCEL, memory_order_release);
    rt_os_mutex_lock(&g->sq);
    struct io_uring_sqe *s = rt_uring_sqe_get(u, g);
    io_uring_prep_cancel(s, op, 0);
    io_uring_sqe_set_data64(s, TAG_CANCEL);
    unsigned n = rt_uring_publish(g);   /* the op's own SQE, if still queued, goes first */
    rt_os_mutex_unlock(&g->sq);
    rt_uring_enter(u, g, n);
}

static unsigned poll_bits(int revents)
{
    unsigned b = 0;
    if (revents & POLLIN)
        b |= RT_IO_POLL_IN;
    if (revents & POLLOUT)
        b |= RT_IO_POLL_OUT;
    if (revents & (POLLERR | POLLHUP | POLLNVAL))
        b |= RT_IO_POLL_ERR;
    return b;
}

/* Whether the CQ holds an entry, without a system call. acquire on the
 * tail: the kernel's release of the entries it posted; relaxed on the head:
 * only a hint (the consumer re-reads it under the lock), and an atomic load
 * because another consumer stores it (liburing's store-release). */
static bool cq_nonempty(uring_ring *g)
{
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)(void *)g->ring.cq.ktail, memory_order_acquire);
    unsigned head = atomic_load_explicit((_Atomic unsigned *)(void *)g->ring.cq.khead, memory_order_relaxed);
    return tail != head;
}

/* The op's result from its CQE's res (before done). */
static void op_finish(rt_io_op *op, int res)
{
    /* acquire: pairs with rt_uring_submit's, fifo_again's and
     * rt_uring_cancel's releases. */
    uint32_t fl = atomic_load_explicit(&op->rflags, memory_order_acquire);
    bool asked = (fl & RF_CANCEL) != 0;
    op->canceled = res == -ECANCELED || (asked && res == -EINTR);
    if ((fl & RF_FIFO) && res >= 0) {
        /* A pipe write's room (or its error, POLLERR): write again, after
         * the CQ's lock (rt_uring_serve). relaxed: this thread reads it. */
        atomic_fetch_or_explicit(&op->rflags, RF_RETRY, memory_order_relaxed);
        return;
    }
    if (res < 0) {
        op->err = op->canceled ? 0 : -res;
        op->res = 0;
    } else {
        op->err = 0;
        op->res = op->kind == RT_IO_POLL ? (int64_t)poll_bits(res) : (int64_t)res;
        if (op->kind == RT_IO_RECVFROM && op->addr)
            op->addrlen = ((uring_priv *)(void *)op->rpriv)->m.msg_namelen;
    }
}

/* Lock held: consumes up to max entries, finishing their ops into ops[]
 * (done not called yet); *stop: TAG_STOP was consumed, which only the
 * completion thread (owner) does: reap leaves it for that thread. */
static unsigned cq_take(uring_ring *g, rt_io_op **ops, unsigned max, bool owner, bool *stop)
{
    unsigned head, seen = 0, n = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&g->ring, head, cqe) {
        if (n == max)
            break;
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        if (tag == TAG_STOP) {
            if (owner) {
                *stop = true;
                seen++;
            }
            break;
        }
        int res = cqe->res;
        seen++;
        if (tag == TAG_CANCEL)
            continue;
        rt_io_op *op = (rt_io_op *)(uintptr_t)tag;
        op_finish(op, res);
        ops[n++] = op;
    }
    if (seen)
        io_uring_cq_advance(&g->ring, seen);
    return n;
}

/* A pipe write whose wait for room ended (FIFO WRITES): writes again; true
 * when it waits once more (a new poll queued: not done), false when op has
 * its result (done is the caller's). */
static bool fifo_again(rt_io_op *op)
{
    /* relaxed: set by op_finish on this thread. */
    if (!(atomic_load_explicit(&op->rflags, memory_order_relaxed) & RF_RETRY))
        return false;
    if (fifo_write(op))
        return false;
    uring_reactor *u = ((uring_priv *)(void *)op->rpriv)->u;
    uring_ring *g = ring_at(u, (unsigned)op->rwhere);
    rt_os_mutex_lock(&g->sq);
    /* relaxed: sq orders it (rt_uring_cancel sets the flag before it
     * takes sq, so a cancel whose SQE follows ours is seen by neither, and
     * finds our poll in the ring; one before us is seen here). */
    if (atomic_load_explicit(&op->rflags, memory_order_relaxed) & RF_CANCEL) {
        rt_os_mutex_unlock(&g->sq);
        op->canceled = true;
        op->err = 0;
        op->res = 0;
        return false;
    }
    struct io_uring_sqe *s = rt_uring_sqe_get(u, g);
    io_uring_prep_poll_add(s, (int)op->h, POLLOUT);
    io_uring_sqe_set_data(s, op);
    /* release: the next reaper's acquire of rflags (op_finish) sees the op
     * as we leave it (the kernel orders nothing for the memory model). */
    atomic_fetch_and_explicit(&op->rflags, ~RF_RETRY, memory_order_release);
    unsigned n = rt_uring_publish(g);
    rt_os_mutex_unlock(&g->sq);
    rt_uring_enter(u, g, n);
    return true;
}

/* Lock held: takes up to max entries (cq_take), lets the lock go, then
 * finishes their ops (done: the last access to each, outside the lock). */
unsigned rt_uring_serve(uring_ring *g, unsigned max, bool owner, bool *stop)
{
    rt_io_op *ops[REAP_BATCH];
    unsigned n = cq_take(g, ops, max < REAP_BATCH ? max : REAP_BATCH, owner, stop);
    cq_unlock(g);
    for (unsigned i = 0; i < n; i++)
        if (!fifo_again(ops[i]))
            ops[i]->done(ops[i]);   /* the last access */
    return n;
}

/* A worker's peek at one ring (REAPING). */
static unsigned ring_reap(uring_ring *g, unsigned max)
{
    /* relaxed: a pre-check that keeps idle peeks off the lock's line. */
    if (!cq_nonempty(g) || atomic_load_explicit(&g->reaping, memory_order_relaxed) || !cq_trylock(g))
        return 0;
    bool stop = false;
    return rt_uring_serve(g, max, false, &stop);
}

/* Which ring this thread peeks after its own (REAPING): each in turn. */
static _Thread_local unsigned reap_turn;

unsigned rt_uring_reap(rt_reactor *r, unsigned slot, unsigned max)
{
    uring_reactor *u = (uring_reactor *)r;
    uring_ring *own = slot < u->nslots ? ring_at(u, slot) : NULL;
    unsigned n = own ? ring_reap(own, max) : 0;
    unsigned nl = rings_made(u);
    if (n < max && nl > (own ? 1u : 0u)) {
        uring_ring *g = ring_live(u, reap_turn++ % nl);
        if (g == own)
            g = ring_live(u, reap_turn++ % nl);
        if (g != own)
            n += ring_reap(g, max - n);
    }
    return n;
}

/* RESERVE: the system call a lone read's submitter owes (rt_uring_flush,
 * right after wait/io.c's lock), made holding the CQ's consumer lock, and the
 * drain of what it brought before the lock goes: the kernel runs a
 * page-cache read inside the call and posts its completion before the
 * call returns, and a worker spinning in its idle loop (often the one
 * the fiber has just left, after the last read's resume moved it) peeks
 * the CQ and takes the lock the moment it posts, while the submitter is
 * still on its way out of the kernel; the submitter's own reap then finds
 * the lock held, its completion not yet done, and suspends (io_fast_path
 * saw 106 and 131 suspends in 200 page-cache reads beside busy loops:
 * 182 of 200 own reaps found the lock held by a worker or the main
 * thread, with the completion posted; the fiber's resume on the reaper's
 * thread kept the two threads trading places). Workers' reaps skip the
 * CQ meanwhile (rt_uring_reap: the lock is held), the completion thread
 * waits for it as for any consumer in progress; the hold covers one
 * system call, no wait (no GETEVENTS). Only for a call that hands over
 * its own SQE alone (n == 1): one that hands over a batch (others'
 * deferred SQEs published with it) makes the plain call, so that the
 * other threads reap the batch's completions as they land and resume
 * those fibers where they are (held across a batch too, qd32 made
 * 0.27-0.37 system calls per read against io3's 0.08-0.17 in the same
 * sitting; with this rule 0.11-0.13). A lock already held, or a queue backed up
 * (-EBUSY: its lock is let go first, so that others can drain it), falls
 * back to the plain system call and wait/io.c's reap after it. */
static void owed_enter(uring_reactor *u, uring_ring *g)
{
    unsigned n = sq_unentered(g);
    if (n == 0)
        return;   /* another's call took it already */
    /* A batch: the plain call (above). relaxed: a pre-check, as
     * ring_reap's (the exchange decides). */
    if (n > 1 || atomic_load_explicit(&g->reaping, memory_order_relaxed) || !cq_trylock(g)) {
        rt_uring_enter(u, g, n);
        return;
    }
    count_submit(u);
    int e = enter_once(g, n);
    if (enter_again(e)) {
        cq_unlock(g);
        do
            rt_os_yield();
        while (enter_again(enter_once(g, n)));
        return;
    }
    bool stop = false;
    (void)rt_uring_serve(g, REAP_BATCH, false, &stop);
}
