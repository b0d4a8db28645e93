/*
 * trace/observe.c - observer records, their dispatch, the recorder's switch and
 * the DAGRT_TRACE environment (trace/trace.h).
 */
#include "../core/core.h"   /* first: it defines what dagrt.h builds on inside */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../os/os.h"

static bool any_cb(const dagrt_observer *c)
{
    return c->node_begin || c->node_end || c->fiber_suspend || c->fiber_resume ||
           c->thread_start || c->thread_stop || c->idle || c->wake || c->frame_begin ||
           c->frame_end || c->load || c->task_begin || c->task_end;
}

/* Replaces the current record by one with these settings (NULL when they
 * observe nothing). The old record stays valid until rt_observe_fini. */
static int publish(rt_observe *o, const dagrt_observer *cb, void *user, rt_trace *trace)
{
    dagrt_observer none;
    memset(&none, 0, sizeof none);
    if (!cb)
        cb = &none;
    rt_obs *n = NULL;
    /* The same settings again (an observer toggled between frames): the
     * record made for them before, without allocating. */
    for (rt_obs *r = o->all; r && (any_cb(cb) || trace); r = r->next)
        if (r->user == user && r->trace == trace && memcmp(&r->cb, cb, sizeof *cb) == 0) {
            n = r;
            break;
        }
    if (!n && (any_cb(cb) || trace)) {
        n = calloc(1, sizeof *n);
        if (!n)
            return DAGRT_ENOMEM;
        n->cb = *cb;
        n->user = user;
        n->has_cb = any_cb(cb);
        n->trace = trace;
        n->nworkers = o->nworkers;
        n->next = o->all;
        o->all = n;
    }
    /* release: a thread that loads the new record sees its fields. */
    atomic_store_explicit(&o->cur, n, memory_order_release);
    return 0;
}

void rt_obs_node(rt_obs *ob, int what, const dagrt_node_event *e)
{
    if (ob->trace) {
        rt_trace_node n = {e->graph, e->node, e->index, e->piece, e->frame, e->begin, e->end};
        uint32_t tid = (uint32_t)e->thread;   /* -1 (outside threads): out of range, ignored */
        switch (what) {
        case RT_OBS_BEGIN: rt_trace_begin(ob->trace, tid, &n); break;
        case RT_OBS_END: rt_trace_end(ob->trace, tid, &n); break;
        case RT_OBS_SUSPEND: rt_trace_suspend(ob->trace, tid, &n); break;
        case RT_OBS_RESUME: rt_trace_resume(ob->trace, tid, &n); break;
        }
    }
    if (!ob->has_cb)
        return;
    void (*f)(void *, const dagrt_node_event *) =
        what == RT_OBS_BEGIN ? ob->cb.node_begin : what == RT_OBS_END ? ob->cb.node_end
        : what == RT_OBS_SUSPEND ? ob->cb.fiber_suspend : ob->cb.fiber_resume;
    if (f)
        f(ob->user, e);
}


void rt_obs_task(rt_obs *ob, bool begin, const dagrt_task_event *e, const void *id)
{
    if (ob->trace) {
        rt_trace_node p = { e->graph, e->node, e->index, false, e->frame, 0, 0 };
        /* A fiber task's slice: resumed after its first, suspended where
         * it ended in a wait (as a fiber node's slices). */
        if (begin)
            rt_trace_task_begin(ob->trace, (uint32_t)e->thread, &p, id,
                                (const void *)(uintptr_t)e->fn, e->slice > 0);
        else
            rt_trace_task_end(ob->trace, (uint32_t)e->thread, &p, id,
                              (const void *)(uintptr_t)e->fn, e->suspended);
    }
    void (*f)(void *, const dagrt_task_event *) = begin ? ob->cb.task_begin : ob->cb.task_end;
    if (f)
        f(ob->user, e);
}

void rt_obs_thread(rt_obs *ob, bool start, int thread)
{
    if (start && ob->cb.thread_start) {
        char name[32];
        rt_trace_thread_name((uint32_t)ob->nworkers, (uint32_t)thread, name, sizeof name);
        ob->cb.thread_start(ob->user, thread, name);
    } else if (!start && ob->cb.thread_stop) {
        ob->cb.thread_stop(ob->user, thread);
    }
}

