/*
 * switch_x86_64_win64.S - fiber context switch for x86-64 Windows (Win64 ABI).
 *
 * Save layout (offsets from ctx_x86_64_win64.h, static_asserted in C):
 *   0 rbx | 8 rbp | 16 rdi | 24 rsi | 32 r12 | 40 r13 | 48 r14 | 56 r15
 *   64 rsp | 72 TIB StackBase | 80 TIB StackLimit | 88 DeallocationStack
 *   96 mxcsr (4) | 100 x87 control word (2) | 104 GuaranteedStackBytes (4)
 *   112 xmm6..xmm15 | size 272
 *
 * void rt_arch_switch(rt_arch_ctx *from (rcx), const rt_arch_ctx *to (rdx))
 *   Stores the Win64 callee-saved registers, rsp (which points at our
 *   return address), the FP control state and the thread's stack bounds
 *   from the TIB into *from, loads the same from *to and returns on the
 *   other stack. The TIB fields (and the TEB's stack guarantee) are written just before rsp changes, so
 *   that the system always sees bounds that match the stack in use, as
 *   far as anything but these few instructions can tell. Like the System V
 *   switch it returns with pop + indirect jmp (see switch_x86_64_sysv.S).
 *   movups: a rt_arch_ctx is only 8-byte aligned inside its fiber.
 *
 * rt_arch_entry: first code a new context runs. rt_arch_make leaves
 *   rsp 8 mod 16 here with a zero "return address" at [rsp] and 32 bytes
 *   above it (a caller's shadow space), as after a call. The prologue
 *   makes the entry function's shadow space and 16-byte alignment; its
 *   unwind info (.seh_stackalloc) lets an unwinder step out of it to the
 *   zero return address, where stack walks end.
 */
#include "ctx_x86_64_win64.h"

        .text

        .globl  rt_arch_switch
        .def    rt_arch_switch; .scl 2; .type 32; .endef
        .p2align 4
