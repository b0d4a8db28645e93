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
 * The main thread M (runtime/io_reap.c, LEASE) holds a lease while it
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
 * Checked: every completion is served exactly once, by one consumer at a
 * time; the completion thread sees STOP and ends; no lost wake-up (a
 * completion nobody serves leaves destroy, or the completion thread,
 * blocked: an invalid end state).
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
 *              back (the check moved early).
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
inline drain(owner) {
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
        :: else -> head++; served++
        fi
    :: else -> break
    od;
    indrain--
}

proctype Kernel() {
    byte i = 0;
    do
    :: i < N -> post(); i++
    :: i == N -> break
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
        :: got -> drain(false); lk = 0
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
        :: got -> drain(false); lk = 0
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

proctype Completion() {
    byte gen;
    do
    :: atomic { lk == 0 -> lk = 1 };
       drain(true);
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
        byte w = 0;
        do
        :: w < NW -> run Worker(); w++
        :: else -> break
        od
    }
}
