/* io_ops.c - scenarios for the I/O calls (dagrt_read ... dagrt_poll,
 * dagrt_close), on real files in a temporary directory and real sockets on
 * 127.0.0.1. Each runs twice (io_list.h): on the default reactor and with
 * the fallback forced (dagrt_config.io_fallback: epoll and the blocking
 * lane), so both paths are checked on every run. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dagrt.h"
#include "scenario.h"

/* The suite's list declares every scenario (io_scenarios.c holds the table). */
#define SCENARIO(group, name, secs, flags) int name(void);
#include "io_list.h"
#undef SCENARIO

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

static dagrt *make_rt(bool fallback, int workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.io_fallback = fallback;
    cfg.io_ring_entries = 64;   /* small, so the pool grows under load */
    return dagrt_create(&cfg);
}

/* The reactor the runtime ended up on: the fallback when it was forced. */
static int check_reactor(dagrt *rt, bool fallback)
{
    dagrt_io_stats st;
    if (dagrt_get_io_stats(rt, &st) != 0)
        FAIL("dagrt_get_io_stats failed");
    if (fallback && strcmp(st.reactor, "epoll") != 0)
        FAIL("the fallback was forced but the reactor is %s", st.reactor);
    if (!fallback && strcmp(st.reactor, "io_uring") != 0 && strcmp(st.reactor, "epoll") != 0)
        FAIL("unexpected reactor %s", st.reactor);
    return 0;
}

static char tmpdir[256];

static int make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dagrt-io-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static void rm_tmpdir(const char *file)
{
    char p[512];
    if (file) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, file);
        unlink(p);
    }
    rmdir(tmpdir);
}

static int open_tmp(const char *name, int flags)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return open(p, flags | O_CLOEXEC, 0600);
}

static unsigned char pattern(uint64_t off) { return (unsigned char)((off * 131u + (off >> 9)) & 0xff); }

/* ------------------------------------------------ files, one fiber */

typedef struct file_job {
    dagrt *rt;
    int fd, dirfd;
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
    EXPECT(dagrt_write(rt, j->fd, w, sizeof w, 0, NULL) == (int64_t)sizeof w);
    memset(r, 0, sizeof r);
    EXPECT(dagrt_read(rt, j->fd, r, 4096, 0, NULL) == 4096);
    EXPECT(memcmp(r, w, 4096) == 0);
    /* a short read at the end of the file, then 0 past it */
    EXPECT(dagrt_read(rt, j->fd, r, 4096, 8192, NULL) == 10000 - 8192);
    EXPECT(memcmp(r, w + 8192, 10000 - 8192) == 0);
    EXPECT(dagrt_read(rt, j->fd, r, 4096, 10000, NULL) == 0);
    EXPECT(dagrt_read(rt, j->fd, r, 4096, 20000, NULL) == 0);
    /* the handle's own position: advances */
    EXPECT(lseek(j->fd, 100, SEEK_SET) == 100);
    EXPECT(dagrt_read(rt, j->fd, r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 100, 50) == 0);
    EXPECT(dagrt_read(rt, j->fd, r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 150, 50) == 0);
    EXPECT(lseek(j->fd, 0, SEEK_CUR) == 200);
    /* a directory */
    int64_t e = dagrt_read(rt, j->dirfd, r, 16, 0, NULL);
    EXPECT(e == DAGRT_EISDIR);
    EXPECT(dagrt_last_os_error() == EISDIR);
    /* a handle that is not open: EBADF, with the system's reason kept */
    e = dagrt_read(rt, 1 << 20, r, 16, 0, NULL);
    EXPECT(e == DAGRT_EBADF);
    EXPECT(dagrt_last_os_error() == EBADF);
    EXPECT(strcmp(dagrt_strerror(DAGRT_EBADF), "unknown error") != 0);
    /* a cancelled scope: no I/O at all */
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    dagrt_cancel_request(&c);
    EXPECT(dagrt_read(rt, j->fd, r, 16, 0, &c) == DAGRT_ECANCELED);
    /* bad arguments */
    EXPECT(dagrt_read(rt, j->fd, NULL, 16, 0, NULL) == DAGRT_EINVAL);
    EXPECT(dagrt_read(NULL, j->fd, r, 16, 0, NULL) == DAGRT_EINVAL);
    j->bad = bad;
}

