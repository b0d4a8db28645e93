/*
 * os/os.h - libdagrt's system layer (internal, prefix rt_os_).
 *
 * Every call the runtime makes into the operating system goes through this
 * header: threads, locks, the futex-style wait on a 32-bit word, the
 * process-wide barrier, fiber stack mappings (and the Win64 thread
 * block's view of one), CPU queries and affinity, the clock, the
 * environment, the process id, the files the trace writer makes (file.h)
 * and the fiber-overflow fault handler. One file per system implements it
 * (os_linux.c, os_win32.c); no other runtime file includes a system header
 * beyond C11's (one known exception: arch/ctx_ucontext.h's <ucontext.h>,
 * whose ucontext_t the portable fallback context holds by value:
 * docs/runtime-internals.md's arch/ table says why it stays).
 *
 * The types hold no system type: locks are opaque storage whose size one
 * `#if` below sets per system (each implementation checks at compile time
 * that its native type fits), threads are a handle word.
 */
#ifndef DAGRT_OS_H
#define DAGRT_OS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "file.h"

#if defined(_WIN32)
#  define RT_OS_MUTEX_WORDS 1   /* SRWLOCK */
#  define RT_OS_COND_WORDS  1   /* CONDITION_VARIABLE */
#else
#  define RT_OS_MUTEX_WORDS 8   /* pthread_mutex_t: 40 bytes (glibc x86-64), 48 (AArch64) */
#  define RT_OS_COND_WORDS  8   /* pthread_cond_t: 48 bytes */
#endif

/* ------------------------------------------------------------- threads */

/* A thread handle: pthread_t or a Win32 HANDLE. */
typedef struct rt_os_thread {
    uintptr_t h;
} rt_os_thread;

typedef void (*rt_os_thread_fn)(void *arg);

/* Starts fn(arg) on a new thread. Returns 0, or -1 (no thread started). */
int rt_os_thread_start(rt_os_thread *t, rt_os_thread_fn fn, void *arg);
/* How many threads rt_os_thread_start was asked for in this process
 * (tests: the engine's thread hook leaves the runtime none to start). */
uint64_t rt_os_thread_starts(void);
/* Waits for the thread to return and releases its handle. */
void rt_os_thread_join(rt_os_thread *t);
/* The calling thread's handle, valid for the affinity calls below while
 * the thread lives (on Win32 a pseudo-handle: use it on this thread only). */
rt_os_thread rt_os_thread_self(void);
/* Names the calling thread for debuggers and profilers (best effort;
 * Linux keeps 15 characters). */
void rt_os_thread_name(const char *name);
/* The calling thread's own stack, [*lo, *hi). false where unknown. */
bool rt_os_thread_stack(char **lo, char **hi);
/* Gives the CPU to another ready thread, if any. */
void rt_os_yield(void);
/* A per-thread value with a function called on the thread as it exits,
 * while the value it last set is not NULL (a pthread key's destructor; a
 * fiber-local slot's callback on Windows): the value is cleared before
 * the call. Made once per process (a few at most); 0 or -1. */
typedef struct rt_os_exit_key {
    uintptr_t k;
} rt_os_exit_key;
int rt_os_exit_key_make(rt_os_exit_key *key, void (*at_exit)(void *value));
void rt_os_exit_key_set(const rt_os_exit_key *key, void *value);
/* Sleeps about ns nanoseconds (at least the system's granularity). */
void rt_os_sleep_ns(uint64_t ns);

/* --------------------------------------------------------------- locks */

typedef struct rt_os_mutex {
    _Alignas(8) uint64_t opaque_[RT_OS_MUTEX_WORDS];
} rt_os_mutex;

typedef struct rt_os_cond {
    _Alignas(8) uint64_t opaque_[RT_OS_COND_WORDS];
} rt_os_cond;

