/*
 * dagrt.h - the one public header of libdagrt, the dagc runtime.
 *
 * A C11 work-stealing runtime: worker threads with Chase-Lev deques, a queue
 * for the main thread, a hot lane for latency-critical work, fibers, waits
 * that help instead of blocking, a parallel-for, and the executor for the
 * frame graphs that dagc emits.
 *
 * Conventions (libuv style): an opaque handle, prefix_verb_noun names,
 * errors as negative int codes that dagrt_strerror() names.
 */
#ifndef DAGRT_H
#define DAGRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; everything declared in this
 * header is its public API, exported from the shared library. */
#if defined(__GNUC__) && !defined(DAGRT_NO_VISIBILITY_PRAGMA)
#pragma GCC visibility push(default)
#endif

#define DAGRT_VERSION_MAJOR 0
#define DAGRT_VERSION_MINOR 1
#define DAGRT_VERSION_PATCH 0

/* Layout macros of the structures below (not part of the API): 128
 * bytes apart (x86 moves cache lines in aligned pairs); a flexible array;
 * a field the runtime reaches with C11 atomics (DAGRT_INSIDE_, its own
 * build) and a program with the compiler's __atomic builtins. */
#ifdef __cplusplus
#define DAGRT_ALIGN_PAIR_ alignas(128)
#define DAGRT__FLEX_ 1
#else
#define DAGRT_ALIGN_PAIR_ _Alignas(128)
#define DAGRT__FLEX_
#endif
#if defined(DAGRT_INSIDE_) && !defined(__cplusplus)
#define DAGRT__SHARED_(T) _Atomic(T)
#else
#define DAGRT__SHARED_(T) T
#endif

/* ------------------------------------------------------------------ errors */

/* The one list of error codes: X(name, value, message). dagrt_error and
 * dagrt_strerror are both generated from it (libuv's UV_ERRNO_MAP style);
 * a new code goes here and nowhere else. */
#define DAGRT_ERRNO_MAP(X) \
    X(OK,        0, "success") \
    X(EINVAL,   -1, "invalid argument")                    /* argument or configuration */ \
    X(ENOMEM,   -2, "out of memory") \
    X(ETHREAD,  -3, "thread creation failed") \
    X(EBUSY,    -4, "busy: already running or in use")     /* a graph state, wait group, pipeline */ \
    X(ENESTED,  -5, "called from inside a running task")   /* where that is not allowed */ \
    X(ENOTFIBER,-6, "not inside a fiber task")             /* suspending needs one */ \
    /* -7 is not used (it was EDEADLK, which no call returned). */ \
    X(EVERSION, -8, "graph descriptor version mismatch")   /* tables from another dagc */ \
    X(EPERM,    -9, "not allowed here: wrong thread, or the mutex is not locked") \
    X(EIO,     -10, "system I/O error")                    /* the system's reason: dagrt_last_os_error */ \
    X(ECANCELED,-11, "operation cancelled")                /* its cancel scope was cancelled */ \
    X(ETIMEDOUT,-12, "deadline passed")                    /* a timed wait's deadline */ \
    /* The system's reasons an I/O call fails (design/io.md): each keeps   \
     * dagrt_last_os_error too; one with no code of its own is DAGRT_EIO. */ \
    X(ENOENT,       -13, "no such file or directory") \
    X(EACCES,       -14, "permission denied") \
    X(EBADF,        -15, "bad handle")                     /* or closed by dagrt_close under the call */ \
    X(EAGAIN,       -16, "operation would block") \
    X(ECONNREFUSED, -17, "connection refused") \
    X(ECONNRESET,   -18, "connection reset by peer") \
    X(EPIPE,        -19, "broken pipe") \
    X(ENOSPC,       -20, "no space left on device") \
    X(EMSGSIZE,     -21, "message too long") \
    X(EADDRINUSE,   -22, "address already in use") \
    X(EISDIR,       -23, "is a directory") \
    X(ENOTCONN,     -24, "not connected") \
    X(EEXIST,       -25, "file exists") \
    X(ENOTSOCK,     -26, "not a socket") \
    X(EADDRNOTAVAIL,-27, "address not available") \
    X(ENETUNREACH,  -28, "network unreachable") \
    X(EHOSTUNREACH, -29, "host unreachable") \
    X(ECONNABORTED, -30, "connection aborted") \
    X(EROFS,        -31, "read-only file system") \
    X(EMFILE,       -32, "too many open files") \
    X(ENOTDIR,      -33, "not a directory") \
    X(EFBIG,        -34, "file too large")

typedef enum dagrt_error {
#define DAGRT_ERR_ENUM_(name, value, msg) DAGRT_##name = (value),
    DAGRT_ERRNO_MAP(DAGRT_ERR_ENUM_)
#undef DAGRT_ERR_ENUM_
    DAGRT_ERR_LAST_ = -35          /* one past the most negative code */
} dagrt_error;

/* Names an error code ("invalid argument", ...); never returns NULL. */
const char *dagrt_strerror(int err);

/* The system's own error behind a code stays with the thread that got it
 * (libuv keeps it in the code; here the codes stay one short list): the
 * errno (Windows: the GetLastError / WSAGetLastError value). Every call of
 * waiting on the world (the I/O calls dagrt_read ... dagrt_poll and
 * dagrt_close, the sleeps and the waits on events, semaphores, mutexes and
 * conditions, dagrt_mutex_unlock) sets it as it returns, on the thread it
 * returns on: the system's error behind its result (DAGRT_EIO, or the code
 * of its own, DAGRT_ENOENT .. DAGRT_EFBIG), 0 when the result is none
 * (success, DAGRT_EINVAL, DAGRT_ECANCELED, DAGRT_ETIMEDOUT, a DAGRT_EBADF
 * from dagrt_close under the call), so it is never a stale one.
 * dagrt_trace_write sets it with each DAGRT_EIO it returns. The other
 * calls leave it as it was. 0 on a thread that never got one. */
int dagrt_last_os_error(void);
/* The system's text for such an error ("No such file or directory") into
 * buf (n bytes, cut to fit); returns buf, "" when n is 0 or the system has
 * no text. Thread-safe. */
const char *dagrt_os_strerror(int os_error, char *buf, size_t n);

/* ------------------------------------------------------------ the runtime */

typedef struct dagrt dagrt;

typedef enum dagrt_idle_policy {
    DAGRT_IDLE_PARK = 0,   /* spin briefly, then sleep (default) */
    DAGRT_IDLE_SPIN = 1,   /* never sleep: for programs that own the machine */
} dagrt_idle_policy;

/* CPU placement (docs/runtime.md, "CPU placement"). */
/* How frames run on a crowded CPU (dagrt_config.crowd_frames; docs/
 * runtime.md, "A shared CPU"). */
typedef enum dagrt_crowd_frames {
    /* While the process is crowded (more threads want its CPUs than there
     * are: the threads' run delay, sampled), G_run frames, started runs and
     * pipeline frames that would run in plan mode run on the dynamic
     * executor instead, and go back once it has been uncrowded for a
     * second. The default. */
    DAGRT_CROWD_AUTO = 0,
    /* Always plan mode, crowded or not (an engine whose threads own their
     * cores; a test of plan mode's own mechanisms). */
    DAGRT_CROWD_PLAN = 1,
    /* Always as if crowded: those frames on the dynamic executor. */
    DAGRT_CROWD_DYNAMIC = 2,
} dagrt_crowd_frames;

typedef enum dagrt_placement {
    /* Where a wake-up lands a worker on the CPU of the thread that woke it,
     * move it off (affinity calls on the runtime's own workers only; a
     * thread whose mask the user set is left alone). The default. */
    DAGRT_PLACEMENT_AUTO = 0,
    /* Never touch any thread's CPU affinity. */
    DAGRT_PLACEMENT_NONE = 1,
    /* Pin each worker to one CPU the process may use, as it starts: worker
     * k to the k-th CPU of dagrt_get_topology's placement order
     * (performance cores first, one CPU per core before any SMT sibling,
     * then the efficiency cores; wrapping when there are more workers
     * than CPUs), leaving the first for the main thread. A refusal is
     * counted (dagrt_thread_stats.pin_refused), not fatal. */
    DAGRT_PLACEMENT_PIN = 2,
    /* Keep each worker on a class of cores: the hot workers on the
     * performance cores, the others on the efficiency cores where the
     * machine has both (elsewhere they are left as they are). Refusals
     * counted as above. */
    DAGRT_PLACEMENT_CLASS = 3,
} dagrt_placement;

/* A worker thread that the engine starts itself (dagrt_config's
 * thread_create): what the runtime asks for. */
typedef struct dagrt_thread_spec {
    /* The new thread must call entry(arg) once; the worker's life is that
     * call, and the thread may end (or go back to the engine's pool) when
     * it returns. */
    void (*entry)(void *arg);
    void *arg;
    int index;               /* its dagrt_thread_index: 1 .. workers */
    bool hot;                /* one of the hot workers */
    /* Where the runtime's placement would put it: the CPU
     * DAGRT_PLACEMENT_PIN pins it to (a dagrt_cpu.id; -1 when unknown) and
     * the class DAGRT_PLACEMENT_CLASS keeps it on (dagrt_core_class). */
    int cpu;
    int core_class;
    const char *name;        /* "dagrt-worker-K"; valid during the call only */
} dagrt_thread_spec;

