/*
 * os/reactor_epoll.c - the fallback reactor (design/io.md): where the
 * kernel refuses io_uring, or DAGRT_IO=fallback / dagrt_config.io_fallback
 * asks for it.
 *
 * What can be polled (sockets, pipes, eventfds, terminals, sync files)
 * goes through epoll: the call is tried at once without blocking (MSG_DONTWAIT,
 * RWF_NOWAIT, a zero poll; where the system refuses RWF_NOWAIT, a zero poll
 * and then at most what is there: io_linux.c); if it would block, the op waits on its handle's
 * list and the handle is armed one-shot in the epoll set for the union of
 * what its ops wait for; the reactor's thread, blocked in epoll_wait while
 * nothing is ready (no CPU spent), tries them again when the kernel says
 * the handle is ready. Regular files and block devices cannot be polled
 * (they are always "ready", and a read still waits for the disk), so they
 * go to the blocking lane: two threads of the runtime's own that run
 * pread/pwrite; a cancel takes an op off the lane's queue, and one already
 * running finishes (a regular file's read does).
 *
 * Two cases wait on readiness and then make the call: accept (accept4 has
 * no "don't wait" flag for the listening socket) and connect (the socket is
 * made non-blocking for the connect, then back). Another thread of the
 * program accepting on the same listening socket in between could make that
 * accept block the reactor's thread: one accepter per listening socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

enum { W_NONE = 0, W_FD, W_LANE, W_RUNNING };
#define LANE_THREADS 2
#define RF_CONNECTING 1u   /* connect: EINPROGRESS seen, answer from SO_ERROR */
#define RF_RESTORE    2u   /* connect: O_NONBLOCK to take off again */
#define RF_SOCK       4u   /* read, write: on a socket (recv, send with MSG_NOSIGNAL) */
#define RF_FIFO       8u   /* read, write: on a pipe (a write: io_linux.c, SIGPIPE) */

typedef struct ep_fd {
    rt_io_op *head;        /* ops waiting on this handle */
    uint32_t armed;        /* EPOLL* interest armed now; 0: not in the set */
    bool added;
} ep_fd;

typedef struct ep_reactor {
    rt_reactor base;
    int ep, wake;
    rt_os_mutex mu;        /* fds, the lane's queue, every op's rwhere */
    ep_fd *fds;
    int nfds;
    bool stop;
    rt_os_thread thr;
    rt_os_cond lane_cv;
    rt_io_op *lane_head, *lane_tail;
    rt_os_thread lane[LANE_THREADS];
    int nlane;
} ep_reactor;

/* What the op waits for in the epoll set (0 for a poll of DAGRT_POLL_ERR
 * alone: epoll reports errors and hang-ups whatever was asked). */
static unsigned op_interest(const rt_io_op *op)
{
    switch (op->kind) {
    case RT_IO_READ: case RT_IO_RECVFROM: case RT_IO_ACCEPT:
        return EPOLLIN;
    case RT_IO_WRITE: case RT_IO_SENDTO: case RT_IO_CONNECT:
        return EPOLLOUT;
    default:
        return ((op->events & RT_IO_POLL_IN) ? EPOLLIN : 0u) |
               ((op->events & RT_IO_POLL_OUT) ? EPOLLOUT : 0u);
    }
}

static unsigned poll_bits(unsigned rev)
{
    unsigned b = 0;
    if (rev & (POLLIN | EPOLLIN))
        b |= RT_IO_POLL_IN;
    if (rev & (POLLOUT | EPOLLOUT))
        b |= RT_IO_POLL_OUT;
    if (rev & (POLLERR | POLLHUP | POLLNVAL))
        b |= RT_IO_POLL_ERR;
    return b;
}

static void set_result(rt_io_op *op, ssize_t r)
{
    if (r < 0) {
        op->err = errno;
        op->res = 0;
    } else {
        op->err = 0;
        op->res = r;
    }
}

