/* io_ops.c - the I/O calls' scenarios, each written once for every
 * system over the shim of io_ops.h (dagrt_read ... dagrt_poll,
 * dagrt_close), on real files in a temporary directory, pipes and real
 * sockets on 127.0.0.1. Each runs twice (wait_list.h): on the default
 * reactor and with the fallback forced (dagrt_config.io_fallback: epoll
 * and its blocking lane on Linux, the blocking lane on Windows), so both
 * paths are checked on every run. What only one system has is in
 * io_ops_posix.c and io_ops_win32.c, the shim's two halves. */
#define _GNU_SOURCE
#include "io_ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

unsigned char pattern(uint64_t off) { return (unsigned char)((off * 131u + (off >> 9)) & 0xff); }

dagrt *make_rt(bool fallback, int workers)
{
    io_net_up();
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.io_fallback = fallback;
    cfg.io_ring_entries = 64;   /* small, so the pool grows under load */
    return dagrt_create(&cfg);
}

io_sock io_socket(int type)
{
    io_net_up();
    return socket(AF_INET, type | IO_SOCK_CLOEXEC, type == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP);
}

static io_sock bound_socket(int type, struct sockaddr_in *a)
{
    io_sock s = io_socket(type);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof *a;
    if (s == IO_SOCK_BAD || bind(s, (struct sockaddr *)a, sizeof *a) != 0 ||
        (type == SOCK_STREAM && listen(s, 8) != 0) || getsockname(s, (struct sockaddr *)a, &l) != 0)
        return IO_SOCK_BAD;
    return s;
}

io_sock udp_socket(struct sockaddr_in *a) { return bound_socket(SOCK_DGRAM, a); }
io_sock tcp_listener(struct sockaddr_in *a) { return bound_socket(SOCK_STREAM, a); }

/* ---------------------------------- files: 10,000 ops from 64 fibers */

#define MANY_FIBERS 64
#define MANY_OPS    10000
#define MANY_BLOCK  512
#define MANY_BLOCKS 1024     /* the file: 512 KiB */

static unsigned char many_all[MANY_BLOCK * MANY_BLOCKS];

typedef struct many_job {
    dagrt *rt;
    io_file fd;
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

/* workers 0: the main thread alone runs the fibers, and reaps their
 * completions itself as it idles (a resumed fiber lands in its own
 * deque's private tail, which no other thread exposes). */
static int file_many_on(bool fallback, int workers)
{
    if (make_tmpdir() != 0)
        FAIL("temporary directory: %s", io_os_why());
    bool ok;
    io_file fd = tmp_file_with("m", many_all, sizeof many_all, &ok);
    if (!ok)
        FAIL("file: %s", io_os_why());
    int bad = 0;
    dagrt *rt = make_rt(fallback, workers);
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
    io_file_close(fd);
    rm_tmpdir("m");
    return bad;
}

static int file_many(bool fallback)
{
    for (size_t i = 0; i < sizeof many_all; i++)
        many_all[i] = pattern(i);
    return file_many_on(fallback, 2) + file_many_on(fallback, 0);
}

int io_file_many(void) { return file_many(false); }
int io_file_many_fb(void) { return file_many(true); }

/* ------------------------------------------------------ sockets */

typedef struct udp_job {
    dagrt *rt;
    io_sock s;
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
        int64_t n = dagrt_recvfrom(j->rt, H(j->s), buf, sizeof buf, (struct sockaddr *)&from, &fl, NULL);
        EXPECT(n > 0);
        EXPECT(fl == sizeof from && from.sin_port == j->peer.sin_port);
        if (n <= 0)
            break;
        EXPECT(dagrt_sendto(j->rt, H(j->s), buf, (size_t)n, (struct sockaddr *)&from, fl, NULL) == n);
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
        EXPECT(dagrt_sendto(j->rt, H(j->s), out, (size_t)len, (struct sockaddr *)&j->peer, sizeof j->peer,
                            NULL) == len);
        int64_t n = dagrt_recvfrom(j->rt, H(j->s), in, sizeof in, NULL, NULL, NULL);
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
    io_sock sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa == IO_SOCK_BAD || sb == IO_SOCK_BAD)
        FAIL("udp sockets: %s", io_os_why());
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
    EXPECT(dagrt_sendto(rt, H(sb), huge, sizeof huge, (struct sockaddr *)&a, sizeof a, NULL) == DAGRT_EMSGSIZE);
#if defined(_WIN32)
    EXPECT(dagrt_last_os_error() == WSAEMSGSIZE);
    /* a datagram larger than the receive buffer: EMSGSIZE (Linux returns
     * the truncated bytes), the first bytes in the buffer */
    EXPECT(sendto(sb, "0123456789", 10, 0, (struct sockaddr *)&a, sizeof a) == 10);
    char small[4] = { 0 };
    EXPECT(dagrt_recvfrom(rt, H(sa), small, sizeof small, NULL, NULL, NULL) == DAGRT_EMSGSIZE);
    EXPECT(dagrt_last_os_error() == WSAEMSGSIZE);
    EXPECT(memcmp(small, "0123", 4) == 0);
#endif
    dagrt_destroy(rt);
    io_sock_close(sa);
    io_sock_close(sb);
    return bad;
}

