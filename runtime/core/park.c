/*
 * core/park.c - the parker (see core/park.h). States: EMPTY, NOTIFIED (a token is
 * waiting), PARKED (the owner sleeps or is about to).
 *
 * park:   fetch_sub(1): NOTIFIED->EMPTY means a token was there: return.
 *         EMPTY->PARKED: sleep while state == PARKED (rt_os_wait32 compares
 *         atomically with going to sleep, so an unpark between our fetch_sub
 *         and the wait makes the wait return at once).
 * unpark: exchange(NOTIFIED); if it was PARKED, wake the sleeper.
 * The Promela model tests/models/park.pml covers this token with the idle
 * announcement protocol that sits on top of it (core/idle.c).
 */
#include "park.h"

#include "../os/os.h"

void rt_parker_init(rt_parker *p)
{
    atomic_init(&p->state, RT_PARK_EMPTY);
    atomic_init(&p->waker_cpu, -1);
}
void rt_parker_fini(rt_parker *p) { (void)p; }

int rt_park(rt_parker *p)
{
    /* acquire: whatever the unparker published before its release exchange
     * is visible to us once we consume its token. */
    if (atomic_fetch_sub_explicit(&p->state, 1, memory_order_acquire) == RT_PARK_NOTIFIED)
        return 0;
    for (;;) {
        rt_os_wait32(&p->state, RT_PARK_PARKED);
        uint32_t expect = RT_PARK_NOTIFIED;
        /* acquire: as above. relaxed on failure: still PARKED (spurious
         * wake-up), so we sleep again. */
        if (atomic_compare_exchange_strong_explicit(&p->state, &expect, RT_PARK_EMPTY,
                memory_order_acquire, memory_order_relaxed)) {
            /* relaxed: a placement hint; a stale value only changes how
             * long the caller polls before its next park. */
            int w = atomic_load_explicit(&p->waker_cpu, memory_order_relaxed);
            return w >= 0 && w == rt_os_cpu_current();
        }
    }
}

int rt_park_until(rt_parker *p, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX)
        return rt_park(p);
    /* acquire: as in rt_park. */
    if (atomic_fetch_sub_explicit(&p->state, 1, memory_order_acquire) == RT_PARK_NOTIFIED)
        return 0;
    for (;;) {
        rt_os_wait32_until(&p->state, RT_PARK_PARKED, deadline_ns);
        uint32_t expect = RT_PARK_NOTIFIED;
        /* acquire, relaxed on failure: as in rt_park. */
        if (atomic_compare_exchange_strong_explicit(&p->state, &expect, RT_PARK_EMPTY,
                memory_order_acquire, memory_order_relaxed))
            return 0;
        if (rt_os_now_ns() >= deadline_ns) {
            /* Timed out: leave PARKED for EMPTY. relaxed: nothing was
             * published to us. If an unpark's exchange came in between, the
             * CAS fails and the token is there: consume it (acquire). */
            expect = RT_PARK_PARKED;
            if (atomic_compare_exchange_strong_explicit(&p->state, &expect, RT_PARK_EMPTY,
                    memory_order_relaxed, memory_order_relaxed))
                return 0;
            /* acquire: reads the unparker's release exchange. Only we leave
             * NOTIFIED, so this takes the token (two unparks are one token). */
            atomic_exchange_explicit(&p->state, RT_PARK_EMPTY, memory_order_acquire);
            return 0;
        }
    }
}

void rt_unpark(rt_parker *p)
{
    /* release: pairs with park's acquire. */
    if (atomic_exchange_explicit(&p->state, RT_PARK_NOTIFIED, memory_order_release) == RT_PARK_PARKED) {
        /* relaxed: a hint read by the sleeper after its wait returns; only
         * paid on a real sleep, where the system call dwarfs it. */
        atomic_store_explicit(&p->waker_cpu, rt_os_cpu_current(), memory_order_relaxed);
        rt_os_wake32_one(&p->state);
    }
}
