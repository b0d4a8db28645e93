/* io_ops_posix.c - the POSIX half of io_ops.h's shim, and the I/O
 * scenarios that only POSIX systems have (the observer of an I/O wait,
 * io_uring's fast path and batches, an idle runtime's context switches, a
 * group wait by a thread outside the runtime). The scenarios every system
 * shares are in io_ops.c and io_deadline.c. */
#define _GNU_SOURCE
#include "io_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------ the shim */

void io_net_up(void) {}

const char *io_os_why(void) { return strerror(errno); }

void io_nap_us(unsigned us) { usleep(us); }

/* The reactor the runtime ended up on: the fallback when it was forced. */
int check_reactor(dagrt *rt, bool fallback)
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

int make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dagrt-io-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

void rm_tmpdir(const char *file)
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

const char *tmp_path(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

io_file tmp_file_with(const char *name, const void *data, size_t n, bool *ok)
{
    int fd = open_tmp(name, O_RDWR | O_CREAT | O_TRUNC);
    *ok = fd >= 0 && write(fd, data, n) == (ssize_t)n;
    return fd;
}

void io_file_close(io_file f) { close(f); }

io_file io_file_create(const char *name) { return open_tmp(name, O_RDWR | O_CREAT | O_TRUNC); }

io_file io_dir_open(void) { return open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

bool io_open_missing_fails(void) { return open_tmp("missing", O_RDONLY) < 0 && errno == ENOENT; }

/* The descriptor's own position: set, then advanced by reads at -1. */
int io_file_positions(dagrt *rt, io_file fd, const char *name, const unsigned char *w)
{
    (void)name;
    int bad = 0;
    unsigned char r[64];
    EXPECT(lseek(fd, 100, SEEK_SET) == 100);
    EXPECT(dagrt_read(rt, fd, r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 100, 50) == 0);
    EXPECT(dagrt_read(rt, fd, r, 50, -1, NULL) == 50);
    EXPECT(memcmp(r, w + 150, 50) == 0);
    EXPECT(lseek(fd, 0, SEEK_CUR) == 200);
    return bad;
}

int io_pair_open(io_pair *p)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -1;
    p->rd = fd[0];
    p->wr = fd[1];
    return 0;
}

void io_pair_close(io_pair *p)
{
    close(p->rd);
    close(p->wr);
}

dagrt_handle io_pair_rd(const io_pair *p) { return p->rd; }
dagrt_handle io_pair_writable(const io_pair *p) { return p->wr; }
bool io_pair_put(io_pair *p, char c) { return write(p->wr, &c, 1) == 1; }

int64_t io_pair_get(dagrt *rt, io_pair *p, char *c, dagrt_cancel *scope)
{
    return dagrt_read(rt, p->rd, c, 1, -1, scope);
}

int io_pipe_open(io_file *rd, io_file *wr, int k)
{
    (void)k;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    *rd = p[0];
    *wr = p[1];
    return 0;
}

void io_pipe_close(io_file rd, io_file wr)
{
    close(rd);
    close(wr);
}

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

/* On Linux PRIO_PROCESS 0 is the calling thread. */
int thread_priority(void) { return getpriority(PRIO_PROCESS, 0); }
int threads_raised(int base) { return threads_with_nice(base - 5); }
int threads_at(int prio) { return threads_with_nice(prio); }

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

/* With *oc (zeroed by the caller, before any thread may look at it)
 * counting the fiber's suspends and resumes (and, with nodes, the node's
 * begins and ends), one run of a graph of one fiber node, `reader` of
 * `io_obs`, that runs run(ctx); a fresh state, so that nothing of an
 * earlier graph is kept. dagrt_graph_run's result. */
static int run_reader(dagrt *rt, void (*run)(void *), void *ctx, obs_count *oc, bool nodes)
{
    dagrt_observer ob;
    memset(&ob, 0, sizeof ob);
    ob.fiber_suspend = oc_suspend;
    ob.fiber_resume = oc_resume;
    if (nodes) {
        ob.node_begin = oc_begin;
        ob.node_end = oc_end;
    }
    if (dagrt_set_observer(rt, &ob, oc) != 0)
        return DAGRT_EINVAL;
    const dagrt_node node[1] = {
        { .name = "reader", .kind = DAGRT_NODE_TASK, .join = DAGRT_JOIN_AND,
          .flags = DAGRT_NODE_FIBER, .run = run },
    };
    static const uint32_t succ[1] = { 0 };
    const dagrt_graph g = { .version = DAGRT_GRAPH_VERSION, .nnodes = 1, .nsucc = 0,
                            .name = "io_obs", .nodes = node, .succ = succ };
    dagrt_node_state ns[1];
    dagrt_graph_state st;
    int rc = dagrt_graph_state_init(&st, ns, 1);
    return rc != 0 ? rc : dagrt_graph_run(rt, &g, &st, ctx);
}

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

typedef struct late_write {
    int fd;
    obs_count *oc;
    bool saw_suspend;
} late_write;

/* Writes one byte once the reader's fiber has suspended (its observer
 * counted a suspend), so that the read must have waited, however slowly
 * the runtime starts (under TSan it took longer than a fixed 20 ms delay
 * and the read found the byte at once). After 10 s without a suspend it
 * writes anyway, so that the run ends, and the test fails on
 * saw_suspend. */
static void *late_writer(void *arg)
{
    late_write *w = arg;
    for (int i = 0; i < 10000 && !atomic_load(&w->oc->suspends); i++)
        usleep(1000);
    w->saw_suspend = atomic_load(&w->oc->suspends) >= 1;
    if (write(w->fd, "w", 1) != 1)
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
    obs_ctx x = { rt, p[0], -100, 0 };
    late_write lw = { p[1], &oc, false };
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, late_writer, &lw) == 0);
    EXPECT(run_reader(rt, obs_reader, &x, &oc, true) == 0);
    pthread_join(t, NULL);
    EXPECT(x.got == 1 && x.byte == 'w');
    /* The read had nothing to read until its fiber suspended: it
     * suspended (at least once) and resumed as often; begin and end once
     * each. */
    EXPECT(lw.saw_suspend);
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
int wait_group_foreign(void)
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
            fprintf(stderr, "wait_group_foreign: %ld voluntary switches in a 60 ms wait\n", j.switches);
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
    _Atomic int64_t r;   /* as poll_job.result */
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
    fast_ctx x = { rt, fd, 0 };
    EXPECT(run_reader(rt, fast_reader, &x, &oc, false) == 0);
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