/* init returns 0 or -1. */
int rt_os_mutex_init(rt_os_mutex *m);
void rt_os_mutex_fini(rt_os_mutex *m);
void rt_os_mutex_lock(rt_os_mutex *m);
void rt_os_mutex_unlock(rt_os_mutex *m);

int rt_os_cond_init(rt_os_cond *c);
void rt_os_cond_fini(rt_os_cond *c);
/* m held; may return spuriously (callers loop on their condition). */
void rt_os_cond_wait(rt_os_cond *c, rt_os_mutex *m);
void rt_os_cond_signal(rt_os_cond *c);
void rt_os_cond_broadcast(rt_os_cond *c);

/* One-time initialisation: fn runs exactly once per rt_os_once, and every
 * caller returns after it has (zero-initialised storage is the initial
 * state, so a static one needs no initialiser). */
typedef struct rt_os_once {
    _Atomic uintptr_t state;
} rt_os_once;
void rt_os_once_run(rt_os_once *o, void (*fn)(void));

/* ------------------------------------------- waiting on a 32-bit word */

/* Sleeps while *w == expect; the comparison and going to sleep are atomic
 * against rt_os_wake32_*, so a wake after the caller's last check is not
 * lost. May return spuriously. Addresses are process-private. */
void rt_os_wait32(_Atomic uint32_t *w, uint32_t expect);
/* The same with a deadline on rt_os_now_ns's clock (UINT64_MAX: none):
 * also returns once the deadline has passed (timers, wait/wait.h). */
void rt_os_wait32_until(_Atomic uint32_t *w, uint32_t expect, uint64_t deadline_ns);
void rt_os_wake32_one(_Atomic uint32_t *w);
void rt_os_wake32_all(_Atomic uint32_t *w);

/* ------------------------------------------- the process-wide barrier */

/* Registers the process for rt_os_barrier; false where the system cannot
 * provide it (then callers use fences instead). Idempotent. */
bool rt_os_barrier_init(void);
/* Makes every thread of the process that is running now execute a full
 * memory barrier (membarrier PRIVATE_EXPEDITED, FlushProcessWriteBuffers);
 * a thread that is not running has passed one in its context switch. Only
 * after rt_os_barrier_init returned true. */
void rt_os_barrier(void);

/* ------------------------------------------------------------- memory */

size_t rt_os_page_size(void);
/* What the Win64 thread block must say while a fiber stack made by
 * rt_os_stack_map runs: StackLimit (the lowest committed byte of the part
 * holding the top), DeallocationStack (the reservation's base) and the
 * thread's guaranteed stack bytes (the overflow reserve the system hands
 * out when the stack overflows). Elsewhere: lo, lo and 0 (unused). */
typedef struct rt_os_stack_tib {
    uint64_t limit, dealloc;
    uint32_t guarantee;
} rt_os_stack_tib;
void rt_os_stack_tib_of(void *lo, size_t size, rt_os_stack_tib *out);
/* The guard a fiber stack needs below its usable part (a multiple of the
 * page size): one page on Linux; on Windows also the reserve in which the
 * system raises and handles a stack overflow (os_win32.c). */
size_t rt_os_stack_guard_size(void);
/* Maps len bytes (a multiple of the page size) for a stack that grows
 * down, readable and writable, with the lowest `guard` bytes inaccessible
 * so an overflow faults there. Address space only until touched where the
 * system allows. NULL on failure. */
void *rt_os_stack_map(size_t len, size_t guard);
void rt_os_stack_unmap(void *base, size_t len);
/* size bytes aligned to align (a power of two), or NULL; freed only with
 * rt_os_free_aligned (Windows' C library keeps such blocks apart). */
void *rt_os_alloc_aligned(size_t align, size_t size);
void rt_os_free_aligned(void *p);
/* Asks the system to back [p, p + len) (from rt_os_alloc_aligned, not yet
 * touched) with large pages where it can (Linux: transparent huge pages
 * when they are enabled or madvise'd; elsewhere nothing): memory cycled
 * through frame after frame then costs few TLB entries. A hint: nothing
 * changes if the system declines. */
