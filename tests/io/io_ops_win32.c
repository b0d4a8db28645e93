/* io_ops_win32.c - the I/O calls' scenarios on Windows (io_ops.c is their
 * POSIX side): real files in a temporary directory and real sockets on
 * 127.0.0.1, under the same names. Each runs twice (io_list.h): on the
 * completion port ("iocp") and with the blocking lane forced
 * (dagrt_config.io_fallback: "lane"). Files are opened for overlapped I/O
 * (FILE_FLAG_OVERLAPPED) so that the port takes them; a few handles are
 * opened without it on purpose, which the port must hand to the lane. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <tlhelp32.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dagrt.h"
#include "scenario.h"

#define SCENARIO(group, name, secs, flags) int name(void);
#include "io_list.h"
#undef SCENARIO

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

static void net_up(void)
{
    static int up;
    if (!up) {
        WSADATA wd;
        up = WSAStartup(MAKEWORD(2, 2), &wd) == 0;
    }
}

static dagrt *make_rt(bool fallback, int workers)
{
    net_up();
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.io_fallback = fallback;
    cfg.io_ring_entries = 64;   /* small, so the pool grows under load */
    return dagrt_create(&cfg);
}

/* The reactor the runtime ended up on: the lane when it was forced, else
 * the completion port. */
static int check_reactor(dagrt *rt, bool fallback)
{
    const char *env = getenv("DAGRT_IO");
    if (env && strcmp(env, "fallback") == 0)
        fallback = true;   /* forced from outside: scripts/windows.sh's second pass */
    dagrt_io_stats st;
    if (dagrt_get_io_stats(rt, &st) != 0)
        FAIL("dagrt_get_io_stats failed");
    if (strcmp(st.reactor, fallback ? "lane" : "iocp") != 0)
        FAIL("expected the reactor %s, got %s", fallback ? "lane" : "iocp", st.reactor);
    return 0;
}

static char tmpdir[MAX_PATH];

static int make_tmpdir(void)
{
    static unsigned seq;
    char base[MAX_PATH];
    if (!GetTempPathA(sizeof base, base))
        return -1;
    snprintf(tmpdir, sizeof tmpdir, "%sdagrt-io-%lu-%u", base, (unsigned long)GetCurrentProcessId(), seq++);
    return CreateDirectoryA(tmpdir, NULL) ? 0 : -1;
}

static void rm_tmpdir(const char *file)
{
    char p[MAX_PATH + 64];
    if (file) {
        snprintf(p, sizeof p, "%s\\%s", tmpdir, file);
        DeleteFileA(p);
    }
    RemoveDirectoryA(tmpdir);
}

static HANDLE open_tmp(const char *name, DWORD disp, DWORD flags)
{
    char p[MAX_PATH + 64];
    snprintf(p, sizeof p, "%s\\%s", tmpdir, name);
    return CreateFileA(p, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       NULL, disp, FILE_ATTRIBUTE_NORMAL | flags, NULL);
}

static unsigned char pattern(uint64_t off) { return (unsigned char)((off * 131u + (off >> 9)) & 0xff); }

static dagrt_handle H(HANDLE h) { return (dagrt_handle)(intptr_t)h; }

/* ------------------------------------------------ files, one fiber */

typedef struct file_job {
    dagrt *rt;
    HANDLE fd;      /* overlapped: the port */
    HANDLE sync;    /* the same file, not overlapped: the lane */
    HANDLE dir;
    int bad;
} file_job;

static void file_fiber(void *arg)
{
    file_job *j = arg;
    dagrt *rt = j->rt;
    int bad = 0;
    unsigned char w[10000], r[12000];
    for (size_t i = 0; i < sizeof w; i++)
        w[i] = pattern(i);
    /* write, then read back at offsets */
    EXPECT(dagrt_write(rt, H(j->fd), w, sizeof w, 0, NULL) == (int64_t)sizeof w);
    memset(r, 0, sizeof r);
    EXPECT(dagrt_read(rt, H(j->fd), r, 4096, 0, NULL) == 4096);
    EXPECT(memcmp(r, w, 4096) == 0);
    /* a short read at the end of the file, then 0 past it */
    EXPECT(dagrt_read(rt, H(j->fd), r, 4096, 8192, NULL) == 10000 - 8192);
    EXPECT(memcmp(r, w + 8192, 10000 - 8192) == 0);
    EXPECT(dagrt_read(rt, H(j->fd), r, 4096, 10000, NULL) == 0);
    EXPECT(dagrt_read(rt, H(j->fd), r, 4096, 20000, NULL) == 0);
    /* An overlapped file keeps no position: offset < 0 is refused with
     * the system's reason (invalid parameter); on the lane it is the
     * handle's position, which a synchronous handle has. */
    memset(r, 0, 64);
    int64_t e = dagrt_read(rt, H(j->fd), r, 16, -1, NULL);
    EXPECT(e == DAGRT_EIO || e == 16);
    if (e < 0)
        EXPECT(dagrt_last_os_error() == ERROR_INVALID_PARAMETER);
    /* the synchronous handle (the lane on either path): at offsets and at
     * its own position, which advances */
    EXPECT(dagrt_read(rt, H(j->sync), r, 100, 500, NULL) == 100);
    EXPECT(memcmp(r, w + 500, 100) == 0);
    LARGE_INTEGER to = { .QuadPart = 100 }, at;
    EXPECT(SetFilePointerEx(j->sync, to, NULL, FILE_BEGIN));
    EXPECT(dagrt_read(rt, H(j->sync), r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 100, 50) == 0);
    EXPECT(dagrt_read(rt, H(j->sync), r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 150, 50) == 0);
    to.QuadPart = 0;
    EXPECT(SetFilePointerEx(j->sync, to, &at, FILE_CURRENT) && at.QuadPart == 200);
    EXPECT(dagrt_read(rt, H(j->sync), r, 4096, 10000, NULL) == 0);
    /* a directory: an error, with the system's reason kept */
    e = dagrt_read(rt, H(j->dir), r, 16, 0, NULL);
    EXPECT(e < 0 && dagrt_last_os_error() != 0);
    /* a handle that is not open: EBADF, with the system's reason kept */
    e = dagrt_read(rt, (dagrt_handle)0x7ff0, r, 16, 0, NULL);
    EXPECT(e == DAGRT_EBADF);
    EXPECT(dagrt_last_os_error() == ERROR_INVALID_HANDLE);
    /* a cancelled scope: no I/O at all */
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    dagrt_cancel_request(&c);
    EXPECT(dagrt_read(rt, H(j->fd), r, 16, 0, &c) == DAGRT_ECANCELED);
    /* bad arguments */
    EXPECT(dagrt_read(rt, H(j->fd), NULL, 16, 0, NULL) == DAGRT_EINVAL);
    EXPECT(dagrt_read(NULL, H(j->fd), r, 16, 0, NULL) == DAGRT_EINVAL);
    j->bad = bad;
}

