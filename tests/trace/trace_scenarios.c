/*
 * trace_scenarios.c - the trace recorder on its own (runtime/trace/record.c):
 * each scenario records, writes a file, reads it back with the strict JSON
 * reader and returns the number of violations. Listed in trace_list.h,
 * hosted by tests/scenario/ (Criterion, suite unit; the plain driver, suite
 * tsan).
 */
#define _DEFAULT_SOURCE   /* mknod, makedev */
#include "scenario.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "dagrt.h"
#include "json.h"
#include "trace/record.h"
#include "trace_check.h"

static void tmp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/dagrt-trace-%ld-%s.json", dir && *dir ? dir : "/tmp", (long)getpid(), what);
}

static rt_trace_node node(const char *g, const char *name, uint32_t i, uint64_t frame)
{
    rt_trace_node n = {g, name, i, false, frame, 0, 0};
    return n;
}

static int load_checked(const char *path, tc_trace *t)
{
    int bad = tc_load_checked(path, t);
    if (bad < 0)
        return 1;
    if (!t->has_display_unit || !t->has_other) {
        fprintf(stderr, "%s: displayTimeUnit or otherData missing\n", path);
        bad++;
    }
    return bad;
}

static const tc_event *find(const tc_trace *t, const char *name, size_t nth)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'X' && strcmp(t->ev[i].name, name) == 0 && nth-- == 0)
            return &t->ev[i];
    return NULL;
}

/* Nested spans (a wait that helps), a piece, an end without begin. */
static int trace_nesting(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(2, 0, 0);
    EXPECT(t != NULL);
    if (!t)
        return bad;
    rt_trace_node a = node("frame", "physics", 3, 7), b = node("frame", "audio", 5, 7);
    rt_trace_node p = node("frame", "particles", 6, 7);
    p.piece = true;
    p.begin = 16;
    p.end = 32;
    rt_trace_begin(t, 0, &a);                /* off: not recorded */
    rt_trace_end(t, 0, &a);
    rt_trace_set_on(t, true);
    rt_trace_end(t, 1, &b);                  /* no begin: nothing */
    rt_trace_begin(t, 0, &a);
    rt_trace_begin(t, 0, &b);
    rt_trace_end(t, 0, &b);
    rt_trace_begin(t, 0, &p);
    rt_trace_end(t, 0, &p);
    rt_trace_end(t, 0, &a);
    rt_trace_idle(t, 1);
    rt_trace_wake(t, 1);
    rt_trace_mark(t, 1, RT_TRACE_STEAL);
    rt_trace_begin(t, 7, &a);                /* no such thread: ignored */
    rt_trace_set_on(t, false);
    char path[512];
    tmp_path(path, sizeof path, "nesting");
    EXPECT(rt_trace_write(t, path) == 0);
    rt_trace_counts c;
    rt_trace_get_counts(t, &c);
    EXPECT(c.recorded == 5 && c.written == 5 && c.dropped == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, NULL, -1) == 4);    /* three nodes and the idle span */
    const tc_event *ea = find(&tr, "physics", 0), *eb = find(&tr, "audio", 0);
    const tc_event *ep = find(&tr, "particles", 0);
    EXPECT(ea && eb && ep);
    if (ea && eb && ep) {
        EXPECT(strcmp(ea->cat, "frame") == 0 && ea->frame == 7 && ea->node == 3 && ea->tid == 0);
        EXPECT(eb->ts >= ea->ts && eb->ts + eb->dur <= ea->ts + ea->dur);
        EXPECT(ep->begin == 16 && ep->end == 32 && ep->ts >= eb->ts + eb->dur);
        EXPECT(ea->begin == -1 && !ea->resumed && !ea->suspended);
    }
    const tc_event *idle = find(&tr, "idle", 0);
    EXPECT(idle && idle->tid == 1 && strcmp(idle->cat, "dagrt") == 0);
    size_t marks = 0, names = 0;
    for (size_t i = 0; i < tr.n; i++) {
        marks += tr.ev[i].ph == 'i' && strcmp(tr.ev[i].name, "steal") == 0;
        names += tr.ev[i].ph == 'M' && (strcmp(tr.ev[i].thread_name, "dagrt-main") == 0 ||
                                        strcmp(tr.ev[i].thread_name, "dagrt-worker-1") == 0);
    }
    EXPECT(marks == 1 && names == 2);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* A span open across a stop and a start is dropped (its end may have come
 * while stopped); one begun after the start is kept. */
