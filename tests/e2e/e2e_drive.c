/* e2e_drive.c - the modes in which the checker runs a graph's frames (see
 * e2e_check.h): G_run; G_instance_start, a pause, G_instance_wait; two instances started
 * together, then both waited for; pipelines of depth 1 to 4 (G_pipeline_submit,
 * G_pipeline_drain, now and then a drain mid-way so that the pipeline idles and
 * starts again). Each frame is checked once it is known to be complete:
 * after its wait, or in a pipeline of depth D after the G_pipeline_submit of frame
 * N + D returned (that one waited for frame N) or after G_pipeline_drain.
 *
 * The overlap check: in graphs named overlap* (long bodies, e2e_check.c),
 * run with 3 workers, pipelines of depth 2 and more must start some task of
 * frame N+1 while frame N still has tasks to finish, and at depth 1 never.
 * Built with E2E_SERIALISE, the checker drains before every G_pipeline_submit (a
 * runtime that serialised frames): the negative control, whose overlap
 * check must fail. Built with E2E_UNLINKED, "pipelines" are two instances
 * started in turn that nothing links: the negative control of the checks
 * across frames, which must fail (e2e_cross_failures). */
#define _POSIX_C_SOURCE 200809L
#include "e2e_state.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#endif

#define E2E_OVERLAP_FRAMES 1200

/* ------------------------------------------------------------ watchdog */
/* A frame that never ends must fail the test with what hung, not sit until
 * the test harness kills it: a thread that sees no frame begin or end for
 * DAGC_E2E_WATCHDOG seconds (default 30; 0 turns it off) prints the graph,
 * its seed, the mode, the runtime (workers, hot workers, DAGRT_PIPE), the
 * frames in flight and their tasks not done, and exits with status 3.
 * seq_cst throughout: the test's bookkeeping. */
#define E2E_HANG_EXIT 3

static _Atomic uint64_t watch_last;            /* dagrt_now_ns of the last progress */
static _Atomic uint32_t watch_frame;           /* the frame that made it */
static _Atomic(e2e_state *) watch_state;       /* the graph being run, or NULL */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static char watch_what[512];                   /* graph, seed, mode, runtime (watch_lock) */
static char watch_runtime[160];                /* workers, hot, DAGRT_PIPE (main thread only) */

void e2e_watch_progress(uint32_t frame)
{
    atomic_store(&watch_frame, frame);
    atomic_store(&watch_last, dagrt_now_ns());
}

static void watch_note(const e2e_state *s, const char *mode)
{
    const char *origin = getenv("DAGC_E2E_ORIGIN");   /* soak.py: its seed and graph */
    pthread_mutex_lock(&watch_lock);
    snprintf(watch_what, sizeof watch_what, "graph %s (checker seed %#llx%s%s), mode %s, %s",
             s->g->name, (unsigned long long)s->seed, origin ? ", " : "", origin ? origin : "",
             mode, watch_runtime);
    pthread_mutex_unlock(&watch_lock);
    e2e_watch_progress(atomic_load(&watch_frame));
}

static void set_mode(e2e_state *s, const char *mode)
{
    s->mode = mode;
    watch_note(s, mode);
}

/* What the frames in flight still wait for (read while they hang). */
static void watch_report(e2e_state *s)
{
    if (!s)
        return;
    const e2e_graph *g = s->g;
    for (int r = 0; r < E2E_RING; r++) {
        e2e_frame *fr = &s->fr[r];
        uint32_t tag = atomic_load(&fr->tag);
        if (tag == 0 || tag - 1 < atomic_load(&s->waited))
            continue;
        fprintf(stderr, "e2e watchdog:   frame %u, tasks not done:", tag - 1);
        int shown = 0;
        for (uint32_t i = 0; i < g->nnodes && shown < 40; i++)
            if (g->nodes[i].kind == DAGRT_NODE_TASK && !atomic_load(&fr->ns[i].done)) {
                fprintf(stderr, " %s%s", g->nodes[i].name,
                        atomic_load(&fr->ns[i].started) ? " (running)" : "");
                shown++;
            }
        fputc('\n', stderr);
    }
}

/* Every thread's stack, from gdb, when it is installed (DAGC_E2E_GDB=0
 * turns it off): a hang seen once in a thousand CI runs is then
 * diagnosed from the log instead of waited for again. Linux only; bounded
 * to 60 s so that a stuck gdb cannot turn the hang into a longer one. */
