/*
 * trace/record.h - the built-in trace recorder (a room of its own).
 *
 * One ring of finished events per thread, allocated when recording starts
 * and written only by its thread: recording takes no lock, allocates
 * nothing and uses no atomic read-modify-write. Each thread keeps a small
 * stack of open spans (begin without end yet); an end or a fiber suspend
 * closes the top one into the ring as a complete event, so no event ever
 * begins on one thread and ends on another. A ring that is full overwrites
 * its oldest events; the writer then starts the whole file at the newest of
 * the threads' oldest events (one window for all threads) and says how
 * many were dropped. The file is Chrome's Trace Event Format (object form).
 *
 * Thread indices: 0 the main thread ("dagrt-main"), k the k-th worker
 * ("dagrt-worker-k"), then the guest slots ("dagrt-guest-k"). Name strings (graph and node names) are not copied:
 * they must live until the trace is written (dagc's tables are static).
 */
#ifndef DAGRT_TRACE_H
#define DAGRT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_trace rt_trace;
struct dagrt_graph;

/* What a node span carries. */
typedef struct rt_trace_node {
    const char *graph;
    const char *node;
    uint32_t index;      /* node index in the graph's table */
    bool piece;          /* a parallel task's piece: [begin, end) */
    uint64_t frame;      /* frame number of that graph state */
    uint64_t begin, end;
} rt_trace_node;

/* Instant marks (where the runtime reports them). */
typedef enum rt_trace_mark {
    RT_TRACE_STEAL = 0,
    RT_TRACE_PARK = 1,
    RT_TRACE_WAKE = 2,
} rt_trace_mark_kind;

/* Bytes one recorded event takes in a ring. */
size_t rt_trace_event_bytes(void);

/* Defaults: 64 MiB in all; a ring holds at least this many events. */
#define RT_TRACE_DEFAULT_BYTES ((size_t)64 << 20)
#define RT_TRACE_MIN_RING 1024u
/* The most a recorder may take (dagrt_trace_config.max_bytes, DAGRT_TRACE_MB). */
#define RT_TRACE_MAX_BYTES ((size_t)1 << 40)

/* Allocates rings for nthreads threads sharing max_bytes (0: the default);
 * frames > 0 keeps only the last `frames` frames of each graph when
 * writing. Recording is off until rt_trace_set_on. NULL when out of
 * memory or nthreads is 0. */
rt_trace *rt_trace_create(uint32_t nthreads, size_t max_bytes, uint64_t frames);
void rt_trace_destroy(rt_trace *t);
/* The runtime's worker count, for naming threads (until set: every
 * thread but 0 is a worker). */
void rt_trace_set_workers(rt_trace *t, uint32_t nworkers);
/* A thread's name in observers and trace files: "dagrt-main" (0),
 * "dagrt-worker-k" (1 .. nworkers), "dagrt-guest-k" (the k-th guest slot,
 * after the workers). */
void rt_trace_thread_name(uint32_t nworkers, uint32_t tid, char *buf, size_t n);
void rt_trace_set_on(rt_trace *t, bool on);
bool rt_trace_is_on(const rt_trace *t);

/* The hot path: called by thread `tid` about itself. Indices out of range
 * are ignored (threads outside the runtime). */
void rt_trace_begin(rt_trace *t, uint32_t tid, const rt_trace_node *n);
void rt_trace_end(rt_trace *t, uint32_t tid, const rt_trace_node *n);
/* A fiber task leaves thread tid (its slice ends) / comes back on tid. */
void rt_trace_suspend(rt_trace *t, uint32_t tid, const rt_trace_node *n);
void rt_trace_resume(rt_trace *t, uint32_t tid, const rt_trace_node *n);
/* A spawned task of the program's (core/seen.c) begins / ends on thread
 * tid: a span like a node's, nested in what is open there. parent: the
 * node that spawned it (graph NULL: none known); id: the task, which
 * tells its span apart; fn: its function, for the file. A fiber task
 * comes as one span per slice: resumed, a slice after its first;
 * suspended, one that ended in a wait (the flags of a fiber node's). */
void rt_trace_task_begin(rt_trace *t, uint32_t tid, const rt_trace_node *parent, const void *id,
                         const void *fn, bool resumed);
void rt_trace_task_end(rt_trace *t, uint32_t tid, const rt_trace_node *parent, const void *id,
                       const void *fn, bool suspended);
/* The node on whose behalf thread tid runs now, while recording: its
 * innermost open span's node, or for a spawned task's span that task's
 * parent (so a task spawned by a task has the node above both). Called by
 * tid itself. false: none (nothing open, or nothing known). */
bool rt_trace_current(rt_trace *t, uint32_t tid, rt_trace_node *out);
/* A thread goes idle (sleeps) / wakes: an "idle" span between. */
void rt_trace_idle(rt_trace *t, uint32_t tid);
void rt_trace_wake(rt_trace *t, uint32_t tid);
void rt_trace_mark(rt_trace *t, uint32_t tid, rt_trace_mark_kind m);
/* An I/O call of thread tid ended (wait/io.c): an instant at its end, on the
 * thread it returned on, naming the operation (a static string), the
 * handle, the result (bytes, or a negative error code) and how long it
 * waited. An instant, not a span: a fiber's wait may begin on another
 * thread than it ends, and the node's own slices already show the wait. */
void rt_trace_io(rt_trace *t, uint32_t tid, const char *op, int64_t handle, int64_t result,
                 uint64_t wait_ns);

/* Flow events (DAGRT_TRACE_FLOWS=1, read when the recorder is created:
 * trace/observe.c): the file then carries an arrow from each node to
 * each node it released, and across overlapping frames for `prev` and
 * same-node order (trace/flow.c). The arrows come from the graphs'
 * tables, not from the hot path: rt_trace_graph names a graph whose
 * frame starts (exec/exec.c's reset, the main thread only; nothing when
 * flows are off), and the writer reads its edges. At most
 * RT_TRACE_GRAPHS graphs; those after get no arrows. */
#define RT_TRACE_GRAPHS 64
void rt_trace_set_flows(rt_trace *t, bool on);
bool rt_trace_flows(const rt_trace *t);
void rt_trace_graph(rt_trace *t, const struct dagrt_graph *g);

/* Writes the file: a regular file or a new name through a temporary
 * renamed into place (never half a file), a symlink's final target so in
 * that target's directory, a character device or a FIFO with a reader in
 * place. Recording pauses meanwhile (events in that time are not kept):
 * a thread still recording when it starts may overwrite at most the one
 * oldest event of its ring, which the writer skips. Any thread may write
 * (two runtimes at once included). Returns 0, DAGRT_EIO (the system
 * failed: core/error.h keeps its code and what failed), DAGRT_EINVAL (no
 * path, or it names something else: a socket, a block device) or
 * DAGRT_ENOMEM. */
int rt_trace_write(rt_trace *t, const char *path);

/* Counts for tests and tools. */
typedef struct rt_trace_counts {
    uint64_t recorded;   /* events put in rings */
    uint64_t dropped;    /* overwritten, or cut to keep one window */
    uint64_t written;    /* events the last write put in the file */
} rt_trace_counts;
void rt_trace_get_counts(const rt_trace *t, rt_trace_counts *out);

#endif
