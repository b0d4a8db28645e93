/*
 * fiber_scenarios.c - context switch, stacks and pool scenarios.
 */
#define _DEFAULT_SOURCE
#include "fiber_scenarios.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if !defined(_WIN32)
#  include <sys/wait.h>
#endif

#include "fiber/fiber.h"

long fs_scaled(long n)
{
    const char *s = getenv("DAGC_TEST_SCALE");
    double k = s ? atof(s) : 1.0;
    if (!(k > 0))
        k = 1.0;
    long v = (long)((double)n * k);
    return v < 1 ? 1 : v;
}

/* ------------------------------------------------- register preservation */

#if defined(DAGRT_CTX_X86_64_WIN64)
/* Win64 (regs_x86_64_win64.S): rdi, rsi and xmm6-xmm15 are callee-saved too. */
#  define REGS_N 30
static uint64_t regs_want[REGS_N] = {
    0x1111111111111111u, 0x2222222222222222u, 0x7777777777777777u,
    0x8888888888888888u, 0x3333333333333333u, 0x4444444444444444u,
    0x5555555555555555u, 0x6666666666666666u,
    0xffc0u /* mxcsr */, 0x0f7fu /* x87 cw */,
};
static const char *const regs_name[REGS_N] = {
    "rbx", "rbp", "rdi", "rsi", "r12", "r13", "r14", "r15", "mxcsr", "x87cw",
    "xmm6.lo", "xmm6.hi", "xmm7.lo", "xmm7.hi", "xmm8.lo", "xmm8.hi",
    "xmm9.lo", "xmm9.hi", "xmm10.lo", "xmm10.hi", "xmm11.lo", "xmm11.hi",
    "xmm12.lo", "xmm12.hi", "xmm13.lo", "xmm13.hi", "xmm14.lo", "xmm14.hi",
    "xmm15.lo", "xmm15.hi" };
#elif defined(DAGRT_CTX_X86_64) || (defined(DAGRT_CTX_UCONTEXT) && defined(__x86_64__))
#  define REGS_N 8
static const uint64_t regs_want[REGS_N] = {
    0x1111111111111111u, 0x2222222222222222u, 0x3333333333333333u,
    0x4444444444444444u, 0x5555555555555555u, 0x6666666666666666u,
    0xffc0u /* mxcsr */, 0x0f7fu /* x87 cw */,
};
static const char *const regs_name[REGS_N] = {
    "rbx", "rbp", "r12", "r13", "r14", "r15", "mxcsr", "x87cw" };
#elif defined(DAGRT_CTX_AARCH64) || (defined(DAGRT_CTX_UCONTEXT) && defined(__aarch64__))
#  define REGS_N 19
static uint64_t regs_want[REGS_N];
static const char *const regs_name[REGS_N] = {
    "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29",
    "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15" };
#endif

#ifdef REGS_N
void regs_probe(rt_arch_ctx *self, rt_arch_ctx *other, uint64_t *out);
void regs_clobber(rt_arch_ctx *self, rt_arch_ctx *other);

static rt_arch_ctx regs_main_ctx;
static rt_fiber regs_fiber;
static int regs_clobber_runs;

static void regs_clobber_main(void *arg)
{
    (void)arg;
    for (;;) {
        regs_clobber_runs++;
        regs_clobber(&regs_fiber.ctx, &regs_main_ctx);
    }
}

