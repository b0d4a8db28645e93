/*
 * os/reactor_uring_ring.c - the io_uring reactor's rings and its
 * completion thread (the design is reactor_uring.c's top comment: RINGS,
 * REAPING): every slot's ring made at create and put in use by the
 * slot's first call, the thread's drain of the rings in use and its sleep
 * on all of them, create and destroy. One
 * call's path (submit, cancel, flush, reap) is reactor_uring.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "reactor_uring.h"

/* A slot's ring, made at create (NULL: the kernel refused one more, or
 * memory ran out). Not yet anyone's: ring_start publishes it. */
static uring_ring *ring_new(uring_reactor *u, unsigned slot)
{
    uring_ring *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (rt_os_mutex_init(&g->sq) != 0) {
        free(g);
        return NULL;
    }
    struct io_uring_params prm;
    memset(&prm, 0, sizeof prm);
    /* CQSIZE: room for a completion of every op in flight on the ring
     * and the cancels beside them; NODROP kernels keep the overflow
     * anyway (the completion thread moves it back: REAPING). */
    prm.flags = IORING_SETUP_CQSIZE;
    prm.cq_entries = u->entries * 4;
    if (io_uring_queue_init_params(u->entries, &g->ring, &prm) < 0) {
        rt_os_mutex_fini(&g->sq);
        free(g);
        return NULL;
    }
    g->slot = slot;
    return g;
}

/* A slot's first submit: its ring (made at create) put in use, which the
 * completion thread watches before anyone submits to it; the shared
 * slot's for good when the kernel refused this slot one. */
static uring_ring *ring_start(uring_reactor *u, unsigned slot)
{
    rt_os_mutex_lock(&u->make_mu);
    /* relaxed: make_mu orders the rings this function started. */
    uring_ring *g = atomic_load_explicit(&u->rings[slot], memory_order_relaxed);
    if (g) {
        rt_os_mutex_unlock(&u->make_mu);
        return g;
    }
    g = u->made[slot];
    if (!g) {
        /* release: see ring_at. Not in live[]: the shared ring is already. */
        g = ring_live(u, 0);
        atomic_store_explicit(&u->rings[slot], g, memory_order_release);
        rt_os_mutex_unlock(&u->make_mu);
        return g;
    }
    unsigned n = atomic_load_explicit(&u->nlive, memory_order_relaxed);   /* relaxed: make_mu */
    u->live[n] = slot;
    atomic_store_explicit(&u->rings[slot], g, memory_order_release);   /* release: see ring_at */
    /* seq_cst: release for rings_made, and a Dekker pair with the
     * completion thread's sleep (kernel_sleep: it writes asleep, then
     * reads nlive; we write nlive, then read asleep): either it
     * watches this ring, or we kick it awake to look again. */
    atomic_store_explicit(&u->nlive, n + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&u->asleep, memory_order_seq_cst)) {
        uint64_t one = 1;
        (void)!write(u->kick, &one, sizeof one);
    }
    rt_os_mutex_unlock(&u->make_mu);
    return g;
}

/* The ring a submit from this slot goes to: its own, put in use by its
 * first submit, or the shared slot's when the kernel refused it one. */
uring_ring *rt_uring_ring_for(uring_reactor *u, unsigned slot)
{
    if (slot >= u->nslots)
        slot = u->nslots - 1;
    uring_ring *g = ring_at(u, slot);
    return g != NULL ? g : ring_start(u, slot);
}

#define GATE_TICK_NS 1000000u   /* 1 ms: how long a completion may wait for a busy worker */
#define LEASE_TICK_NS 200000u   /* 200 us: for the main thread's lease (wait/io_reap.c, LEASE) */

/* The completion thread's drain of every ring (REAPING): whether it should
 * turn again at once (a full batch, or an overflow moved back into a CQ). */
static bool drain_all(uring_reactor *u, bool *stop)
{
    bool again = false;
    unsigned nl = rings_made(u);
    for (unsigned i = 0; i < nl && !*stop; i++) {
        uring_ring *g = ring_live(u, i);
        /* Wait for a consumer in progress. */
        while (!cq_trylock(g))
            rt_os_yield();
        if (rt_uring_serve(g, REAP_BATCH, true, stop) == REAP_BATCH)
            again = true;
        /* Completions the kernel could not post (the CQ was full) wait in
         * its overflow list, which only a GETEVENTS call moves back; the
         * ring's descriptor reads ready meanwhile. */
        if (io_uring_cq_has_overflow(&g->ring)) {
            (void)io_uring_enter((unsigned)g->ring.ring_fd, 0, 0, IORING_ENTER_GETEVENTS, NULL);
            again = true;
        }
    }
    return again;
}