void rt_obs_idle(rt_obs *ob, bool idle, int thread)
{
    if (ob->trace) {
        if (idle)
            rt_trace_idle(ob->trace, (uint32_t)thread);
        else
            rt_trace_wake(ob->trace, (uint32_t)thread);
    }
    void (*f)(void *, int) = idle ? ob->cb.idle : ob->cb.wake;
    if (f)
        f(ob->user, thread);
}

void rt_obs_frame(rt_obs *ob, bool end, const dagrt_frame_event *e)
{
    void (*f)(void *, const dagrt_frame_event *) = end ? ob->cb.frame_end : ob->cb.frame_begin;
    if (f)
        f(ob->user, e);
}

void rt_obs_load(rt_obs *ob, int thread, int ready, int parked)
{
    if (ob->cb.load)
        ob->cb.load(ob->user, thread, ready, parked);
}

void rt_obs_mark(rt_obs *ob, int thread, rt_trace_mark_kind m)
{
    if (ob->trace)
        rt_trace_mark(ob->trace, (uint32_t)thread, m);
}

/* A decimal in [0, max], or -1 (absent, or refused with a message that
 * names the variable). */
static long long env_num(const char *name, unsigned long long max)
{
    const char *s = rt_os_getenv(name);
    if (!s || !*s)
        return -1;
    unsigned long long v = 0;
    const char *p = s;
    /* By hand, not strtoull: no sign, no spaces, and an overflow is seen
     * rather than clamped to ULLONG_MAX. */
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10) {
            fprintf(stderr, "libdagrt: %s='%s' is out of range (at most %llu): ignored\n", name,
                    s, max);
            return -1;
        }
        v = v * 10 + d;
    }
    if (*p) {
        fprintf(stderr, "libdagrt: %s='%s' is not a non-negative number: ignored\n", name, s);
        return -1;
    }
    return (long long)v;
}

/* The most DAGRT_TRACE_MB may ask: the API's own cap (1 TiB). */
#define ENV_MB_MAX (RT_TRACE_MAX_BYTES >> 20)

/* The runtimes whose DAGRT_TRACE file is to be written when the process
 * exits without their dagrt_destroy (returning from main, exit() from a
 * task), under exit_mu. */
static rt_os_once exit_once;
static rt_os_mutex exit_mu;
static bool exit_ok;             /* exit_mu and the handler are in place */
static rt_observe *exit_list;

static void write_env(rt_observe *o)
{
    /* Recording stops first: what a thread still running adds from here
     * on is not waited for. */
    rt_trace_set_on(o->trace, false);
    int rc = rt_trace_write(o->trace, o->env_path);
    if (rc == 0)
        return;
    char why[256] = "";
    if (rc == DAGRT_EIO) {
        rt_os_strerror(dagrt_last_os_error(), why, sizeof why);
        fprintf(stderr, "libdagrt: cannot write the trace to DAGRT_TRACE='%s': %s: %s\n",
                o->env_path, rt_error_what(), why);
    } else if (*rt_error_what() && rc == DAGRT_EINVAL) {
        fprintf(stderr, "libdagrt: cannot write the trace to DAGRT_TRACE='%s': %s\n",
                o->env_path, rt_error_what());
    } else {
        fprintf(stderr, "libdagrt: cannot write the trace to DAGRT_TRACE='%s': %s\n",
                o->env_path, dagrt_strerror(rc));
    }
}

static void exit_write(void)
{
    rt_os_mutex_lock(&exit_mu);
    for (rt_observe *o = exit_list; o; o = o->exit_next) {
        write_env(o);
        o->env_written = true;
    }
    exit_list = NULL;
    rt_os_mutex_unlock(&exit_mu);
}

static void exit_init(void)
{
    exit_ok = rt_os_mutex_init(&exit_mu) == 0;
    if (exit_ok && atexit(exit_write) != 0) {
        rt_os_mutex_fini(&exit_mu);
        exit_ok = false;
    }
}

static void exit_add(rt_observe *o)
{
    rt_os_once_run(&exit_once, exit_init);
    if (!exit_ok)
        return;   /* written at destroy only */
    rt_os_mutex_lock(&exit_mu);
    o->exit_next = exit_list;
    exit_list = o;
    rt_os_mutex_unlock(&exit_mu);
}

