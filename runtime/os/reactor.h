/*
 * os/reactor.h - the reactor: the system half of the I/O calls (internal,
 * prefix rt_reactor_; wait/io.c is the portable half).
 *
 * wait/io.c fills an rt_io_op, hands it to rt_reactor_submit and waits; the
 * reactor carries it through the system and calls op->done(op) exactly
 * once, from whatever thread learnt the result (its completion thread, a
 * lane thread, or the submitter itself when the result came at once),
 * after its last access to op. One file per mechanism:
 *   reactor_uring.c  io_uring through liburing (Linux, DAGRT_HAVE_URING;
 *                    its rings and completion thread: reactor_uring_ring.c);
 *   reactor_epoll.c  the fallback: epoll for what can be polled, a blocking
 *                    lane of the runtime's own threads for regular files;
 *   reactor_iocp.c   Windows: an I/O completion port, and
 *   reactor_lane_win32.c
 *                    the blocking lane for handles not opened for
 *                    overlapped I/O (and everything, with the fallback
 *                    forced); what the two share is in reactor_win32.h.
 *
 * Locking: wait/io.c calls submit and cancel with its own lock held (one at a
 * time, and a cancel never overtakes its op's submit; a reactor that sets
 * `concurrent` gets one such lock per slot, op->slot's for a submit and
 * that op's own for its cancel, so submits from two slots may run at
 * once); done(op) never takes that lock. A reactor's own lock, if it has one, nests inside. A
 * reactor with flush may leave the system call of a submit without
 * op->defer to the flush that wait/io.c makes right after releasing its lock.
 */
#ifndef DAGRT_OS_REACTOR_H
#define DAGRT_OS_REACTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds, in dagrt.h's DAGRT_IO_* order. */
enum { RT_IO_READ, RT_IO_WRITE, RT_IO_RECVFROM, RT_IO_SENDTO, RT_IO_ACCEPT,
       RT_IO_CONNECT, RT_IO_POLL, RT_IO_KINDS };
/* Poll bits, dagrt.h's DAGRT_POLL_* values. */
enum { RT_IO_POLL_IN = 1, RT_IO_POLL_OUT = 2, RT_IO_POLL_ERR = 4 };

typedef struct rt_io_op rt_io_op;
struct rt_io_op {
    /* In (wait/io.c). */
    int kind;
    intptr_t h;
    void *buf;                /* read/recvfrom: out; write/sendto: in */
    size_t n;
    int64_t off;              /* read/write: < 0 the handle's position */
    void *addr;               /* recvfrom: out (may be NULL); sendto/connect: in */
    size_t addrlen;           /* recvfrom: in the room, out the length */
    unsigned events;          /* poll: RT_IO_POLL_* */
    bool defer;               /* may stay queued until a flush (a reactor with flush) */
    /* A poll that must not wait (its deadline had passed: dagrt_poll's
     * "looks once", like poll(2) with a timeout of 0): the reactor looks
     * at the handle once, on the submitting thread, and calls done before
     * submit returns, with the ready set in res (0: nothing ready; wait/io.c
     * makes that DAGRT_ETIMEDOUT) or the system's error. Never queued, so
     * never cancelled; defer is false. */
    bool once;
    unsigned slot;            /* the submitting thread's slot, < the reactor's nslots
                               * (its queue, where a reactor has one per thread) */
    void (*done)(rt_io_op *op);
    /* Out (the reactor, before done). */
    int64_t res;              /* bytes, the accepted handle, the ready set */
    int err;                  /* 0, or the system's error code */
    bool canceled;            /* ended by rt_reactor_cancel */
    /* The reactor's own. */
    _Atomic uint32_t rflags;
    int rwhere;
    rt_io_op *rnext, *rprev;
    _Alignas(16) unsigned char rpriv[128];
};

typedef struct rt_reactor rt_reactor;
typedef struct rt_reactor_ops {
    void (*submit)(rt_reactor *r, rt_io_op *op);
    /* Asks the system to end op early; done(op) still comes once (with
     * canceled set, or with the result that won the race). */
    void (*cancel)(rt_reactor *r, rt_io_op *op);
    /* Only once every op's done has been called. */
    void (*destroy)(rt_reactor *r);
    const char *name;
    /* Optional (a reactor may leave it NULL; added after name so that
     * positional initializers stay valid): serves, on the calling thread,
     * up to max completions that are already there, without blocking and
     * without a system call while there are none; returns how many it
     * served (done called for each). slot: the calling thread's (as
     * op->slot), whose queue it looks at first. Safe from any thread at
     * any time, outside wait/io.c's lock; a second caller while one is reaping
     * returns 0 at once. The reactor's own waiting thread stays the last
     * resort, so a completion nobody reaps this way is still served. */
    unsigned (*reap)(rt_reactor *r, unsigned slot, unsigned max);
    /* Optional, after reap: hands the system every op that a submit with
     * op->defer from slot left queued (every slot's with RT_IO_SLOT_ALL;
     * the reactor may also submit a deferred op at once, or more than
     * slot's), and every op a submit without op->defer left queued for it
     * (wait/io.c calls it after such a submit, outside its lock; the reactor
     * may serve there, as reap does, what that system call finished:
     * reactor_uring.c, RESERVE). Safe from any thread at any time,
     * outside wait/io.c's lock. wait/io.c defers only where a
     * thread it knows will flush (reactor_uring.c, BATCHING). */
    void (*flush)(rt_reactor *r, unsigned slot);
} rt_reactor_ops;
struct rt_reactor {
    const rt_reactor_ops *ops;
    /* Set at creation: submits from different slots may run at once
     * (Locking, above). */
    bool concurrent;
    /* For a reactor with reap (both optional, additive: one that ignores
     * them is unaffected). awake: set by wait/io.c once the reactor is made, the
     * runtime's count of reaping workers that are not parked; gate: wait/io.c
     * bumps it and wakes it when that count drops to 0 (the last reaper
     * parks) while gated says that thread sleeps on the gate, so it goes
     * back to sleeping in the kernel (reactor_uring.c, REAPING). */
    _Atomic(_Atomic int *) awake;
    _Atomic uint32_t gate;
    _Atomic uint32_t gated;      /* the reactor's thread sleeps (or is about to) on gate */
    /* The main thread's claim to reap while it makes I/O calls (wait/io_reap.c,
     * LEASE): RT_LEASE_* below. Counts like an awake reaper for the gate;
     * the reactor's thread takes it back once it went unused for a tick. */
    _Atomic uint32_t lease;
    /* For a reactor with flush: the system calls that handed ops over
     * (dagrt_io_stats.submits; relaxed: a statistic). */
    _Atomic uint64_t submits;
};

