/*
 * win64_scenarios.c - fiber scenarios that only Windows x64 has: the TIB's
 * stack bounds switched with the stack (stack probes and guard-page growth
 * on a fiber), the first frame's shape and unwind info, and the guard-page
 * overflow (the Windows version of fiber_scenarios.c's fork + SIGSEGV one:
 * a child process and a vectored exception handler). Run by fiber_drv.
 */
#define WIN32_LEAN_AND_MEAN
#include "fiber_scenarios.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "fiber.h"

typedef struct tib_view {
    uintptr_t base, limit, dealloc;
} tib_view;

/* The TEB through gs, as the switch reads it (NtCurrentTeb()'s inline
 * version trips gcc's -Warray-bounds). */
static tib_view tib_now(void)
{
    tib_view v;
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.base) : "i"(DAGRT_TEB_STACK_BASE));
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.limit) : "i"(DAGRT_TEB_STACK_LIMIT));
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v.dealloc) : "i"(DAGRT_TEB_DEALLOC));
    return v;
}

#define BAD(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); s->bad++; } while (0)

/* --------------------------------------------- TIB bounds, deep recursion */

enum { TIB_STACK = 512 * 1024, TIB_FRAME = 24 * 1024, TIB_DEPTH = 16 };

struct tib_scn {
    dagrt_fiber main, f;
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
    dagrt__fiber_started(&s->f);
    s->frame0 = (uintptr_t)__builtin_frame_address(0);
    s->at_entry = tib_now();
    s->deepest = UINTPTR_MAX;
    (void)tib_recurse(s, 0);
    s->after_recursion = tib_now();
    dagrt__fiber_switch(&s->f, &s->main);
    s->at_resume = tib_now();
    dagrt__fiber_switch(&s->f, &s->main);
    abort();
}

int fs_win64_tib(void)
{
    struct tib_scn *s = calloc(1, sizeof *s);
    if (!s)
        return 1;
    dagrt__fiber_init_thread(&s->main);
    if (dagrt__fiber_create(&s->f, TIB_STACK, tib_entry, s) != 0)
        return 1;
    uintptr_t lo = (uintptr_t)s->f.stack_lo, hi = lo + s->f.stack_len;
    tib_view thread = tib_now();
    dagrt__fiber_switch(&s->main, &s->f);
    tib_view back = tib_now();
    if (memcmp(&back, &thread, sizeof back) != 0)
        BAD("thread's TIB after switching back: base %#llx limit %#llx dealloc %#llx, "
            "want %#llx %#llx %#llx", (unsigned long long)back.base,
            (unsigned long long)back.limit, (unsigned long long)back.dealloc,
            (unsigned long long)thread.base, (unsigned long long)thread.limit,
            (unsigned long long)thread.dealloc);
    tib_view e = s->at_entry, r = s->after_recursion;
    if (e.base != hi || e.dealloc != (uintptr_t)s->f.map)
        BAD("fiber's TIB: StackBase %#llx DeallocationStack %#llx, want %#llx %#llx",
            (unsigned long long)e.base, (unsigned long long)e.dealloc,
            (unsigned long long)hi, (unsigned long long)(uintptr_t)s->f.map);
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
    dagrt__fiber_switch(&s->main, &s->f);
    if (memcmp(&s->at_resume, &r, sizeof r) != 0)
        BAD("fiber's TIB changed across a switch out and back (limit %#llx, was %#llx)",
            (unsigned long long)s->at_resume.limit, (unsigned long long)r.limit);
    int bad = s->bad;
    dagrt__fiber_destroy(&s->f);
    free(s);
    return bad;
}

/* ------------------------------------------- unwinding out of a fiber */

void dagrt__ctx_entry(void);

struct unw_scn {
    dagrt_fiber main, f;
    int frames;
    int ended_in_entry;
    int bad;
};

__attribute__((noinline)) static void unw_walk(struct unw_scn *s)
{
    CONTEXT c;
    RtlCaptureContext(&c);
    uintptr_t entry = (uintptr_t)dagrt__ctx_entry;
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
    dagrt__fiber_started(&s->f);
    unw_walk(s);
    dagrt__fiber_switch(&s->f, &s->main);
    abort();
}

/* A stack walk from inside a fiber (what SEH dispatch and debuggers do)
 * ends in dagrt__ctx_entry, at the zero return address ctx_make left. */
int fs_win64_unwind(void)
{
    struct unw_scn s;
    memset(&s, 0, sizeof s);
    dagrt__fiber_init_thread(&s.main);
    if (dagrt__fiber_create(&s.f, 0, unw_entry, &s) != 0)
        return 1;
    dagrt__fiber_switch(&s.main, &s.f);
    if (!s.ended_in_entry || s.frames < 3 || s.frames >= 64) {
        fprintf(stderr, "unwind: %d frames, %s in dagrt__ctx_entry\n", s.frames,
                s.ended_in_entry ? "ended" : "did not end");
        s.bad++;
    }
    dagrt__fiber_destroy(&s.f);
    return s.bad;
}

/* ---------------------------------------------------- guard page overflow */

static dagrt_fiber guard_main, guard_fiber;
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
    dagrt__fiber_started(&guard_fiber);
    guard_recurse(0);
    dagrt__fiber_switch(&guard_fiber, &guard_main);
}

int fs_guard_child(void)
{
    AddVectoredExceptionHandler(1, guard_veh);
    dagrt__fiber_init_thread(&guard_main);
    if (dagrt__fiber_create(&guard_fiber, 32 * 1024, guard_entry, NULL))
        ExitProcess(4);
    guard_lo = (uintptr_t)guard_fiber.map;
    guard_hi = guard_lo + guard_fiber.guard_len;
    dagrt__fiber_switch(&guard_main, &guard_fiber);
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