static int file_basic(bool fallback)
{
    if (make_tmpdir() != 0)
        FAIL("mkdtemp: %s", strerror(errno));
    file_job j = { 0 };
    j.fd = open_tmp("a", O_RDWR | O_CREAT | O_TRUNC);
    j.dirfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int bad = 0;
    if (j.fd < 0 || j.dirfd < 0)
        FAIL("open: %s", strerror(errno));
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
    /* A missing file is the system's open() (the runtime opens nothing);
     * its errno maps onto the list like every other. */
    EXPECT(open_tmp("missing", O_RDONLY) < 0 && errno == ENOENT);
    dagrt_destroy(rt);
    close(j.fd);
    close(j.dirfd);
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
    int fd;
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
        uint64_t blk = (x >> 33) % MANY_BLOCKS;
        uint64_t off = blk * MANY_BLOCK;
        int64_t r = dagrt_read(j->rt, j->fd, buf, MANY_BLOCK, (int64_t)off, NULL);
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
        FAIL("mkdtemp: %s", strerror(errno));
    int fd = open_tmp("m", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        FAIL("open: %s", strerror(errno));
    static unsigned char all[MANY_BLOCK * MANY_BLOCKS];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = pattern(i);
    if (write(fd, all, sizeof all) != (ssize_t)sizeof all)
        FAIL("write");
    int bad = 0;
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    _Atomic int nbad = 0;
    many_job jobs[MANY_FIBERS];
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
    close(fd);
    rm_tmpdir("m");
    return bad;
}

int io_file_many(void) { return file_many(false); }
int io_file_many_fb(void) { return file_many(true); }

/* ------------------------------------------------------ sockets */

static int udp_socket(struct sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof *a;
    if (s < 0 || bind(s, (struct sockaddr *)a, sizeof *a) != 0 ||
        getsockname(s, (struct sockaddr *)a, &l) != 0)
        return -1;
    return s;
}

typedef struct udp_job {
    dagrt *rt;
    int s;
    struct sockaddr_in peer;
    int rounds;
    int bad;
} udp_job;

/* Echoes `rounds` datagrams back to whoever sent them. */
static void udp_echo(void *arg)
{
    udp_job *j = arg;
    int bad = 0;
    for (int i = 0; i < j->rounds; i++) {
        char buf[64];
        struct sockaddr_in from;
        size_t fl = sizeof from;
        int64_t n = dagrt_recvfrom(j->rt, j->s, buf, sizeof buf, (struct sockaddr *)&from, &fl, NULL);
        EXPECT(n > 0);
        EXPECT(fl == sizeof from && from.sin_port == j->peer.sin_port);
        if (n <= 0)
            break;
        EXPECT(dagrt_sendto(j->rt, j->s, buf, (size_t)n, (struct sockaddr *)&from, fl, NULL) == n);
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
        EXPECT(dagrt_sendto(j->rt, j->s, out, (size_t)len, (struct sockaddr *)&j->peer, sizeof j->peer, NULL) == len);
        int64_t n = dagrt_recvfrom(j->rt, j->s, in, sizeof in, NULL, NULL, NULL);
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
    int sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa < 0 || sb < 0)
        FAIL("udp sockets: %s", strerror(errno));
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
    EXPECT(dagrt_sendto(rt, sb, huge, sizeof huge, (struct sockaddr *)&a, sizeof a, NULL) == DAGRT_EMSGSIZE);
    dagrt_destroy(rt);
    close(sa);
    close(sb);
    return bad;
}

int io_udp(void) { return udp(false); }
int io_udp_fb(void) { return udp(true); }

typedef struct tcp_job {
    dagrt *rt;
    int ls;
    struct sockaddr_in addr;
    int bad_server, bad_client;   /* one per fiber: they run at once */
} tcp_job;

static void tcp_server(void *arg)
{
    tcp_job *j = arg;
    int bad = 0;
    dagrt_handle c = -1;
    EXPECT(dagrt_accept(j->rt, j->ls, &c, NULL) == 0);
    if (c >= 0) {
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
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT(s >= 0);
    EXPECT(dagrt_connect(j->rt, s, (struct sockaddr *)&j->addr, sizeof j->addr, NULL) == 0);
    for (int i = 0; i < 50; i++) {
        char out[64], in[64];
        int len = snprintf(out, sizeof out, "line %d of the echo", i);
        EXPECT(dagrt_sendto(j->rt, s, out, (size_t)len, NULL, 0, NULL) == len);
        int got = 0;
        while (got < len) {
            int64_t n = dagrt_recvfrom(j->rt, s, in + got, sizeof in - (size_t)got, NULL, NULL, NULL);
            if (n <= 0)
                break;
            got += (int)n;
        }
        EXPECT(got == len && memcmp(in, out, (size_t)len) == 0);
    }
    shutdown(s, SHUT_WR);
    char x;
    EXPECT(dagrt_read(j->rt, s, &x, 1, -1, NULL) == 0);   /* the server closed: end of stream */
    EXPECT(dagrt_close(j->rt, s) == 0);
    j->bad_client = bad;
}

static int tcp_listener(struct sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof *a;
    if (s < 0 || bind(s, (struct sockaddr *)a, sizeof *a) != 0 || listen(s, 8) != 0 ||
        getsockname(s, (struct sockaddr *)a, &l) != 0)
        return -1;
    return s;
}

static int tcp(bool fallback)
{
    int bad = 0;
    tcp_job j = { 0 };
    j.ls = tcp_listener(&j.addr);
    if (j.ls < 0)
        FAIL("listener: %s", strerror(errno));
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
    /* Connection refused: a port that was just free. */
    struct sockaddr_in freea;
    int tmp = tcp_listener(&freea);
    close(tmp);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int r = dagrt_connect(rt, s, (struct sockaddr *)&freea, sizeof freea, NULL);   /* the main thread */
    EXPECT(r == DAGRT_ECONNREFUSED);
    EXPECT(dagrt_last_os_error() == ECONNREFUSED);
    close(s);
    /* Address in use: bind is the system's, but the code is on the list. */
    EXPECT(strcmp(dagrt_strerror(DAGRT_EADDRINUSE), "address already in use") == 0);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(j.ls);
    return bad;
}

int io_tcp(void) { return tcp(false); }
int io_tcp_fb(void) { return tcp(true); }

/* ----------------------------------- parked calls ended from outside */

typedef struct park_job {
    dagrt *rt;
    int fd;
    _Atomic int started;
    int64_t result;
} park_job;

static void park_recv(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, j->fd, buf, sizeof buf, NULL, NULL, NULL);
}

static void park_read(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_read(j->rt, j->fd, buf, sizeof buf, -1, NULL);
}

static void wait_parked(dagrt *rt, park_job *j, int n)
{
    /* Started, then a moment to reach the kernel: the ends below must work
     * whether or not it got there (that race is the point). */
    for (int i = 0; i < n; i++)
        while (!atomic_load(&j[i].started))
            usleep(100);
    usleep(20000);
    (void)rt;
}

/* A socket closed (dagrt_close) under a parked receive: the receive ends
 * with EBADF, nothing hangs. */
static int close_parked(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    int s = udp_socket(&a);
    if (s < 0)
        FAIL("udp socket");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    park_job j = { rt, s, 0, 1 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, park_recv, &j, DAGRT_SPAWN_FIBER) == 0);
    wait_parked(rt, &j, 1);
    EXPECT(dagrt_close(rt, s) == 0);
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

/* dagrt_destroy with fibers parked on reads and receives that never
 * complete: every call returns DAGRT_ECANCELED, destroy returns, nothing
 * leaks (LSan in the sanitizer runs). */
#define PARKED 8
static int destroy_parked(bool fallback)
{
    int bad = 0;
    int pipes[PARKED / 2][2];
    struct sockaddr_in a[PARKED / 2];
    int socks[PARKED / 2];
    park_job j[PARKED];
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    for (int i = 0; i < PARKED / 2; i++) {
        if (pipe2(pipes[i], O_CLOEXEC) != 0 || (socks[i] = udp_socket(&a[i])) < 0)
            FAIL("pipe/socket");
        j[2 * i] = (park_job){ rt, pipes[i][0], 0, 1 };
        j[2 * i + 1] = (park_job){ rt, socks[i], 0, 1 };
        EXPECT(dagrt_spawn_ex(rt, NULL, park_read, &j[2 * i], DAGRT_SPAWN_FIBER) == 0);
        EXPECT(dagrt_spawn_ex(rt, NULL, park_recv, &j[2 * i + 1], DAGRT_SPAWN_FIBER) == 0);
    }
    wait_parked(rt, j, PARKED);
    dagrt_destroy(rt);
    for (int i = 0; i < PARKED; i++) {
        EXPECT(j[i].result == DAGRT_ECANCELED);
        if (j[i].result != DAGRT_ECANCELED)
            fprintf(stderr, "destroy_parked: %d got %lld\n", i, (long long)j[i].result);
    }
    for (int i = 0; i < PARKED / 2; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
        close(socks[i]);
    }
    return bad;
}

int io_destroy_reads(void) { return destroy_parked(false); }
int io_destroy_reads_fb(void) { return destroy_parked(true); }

/* ----------------------------- readiness, and callers that are not fibers */

typedef struct poll_job {
    dagrt *rt;
    int rfd;
    int result;
} poll_job;

static void poll_fiber(void *arg)
{
    poll_job *j = arg;
    j->result = dagrt_poll(j->rt, j->rfd, DAGRT_POLL_IN, DAGRT_FOREVER, NULL);
}

static void *foreign_reader(void *arg)
{
    poll_job *j = arg;
    char c = 0;
    int64_t r = dagrt_read(j->rt, j->rfd, &c, 1, -1, NULL);   /* blocks this thread */
    j->result = r == 1 ? c : (int)r;
    return NULL;
}

static void plain_read(void *arg)
{
    poll_job *j = arg;
    char c = 0;
    int64_t r = dagrt_read(j->rt, j->rfd, &c, 1, -1, NULL);   /* a plain task: helps */
    j->result = r == 1 ? c : (int)r;
}

static int poll_and_callers(bool fallback)
{
    int bad = 0;
    int p1[2], p2[2], p3[2];
    if (pipe2(p1, O_CLOEXEC) || pipe2(p2, O_CLOEXEC) || pipe2(p3, O_CLOEXEC))
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    /* A fiber parked on readiness wakes once the pipe has a byte. */
    poll_job pj = { rt, p1[0], -100 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, poll_fiber, &pj, DAGRT_SPAWN_FIBER) == 0);
    usleep(10000);
    EXPECT(pj.result == -100);   /* still waiting */
    EXPECT(write(p1[1], "x", 1) == 1);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(pj.result == DAGRT_POLL_IN);
    /* Writable at once. A deadline already passed still looks once: the
     * byte is still in p1 (nobody read it), so p1[0] is ready and returns
     * its set; the empty p3 times out. */
    EXPECT(dagrt_poll(rt, p1[1], DAGRT_POLL_OUT, DAGRT_FOREVER, NULL) == DAGRT_POLL_OUT);
    EXPECT(dagrt_poll(rt, p1[0], DAGRT_POLL_IN, 0, NULL) == DAGRT_POLL_IN);
    EXPECT(dagrt_poll(rt, p1[0], DAGRT_POLL_IN, dagrt_now_ns(), NULL) == DAGRT_POLL_IN);
    EXPECT(dagrt_poll(rt, p1[1], DAGRT_POLL_OUT, 1, NULL) == DAGRT_POLL_OUT);
    EXPECT(dagrt_poll(rt, p3[0], DAGRT_POLL_IN, 0, NULL) == DAGRT_ETIMEDOUT);
    EXPECT(dagrt_poll(rt, p3[0], DAGRT_POLL_IN, dagrt_now_ns(), NULL) == DAGRT_ETIMEDOUT);
    EXPECT(dagrt_poll(rt, p1[0], 64, DAGRT_FOREVER, NULL) == DAGRT_EINVAL);
    /* A thread that is not the runtime's blocks in the same reactor. */
    poll_job fj = { rt, p2[0], -100 };
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, foreign_reader, &fj) == 0);
    usleep(10000);
    EXPECT(write(p2[1], "f", 1) == 1);
    pthread_join(t, NULL);
    EXPECT(fj.result == 'f');
    /* A plain task on a worker helps while it waits. */
    poll_job tj = { rt, p3[0], -100 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn(rt, &g, plain_read, &tj) == 0);
    usleep(10000);
    EXPECT(write(p3[1], "t", 1) == 1);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(tj.result == 't');
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    for (int i = 0; i < 2; i++) {
        close(p1[i]);
        close(p2[i]);
        close(p3[i]);
    }
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
    int fd;
    dagrt_cancel *scope;
    _Atomic int started;
    int64_t result;
} scope_job;

