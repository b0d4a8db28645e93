/*
 * os/reactor_uring.c - the reactor on io_uring (liburing), Linux.
 *
 * One ring per runtime. Submitters fill and submit SQEs under io.c's lock
 * (reactor.h), so the submission queue has one writer at a time; one
 * completion thread of the runtime's own reaps the completion queue,
 * blocked in the kernel (io_uring_wait_cqe) while nothing completes: an
 * idle runtime with I/O in flight burns no CPU. Each SQE's user data is its
 * rt_io_op; a cancel is IORING_OP_ASYNC_CANCEL on that user data, issued
 * under the same lock while the op is still io.c's (so the record cannot
 * have been reused for another op meanwhile), and the kernel answers the
 * op itself with -ECANCELED (or -EINTR for one that a worker of the ring
 * was running), or with its result when that won the race.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

#define TAG_CANCEL ((uint64_t)1)     /* a cancel's own completion: ignored */
#define TAG_STOP   ((uint64_t)2)     /* destroy: the completion thread returns */
#define RF_CANCEL  1u                /* rflags: a cancel was issued for it */
#define RF_QUEUED  2u                /* rflags: submitted (the hand-off to the completion thread) */

typedef struct uring_priv {
    struct msghdr m;
    struct iovec v;
} uring_priv;
_Static_assert(sizeof(uring_priv) <= sizeof(((rt_io_op *)0)->rpriv), "rpriv too small");

typedef struct uring_reactor {
    rt_reactor base;
    struct io_uring ring;
    rt_os_thread thr;
} uring_reactor;

static struct io_uring_sqe *sqe_get(uring_reactor *u)
{
    struct io_uring_sqe *s;
    /* A full queue: hand what is there to the kernel, which takes it at
     * once (no SQPOLL), and try again. */
    while ((s = io_uring_get_sqe(&u->ring)) == NULL) {
        if (io_uring_submit(&u->ring) < 0)
            rt_os_yield();
    }
    return s;
}

static void sq_flush(uring_reactor *u)
{
    /* -EBUSY/-EAGAIN: the completion side is backed up for a moment. */
    for (int r; (r = io_uring_submit(&u->ring)) < 0 && (r == -EBUSY || r == -EAGAIN || r == -EINTR);)
        rt_os_yield();
}

static void uring_submit(rt_reactor *r, rt_io_op *op)
{
    uring_reactor *u = (uring_reactor *)r;
    struct io_uring_sqe *s = sqe_get(u);
    int fd = (int)op->h;
    uring_priv *p = (uring_priv *)(void *)op->rpriv;
    switch (op->kind) {
    case RT_IO_READ:
        io_uring_prep_read(s, fd, op->buf, (unsigned)op->n, op->off < 0 ? (uint64_t)-1 : (uint64_t)op->off);
        break;
    case RT_IO_WRITE:
        io_uring_prep_write(s, fd, op->buf, (unsigned)op->n, op->off < 0 ? (uint64_t)-1 : (uint64_t)op->off);
        break;
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
     * rflags after the completion sees everything io.c wrote into op. */
    atomic_store_explicit(&op->rflags, RF_QUEUED, memory_order_release);
    sq_flush(u);
}

static void uring_cancel(rt_reactor *r, rt_io_op *op)
{
    uring_reactor *u = (uring_reactor *)r;
    /* release: the completion thread's acquire of rflags, after the op's
     * completion, sees that the -EINTR it got came from this cancel. */
    atomic_fetch_or_explicit(&op->rflags, RF_CANCEL, memory_order_release);
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_cancel(s, op, 0);
    io_uring_sqe_set_data64(s, TAG_CANCEL);
    sq_flush(u);
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

static void completion_main(void *arg)
{
    uring_reactor *u = arg;
    rt_os_thread_name("dagrt-io");
    for (;;) {
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&u->ring, &cqe);
        if (e == -EINTR || e == -EAGAIN)
            continue;
        if (e < 0) {
            rt_os_write_err("dagrt: fatal: io_uring_wait_cqe failed\n");
            abort();
        }
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        if (tag == TAG_CANCEL)
            continue;
        if (tag == TAG_STOP)
            return;
        rt_io_op *op = (rt_io_op *)(uintptr_t)tag;
        /* acquire: pairs with uring_submit's and uring_cancel's releases. */
        bool asked = (atomic_load_explicit(&op->rflags, memory_order_acquire) & RF_CANCEL) != 0;
        op->canceled = res == -ECANCELED || (asked && res == -EINTR);
        if (res < 0) {
            op->err = op->canceled ? 0 : -res;
            op->res = 0;
        } else {
            op->err = 0;
            op->res = op->kind == RT_IO_POLL ? (int64_t)poll_bits(res) : (int64_t)res;
            if (op->kind == RT_IO_RECVFROM && op->addr)
                op->addrlen = ((uring_priv *)(void *)op->rpriv)->m.msg_namelen;
        }
        op->done(op);   /* the last access */
    }
}

static void uring_destroy(rt_reactor *r)
{
    uring_reactor *u = (uring_reactor *)r;
    struct io_uring_sqe *s = sqe_get(u);
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, TAG_STOP);
    sq_flush(u);
    rt_os_thread_join(&u->thr);
    io_uring_queue_exit(&u->ring);
    free(u);
}

static const rt_reactor_ops uring_ops = { uring_submit, uring_cancel, uring_destroy, "io_uring" };

rt_reactor *rt_reactor_uring_create(unsigned entries, int *err)
{
    uring_reactor *u = calloc(1, sizeof *u);
    if (!u) {
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    u->base.ops = &uring_ops;
    struct io_uring_params prm;
    memset(&prm, 0, sizeof prm);
    /* CQSIZE: room for a completion of every op in flight and the cancels
     * beside them; NODROP kernels keep overflow anyway. */
    prm.flags = IORING_SETUP_CQSIZE;
    prm.cq_entries = entries * 4;
    int e = io_uring_queue_init_params(entries, &u->ring, &prm);
    if (e < 0) {
        /* Too old, disabled (kernel.io_uring_disabled), or seccomp: the
         * caller falls back. */
        free(u);
        *err = DAGRT_EIO;
        return NULL;
    }
    if (rt_os_thread_start(&u->thr, completion_main, u) != 0) {
        io_uring_queue_exit(&u->ring);
        free(u);
        *err = DAGRT_ETHREAD;
        return NULL;
    }
    return &u->base;
}
