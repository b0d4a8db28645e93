/*
 * ctx_make.c - preparing a new context for the assembly backends, and the
 * whole ucontext fallback.
 */
#include "ctx.h"

#include <stdint.h>
#include <string.h>

#if defined(DAGRT_CTX_X86_64) || defined(DAGRT_CTX_X86_64_WIN64) || defined(DAGRT_CTX_AARCH64)
void rt_arch_entry(void);   /* in the .S file; never called from C */
#endif

#if defined(DAGRT_CTX_X86_64)

const char rt_arch_backend[] = "asm x86-64 SysV";

void rt_arch_make(rt_arch_ctx *c, void *stack_lo, size_t stack_size,
                     rt_arch_fn fn, void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + stack_size) & ~(uintptr_t)15;
    /* rsp must be 8 mod 16 where `ret` pops the entry address, so that the
     * trampoline's `call` sees a 16-byte aligned stack as the ABI wants. Two
     * zero words above it end frame-pointer walks. */
    uint64_t *sp = (uint64_t *)(top - 24);
    sp[0] = (uint64_t)(uintptr_t)rt_arch_entry;
    sp[1] = 0;
    sp[2] = 0;
    memset(c, 0, sizeof *c);
    c->rbx = (uint64_t)(uintptr_t)fn;
    c->r12 = (uint64_t)(uintptr_t)arg;
    c->rsp = (uint64_t)(uintptr_t)sp;
    /* Inherit the creating thread's FP control state. */
    __asm__ volatile("stmxcsr %0" : "=m"(c->mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(c->x87cw));
}

#elif defined(DAGRT_CTX_X86_64_WIN64)

#include "../os/os.h"

const char rt_arch_backend[] = "asm x86-64 Win64";

void rt_arch_make(rt_arch_ctx *c, void *stack_lo, size_t stack_size,
                     rt_arch_fn fn, void *arg)
{
    uintptr_t hi = (uintptr_t)stack_lo + stack_size;
    uintptr_t top = hi & ~(uintptr_t)15;
    /* As if rt_arch_entry had been called: where the switch pops the
     * entry address, rsp is then 8 mod 16 with a zero return address at
     * [rsp] (stack walks and unwinding end there) and 32 bytes of the
     * caller's shadow space above it. */
    uint64_t *sp = (uint64_t *)(top - 48);
    memset(sp, 0, 48);
    sp[0] = (uint64_t)(uintptr_t)rt_arch_entry;
    memset(c, 0, sizeof *c);
    c->rbx = (uint64_t)(uintptr_t)fn;
    c->r12 = (uint64_t)(uintptr_t)arg;
    c->rsp = (uint64_t)(uintptr_t)sp;
    /* The TIB's view of this stack: StackBase is its top; StackLimit the
     * lowest byte of the committed part that holds the top (the system
     * grows it through the guard page below, as for a thread's stack);
     * DeallocationStack the base of the whole reservation, which the
     * system's overflow check measures its reserve from; and the stack's
     * own overflow reserve, switched in with it as SwitchToFiber does, so
     * a fiber's overflow is handled in that room whatever the thread
     * running it asked for its own stack (os.h, rt_os_stack_tib_of). */
    rt_os_stack_tib tib;
    rt_os_stack_tib_of(stack_lo, stack_size, &tib);
    c->stack_base = (uint64_t)hi;
    c->stack_limit = tib.limit;
    c->dealloc = tib.dealloc;
    c->guarantee = tib.guarantee;
    /* Inherit the creating thread's FP control state. */
    __asm__ volatile("stmxcsr %0" : "=m"(c->mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(c->x87cw));
}

#elif defined(DAGRT_CTX_AARCH64)

const char rt_arch_backend[] = "asm AArch64 AAPCS64";

void rt_arch_make(rt_arch_ctx *c, void *stack_lo, size_t stack_size,
                     rt_arch_fn fn, void *arg)
{
    uintptr_t top = ((uintptr_t)stack_lo + stack_size) & ~(uintptr_t)15;
    memset(c, 0, sizeof *c);
    c->x[0] = (uint64_t)(uintptr_t)fn;                /* x19 */
    c->x[1] = (uint64_t)(uintptr_t)arg;               /* x20 */
    c->x[10] = 0;                                     /* x29: ends fp walks */
    c->x[11] = (uint64_t)(uintptr_t)rt_arch_entry; /* x30 */
    c->sp = (uint64_t)top;
    /* Inherit the creating thread's FP control state. */
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    c->fpcr = fpcr;
}

#elif defined(DAGRT_CTX_UCONTEXT)

#include <stdlib.h>
#include <stdio.h>

const char rt_arch_backend[] = "ucontext (portable fallback)";

/* makecontext passes int arguments only: split the pointers in halves. */
static void ctx_entry(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi, unsigned arg_lo)
{
    uintptr_t f = ((uintptr_t)fn_hi << 16 << 16) | (uintptr_t)fn_lo;
    uintptr_t a = ((uintptr_t)arg_hi << 16 << 16) | (uintptr_t)arg_lo;
    rt_arch_fn fn;
    memcpy(&fn, &f, sizeof fn);
    fn((void *)a);
    abort();   /* entry functions never return */
}

void rt_arch_make(rt_arch_ctx *c, void *stack_lo, size_t stack_size,
                     rt_arch_fn fn, void *arg)
{
    uintptr_t f, a = (uintptr_t)arg;
    memcpy(&f, &fn, sizeof f);
    if (getcontext(&c->uc) != 0) {
        perror("dagrt: getcontext");
        abort();
    }
    c->uc.uc_stack.ss_sp = stack_lo;
    c->uc.uc_stack.ss_size = stack_size;
    c->uc.uc_link = NULL;
    makecontext(&c->uc, (void (*)(void))ctx_entry, 4,
                (unsigned)(f >> 16 >> 16), (unsigned)(f & 0xffffffffu),
                (unsigned)(a >> 16 >> 16), (unsigned)(a & 0xffffffffu));
}

void rt_arch_switch(rt_arch_ctx *from, const rt_arch_ctx *to)
{
    if (swapcontext(&from->uc, &to->uc) != 0) {
        perror("dagrt: swapcontext");
        abort();
    }
}

#endif
