/*
 * obs_scenarios.c - the observer hooks and the trace recorder end to end:
 * obs.dag run on the runtime, its trace read back through dagc's strict
 * JSON reader (tests/trace/trace_check.c) and its observer callbacks
 * checked for balance. Each scenario returns its number of violations;
 * listed in trace_list.h (group observe), hosted by tests/scenario/ (Criterion, suite
 * unit; the plain driver, suite tsan), see docs/testing.md.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obs.h"
#include "trace_check.h"

/* The scenarios of trace_list.h (the table is trace_scenarios.c's). */
#define SCENARIO(group, name, secs, flags) int name(void);
#include "trace_list.h"
#undef SCENARIO

static unsigned scaled(unsigned n)
{
    const char *s = getenv("DAGC_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    unsigned v = (unsigned)(n * (f > 0 ? f : 1.0));
    return v < 4 ? 4 : v;
}

static void tmp_path(char *buf, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/dagrt-obs-%ld-%s.json", dir && *dir ? dir : "/tmp", (long)getpid(), what);
}

static dagrt *make_rt(int workers, const dagrt_observer *obs, void *user)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.observer = obs;
    cfg.observer_user = user;
    return dagrt_create(&cfg);
}

static int run_frames(dagrt *rt, struct obs_ctx *c, unsigned frames, uint64_t first)
{
    int bad = 0;
    for (unsigned f = 0; f < frames; f++) {
        c->frame = first + f;
        EXPECT(obs_run(rt, c) == 0);
    }
    return bad;
}

/* The lowest frame number among the trace's node events. */
static int64_t first_frame(const tc_trace *t)
{
    int64_t m = -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'X' && t->ev[i].frame >= 0 && (m < 0 || t->ev[i].frame < m))
            m = t->ev[i].frame;
    return m;
}

static int cmp_piece(const void *a, const void *b)
{
    const tc_event *x = *(const tc_event *const *)a, *y = *(const tc_event *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* What one frame of obs.dag must show: one event per task run (the fiber
 * task one per slice, OBS_LOADER_YIELDS + 1 slices), the pieces of
 * particles covering [0, OBS_PARTICLES) exactly once, shadows in odd
 * frames only (the caller's frame count, which starts at 0 with the
 * trace's first frame here). */
static int check_frame(const tc_trace *t, int64_t frame, uint64_t user_frame)
{
    int bad = 0;
    static const char *const once[] = {"input", "physics", "ai", "render"};
    for (size_t k = 0; k < 4; k++)
        if (tc_count(t, once[k], frame) != 1) {
            fprintf(stderr, "frame %lld: %zu events of %s\n", (long long)frame,
                    tc_count(t, once[k], frame), once[k]);
            bad++;
        }
    EXPECT(tc_count(t, "shadows", frame) == (user_frame % 2 == 1 ? 1u : 0u));
    EXPECT(tc_count(t, "sim", frame) == 0);  /* a gate runs nothing */
    size_t slices = 0, firsts = 0, lasts = 0, np = 0;
    const tc_event **pieces = malloc((t->n + 1) * sizeof *pieces);
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph != 'X' || e->frame != frame)
            continue;
        EXPECT(strcmp(e->cat, "obs") == 0);
        if (strcmp(e->name, "loader") == 0) {
            slices++;
            firsts += !e->resumed;
            lasts += !e->suspended;
        }
        if (strcmp(e->name, "particles") == 0) {
            EXPECT(e->begin >= 0 && e->end > e->begin);
            pieces[np++] = e;
        }
    }
    EXPECT(slices == OBS_LOADER_YIELDS + 1 && firsts == 1 && lasts == 1);
    qsort(pieces, np, sizeof *pieces, cmp_piece);
    int64_t at = 0;
    for (size_t i = 0; i < np; i++) {
        if (pieces[i]->begin != at) {
            fprintf(stderr, "frame %lld: particles piece at %lld, expected %lld\n",
                    (long long)frame, (long long)pieces[i]->begin, (long long)at);
            bad++;
        }
        at = pieces[i]->end;
    }
    EXPECT(np > 0 && at == OBS_PARTICLES);
    free(pieces);
    return bad;
}

/* The API recorder: start, frames, stop, write, read back. */
int obs_trace_api(void)
{
    int bad = 0;
    dagrt *rt = make_rt(2, NULL, NULL);
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    static struct obs_ctx c;
    c.rt = rt;
    EXPECT(dagrt_trace_write(rt, "/tmp/never.json") == DAGRT_EINVAL);  /* nothing started */
    EXPECT(dagrt_trace_stop(rt) == DAGRT_EINVAL);
    bad += run_frames(rt, &c, 3, 0);          /* not recorded */
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    unsigned frames = scaled(40);
    bad += run_frames(rt, &c, frames, 0);
    EXPECT(dagrt_trace_stop(rt) == 0);
    bad += run_frames(rt, &c, 3, 0);          /* stopped: not recorded */
    char path[512];
    tmp_path(path, sizeof path, "api");
    EXPECT(dagrt_trace_write(rt, path) == 0);
    /* A system failure is an I/O error that keeps the system's reason. */
    EXPECT(dagrt_trace_write(rt, "/nonexistent-dir/t.json") == DAGRT_EIO);
    EXPECT(dagrt_last_os_error() == ENOENT);
    dagrt_destroy(rt);
    tc_trace t;
    int v = tc_load_checked(path, &t);
    if (v < 0)
        return bad + 1;
    bad += v;
    int64_t f0 = first_frame(&t);
    EXPECT(f0 >= 3);
    size_t in_range = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].ph == 'X' && t.ev[i].frame >= 0)
            in_range += t.ev[i].frame >= f0 && t.ev[i].frame < f0 + (int64_t)frames;
    EXPECT(in_range == tc_count(&t, NULL, -1) - tc_count(&t, "idle", -1));
    for (unsigned f = 0; f < frames; f++)
        bad += check_frame(&t, f0 + f, f);
    /* every task run is in the file: 4 plain + loader's slices + shadows */
    tc_free(&t);
    unlink(path);
    return bad;
}

