/*
 * switch_aarch64_aapcs.S - fiber context switch for AArch64 (AAPCS64).
 *
 * Save layout (offsets from ctx_aarch64.h, static_asserted in C):
 *   0 x19 | 8 x20 | ... | 72 x28 | 80 x29 (fp) | 88 x30 (lr) | 96 sp
 *   104 fpcr | 112 d8 | 120 d9 | ... | 168 d15 | size 176
 *
 * void rt_arch_switch(rt_arch_ctx *from (x0), const rt_arch_ctx *to (x1))
 *   Stores x19-x30, sp, d8-d15 and FPCR into *from, loads them from *to
 *   (FPCR only when it differs) and returns through the loaded x30 on the
 *   other stack.
 *
 * rt_arch_entry: first code a new context runs (rt_arch_make puts its
 *   address in the x30 slot): calls x19(x20); the entry function never
 *   returns, brk traps if it does.
 */
#include "ctx_aarch64.h"

        .text

        .globl  rt_arch_switch
        .hidden rt_arch_switch
        .type   rt_arch_switch, %function
        .p2align 4
rt_arch_switch:
        .cfi_startproc
        stp     x19, x20, [x0, #DAGRT_CTX_OFF_X19]
        stp     x21, x22, [x0, #DAGRT_CTX_OFF_X21]
        stp     x23, x24, [x0, #DAGRT_CTX_OFF_X23]
        stp     x25, x26, [x0, #DAGRT_CTX_OFF_X25]
        stp     x27, x28, [x0, #DAGRT_CTX_OFF_X27]
        stp     x29, x30, [x0, #DAGRT_CTX_OFF_X29]
        mov     x9, sp
        str     x9, [x0, #DAGRT_CTX_OFF_SP]
        stp     d8, d9,   [x0, #DAGRT_CTX_OFF_D8]
        stp     d10, d11, [x0, #DAGRT_CTX_OFF_D10]
        stp     d12, d13, [x0, #DAGRT_CTX_OFF_D12]
        stp     d14, d15, [x0, #DAGRT_CTX_OFF_D14]
        mrs     x12, fpcr
        str     x12, [x0, #DAGRT_CTX_OFF_FPCR]

        ldp     x19, x20, [x1, #DAGRT_CTX_OFF_X19]
        ldp     x21, x22, [x1, #DAGRT_CTX_OFF_X21]
        ldp     x23, x24, [x1, #DAGRT_CTX_OFF_X23]
        ldp     x25, x26, [x1, #DAGRT_CTX_OFF_X25]
        ldp     x27, x28, [x1, #DAGRT_CTX_OFF_X27]
        ldp     x29, x30, [x1, #DAGRT_CTX_OFF_X29]
        ldr     x9, [x1, #DAGRT_CTX_OFF_SP]
        mov     sp, x9
        ldp     d8, d9,   [x1, #DAGRT_CTX_OFF_D8]
        ldp     d10, d11, [x1, #DAGRT_CTX_OFF_D10]
        ldp     d12, d13, [x1, #DAGRT_CTX_OFF_D12]
        ldp     d14, d15, [x1, #DAGRT_CTX_OFF_D14]
        /* Writing FPCR can serialise the pipeline, and nearly every switch
         * is between contexts with the same value: write it only on change. */
        ldr     x13, [x1, #DAGRT_CTX_OFF_FPCR]
        cmp     x12, x13
        b.eq    1f
        msr     fpcr, x13
1:      ret
        .cfi_endproc
        .size   rt_arch_switch, .-rt_arch_switch

        .globl  rt_arch_entry
        .hidden rt_arch_entry
        .type   rt_arch_entry, %function
        .p2align 4
rt_arch_entry:
        .cfi_startproc
        .cfi_undefined x30      /* outermost stack frame: unwinders stop here */
        mov     x0, x20
        blr     x19
        brk     #0
        .cfi_endproc
        .size   rt_arch_entry, .-rt_arch_entry

        .section .note.GNU-stack, "", %progbits
