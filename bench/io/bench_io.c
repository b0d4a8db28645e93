/*
 * bench_io.c - the I/O calls against the raw system, side by side in one
 * run, rounds interleaved (docs/benchmarks-log.md, "I/O"):
 *   latency  a fiber task reading 4 KiB at random offsets of a file in the
 *            page cache, one read at a time (dagrt_read: submit, suspend,
 *            completion, resume) against liburing's submit-and-wait of the
 *            same reads from a plain thread;
 *   qd32     4 KiB random reads at queue depth 32: 32 fiber tasks, each
 *            with one read in flight, against one thread keeping 32 in
 *            flight on a raw ring;
 *   udp      UDP ping-pong on 127.0.0.1: two fiber tasks against two
 *            threads with blocking sockets;
 *   frame64  a bench_frame-like frame (32 nodes of 1 µs, bench_frame.dag's
 *            shape rebuilt by hand: 1-4-8-8-4-4-2-1, two predecessors each)
 *            with 64 fiber tasks parked on reads of a pipe that never gets
 *            data, against the same frame with none (rounds interleaved,
 *            the order swapped every round);
 *   served   completions served per 16.7 ms frame by one hot worker
 *            (workers 1, hot_workers 1): 32 fiber tasks reading 4 KiB of
 *            the page-cached file in a loop, counted over 30 frames of
 *            wall time while the main thread sleeps (no raw side: JLib
 *            reports about 980 on its machine, for scale only).
 * Each line: ns per operation (best of the rounds, and the median), and
 * the ratio dagrt / raw. The runtime runs on the reactor it picks
 * (DAGRT_IO=fallback: the epoll and lane path).
 * usage: bench_io [--workers N] [rounds] [ops] [rows]
 * --workers: the runtime's workers in every row but `served` (default 1;
 * scripts/scaling.sh runs 1, 3, 7 and 15).
 * rows: a comma-separated subset of latency,qd32,udp,frame64,served (all
 * by default), to profile one row alone (valgrind, perf).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dagrt.h"

#define FILE_BYTES (64u << 20)   /* 64 MiB: page-cached after the first pass */
#define BLK 4096u
#define QD 32

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fd;
static long ops;
static const char *rows;   /* NULL: every row */