/* DAGRT_TRACE and DAGRT_TRACE_FRAMES: no code change, written at destroy. */
int obs_trace_env(void)
{
    int bad = 0;
    char path[512];
    tmp_path(path, sizeof path, "env");
    unlink(path);
    setenv("DAGRT_TRACE", path, 1);
    setenv("DAGRT_TRACE_FRAMES", "3", 1);
    dagrt *rt = make_rt(1, NULL, NULL);
    unsetenv("DAGRT_TRACE");
    unsetenv("DAGRT_TRACE_FRAMES");
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    static struct obs_ctx c;
    c.rt = rt;
    bad += run_frames(rt, &c, 10, 0);
    EXPECT(access(path, F_OK) != 0);         /* not before destroy */
    dagrt_destroy(rt);
    tc_trace t;
    int v = tc_load_checked(path, &t);
    if (v < 0)
        return bad + 1;
    bad += v;
    int64_t f0 = first_frame(&t);
    for (unsigned f = 0; f < 3; f++)
        bad += check_frame(&t, f0 + f, 7 + f);
    EXPECT(tc_count(&t, "render", -1) == 3);
    tc_free(&t);
    unlink(path);
    return bad;
}

/* ------------------------------------------------ observer balance */

#define MAXT 64
#define DEPTH 32

typedef struct span { uint32_t index; uint64_t frame; size_t begin; bool piece; } span;

/* Per thread: touched only by that thread (the observer is called on the
 * thread the event happens on), so plain fields, no race. */
typedef struct tstack {
    span s[DEPTH];
    int n;
    long events;
} tstack;

typedef struct bal {
    tstack t[MAXT];
    _Atomic long begins, ends, suspends, resumes, starts, stops, idles, wakes, bad;
    _Atomic long pieces, items;
} bal;

static _Thread_local int tl_thread = -1;   /* from thread_start, on that thread */

static void note_bad(bal *b, const char *what, const dagrt_node_event *e)
{
    /* relaxed: a counter read after the threads are joined */
    if (atomic_fetch_add_explicit(&b->bad, 1, memory_order_relaxed) < 10)
        fprintf(stderr, "observer: %s (node %s, thread %d, on thread %d)\n", what,
                e ? e->node : "-", e ? e->thread : -1, tl_thread);
}