static int file_basic(bool fallback)
{
    if (make_tmpdir() != 0)
        FAIL("temporary directory: %lu", GetLastError());
    int bad = 0;
    file_job j = { 0 };
    j.fd = open_tmp("a", CREATE_ALWAYS, FILE_FLAG_OVERLAPPED);
    j.sync = open_tmp("a", OPEN_EXISTING, 0);
    j.dir = CreateFileA(tmpdir, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                        OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (j.fd == INVALID_HANDLE_VALUE || j.sync == INVALID_HANDLE_VALUE || j.dir == INVALID_HANDLE_VALUE)
        FAIL("open: %lu", GetLastError());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    j.rt = rt;
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, file_fiber, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += j.bad;
    bad += check_reactor(rt, fallback);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_WRITE].ops >= 1 && st.kind[DAGRT_IO_WRITE].bytes >= 10000);
    EXPECT(st.kind[DAGRT_IO_READ].errors >= 2);
    EXPECT(st.kind[DAGRT_IO_READ].cancels >= 1);
    /* A missing file is the system's CreateFile (the runtime opens nothing). */
    EXPECT(open_tmp("missing", OPEN_EXISTING, FILE_FLAG_OVERLAPPED) == INVALID_HANDLE_VALUE &&
           GetLastError() == ERROR_FILE_NOT_FOUND);
    dagrt_destroy(rt);
    CloseHandle(j.fd);
    CloseHandle(j.sync);
    CloseHandle(j.dir);
    rm_tmpdir("a");
    return bad;
}

int io_file_basic(void) { return file_basic(false); }
int io_file_basic_fb(void) { return file_basic(true); }

/* ---------------------------------- files: 10,000 ops from 64 fibers */

#define MANY_FIBERS 64
#define MANY_OPS    10000
#define MANY_BLOCK  512
#define MANY_BLOCKS 1024     /* the file: 512 KiB */

typedef struct many_job {
    dagrt *rt;
    HANDLE fd;
    int id;
    _Atomic int *bad;
} many_job;

static void many_fiber(void *arg)
{
    many_job *j = arg;
    unsigned char buf[MANY_BLOCK];
    uint64_t x = (uint64_t)j->id * 2654435761u + 1;
    int ops = MANY_OPS / MANY_FIBERS + (j->id < MANY_OPS % MANY_FIBERS);
    for (int i = 0; i < ops; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint64_t off = ((x >> 33) % MANY_BLOCKS) * MANY_BLOCK;
        int64_t r = dagrt_read(j->rt, H(j->fd), buf, MANY_BLOCK, (int64_t)off, NULL);
        if (r != MANY_BLOCK) {
            fprintf(stderr, "many_fiber %d: read %lld at %llu\n", j->id, (long long)r, (unsigned long long)off);
            atomic_fetch_add(j->bad, 1);
            return;
        }
        for (int k = 0; k < MANY_BLOCK; k++)
            if (buf[k] != pattern(off + (uint64_t)k)) {
                fprintf(stderr, "many_fiber %d: byte %llu differs\n", j->id, (unsigned long long)(off + (uint64_t)k));
                atomic_fetch_add(j->bad, 1);
                return;
            }
    }
}

static int file_many(bool fallback)
{
    if (make_tmpdir() != 0)
        FAIL("temporary directory: %lu", GetLastError());
    HANDLE w = open_tmp("m", CREATE_ALWAYS, 0);
    if (w == INVALID_HANDLE_VALUE)
        FAIL("open: %lu", GetLastError());
    static unsigned char all[MANY_BLOCK * MANY_BLOCKS];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = pattern(i);
    DWORD wrote = 0;
    if (!WriteFile(w, all, sizeof all, &wrote, NULL) || wrote != sizeof all)
        FAIL("write: %lu", GetLastError());
    CloseHandle(w);
    HANDLE fd = open_tmp("m", OPEN_EXISTING, FILE_FLAG_OVERLAPPED);
    if (fd == INVALID_HANDLE_VALUE)
        FAIL("open: %lu", GetLastError());
    int bad = 0;
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    _Atomic int nbad = 0;
    static many_job jobs[MANY_FIBERS];
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < MANY_FIBERS; i++) {
        jobs[i] = (many_job){ rt, fd, i, &nbad };
        EXPECT(dagrt_spawn_ex(rt, &g, many_fiber, &jobs[i], DAGRT_SPAWN_FIBER) == 0);
    }
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += atomic_load(&nbad);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_READ].ops == MANY_OPS);
    EXPECT(st.kind[DAGRT_IO_READ].bytes == (uint64_t)MANY_OPS * MANY_BLOCK);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    CloseHandle(fd);
    rm_tmpdir("m");
    return bad;
}

