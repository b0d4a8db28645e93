/*
 * win64_scenarios.c - fiber scenarios that only Windows x64 has: the TIB's
 * stack bounds switched with the stack (stack probes and guard-page growth
 * on a fiber), the first frame's shape and unwind info, and the guard-page
 * overflow (the Windows version of fiber_scenarios.c's fork + SIGSEGV one:
 * a child process and a vectored exception handler). Run by the fiber driver (fiber_list.h).
 */
#define WIN32_LEAN_AND_MEAN
#include "fiber_scenarios.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "dagrt.h"
#include "fiber/fiber.h"

typedef struct tib_view {
    uintptr_t base, limit, dealloc, guarantee;
} tib_view;

/* The TEB through gs, as the switch reads it (NtCurrentTeb()'s inline
 * version trips gcc's -Warray-bounds). */
static tib_view tib_now(void)
{
    tib_view v;
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.base) : "i"(DAGRT_TEB_STACK_BASE));
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.limit) : "i"(DAGRT_TEB_STACK_LIMIT));
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.dealloc) : "i"(DAGRT_TEB_DEALLOC));
    uint32_t g;
    __asm__ volatile("movl %%gs:%c1, %0" : "=r"(g) : "i"(DAGRT_TEB_GUARANTEE));
    v.guarantee = g;
    return v;
}

#define BAD(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); s->bad++; } while (0)

/* --------------------------------------------- TIB bounds, deep recursion */

enum { TIB_STACK = 512 * 1024, TIB_FRAME = 24 * 1024, TIB_DEPTH = 16 };

struct tib_scn {
    rt_fiber main, f;
    tib_view at_entry, after_recursion, at_resume;
    uintptr_t frame0, deepest;
    int bad;
};

/* noinline, one 24 KiB frame per level: gcc calls ___chkstk_ms in the
 * prologue, which touches each page top-down so the system commits the
 * stack through its guard page; that works only where the TIB's bounds
 * are this stack's (otherwise the first guard-page hit is an unhandled
 * STATUS_GUARD_PAGE_VIOLATION and the next page is not committed). */
__attribute__((noinline)) static int tib_recurse(struct tib_scn *s, int depth)
{
    volatile char buf[TIB_FRAME];
    buf[0] = (char)depth;
    buf[sizeof buf - 1] = (char)depth;
    if ((uintptr_t)&buf[0] < s->deepest)
        s->deepest = (uintptr_t)&buf[0];
    if (depth == TIB_DEPTH)
        return buf[0];
    return tib_recurse(s, depth + 1) + buf[0] + buf[sizeof buf - 1];
}

static void tib_entry(void *arg)
{
    struct tib_scn *s = arg;
    rt_fiber_started(&s->f);
    s->frame0 = (uintptr_t)__builtin_frame_address(0);
    s->at_entry = tib_now();
    s->deepest = UINTPTR_MAX;
    (void)tib_recurse(s, 0);
    s->after_recursion = tib_now();
    rt_fiber_switch(&s->f, &s->main);
    s->at_resume = tib_now();
    rt_fiber_switch(&s->f, &s->main);
    abort();
}