typedef struct dagrt_config {
    /* Worker threads to start. DAGRT_WORKERS_AUTO (what dagrt_config_init
     * sets): one per core minus the calling thread. 0: none, only threads
     * that wait (help) run tasks (a middleware adapter's "threads - 1" for
     * one thread). Other negative values: DAGRT_EINVAL. */
    int workers;
    /* Kept for older callers: true means 0 workers (workers must then be 0
     * or DAGRT_WORKERS_AUTO, else DAGRT_EINVAL). */
    bool no_workers;
    /* Hot workers among them: never park, serve the hot lane first. */
    int hot_workers;
    dagrt_idle_policy idle;
    uint64_t seed;                 /* victim selection; 0 = fixed default */
    /* Fibers (0 = defaults). */
    size_t fiber_stack_size;       /* standard fiber stack, bytes */
    size_t fiber_large_stack_size; /* large fiber stack, bytes */
    int fiber_pool_size;           /* most fibers alive at once */
    /* A fiber task that overflows its stack faults in the guard page below
     * it; the runtime then prints which stack size to raise before the
     * fault takes its course (the handler installed before runs next, else
     * the process ends as it would have). true: no report, and no signal
     * handler or alternate stacks installed for it. */
    bool no_overflow_report;
    /* DAGRT_PLACEMENT=none|auto|pin|class in the environment replaces the
     * default (AUTO), never a policy set here; another value makes
     * dagrt_create fail (DAGRT_EINVAL). */
    dagrt_placement placement;
    /* An observer installed before any thread starts, so that it sees
     * every thread_start (see dagrt_set_observer below); NULL: none. */
    const struct dagrt_observer *observer;
    void *observer_user;
    /* Threads the runtime does not own (an engine's own threads) that may
     * help at once: each attached one (dagrt_thread_attach), or waiting on a
     * group, holds one of these guest slots. 0 (the default): none; such a
     * thread's waits then poll without helping. */
    int guest_threads;
    /* Waiting on the world's I/O (design/io.md, docs/runtime.md). */
    /* The reactor's queue depth and the op records made at its start
     * (under io_uring, both per thread slot: docs/runtime.md; more are
     * made, never freed before dagrt_destroy, only when more calls are in
     * flight at once than ever before); 0 = 256. */
    int io_ring_entries;
    /* true: epoll and the blocking lane even where io_uring works (so does
     * DAGRT_IO=fallback in the environment). Windows: the blocking lane
     * for every handle instead of the completion port. */
    bool io_fallback;
    /* The hot workers' thread priority: raised per thread, never the
     * process; a refusal is counted (dagrt_get_io_stats), never fatal. */
    int hot_priority;              /* dagrt_thread_priority */
    /* Engine-owned threads (docs/runtime.md, "Living inside an engine").
     * With thread_create set, every worker is started by
     * thread_create(thread_user, spec, &handle) (0: started; anything
     * else fails dagrt_create with DAGRT_ETHREAD after the workers made so
     * far have been stopped and joined), and ended by
     * thread_join(thread_user, handle) in dagrt_destroy, after its entry
     * has returned: the runtime then never calls the system's thread API
     * for a worker. thread_create and thread_join come together (one
     * alone: DAGRT_EINVAL). The placement above still applies, from inside
     * each worker as it starts (DAGRT_PLACEMENT_NONE leaves the engine's
     * own choice alone). */
    int (*thread_create)(void *user, const dagrt_thread_spec *spec, void **handle);
    void (*thread_join)(void *user, void *handle);
    void *thread_user;
    /* The serial switch ("is parallelism helping here?", "does the bug go
     * away?"), also DAGRT_SERIAL=1 in the environment, without a rebuild:
     * no worker thread is started whatever workers and hot_workers say,
     * so every task, graph node, pipeline frame and parallel-for piece
     * runs on a thread that waits for it (the main thread's waits, a
     * guest's own), in an order its dependencies allow. Printed once per
     * process on standard error. DAGRT_SERIAL=shuffle[:SEED] is the
     * shuffled serial switch (shuffle, below). */
    bool serial;
    /* Frame memory (dagrt_frame_alloc): the most bytes of chunks one frame
     * may hold (counted in whole chunks of 64 KiB, or the size of a larger
     * allocation); an allocation past it returns NULL (DAGRT_ENOMEM),
     * counted in frame_refused. 0 (the default): no limit. */
    size_t frame_budget;
    /* Frame memory made at create (rounded up to 2 MiB: chunks of 64 KiB
     * are made 32 at a time, a slab the system may back with one large
     * page), so that the first frames take nothing from the system
     * either: each thread
     * that allocates in a frame holds a chunk of its own, so a program
     * needs about (threads that allocate) x (frames alive: a state's last
     * two runs) chunks, more for bigger frames. 0: none, chunks are made
     * as frames first need them and reused from then on. */
    size_t frame_reserve;
    /* The shuffled serial switch (docs/runtime.md, "Living inside an
     * engine"), also DAGRT_SERIAL=shuffle or DAGRT_SERIAL=shuffle:SEED in
     * the environment: the serial switch (above, implied), and every
     * frame's nodes, the calling thread's spawned tasks and each
     * parallel-for's pieces run in a random order their dependencies
     * allow, a different one each frame, drawn from shuffle_seed (0: one
     * is made from the clock; SEED in the environment wins). The seed in
     * use is printed once per runtime on standard error, so that a failing
     * run can be replayed with DAGRT_SERIAL=shuffle:SEED. */
    bool shuffle;
    uint64_t shuffle_seed;
    /* Wake-up latency counters (dagrt_thread_stats.wake_*), also
     * DAGRT_WAKE_STATS=1 in the environment: a few clock reads per
     * wake-up, so off by default (the counters then stay 0). */
    bool wake_stats;
    /* Live costs (docs/runtime.md, "Live costs"): every live_costs-th
     * plan-mode frame of a graph state times each of its tasks, keeps a
     * smoothed cost per task, and the state's plan is made again between
     * frames when those costs have drifted from the ones it was made
     * from. 0 (the default): off, unless DAGRT_LIVE_COSTS=k is in the
     * environment (read at create). Above 1000000: DAGRT_EINVAL. */
    uint32_t live_costs;
    /* Frames on a crowded CPU (dagrt_crowd_frames above): AUTO (the
     * default) follows the sampled sign, PLAN and DYNAMIC fix the answer
     * for this runtime's frames. DAGRT_CROWDED=0 or 1 in the environment
     * fixes it for every runtime of the process instead, whatever is set
     * here (and the waits' naps with it). Another value: DAGRT_EINVAL. */
    dagrt_crowd_frames crowd_frames;
} dagrt_config;

typedef enum dagrt_thread_priority {
    DAGRT_PRIORITY_NORMAL = 0,     /* default: left as the process has it */
    DAGRT_PRIORITY_ELEVATED = 1,   /* Linux: nice -5 on the thread; Windows: ABOVE_NORMAL */
} dagrt_thread_priority;

#define DAGRT_WORKERS_AUTO (-1)

/* Fills *cfg with the defaults (what dagrt_create(NULL) uses). */
void dagrt_config_init(dagrt_config *cfg);

/* Creates a runtime from cfg (NULL: the defaults); the calling thread
 * becomes its main thread. On failure returns NULL and, if err is not
 * NULL, stores the error: DAGRT_EINVAL (a configuration out of range:
 * docs/runtime.md, "Errors"), DAGRT_ENOMEM, DAGRT_ETHREAD. dagrt_create is
 * the same without err. */
dagrt *dagrt_create_ex(const dagrt_config *cfg, int *err);
dagrt *dagrt_create(const dagrt_config *cfg);

/* On the main thread, not from a task: runs every task already spawned to
 * completion, cancels the waits that nothing else will end
 * (DAGRT_ECANCELED in them), joins every thread and frees everything
 * (docs/runtime.md, "Shutdown"). From inside a task, or with a guest
 * still attached, it prints an error and does nothing. */
void dagrt_destroy(dagrt *rt);

/* Pausing the pool (an app sent to the background, an editor's play
 * stopped; docs/runtime.md, "Living inside an engine"). dagrt_pause
 * returns once every worker is parked and runs no task: a task running
 * when it is called finishes first (the caller helps meanwhile); tasks
 * spawned, frames started, timers and I/O calls pending stay as they are,
 * and the workers use no CPU until dagrt_resume, which lets them go on
 * with nothing lost. While paused, the main thread's own waits (and
 * attached guests') still run tasks. Both on the main thread only,
 * outside any task; a second pause or a resume of a running pool does
 * nothing; dagrt_destroy of a paused runtime resumes it to drain. 0;
 * DAGRT_EINVAL (NULL rt), DAGRT_EPERM (not the main thread), DAGRT_ENESTED
 * (pause from inside a task, a fiber or a graph's node: inside a frame). */
int dagrt_pause(dagrt *rt);
int dagrt_resume(dagrt *rt);

/* Makes workers 1 .. n the hot ones (dagrt_config.hot_workers) from
 * dagrt_resume on: between frames, while paused. A runtime created with
 * hot workers keeps at least one (whether there are any shapes its plans
 * and its I/O roles). A worker made hot gets the hot priority; one that
 * stops being hot keeps the priority it had. Under
 * DAGRT_PLACEMENT_CLASS each changed worker places itself again. 0;
 * DAGRT_EINVAL (NULL rt, n outside 1 .. workers, a runtime created
 * without hot workers), DAGRT_EPERM (not the main thread), DAGRT_EBUSY
 * (not paused), DAGRT_ENOMEM. */
int dagrt_set_hot_workers(dagrt *rt, int n);

/* Number of worker threads (not counting the main thread). */
int dagrt_worker_count(const dagrt *rt);

/* The seed of the shuffled serial switch (dagrt_config.shuffle,
 * DAGRT_SERIAL=shuffle[:SEED]) this runtime draws its orders from, the
 * one its line on standard error names; 0 when the switch is off or rt
 * is NULL. */
uint64_t dagrt_shuffle_seed(const dagrt *rt);
/* The CPU placement this runtime uses: dagrt_config.placement, or what
 * DAGRT_PLACEMENT in the environment put in place of the default
 * (dagrt_config.placement above); DAGRT_PLACEMENT_AUTO when rt is NULL. */
dagrt_placement dagrt_get_placement(const dagrt *rt);

/* True on the runtime's main thread. */
bool dagrt_on_main_thread(const dagrt *rt);

/* ------------------------------------------------------- the CPUs granted */
/* (docs/runtime.md, "Living inside an engine") */

typedef enum dagrt_core_class {
    DAGRT_CORE_PERFORMANCE = 0,   /* the fastest class (every CPU where all are alike) */
    DAGRT_CORE_EFFICIENCY = 1,    /* any slower class of a hybrid CPU */
} dagrt_core_class;

/* One CPU the process may use. */
typedef struct dagrt_cpu {
    int id;          /* the system's number (Windows: group * 64 + number in the group) */
    int core;        /* the lowest id among the CPUs sharing its core: SMT siblings share it */
    int core_class;  /* dagrt_core_class: Linux's hybrid PMU lists (cpu_core / cpu_atom) or
                      * cpu_capacity, Windows' EfficiencyClass */
    int group;       /* Windows' processor group; 0 elsewhere */
} dagrt_cpu;

typedef struct dagrt_topology {
    int cpus;          /* CPUs the process may use: its affinity mask (every processor
                        * group on Windows, unless narrowed) */
    int cores;         /* the cores they sit on */
    int performance;   /* CPUs of each class */
    int efficiency;
    int smt;           /* CPUs sharing their core with another of these CPUs */
    int groups;        /* processor groups they span (1 off Windows) */
    int quota;         /* Linux's cgroup v2 CPU quota (cpu.max), whole CPUs rounded down,
                        * at least 1; 0: none */
    int usable;        /* what DAGRT_WORKERS_AUTO counts: cpus, bounded by quota */
} dagrt_topology;

/* The CPUs the process may use now, as the system grants them (no runtime
 * needed): a summary into *out (may be NULL) and, sorted by id, up to n of
 * them into cpus[0, n). Returns how many there are (out->cpus: call with
 * n 0 to size cpus); DAGRT_EINVAL for n < 0 or a NULL cpus with n > 0,
 * DAGRT_ENOMEM, DAGRT_EIO where the system tells nothing. Linux reads
 * /sys and /proc; DAGRT_SYSFS_ROOT names a directory that stands in for
 * "/" (a fake tree, for tests). Not for a frame's path: it reads files. */
int dagrt_get_topology(dagrt_topology *out, dagrt_cpu *cpus, int n);

