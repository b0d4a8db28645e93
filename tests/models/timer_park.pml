/*
 * timer_park.pml - arming a timer against idlers that park
 * (runtime/wait/timer.c, "ARMED VERSUS PARKING"; runtime/core/idle.c, rt_ctx_idle
 * and rt_wake_idle).
 *
 * Two idle workers announce (idle = 1, nidle++), may poll the timers while
 * they spin (rt_timer_next, then rt_timer_run_due under the timers' mutex),
 * re-check and park. Before parking each calls keeper_enter: one load of
 * `next` (the earliest deadline, UINT64_MAX here INF: none queued); only a
 * worker that sees a timer takes the mutex and, with no keeper yet,
 * becomes the keeper and parks until the earliest deadline. After its park
 * the keeper gives the role up under the mutex and runs what is due
 * (keeper_leave). An adder on a thread that is not idle arms two timers,
 * the second with an earlier deadline than the first: under the mutex it
 * queues the timer, stores `next`, and decides whether there is a keeper;
 * a keeper with a later deadline is unparked, and with no keeper the adder
 * fences and wakes one idle worker if nidle > 0 (wake_one: claim by
 * idle 1 -> 0, unpark). A clock moves from 0 to 2.
 *
 * Checked: when nothing can move any more (the clock at its end, every
 * worker parked), both timers have fired: no deadline is slept through
 * by a runtime whose threads all park.
 *
 * -DLOCKED models the protocol before the fast path (keeper_enter always
 * takes the mutex): must verify too.
 * Negative controls (must fail):
 *   -DNOFENCE  the adder's load of nidle passes its store of `next` (the
 *              seq_cst fence of rt_wake_idle removed);
 *   -DEARLY    the worker reads `next` before it announces itself idle;
 *   -DNOWAKE   the adder wakes nobody when there is no keeper.
 */
#define INF      9
#define NONE     2
#define EMPTY    0
#define NOTIFIED 1
#define PARKED   2

byte now = 0;          /* the clock */
byte dl[2];            /* deadlines: timer 0 at 2, timer 1 at 1 */
bool queued[2];
bool fired[2];
byte n = 0;            /* queued timers, under mu */
byte next = INF;       /* timers.next: written under mu, read without it */
bit mu = 0;            /* the timers' mutex */
byte keeper = NONE;    /* under mu */
byte keeper_ns = INF;  /* under mu */
byte nidle = 0;
bool idle[2];
byte pstate[2];        /* the parker of each worker */

inline lock()   { atomic { mu == 0 -> mu = 1 } }
inline unlock() { mu = 0 }

/* publish_next: the earliest queued deadline (under mu). */
inline publish_next() {
    if
    :: queued[0] && queued[1] -> next = (dl[0] < dl[1] -> dl[0] : dl[1])
    :: queued[0] && !queued[1] -> next = dl[0]
    :: !queued[0] && queued[1] -> next = dl[1]
    :: else -> next = INF
    fi
}

/* rt_timer_run_due: fires what is due (the model fires under mu; the
 * code fires outside it, one runner at a time, which does not matter to
 * whether a timer fires). */
inline run_due() {
    lock();
    if
    :: queued[0] && dl[0] <= now -> queued[0] = false; n--; fired[0] = true
    :: else -> skip
    fi;
    if
    :: queued[1] && dl[1] <= now -> queued[1] = false; n--; fired[1] = true
    :: else -> skip
    fi;
    publish_next();
    unlock()
}

inline unpark(w) {
    pstate[w] = NOTIFIED   /* a PARKED sleeper's wait now returns */
}

proctype worker(byte w)
{
    bool leave, was;
    byte seen, until;
end_loop:
    do
    :: true ->
#ifdef EARLY
        seen = next;           /* read before the announcement: wrong */
#endif
        /* announce */
        idle[w] = true;
        nidle++;
        /* spin: a claim sends us back; or poll the timers; or give up */
        if
        :: !idle[w] -> leave = true
        :: next != INF -> run_due(); leave = false
        :: leave = false
        fi;
        if
        :: !leave && idle[w] ->   /* the re-check (no work in this model) */
            /* keeper_enter */
#if !defined(EARLY) && !defined(LOCKED)
            seen = next;          /* seq_cst load, after the announcement */
#endif
#ifdef LOCKED
            seen = 0;             /* always take the mutex */
#endif
            until = INF;
            if
            :: seen == INF -> skip
            :: else ->
                lock();
                if
                :: n > 0 && (keeper == NONE || keeper == w) ->
                    keeper = w; keeper_ns = next; until = next
                :: else -> skip
                fi;
                unlock()
            fi;
            /* rt_park_until */
            atomic {
                if
                :: pstate[w] == NOTIFIED -> pstate[w] = EMPTY
                :: pstate[w] == EMPTY -> pstate[w] = PARKED
                fi
            };
end_sleep:
            atomic { (pstate[w] != PARKED || (until != INF && now >= until)) -> pstate[w] = EMPTY };
            /* keeper_leave */
            if
            :: until != INF ->
                lock();
                was = keeper == w;
                if
                :: was -> keeper = NONE; keeper_ns = INF
                :: else -> skip
                fi;
                unlock();
                if
                :: was -> run_due()
                :: else -> skip
                fi
            :: else -> skip
            fi
        :: else -> skip
        fi;
        /* leave */
        idle[w] = false;
        nidle--
    od
}

proctype adder()
{
    byte i, k, seen, wake;
    bool no_keeper;
    for (i : 0 .. 1) {
#ifdef NOFENCE
        seen = nidle;          /* the load passes the stores below */
#endif
        /* rt_timer_add */
        lock();
        queued[i] = true;
        n++;
        publish_next();        /* every add stores next */
        no_keeper = keeper == NONE;
        wake = NONE;
        if
        :: !no_keeper && dl[i] < keeper_ns -> keeper_ns = dl[i]; wake = keeper
        :: else -> skip
        fi;
        unlock();
        if
        :: wake != NONE -> unpark(wake)
        :: else -> skip
        fi;
#ifndef NOWAKE
        /* rt_wake_idle: fence, then nidle; wake_one */
        if
        :: no_keeper ->
#ifndef NOFENCE
            seen = nidle;
#endif
            if
            :: seen > 0 ->
                for (k : 0 .. 1) {
                    if
                    :: atomic { idle[k] -> idle[k] = false }; unpark(k); break
                    :: else -> skip
                    fi
                }
            :: else -> skip
            fi
        :: else -> skip
        fi
#endif
    }
    /* Once nothing can move: both deadlines passed, both timers fired. */
    timeout -> assert(now == 2 && fired[0] && fired[1])
}

proctype clock()
{
    do
    :: now < 2 -> now++
    :: else -> break
    od
}

init {
    atomic {
        dl[0] = 2;
        dl[1] = 1;
        run worker(0);
        run worker(1);
        run adder();
        run clock()
    }
}