static void push(bal *b, const dagrt_node_event *e)
{
    if (e->thread < 0 || e->thread >= MAXT || e->thread != tl_thread) {
        note_bad(b, "event reported for another thread", e);
        return;
    }
    tstack *t = &b->t[e->thread];
    if (t->n == DEPTH) {
        note_bad(b, "nesting too deep", e);
        return;
    }
    t->s[t->n++] = (span){e->index, e->frame, e->begin, e->piece};
    t->events++;
}

static void pop(bal *b, const dagrt_node_event *e)
{
    if (e->thread < 0 || e->thread >= MAXT || e->thread != tl_thread) {
        note_bad(b, "event reported for another thread", e);
        return;
    }
    tstack *t = &b->t[e->thread];
    if (t->n == 0) {
        note_bad(b, "end without a begin on this thread", e);
        return;
    }
    span *s = &t->s[t->n - 1];
    if (s->index != e->index || s->frame != e->frame || s->piece != e->piece || s->begin != e->begin)
        note_bad(b, "end does not match the innermost begin", e);
    t->n--;
}

static void on_begin(void *u, const dagrt_node_event *e)
{
    bal *b = u;
    push(b, e);
    atomic_fetch_add_explicit(&b->begins, 1, memory_order_relaxed);  /* relaxed: counters */
    if (e->piece) {
        atomic_fetch_add_explicit(&b->pieces, 1, memory_order_relaxed);  /* relaxed: a counter */
        atomic_fetch_add_explicit(&b->items, (long)(e->end - e->begin), memory_order_relaxed);
    }
    if (!e->graph || strcmp(e->graph, "obs") != 0 || !e->node)
        note_bad(b, "event without the graph's or node's name", e);
}
static void on_end(void *u, const dagrt_node_event *e)
{
    bal *b = u;
    pop(b, e);
    atomic_fetch_add_explicit(&b->ends, 1, memory_order_relaxed);  /* relaxed: a counter */
}
static void on_suspend(void *u, const dagrt_node_event *e)
{
    bal *b = u;
    pop(b, e);
    atomic_fetch_add_explicit(&b->suspends, 1, memory_order_relaxed);  /* relaxed: a counter */
    if (strcmp(e->node, "loader") != 0)
        note_bad(b, "a suspend of a task that is not a fiber task", e);
}
static void on_resume(void *u, const dagrt_node_event *e)
{
    bal *b = u;
    push(b, e);
    atomic_fetch_add_explicit(&b->resumes, 1, memory_order_relaxed);  /* relaxed: a counter */
}
static void on_start(void *u, int thread, const char *name)
{
    bal *b = u;
    char want[32];
    if (thread == 0) snprintf(want, sizeof want, "dagrt-main");
    else snprintf(want, sizeof want, "dagrt-worker-%d", thread);
    if (tl_thread != -1 || strcmp(name, want) != 0)
        note_bad(b, "thread started twice or misnamed", NULL);
    tl_thread = thread;
    atomic_fetch_add_explicit(&b->starts, 1, memory_order_relaxed);  /* relaxed: a counter */
}
/* A thread event must come on the thread it names; counts it in N. */
static void on_own_thread(bal *b, int thread, const char *bad, _Atomic long *n)
{
    if (thread != tl_thread)
        note_bad(b, bad, NULL);
    atomic_fetch_add_explicit(n, 1, memory_order_relaxed);  /* relaxed: a counter */
}
static void on_stop(void *u, int thread)
{
    bal *b = u;
    on_own_thread(b, thread, "thread_stop on another thread", &b->stops);
}
static void on_idle(void *u, int thread)
{
    bal *b = u;
    on_own_thread(b, thread, "idle on another thread", &b->idles);
}
static void on_wake(void *u, int thread)
{
    bal *b = u;
    on_own_thread(b, thread, "wake on another thread", &b->wakes);
}

static const dagrt_observer balance_obs = {
    .node_begin = on_begin, .node_end = on_end, .fiber_suspend = on_suspend,
    .fiber_resume = on_resume, .thread_start = on_start, .thread_stop = on_stop,
    .idle = on_idle, .wake = on_wake,
};