/* The order DAGRT_PLACEMENT_PIN hands CPUs out in (see there), as
 * indices into what dagrt_get_topology returned: order[0, n) from cpus[0,
 * n). 0; DAGRT_EINVAL for a NULL argument or n < 0. */
int dagrt_topology_order(const dagrt_cpu *cpus, int n, int *order);

/* ------------------------------------------------------------------ tasks */

typedef void (*dagrt_fn)(void *arg);

/* A wait group: counts spawned tasks not yet finished. Caller-owned storage;
 * initialise with dagrt_group_init before use. */
typedef struct dagrt_group {
    uint64_t opaque_[4];
} dagrt_group;

/* Makes g an empty group (reusable after each wait). */
void dagrt_group_init(dagrt_group *g);

/* Where a spawned task may run. */
enum dagrt_spawn_flags {
    DAGRT_SPAWN_DEFAULT = 0,
    DAGRT_SPAWN_MAIN    = 1u << 0, /* only on the main thread, when it waits or pumps */
    DAGRT_SPAWN_HOT     = 1u << 1, /* hot lane: before other ready work */
    DAGRT_SPAWN_FIBER   = 1u << 2, /* on a pooled fiber: may suspend in waits */
};

/* Spawns fn(arg), counted by g (g may be NULL: fire and forget), to run
 * where flags say (dagrt_spawn: none). 0; DAGRT_EINVAL for a NULL rt or
 * fn, an uninitialised g, unknown flags, MAIN with HOT or FIBER, or
 * LARGE_STACK without FIBER; DAGRT_ENOMEM (nothing spawned). */
int dagrt_spawn(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg);
int dagrt_spawn_ex(dagrt *rt, dagrt_group *g, dagrt_fn fn, void *arg, unsigned flags);

/* A task that carries its argument inside itself, so that a spawn needs no
 * storage of the caller's (C++ callables: dagrt.hpp's dagrt::spawn). The
 * task's own storage: DAGRT_SPAWN_INLINE_SIZE bytes aligned to
 * DAGRT_SPAWN_INLINE_ALIGN, in the runtime's pooled task descriptor. */
#define DAGRT_SPAWN_INLINE_SIZE 80
#define DAGRT_SPAWN_INLINE_ALIGN 16
/* Fills dst (the task's storage) from src; called again as place(dst,
 * NULL) to undo that when the spawn fails after it. */
typedef void (*dagrt_place_fn)(void *dst, void *src);
/* As dagrt_spawn_ex, but fn runs as fn(p), p the task's own storage: n
 * bytes (at most DAGRT_SPAWN_INLINE_SIZE) that place(p, src) fills before
 * any thread can run the task (place NULL: the n bytes at src are copied).
 * fn runs once and owns what p holds (it ends its life); the storage is
 * gone once fn returns. If the spawn fails after place ran (DAGRT_ENOMEM),
 * place(p, NULL) is called, on the calling thread before this returns,
 * and fn never runs. 0; DAGRT_EINVAL (the cases of dagrt_spawn_ex, n over
 * DAGRT_SPAWN_INLINE_SIZE, or src NULL with n > 0 and no place; nothing
 * called), DAGRT_ENOMEM. */
int dagrt_spawn_inline(dagrt *rt, dagrt_group *g, dagrt_fn fn, dagrt_place_fn place, void *src,
                       size_t n, unsigned flags);
/* As dagrt_spawn, but fn runs as fn(p), p the task's own storage (as
 * dagrt_spawn_inline's), which holds w0 then w1 as two uintptr_t: an
 * argument of up to two machine words carried by the task, at the cost
 * of dagrt_spawn (dagrt.hpp spawns a small trivially copyable callable
 * this way). The storage is gone once fn returns. 0; DAGRT_EINVAL (NULL
 * rt or fn, an uninitialised g), DAGRT_ENOMEM (nothing spawned). */
int dagrt_spawn_words(dagrt *rt, dagrt_group *g, dagrt_fn fn, uintptr_t w0, uintptr_t w1);

/* Waits until every task counted by g has finished; their effects are
 * then visible. Waiting is helping: the waiting thread runs other ready
 * tasks meanwhile (a fiber task suspends; a thread outside the runtime
 * blocks, or helps in a free guest slot). 0; DAGRT_EINVAL (NULL, or g not
 * initialised), DAGRT_EBUSY (another thread waits on g), DAGRT_EPERM (g
 * is on another runtime thread's stack), DAGRT_ECANCELED (a thread
 * outside the runtime whose wait dagrt_destroy ended). */
int dagrt_group_wait(dagrt *rt, dagrt_group *g);

/* Whether every task counted by g has finished, without waiting or
 * helping (enkiTS' enkiIsTaskSetComplete): 1 done, 0 not yet, DAGRT_EINVAL
 * for a bad g, DAGRT_EPERM for a group on another runtime thread's stack
 * (its owner-local count is that thread's). A 1 makes the tasks' effects
 * visible to the caller, as a wait's return does. Any thread; together
 * with a group kept off the stack per task it is a task handle that may be
 * finished later and in any order (docs/runtime.md, "Middleware"). */
int dagrt_group_done(const dagrt_group *g);

/* The calling thread's index in rt: 0 the main thread, 1 .. workers the
 * workers, then the guest slots (a thread attached with
 * dagrt_thread_attach, or waiting in one); -1 on a thread that is not rt's.
 * Per-thread scratch of middleware is indexed by it (dagrt_thread_count()
 * entries: 1 + workers + guest_threads). */
int dagrt_thread_index(const dagrt *rt);
int dagrt_thread_count(const dagrt *rt);

/* Guest threads: a thread the runtime does not own (an engine thread that
 * steps physics) joins the pool for a while. dagrt_thread_attach takes a
 * free guest slot (dagrt_config.guest_threads) for the calling thread and
 * returns its thread index: from then on its spawns go to its own deque,
 * where workers steal them, and its waits help (run other ready tasks),
 * as the main thread's do. Nests: each attach needs its detach. On one of
 * rt's own threads both calls do nothing (attach returns its index).
 * Errors: DAGRT_EINVAL (rt NULL), DAGRT_EBUSY (every slot held).
 * dagrt_thread_detach leaves: tasks it spawned and nobody ran yet stay
 * queued for the others (it never owns queued work once gone). Not from
 * inside a task the guest runs (DAGRT_ENESTED) nor from a thread that is
 * not attached (DAGRT_EPERM). Wait on the groups made while attached
 * before leaving, and detach every guest before dagrt_destroy.
 * Without an attach, dagrt_group_wait from such a thread holds a slot for
 * the length of the wait when one is free (docs/runtime.md, "Guest
 * threads"). */
int dagrt_thread_attach(dagrt *rt);
int dagrt_thread_detach(dagrt *rt);

/* Main thread only: runs the main-thread tasks queued now; returns how many
 * ran, DAGRT_EPERM off the main thread, DAGRT_EINVAL for a NULL rt. */
int dagrt_pump_main(dagrt *rt);

/* Makes every task the calling thread has spawned and not yet started
 * stealable now, and wakes an idle thread for them. Inside a task the
 * runtime keeps its newest spawns private until the spawner's next spawn
 * or take (docs/runtime.md, "Tasks, groups, waits"): call this after
 * spawning when the code that follows runs long without calling the
 * runtime (a middleware job system's enqueue returning into the engine's
 * own loops). 0; DAGRT_EINVAL for a NULL rt; 0 and nothing to do on a
 * thread that is not rt's. */
int dagrt_publish(dagrt *rt);

/* Calls fn(arg, b, e) on disjoint sub-ranges covering [begin, end), on
 * any threads of rt, and returns when all have run; grain is the smallest
 * sub-range worth handing to another thread (0: the runtime chooses). 0
 * (begin == end: nothing to do); DAGRT_EINVAL for a NULL rt or fn or
 * begin > end. From a thread outside the runtime it runs fn inline. */
typedef void (*dagrt_range_fn)(void *arg, size_t begin, size_t end);
int dagrt_parallel_for(dagrt *rt, size_t begin, size_t end, size_t grain,
                       dagrt_range_fn fn, void *arg);

/* Batches and asynchronous ranges (docs/runtime.md, "Living inside an
 * engine"): a frame's jobs handed over at once. */

/* One task of a batch: fn(arg). */
typedef struct dagrt_task_desc {
    dagrt_fn fn;
    void *arg;
} dagrt_task_desc;

/* Spawns tasks[0, n), each as dagrt_spawn_ex(rt, g, fn, arg, flags) would
 * (counted by g, where flags say), with one publication for the whole
 * batch: idle threads are woken once, not once per task. From the main
 * thread, a worker, a task, a guest or a thread outside the runtime. 0
 * (n 0: nothing); nothing is spawned on an error: DAGRT_EINVAL as
 * dagrt_spawn_ex's (a NULL rt, an uninitialised g, bad flags, a NULL fn
 * in any entry, tasks NULL with n > 0), DAGRT_ENOMEM. */
int dagrt_spawn_batch(dagrt *rt, dagrt_group *g, const dagrt_task_desc *tasks, size_t n,
                      unsigned flags);

/* An asynchronous parallel-for's record: caller-owned storage, from
 * dagrt_parallel_for_async until the wait on its group has returned. */
typedef struct dagrt_range_job {
    uint64_t opaque_[6];
} dagrt_range_job;

/* Starts fn(arg, b, e) over disjoint sub-ranges covering [begin, end) and
 * returns at once; g (required) counts it, so dagrt_group_wait (or
 * dagrt_group_done) tells when every sub-range has run and its effects
 * are visible. The range is split by the threads that run it (halves,
 * down to grain; 0: the runtime chooses), so the call costs one spawn
 * whatever the range. j holds the loop meanwhile. 0 (begin == end: nothing
 * started, g not counted); DAGRT_EINVAL for a NULL rt, g, j or fn, an
 * uninitialised g, begin > end; DAGRT_ENOMEM (nothing started). From a
 * thread outside the runtime the range runs on the workers (the main
 * thread's waits with none). */
int dagrt_parallel_for_async(dagrt *rt, dagrt_group *g, dagrt_range_job *j, size_t begin,
                             size_t end, size_t grain, dagrt_range_fn fn, void *arg);