rt_arch_switch:
        .seh_proc rt_arch_switch
        .seh_endprologue
        movq    %rbx, DAGRT_CTX_OFF_RBX(%rcx)
        movq    %rbp, DAGRT_CTX_OFF_RBP(%rcx)
        movq    %rdi, DAGRT_CTX_OFF_RDI(%rcx)
        movq    %rsi, DAGRT_CTX_OFF_RSI(%rcx)
        movq    %r12, DAGRT_CTX_OFF_R12(%rcx)
        movq    %r13, DAGRT_CTX_OFF_R13(%rcx)
        movq    %r14, DAGRT_CTX_OFF_R14(%rcx)
        movq    %r15, DAGRT_CTX_OFF_R15(%rcx)
        movq    %rsp, DAGRT_CTX_OFF_RSP(%rcx)
        movq    %gs:DAGRT_TEB_STACK_BASE, %rax
        movq    %gs:DAGRT_TEB_STACK_LIMIT, %r8
        movq    %gs:DAGRT_TEB_DEALLOC, %r9
        movq    %rax, DAGRT_CTX_OFF_STACK_BASE(%rcx)
        movq    %r8, DAGRT_CTX_OFF_STACK_LIMIT(%rcx)
        movq    %r9, DAGRT_CTX_OFF_DEALLOC(%rcx)
        movl    %gs:DAGRT_TEB_GUARANTEE, %eax
        movl    %eax, DAGRT_CTX_OFF_GUARANTEE(%rcx)
        stmxcsr DAGRT_CTX_OFF_MXCSR(%rcx)
        fnstcw  DAGRT_CTX_OFF_X87CW(%rcx)
        movups  %xmm6,  DAGRT_CTX_OFF_XMM6 +   0(%rcx)
        movups  %xmm7,  DAGRT_CTX_OFF_XMM6 +  16(%rcx)
        movups  %xmm8,  DAGRT_CTX_OFF_XMM6 +  32(%rcx)
        movups  %xmm9,  DAGRT_CTX_OFF_XMM6 +  48(%rcx)
        movups  %xmm10, DAGRT_CTX_OFF_XMM6 +  64(%rcx)
        movups  %xmm11, DAGRT_CTX_OFF_XMM6 +  80(%rcx)
        movups  %xmm12, DAGRT_CTX_OFF_XMM6 +  96(%rcx)
        movups  %xmm13, DAGRT_CTX_OFF_XMM6 + 112(%rcx)
        movups  %xmm14, DAGRT_CTX_OFF_XMM6 + 128(%rcx)
        movups  %xmm15, DAGRT_CTX_OFF_XMM6 + 144(%rcx)

        movups  DAGRT_CTX_OFF_XMM6 +   0(%rdx), %xmm6
        movups  DAGRT_CTX_OFF_XMM6 +  16(%rdx), %xmm7
        movups  DAGRT_CTX_OFF_XMM6 +  32(%rdx), %xmm8
        movups  DAGRT_CTX_OFF_XMM6 +  48(%rdx), %xmm9
        movups  DAGRT_CTX_OFF_XMM6 +  64(%rdx), %xmm10
        movups  DAGRT_CTX_OFF_XMM6 +  80(%rdx), %xmm11
        movups  DAGRT_CTX_OFF_XMM6 +  96(%rdx), %xmm12
        movups  DAGRT_CTX_OFF_XMM6 + 112(%rdx), %xmm13
        movups  DAGRT_CTX_OFF_XMM6 + 128(%rdx), %xmm14
        movups  DAGRT_CTX_OFF_XMM6 + 144(%rdx), %xmm15
        movq    DAGRT_CTX_OFF_RBX(%rdx), %rbx
        movq    DAGRT_CTX_OFF_RBP(%rdx), %rbp
        movq    DAGRT_CTX_OFF_RDI(%rdx), %rdi
        movq    DAGRT_CTX_OFF_RSI(%rdx), %rsi
        movq    DAGRT_CTX_OFF_R12(%rdx), %r12
        movq    DAGRT_CTX_OFF_R13(%rdx), %r13
        movq    DAGRT_CTX_OFF_R14(%rdx), %r14
        movq    DAGRT_CTX_OFF_R15(%rdx), %r15
        movq    DAGRT_CTX_OFF_STACK_BASE(%rdx), %rax
        movq    DAGRT_CTX_OFF_STACK_LIMIT(%rdx), %r8
        movq    DAGRT_CTX_OFF_DEALLOC(%rdx), %r9
        movq    %rax, %gs:DAGRT_TEB_STACK_BASE
        movq    %r8, %gs:DAGRT_TEB_STACK_LIMIT
        movq    %r9, %gs:DAGRT_TEB_DEALLOC
        movl    DAGRT_CTX_OFF_GUARANTEE(%rdx), %eax
        movl    %eax, %gs:DAGRT_TEB_GUARANTEE
        movq    DAGRT_CTX_OFF_RSP(%rdx), %rsp
        /* FP control state: loaded only when it differs, as in the System V
         * switch (fldcw is slow; MXCSR bits 0-5 are sticky flags, left out). */
        movl    DAGRT_CTX_OFF_MXCSR(%rcx), %eax
        movzwl  DAGRT_CTX_OFF_X87CW(%rcx), %r8d
        xorl    DAGRT_CTX_OFF_MXCSR(%rdx), %eax
        andl    $0xffc0, %eax
        movzwl  DAGRT_CTX_OFF_X87CW(%rdx), %r9d
        xorl    %r9d, %r8d
        orl     %r8d, %eax
        jnz     1f
        popq    %r10
        jmpq    *%r10
1:      ldmxcsr DAGRT_CTX_OFF_MXCSR(%rdx)
        fldcw   DAGRT_CTX_OFF_X87CW(%rdx)
        popq    %r10
        jmpq    *%r10
        .seh_endproc

        .globl  rt_arch_entry
        .def    rt_arch_entry; .scl 2; .type 32; .endef
        .p2align 4
rt_arch_entry:
        .seh_proc rt_arch_entry
        subq    $40, %rsp       /* 32 bytes of shadow space + 8: 16-aligned */
        .seh_stackalloc 40
        .seh_endprologue
        movq    %r12, %rcx
        call    *%rbx
        ud2                     /* the entry function never returns */
        .seh_endproc
