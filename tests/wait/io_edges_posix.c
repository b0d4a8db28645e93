/* io_edges_posix.c - the I/O calls at their edges (issue 36's probes, POSIX):
 * SIGPIPE, handles outside the descriptor range, accept on what cannot
 * accept, a poll for errors alone, the reactor's start with every
 * descriptor taken, dagrt_last_os_error never stale. Each twice where a
 * reactor is involved (NAME_fb: the fallback forced). The deadlines of
 * cancel scopes are in io_deadline.c, the error list in io_ops.c. */
#define _GNU_SOURCE
#include "io_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ------------------------------------------------------------ SIGPIPE */

static _Atomic int sigpipes;
static void count_sigpipe(int s)
{
    (void)s;
    atomic_fetch_add(&sigpipes, 1);
}

typedef struct wjob {
    dagrt *rt;
    int fd;
    bool send;                 /* dagrt_sendto instead of dagrt_write */
    _Atomic int started;
    _Atomic int64_t result;    /* 1 while in the call */
    int os;                    /* dagrt_last_os_error after it, on its thread */
    bool masked_after;         /* SIGPIPE blocked on its thread after the call */
} wjob;

static bool sigpipe_blocked(void)
{
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, SIGPIPE);
}

static void wjob_run(wjob *j)
{
    atomic_store(&j->started, 1);
    int64_t r = j->send ? dagrt_sendto(j->rt, j->fd, "x", 1, NULL, 0, NULL)
                        : dagrt_write(j->rt, j->fd, "x", 1, -1, NULL);
    j->os = dagrt_last_os_error();
    j->masked_after = sigpipe_blocked();
    atomic_store(&j->result, r);
}
static void wjob_task(void *arg) { wjob_run(arg); }
static void *wjob_thread(void *arg) { wjob_run(arg); return NULL; }

static int expect_epipe(const char *what, wjob *j)
{
    int bad = 0;
    if (atomic_load(&j->result) != DAGRT_EPIPE || j->os != EPIPE || j->masked_after) {
        fprintf(stderr, "sigpipe %s: result %lld, os error %d, SIGPIPE blocked after: %d\n", what,
                (long long)atomic_load(&j->result), j->os, (int)j->masked_after);
        bad++;
    }
    return bad;
}

/* A pipe filled up (its size cut to a page first). */
static int full_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    (void)fcntl(p[1], F_SETPIPE_SZ, 4096);
    int fl = fcntl(p[1], F_GETFL);
    fcntl(p[1], F_SETFL, fl | O_NONBLOCK);
    char buf[512] = { 0 };
    while (write(p[1], buf, sizeof buf) > 0)
        ;
    fcntl(p[1], F_SETFL, fl);
    return 0;
}

/* A write to a pipe or a stream socket whose reader is gone: DAGRT_EPIPE
 * (with EPIPE kept), and no SIGPIPE reaches the program (a handler counts
 * every one; with the default action the process would end), from the
 * main thread, a fiber, a plain task and a thread outside the runtime;
 * also a write that waited for room when the reader left (the write is
 * made again by whoever served the wait: a reaper, the reactor's thread).
 * Each caller's signal mask is as it was after the call. */
