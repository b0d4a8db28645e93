/*
 * os/os_linux.c - the system layer (os.h) on Linux: pthreads, futex,
 * membarrier, mmap, sigaltstack + sigaction (the CPUs and affinity are
 * cpu_linux.c, the trace file's calls file_linux.c).
 * Also serves other POSIX systems where a Linux call has a fallback
 * (marked at each #if).
 */
#define _GNU_SOURCE
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(rt_os_mutex), "rt_os_mutex too small");
_Static_assert(sizeof(pthread_cond_t) <= sizeof(rt_os_cond), "rt_os_cond too small");
_Static_assert(sizeof(pthread_t) <= sizeof(uintptr_t), "pthread_t does not fit a handle word");

#define MU(m) ((pthread_mutex_t *)(void *)(m)->opaque_)
#define CV(c) ((pthread_cond_t *)(void *)(c)->opaque_)

/* ------------------------------------------------------------- threads */

typedef struct start_arg {
    rt_os_thread_fn fn;
    void *arg;
} start_arg;

static void *thread_entry(void *p)
{
    start_arg a = *(start_arg *)p;
    free(p);
    a.fn(a.arg);
    return NULL;
}

static _Atomic uint64_t thread_starts;

uint64_t rt_os_thread_starts(void)
{
    /* relaxed: a count for tests, no order. */
    return atomic_load_explicit(&thread_starts, memory_order_relaxed);
}

int rt_os_thread_start(rt_os_thread *t, rt_os_thread_fn fn, void *arg)
{
    /* relaxed: a count (above). */
    atomic_fetch_add_explicit(&thread_starts, 1, memory_order_relaxed);
    start_arg *a = malloc(sizeof *a);
    if (!a)
        return -1;
    a->fn = fn;
    a->arg = arg;
    pthread_t th;
    if (pthread_create(&th, NULL, thread_entry, a) != 0) {
        free(a);
        return -1;
    }
    t->h = (uintptr_t)th;
    return 0;
}

void rt_os_thread_join(rt_os_thread *t)
{
    pthread_join((pthread_t)t->h, NULL);
}

rt_os_thread rt_os_thread_self(void)
{
    return (rt_os_thread){(uintptr_t)pthread_self()};
}

void rt_os_thread_name(const char *name)
{
#if defined(__linux__)
    char n[16];
    strncpy(n, name, sizeof n - 1);
    n[sizeof n - 1] = 0;
    (void)pthread_setname_np(pthread_self(), n);
#else
    (void)name;
#endif
}

int rt_os_exit_key_make(rt_os_exit_key *key, void (*at_exit)(void *value))
{
    pthread_key_t k;
    if (pthread_key_create(&k, at_exit) != 0)
        return -1;
    key->k = (uintptr_t)k;
    return 0;
}

void rt_os_exit_key_set(const rt_os_exit_key *key, void *value)
{
    (void)pthread_setspecific((pthread_key_t)key->k, value);
}

bool rt_os_thread_stack(char **lo, char **hi)
{
#if defined(__linux__)
    pthread_attr_t a;
    void *base;
    size_t sz;
    bool ok = false;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &base, &sz) == 0) {
            *lo = base;
            *hi = (char *)base + sz;
            ok = true;
        }
        pthread_attr_destroy(&a);
    }
    return ok;
#else
    (void)lo;
    (void)hi;
    return false;
#endif
}

void rt_os_yield(void)
{
    sched_yield();
}

void rt_os_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* --------------------------------------------------------------- locks */

/* The runtime holds its locks for a few dozen instructions (an I/O
 * shard's lists, a ring's queue), and two threads often meet on one: a
 * fiber's call ends on the thread that resumed it, on the shard it began
 * on. A plain glibc mutex then sleeps in the kernel at once, and its
 * holder pays a futex wake on unlock; glibc's adaptive kind spins a
 * bounded while first, as Windows' SRW lock does (os_win32.c). */
int rt_os_mutex_init(rt_os_mutex *m)
{
#if defined(__GLIBC__)
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0)
        return -1;
    int e = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    if (e == 0)
        e = pthread_mutex_init(MU(m), &a);
    pthread_mutexattr_destroy(&a);
    return e == 0 ? 0 : -1;
#else
    return pthread_mutex_init(MU(m), NULL) == 0 ? 0 : -1;
#endif
}
void rt_os_mutex_fini(rt_os_mutex *m) { pthread_mutex_destroy(MU(m)); }
void rt_os_mutex_lock(rt_os_mutex *m) { pthread_mutex_lock(MU(m)); }
void rt_os_mutex_unlock(rt_os_mutex *m) { pthread_mutex_unlock(MU(m)); }

