/*
 * obs_spawn.c - the program's spawned tasks in the observer and the trace
 * (dagrt.h, task_begin / task_end; docs/runtime.md, "Spawned tasks"):
 * spawn.dag's fan spawns SPAWN_SEEN reported tasks a frame (every public
 * spawn call, hot ones, tasks that spawn tasks, fiber tasks, two of which
 * wait SPAWN_FWAITS times each: a yield, an event and a timed semaphore
 * wait); its frames run one at a time, started, and started and waited
 * for asynchronously (the run policy's serial, plan and dynamic
 * executors, plan mode's hot node spawned as the runtime's task, the
 * asynchronous wait's tasks; DAGRT_PIPE=dynamic in the Meson test
 * obs_spawned_trace_dynamic puts the frames on the dynamic executor,
 * whose node tasks are spawned through the same path). Every reported
 * task is one of the test's own functions, exactly SPAWN_SLICES slices a
 * frame (a task one, a wait one more), begin and end on the thread that
 * runs the slice and inside the frame; a waiting fiber task's slices come
 * numbered in order, one open at a time, each ended suspended but the
 * last, as many suspended as it waited, one end each. In the trace each
 * slice is a "task" span on a named runtime thread, inside its parent
 * fan's span of the same frame (args parent, graph, frame, node), a
 * fiber task's slices flagged suspended / resumed and tied by args.task.
 * The runtime's own tasks (the dynamic executor's, parallel-for pieces,
 * plan helpers, fiber resumes) never appear. Listed in trace_list.h
 * (group observe).
 */
#define _POSIX_C_SOURCE 200809L
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "trace_check.h"

int obs_spawned_trace(void);
int obs_spawned_hooks(void);