static int sigpipe_case(bool fallback)
{
    int bad = 0;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_sigpipe;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPIPE, &sa, &old) != 0)
        FAIL("sigaction");
    atomic_store(&sigpipes, 0);
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    int p[2], sv[2];

    /* the main thread, a pipe */
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    close(p[0]);
    wjob m = { rt, p[1], false, 0, 1, 0, false };
    wjob_run(&m);
    bad += expect_epipe("main thread, pipe", &m);

    /* a fiber, a plain task (the same pipe) */
    wjob f = { rt, p[1], false, 0, 1, 0, false }, t = f;
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, wjob_task, &f, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn(rt, &g, wjob_task, &t) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += expect_epipe("fiber, pipe", &f);
    bad += expect_epipe("plain task, pipe", &t);

    /* a thread outside the runtime */
    wjob o = { rt, p[1], false, 0, 1, 0, false };
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, wjob_thread, &o) == 0);
    pthread_join(th, NULL);
    bad += expect_epipe("outside thread, pipe", &o);
    close(p[1]);

    /* a fiber whose write waits for room, and the reader leaves */
    if (full_pipe(p) != 0)
        FAIL("pipe");
    wjob w = { rt, p[1], false, 0, 1, 0, false };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, wjob_task, &w, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&w.started))
        io_nap_us(100);
    io_nap_us(20000);
    EXPECT(atomic_load(&w.result) == 1);   /* still waiting for room */
    close(p[0]);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    /* its mask is a worker's, after the call: not the one that wrote */
    if (atomic_load(&w.result) != DAGRT_EPIPE || w.os != EPIPE) {
        fprintf(stderr, "sigpipe: waiting write: %lld, os %d\n", (long long)atomic_load(&w.result), w.os);
        bad++;
    }
    close(p[1]);

    /* a stream socket: dagrt_write and dagrt_sendto */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        FAIL("socketpair");
    close(sv[1]);
    wjob s1 = { rt, sv[0], false, 0, 1, 0, false }, s2 = { rt, sv[0], true, 0, 1, 0, false };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, wjob_task, &s1, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += expect_epipe("fiber, socket write", &s1);
    wjob_run(&s2);
    bad += expect_epipe("main thread, socket sendto", &s2);
    close(sv[0]);

    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    sigset_t pend;
    sigpending(&pend);
    EXPECT(!sigismember(&pend, SIGPIPE));
    if (atomic_load(&sigpipes) != 0)
        fprintf(stderr, "sigpipe: %d SIGPIPE reached the program\n", atomic_load(&sigpipes));
    EXPECT(atomic_load(&sigpipes) == 0);
    EXPECT(!sigpipe_blocked());
    sigaction(SIGPIPE, &old, NULL);
    return bad;
}

int io_sigpipe(void) { return sigpipe_case(false); }
int io_sigpipe_fb(void) { return sigpipe_case(true); }

/* ----------------------------------- handles outside the descriptor range */

/* A handle above INT_MAX (or below 0) is no descriptor: every call answers
 * DAGRT_EBADF (EBADF kept) and touches nothing; the descriptor its low 32
 * bits name keeps its data and stays open. (Ordered so that the old
 * behaviour, the calls acting on the low 32 bits' descriptor, fails the
 * checks without waiting for ever: the pipe keeps bytes, the poll has a
 * deadline, SIGPIPE is ignored here.) */