int fs_regs_preserved(void)
{
#if defined(DAGRT_CTX_X86_64_WIN64)
    for (int i = 0; i < 10; i++) {
        regs_want[10 + 2 * i] = 0x0606000000000600u + 0x10u * (uint64_t)i;
        regs_want[11 + 2 * i] = 0x6060000000006000u + 0x10u * (uint64_t)i;
    }
#endif
#if defined(REGS_N) && REGS_N == 19
    for (int i = 0; i < 11; i++)
        regs_want[i] = 0x1919000000001919u + (uint64_t)i;
    for (int i = 0; i < 8; i++)
        regs_want[11 + i] = 0x0808000000000808u + (uint64_t)i;
#endif
    int bad = 0;
    if (rt_fiber_create(&regs_fiber, 64 * 1024, regs_clobber_main, NULL) != 0)
        return 1;
    /* Twice: the first switch enters the fiber fresh, the second resumes it
     * mid-function, so both paths through the switch are checked. */
    for (int round = 0; round < 2; round++) {
        uint64_t got[REGS_N];
        memset(got, 0, sizeof got);
        regs_probe(&regs_main_ctx, &regs_fiber.ctx, got);
        for (int i = 0; i < REGS_N; i++) {
            if (got[i] != regs_want[i]) {
                fprintf(stderr, "round %d: %s = %#llx, want %#llx\n", round, regs_name[i],
                        (unsigned long long)got[i], (unsigned long long)regs_want[i]);
                bad++;
            }
        }
    }
    if (regs_clobber_runs != 2) {
        fprintf(stderr, "clobber fiber ran %d times, want 2\n", regs_clobber_runs);
        bad++;
    }
    rt_fiber_destroy(&regs_fiber);
    return bad;
}
#else
int fs_regs_preserved(void)
{
    fprintf(stderr, "no register probe for this CPU\n");
    return 0;
}
#endif

/* ---------------------------------------------------------------- ping-pong */

struct pp {
    rt_fiber main, a, b;
    long rounds;
    long step;       /* incremented by each side in turn */
    int bad;
};

static void pp_a(void *arg)
{
    struct pp *p = arg;
    rt_fiber_started(&p->a);
    for (long i = 0; i < p->rounds; i++) {
        if (p->step != 2 * i) p->bad++;
        p->step++;
        rt_fiber_switch(&p->a, &p->b);
    }
    rt_fiber_switch(&p->a, &p->main);
    abort();
}

static void pp_b(void *arg)
{
    struct pp *p = arg;
    rt_fiber_started(&p->b);
    for (long i = 0;; i++) {
        if (p->step != 2 * i + 1) p->bad++;
        p->step++;
        rt_fiber_switch(&p->b, &p->a);
    }
}

int fs_pingpong(long rounds)
{
    struct pp *p = calloc(1, sizeof *p);
    if (!p) return 1;
    p->rounds = rounds;
    rt_fiber_init_thread(&p->main);
    if (rt_fiber_create(&p->a, 0, pp_a, p) || rt_fiber_create(&p->b, 0, pp_b, p))
        return 1;
    rt_fiber_switch(&p->main, &p->a);
    int bad = p->bad;
    if (p->step != 2 * rounds) {
        fprintf(stderr, "pingpong: %ld steps, want %ld\n", p->step, 2 * rounds);
        bad++;
    }
    rt_fiber_destroy(&p->a);
    rt_fiber_destroy(&p->b);
    rt_fiber_fini_thread(&p->main);
    free(p);
    return bad;
}

/* ------------------------------------------------ FP control per fiber */