void rt_os_hint_large_pages(void *p, size_t len);
/* Tests' seam for out of memory: while refused (rt_os_alloc_refuse(true)),
 * rt_os_alloc_aligned returns NULL as an exhausted system would (the
 * runtime's task slabs, deques and runtimes all come from it). */
void rt_os_alloc_refuse(bool refuse);
bool rt_os_alloc_refused(void);

/* --------------------------------------------------------------- CPUs */

/* The CPUs the calling thread may use (at least 1): on Linux the CPUs
 * in its affinity mask (taskset, a cpuset cgroup), bounded by the cgroup
 * v2 CPU quota of the process's cgroup and its ancestors (cpu.max: quota /
 * period rounded down, at least 1; DAGRT_SYSFS_ROOT, for tests, stands in
 * for "/" when reading /proc/self/cgroup and /sys/fs/cgroup, and its
 * proc/self/status "Cpus_allowed_list:" line, where there is one, for
 * the mask); on Windows the CPUs of the process's affinity mask, in every
 * processor group when nobody narrowed it, bounded by its job object's
 * CPU rate cap (a hard CpuRate or a MaxRate, in whole CPUs of the
 * machine: rt_os_rate_cpus). DAGRT_WORKERS_AUTO's count. */
int rt_os_cpu_count(void);
/* The CPU the calling thread runs on now, or -1 where that is unknown. */
int rt_os_cpu_current(void);

/* A set of CPUs, plain bits (no system type). */
#define RT_OS_CPUSET_BITS 1024
typedef struct rt_os_cpuset {
    uint64_t bits[RT_OS_CPUSET_BITS / 64];
} rt_os_cpuset;

static inline bool rt_os_cpuset_has(const rt_os_cpuset *s, int cpu)
{
    return cpu >= 0 && cpu < RT_OS_CPUSET_BITS && ((s->bits[cpu / 64] >> (cpu % 64)) & 1u);
}
static inline void rt_os_cpuset_add(rt_os_cpuset *s, int cpu)
{
    if (cpu >= 0 && cpu < RT_OS_CPUSET_BITS)
        s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}
static inline void rt_os_cpuset_del(rt_os_cpuset *s, int cpu)
{
    if (cpu >= 0 && cpu < RT_OS_CPUSET_BITS)
        s->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}
static inline int rt_os_cpuset_count(const rt_os_cpuset *s)
{
    int n = 0;
    for (int i = 0; i < RT_OS_CPUSET_BITS / 64; i++)
        for (uint64_t b = s->bits[i]; b; b &= b - 1)
            n++;
    return n;
}
static inline bool rt_os_cpuset_equal(const rt_os_cpuset *a, const rt_os_cpuset *b)
{
    for (int i = 0; i < RT_OS_CPUSET_BITS / 64; i++)
        if (a->bits[i] != b->bits[i])
            return false;
    return true;
}

/* The topology of the CPUs the process may use (dagrt_get_topology). One
 * record per CPU, sorted by number: its number (Windows: group * 64 +
 * number in the group), its core (the lowest number of the CPUs that
 * share that core: SMT siblings have the same), its class and group.
 * rank orders the classes as the system does (Linux: the hybrid PMU's
 * list, cpu_core 1 and cpu_atom 0, else cpu_capacity; Windows:
 * EfficiencyClass): the highest rank is the performance class, every
 * lower one efficiency; one rank everywhere: all performance. */
