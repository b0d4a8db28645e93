/*
 * ctx_x86_64.h - x86-64 System V save layout, shared by switch_x86_64_sysv.S
 * (which includes this file for the offsets) and by C (which static_asserts
 * the offsets against the struct, so the two can never drift apart).
 *
 * The psABI makes rbx, rbp, r12-r15 and rsp callee-saved, and also the
 * control bits of MXCSR (rounding, FTZ/DAZ, exception masks) and the x87
 * control word (precision, rounding, masks). Everything else is
 * caller-saved, so the compiler has already spilled it around the call.
 * rip needs no slot: the switch is a call, so the return address sits at
 * [rsp], and the switch resumes the new context by popping it and jumping
 * there (pop + indirect jmp, not ret: see switch_x86_64_sysv.S).
 *
 *   offset  size  field
 *        0     8  rbx        (new context: the entry function)
 *        8     8  rbp
 *       16     8  r12        (new context: the entry argument)
 *       24     8  r13
 *       32     8  r14
 *       40     8  r15
 *       48     8  rsp        (points at the return address)
 *       56     4  mxcsr      (whole register; only its control bits matter)
 *       60     2  x87 control word
 *       62     2  (padding)
 *   size 64
 */
#ifndef DAGRT_ARCH_CTX_X86_64_H
#define DAGRT_ARCH_CTX_X86_64_H

#define DAGRT_CTX_OFF_RBX   0
#define DAGRT_CTX_OFF_RBP   8
#define DAGRT_CTX_OFF_R12  16
#define DAGRT_CTX_OFF_R13  24
#define DAGRT_CTX_OFF_R14  32
#define DAGRT_CTX_OFF_R15  40
#define DAGRT_CTX_OFF_RSP  48
#define DAGRT_CTX_OFF_MXCSR 56
#define DAGRT_CTX_OFF_X87CW 60
#define DAGRT_CTX_SIZE     64

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_arch_ctx {
    uint64_t rbx, rbp, r12, r13, r14, r15, rsp;
    uint32_t mxcsr;
    uint16_t x87cw;
    uint16_t pad_;
} rt_arch_ctx;

static_assert(offsetof(rt_arch_ctx, rbx) == DAGRT_CTX_OFF_RBX, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rbp) == DAGRT_CTX_OFF_RBP, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r12) == DAGRT_CTX_OFF_R12, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r13) == DAGRT_CTX_OFF_R13, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r14) == DAGRT_CTX_OFF_R14, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r15) == DAGRT_CTX_OFF_R15, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rsp) == DAGRT_CTX_OFF_RSP, "ctx layout");
static_assert(offsetof(rt_arch_ctx, mxcsr) == DAGRT_CTX_OFF_MXCSR, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x87cw) == DAGRT_CTX_OFF_X87CW, "ctx layout");
static_assert(sizeof(rt_arch_ctx) == DAGRT_CTX_SIZE, "ctx layout");
#endif

#endif