int obs_balanced(void)
{
    int bad = 0;
    static bal b;
    memset(&b, 0, sizeof b);
    const int workers = 3;
    dagrt *rt = make_rt(workers, &balance_obs, &b);
    EXPECT(rt != NULL);
    if (!rt)
        return bad;
    static struct obs_ctx c;
    c.rt = rt;
    unsigned frames = scaled(200);
    bad += run_frames(rt, &c, frames, 0);
    dagrt_destroy(rt);
    /* relaxed loads: every thread has been joined */
    long begins = atomic_load_explicit(&b.begins, memory_order_relaxed);
    long resumes = atomic_load_explicit(&b.resumes, memory_order_relaxed);
    EXPECT(atomic_load_explicit(&b.bad, memory_order_relaxed) == 0);
    EXPECT(begins == atomic_load_explicit(&b.ends, memory_order_relaxed) -
                         resumes + atomic_load_explicit(&b.suspends, memory_order_relaxed));
    EXPECT(resumes == atomic_load_explicit(&b.suspends, memory_order_relaxed));
    EXPECT(resumes == (long)frames * OBS_LOADER_YIELDS);
    /* input, physics, ai, loader, render every frame, shadows every other */
    long plain = begins - atomic_load_explicit(&b.pieces, memory_order_relaxed);
    EXPECT(plain == (long)frames * 5 + (long)frames / 2);
    EXPECT(atomic_load_explicit(&b.items, memory_order_relaxed) == (long)frames * OBS_PARTICLES);
    EXPECT(atomic_load_explicit(&b.starts, memory_order_relaxed) == workers + 1);
    EXPECT(atomic_load_explicit(&b.stops, memory_order_relaxed) == workers + 1);
    EXPECT(atomic_load_explicit(&b.idles, memory_order_relaxed) >=
           atomic_load_explicit(&b.wakes, memory_order_relaxed));
    for (int k = 0; k < MAXT; k++)
        EXPECT(b.t[k].n == 0);
    return bad;
}

/* Installing and removing observers between frames; misuse. */
static _Atomic long counted, main_starts;

static void count_begin(void *u, const dagrt_node_event *e)
{
    (void)u;
    (void)e;
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);  /* relaxed: a counter */
}
static void count_start(void *u, int thread, const char *name)
{
    (void)u;
    if (thread == 0 && strcmp(name, "dagrt-main") == 0)
        atomic_fetch_add_explicit(&main_starts, 1, memory_order_relaxed);  /* relaxed: a counter */
}
static const dagrt_observer count_obs = {.node_begin = count_begin, .thread_start = count_start};

static void *off_thread(void *p)
{
    long rc = dagrt_set_observer(p, &count_obs, NULL);
    return (void *)rc;
}

int obs_install(void)
{
    int bad = 0;
    dagrt *rt = make_rt(1, NULL, NULL);
    if (!rt)
        return 1;
    static struct obs_ctx c;
    c.rt = rt;
    bad += run_frames(rt, &c, 2, 0);
    EXPECT(atomic_load_explicit(&counted, memory_order_relaxed) == 0);
    EXPECT(dagrt_set_observer(rt, &count_obs, NULL) == 0);
    EXPECT(atomic_load_explicit(&main_starts, memory_order_relaxed) == 1);  /* at once */
    bad += run_frames(rt, &c, 2, 0);
    long seen = atomic_load_explicit(&counted, memory_order_relaxed);
    EXPECT(seen > 0);
    EXPECT(dagrt_set_observer(rt, NULL, NULL) == 0);
    bad += run_frames(rt, &c, 2, 0);
    EXPECT(atomic_load_explicit(&counted, memory_order_relaxed) == seen);  /* removed */
    pthread_t th;
    void *res;
    pthread_create(&th, NULL, off_thread, rt);
    pthread_join(th, &res);
    EXPECT((long)res == DAGRT_EPERM);
    EXPECT(dagrt_set_observer(NULL, NULL, NULL) == DAGRT_EINVAL);
    dagrt_destroy(rt);
    return bad;
}

