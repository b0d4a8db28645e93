/*
 * ctx_aarch64.h - AArch64 AAPCS64 save layout, shared by
 * switch_aarch64_aapcs.S (offsets) and C (static_asserts against the struct).
 *
 * AAPCS64 callee-saved state: x19-x28, the frame pointer x29, the stack
 * pointer, and the low 64 bits of v8-v15 (d8-d15). The link register x30 is
 * saved too because the switch "returns" through it into the other context.
 * FPCR (rounding mode, flush-to-zero, trap enables) is per context, as
 * MXCSR is on x86-64: saved always, and written only when the two contexts'
 * values differ (writing it can serialise the pipeline; nearly every switch
 * is between contexts with the same value). FPSR (sticky flags) is
 * caller-saved state and is left alone.
 *
 *   offset  size  field
 *        0     8  x19        (new context: the entry function)
 *        8     8  x20        (new context: the entry argument)
 *       16     8  x21
 *       24     8  x22
 *       32     8  x23
 *       40     8  x24
 *       48     8  x25
 *       56     8  x26
 *       64     8  x27
 *       72     8  x28
 *       80     8  x29 (fp)
 *       88     8  x30 (lr)   (resume address; new context: the trampoline)
 *       96     8  sp
 *      104     8  fpcr       (new context: the creating thread's)
 *      112    64  d8 .. d15
 *   size 176
 */
#ifndef DAGRT_ARCH_CTX_AARCH64_H
#define DAGRT_ARCH_CTX_AARCH64_H

#define DAGRT_CTX_OFF_X19   0
#define DAGRT_CTX_OFF_X21  16
#define DAGRT_CTX_OFF_X23  32
#define DAGRT_CTX_OFF_X25  48
#define DAGRT_CTX_OFF_X27  64
#define DAGRT_CTX_OFF_X29  80
#define DAGRT_CTX_OFF_SP   96
#define DAGRT_CTX_OFF_FPCR 104
#define DAGRT_CTX_OFF_D8  112
#define DAGRT_CTX_OFF_D10 128
#define DAGRT_CTX_OFF_D12 144
#define DAGRT_CTX_OFF_D14 160
#define DAGRT_CTX_SIZE    176

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_arch_ctx {
    uint64_t x[12];    /* x19 .. x30 */
    uint64_t sp;
    uint64_t fpcr;
    uint64_t d[8];     /* d8 .. d15 (bit patterns) */
} rt_arch_ctx;

static_assert(offsetof(rt_arch_ctx, x) == DAGRT_CTX_OFF_X19, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x) + 2 * 8 == DAGRT_CTX_OFF_X21, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x) + 4 * 8 == DAGRT_CTX_OFF_X23, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x) + 6 * 8 == DAGRT_CTX_OFF_X25, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x) + 8 * 8 == DAGRT_CTX_OFF_X27, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x) + 10 * 8 == DAGRT_CTX_OFF_X29, "ctx layout");
static_assert(offsetof(rt_arch_ctx, sp) == DAGRT_CTX_OFF_SP, "ctx layout");
static_assert(offsetof(rt_arch_ctx, fpcr) == DAGRT_CTX_OFF_FPCR, "ctx layout");
static_assert(offsetof(rt_arch_ctx, d) == DAGRT_CTX_OFF_D8, "ctx layout");
static_assert(offsetof(rt_arch_ctx, d) + 2 * 8 == DAGRT_CTX_OFF_D10, "ctx layout");
static_assert(offsetof(rt_arch_ctx, d) + 4 * 8 == DAGRT_CTX_OFF_D12, "ctx layout");
static_assert(offsetof(rt_arch_ctx, d) + 6 * 8 == DAGRT_CTX_OFF_D14, "ctx layout");
static_assert(sizeof(rt_arch_ctx) == DAGRT_CTX_SIZE, "ctx layout");
#endif

#endif