/* ------------------------------------------------------- inline fork-join */
/* The fast path for recursive fork-join (divide and conquer, tree walks):
 * spawn and join inlined into the caller, the task's descriptor on the
 * caller's stack, no group to count. A fork pushes the forked task onto
 * the calling worker's own deque, where any idle thread may steal it; the join
 * takes it back if nobody did (the common case: the caller then runs the
 * work itself, as a direct call the compiler can inline), or waits for the
 * thief, helping meanwhile.
 *
 *     static long fib(dagrt_worker *w, int n)
 *     {
 *         if (n < 2) return n;
 *         fib_arg a = {n - 1, 0};
 *         dagrt_forked f;
 *         dagrt_fork(w, &f, fib_task, &a);      // fib_task: a->r = fib(dagrt_worker_get(rt), a->n)
 *         long y = fib(w, n - 2);
 *         if (dagrt_join_take(w, &f))           // not stolen: run it here
 *             a.r = fib(w, a.n);
 *         return a.r + y;
 *     }
 *
 * Rules (the price of the speed): a dagrt_forked lives until its join
 * returns, so every dagrt_fork is joined, on the same thread, before the
 * function that forked returns; forks are joined in the reverse order of
 * their forking (another order is correct but slow). w comes from
 * dagrt_worker_get on the thread that forks and is passed down, not kept:
 * a stolen fork's task gets its own with dagrt_worker_get. On a fiber
 * task or a thread outside the runtime dagrt_worker_get returns NULL, and
 * with a NULL w dagrt_fork runs the function at once (no parallelism: use
 * dagrt_spawn there) and dagrt_join_take returns false.
 * A fork not yet taken back sits in the worker's private tail
 * (docs/runtime.md): it is exposed to thieves when one asks or is idle, at
 * the worker's next fork or join. */

typedef struct dagrt_worker dagrt_worker;

/* One fork: 96 bytes of caller-owned storage (an inline task descriptor
 * and its completion count), from dagrt_fork until its join returns. */
typedef struct dagrt_forked {
    uint64_t opaque_[12];
} dagrt_forked;

/* The calling thread's worker in rt, or NULL on a fiber task or a thread
 * that is not one of rt's (see above). */
dagrt_worker *dagrt_worker_get(dagrt *rt);
/* The same, for a program whose inline fork-join was built against view
 * `view_version` (DAGRT_WORKER_VIEW_VERSION, dagrt/fork.h): NULL unless it is the
 * library's, so a program built against another layout runs its forks as
 * plain calls instead of misreading the worker. dagrt_worker_get is this
 * with the header's version. */
dagrt_worker *dagrt_worker_get_v(dagrt *rt, unsigned view_version);
#define dagrt_worker_get(rt) dagrt_worker_get_v((rt), DAGRT_WORKER_VIEW_VERSION)

/* dagrt_fork, dagrt_join_take and dagrt_join are inline functions where
 * the compiler has GCC's atomic builtins (GCC, Clang), else calls into the
 * library (the same API out of line). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(DAGRT_INSIDE_)
#define DAGRT_FORK_API static inline
#else
#define DAGRT_FORK_API
#endif

/* Out-of-line halves of the inline functions; not for direct use. */
void dagrt__fork_slow(dagrt_worker *w, dagrt_forked *f);
void dagrt__fork_expose(dagrt_worker *w);
bool dagrt__join_slow(dagrt_worker *w, dagrt_forked *f);

/* DAGRT_WORKER_VIEW_VERSION, the layout behind the inline functions and
 * their definitions: dagrt/fork.h, included at the end of this header. */

/* Forks fn(arg) into f, as a task that any thread may steal until it is
 * joined. Returns 0, or DAGRT_EINVAL for a NULL f or fn (nothing forked; a
 * join of that f returns false). */
DAGRT_FORK_API int dagrt_fork(dagrt_worker *w, dagrt_forked *f, dagrt_fn fn, void *arg);
/* Joins fork f. true: nobody had started it; it is the caller's
 * again, and the caller must run the work itself (a plain call). false:
 * it has run elsewhere (or at fork, with a NULL w) and has finished; its
 * effects are visible. */
DAGRT_FORK_API bool dagrt_join_take(dagrt_worker *w, dagrt_forked *f);
/* Joins fork f, running it here if nobody had started it. */
DAGRT_FORK_API void dagrt_join(dagrt_worker *w, dagrt_forked *f);

/* ------------------------------------------- fibers and fiber-aware waits */
/* (events, mutexes, semaphores; docs/runtime.md, "Fibers")
 *
 * How a wait behaves depends on who waits:
 *  - a fiber task (spawned with DAGRT_SPAWN_FIBER): the fiber suspends, its
 *    worker runs other work, and the task resumes (on any worker) once the
 *    wait is satisfied;
 *  - a plain task, or the main thread: helps (runs other ready tasks) and
 *    sleeps when there is nothing to run, like dagrt_group_wait (a mutex
 *    or semaphore wait blocks the thread instead: helping could run a task
 *    that needs the lock);
 *  - a thread that is not one of rt's: blocks.
 * Signalling (set, unlock, release) never waits and works from any thread,
 * including threads outside the runtime (a timer, an I/O thread).
 * A fiber task may resume on another thread: read thread-local data (errno
 * included) again after every wait. */

/* With DAGRT_SPAWN_FIBER: run on a fiber with the large stack size
 * (dagrt_config.fiber_large_stack_size). Without it: DAGRT_EINVAL. */
#define DAGRT_SPAWN_LARGE_STACK (1u << 3)

/* True when the caller is a fiber task of rt. */
bool dagrt_in_fiber(const dagrt *rt);

/* A fiber task gives its worker away: it is queued again and resumes later.
 * DAGRT_ENOTFIBER outside a fiber task of rt (nothing is suspended). */
int dagrt_fiber_yield(dagrt *rt);

/* An event: set/reset, sticky (waiting on a set event returns at once
 * without suspending). Caller-owned storage; init before use. */
typedef struct dagrt_event { uint64_t opaque_[4]; } dagrt_event;
void dagrt_event_init(dagrt_event *e, bool set);
void dagrt_event_set(dagrt_event *e);       /* wakes every waiter */
void dagrt_event_reset(dagrt_event *e);     /* later waits wait again */
bool dagrt_event_is_set(const dagrt_event *e);
/* 0 once the event is set; DAGRT_EINVAL for a bad rt/e; DAGRT_ECANCELED
 * if dagrt_destroy cancels it (the timed form: dagrt_event_wait_until). */
int dagrt_event_wait(dagrt *rt, dagrt_event *e);

/* A mutex that suspends fiber tasks instead of blocking their worker.
 * Not recursive; unlock may come from another thread than lock (a fiber
 * may have migrated in between). Waiters get the lock in FIFO order. */
typedef struct dagrt_mutex { uint64_t opaque_[4]; } dagrt_mutex;
void dagrt_mutex_init(dagrt_mutex *m);
/* 0 with the lock held; DAGRT_ECANCELED (not held) if dagrt_destroy
 * cancels the wait. Timed form: dagrt_mutex_lock_until. */
int dagrt_mutex_lock(dagrt *rt, dagrt_mutex *m);
bool dagrt_mutex_trylock(dagrt_mutex *m);   /* true with the lock held; never waits */
/* DAGRT_EPERM if the mutex is not locked (nothing tells the holder from
 * another task: unlock from whoever may hand it on). */
int dagrt_mutex_unlock(dagrt_mutex *m);

/* A counting semaphore (FIFO hand-off to waiters). */
typedef struct dagrt_sem { uint64_t opaque_[4]; } dagrt_sem;
void dagrt_sem_init(dagrt_sem *s, uint32_t count);
/* 0 with one unit taken; DAGRT_ECANCELED if dagrt_destroy cancels the
 * wait. Timed form: dagrt_sem_acquire_until. */
int dagrt_sem_acquire(dagrt *rt, dagrt_sem *s);
bool dagrt_sem_tryacquire(dagrt_sem *s);    /* true with one unit taken; never waits */
void dagrt_sem_release(dagrt_sem *s, uint32_t n);   /* n units, to the oldest waiters first */


/* ----------------------------- waiting on the world: time and cancel scopes */
/* docs/runtime.md, "Waiting on the world" (contract: docs/design/io.md). */

/* A monotonic clock in nanoseconds (the trace's clock). */
uint64_t dagrt_now_ns(void);
/* The deadline that never passes. */
#define DAGRT_FOREVER UINT64_MAX

/* A cancel scope: caller-owned, nestable. A scope counts as cancelled
 * once it or any scope above it has been requested; a request never
 * reaches up (a child's cancel leaves its parent alone). A parent must
 * outlive its children. */
typedef struct dagrt_cancel { uint64_t opaque_[8]; } dagrt_cancel;
void dagrt_cancel_init(dagrt_cancel *c, dagrt_cancel *parent);   /* parent may be NULL */
/* Cancels c and every scope below it: each wait attached to them returns
 * DAGRT_ECANCELED before this returns. Any thread; cannot be undone. */
void dagrt_cancel_request(dagrt_cancel *c);
/* Whether c or a scope above it was requested (a thread that sees true
 * also sees what the requester wrote before its request). */
bool dagrt_cancel_requested(const dagrt_cancel *c);
/* A scope with a deadline (absolute, on dagrt_now_ns's clock;
 * DAGRT_FOREVER: none, which is dagrt_cancel_init): every wait attached to
 * it or to a scope below it (an I/O call, a sleep, an event, semaphore,
 * mutex or condition wait) ends with DAGRT_ETIMEDOUT once the deadline
 * passes, DAGRT_ECANCELED on a request before it: one call with a timeout,
 * where a call of its own has no deadline (dagrt_read, ...). A call's own
 * deadline still counts when it comes first; a sleep that the scope's
 * deadline cuts short returns DAGRT_ETIMEDOUT, not 0. The deadline is the
 * scope's for its life (a scope is never initialised again while waits
 * are attached); a wait reads it as it starts. Passing it is no request:
 * dagrt_cancel_requested stays false. */
void dagrt_cancel_init_deadline(dagrt_cancel *c, dagrt_cancel *parent, uint64_t deadline_ns);
/* The earliest deadline of c and the scopes above it, DAGRT_FOREVER for
 * none (or a NULL c). */
uint64_t dagrt_cancel_deadline(const dagrt_cancel *c);

/* Timed waits, sleeps and cancellation (docs/runtime.md, "Timed waits,
 * sleeps and cancellation"). Deadlines are absolute, on dagrt_now_ns's
 * clock; DAGRT_FOREVER (the untimed calls' deadline) never passes. cancel
 * may be NULL (no scope). A scope must outlive every wait attached to it
 * or below it, and must not be initialised again while waits are
 * attached. A fiber task suspends; a
 * plain task or the main thread helps (sleep, event) or blocks (semaphore,
 * mutex, condition); a thread outside the runtime blocks. Each returns 0,
 * DAGRT_ETIMEDOUT (the deadline passed first), DAGRT_ECANCELED (the scope
 * or one above it was cancelled, or dagrt_destroy cancelled the runtime's
 * waits) or DAGRT_EINVAL (a bad argument or a scope never initialised). A
 * unit, lock or signal handed to a waiter is never lost to its timeout. */
/* 0 once ns have passed (DAGRT_ETIMEDOUT when a scope's deadline cut it
 * short), DAGRT_ECANCELED, DAGRT_EINVAL. */
int dagrt_sleep(dagrt *rt, uint64_t ns, dagrt_cancel *cancel);
int dagrt_event_wait_until(dagrt *rt, dagrt_event *e, uint64_t deadline_ns, dagrt_cancel *cancel);
int dagrt_sem_acquire_until(dagrt *rt, dagrt_sem *s, uint64_t deadline_ns, dagrt_cancel *cancel);
int dagrt_mutex_lock_until(dagrt *rt, dagrt_mutex *m, uint64_t deadline_ns, dagrt_cancel *cancel);