static unsigned scaled(unsigned n)
{
    const char *s = getenv("DAGC_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    unsigned v = (unsigned)(n * (f > 0 ? f : 1.0));
    return v < 4 ? 4 : v;
}

typedef struct seen {
    dagrt *rt;
    bool with_trace;             /* the parent is known only where the trace records */
    _Atomic unsigned begins, ends, parents, bad;
    /* The waiting fiber tasks: their ends, slices ended by a suspend (as
     * each task's end found them), and the tasks whose suspends were
     * fewer or more than their waits. */
    _Atomic unsigned fw_finals, fw_susp, fw_mismatch;
    /* The frame running (frames one at a time): set by frame_begin,
     * cleared by frame_end, both on the main thread. */
    _Atomic bool in_frame;
    _Atomic uint64_t frame;
    unsigned modes[5];           /* frames by mode: serial, plan, pipelined plan, dynamic, other */
} seen;

/* This thread's open reported tasks (begin pushes, end pops: LIFO, one
 * thread): a slice of a fiber task is one, its task told apart by arg. */
static _Thread_local dagrt_fn tl_open[16];
static _Thread_local void *tl_arg[16];
static _Thread_local unsigned tl_depth;

static void bad_if(seen *s, bool cond, const char *what, const dagrt_task_event *e)
{
    if (!cond)
        return;
    if (atomic_fetch_add(&s->bad, 1) < 10)
        fprintf(stderr, "obs_spawn: %s (thread %d, node %s)\n", what, e->thread,
                e->node ? e->node : "(none)");
}

/* Every task event comes inside its frame (frames run one at a time
 * here): after its frame_begin, before its frame_end, and where the
 * parent is known, of that frame. */
static void in_frame(seen *s, const dagrt_task_event *e)
{
    bad_if(s, !atomic_load(&s->in_frame), "a task event outside every frame", e);
    bad_if(s, e->node && e->frame != atomic_load(&s->frame), "a task event of another frame", e);
}

static void on_task_begin(void *u, const dagrt_task_event *e)
{
    seen *s = u;
    atomic_fetch_add(&s->begins, 1);
    bad_if(s, !spawn_is_ours(e->fn), "a task that is not the program's was reported", e);
    bad_if(s, e->thread != dagrt_thread_index(s->rt) || e->thread < 0, "reported on another thread", e);
    bool want_parent = s->with_trace && !spawn_is_big(e->fn);
    if (e->node) {
        atomic_fetch_add(&s->parents, 1);
        bad_if(s, strcmp(e->node, "fan") != 0 || strcmp(e->graph, "spawner") != 0,
               "a parent that is not fan", e);
    }
    bad_if(s, want_parent != (e->node != NULL), "parent known where it should not be, or not where it should", e);
    in_frame(s, e);
    bad_if(s, e->suspended, "a begin marked suspended", e);
    struct spawn_fwait *r = spawn_fwait_of(e->fn, e->arg);
    if (r) {
        /* Its slices one after another, numbered from 0, each on one
         * thread (the previous one's end came before this begin). */
        bad_if(s, r->open_on != -1, "a fiber task's slice began while another was open", e);
        bad_if(s, e->slice != r->next, "a fiber task's slice out of order", e);
        r->open_on = e->thread;
    } else {
        bad_if(s, e->slice != 0, "a task that never waits has a slice after 0", e);
    }
    if (tl_depth < 16) {
        tl_open[tl_depth] = e->fn;
        tl_arg[tl_depth] = e->arg;
    }
    tl_depth++;
}

static void on_task_end(void *u, const dagrt_task_event *e)
{
    seen *s = u;
    atomic_fetch_add(&s->ends, 1);
    bad_if(s, tl_depth == 0, "an end without a begin on this thread", e);
    if (tl_depth > 0) {
        tl_depth--;
        bad_if(s, tl_depth < 16 && (tl_open[tl_depth] != e->fn || tl_arg[tl_depth] != e->arg),
               "an end that is not the innermost begin", e);
    }
    in_frame(s, e);
    struct spawn_fwait *r = spawn_fwait_of(e->fn, e->arg);
    if (!r) {
        bad_if(s, e->suspended || e->slice != 0, "a task that never waits ended suspended", e);
        return;
    }
    bad_if(s, r->open_on != e->thread, "a fiber task's slice ended on another thread than it began", e);
    bad_if(s, e->slice != r->next, "a fiber task's slice ended with another number", e);
    r->open_on = -1;
    if (e->suspended) {
        r->susp++;
        r->next++;
        spawn_fwait_note(e);   /* last: its waker may resume the task now */
        return;
    }
    /* Its end: the task made all its waits before returning. */
    r->finals++;
    bad_if(s, r->finals != 1, "a fiber task ended twice", e);
    atomic_fetch_add(&s->fw_finals, 1);
    atomic_fetch_add(&s->fw_susp, r->susp);
    if (r->susp != r->waits) {
        atomic_fetch_add(&s->fw_mismatch, 1);
        fprintf(stderr, "obs_spawn: a fiber task waited %u times, %u slices ended suspended\n",
                r->waits, r->susp);
    }
}

static void on_frame_begin(void *u, const dagrt_frame_event *e)
{
    seen *s = u;
    static const char *const names[] = {"serial", "plan", "pipelined plan", "dynamic"};
    unsigned k = 0;
    while (k < 4 && strcmp(e->mode, names[k]) != 0)
        k++;
    s->modes[k]++;   /* main thread only */
    atomic_store(&s->frame, e->frame);
    atomic_store(&s->in_frame, true);
}

static void on_frame_end(void *u, const dagrt_frame_event *e)
{
    seen *s = u;
    (void)e;
    atomic_store(&s->in_frame, false);
}

static const dagrt_observer spawn_obs = {
    .task_begin = on_task_begin, .task_end = on_task_end, .frame_begin = on_frame_begin,
    .frame_end = on_frame_end,
};

#define KINDS 3   /* of frames: run, started and waited, started and waited for asynchronously */

static void waited(void *arg, int64_t r)
{
    atomic_store((_Atomic int64_t *)arg, r == 0 ? 1 : -1);
}

/* `frames` frames of each kind. The asynchronous wait is a task of the
 * runtime's own on the main thread's queue, and its continuation one of
 * its own on a worker (wait/async.c): neither may be reported. */
static int run_frames(dagrt *rt, struct spawn_ctx *c, unsigned frames)
{
    int bad = 0;
    for (unsigned f = 0; f < frames; f++)
        EXPECT(spawner_run(rt, c) == 0);
    static spawner_instance_t inst;
    EXPECT(spawner_instance_init(&inst) == 0);
    for (unsigned f = 0; f < frames; f++) {
        EXPECT(spawner_instance_start(rt, &inst, c) == 0);
        EXPECT(spawner_instance_wait(rt, &inst) == 0);
    }
    for (unsigned f = 0; f < frames; f++) {
        static _Atomic int64_t done;
        atomic_store(&done, 0);
        dagrt_async a;
        dagrt_async_init(&a, waited, (void *)&done, 0);
        EXPECT(spawner_instance_start(rt, &inst, c) == 0);
        EXPECT(dagrt_graph_wait_async(rt, &a, &inst.state) == DAGRT_PENDING);
        while (atomic_load(&done) == 0)
            (void)dagrt_pump_main(rt);
        EXPECT(atomic_load(&done) == 1);
    }
    return bad;
}

static dagrt *make_rt(seen *s)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.hot_workers = 1;   /* plan mode spawns warm (hot) as its own task */
    cfg.observer = &spawn_obs;
    cfg.observer_user = s;
    return s->rt = dagrt_create(&cfg);
}