static void scope_recv(void *arg)
{
    scope_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, j->fd, buf, sizeof buf, NULL, NULL, j->scope);
}

/* A receive with no traffic, cancelled by its scope: ECANCELED, in the
 * kernel (nothing else would end it); a sibling under the same parent and
 * the parent's own receive carry on, and get their datagrams. */
static int scope_cancel(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a[3];
    int s[3];
    for (int i = 0; i < 3; i++)
        if ((s[i] = udp_socket(&a[i])) < 0)
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
            usleep(100);
    usleep(20000);
    dagrt_cancel_request(&child);
    for (int k = 0; k < 2000 && j[0].result == 1; k++)
        usleep(1000);
    EXPECT(j[0].result == DAGRT_ECANCELED);
    EXPECT(j[1].result == 1 && j[2].result == 1);   /* still parked */
    int tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (int i = 1; i < 3; i++)
        EXPECT(sendto(tx, "hi", 2, 0, (struct sockaddr *)&a[i], sizeof a[i]) == 2);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j[1].result == 2 && j[2].result == 2);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_RECVFROM].cancels == 1);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(tx);
    for (int i = 0; i < 3; i++)
        close(s[i]);
    return bad;
}

int io_scope_cancel(void) { return scope_cancel(false); }
int io_scope_cancel_fb(void) { return scope_cancel(true); }

