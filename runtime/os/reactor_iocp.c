/*
 * os/reactor_iocp.c - the reactor on Windows: an I/O completion port, with
 * the blocking lane (reactor_lane_win32.c) for what the port cannot take
 * (design/io.md).
 *
 * The port ("iocp"). A handle opened for overlapped I/O (a file or pipe
 * with FILE_FLAG_OVERLAPPED; a socket from socket(), or WSASocket with
 * WSA_FLAG_OVERLAPPED) is associated with one completion port of the
 * process, and its ops are issued with an OVERLAPPED (in the op's rpriv):
 * ReadFile/WriteFile at the op's offset (files, pipes), WSARecv/WSASend
 * (dagrt_read/dagrt_write on a socket), WSARecvFrom/WSASendTo, AcceptEx
 * (onto a socket made for it), ConnectEx (binding the socket first when it
 * is not bound; a datagram socket's connect is the plain call, which does
 * not wait). Every op issued on the port ends with one packet there, even
 * one that succeeds at once (no FILE_SKIP_COMPLETION_PORT_ON_SUCCESS): an
 * op that fails at issue gets none and is answered by the submitter, except
 * for "the datagram did not fit" (WSAEMSGSIZE, ERROR_MORE_DATA), a warning
 * status that queues its packet all the same. One completion thread of the
 * process, blocked in GetQueuedCompletionStatusEx while nothing completes
 * (no CPU spent), reads each packet's result (WSAGetOverlappedResult for a
 * socket, GetOverlappedResult for a file: the system's own error codes)
 * and calls op->done. A cancel is CancelIoEx on that OVERLAPPED; its
 * packet then says ERROR_OPERATION_ABORTED (canceled), or carries the
 * result that won the race.
 *
 * The port and its thread are the process's, made by the first reactor
 * and kept until the process exits: a handle stays associated with a port
 * for its whole life, so a handle used by one runtime and then another
 * must find the same port. A handle already associated with a port of the
 * program's own cannot be used here (its packets would go there).
 *
 * Which way an op goes is asked of the system at each submit: a socket
 * (getsockopt SO_TYPE), the handle's mode (NtQueryInformationFile,
 * FileModeInformation: FILE_SYNCHRONOUS_IO_* means it was not opened for
 * overlapped I/O), then the association (CreateIoCompletionPort; "invalid
 * parameter" when the handle is associated already). A handle that is not
 * overlapped, or that the port refuses, goes to the lane.
 *
 * The lane is reactor_lane_win32.c (made with rt_reactor_iocp_lane_create
 * and driven through its ops); the flags and states the two share are in
 * reactor_win32.h.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <mswsock.h>
#include <windows.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "os.h"
#include "reactor_win32.h"

/* ------------------------------------------------------------ the port */

/* An op's own state on the port, in its rpriv (the OVERLAPPED first). */
typedef struct port_priv {
    OVERLAPPED ov;
    union {
        struct { DWORD flags; INT fromlen; } rv;              /* WSARecv(From) */
        struct {                                              /* AcceptEx */
            SOCKET s;
            unsigned char addrs[2 * (sizeof(struct sockaddr_in6) + 16)];
        } ac;
    } u;
} port_priv;
_Static_assert(sizeof(port_priv) <= sizeof(((rt_io_op *)0)->rpriv), "rt_io_op.rpriv is too small");
_Static_assert(offsetof(port_priv, ov) == 0, "the OVERLAPPED leads");

static inline port_priv *priv_of(rt_io_op *op) { return (port_priv *)(void *)op->rpriv; }
static inline rt_io_op *op_of(OVERLAPPED *ov)
{
    return (rt_io_op *)(void *)((char *)ov - offsetof(rt_io_op, rpriv));
}

static struct {
    rt_os_once once;
    HANDLE port;                 /* NULL: none could be made */
    rt_os_thread thr;
    /* The Winsock extensions (the Microsoft provider's: TCP over IPv4 and
     * IPv6), looked up on the first socket that needs them. relaxed: a
     * function's address, whole in one word; two threads may both look it
     * up and store the same value. */
    _Atomic uintptr_t acceptex, connectex;
} g_port;

typedef struct iocp_reactor {
    rt_reactor base;
    rt_reactor *lane;            /* what the port cannot take, and polls */
} iocp_reactor;