static int row_on(const char *name)
{
    if (!rows)
        return 1;
    size_t n = strlen(name);
    for (const char *p = rows; (p = strstr(p, name)) != NULL; p += n)
        if ((p == rows || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

static uint64_t rnd_off(uint64_t *x)
{
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    return ((*x >> 33) % (FILE_BYTES / BLK)) * BLK;
}

/* ------------------------------------------------------------- latency */

typedef struct job {
    dagrt *rt;
    long n;
    uint64_t seed;
    int s;
    struct sockaddr_in peer;
    int bad;
} job;

static void lat_fiber(void *arg)
{
    job *j = arg;
    char buf[BLK];
    for (long i = 0; i < j->n; i++)
        if (dagrt_read(j->rt, fd, buf, BLK, (int64_t)rnd_off(&j->seed), NULL) != BLK)
            j->bad++;
}

static double run_fibers(dagrt *rt, void (*fn)(void *), int nf, long per)
{
    job js[QD];
    dagrt_group g;
    dagrt_group_init(&g);
    uint64_t t0 = now_ns();
    for (int i = 0; i < nf; i++) {
        js[i] = (job){ rt, per, (uint64_t)i * 7919u + 1, 0, {0}, 0 };
        dagrt_spawn_ex(rt, &g, fn, &js[i], DAGRT_SPAWN_FIBER);
    }
    dagrt_group_wait(rt, &g);
    uint64_t t = now_ns() - t0;
    for (int i = 0; i < nf; i++)
        if (js[i].bad)
            fprintf(stderr, "bench_io: %d failed reads\n", js[i].bad);
    return (double)t / (double)(per * nf);
}

static double raw_latency(struct io_uring *r)
{
    char buf[BLK];
    uint64_t seed = 1;
    uint64_t t0 = now_ns();
    for (long i = 0; i < ops; i++) {
        struct io_uring_sqe *s = io_uring_get_sqe(r);
        io_uring_prep_read(s, fd, buf, BLK, rnd_off(&seed));
        io_uring_submit(r);
        struct io_uring_cqe *c;
        io_uring_wait_cqe(r, &c);
        if (c->res != (int)BLK)
            fprintf(stderr, "bench_io: raw read %d\n", c->res);
        io_uring_cqe_seen(r, c);
    }
    return (double)(now_ns() - t0) / (double)ops;
}

static double raw_qd32(struct io_uring *r)
{
    static char bufs[QD][BLK];
    uint64_t seed = 3;
    long submitted = 0, done = 0;
    uint64_t t0 = now_ns();
    for (int i = 0; i < QD && submitted < ops; i++, submitted++) {
        struct io_uring_sqe *s = io_uring_get_sqe(r);
        io_uring_prep_read(s, fd, bufs[i], BLK, rnd_off(&seed));
        io_uring_sqe_set_data64(s, (uint64_t)i);
    }
    io_uring_submit(r);
    while (done < ops) {
        struct io_uring_cqe *c;
        io_uring_wait_cqe(r, &c);
        int i = (int)io_uring_cqe_get_data64(c);
        io_uring_cqe_seen(r, c);
        done++;
        if (submitted < ops) {
            struct io_uring_sqe *s = io_uring_get_sqe(r);
            io_uring_prep_read(s, fd, bufs[i], BLK, rnd_off(&seed));
            io_uring_sqe_set_data64(s, (uint64_t)i);
            io_uring_submit(r);
            submitted++;
        }
    }
    return (double)(now_ns() - t0) / (double)ops;
}

/* ---------------------------------------------------------------- udp */

static int udp_bound(struct sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof *a;
    bind(s, (struct sockaddr *)a, sizeof *a);
    getsockname(s, (struct sockaddr *)a, &l);
    return s;
}

static void udp_fiber_ping(void *arg)
{
    job *j = arg;
    char b[32] = "ping";
    for (long i = 0; i < j->n; i++) {
        dagrt_sendto(j->rt, j->s, b, 8, (struct sockaddr *)&j->peer, sizeof j->peer, NULL);
        if (dagrt_recvfrom(j->rt, j->s, b, sizeof b, NULL, NULL, NULL) != 8)
            j->bad++;
    }
}

static void udp_fiber_pong(void *arg)
{
    job *j = arg;
    char b[32];
    for (long i = 0; i < j->n; i++) {
        if (dagrt_recvfrom(j->rt, j->s, b, sizeof b, NULL, NULL, NULL) != 8)
            j->bad++;
        dagrt_sendto(j->rt, j->s, b, 8, (struct sockaddr *)&j->peer, sizeof j->peer, NULL);
    }
}

static double udp_fibers(dagrt *rt, long n)
{
    struct sockaddr_in a, b;
    int sa = udp_bound(&a), sb = udp_bound(&b);
    job ping = { rt, n, 0, sa, b, 0 }, pong = { rt, n, 0, sb, a, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    uint64_t t0 = now_ns();
    dagrt_spawn_ex(rt, &g, udp_fiber_pong, &pong, DAGRT_SPAWN_FIBER);
    dagrt_spawn_ex(rt, &g, udp_fiber_ping, &ping, DAGRT_SPAWN_FIBER);
    dagrt_group_wait(rt, &g);
    uint64_t t = now_ns() - t0;
    close(sa);
    close(sb);
    return (double)t / (double)n;
}

static void *udp_thread_pong(void *arg)
{
    job *j = arg;
    char b[32];
    for (long i = 0; i < j->n; i++) {
        recv(j->s, b, sizeof b, 0);
        sendto(j->s, b, 8, 0, (struct sockaddr *)&j->peer, sizeof j->peer);
    }
    return NULL;
}

static double udp_threads(long n)
{
    struct sockaddr_in a, b;
    int sa = udp_bound(&a), sb = udp_bound(&b);
    job pong = { NULL, n, 0, sb, a, 0 };
    pthread_t t;
    uint64_t t0 = now_ns();
    pthread_create(&t, NULL, udp_thread_pong, &pong);
    char buf[32] = "ping";
    for (long i = 0; i < n; i++) {
        sendto(sa, buf, 8, 0, (struct sockaddr *)&b, sizeof b);
        recv(sa, buf, sizeof buf, 0);
    }
    pthread_join(t, NULL);
    uint64_t el = now_ns() - t0;
    close(sa);
    close(sb);
    return (double)el / (double)n;
}

/* ------------------------------------------------------------- frame64 */

#define FN 32
static const int levels[] = { 1, 4, 8, 8, 4, 4, 2, 1 };
static dagrt_node fnodes[FN];
static uint32_t fsucc[2 * FN];
static dagrt_graph fgraph;
static dagrt_node_state fstates[FN];
static dagrt_graph_state fstate = DAGRT_GRAPH_STATE_INIT(fstates);

static void body_1us(void *ctx)
{
    (void)ctx;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 1000)
        ;
}

/* bench_frame.dag's shape: node k of a level waits for nodes k and k+1
 * (mod the width) of the level before (the first level after the input
 * waits for the input alone). */
static void frame_build(void)
{
    int first[8], nl = (int)(sizeof levels / sizeof levels[0]), n = 0;
    for (int l = 0; l < nl; l++) {
        first[l] = n;
        n += levels[l];
    }
    uint32_t npred[FN] = { 0 };
    /* preds of each node, then successors grouped per node */
    int pred[FN][2], np[FN];
    for (int l = 0; l < nl; l++)
        for (int k = 0; k < levels[l]; k++) {
            int v = first[l] + k;
            np[v] = 0;
            if (l == 0)
                continue;
            int w = levels[l - 1];
            pred[v][np[v]++] = first[l - 1] + k % w;
            if (w > 1)
                pred[v][np[v]++] = first[l - 1] + (k + 1) % w;
        }
    uint32_t ns = 0;
    for (int u = 0; u < FN; u++) {
        fnodes[u] = (dagrt_node){ .name = "n", .kind = DAGRT_NODE_TASK, .join = DAGRT_JOIN_AND,
                                  .run = body_1us, .succ_first = ns };
        for (int v = u + 1; v < FN; v++)
            for (int i = 0; i < np[v]; i++)
                if (pred[v][i] == u)
                    fsucc[ns++] = (uint32_t)v;
        fnodes[u].nsucc = ns - fnodes[u].succ_first;
    }
    for (int v = 0; v < FN; v++)
        npred[v] = (uint32_t)np[v];
    for (int v = 0; v < FN; v++)
        fnodes[v].npred = npred[v];
    fgraph = (dagrt_graph){ .version = DAGRT_GRAPH_VERSION, .nnodes = FN, .nsucc = ns,
                            .name = "bench_io_frame", .nodes = fnodes, .succ = fsucc };
}

static double frames(dagrt *rt, int nframes)
{
    uint64_t t0 = now_ns();
    for (int i = 0; i < nframes; i++)
        if (dagrt_graph_run(rt, &fgraph, &fstate, NULL) != 0)
            fprintf(stderr, "bench_io: frame failed\n");
    return (double)(now_ns() - t0) / (double)nframes;
}

typedef struct parked {
    dagrt *rt;
    int fd;
    dagrt_cancel *c;
    char b;
    int64_t r;
} parked;

static void parked_read(void *arg)
{
    parked *p = arg;
    p->r = dagrt_read(p->rt, p->fd, &p->b, 1, -1, p->c);
}

/* Frame time with 64 fibers parked on reads of a silent pipe. */
static double frames_parked(dagrt *rt, int nframes)
{
    int pp[2];
    if (pipe(pp) != 0)
        return 0;
    static parked ps[64];
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 64; i++) {
        ps[i] = (parked){ rt, pp[0], &c, 0, 1 };
        dagrt_spawn_ex(rt, &g, parked_read, &ps[i], DAGRT_SPAWN_FIBER);
    }
    frames(rt, 20);   /* the 64 reach their reads and park */
    double t = frames(rt, nframes);
    dagrt_cancel_request(&c);
    dagrt_group_wait(rt, &g);
    for (int i = 0; i < 64; i++)
        if (ps[i].r != DAGRT_ECANCELED)
            fprintf(stderr, "bench_io: a parked read returned %lld\n", (long long)ps[i].r);
    close(pp[0]);
    close(pp[1]);
    return t;
}

/* -------------------------------------------------------------- served */

typedef struct srv {
    dagrt *rt;
    _Atomic long *count;
    _Atomic int *stop;
    uint64_t seed;
} srv;

static void served_fiber(void *arg)
{
    srv *s = arg;
    char buf[BLK];
    /* relaxed: a count and a flag read by the bench only */
    while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
        if (dagrt_read(s->rt, fd, buf, BLK, (int64_t)rnd_off(&s->seed), NULL) == BLK)
            atomic_fetch_add_explicit(s->count, 1, memory_order_relaxed);
    }
}

/* Completions per 16.7 ms by one hot worker, over 30 frames of wall time. */
static double served_per_frame(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.hot_workers = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 0;
    _Atomic long count = 0;
    _Atomic int stop = 0;
    static srv ss[QD];
    dagrt_group *g = malloc(sizeof *g);
    dagrt_group_init(g);
    for (int i = 0; i < QD; i++) {
        ss[i] = (srv){ rt, &count, &stop, (uint64_t)i * 104729u + 5 };
        dagrt_spawn_ex(rt, g, served_fiber, &ss[i], DAGRT_SPAWN_FIBER);
    }
    struct timespec frame = { 0, 16700000 };
    nanosleep(&frame, NULL);   /* warm */
    long c0 = atomic_load(&count);
    uint64_t t0 = now_ns();
    for (int i = 0; i < 30; i++)
        nanosleep(&frame, NULL);
    long c1 = atomic_load(&count);
    uint64_t el = now_ns() - t0;
    atomic_store(&stop, 1);
    dagrt_group_wait(rt, g);
    free(g);
    dagrt_destroy(rt);
    return (double)(c1 - c0) * 16.7e6 / (double)el;
}

/* ---------------------------------------------------------------- main */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, const char *us, const char *them, double *a, double *b, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_d);
    qsort(b, (size_t)n, sizeof *b, cmp_d);
    printf("%-8s %-22s best %8.0f ns  median %8.0f ns | %-22s best %8.0f ns  median %8.0f ns | ratio (median) %.2fx\n",
           what, us, a[0], a[n / 2], them, b[0], b[n / 2], a[n / 2] / b[n / 2]);
}