typedef struct dl_job {
    dagrt *rt;
    int fd;
    int result;
    uint64_t ns;
} dl_job;

static void dl_poll(void *arg)
{
    dl_job *j = arg;
    uint64_t t0 = dagrt_now_ns();
    j->result = dagrt_poll(j->rt, j->fd, DAGRT_POLL_IN, t0 + 5000000, NULL);   /* 5 ms */
    j->ns = dagrt_now_ns() - t0;
}

/* A readiness wait with a deadline on a pipe that stays empty: ETIMEDOUT,
 * no earlier than the deadline; from a fiber and from the main thread. */
static int poll_deadline(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    dl_job j = { rt, p[0], 1, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_poll, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.result == DAGRT_ETIMEDOUT);
    EXPECT(j.ns >= 5000000);
    dl_job m = { rt, p[0], 1, 0 };
    dl_poll(&m);
    EXPECT(m.result == DAGRT_ETIMEDOUT);
    EXPECT(m.ns >= 5000000);
    /* ready before the deadline: the ready set, not a timeout */
    EXPECT(write(p[1], "r", 1) == 1);
    EXPECT(dagrt_poll(rt, p[0], DAGRT_POLL_IN, dagrt_now_ns() + 1000000000, NULL) == DAGRT_POLL_IN);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_POLL].timeouts == 2);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    return bad;
}

int io_poll_deadline(void) { return poll_deadline(false); }
int io_poll_deadline_fb(void) { return poll_deadline(true); }

/* Cancels racing completions: pairs of fibers ping-pong datagrams while
 * the main thread cancels the scope of one receive after another at
 * random moments. Every receive ends exactly once, with its datagram or
 * ECANCELED; none hangs, none is resumed twice (the record would be
 * reused under it: the sanitizers and the byte checks see that). */
#define RACE_ROUNDS 400
typedef struct race_job {
    dagrt *rt;
    int s;
    struct sockaddr_in peer;
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
        int64_t n = dagrt_recvfrom(j->rt, j->s, buf, sizeof buf, NULL, NULL, &j->scopes[i]);
        if (n == 4 && memcmp(buf, "data", 4) == 0)
            j->got++;
        else if (n == DAGRT_ECANCELED)
            j->canceled++;
        else
            j->bad++;
    }
    atomic_store(&j->round, RACE_ROUNDS);
}

static int cancel_race(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    int s = udp_socket(&a);
    int tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0 || tx < 0)
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
            usleep(50);
    }
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.bad == 0);
    EXPECT(j.got + j.canceled == RACE_ROUNDS);
    EXPECT(j.got <= sent);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(s);
    close(tx);
    return bad;
}

int io_cancel_race(void) { return cancel_race(false); }
int io_cancel_race_fb(void) { return cancel_race(true); }

/* --------------------------------------- hot workers serve completions */

/* Threads of this process whose nice value is `nice`. */
static int threads_with_nice(int nice)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char p[300], buf[512];
        snprintf(p, sizeof p, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *q = strrchr(buf, ')');   /* the name may hold spaces */
        int field = 2, v = 0;
        for (; q && *q; q++)
            if (*q == ' ' && ++field == 19) {
                v = atoi(q + 1);
                break;
            }
        if (field == 19 && v == nice)
            n++;
    }
    closedir(d);
    return n;
}

/* With a hot worker at an elevated priority: UDP ping-pong through fibers
 * still works (their resumes go to the hot lane), and the hot worker's
 * raised priority is either in place on that thread (never the process)
 * or counted as refused. */
static int hot(bool fallback)
{
    int bad = 0;
    int base = getpriority(PRIO_PROCESS, 0);
    int before = threads_with_nice(base - 5);
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
    int sa = udp_socket(&a), sb = udp_socket(&b);
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
    /* The hot worker raises its own priority when it starts, which may come
     * after the ping-pong (the other threads can run all of it): wait for
     * it, or for the refusal, up to 5 s. */
    int after = threads_with_nice(base - 5);
    for (int i = 0; i < 500 && after < before + 1 && st.priority_refused == 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        dagrt_get_io_stats(rt, &st);
        after = threads_with_nice(base - 5);
    }
    /* The hot worker, and the reactor's threads if its call started them
     * (a thread inherits its creator's nice value); the main thread and
     * the other worker stay as they were. */
    if (st.priority_refused == 0)
        EXPECT(after >= before + 1 && threads_with_nice(base) >= 2);
    if (bad)
        fprintf(stderr, "io_hot: base %d, threads at base-5: %d before, %d after, refused %llu\n",
                base, before, after, (unsigned long long)st.priority_refused);
    EXPECT(getpriority(PRIO_PROCESS, 0) == base);   /* the main thread's own */
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(sa);
    close(sb);
    /* A bad priority is refused at create. */
    cfg.hot_priority = 7;
    int err = 0;
    EXPECT(dagrt_create_ex(&cfg, &err) == NULL && err == DAGRT_EINVAL);
    return bad;
}