/* The packet's result into op (the completion thread). */
static void port_finish(rt_io_op *op)
{
    port_priv *p = priv_of(op);
    /* relaxed: RF_PORT/RF_SOCK were stored before the op was issued, and
     * the kernel's queue orders the issue before this packet. */
    uint32_t fl = atomic_load_explicit(&op->rflags, memory_order_relaxed);
    DWORD bytes = 0, e = 0;
    if (fl & RF_SOCK) {
        DWORD flags = 0;
        if (!WSAGetOverlappedResult((SOCKET)op->h, &p->ov, &bytes, FALSE, &flags))
            e = (DWORD)WSAGetLastError();
    } else if (!GetOverlappedResult((HANDLE)op->h, &p->ov, &bytes, FALSE)) {
        e = GetLastError();
    }
    if (op->kind == RT_IO_READ && (e == ERROR_HANDLE_EOF || e == ERROR_BROKEN_PIPE))
        e = 0, bytes = 0;   /* the end of the file or pipe: 0 bytes */
    op->res = 0;
    op->err = 0;
    if (e == ERROR_OPERATION_ABORTED &&
        /* acquire: pairs with iocp_cancel's release (its flag set before
         * CancelIoEx, whose abort this packet carries). */
        (atomic_load_explicit(&op->rflags, memory_order_acquire) & RF_CANCEL)) {
        op->canceled = true;
        bytes = 0;
    } else if (e) {
        op->err = (int)e;
    }
    switch (op->kind) {
    case RT_IO_ACCEPT: {
        SOCKET a = p->u.ac.s;
        SOCKET ls = (SOCKET)op->h;
        if (!op->err && !op->canceled &&
            setsockopt(a, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT, (const char *)&ls, sizeof ls) != 0)
            op->err = WSAGetLastError();
        if (op->err || op->canceled)
            closesocket(a);
        else
            op->res = (int64_t)a;
        return;
    }
    case RT_IO_CONNECT:
        if (!op->err && !op->canceled &&
            setsockopt((SOCKET)op->h, SOL_SOCKET, SO_UPDATE_CONNECT_CONTEXT, NULL, 0) != 0)
            op->err = WSAGetLastError();
        return;
    case RT_IO_RECVFROM:
        if (!op->err && !op->canceled && op->addr)
            op->addrlen = (size_t)p->u.rv.fromlen;
        op->res = op->err ? 0 : (int64_t)bytes;
        return;
    default:
        op->res = op->err ? 0 : (int64_t)bytes;
        return;
    }
}

static void port_main(void *arg)
{
    (void)arg;
    rt_os_thread_name("dagrt-iocp");
    OVERLAPPED_ENTRY ents[64];
    for (;;) {
        ULONG n = 0;
        if (!GetQueuedCompletionStatusEx(g_port.port, ents, 64, &n, INFINITE, FALSE))
            continue;   /* WAIT_TIMEOUT cannot happen with INFINITE; a spurious failure: again */
        for (ULONG i = 0; i < n; i++) {
            if (!ents[i].lpOverlapped)
                continue;   /* not ours (no one posts to this port) */
            rt_io_op *op = op_of(ents[i].lpOverlapped);
            port_finish(op);
            op->done(op);   /* the last access */
        }
    }
}

static void port_init(void)
{
    HANDLE port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (!port)
        return;
    if (rt_os_thread_start(&g_port.thr, port_main, NULL) != 0) {
        CloseHandle(port);
        return;
    }
    g_port.port = port;   /* the once's release publishes it */
}

/* The handle's socket type (SOCK_STREAM, SOCK_DGRAM, ...), or 0: not a socket. */
static int sock_type(intptr_t h)
{
    int t = 0, l = sizeof t;
    if (getsockopt((SOCKET)h, SOL_SOCKET, SO_TYPE, (char *)&t, &l) != 0)
        return 0;
    return t;
}

/* Associated with the port: now, or already ("invalid parameter"). */
static bool associate(intptr_t h)
{
    if (CreateIoCompletionPort((HANDLE)h, g_port.port, 0, 0))
        return true;
    return GetLastError() == ERROR_INVALID_PARAMETER;
}

static uintptr_t ext_fn(SOCKET s, _Atomic uintptr_t *cache, GUID g)
{
    /* relaxed: see g_port. */
    uintptr_t f = atomic_load_explicit(cache, memory_order_relaxed);
    if (f)
        return f;
    uintptr_t fn = 0;
    DWORD n = 0;
    if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &g, sizeof g, &fn, sizeof fn, &n, NULL, NULL) != 0)
        return 0;
    atomic_store_explicit(cache, fn, memory_order_relaxed);   /* relaxed: see g_port */
    return fn;
}

/* The call's outcome at issue: a packet will come, or the op has its
 * result now. */
enum { ISSUED, FINISHED };

