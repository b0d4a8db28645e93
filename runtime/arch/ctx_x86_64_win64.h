/*
 * ctx_x86_64_win64.h - x86-64 Windows (Win64 ABI) save layout, shared by
 * switch_x86_64_win64.S (offsets) and C (static_asserts against the struct).
 *
 * The Win64 ABI makes rbx, rbp, rdi, rsi, r12-r15, rsp and xmm6-xmm15
 * callee-saved, and the control bits of MXCSR and the x87 control word
 * likewise. Three fields of the thread's TIB (the NT_TIB at the start of
 * the TEB, reached through gs) describe the stack the thread runs on and
 * belong to the context too, because the system reads them: StackBase
 * (gs:[0x08], one past the highest byte), StackLimit (gs:[0x10], lowest
 * committed byte; guard-page growth moves it down), DeallocationStack
 * (gs:[0x1478], the base of the stack's allocation), and with them the
 * TEB's GuaranteedStackBytes (gs:[0x1748], the reserve above the bottom
 * in which a stack overflow is raised and handled), as SwitchToFiber
 * does. Stack probes (__chkstk), guard-page growth, stack-overflow
 * detection and SEH unwinding all check addresses against them.
 *
 *   offset  size  field
 *        0     8  rbx        (new context: the entry function)
 *        8     8  rbp
 *       16     8  rdi
 *       24     8  rsi
 *       32     8  r12        (new context: the entry argument)
 *       40     8  r13
 *       48     8  r14
 *       56     8  r15
 *       64     8  rsp        (points at the return address)
 *       72     8  TIB StackBase
 *       80     8  TIB StackLimit
 *       88     8  TEB DeallocationStack
 *       96     4  mxcsr      (whole register; only its control bits matter)
 *      100     2  x87 control word
 *      102     2  (padding)
 *      104     4  TEB GuaranteedStackBytes
 *      108     4  (padding, so that the xmm slots are 16-byte aligned)
 *      112   160  xmm6 .. xmm15
 *   size 272
 */
#ifndef DAGRT_ARCH_CTX_X86_64_WIN64_H
#define DAGRT_ARCH_CTX_X86_64_WIN64_H

#define DAGRT_CTX_OFF_RBX     0
#define DAGRT_CTX_OFF_RBP     8
#define DAGRT_CTX_OFF_RDI    16
#define DAGRT_CTX_OFF_RSI    24
#define DAGRT_CTX_OFF_R12    32
#define DAGRT_CTX_OFF_R13    40
#define DAGRT_CTX_OFF_R14    48
#define DAGRT_CTX_OFF_R15    56
#define DAGRT_CTX_OFF_RSP    64
#define DAGRT_CTX_OFF_STACK_BASE  72
#define DAGRT_CTX_OFF_STACK_LIMIT 80
#define DAGRT_CTX_OFF_DEALLOC     88
#define DAGRT_CTX_OFF_MXCSR  96
#define DAGRT_CTX_OFF_X87CW 100
#define DAGRT_CTX_OFF_GUARANTEE 104
#define DAGRT_CTX_OFF_XMM6  112
#define DAGRT_CTX_SIZE      272

/* Where the TIB fields are, as offsets from the gs base (the TEB). */
#define DAGRT_TEB_STACK_BASE   0x08
#define DAGRT_TEB_STACK_LIMIT  0x10
#define DAGRT_TEB_DEALLOC      0x1478
#define DAGRT_TEB_GUARANTEE    0x1748

#ifndef __ASSEMBLER__
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_arch_ctx {
    uint64_t rbx, rbp, rdi, rsi, r12, r13, r14, r15, rsp;
    uint64_t stack_base, stack_limit, dealloc;
    uint32_t mxcsr;
    uint16_t x87cw;
    uint16_t pad_;
    uint32_t guarantee;
    uint32_t pad2_;
    uint64_t xmm[20];        /* xmm6 .. xmm15, two words each */
} rt_arch_ctx;

static_assert(offsetof(rt_arch_ctx, rbx) == DAGRT_CTX_OFF_RBX, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rbp) == DAGRT_CTX_OFF_RBP, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rdi) == DAGRT_CTX_OFF_RDI, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rsi) == DAGRT_CTX_OFF_RSI, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r12) == DAGRT_CTX_OFF_R12, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r13) == DAGRT_CTX_OFF_R13, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r14) == DAGRT_CTX_OFF_R14, "ctx layout");
static_assert(offsetof(rt_arch_ctx, r15) == DAGRT_CTX_OFF_R15, "ctx layout");
static_assert(offsetof(rt_arch_ctx, rsp) == DAGRT_CTX_OFF_RSP, "ctx layout");
static_assert(offsetof(rt_arch_ctx, stack_base) == DAGRT_CTX_OFF_STACK_BASE, "ctx layout");
static_assert(offsetof(rt_arch_ctx, stack_limit) == DAGRT_CTX_OFF_STACK_LIMIT, "ctx layout");
static_assert(offsetof(rt_arch_ctx, dealloc) == DAGRT_CTX_OFF_DEALLOC, "ctx layout");
static_assert(offsetof(rt_arch_ctx, mxcsr) == DAGRT_CTX_OFF_MXCSR, "ctx layout");
static_assert(offsetof(rt_arch_ctx, x87cw) == DAGRT_CTX_OFF_X87CW, "ctx layout");
static_assert(offsetof(rt_arch_ctx, guarantee) == DAGRT_CTX_OFF_GUARANTEE, "ctx layout");
static_assert(offsetof(rt_arch_ctx, xmm) == DAGRT_CTX_OFF_XMM6, "ctx layout");
static_assert(DAGRT_CTX_OFF_XMM6 % 16 == 0, "ctx layout: xmm slots 16-byte aligned");
static_assert(sizeof(rt_arch_ctx) == DAGRT_CTX_SIZE, "ctx layout");
#endif

#endif