/* The hooks' own counts for `frames` frames of each kind. */
static int check_hooks(seen *s, const struct spawn_ctx *c, unsigned frames)
{
    int bad = 0;
    unsigned n = KINDS * frames;
    if (atomic_load(&s->begins) != n * SPAWN_SLICES || atomic_load(&s->ends) != n * SPAWN_SLICES) {
        fprintf(stderr, "obs_spawn: %u begins, %u ends, expected %u each\n", atomic_load(&s->begins),
                atomic_load(&s->ends), n * SPAWN_SLICES);
        bad++;
    }
    EXPECT(atomic_load(&s->parents) == (s->with_trace ? n * (SPAWN_WITH_PARENT + SPAWN_FWAIT * SPAWN_FWAITS) : 0u));
    EXPECT(atomic_load(&s->bad) == 0);
    /* Each waiting fiber task ended once, its slices ended by a suspend
     * as many as its waits. */
    EXPECT(atomic_load(&s->fw_finals) == n * SPAWN_FWAIT);
    EXPECT(atomic_load(&s->fw_susp) == n * SPAWN_FWAIT * SPAWN_FWAITS);
    EXPECT(atomic_load(&s->fw_mismatch) == 0);
    /* Every task ran, on the runtime's threads; every waker saw its
     * wait's suspend reported. */
    EXPECT(atomic_load(&c->ran) == (uint64_t)n * SPAWN_SEEN);
    EXPECT(atomic_load(&c->missed) == 0);
    EXPECT(atomic_load(&c->off_thread) == 0);
    const char *e = getenv("DAGRT_PIPE");
    /* Every frame on the dynamic executor, but for the frames of a serial
     * stretch: a frame whose caller was held (exec/policy.c; the fiber
     * tasks' waits hold it on a loaded machine) runs the next ones on the
     * caller alone. */
    if (e && strcmp(e, "dynamic") == 0)
        EXPECT(s->modes[3] >= n / 2 && s->modes[3] + s->modes[4] == n);
    fprintf(stderr, "obs_spawn: frames by mode: serial %u, plan %u, pipelined plan %u, dynamic %u, other %u\n",
            s->modes[0], s->modes[1], s->modes[2], s->modes[3], s->modes[4]);
    return bad;
}

/* The fan span of `frame` that encloses task event x (by time, any thread). */
static bool in_fan(const tc_trace *t, const tc_event *x)
{
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *f = &t->ev[i];
        if (f->ph == 'X' && strcmp(f->name, "fan") == 0 && strcmp(f->cat, "spawner") == 0 &&
            f->frame == x->frame && f->node == x->node && f->ts <= x->ts &&
            x->ts + x->dur <= f->ts + f->dur)
            return true;
    }
    return false;
}

static int by_ts(const void *pa, const void *pb)
{
    const tc_event *a = *(const tc_event *const *)pa, *b = *(const tc_event *const *)pb;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The waiting fiber tasks' slices in the trace (n frames): one "task" span
 * per slice, flagged as a fiber node's (the first suspended, the middle
 * ones resumed and suspended, the last resumed), all of one task tied by
 * args.task; the other tasks' spans carry neither flag. */