enum { RT_OS_CLASS_PERF = 0, RT_OS_CLASS_EFF = 1 };
typedef struct rt_os_cpu_info {
    int cpu, core, klass, group, rank;
} rt_os_cpu_info;
/* Fills out[0, n) (n of RT_OS_CPUSET_BITS holds any machine's) and
 * returns how many CPUs the process may use (at least 1), or -1 when
 * the system says nothing (then out holds nothing). *quota: the CPU
 * quota in whole CPUs, 0 when none (Linux: the cgroup v2 quota; Windows:
 * the job object's CPU rate cap, rt_os_rate_cpus). Linux
 * reads sysfs (DAGRT_SYSFS_ROOT, for tests, stands in for "/": a fake
 * tree's proc/self/status "Cpus_allowed_list:" line then replaces the
 * affinity mask). Not for a frame's path (Windows allocates the
 * system's answer). */
int rt_os_topology(rt_os_cpu_info *out, int n, int *quota);
/* Whole CPUs a CPU rate allows: rate in 1/10,000 of the time of all
 * ncpus CPUs of the machine (a Windows job object's hard cap or maximum
 * rate), rounded down, at least 1; 0 when it caps nothing (no rate, or the
 * whole machine). os/topo.c. */
int rt_os_rate_cpus(uint32_t rate, int ncpus);
/* The portable end of both systems' rt_os_topology (os/topo.c): sorts
 * recs[0, n) by number and sets each class from the ranks. */
void rt_os_topology_finish(rt_os_cpu_info *recs, int n);

/* A thread's allowed CPUs (t NULL: the calling thread). 0 or -1. */
int rt_os_affinity_get(const rt_os_thread *t, rt_os_cpuset *s);
int rt_os_affinity_set(const rt_os_thread *t, const rt_os_cpuset *s);
/* The CPUs the process may run on (what a thread nobody pinned has). */
int rt_os_affinity_process(rt_os_cpuset *s);

/* -------------------------------------------------------- clock, env */

/* A monotonic clock in nanoseconds. */
uint64_t rt_os_now_ns(void);
/* Whether x86's time-stamp counter runs at a constant rate (CPUID
 * 0x80000007 EDX bit 8, invariant TSC), so the trace may stamp events
 * with it; false on other CPUs. */
bool rt_os_counter_invariant(void);
/* The environment variable, or NULL. */
const char *rt_os_getenv(const char *name);
/* The calling thread's run delay so far, ns: the time it was ready to run
 * but waited for a CPU (Linux: the second figure of
 * /proc/thread-self/schedstat), or -1 where the system does not say
 * (Windows). Allocates nothing: callable in a frame. */
int64_t rt_os_thread_run_delay_ns(void);

/* The process id. */
long rt_os_pid(void);

/* ------------------------------------------------------------- files */

/* The file writer's calls (all-or-nothing files through a temporary,
 * symlinks followed) are os/file.h, included above: dagc compiles them
 * too. */

/* The system's text for err into buf (cut to fit; "" when n is 0). */
void rt_os_strerror(int err, char *buf, size_t n);

/* ------------------------------------------------- the fault handler */

/* Called on the faulting thread, on an alternate stack, from the fault
 * handler, with the faulting address: returns true when it recognised the
 * fault (and reported it, with rt_os_write_err only: nothing else is safe
 * there). Either way the fault is then handed on to the handler that was
 * installed before (or the system's default action, which ends the
 * process). */
typedef bool (*rt_os_fault_fn)(void *addr);

/* Installs fn as the process's memory-fault handler in front of the one
 * installed now. Counted: every install needs its uninstall; the first
 * installs, the last restores the previous handler. 0 or -1. */
int rt_os_fault_install(rt_os_fault_fn fn);
void rt_os_fault_uninstall(void);

/* The calling thread's alternate stack, so the handler can run when the
 * fault is a stack overflow. A thread that has one already (its own, a
 * sanitizer's) keeps it. */
typedef struct rt_os_altstack {
    void *mem;
    size_t len;
} rt_os_altstack;
int rt_os_altstack_enter(rt_os_altstack *a);
void rt_os_altstack_leave(rt_os_altstack *a);

/* Writes to standard error without locks or allocation (safe in the fault
 * handler). */
void rt_os_write_err(const char *s);

#endif