int io_file_many(void) { return file_many(false); }
int io_file_many_fb(void) { return file_many(true); }

/* ------------------------------------------------------ sockets */

static SOCKET udp_socket(struct sockaddr_in *a)
{
    net_up();
    SOCKET s = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = sizeof *a;
    if (s == INVALID_SOCKET || bind(s, (struct sockaddr *)a, sizeof *a) != 0 ||
        getsockname(s, (struct sockaddr *)a, &l) != 0)
        return INVALID_SOCKET;
    return s;
}

typedef struct udp_job {
    dagrt *rt;
    SOCKET s;
    struct sockaddr_in peer;
    int rounds;
    int bad;
} udp_job;

static void udp_echo(void *arg)
{
    udp_job *j = arg;
    int bad = 0;
    for (int i = 0; i < j->rounds; i++) {
        char buf[64];
        struct sockaddr_in from;
        size_t fl = sizeof from;
        int64_t n = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, buf, sizeof buf, (struct sockaddr *)&from, &fl, NULL);
        EXPECT(n > 0);
        EXPECT(fl == sizeof from && from.sin_port == j->peer.sin_port);
        if (n <= 0)
            break;
        EXPECT(dagrt_sendto(j->rt, (dagrt_handle)j->s, buf, (size_t)n, (struct sockaddr *)&from, fl, NULL) == n);
    }
    j->bad = bad;
}

static void udp_ping(void *arg)
{
    udp_job *j = arg;
    int bad = 0;
    for (int i = 0; i < j->rounds; i++) {
        char out[32], in[64];
        int len = snprintf(out, sizeof out, "ping %d", i);
        EXPECT(dagrt_sendto(j->rt, (dagrt_handle)j->s, out, (size_t)len, (struct sockaddr *)&j->peer,
                            sizeof j->peer, NULL) == len);
        int64_t n = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, in, sizeof in, NULL, NULL, NULL);
        EXPECT(n == len && memcmp(in, out, (size_t)len) == 0);
        if (n != len)
            break;
    }
    j->bad = bad;
}