#if defined(__x86_64__)
static unsigned get_mxcsr(void) { unsigned v; __asm__ volatile("stmxcsr %0" : "=m"(v)); return v; }
static void set_mxcsr(unsigned v) { __asm__ volatile("ldmxcsr %0" : : "m"(v)); }
struct fpi { rt_fiber main, f; unsigned seen_start, seen_resume; };
static void fpi_main(void *arg)
{
    struct fpi *s = arg;
    rt_fiber_started(&s->f);
    s->seen_start = get_mxcsr() & 0xffc0u;
    set_mxcsr(0x1f80u | 0x6000u);      /* this fiber: round toward zero */
    rt_fiber_switch(&s->f, &s->main);
    s->seen_resume = get_mxcsr() & 0xffc0u;
    rt_fiber_switch(&s->f, &s->main);
    abort();
}
int fs_fp_state_isolated(void)
{
    struct fpi s;
    int bad = 0;
    unsigned saved = get_mxcsr();
    rt_fiber_init_thread(&s.main);
    set_mxcsr(0x1f80u | 0x2000u);      /* thread: round down */
    if (rt_fiber_create(&s.f, 0, fpi_main, &s)) return 1;
    set_mxcsr(0x1f80u);                /* changed after create: fiber must not see it */
    rt_fiber_switch(&s.main, &s.f);
    if ((get_mxcsr() & 0xffc0u) != 0x1f80u) bad++;    /* thread's own kept */
    set_mxcsr(0x1f80u | 0x4000u);      /* thread: round up */
    rt_fiber_switch(&s.main, &s.f);
    if ((get_mxcsr() & 0xffc0u) != (0x1f80u | 0x4000u)) bad++;
    if (s.seen_start != (0x1f80u | 0x2000u)) bad++;   /* inherited at create */
    if (s.seen_resume != (0x1f80u | 0x6000u)) bad++;  /* its own kept */
    set_mxcsr(saved);
    rt_fiber_destroy(&s.f);
    return bad;
}
#elif defined(__aarch64__)
/* FPCR's rounding mode, bits 23:22: 0 nearest, 1 up, 2 down, 3 toward zero. */
#define RMODE(m) ((uint64_t)(m) << 22)
#define RMODE_MASK RMODE(3)
static uint64_t get_fpcr(void) { uint64_t v; __asm__ volatile("mrs %0, fpcr" : "=r"(v)); return v; }
static void set_rmode(uint64_t m) { uint64_t v = (get_fpcr() & ~RMODE_MASK) | m; __asm__ volatile("msr fpcr, %0" : : "r"(v)); }
struct fpi { rt_fiber main, f; uint64_t seen_start, seen_resume; };
static void fpi_main(void *arg)
{
    struct fpi *s = arg;
    rt_fiber_started(&s->f);
    s->seen_start = get_fpcr() & RMODE_MASK;
    set_rmode(RMODE(3));               /* this fiber: round toward zero */
    rt_fiber_switch(&s->f, &s->main);
    s->seen_resume = get_fpcr() & RMODE_MASK;
    rt_fiber_switch(&s->f, &s->main);
    abort();
}
int fs_fp_state_isolated(void)
{
    struct fpi s;
    int bad = 0;
    uint64_t saved = get_fpcr() & RMODE_MASK;
    rt_fiber_init_thread(&s.main);
    set_rmode(RMODE(2));               /* thread: round down */
    if (rt_fiber_create(&s.f, 0, fpi_main, &s)) return 1;
    set_rmode(RMODE(0));               /* changed after create: fiber must not see it */
    rt_fiber_switch(&s.main, &s.f);
    if ((get_fpcr() & RMODE_MASK) != RMODE(0)) bad++;     /* thread's own kept */
    set_rmode(RMODE(1));               /* thread: round up */
    rt_fiber_switch(&s.main, &s.f);
    if ((get_fpcr() & RMODE_MASK) != RMODE(1)) bad++;
    if (s.seen_start != RMODE(2)) bad++;                   /* inherited at create */
    if (s.seen_resume != RMODE(3)) bad++;                  /* its own kept */
    set_rmode(saved);
    rt_fiber_destroy(&s.f);
    return bad;
}
#else
/* The ucontext fallback on other CPUs: whatever the C library's
 * swapcontext does with FP control state; nothing of ours to test. */
int fs_fp_state_isolated(void) { return 0; }
#endif

/* ---------------------------------------------------- guard page overflow */

/* Windows has neither fork nor SIGSEGV: its version (a child process, a
 * vectored exception handler) is in win64_scenarios.c. */
#if !defined(_WIN32)

static rt_fiber guard_main, guard_fiber;
static volatile uintptr_t guard_lo, guard_hi;
static volatile int guard_depth_limit = 1 << 21;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr;
    /* 0: the fault is inside the guard page, as designed. */
    _exit(a >= guard_lo && a < guard_hi ? 0 : 3);
}

/* noinline: gcc otherwise inlines several levels into one frame larger than
 * the guard page, which can then be jumped over (docs/runtime.md: frames
 * over 4 KiB need -fstack-clash-protection to be caught). */