int io_udp(void) { return udp(false); }
int io_udp_fb(void) { return udp(true); }

typedef struct tcp_job {
    dagrt *rt;
    io_sock ls;
    struct sockaddr_in addr;
    int bad_server, bad_client;   /* one per fiber: they run at once */
} tcp_job;

static void tcp_server(void *arg)
{
    tcp_job *j = arg;
    int bad = 0;
    dagrt_handle c = -1;
    EXPECT(dagrt_accept(j->rt, H(j->ls), &c, NULL) == 0);
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
    io_sock s = io_socket(SOCK_STREAM);
    EXPECT(s != IO_SOCK_BAD);
    EXPECT(dagrt_connect(j->rt, H(s), (struct sockaddr *)&j->addr, sizeof j->addr, NULL) == 0);
    for (int i = 0; i < 50; i++) {
        char out[64], in[64];
        int len = snprintf(out, sizeof out, "line %d of the echo", i);
        EXPECT(dagrt_sendto(j->rt, H(s), out, (size_t)len, NULL, 0, NULL) == len);
        int got = 0;
        while (got < len) {
            int64_t n = dagrt_recvfrom(j->rt, H(s), in + got, sizeof in - (size_t)got, NULL, NULL, NULL);
            if (n <= 0)
                break;
            got += (int)n;
        }
        EXPECT(got == len && memcmp(in, out, (size_t)len) == 0);
    }
    shutdown(s, IO_SHUT_WR);
    char x;
    EXPECT(dagrt_read(j->rt, H(s), &x, 1, -1, NULL) == 0);   /* the server closed: end of stream */
    EXPECT(dagrt_close(j->rt, H(s)) == 0);
    j->bad_client = bad;
}

static int tcp(bool fallback)
{
    int bad = 0;
    tcp_job j = { 0 };
    j.ls = tcp_listener(&j.addr);
    if (j.ls == IO_SOCK_BAD)
        FAIL("listener: %s", io_os_why());
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
    io_sock tmp = tcp_listener(&freea);
    io_sock_close(tmp);
    io_sock s = io_socket(SOCK_STREAM);
    int r = dagrt_connect(rt, H(s), (struct sockaddr *)&freea, sizeof freea, NULL);   /* the main thread */
    EXPECT(r == DAGRT_ECONNREFUSED);
    EXPECT(dagrt_last_os_error() == IO_OS_ECONNREFUSED);
    if (r != DAGRT_ECONNREFUSED)
        fprintf(stderr, "tcp: refused connect gave %d (os %d)\n", r, dagrt_last_os_error());
    io_sock_close(s);
    /* Address in use: bind is the system's, but the code is on the list. */
    EXPECT(strcmp(dagrt_strerror(DAGRT_EADDRINUSE), "address already in use") == 0);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_sock_close(j.ls);
    return bad;
}

int io_tcp(void) { return tcp(false); }
int io_tcp_fb(void) { return tcp(true); }

/* ----------------------------------- parked calls ended from outside */

void park_recv(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, j->h, buf, sizeof buf, NULL, NULL, NULL);
}