/* A condition variable over dagrt_mutex: fiber-aware, FIFO, no lost
 * signals (a waiter is queued before it releases the mutex). wait needs m
 * held (DAGRT_EPERM if it is not locked) and holds it again on every
 * return, including ETIMEDOUT and ECANCELED; a signal that finds the
 * oldest waiter timed out goes to the next. */
typedef struct dagrt_cond { uint64_t opaque_[4]; } dagrt_cond;
void dagrt_cond_init(dagrt_cond *cv);
int dagrt_cond_wait(dagrt *rt, dagrt_cond *cv, dagrt_mutex *m, uint64_t deadline_ns,
                    dagrt_cancel *cancel);
void dagrt_cond_signal(dagrt_cond *cv);
void dagrt_cond_broadcast(dagrt_cond *cv);

/* ------------------------------------ waiting on the world: I/O calls */
/* (docs/runtime.md, "I/O calls"; contract: docs/design/io.md)
 * From a fiber task the call suspends the fiber; from a plain task on a
 * worker (or the main thread) it helps, like dagrt_event_wait; from a
 * thread that is not rt's it blocks that thread. c (may be NULL) cancels
 * it, and a deadline of c's scopes times it out. Buffers and addresses are
 * the caller's until the call returns. Each returns a negative error code
 * on failure: DAGRT_EINVAL (a bad argument), DAGRT_ECANCELED,
 * DAGRT_ETIMEDOUT, DAGRT_EBADF (also: closed by dagrt_close under the
 * call), or the system's reason (DAGRT_ENOENT .. DAGRT_EFBIG, else
 * DAGRT_EIO; dagrt_last_os_error has the system's code). */

typedef intptr_t dagrt_handle;   /* POSIX: a file descriptor; Windows: a HANDLE or SOCKET */
struct sockaddr;

/* offset >= 0: at that offset (pread/pwrite); < 0: at the handle's own
 * position, which advances (pipes, sockets, terminals). Bytes moved (0 at
 * the end of a file) or a negative error code. */
int64_t dagrt_read(dagrt *rt, dagrt_handle h, void *buf, size_t n, int64_t offset, dagrt_cancel *c);
int64_t dagrt_write(dagrt *rt, dagrt_handle h, const void *buf, size_t n, int64_t offset, dagrt_cancel *c);
/* from may be NULL; *fromlen: in, the room at from; out, the address's length. */
int64_t dagrt_recvfrom(dagrt *rt, dagrt_handle s, void *buf, size_t n,
                       struct sockaddr *from, size_t *fromlen, dagrt_cancel *c);
/* to may be NULL (a connected socket). */
int64_t dagrt_sendto(dagrt *rt, dagrt_handle s, const void *buf, size_t n,
                     const struct sockaddr *to, size_t tolen, dagrt_cancel *c);
/* 0 with the accepted connection in *out. */
int dagrt_accept(dagrt *rt, dagrt_handle s, dagrt_handle *out, dagrt_cancel *c);
/* 0 once connected. */
int dagrt_connect(dagrt *rt, dagrt_handle s, const struct sockaddr *to, size_t tolen, dagrt_cancel *c);
enum { DAGRT_POLL_IN = 1, DAGRT_POLL_OUT = 2, DAGRT_POLL_ERR = 4 };
/* The ready set of h among events (DAGRT_POLL_ERR always counts), or an
 * error (DAGRT_ETIMEDOUT once deadline_ns, on dagrt_now_ns's clock, has
 * passed: DAGRT_FOREVER waits without one). */
int dagrt_poll(dagrt *rt, dagrt_handle h, unsigned events, uint64_t deadline_ns, dagrt_cancel *c);
/* Closes h: the calls in flight on it end first, with DAGRT_EBADF (a plain
 * close() would leave a call parked in the kernel on a file it still
 * holds). 0 or a negative error code. */
int dagrt_close(dagrt *rt, dagrt_handle h);

/* ------------------------- waiting on the world: asynchronous waits */
/* (docs/runtime.md, "Coroutines") The waits above, for code that must not
 * hold a thread or a fiber stack while it waits (C++20 coroutines:
 * dagrt_coro.hpp): each call below starts its wait and either ends it at
 * once, returning its result as the blocking call would (fn is then never
 * called), or returns DAGRT_PENDING and later calls fn(arg, result)
 * exactly once, from a task of its own, with the blocking call's result
 * (bytes, a ready set, 0 or a negative code). That task is queued the way
 * a resumed fiber task is: with DAGRT_SPAWN_MAIN (dagrt_async_init's
 * flags) on the main thread's queue, with DAGRT_SPAWN_HOT (or, for an I/O
 * call, whenever the runtime has hot workers) on the hot lane, else as any
 * spawn. A pending wait is counted as a task of the runtime: dagrt_destroy
 * ends it as it ends a parked fiber's wait (DAGRT_ECANCELED, fn called)
 * and returns only after fn has run. The record and every buffer or
 * address given belong to the call until fn is called (or the call
 * returned anything but DAGRT_PENDING). Only from rt's own threads (inside
 * a task, or the main thread, or an attached thread): DAGRT_EPERM from
 * any other. Waiters are queued with the blocking calls' waiters, in one
 * FIFO. */
/* Not a result any call returns (a count of bytes stays far below it). */
#define DAGRT_PENDING INT64_MAX
typedef void (*dagrt_async_fn)(void *arg, int64_t result);
typedef struct dagrt_async { uint64_t opaque_[40]; } dagrt_async;
/* Prepares a for a wait whose end calls fn(arg, result); flags: 0,
 * DAGRT_SPAWN_MAIN or DAGRT_SPAWN_HOT (the task that calls fn). A record
 * may be initialised again once its last wait has ended. */
void dagrt_async_init(dagrt_async *a, dagrt_async_fn fn, void *arg, unsigned flags);
/* The asynchronous forms of dagrt_sleep, dagrt_event_wait_until,
 * dagrt_mutex_lock_until, dagrt_sem_acquire_until, dagrt_cond_wait (m held
 * again when fn is called, as there), dagrt_group_wait (0 once the group's
 * tasks have all finished; DAGRT_EBUSY if something else waits on it,
 * DAGRT_EPERM for a group on another thread's stack) and of the I/O calls
 * (*fromlen and *out are written before fn is called). Results as theirs,
 * or DAGRT_PENDING; DAGRT_EINVAL for a bad argument or a record never
 * initialised, DAGRT_EPERM from a thread that is not rt's. */
int64_t dagrt_sleep_async(dagrt *rt, dagrt_async *a, uint64_t ns, dagrt_cancel *cancel);
int64_t dagrt_event_wait_async(dagrt *rt, dagrt_async *a, dagrt_event *e, uint64_t deadline_ns,
                               dagrt_cancel *cancel);
int64_t dagrt_mutex_lock_async(dagrt *rt, dagrt_async *a, dagrt_mutex *m, uint64_t deadline_ns,
                               dagrt_cancel *cancel);
int64_t dagrt_sem_acquire_async(dagrt *rt, dagrt_async *a, dagrt_sem *s, uint64_t deadline_ns,
                                dagrt_cancel *cancel);
int64_t dagrt_cond_wait_async(dagrt *rt, dagrt_async *a, dagrt_cond *cv, dagrt_mutex *m,
                              uint64_t deadline_ns, dagrt_cancel *cancel);
int64_t dagrt_group_wait_async(dagrt *rt, dagrt_async *a, dagrt_group *g);
int64_t dagrt_read_async(dagrt *rt, dagrt_async *a, dagrt_handle h, void *buf, size_t n,
                         int64_t offset, dagrt_cancel *c);
int64_t dagrt_write_async(dagrt *rt, dagrt_async *a, dagrt_handle h, const void *buf, size_t n,
                          int64_t offset, dagrt_cancel *c);
int64_t dagrt_recvfrom_async(dagrt *rt, dagrt_async *a, dagrt_handle s, void *buf, size_t n,
                             struct sockaddr *from, size_t *fromlen, dagrt_cancel *c);
int64_t dagrt_sendto_async(dagrt *rt, dagrt_async *a, dagrt_handle s, const void *buf, size_t n,
                           const struct sockaddr *to, size_t tolen, dagrt_cancel *c);
int64_t dagrt_accept_async(dagrt *rt, dagrt_async *a, dagrt_handle s, dagrt_handle *out,
                           dagrt_cancel *c);
int64_t dagrt_connect_async(dagrt *rt, dagrt_async *a, dagrt_handle s, const struct sockaddr *to,
                            size_t tolen, dagrt_cancel *c);
int64_t dagrt_poll_async(dagrt *rt, dagrt_async *a, dagrt_handle h, unsigned events,
                         uint64_t deadline_ns, dagrt_cancel *c);

/* I/O counts, one row per kind of call (DAGRT_IO_READ ...), read while
 * calls run (each count exact, not one snapshot). */
enum { DAGRT_IO_READ, DAGRT_IO_WRITE, DAGRT_IO_RECVFROM, DAGRT_IO_SENDTO,
       DAGRT_IO_ACCEPT, DAGRT_IO_CONNECT, DAGRT_IO_POLL, DAGRT_IO_KINDS };
typedef struct dagrt_io_kind_stats {
    uint64_t ops;            /* calls that reached the reactor (counted as each returns) */
    uint64_t bytes;          /* bytes moved by those that succeeded */
    uint64_t errors;         /* ended with a system error */
    uint64_t timeouts;       /* ended with DAGRT_ETIMEDOUT */
    uint64_t cancels;        /* ended with DAGRT_ECANCELED (or EBADF from dagrt_close) */
} dagrt_io_kind_stats;
typedef struct dagrt_io_stats {
    dagrt_io_kind_stats kind[DAGRT_IO_KINDS];
    const char *reactor;     /* "io_uring", "epoll" (the fallback), "iocp" (Windows), "lane"
                              * (Windows' blocking lane for every call), "none" yet */
    uint64_t priority_refused; /* hot workers whose raised priority the system refused */
    uint64_t submits;        /* io_uring: system calls that handed ops to the kernel (several
                              * calls' ops batched in one: fewer than ops); 0 elsewhere */
} dagrt_io_stats;
/* Fills *out for rt (while calls run: each count exact, not one
 * snapshot). 0; DAGRT_EINVAL for a NULL argument. */
int dagrt_get_io_stats(const dagrt *rt, dagrt_io_stats *out);

/* ------------------------------ graph executor: the tables that dagc emits */
/* (the versioned descriptor types; generated code depends only on this header) */

/* dagc emits `static const` instances of these types; the runtime never
 * parses anything. Bump DAGRT_GRAPH_VERSION whenever their layout or meaning
 * changes: dagrt_graph_run refuses tables from another version (DAGRT_EVERSION)
 * instead of misreading them. */