/* One attempt that does not block. true: op has its result. */
static bool try_op(rt_io_op *op)
{
    int fd = (int)op->h;
    ssize_t r;
    switch (op->kind) {
    case RT_IO_READ: {
        if (rt_os_rw_nowait_usable()) {
            struct iovec v = { op->buf, op->n };
            r = preadv2(fd, &v, 1, op->off < 0 ? -1 : op->off, RWF_NOWAIT);
            if (!(r < 0 && rt_os_rw_nowait_refusal(errno)))
                break;
            rt_os_rw_nowait_refuse();   /* this system refuses it: never again */
        }
        /* relaxed: rflags is the op's current owner's only. */
        if ((atomic_load_explicit(&op->rflags, memory_order_relaxed) & RF_SOCK) && op->off < 0) {
            r = recv(fd, op->buf, op->n, MSG_DONTWAIT);
        } else {
            int e = 0;
            r = (ssize_t)rt_os_read_ready(fd, op->buf, op->n, op->off, &e);
            errno = e;
        }
        break;
    }
    case RT_IO_WRITE: {
        /* No SIGPIPE reaches the program (io_linux.c, SIGPIPE). relaxed:
         * rflags is the op's current owner's only. */
        uint32_t fl = atomic_load_explicit(&op->rflags, memory_order_relaxed);
        if ((fl & RF_SOCK) && op->off < 0) {
            r = send(fd, op->buf, op->n, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else if (fl & RF_FIFO) {
            int e = 0;
            r = (ssize_t)rt_os_write_nosigpipe(fd, op->buf, op->n, op->off, true, &e);
            errno = e;
        } else {
            /* A file, a terminal, a device; with an offset a socket's is
             * ESPIPE, before anything is sent (no SIGPIPE). */
            r = -1;
            if (rt_os_rw_nowait_usable()) {
                struct iovec v = { op->buf, op->n };
                r = pwritev2(fd, &v, 1, op->off < 0 ? -1 : op->off, RWF_NOWAIT);
                if (r < 0 && rt_os_rw_nowait_refusal(errno))
                    rt_os_rw_nowait_refuse();   /* and the ready path, now */
                else
                    break;
            }
            int e = 0;
            r = (ssize_t)rt_os_write_ready(fd, op->buf, op->n, op->off, &e);
            errno = e;
        }
        break;
    }
    case RT_IO_RECVFROM: {
        socklen_t l = (socklen_t)op->addrlen;
        r = recvfrom(fd, op->buf, op->n, MSG_DONTWAIT, op->addr, op->addr ? &l : NULL);
        if (r >= 0 && op->addr)
            op->addrlen = l;
        break;
    }
    case RT_IO_SENDTO:
        r = sendto(fd, op->buf, op->n, MSG_DONTWAIT | MSG_NOSIGNAL, op->addr,
                   op->addr ? (socklen_t)op->addrlen : 0);
        break;
    case RT_IO_ACCEPT: {
        struct pollfd p = { fd, POLLIN, 0 };
        int n = poll(&p, 1, 0);
        if (n == 0 || (n < 0 && errno == EINTR))
            return false;
        if (n > 0 && (p.revents & POLLNVAL)) {
            errno = EBADF;
            r = -1;
            break;
        }
        r = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        break;
    }
    case RT_IO_CONNECT: {
        uint32_t fl = atomic_load_explicit(&op->rflags, memory_order_relaxed);   /* relaxed: the op's current owner only */
        if (fl & RF_CONNECTING) {
            int soerr = 0;
            socklen_t l = sizeof soerr;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) != 0)
                soerr = errno;
            if (fl & RF_RESTORE) {
                int f = fcntl(fd, F_GETFL);
                if (f >= 0)
                    (void)fcntl(fd, F_SETFL, f & ~O_NONBLOCK);
            }
            op->err = soerr;
            op->res = 0;
            return true;
        }
        int f = fcntl(fd, F_GETFL);
        if (f < 0) {
            r = -1;
            break;
        }
        bool restore = !(f & O_NONBLOCK);
        if (restore)
            (void)fcntl(fd, F_SETFL, f | O_NONBLOCK);
        r = connect(fd, (const struct sockaddr *)op->addr, (socklen_t)op->addrlen);
        if (r < 0 && (errno == EINPROGRESS || errno == EAGAIN)) {
            /* relaxed: as above. */
            atomic_store_explicit(&op->rflags, RF_CONNECTING | (restore ? RF_RESTORE : 0u), memory_order_relaxed);
            return false;
        }
        int e = errno;
        if (restore)
            (void)fcntl(fd, F_SETFL, f);
        errno = e;
        break;
    }
    case RT_IO_POLL: {
        struct pollfd p = { fd, (short)(((op->events & RT_IO_POLL_IN) ? POLLIN : 0) |
                                        ((op->events & RT_IO_POLL_OUT) ? POLLOUT : 0)), 0 };
        int n = poll(&p, 1, 0);
        if (n == 0 || (n < 0 && errno == EINTR))
            return false;
        if (n > 0 && (p.revents & POLLNVAL)) {
            errno = EBADF;
            r = -1;
            break;
        }
        r = n < 0 ? -1 : (ssize_t)poll_bits((unsigned)p.revents);
        break;
    }
    default:
        errno = EINVAL;
        r = -1;
        break;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return false;
    set_result(op, r);
    return true;
}

/* mu held: arms fd's interest (the union of its ops') while any op waits
 * on it, else takes it out. An op may want nothing but errors (a poll of
 * DAGRT_POLL_ERR alone): the handle is armed all the same, for the
 * EPOLLERR and EPOLLHUP that epoll always reports. The system's error of
 * a failed arm (0: none). */
static int fd_rearm(ep_reactor *e, int fd)
{
    ep_fd *f = &e->fds[fd];
    unsigned want = 0;
    for (rt_io_op *o = f->head; o; o = o->rnext)
        want |= op_interest(o);
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = want | EPOLLONESHOT;
    ev.data.fd = fd;
    if (!f->head) {
        if (f->added)
            (void)epoll_ctl(e->ep, EPOLL_CTL_DEL, fd, NULL);
        f->added = false;
        f->armed = 0;
        return 0;
    }
    int err = 0;
    if (f->added && epoll_ctl(e->ep, EPOLL_CTL_MOD, fd, &ev) != 0) {
        err = errno;
        f->added = false;
    }
    if (!f->added && (err == 0 || err == ENOENT)) {
        f->added = epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &ev) == 0;
        err = f->added ? 0 : errno;
    }
    f->armed = want;
    return err;
}