static int udp(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a, b;
    SOCKET sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa == INVALID_SOCKET || sb == INVALID_SOCKET)
        FAIL("udp sockets: %d", WSAGetLastError());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    udp_job echo = { rt, sa, b, 200, 0 }, ping = { rt, sb, a, 200, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, udp_echo, &echo, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn_ex(rt, &g, udp_ping, &ping, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += echo.bad + ping.bad;
    bad += check_reactor(rt, fallback);
    /* a datagram larger than the socket can send */
    static char huge[70000];
    EXPECT(dagrt_sendto(rt, (dagrt_handle)sb, huge, sizeof huge, (struct sockaddr *)&a, sizeof a, NULL) == DAGRT_EMSGSIZE);
    EXPECT(dagrt_last_os_error() == WSAEMSGSIZE);
    /* a datagram larger than the receive buffer: EMSGSIZE (Linux returns
     * the truncated bytes), the first bytes in the buffer */
    EXPECT(sendto(sb, "0123456789", 10, 0, (struct sockaddr *)&a, sizeof a) == 10);
    char small[4] = { 0 };
    EXPECT(dagrt_recvfrom(rt, (dagrt_handle)sa, small, sizeof small, NULL, NULL, NULL) == DAGRT_EMSGSIZE);
    EXPECT(dagrt_last_os_error() == WSAEMSGSIZE);
    EXPECT(memcmp(small, "0123", 4) == 0);
    dagrt_destroy(rt);
    closesocket(sa);
    closesocket(sb);
    return bad;
}

int io_udp(void) { return udp(false); }
int io_udp_fb(void) { return udp(true); }

typedef struct tcp_job {
    dagrt *rt;
    SOCKET ls;
    struct sockaddr_in addr;
    int bad_server, bad_client;
} tcp_job;

static void tcp_server(void *arg)
{
    tcp_job *j = arg;
    int bad = 0;
    dagrt_handle c = -1;
    EXPECT(dagrt_accept(j->rt, (dagrt_handle)j->ls, &c, NULL) == 0);
    if (c != -1) {
        char buf[256];
        for (;;) {
            int64_t n = dagrt_read(j->rt, c, buf, sizeof buf, -1, NULL);
            if (n <= 0) {
                EXPECT(n == 0);
                break;
            }
            EXPECT(dagrt_write(j->rt, c, buf, (size_t)n, -1, NULL) == n);
        }
        EXPECT(dagrt_close(j->rt, c) == 0);
    }
    j->bad_server = bad;
}

static void tcp_client(void *arg)
{
    tcp_job *j = arg;
    int bad = 0;
    SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    EXPECT(s != INVALID_SOCKET);
    EXPECT(dagrt_connect(j->rt, (dagrt_handle)s, (struct sockaddr *)&j->addr, sizeof j->addr, NULL) == 0);
    for (int i = 0; i < 50; i++) {
        char out[64], in[64];
        int len = snprintf(out, sizeof out, "line %d of the echo", i);
        EXPECT(dagrt_sendto(j->rt, (dagrt_handle)s, out, (size_t)len, NULL, 0, NULL) == len);
        int got = 0;
        while (got < len) {
            int64_t n = dagrt_recvfrom(j->rt, (dagrt_handle)s, in + got, sizeof in - (size_t)got, NULL, NULL, NULL);
            if (n <= 0)
                break;
            got += (int)n;
        }
        EXPECT(got == len && memcmp(in, out, (size_t)len) == 0);
    }
    shutdown(s, SD_SEND);
    char x;
    EXPECT(dagrt_read(j->rt, (dagrt_handle)s, &x, 1, -1, NULL) == 0);   /* the server closed */
    EXPECT(dagrt_close(j->rt, (dagrt_handle)s) == 0);
    j->bad_client = bad;
}

static SOCKET tcp_listener(struct sockaddr_in *a)
{
    net_up();
    SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int l = sizeof *a;
    if (s == INVALID_SOCKET || bind(s, (struct sockaddr *)a, sizeof *a) != 0 || listen(s, 8) != 0 ||
        getsockname(s, (struct sockaddr *)a, &l) != 0)
        return INVALID_SOCKET;
    return s;
}

static int tcp(bool fallback)
{
    int bad = 0;
    tcp_job j = { 0 };
    j.ls = tcp_listener(&j.addr);
    if (j.ls == INVALID_SOCKET)
        FAIL("listener: %d", WSAGetLastError());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    j.rt = rt;
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, tcp_server, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn_ex(rt, &g, tcp_client, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += j.bad_server + j.bad_client;
    /* Connection refused: a port that was just free (the main thread). */
    struct sockaddr_in freea;
    SOCKET tmp = tcp_listener(&freea);
    closesocket(tmp);
    SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    int r = dagrt_connect(rt, (dagrt_handle)s, (struct sockaddr *)&freea, sizeof freea, NULL);
    EXPECT(r == DAGRT_ECONNREFUSED);
    EXPECT(dagrt_last_os_error() == WSAECONNREFUSED);
    if (r != DAGRT_ECONNREFUSED)
        fprintf(stderr, "tcp: refused connect gave %d (os %d)\n", r, dagrt_last_os_error());
    closesocket(s);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(j.ls);
    return bad;
}

int io_tcp(void) { return tcp(false); }
int io_tcp_fb(void) { return tcp(true); }

/* ----------------------------------- parked calls ended from outside */

typedef struct park_job {
    dagrt *rt;
    dagrt_handle h;
    _Atomic int started;
    int64_t result;
} park_job;

static void park_recv(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, j->h, buf, sizeof buf, NULL, NULL, NULL);
}

static void park_read(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_read(j->rt, j->h, buf, sizeof buf, -1, NULL);
}

static void wait_parked(park_job *j, int n)
{
    for (int i = 0; i < n; i++)
        while (!atomic_load(&j[i].started))
            Sleep(1);
    Sleep(20);
}

/* A socket closed (dagrt_close) under a parked receive: EBADF. */
static int close_parked(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    SOCKET s = udp_socket(&a);
    if (s == INVALID_SOCKET)
        FAIL("udp socket");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    park_job j = { rt, (dagrt_handle)s, 0, 1 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, park_recv, &j, DAGRT_SPAWN_FIBER) == 0);
    wait_parked(&j, 1);
    EXPECT(dagrt_close(rt, (dagrt_handle)s) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.result == DAGRT_EBADF);
    if (j.result != DAGRT_EBADF)
        fprintf(stderr, "close_parked: got %lld\n", (long long)j.result);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    return bad;
}

int io_close_parked(void) { return close_parked(false); }
int io_close_parked_fb(void) { return close_parked(true); }