/* The completion thread's sleep in the kernel (REAPING): every ring's
 * descriptor in the epoll set, level-triggered (adding one whose CQ holds
 * an entry makes it ready at once), then out of it again once awake: a
 * ring in the set costs every completion the kernel posts on it a wake-up
 * call into epoll, which the thread wants only while it sleeps there.
 * Model: tests/models/io_watch.pml (a ring put in use meanwhile; negative
 * controls: ring_start reads asleep first, no kick). */
static void kernel_sleep(uring_reactor *u)
{
    /* seq_cst: ring_start's pair (there). */
    atomic_store_explicit(&u->asleep, 1, memory_order_seq_cst);
    unsigned nl = atomic_load_explicit(&u->nlive, memory_order_seq_cst);
    bool fail = false;
    for (unsigned i = 0; i < nl; i++) {
        uring_ring *g = ring_live(u, i);
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = g->slot };
        if (!g->watched && epoll_ctl(u->ep, EPOLL_CTL_ADD, g->ring.ring_fd, &ev) != 0)
            fail = true;
        else
            g->watched = true;
    }
    struct epoll_event ev[8];
    int e = fail ? -1 : epoll_wait(u->ep, ev, 8, -1);
    if (fail || (e < 0 && errno != EINTR)) {
        rt_os_write_err("dagrt: fatal: epoll (waiting for completions) failed\n");
        abort();
    }
    /* relaxed: only kicks for nothing from here on (ring_start). */
    atomic_store_explicit(&u->asleep, 0, memory_order_relaxed);
    uint64_t n;
    (void)!read(u->kick, &n, sizeof n);   /* non-blocking: clears a kick */
    for (unsigned i = 0; i < nl; i++) {
        uring_ring *g = ring_live(u, i);
        if (g->watched)
            (void)epoll_ctl(u->ep, EPOLL_CTL_DEL, g->ring.ring_fd, NULL);
        g->watched = false;
    }
}

static void completion_main(void *arg)
{
    uring_reactor *u = arg;
    rt_os_thread_name("dagrt-io");
    uint64_t lease_mark = 0;   /* when this thread last marked the lease */
    for (;;) {
        /* What deferred submits left queued (BATCHING): at every turn. */
        rt_uring_flush_all(u);
        bool stop = false;
        bool again = drain_all(u, &stop);
        if (stop)
            return;
        if (again)
            continue;
        /* While a reaping worker is awake, completions are its to serve:
         * sleep on the gate, not in the kernel (whose wake-up per
         * completion would cost the submitter a cross-CPU wake), and drain
         * what is left once a tick (a worker busy in a long task serves
         * nothing meanwhile). The last worker to park bumps the gate.
         * seq_cst: the gate, then the count (wait/io_reap.c, rt_io_park). */
        atomic_store_explicit(&u->base.gated, 1, memory_order_seq_cst);   /* seq_cst: as the gate */
        uint32_t gen = atomic_load_explicit(&u->base.gate, memory_order_seq_cst);
        /* acquire: pairs with wait/io.c's release store of the pointer. */
        _Atomic int *aw = atomic_load_explicit(&u->base.awake, memory_order_acquire);
        if (aw && atomic_load_explicit(aw, memory_order_seq_cst) > 0) {
            rt_os_wait32_until(&u->base.gate, gen, rt_os_now_ns() + GATE_TICK_NS);
            continue;
        }
        /* The main thread's lease alone (wait/io_reap.c, LEASE): a shorter tick,
         * marked at one and taken back at the next if unused meanwhile.
         * seq_cst: read after the count, as the count (the main thread
         * gives it back, then reads the count and gated). */
        uint32_t ls = atomic_load_explicit(&u->base.lease, memory_order_seq_cst);
        if (ls != RT_LEASE_NONE) {
            uint64_t now = rt_os_now_ns();
            if (ls == RT_LEASE_USED) {
                /* relaxed: the lease is a hint; a lost race leaves it USED. */
                if (atomic_compare_exchange_strong_explicit(&u->base.lease, &ls, RT_LEASE_MARKED,
                                                            memory_order_relaxed, memory_order_relaxed))
                    lease_mark = now;
            } else if (now - lease_mark >= LEASE_TICK_NS) {
                /* seq_cst: as the read above; a failure: used again. */
                atomic_compare_exchange_strong_explicit(&u->base.lease, &ls, RT_LEASE_NONE,
                                                        memory_order_seq_cst, memory_order_relaxed);
                continue;   /* drain once more, then the kernel */
            }
            rt_os_wait32_until(&u->base.gate, gen, now + LEASE_TICK_NS);
            continue;
        }
        /* relaxed: only a hint for the parkers from here on (they bump the
         * gate for nothing at worst). */
        atomic_store_explicit(&u->base.gated, 0, memory_order_relaxed);
        /* Nothing queued is left behind while we sleep (BATCHING). */
        rt_uring_flush_all(u);
        /* Sleep in the kernel until a CQ holds an entry (at once if one
         * does: posted after our drain, or left by a consumer). */
        kernel_sleep(u);
    }
}