static void fd_unlink(ep_fd *f, rt_io_op *op)
{
    if (op->rprev)
        op->rprev->rnext = op->rnext;
    else
        f->head = op->rnext;
    if (op->rnext)
        op->rnext->rprev = op->rprev;
    op->rnext = op->rprev = NULL;
    op->rwhere = W_NONE;
}

/* mu held: room for fd in the table. false: out of memory. */
static bool fd_room(ep_reactor *e, int fd)
{
    if (fd < e->nfds)
        return true;
    int n = e->nfds ? e->nfds : 64;
    while (n <= fd)
        n *= 2;
    ep_fd *t = realloc(e->fds, (size_t)n * sizeof *t);
    if (!t)
        return false;
    memset(t + e->nfds, 0, (size_t)(n - e->nfds) * sizeof *t);
    e->fds = t;
    e->nfds = n;
    return true;
}

/* Reads and writes: regular files, block devices and directories go to
 * the lane; a socket or a pipe is noted in rflags (try_op). */
static bool goes_to_lane(rt_io_op *op)
{
    if (op->kind != RT_IO_READ && op->kind != RT_IO_WRITE)
        return false;
    int kind = rt_os_fd_kind(op->h);   /* RT_FD_BAD: try_op reports the error */
    if (kind == RT_FD_SOCK || kind == RT_FD_FIFO)
        /* relaxed: the op is not shared yet. */
        atomic_store_explicit(&op->rflags, kind == RT_FD_SOCK ? RF_SOCK : RF_FIFO, memory_order_relaxed);
    return kind == RT_FD_FILE;
}

/* Whether h may accept: a listening socket. Else the error accept4 would
 * give at once, as io_uring answers (ENOTSOCK for what is not a socket,
 * EINVAL for a stream socket that is not listening, EOPNOTSUPP for a
 * datagram one), where the readiness wait would wait for ever; 0 for a
 * listening socket (or one getsockopt cannot judge: accept4 says). */
static int accept_refusal(int fd)
{
    int on = 0, type = 0;
    socklen_t l = sizeof on;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &l) != 0)
        return errno == ENOTSOCK || errno == EBADF ? errno : 0;
    if (on)
        return 0;
    l = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0)
        return 0;
    return type == SOCK_STREAM || type == SOCK_SEQPACKET ? EINVAL : EOPNOTSUPP;
}

