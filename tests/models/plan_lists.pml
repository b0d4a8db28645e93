/*
 * plan_lists.pml - plan mode's end of a G_run with several helper lists
 * (runtime/exec/plan.c rt_plan_run and rt_plan_work, the tickets in
 * runtime/exec/plan_helper.c).
 *
 * The protocol. A plan has a list per thread: the caller's (list 0) and one
 * per helper (lists 1 and 2 here), each with a cursor; a node is claimed (a
 * CAS on its list's cursor) only when it is ready, run, and published
 * (done = the run's epoch). The caller offers a run under a ticket per
 * helper list; a helper serves the tickets in order, each after winning it
 * ((t, OPEN) to (t, JOINED)), runs that ticket's list and, while it waits
 * for its own next node, may take ready nodes of any other list; once it
 * has run its own list's last node it leaves at once, touching the run no
 * more, and stores (t, LEFT). A helper whose list's last node was taken by
 * another thread goes on taking nodes of other lists for a while, then
 * stores LEFT. The caller takes nodes of any list until every cursor is at
 * its end, counting those it takes of helpers' lists (`stolen`). Its end:
 * - fast, when it took none: it waits until each helper list's last node
 *   is done, then reads `xsteal`, which a helper sets after it claimed a
 *   node of another helper's list and before that node's publication; if
 *   it is clear, every helper list was run by its own helper, each of whose
 *   last access was that last node's publication: the run is over;
 * - else (or xsteal set) for each ticket: (t, OPEN) to (t, CLOSED) if no
 *   helper joined it, else wait for (t, LEFT). (Since 2026-12-05 a G_run's
 *   caller waits for every node's `done` here instead and marks a joined
 *   ticket late without waiting: plan_late.pml. This model keeps the wait
 *   for LEFT, which pipelined frames still use.)
 * Then the caller returns, and its next run reuses the same state.
 *
 * Modelled: RUNS runs of one state back to back (1; -DRUNS=2, the
 * state's reuse too, 100 million states: the slow suite); the graph
 *   list 0: a    list 1: b1, b2    list 2: c1    b2 after c1
 * (list 1's helper may wait for list 2's node and take it, and the others'
 * nodes). Checked:
 * - every node runs exactly once per run, after its inputs;
 * - nobody touches a run's state (claims, node runs, publications, the
 *   polls of a helper that goes on) once the caller returned from it;
 * - no deadlock: the only valid end is every run returned.
 * Negative controls (tests/models/meson.build), each must be rejected:
 *   -DNOXSTEAL       helpers never set xsteal: the fast end returns while a
 *                    helper whose last node was taken still polls the run;
 *   -DSTEALAFTER     a helper also takes nodes after its own list's last
 *                    one (and sets xsteal only then): the caller may have
 *                    read xsteal before, and returns while it still runs;
 *   -DNOCLOSE        the slow end does not close a ticket no helper joined:
 *                    a late helper joins a finished run.
 *
 * Abstracted: node bodies (a step to start, one to end and publish), the
 * claim of two nodes by one CAS and the publication after the next claim
 * (a thread's own steps reordered), spins and time limits (any wait may
 * end at any time: a thread may try any ready node), `on main`, fibers and
 * pipelines (pipe_plan.pml), helpers' lingering, `present` and spawns (a
 * helper may stop lingering at any ticket; the caller finishes every run
 * alone when none comes). Promela is sequentially consistent: the xsteal
 * store is sequenced before the thief's release of a `done` that the
 * caller acquires before it reads xsteal, which is the order C11 gives.
 */
#ifndef RUNS
#define RUNS 1
#endif
#define NN 4
#define A 0
#define B1 1
#define B2 2
#define C1 3

#define OPEN 0
#define JOINED 1
#define LEFT 2
#define CLOSED 3

byte epoch = 0;                 /* the state's current run, 1.. */
bool returned[RUNS + 1];        /* the caller returned from run e */
byte done[NN];                  /* the epoch each node last completed in */
bool ran[(RUNS + 1) * NN];
byte cur[3];                    /* cursors: lists 0 and 2 at 0..1, list 1 at 0..2 */
bool xsteal;
byte stolen;
/* Tickets: run e's list k (1, 2) is ticket 2(e-1)+k; entry per ticket. */
byte tphase[2 * RUNS + 1];
byte go = 0;

#ifdef NOCLOSE
#define TICKET_OVER(t) (tphase[t] != JOINED)
#else
#define TICKET_OVER(t) (tphase[t] == LEFT || tphase[t] == CLOSED)
#endif
#define LIVE(e) (epoch == (e) && !returned[e])
#define DONE(i, e) (done[i] == (e))
#define NODE(k, c) ((k) == 0 -> A : ((k) == 1 -> ((c) == 0 -> B1 : B2) : C1))
#define LEN(k) ((k) == 1 -> 2 : 1)
#define READY(i, e) ((i) == B2 -> DONE(C1, e) : true)

