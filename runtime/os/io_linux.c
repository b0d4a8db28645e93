/*
 * os/io_linux.c - the system's side of the I/O calls beside the reactors
 * (reactor.h): errno as a dagrt error code, the handles a call may take,
 * writes that raise no SIGPIPE, reads and writes that do not wait where
 * the system refuses RWF_NOWAIT, closing a handle, a thread's priority.
 * Linux and other POSIX systems.
 *
 * SIGPIPE. A write to a pipe or a stream socket whose reader is gone
 * fails with EPIPE and, unless told not to, the kernel also sends SIGPIPE
 * to the writing thread, whose default action ends the process. No
 * runtime call may do that to the program (DAGRT_EPIPE is the answer),
 * and the runtime does not change the process's disposition (a program
 * that handles SIGPIPE itself keeps its handler, one that wants it keeps
 * it for its own writes). So:
 *  - sockets: send(2) with MSG_NOSIGNAL (sendto, and dagrt_write on a
 *    socket: IORING_OP_SENDMSG under io_uring, send on the fallback);
 *  - pipes and FIFOs, which have no such flag: rt_os_write_nosigpipe
 *    blocks SIGPIPE on the calling thread alone around the one write
 *    (pthread_sigmask), and when the write failed with EPIPE takes the
 *    SIGPIPE it raised off the thread's pending set (sigtimedwait with a
 *    zero timeout) before the old mask comes back. The kernel sends a
 *    write's SIGPIPE to the writing thread itself (thread-directed), so
 *    the signal taken is that write's own; one that was already pending
 *    before the write (the program blocked SIGPIPE and one is waiting) is
 *    left alone, and the write's merges into it (a standard signal is
 *    pending once). Under io_uring a pipe write is never handed to the
 *    kernel as IORING_OP_WRITE: the kernel would raise SIGPIPE on whichever
 *    thread entered the ring or ran its task work (often a thread busy
 *    with something else entirely), so the reactor makes the write itself
 *    with this call and uses the ring only to wait for room
 *    (reactor_uring.c, FIFO WRITES).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

int rt_os_error_code(int e)
{
    switch (e) {
    case 0: return DAGRT_OK;
    case ENOENT: return DAGRT_ENOENT;
    case EACCES: case EPERM: return DAGRT_EACCES;
    case EBADF: return DAGRT_EBADF;
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case EAGAIN: return DAGRT_EAGAIN;
    case ECONNREFUSED: return DAGRT_ECONNREFUSED;
    case ECONNRESET: return DAGRT_ECONNRESET;
    case EPIPE: return DAGRT_EPIPE;
    case ENOSPC: case EDQUOT: return DAGRT_ENOSPC;
    case EMSGSIZE: return DAGRT_EMSGSIZE;
    case EADDRINUSE: return DAGRT_EADDRINUSE;
    case EISDIR: return DAGRT_EISDIR;
    case ENOTCONN: return DAGRT_ENOTCONN;
    case EEXIST: return DAGRT_EEXIST;
    case ENOTSOCK: return DAGRT_ENOTSOCK;
    case EADDRNOTAVAIL: return DAGRT_EADDRNOTAVAIL;
    case ENETUNREACH: case ENETDOWN: return DAGRT_ENETUNREACH;
    case EHOSTUNREACH: case EHOSTDOWN: return DAGRT_EHOSTUNREACH;
    case ECONNABORTED: return DAGRT_ECONNABORTED;
    case EROFS: return DAGRT_EROFS;
    case EMFILE: case ENFILE: return DAGRT_EMFILE;
    case ENOTDIR: return DAGRT_ENOTDIR;
    case EFBIG: return DAGRT_EFBIG;
    case ETIMEDOUT: case ETIME: return DAGRT_ETIMEDOUT;
    case ECANCELED: return DAGRT_ECANCELED;
    case ENOMEM: case ENOBUFS: return DAGRT_ENOMEM;
    default: return DAGRT_EIO;
    }
}

int rt_os_handle_check(intptr_t h)
{
    return h < 0 || h > INT_MAX ? EBADF : 0;
}

int rt_os_fd_kind(intptr_t h)
{
    struct stat st;
    if (fstat((int)h, &st) != 0)
        return RT_FD_BAD;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode))
        return RT_FD_FILE;
    if (S_ISSOCK(st.st_mode))
        return RT_FD_SOCK;
    if (S_ISFIFO(st.st_mode))
        return RT_FD_FIFO;
    return RT_FD_OTHER;
}

/* RWF_NOWAIT (preadv2/pwritev2, Linux 4.14) is how the fallback reactor
 * reads and writes a pipe, socket or terminal without waiting and without
 * touching the descriptor's own O_NONBLOCK (the program's). Some systems
 * refuse it: qemu-user has no preadv2 (ENOSYS), older kernels and some
 * file types answer EOPNOTSUPP; a sandbox may filter the call. There every
 * such read used to fail with DAGRT_EIO. The first refusal switches the
 * process to the ready path below for good (a hint: both paths are
 * correct, the ready one costs a poll more); DAGRT_IO_NOWAIT=0 asks for
 * it from the start (docs/runtime.md, "I/O calls"). */
