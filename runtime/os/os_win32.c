/*
 * os/os_win32.c - the system layer (os.h) on Windows (x64; built with
 * MinGW-w64, written for MSVC too): Win32 threads and SRW locks,
 * WaitOnAddress, FlushProcessWriteBuffers, VirtualAlloc stacks that grow
 * through a guard page (processor numbers, groups and affinity:
 * cpu_win32.c),
 * QueryPerformanceCounter and a vectored exception handler (the trace
 * file's wide-character calls are file_win32.c).
 *
 * Threads are Win32's own (_beginthreadex), not winpthreads: the lock and
 * condition types are the system's SRWLOCK and CONDITION_VARIABLE (one
 * word each, no allocation, no DLL to ship), and the same file builds with
 * MSVC. docs/windows.md lists what differs from Linux.
 */
#ifndef _WIN32_WINNT
#  define _WIN32_WINNT 0x0A00   /* Windows 10: WaitOnAddress, thread descriptions */
#endif
#define WIN32_LEAN_AND_MEAN
#include "os.h"

#include <fcntl.h>
#include <io.h>
#include <process.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

_Static_assert(sizeof(SRWLOCK) <= sizeof(rt_os_mutex), "rt_os_mutex too small");
_Static_assert(sizeof(CONDITION_VARIABLE) <= sizeof(rt_os_cond), "rt_os_cond too small");
_Static_assert(sizeof(HANDLE) <= sizeof(uintptr_t), "HANDLE does not fit a handle word");

#define MU(m) ((SRWLOCK *)(void *)(m)->opaque_)
#define CV(c) ((CONDITION_VARIABLE *)(void *)(c)->opaque_)

/* ------------------------------------------------------------- threads */

typedef struct start_arg {
    rt_os_thread_fn fn;
    void *arg;
} start_arg;

static unsigned __stdcall thread_entry(void *p)
{
    start_arg a = *(start_arg *)p;
    free(p);
    a.fn(a.arg);
    return 0;
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
    /* _beginthreadex rather than CreateThread: the C runtime sets up its
     * per-thread state (errno, strtok, ...) for the new thread. */
    uintptr_t h = _beginthreadex(NULL, 0, thread_entry, a, 0, NULL);
    if (h == 0) {
        free(a);
        return -1;
    }
    t->h = h;
    return 0;
}

void rt_os_thread_join(rt_os_thread *t)
{
    WaitForSingleObject((HANDLE)t->h, INFINITE);
    CloseHandle((HANDLE)t->h);
    t->h = 0;
}

rt_os_thread rt_os_thread_self(void)
{
    return (rt_os_thread){(uintptr_t)GetCurrentThread()};
}

typedef HRESULT(WINAPI *set_desc_fn)(HANDLE, PCWSTR);

void rt_os_thread_name(const char *name)
{
    /* SetThreadDescription exists from Windows 10 1607: looked up, so the
     * library still loads on older systems (where names are skipped). */
    HMODULE k = GetModuleHandleW(L"kernel32.dll");
    FARPROC p = k ? GetProcAddress(k, "SetThreadDescription") : NULL;
    if (!p)
        return;
    set_desc_fn set;
    memcpy(&set, &p, sizeof set);
    wchar_t w[64];
    if (MultiByteToWideChar(CP_UTF8, 0, name, -1, w, 64) > 0)
        (void)set(GetCurrentThread(), w);
}

/* FLS callbacks get only the value: one trampoline per key, each calling
 * the function its key was made with. */
#define RT_EXIT_KEYS 4
static void (*exit_fns[RT_EXIT_KEYS])(void *);
static volatile LONG exit_keys;
static void WINAPI exit_cb0(PVOID v) { if (v) exit_fns[0](v); }
static void WINAPI exit_cb1(PVOID v) { if (v) exit_fns[1](v); }
static void WINAPI exit_cb2(PVOID v) { if (v) exit_fns[2](v); }
static void WINAPI exit_cb3(PVOID v) { if (v) exit_fns[3](v); }
static PFLS_CALLBACK_FUNCTION const exit_cbs[RT_EXIT_KEYS] = { exit_cb0, exit_cb1, exit_cb2, exit_cb3 };

int rt_os_exit_key_make(rt_os_exit_key *key, void (*at_exit)(void *value))
{
    LONG i = InterlockedIncrement(&exit_keys) - 1;
    if (i >= RT_EXIT_KEYS)
        return -1;
    exit_fns[i] = at_exit;   /* before FlsAlloc: no callback can come sooner */
    DWORD k = FlsAlloc(exit_cbs[i]);
    if (k == FLS_OUT_OF_INDEXES)
        return -1;
    key->k = (uintptr_t)k;
    return 0;
}