int main(int argc, char **argv)
{
    int workers = 1;
    if (argc > 2 && strcmp(argv[1], "--workers") == 0) {
        workers = atoi(argv[2]);
        if (workers < 1 || workers > 255)
            return 2;
        argc -= 2;
        argv += 2;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    ops = argc > 2 ? atol(argv[2]) : 20000;
    rows = argc > 3 ? argv[3] : NULL;
    if (rounds < 1 || rounds > 64 || ops < QD)
        return 2;
    char path[] = "/tmp/bench_io_XXXXXX";
    fd = mkstemp(path);
    if (fd < 0)
        return 1;
    unlink(path);
    static char blk[1 << 20];
    memset(blk, 'b', sizeof blk);
    for (unsigned i = 0; i < FILE_BYTES / sizeof blk; i++)
        if (write(fd, blk, sizeof blk) != (ssize_t)sizeof blk)
            return 1;
    for (off_t o = 0; o < FILE_BYTES; o += (off_t)sizeof blk)   /* into the page cache */
        if (pread(fd, blk, sizeof blk, o) <= 0)
            return 1;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    dagrt *rt = dagrt_create(&cfg);
    struct io_uring ring;
    if (!rt || io_uring_queue_init(64, &ring, 0) != 0)
        return 1;
    double la[64], lb[64], qa[64], qb[64], ua[64], ub[64];
    uint64_t qsub = 0, qreads = 0;   /* io_uring submits during the qd32 rows */
    run_fibers(rt, lat_fiber, 1, 1000);   /* warm: the reactor, the pool, the fibers */
    int on_lat = row_on("latency"), on_qd = row_on("qd32"), on_udp = row_on("udp");
    int on_fr = row_on("frame64"), on_sv = row_on("served");
    for (int r = 0; r < rounds; r++) {
        if (on_lat) {
            la[r] = run_fibers(rt, lat_fiber, 1, ops);
            lb[r] = raw_latency(&ring);
        }
        if (on_qd) {
            dagrt_io_stats q0, q1;
            dagrt_get_io_stats(rt, &q0);
            qa[r] = run_fibers(rt, lat_fiber, QD, ops / QD);
            dagrt_get_io_stats(rt, &q1);
            qsub += q1.submits - q0.submits;
            qreads += (uint64_t)(ops / QD) * QD;
            qb[r] = raw_qd32(&ring);
        }
        if (on_udp) {
            ua[r] = udp_fibers(rt, ops / 4);
            ub[r] = udp_threads(ops / 4);
        }
    }
    frame_build();
    int nfr = ops / 20 < 50 ? 50 : (int)(ops / 20);
    double fa[64], fb[64], sv[64];
    if (on_fr)
        frames(rt, 100);   /* warm */
    for (int r = 0; r < rounds && on_fr; r++) {
        if (r & 1) {
            fb[r] = frames(rt, nfr);
            fa[r] = frames_parked(rt, nfr);
        } else {
            fa[r] = frames_parked(rt, nfr);
            fb[r] = frames(rt, nfr);
        }
    }
    for (int r = 0; r < rounds && on_sv; r++)
        sv[r] = served_per_frame();
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    printf("bench_io: %d rounds, %ld ops each, reactor %s, %d worker%s + main; %s\n", rounds, ops,
           st.reactor, workers, workers == 1 ? "" : "s", BENCH_BUILD);
    if (on_lat)
        report("latency", "fiber dagrt_read", "liburing submit+wait", la, lb, rounds);
    if (on_qd) {
        report("qd32", "32 fibers dagrt_read", "liburing QD32", qa, qb, rounds);
        printf("%-8s %-22s %.3f system-call submits per read (dagrt_io_stats.submits; 1.000: none batched)\n",
               "qd32", "submits/read", qreads ? (double)qsub / (double)qreads : 0.0);
    }
    if (on_udp)
        report("udp", "2 fibers ping-pong", "2 blocking threads", ua, ub, rounds);
    if (on_fr)
        report("frame64", "64 parked reads", "none parked", fa, fb, rounds);
    if (on_sv) {
        qsort(sv, (size_t)rounds, sizeof *sv, cmp_d);
        printf("%-8s %-22s best %8.0f     median %8.0f    | one hot worker, 32 fibers reading 4 KiB (page cache)\n",
               "served", "completions/16.7 ms", sv[rounds - 1], sv[rounds / 2]);
    }
    printf("(per operation; qd32: wall time / reads; udp: per round trip; frame64: per frame;\n"
           " served: the more the better, best = most; ratio > 1: dagrt slower)\n");
    io_uring_queue_exit(&ring);
    dagrt_destroy(rt);
    close(fd);
    return 0;
}
