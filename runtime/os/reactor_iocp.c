/*
 * os/reactor_iocp.c - the reactor on Windows.
 *
 * What it does today: every op runs on the blocking lane (design/io.md:
 * "a handle that was not opened for overlapped I/O goes to the blocking
 * lane"), threads of the runtime's own made on demand, one per op in
 * flight, kept for the next ones. Files: ReadFile/WriteFile at the
 * op's offset (an OVERLAPPED with the offset on a synchronous handle);
 * a cancel is CancelSynchronousIo on the lane thread. Sockets: the thread
 * waits for readiness with WSAPoll in short slices, looking at the op's
 * cancel flag between them, then makes the call. What is missing: the
 * I/O completion port for handles opened overlapped (ReadFile/WSARecvFrom
 * with an OVERLAPPED completing on a port that the hot workers drain), so
 * an op in flight holds a lane thread and a parked receive wakes every
 * slice (RT_IOCP_SLICE_MS) instead of costing nothing.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

#define RT_IOCP_SLICE_MS 20
#define RF_CANCEL 1u

typedef struct lane_thread {
    struct lane_thread *next;
    struct lane_reactor *r;
    rt_os_thread t;
    HANDLE self;             /* a real handle, for CancelSynchronousIo */
} lane_thread;

typedef struct lane_reactor {
    rt_reactor base;
    rt_os_mutex mu;
    rt_os_cond cv;
    rt_io_op *head, *tail;   /* queued ops */
    lane_thread *threads;
    int nthreads, nidle;
    bool stop;
} lane_reactor;

enum { W_NONE = 0, W_QUEUED, W_RUNNING };

static bool canceled(rt_io_op *op)
{
    /* acquire: pairs with lane_cancel's release. */
    return (atomic_load_explicit(&op->rflags, memory_order_acquire) & RF_CANCEL) != 0;
}

/* Waits until s is ready for ev (POLLRDNORM/POLLWRNORM) or op is cancelled.
 * Returns the revents, 0 when cancelled, or -1 (WSAGetLastError). */
static int wait_ready(rt_io_op *op, SOCKET s, short ev)
{
    for (;;) {
        if (canceled(op))
            return 0;
        WSAPOLLFD p = { s, ev, 0 };
        int n = WSAPoll(&p, 1, RT_IOCP_SLICE_MS);
        if (n < 0)
            return -1;
        if (n > 0)
            return p.revents ? p.revents : ev;
    }
}

static void run_op(rt_io_op *op)
{
    SOCKET s = (SOCKET)op->h;
    op->err = 0;
    op->res = 0;
    switch (op->kind) {
    case RT_IO_READ:
    case RT_IO_WRITE: {
        DWORD got = 0;
        OVERLAPPED ov;
        memset(&ov, 0, sizeof ov);
        ov.Offset = (DWORD)((uint64_t)op->off & 0xffffffffu);
        ov.OffsetHigh = (DWORD)((uint64_t)op->off >> 32);
        DWORD n = op->n > 0x7fffffffu ? 0x7fffffffu : (DWORD)op->n;
        BOOL ok = op->kind == RT_IO_READ
                ? ReadFile((HANDLE)op->h, op->buf, n, &got, op->off >= 0 ? &ov : NULL)
                : WriteFile((HANDLE)op->h, op->buf, n, &got, op->off >= 0 ? &ov : NULL);
        DWORD e = ok ? 0 : GetLastError();
        if (e == ERROR_HANDLE_EOF || e == ERROR_BROKEN_PIPE)
            e = 0;   /* the end of the file or pipe: 0 bytes */
        if (e == ERROR_OPERATION_ABORTED && canceled(op))
            op->canceled = true;
        else
            op->err = (int)e;
        op->res = e ? 0 : (int64_t)got;
        return;
    }
    case RT_IO_RECVFROM:
    case RT_IO_ACCEPT:
    case RT_IO_POLL:
    case RT_IO_SENDTO:
    case RT_IO_CONNECT:
        break;
    default:
        op->err = ERROR_INVALID_PARAMETER;
        return;
    }
    short ev = op->kind == RT_IO_POLL
             ? (short)(((op->events & RT_IO_POLL_IN) ? POLLRDNORM : 0) | ((op->events & RT_IO_POLL_OUT) ? POLLWRNORM : 0))
             : (op->kind == RT_IO_SENDTO || op->kind == RT_IO_CONNECT) ? POLLWRNORM : POLLRDNORM;
    int rev = op->kind == RT_IO_CONNECT ? POLLWRNORM : wait_ready(op, s, ev);
    if (rev == 0) {
        op->canceled = true;
        return;
    }
    if (rev < 0) {
        op->err = WSAGetLastError();
        return;
    }
    switch (op->kind) {
    case RT_IO_POLL: {
        unsigned b = 0;
        if (rev & POLLRDNORM)
            b |= RT_IO_POLL_IN;
        if (rev & POLLWRNORM)
            b |= RT_IO_POLL_OUT;
        if (rev & (POLLERR | POLLHUP | POLLNVAL))
            b |= RT_IO_POLL_ERR;
        op->res = b;
        return;
    }
    case RT_IO_RECVFROM: {
        int l = (int)op->addrlen;
        int n = recvfrom(s, op->buf, (int)op->n, 0, op->addr, op->addr ? &l : NULL);
        if (n == SOCKET_ERROR) {
            op->err = WSAGetLastError();
            return;
        }
        if (op->addr)
            op->addrlen = (size_t)l;
        op->res = n;
        return;
    }
    case RT_IO_SENDTO: {
        int n = sendto(s, op->buf, (int)op->n, 0, op->addr, op->addr ? (int)op->addrlen : 0);
        if (n == SOCKET_ERROR)
            op->err = WSAGetLastError();
        else
            op->res = n;
        return;
    }
    case RT_IO_ACCEPT: {
        SOCKET c = accept(s, NULL, NULL);
        if (c == INVALID_SOCKET)
            op->err = WSAGetLastError();
        else
            op->res = (int64_t)c;
        return;
    }
    case RT_IO_CONNECT:
        if (connect(s, op->addr, (int)op->addrlen) == SOCKET_ERROR)
            op->err = WSAGetLastError();
        return;
    default:
        return;
    }
}