int io_hot(void) { return hot(false); }
int io_hot_fb(void) { return hot(true); }

/* ------------------------------------------------------------- the trace */

static void trace_fiber(void *arg)
{
    file_job *j = arg;
    int bad = 0;
    char buf[4096];
    memset(buf, 'q', sizeof buf);
    EXPECT(dagrt_write(j->rt, j->fd, buf, sizeof buf, 0, NULL) == 4096);
    EXPECT(dagrt_read(j->rt, j->fd, buf, sizeof buf, 0, NULL) == 4096);
    EXPECT(dagrt_poll(j->rt, j->dirfd, DAGRT_POLL_IN, dagrt_now_ns() + 2000000, NULL) == DAGRT_ETIMEDOUT);
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    dagrt_cancel_request(&c);
    EXPECT(dagrt_read(j->rt, j->fd, buf, sizeof buf, 0, &c) == DAGRT_ECANCELED);
    j->bad = bad;
}

/* The ts (µs) of the trace event that starts with head and has the given
 * id ("" : any, and *id gets it); -1 when there is none. */
static double slice_ts(const char *text, const char *head, char *id, size_t idn)
{
    for (const char *at = strstr(text, head); at; at = strstr(at + 1, head)) {
        const char *ip = strstr(at, "\"id\":\"");
        const char *tp = strstr(at, "\"ts\":");
        const char *end = strchr(at, '}');
        if (!ip || !tp || !end || ip > end || tp > end)
            continue;
        ip += 6;
        const char *iq = strchr(ip, '"');
        if (!iq)
            continue;
        if (*id && (strlen(id) != (size_t)(iq - ip) || strncmp(id, ip, (size_t)(iq - ip)) != 0))
            continue;
        if (!*id && (size_t)(iq - ip) < idn) {
            memcpy(id, ip, (size_t)(iq - ip));
            id[iq - ip] = 0;
        }
        return strtod(tp + 5, NULL);
    }
    return -1;
}

/* Each I/O call is in the trace: the operation, the handle, the bytes and
 * the result, on the thread it returned on. */
static int trace(bool fallback)
{
    int bad = 0;
    if (make_tmpdir() != 0)
        FAIL("mkdtemp");
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    file_job j = { 0 };
    j.fd = open_tmp("t", O_RDWR | O_CREAT | O_TRUNC);
    j.dirfd = p[0];   /* an empty pipe: the poll times out */
    dagrt *rt = make_rt(fallback, 1);
    if (!rt || j.fd < 0)
        FAIL("setup");
    j.rt = rt;
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, trace_fiber, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += j.bad;
    /* The counts per kind in dagrt_get_stats, summed over the threads (a
     * fiber may return on any); the cancelled read never reached the
     * reactor: a cancellation, not an operation. */
    dagrt_thread_stats ts[8];
    int nt = dagrt_get_stats(rt, ts, 8);
    EXPECT(nt >= 2 && nt <= 8);
    dagrt_thread_stats sum;
    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < nt && i < 8; i++)
        for (int k = 0; k < DAGRT_IO_KINDS; k++) {
            sum.io_ops[k] += ts[i].io_ops[k];
            sum.io_bytes[k] += ts[i].io_bytes[k];
            sum.io_timeouts[k] += ts[i].io_timeouts[k];
            sum.io_cancels[k] += ts[i].io_cancels[k];
        }
    EXPECT(sum.io_ops[DAGRT_IO_WRITE] == 1 && sum.io_bytes[DAGRT_IO_WRITE] == 4096);
    EXPECT(sum.io_ops[DAGRT_IO_READ] == 1 && sum.io_bytes[DAGRT_IO_READ] == 4096);
    EXPECT(sum.io_cancels[DAGRT_IO_READ] == 1 && sum.io_timeouts[DAGRT_IO_READ] == 0);
    EXPECT(sum.io_ops[DAGRT_IO_POLL] == 1 && sum.io_timeouts[DAGRT_IO_POLL] == 1);
    EXPECT(sum.io_bytes[DAGRT_IO_POLL] == 0 && sum.io_cancels[DAGRT_IO_POLL] == 0);
    EXPECT(sum.io_ops[DAGRT_IO_RECVFROM] == 0 && sum.io_ops[DAGRT_IO_ACCEPT] == 0);
    dagrt_io_stats is;
    EXPECT(dagrt_get_io_stats(rt, &is) == 0);
    EXPECT(is.kind[DAGRT_IO_READ].ops == 1 && is.kind[DAGRT_IO_READ].cancels == 1);
    EXPECT(is.kind[DAGRT_IO_POLL].timeouts == 1);
    EXPECT(dagrt_trace_stop(rt) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", tmpdir);
    EXPECT(dagrt_trace_write(rt, path) == 0);
    dagrt_destroy(rt);
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    char want[128];
    snprintf(want, sizeof want, "\"handle\":%d,\"bytes\":4096,\"result\":4096", j.fd);
    EXPECT(strstr(text, "\"name\":\"io read\"") != NULL);
    EXPECT(strstr(text, "\"name\":\"io write\"") != NULL);
    EXPECT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "\"handle\":%d,\"bytes\":0,\"result\":%d", p[0], DAGRT_ETIMEDOUT);
    EXPECT(strstr(text, "\"name\":\"io poll\"") != NULL && strstr(text, want) != NULL);
    /* Each wait is a slice: a begin and an end of one id, the poll's as
     * long as its wait (its deadline was 2 ms after it started). */
    char id[64] = "";
    double b = slice_ts(text, "{\"ph\":\"b\",\"name\":\"io poll\"", id, sizeof id);
    double e = *id ? slice_ts(text, "{\"ph\":\"e\",\"name\":\"io poll\"", id, sizeof id) : -1;
    EXPECT(b >= 0 && e >= 0);
    EXPECT(e - b >= 1500.0);
    id[0] = 0;
    b = slice_ts(text, "{\"ph\":\"b\",\"name\":\"io read\"", id, sizeof id);
    e = *id ? slice_ts(text, "{\"ph\":\"e\",\"name\":\"io read\"", id, sizeof id) : -1;
    EXPECT(b >= 0 && e >= b);
    if (bad)
        fprintf(stderr, "trace: %.2000s\n", text);
    close(j.fd);
    close(p[0]);
    close(p[1]);
    unlink(path);
    rm_tmpdir("t");
    return bad;
}

