/*
 * io_reap.pml - who consumes io_uring's completion queue
 * (runtime/os/reactor_uring.c, "REAPING").
 *
 * The kernel posts N completions (tail++) and then, once every op is done
 * (dagrt_destroy waits for that), the destroy's STOP entry. The queue has
 * one consumer at a time (lk, a try-lock). Workers peek the queue (head
 * against tail, no system call), try the lock and drain what is there,
 * and may stop reaping (park) at any moment: the last one to park bumps
 * the gate (after its count of awake reapers dropped to 0) and wakes it; a
 * drain leaves STOP for the completion thread. The completion thread takes
 * the lock (waiting for a consumer in progress) and drains; then, while a
 * reaper is awake, it sleeps on the gate (woken by a bump, or by its 1 ms
 * tick, which is modelled as firing only while a reaper is awake or the
 * main thread's lease below is held: with
 * every reaper parked the runtime must burn no CPU, so the tick may not be
 * what serves a completion); with none awake it sleeps in the kernel until
 * the queue holds an entry: a level, checked by the kernel as it goes to
 * sleep (io_uring_enter GETEVENTS, min_complete 1).
 *
 * The main thread M (runtime/wait/io_reap.c, LEASE) holds a lease while it
 * makes I/O calls: it reaps like a worker, and the completion thread,
 * with no worker awake, sleeps on the gate while the lease is held (a
 * tick that fires only while it is held, at which the thread may take the
 * lease back itself). M then either parks, giving the lease back (an
 * exchange: whoever took it back first, M or the thread, the other does
 * nothing) and, if it was M, reading the count and then gated and bumping
 * when no worker is awake; or goes back to its own code holding it, and
 * may take it again after the thread took it back. A worker whose park
 * drops the count to 0 bumps only if it then reads the lease free (M
 * bumps when it gives the lease back).
 *
 * A lone read's submitter S (RESERVE at reactor_uring.c's owed_enter):
 * the kernel posts S's completion inside S's own system call. S takes the
 * consumer lock before that call (a try-lock; if it is held, S makes the
 * plain call and then reaps like a worker), and drains before it lets
 * go, so its own completion is its own to serve (the fast path: no
 * suspend). The kernel refuses the call (-EBUSY) while completions wait
 * to be consumed (here: while any does); S then lets the lock go before
 * it retries, and reaps like a worker after. S is not one of the
 * counted reapers: nothing relies on it beyond its own drain.
 *
 * Checked: every completion is served exactly once, by one consumer at a
 * time; the completion thread sees STOP and ends; no lost wake-up (a
 * completion nobody serves leaves destroy, or the completion thread,
 * blocked: an invalid end state); S, holding the lock across its call,
 * serves its own completion.
 *
 * Negative controls (meson.build), each must fail:
 *   EDGE       the completion thread sleeps until the next post (an edge:
 *              one posted between its drain and its sleep, with every
 *              worker parked, is never served);
 *   REAP_STOP  a worker's drain consumes STOP too (the completion thread
 *              never ends);
 *   NOGATED    the parking worker skips the bump unless it saw the thread
 *              gated before its count dropped (the check moved early);
 *   KICK_EARLY the parking worker bumps the gate before its count drops
 *              (the completion thread reads the new gate and the old
 *              count, and sleeps on the gate with every reaper parked);
 *   MAIN_NOBUMP M gives the lease back without the bump;
 *   MAIN_EARLY M reads the count and gated before it gives the lease
 *              back (the check moved early);
 *   RESERVE_LATE S takes the lock after its system call (io3's order: a
 *              worker's peek takes S's completion first);
 *   BUSY_HOLD  S keeps the lock while it retries a refused call (nobody
 *              can drain what the kernel waits for: S hangs).
 */
#define N 2
#define NW 2

byte tail = 0;       /* entries posted; entry N is STOP */
byte head = 0;       /* entries consumed */
bit lk = 0;          /* the consumer lock */
byte indrain = 0;
byte served = 0;
bool stopped = false;
bool sleeping = false;   /* EDGE: asleep, woken only by a post */
bool kick = false;
byte awake = NW;     /* reapers not parked */
byte gate = 0;
bool gated = false;  /* the completion thread sleeps (or is about to) on the gate */
bit lease = 1;       /* the main thread's (NONE 0; USED and MARKED are both 1 here) */
byte mine = 255;     /* S's entry (its index in the queue) */
byte taker = 0;      /* who consumed it: 1 S, 2 anyone else */

inline post() {
    atomic {
        tail++;
        if
        :: sleeping -> kick = true
        :: else -> skip
        fi
    }
}

/* lk held. */
inline drain(owner, who) {
    indrain++;
    assert(indrain == 1);
    do
    :: head < tail ->
        if
        :: head == N ->
            if
            :: owner -> head++; stopped = true; break
            :: else ->
#ifdef REAP_STOP
                head++; break
#else
                break
#endif
            fi
        :: else ->
            if
            :: head == mine -> taker = who
            :: else -> skip
            fi;
            head++; served++
        fi
    :: else -> break
    od;
    indrain--
}

