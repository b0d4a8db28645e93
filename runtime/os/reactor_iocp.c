/*
 * os/reactor_iocp.c - the reactor on Windows: an I/O completion port, with
 * the blocking lane for what the port cannot take (design/io.md).
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
 * The lane ("lane"; the whole reactor with DAGRT_IO=fallback or
 * dagrt_config.io_fallback): threads of the runtime's own, made on demand,
 * one per op in flight, kept for the next ones. Files: ReadFile/WriteFile
 * at the op's offset (an OVERLAPPED with the offset on a synchronous
 * handle); a cancel is CancelSynchronousIo on the lane thread. Sockets: the
 * thread waits for readiness with WSAPoll on the socket and on the
 * thread's wake socket (a datagram socket on 127.0.0.1 connected to
 * itself), then makes the call; a cancel sets the op's flag and then sends
 * the wake socket a byte, and the thread drains the socket only after its
 * WSAPoll and looks at the flag again, so no cancel is lost and a parked
 * wait costs nothing until then (tests/models/lane_wake.pml). dagrt_poll
 * always goes to the lane: WSAPoll for a socket; for any other handle a
 * wait on the object (signalled: DAGRT_POLL_IN) and on the thread's cancel
 * event, set by a cancel after the flag in the same way.
 */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <mswsock.h>
#include <windows.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

/* A lane thread without a wake socket (none could be made) looks at its
 * op's cancel flag this often. */
#define RT_IOCP_SLICE_MS 20
#define RF_CANCEL 1u   /* rt_reactor_cancel asked */
#define RF_PORT   2u   /* issued on the port (else: the lane's) */
#define RF_SOCK   4u   /* the handle is a socket */