void rt_os_exit_key_set(const rt_os_exit_key *key, void *value)
{
    (void)FlsSetValue((DWORD)key->k, value);
}

bool rt_os_thread_stack(char **lo, char **hi)
{
    /* The reservation of the stack the thread runs on now: on a fiber,
     * that fiber's (the switch keeps the TIB in step with the stack). */
    ULONG_PTR l = 0, h = 0;
    GetCurrentThreadStackLimits(&l, &h);
    if (!l || !h)
        return false;
    *lo = (char *)l;
    *hi = (char *)h;
    return true;
}

void rt_os_yield(void)
{
    SwitchToThread();
}

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#  define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif

void rt_os_sleep_ns(uint64_t ns)
{
    /* Sleep() counts whole timer ticks (1 to 15.6 ms); the runtime's waits
     * are tens of microseconds, so a waitable timer, high-resolution where
     * the system has it (Windows 10 1803). */
    HANDLE t = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                      TIMER_ALL_ACCESS);
    if (!t)
        t = CreateWaitableTimerExW(NULL, NULL, 0, TIMER_ALL_ACCESS);
    LARGE_INTEGER due;
    due.QuadPart = -(LONGLONG)((ns + 99) / 100);   /* relative, 100 ns units */
    if (due.QuadPart == 0)
        due.QuadPart = -1;
    if (t && SetWaitableTimer(t, &due, 0, NULL, NULL, FALSE))
        WaitForSingleObject(t, INFINITE);
    else
        Sleep((DWORD)((ns + 999999) / 1000000));
    if (t)
        CloseHandle(t);
}

/* --------------------------------------------------------------- locks */

int rt_os_mutex_init(rt_os_mutex *m) { InitializeSRWLock(MU(m)); return 0; }
void rt_os_mutex_fini(rt_os_mutex *m) { (void)m; /* SRW locks hold nothing */ }
void rt_os_mutex_lock(rt_os_mutex *m) { AcquireSRWLockExclusive(MU(m)); }
void rt_os_mutex_unlock(rt_os_mutex *m) { ReleaseSRWLockExclusive(MU(m)); }

int rt_os_cond_init(rt_os_cond *c) { InitializeConditionVariable(CV(c)); return 0; }
void rt_os_cond_fini(rt_os_cond *c) { (void)c; }
void rt_os_cond_wait(rt_os_cond *c, rt_os_mutex *m)
{
    SleepConditionVariableSRW(CV(c), MU(m), INFINITE, 0);
}
void rt_os_cond_signal(rt_os_cond *c) { WakeConditionVariable(CV(c)); }
void rt_os_cond_broadcast(rt_os_cond *c) { WakeAllConditionVariable(CV(c)); }

/* rt_os_once_run is portable: os_once.c. */

/* ------------------------------------------- waiting on a 32-bit word */

void rt_os_wait32(_Atomic uint32_t *w, uint32_t expect)
{
    /* WaitOnAddress compares and sleeps atomically against the Wake calls,
     * like FUTEX_WAIT; it may return spuriously, which callers allow. */
    WaitOnAddress((volatile void *)w, &expect, sizeof expect, INFINITE);
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
    /* Milliseconds, rounded up so the wait never ends before the deadline
     * (callers re-check the clock and wait again if it returns early). */
    uint64_t ms = (deadline_ns - now + 999999u) / 1000000u;
    WaitOnAddress((volatile void *)w, &expect, sizeof expect,
                  ms >= INFINITE ? INFINITE - 1 : (DWORD)ms);
}

void rt_os_wake32_one(_Atomic uint32_t *w) { WakeByAddressSingle((void *)w); }
void rt_os_wake32_all(_Atomic uint32_t *w) { WakeByAddressAll((void *)w); }

/* ------------------------------------------- the process-wide barrier */

bool rt_os_barrier_init(void)
{
    /* FlushProcessWriteBuffers makes every processor running a thread of
     * the process serialise (an IPI). Wine (up to 8.x at least) implements
     * it as an empty stub, which would silently break the asymmetric fence
     * protocol: under Wine the runtime uses the fenced form instead. */
    HMODULE nt = GetModuleHandleW(L"ntdll.dll");
    if (nt && GetProcAddress(nt, "wine_get_version"))
        return false;
    return true;
}

void rt_os_barrier(void)
{
    FlushProcessWriteBuffers();
}

/* ------------------------------------------------------------- memory */

size_t rt_os_page_size(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwPageSize ? (size_t)si.dwPageSize : 4096;
}

