/*
 * wait/spin.h - the wait wing's one spinlock (internal): a 32-bit word, 0
 * free and 1 held, for locks held over a few list operations and never
 * across a wait, a switch or a callback: a sync object's wait queue
 * (wait/sync.c) and a cancel scope tree's links (wait/cancel.c). A
 * waiter spins on the word with the CPU's pause for a while, then yields
 * in case the holder was preempted. Include after core/core.h or alone.
 */
#ifndef DAGRT_WAIT_SPIN_H
#define DAGRT_WAIT_SPIN_H

#include <stdatomic.h>
#include <stdint.h>

#include "../core/core.h"

static inline void rt_spin_lock(_Atomic uint32_t *l)
{
    /* acquire: the critical section sees the previous holder's writes. */
    for (unsigned i = 0;; i++) {
        if (atomic_exchange_explicit(l, 1, memory_order_acquire) == 0)
            return;
        /* relaxed: a spin on the word before trying again. */
        while (atomic_load_explicit(l, memory_order_relaxed) != 0) {
            if (++i < 64)
                rt_cpu_relax();
            else
                rt_os_yield();
        }
    }
}

static inline void rt_spin_unlock(_Atomic uint32_t *l)
{
    /* release: pairs with rt_spin_lock's acquire. */
    atomic_store_explicit(l, 0, memory_order_release);
}

#endif