/* A named pipe pair; the reading end overlapped or not. */
static bool make_pipe(HANDLE *rd, HANDLE *wr, bool ov)
{
    static unsigned seq;
    char name[128];
    snprintf(name, sizeof name, "\\\\.\\pipe\\dagrt-io-%lu-%u", (unsigned long)GetCurrentProcessId(), seq++);
    *rd = CreateNamedPipeA(name, PIPE_ACCESS_INBOUND | (ov ? FILE_FLAG_OVERLAPPED : 0),
                           PIPE_TYPE_BYTE | PIPE_WAIT, 1, 4096, 4096, 0, NULL);
    if (*rd == INVALID_HANDLE_VALUE)
        return false;
    *wr = CreateFileA(name, GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    return *wr != INVALID_HANDLE_VALUE;
}

/* dagrt_destroy with fibers parked on reads and receives that never
 * complete (pipes overlapped and not, sockets): every call returns
 * DAGRT_ECANCELED, destroy returns. */
#define PARKED 12
static int destroy_parked(bool fallback)
{
    int bad = 0;
    HANDLE prd[PARKED / 3], pwr[PARKED / 3];
    struct sockaddr_in a[PARKED / 3];
    SOCKET socks[PARKED / 3];
    park_job j[PARKED];
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    int np = 0;
    for (int i = 0; i < PARKED / 3; i++) {
        /* half the pipes overlapped (the port), half not (the lane) */
        if (!make_pipe(&prd[i], &pwr[i], i % 2 == 0) || (socks[i] = udp_socket(&a[i])) == INVALID_SOCKET)
            FAIL("pipe/socket: %lu", GetLastError());
        j[np] = (park_job){ rt, H(prd[i]), 0, 1 };
        EXPECT(dagrt_spawn_ex(rt, NULL, park_read, &j[np++], DAGRT_SPAWN_FIBER) == 0);
        j[np] = (park_job){ rt, (dagrt_handle)socks[i], 0, 1 };
        EXPECT(dagrt_spawn_ex(rt, NULL, park_recv, &j[np++], DAGRT_SPAWN_FIBER) == 0);
        j[np] = (park_job){ rt, (dagrt_handle)socks[i], 0, 1 };   /* two on one socket */
        EXPECT(dagrt_spawn_ex(rt, NULL, park_recv, &j[np++], DAGRT_SPAWN_FIBER) == 0);
    }
    wait_parked(j, np);
    dagrt_destroy(rt);
    for (int i = 0; i < np; i++) {
        EXPECT(j[i].result == DAGRT_ECANCELED);
        if (j[i].result != DAGRT_ECANCELED)
            fprintf(stderr, "destroy_parked: %d got %lld\n", i, (long long)j[i].result);
    }
    for (int i = 0; i < PARKED / 3; i++) {
        CloseHandle(prd[i]);
        CloseHandle(pwr[i]);
        closesocket(socks[i]);
    }
    return bad;
}

int io_destroy_reads(void) { return destroy_parked(false); }
int io_destroy_reads_fb(void) { return destroy_parked(true); }

/* ----------------------------- readiness, and callers that are not fibers */

typedef struct poll_job {
    dagrt *rt;
    SOCKET s;
    int result;
} poll_job;

static void poll_fiber(void *arg)
{
    poll_job *j = arg;
    j->result = dagrt_poll(j->rt, (dagrt_handle)j->s, DAGRT_POLL_IN, DAGRT_FOREVER, NULL);
}

static DWORD WINAPI foreign_reader(void *arg)
{
    poll_job *j = arg;
    char c = 0;
    int64_t r = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, &c, 1, NULL, NULL, NULL);   /* blocks this thread */
    j->result = r == 1 ? c : (int)r;
    return 0;
}

static void plain_read(void *arg)
{
    poll_job *j = arg;
    char c = 0;
    int64_t r = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, &c, 1, NULL, NULL, NULL);   /* a plain task: helps */
    j->result = r == 1 ? c : (int)r;
}

static int poll_and_callers(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a[3];
    SOCKET s[3];
    for (int i = 0; i < 3; i++)
        if ((s[i] = udp_socket(&a[i])) == INVALID_SOCKET)
            FAIL("udp socket");
    SOCKET tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    /* A fiber parked on readiness wakes once the socket has a datagram. */
    poll_job pj = { rt, s[0], -100 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, poll_fiber, &pj, DAGRT_SPAWN_FIBER) == 0);
    Sleep(10);
    EXPECT(pj.result == -100);   /* still waiting */
    EXPECT(sendto(tx, "x", 1, 0, (struct sockaddr *)&a[0], sizeof a[0]) == 1);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(pj.result == DAGRT_POLL_IN);
    /* Writable at once; a deadline already passed times out. */
    EXPECT(dagrt_poll(rt, (dagrt_handle)s[1], DAGRT_POLL_OUT, DAGRT_FOREVER, NULL) == DAGRT_POLL_OUT);
    EXPECT(dagrt_poll(rt, (dagrt_handle)s[1], DAGRT_POLL_IN, 0, NULL) == DAGRT_ETIMEDOUT);
    EXPECT(dagrt_poll(rt, (dagrt_handle)s[1], 64, DAGRT_FOREVER, NULL) == DAGRT_EINVAL);
    /* A thread that is not the runtime's blocks in the same reactor. */
    poll_job fj = { rt, s[1], -100 };
    HANDLE t = CreateThread(NULL, 0, foreign_reader, &fj, 0, NULL);
    EXPECT(t != NULL);
    Sleep(10);
    EXPECT(sendto(tx, "f", 1, 0, (struct sockaddr *)&a[1], sizeof a[1]) == 1);
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
    EXPECT(fj.result == 'f');
    /* A plain task on a worker helps while it waits. */
    poll_job tj = { rt, s[2], -100 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn(rt, &g, plain_read, &tj) == 0);
    Sleep(10);
    EXPECT(sendto(tx, "t", 1, 0, (struct sockaddr *)&a[2], sizeof a[2]) == 1);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(tj.result == 't');
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(tx);
    for (int i = 0; i < 3; i++)
        closesocket(s[i]);
    return bad;
}

int io_poll_callers(void) { return poll_and_callers(false); }
int io_poll_callers_fb(void) { return poll_and_callers(true); }

/* Every OS error code on the list has its own name. */
int io_error_names(void)
{
    int bad = 0;
    for (int e = DAGRT_ENOENT; e > DAGRT_ERR_LAST_; e--)
        EXPECT(strcmp(dagrt_strerror(e), "unknown error") != 0);
    EXPECT(DAGRT_ENOENT == -13);
    return bad;
}

/* ------------------------------------------- cancel scopes and deadlines */

typedef struct scope_job {
    dagrt *rt;
    SOCKET s;
    dagrt_cancel *scope;
    _Atomic int started;
    int64_t result;
} scope_job;

static void scope_recv(void *arg)
{
    scope_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, buf, sizeof buf, NULL, NULL, j->scope);
}

