/* io_ops_win32.c - the I/O calls' scenarios that only Windows has, and
 * the Windows side of io_ops.h's shim (io_ops.c holds the scenarios both
 * systems share, under the same names). Each runs twice (wait_list.h): on
 * the completion port ("iocp") and with the blocking lane forced
 * (dagrt_config.io_fallback: "lane"). Files are opened for overlapped I/O
 * (FILE_FLAG_OVERLAPPED) so that the port takes them; a few handles are
 * opened without it on purpose, which the port must hand to the lane. */
#include "io_ops.h"

#include <tlhelp32.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ the shim */

void io_net_up(void)
{
    static int up;
    if (!up) {
        WSADATA wd;
        up = WSAStartup(MAKEWORD(2, 2), &wd) == 0;
    }
}

/* Winsock's error is the thread's last error too. */
const char *io_os_why(void)
{
    static char why[32];
    snprintf(why, sizeof why, "error %lu", GetLastError());
    return why;
}

void io_nap_us(unsigned us)
{
    if (us < 100)
        SwitchToThread();
    else
        Sleep((us + 999) / 1000);
}

/* The reactor the runtime ended up on: the lane when it was forced, else
 * the completion port. */
int check_reactor(dagrt *rt, bool fallback)
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

int make_tmpdir(void)
{
    static unsigned seq;
    char base[MAX_PATH];
    if (!GetTempPathA(sizeof base, base))
        return -1;
    snprintf(tmpdir, sizeof tmpdir, "%sdagrt-io-%lu-%u", base, (unsigned long)GetCurrentProcessId(), seq++);
    return CreateDirectoryA(tmpdir, NULL) ? 0 : -1;
}

void rm_tmpdir(const char *file)
{
    char p[MAX_PATH + 64];
    if (file) {
        snprintf(p, sizeof p, "%s\\%s", tmpdir, file);
        DeleteFileA(p);
    }
    RemoveDirectoryA(tmpdir);
}

const char *tmp_path(const char *name)
{
    static char p[MAX_PATH + 64];
    snprintf(p, sizeof p, "%s\\%s", tmpdir, name);
    return p;
}

static HANDLE open_tmp(const char *name, DWORD disp, DWORD flags)
{
    char p[MAX_PATH + 64];
    snprintf(p, sizeof p, "%s\\%s", tmpdir, name);
    return CreateFileA(p, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       NULL, disp, FILE_ATTRIBUTE_NORMAL | flags, NULL);
}

io_file tmp_file_with(const char *name, const void *data, size_t n, bool *ok)
{
    /* Written through a plain handle, then opened again overlapped. */
    *ok = false;
    HANDLE w = open_tmp(name, CREATE_ALWAYS, 0);
    if (w == INVALID_HANDLE_VALUE)
        return w;
    DWORD wrote = 0;
    BOOL done = WriteFile(w, data, (DWORD)n, &wrote, NULL);
    CloseHandle(w);
    if (!done || wrote != n)
        return INVALID_HANDLE_VALUE;
    HANDLE fd = open_tmp(name, OPEN_EXISTING, FILE_FLAG_OVERLAPPED);
    *ok = fd != INVALID_HANDLE_VALUE;
    return fd;
}

void io_file_close(io_file f) { CloseHandle(f); }

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

int thread_priority(void) { return GetThreadPriority(GetCurrentThread()); }
int threads_raised(int base) { (void)base; return threads_at_priority(THREAD_PRIORITY_ABOVE_NORMAL); }
int threads_at(int prio) { return threads_at_priority(prio); }

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

/* ------------------------------------------- cancel scopes and deadlines */

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
