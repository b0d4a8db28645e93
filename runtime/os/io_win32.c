/*
 * os/io_win32.c - the system's side of the I/O calls beside the reactor
 * (reactor.h) on Windows: GetLastError / WSAGetLastError values as dagrt
 * error codes, closing a handle or socket, a thread's priority.
 */
#include <winsock2.h>
#include <windows.h>

#include "dagrt.h"
#include "reactor.h"

int rt_os_error_code(int e)
{
    switch (e) {
    case 0: return DAGRT_OK;
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: return DAGRT_ENOENT;
    case ERROR_ACCESS_DENIED: case WSAEACCES: return DAGRT_EACCES;
    case ERROR_INVALID_HANDLE: case WSAEBADF: return DAGRT_EBADF;
    case WSAEWOULDBLOCK: case ERROR_IO_PENDING: return DAGRT_EAGAIN;
    /* The completion port's results come as Win32 codes for files and as
     * WSA codes for sockets; a socket's through GetOverlappedResult (not
     * used here, but a program's own) as the ERROR_ ones: both spellings. */
    case WSAECONNREFUSED: case ERROR_CONNECTION_REFUSED: return DAGRT_ECONNREFUSED;
    case WSAECONNRESET: case ERROR_NETNAME_DELETED: case ERROR_PORT_UNREACHABLE: return DAGRT_ECONNRESET;
    case ERROR_BROKEN_PIPE: case ERROR_NO_DATA: case ERROR_PIPE_NOT_CONNECTED: case WSAESHUTDOWN: return DAGRT_EPIPE;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return DAGRT_ENOSPC;
    case WSAEMSGSIZE: case ERROR_MORE_DATA: return DAGRT_EMSGSIZE;
    case WSAEADDRINUSE: return DAGRT_EADDRINUSE;
    case WSAENOTCONN: return DAGRT_ENOTCONN;
    case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS: return DAGRT_EEXIST;
    case WSAENOTSOCK: return DAGRT_ENOTSOCK;
    case WSAEADDRNOTAVAIL: return DAGRT_EADDRNOTAVAIL;
    case WSAENETUNREACH: case WSAENETDOWN: case ERROR_NETWORK_UNREACHABLE: return DAGRT_ENETUNREACH;
    case WSAEHOSTUNREACH: case ERROR_HOST_UNREACHABLE: return DAGRT_EHOSTUNREACH;
    case WSAECONNABORTED: case ERROR_CONNECTION_ABORTED: case ERROR_REQUEST_ABORTED: return DAGRT_ECONNABORTED;
    case ERROR_WRITE_PROTECT: return DAGRT_EROFS;
    case ERROR_TOO_MANY_OPEN_FILES: case WSAEMFILE: return DAGRT_EMFILE;
    case ERROR_DIRECTORY: return DAGRT_ENOTDIR;
    case WSAETIMEDOUT: case ERROR_TIMEOUT: case ERROR_SEM_TIMEOUT: return DAGRT_ETIMEDOUT;
    case ERROR_OPERATION_ABORTED: case WSAEINTR: return DAGRT_ECANCELED;
    case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY: case WSAENOBUFS: return DAGRT_ENOMEM;
    default: return DAGRT_EIO;
    }
}

int rt_os_handle_check(intptr_t h)
{
    /* A HANDLE or SOCKET is pointer-sized and passed whole (no cast cuts
     * it): the system itself says which are open. */
    (void)h;
    return 0;
}

int rt_os_handle_close(intptr_t h)
{
    /* A socket first (closesocket refuses what is not one), else a HANDLE. */
    if (closesocket((SOCKET)h) == 0)
        return 0;
    if (WSAGetLastError() != WSAENOTSOCK && WSAGetLastError() != WSANOTINITIALISED)
        return WSAGetLastError();
    return CloseHandle((HANDLE)h) ? 0 : (int)GetLastError();
}

int rt_os_thread_priority_raise(void)
{
    /* The calling thread only (the pseudo-handle names it). */
    return SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_ABOVE_NORMAL) ? 0 : (int)GetLastError();
}