/* A receive with no traffic, cancelled by its scope: ECANCELED (CancelIoEx
 * on the port); its sibling and the parent's own receive carry on. */
static int scope_cancel(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a[3];
    SOCKET s[3];
    for (int i = 0; i < 3; i++)
        if ((s[i] = udp_socket(&a[i])) == INVALID_SOCKET)
            FAIL("udp socket");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    dagrt_cancel parent, child, sibling;
    dagrt_cancel_init(&parent, NULL);
    dagrt_cancel_init(&child, &parent);
    dagrt_cancel_init(&sibling, &parent);
    scope_job j[3] = { { rt, s[0], &child, 0, 1 }, { rt, s[1], &sibling, 0, 1 }, { rt, s[2], &parent, 0, 1 } };
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 3; i++)
        EXPECT(dagrt_spawn_ex(rt, &g, scope_recv, &j[i], DAGRT_SPAWN_FIBER) == 0);
    for (int i = 0; i < 3; i++)
        while (!atomic_load(&j[i].started))
            Sleep(1);
    Sleep(20);
    dagrt_cancel_request(&child);
    for (int k = 0; k < 2000 && j[0].result == 1; k++)
        Sleep(1);
    EXPECT(j[0].result == DAGRT_ECANCELED);
    EXPECT(j[1].result == 1 && j[2].result == 1);   /* still parked */
    SOCKET tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    for (int i = 1; i < 3; i++)
        EXPECT(sendto(tx, "hi", 2, 0, (struct sockaddr *)&a[i], sizeof a[i]) == 2);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j[1].result == 2 && j[2].result == 2);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_RECVFROM].cancels == 1);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(tx);
    for (int i = 0; i < 3; i++)
        closesocket(s[i]);
    return bad;
}

int io_scope_cancel(void) { return scope_cancel(false); }
int io_scope_cancel_fb(void) { return scope_cancel(true); }

typedef struct dl_job {
    dagrt *rt;
    SOCKET s;
    int result;
    uint64_t ns;
} dl_job;

static void dl_poll(void *arg)
{
    dl_job *j = arg;
    uint64_t t0 = dagrt_now_ns();
    j->result = dagrt_poll(j->rt, (dagrt_handle)j->s, DAGRT_POLL_IN, t0 + 5000000, NULL);   /* 5 ms */
    j->ns = dagrt_now_ns() - t0;
}

/* A readiness wait with a deadline on a socket that stays empty:
 * ETIMEDOUT, no earlier than the deadline; from a fiber and the main
 * thread. */
static int poll_deadline(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    SOCKET s = udp_socket(&a);
    if (s == INVALID_SOCKET)
        FAIL("udp socket");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    dl_job j = { rt, s, 1, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_poll, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.result == DAGRT_ETIMEDOUT);
    EXPECT(j.ns >= 5000000);
    dl_job m = { rt, s, 1, 0 };
    dl_poll(&m);
    EXPECT(m.result == DAGRT_ETIMEDOUT);
    EXPECT(m.ns >= 5000000);
    /* ready before the deadline: the ready set, not a timeout */
    SOCKET tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    EXPECT(sendto(tx, "r", 1, 0, (struct sockaddr *)&a, sizeof a) == 1);
    EXPECT(dagrt_poll(rt, (dagrt_handle)s, DAGRT_POLL_IN, dagrt_now_ns() + 1000000000, NULL) == DAGRT_POLL_IN);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_POLL].timeouts == 2);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(tx);
    closesocket(s);
    return bad;
}

int io_poll_deadline(void) { return poll_deadline(false); }
int io_poll_deadline_fb(void) { return poll_deadline(true); }

/* Cancels racing completions (as io_ops.c's): every receive ends once,
 * with its datagram or ECANCELED. */
#define RACE_ROUNDS 400
typedef struct race_job {
    dagrt *rt;
    SOCKET s;
    dagrt_cancel scopes[RACE_ROUNDS];
    _Atomic int round;
    int got, canceled, bad;
} race_job;

static void race_recv(void *arg)
{
    race_job *j = arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        atomic_store(&j->round, i);
        char buf[16];
        int64_t n = dagrt_recvfrom(j->rt, (dagrt_handle)j->s, buf, sizeof buf, NULL, NULL, &j->scopes[i]);
        if (n == 4 && memcmp(buf, "data", 4) == 0)
            j->got++;
        else if (n == DAGRT_ECANCELED)
            j->canceled++;
        else {
            fprintf(stderr, "race_recv: round %d got %lld\n", i, (long long)n);
            j->bad++;
        }
    }
    atomic_store(&j->round, RACE_ROUNDS);
}

static int cancel_race(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    SOCKET s = udp_socket(&a);
    SOCKET tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    if (s == INVALID_SOCKET || tx == INVALID_SOCKET)
        FAIL("sockets");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    static race_job j;
    memset(&j, 0, sizeof j);
    j.rt = rt;
    j.s = s;
    for (int i = 0; i < RACE_ROUNDS; i++)
        dagrt_cancel_init(&j.scopes[i], NULL);
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, race_recv, &j, DAGRT_SPAWN_FIBER) == 0);
    unsigned x = 12345;
    int sent = 0;
    for (int r; (r = atomic_load(&j.round)) < RACE_ROUNDS;) {
        x = x * 1103515245u + 12345u;
        if (x & 0x10000) {
            if (sendto(tx, "data", 4, 0, (struct sockaddr *)&a, sizeof a) == 4)
                sent++;
        }
        if (x & 0x20000)
            dagrt_cancel_request(&j.scopes[r]);
        if (x & 0x40000)
            SwitchToThread();
    }
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.bad == 0);
    EXPECT(j.got + j.canceled == RACE_ROUNDS);
    EXPECT(j.got <= sent);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(s);
    closesocket(tx);
    return bad;
}