static int trace_restart(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(1, 0, 0);
    if (!t)
        return 1;
    rt_trace_node a = node("g", "across", 0, 0), b = node("g", "after", 1, 0);
    rt_trace_set_on(t, true);
    rt_trace_begin(t, 0, &a);
    rt_trace_idle(t, 0);
    rt_trace_set_on(t, false);
    rt_trace_set_on(t, true);
    rt_trace_wake(t, 0);                     /* its idle began before the stop */
    rt_trace_begin(t, 0, &b);
    rt_trace_end(t, 0, &b);
    rt_trace_end(t, 0, &a);
    char path[512];
    tmp_path(path, sizeof path, "restart");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "after", -1) == 1);
    EXPECT(tc_count(&tr, "across", -1) == 0);
    EXPECT(tc_count(&tr, "idle", -1) == 0);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* A fiber task that suspends on one thread and resumes on another is two
 * slices, one per thread. */
static int trace_fiber_slices(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(3, 0, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    rt_trace_node f = node("g", "load", 1, 0), o = node("g", "other", 2, 0);
    rt_trace_begin(t, 1, &f);
    rt_trace_suspend(t, 1, &f);
    rt_trace_begin(t, 1, &o);               /* the thread runs something else */
    rt_trace_resume(t, 2, &f);
    rt_trace_end(t, 1, &o);
    rt_trace_suspend(t, 2, &f);
    rt_trace_resume(t, 2, &f);
    rt_trace_end(t, 2, &f);
    char path[512];
    tmp_path(path, sizeof path, "fiber");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "load", 0) == 3);
    const tc_event *s0 = find(&tr, "load", 0), *s1 = find(&tr, "load", 1), *s2 = find(&tr, "load", 2);
    if (s0 && s1 && s2) {
        EXPECT(s0->tid == 1 && !s0->resumed && s0->suspended);
        EXPECT(s1->tid == 2 && s1->resumed && s1->suspended);
        EXPECT(s2->tid == 2 && s2->resumed && !s2->suspended);
        EXPECT(s1->ts + s1->dur <= s2->ts);
    }
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* Past the cap the oldest events go; the file says so, and every thread's
 * events start at one common point. */
static int trace_cap(void)
{
    int bad = 0;
    size_t bytes = 2 * RT_TRACE_MIN_RING * rt_trace_event_bytes();
    rt_trace *t = rt_trace_create(2, bytes, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    rt_trace_node n = node("g", "tick", 0, 0);
    rt_trace_begin(t, 1, &n);               /* the oldest on thread 1 */
    rt_trace_end(t, 1, &n);
    for (uint64_t i = 0; i < 5 * RT_TRACE_MIN_RING; i++) {
        n.frame = i;
        rt_trace_begin(t, 0, &n);
        rt_trace_end(t, 0, &n);
    }
    char path[512];
    tmp_path(path, sizeof path, "cap");
    EXPECT(rt_trace_write(t, path) == 0);
    rt_trace_counts c;
    rt_trace_get_counts(t, &c);
    EXPECT(c.recorded == 5 * RT_TRACE_MIN_RING + 1);
    EXPECT(c.written == RT_TRACE_MIN_RING - 1);   /* thread 1's one is before the window */
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tr.has_note && tr.dropped == 4 * RT_TRACE_MIN_RING + 1);
    EXPECT(tc_count(&tr, NULL, -1) == RT_TRACE_MIN_RING - 1);
    EXPECT(tc_count(&tr, NULL, 5 * RT_TRACE_MIN_RING - 1) == 1);   /* the newest is kept */
    EXPECT(tc_count(&tr, NULL, 4 * RT_TRACE_MIN_RING) == 0);       /* the oldest slot is not */
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* DAGRT_TRACE_FRAMES: the last N frames of each graph. */
static int trace_frames(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(1, 0, 2);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    for (uint64_t f = 0; f < 10; f++) {
        rt_trace_node a = node("a", "x", 0, f), b = node("b", "y", 0, f / 2);
        rt_trace_begin(t, 0, &a);
        rt_trace_end(t, 0, &a);
        rt_trace_begin(t, 0, &b);
        rt_trace_end(t, 0, &b);
        rt_trace_idle(t, 0);
        rt_trace_wake(t, 0);
    }
    char path[512];
    tmp_path(path, sizeof path, "frames");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "x", -1) == 2 && tc_count(&tr, "x", 8) == 1 && tc_count(&tr, "x", 9) == 1);
    EXPECT(tc_count(&tr, "y", -1) == 4 && tc_count(&tr, "y", 3) == 2 && tc_count(&tr, "y", 4) == 2);
    /* idle spans from the first kept frame on (graph b's frame 3 began at a's 6) */
    EXPECT(tc_count(&tr, "idle", -1) == 4);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* Bad arguments: a clear code, nothing half-written. */