static void watch_stacks(void)
{
#if defined(__linux__)
    const char *e = getenv("DAGC_E2E_GDB");
    if ((e && strcmp(e, "0") == 0) || access("/usr/bin/gdb", X_OK) != 0)
        return;
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    fflush(stderr);
    pid_t k = fork();
    if (k == 0) {
        dup2(2, 1);
        execl("/usr/bin/gdb", "gdb", "-p", pid, "-batch", "-nx", "-ex", "set pagination off",
              "-ex", "thread apply all bt", (char *)NULL);
        _exit(127);
    }
    if (k < 0)
        return;
    for (int i = 0; i < 600; i++) {
        int st;
        if (waitpid(k, &st, WNOHANG) == k)
            return;
        struct timespec t = {0, 100000000};
        nanosleep(&t, NULL);
    }
    kill(k, SIGKILL);
    waitpid(k, NULL, 0);
#endif
}

static void *watchdog(void *arg)
{
    uint64_t bound = (uint64_t)(uintptr_t)arg * 1000000000ull;
    for (;;) {
        struct timespec t = {0, 250000000};
        nanosleep(&t, NULL);
        uint64_t last = atomic_load(&watch_last), now = dagrt_now_ns();
        if (last == 0 || now < last || now - last < bound)
            continue;
        pthread_mutex_lock(&watch_lock);
        fprintf(stderr, "e2e watchdog: no frame began or ended for %llu s (DAGC_E2E_WATCHDOG): "
                "hung in %s, frame %u\n", (unsigned long long)(bound / 1000000000ull), watch_what,
                atomic_load(&watch_frame));
        watch_report(atomic_load(&watch_state));
        watch_stacks();
        fprintf(stderr, "e2e watchdog: FAILED (hang)\n");
        fflush(stderr);
        fflush(stdout);
        _exit(E2E_HANG_EXIT);
    }
    return NULL;
}

static void watch_start(void)
{
    static bool started;
    if (started)
        return;
    started = true;
    const char *e = getenv("DAGC_E2E_WATCHDOG");
    long sec = e ? atol(e) : 30;
    if (sec <= 0)
        return;
    e2e_watch_progress(0);
#if defined(__linux__) && defined(PR_SET_PTRACER)
    /* Yama's ptrace scope 1 lets only an ancestor attach: allow watch_stacks's gdb. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)sec) == 0)
        pthread_detach(t);
}

static int overlap_failures;

int e2e_overlap_failures(void) { return overlap_failures; }

static void caller_elsewhere(void)
{
    /* The caller outside the runtime for a moment: started runs go on. */
    for (volatile int k = 0; k < 2000; k++)
        ;
}

static void one_frame(e2e_state *s, dagrt *rt, uint32_t f, bool started)
{
    e2e_frame *fr = e2e_frame_begin(s, f, false);
    int rc;
    if (!started) {
        rc = s->g->run(rt, f);
    } else {
        rc = s->g->start(rt, 0, f);
        caller_elsewhere();
        if (rc == 0)
            rc = s->g->wait(rt, 0);
    }
    e2e_frame_end(s, fr, rc);
    atomic_store(&s->waited, f + 1);
}

/* Frames f and f + 1 on two instances at once, waited for in either order. */
static void two_instances(e2e_state *s, dagrt *rt, uint32_t f)
{
    e2e_frame *a = e2e_frame_begin(s, f, false), *b = e2e_frame_begin(s, f + 1, false);
    int ra = s->g->start(rt, 0, f);
    int rb = s->g->start(rt, 1, f + 1);
    caller_elsewhere();
    if (f % 4 == 0) {
        ra = ra ? ra : s->g->wait(rt, 0);
        rb = rb ? rb : s->g->wait(rt, 1);
    } else {
        rb = rb ? rb : s->g->wait(rt, 1);
        ra = ra ? ra : s->g->wait(rt, 0);
    }
    e2e_frame_end(s, a, ra);
    e2e_frame_end(s, b, rb);
    atomic_store(&s->waited, f + 2);
}

/* Checks the frames from *oldest up to `upto` (exclusive): they are
 * complete, their wait returned rc. */
static void complete(e2e_state *s, uint32_t *oldest, uint32_t upto, int rc)
{
    for (; *oldest < upto; ++*oldest) {
        e2e_frame_end(s, &s->fr[*oldest % E2E_RING], rc);
        atomic_store(&s->waited, *oldest + 1);
    }
}

static uint64_t draw(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}

#ifdef E2E_UNLINKED
/* The cross-frame checks' negative control: a "pipeline" of two instances
 * that are not linked (G_instance_start, and G_instance_wait of the one used two frames
 * before), so that nothing orders a frame's nodes after the frame before. */
static bool unlinked_busy[2];
static int drain(e2e_state *s, dagrt *rt, int d);

static int submit(e2e_state *s, dagrt *rt, int d, uint32_t f)
{
    int k = (int)(f % 2), rc = d == 1 ? drain(s, rt, d) : 0;
    if (rc == 0 && unlinked_busy[k])
        rc = s->g->wait(rt, k);
    unlinked_busy[k] = false;
    if (rc == 0)
        rc = s->g->start(rt, k, f);
    unlinked_busy[k] = rc == 0;
    return rc;
}