int io_cancel_race(void) { return cancel_race(false); }
int io_cancel_race_fb(void) { return cancel_race(true); }

/* ------------------------------------------- an idle runtime costs nothing */

static uint64_t cpu_ns(void)
{
    FILETIME c, e, k, u;
    if (!GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u))
        return 0;
    uint64_t kk = ((uint64_t)k.dwHighDateTime << 32) | k.dwLowDateTime;
    uint64_t uu = ((uint64_t)u.dwHighDateTime << 32) | u.dwLowDateTime;
    return (kk + uu) * 100;
}

static const char *st_reactor(dagrt *rt)
{
    dagrt_io_stats st;
    return dagrt_get_io_stats(rt, &st) == 0 ? st.reactor : "?";
}

/* The threads of this process now. */
static int thread_count(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    THREADENTRY32 te;
    te.dwSize = sizeof te;
    int n = 0;
    DWORD me = GetCurrentProcessId();
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te))
        if (te.th32OwnerProcessID == me)
            n++;
    CloseHandle(snap);
    return n;
}

/* Fibers parked on receives with no traffic and on an overlapped pipe
 * read: over 600 ms the process spends well under the wall time on the
 * CPU (generous: a tenth), and the parked calls then end when the data
 * comes. On the port no thread holds a parked call (at most the port's
 * own thread is new); on the lane each holds one. */
static int idle_parked(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a[4];
    SOCKET s[4];
    for (int i = 0; i < 4; i++)
        if ((s[i] = udp_socket(&a[i])) == INVALID_SOCKET)
            FAIL("udp socket");
    HANDLE prd, pwr;
    if (!make_pipe(&prd, &pwr, true))
        FAIL("pipe: %lu", GetLastError());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    /* The clock works here: a spin of 50 ms shows on it. */
    uint64_t s0 = cpu_ns(), w0 = dagrt_now_ns();
    while (dagrt_now_ns() - w0 < 50000000) {
    }
    bool clock_ok = cpu_ns() - s0 >= 20000000;
    if (!clock_ok)
        fprintf(stderr, "idle_parked: GetProcessTimes did not see a 50 ms spin: the CPU bound is not checked\n");
    Sleep(100);
    int threads0 = thread_count();
    park_job j[5];
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 4; i++) {
        j[i] = (park_job){ rt, (dagrt_handle)s[i], 0, 1 };
        EXPECT(dagrt_spawn_ex(rt, &g, park_recv, &j[i], DAGRT_SPAWN_FIBER) == 0);
    }
    j[4] = (park_job){ rt, H(prd), 0, 1 };
    EXPECT(dagrt_spawn_ex(rt, &g, park_read, &j[4], DAGRT_SPAWN_FIBER) == 0);
    wait_parked(j, 5);
    Sleep(100);   /* the workers' idle spin, if any, has ended */
    int threads1 = thread_count();
    fallback = strcmp(st_reactor(rt), "lane") == 0;   /* DAGRT_IO=fallback too */
    fprintf(stderr, "idle_parked (%s): %d threads before the parked calls, %d with them\n",
            fallback ? "lane" : "iocp", threads0, threads1);
    EXPECT(threads0 > 0 && threads1 > 0);
    if (fallback)
        EXPECT(threads1 >= threads0 + 5);
    else
        EXPECT(threads1 <= threads0 + 1);
    uint64_t c0 = cpu_ns(), t0 = dagrt_now_ns();
    Sleep(600);
    uint64_t c1 = cpu_ns(), t1 = dagrt_now_ns();
    fprintf(stderr, "idle_parked (%s): %.1f ms on the CPU over %.1f ms\n", fallback ? "lane" : "iocp",
            (double)(c1 - c0) / 1e6, (double)(t1 - t0) / 1e6);
    if (clock_ok)
        EXPECT(c1 - c0 < (t1 - t0) / 10);
    for (int i = 0; i < 5; i++)
        EXPECT(j[i].result == 1);   /* still parked */
    SOCKET tx = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    for (int i = 0; i < 4; i++)
        EXPECT(sendto(tx, "abc", 3, 0, (struct sockaddr *)&a[i], sizeof a[i]) == 3);
    DWORD wr = 0;
    EXPECT(WriteFile(pwr, "pipe!", 5, &wr, NULL) && wr == 5);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    for (int i = 0; i < 4; i++)
        EXPECT(j[i].result == 3);
    EXPECT(j[4].result == 5);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(tx);
    for (int i = 0; i < 4; i++)
        closesocket(s[i]);
    CloseHandle(prd);
    CloseHandle(pwr);
    return bad;
}

int io_idle_parked(void) { return idle_parked(false); }
int io_idle_parked_fb(void) { return idle_parked(true); }

/* ------------------------------------- readiness of a waitable object */

typedef struct ev_job {
    dagrt *rt;
    HANDLE ev;
    dagrt_cancel *scope;
    uint64_t rel;             /* the deadline from the call; DAGRT_FOREVER: none */
    _Atomic int started;
    int result;
    uint64_t ns;
} ev_job;