void rt_os_stack_tib_of(void *lo, size_t size, rt_os_stack_tib *out)
{
    uintptr_t hi = (uintptr_t)lo + size;
    MEMORY_BASIC_INFORMATION mi;
    out->limit = out->dealloc = (uint64_t)(uintptr_t)lo;
    if (VirtualQuery((void *)(hi - 1), &mi, sizeof mi) == sizeof mi) {
        out->dealloc = (uint64_t)(uintptr_t)mi.AllocationBase;
        if (mi.State == MEM_COMMIT)
            out->limit = (uint64_t)(uintptr_t)mi.BaseAddress;
    }
    /* The stack's own overflow reserve: its guard region but the bottom
     * page and the last guard page (rt_os_stack_map). */
    uint64_t below = (uint64_t)(uintptr_t)lo - out->dealloc, pg = rt_os_page_size();
    out->guarantee = below >= 4 * pg ? (uint32_t)(below - 2 * pg) : 0;
}

/* The stack a thread keeps for handling its own stack overflow: Windows
 * raises STATUS_STACK_OVERFLOW when the guard page would move into the
 * last GuaranteedStackBytes (at least two pages) above the bottom page,
 * then runs every handler there, the vectored ones and the unhandled-
 * exception path included; two pages are not enough for the latter (under
 * Wine it overflows again and the process hangs). rt_os_altstack_enter
 * raises the calling thread's guarantee to this, and fiber stacks have
 * room for it in their guard (rt_os_stack_guard_size). */
#define STACK_RESERVE ((ULONG)32 * 1024)

size_t rt_os_stack_guard_size(void)
{
    /* The lowest page stays reserved (the hard stop); above it the reserve
     * in which the overflow is handled; above that the last guard page. */
    size_t pg = rt_os_page_size();
    return pg + ((STACK_RESERVE + pg - 1) & ~(pg - 1)) + pg;
}

/* How much of a new stack is committed up front; the rest is committed by
 * the system one page at a time as the stack grows through its guard page,
 * as for a thread's stack (the TIB bounds the context switch keeps make
 * that work on fibers). */
#define STACK_COMMIT_PAGES 1

void *rt_os_stack_map(size_t len, size_t guard)
{
    size_t pg = rt_os_page_size();
    if (len < guard + (STACK_COMMIT_PAGES + 1) * pg)
        return NULL;
    char *m = VirtualAlloc(NULL, len, MEM_RESERVE, PAGE_READWRITE);
    if (!m)
        return NULL;
    char *top = m + len - STACK_COMMIT_PAGES * pg;
    if (!VirtualAlloc(top, STACK_COMMIT_PAGES * pg, MEM_COMMIT, PAGE_READWRITE) ||
        /* guard 0 (an alternate stack): all of it committed, no guard */
        (guard == 0 && !VirtualAlloc(m, len, MEM_COMMIT, PAGE_READWRITE)) ||
        (guard != 0 && !VirtualAlloc(top - pg, pg, MEM_COMMIT, PAGE_READWRITE | PAGE_GUARD))) {
        VirtualFree(m, 0, MEM_RELEASE);
        return NULL;
    }
    return m;
}

void rt_os_stack_unmap(void *base, size_t len)
{
    (void)len;   /* MEM_RELEASE frees the whole reservation */
    VirtualFree(base, 0, MEM_RELEASE);
}

void *rt_os_alloc_aligned(size_t align, size_t size)
{
    if (rt_os_alloc_refused())   /* tests: out of memory */
        return NULL;
    return _aligned_malloc(size, align);   /* no aligned_alloc in the CRT */
}

void rt_os_free_aligned(void *p)
{
    _aligned_free(p);
}

void rt_os_hint_large_pages(void *p, size_t len)
{
    /* Large pages on Windows need SeLockMemoryPrivilege and VirtualAlloc
     * with MEM_LARGE_PAGES up front: not for memory from the C library. */
    (void)p;
    (void)len;
}

/* -------------------------------------------------------- clock, env */

static LARGE_INTEGER qpc_freq;
static rt_os_once qpc_once;

static void qpc_init(void)
{
    QueryPerformanceFrequency(&qpc_freq);
}

uint64_t rt_os_now_ns(void)
{
    rt_os_once_run(&qpc_once, qpc_init);
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    uint64_t f = (uint64_t)qpc_freq.QuadPart, v = (uint64_t)t.QuadPart;
    /* Whole seconds and the remainder apart: v * 1e9 would overflow after
     * about 30 minutes of uptime at a 10 MHz counter. */
    return v / f * 1000000000u + v % f * 1000000000u / f;
}

/* rt_os_counter_invariant and rt_os_getenv are portable: os_once.c. */

