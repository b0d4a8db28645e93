/*
 * os/reactor_lane_win32.c - the blocking lane on Windows: the reactor for
 * what the completion port cannot take (design/io.md). Its own room, apart
 * from the port (reactor_iocp.c): the lane is a whole reactor by itself
 * (DAGRT_IO=fallback), and the port hands it, through
 * rt_reactor_iocp_lane_create and its ops, every handle that is not
 * overlapped and every poll; what the two share is in reactor_win32.h.
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
 * event, set by a cancel after the flag in the same way. A poll whose
 * deadline had passed (rt_io_op.once) is the exception: it looks once on
 * the submitting thread (look_once).
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

/* A lane thread without a wake socket (none could be made) looks at its
 * op's cancel flag this often. */
#define RT_IOCP_SLICE_MS 20

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
int rt_win_handle_overlapped(intptr_t h)
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

/* A poll's events as WSAPoll takes them, and WSAPoll's answer as the
 * ready set (RT_IO_POLL_*). */
static short poll_events(const rt_io_op *op)
{
    return (short)(((op->events & RT_IO_POLL_IN) ? POLLRDNORM : 0) |
                   ((op->events & RT_IO_POLL_OUT) ? POLLWRNORM : 0));
}

static unsigned poll_bits(int rev)
{
    unsigned b = 0;
    if (rev & POLLRDNORM)
        b |= RT_IO_POLL_IN;
    if (rev & POLLWRNORM)
        b |= RT_IO_POLL_OUT;
    if (rev & (POLLERR | POLLHUP | POLLNVAL))
        b |= RT_IO_POLL_ERR;
    return b;
}

/* A once poll (rt_io_op.once: its deadline had passed): one look on the
 * submitting thread, never queued: WSAPoll with no wait for a socket, a
 * wait of 0 ms on any other handle (which takes what a wait takes, as
 * wait_object does). Queued for a lane thread instead, the op raced the
 * cancel its deadline sends at once: the cancel often took it off the
 * queue, or ended its WSAPoll, before it looked (DAGRT_ETIMEDOUT for a
 * ready handle), and now and then lost. */
static void look_once(rt_io_op *op)
{
    op->res = 0;
    op->err = 0;
    op->canceled = false;
    if (!is_socket(op->h)) {
        DWORD w = WaitForSingleObject((HANDLE)op->h, 0);
        if (w == WAIT_OBJECT_0 || w == WAIT_ABANDONED_0)
            op->res = RT_IO_POLL_IN;
        else if (w == WAIT_FAILED)
            op->err = (int)GetLastError();   /* not waitable, as wait_object reports it */
        return;
    }
    WSAPOLLFD p = { (SOCKET)op->h, poll_events(op), 0 };
    int n = WSAPoll(&p, 1, 0);
    if (n < 0)
        op->err = WSAGetLastError();
    else if (n > 0 && (p.revents & POLLNVAL))
        op->err = WSAENOTSOCK;
    else if (n > 0)
        op->res = poll_bits(p.revents);
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
        } else if (rt_win_handle_overlapped(op->h) == 1) {
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
             ? poll_events(op)
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
    case RT_IO_POLL:
        op->res = poll_bits(rev);
        return;
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
    if (op->once) {   /* answered here, before submit returns (reactor.h) */
        op->rwhere = W_NONE;
        look_once(op);
        op->done(op);
        return;
    }
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