/* Off the exit list; true when exit wrote the file already. */
static bool exit_remove(rt_observe *o)
{
    if (!exit_ok)
        return false;
    rt_os_mutex_lock(&exit_mu);
    for (rt_observe **p = &exit_list; *p; p = &(*p)->exit_next)
        if (*p == o) {
            *p = o->exit_next;
            break;
        }
    bool done = o->env_written;
    rt_os_mutex_unlock(&exit_mu);
    return done;
}

int rt_observe_trace_start(rt_observe *o, int nthreads, const dagrt_trace_config *cfg)
{
    if (!o->trace) {
        if (cfg && cfg->max_bytes > RT_TRACE_MAX_BYTES)
            return DAGRT_EINVAL;
        o->trace = rt_trace_create((uint32_t)nthreads, cfg ? cfg->max_bytes : 0,
                                   cfg ? cfg->frames : 0);
        if (!o->trace)
            return DAGRT_ENOMEM;
        rt_trace_set_workers(o->trace, (uint32_t)o->nworkers);
        /* Flow events: off unless asked (they cost the writer, not the
         * frames: trace/flow.c). */
        const char *fl = rt_os_getenv("DAGRT_TRACE_FLOWS");
        if (fl && *fl && strcmp(fl, "0") != 0 && strcmp(fl, "1") != 0)
            fprintf(stderr, "libdagrt: DAGRT_TRACE_FLOWS='%s' is neither 0 nor 1: flows off\n", fl);
        rt_trace_set_flows(o->trace, fl && strcmp(fl, "1") == 0);
    }
    /* The record with the recorder only while it records: a stopped trace
     * costs the nodes nothing. */
    int rc = publish(o, o->has_cb ? &o->cb : NULL, o->user, o->trace);
    if (rc != 0)
        return rc;
    rt_trace_set_on(o->trace, true);
    return 0;
}

int rt_observe_trace_stop(rt_observe *o)
{
    if (!o->trace)
        return DAGRT_EINVAL;
    rt_trace_set_on(o->trace, false);
    return publish(o, o->has_cb ? &o->cb : NULL, o->user, NULL);
}

int rt_observe_trace_write(rt_observe *o, const char *path)
{
    if (!o->trace)
        return DAGRT_EINVAL;
    return rt_trace_write(o->trace, path);
}

int rt_observe_set(rt_observe *o, const dagrt_observer *obs, void *user)
{
    rt_trace *on = o->trace && rt_trace_is_on(o->trace) ? o->trace : NULL;
    int rc = publish(o, obs, user, on);
    if (rc != 0)
        return rc;
    o->has_cb = obs != NULL;
    if (obs)
        o->cb = *obs;
    o->user = user;
    return 0;
}

int rt_observe_init(rt_observe *o, int nthreads, int nworkers, const dagrt_observer *cfg_obs,
                    void *cfg_user)
{
    memset(o, 0, sizeof *o);
    o->nworkers = nworkers;
    atomic_init(&o->cur, NULL);
    int rc = rt_observe_set(o, cfg_obs, cfg_user);
    if (rc != 0)
        return rc;
    const char *path = rt_os_getenv("DAGRT_TRACE");
    if (!path || !*path)
        return 0;
    long long frames = env_num("DAGRT_TRACE_FRAMES", UINT64_MAX >> 1),
              mb = env_num("DAGRT_TRACE_MB", ENV_MB_MAX);
    dagrt_trace_config tc = {mb > 0 ? (size_t)mb << 20 : 0, frames > 0 ? (uint64_t)frames : 0};
    size_t len = strlen(path) + 1;
    o->env_path = malloc(len);
    if (o->env_path)
        memcpy(o->env_path, path, len);
    rc = o->env_path ? rt_observe_trace_start(o, nthreads, &tc) : DAGRT_ENOMEM;
    if (rc != 0) {
        /* The program runs on without a trace: say why there is none. */
        fprintf(stderr, "libdagrt: DAGRT_TRACE='%s': cannot start the recorder: %s\n", path,
                dagrt_strerror(rc));
        free(o->env_path);
        o->env_path = NULL;
        return 0;
    }
    exit_add(o);
    return 0;
}

void rt_observe_fini(rt_observe *o)
{
    if (o->env_path && !exit_remove(o) && o->trace)
        write_env(o);
    free(o->env_path);
    rt_trace_destroy(o->trace);
    for (rt_obs *r = o->all, *n; r; r = n) {
        n = r->next;
        free(r);
    }
    memset(o, 0, sizeof *o);
}

