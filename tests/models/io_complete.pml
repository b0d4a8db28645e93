/*
 * io_complete.pml - an I/O call's hand-off between the reactor's
 * completion, the fiber's suspend and the cancels (runtime/wait/io.c on
 * the one timed wait of wait/oneshot.c, over os/reactor.h; the group and
 * park handshake of runtime/fiber/sched.c).
 *
 * One call on a fiber task: under io.c's lock the fiber takes the op
 * record, links it in flight and submits it; then it attaches its cancel
 * link, arms the record's one-shot group and suspends (its worker arrives
 * on park after the switch). The reactor completes the op (its result,
 * or "cancelled" once a cancel reached it), writes the result and then
 * calls done, its last access: the group's completion, which arrives on
 * park when the fiber had armed. The second of the two arrivals queues the
 * resume. After it resumes the fiber detaches its link (which waits for
 * an on_cancel in progress) and, under the lock, unlinks the record and
 * returns it to the pool (freed). Two cancellers race all of this: the
 * scope's request (through the link) and dagrt_close (no link: under the
 * lock, only while the record is in flight). The runtime's scope
 * (rt->waits, which dagrt_destroy cancels) has one link for every call:
 * its on_cancel sets a flag and walks the in-flight list under the lock,
 * and a call that submits checks the flag under the lock after its
 * submit (RtScope below).
 *
 * Checked: the fiber resumes exactly once, only after done, and reads a
 * written result; the reactor and the cancellers never touch a record
 * that went back to the pool (a cancel for a reused record would cancel
 * someone else's op); no lost wake-up (a fiber never resumed is an
 * invalid end state). The completion may land before the fiber armed or
 * suspended, and a cancel may race the completion: spin tries every order.
 *
 * Negative controls (meson.build), each must fail:
 *   LATE_RESULT  the reactor calls done before it writes the result;
 *   ARM_SPLIT    the arm reads the count, then registers in a second step
 *                (a completion in between is lost);
 *   CLOSE_NOLOCK dagrt_close looks at "in flight" under the lock but
 *                issues the cancel after releasing it.
 * With SILENT the op never completes by itself (a receive with no
 * traffic) and only the runtime's scope cancels: the fiber must still
 * end (a fiber never resumed is an invalid end state). Its control:
 *   NO_RTFLAG    the submit does not look at the runtime's flag (a cancel
 *                whose walk came before the record was linked is lost).
 */

bit mu = 0;                 /* io.c's lock */
bool inflight = false;      /* the record is on the in-flight list */
bool freed = false;         /* back in the pool (could be another op's now) */
bool submitted = false;
bool rcancel = false;       /* a cancel reached the reactor */
bool canceling = false;     /* io.c: the cancel was handed over once */
bool result_written = false;
bool done_called = false;
byte word = 1;              /* the group's pending count */
bool armed = false;         /* the waiter registered on the group */
byte park = 0;              /* the suspend/resume handshake: 2 parties */
byte resumes = 0;
bool attached = false;      /* the cancel link */
bool oncancel_running = false;
bool cancel_req = false;
bool rt_cancelled = false;  /* io.c: the runtime's scope was cancelled (under mu) */
chan runq = [2] of { bit };

inline lock()   { atomic { mu == 0 -> mu = 1 } }
inline unlock() { mu = 0 }

inline arrive() {
    atomic { park = park + 1; old = park - 1 };
    if
    :: old == 1 -> runq!1
    :: else -> skip
    fi
}

/* io.c req_cancel, with the lock held. */
inline req_cancel() {
    if
    :: inflight && !canceling ->
        assert(!freed);
        canceling = true;
        rcancel = true
    :: else -> skip
    fi
}

proctype Fiber() {
    byte old;
    bool already = false;
    lock();
    inflight = true;
    submitted = true;
#ifndef NO_RTFLAG
    if
    :: rt_cancelled -> req_cancel()
    :: else -> skip
    fi;
#endif
    unlock();
    /* rt_cancel_attach: refused when the scope is cancelled already. */
    atomic {
        if
        :: cancel_req -> already = true
        :: else -> attached = true
        fi
    };
    if
    :: already -> lock(); req_cancel(); unlock(); already = false
    :: else -> skip
    fi;
    /* rt_group_arm, then suspend: the worker's arrive after the switch. */
    park = 0;
#ifdef ARM_SPLIT
    if
    :: word == 0 -> already = true
    :: else -> skip
    fi;
    if
    :: !already -> armed = true
    :: else -> skip
    fi;
#else
    atomic {
        if
        :: word == 0 -> already = true
        :: else -> armed = true
        fi
    };
#endif
    if
    :: !already ->
        arrive();                   /* the worker, off the fiber's stack */
        runq?_;                     /* resumed (on some worker) */
        resumes++
    :: else -> skip
    fi;
    assert(done_called && result_written);
    /* rt_cancel_detach: on return, on_cancel is not running. */
    atomic { attached = false };
    !oncancel_running;
    lock();
    inflight = false;
    freed = true;
    unlock();
    assert(resumes <= 1);
    /* nothing else may resume it later */
    atomic { len(runq) == 0 }
}

proctype Reactor() {
    byte old;
    bool wake = false;
    submitted;
    if
#ifndef SILENT
    :: true -> skip                 /* the op's own completion */
#endif
    :: rcancel -> skip              /* ended by the cancel */
    fi;
    assert(!freed);
#ifdef LATE_RESULT
    atomic { done_called = true; word--; wake = armed && word == 0 };
    result_written = true;
#else
    result_written = true;
    atomic { done_called = true; word--; wake = armed && word == 0 };
#endif
    /* After the decrement only the waiter's own wake: the record is the
     * fiber's again. */
    if
    :: wake -> arrive()
    :: else -> skip
    fi
}

/* dagrt_cancel_request: takes the link, runs on_cancel outside its lock. */
proctype Scope() {
    bool taken = false;
    cancel_req = true;
    atomic {
        if
        :: attached -> attached = false; oncancel_running = true; taken = true
        :: else -> skip
        fi
    };
    if
    :: taken -> lock(); req_cancel(); unlock(); oncancel_running = false
    :: else -> skip
    fi
}

/* The runtime's scope (io.c, io_rt_cancelled): the flag and the walk,
 * under the lock. */
proctype RtScope() {
    lock();
    rt_cancelled = true;
    req_cancel();
    unlock()
}

/* dagrt_close (or rt_io_fini): no link, only the lock. */
proctype Close() {
    bool go = false;
    lock();
#ifdef CLOSE_NOLOCK
    go = inflight && !canceling;
    unlock();
    if
    :: go -> assert(!freed); canceling = true; rcancel = true
    :: else -> skip
    fi
#else
    req_cancel();
    unlock()
#endif
}

init {
    atomic {
        run Fiber();
        run Reactor();
        run RtScope();
#ifndef SILENT
        run Scope();
        run Close()
#endif
    }
}