int fs_win64_tib(void)
{
    struct tib_scn *s = calloc(1, sizeof *s);
    if (!s)
        return 1;
    rt_fiber_init_thread(&s->main);
    if (rt_fiber_create(&s->f, TIB_STACK, tib_entry, s) != 0)
        return 1;
    uintptr_t lo = (uintptr_t)s->f.stack_lo, hi = lo + s->f.stack_len;
    tib_view thread = tib_now();
    rt_fiber_switch(&s->main, &s->f);
    tib_view back = tib_now();
    if (memcmp(&back, &thread, sizeof back) != 0)
        BAD("thread's TIB after switching back: base %#llx limit %#llx dealloc %#llx "
            "guarantee %#llx, want %#llx %#llx %#llx %#llx", (unsigned long long)back.base,
            (unsigned long long)back.limit, (unsigned long long)back.dealloc,
            (unsigned long long)back.guarantee, (unsigned long long)thread.base,
            (unsigned long long)thread.limit, (unsigned long long)thread.dealloc,
            (unsigned long long)thread.guarantee);
    tib_view e = s->at_entry, r = s->after_recursion;
    if (e.base != hi || e.dealloc != (uintptr_t)s->f.map)
        BAD("fiber's TIB: StackBase %#llx DeallocationStack %#llx, want %#llx %#llx",
            (unsigned long long)e.base, (unsigned long long)e.dealloc,
            (unsigned long long)hi, (unsigned long long)(uintptr_t)s->f.map);
    /* Its overflow reserve: the guard but the bottom and the last guard page. */
    uintptr_t want_g = s->f.guard_len - 2 * 4096;
    if (e.guarantee != want_g || thread.guarantee == want_g)
        BAD("fiber's GuaranteedStackBytes %#llx, want %#llx (the thread's: %#llx)",
            (unsigned long long)e.guarantee, (unsigned long long)want_g,
            (unsigned long long)thread.guarantee);
    if (e.limit < lo || e.limit >= hi || e.limit > s->frame0)
        BAD("fiber's StackLimit %#llx outside [%#llx, frame %#llx]",
            (unsigned long long)e.limit, (unsigned long long)lo, (unsigned long long)s->frame0);
    /* The entry function's frame: 16-byte aligned (rbp = rsp at entry - 8)
     * with its return address and the 32-byte shadow space above it on
     * the stack. */
    if ((s->frame0 & 15) != 0 || s->frame0 + 16 + 32 > hi)
        BAD("entry frame at %#llx: misaligned or no shadow space below %#llx",
            (unsigned long long)s->frame0, (unsigned long long)hi);
    /* The recursion grew the committed stack: StackLimit followed it down. */
    if (s->deepest > hi - (size_t)TIB_DEPTH * TIB_FRAME || s->deepest < lo)
        BAD("recursion's deepest frame %#llx not where expected", (unsigned long long)s->deepest);
    if (!(r.limit <= s->deepest && r.limit >= lo && r.limit < e.limit))
        BAD("StackLimit after the recursion %#llx (entry %#llx, deepest frame %#llx)",
            (unsigned long long)r.limit, (unsigned long long)e.limit,
            (unsigned long long)s->deepest);
    /* Switched out and back in: the fiber's own (grown) bounds again. */
    rt_fiber_switch(&s->main, &s->f);
    if (memcmp(&s->at_resume, &r, sizeof r) != 0)
        BAD("fiber's TIB changed across a switch out and back (limit %#llx, was %#llx)",
            (unsigned long long)s->at_resume.limit, (unsigned long long)r.limit);
    int bad = s->bad;
    rt_fiber_destroy(&s->f);
    free(s);
    return bad;
}

/* ------------------------------------------- unwinding out of a fiber */

void rt_arch_entry(void);

struct unw_scn {
    rt_fiber main, f;
    int frames;
    int ended_in_entry;
    int bad;
};

__attribute__((noinline)) static void unw_walk(struct unw_scn *s)
{
    CONTEXT c;
    RtlCaptureContext(&c);
    uintptr_t entry = (uintptr_t)rt_arch_entry;
    uintptr_t last = 0;
    for (s->frames = 0; c.Rip && s->frames < 64; s->frames++) {
        DWORD64 base = 0;
        PRUNTIME_FUNCTION fn = RtlLookupFunctionEntry(c.Rip, &base, NULL);
        last = (uintptr_t)c.Rip;
        if (!fn) {                    /* a leaf: the return address at [rsp] */
            c.Rip = *(DWORD64 *)c.Rsp;
            c.Rsp += 8;
            continue;
        }
        void *hd = NULL;
        DWORD64 est = 0;
        RtlVirtualUnwind(UNW_FLAG_NHANDLER, base, c.Rip, fn, &c, &hd, &est, NULL);
    }
    s->ended_in_entry = last >= entry && last < entry + 64;
}

static void unw_entry(void *arg)
{
    struct unw_scn *s = arg;
    rt_fiber_started(&s->f);
    unw_walk(s);
    rt_fiber_switch(&s->f, &s->main);
    abort();
}

/* A stack walk from inside a fiber (what SEH dispatch and debuggers do)
 * ends in rt_arch_entry, at the zero return address ctx_make left. */