static int drain(e2e_state *s, dagrt *rt, int d)
{
    (void)d;
    int rc = 0;
    for (int k = 0; k < 2; k++)
        if (unlinked_busy[k]) {
            int r = s->g->wait(rt, k);
            rc = rc ? rc : r;
            unlinked_busy[k] = false;
        }
    return rc;
}
#define E2E_PIPE_DEPTH(d) ((d) < 2 ? (d) : 2)
#else
static int submit(e2e_state *s, dagrt *rt, int d, uint32_t f) { return s->g->submit(rt, d, f); }
static int drain(e2e_state *s, dagrt *rt, int d) { return s->g->drain(rt, d); }
#define E2E_PIPE_DEPTH(d) (d)
#endif

/* n frames from f0 through the pipeline of depth d; returns how many
 * frame numbers it used. */
static uint32_t pipeline(e2e_state *s, dagrt *rt, int d, uint32_t f0, int n)
{
    d = E2E_PIPE_DEPTH(d);
    uint64_t r = (s->seed + f0) | 1;
    uint32_t f = f0, oldest = f0;
    for (int k = 0; k < n; k++, f++) {
        e2e_frame *fr = e2e_frame_begin(s, f, true);
#ifdef E2E_SERIALISE
        complete(s, &oldest, f, drain(s, rt, d));
#endif
        int rc = submit(s, rt, d, f);
        if (rc != 0) {
            e2e_violation(s, fr, "G_pipeline_submit (depth %d) returned %s", d, dagrt_strerror(rc));
            complete(s, &oldest, f, drain(s, rt, d));
            oldest = f + 1;   /* never started: nothing to check */
            atomic_store(&s->waited, oldest);
            return (uint32_t)k + 1;
        }
        /* This submit waited for frame f - d, if there was one. */
        if (f + 1 >= (uint32_t)d)
            complete(s, &oldest, f + 1 - (uint32_t)d, 0);
        if (draw(&r) % 16 == 0)
            complete(s, &oldest, f + 1, drain(s, rt, d));
    }
    complete(s, &oldest, f, drain(s, rt, d));
    return (uint32_t)n;
}

int e2e_run_graph(const e2e_graph *g, dagrt *rt, int workers, int frames, uint64_t seed)
{
    static const char *const pipe_mode[] = {"", "pipeline depth 1", "pipeline depth 2",
                                            "pipeline depth 3", "pipeline depth 4"};
    e2e_state *s = malloc(sizeof *s);
    if (!s || !e2e_state_init(s, g, seed)) {
        fprintf(stderr, "e2e %s: out of memory\n", g->name);
        if (s)
            e2e_state_free(s);
        free(s);
        return 1;
    }
    s->rt = rt;
    s->one_thread = dagrt_worker_count(rt) == 0;
    e2e_state_use(s);
    watch_start();
    atomic_store(&watch_state, s);
    set_mode(s, "G_pipeline_init");
    /* The overlap check counts events that need a thread to get a core in
     * time: on a loaded machine only some frames show one, so it always
     * gets enough frames (about 200 per depth), whatever the scale. */
    bool must_overlap = strncmp(g->name, "overlap", 7) == 0 && workers >= 3;
    if (must_overlap && frames < E2E_OVERLAP_FRAMES)
        frames = E2E_OVERLAP_FRAMES;
    for (int d = 1; d <= E2E_DEPTHS; d++) {
        int rc = g->pipe_init(d);
        if (rc != 0)
            e2e_violation(s, NULL, "G_pipeline_init(depth %d) returned %s", d, dagrt_strerror(rc));
    }
    /* Turns of every mode, long enough for a pipeline to fill and drain. */
    long overlap[E2E_DEPTHS + 1] = {0};
    int seg = frames / 24 < 8 ? 8 : frames / 24;
    uint32_t f = 0;
    for (int m = 0; (int)f < frames && atomic_load(&s->violations) < 20; m = (m + 1) % (2 + E2E_DEPTHS)) {
        int n = frames - (int)f < seg ? frames - (int)f : seg;
        if (m == 0) {
            set_mode(s, "G_run (even frames) and G_instance_start/wait (odd frames)");
            for (int k = 0; k < n; k++, f++)
                one_frame(s, rt, f, f % 2 == 1);
        } else if (m == 1) {
            set_mode(s, "two instances");
            for (int k = 0; k < n; k += 2, f += 2)
                two_instances(s, rt, f);
        } else {
            int d = m - 1;
            set_mode(s, pipe_mode[d]);
            long before = atomic_load(&s->overlap);
            f += pipeline(s, rt, d, f, n);
            overlap[d] += atomic_load(&s->overlap) - before;
        }
    }
    /* A graph whose names ask for waits must have waited (over enough
     * frames for a `when` to have said yes): else the waits are not wired. */
    bool waiter = false;
    for (uint32_t i = 0; i < g->nnodes; i++)
        waiter |= s->wait_kind[i] != 0;
    if (waiter && frames >= 50 && atomic_load(&s->waits) == 0)
        e2e_violation(s, NULL, "tasks whose names ask for waits never waited");
    s->mode = "overlap";
    if (overlap[1] != 0)
        e2e_violation(s, NULL, "at depth 1, %ld task starts of a frame while the frame before "
                      "was running", overlap[1]);
    /* DAGC_E2E_VERBOSE: how much frames overlapped, for every graph. */
    if (must_overlap || getenv("DAGC_E2E_VERBOSE"))
        fprintf(stderr, "e2e %s, %d workers: task starts while the frame before was running: "
                "depth 2 %ld, 3 %ld, 4 %ld; looks into a frame before waited for meanwhile %ld\n",
                g->name, workers, overlap[2], overlap[3], overlap[4], atomic_load(&s->stale_looks));
    if (must_overlap) {
        for (int d = 2; d <= E2E_DEPTHS; d++)
            if (overlap[d] == 0) {
                overlap_failures++;
                e2e_violation(s, NULL, "pipeline of depth %d: frames never overlapped", d);
            }
    }
    atomic_store(&watch_state, NULL);
    e2e_state_use(NULL);
    int v = atomic_load(&s->violations);
    e2e_state_free(s);
    free(s);
    return v;
}