/* dagrt_get_stats: sizes, counts that add up, misuse. */
int obs_stats(void)
{
    int bad = 0;
    dagrt *rt = make_rt(2, NULL, NULL);
    if (!rt)
        return 1;
    static struct obs_ctx c;
    c.rt = rt;
    EXPECT(dagrt_get_stats(rt, NULL, 0) == 3);
    EXPECT(dagrt_get_stats(NULL, NULL, 0) == DAGRT_EINVAL);
    EXPECT(dagrt_get_stats(rt, NULL, 2) == DAGRT_EINVAL);
    EXPECT(dagrt_get_stats(rt, NULL, -1) == DAGRT_EINVAL);
    dagrt_thread_stats s0[3], s1[3];
    EXPECT(dagrt_get_stats(rt, s0, 3) == 3);
    unsigned frames = scaled(100);
    bad += run_frames(rt, &c, frames, 0);
    EXPECT(dagrt_get_stats(rt, s1, 3) == 3);
    uint64_t tasks = 0;
    for (int k = 0; k < 3; k++) {
        EXPECT(s1[k].tasks >= s0[k].tasks && s1[k].idle_ns >= s0[k].idle_ns);
        EXPECT(s1[k].parks >= s0[k].parks && s1[k].steals >= s0[k].steals);
        tasks += s1[k].tasks - s0[k].tasks;
    }
    /* at least the main thread's own nodes ran as tasks somewhere */
    EXPECT(tasks >= frames);
    dagrt_thread_stats one;
    EXPECT(dagrt_get_stats(rt, &one, 1) == 3);  /* fills the first only */
    dagrt_destroy(rt);
    return bad;
}

/* Frame numbers across runs of one graph: G_run, a pipeline, a started
 * instance. Each run gets the next number of its graph whatever state it
 * runs on, so a trace or a profile never mixes two runs (render runs once a
 * frame, on the main thread: the recording needs no lock). */
#define NUMBERED 64
typedef struct numbering {
    uint64_t seen[NUMBERED];
    unsigned n;
    int other;   /* render reported off the main thread or too often */
} numbering;

static void number_begin(void *u, const dagrt_node_event *e)
{
    numbering *nb = u;
    if (strcmp(e->node, "render") != 0)
        return;
    if (e->thread != 0 || nb->n == NUMBERED)
        nb->other++;
    else
        nb->seen[nb->n++] = e->frame;
}

int obs_numbering(void)
{
    int bad = 0;
    static numbering nb;
    memset(&nb, 0, sizeof nb);
    static const dagrt_observer numbering_obs = {.node_begin = number_begin};
    dagrt *rt = make_rt(2, &numbering_obs, &nb);
    if (!rt)
        return 1;
    static struct obs_ctx c;
    c.rt = rt;
    bad += run_frames(rt, &c, 3, 0);
    /* c.frame stays as it is while frames are in flight (shadows_on reads it). */
    static obs_pipeline_t p;
    EXPECT(obs_pipeline_init(&p, 2) == 0);
    for (int f = 0; f < 5; f++)
        EXPECT(obs_pipeline_submit(rt, &p, &c) == 0);
    EXPECT(obs_pipeline_drain(rt, &p) == 0);
    static obs_instance_t in;
    obs_instance_init(&in);
    EXPECT(obs_instance_start(rt, &in, &c) == 0);
    EXPECT(obs_instance_wait(rt, &in) == 0);
    bad += run_frames(rt, &c, 1, 3);
    dagrt_destroy(rt);
    EXPECT(nb.other == 0);
    EXPECT(nb.n == 10);
    for (unsigned k = 0; k < nb.n; k++)
        if (nb.seen[k] != k) {
            fprintf(stderr, "numbering: run %u reported as frame %llu\n", k,
                    (unsigned long long)nb.seen[k]);
            bad++;
        }
    return bad;
}

/* ------------------------------------------- DAGRT_TRACE at the end */

enum exit_how { EXIT_FROM_MAIN, EXIT_FROM_TASK, EXIT_IN_FLIGHT };

static void exit_task(void *arg)
{
    (void)arg;
    exit(0);   /* from a task on a worker, the main thread waiting */
}

/* The child: records a few frames under DAGRT_TRACE, then ends without
 * dagrt_destroy. */
static void exit_child(const char *path, enum exit_how how)
{
    setenv("DAGRT_TRACE", path, 1);
    dagrt *rt = make_rt(2, NULL, NULL);
    if (!rt)
        _exit(3);
    static struct obs_ctx c;
    c.rt = rt;
    for (unsigned f = 0; f < 4; f++) {
        c.frame = f;
        if (obs_run(rt, &c) != 0)
            _exit(4);
    }
    if (how == EXIT_FROM_TASK) {
        static dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn(rt, &g, exit_task, NULL);
        dagrt_group_wait(rt, &g);
        _exit(5);   /* not reached: the task ended the process */
    }
    if (how == EXIT_IN_FLIGHT) {
        static obs_instance_t in;
        obs_instance_init(&in);
        c.frame = 4;
        obs_instance_start(rt, &in, &c);   /* render, on main, waits for a pump that never comes */
    }
    exit(0);   /* what returning from main does */
}