__attribute__((noinline)) static int recurse(int depth)
{
    volatile char buf[512];
    buf[sizeof buf - 1] = (char)depth;   /* touch top-down, as a stack grows */
    buf[0] = (char)depth;
    if (depth > guard_depth_limit)   /* never true: 1 GiB of frames */
        return 0;
    return recurse(depth + 1) + buf[0] + buf[sizeof buf - 1];
}

static void guard_entry(void *arg)
{
    (void)arg;
    rt_fiber_started(&guard_fiber);
    recurse(0);
    rt_fiber_switch(&guard_fiber, &guard_main);
}

int fs_guard_overflow(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        static char alt[64 * 1024];
        stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0 };
        sigaltstack(&ss, NULL);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
        rt_fiber_init_thread(&guard_main);
        if (rt_fiber_create(&guard_fiber, 32 * 1024, guard_entry, NULL)) _exit(4);
        guard_lo = (uintptr_t)guard_fiber.map;
        guard_hi = guard_lo + guard_fiber.guard_len;
        rt_fiber_switch(&guard_main, &guard_fiber);
        _exit(5);   /* the recursion returned: no fault at all */
    }
    int st;
    if (waitpid(pid, &st, 0) != pid) return 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    fprintf(stderr, "guard: child %s %d (3: fault outside the guard, 5: no fault)\n",
            WIFEXITED(st) ? "exited" : "killed by signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return 1;
}

#endif /* !_WIN32 */

/* ------------------------------------------------------------------ pool */

static _Thread_local rt_fiber *pool_back;
static int pool_runs;

static void pool_entry(void *arg)
{
    rt_fiber *self = arg;
    rt_fiber_started(self);
    for (;;) {
        pool_runs++;
        rt_fiber_switch(self, pool_back);
    }
}

static int count_in_file(FILE *f, const char *needle)
{
    char line[512];
    int n = 0;
    rewind(f);
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    return n;
}

int fs_pool_bounded(void)
{
    enum { MAX = 4 };
    static rt_fiber_pool pool;
    static rt_fiber self;
    rt_fiber *got[MAX + 1];
    int bad = 0;
    if (rt_fiber_pool_init(&pool, MAX, 0, 256 * 1024, pool_entry) != 0) return 1;
    rt_fiber_init_thread(&self);
    pool_back = &self;
    for (int i = 0; i < MAX; i++) {
        got[i] = rt_fiber_pool_get(&pool, i == 0);
        if (!got[i]) { bad++; continue; }
        for (int j = 0; j < i; j++) if (got[j] == got[i]) bad++;
        rt_fiber_switch(&self, got[i]);   /* each one runs */
    }
    if (bad) return bad;
    if (got[0]->stack_len < 256 * 1024 || got[1]->stack_len != pool.std_size) bad++;
    if (pool_runs != MAX) bad++;
    /* Exhausted: NULL, counted, and the warning printed exactly once. */
    FILE *tmp = tmpfile();
    if (!tmp) return bad + 1;
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    got[MAX] = rt_fiber_pool_get(&pool, false);
    rt_fiber_pool_warn_once(&pool);
    if (rt_fiber_pool_get(&pool, true) != NULL) bad++;
    rt_fiber_pool_warn_once(&pool);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (got[MAX] != NULL) bad++;
    if (atomic_load(&pool.exhausted) != 2) bad++;
    if (count_in_file(tmp, "fiber pool exhausted") != 1) bad++;
    fclose(tmp);
    /* A returned fiber is reused, and resumes where it parked. */
    rt_fiber_pool_put(&pool, got[2]);
    rt_fiber *again = rt_fiber_pool_get(&pool, false);
    if (again != got[2]) bad++;
    rt_fiber_switch(&self, again);
    if (pool_runs != MAX + 1) bad++;
    /* A large request with only a standard fiber free reclaims it. */
    rt_fiber_pool_put(&pool, again);
    rt_fiber *big = rt_fiber_pool_get(&pool, true);
    if (!big || big->stack_len < 256 * 1024) bad++;
    else rt_fiber_switch(&self, big);
    if (pool_runs != MAX + 2) bad++;
    rt_fiber_pool_fini(&pool);
    return bad;
}
