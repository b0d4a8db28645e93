/* io_ready_posix.c - the fallback reactor where the system refuses
 * RWF_NOWAIT (qemu-user has no preadv2, older kernels answer EOPNOTSUPP;
 * runtime/os/io_linux.c): reads and writes of pipes and sockets then go a
 * zero poll and at most what is there. DAGRT_IO_NOWAIT=0 asks for that
 * path from the start; it is read once per process, at the first such
 * call, so the scenario sets it first thing (each scenario runs in a
 * process of its own). meson.build also runs the other fallback scenarios
 * of pipes and sockets with it (the `_nowait0` tests). */
#define _GNU_SOURCE
#include "io_ops.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct rjob {
    dagrt *rt;
    int fd;
    char buf[64];
    size_t n;
    bool write;                /* a write of big[0, n) instead of a read */
    _Atomic int started;
    _Atomic int64_t result;
} rjob;

static char big[1 << 16];

static void rjob_task(void *arg)
{
    rjob *j = arg;
    atomic_store(&j->started, 1);
    int64_t r = j->write ? dagrt_write(j->rt, j->fd, big, j->n, -1, NULL)
                         : dagrt_read(j->rt, j->fd, j->buf, j->n, -1, NULL);
    atomic_store(&j->result, r);
}

/* Fills pipe fd to the brim (O_NONBLOCK for the filling only). The bytes
 * written. */
static size_t fill_pipe(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    size_t total = 0;
    ssize_t w;
    while ((w = write(fd, big, sizeof big)) > 0)
        total += (size_t)w;
    (void)fcntl(fd, F_SETFL, fl);
    return total;
}

int io_ready_path_fb(void)
{
    int bad = 0;
    setenv("DAGRT_IO_NOWAIT", "0", 1);
    dagrt *rt = make_rt(true, 2);
    if (!rt)
        FAIL("dagrt_create");
    int p[2], sv[2];
    if (pipe2(p, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        FAIL("pipe, socketpair");
    memset(big, 'b', sizeof big);

    /* A big write into an empty pipe: PIPE_BUF bytes, the most the ready
     * path writes at once (RWF_NOWAIT would take the whole 64 KiB the pipe
     * holds): the path is the one asked for. */
    int64_t w = dagrt_write(rt, p[1], big, sizeof big, -1, NULL);
    if (w != PIPE_BUF)
        fprintf(stderr, "io_ready_path_fb: a 64 KiB write into an empty pipe moved %lld bytes\n",
                (long long)w);
    EXPECT(w == PIPE_BUF);
    char drain[PIPE_BUF];
    EXPECT(read(p[0], drain, sizeof drain) == PIPE_BUF);

    /* A read of 64 with 10 bytes there: the 10, at once. */
    EXPECT(write(p[1], "0123456789", 10) == 10);
    char buf[64];
    EXPECT(dagrt_read(rt, p[0], buf, sizeof buf, -1, NULL) == 10 && memcmp(buf, "0123456789", 10) == 0);

    /* A read with nothing there waits, on a fiber and on a plain task,
     * until bytes come: each gets what was written for it. */
    for (int fiber = 0; fiber < 2; fiber++) {
        rjob j = { .rt = rt, .fd = p[0], .n = sizeof j.buf, .result = 1 };
        dagrt_group g;
        dagrt_group_init(&g);
        EXPECT(dagrt_spawn_ex(rt, &g, rjob_task, &j, fiber ? DAGRT_SPAWN_FIBER : 0) == 0);
        while (!atomic_load(&j.started))
            io_nap_us(1000);
        io_nap_us(20000);
        EXPECT(atomic_load(&j.result) == 1);   /* still waiting */
        EXPECT(write(p[1], "late", 4) == 4);
        EXPECT(dagrt_group_wait(rt, &g) == 0);
        EXPECT(atomic_load(&j.result) == 4 && memcmp(j.buf, "late", 4) == 0);
    }

    /* A write into a full pipe waits for room, then moves some bytes (at
     * most PIPE_BUF) once the reader takes some out. */
    size_t full = fill_pipe(p[1]);
    EXPECT(full >= PIPE_BUF);
    rjob wj = { .rt = rt, .fd = p[1], .n = sizeof big, .write = true, .result = 1 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, rjob_task, &wj, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&wj.started))
        io_nap_us(1000);
    io_nap_us(20000);
    EXPECT(atomic_load(&wj.result) == 1);   /* still waiting for room */
    size_t taken = 0;
    while (taken < 2 * PIPE_BUF) {
        ssize_t r = read(p[0], drain, sizeof drain);
        if (r <= 0)
            break;
        taken += (size_t)r;
    }
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    int64_t moved = atomic_load(&wj.result);
    EXPECT(moved > 0 && moved <= PIPE_BUF);

    /* The end of the pipe: 0. */
    close(p[1]);
    int64_t r;
    while ((r = dagrt_read(rt, p[0], big, sizeof big, -1, NULL)) > 0)
        ;
    EXPECT(r == 0);
    close(p[0]);

    /* A socket: recv without waiting; a read with nothing there waits. */
    EXPECT(write(sv[1], "abc", 3) == 3);
    EXPECT(dagrt_read(rt, sv[0], buf, sizeof buf, -1, NULL) == 3 && memcmp(buf, "abc", 3) == 0);
    rjob sj = { .rt = rt, .fd = sv[0], .n = sizeof sj.buf, .result = 1 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, rjob_task, &sj, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&sj.started))
        io_nap_us(1000);
    io_nap_us(20000);
    EXPECT(atomic_load(&sj.result) == 1);
    EXPECT(dagrt_write(rt, sv[1], "xyz!", 4, -1, NULL) == 4);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(atomic_load(&sj.result) == 4 && memcmp(sj.buf, "xyz!", 4) == 0);
    close(sv[1]);
    EXPECT(dagrt_read(rt, sv[0], buf, sizeof buf, -1, NULL) == 0);
    close(sv[0]);

    bad += check_reactor(rt, true);
    dagrt_destroy(rt);
    return bad;
}