int io_trace(void) { return trace(false); }
int io_trace_fb(void) { return trace(true); }

/* ---------------------------------------------------------- the observer */

typedef struct obs_count {
    atomic_int suspends, resumes, begins, ends, other;
} obs_count;

static void oc_note(const dagrt_node_event *e, atomic_int *n, obs_count *oc)
{
    if (e->graph && strcmp(e->graph, "io_obs") == 0 && e->node && strcmp(e->node, "reader") == 0)
        atomic_fetch_add(n, 1);
    else
        atomic_fetch_add(&oc->other, 1);
}
static void oc_suspend(void *u, const dagrt_node_event *e) { oc_note(e, &((obs_count *)u)->suspends, u); }
static void oc_resume(void *u, const dagrt_node_event *e) { oc_note(e, &((obs_count *)u)->resumes, u); }
static void oc_begin(void *u, const dagrt_node_event *e) { oc_note(e, &((obs_count *)u)->begins, u); }
static void oc_end(void *u, const dagrt_node_event *e) { oc_note(e, &((obs_count *)u)->ends, u); }

typedef struct obs_ctx {
    dagrt *rt;
    int fd;
    int64_t got;
    char byte;
} obs_ctx;

static void obs_reader(void *arg)
{
    obs_ctx *x = arg;
    x->got = dagrt_read(x->rt, x->fd, &x->byte, 1, -1, NULL);
}

static void *late_writer(void *arg)
{
    usleep(20000);
    if (write(*(int *)arg, "w", 1) != 1)
        perror("late_writer");
    return NULL;
}

/* An I/O wait in a fiber task of a graph is a suspend and a resume of its
 * node, as any other wait (design/io.md, "Observability"). */
static int observe_io(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    obs_count oc;
    memset(&oc, 0, sizeof oc);
    dagrt_observer ob;
    memset(&ob, 0, sizeof ob);
    ob.fiber_suspend = oc_suspend;
    ob.fiber_resume = oc_resume;
    ob.node_begin = oc_begin;
    ob.node_end = oc_end;
    EXPECT(dagrt_set_observer(rt, &ob, &oc) == 0);
    static const dagrt_node nodes[1] = {
        { .name = "reader", .kind = DAGRT_NODE_TASK, .join = DAGRT_JOIN_AND,
          .flags = DAGRT_NODE_FIBER, .run = obs_reader },
    };
    static const uint32_t succ[1] = { 0 };
    const dagrt_graph g = { .version = DAGRT_GRAPH_VERSION, .nnodes = 1, .nsucc = 0,
                            .name = "io_obs", .nodes = nodes, .succ = succ };
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    obs_ctx x = { rt, p[0], -100, 0 };
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, late_writer, &p[1]) == 0);
    EXPECT(dagrt_graph_run(rt, &g, &st, &x) == 0);
    pthread_join(t, NULL);
    EXPECT(x.got == 1 && x.byte == 'w');
    /* The read had nothing to read for 20 ms: it suspended (at least
     * once) and resumed as often; begin and end once each. */
    EXPECT(atomic_load(&oc.suspends) >= 1);
    EXPECT(atomic_load(&oc.suspends) == atomic_load(&oc.resumes));
    EXPECT(atomic_load(&oc.begins) == 1 && atomic_load(&oc.ends) == 1);
    EXPECT(atomic_load(&oc.other) == 0);
    EXPECT(dagrt_set_observer(rt, NULL, NULL) == 0);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    return bad;
}

int io_observe(void) { return observe_io(false); }
int io_observe_fb(void) { return observe_io(true); }

/* ------------------------------------- dagrt_group_wait, foreign thread */

typedef struct gw_job {
    dagrt *rt;
    dagrt_group *g;
    int rc;
    long switches;   /* voluntary context switches during the wait */
} gw_job;

static void gw_sleeper(void *arg)
{
    gw_job *j = arg;
    dagrt_sleep(j->rt, 60000000u, NULL);   /* 60 ms */
}

static void *gw_foreign(void *arg)
{
    gw_job *j = arg;
    struct rusage a, b;
    getrusage(RUSAGE_THREAD, &a);
    j->rc = dagrt_group_wait(j->rt, j->g);
    getrusage(RUSAGE_THREAD, &b);
    j->switches = b.ru_nvcsw - a.ru_nvcsw;
    return NULL;
}

/* A thread outside the runtime waiting on a group blocks until the last
 * task wakes it: over a 60 ms wait it sleeps a handful of times, where
 * polling with 50 µs naps would switch out a thousand times. */