typedef struct lane_thread {
    struct lane_thread *next;
    struct lane_reactor *r;
    rt_os_thread t;
    HANDLE self;             /* a real handle, for CancelSynchronousIo */
    SOCKET wake;             /* its WSAPoll's second socket; INVALID_SOCKET: none */
    HANDLE ev;               /* its OVERLAPPED's event (an overlapped handle) */
    HANDLE cev;              /* its cancel event (a poll on a waitable object) */
    OVERLAPPED ov;           /* its file op's, for CancelIoEx */
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

/* A datagram socket on 127.0.0.1 connected to itself, non-blocking: a
 * byte sent to it ends its thread's WSAPoll. INVALID_SOCKET if none. */
static SOCKET wake_socket(void)
{
    SOCKET w = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    if (w == INVALID_SOCKET)
        return w;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = sizeof a;
    u_long nb = 1;
    if (bind(w, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(w, (struct sockaddr *)&a, &l) != 0 ||
        connect(w, (struct sockaddr *)&a, sizeof a) != 0 || ioctlsocket(w, FIONBIO, &nb) != 0) {
        closesocket(w);
        return INVALID_SOCKET;
    }
    return w;
}

static void wake_drain(SOCKET w)
{
    char b[16];
    while (recv(w, b, sizeof b, 0) > 0) {
    }
}

/* Waits until s is ready for ev (POLLRDNORM/POLLWRNORM) or op is cancelled.
 * Returns the revents, 0 when cancelled, or -1 (WSAGetLastError). */
static int wait_ready(rt_io_op *op, lane_thread *lt, SOCKET s, short ev)
{
    for (;;) {
        if (canceled(op))
            return 0;
        WSAPOLLFD p[2] = { { s, ev, 0 }, { lt->wake, POLLRDNORM, 0 } };
        bool w = lt->wake != INVALID_SOCKET;
        int n = WSAPoll(p, w ? 2 : 1, w ? -1 : RT_IOCP_SLICE_MS);
        if (n < 0)
            return -1;
        if (w && p[1].revents)
            wake_drain(lt->wake);   /* a cancel (or a stale byte): look again */
        if (p[0].revents)
            return p[0].revents;
    }
}

static bool is_socket(intptr_t h)
{
    int t = 0, l = sizeof t;
    return getsockopt((SOCKET)h, SOL_SOCKET, SO_TYPE, (char *)&t, &l) == 0;
}

/* dagrt_poll on what is not a socket: a waitable object (an event, a
 * semaphore, a process, a GPU fence's event) is "in" once it is signalled;
 * the wait takes what a wait takes (an auto-reset event's signal, a
 * semaphore's unit). The thread waits on the object and on its cancel
 * event, which lane_cancel sets after the op's flag (as for the wake
 * socket: tests/models/lane_wake.pml; a stale signal only makes it look
 * at the flag again). */
static void wait_object(rt_io_op *op, lane_thread *lt)
{
    for (;;) {
        if (canceled(op)) {
            op->canceled = true;
            return;
        }
        HANDLE hs[2] = { (HANDLE)op->h, lt->cev };
        DWORD w = WaitForMultipleObjects(lt->cev ? 2 : 1, hs, FALSE, lt->cev ? INFINITE : RT_IOCP_SLICE_MS);
        if (w == WAIT_OBJECT_0 || w == WAIT_ABANDONED_0) {
            op->res = RT_IO_POLL_IN;
            return;
        }
        if (w == WAIT_FAILED) {
            op->err = (int)GetLastError();   /* not waitable: ERROR_INVALID_HANDLE and the like */
            return;
        }
    }
}

/* NtQueryInformationFile, FileModeInformation (ntdll; not in every SDK's
 * headers, so declared here). */
typedef struct rt_iosb { union { LONG Status; PVOID Pointer; } u; ULONG_PTR Information; } rt_iosb;
typedef LONG (WINAPI *rt_ntqif_fn)(HANDLE, rt_iosb *, PVOID, ULONG, int);
#define RT_FILE_MODE_INFORMATION 16
#define RT_FILE_SYNCHRONOUS_IO   0x30u   /* _ALERT | _NONALERT */

/* The handle's mode: 1 opened for overlapped I/O, 0 not, -1 unknown (the
 * call then reports the handle's error). */
static int handle_overlapped(intptr_t h)
{
    /* relaxed: a function's address, whole in one word; two threads may
     * both look it up and store the same value. */
    static _Atomic uintptr_t fn;
    uintptr_t f = atomic_load_explicit(&fn, memory_order_relaxed);
    if (!f) {
        f = (uintptr_t)GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQueryInformationFile");
        if (!f)
            return -1;
        atomic_store_explicit(&fn, f, memory_order_relaxed);   /* relaxed: as above */
    }
    rt_iosb io;
    ULONG mode = 0;
    if (((rt_ntqif_fn)f)((HANDLE)h, &io, &mode, sizeof mode, RT_FILE_MODE_INFORMATION) < 0)
        return -1;
    return (mode & RT_FILE_SYNCHRONOUS_IO) == 0;
}

static void run_op(rt_io_op *op, lane_thread *lt)
{
    SOCKET s = (SOCKET)op->h;
    op->err = 0;
    op->res = 0;
    switch (op->kind) {
    case RT_IO_READ:
    case RT_IO_WRITE: {
        /* A synchronous handle at its own position: no OVERLAPPED. Else
         * one with the offset: on a synchronous handle the call returns
         * when done; on an overlapped one (the fallback forced) it may be
         * pending, and the thread waits for it on its event, whose low bit
         * keeps the result off any completion port the handle has. */
        DWORD got = 0;
        OVERLAPPED *ov = &lt->ov;
        memset(ov, 0, sizeof *ov);
        bool pos = op->off < 0;
        if (!pos) {
            ov->Offset = (DWORD)((uint64_t)op->off & 0xffffffffu);
            ov->OffsetHigh = (DWORD)((uint64_t)op->off >> 32);
        } else if (handle_overlapped(op->h) == 1) {
            pos = false;   /* an overlapped handle has no position: a pipe's offset is ignored */
        }
        if (lt->ev)
            ov->hEvent = (HANDLE)((uintptr_t)lt->ev | 1u);
        DWORD n = op->n > 0x7fffffffu ? 0x7fffffffu : (DWORD)op->n;
        if (canceled(op)) {   /* before the call: nothing to end in it */
            op->canceled = true;
            return;
        }
        BOOL ok = op->kind == RT_IO_READ
                ? ReadFile((HANDLE)op->h, op->buf, n, &got, pos ? NULL : ov)
                : WriteFile((HANDLE)op->h, op->buf, n, &got, pos ? NULL : ov);
        DWORD e = ok ? 0 : GetLastError();
        if (e == ERROR_IO_PENDING) {
            /* A cancel whose CancelIoEx came before the call: end it here
             * (its flag was set before that CancelIoEx; both calls enter
             * the kernel, which orders them). */
            if (canceled(op))
                (void)CancelIoEx((HANDLE)op->h, ov);
            ok = GetOverlappedResult((HANDLE)op->h, ov, &got, TRUE);
            e = ok ? 0 : GetLastError();
        }
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
    if (op->kind == RT_IO_POLL && !is_socket(op->h)) {
        wait_object(op, lt);
        return;
    }
    short ev = op->kind == RT_IO_POLL
             ? (short)(((op->events & RT_IO_POLL_IN) ? POLLRDNORM : 0) | ((op->events & RT_IO_POLL_OUT) ? POLLWRNORM : 0))
             : (op->kind == RT_IO_SENDTO || op->kind == RT_IO_CONNECT) ? POLLWRNORM : POLLRDNORM;
    int rev = op->kind == RT_IO_CONNECT ? POLLWRNORM : wait_ready(op, lt, s, ev);
    if (rev == 0) {
        op->canceled = true;
        return;
    }
    if (rev < 0) {
        op->err = WSAGetLastError();
        return;
    }
    if (rev & POLLNVAL) {   /* not a socket (WSAPoll's only kind of handle) */
        op->err = WSAENOTSOCK;
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
    lt->wake = wake_socket();   /* under mu: lane_cancel reads it */
    lt->ev = CreateEventW(NULL, FALSE, FALSE, NULL);
    lt->cev = CreateEventW(NULL, FALSE, FALSE, NULL);
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
        run_op(op, lt);
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
            lt->wake = INVALID_SOCKET;
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
    } else if (op->rwhere == W_RUNNING) {
        lane_thread *lt = *(lane_thread **)(void *)op->rpriv;
        if (lt && (op->kind == RT_IO_READ || op->kind == RT_IO_WRITE)) {
            if (lt->self)
                CancelSynchronousIo(lt->self);
            (void)CancelIoEx((HANDLE)op->h, &lt->ov);   /* an overlapped handle's */
        } else if (lt) {
            if (lt->wake != INVALID_SOCKET)
                (void)send(lt->wake, "c", 1, 0);   /* ends its WSAPoll */
            if (lt->cev)
                SetEvent(lt->cev);                 /* ends its object wait */
        }
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
        if (r->threads->wake != INVALID_SOCKET)
            closesocket(r->threads->wake);
        if (r->threads->ev)
            CloseHandle(r->threads->ev);
        if (r->threads->cev)
            CloseHandle(r->threads->cev);
        free(r->threads);
        r->threads = n;
    }
    rt_os_cond_fini(&r->cv);
    rt_os_mutex_fini(&r->mu);
    free(r);
    WSACleanup();   /* lane_make's WSAStartup */
}


static const rt_reactor_ops lane_ops = { lane_submit, lane_cancel, lane_destroy, "lane", NULL, NULL };

static lane_reactor *lane_make(void)
{
    lane_reactor *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (rt_os_mutex_init(&r->mu) != 0) {
        free(r);
        return NULL;
    }
    if (rt_os_cond_init(&r->cv) != 0) {
        rt_os_mutex_fini(&r->mu);
        free(r);
        return NULL;
    }
    /* Winsock for the wake sockets and the socket calls (counted: the
     * program's own WSAStartup/WSACleanup are unaffected). */
    WSADATA wd;
    (void)WSAStartup(MAKEWORD(2, 2), &wd);
    r->base.ops = &lane_ops;
    return r;
}

rt_reactor *rt_reactor_iocp_lane_create(unsigned entries, int *err)
{
    (void)entries;
    lane_reactor *r = lane_make();
    if (!r) {
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    return &r->base;
}

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
    lane_reactor *lane;          /* what the port cannot take, and polls */
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
    if (op->kind == RT_IO_POLL || handle_overlapped(op->h) != 1 || !associate(op->h)) {
        lane_submit(&r->lane->base, op);
        return;
    }
    /* relaxed: read by iocp_cancel (after this submit: io.c's lock orders
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
    /* relaxed: set by this op's submit, which io.c's lock orders before. */
    if (!(atomic_load_explicit(&op->rflags, memory_order_relaxed) & RF_PORT)) {
        lane_cancel(&r->lane->base, op);
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
    lane_destroy(&r->lane->base);   /* the port and its thread stay: see the top */
    free(r);
}

static const rt_reactor_ops iocp_ops = { iocp_submit, iocp_cancel, iocp_destroy, "iocp", NULL, NULL };

rt_reactor *rt_reactor_iocp_create(unsigned entries, int *err)
{
    rt_os_once_run(&g_port.once, port_init);
    if (!g_port.port)   /* no port: the lane does everything */
        return rt_reactor_iocp_lane_create(entries, err);
    iocp_reactor *r = calloc(1, sizeof *r);
    if (!r || !(r->lane = lane_make())) {
        free(r);
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    r->base.ops = &iocp_ops;
    return &r->base;
}