static void ep_submit(rt_reactor *r, rt_io_op *op)
{
    ep_reactor *e = (ep_reactor *)r;
    atomic_store_explicit(&op->rflags, 0, memory_order_relaxed);   /* relaxed: not shared yet */
    op->rnext = op->rprev = NULL;
    op->rwhere = W_NONE;
    if (op->once) {   /* a poll past its deadline: one look, answered here (reactor.h) */
        rt_os_poll_once(op);
        op->done(op);
        return;
    }
    if (goes_to_lane(op)) {
        rt_os_mutex_lock(&e->mu);
        op->rwhere = W_LANE;
        if (e->lane_tail)
            e->lane_tail->rnext = op;
        else
            e->lane_head = op;
        op->rprev = e->lane_tail;
        e->lane_tail = op;
        rt_os_cond_signal(&e->lane_cv);
        rt_os_mutex_unlock(&e->mu);
        return;
    }
    if (op->kind == RT_IO_ACCEPT) {
        int refused = accept_refusal((int)op->h);
        if (refused) {
            op->err = refused;
            op->res = 0;
            op->done(op);
            return;
        }
    }
    if (try_op(op)) {
        op->done(op);
        return;
    }
    int fd = (int)op->h;
    rt_os_mutex_lock(&e->mu);
    if (fd < 0 || !fd_room(e, fd)) {
        rt_os_mutex_unlock(&e->mu);
        op->err = fd < 0 ? EBADF : ENOMEM;
        op->res = 0;
        op->done(op);
        return;
    }
    ep_fd *f = &e->fds[fd];
    op->rnext = f->head;
    if (f->head)
        f->head->rprev = op;
    f->head = op;
    op->rwhere = W_FD;
    int ctl_err = fd_rearm(e, fd);
    bool ok = ctl_err == 0;
    if (!ok) {
        fd_unlink(f, op);
        (void)fd_rearm(e, fd);   /* the others' interest, without this op */
    }
    rt_os_mutex_unlock(&e->mu);
    if (!ok) {
        op->err = ctl_err;
        op->res = 0;
        op->done(op);
    }
}

static void ep_cancel(rt_reactor *r, rt_io_op *op)
{
    ep_reactor *e = (ep_reactor *)r;
    bool now = false;
    rt_os_mutex_lock(&e->mu);
    if (op->rwhere == W_FD) {
        int fd = (int)op->h;
        fd_unlink(&e->fds[fd], op);
        (void)fd_rearm(e, fd);
        now = true;
    } else if (op->rwhere == W_LANE) {
        if (op->rprev)
            op->rprev->rnext = op->rnext;
        else
            e->lane_head = op->rnext;
        if (op->rnext)
            op->rnext->rprev = op->rprev;
        else
            e->lane_tail = op->rprev;
        op->rnext = op->rprev = NULL;
        op->rwhere = W_NONE;
        now = true;
    }
    rt_os_mutex_unlock(&e->mu);
    if (now) {
        uint32_t fl = atomic_load_explicit(&op->rflags, memory_order_relaxed);   /* relaxed: ours now */
        if ((fl & RF_RESTORE) && op->kind == RT_IO_CONNECT) {
            int f = fcntl((int)op->h, F_GETFL);
            if (f >= 0)
                (void)fcntl((int)op->h, F_SETFL, f & ~O_NONBLOCK);
        }
        op->canceled = true;
        op->err = 0;
        op->res = 0;
        op->done(op);
    }
    /* Otherwise it is running on the lane or being answered: its result comes. */
}

static void reactor_main(void *arg)
{
    ep_reactor *e = arg;
    rt_os_thread_name("dagrt-io");
    struct epoll_event evs[64];
    for (;;) {
        int n = epoll_wait(e->ep, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        rt_io_op *ready = NULL;
        bool stop = false;
        rt_os_mutex_lock(&e->mu);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == e->wake) {
                uint64_t v;
                (void)!read(e->wake, &v, sizeof v);
                stop = e->stop;
                continue;
            }
            if (fd < 0 || fd >= e->nfds)
                continue;
            ep_fd *f = &e->fds[fd];
            unsigned rev = evs[i].events;
            for (rt_io_op *o = f->head, *nx; o; o = nx) {
                nx = o->rnext;
                if (!(rev & (op_interest(o) | EPOLLERR | EPOLLHUP)))
                    continue;
                if (try_op(o)) {
                    fd_unlink(f, o);
                    o->rnext = ready;
                    ready = o;
                }
            }
            (void)fd_rearm(e, fd);
        }
        rt_os_mutex_unlock(&e->mu);
        while (ready) {
            rt_io_op *nx = ready->rnext;
            ready->rnext = NULL;
            ready->done(ready);   /* the last access */
            ready = nx;
        }
        if (stop)
            return;
    }
}