int rt_os_cond_init(rt_os_cond *c) { return pthread_cond_init(CV(c), NULL) == 0 ? 0 : -1; }
void rt_os_cond_fini(rt_os_cond *c) { pthread_cond_destroy(CV(c)); }
void rt_os_cond_wait(rt_os_cond *c, rt_os_mutex *m) { pthread_cond_wait(CV(c), MU(m)); }
void rt_os_cond_signal(rt_os_cond *c) { pthread_cond_signal(CV(c)); }
void rt_os_cond_broadcast(rt_os_cond *c) { pthread_cond_broadcast(CV(c)); }

/* rt_os_once_run is portable: os_once.c. */

/* ------------------------------------------- waiting on a 32-bit word */

#if defined(__linux__)
void rt_os_wait32(_Atomic uint32_t *w, uint32_t expect)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

void rt_os_wait32_until(_Atomic uint32_t *w, uint32_t expect, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX) {
        rt_os_wait32(w, expect);
        return;
    }
    uint64_t now = rt_os_now_ns();
    if (now >= deadline_ns)
        return;
    /* FUTEX_WAIT's timeout is relative (on CLOCK_MONOTONIC, rt_os_now_ns's clock). */
    uint64_t d = deadline_ns - now;
    struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, expect, &ts, NULL, 0);
}

void rt_os_wake32_one(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void rt_os_wake32_all(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}
#else
/* Other POSIX systems: one lock and condition variable for every word; a
 * wake broadcasts (waiters re-check their own word and sleep again). */
static pthread_mutex_t w32_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w32_cv = PTHREAD_COND_INITIALIZER;

void rt_os_wait32(_Atomic uint32_t *w, uint32_t expect)
{
    pthread_mutex_lock(&w32_mu);
    /* relaxed: the mutex orders this read against the waker's. */
    if (atomic_load_explicit(w, memory_order_relaxed) == expect)
        pthread_cond_wait(&w32_cv, &w32_mu);
    pthread_mutex_unlock(&w32_mu);
}

void rt_os_wait32_until(_Atomic uint32_t *w, uint32_t expect, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX) {
        rt_os_wait32(w, expect);
        return;
    }
    /* pthread_cond_timedwait's clock is CLOCK_REALTIME by default: convert
     * the remaining time onto it. */
    uint64_t now = rt_os_now_ns();
    if (now >= deadline_ns)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (deadline_ns - now);
    ts.tv_sec = (time_t)(at / 1000000000u);
    ts.tv_nsec = (long)(at % 1000000000u);
    pthread_mutex_lock(&w32_mu);
    /* relaxed: the mutex orders this read against the waker's. */
    if (atomic_load_explicit(w, memory_order_relaxed) == expect)
        pthread_cond_timedwait(&w32_cv, &w32_mu, &ts);
    pthread_mutex_unlock(&w32_mu);
}

void rt_os_wake32_one(_Atomic uint32_t *w)
{
    (void)w;
    pthread_mutex_lock(&w32_mu);   /* closes the window before the waiter sleeps */
    pthread_cond_broadcast(&w32_cv);
    pthread_mutex_unlock(&w32_mu);
}

void rt_os_wake32_all(_Atomic uint32_t *w) { rt_os_wake32_one(w); }
#endif

/* ------------------------------------------- the process-wide barrier */