static _Atomic int nowait_state;   /* 0: not read yet; 1: try RWF_NOWAIT; 2: never */

bool rt_os_rw_nowait_usable(void)
{
    /* relaxed (all three): a hint every thread shares; the data it guards
     * is the system's, not ours, and a stale answer only costs one refused
     * call or one poll. The CAS keeps a refusal from being overwritten by
     * a thread that read the environment meanwhile. */
    int s = atomic_load_explicit(&nowait_state, memory_order_relaxed);
    if (s == 0) {
        const char *env = rt_os_getenv("DAGRT_IO_NOWAIT");
        int want = env && strcmp(env, "0") == 0 ? 2 : 1;
        s = 0;
        if (atomic_compare_exchange_strong_explicit(&nowait_state, &s, want, memory_order_relaxed,
                                                    memory_order_relaxed))
            s = want;
    }
    return s == 1;
}

void rt_os_rw_nowait_refuse(void)
{
    /* relaxed: the hint above. */
    atomic_store_explicit(&nowait_state, 2, memory_order_relaxed);
}

bool rt_os_rw_nowait_refusal(int e)
{
    return e == ENOSYS || e == EOPNOTSUPP;
}

/* Whether fd is ready for `events` now (poll with no wait): 1 ready, 0
 * not, -1 with *err (EBADF for a descriptor poll calls invalid). */
static int ready_now(int fd, short events, int *err)
{
    struct pollfd p = { fd, events, 0 };
    int k = poll(&p, 1, 0);
    if (k < 0) {
        if (errno == EINTR)
            return 0;
        *err = errno;
        return -1;
    }
    if (k > 0 && (p.revents & POLLNVAL)) {
        *err = EBADF;
        return -1;
    }
    return k > 0;
}

void rt_os_poll_once(rt_io_op *op)
{
    struct pollfd p = { (int)op->h, (short)(((op->events & RT_IO_POLL_IN) ? POLLIN : 0) |
                                            ((op->events & RT_IO_POLL_OUT) ? POLLOUT : 0)), 0 };
    int k;
    do   /* an interrupted look is not an answer: look again */
        k = poll(&p, 1, 0);
    while (k < 0 && errno == EINTR);
    op->res = 0;
    op->err = 0;
    op->canceled = false;
    if (k < 0 || (k > 0 && (p.revents & POLLNVAL))) {
        op->err = k < 0 ? errno : EBADF;
        return;
    }
    unsigned b = 0;
    if (k > 0 && (p.revents & POLLIN))
        b |= RT_IO_POLL_IN;
    if (k > 0 && (p.revents & POLLOUT))
        b |= RT_IO_POLL_OUT;
    if (k > 0 && (p.revents & (POLLERR | POLLHUP)))
        b |= RT_IO_POLL_ERR;
    op->res = (int64_t)b;
}

/* One read or write of fd (off < 0: its own position). look: without
 * waiting (a zero poll first, -1 with EAGAIN when not ready, then at most
 * what is there to read or PIPE_BUF bytes to write); else a plain
 * read(2)/write(2), which may wait. */