enum { RT_LEASE_NONE, RT_LEASE_USED, RT_LEASE_MARKED };

#define RT_IO_SLOT_ALL (~0u)   /* flush: every slot's queue */

/* The reactor the first I/O call starts (reactor.c): io_uring, else epoll
 * with its blocking lane (fallback: epoll even where io_uring works); on
 * Windows the completion port, or its blocking lane alone. nslots: as for
 * rt_reactor_uring_create. NULL with *err a dagrt error code and *os_err
 * the system's reason (0: none). */
rt_reactor *rt_os_reactor_make(bool fallback, unsigned entries, unsigned nslots, int *err,
                               int *os_err);

/* Each returns a started reactor, or NULL with *err a dagrt error code.
 * entries: the submission queue's depth. */
#if defined(DAGRT_HAVE_URING)
/* NULL (and *err DAGRT_EIO) also where the kernel refuses io_uring.
 * nslots: the threads' slots (op->slot), each with a ring of its own; the
 * last one is shared by the threads outside the runtime. */
rt_reactor *rt_reactor_uring_create(unsigned entries, unsigned nslots, int *err);
#endif
/* POSIX: *os_err gets the system's reason for a NULL (EMFILE with every
 * descriptor taken), 0 when there is none (no memory, ...). */
#if defined(_WIN32)
rt_reactor *rt_reactor_iocp_create(unsigned entries, int *err);
/* The blocking lane alone (DAGRT_IO=fallback, dagrt_config.io_fallback). */
rt_reactor *rt_reactor_iocp_lane_create(unsigned entries, int *err);
#else
rt_reactor *rt_reactor_epoll_create(unsigned entries, int *err, int *os_err);
#endif

/* The system's error code as a dagrt error code (os_linux.c, os_win32.c):
 * DAGRT_EIO for one with no code of its own. */
int rt_os_error_code(int os_error);
/* 0, or the system's error (EBADF) for a handle no call can take: on
 * POSIX a descriptor is an int, so a handle outside [0, INT_MAX] would be
 * cut to another descriptor by every (int) cast below (io_linux.c); every
 * I/O call and dagrt_close refuse it first (wait/io.c). */
int rt_os_handle_check(intptr_t h);
#if !defined(_WIN32)
/* What kind of descriptor h is (io_linux.c; fstat): which write may raise
 * SIGPIPE, and how each reactor avoids it (SIGPIPE, io_linux.c). */
enum { RT_FD_OTHER, RT_FD_FILE, RT_FD_SOCK, RT_FD_FIFO, RT_FD_BAD };
int rt_os_fd_kind(intptr_t h);
/* A once poll's look (rt_io_op.once): poll(2) with a timeout of 0 on
 * op->h for op->events; res the ready set (RT_IO_POLL_*, 0 when nothing
 * is ready), or err (EBADF for a descriptor poll calls invalid). The
 * reactors' submit answers a once op with it (io_linux.c). */
void rt_os_poll_once(rt_io_op *op);
/* One write(2)/pwrite(2) of buf[0, n) on h (off < 0: the handle's own
 * position) that cannot deliver SIGPIPE to the program (io_linux.c,
 * SIGPIPE); nowait: RWF_NOWAIT (EAGAIN instead of waiting). The bytes
 * written, or -1 with *err the system's error (0 on success). */
int64_t rt_os_write_nosigpipe(intptr_t h, const void *buf, size_t n, int64_t off, bool nowait, int *err);
/* RWF_NOWAIT (io_linux.c): whether to try it (not refused by the system
 * yet, and DAGRT_IO_NOWAIT is not 0); a refusal noted, for good; whether
 * an error is such a refusal (ENOSYS, EOPNOTSUPP). */
bool rt_os_rw_nowait_usable(void);
void rt_os_rw_nowait_refuse(void);
bool rt_os_rw_nowait_refusal(int err);
/* A read or write of h that does not wait, without RWF_NOWAIT: off < 0,
 * a zero poll first (-1 with *err EAGAIN when not ready), then at most
 * what is there to read (FIONREAD) or PIPE_BUF bytes to write; off >= 0,
 * pread(2)/pwrite(2) (a pipe's or a socket's ESPIPE at once). The bytes
 * moved, or -1 with *err the system's error. */
int64_t rt_os_read_ready(intptr_t h, void *buf, size_t n, int64_t off, int *err);
int64_t rt_os_write_ready(intptr_t h, const void *buf, size_t n, int64_t off, int *err);
#endif
/* Closes a handle (close; closesocket or CloseHandle): 0 or the system's error. */
int rt_os_handle_close(intptr_t h);
/* The calling thread's id as the priority call wants it; raises the
 * calling thread's priority: 0 or the system's error (a refusal). */
int rt_os_thread_priority_raise(void);

#endif