int io_group_wait_foreign(void)
{
    int bad = 0;
    dagrt *rt = make_rt(false, 2);
    if (!rt)
        FAIL("dagrt_create");
    for (int round = 0; round < 3; round++) {
        dagrt_group *g = malloc(sizeof *g);   /* heap: no owner, any one thread may wait */
        if (!g)
            FAIL("malloc");
        dagrt_group_init(g);
        gw_job j = { rt, g, -100, 0 };
        /* The group is spawned into from this (main) thread, waited on by
         * the foreign one. */
        EXPECT(dagrt_spawn_ex(rt, g, gw_sleeper, &j, DAGRT_SPAWN_FIBER) == 0);
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, gw_foreign, &j) == 0);
        pthread_join(t, NULL);
        EXPECT(j.rc == 0);
        if (j.switches > 50)
            fprintf(stderr, "io_group_wait_foreign: %ld voluntary switches in a 60 ms wait\n", j.switches);
        EXPECT(j.switches <= 50);
        free(g);
    }
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------- idle with I/O in flight */

typedef struct parked_job {
    dagrt *rt;
    int fd;
    char b;
    int64_t r;
} parked_job;

static void idle_reader(void *arg)
{
    parked_job *p = arg;
    p->r = dagrt_read(p->rt, p->fd, &p->b, 1, -1, NULL);
}

/* A runtime whose only work is a read parked on a silent pipe burns no
 * CPU: over 300 ms every thread of the process together switches out a
 * handful of times (a thread polling or ticking at 1 kHz would switch
 * out hundreds of times), and uses little CPU. */
static int idle_io(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    parked_job pj = { rt, p[0], 0, -100 };
    dagrt_group *g = malloc(sizeof *g);
    if (!g)
        FAIL("malloc");
    dagrt_group_init(g);
    EXPECT(dagrt_spawn_ex(rt, g, idle_reader, &pj, DAGRT_SPAWN_FIBER) == 0);
    usleep(100000);   /* the read parks, the workers stop spinning and park */
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    usleep(300000);
    getrusage(RUSAGE_SELF, &b);
    long sw = (b.ru_nvcsw - a.ru_nvcsw) + (b.ru_nivcsw - a.ru_nivcsw);
    long cpu_us = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) * 1000000L + (b.ru_utime.tv_usec - a.ru_utime.tv_usec) +
                  (b.ru_stime.tv_sec - a.ru_stime.tv_sec) * 1000000L + (b.ru_stime.tv_usec - a.ru_stime.tv_usec);
    if (sw > 40 || cpu_us > 30000)
        fprintf(stderr, "idle_io: %ld context switches, %ld us of CPU in 300 ms idle\n", sw, cpu_us);
    EXPECT(sw <= 40);
    EXPECT(cpu_us <= 30000);
    EXPECT(pj.r == -100);   /* still parked */
    EXPECT(write(p[1], "z", 1) == 1);
    EXPECT(dagrt_group_wait(rt, g) == 0);
    EXPECT(pj.r == 1 && pj.b == 'z');
    free(g);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    return bad;
}

int io_idle(void) { return idle_io(false); }
int io_idle_fb(void) { return idle_io(true); }

/* ------------------------------------------------------- the fast path */

typedef struct fast_ctx {
    dagrt *rt;
    int fd;
    int bad;
} fast_ctx;

#define FAST_READS 200

static void fast_reader(void *arg)
{
    fast_ctx *x = arg;
    char buf[4096];
    for (int i = 0; i < FAST_READS; i++) {
        int64_t off = (int64_t)(i % 16) * 4096;
        if (dagrt_read(x->rt, x->fd, buf, sizeof buf, off, NULL) != 4096 ||
            (unsigned char)buf[7] != pattern((uint64_t)off + 7))
            x->bad++;
    }
}

/* On io_uring, a read of a file in the page cache is finished by the
 * kernel inside the submit, and the call returns without suspending its
 * fiber: a graph node making 200 such reads suspends far fewer than 200
 * times (another thread may reap a completion first now and then, and
 * then the fiber does suspend, briefly). The fallback's lane is always a
 * hand-off (a read suspends unless the lane finished it first). */
