/*
 * io_batch.pml - who submits the SQEs that deferred reads leave queued
 * (runtime/os/reactor_uring.c "BATCHING", runtime/io_reap.c rt_io_reap and
 * rt_io_park).
 *
 * Worker 0's deque holds a reader fiber R and a task S. R runs first: its
 * deque holds S, so its read is deferred (the SQE is queued under the SQ
 * lock, pending++, and worker 0 takes the duty to flush), and R suspends.
 * S is the worst case: it spins until R's read has been handed to the
 * kernel (a task that waits, without helping, on what the read brings),
 * so a worker that runs S flushes nothing until S ends. Worker 1 may
 * steal S from worker 0's deque, or find nothing and park. Rules:
 *   - between tasks and as it goes idle (rt_io_reap), a worker with the
 *     duty flushes once its deque is empty;
 *   - a worker about to park (rt_io_park) flushes whatever is queued, by
 *     anyone (the completion thread's tick is not relied on: it sleeps in
 *     the kernel while workers serve the completions themselves).
 *
 * Not covered (a known limit, docs/runtime-internals.md): S still in
 * worker 0's private tail, which worker 1 cannot see, when worker 1 parks,
 * and then spinning forever; the read then waits for a worker to park.
 *
 * The main thread M defers a read too (its deque holds work), and may
 * leave its wait at once, keeping its duty: it counts its SQE in pending,
 * then reads the count of awake reapers and flushes itself on 0; a
 * parking worker drops that count, then reads pending (both seq_cst).
 *
 * A flush is two steps (ENTERING): under the SQ lock it publishes what is
 * queued (the kernel's tail; pending drops to 0), then, after the lock,
 * its system call hands the kernel everything published so far (a call
 * that finds nothing left returns at once). A lone read (nothing else in
 * sight) publishes under the lock and enters after io.c's lock (its
 * flush); every flush enters what it published itself and leaves what
 * others published to their own system calls (a parking worker looks at
 * pending only).
 *
 * Checked: no invalid end state (a worker spinning in S forever with the
 * other parked is one), and when both have parked nothing is queued and
 * both reads were submitted exactly once.
 *
 * Negative controls (meson.build), each must fail:
 *   NOPARKFLUSH  a parking worker flushes nothing;
 *   ONLYOWN      a parking worker flushes only what it queued itself;
 *   FLUSH_FIRST  a parking worker reads pending before its count drops;
 *   MAIN_EARLY   the main thread reads the count before it queues;
 *   NOENTER      a lone read publishes and leaves its system call out
 *                (a published SQE that no one enters).
 */
#define NW 2

byte pending = 0;      /* SQEs queued, not published */
byte published = 0;    /* published (the kernel's tail), not taken yet */
byte submitted = 0;    /* reads the kernel has */
bit sq = 0;            /* the SQ lock */
bool duty[NW];
bool hasR = true;      /* worker 0's deque */
bool hasS = true;
byte parked = 0;
byte awake = NW;       /* reaping workers not parked */
bool mdone = false;    /* the main thread has left */

/* The system call, outside every lock: the kernel takes what is
 * published, in one step (its ring lock). */
inline enter() {
    atomic { submitted = submitted + published; published = 0 }
}

/* Enters only when it published something itself. */
inline flush() {
    atomic { sq == 0 -> sq = 1 };
    if
    :: pending > 0 ->
        atomic { published = published + pending; pending = 0 };
        sq = 0;
        enter()
    :: else -> sq = 0
    fi
}

/* rt_io_reap's rule: the duty, and an empty deque (worker 0's only). */
inline reap(me) {
    if
    :: duty[me] && (me != 0 || (!hasR && !hasS)) -> duty[me] = false; flush()
    :: else -> skip
    fi
}

inline park(me) {
#if defined(NOPARKFLUSH)
    skip;
#elif defined(ONLYOWN)
    if
    :: duty[me] -> duty[me] = false; flush()
    :: else -> skip
    fi;
#else
    duty[me] = false;
#  ifndef FLUSH_FIRST
    awake--;
#  endif
    /* the hint: pending read without the lock, re-checked under it */
    if
    :: pending > 0 -> flush()
    :: else -> skip
    fi;
#  ifdef FLUSH_FIRST
    awake--;
#  endif
#endif
    parked++
}

inline run_S() {
    (submitted > 0)   /* spins until the read is in the kernel */
}

proctype Worker0() {
    do
    :: atomic { hasR -> hasR = false };
       /* R: the deque holds S -> defer */
       if
       :: hasS ->
           atomic { sq == 0 -> sq = 1 };
           pending++;
           sq = 0;
           duty[0] = true
       :: else ->
           /* a lone read: published with whatever was queued, then the
            * system call after the locks (io.c's flush) */
           atomic { sq == 0 -> sq = 1 };
           atomic { published = published + pending + 1; pending = 0 };
           sq = 0;
#ifndef NOENTER
           enter()
#else
           skip
#endif
       fi;
       reap(0)
    :: atomic { !hasR && hasS -> hasS = false };
       run_S();
       reap(0)
    :: !hasR && !hasS -> break
    od;
    reap(0);     /* idle: the first round reaps */
    park(0);
end0:
    skip
}

proctype Worker1() {
    do
    :: atomic { !hasR && hasS -> hasS = false };   /* steals S (after R ran) */
       run_S();
       reap(1)
    :: !hasS -> break   /* idle.c's re-check: no work visible */
    od;
    reap(1);
    park(1);
end1:
    skip
}

proctype Main() {
    bool any;
#ifdef MAIN_EARLY
    any = awake > 0;
#endif
    atomic { sq == 0 -> sq = 1 };
    pending++;
    sq = 0;
#ifndef MAIN_EARLY
    any = awake > 0;
#endif
    if
    :: !any -> flush()
    :: else -> skip
    fi;
    /* leaves its wait: its duty waits for a later rt_io_reap */
    mdone = true
}

proctype Check() {
end:
    (parked == NW && mdone);
    assert(pending == 0 && published == 0 && submitted == 2)
}

init {
    atomic {
        run Worker0();
        run Worker1();
        run Main();
        run Check()
    }
}