/* The trace is written when the program ends without dagrt_destroy:
 * returning from main, exit() from a task, a frame still in flight. */
int obs_trace_at_exit(void)
{
    int bad = 0;
    static const char *const names[] = {"main", "task", "flight"};
    for (int how = EXIT_FROM_MAIN; how <= EXIT_IN_FLIGHT; how++) {
        char path[512], what[32];
        snprintf(what, sizeof what, "exit-%s", names[how]);
        tmp_path(path, sizeof path, what);
        unlink(path);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            exit_child(path, (enum exit_how)how);
        int st = 0;
        EXPECT(pid > 0 && waitpid(pid, &st, 0) == pid);
        /* 0: a sanitizer's report in the child (its own exit status) counts too. */
        EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        tc_trace t;
        int v = tc_load_checked(path, &t);
        if (v < 0) {
            fprintf(stderr, "at exit (%s): no trace\n", names[how]);
            bad++;
            continue;
        }
        bad += v;
        EXPECT(tc_count(&t, "render", -1) >= 4);
        EXPECT(tc_count(&t, "input", -1) >= 4);
        tc_free(&t);
        unlink(path);
    }
    return bad;
}

/* The child's standard error while it makes and ends a runtime under the
 * given DAGRT_TRACE and DAGRT_TRACE_MB, into err (n bytes). */
static void env_child_err(const char *trace, const char *mb, char *err, size_t n)
{
    char epath[512];
    tmp_path(epath, sizeof epath, "stderr.txt");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *e = freopen(epath, "w", stderr);
        if (!e)
            _exit(3);
        setenv("DAGRT_TRACE", trace, 1);
        if (mb)
            setenv("DAGRT_TRACE_MB", mb, 1);
        dagrt *rt = make_rt(1, NULL, NULL);
        if (rt)
            dagrt_destroy(rt);
        fflush(stderr);
        _exit(0);
    }
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    err[0] = '\0';
    FILE *f = fopen(epath, "r");
    if (f) {
        size_t k = fread(err, 1, n - 1, f);
        err[k] = '\0';
        fclose(f);
    }
    unlink(epath);
}

/* The cap_bytes the trace at path says it had, or 0. */
static unsigned long long cap_of(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 16];
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = '\0';
    fclose(f);
    const char *c = strstr(buf, "\"cap_bytes\":");
    return c ? strtoull(c + 12, NULL, 10) : 0;
}

/* DAGRT_TRACE_MB out of range or unreadable: the variable named, the
 * value not used (no silent overflow); a failed write keeps the system's
 * reason. */
int obs_trace_env_errors(void)
{
    int bad = 0;
    char path[512], err[4096];
    tmp_path(path, sizeof path, "env-mb");
    unlink(path);
    /* 2^44 + 1 MiB: shifted to bytes it wraps to 1 MiB. */
    env_child_err(path, "17592186044417", err, sizeof err);
    EXPECT(strstr(err, "DAGRT_TRACE_MB") && strstr(err, "out of range"));
    EXPECT(cap_of(path) > ((unsigned long long)32 << 20));   /* the default cap, not 1 MiB */
    unlink(path);
    env_child_err(path, "99999999999999999999999", err, sizeof err);
    EXPECT(strstr(err, "DAGRT_TRACE_MB") && strstr(err, "out of range"));
    unlink(path);
    env_child_err(path, "12abc", err, sizeof err);
    EXPECT(strstr(err, "DAGRT_TRACE_MB") && strstr(err, "not a non-negative number"));
    unlink(path);
    env_child_err(path, "2", err, sizeof err);
    EXPECT(err[0] == '\0');
    EXPECT(cap_of(path) > 0 && cap_of(path) <= ((unsigned long long)2 << 20));
    unlink(path);
    env_child_err("/nonexistent-dir/t.json", NULL, err, sizeof err);
    EXPECT(strstr(err, "DAGRT_TRACE='/nonexistent-dir/t.json'") &&
           strstr(err, strerror(ENOENT)));
    return bad;
}