static int64_t rw(int fd, void *buf, size_t n, int64_t off, bool write_, bool look, int *err)
{
    ssize_t r;
    *err = 0;
    if (look && off < 0 && n > 0) {
        int k = ready_now(fd, write_ ? POLLOUT : POLLIN, err);
        if (k <= 0) {
            if (k == 0)
                *err = EAGAIN;
            return -1;
        }
        int avail = 0;
        if (write_) {
            /* Writable: a pipe has a free page at least, so PIPE_BUF bytes
             * go in without waiting (a terminal: room in its queue). Fewer
             * bytes than asked, as write(2) may answer. */
            if (n > PIPE_BUF)
                n = PIPE_BUF;
        } else if (ioctl(fd, FIONREAD, &avail) == 0 && avail > 0 && (size_t)avail < n) {
            /* Readable: data, the end, or an error, each answered at once
             * by a read of at most what is there. (Another reader of the
             * same descriptor taking it first would make this read wait:
             * one reader per pipe, as for accept, os/reactor_epoll.c.) */
            n = (size_t)avail;
        }
    }
    do
        r = write_ ? (off < 0 ? write(fd, buf, n) : pwrite(fd, buf, n, (off_t)off))
                   : (off < 0 ? read(fd, buf, n) : pread(fd, buf, n, (off_t)off));
    while (r < 0 && errno == EINTR);
    if (r < 0)
        *err = errno;
    return r < 0 ? -1 : (int64_t)r;
}

int64_t rt_os_read_ready(intptr_t h, void *buf, size_t n, int64_t off, int *err)
{
    return rw((int)h, buf, n, off, false, true, err);
}

int64_t rt_os_write_ready(intptr_t h, const void *buf, size_t n, int64_t off, int *err)
{
    return rw((int)h, (void *)(uintptr_t)buf, n, off, true, true, err);
}

int64_t rt_os_write_nosigpipe(intptr_t h, const void *buf, size_t n, int64_t off, bool nowait, int *err)
{
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    /* This thread only: the process's disposition and the other threads'
     * masks are untouched. */
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    ssize_t r = -1;
    int e = 0;
    if (nowait && rt_os_rw_nowait_usable()) {
        struct iovec v = { (void *)(uintptr_t)buf, n };
        do
            r = pwritev2((int)h, &v, 1, off < 0 ? -1 : off, RWF_NOWAIT);
        while (r < 0 && errno == EINTR);
        e = r < 0 ? errno : 0;
        if (r < 0 && rt_os_rw_nowait_refusal(e))
            rt_os_rw_nowait_refuse();   /* and the ready path below, now */
        else
            nowait = false;             /* answered */
    }
    if (nowait) {
        r = (ssize_t)rt_os_write_ready(h, buf, n, off, &e);
    } else if (r < 0 && e == 0) {
        /* Waiting allowed (the blocking lane): plain write(2)/pwrite(2). */
        r = (ssize_t)rw((int)h, (void *)(uintptr_t)buf, n, off, true, false, &e);
    }
    if (e == EPIPE && !was_pending) {
        /* The write's own SIGPIPE, pending on this thread while blocked. */
        const struct timespec zero = { 0, 0 };
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    *err = e;
    return r < 0 ? -1 : (int64_t)r;
}

int rt_os_handle_close(intptr_t h)
{
    /* Linux releases the descriptor even when close reports EINTR: never
     * retry (another thread may have been handed the number). */
    if (close((int)h) == 0)
        return 0;
    return errno == EINTR ? 0 : errno;
}

int rt_os_thread_priority_raise(void)
{
#if defined(__linux__)
    /* On Linux a nice value belongs to the thread: PRIO_PROCESS with the
     * thread's own id changes that thread alone, never the process. An
     * unprivileged thread without RLIMIT_NICE room gets EACCES. */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, (id_t)tid);
    if (cur == -1 && errno != 0)
        return errno;
    if (setpriority(PRIO_PROCESS, (id_t)tid, cur - 5 < -20 ? -20 : cur - 5) != 0)
        return errno;
    return 0;
#else
    return ENOSYS;   /* elsewhere a nice value is the process's: refused */
#endif
}