int fs_win64_unwind(void)
{
    struct unw_scn s;
    memset(&s, 0, sizeof s);
    rt_fiber_init_thread(&s.main);
    if (rt_fiber_create(&s.f, 0, unw_entry, &s) != 0)
        return 1;
    rt_fiber_switch(&s.main, &s.f);
    if (!s.ended_in_entry || s.frames < 3 || s.frames >= 64) {
        fprintf(stderr, "unwind: %d frames, %s in rt_arch_entry\n", s.frames,
                s.ended_in_entry ? "ended" : "did not end");
        s.bad++;
    }
    rt_fiber_destroy(&s.f);
    return s.bad;
}

/* ---------------------------------------------------- guard page overflow */

static rt_fiber guard_main, guard_fiber;
static volatile uintptr_t guard_lo, guard_hi;
static volatile int guard_depth_limit = 1 << 21;

static LONG CALLBACK guard_veh(EXCEPTION_POINTERS *ep)
{
    const EXCEPTION_RECORD *r = ep->ExceptionRecord;
    DWORD code = r->ExceptionCode;
    if (code != EXCEPTION_STACK_OVERFLOW && code != EXCEPTION_ACCESS_VIOLATION &&
        code != EXCEPTION_GUARD_PAGE)
        return EXCEPTION_CONTINUE_SEARCH;
    uintptr_t a = r->NumberParameters >= 2 ? (uintptr_t)r->ExceptionInformation[1] : 0;
    int in_guard = a >= guard_lo && a < guard_hi;
    /* 0: a stack overflow inside the guard, as designed; 6: inside the
     * guard but not reported as an overflow; 3: outside the guard. */
    TerminateProcess(GetCurrentProcess(),
                     !in_guard ? 3 : code == EXCEPTION_STACK_OVERFLOW ? 0 : 6);
    return EXCEPTION_CONTINUE_SEARCH;
}

__attribute__((noinline)) static int guard_recurse(int depth)
{
    volatile char buf[512];
    buf[sizeof buf - 1] = (char)depth;
    buf[0] = (char)depth;
    if (depth > guard_depth_limit)   /* never true: 1 GiB of frames */
        return 0;
    return guard_recurse(depth + 1) + buf[0] + buf[sizeof buf - 1];
}

static void guard_entry(void *arg)
{
    (void)arg;
    rt_fiber_started(&guard_fiber);
    guard_recurse(0);
    rt_fiber_switch(&guard_fiber, &guard_main);
}

int fs_guard_child(void)
{
    AddVectoredExceptionHandler(1, guard_veh);
    rt_fiber_init_thread(&guard_main);
    if (rt_fiber_create(&guard_fiber, 32 * 1024, guard_entry, NULL))
        ExitProcess(4);
    guard_lo = (uintptr_t)guard_fiber.map;
    guard_hi = guard_lo + guard_fiber.guard_len;
    rt_fiber_switch(&guard_main, &guard_fiber);
    ExitProcess(5);   /* the recursion returned: no fault at all */
}