static void ring_free(uring_ring *g)
{
    io_uring_queue_exit(&g->ring);
    rt_os_mutex_fini(&g->sq);
    free(g);
}

static void reactor_free(uring_reactor *u)
{
    for (unsigned i = 0; u->made && i < u->nslots; i++)
        if (u->made[i])
            ring_free(u->made[i]);
    if (u->ep >= 0)
        close(u->ep);
    if (u->kick >= 0)
        close(u->kick);
    rt_os_mutex_fini(&u->make_mu);
    free(u->rings);
    free(u->live);
    free(u->made);
    free(u);
}

void rt_uring_destroy(rt_reactor *r)
{
    uring_reactor *u = (uring_reactor *)r;
    uring_ring *g = ring_live(u, 0);
    rt_os_mutex_lock(&g->sq);
    struct io_uring_sqe *s = rt_uring_sqe_get(u, g);
    io_uring_prep_nop(s);
    io_uring_sqe_set_data64(s, TAG_STOP);
    unsigned n = rt_uring_publish(g);
    rt_os_mutex_unlock(&g->sq);
    rt_uring_enter(u, g, n);
    rt_os_thread_join(&u->thr);
    reactor_free(u);
}

static const rt_reactor_ops uring_ops = { rt_uring_submit, rt_uring_cancel, rt_uring_destroy, "io_uring", rt_uring_reap,
                                      rt_uring_flush };

rt_reactor *rt_reactor_uring_create(unsigned entries, unsigned nslots, int *err)
{
    uring_reactor *u = calloc(1, sizeof *u);
    if (nslots == 0)
        nslots = 1;
    if (!u || !(u->rings = calloc(nslots, sizeof *u->rings)) || !(u->live = calloc(nslots, sizeof *u->live)) ||
        !(u->made = calloc(nslots, sizeof *u->made)) || rt_os_mutex_init(&u->make_mu) != 0) {
        if (u) {
            free(u->rings);
            free(u->live);
            free(u->made);
        }
        free(u);
        *err = DAGRT_ENOMEM;
        return NULL;
    }
    u->base.ops = &uring_ops;
    u->base.concurrent = true;   /* a ring, and its sq lock, per slot */
    u->entries = entries;
    u->nslots = nslots;
    u->ep = epoll_create1(EPOLL_CLOEXEC);
    u->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event kev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };
    if (u->ep < 0 || u->kick < 0 || epoll_ctl(u->ep, EPOLL_CTL_ADD, u->kick, &kev) != 0) {
        reactor_free(u);
        *err = DAGRT_EIO;
        return NULL;
    }
    /* Every slot's ring now, so that a slot's first call (a task that
     * moved to another worker after many frames) allocates nothing and
     * makes no system call to set one up. The shared slot's first
     * (live[0]: destroy's STOP goes there); none: too old, disabled
     * (kernel.io_uring_disabled), or seccomp: the caller falls back. A
     * slot the kernel refuses a ring of its own shares that one. */
    if (!(u->made[nslots - 1] = ring_new(u, nslots - 1)) || !ring_start(u, nslots - 1)) {
        reactor_free(u);
        *err = DAGRT_EIO;
        return NULL;
    }
    for (unsigned i = 0; i + 1 < nslots; i++)
        u->made[i] = ring_new(u, i);
    if (rt_os_thread_start(&u->thr, completion_main, u) != 0) {
        reactor_free(u);
        *err = DAGRT_ETHREAD;
        return NULL;
    }
    return &u->base;
}