void park_read(void *arg)
{
    park_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_read(j->rt, j->h, buf, sizeof buf, -1, NULL);
}

void wait_parked(park_job *j, int n)
{
    for (int i = 0; i < n; i++)
        while (!atomic_load(&j[i].started))
            io_nap_us(100);
    io_nap_us(20000);
}

/* A socket closed (dagrt_close) under a parked receive: the receive ends
 * with EBADF, nothing hangs. */
static int close_parked(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a;
    io_sock s = udp_socket(&a);
    if (s == IO_SOCK_BAD)
        FAIL("udp socket");
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    park_job j = { rt, H(s), 0, 1 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, park_recv, &j, DAGRT_SPAWN_FIBER) == 0);
    wait_parked(&j, 1);
    EXPECT(dagrt_close(rt, H(s)) == 0);
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
    io_sock s;
    dagrt_cancel *scope;
    _Atomic int started;
    _Atomic int64_t result;   /* the test polls it while the fiber may store it */
} scope_job;

static void scope_recv(void *arg)
{
    scope_job *j = arg;
    char buf[16];
    atomic_store(&j->started, 1);
    j->result = dagrt_recvfrom(j->rt, H(j->s), buf, sizeof buf, NULL, NULL, j->scope);
}

/* A receive with no traffic, cancelled by its scope: ECANCELED, in the
 * kernel (nothing else would end it; CancelIoEx on the port); a sibling
 * under the same parent and the parent's own receive carry on, and get
 * their datagrams. */
static int scope_cancel(bool fallback)
{
    int bad = 0;
    struct sockaddr_in a[3];
    io_sock s[3];
    for (int i = 0; i < 3; i++)
        if ((s[i] = udp_socket(&a[i])) == IO_SOCK_BAD)
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
            io_nap_us(100);
    io_nap_us(20000);
    dagrt_cancel_request(&child);
    for (int k = 0; k < 2000 && j[0].result == 1; k++)
        io_nap_us(1000);
    EXPECT(j[0].result == DAGRT_ECANCELED);
    EXPECT(j[1].result == 1 && j[2].result == 1);   /* still parked */
    io_sock tx = io_socket(SOCK_DGRAM);
    for (int i = 1; i < 3; i++)
        EXPECT(sendto(tx, "hi", 2, 0, (struct sockaddr *)&a[i], sizeof a[i]) == 2);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j[1].result == 2 && j[2].result == 2);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_RECVFROM].cancels == 1);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_sock_close(tx);
    for (int i = 0; i < 3; i++)
        io_sock_close(s[i]);
    return bad;
}

int io_scope_cancel(void) { return scope_cancel(false); }
int io_scope_cancel_fb(void) { return scope_cancel(true); }

/* Cancels racing completions: pairs of fibers ping-pong datagrams while
 * the main thread cancels the scope of one receive after another at
 * random moments. Every receive ends exactly once, with its datagram or
 * ECANCELED; none hangs, none is resumed twice (the record would be
 * reused under it: the sanitizers and the byte checks see that). */
#define RACE_ROUNDS 400
typedef struct race_job {
    dagrt *rt;
    io_sock s;
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
        int64_t n = dagrt_recvfrom(j->rt, H(j->s), buf, sizeof buf, NULL, NULL, &j->scopes[i]);
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
    io_sock s = udp_socket(&a);
    io_sock tx = io_socket(SOCK_DGRAM);
    if (s == IO_SOCK_BAD || tx == IO_SOCK_BAD)
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
            io_nap_us(50);
    }
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.bad == 0);
    EXPECT(j.got + j.canceled == RACE_ROUNDS);
    EXPECT(j.got <= sent);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_sock_close(s);
    io_sock_close(tx);
    return bad;
}

int io_cancel_race(void) { return cancel_race(false); }
int io_cancel_race_fb(void) { return cancel_race(true); }

/* --------------------------------------- hot workers serve completions */

/* With a hot worker at an elevated priority: UDP ping-pong through fibers
 * still works (their resumes go to the hot lane), and the hot worker's
 * raised priority is either in place on that thread (never the process's
 * or the main thread's) or counted as refused. */
