/*
 * ctx_ucontext.h - the portable fallback: POSIX ucontext (getcontext,
 * makecontext, swapcontext). Slow (swapcontext makes a sigprocmask system
 * call on every switch) but it builds on any CPU glibc supports.
 */
#ifndef DAGRT_ARCH_CTX_UCONTEXT_H
#define DAGRT_ARCH_CTX_UCONTEXT_H

#include <ucontext.h>

typedef struct rt_arch_ctx {
    ucontext_t uc;
} rt_arch_ctx;

#endif