inline run_node(i, e)
{
    atomic {
        assert(LIVE(e));
        assert(!ran[(e) * NN + (i)]);
        assert((i) != B2 || DONE(C1, e));
        ran[(e) * NN + (i)] = 1
    }
    atomic { assert(LIVE(e)); done[i] = e }
}

/* Claims the next node of list k of run e if it is ready (one atomic CAS:
 * the cursor's line), into `got` (NN: none); `last`: it was the list's
 * last node (the CAS's new value is the end, as rt_plan_work's `next`). */
inline claim(k, e, got, last)
{
    atomic {
        assert(LIVE(e));
        if
        :: cur[k] < LEN(k) && READY(NODE(k, cur[k]), e) ->
            got = NODE(k, cur[k]); cur[k]++; last = cur[k] == LEN(k)
        :: else -> got = NN
        fi
    }
}

active proctype caller()
{
    byte e, k, got, t;
    bool last;
    for (e : 1 .. RUNS) {
        atomic {
            epoch = e;
            cur[0] = 0; cur[1] = 0; cur[2] = 0;
            xsteal = 0;
            stolen = 0;
            tphase[2 * e - 1] = OPEN;
            tphase[2 * e] = OPEN;
            go = 2 * e
        }
        /* Its part: until every node is claimed. */
        do
        :: cur[0] == LEN(0) && cur[1] == LEN(1) && cur[2] == LEN(2) -> break
        :: else ->
            if
            :: k = 0
            :: k = 1
            :: k = 2
            fi;
            claim(k, e, got, last);
            if
            :: got != NN ->
                stolen = stolen + (k != 0);
                run_node(got, e)
            :: else -> skip
            fi
        od;
        if
        :: stolen == 0 ->
            /* the fast end: each helper list's last node done */
            DONE(B2, e) && DONE(C1, e);
            if
            :: !xsteal -> goto over
            :: else -> skip
            fi
        :: else -> skip
        fi;
        for (t : 2 * e - 1 .. 2 * e) {
            atomic {
                if
#ifndef NOCLOSE
                :: tphase[t] == OPEN -> tphase[t] = CLOSED
#endif
                :: tphase[t] != OPEN -> skip
                fi
            }
            TICKET_OVER(t)
        }
over:
        atomic {
            assert(ran[e * NN + A] && ran[e * NN + B1] && ran[e * NN + B2] && ran[e * NN + C1]);
            assert(DONE(A, e) && DONE(B1, e) && DONE(B2, e) && DONE(C1, e));
            returned[e] = 1
        }
    }
}

/* A helper serving tickets in order from `first`. */
proctype helper(byte first)
{
    byte t = first, e, own, k, got;
    bool joined, tail, last;
    do
    :: t <= 2 * RUNS && go >= t ->
        atomic {
            if
            :: tphase[t] == OPEN -> tphase[t] = JOINED; joined = 1
            :: else -> joined = 0
            fi
        }
        if
        :: joined ->
            e = (t + 1) / 2;
            own = 2 - t % 2;   /* odd tickets list 1, even list 2 */
            assert(LIVE(e));
            tail = 0;
            do
            :: cur[own] == LEN(own) -> break   /* its list's end was taken: go on */
            :: else ->
                claim(own, e, got, last);
                if
                :: got != NN ->
                    run_node(got, e);
                    if
                    :: last ->
                        tail = 1;   /* it ran its list's last node: leave at once */
                        break
                    :: else -> skip
                    fi
                :: else ->
                    /* waited: take a node of another list */
                    if
                    :: k = 0
                    :: k = 3 - own
                    fi;
                    claim(k, e, got, last);
                    if
                    :: got != NN ->
#ifndef NOXSTEAL
#ifndef STEALAFTER
                        xsteal = xsteal || k != 0;
#endif
#endif
                        run_node(got, e)
                    :: else -> skip
                    fi
                fi
            od;
#ifdef STEALAFTER
            if
            :: tail ->
                claim(3 - own, e, got, last);
                if
                :: got != NN -> xsteal = 1; run_node(got, e)
                :: else -> skip
                fi
            :: else -> skip
            fi;
#endif
            if
            :: !tail ->
                /* goes on: polls the other lists for a while, then leaves */
                do
                :: claim(0, e, got, last);
                   if
                   :: got != NN -> run_node(got, e)
                   :: else -> skip
                   fi
                :: claim(3 - own, e, got, last);
                   if
                   :: got != NN ->
#ifndef NOXSTEAL
                       xsteal = 1;
#endif
                       run_node(got, e)
                   :: else -> skip
                   fi
                :: break
                od
            :: else -> skip
            fi;
            tphase[t] = LEFT
        :: else -> skip
        fi;
        t++
    :: t > 2 * RUNS || go < t -> break   /* stops lingering */
    od
}

init {
    atomic {
        run helper(1);
        run helper(1)
    }
}
