/*
 * bench_io.c - waiting on the world, side by side in one run (issue 23's
 * figures; docs/benchmarks.md):
 *   1. completion to resume: a fiber reading 4 KiB at random offsets of a
 *      file in the page cache through dagrt_read, one at a time, against
 *      liburing's submit-and-wait of the same reads from a plain thread;
 *   2. UDP ping-pong on 127.0.0.1: two fibers (dagrt_sendto/recvfrom)
 *      against two threads with blocking sockets.
 * Each pair runs interleaved, ROUNDS times; the table gives each side's
 * median per operation (per round trip for 2) and the ratio.
 * Not measured here yet: QD32 throughput, 64 parked fibers in a frame,
 * completions per 16.7 ms.
 *
 *   bench_io [OPS] [ROUNDS]   (defaults 20000 and 7)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dagrt.h"

#define FILE_BYTES (4u << 20)
#define READ_BYTES 4096u

static long ops = 20000;
static int fd = -1;
static unsigned char fbuf[READ_BYTES];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int64_t offset_of(long i)
{
    uint32_t x = (uint32_t)i * 2654435761u;
    return (int64_t)(x % (FILE_BYTES / READ_BYTES)) * READ_BYTES;
}

/* ---------------------------------------------------- 1. file reads */

typedef struct read_job { dagrt *rt; double secs; int bad; } read_job;

static void fiber_reads(void *arg)
{
    read_job *j = arg;
    double t0 = now_s();
    for (long i = 0; i < ops; i++)
        j->bad += dagrt_read(j->rt, fd, fbuf, READ_BYTES, offset_of(i), NULL) != READ_BYTES;
    j->secs = now_s() - t0;
}

static double run_fiber_reads(dagrt *rt, int *bad)
{
    read_job j = {rt, 0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn_ex(rt, &g, fiber_reads, &j, DAGRT_SPAWN_FIBER) != 0 || dagrt_group_wait(rt, &g) != 0)
        (*bad)++;
    *bad += j.bad;
    return j.secs / (double)ops;
}

static double run_uring_reads(struct io_uring *ring, int *bad)
{
    double t0 = now_s();
    for (long i = 0; i < ops; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
        io_uring_prep_read(sqe, fd, fbuf, READ_BYTES, (uint64_t)offset_of(i));
        struct io_uring_cqe *cqe;
        if (io_uring_submit_and_wait(ring, 1) < 1 || io_uring_wait_cqe(ring, &cqe) != 0) {
            (*bad)++;
            return 0;
        }
        *bad += cqe->res != (int)READ_BYTES;
        io_uring_cqe_seen(ring, cqe);
    }
    return (now_s() - t0) / (double)ops;
}

/* ---------------------------------------------------- 2. UDP ping-pong */

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

typedef struct pp_job {
    dagrt *rt;        /* NULL: blocking socket calls on a thread */
    int s;
    struct sockaddr_in peer;
    bool ping;
    long rounds;
    int bad;
} pp_job;

static void pp_body(void *arg)
{
    pp_job *j = arg;
    char buf[64] = "ping";
    for (long i = 0; i < j->rounds; i++) {
        if (j->ping) {
            int64_t w = j->rt ? dagrt_sendto(j->rt, j->s, buf, 32, (struct sockaddr *)&j->peer, sizeof j->peer, NULL)
                              : sendto(j->s, buf, 32, 0, (struct sockaddr *)&j->peer, sizeof j->peer);
            int64_t r = j->rt ? dagrt_recvfrom(j->rt, j->s, buf, sizeof buf, NULL, NULL, NULL)
                              : recvfrom(j->s, buf, sizeof buf, 0, NULL, NULL);
            j->bad += w != 32 || r != 32;
        } else {
            int64_t r = j->rt ? dagrt_recvfrom(j->rt, j->s, buf, sizeof buf, NULL, NULL, NULL)
                              : recvfrom(j->s, buf, sizeof buf, 0, NULL, NULL);
            int64_t w = j->rt ? dagrt_sendto(j->rt, j->s, buf, 32, (struct sockaddr *)&j->peer, sizeof j->peer, NULL)
                              : sendto(j->s, buf, 32, 0, (struct sockaddr *)&j->peer, sizeof j->peer);
            j->bad += w != 32 || r != 32;
        }
    }
}

static void *pp_thread(void *arg)
{
    pp_body(arg);
    return NULL;
}