static int hot(bool fallback)
{
    int bad = 0;
    int base = thread_priority();
    int before = threads_raised(base);
    io_net_up();
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
    io_sock sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa == IO_SOCK_BAD || sb == IO_SOCK_BAD)
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
    /* The hot worker raises its own priority when it starts, which may come
     * after the ping-pong (the other threads can run all of it): wait for
     * it, or for the refusal, up to 5 s. */
    int after = threads_raised(base);
    for (int i = 0; i < 500 && after < before + 1 && st.priority_refused == 0; i++) {
        io_nap_us(10000);
        dagrt_get_io_stats(rt, &st);
        after = threads_raised(base);
    }
    /* The hot worker, and the reactor's threads if its call started them
     * (on Linux a thread inherits its creator's nice value); the main
     * thread and the other worker stay as they were. */
    int at_base = threads_at(base);
    if (st.priority_refused == 0)
        EXPECT(after >= before + 1 && at_base >= 2);
    EXPECT(thread_priority() == base);   /* the main thread's own */
    if (bad)
        fprintf(stderr, "io_hot: base %d, threads raised: %d before, %d after, %d at base, refused %llu\n",
                base, before, after, at_base, (unsigned long long)st.priority_refused);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_sock_close(sa);
    io_sock_close(sb);
    /* A bad priority is refused at create. */
    cfg.hot_priority = 7;
    int err = 0;
    EXPECT(dagrt_create_ex(&cfg, &err) == NULL && err == DAGRT_EINVAL);
    return bad;
}

int io_hot(void) { return hot(false); }
int io_hot_fb(void) { return hot(true); }

/* ------------------------------------------------ files, one fiber */

typedef struct file_job {
    dagrt *rt;
    io_file fd, dir;
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
    /* what the handle keeps of its own: its position (the system's side) */
    bad += io_file_positions(rt, j->fd, "a", w);
    /* a directory: an error, with the system's reason kept */
    int64_t e = dagrt_read(rt, H(j->dir), r, 16, 0, NULL);
    EXPECT(e < 0 && dagrt_last_os_error() != 0);
    if (IO_DIR_READ_ERR != 0) {
        EXPECT(e == IO_DIR_READ_ERR);
        EXPECT(dagrt_last_os_error() == IO_OS_DIR_READ);
    }
    /* a handle that is not open: EBADF, with the system's reason kept */
    e = dagrt_read(rt, IO_NOT_OPEN, r, 16, 0, NULL);
    EXPECT(e == DAGRT_EBADF);
    EXPECT(dagrt_last_os_error() == IO_OS_EBADF);
    EXPECT(strcmp(dagrt_strerror(DAGRT_EBADF), "unknown error") != 0);
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
        FAIL("temporary directory: %s", io_os_why());
    int bad = 0;
    file_job j = { 0 };
    j.fd = io_file_create("a");
    j.dir = io_dir_open();
    if (j.fd == IO_FILE_BAD || j.dir == IO_FILE_BAD)
        FAIL("open: %s", io_os_why());
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
    /* A missing file is the system's open (the runtime opens nothing). */
    EXPECT(io_open_missing_fails());
    dagrt_destroy(rt);
    io_file_close(j.fd);
    io_file_close(j.dir);
    rm_tmpdir("a");
    return bad;
}

int io_file_basic(void) { return file_basic(false); }
int io_file_basic_fb(void) { return file_basic(true); }

/* ------------------------------------ destroy with calls parked in it */

/* dagrt_destroy with fibers parked on reads and receives that never
 * complete (pipes, on Windows overlapped and not; two receives on one
 * socket): every call returns DAGRT_ECANCELED, destroy returns, nothing
 * leaks (LSan in the sanitizer runs). */
