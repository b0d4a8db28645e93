/*
 * io_batch.pml - who submits the SQEs that deferred reads leave queued
 * (runtime/os/reactor_uring.c "BATCHING", runtime/wait/io_reap.c rt_io_reap and
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
 * Each thread has a ring of its own (RINGS): W0's, W1's and M's, each
 * with its own SQ lock, pending count and published tail. A flush of a
 * ring is two steps (ENTERING): under that ring's SQ lock it publishes
 * what is queued (the kernel's tail; pending drops to 0), then, after the
 * lock, its system call hands the kernel everything published on that
 * ring so far (a call that finds nothing left returns at once). A lone
 * read (nothing else in sight) publishes under the lock and enters after
 * io.c's lock (its flush); every flush enters what it published itself
 * and leaves what others published to their own system calls (a parking
 * worker looks at pending only). rt_io_reap's flush is the thread's own
 * ring's; a parking worker's is every ring's, one after the other.
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
 *                (a published SQE that no one enters);
 *   PARKOWNRING  a parking worker flushes its own ring only (as between
 *                tasks: M's queued read is nobody's).
 */
#define NW 2

#define NR 3           /* rings: W0's, W1's, M's */
#define RM 2
byte pending[NR];      /* SQEs queued, not published */
byte published[NR];    /* published (the kernel's tail), not taken yet */
byte submitted = 0;    /* reads the kernel has */
bit sq[NR];            /* the SQ locks */
bool duty[NW];
bool hasR = true;      /* worker 0's deque */
bool hasS = true;
byte parked = 0;
byte awake = NW;       /* reaping workers not parked */
bool mdone = false;    /* the main thread has left */

/* The system call on ring r, outside every lock: the kernel takes what
 * is published there, in one step (its ring lock). */
inline enter(r) {
    atomic { submitted = submitted + published[r]; published[r] = 0 }
}

/* Ring r's flush: enters only when it published something itself. */
inline flush(r) {
    atomic { sq[r] == 0 -> sq[r] = 1 };
    if
    :: pending[r] > 0 ->
        atomic { published[r] = published[r] + pending[r]; pending[r] = 0 };
        sq[r] = 0;
        enter(r)
    :: else -> sq[r] = 0
    fi
}

/* A parking worker's: every ring, the hint (pending read without the
 * lock) re-checked under each ring's lock. */
inline flush_all() {
    byte k = 0;
    do
    :: k < NR ->
        if
        :: pending[k] > 0 -> flush(k)
        :: else -> skip
        fi;
        k++
    :: else -> break
    od
}

/* rt_io_reap's rule: the duty, and an empty deque (worker 0's only); its
 * own ring. */
inline reap(me) {
    if
    :: duty[me] && (me != 0 || (!hasR && !hasS)) -> duty[me] = false; flush(me)
    :: else -> skip
    fi
}

inline park(me) {
#if defined(NOPARKFLUSH)
    skip;
#elif defined(ONLYOWN)
    if
    :: duty[me] -> duty[me] = false; flush(me)
    :: else -> skip
    fi;
#elif defined(PARKOWNRING)
    duty[me] = false;
    awake--;
    flush(me);
#else
    duty[me] = false;
#  ifndef FLUSH_FIRST
    awake--;
#  endif
    flush_all();
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
           atomic { sq[0] == 0 -> sq[0] = 1 };
           pending[0]++;
           sq[0] = 0;
           duty[0] = true
       :: else ->
           /* a lone read: published with whatever was queued, then the
            * system call after the locks (io.c's flush) */
           atomic { sq[0] == 0 -> sq[0] = 1 };
           atomic { published[0] = published[0] + pending[0] + 1; pending[0] = 0 };
           sq[0] = 0;
#ifndef NOENTER
           enter(0)
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
    :: !hasS -> break   /* core/idle.c's re-check: no work visible */
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
    atomic { sq[RM] == 0 -> sq[RM] = 1 };
    pending[RM]++;
    sq[RM] = 0;
#ifndef MAIN_EARLY
    any = awake > 0;
#endif
    if
    :: !any -> flush(RM)
    :: else -> skip
    fi;
    /* leaves its wait: its duty waits for a later rt_io_reap */
    mdone = true
}

proctype Check() {
end:
    (parked == NW && mdone);
    assert(pending[0] == 0 && pending[1] == 0 && pending[RM] == 0 &&
           published[0] == 0 && published[1] == 0 && published[RM] == 0 && submitted == 2)
}

init {
    atomic {
        run Worker0();
        run Worker1();
        run Main();
        run Check()
    }
}