int e2e_scaled(int n)
{
    const char *e = getenv("DAGC_TEST_SCALE");
    double k = e ? atof(e) : 1.0;
    if (k <= 0)
        k = 1.0;
    int v = (int)(n * k);
    return v < 1 ? 1 : v;
}

/* DAGC_E2E_CONFIGS: the runtimes to run every graph on, a comma-separated
 * list of worker counts, each with an `h` for one hot worker ("0,1,1h,3h",
 * the default; soak.py adds "3", three workers and no hot one). */
#define E2E_MAX_CONFIGS 8

static int configs(int *workers, int *hot)
{
    const char *e = getenv("DAGC_E2E_CONFIGS");
    if (!e || !*e)
        e = "0,1,1h,3h";
    int n = 0;
    while (*e && n < E2E_MAX_CONFIGS) {
        char *end;
        long w = strtol(e, &end, 10);
        if (end == e || w < 0 || w > 64) {
            fprintf(stderr, "e2e: bad DAGC_E2E_CONFIGS at \"%s\"\n", e);
            return -1;
        }
        workers[n] = (int)w;
        hot[n] = *end == 'h';
        end += *end == 'h';
        n++;
        e = *end == ',' ? end + 1 : end;
    }
    return n;
}

int e2e_run_all(const e2e_graph *const *graphs, size_t n, int frames)
{
    /* One worker twice (by default): plan mode runs hot nodes on the thread
     * that claims them without a hot worker, as runtime tasks on the hot
     * lane with one (runtime/exec/plan_off.c, "nodes that run elsewhere"). */
    int workers[E2E_MAX_CONFIGS], hot[E2E_MAX_CONFIGS];
    int nconf = configs(workers, hot);
    if (nconf < 0)
        return 1;
    const char *pipe = getenv("DAGRT_PIPE");
    int bad = 0;
    for (int w = 0; w < nconf; w++) {
        snprintf(watch_runtime, sizeof watch_runtime, "%d workers, %d hot, DAGRT_PIPE=%s",
                 workers[w], hot[w], pipe ? pipe : "(unset)");
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers[w];
        cfg.no_workers = workers[w] == 0;
        cfg.hot_workers = hot[w];
        int err = 0;
        dagrt *rt = dagrt_create_ex(&cfg, &err);
        if (!rt) {
            fprintf(stderr, "e2e: dagrt_create_ex(%d workers): %s\n", workers[w], dagrt_strerror(err));
            return bad + 1;
        }
        for (size_t i = 0; i < n; i++) {
            /* The workers it has (the serial switches start none). */
            int v = e2e_run_graph(graphs[i], rt, dagrt_worker_count(rt), frames,
                                  0x5eed0000u + (uint64_t)w * 131 + i);
            if (v)
                fprintf(stderr, "e2e: graph %s, %s: %d violations\n", graphs[i]->name, watch_runtime, v);
            bad += v;
        }
        e2e_watch_progress(0);   /* dagrt_destroy: the watchdog's bound again */
        dagrt_destroy(rt);
    }
    return bad;
}
