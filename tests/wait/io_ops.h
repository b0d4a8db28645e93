/* io_ops.h - what the I/O calls' scenarios share between their one
 * portable source (io_ops.c: the scenarios that are the same on every
 * system) and the two system sides (io_ops_posix.c, io_ops_win32.c: the
 * scenarios only one system has, and the few helpers whose calls differ).
 * The shim is only what really differs: the socket type and its calls, a
 * short sleep, the temporary files, the reactor's name, thread priorities. */
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
#else
typedef int io_sock;
#define IO_SOCK_BAD        (-1)
#define IO_SOCK_CLOEXEC    SOCK_CLOEXEC
#define IO_SHUT_WR         SHUT_WR
#define IO_OS_ECONNREFUSED ECONNREFUSED
#define io_sock_close      close
typedef int io_file;
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