static void lane_main(void *arg)
{
    ep_reactor *e = arg;
    rt_os_thread_name("dagrt-io-lane");
    rt_os_mutex_lock(&e->mu);
    for (;;) {
        while (!e->lane_head && !e->stop)
            rt_os_cond_wait(&e->lane_cv, &e->mu);
        rt_io_op *op = e->lane_head;
        if (!op)
            break;   /* stop, nothing queued */
        e->lane_head = op->rnext;
        if (e->lane_head)
            e->lane_head->rprev = NULL;
        else
            e->lane_tail = NULL;
        op->rnext = op->rprev = NULL;
        op->rwhere = W_RUNNING;
        rt_os_mutex_unlock(&e->mu);
        ssize_t r;
        do {
            if (op->kind == RT_IO_READ)
                r = op->off < 0 ? read((int)op->h, op->buf, op->n) : pread((int)op->h, op->buf, op->n, op->off);
            else
                r = op->off < 0 ? write((int)op->h, op->buf, op->n) : pwrite((int)op->h, op->buf, op->n, op->off);
        } while (r < 0 && errno == EINTR);
        set_result(op, r);
        rt_os_mutex_lock(&e->mu);
        op->rwhere = W_NONE;
        rt_os_mutex_unlock(&e->mu);
        op->done(op);
        rt_os_mutex_lock(&e->mu);
    }
    rt_os_mutex_unlock(&e->mu);
}

static void ep_destroy(rt_reactor *r)
{
    ep_reactor *e = (ep_reactor *)r;
    rt_os_mutex_lock(&e->mu);
    e->stop = true;
    rt_os_cond_broadcast(&e->lane_cv);
    rt_os_mutex_unlock(&e->mu);
    uint64_t one = 1;
    (void)!write(e->wake, &one, sizeof one);
    rt_os_thread_join(&e->thr);
    for (int i = 0; i < e->nlane; i++)
        rt_os_thread_join(&e->lane[i]);
    close(e->wake);
    close(e->ep);
    rt_os_cond_fini(&e->lane_cv);
    rt_os_mutex_fini(&e->mu);
    free(e->fds);
    free(e);
}

/* No reap, no flush: its completions come from its own threads (epoll_wait, the lane) or inside submit. */
static const rt_reactor_ops ep_ops = { ep_submit, ep_cancel, ep_destroy, "epoll", NULL, NULL };

rt_reactor *rt_reactor_epoll_create(unsigned entries, int *err, int *os_err)
{
    (void)entries;
    *os_err = 0;
    ep_reactor *e = calloc(1, sizeof *e);
    if (!e) {
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    e->base.ops = &ep_ops;
    /* The system's reason is kept (EMFILE with every descriptor taken):
     * the first I/O call returns it (wait/io.c, io_make). */
    e->ep = epoll_create1(EPOLL_CLOEXEC);
    int why = e->ep < 0 ? errno : 0;
    e->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (e->wake < 0 && !why)
        why = errno;
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.fd = e->wake;
    if (!why && epoll_ctl(e->ep, EPOLL_CTL_ADD, e->wake, &ev) != 0)
        why = errno;
    if (why || rt_os_mutex_init(&e->mu) != 0 || rt_os_cond_init(&e->lane_cv) != 0) {
        if (e->ep >= 0)
            close(e->ep);
        if (e->wake >= 0)
            close(e->wake);
        free(e);
        *os_err = why;
        *err = why ? rt_os_error_code(why) : DAGRT_ENOMEM;
        return NULL;
    }
    if (rt_os_thread_start(&e->thr, reactor_main, e) != 0) {
        close(e->ep);
        close(e->wake);
        free(e);
        *err = DAGRT_ETHREAD;
        return NULL;
    }
    for (; e->nlane < LANE_THREADS; e->nlane++)
        if (rt_os_thread_start(&e->lane[e->nlane], lane_main, e) != 0)
            break;
    if (e->nlane == 0) {
        ep_destroy(&e->base);
        *err = DAGRT_ETHREAD;
        return NULL;
    }
    return &e->base;
}