#define DAGRT_GRAPH_VERSION 3u   /* 2: prev inputs (nprev, psucc); 3: costs */

typedef enum dagrt_node_kind {
    DAGRT_NODE_TASK = 0,    /* runs a function */
    DAGRT_NODE_GATE = 1,    /* runs nothing: completes as soon as it fires */
} dagrt_node_kind;

typedef enum dagrt_node_join {
    DAGRT_JOIN_AND = 0,     /* fires when every predecessor completed */
    DAGRT_JOIN_OR  = 1,     /* fires on the first predecessor to complete */
} dagrt_node_join;

enum dagrt_node_flags {
    DAGRT_NODE_MAIN     = 1u << 0,  /* on the thread that called dagrt_graph_run */
    DAGRT_NODE_HOT      = 1u << 1,  /* hot lane */
    DAGRT_NODE_FIBER    = 1u << 2,  /* on a fiber of its own */
    DAGRT_NODE_PARALLEL = 1u << 3,  /* run_range over [0, count(ctx)) */
    DAGRT_NODE_WHEN     = 1u << 4,  /* when(ctx) false: skipped, completes */
};

/* Typed trampolines: dagc wraps each user function (which takes the graph's
 * own context type) in a small static function of one of these types, so no
 * function pointer is ever called through an incompatible type. */
typedef void (*dagrt_node_fn)(void *ctx);
typedef void (*dagrt_node_range_fn)(void *ctx, size_t begin, size_t end);
typedef size_t (*dagrt_node_count_fn)(void *ctx);
typedef bool (*dagrt_node_when_fn)(void *ctx);

typedef struct dagrt_node {
    const char *name;            /* for diagnostics and tools */
    uint8_t kind;                /* dagrt_node_kind */
    uint8_t join;                /* dagrt_node_join */
    uint16_t flags;              /* dagrt_node_flags */
    uint32_t npred;              /* predecessors (the join count); 0: a root */
    uint32_t succ_first;         /* successors: graph->succ[succ_first ...] */
    uint32_t nsucc;
    uint32_t grain;              /* parallel: smallest sub-range; 0 = runtime's */
    dagrt_node_fn run;           /* tasks that are not parallel */
    dagrt_node_range_fn run_range; /* parallel tasks */
    dagrt_node_count_fn count;   /* parallel tasks */
    dagrt_node_when_fn when;     /* tasks with DAGRT_NODE_WHEN */
    /* (2) Frames in flight: `prev X` inputs of this node (an AND node's
     * own is implicit and not counted; an OR node's is one of its
     * alternatives), and the nodes of the next frame with `prev THIS`:
     * graph->psucc[psucc_first ...]. Outside a pipeline prev inputs are
     * satisfied when the run starts. */
    uint32_t nprev;
    uint32_t psucc_first;
    uint32_t npsucc;
} dagrt_node;

typedef struct dagrt_graph {
    uint32_t version;            /* DAGRT_GRAPH_VERSION of the emitting dagc */
    uint32_t nnodes;
    uint32_t nsucc;              /* entries in succ (the edges) */
    uint32_t reserved_;          /* 0 */
    const char *name;
    const dagrt_node *nodes;     /* topological order: edges go to higher indices */
    const uint32_t *succ;        /* successor indices, grouped per node */
    uint32_t npsucc;             /* (2) entries in psucc */
    const uint32_t *psucc;       /* (2) next-frame successors, grouped per node */
    /* (3) Each node's cost in nanoseconds (a `cost` clause, or the median a
     * profile measured: dagc --costs), 0 where unknown; NULL: no costs.
     * Plan mode places and orders nodes by them; no result depends on them. */
    const uint32_t *cost;
} dagrt_graph;

/* Mutable per-run state, owned by the generated code as static storage sized
 * by dagc (one entry per node), so running a frame allocates nothing. The
 * contents are private to the runtime; the layout only reserves room: 128
 * bytes per node, so that threads running neighbouring nodes share no
 * cache line. */
typedef struct dagrt_node_state {
    DAGRT_ALIGN_PAIR_ uint64_t opaque_[16];
} dagrt_node_state;

typedef struct dagrt_graph_state {
    DAGRT_ALIGN_PAIR_ uint64_t opaque_[336];
    dagrt_node_state *nodes;     /* nnodes entries */
    uint32_t nnodes;
} dagrt_graph_state;

/* Static initialiser for a graph state over an array of node states. */
#define DAGRT_GRAPH_STATE_INIT(node_states) \
    { {0}, (node_states), (uint32_t)(sizeof(node_states) / sizeof((node_states)[0])) }

/* Initialises st over nodes[0 .. nnodes) (both cleared), for zeroed,
 * uninitialised or idle storage (dagc's G_instance_init). A state that
 * was initialised over these very nodes and is in use (a run, or a started
 * run not yet waited for) is refused with DAGRT_EBUSY and left as it was;
 * DAGRT_EINVAL for a NULL st or nodes.
 * A state and its node states, and the graph tables it last ran, stay
 * readable by the runtime after a run returns (a worker that lost its CPU
 * in the run may still look at them), until the state's next run or
 * start, dagrt_graph_state_init on it again, dagrt_graph_state_fini, or
 * dagrt_destroy of the runtime it last ran on: free, reuse or rewrite
 * their memory only after one of those. */
int dagrt_graph_state_init(dagrt_graph_state *st, dagrt_node_state *nodes, uint32_t nnodes);

/* Releases st's memory (and its node states') to its owner: returns once
 * no thread of any runtime reads them any more, waiting for a worker that
 * lost its CPU in an earlier run of st if one still may (it needs only a
 * CPU to leave). st stays an idle, initialised state that may run again.
 * DAGRT_EINVAL for a NULL st; DAGRT_EBUSY while st is in use (a run, or a
 * started run not yet waited for), nothing changed. */
int dagrt_graph_state_fini(dagrt_graph_state *st);

/* Runs one frame of graph g to completion; the calling thread must be the
 * runtime's main thread: it runs the graph's `on main` tasks and helps with
 * other work while it waits. Returns 0, or: DAGRT_EVERSION (tables from an
 * incompatible dagc), DAGRT_EINVAL (bad arguments or a state too small for
 * g), DAGRT_ENESTED (called from inside a running task), DAGRT_EBUSY (this
 * state is running already, e.g. on another thread), DAGRT_EPERM (not the
 * runtime's main thread). A failed call runs nothing. It returns once every
 * task of the frame is done, not waiting for a worker that lost its CPU
 * meanwhile; st stays readable by the runtime after it (see
 * dagrt_graph_state_init). */
int dagrt_graph_run(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx);

/* A run in two halves, so that several states (instances of one graph, or
 * of several) are in flight at once and the caller does other things
 * meanwhile. dagrt_graph_start checks and resets as dagrt_graph_run does,
 * makes the roots ready and returns at once (same errors; DAGRT_EBUSY also
 * while a started run has not been waited for). The run proceeds on the
 * workers; its `on main` tasks run on the starting thread (the main
 * thread) inside its waits: dagrt_graph_wait, other runs, the pump.
 * dagrt_graph_wait helps until the run is complete, then returns its
 * result and makes the state idle: DAGRT_EINVAL for a state never started
 * (or started on another runtime), DAGRT_EBUSY from another thread or
 * while another wait holds it, DAGRT_ENESTED from inside a task. A failed
 * call changes nothing. A started run must be waited for before its state
 * is reused or goes out of scope. */
/* The run outlives the call, so it cannot read the caller's context where
 * it is: once the state is taken (and only then, so that a refused start
 * changes nothing), store(ctx, src) copies the context from src into ctx,
 * which the run then uses (store NULL: ctx is used as it is). */
typedef void (*dagrt_ctx_store_fn)(void *ctx, const void *src);
int dagrt_graph_start(dagrt *rt, const dagrt_graph *g, dagrt_graph_state *st, void *ctx,
                      dagrt_ctx_store_fn store, const void *src);
int dagrt_graph_wait(dagrt *rt, dagrt_graph_state *st);

/* Frames in flight (docs/runtime.md, "Pipelines"): a pipeline of depth D
 * runs frame k on states[k % D], at most D frames at once; every node of
 * frame N+1 waits for the same node of frame N, and a node with `prev X`
 * inputs for node X of frame N. The states and the contexts' storage are
 * the caller's (dagc's G_pipeline_t holds them): nothing is allocated.
 * init: 1 <= depth <= DAGRT_MAX_IN_FLIGHT, states[0 .. depth) idle states,
 * ctxs[k] the storage of frame k's context; drop (or NULL) is called on a
 * frame's context once its frame has been waited for. Init of a pipeline
 * in use (frames in flight, a call inside, or one of its states running)
 * is refused with DAGRT_EBUSY and changes nothing: drain it first.
 * submit: with D frames in flight, first waits (helping) for the oldest;
 * then copies the context in (store(ctxs[k], src); store NULL: the frame
 * uses src itself), starts the frame and returns. drain: waits for every
 * frame in flight, oldest first. Errors: DAGRT_EINVAL (bad arguments),
 * DAGRT_ENESTED (from inside a task), DAGRT_EBUSY (another thread while
 * frames are in flight or a call is inside, or a state in use elsewhere),
 * DAGRT_EPERM (an idle pipeline from a thread that is not the runtime's
 * main thread), DAGRT_EVERSION; a failed call changes nothing. A frame's
 * run error is returned by the call that waits for it. */
#define DAGRT_MAX_IN_FLIGHT 4
typedef void (*dagrt_ctx_drop_fn)(void *ctx);
typedef struct dagrt_pipeline {
    uint64_t opaque_[16];
    dagrt_graph_state *states[DAGRT_MAX_IN_FLIGHT];
    void *ctxs[DAGRT_MAX_IN_FLIGHT];
    dagrt_ctx_drop_fn drop;
} dagrt_pipeline;
int dagrt_pipeline_init(dagrt_pipeline *p, unsigned depth, dagrt_graph_state *const *states,
                        void *const *ctxs, dagrt_ctx_drop_fn drop);
int dagrt_pipeline_submit(dagrt *rt, const dagrt_graph *g, dagrt_pipeline *p,
                          dagrt_ctx_store_fn store, const void *src);
int dagrt_pipeline_drain(dagrt *rt, dagrt_pipeline *p);