#define PARKED_PIPES 4
#define PARKED (3 * PARKED_PIPES)
static int destroy_parked(bool fallback)
{
    int bad = 0;
    io_file prd[PARKED_PIPES], pwr[PARKED_PIPES];
    struct sockaddr_in a[PARKED_PIPES];
    io_sock socks[PARKED_PIPES];
    park_job j[PARKED];
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    int np = 0;
    for (int i = 0; i < PARKED_PIPES; i++) {
        if (io_pipe_open(&prd[i], &pwr[i], i) != 0 || (socks[i] = udp_socket(&a[i])) == IO_SOCK_BAD)
            FAIL("pipe/socket: %s", io_os_why());
        j[np] = (park_job){ rt, H(prd[i]), 0, 1 };
        EXPECT(dagrt_spawn_ex(rt, NULL, park_read, &j[np++], DAGRT_SPAWN_FIBER) == 0);
        for (int k = 0; k < 2; k++) {   /* two on one socket */
            j[np] = (park_job){ rt, H(socks[i]), 0, 1 };
            EXPECT(dagrt_spawn_ex(rt, NULL, park_recv, &j[np++], DAGRT_SPAWN_FIBER) == 0);
        }
    }
    wait_parked(j, np);
    dagrt_destroy(rt);
    for (int i = 0; i < np; i++) {
        EXPECT(j[i].result == DAGRT_ECANCELED);
        if (j[i].result != DAGRT_ECANCELED)
            fprintf(stderr, "destroy_parked: %d got %lld\n", i, (long long)j[i].result);
    }
    for (int i = 0; i < PARKED_PIPES; i++) {
        io_pipe_close(prd[i], pwr[i]);
        io_sock_close(socks[i]);
    }
    return bad;
}

int io_destroy_reads(void) { return destroy_parked(false); }
int io_destroy_reads_fb(void) { return destroy_parked(true); }

/* ----------------------------- readiness, and callers that are not fibers */

typedef struct poll_job {
    dagrt *rt;
    io_pair *p;
    _Atomic int result;   /* read while the waiter may still store it ("still waiting") */
} poll_job;

static void poll_fiber(void *arg)
{
    poll_job *j = arg;
    j->result = dagrt_poll(j->rt, io_pair_rd(j->p), DAGRT_POLL_IN, DAGRT_FOREVER, NULL);
}

static void get_one(poll_job *j)
{
    char c = 0;
    int64_t r = io_pair_get(j->rt, j->p, &c, NULL);
    j->result = r == 1 ? c : (int)r;
}

static void *foreign_reader(void *arg) { get_one(arg); return NULL; }   /* blocks this thread */
static void plain_read(void *arg) { get_one(arg); }                     /* a plain task: helps */

static int poll_and_callers(bool fallback)
{
    int bad = 0;
    io_pair p1, p2, p3;
    if (io_pair_open(&p1) || io_pair_open(&p2) || io_pair_open(&p3))
        FAIL("pairs: %s", io_os_why());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    /* A fiber parked on readiness wakes once its handle has a byte. */
    poll_job pj = { rt, &p1, -100 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, poll_fiber, &pj, DAGRT_SPAWN_FIBER) == 0);
    io_nap_us(10000);
    EXPECT(pj.result == -100);   /* still waiting */
    EXPECT(io_pair_put(&p1, 'x'));
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(pj.result == DAGRT_POLL_IN);
    /* Writable at once. A deadline already passed still looks once: the
     * byte is still in p1 (nobody read it), so p1 is ready and returns its
     * set; the empty p3 times out. */
    EXPECT(dagrt_poll(rt, io_pair_writable(&p1), DAGRT_POLL_OUT, DAGRT_FOREVER, NULL) == DAGRT_POLL_OUT);
    int past[3] = {
        dagrt_poll(rt, io_pair_rd(&p1), DAGRT_POLL_IN, 0, NULL),
        dagrt_poll(rt, io_pair_rd(&p1), DAGRT_POLL_IN, dagrt_now_ns(), NULL),
        dagrt_poll(rt, io_pair_writable(&p1), DAGRT_POLL_OUT, 1, NULL),
    };
    /* On every system and reactor (io_poll_past.c hammers it). */
    EXPECT(past[0] == DAGRT_POLL_IN);
    EXPECT(past[1] == DAGRT_POLL_IN);
    EXPECT(past[2] == DAGRT_POLL_OUT);
    EXPECT(dagrt_poll(rt, io_pair_rd(&p3), DAGRT_POLL_IN, 0, NULL) == DAGRT_ETIMEDOUT);
    EXPECT(dagrt_poll(rt, io_pair_rd(&p3), DAGRT_POLL_IN, dagrt_now_ns(), NULL) == DAGRT_ETIMEDOUT);
    EXPECT(dagrt_poll(rt, io_pair_rd(&p1), 64, DAGRT_FOREVER, NULL) == DAGRT_EINVAL);
    /* A thread that is not the runtime's blocks in the same reactor. */
    poll_job fj = { rt, &p2, -100 };
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, foreign_reader, &fj) == 0);
    io_nap_us(10000);
    EXPECT(io_pair_put(&p2, 'f'));
    pthread_join(t, NULL);
    EXPECT(fj.result == 'f');
    /* A plain task on a worker helps while it waits. */
    poll_job tj = { rt, &p3, -100 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn(rt, &g, plain_read, &tj) == 0);
    io_nap_us(10000);
    EXPECT(io_pair_put(&p3, 't'));
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(tj.result == 't');
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_pair_close(&p1);
    io_pair_close(&p2);
    io_pair_close(&p3);
    return bad;
}