/* A Winsock call's return: 0 (done, its packet comes), or SOCKET_ERROR. */
static int sock_issued(rt_io_op *op, int rc)
{
    if (rc == 0)
        return ISSUED;
    int e = WSAGetLastError();
    if (e == WSA_IO_PENDING || e == WSAEMSGSIZE)
        return ISSUED;   /* WSAEMSGSIZE: a warning status, queued all the same */
    op->err = e;
    return FINISHED;
}

static int port_issue(rt_io_op *op, int stype)
{
    port_priv *p = priv_of(op);
    memset(&p->ov, 0, sizeof p->ov);
    SOCKET s = (SOCKET)op->h;
    DWORD n = op->n > 0x7fffffffu ? 0x7fffffffu : (DWORD)op->n;
    WSABUF b = { n, op->buf };   /* the call captures it: it may be on the stack */
    switch (op->kind) {
    case RT_IO_READ:
    case RT_IO_WRITE:
        if (stype) {
            p->u.rv.flags = 0;
            return sock_issued(op, op->kind == RT_IO_READ
                ? WSARecv(s, &b, 1, NULL, &p->u.rv.flags, &p->ov, NULL)
                : WSASend(s, &b, 1, NULL, 0, &p->ov, NULL));
        }
        if (op->off < 0) {
            /* An overlapped handle keeps no position: a disk file needs
             * the offset (a pipe or device ignores it). */
            if (GetFileType((HANDLE)op->h) == FILE_TYPE_DISK) {
                op->err = ERROR_INVALID_PARAMETER;
                return FINISHED;
            }
        } else {
            p->ov.Offset = (DWORD)((uint64_t)op->off & 0xffffffffu);
            p->ov.OffsetHigh = (DWORD)((uint64_t)op->off >> 32);
        }
        {
            BOOL ok = op->kind == RT_IO_READ ? ReadFile((HANDLE)op->h, op->buf, n, NULL, &p->ov)
                                             : WriteFile((HANDLE)op->h, op->buf, n, NULL, &p->ov);
            DWORD e = ok ? 0 : GetLastError();
            if (ok || e == ERROR_IO_PENDING || e == ERROR_MORE_DATA)
                return ISSUED;
            if (op->kind == RT_IO_READ && (e == ERROR_HANDLE_EOF || e == ERROR_BROKEN_PIPE))
                return FINISHED;   /* the end, at once: 0 bytes */
            op->err = (int)e;
            return FINISHED;
        }
    case RT_IO_RECVFROM:
        p->u.rv.flags = 0;
        p->u.rv.fromlen = (INT)op->addrlen;
        return sock_issued(op, op->addr
            ? WSARecvFrom(s, &b, 1, NULL, &p->u.rv.flags, op->addr, &p->u.rv.fromlen, &p->ov, NULL)
            : WSARecv(s, &b, 1, NULL, &p->u.rv.flags, &p->ov, NULL));
    case RT_IO_SENDTO:
        if (stype == SOCK_DGRAM) {
            /* Refused at once, as on Linux (a send's "too large" is not
             * reported alike by every Winsock: see sock_issued). */
            unsigned int max = 0;
            int l = sizeof max;
            if (getsockopt(s, SOL_SOCKET, SO_MAX_MSG_SIZE, (char *)&max, &l) == 0 && op->n > max) {
                op->err = WSAEMSGSIZE;
                return FINISHED;
            }
        }
        return sock_issued(op, op->addr
            ? WSASendTo(s, &b, 1, NULL, 0, op->addr, (int)op->addrlen, &p->ov, NULL)
            : WSASend(s, &b, 1, NULL, 0, &p->ov, NULL));
    case RT_IO_ACCEPT: {
        static const GUID gid = WSAID_ACCEPTEX;
        LPFN_ACCEPTEX fn = (LPFN_ACCEPTEX)ext_fn(s, &g_port.acceptex, gid);
        struct sockaddr_storage ss;
        int l = sizeof ss;
        if (!fn || getsockname(s, (struct sockaddr *)&ss, &l) != 0) {
            op->err = WSAGetLastError();
            return FINISHED;
        }
        SOCKET a = WSASocketW(ss.ss_family, SOCK_STREAM, IPPROTO_TCP, NULL, 0, WSA_FLAG_OVERLAPPED);
        if (a == INVALID_SOCKET) {
            op->err = WSAGetLastError();
            return FINISHED;
        }
        p->u.ac.s = a;
        DWORD half = (DWORD)(sizeof p->u.ac.addrs / 2);
        if (fn(s, a, p->u.ac.addrs, 0, half, half, NULL, &p->ov))
            return ISSUED;
        int e = WSAGetLastError();
        if (e == WSA_IO_PENDING)
            return ISSUED;
        closesocket(a);
        op->err = e;
        return FINISHED;
    }
    case RT_IO_CONNECT: {
        if (stype != SOCK_STREAM) {
            /* A datagram socket's connect only sets its peer. */
            if (connect(s, op->addr, (int)op->addrlen) != 0)
                op->err = WSAGetLastError();
            return FINISHED;
        }
        static const GUID gid = WSAID_CONNECTEX;
        LPFN_CONNECTEX fn = (LPFN_CONNECTEX)ext_fn(s, &g_port.connectex, gid);
        if (!fn) {
            op->err = WSAGetLastError();
            return FINISHED;
        }
        /* ConnectEx wants a bound socket: the wildcard of the peer's family
         * when it is not bound yet (what connect does by itself). */
        struct sockaddr_storage ss;
        int l = sizeof ss;
        if (getsockname(s, (struct sockaddr *)&ss, &l) != 0) {
            memset(&ss, 0, sizeof ss);
            ss.ss_family = ((const struct sockaddr *)op->addr)->sa_family;
            int al = ss.ss_family == AF_INET6 ? (int)sizeof(struct sockaddr_in6) : (int)sizeof(struct sockaddr_in);
            if (bind(s, (struct sockaddr *)&ss, al) != 0) {
                op->err = WSAGetLastError();
                return FINISHED;
            }
        }
        if (fn(s, op->addr, (int)op->addrlen, NULL, 0, NULL, &p->ov))
            return ISSUED;
        int e = WSAGetLastError();
        if (e == WSA_IO_PENDING)
            return ISSUED;
        op->err = e;
        return FINISHED;
    }
    default:
        op->err = ERROR_INVALID_PARAMETER;
        return FINISHED;
    }
}