/* The asynchronous forms of dagrt_graph_wait and of a pipeline's waits
 * (the rules of the asynchronous waits below: dagrt_async, DAGRT_PENDING,
 * fn(arg, result); docs/runtime.md, "Coroutines"), callable from any of
 * rt's threads (a coroutine on a worker too), where the blocking forms
 * need the main thread outside any task. A started run's wait is where
 * the main thread runs its part of the frame (its `on main` nodes, its
 * share of the others): the call takes the wait as dagrt_graph_wait
 * would (no other wait may take it then) and queues it as a task of the
 * main thread's queue, which the main thread runs inside its next wait
 * or pump (dagrt_pump_main, a run, a group wait...), helping until the run
 * is complete; fn then gets the run's result. So the run ends only once
 * the main thread waits or pumps, as its `on main` nodes always needed.
 * dagrt_graph_wait_async: DAGRT_PENDING, or at once DAGRT_EINVAL (bad
 * arguments or record, a state never started or started on another
 * runtime), DAGRT_EBUSY (another wait holds it, a pipeline's frame),
 * DAGRT_EPERM (not one of rt's threads). dagrt_pipeline_wait_async: waits,
 * oldest first, until at most keep frames are in flight (0: as
 * dagrt_pipeline_drain; depth - 1: room for a submit that will not wait),
 * fn getting the first frame error as drain's; at once 0 when no more
 * than keep are in flight; the pipeline is held meanwhile (its calls
 * answer DAGRT_EBUSY until fn is called); errors at once as drain's, and
 * DAGRT_EPERM as above. */
int64_t dagrt_graph_wait_async(dagrt *rt, dagrt_async *a, dagrt_graph_state *st);
int64_t dagrt_pipeline_wait_async(dagrt *rt, dagrt_async *a, dagrt_pipeline *p, unsigned keep);

/* ------------------------------------------------------------ frame memory */
/* (docs/runtime.md, "Data across frames")
 *
 * Memory that lives as long as a frame: a bump allocator per frame in
 * flight, for a frame's temporary data (lists, command buffers, strings).
 * The frame is the one whose task calls it: a node's body (of dagrt_graph_run,
 * a started instance or a pipeline's frame) or a piece of a parallel-for
 * it runs, on any thread; not a task a node spawns or forks (allocate
 * before, pass the pointer). Each thread bumps a chunk of its own: no lock
 * unless a chunk runs out. Nothing is freed one by one: a frame's memory
 * is released in one step when the frame retires, once the frame after
 * it has ended too (a pipeline's next frame; for dagrt_graph_run and
 * instances, the same state's next run), so the frame after it may still
 * read it (a `prev` reader); a drained pipeline's last frame and a state's
 * last run stay until the state runs again. Chunks go back
 * to the runtime and are reused: once warm, frames allocate nothing from
 * the system. Under AddressSanitizer a retired frame's memory is
 * poisoned: a pointer kept past its frame is reported.
 *
 * dagrt_frame_alloc: size bytes aligned to align (a power of two up to
 * 4096; 0 means 16), or NULL with the calling thread's
 * dagrt_frame_last_error set: DAGRT_EPERM outside a frame's task,
 * DAGRT_EINVAL for a bad align or a size over 1 GiB, DAGRT_ENOMEM when the
 * frame's budget (dagrt_config.frame_budget) is spent or the system has
 * no memory (both counted in dagrt_thread_stats.frame_refused). Size 0
 * gives a valid pointer to no bytes.
 * Inline on x86-64 Linux with GCC or Clang: a few instructions while the
 * calling thread's share of the frame has room, a call otherwise (and on
 * every other platform, or where DAGRT_FRAME_ALLOC_CALL is defined before
 * this header; the library also exports dagrt_frame_alloc as a function
 * for every build). The inline form needs libdagrt's thread-local data in
 * the program's static TLS: a program linked against libdagrt (shared or
 * static) has it; code that reaches libdagrt only through dlopen should
 * define DAGRT_FRAME_ALLOC_CALL. */
/* Internal to dagrt_frame_alloc's inline form: read or write none. */
typedef struct dagrt__frame_window {
    char *cur;
    char *end;
} dagrt__frame_window;
/* Out-of-line half of dagrt_frame_alloc; not for direct use. */
void *dagrt__frame_alloc_slow(size_t size, size_t align);
#if defined(__x86_64__) && !defined(__ILP32__) && defined(__linux__) && !defined(__ANDROID__) && \
    defined(__GNUC__) && !defined(DAGRT_INSIDE_) && !defined(DAGRT_FRAME_ALLOC_CALL)
#define DAGRT_FRAME_ALLOC_INLINE 1
/* Internal, not for direct use (libdagrt's exec/frame.c says how it
 * works). */
static inline dagrt__frame_window *dagrt__frame_window_here(void)
{
    dagrt__frame_window *w;
    __asm__ volatile("movq %%fs:0, %0\n\taddq dagrt__fwin@gottpoff(%%rip), %0" : "=r"(w));
    return w;
}
static inline void *dagrt_frame_alloc(size_t size, size_t align)
{
    dagrt__frame_window *w = dagrt__frame_window_here();
    uintptr_t p = ((uintptr_t)w->cur + align - 1) & ~(uintptr_t)(align - 1);
    uintptr_t end = (uintptr_t)w->end;
    /* Internal: see libdagrt's exec/frame.c. */
    if (__builtin_expect(align - 1 < 4096 && (align & (align - 1)) == 0 && size - 1 < end - p,
                         1)) {
        w->cur = (char *)p + size;
        return (void *)p;
    }
    return dagrt__frame_alloc_slow(size, align);
}
#else
void *dagrt_frame_alloc(size_t size, size_t align);
#endif
/* The code of the calling thread's last dagrt_frame_alloc that returned
 * NULL (0 if none did); read it before anything that may move a fiber
 * task to another thread. */
int dagrt_frame_last_error(void);

/* A frame arena: frame memory for one task's many small allocations at
 * the cost of an inlined bump pointer. The handle is the caller's
 * storage (a local of the task), opened in a frame's task (the same tasks
 * as dagrt_frame_alloc's) and used by that task alone, on whatever thread
 * it runs (a fiber task may move between threads: the handle moves with
 * it). It bumps a slice of frame memory it owns (taken from the calling
 * thread's share, a few KiB at a time), which no thread and no other
 * handle touches meanwhile; its memory is the frame's, with
 * dagrt_frame_alloc's lifetime (released when the frame retires,
 * poisoned under AddressSanitizer). The handle itself is valid until its
 * task ends; closing it gives the rest of its slice back to the calling
 * thread when it can (without a close, or after the task moved threads
 * or another handle took memory since, that rest is unused until the
 * frame retires).
 * The fields are internal: read or write none. */
typedef struct dagrt_frame_arena {
    char *cur_;
    char *end_;
    void *frame_;
    uint64_t gen_;
    size_t slice_;
} dagrt_frame_arena;

/* Opens *a for the calling task's frame; takes no memory yet. 0, or
 * DAGRT_EINVAL (NULL a), DAGRT_EPERM outside a frame's task (*a is then
 * closed, and its allocations fail with DAGRT_EPERM). */
int dagrt_frame_arena_open(dagrt_frame_arena *a);
/* Gives the rest of a's slice back to the calling thread where it can
 * (above), for its next allocations in the same frame; a is closed (open
 * it again to reuse it).
 * The memory a gave stays the frame's. Closing a closed handle does
 * nothing. */
void dagrt_frame_arena_close(dagrt_frame_arena *a);
/* Out-of-line half of dagrt_frame_arena_alloc; not for direct use. */
void *dagrt__frame_arena_refill(dagrt_frame_arena *a, size_t size, size_t align);

/* dagrt_frame_alloc from a's chunk: size bytes aligned to align (a power
 * of two up to 4096; 0 means 16), or NULL with dagrt_frame_last_error
 * set: dagrt_frame_alloc's errors, and DAGRT_EPERM when a is closed or
 * the caller is not a task of a's frame. Inline: a few instructions while
 * its slice has room; a call to take another slice (no lock unless the
 * frame needs a new chunk). */
static inline void *dagrt_frame_arena_alloc(dagrt_frame_arena *a, size_t size, size_t align)
{
    uintptr_t p = ((uintptr_t)a->cur_ + align - 1) & ~(uintptr_t)(align - 1);
    uintptr_t end = (uintptr_t)a->end_;
    /* size - 1 < room: 1 <= size <= room (size 0 and an empty handle,
     * cur_ == end_ == NULL, go the slow way); align - 1 < 4096 and a
     * power of two (0 and bad ones too). With constant arguments the
     * compiler folds all but the room check. */
    if (align - 1 < 4096 && (align & (align - 1)) == 0 && p <= end && size - 1 < end - p) {
        a->cur_ = (char *)p + size;
        return (void *)p;
    }
    return dagrt__frame_arena_refill(a, size, align);
}

/* The frame the calling task belongs to (the same tasks as
 * dagrt_frame_alloc's): number, the frames run before it on this graph
 * state (dagrt_graph_run, an instance) or this pipeline since its init;
 * slot, number % slots, where slots is the pipeline's depth + 1 (2 for a
 * state run on its own): the index of the frame's own copy of per-frame
 * data among `slots` copies, enough for every frame in flight and the one
 * before the oldest (slot (number + slots - 1) % slots is the previous
 * frame's); state, its dagrt_graph_state; graph, the tables it runs
 * (dagc's per-frame accessors tell their own graph's frames by it); rt,
 * the runtime that runs it (dagc's coroutine tasks wait on it). 0, or
 * DAGRT_EINVAL (NULL out), DAGRT_EPERM outside a frame's task. */
#define DAGRT_FRAME_SLOTS (DAGRT_MAX_IN_FLIGHT + 1)
typedef struct dagrt_frame_info {
    uint64_t number;
    uint32_t slot;
    uint32_t slots;
    const void *state;
    const struct dagrt_graph *graph;
    dagrt *rt;
} dagrt_frame_info;
int dagrt_get_frame(dagrt_frame_info *out);

/* What the last completed run of a state did, for tests and tools (all 0
 * before the first run). Call it between runs, not during one. */
typedef struct dagrt_graph_stats {
    uint64_t runs;               /* completed runs of this state */
    uint32_t last_ran;           /* tasks that ran in the last run */
    uint32_t last_skipped;       /* tasks skipped by `when` in the last run */
    /* Runs of the run policy's serial stretches: kept on the caller
     * because the policy found the workers sharing the frame without CPU,
     * run serial, or (a started run, a pipeline frame) taken back from
     * them at its wait (docs/runtime.md, "The run policy"). Was
     * solo_runs before 0.2 (CHANGELOG.md). */
    uint64_t stretch_runs;
    /* Times the state's plan was made again because its measured costs
     * drifted (dagrt_config.live_costs; a pipeline counts each of its
     * states re-planned). */
    uint64_t replans;
} dagrt_graph_stats;

/* Fills *out for st. 0; DAGRT_EINVAL for a NULL argument, DAGRT_EBUSY
 * while st runs (or is started and not waited for). */
int dagrt_graph_get_stats(const dagrt_graph_state *st, dagrt_graph_stats *out);

/* -------------------------------------------------- observing: profilers */
/* (docs/runtime.md, "Observing a frame")
 *
 * An observer is a struct of optional callbacks (NULL: not called) and a
 * user pointer. The runtime calls them on the thread the event happens on;
 * a callback must not call back into the runtime, and should be short (it
 * runs inside the scheduler). With no observer installed and no trace
 * recording, each node costs one predictable branch. */

