/*
 * trace/trace.h - the observer hooks' plumbing (a room of its own): what the
 * executor, the scheduler and the fiber layer call to report node
 * begin/end, fiber suspend/resume, thread start/stop and idle/wake to the
 * user's observer (dagrt.h, dagrt_set_observer) and to the built-in trace
 * recorder (trace/record.h), and the runtime statistics' per-thread counters.
 *
 * The state the hot path reads is one atomic pointer to an immutable
 * record (rt_obs): NULL when nothing observes, which is the one
 * predictable branch per node. Records are replaced, never changed, and
 * freed only by dagrt_destroy, so a thread that loaded one a moment before
 * a change may use it without a lock.
 */
#ifndef DAGRT_OBSERVE_H
#define DAGRT_OBSERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../arch/apart.h"
#include "dagrt.h"
#include "record.h"

typedef struct rt_obs {
    dagrt_observer cb;
    void *user;
    bool has_cb;             /* some callback is set */
    rt_trace *trace;         /* recording into it (when on), or NULL */
    struct rt_obs *next;     /* every record made, for dagrt_destroy */
    int nworkers;            /* thread names (rt_trace_thread_name) */
} rt_obs;

typedef struct rt_observe {
    _Atomic(rt_obs *) cur;   /* NULL: nothing observes */
    rt_obs *all;             /* main thread only, like the rest */
    dagrt_observer cb;       /* the user's observer (has_cb), for re-publishing */
    void *user;
    bool has_cb;
    rt_trace *trace;         /* the recorder, once started */
    char *env_path;          /* DAGRT_TRACE: written at destroy, or at exit */
    bool env_written;        /* at exit already (under the exit list's lock) */
    struct rt_observe *exit_next;   /* the exit list (trace/observe.c), while env_path */
    int nworkers;            /* thread names: indices above it are guest slots */
} rt_observe;

/* Per-thread statistics (dagrt_get_stats): written by their own thread
 * only, read by any (relaxed atomics: each count is exact, the set is not
 * one snapshot). */
typedef struct rt_tstats {
    _Alignas(RT_APART) _Atomic uint64_t tasks;
    _Atomic uint64_t steals, parks, wakes, idle_ns;
    /* Waits that returned ETIMEDOUT / ECANCELED on this thread (wait/sync.c;
     * threads outside the runtime count on line 0, which takes a relaxed
     * RMW there, a worker's own line rt_tstat_add: wait/oneshot.c). */
    _Atomic uint64_t wait_timeouts, wait_cancels;
    /* I/O calls per kind (wait/io.c, on the thread a call returns on; line 0,
     * which the main thread shares with guests and threads outside the
     * runtime, takes relaxed RMWs too; dagrt_get_io_stats sums them). */
    _Atomic uint64_t io_ops[DAGRT_IO_KINDS], io_bytes[DAGRT_IO_KINDS];
    _Atomic uint64_t io_timeouts[DAGRT_IO_KINDS], io_cancels[DAGRT_IO_KINDS];
    /* 1 when the placement of this worker was refused (core/placement.c,
     * written once by the worker as it starts). */
    _Atomic uint64_t pin_refused;
    /* Frame memory (exec/frame.c): chunks taken, new ones, refusals, by
     * the taking thread; frames retired and their high-water mark, by the
     * retiring one. */
    _Atomic uint64_t frame_chunks, frame_chunks_new, frame_refused;
    _Atomic uint64_t frames_retired, frame_bytes_max;
    /* Wake-up latency (dagrt_config.wake_stats; core/idle.c), by the woken
     * thread itself. */
    _Atomic uint64_t wakeups, wake_ns, wake_ns_max, search_ns, search_ns_max;
    uint64_t start_ns;       /* set before the thread starts */
} rt_tstats;

static inline void rt_tstat_add(_Atomic uint64_t *c, uint64_t n)
{
    /* relaxed load + store: the owner is the only writer; readers want the
     * value, not an order (no locked instruction on the hot path). */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline rt_obs *rt_obs_now(rt_observe *o)
{
    /* acquire: pairs with the release in trace/observe.c's publish, so the
     * record's fields are whole. */
    return atomic_load_explicit(&o->cur, memory_order_acquire);
}

enum { RT_OBS_BEGIN, RT_OBS_END, RT_OBS_SUSPEND, RT_OBS_RESUME };

/* Out of line: only taken when something observes. */
void rt_obs_node(rt_obs *ob, int what, const dagrt_node_event *e);
/* A spawned task of the program's, or a fiber task's slice (e->slice,
 * e->suspended), begins / ends on e->thread (core/seen.c); id: the task,
 * which tells its span apart. */
void rt_obs_task(rt_obs *ob, bool begin, const dagrt_task_event *e, const void *id);
void rt_obs_thread(rt_obs *ob, bool start, int thread);
void rt_obs_idle(rt_obs *ob, bool idle, int thread);
/* A graph run begins or ends (main thread); the scheduler's load as a
 * worker parks or wakes (only when ob->cb.load is set). */
void rt_obs_frame(rt_obs *ob, bool end, const dagrt_frame_event *e);
void rt_obs_load(rt_obs *ob, int thread, int ready, int parked);
/* The recorder's instant marks (no observer callback): a steal by thread,
 * a wake-up sent by thread. */
void rt_obs_mark(rt_obs *ob, int thread, rt_trace_mark_kind m);

/* Set-up and tear-down (main thread). nthreads: main + workers + guest
 * slots; nworkers: the workers (names the guest slots apart).
 * rt_observe_init reads DAGRT_TRACE, DAGRT_TRACE_FRAMES, DAGRT_TRACE_MB
 * and starts the recorder when asked; cfg_obs is dagrt_config.observer. */
int rt_observe_init(rt_observe *o, int nthreads, int nworkers, const dagrt_observer *cfg_obs,
                    void *cfg_user);
/* Writes the DAGRT_TRACE file if there is one (after the workers stopped)
 * and exit has not written it, then frees everything. */
void rt_observe_fini(rt_observe *o);
int rt_observe_set(rt_observe *o, const dagrt_observer *obs, void *user);
int rt_observe_trace_start(rt_observe *o, int nthreads, const dagrt_trace_config *cfg);
int rt_observe_trace_stop(rt_observe *o);
int rt_observe_trace_write(rt_observe *o, const char *path);

#endif