proctype Kernel() {
    byte i = 0;
    do
    :: i < N - 1 -> post(); i++   /* S posts the last one, in its call */
    :: i == N - 1 -> break
    od;
    (served == N);   /* dagrt_destroy: only once every op is done */
    post()           /* STOP */
}

proctype Worker() {
    bool got;
    do
    :: head < tail ->                       /* the peek */
        atomic {
            if
            :: lk == 0 -> lk = 1; got = true
            :: else -> got = false
            fi
        };
        if
        :: got -> drain(false, 2); lk = 0
        :: else -> skip
        fi
    :: break                                /* parks for good */
    od;
#ifdef KICK_EARLY
    gate++;
    awake--
#elif defined(NOGATED)
    bool g = gated;
    byte left;
    atomic { awake--; left = awake };
    if
    :: left == 0 && g -> gate++
    :: else -> skip
    fi
#else
    byte left;
    atomic { awake--; left = awake };   /* fetch_sub: its own result */
    if
    :: left == 0 ->
        if
        :: lease == 0 ->                /* M bumps when it gives the lease back */
            if
            :: gated -> gate++
            :: else -> skip
            fi
        :: else -> skip
        fi
    :: else -> skip
    fi
#endif
}

proctype Main() {
    bool got;
    bit old;
    byte a;
    bool g;
    do
    :: head < tail ->                       /* the fast path's reap, or its idle loop's */
        atomic {
            if
            :: lk == 0 -> lk = 1; got = true
            :: else -> got = false
            fi
        };
        if
        :: got -> drain(false, 2); lk = 0
        :: else -> skip
        fi
    :: lease == 0 -> lease = 1              /* an I/O call takes it again */
    :: break
    od;
    if
    :: true ->                              /* parks: gives the lease back */
#ifdef MAIN_EARLY
        a = awake;
        g = gated;
        atomic { old = lease; lease = 0 };
        if
        :: old == 1 && a == 0 && g -> gate++
        :: else -> skip
        fi
#else
        atomic { old = lease; lease = 0 };  /* the exchange */
#ifndef MAIN_NOBUMP
        if
        :: old == 1 ->
            a = awake;
            if
            :: a == 0 ->
                if
                :: gated -> gate++
                :: else -> skip
                fi
            :: else -> skip
            fi
        :: else -> skip
        fi
#endif
#endif
    :: true -> skip                         /* back to its own code, holding it */
    fi
}

/* The kernel takes S's call and posts its completion inside it. */
inline s_enter() {
    atomic { mine = tail; post() }
}

/* A reap like a worker's: one peek and try. */
inline s_reap() {
    if
    :: head < tail ->
        atomic {
            if
            :: lk == 0 -> lk = 1; got = true
            :: else -> got = false
            fi
        };
        if
        :: got -> drain(false, 1); lk = 0
        :: else -> skip
        fi
    :: else -> skip
    fi
}

proctype Submitter() {
    bool got;
#ifdef RESERVE_LATE
    s_enter();
    atomic {
        if
        :: lk == 0 -> lk = 1; got = true
        :: else -> got = false
        fi
    };
    if
    :: got -> drain(false, 1); lk = 0; assert(taker == 1)
    :: else -> s_reap()
    fi
#else
    atomic {
        if
        :: lk == 0 -> lk = 1; got = true
        :: else -> got = false
        fi
    };
    if
    :: got ->
        if
        :: head == tail ->              /* taken */
            s_enter();
            drain(false, 1); lk = 0;
            assert(taker == 1)          /* its own, with no suspend */
        :: head < tail ->               /* -EBUSY: completions wait */
#ifdef BUSY_HOLD
            (head == tail);             /* retries holding the lock */
            s_enter();
            drain(false, 1); lk = 0
#else
            lk = 0;
            atomic { head == tail -> s_enter() }   /* retries until taken */
            s_reap()
#endif
        fi
    :: else ->                          /* the lock is busy: the plain call */
        atomic { head == tail -> s_enter() };
        s_reap()
    fi
#endif
}

proctype Completion() {
    byte gen;
    do
    :: atomic { lk == 0 -> lk = 1 };
       drain(true, 2);
       lk = 0;
       if
       :: stopped -> break
       :: else -> skip
       fi;
       gated = true;
       gen = gate;
       if
       :: awake > 0 ->
           if
           :: gate != gen -> skip      /* bumped: look again */
           :: awake > 0 || lease != 0 -> skip   /* the tick (only while a reaper is awake, or M's lease held) */
           fi
       :: else ->
       if
       :: lease != 0 ->
           if
           :: gate != gen -> skip      /* bumped: look again */
           :: lease != 0 -> skip       /* the lease's tick (only while it is held) */
           :: atomic { lease != 0 -> lease = 0 }   /* unused for a tick: taken back */
           fi
       :: else ->
       gated = false;
#ifdef EDGE
       sleeping = true;
       kick;
       atomic { kick = false; sleeping = false }
#else
       (head < tail)    /* the kernel's level */
#endif
       fi
       fi
    od;
    assert(served == N && head == N + 1)
}

init {
    atomic {
        run Kernel();
        run Completion();
        run Main();
        run Submitter();
        byte w = 0;
        do
        :: w < NW -> run Worker(); w++
        :: else -> break
        od
    }
}