typedef struct dagrt_node_event {
    const char *graph;       /* dagrt_graph.name */
    const char *node;        /* dagrt_node.name */
    uint32_t index;          /* the node's index in the graph's table */
    int thread;              /* dagrt_thread_index: 0 main, k worker k, then the guest slots */
    uint64_t frame;          /* runs of this graph started on this runtime before this
                                one (from 0): all its states and pipelines together */
    const void *state;       /* the dagrt_graph_state: tells instances apart */
    bool piece;              /* a parallel task's piece: [begin, end) of its range */
    size_t begin, end;
    uint16_t flags;          /* the node's dagrt_node_flags: on main, hot, fiber, parallel */
} dagrt_node_event;

/* A graph run as a whole (frame_begin, frame_end), on the main thread. */
typedef struct dagrt_frame_event {
    const char *graph;       /* dagrt_graph.name */
    uint64_t frame;          /* as dagrt_node_event.frame */
    const void *state;       /* the dagrt_graph_state */
    bool in_flight;          /* a started run or a pipeline's frame: runs of this graph
                                on other states may overlap it; else one at a time */
    const char *mode;        /* how the run policy runs it (docs/runtime.md, "The run
                                policy"): "serial", "plan", "pipelined plan",
                                "dynamic" or "caller alone" */
} dagrt_frame_event;

/* A task the program spawned (dagrt_spawn, _ex, _words, _inline, _batch)
 * while something observed, as it runs (task_begin, task_end: on the
 * thread that runs it, both on the same one). A fiber task
 * (DAGRT_SPAWN_FIBER) is reported slice by slice: a task_begin each time
 * it runs on a thread (its start, each resume after a wait) and a task_end
 * each time it leaves it (a suspend, or its end), on that thread. The
 * runtime's own tasks (the dynamic executor's node tasks, parallel-for
 * pieces, ...) are never reported, nor are forks. The parent is the node
 * whose body (or a task spawned from it) spawned it, where the built-in
 * trace was recording on the spawning thread; else graph and node are
 * NULL. */
typedef struct dagrt_task_event {
    int thread;              /* dagrt_thread_index of the thread running it */
    dagrt_fn fn;             /* the task's function and argument as spawned */
    void *arg;               /* (an inline task's: its storage) */
    const char *graph;       /* the parent node's graph and name, or NULL */
    const char *node;
    uint32_t index;          /* the parent node's index and frame (0 when none) */
    uint64_t frame;
    /* Appended (a reader built against a header without them reads the
     * members above, which kept their places): */
    uint32_t slice;          /* a fiber task's slice: 0 its start, k its k-th resume
                                (begin and end of one slice carry the same); 0 for others */
    bool suspended;          /* task_end: the slice ended in a wait or dagrt_fiber_yield,
                                a task_begin of slice + 1 follows (maybe on another
                                thread); false at the task's end and in task_begin */
} dagrt_task_event;

typedef struct dagrt_observer {
    /* A task node's body (or, for a parallel task, each piece: once per
     * sub-range, on the thread that runs it) begins / ends. Gates and tasks
     * skipped by `when` run nothing and report nothing. begin and end come
     * on the same thread, except for a fiber task, which reports: */
    void (*node_begin)(void *user, const dagrt_node_event *e);
    void (*node_end)(void *user, const dagrt_node_event *e);
    /* A fiber task's node leaves its thread (e->thread) as the fiber
     * suspends, and comes back (on e->thread, maybe another one) as it
     * resumes: close and reopen a zone there. */
    void (*fiber_suspend)(void *user, const dagrt_node_event *e);
    void (*fiber_resume)(void *user, const dagrt_node_event *e);
    /* On the thread itself: "dagrt-main" (0), "dagrt-worker-k" (k), or
     * "dagrt-guest-k" (a thread attached in guest slot k: workers + k).
     * Threads that start before the observer is installed are not
     * reported; dagrt_config.observer installs one before any starts. */
    void (*thread_start)(void *user, int thread, const char *name);
    void (*thread_stop)(void *user, int thread);
    /* The thread found nothing to run and goes to sleep / woke up. */
    void (*idle)(void *user, int thread);
    void (*wake)(void *user, int thread);
    /* A graph run begins (its state taken, its mode chosen) / ends, on the
     * main thread: dagrt_graph_run; a started run's or a pipeline frame's
     * end is reported by the wait that finds it complete (its last node
     * may have ended a while before). */
    void (*frame_begin)(void *user, const dagrt_frame_event *e);
    void (*frame_end)(void *user, const dagrt_frame_event *e);
    /* As a worker goes to sleep and as it wakes (on that thread): tasks
     * ready in the threads' queues (a sample: read without stopping
     * anyone) and the workers asleep. */
    void (*load)(void *user, int thread, int ready, int parked);
    /* A spawned task of the program's (dagrt_task_event) begins / ends. */
    void (*task_begin)(void *user, const dagrt_task_event *e);
    void (*task_end)(void *user, const dagrt_task_event *e);
} dagrt_observer;

/* Installs obs (copied) with user, or removes it (obs NULL). 0;
 * DAGRT_EINVAL for a NULL rt. Main thread only (DAGRT_EPERM elsewhere),
 * between frames: a node running while the observer changes may report
 * its begin to one and its end to the other;
 * worker events (idle, wake) may still reach the previous observer for a
 * moment after the call, so keep what its user points at alive until
 * dagrt_destroy. Reports thread_start of the main thread at once. */
int dagrt_set_observer(dagrt *rt, const dagrt_observer *obs, void *user);

/* The built-in trace recorder (Chrome Trace Event Format, which Perfetto and
 * speedscope open). DAGRT_TRACE=FILE in the
 * environment at dagrt_create starts it, and dagrt_destroy (or exit) writes FILE;
 * DAGRT_TRACE_FRAMES=N keeps only the last N frames of each graph;
 * DAGRT_TRACE_MB=M sets the memory cap. */
typedef struct dagrt_trace_config {
    size_t max_bytes;        /* memory cap for all threads; 0: 64 MiB */
    uint64_t frames;         /* keep the last N frames of each graph; 0: all */
} dagrt_trace_config;

/* Starts recording (cfg NULL: defaults); after dagrt_trace_stop, resumes
 * into the same buffers (cfg is then not read; spans open across the stop
 * are dropped). Main thread, between frames. 0; DAGRT_EINVAL (NULL rt,
 * max_bytes over 1 TiB), DAGRT_ENOMEM, DAGRT_EPERM off the main thread. */
int dagrt_trace_start(dagrt *rt, const dagrt_trace_config *cfg);
/* Stops recording; what was recorded stays until written. 0;
 * DAGRT_EINVAL if recording never started, DAGRT_EPERM off the main
 * thread. */
int dagrt_trace_stop(dagrt *rt);
/* Writes what was recorded to path (whole or not at all). Main thread,
 * after dagrt_trace_stop or between frames. A regular file (or a new one)
 * is replaced atomically; a symlink's final target is replaced in its own
 * directory; a character device or a FIFO (with a reader) is written in
 * place; anything else is refused. DAGRT_EIO when the system refuses
 * (dagrt_last_os_error: why), DAGRT_EINVAL for a bad argument. */
int dagrt_trace_write(dagrt *rt, const char *path);

/* Runtime statistics, kept always (a few plain counter updates per task
 * and per sleep, each on its own thread's line). */
typedef struct dagrt_thread_stats {
    uint64_t busy_ns;        /* since start, minus idle_ns */
    uint64_t idle_ns;        /* looking for work or asleep */
    uint64_t tasks;          /* tasks run (nodes, pieces, spawns, forks stolen) */
    uint64_t steals;         /* tasks taken from other threads */
    uint64_t parks;          /* times it went to sleep */
    uint64_t wakes;          /* sleepers it woke */
    /* Waiting on the world: timed and cancellable waits (sleeps, events,
     * semaphores, mutexes, condition variables) that returned on this
     * thread with DAGRT_ETIMEDOUT / DAGRT_ECANCELED; waits of threads
     * outside the runtime count on line 0. */
    uint64_t wait_timeouts;
    uint64_t wait_cancels;
    /* The I/O calls (dagrt_read ... dagrt_poll), one entry per kind
     * (DAGRT_IO_READ ...), counted on the thread each call returned on
     * (line 0 outside the runtime): calls that reached the reactor, bytes
     * moved by those that succeeded, DAGRT_ETIMEDOUT and DAGRT_ECANCELED
     * results (a call refused before it reached the reactor counts its
     * timeout or cancellation, not an operation). dagrt_get_io_stats has the
     * same per runtime, with errors, the reactor and the priority refusals. */
    uint64_t io_ops[DAGRT_IO_KINDS];
    uint64_t io_bytes[DAGRT_IO_KINDS];
    uint64_t io_timeouts[DAGRT_IO_KINDS];
    uint64_t io_cancels[DAGRT_IO_KINDS];
    /* A worker whose placement (DAGRT_PLACEMENT_PIN / CLASS) the system
     * refused: 1, and it runs where it was. */
    uint64_t pin_refused;
    /* Frame memory (dagrt_frame_alloc): chunks this thread took for a
     * frame; chunks it had made from the system (0 once warm; 32 at a time,
     * a 2 MiB slab, or 1 for a larger allocation); allocations it was
     * refused (DAGRT_ENOMEM: budget or system); and, on the thread that
     * retired them (the one that waits for frames: the main thread), the
     * frames retired and the high-water mark, the most bytes one frame
     * allocated (alignment padding included). */
    uint64_t frame_chunks;
    uint64_t frame_chunks_new;
    uint64_t frame_refused;
    uint64_t frames_retired;
    uint64_t frame_bytes_max;
    /* Wake-up latency (dagrt_config.wake_stats; all 0 when off), on the
     * line of the thread that was woken. wakeups: the times it slept
     * (parked) and was woken for new work (a spawn, a push to the main
     * thread's queue: the publisher wakes a sleeper right after its push);
     * wake_ns: from that wake-up call to the thread running again (the
     * parked wake); search_ns: from then to the start of the first task it
     * found (the search; a search that finds nothing ends when the thread
     * goes idle again or its wait returns). Sums and the largest of each,
     * in nanoseconds: wake + search is the push-to-start latency of a
     * woken thread's first task. */
    uint64_t wakeups;
    uint64_t wake_ns;
    uint64_t wake_ns_max;
    uint64_t search_ns;
    uint64_t search_ns_max;
} dagrt_thread_stats;

/* Fills out[0, n) with each thread of rt by dagrt_thread_index (0 main,
 * the workers, the guest slots); returns the number of threads (call with
 * n 0 to size out), or DAGRT_EINVAL (NULL rt, n < 0, NULL out). The
 * counts are read while threads run: each is exact, they are not one
 * snapshot. */
int dagrt_get_stats(const dagrt *rt, dagrt_thread_stats *out, int n);


/* The inline fork-join's layout and definitions (not part of the API). */
#include "dagrt/fork.h"

#if defined(__GNUC__) && !defined(DAGRT_NO_VISIBILITY_PRAGMA)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* DAGRT_H */
