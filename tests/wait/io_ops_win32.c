/* io_ops_win32.c - the Windows half of io_ops.h's shim, and the I/O
 * calls' scenarios that only Windows has (io_ops.c and io_deadline.c hold
 * the scenarios every system shares). Each runs twice (wait_list.h): on
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

io_file io_file_create(const char *name) { return open_tmp(name, CREATE_ALWAYS, FILE_FLAG_OVERLAPPED); }

io_file io_dir_open(void)
{
    return CreateFileA(tmpdir, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
}

bool io_open_missing_fails(void)
{
    return open_tmp("missing", OPEN_EXISTING, FILE_FLAG_OVERLAPPED) == INVALID_HANDLE_VALUE &&
           GetLastError() == ERROR_FILE_NOT_FOUND;
}

/* An overlapped file keeps no position: offset < 0 is refused with the
 * system's reason (invalid parameter); on the lane it is the handle's
 * position, which a synchronous handle has. A second handle of the same
 * file, synchronous (the lane on either path): at offsets and at its own
 * position, which advances. */
int io_file_positions(dagrt *rt, io_file fd, const char *name, const unsigned char *w)
{
    int bad = 0;
    unsigned char r[4096];
    memset(r, 0, 64);
    int64_t e = dagrt_read(rt, H(fd), r, 16, -1, NULL);
    EXPECT(e == DAGRT_EIO || e == 16);
    if (e < 0)
        EXPECT(dagrt_last_os_error() == ERROR_INVALID_PARAMETER);
    HANDLE sync = open_tmp(name, OPEN_EXISTING, 0);
    if (sync == INVALID_HANDLE_VALUE)
        FAIL("open %s again: %lu", name, GetLastError());
    EXPECT(dagrt_read(rt, H(sync), r, 100, 500, NULL) == 100);
    EXPECT(memcmp(r, w + 500, 100) == 0);
    LARGE_INTEGER to = { .QuadPart = 100 }, at;
    EXPECT(SetFilePointerEx(sync, to, NULL, FILE_BEGIN));
    EXPECT(dagrt_read(rt, H(sync), r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 100, 50) == 0);
    EXPECT(dagrt_read(rt, H(sync), r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 150, 50) == 0);
    to.QuadPart = 0;
    EXPECT(SetFilePointerEx(sync, to, &at, FILE_CURRENT) && at.QuadPart == 200);
    EXPECT(dagrt_read(rt, H(sync), r, 4096, 10000, NULL) == 0);
    CloseHandle(sync);
    return bad;
}

int io_pair_open(io_pair *p)
{
    p->rd = udp_socket(&p->a);
    p->tx = io_socket(SOCK_DGRAM);
    return p->rd == INVALID_SOCKET || p->tx == INVALID_SOCKET ? -1 : 0;
}

void io_pair_close(io_pair *p)
{
    closesocket(p->rd);
    closesocket(p->tx);
}

dagrt_handle io_pair_rd(const io_pair *p) { return (dagrt_handle)p->rd; }
dagrt_handle io_pair_writable(const io_pair *p) { return (dagrt_handle)p->rd; }   /* a datagram socket */

bool io_pair_put(io_pair *p, char c)
{
    return sendto(p->tx, &c, 1, 0, (struct sockaddr *)&p->a, sizeof p->a) == 1;
}

int64_t io_pair_get(dagrt *rt, io_pair *p, char *c, dagrt_cancel *scope)
{
    return dagrt_recvfrom(rt, (dagrt_handle)p->rd, c, 1, NULL, NULL, scope);
}

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

int io_pipe_open(io_file *rd, io_file *wr, int k) { return make_pipe(rd, wr, k % 2 == 0) ? 0 : -1; }

void io_pipe_close(io_file rd, io_file wr)
{
    CloseHandle(rd);
    CloseHandle(wr);
}

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
