/* io_ops.h - the shim between the I/O calls' scenarios, written once
 * (io_ops.c, io_deadline.c, io_trace.c: every scenario that is the same on
 * every system), and the two system sides (io_ops_posix.c, io_ops_win32.c:
 * the shim's two halves, and the scenarios only one system has). The shim
 * is only what really differs: the socket type and its calls, a short
 * sleep, the temporary files and what a file handle keeps, a handle to wait
 * on and make ready (a pipe; on Windows a datagram socket), a pipe nothing
 * writes to, the system's codes, the reactor's name, thread priorities. */
#ifndef IO_OPS_H
#define IO_OPS_H

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#else
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dagrt.h"
#include "scenario.h"

/* The suite's list declares every scenario (wait_scenarios.c holds the table). */
#define SCENARIO(group, name, secs, flags) int name(void);
#include "wait_list.h"
#undef SCENARIO

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

/* ------------------------------------------------------ the system */

#if defined(_WIN32)
typedef SOCKET io_sock;
#define IO_SOCK_BAD        INVALID_SOCKET
#define IO_SOCK_CLOEXEC    0
#define IO_SHUT_WR         SD_SEND
#define IO_OS_ECONNREFUSED WSAECONNREFUSED
#define io_sock_close      closesocket
typedef HANDLE io_file;
#define IO_FILE_BAD        INVALID_HANDLE_VALUE
/* A handle value no call has open, and the system's code for it. */
#define IO_NOT_OPEN        ((dagrt_handle)0x7ff0)
#define IO_OS_EBADF        ERROR_INVALID_HANDLE
/* Reading a directory: an error, whose code Windows leaves open (0: any). */
#define IO_DIR_READ_ERR    0
#define IO_OS_DIR_READ     0
#else
typedef int io_sock;
#define IO_SOCK_BAD        (-1)
#define IO_SOCK_CLOEXEC    SOCK_CLOEXEC
#define IO_SHUT_WR         SHUT_WR
#define IO_OS_ECONNREFUSED ECONNREFUSED
#define io_sock_close      close
typedef int io_file;
#define IO_FILE_BAD        (-1)
#define IO_NOT_OPEN        ((dagrt_handle)(1 << 20))
#define IO_OS_EBADF        EBADF
#define IO_DIR_READ_ERR    DAGRT_EISDIR
#define IO_OS_DIR_READ     EISDIR
#endif

/* A socket or file as the runtime's calls take it. */
#define H(x) ((dagrt_handle)(intptr_t)(x))

/* The sockets' library is started (Winsock; nothing on POSIX). */
void io_net_up(void);
/* The system's reason for the last failed call, as text. */
const char *io_os_why(void);
/* Sleeps about us microseconds (at least a yield). */
void io_nap_us(unsigned us);

/* The reactor the runtime ended up on: the fallback when it was forced. */
int check_reactor(dagrt *rt, bool fallback);

/* A fresh temporary directory (tmpdir), and its removal with one file in it. */
int make_tmpdir(void);
void rm_tmpdir(const char *file);
/* A new file `name` in tmpdir holding data[0..n), opened for the reactor
 * (on Windows: overlapped, so that the port takes it); bad: *ok false. */
io_file tmp_file_with(const char *name, const void *data, size_t n, bool *ok);
void io_file_close(io_file f);
/* tmpdir's path for name (a static buffer, valid until the next call). */
const char *tmp_path(const char *name);

/* A new file `name` in tmpdir, empty, read-write, for the reactor (on
 * Windows: overlapped); IO_FILE_BAD on failure. tmpdir itself as a handle
 * (a directory). Whether opening a file tmpdir lacks fails as the system
 * says it must (the runtime opens nothing: this is the system's call). */
io_file io_file_create(const char *name);
io_file io_dir_open(void);
bool io_open_missing_fails(void);
/* What a file handle keeps of its own, checked from a fiber after the
 * file `name` (fd) was written with w[0..10000): POSIX, the descriptor's
 * position; Windows, an overlapped handle keeps none (offset -1 refused)
 * and a second, synchronous handle of the same file does. Violations. */
int io_file_positions(dagrt *rt, io_file fd, const char *name, const unsigned char *w);

/* A handle to wait on that the scenario then makes ready: a pipe (POSIX;
 * rd its read end), a datagram socket on 127.0.0.1 and a sender (Windows,
 * where the reactor takes no anonymous pipe's readiness). */
typedef struct io_pair {
#if defined(_WIN32)
    io_sock rd, tx;
    struct sockaddr_in a;
#else
    int rd, wr;
#endif
} io_pair;
/* The I/O call io_pair_get makes (for the counts of dagrt_io_stats). */
#if defined(_WIN32)
#define IO_PAIR_KIND DAGRT_IO_RECVFROM
#else
#define IO_PAIR_KIND DAGRT_IO_READ
#endif
int io_pair_open(io_pair *p);                       /* 0, or -1 */
void io_pair_close(io_pair *p);
dagrt_handle io_pair_rd(const io_pair *p);          /* to wait on and read */
dagrt_handle io_pair_writable(const io_pair *p);    /* a handle of the pair writable at once */
bool io_pair_put(io_pair *p, char c);               /* c readable at rd, sent from outside the runtime */
/* One byte of rd through the runtime's call: 1 (and *c), or its error. */
int64_t io_pair_get(dagrt *rt, io_pair *p, char *c, dagrt_cancel *scope);

/* A pipe that nothing writes to, its read end for the reactor (Windows: a
 * named pipe, its read end overlapped when k is even); 0, or -1. */
int io_pipe_open(io_file *rd, io_file *wr, int k);
void io_pipe_close(io_file rd, io_file wr);

/* The calling thread's priority (Linux: its nice value); how many threads
 * of this process are at the hot workers' raised priority over base, and
 * at prio. */
int thread_priority(void);
int threads_raised(int base);
int threads_at(int prio);

/* ------------------------------------------------------ shared helpers */

unsigned char pattern(uint64_t off);
dagrt *make_rt(bool fallback, int workers);
io_sock io_socket(int type);                 /* SOCK_DGRAM or SOCK_STREAM, unbound */
io_sock udp_socket(struct sockaddr_in *a);   /* bound to 127.0.0.1, port in *a */
io_sock tcp_listener(struct sockaddr_in *a);

/* A fiber parked in a call that nothing completes until it is ended from
 * outside; result stays 1 while it is parked. */
typedef struct park_job {
    dagrt *rt;
    dagrt_handle h;
    _Atomic int started;
    int64_t result;
} park_job;

void park_recv(void *arg);
void park_read(void *arg);
/* Until the n jobs started, then a moment to reach the kernel: the ends
 * the scenarios then make must work whether or not they got there (that
 * race is the point). */
void wait_parked(park_job *j, int n);

#endif
