/*
 * os/reactor_uring.h - what the two halves of the io_uring reactor share
 * (internal; Linux with DAGRT_HAVE_URING): reactor_uring.c, one call's
 * path (submit, cancel, the flushes, the reaps, RESERVE; the design is
 * its top comment), and reactor_uring_ring.c, the rings' lives and the
 * completion thread (making a ring, the drain of every ring, the sleep on
 * all of them, create and destroy).
 */
#ifndef DAGRT_OS_REACTOR_URING_H
#define DAGRT_OS_REACTOR_URING_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "dagrt.h"
#include "os.h"
#include "reactor.h"

#define TAG_CANCEL ((uint64_t)1)     /* a cancel's own completion: ignored */
#define TAG_STOP   ((uint64_t)2)     /* destroy: the completion thread returns */
#define RF_CANCEL  1u                /* rflags: a cancel was issued for it */
#define RF_QUEUED  2u                /* rflags: submitted (the hand-off to the completion thread) */
#define RF_FIFO    4u                /* rflags: a pipe write waiting for room (FIFO WRITES) */
#define RF_RETRY   8u                /* rflags: its wait for room ended: write again (FIFO WRITES) */

typedef struct uring_reactor uring_reactor;
typedef struct uring_priv {
    struct msghdr m;
    struct iovec v;
    uring_reactor *u;            /* a pipe write's reactor, for its next wait (FIFO WRITES) */
} uring_priv;
_Static_assert(sizeof(uring_priv) <= sizeof(((rt_io_op *)0)->rpriv), "rpriv too small");

/* One slot's ring (RINGS). */
typedef struct uring_ring {
    struct io_uring ring;
    rt_os_mutex sq;              /* the SQ's one writer (BATCHING) */
    _Atomic uint32_t reaping;    /* the CQ's consumer lock (top of file) */
    /* Deferred SQEs queued and not yet published (a hint: sq orders it). */
    _Atomic uint32_t pending;
    unsigned slot;
    bool watched;                /* in the epoll set (the completion thread's own) */
} uring_ring;

struct uring_reactor {
    rt_reactor base;
    rt_os_thread thr;
    int ep;                      /* epoll over the rings' descriptors (REAPING) */
    int kick;                    /* an eventfd in that set: a ring put in use while it sleeps */
    _Atomic uint32_t asleep;     /* the completion thread is (about to be) in epoll_wait */
    unsigned entries;
    unsigned nslots;             /* the last one: threads outside the runtime */
    _Atomic(uring_ring *) *rings;   /* [nslots], each set by the slot's first submit */
    /* [nslots]: each slot's ring, made at create (NULL: the kernel refused
     * it one; it shares the shared slot's); constant after create. */
    uring_ring **made;
    /* The rings in use, in the order their slots first submitted: live[0]
     * is the shared slot's; nlive grows under make_mu only. */
    unsigned *live;
    _Atomic unsigned nlive;
    rt_os_mutex make_mu;
};

#define REAP_BATCH 32u   /* ops served per take (on the stack) */

static inline uring_ring *ring_at(uring_reactor *u, unsigned slot)
{
    /* acquire: pairs with ring_start's release, so the ring is whole. */
    return atomic_load_explicit(&u->rings[slot], memory_order_acquire);
}

/* The i-th ring in use (i < nlive). */
static inline uring_ring *ring_live(uring_reactor *u, unsigned i)
{
    return ring_at(u, u->live[i]);
}

static inline unsigned rings_made(uring_reactor *u)
{
    /* acquire: pairs with ring_start's release, so live[] up to it is written. */
    return atomic_load_explicit(&u->nlive, memory_order_acquire);
}

/* The CQ's consumer lock. acquire: the previous consumer's head and the
 * ops it finished are visible to us; release in unlock: ours to the next. */
static inline bool cq_trylock(uring_ring *g)
{
    return atomic_exchange_explicit(&g->reaping, 1, memory_order_acquire) == 0;
}

static inline void cq_unlock(uring_ring *g)
{
    atomic_store_explicit(&g->reaping, 0, memory_order_release);   /* release: see cq_trylock */
}

/* reactor_uring.c: the ops, and what the ring side calls. */
void rt_uring_submit(rt_reactor *r, rt_io_op *op);
void rt_uring_cancel(rt_reactor *r, rt_io_op *op);
unsigned rt_uring_reap(rt_reactor *r, unsigned slot, unsigned max);
void rt_uring_flush(rt_reactor *r, unsigned slot);
/* Every ring's deferred SQEs to the kernel (BATCHING). */
void rt_uring_flush_all(uring_reactor *u);
/* sq held: a free SQE (a full queue is handed over first); what is queued
 * made the kernel's to take, how many it has not taken; then, outside
 * sq, the system call that hands over n (ENTERING). */
struct io_uring_sqe *rt_uring_sqe_get(uring_reactor *u, uring_ring *g);
unsigned rt_uring_publish(uring_ring *g);
void rt_uring_enter(uring_reactor *u, uring_ring *g, unsigned n);
/* The CQ's lock held: takes up to max entries, lets the lock go, finishes
 * their ops; owner: the completion thread (it alone consumes TAG_STOP). */
unsigned rt_uring_serve(uring_ring *g, unsigned max, bool owner, bool *stop);

/* reactor_uring_ring.c. The ring a submit from slot goes to (put in use
 * by the slot's first call; the shared slot's when the kernel refused it
 * one at create). */
uring_ring *rt_uring_ring_for(uring_reactor *u, unsigned slot);
void rt_uring_destroy(rt_reactor *r);

#endif
