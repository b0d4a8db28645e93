/*
 * regs_x86_64_win64.S - the register-preservation test's helpers for the
 * Win64 ABI (tests/fiber/regs_x86_64.S is the System V one).
 *
 * void regs_probe(rt_arch_ctx *self (rcx), rt_arch_ctx *other (rdx), uint64_t out[30] (r8))
 *   Loads known patterns into every Win64 callee-saved register (rbx, rbp,
 *   rdi, rsi, r12-r15, xmm6-xmm15), MXCSR and the x87 control word,
 *   switches to *other with the raw rt_arch_switch, and when switched
 *   back stores what it finds into out = {rbx, rbp, rdi, rsi, r12, r13,
 *   r14, r15, mxcsr, x87cw, xmm6.lo, xmm6.hi, ..., xmm15.lo, xmm15.hi};
 *   then restores its caller's registers and FP control state.
 *
 * void regs_clobber(rt_arch_ctx *self (rcx), rt_arch_ctx *other (rdx))
 *   Puts different garbage in all of them and switches to *other; restores
 *   its caller's state if it is ever resumed.
 *
 * Frame of both (after the 8 pushes rsp is 8 mod 16; 216 more makes the
 * call's rsp 16-aligned): [0,32) shadow space for the call, 32 out,
 * 40 saved mxcsr, 44 saved x87 cw, 48 scratch, [56,216) saved xmm6-xmm15.
 */
        .section .rdata, "dr"
        .p2align 4
regs_xmm_pattern:                       /* xmm(6+i) = {0x0606..00i0, 0x6060..00i0} */
        .quad 0x0606000000000600, 0x6060000000006000
        .quad 0x0606000000000610, 0x6060000000006010
        .quad 0x0606000000000620, 0x6060000000006020
        .quad 0x0606000000000630, 0x6060000000006030
        .quad 0x0606000000000640, 0x6060000000006040
        .quad 0x0606000000000650, 0x6060000000006050
        .quad 0x0606000000000660, 0x6060000000006060
        .quad 0x0606000000000670, 0x6060000000006070
        .quad 0x0606000000000680, 0x6060000000006080
        .quad 0x0606000000000690, 0x6060000000006090
regs_xmm_garbage:
        .quad -1, -1, -2, -2, -3, -3, -4, -4, -5, -5
        .quad -6, -6, -7, -7, -8, -8, -9, -9, -10, -10

        .text

        .macro  regs_enter
        pushq   %rbx
        pushq   %rbp
        pushq   %rdi
        pushq   %rsi
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        subq    $216, %rsp
        movups  %xmm6,  56(%rsp)
        movups  %xmm7,  72(%rsp)
        movups  %xmm8,  88(%rsp)
        movups  %xmm9,  104(%rsp)
        movups  %xmm10, 120(%rsp)
        movups  %xmm11, 136(%rsp)
        movups  %xmm12, 152(%rsp)
        movups  %xmm13, 168(%rsp)
        movups  %xmm14, 184(%rsp)
        movups  %xmm15, 200(%rsp)
        stmxcsr 40(%rsp)
        fnstcw  44(%rsp)
        .endm

        .macro  regs_leave
        ldmxcsr 40(%rsp)
        fldcw   44(%rsp)
        movups  56(%rsp),  %xmm6
        movups  72(%rsp),  %xmm7
        movups  88(%rsp),  %xmm8
        movups  104(%rsp), %xmm9
        movups  120(%rsp), %xmm10
        movups  136(%rsp), %xmm11
        movups  152(%rsp), %xmm12
        movups  168(%rsp), %xmm13
        movups  184(%rsp), %xmm14
        movups  200(%rsp), %xmm15
        addq    $216, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rsi
        popq    %rdi
        popq    %rbp
        popq    %rbx
        ret
        .endm

        .macro  regs_load_xmm table
        leaq    \table(%rip), %rax
        movups  0(%rax),   %xmm6
        movups  16(%rax),  %xmm7
        movups  32(%rax),  %xmm8
        movups  48(%rax),  %xmm9
        movups  64(%rax),  %xmm10
        movups  80(%rax),  %xmm11
        movups  96(%rax),  %xmm12
        movups  112(%rax), %xmm13
        movups  128(%rax), %xmm14
        movups  144(%rax), %xmm15
        .endm

        .globl  regs_probe
        .def    regs_probe; .scl 2; .type 32; .endef
regs_probe:
        regs_enter
        movq    %r8, 32(%rsp)
        movabsq $0x1111111111111111, %rbx
        movabsq $0x2222222222222222, %rbp
        movabsq $0x7777777777777777, %rdi
        movabsq $0x8888888888888888, %rsi
        movabsq $0x3333333333333333, %r12
        movabsq $0x4444444444444444, %r13
        movabsq $0x5555555555555555, %r14
        movabsq $0x6666666666666666, %r15
        regs_load_xmm regs_xmm_pattern
        movl    $0xffc0, 48(%rsp)       /* RC=toward zero, FTZ, DAZ, all masked */
        ldmxcsr 48(%rsp)
        movw    $0x0f7f, 48(%rsp)       /* RC=toward zero, PC=extended, all masked */
        fldcw   48(%rsp)
        call    rt_arch_switch
        movq    32(%rsp), %rax
        movq    %rbx, 0(%rax)
        movq    %rbp, 8(%rax)
        movq    %rdi, 16(%rax)
        movq    %rsi, 24(%rax)
        movq    %r12, 32(%rax)
        movq    %r13, 40(%rax)
        movq    %r14, 48(%rax)
        movq    %r15, 56(%rax)
        movq    $0, 64(%rax)
        stmxcsr 64(%rax)
        movq    $0, 72(%rax)
        fnstcw  72(%rax)
        movups  %xmm6,  80(%rax)
        movups  %xmm7,  96(%rax)
        movups  %xmm8,  112(%rax)
        movups  %xmm9,  128(%rax)
        movups  %xmm10, 144(%rax)
        movups  %xmm11, 160(%rax)
        movups  %xmm12, 176(%rax)
        movups  %xmm13, 192(%rax)
        movups  %xmm14, 208(%rax)
        movups  %xmm15, 224(%rax)
        regs_leave

        .globl  regs_clobber
        .def    regs_clobber; .scl 2; .type 32; .endef
regs_clobber:
        regs_enter
        movq    $-1, %rbx
        movq    $-2, %rbp
        movq    $-7, %rdi
        movq    $-8, %rsi
        movq    $-3, %r12
        movq    $-4, %r13
        movq    $-5, %r14
        movq    $-6, %r15
        regs_load_xmm regs_xmm_garbage
        movl    $0x3f80, 48(%rsp)       /* RC=down, no FTZ/DAZ */
        ldmxcsr 48(%rsp)
        movw    $0x007f, 48(%rsp)       /* RC=nearest, PC=single */
        fldcw   48(%rsp)
        call    rt_arch_switch
        regs_leave