static void lane_main(void *arg)
{
    lane_thread *lt = arg;
    lane_reactor *r = lt->r;
    rt_os_thread_name("dagrt-io-lane");
    rt_os_mutex_lock(&r->mu);
    for (;;) {
        while (!r->head && !r->stop) {
            r->nidle++;
            rt_os_cond_wait(&r->cv, &r->mu);
            r->nidle--;
        }
        rt_io_op *op = r->head;
        if (!op)
            break;
        r->head = op->rnext;
        if (r->head)
            r->head->rprev = NULL;
        else
            r->tail = NULL;
        op->rnext = op->rprev = NULL;
        op->rwhere = W_RUNNING;
        *(lane_thread **)(void *)op->rpriv = lt;
        rt_os_mutex_unlock(&r->mu);
        run_op(op);
        rt_os_mutex_lock(&r->mu);
        op->rwhere = W_NONE;
        rt_os_mutex_unlock(&r->mu);
        op->done(op);
        rt_os_mutex_lock(&r->mu);
    }
    rt_os_mutex_unlock(&r->mu);
}

static void lane_submit(rt_reactor *b, rt_io_op *op)
{
    lane_reactor *r = (lane_reactor *)b;
    atomic_store_explicit(&op->rflags, 0, memory_order_relaxed);   /* relaxed: not shared yet */
    rt_os_mutex_lock(&r->mu);
    op->rwhere = W_QUEUED;
    op->rnext = NULL;
    op->rprev = r->tail;
    if (r->tail)
        r->tail->rnext = op;
    else
        r->head = op;
    r->tail = op;
    /* One thread per op in flight: a parked receive holds its thread. */
    int queued = 0;
    for (rt_io_op *o = r->head; o; o = o->rnext)
        queued++;
    if (queued > r->nidle) {
        lane_thread *lt = calloc(1, sizeof *lt);
        if (lt) {
            lt->r = r;
            HANDLE dup = NULL;
            if (rt_os_thread_start(&lt->t, lane_main, lt) == 0) {
                if (DuplicateHandle(GetCurrentProcess(), (HANDLE)lt->t.h, GetCurrentProcess(), &dup,
                                    0, FALSE, DUPLICATE_SAME_ACCESS))
                    lt->self = dup;
                lt->next = r->threads;
                r->threads = lt;
                r->nthreads++;
            } else {
                free(lt);
            }
        }
    }
    rt_os_cond_signal(&r->cv);
    rt_os_mutex_unlock(&r->mu);
}

static void lane_cancel(rt_reactor *b, rt_io_op *op)
{
    lane_reactor *r = (lane_reactor *)b;
    /* release: the lane thread's acquire in canceled(). */
    atomic_fetch_or_explicit(&op->rflags, RF_CANCEL, memory_order_release);
    bool now = false;
    rt_os_mutex_lock(&r->mu);
    if (op->rwhere == W_QUEUED) {
        if (op->rprev)
            op->rprev->rnext = op->rnext;
        else
            r->head = op->rnext;
        if (op->rnext)
            op->rnext->rprev = op->rprev;
        else
            r->tail = op->rprev;
        op->rnext = op->rprev = NULL;
        op->rwhere = W_NONE;
        now = true;
    } else if (op->rwhere == W_RUNNING && (op->kind == RT_IO_READ || op->kind == RT_IO_WRITE)) {
        lane_thread *lt = *(lane_thread **)(void *)op->rpriv;
        if (lt && lt->self)
            CancelSynchronousIo(lt->self);
    }
    rt_os_mutex_unlock(&r->mu);
    if (now) {
        op->canceled = true;
        op->err = 0;
        op->res = 0;
        op->done(op);
    }
}

static void lane_destroy(rt_reactor *b)
{
    lane_reactor *r = (lane_reactor *)b;
    rt_os_mutex_lock(&r->mu);
    r->stop = true;
    rt_os_cond_broadcast(&r->cv);
    rt_os_mutex_unlock(&r->mu);
    while (r->threads) {
        lane_thread *n = r->threads->next;
        rt_os_thread_join(&r->threads->t);
        if (r->threads->self)
            CloseHandle(r->threads->self);
        free(r->threads);
        r->threads = n;
    }
    rt_os_cond_fini(&r->cv);
    rt_os_mutex_fini(&r->mu);
    free(r);
}

static const rt_reactor_ops lane_ops = { lane_submit, lane_cancel, lane_destroy, "lane" };

rt_reactor *rt_reactor_iocp_create(unsigned entries, int *err)
{
    (void)entries;
    lane_reactor *r = calloc(1, sizeof *r);
    if (!r || rt_os_mutex_init(&r->mu) != 0 || rt_os_cond_init(&r->cv) != 0) {
        free(r);
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    r->base.ops = &lane_ops;
    return &r->base;
}