static int check_slices(const tc_trace *t, unsigned n)
{
    int bad = 0;
    dagrt_fn fns[SPAWN_FWAIT];
    spawn_fwait_fns(fns);
    char names[SPAWN_FWAIT][24];
    for (int k = 0; k < SPAWN_FWAIT; k++)
        snprintf(names[k], sizeof names[k], "0x%llx", (unsigned long long)(uintptr_t)fns[k]);
    const tc_event **x = malloc((t->n + 1) * sizeof *x);
    size_t nx = 0, susp = 0, resumed = 0, flagged_other = 0;
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->ph != 'X' || strcmp(e->name, "task") != 0)
            continue;
        bool ours = false;
        for (int k = 0; k < SPAWN_FWAIT; k++)
            ours |= strcmp(e->fn, names[k]) == 0;
        if (!ours) {
            flagged_other += e->suspended || e->resumed || e->task[0];
            continue;
        }
        x[nx++] = e;
        susp += e->suspended != 0;
        resumed += e->resumed != 0;
    }
    size_t want = (size_t)n * SPAWN_FWAIT * SPAWN_FWAITS;
    if (nx != (size_t)n * SPAWN_FWAIT * (SPAWN_FWAITS + 1) || susp != want || resumed != want ||
        flagged_other) {
        fprintf(stderr, "obs_spawn: %zu fiber slices (%zu suspended, %zu resumed), expected %zu (%zu); "
                        "%zu other task spans flagged\n",
                nx, susp, resumed, (size_t)n * SPAWN_FWAIT * (SPAWN_FWAITS + 1), want, flagged_other);
        bad++;
    }
    /* One task's slices: same task, fn and frame, in time order. */
    qsort(x, nx, sizeof *x, by_ts);
    size_t chains = 0;
    for (size_t i = 0; i < nx; i++) {
        if (x[i]->resumed)
            continue;   /* not a first slice */
        chains++;
        size_t k = 0;
        const tc_event *last = x[i];
        for (size_t j = i; j < nx; j++) {
            const tc_event *e = x[j];
            if (strcmp(e->task, x[i]->task) != 0 || strcmp(e->fn, x[i]->fn) != 0 ||
                e->frame != x[i]->frame)
                continue;
            bool first = k == 0, end = k == SPAWN_FWAITS;
            if (e->resumed == first || e->suspended == end || !e->task[0] ||
                (k > 0 && e->ts < last->ts + last->dur)) {
                fprintf(stderr, "obs_spawn: slice %zu of a fiber task (frame %lld): resumed %d, "
                                "suspended %d, task '%s'\n",
                        k, (long long)e->frame, e->resumed, e->suspended, e->task);
                bad++;
            }
            last = e;
            if (++k > SPAWN_FWAITS)
                break;
        }
        if (k != SPAWN_FWAITS + 1) {
            fprintf(stderr, "obs_spawn: a fiber task of frame %lld has %zu slices\n",
                    (long long)x[i]->frame, k);
            bad++;
        }
    }
    if (chains != (size_t)n * SPAWN_FWAIT) {
        fprintf(stderr, "obs_spawn: %zu fiber tasks began in the trace, expected %u\n", chains,
                n * SPAWN_FWAIT);
        bad++;
    }
    free(x);
    return bad;
}

int obs_spawned_trace(void)
{
    int bad = 0;
    static seen s;
    memset(&s, 0, sizeof s);
    s.with_trace = true;
    dagrt *rt = make_rt(&s);
    if (!rt)
        return 1;
    static struct spawn_ctx c;
    memset(&c, 0, sizeof c);
    c.rt = rt;
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    unsigned frames = scaled(20);
    bad += run_frames(rt, &c, frames);
    char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/dagrt-spawn-%ld.json", dir && *dir ? dir : "/tmp", (long)getpid());
    EXPECT(dagrt_trace_write(rt, path) == 0);
    int nthreads = dagrt_worker_count(rt) + 1;
    dagrt_destroy(rt);
    bad += check_hooks(&s, &c, frames);

    tc_trace t;
    int v = tc_load_checked(path, &t);   /* nesting per thread, thread names */
    unlink(path);
    if (v < 0)
        return bad + 1;
    bad += v;
    size_t tasks = 0, parents = 0, outside = 0, off = 0;
    int64_t fan_node = -1;
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].ph == 'X' && strcmp(t.ev[i].name, "fan") == 0)
            fan_node = t.ev[i].node;
    for (size_t i = 0; i < t.n; i++) {
        const tc_event *x = &t.ev[i];
        if (x->ph != 'X' || strcmp(x->name, "task") != 0)
            continue;
        tasks++;
        EXPECT(strcmp(x->cat, "dagrt") == 0);
        off += x->tid >= (uint32_t)nthreads;
        if (x->parent[0]) {
            parents++;
            EXPECT(strcmp(x->parent, "fan") == 0 && strcmp(x->graph, "spawner") == 0);
            EXPECT(x->node == fan_node && x->frame >= 0);
            outside += !in_fan(&t, x);
        }
    }
    unsigned n = KINDS * frames;
    unsigned want_parents = n * (SPAWN_WITH_PARENT + SPAWN_FWAIT * SPAWN_FWAITS);
    if (tasks != (size_t)n * SPAWN_SLICES || parents != want_parents) {
        fprintf(stderr, "obs_spawn: the trace has %zu task events (%zu with a parent), expected %u (%u)\n",
                tasks, parents, n * SPAWN_SLICES, want_parents);
        bad++;
    }
    bad += check_slices(&t, n);
    if (outside || off) {
        fprintf(stderr, "obs_spawn: %zu task events outside their fan, %zu off the runtime's threads\n",
                outside, off);
        bad++;
    }
    tc_free(&t);
    return bad;
}

/* The hooks alone (no trace): every task reported, no parent known. */
int obs_spawned_hooks(void)
{
    int bad = 0;
    static seen s;
    memset(&s, 0, sizeof s);
    dagrt *rt = make_rt(&s);
    if (!rt)
        return 1;
    static struct spawn_ctx c;
    memset(&c, 0, sizeof c);
    c.rt = rt;
    unsigned frames = scaled(20);
    bad += run_frames(rt, &c, frames);
    dagrt_destroy(rt);
    bad += check_hooks(&s, &c, frames);
    return bad;
}
