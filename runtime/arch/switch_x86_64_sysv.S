/*
 * switch_x86_64_sysv.S - fiber context switch for x86-64 System V.
 *
 * Save layout (offsets from ctx_x86_64.h, static_asserted in C):
 *   0 rbx | 8 rbp | 16 r12 | 24 r13 | 32 r14 | 40 r15 | 48 rsp
 *   56 mxcsr (4) | 60 x87 control word (2) | size 64
 *
 * void rt_arch_switch(rt_arch_ctx *from (rdi), const rt_arch_ctx *to (rsi))
 *   Stores the callee-saved integer registers, rsp (which points at our
 *   return address) and the FP control state into *from, loads the same
 *   from *to and returns on the other stack. Caller-saved registers need no
 *   care: the compiler treats this as an ordinary call.
 *   It "returns" with pop + indirect jmp, not ret: a ret here always
 *   mispredicts (the return-stack buffer holds our caller, not the other
 *   context's), while the indirect branch predictor learns the usual
 *   switch partners (bench/fiber: ~7.5 ns instead of ~12.5 ns per switch).
 *
 * rt_arch_entry: first code a new context runs (rt_arch_make puts its
 *   address where `ret` finds it): calls rbx(r12) with a 16-byte aligned
 *   stack; the entry function never returns, ud2 traps if it does.
 */
#include "ctx_x86_64.h"

        .text

        .globl  rt_arch_switch
        .hidden rt_arch_switch
        .type   rt_arch_switch, @function
        .p2align 4
rt_arch_switch:
        .cfi_startproc
        movq    %rbx, DAGRT_CTX_OFF_RBX(%rdi)
        movq    %rbp, DAGRT_CTX_OFF_RBP(%rdi)
        movq    %r12, DAGRT_CTX_OFF_R12(%rdi)
        movq    %r13, DAGRT_CTX_OFF_R13(%rdi)
        movq    %r14, DAGRT_CTX_OFF_R14(%rdi)
        movq    %r15, DAGRT_CTX_OFF_R15(%rdi)
        movq    %rsp, DAGRT_CTX_OFF_RSP(%rdi)
        stmxcsr DAGRT_CTX_OFF_MXCSR(%rdi)
        fnstcw  DAGRT_CTX_OFF_X87CW(%rdi)

        movq    DAGRT_CTX_OFF_RBX(%rsi), %rbx
        movq    DAGRT_CTX_OFF_RBP(%rsi), %rbp
        movq    DAGRT_CTX_OFF_R12(%rsi), %r12
        movq    DAGRT_CTX_OFF_R13(%rsi), %r13
        movq    DAGRT_CTX_OFF_R14(%rsi), %r14
        movq    DAGRT_CTX_OFF_R15(%rsi), %r15
        movq    DAGRT_CTX_OFF_RSP(%rsi), %rsp
        /* Loading MXCSR and above all the x87 control word is slow (fldcw is
         * microcoded and serialising on many cores), and nearly every switch
         * is between contexts with identical FP control state: compare the
         * control bits just saved with those to load, load only on change.
         * MXCSR bits 0-5 are sticky exception flags, caller-saved state that
         * changes all the time: they are left out of the comparison. */
        movl    DAGRT_CTX_OFF_MXCSR(%rdi), %eax
        movzwl  DAGRT_CTX_OFF_X87CW(%rdi), %edx
        xorl    DAGRT_CTX_OFF_MXCSR(%rsi), %eax
        andl    $0xffc0, %eax
        movzwl  DAGRT_CTX_OFF_X87CW(%rsi), %ecx
        xorl    %ecx, %edx
        orl     %edx, %eax
        jnz     1f
        popq    %rcx
        jmpq    *%rcx
1:      ldmxcsr DAGRT_CTX_OFF_MXCSR(%rsi)
        fldcw   DAGRT_CTX_OFF_X87CW(%rsi)
        popq    %rcx
        jmpq    *%rcx
        .cfi_endproc
        .size   rt_arch_switch, .-rt_arch_switch

        .globl  rt_arch_entry
        .hidden rt_arch_entry
        .type   rt_arch_entry, @function
        .p2align 4
rt_arch_entry:
        .cfi_startproc
        .cfi_undefined rip      /* outermost stack frame: unwinders stop here */
        movq    %r12, %rdi
        call    *%rbx
        ud2
        .cfi_endproc
        .size   rt_arch_entry, .-rt_arch_entry

        .section .note.GNU-stack, "", @progbits