static int trace_errors(void)
{
    int bad = 0;
    EXPECT(rt_trace_create(0, 0, 0) == NULL);
    rt_trace *t = rt_trace_create(1, 0, 0);
    if (!t)
        return 1;
    /* A system failure: DAGRT_EIO, the system's reason kept. */
    EXPECT(rt_trace_write(t, "/nonexistent-dir/x.json") == DAGRT_EIO);
    EXPECT(dagrt_last_os_error() == ENOENT);
    char text[128];
    EXPECT(strcmp(dagrt_os_strerror(ENOENT, text, sizeof text), strerror(ENOENT)) == 0);
    EXPECT(strcmp(dagrt_os_strerror(ENOENT, text, 4), "No ") == 0);   /* cut to fit */
    EXPECT(rt_trace_write(t, "/tmp") == DAGRT_EIO && dagrt_last_os_error() == EISDIR);
    char longname[600];
    memset(longname, 'x', sizeof longname - 1);
    longname[0] = '/';
    longname[sizeof longname - 1] = '\0';   /* one component over NAME_MAX */
    EXPECT(rt_trace_write(t, longname) == DAGRT_EIO && dagrt_last_os_error() == ENAMETOOLONG);
    EXPECT(rt_trace_write(t, "") == DAGRT_EINVAL);
    EXPECT(rt_trace_write(NULL, "x.json") == DAGRT_EINVAL);
    EXPECT(access("/nonexistent-dir", F_OK) != 0);
    char path[512];
    tmp_path(path, sizeof path, "empty");
    EXPECT(rt_trace_write(t, path) == 0);   /* nothing recorded: a valid, empty trace */
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, NULL, -1) == 0);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    rt_trace_destroy(NULL);
    return bad;
}

/* Threads record into their own rings at once, and the writer reads while
 * they still run (recording pauses; each ring tolerates the one event in
 * flight when it starts). */
typedef struct rec_arg {
    rt_trace *t;
    uint32_t tid;
    unsigned n;
} rec_arg;

static void *recorder(void *p)
{
    rec_arg *a = p;
    rt_trace_node outer = node("g", "outer", 0, 0), inner = node("g", "inner", 1, 0);
    for (unsigned i = 0; i < a->n; i++) {
        outer.frame = inner.frame = i;
        rt_trace_begin(a->t, a->tid, &outer);
        rt_trace_begin(a->t, a->tid, &inner);
        rt_trace_end(a->t, a->tid, &inner);
        rt_trace_end(a->t, a->tid, &outer);
    }
    return NULL;
}