/* ------------------------------------------------------------ public API */

static int main_only(const dagrt *rt)
{
    if (!rt)
        return DAGRT_EINVAL;
    return dagrt_on_main_thread(rt) ? 0 : DAGRT_EPERM;
}

int dagrt_set_observer(dagrt *rt, const dagrt_observer *obs, void *user)
{
    int rc = main_only(rt);
    if (rc != 0)
        return rc;
    rc = rt_observe_set(&rt->obs, obs, user);
    if (rc == 0 && obs && obs->thread_start) {
        rt_obs *ob = rt_obs_now(&rt->obs);
        if (ob)
            rt_obs_thread(ob, true, 0);   /* this thread, at once */
    }
    return rc;
}

int dagrt_trace_start(dagrt *rt, const dagrt_trace_config *cfg)
{
    int rc = main_only(rt);
    return rc ? rc : rt_observe_trace_start(&rt->obs, rt->nctx, cfg);
}

int dagrt_trace_stop(dagrt *rt)
{
    int rc = main_only(rt);
    return rc ? rc : rt_observe_trace_stop(&rt->obs);
}

int dagrt_trace_write(dagrt *rt, const char *path)
{
    int rc = main_only(rt);
    return rc ? rc : rt_observe_trace_write(&rt->obs, path);
}

int dagrt_get_stats(const dagrt *rt, dagrt_thread_stats *out, int n)
{
    if (!rt || n < 0 || (n > 0 && !out))
        return DAGRT_EINVAL;
    uint64_t now = rt_now_ns();
    for (int i = 0; i < n && i < rt->nctx; i++) {
        const rt_tstats *t = &rt->ctx[i].stats;
        /* relaxed: counts, no order among them (trace/trace.h). */
        dagrt_thread_stats *o = &out[i];
        o->tasks = atomic_load_explicit(&t->tasks, memory_order_relaxed);
        o->steals = atomic_load_explicit(&t->steals, memory_order_relaxed);
        o->parks = atomic_load_explicit(&t->parks, memory_order_relaxed);
        o->wakes = atomic_load_explicit(&t->wakes, memory_order_relaxed);
        o->idle_ns = atomic_load_explicit(&t->idle_ns, memory_order_relaxed);
        o->wait_timeouts = atomic_load_explicit(&t->wait_timeouts, memory_order_relaxed);
        o->wait_cancels = atomic_load_explicit(&t->wait_cancels, memory_order_relaxed);
        for (int k = 0; k < DAGRT_IO_KINDS; k++) {
            o->io_ops[k] = atomic_load_explicit(&t->io_ops[k], memory_order_relaxed);
            o->io_bytes[k] = atomic_load_explicit(&t->io_bytes[k], memory_order_relaxed);
            o->io_timeouts[k] = atomic_load_explicit(&t->io_timeouts[k], memory_order_relaxed);
            o->io_cancels[k] = atomic_load_explicit(&t->io_cancels[k], memory_order_relaxed);
        }
        o->pin_refused = atomic_load_explicit(&t->pin_refused, memory_order_relaxed);
        o->frame_chunks = atomic_load_explicit(&t->frame_chunks, memory_order_relaxed);
        o->frame_chunks_new = atomic_load_explicit(&t->frame_chunks_new, memory_order_relaxed);
        o->frame_refused = atomic_load_explicit(&t->frame_refused, memory_order_relaxed);
        o->frames_retired = atomic_load_explicit(&t->frames_retired, memory_order_relaxed);
        o->frame_bytes_max = atomic_load_explicit(&t->frame_bytes_max, memory_order_relaxed);
        o->wakeups = atomic_load_explicit(&t->wakeups, memory_order_relaxed);
        o->wake_ns = atomic_load_explicit(&t->wake_ns, memory_order_relaxed);
        o->wake_ns_max = atomic_load_explicit(&t->wake_ns_max, memory_order_relaxed);
        o->search_ns = atomic_load_explicit(&t->search_ns, memory_order_relaxed);
        o->search_ns_max = atomic_load_explicit(&t->search_ns_max, memory_order_relaxed);
        uint64_t up = now > t->start_ns ? now - t->start_ns : 0;
        o->busy_ns = up > o->idle_ns ? up - o->idle_ns : 0;
    }
    return rt->nctx;
}