/* Runs this program again as `PROGRAM guard_child` and judges its exit code. */
int fs_guard_overflow(void)
{
    char self[MAX_PATH], cmd[MAX_PATH + 32];
    DWORD n = GetModuleFileNameA(NULL, self, sizeof self);
    if (n == 0 || n >= sizeof self)
        return 1;
    snprintf(cmd, sizeof cmd, "\"%s\" guard_child", self);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    fflush(NULL);
    if (!CreateProcessA(self, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
        return 1;
    DWORD code = 1;
    if (WaitForSingleObject(pi.hProcess, 120000) != WAIT_OBJECT_0) {
        TerminateProcess(pi.hProcess, 9);
        fprintf(stderr, "guard: child hung\n");
    } else {
        GetExitCodeProcess(pi.hProcess, &code);
    }
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    if (code == 0)
        return 0;
    fprintf(stderr, "guard: child exited %#lx (3: fault outside the guard, 5: no fault, "
            "6: not reported as a stack overflow)\n", (unsigned long)code);
    return 1;
}

/* ------------------------------------- the runtime's overflow report */

/* The Windows version of test_misuse.c's fiber_stack_overflow tests: a
 * fiber task that overflows in a child process; the runtime's vectored
 * handler names the overflow on stderr and hands the exception on. mode
 * 0: report on; 1: on, with a handler the program installed before the
 * runtime (it must still run, after the report); 2: report off. */

static volatile char ovf_sink;

static int ovf_recurse(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    ovf_sink = pad[0];
    return n > 0 ? ovf_recurse(n + 1) + pad[1 % sizeof pad] : 0;
}

static void ovf_task(void *p)
{
    (void)p;
    ovf_sink = (char)ovf_recurse(1);
}

static LONG CALLBACK ovf_user_veh(EXCEPTION_POINTERS *ep)
{
    if (ep->ExceptionRecord->ExceptionCode != EXCEPTION_STACK_OVERFLOW)
        return EXCEPTION_CONTINUE_SEARCH;
    static const char m[] = "user handler ran\n";
    DWORD w;
    WriteFile(GetStdHandle(STD_ERROR_HANDLE), m, sizeof m - 1, &w, NULL);
    TerminateProcess(GetCurrentProcess(), 42);
    return EXCEPTION_CONTINUE_SEARCH;
}

int fs_overflow_child(int mode)
{
    /* No error dialog, no debugger: an unhandled exception just ends us. */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
    if (mode == 1)
        AddVectoredExceptionHandler(1, ovf_user_veh);
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    c.fiber_stack_size = 64 * 1024;
    c.no_overflow_report = mode == 2;
    dagrt *rt = dagrt_create(&c);
    if (!rt)
        return 99;
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn_ex(rt, &g, ovf_task, NULL, DAGRT_SPAWN_FIBER);
    dagrt_group_wait(rt, &g);
    return 0;   /* not reached */
}

/* Runs `PROGRAM overflow_child MODE` with its stderr in buf; its exit code. */
static DWORD overflow_run(int mode, char *buf, size_t cap)
{
    char self[MAX_PATH], cmd[MAX_PATH + 32];
    DWORD n = GetModuleFileNameA(NULL, self, sizeof self);
    buf[0] = 0;
    if (n == 0 || n >= sizeof self)
        return 0;
    snprintf(cmd, sizeof cmd, "\"%s\" overflow_child %d", self, mode);
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE rd, wr;
    if (!CreatePipe(&rd, &wr, &sa, 0))
        return 0;
    SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
    si.hStdError = wr;
    fflush(NULL);
    BOOL ok = CreateProcessA(self, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);
    CloseHandle(wr);
    if (!ok) {
        CloseHandle(rd);
        return 0;
    }
    size_t got = 0;
    DWORD r;
    while (got + 1 < cap && ReadFile(rd, buf + got, (DWORD)(cap - 1 - got), &r, NULL) && r > 0)
        got += r;
    buf[got] = 0;
    CloseHandle(rd);
    DWORD code = 0;
    if (WaitForSingleObject(pi.hProcess, 120000) != WAIT_OBJECT_0)
        TerminateProcess(pi.hProcess, 0);   /* a hang reads as "did not end" */
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return code;
}

int fs_win64_overflow_report(void)
{
    char out[8192];
    int bad = 0;
    DWORD code = overflow_run(0, out, sizeof out);
    if (code == 0 || !strstr(out, "fiber stack overflow") || !strstr(out, "fiber_stack_size") ||
        !strstr(out, "65536")) {
        fprintf(stderr, "overflow, report on: exit %#lx, stderr: %s\n", (unsigned long)code, out);
        bad++;
    }
    code = overflow_run(1, out, sizeof out);
    if (code != 42 || !strstr(out, "fiber stack overflow") || !strstr(out, "user handler ran")) {
        fprintf(stderr, "overflow, earlier handler: exit %#lx, stderr: %s\n", (unsigned long)code, out);
        bad++;
    }
    code = overflow_run(2, out, sizeof out);
    if (code == 0 || strstr(out, "fiber stack overflow")) {
        fprintf(stderr, "overflow, report off: exit %#lx, stderr: %s\n", (unsigned long)code, out);
        bad++;
    }
    return bad;
}