static int trace_threads(void)
{
    int bad = 0;
    const char *sc = getenv("DAGC_TEST_SCALE");
    double scale = sc ? atof(sc) : 1.0;
    unsigned n = (unsigned)(20000 * (scale > 0 ? scale : 1.0));
    enum { T = 4 };
    rt_trace *t = rt_trace_create(T, T * 4096 * rt_trace_event_bytes(), 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    pthread_t th[T];
    rec_arg args[T];
    for (uint32_t i = 0; i < T; i++) {
        args[i] = (rec_arg){t, i, n};
        pthread_create(&th[i], NULL, recorder, &args[i]);
    }
    char path[512];
    tmp_path(path, sizeof path, "threads-live");
    EXPECT(rt_trace_write(t, path) == 0);   /* while they record */
    tc_trace tr;
    bad += load_checked(path, &tr);
    tc_free(&tr);
    for (uint32_t i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    /* Writing paused recording; now a batch with nobody writing. */
    EXPECT(rt_trace_is_on(t));               /* the pause ended with the write */
    for (uint32_t i = 0; i < T; i++)
        pthread_create(&th[i], NULL, recorder, &args[i]);
    for (uint32_t i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    rt_trace_set_on(t, false);
    EXPECT(rt_trace_write(t, path) == 0);
    bad += load_checked(path, &tr);
    /* Every ring wrapped. The file is one window for all threads: it
     * starts at the newest of the rings' oldest events, so at least the
     * ring that set the start is whole (4095: its oldest slot is skipped),
     * and no thread has an event before the start. */
    size_t outer = tc_count(&tr, "outer", -1), inner = tc_count(&tr, "inner", -1);
    EXPECT(outer + inner <= T * 4095 && outer + inner >= 4095);
    uint64_t start = UINT64_MAX, latest_first = 0;
    for (uint32_t k = 0; k < T; k++) {
        uint64_t first = UINT64_MAX;
        for (size_t i = 0; i < tr.n; i++)
            if (tr.ev[i].ph == 'X' && tr.ev[i].tid == k && tr.ev[i].ts < first)
                first = tr.ev[i].ts;
        if (first < start)
            start = first;
        if (first != UINT64_MAX && first > latest_first)
            latest_first = first;
    }
    EXPECT(start != UINT64_MAX && start <= latest_first);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* A private directory for the kinds of files below. */
static int tmp_dir(char *buf, size_t n)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/dagrt-trace-kinds-XXXXXX", dir && *dir ? dir : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

/* Entries of dir other than `keep` (temporaries left behind). */
static int stray_files(const char *dir, const char *keep1, const char *keep2, const char *keep3)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (!keep1 || strcmp(e->d_name, keep1)) && (!keep2 || strcmp(e->d_name, keep2)) &&
            (!keep3 || strcmp(e->d_name, keep3))) {
            fprintf(stderr, "%s: stray %s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static bool is_trace_text(const char *buf)
{
    size_t n = strlen(buf);
    return strncmp(buf, "{\"traceEvents\":[", 16) == 0 && n > 3 && strcmp(buf + n - 3, "}}\n") == 0;
}

/* Reads what is waiting on fd (non-blocking) into buf. */
static void drain_fd(int fd, char *buf, size_t n)
{
    size_t k = 0;
    for (ssize_t r; k + 1 < n && (r = read(fd, buf + k, n - 1 - k)) > 0;)
        k += (size_t)r;
    buf[k] = '\0';
}

/* DAGRT_TRACE naming something other than a regular file: a FIFO and a
 * symlink onto a pipe (as /dev/stdout is) are written in place, never
 * replaced; a FIFO without a reader is an error, not a wait; a character
 * device (made here, never the system's /dev/null) is written in place; a
 * symlink's target is replaced in its own directory and the link kept; a
 * socket is refused; nothing is left behind. */
static int trace_file_kinds(void)
{
    int bad = 0;
    char dir[400], p[512], q[512];
    if (tmp_dir(dir, sizeof dir) != 0)
        return 1;
    rt_trace *t = rt_trace_create(1, 0, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    rt_trace_node a = node("g", "kinds", 0, 0);
    rt_trace_begin(t, 0, &a);
    rt_trace_end(t, 0, &a);
    rt_trace_set_on(t, false);
    static char buf[1 << 16];
    struct stat st;

    /* A FIFO with a reader: in place, still a FIFO. */
    snprintf(p, sizeof p, "%s/fifo", dir);
    EXPECT(mkfifo(p, 0600) == 0);
    int rfd = open(p, O_RDONLY | O_NONBLOCK);
    EXPECT(rfd >= 0);
    EXPECT(rt_trace_write(t, p) == 0);
    drain_fd(rfd, buf, sizeof buf);
    EXPECT(is_trace_text(buf) && strstr(buf, "\"kinds\""));
    close(rfd);
    EXPECT(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    /* Without a reader: an error at once, the FIFO untouched. */
    EXPECT(rt_trace_write(t, p) == DAGRT_EIO && dagrt_last_os_error() == ENXIO);
    EXPECT(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    unlink(p);

    /* A symlink onto a pipe, as /dev/stdout is onto a redirected one. */
    int pfd[2];
    EXPECT(pipe(pfd) == 0);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    snprintf(p, sizeof p, "%s/stdout", dir);
    snprintf(q, sizeof q, "/proc/self/fd/%d", pfd[1]);
    EXPECT(symlink(q, p) == 0);
    EXPECT(rt_trace_write(t, p) == 0);
    drain_fd(pfd[0], buf, sizeof buf);
    EXPECT(is_trace_text(buf));
    EXPECT(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
    close(pfd[0]);
    close(pfd[1]);
    unlink(p);

    /* A character device of our own (the null device's numbers): written
     * in place where we may make one (root), skipped elsewhere. */
    snprintf(p, sizeof p, "%s/null", dir);
    if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        EXPECT(rt_trace_write(t, p) == 0);
        EXPECT(lstat(p, &st) == 0 && S_ISCHR(st.st_mode));
        unlink(p);
    }

    /* A symlink to a file in another directory: the file replaced there,
     * through a temporary beside it; the link stays a link. */
    snprintf(p, sizeof p, "%s/sub", dir);
    EXPECT(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/sub/real.json", dir);
    FILE *f = fopen(p, "w");
    EXPECT(f != NULL);
    if (f) {
        fputs("old", f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/link.json", dir);
    EXPECT(symlink("sub/real.json", p) == 0);
    EXPECT(rt_trace_write(t, p) == 0);
    EXPECT(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
    snprintf(q, sizeof q, "%s/sub/real.json", dir);
    tc_trace tr;
    int v = tc_load_checked(q, &tr);
    EXPECT(v == 0);
    if (v >= 0) {
        EXPECT(tc_count(&tr, "kinds", -1) == 1);
        tc_free(&tr);
    }
    /* A dangling one: its target is made. */
    snprintf(p, sizeof p, "%s/dangling.json", dir);
    EXPECT(symlink("sub/new.json", p) == 0);
    EXPECT(rt_trace_write(t, p) == 0);
    EXPECT(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
    snprintf(q, sizeof q, "%s/sub/new.json", dir);
    EXPECT(stat(q, &st) == 0 && S_ISREG(st.st_mode));
    snprintf(q, sizeof q, "%s/sub", dir);
    EXPECT(stray_files(q, "real.json", "new.json", NULL) == 0);
    EXPECT(stray_files(dir, "link.json", "dangling.json", "sub") == 0);

    /* A socket: refused, left as it is. */
    snprintf(p, sizeof p, "%s/sock", dir);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t pl = strlen(p);
    if (pl < sizeof sa.sun_path)
        memcpy(sa.sun_path, p, pl + 1);
    if (sfd >= 0 && pl < sizeof sa.sun_path && bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        EXPECT(rt_trace_write(t, p) == DAGRT_EINVAL);
        EXPECT(lstat(p, &st) == 0 && S_ISSOCK(st.st_mode));
    }
    if (sfd >= 0)
        close(sfd);
    unlink(p);

    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    EXPECT(system(p) == 0);
    rt_trace_destroy(t);
    return bad;
}

/* Two runtimes' recorders writing at once, from two threads (each
 * runtime's own main thread), to one file: no race on the temporaries'
 * names (ThreadSanitizer watches the counter), every write whole. */
typedef struct pair_arg {
    rt_trace *t;
    const char *path;
    unsigned n;
    int failed;
} pair_arg;

static void *pair_writer(void *p)
{
    pair_arg *a = p;
    for (unsigned i = 0; i < a->n; i++)
        if (rt_trace_write(a->t, a->path) != 0)
            a->failed++;
    return NULL;
}

static int trace_two_writers(void)
{
    int bad = 0;
    char path[512];
    tmp_path(path, sizeof path, "two");
    rt_trace *t[2] = {rt_trace_create(1, 0, 0), rt_trace_create(1, 0, 0)};
    if (!t[0] || !t[1])
        return 1;
    pthread_t th[2];
    pair_arg args[2];
    for (int i = 0; i < 2; i++) {
        rt_trace_set_on(t[i], true);
        rt_trace_node n = node("g", i ? "second" : "first", 0, 0);
        rt_trace_begin(t[i], 0, &n);
        rt_trace_end(t[i], 0, &n);
        args[i] = (pair_arg){t[i], path, 200, 0};
    }
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, pair_writer, &args[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    EXPECT(args[0].failed == 0 && args[1].failed == 0);
    tc_trace tr;
    int v = tc_load_checked(path, &tr);
    EXPECT(v == 0);
    if (v >= 0) {
        EXPECT(tc_count(&tr, "first", -1) + tc_count(&tr, "second", -1) == 1);
        tc_free(&tr);
    }
    unlink(path);
    rt_trace_destroy(t[0]);
    rt_trace_destroy(t[1]);
    return bad;
}

/* The frame marker's span of graph g's frame fr: its 'b' and 'e' (NULL
 * when missing or not exactly one of each). */
static int frame_span(const tc_trace *tr, const char *g, int64_t fr, const tc_event **b,
                      const tc_event **e)
{
    int nb = 0, ne = 0;
    *b = *e = NULL;
    for (size_t i = 0; i < tr->n; i++) {
        const tc_event *x = &tr->ev[i];
        if ((x->ph != 'b' && x->ph != 'e') || strcmp(x->cat, "dagrt.frame") != 0 ||
            strcmp(x->graph, g) != 0 || x->frame != fr)
            continue;
        if (x->ph == 'b') {
            *b = x;
            nb++;
        } else {
            *e = x;
            ne++;
        }
    }
    return nb == 1 && ne == 1 ? 0 : 1;
}

/* Frame marks: one span per graph run, from its first node's begin to its
 * last node's end, named and numbered by the run's frame; runs of one
 * graph in flight at once on lanes (ids) of their own. */
static int trace_frame_marks(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(2, 0, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    for (uint64_t f = 0; f < 3; f++) {      /* "a": one run after another */
        rt_trace_node x = node("a", "first", 0, f), y = node("a", "last", 1, f);
        rt_trace_begin(t, 0, &x);
        rt_trace_end(t, 0, &x);
        rt_trace_begin(t, 1, &y);
        rt_trace_end(t, 1, &y);
    }
    rt_trace_node p0 = node("b", "work", 0, 0), p1 = node("b", "work", 0, 1);
    rt_trace_begin(t, 0, &p0);               /* "b": frame 1 starts before 0 ends */
    rt_trace_begin(t, 1, &p1);
    /* An overlap far longer than the CPU counters' skew between vCPUs: without
     * it, a migration between the two calls could stamp them out of order. */
    usleep(1000);
    rt_trace_end(t, 0, &p0);
    rt_trace_end(t, 1, &p1);
    rt_trace_set_on(t, false);
    char path[512];
    tmp_path(path, sizeof path, "marks");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    int v = load_checked(path, &tr);
    bad += v;
    if (v > 0 && tr.n == 0)
        return bad;
    const tc_event *b, *e;
    int64_t lane_a = -1;
    for (int64_t f = 0; f < 3; f++) {
        EXPECT(frame_span(&tr, "a", f, &b, &e) == 0);
        if (!b || !e)
            continue;
        char name[32];
        snprintf(name, sizeof name, "frame %lld", (long long)f);
        EXPECT(strcmp(b->name, name) == 0 && strcmp(e->name, name) == 0);
        EXPECT(b->id == e->id && b->id >= 0);
        EXPECT(lane_a < 0 || b->id == lane_a);   /* one after another: one lane */
        lane_a = b->id;
        const tc_event *x = NULL, *y = NULL;
        for (size_t i = 0; i < tr.n; i++)
            if (tr.ev[i].ph == 'X' && tr.ev[i].frame == f && strcmp(tr.ev[i].cat, "a") == 0)
                *(strcmp(tr.ev[i].name, "first") == 0 ? &x : &y) = &tr.ev[i];
        EXPECT(x && y && b->ts == x->ts && e->ts == y->ts + y->dur);
    }
    const tc_event *b0, *e0, *b1, *e1;
    EXPECT(frame_span(&tr, "b", 0, &b0, &e0) == 0 && frame_span(&tr, "b", 1, &b1, &e1) == 0);
    if (b0 && b1 && e0 && e1) {
        EXPECT(b1->ts < e0->ts);                 /* they overlap... */
        EXPECT(b0->id != b1->id && b0->id == e0->id && b1->id == e1->id);   /* ...on two lanes */
        EXPECT(b0->id != lane_a && b1->id != lane_a);
    }
    EXPECT(frame_span(&tr, "b", 2, &b, &e) != 0 && !b && !e);   /* no such run */
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* Reads a whole file (NUL-terminated), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += r) + 1 == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static const char *jstr(const dg_json *o, const char *key)
{
    const dg_json *v = dg_json_get(o, key);
    return v && v->kind == DG_JSON_STR ? v->str : "";
}

static double jnum(const dg_json *o, const char *key)
{
    const dg_json *v = dg_json_get(o, key);
    return v && v->kind == DG_JSON_NUM ? v->num : -1;
}

/* A path ending in .speedscope.json gets speedscope's own format: one
 * symbol per node of a graph (and one for idle), however many frames,
 * pieces and slices it ran as; one evented profile per thread whose opens
 * and closes are in time order and balanced. */
static int trace_speedscope(void)
{
    int bad = 0;
    rt_trace *t = rt_trace_create(2, 0, 0);
    if (!t)
        return 1;
    rt_trace_set_on(t, true);
    for (uint64_t f = 0; f < 4; f++) {
        rt_trace_node a = node("frame", "physics", 0, f), b = node("frame", "audio", 1, f);
        rt_trace_node p = node("frame", "particles", 2, f);
        p.piece = true;
        p.begin = 0;
        p.end = 64;
        rt_trace_node u1 = node("g1", "update", 0, f), u2 = node("g2", "update", 0, f);
        rt_trace_begin(t, 0, &a);
        rt_trace_begin(t, 0, &b);            /* a wait that helps: nested */
        rt_trace_end(t, 0, &b);
        rt_trace_end(t, 0, &a);
        rt_trace_begin(t, 1, &p);
        rt_trace_end(t, 1, &p);
        rt_trace_mark(t, 1, RT_TRACE_STEAL);
        rt_trace_begin(t, 1, &u1);
        rt_trace_end(t, 1, &u1);
        rt_trace_begin(t, 0, &u2);
        rt_trace_end(t, 0, &u2);
        rt_trace_idle(t, 1);
        rt_trace_wake(t, 1);
    }
    rt_trace_set_on(t, false);
    char path[512];
    tmp_path(path, sizeof path, "x.speedscope");   /* ...-x.speedscope.json */
    EXPECT(rt_trace_write(t, path) == 0);
    size_t len = 0;
    char *buf = slurp(path, &len), err[256];
    dg_arena ar;
    dg_arena_init(&ar);
    const dg_json *root = buf ? dg_json_parse(&ar, path, buf, len, NULL, err, sizeof err) : NULL;
    EXPECT(root != NULL);
    if (!root) {
        fprintf(stderr, "%s\n", buf ? err : "no file");
        dg_arena_free(&ar);
        free(buf);
        return bad;
    }
    EXPECT(strcmp(jstr(root, "$schema"), "https://www.speedscope.app/file-format-schema.json") == 0);
    const dg_json *frames = dg_json_get(dg_json_get(root, "shared"), "frames");
    static const char *const want[][2] = {{"physics", "frame"}, {"audio", "frame"},
                                          {"particles", "frame"}, {"update", "g1"},
                                          {"update", "g2"}, {"idle", "dagrt"}};
    enum { NW = sizeof want / sizeof want[0] };
    EXPECT(frames && frames->kind == DG_JSON_ARR && frames->n == NW);
    long idx[NW];
    for (size_t w = 0; w < NW; w++) {
        idx[w] = -1;
        for (size_t i = 0; frames && i < frames->n; i++)
            if (strcmp(jstr(frames->items[i], "name"), want[w][0]) == 0 &&
                strcmp(jstr(frames->items[i], "file"), want[w][1]) == 0) {
                EXPECT(idx[w] < 0);              /* one symbol each */
                idx[w] = (long)i;
            }
        EXPECT(idx[w] >= 0);
    }
    const dg_json *profiles = dg_json_get(root, "profiles");
    EXPECT(profiles && profiles->kind == DG_JSON_ARR && profiles->n == 2);
    size_t opens[NW + 1] = {0};
    for (size_t pi = 0; profiles && pi < profiles->n; pi++) {
        const dg_json *pr = profiles->items[pi];
        EXPECT(strcmp(jstr(pr, "type"), "evented") == 0);
        EXPECT(strcmp(jstr(pr, "unit"), "nanoseconds") == 0);
        EXPECT(strcmp(jstr(pr, "name"), pi ? "dagrt-worker-1" : "dagrt-main") == 0);
        const dg_json *evs = dg_json_get(pr, "events");
        double at = jnum(pr, "startValue"), end = jnum(pr, "endValue");
        long stack[64];
        size_t depth = 0;
        for (size_t i = 0; evs && i < evs->n; i++) {
            const dg_json *e = evs->items[i];
            long fr = (long)jnum(e, "frame");
            double when = jnum(e, "at");
            EXPECT(when >= at && when <= end);   /* in time order, within the profile */
            at = when;
            if (strcmp(jstr(e, "type"), "O") == 0) {
                EXPECT(depth < 64);
                if (depth < 64)
                    stack[depth++] = fr;
                for (size_t w = 0; w < NW; w++)
                    opens[w] += idx[w] == fr;
            } else {
                EXPECT(strcmp(jstr(e, "type"), "C") == 0);
                EXPECT(depth > 0 && stack[depth - 1] == fr);   /* closes the innermost */
                if (depth > 0)
                    depth--;
            }
        }
        EXPECT(depth == 0);
    }
    for (size_t w = 0; w < NW; w++)
        EXPECT(opens[w] == 4);                   /* four frames of each */
    dg_arena_free(&ar);
    free(buf);
    unlink(path);
    /* Any other name: the Trace Event Format, as before. */
    tmp_path(path, sizeof path, "not-speedscope");
    EXPECT(rt_trace_write(t, path) == 0);
    tc_trace tr;
    bad += load_checked(path, &tr);
    EXPECT(tc_count(&tr, "particles", -1) == 4);
    tc_free(&tr);
    unlink(path);
    rt_trace_destroy(t);
    return bad;
}

/* The observer's scenarios of the list are obs_scenarios.c's (extern keeps
 * the linkage of one defined static above). */
#define SCENARIO(group, name, secs, flags) extern int name(void);
#include "trace_list.h"
#undef SCENARIO

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "trace_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
