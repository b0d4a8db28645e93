/*
 * os/io_linux.c - the system's side of the I/O calls beside the reactors
 * (reactor.h): errno as a dagrt error code, closing a handle, a thread's
 * priority. Linux and other POSIX systems.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "dagrt.h"
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