static int fast_path(bool fallback)
{
    int bad = 0;
    if (make_tmpdir() != 0)
        FAIL("mkdtemp");
    int fd = open_tmp("f", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        FAIL("open");
    static unsigned char data[16 * 4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = pattern(i);
    if (write(fd, data, sizeof data) != (ssize_t)sizeof data)
        FAIL("write");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    obs_count oc;
    memset(&oc, 0, sizeof oc);
    dagrt_observer ob;
    memset(&ob, 0, sizeof ob);
    ob.fiber_suspend = oc_suspend;
    ob.fiber_resume = oc_resume;
    EXPECT(dagrt_set_observer(rt, &ob, &oc) == 0);
    static const dagrt_node nodes[1] = {
        { .name = "reader", .kind = DAGRT_NODE_TASK, .join = DAGRT_JOIN_AND,
          .flags = DAGRT_NODE_FIBER, .run = fast_reader },
    };
    static const uint32_t succ[1] = { 0 };
    const dagrt_graph g = { .version = DAGRT_GRAPH_VERSION, .nnodes = 1, .nsucc = 0,
                            .name = "io_obs", .nodes = nodes, .succ = succ };
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    fast_ctx x = { rt, fd, 0 };
    EXPECT(dagrt_graph_run(rt, &g, &st, &x) == 0);
    EXPECT(x.bad == 0);
    int s = atomic_load(&oc.suspends);
    EXPECT(s == atomic_load(&oc.resumes));
    dagrt_io_stats is;
    EXPECT(dagrt_get_io_stats(rt, &is) == 0);
    if (strcmp(is.reactor, "io_uring") == 0) {
        if (s > FAST_READS / 2)
            fprintf(stderr, "fast_path: %d suspends for %d page-cache reads\n", s, FAST_READS);
        EXPECT(s <= FAST_READS / 2);
    } else {
        EXPECT(s <= FAST_READS);   /* the lane: a hand-off, unless it won the race to the suspend */
    }
    EXPECT(dagrt_set_observer(rt, NULL, NULL) == 0);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(fd);
    rm_tmpdir("f");
    return bad;
}

int io_fast_path(void) { return fast_path(false); }
int io_fast_path_fb(void) { return fast_path(true); }

/* --------------------------------------------------- batched submits */

#define BATCH_FIBERS 32
#define BATCH_ROUNDS 8

typedef struct batch_ctx {
    dagrt *rt;
    int fd;
    _Atomic int bad;
    uint64_t submits;    /* over the batched rounds */
    int64_t reads;
} batch_ctx;

typedef struct batch_arg {
    batch_ctx *x;
    int i;
    int round;
} batch_arg;

static void batch_reader(void *arg)
{
    batch_arg *a = arg;
    batch_ctx *x = a->x;
    char buf[4096];
    int64_t off = (int64_t)((a->i * 7 + a->round) % 64) * 4096;
    if (dagrt_read(x->rt, x->fd, buf, sizeof buf, off, NULL) != 4096)
        atomic_fetch_add(&x->bad, 1);
    for (int k = 0; k < 4096; k += 511)
        if ((unsigned char)buf[k] != pattern((uint64_t)off + (uint64_t)k)) {
            atomic_fetch_add(&x->bad, 1);
            break;
        }
}

/* One fiber task spawns 32 fibers onto its worker's deque, each reading
 * 4 KiB of a file in the page cache, and waits for them, 8 times. */
static void batch_parent(void *arg)
{
    batch_ctx *x = arg;
    char buf[4096];
    /* The first call starts the reactor; the rounds after it are counted. */
    if (dagrt_read(x->rt, x->fd, buf, sizeof buf, 0, NULL) != 4096)
        atomic_fetch_add(&x->bad, 1);
    dagrt_io_stats s0, s1;
    dagrt_get_io_stats(x->rt, &s0);
    static batch_arg as[BATCH_FIBERS];
    for (int r = 0; r < BATCH_ROUNDS; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < BATCH_FIBERS; i++) {
            as[i] = (batch_arg){ x, i, r };
            if (dagrt_spawn_ex(x->rt, &g, batch_reader, &as[i], DAGRT_SPAWN_FIBER) != 0)
                atomic_fetch_add(&x->bad, 1);
        }
        dagrt_group_wait(x->rt, &g);
    }
    dagrt_get_io_stats(x->rt, &s1);
    x->submits = s1.submits - s0.submits;
    x->reads = (int64_t)(s1.kind[DAGRT_IO_READ].ops - s0.kind[DAGRT_IO_READ].ops);
}

typedef struct batch_wait {
    dagrt *rt;
    dagrt_group *g;
    int rc;
} batch_wait;

static void *batch_waiter(void *arg)
{
    batch_wait *w = arg;
    w->rc = dagrt_group_wait(w->rt, w->g);
    return NULL;
}

/* 32 concurrent reads from fibers, all correct; on io_uring they share
 * system calls (os/reactor_uring.c, BATCHING): a fiber whose worker has
 * more to run leaves its SQE queued, and one submit hands the kernel the
 * lot, so the rounds take fewer submits than reads (one worker: every
 * fiber is on its deque; a submit per round is the aim). Elsewhere
 * submits stays 0. */
static int batch_reads(bool fallback)
{
    int bad = 0;
    if (make_tmpdir() != 0)
        FAIL("mkdtemp");
    int fd = open_tmp("f", O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        FAIL("open");
    static unsigned char data[64 * 4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = pattern(i);
    if (write(fd, data, sizeof data) != (ssize_t)sizeof data)
        FAIL("write");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    static batch_ctx x;
    x = (batch_ctx){ .rt = rt, .fd = fd };
    /* Spawned from here, waited on by a thread outside the runtime (which
     * sleeps, where this one would help and might run the fibers itself:
     * the main thread submits at once). */
    dagrt_group *g = malloc(sizeof *g);   /* heap: no owner, any one thread may wait */
    if (!g)
        FAIL("malloc");
    dagrt_group_init(g);
    EXPECT(dagrt_spawn_ex(rt, g, batch_parent, &x, DAGRT_SPAWN_FIBER) == 0);
    batch_wait w = { rt, g, -100 };
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, batch_waiter, &w) == 0);
    pthread_join(t, NULL);
    EXPECT(w.rc == 0);
    free(g);
    EXPECT(atomic_load(&x.bad) == 0);
    EXPECT(x.reads == BATCH_FIBERS * BATCH_ROUNDS);
    dagrt_io_stats is;
    EXPECT(dagrt_get_io_stats(rt, &is) == 0);
    if (strcmp(is.reactor, "io_uring") == 0) {
        fprintf(stderr, "batch_reads: %llu submits for %lld reads\n",
                (unsigned long long)x.submits, (long long)x.reads);
        EXPECT(x.submits > 0);
        /* Fewer than one per read, with room for the rounds that start
         * while the reactor's thread sleeps in the kernel (submit at once). */
        EXPECT(x.submits < (uint64_t)BATCH_FIBERS * BATCH_ROUNDS / 2);
    } else {
        EXPECT(is.submits == 0);
    }
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(fd);
    rm_tmpdir("f");
    return bad;
}

int io_batch_reads(void) { return batch_reads(false); }
int io_batch_reads_fb(void) { return batch_reads(true); }