bool rt_os_barrier_init(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

void rt_os_barrier(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}

/* ------------------------------------------------------------- memory */

size_t rt_os_page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

void rt_os_stack_tib_of(void *lo, size_t size, rt_os_stack_tib *out)
{
    (void)size;   /* no thread block to keep in step here */
    out->limit = out->dealloc = (uint64_t)(uintptr_t)lo;
    out->guarantee = 0;
}

size_t rt_os_stack_guard_size(void)
{
    return rt_os_page_size();
}

void *rt_os_stack_map(size_t len, size_t guard)
{
    /* MAP_NORESERVE: a stack costs address space, not memory, until used. */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (guard && mprotect(m, guard, PROT_NONE) != 0) {
        munmap(m, len);
        return NULL;
    }
    return m;
}

void rt_os_stack_unmap(void *base, size_t len)
{
    munmap(base, len);
}

void *rt_os_alloc_aligned(size_t align, size_t size)
{
    if (rt_os_alloc_refused())   /* tests: out of memory */
        return NULL;
    /* aligned_alloc wants a multiple of the alignment. */
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

void rt_os_free_aligned(void *p)
{
    free(p);
}

void rt_os_hint_large_pages(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    /* Fails harmlessly (EINVAL) where transparent huge pages are compiled
     * out; "never" in /sys/kernel/mm/transparent_hugepage ignores it. */
    (void)madvise(p, len, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

/* -------------------------------------------------------- clock, env */

uint64_t rt_os_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* rt_os_counter_invariant and rt_os_getenv are portable: os_once.c. */

int64_t rt_os_thread_run_delay_ns(void)
{
    /* open and read, not stdio: nothing is allocated. */
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[96];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *p = buf;
    while (*p >= '0' && *p <= '9')
        p++;   /* the time on a CPU */
    if (*p != ' ')
        return -1;
    p++;
    if (*p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (*p - '0');
    return v;
}

long rt_os_pid(void)
{
    return (long)getpid();
}

/* -------------------------------------------------------------- errors */

void rt_os_strerror(int err, char *buf, size_t n)
{
    if (n == 0)
        return;
#if defined(__GLIBC__)
    /* GNU strerror_r (_GNU_SOURCE): may return a static string instead. */
    const char *s = strerror_r(err, buf, n);
#else
    /* POSIX strerror_r (musl, the BSDs): fills buf or fails. */
    const char *s = strerror_r(err, buf, n) == 0 ? buf : "unknown system error";
#endif
    if (s != buf) {
        size_t l = strlen(s);
        if (l >= n)
            l = n - 1;
        memcpy(buf, s, l);
        buf[l] = '\0';
    }
}

/* ------------------------------------------------- the fault handler */

static pthread_mutex_t fault_mu = PTHREAD_MUTEX_INITIALIZER;
static int fault_users;                /* under fault_mu */
static _Atomic(rt_os_fault_fn) fault_fn;
static struct sigaction prev_segv, prev_bus;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    /* relaxed: installed before the handler was; a fault racing the last
     * uninstall finds NULL and hands on. */
    rt_os_fault_fn fn = atomic_load_explicit(&fault_fn, memory_order_relaxed);
    if (fn)
        (void)fn(si->si_addr);
    struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction) {
            prev->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
        return;
    }
    /* The previous action is the default: restore it and return; the
     * faulting instruction runs again and the system ends the process
     * with the original signal (a core dump included). */
    sigaction(sig, prev, NULL);
}

int rt_os_fault_install(rt_os_fault_fn fn)
{
    int r = 0;
    pthread_mutex_lock(&fault_mu);
    if (fault_users == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        /* relaxed: the sigaction call below orders it for the handler. */
        atomic_store_explicit(&fault_fn, fn, memory_order_relaxed);
        if (sigaction(SIGSEGV, &sa, &prev_segv) != 0)
            r = -1;
        else if (sigaction(SIGBUS, &sa, &prev_bus) != 0) {
            sigaction(SIGSEGV, &prev_segv, NULL);
            r = -1;
        }
    }
    if (r == 0)
        fault_users++;
    pthread_mutex_unlock(&fault_mu);
    return r;
}

void rt_os_fault_uninstall(void)
{
    pthread_mutex_lock(&fault_mu);
    if (fault_users > 0 && --fault_users == 0) {
        struct sigaction cur;
        /* Only if ours is still the handler: someone who installed theirs
         * after us chains to us and keeps that. */
        if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_fault)
            sigaction(SIGSEGV, &prev_segv, NULL);
        if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_fault)
            sigaction(SIGBUS, &prev_bus, NULL);
    }
    pthread_mutex_unlock(&fault_mu);
}

int rt_os_altstack_enter(rt_os_altstack *a)
{
    a->mem = NULL;
    a->len = 0;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return 0;   /* the thread has one: keep it */
    size_t len = 64 * 1024;
    if (len < (size_t)SIGSTKSZ)
        len = (size_t)SIGSTKSZ;
    void *m = rt_os_stack_map(len, 0);
    if (!m)
        return -1;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = m;
    ss.ss_size = len;
    if (sigaltstack(&ss, NULL) != 0) {
        rt_os_stack_unmap(m, len);
        return -1;
    }
    a->mem = m;
    a->len = len;
    return 0;
}

void rt_os_altstack_leave(rt_os_altstack *a)
{
    if (!a->mem)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
    rt_os_stack_unmap(a->mem, a->len);
    a->mem = NULL;
}

void rt_os_write_err(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}