static int handle_range(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    EXPECT(write(p[1], "abcdef", 6) == 6);
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    const dagrt_handle hs[3] = { (dagrt_handle)-5, (dagrt_handle)((1ull << 32) | (unsigned)p[0]),
                                 (dagrt_handle)((1ull << 32) | (unsigned)p[1]) };
    char buf[8];
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    for (int i = 0; i < 3; i++) {
        dagrt_handle h = hs[i], out = 0;
        size_t fl = sizeof a;
        EXPECT(dagrt_read(rt, h, buf, 3, -1, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_last_os_error() == EBADF);
        EXPECT(dagrt_write(rt, h, "z", 1, -1, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_recvfrom(rt, h, buf, 3, (struct sockaddr *)&a, &fl, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_sendto(rt, h, "z", 1, NULL, 0, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_accept(rt, h, &out, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_connect(rt, h, (struct sockaddr *)&a, sizeof a, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_poll(rt, h, DAGRT_POLL_IN, dagrt_now_ns() + 1000000000u, NULL) == DAGRT_EBADF);
        EXPECT(dagrt_close(rt, h) == DAGRT_EBADF);
        EXPECT(dagrt_last_os_error() == EBADF);
    }
    /* the real descriptors: open, the data and nothing else in the pipe */
    EXPECT(fcntl(p[0], F_GETFD) != -1 && fcntl(p[1], F_GETFD) != -1);
    memset(buf, 0, sizeof buf);
    EXPECT(dagrt_read(rt, p[0], buf, sizeof buf, -1, NULL) == 6 && memcmp(buf, "abcdef", 6) == 0);
    sigaction(SIGPIPE, &old, NULL);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    return bad;
}

int io_handle_range(void) { return handle_range(false); }
int io_handle_range_fb(void) { return handle_range(true); }

/* ------------------------------------------- accept on what cannot accept */

typedef struct acc_job {
    dagrt *rt;
    int fd;
    dagrt_cancel *scope;
    _Atomic int64_t result;   /* 1 while in the call */
    int os;
} acc_job;

static void acc_task(void *arg)
{
    acc_job *j = arg;
    dagrt_handle out = -1;
    int r = dagrt_accept(j->rt, j->fd, &out, j->scope);
    j->os = dagrt_last_os_error();
    atomic_store(&j->result, r);
}

/* dagrt_accept on a pipe, a UDP socket, a connected stream socket and a
 * stream socket never made to listen answers at once with the system's
 * refusal, the same on both reactors (ENOTSOCK; EOPNOTSUPP and EINVAL,
 * which have no code of their own: DAGRT_EIO), instead of waiting for a
 * connection that cannot come. A call still waiting after two seconds is
 * a violation (and is then cancelled, so the scenario ends). */
static int accept_refused(bool fallback)
{
    int bad = 0;
    int p[2], sv[2];
    if (pipe2(p, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        FAIL("pipe/socketpair");
    struct sockaddr_in a;
    io_sock udp = udp_socket(&a);
    io_sock tcp = io_socket(SOCK_STREAM);
    if (udp == IO_SOCK_BAD || tcp == IO_SOCK_BAD)
        FAIL("socket");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    const struct { int fd; int code, os; const char *what; } cases[] = {
        { p[0], DAGRT_ENOTSOCK, ENOTSOCK, "a pipe" },
        { udp, DAGRT_EIO, EOPNOTSUPP, "a UDP socket" },
        { sv[0], DAGRT_EIO, EINVAL, "a connected stream socket" },
        { tcp, DAGRT_EIO, EINVAL, "a stream socket not listening" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dagrt_cancel c;
        dagrt_cancel_init(&c, NULL);
        acc_job j = { rt, cases[i].fd, &c, 1, 0 };
        dagrt_group g;
        dagrt_group_init(&g);
        EXPECT(dagrt_spawn_ex(rt, &g, acc_task, &j, DAGRT_SPAWN_FIBER) == 0);
        for (int k = 0; k < 2000 && atomic_load(&j.result) == 1; k++)
            io_nap_us(1000);
        int64_t r = atomic_load(&j.result);
        if (r == 1)
            dagrt_cancel_request(&c);   /* still waiting: end it */
        EXPECT(dagrt_group_wait(rt, &g) == 0);
        if (r != cases[i].code || j.os != cases[i].os) {
            fprintf(stderr, "accept on %s: %lld (os %d), want %d (os %d)\n", cases[i].what, (long long)r,
                    j.os, cases[i].code, cases[i].os);
            bad++;
        }
    }
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    close(sv[0]);
    close(sv[1]);
    close(udp);
    close(tcp);
    return bad;
}

int io_accept_refused(void) { return accept_refused(false); }
int io_accept_refused_fb(void) { return accept_refused(true); }

/* --------------------------------------------- a poll for errors alone */

typedef struct perr_job {
    dagrt *rt;
    int fd;
    _Atomic int started;
    _Atomic int result;
} perr_job;

static void perr_task(void *arg)
{
    perr_job *j = arg;
    atomic_store(&j->started, 1);
    atomic_store(&j->result, dagrt_poll(j->rt, j->fd, DAGRT_POLL_ERR, DAGRT_FOREVER, NULL));
}

/* dagrt_poll for DAGRT_POLL_ERR alone waits for an error or a hang-up:
 * with none it times out at its deadline (whatever errno the thread had),
 * and a fiber waiting without a deadline wakes when the pipe's writer
 * closes (a hang-up: DAGRT_POLL_ERR). */
static int poll_err_only(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    uint64_t t0 = dagrt_now_ns();
    errno = EBADF;   /* a stale errno, which the call must not return */
    int r = dagrt_poll(rt, p[0], DAGRT_POLL_ERR, t0 + 30000000u, NULL);
    uint64_t dt = dagrt_now_ns() - t0;
    if (r != DAGRT_ETIMEDOUT || dt < 30000000u)
        fprintf(stderr, "poll_err_only: %d after %llu ns\n", r, (unsigned long long)dt);
    EXPECT(r == DAGRT_ETIMEDOUT);
    EXPECT(dt >= 30000000u);
    perr_job j = { rt, p[0], 0, 1 };
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, perr_task, &j, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&j.started))
        io_nap_us(100);
    io_nap_us(20000);
    EXPECT(atomic_load(&j.result) == 1);   /* still waiting */
    close(p[1]);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(atomic_load(&j.result) == DAGRT_POLL_ERR);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    return bad;
}

int io_poll_err_only(void) { return poll_err_only(false); }
int io_poll_err_only_fb(void) { return poll_err_only(true); }

/* ------------------------------------- the reactor's start, no descriptor left */

static int max_open_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int m = -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && atoi(e->d_name) > m)
            m = atoi(e->d_name);
    closedir(d);
    return m;
}

/* The first I/O call starts the reactor; with every descriptor taken it
 * cannot, and says why: DAGRT_EMFILE with EMFILE in dagrt_last_os_error
 * (not DAGRT_EIO with 0). Once descriptors are free again the next call
 * starts it and works. */
static int start_emfile(bool fallback)
{
    int bad = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        FAIL("pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    struct rlimit old, low;
    if (getrlimit(RLIMIT_NOFILE, &old) != 0)
        FAIL("getrlimit");
    int top = max_open_fd();
    if (top < 0)
        FAIL("/proc/self/fd");
    low = old;
    low.rlim_cur = (rlim_t)top + 9;
    if (low.rlim_cur > old.rlim_cur)
        low.rlim_cur = old.rlim_cur;
    if (setrlimit(RLIMIT_NOFILE, &low) != 0)
        FAIL("setrlimit");
    /* Every free number below the limit (there may be holes below top). */
    int cap = (int)low.rlim_cur, n = 0;
    int *held = malloc((size_t)cap * sizeof *held);
    if (!held) {
        setrlimit(RLIMIT_NOFILE, &old);
        FAIL("malloc");
    }
    while (n < cap && (held[n] = fcntl(p[0], F_DUPFD_CLOEXEC, 0)) >= 0)
        n++;
    int full = n < cap ? errno : 0;
    char c = 0;
    if (full != EMFILE) {
        for (int i = 0; i < n; i++)
            close(held[i]);
        free(held);
        setrlimit(RLIMIT_NOFILE, &old);
        FAIL("could not take every descriptor (%d taken: %s)", n, strerror(full));
    }
    int64_t r = dagrt_read(rt, p[0], &c, 1, -1, NULL);
    int os = dagrt_last_os_error();
    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    const char *reactor = st.reactor;
    for (int i = 0; i < n; i++)
        close(held[i]);
    free(held);
    setrlimit(RLIMIT_NOFILE, &old);
    if (r != DAGRT_EMFILE || os != EMFILE)
        fprintf(stderr, "start_emfile: %lld (%s), os error %d\n", (long long)r, dagrt_strerror((int)r), os);
    EXPECT(r == DAGRT_EMFILE);
    EXPECT(os == EMFILE);
    EXPECT(strcmp(reactor, "none") == 0);
    /* descriptors again: the next call starts the reactor */
    EXPECT(write(p[1], "k", 1) == 1);
    EXPECT(dagrt_read(rt, p[0], &c, 1, -1, NULL) == 1 && c == 'k');
    EXPECT(dagrt_last_os_error() == 0);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(p[0]);
    close(p[1]);
    return bad;
}

int io_start_emfile(void) { return start_emfile(false); }
int io_start_emfile_fb(void) { return start_emfile(true); }

/* ------------------------------------------------ never a stale OS error */

/* After each call of waiting on the world, dagrt_last_os_error is the
 * system's error behind its result, 0 when the result is none: a
 * non-system error (EINVAL, ECANCELED, ETIMEDOUT, EPERM) or a success
 * right after a system error leaves 0, not the EISDIR (21) or EBADF (9)
 * before it. */
static int last_os_error(bool fallback)
{
    int bad = 0;
    if (make_tmpdir() != 0)
        FAIL("mkdtemp");
    int dirfd = open(tmp_path(""), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int p[2];
    if (dirfd < 0 || pipe2(p, O_CLOEXEC) != 0)
        FAIL("open/pipe");
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    char buf[4];
    dagrt_cancel done;
    dagrt_cancel_init(&done, NULL);
    dagrt_cancel_request(&done);
    dagrt_event ev;
    dagrt_event_init(&ev, false);
    dagrt_mutex mu;
    dagrt_mutex_init(&mu);
#define STALE_THEN(call, code) do {                                                 \
        EXPECT(dagrt_read(rt, dirfd, buf, 1, 0, NULL) == DAGRT_EISDIR);          \
        EXPECT(dagrt_last_os_error() == EISDIR);                                 \
        int64_t r_ = (call);                                                     \
        if (r_ != (code) || dagrt_last_os_error() != 0)                          \
            fprintf(stderr, "last_os_error: %s: %lld, os error %d\n", #call,      \
                    (long long)r_, dagrt_last_os_error());                       \
        EXPECT(r_ == (code));                                                    \
        EXPECT(dagrt_last_os_error() == 0);                                      \
    } while (0)
    STALE_THEN(dagrt_read(rt, p[0], NULL, 1, -1, NULL), DAGRT_EINVAL);
    STALE_THEN(dagrt_read(rt, p[0], buf, 1, -1, &done), DAGRT_ECANCELED);
    STALE_THEN(dagrt_poll(rt, p[0], DAGRT_POLL_IN, 0, NULL), DAGRT_ETIMEDOUT);
    STALE_THEN(dagrt_poll(rt, p[1], DAGRT_POLL_OUT, DAGRT_FOREVER, NULL), DAGRT_POLL_OUT);
    STALE_THEN(dagrt_write(rt, p[1], "w", 1, -1, NULL), 1);
    STALE_THEN(dagrt_read(rt, p[0], buf, 1, -1, NULL), 1);
    STALE_THEN(dagrt_sleep(rt, 1000, &done), DAGRT_ECANCELED);
    STALE_THEN(dagrt_sleep(rt, 1000, NULL), 0);
    STALE_THEN(dagrt_event_wait_until(rt, &ev, 0, NULL), DAGRT_ETIMEDOUT);
    STALE_THEN(dagrt_mutex_unlock(&mu), DAGRT_EPERM);
#undef STALE_THEN
    EXPECT(dagrt_close(rt, (dagrt_handle)-1) == DAGRT_EBADF && dagrt_last_os_error() == EBADF);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    close(dirfd);
    close(p[0]);
    close(p[1]);
    rm_tmpdir(NULL);
    return bad;
}

int io_last_os_error(void) { return last_os_error(false); }
int io_last_os_error_fb(void) { return last_os_error(true); }