int io_poll_callers(void) { return poll_and_callers(false); }
int io_poll_callers_fb(void) { return poll_and_callers(true); }

/* --------------------------------------------------- a poll's deadline */

typedef struct dl_job {
    dagrt *rt;
    dagrt_handle h;
    int result;
    uint64_t ns;
} dl_job;

static void dl_poll(void *arg)
{
    dl_job *j = arg;
    uint64_t t0 = dagrt_now_ns();
    j->result = dagrt_poll(j->rt, j->h, DAGRT_POLL_IN, t0 + 5000000, NULL);   /* 5 ms */
    j->ns = dagrt_now_ns() - t0;
}

/* A readiness wait with a deadline on a handle that stays empty:
 * ETIMEDOUT, no earlier than the deadline; from a fiber and from the main
 * thread. */
static int poll_deadline(bool fallback)
{
    int bad = 0;
    io_pair p;
    if (io_pair_open(&p) != 0)
        FAIL("pair: %s", io_os_why());
    dagrt *rt = make_rt(fallback, 1);
    if (!rt)
        FAIL("dagrt_create");
    dl_job j = { rt, io_pair_rd(&p), 1, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_poll, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(j.result == DAGRT_ETIMEDOUT);
    EXPECT(j.ns >= 5000000);
    dl_job m = { rt, io_pair_rd(&p), 1, 0 };
    dl_poll(&m);
    EXPECT(m.result == DAGRT_ETIMEDOUT);
    EXPECT(m.ns >= 5000000);
    /* ready before the deadline: the ready set, not a timeout */
    EXPECT(io_pair_put(&p, 'r'));
    EXPECT(dagrt_poll(rt, io_pair_rd(&p), DAGRT_POLL_IN, dagrt_now_ns() + 1000000000, NULL) == DAGRT_POLL_IN);
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[DAGRT_IO_POLL].timeouts == 2);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_pair_close(&p);
    return bad;
}

int io_poll_deadline(void) { return poll_deadline(false); }
int io_poll_deadline_fb(void) { return poll_deadline(true); }

/* --------------------------------------------------------- the codes */

/* Every code a call returns has a message that fits each use: EPERM is
 * both "not from this thread" and "the mutex is not locked"
 * (dagrt_mutex_unlock, dagrt_cond_wait); -7, once EDEADLK, which nothing
 * returned, is no code. */
int io_error_codes(void)
{
    int bad = 0;
    const char *perm = dagrt_strerror(DAGRT_EPERM);
    EXPECT(strstr(perm, "thread") != NULL);
    EXPECT(strstr(perm, "not locked") != NULL);
    EXPECT(strcmp(dagrt_strerror(-7), "unknown error") == 0);
    dagrt_mutex mu;
    dagrt_mutex_init(&mu);
    EXPECT(dagrt_mutex_unlock(&mu) == DAGRT_EPERM);
    for (int e = -1; e > DAGRT_ERR_LAST_; e--)
        if (e != -7)
            EXPECT(strcmp(dagrt_strerror(e), "unknown error") != 0);
    return bad;
}