static double run_pingpong(dagrt *rt, int sa, struct sockaddr_in a, int sb, struct sockaddr_in b, int *bad)
{
    long rounds = ops / 4 > 0 ? ops / 4 : 1;
    pp_job echo = {rt, sa, b, false, rounds, 0}, ping = {rt, sb, a, true, rounds, 0};
    double t0 = now_s();
    if (rt) {
        dagrt_group g;
        dagrt_group_init(&g);
        if (dagrt_spawn_ex(rt, &g, pp_body, &echo, DAGRT_SPAWN_FIBER) != 0 ||
            dagrt_spawn_ex(rt, &g, pp_body, &ping, DAGRT_SPAWN_FIBER) != 0 || dagrt_group_wait(rt, &g) != 0)
            (*bad)++;
    } else {
        pthread_t t1, t2;
        pthread_create(&t1, NULL, pp_thread, &echo);
        pthread_create(&t2, NULL, pp_thread, &ping);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
    }
    *bad += echo.bad + ping.bad;
    return (now_s() - t0) / (double)rounds;
}

/* ---------------------------------------------------------------- main */

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int rounds = 7;
    if (argc > 1 && (ops = atol(argv[1])) < 1)
        return fprintf(stderr, "usage: %s [OPS] [ROUNDS]\n", argv[0]), 2;
    if (argc > 2 && ((rounds = atoi(argv[2])) < 1 || rounds > 99))
        return fprintf(stderr, "usage: %s [OPS] [ROUNDS]\n", argv[0]), 2;
    char path[] = "/tmp/bench_io_XXXXXX";
    fd = mkstemp(path);
    if (fd < 0)
        return perror("mkstemp"), 1;
    unlink(path);
    static unsigned char chunk[1 << 16];
    for (size_t i = 0; i < sizeof chunk; i++)
        chunk[i] = (unsigned char)(i * 131u);
    for (unsigned o = 0; o < FILE_BYTES; o += sizeof chunk)
        if (pwrite(fd, chunk, sizeof chunk, o) != (ssize_t)sizeof chunk)
            return perror("pwrite"), 1;
    for (unsigned o = 0; o < FILE_BYTES; o += sizeof chunk)   /* into the page cache */
        if (pread(fd, chunk, sizeof chunk, o) != (ssize_t)sizeof chunk)
            return perror("pread"), 1;

    dagrt *rt = dagrt_create(NULL);
    struct io_uring ring;
    if (!rt || io_uring_queue_init(8, &ring, 0) != 0)
        return fprintf(stderr, "bench_io: no runtime or no io_uring here\n"), 1;
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    struct sockaddr_in a, b;
    int sa = udp_socket(&a), sb = udp_socket(&b);
    if (sa < 0 || sb < 0)
        return perror("udp"), 1;

    double fr[99], ur[99], fp[99], tp[99];
    int bad = 0;
    run_fiber_reads(rt, &bad);   /* warm: the reactor starts at its first call */
    run_uring_reads(&ring, &bad);
    for (int r = 0; r < rounds; r++) {
        fr[r] = run_fiber_reads(rt, &bad);
        ur[r] = run_uring_reads(&ring, &bad);
        fp[r] = run_pingpong(rt, sa, a, sb, b, &bad);
        tp[r] = run_pingpong(NULL, sa, a, sb, b, &bad);
    }
    dagrt_get_io_stats(rt, &st);
    double f = median(fr, rounds), u = median(ur, rounds), p = median(fp, rounds), t = median(tp, rounds);
    printf("bench_io: %ld ops per side per round, %d rounds interleaved, medians; reactor %s, %d workers\n",
           ops, rounds, st.reactor, dagrt_worker_count(rt));
    printf("%-52s %10s %10s %8s\n", "", "dagrt us", "peer us", "ratio");
    printf("%-52s %10.2f %10.2f %8.2f\n", "4 KiB page-cached read: fiber vs liburing submit+wait",
           f * 1e6, u * 1e6, f / u);
    printf("%-52s %10.2f %10.2f %8.2f\n", "UDP ping-pong round trip: fibers vs blocking threads",
           p * 1e6, t * 1e6, p / t);
    printf("checks: %s\n", bad ? "FAILED" : "ok");
    io_uring_queue_exit(&ring);
    dagrt_destroy(rt);
    close(sa);
    close(sb);
    close(fd);
    return bad != 0;
}
