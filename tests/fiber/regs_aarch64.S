/*
 * regs_aarch64.S - test helpers for the register-preservation test.
 *
 * void regs_probe(rt_arch_ctx *self, rt_arch_ctx *other, uint64_t out[19])
 *   Loads known patterns into x19-x29 and d8-d15, switches to *other with
 *   the raw rt_arch_switch, and when switched back stores what it finds
 *   into out = {x19..x29, d8..d15}; then restores the caller's registers.
 *
 * void regs_clobber(rt_arch_ctx *self, rt_arch_ctx *other)
 *   Puts different garbage in all of them and switches to *other.
 */
        .text

        .globl  regs_probe
        .type   regs_probe, %function
regs_probe:
        sub     sp, sp, #176
        stp     x19, x20, [sp, #0]
        stp     x21, x22, [sp, #16]
        stp     x23, x24, [sp, #32]
        stp     x25, x26, [sp, #48]
        stp     x27, x28, [sp, #64]
        stp     x29, x30, [sp, #80]
        stp     d8, d9,   [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        str     x2, [sp, #160]
        mov     x9, #0x1919
        movk    x9, #0x1919, lsl #48
        mov     x19, x9
        add     x20, x9, #1
        add     x21, x9, #2
        add     x22, x9, #3
        add     x23, x9, #4
        add     x24, x9, #5
        add     x25, x9, #6
        add     x26, x9, #7
        add     x27, x9, #8
        add     x28, x9, #9
        add     x29, x9, #10
        mov     x9, #0x0808
        movk    x9, #0x0808, lsl #48
        fmov    d8, x9
        add     x9, x9, #1
        fmov    d9, x9
        add     x9, x9, #1
        fmov    d10, x9
        add     x9, x9, #1
        fmov    d11, x9
        add     x9, x9, #1
        fmov    d12, x9
        add     x9, x9, #1
        fmov    d13, x9
        add     x9, x9, #1
        fmov    d14, x9
        add     x9, x9, #1
        fmov    d15, x9
        bl      rt_arch_switch
        ldr     x2, [sp, #160]
        stp     x19, x20, [x2, #0]
        stp     x21, x22, [x2, #16]
        stp     x23, x24, [x2, #32]
        stp     x25, x26, [x2, #48]
        stp     x27, x28, [x2, #64]
        str     x29, [x2, #80]
        str     d8, [x2, #88]
        str     d9, [x2, #96]
        str     d10, [x2, #104]
        str     d11, [x2, #112]
        str     d12, [x2, #120]
        str     d13, [x2, #128]
        str     d14, [x2, #136]
        str     d15, [x2, #144]
        ldp     x19, x20, [sp, #0]
        ldp     x21, x22, [sp, #16]
        ldp     x23, x24, [sp, #32]
        ldp     x25, x26, [sp, #48]
        ldp     x27, x28, [sp, #64]
        ldp     x29, x30, [sp, #80]
        ldp     d8, d9,   [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        add     sp, sp, #176
        ret
        .size   regs_probe, .-regs_probe

        .globl  regs_clobber
        .type   regs_clobber, %function
regs_clobber:
        sub     sp, sp, #176
        stp     x19, x20, [sp, #0]
        stp     x21, x22, [sp, #16]
        stp     x23, x24, [sp, #32]
        stp     x25, x26, [sp, #48]
        stp     x27, x28, [sp, #64]
        stp     x29, x30, [sp, #80]
        stp     d8, d9,   [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        mov     x19, #-1
        mov     x20, #-2
        mov     x21, #-3
        mov     x22, #-4
        mov     x23, #-5
        mov     x24, #-6
        mov     x25, #-7
        mov     x26, #-8
        mov     x27, #-9
        mov     x28, #-10
        mov     x29, #-11
        mov     x9, #-12
        fmov    d8, x9
        fmov    d9, x9
        fmov    d10, x9
        fmov    d11, x9
        fmov    d12, x9
        fmov    d13, x9
        fmov    d14, x9
        fmov    d15, x9
        bl      rt_arch_switch
        ldp     x19, x20, [sp, #0]
        ldp     x21, x22, [sp, #16]
        ldp     x23, x24, [sp, #32]
        ldp     x25, x26, [sp, #48]
        ldp     x27, x28, [sp, #64]
        ldp     x29, x30, [sp, #80]
        ldp     d8, d9,   [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        add     sp, sp, #176
        ret
        .size   regs_clobber, .-regs_clobber

        .section .note.GNU-stack, "", %progbits
