/*
 * ctx.h - the machine context switch under every fiber (internal).
 *
 * One backend is compiled in, chosen by Meson (option fiber_backend):
 *   DAGRT_CTX_X86_64   switch_x86_64_sysv.S   (ctx_x86_64.h: save layout)
 *   DAGRT_CTX_X86_64_WIN64 switch_x86_64_win64.S (ctx_x86_64_win64.h: layout)
 *   DAGRT_CTX_AARCH64  switch_aarch64_aapcs.S (ctx_aarch64.h: save layout)
 *   DAGRT_CTX_UCONTEXT ctx_ucontext.h         (any other CPU; slow but portable)
 *
 * The contract of the two functions below is the same for all three:
 *
 *   rt_arch_make(c, lo, size, fn, arg)
 *       prepares *c so that the first switch to it calls fn(arg) on the stack
 *       [lo, lo+size) (on Windows: the committed top of a VirtualAlloc
 *       reservation, see ctx_make.c). fn must never return: a fiber ends by switching away
 *       for good. The new context starts with the floating-point control
 *       state (MXCSR/x87 control word) of the thread that calls make.
 *   rt_arch_switch(from, to)
 *       saves the callee-saved state of the caller into *from and resumes *to;
 *       returns when some thread later switches back to *from. Nothing but
 *       the callee-saved registers of the ABI is preserved (the call is an
 *       ordinary C call to the compiler), so thread-local addresses computed
 *       before the call may be stale after it if the fiber migrated: see
 *       fiber/fiber.h for the TLS rule.
 */
#ifndef DAGRT_ARCH_CTX_H
#define DAGRT_ARCH_CTX_H

#include <stddef.h>

#if defined(DAGRT_CTX_X86_64)
#  include "ctx_x86_64.h"
#elif defined(DAGRT_CTX_X86_64_WIN64)
#  include "ctx_x86_64_win64.h"
#elif defined(DAGRT_CTX_AARCH64)
#  include "ctx_aarch64.h"
#elif defined(DAGRT_CTX_UCONTEXT)
#  include "ctx_ucontext.h"
#else
#  error "no fiber context backend selected (runtime/meson.build defines one)"
#endif

typedef void (*rt_arch_fn)(void *arg);

void rt_arch_make(rt_arch_ctx *c, void *stack_lo, size_t stack_size,
                     rt_arch_fn fn, void *arg);
void rt_arch_switch(rt_arch_ctx *from, const rt_arch_ctx *to);

/* Name of the compiled-in backend, for benchmarks and diagnostics. */
extern const char rt_arch_backend[];

#endif