static void iocp_submit(rt_reactor *b, rt_io_op *op)
{
    iocp_reactor *r = (iocp_reactor *)b;
    atomic_store_explicit(&op->rflags, 0, memory_order_relaxed);   /* relaxed: not shared yet */
    op->rwhere = W_NONE;
    int stype = op->kind == RT_IO_POLL ? 0 : sock_type(op->h);
    if (op->kind == RT_IO_POLL || rt_win_handle_overlapped(op->h) != 1 || !associate(op->h)) {
        r->lane->ops->submit(r->lane, op);
        return;
    }
    /* relaxed: read by iocp_cancel (after this submit: wait/io.c's lock orders
     * them) and by port_finish (after the packet: the kernel orders it). */
    atomic_store_explicit(&op->rflags, RF_PORT | (stype ? RF_SOCK : 0u), memory_order_relaxed);
    op->err = 0;
    op->res = 0;
    if (port_issue(op, stype) == FINISHED)
        op->done(op);
}

static void iocp_cancel(rt_reactor *b, rt_io_op *op)
{
    iocp_reactor *r = (iocp_reactor *)b;
    /* relaxed: set by this op's submit, which wait/io.c's lock orders before. */
    if (!(atomic_load_explicit(&op->rflags, memory_order_relaxed) & RF_PORT)) {
        r->lane->ops->cancel(r->lane, op);
        return;
    }
    /* release: port_finish's acquire sees it with the abort. */
    atomic_fetch_or_explicit(&op->rflags, RF_CANCEL, memory_order_release);
    /* Not in flight any more (answered at issue, or its packet already
     * taken): ERROR_NOT_FOUND, nothing to do; its result stands. */
    (void)CancelIoEx((HANDLE)op->h, &priv_of(op)->ov);
}

static void iocp_destroy(rt_reactor *b)
{
    iocp_reactor *r = (iocp_reactor *)b;
    r->lane->ops->destroy(r->lane);   /* the port and its thread stay: see the top */
    free(r);
}

static const rt_reactor_ops iocp_ops = { iocp_submit, iocp_cancel, iocp_destroy, "iocp", NULL, NULL };

rt_reactor *rt_reactor_iocp_create(unsigned entries, int *err)
{
    rt_os_once_run(&g_port.once, port_init);
    if (!g_port.port)   /* no port: the lane does everything */
        return rt_reactor_iocp_lane_create(entries, err);
    iocp_reactor *r = calloc(1, sizeof *r);
    if (!r) {
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    if (!(r->lane = rt_reactor_iocp_lane_create(entries, err))) {
        free(r);
        return NULL;
    }
    r->base.ops = &iocp_ops;
    return &r->base;
}