int64_t rt_os_thread_run_delay_ns(void)
{
    /* Windows keeps no per-thread ready-but-waiting time: the process is
     * never crowded there (exec/crowd.c). */
    return -1;
}

long rt_os_pid(void)
{
    return (long)GetCurrentProcessId();
}

/* -------------------------------------------------------------- errors */

void rt_os_strerror(int err, char *buf, size_t n)
{
    if (n == 0)
        return;
    wchar_t w[512];
    DWORD l = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                             (DWORD)err, 0, w, 512, NULL);
    while (l > 0 && (w[l - 1] == L'\n' || w[l - 1] == L'\r' || w[l - 1] == L'.'))
        w[--l] = 0;
    buf[0] = '\0';
    if (l == 0 || WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, (int)(n < 0x7fffffff ? n : 0x7fffffff),
                                      NULL, NULL) == 0) {
        /* Too long for buf, or no text: the number then. */
        char num[32];
        int k = 0;
        for (unsigned v = (unsigned)err; v || k == 0; v /= 10)
            num[k++] = (char)('0' + v % 10);
        size_t i = 0;
        const char *pre = "system error ";
        for (; *pre && i + 1 < n; pre++)
            buf[i++] = *pre;
        while (k > 0 && i + 1 < n)
            buf[i++] = num[--k];
        buf[i] = '\0';
    }
}

/* ------------------------------------------------- the fault handler */

static SRWLOCK fault_mu = SRWLOCK_INIT;
static int fault_users;                /* under fault_mu */
static void *fault_veh;                /* under fault_mu */
static _Atomic(rt_os_fault_fn) fault_fn;

static LONG CALLBACK on_fault(EXCEPTION_POINTERS *ep)
{
    const EXCEPTION_RECORD *r = ep->ExceptionRecord;
    DWORD code = r->ExceptionCode;
    if (code != EXCEPTION_STACK_OVERFLOW && code != EXCEPTION_ACCESS_VIOLATION &&
        code != EXCEPTION_GUARD_PAGE)
        return EXCEPTION_CONTINUE_SEARCH;
    /* relaxed: installed before the handler was; a fault racing the last
     * uninstall finds NULL and hands on. */
    rt_os_fault_fn fn = atomic_load_explicit(&fault_fn, memory_order_relaxed);
    /* The faulting address is the second parameter of all three codes. */
    if (fn && r->NumberParameters >= 2)
        (void)fn((void *)r->ExceptionInformation[1]);
    /* Handed on: later handlers, then the system's unhandled-exception
     * path, which ends the process with the exception code. */
    return EXCEPTION_CONTINUE_SEARCH;
}

int rt_os_fault_install(rt_os_fault_fn fn)
{
    int r = 0;
    AcquireSRWLockExclusive(&fault_mu);
    if (fault_users == 0) {
        /* relaxed: AddVectoredExceptionHandler orders it for the handler. */
        atomic_store_explicit(&fault_fn, fn, memory_order_relaxed);
        /* First in the chain, in front of every handler installed now. */
        fault_veh = AddVectoredExceptionHandler(1, on_fault);
        if (!fault_veh)
            r = -1;
    }
    if (r == 0)
        fault_users++;
    ReleaseSRWLockExclusive(&fault_mu);
    return r;
}

void rt_os_fault_uninstall(void)
{
    AcquireSRWLockExclusive(&fault_mu);
    if (fault_users > 0 && --fault_users == 0) {
        RemoveVectoredExceptionHandler(fault_veh);
        fault_veh = NULL;
    }
    ReleaseSRWLockExclusive(&fault_mu);
}

/* Windows dispatches an exception on the faulting stack itself: a stack
 * overflow is raised while the reserve at the bottom of the stack is still
 * free, and the handlers run there. So instead of an alternate stack the
 * thread gets a large enough reserve (STACK_RESERVE, on its own stack and,
 * through the fibers' guard size, on theirs). A guarantee only grows; it
 * stays with the thread after leave. */
int rt_os_altstack_enter(rt_os_altstack *a)
{
    a->mem = NULL;
    a->len = 0;
    ULONG want = STACK_RESERVE;
    return SetThreadStackGuarantee(&want) ? 0 : -1;
}

void rt_os_altstack_leave(rt_os_altstack *a)
{
    a->mem = NULL;
}

void rt_os_write_err(const char *s)
{
    HANDLE h = GetStdHandle(STD_ERROR_HANDLE);
    size_t n = strlen(s);
    while (n > 0 && h && h != INVALID_HANDLE_VALUE) {
        DWORD w = 0;
        if (!WriteFile(h, s, n > 65536 ? 65536 : (DWORD)n, &w, NULL) || w == 0)
            return;
        s += w;
        n -= w;
    }
}
