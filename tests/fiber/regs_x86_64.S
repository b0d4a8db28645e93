/*
 * regs_x86_64.S - test helpers for the register-preservation test.
 *
 * void regs_probe(rt_arch_ctx *self, rt_arch_ctx *other, uint64_t out[8])
 *   Loads known patterns into every callee-saved register, MXCSR and the
 *   x87 control word, switches to *other with the raw rt_arch_switch,
 *   and when switched back stores what it finds into
 *   out = {rbx, rbp, r12, r13, r14, r15, mxcsr, x87cw}; then restores the
 *   caller's registers and FP control state.
 *
 * void regs_clobber(rt_arch_ctx *self, rt_arch_ctx *other)
 *   Puts different garbage in all of them and switches to *other; restores
 *   its caller's state if it is ever resumed.
 */
        .text

        .globl  regs_probe
        .type   regs_probe, @function
regs_probe:
        pushq   %rbx
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $24, %rsp               /* 8(out) 8(mxcsr,x87) 8(pad): 16-aligned */
        movq    %rdx, 0(%rsp)
        stmxcsr 8(%rsp)
        fnstcw  12(%rsp)
        movabsq $0x1111111111111111, %rbx
        movabsq $0x2222222222222222, %rbp
        movabsq $0x3333333333333333, %r12
        movabsq $0x4444444444444444, %r13
        movabsq $0x5555555555555555, %r14
        movabsq $0x6666666666666666, %r15
        movl    $0xffc0, 16(%rsp)       /* RC=toward zero, FTZ, DAZ, all masked */
        ldmxcsr 16(%rsp)
        movw    $0x0f7f, 16(%rsp)       /* RC=toward zero, PC=extended, all masked */
        fldcw   16(%rsp)
        call    rt_arch_switch
        movq    0(%rsp), %rax
        movq    %rbx, 0(%rax)
        movq    %rbp, 8(%rax)
        movq    %r12, 16(%rax)
        movq    %r13, 24(%rax)
        movq    %r14, 32(%rax)
        movq    %r15, 40(%rax)
        movq    $0, 48(%rax)
        stmxcsr 48(%rax)
        movq    $0, 56(%rax)
        fnstcw  56(%rax)
        ldmxcsr 8(%rsp)
        fldcw   12(%rsp)
        addq    $24, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        ret
        .size   regs_probe, .-regs_probe

        .globl  regs_clobber
        .type   regs_clobber, @function
regs_clobber:
        pushq   %rbx
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $24, %rsp
        stmxcsr 8(%rsp)
        fnstcw  12(%rsp)
        movq    $-1, %rbx
        movq    $-2, %rbp
        movq    $-3, %r12
        movq    $-4, %r13
        movq    $-5, %r14
        movq    $-6, %r15
        movl    $0x3f80, 16(%rsp)       /* RC=down, no FTZ/DAZ */
        ldmxcsr 16(%rsp)
        movw    $0x007f, 16(%rsp)       /* RC=nearest, PC=single */
        fldcw   16(%rsp)
        call    rt_arch_switch
        ldmxcsr 8(%rsp)
        fldcw   12(%rsp)
        addq    $24, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        ret
        .size   regs_clobber, .-regs_clobber

        .section .note.GNU-stack, "", @progbits