static void ev_poll(void *arg)
{
    ev_job *j = arg;
    atomic_store(&j->started, 1);
    uint64_t t0 = dagrt_now_ns();
    j->result = dagrt_poll(j->rt, H(j->ev), DAGRT_POLL_IN, j->rel == DAGRT_FOREVER ? DAGRT_FOREVER : t0 + j->rel,
                           j->scope);
    j->ns = dagrt_now_ns() - t0;
}

/* dagrt_poll on an event (what a GPU fence is on Windows): in once it is
 * set; a deadline on one never set times out no earlier than it; a
 * scope's cancel ends a poll parked on one; a handle that is not open is
 * EBADF with the system's reason. */
static int poll_event(bool fallback)
{
    int bad = 0;
    HANDLE e = CreateEventW(NULL, TRUE, FALSE, NULL), never = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!e || !never)
        FAIL("CreateEvent: %lu", GetLastError());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    ev_job set = { rt, e, NULL, DAGRT_FOREVER, 0, 1, 0 };
    ev_job dl = { rt, never, NULL, 5000000, 0, 1, 0 };
    ev_job cn = { rt, never, &c, DAGRT_FOREVER, 0, 1, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, ev_poll, &set, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn_ex(rt, &g, ev_poll, &dl, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn_ex(rt, &g, ev_poll, &cn, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&set.started) || !atomic_load(&cn.started))
        Sleep(1);
    Sleep(20);
    EXPECT(set.result == 1 && cn.result == 1);   /* still waiting */
    SetEvent(e);
    dagrt_cancel_request(&c);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(set.result == DAGRT_POLL_IN);
    EXPECT(dl.result == DAGRT_ETIMEDOUT);
    EXPECT(dl.ns >= 5000000);
    EXPECT(cn.result == DAGRT_ECANCELED);
    /* set already: at once, from the main thread */
    EXPECT(dagrt_poll(rt, H(e), DAGRT_POLL_IN, DAGRT_FOREVER, NULL) == DAGRT_POLL_IN);
    /* not open */
    EXPECT(dagrt_poll(rt, (dagrt_handle)0x7ff0, DAGRT_POLL_IN, DAGRT_FOREVER, NULL) == DAGRT_EBADF);
    EXPECT(dagrt_last_os_error() == ERROR_INVALID_HANDLE);
    if (bad)
        fprintf(stderr, "poll_event: set %d, deadline %d after %llu ns, cancelled %d\n", set.result, dl.result,
                (unsigned long long)dl.ns, cn.result);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    CloseHandle(e);
    CloseHandle(never);
    return bad;
}

int io_poll_event(void) { return poll_event(false); }
int io_poll_event_fb(void) { return poll_event(true); }

/* --------------------------------------- hot workers serve completions */

/* Threads of this process at priority `prio` (GetThreadPriority). */
static int threads_at_priority(int prio)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    THREADENTRY32 te;
    te.dwSize = sizeof te;
    int n = 0;
    DWORD me = GetCurrentProcessId();
    for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
        if (te.th32OwnerProcessID != me)
            continue;
        HANDLE t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, te.th32ThreadID);
        if (!t)
            continue;
        if (GetThreadPriority(t) == prio)
            n++;
        CloseHandle(t);
    }
    CloseHandle(snap);
    return n;
}

/* With a hot worker at an elevated priority: UDP ping-pong through fibers
 * still works (their resumes go to the hot lane), and the hot worker's
 * raised priority (SetThreadPriority ABOVE_NORMAL) is in place on that
 * thread, never the main one, or counted as refused. */
static int hot(bool fallback)
{
    int bad = 0;
    int before = threads_at_priority(THREAD_PRIORITY_ABOVE_NORMAL);
    net_up();
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.hot_workers = 1;
    cfg.hot_priority = DAGRT_PRIORITY_ELEVATED;
    cfg.io_fallback = fallback;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        FAIL("dagrt_create");
    struct sockaddr_in a, b;
    SOCKET sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa == INVALID_SOCKET || sb == INVALID_SOCKET)
        FAIL("udp sockets");
    udp_job echo = { rt, sa, b, 100, 0 }, ping = { rt, sb, a, 100, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, udp_echo, &echo, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn_ex(rt, &g, udp_ping, &ping, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += echo.bad + ping.bad;
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.priority_refused <= 1);
    /* The hot worker raises its own priority when it starts: wait for it,
     * or for the refusal, up to 5 s. */
    int after = threads_at_priority(THREAD_PRIORITY_ABOVE_NORMAL);
    for (int i = 0; i < 500 && after < before + 1 && st.priority_refused == 0; i++) {
        Sleep(10);
        dagrt_get_io_stats(rt, &st);
        after = threads_at_priority(THREAD_PRIORITY_ABOVE_NORMAL);
    }
    if (st.priority_refused == 0)
        EXPECT(after >= before + 1);
    EXPECT(GetThreadPriority(GetCurrentThread()) == THREAD_PRIORITY_NORMAL);   /* the main thread's own */
    fprintf(stderr, "io_hot: threads above normal: %d before, %d after, refused %llu\n", before, after,
                (unsigned long long)st.priority_refused);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    closesocket(sa);
    closesocket(sb);
    /* A bad priority is refused at create. */
    cfg.hot_priority = 7;
    int err = 0;
    EXPECT(dagrt_create_ex(&cfg, &err) == NULL && err == DAGRT_EINVAL);
    return bad;
}

int io_hot(void) { return hot(false); }
int io_hot_fb(void) { return hot(true); }
