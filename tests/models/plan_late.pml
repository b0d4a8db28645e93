/*
 * plan_late.pml - the held return: a G_run in plan mode ends without
 * waiting for a helper that joined it and lost its CPU (runtime/exec/
 * plan_run.c, "the held return"; the helper's side in plan.c plan_work
 * and plan_helper.c plan_serve, plan_leave).
 *
 * The protocol. A state runs RUNS runs back to back (epochs 1..RUNS), then
 * is released (dagrt_graph_state_fini) and freed. A run stores its epoch
 * into each list's cursor word beside the list's first node (a cursor word
 * is (epoch, node)), offers the helper's list under a ticket that carries
 * the epoch, and the caller runs its list and takes ready nodes of the
 * helper's. A claim is a CAS of a cursor word that expects the claimer's
 * own epoch; a node runs and is published (done = epoch). A helper joins a
 * ticket ((t, OPEN) to (t, JOINED)), takes the run's epoch from it (never
 * from the state), runs its list, then takes ready nodes of the caller's
 * list for a while; finding another epoch in a cursor, it stops touching
 * the run. It leaves by an exchange of (t, LEFT) into its ticket; if that
 * replaced (t, LATE) it takes itself off the state's late count, its last
 * access to the state. The caller's end:
 * - fast (it took none of the helper's nodes): waits for the helper list's
 *   last node, whose publication was the helper's last access to the run;
 * - else: waits until every node is done, then closes the ticket if no
 *   helper joined it ((t, OPEN) to (t, CLOSED)), else counts late up and
 *   marks the ticket (t, JOINED) to (t, LATE) (taking its count back if the
 *   helper left meanwhile), and returns without waiting for the helper.
 * The next run starts at once; the release waits until late is 0.
 *
 * Modelled: the graph  list 0: a    list 1: b1, b2 (b2 after a);  the
 * helper may skip any ticket (it stopped lingering) and leave the caller's
 * list at any time. It may lose its CPU at any point where it holds no
 * claimed node (STOP: it then moves again only once the caller has
 * returned from every run; a thread stopped inside a node's body, between
 * its claim and its publication, holds that node up by design: the frame
 * needs it). Checked:
 * - every node runs exactly once per run, after its inputs, and a helper
 *   runs a node only in the run it joined (never one of a later run);
 * - nobody touches the state once it was released (every helper access
 *   asserts it);
 * - neither a run's return nor the next run waits for a stopped helper:
 *   the helper stays stopped until the caller returned from every run, so
 *   such a wait is a deadlock (an invalid end state).
 * Negative controls (tests/models/meson.build), each must be rejected:
 *   -DNOEPOCH      the helper's claims and checks ignore the cursor's
 *                  epoch: a late helper claims a node of the next run;
 *   -DNOLATEWAIT   the release does not wait for late helpers: a late
 *                  helper touches the freed state;
 *   -DWAITLEFT     the old end: the caller waits for the helper's LEFT,
 *                  so a stopped helper holds the return (deadlock);
 *   -DSTORELEFT    the helper leaves with a plain store of LEFT (it never
 *                  learns it was late, never takes itself off: the
 *                  release waits forever).
 * Abstracted: node bodies (one step each), the claim of two nodes in one
 * CAS, spins and time limits (a wait is a blocking guard), other lists
 * and helpers (plan_lists.pml), pipelines (pipe_plan.pml; their frames
 * still wait for LEFT). Promela is sequentially consistent; the C code's
 * orders are argued next to each atomic.
 */
#ifndef RUNS
#define RUNS 2
#endif
#define A 0
#define B1 1
#define B2 2
#define NONE 3
#define W(e, n) ((e) * 4 + (n))

#define OPEN 0
#define JOINED 1
#define LEFT 2
#define CLOSED 3
#define LATE 4

byte epoch = 0;                  /* the state's current run (the caller's) */
byte cur0, cur1;                 /* cursor words: W(epoch, node) */
byte done[3];
byte ran[(RUNS + 1) * 3];
byte late = 0;
bool freed = false;
byte returned = 0;               /* the last run the caller returned from */
byte tphase[RUNS + 1];           /* ticket t is run t's helper list */
byte go = 0;

#define ACCESS assert(!freed)
/* The helper loses its CPU here, maybe until the caller is through. */
#define STOP if :: skip :: true; (returned == RUNS) fi

/* Whether node n is ready in run e (its inputs done there). */
#define READY(n, e) ((n) != B2 || done[A] == (e))
#define NEXT1(n) ((n) == B1 -> B2 : NONE)

inline run_node(n, e) {
    assert(epoch == e);            /* the node's run is the current one */
    assert(READY(n, e));
    assert(ran[e * 3 + n] == 0);
    ran[e * 3 + n]++;
    done[n] = e
}

proctype Caller() {
    byte e = 1, n, k;
    bool stole;
    do
    :: e > RUNS -> break
    :: else ->
        /* the run's start: no wait for anything of the last run */
        epoch = e;
        cur0 = W(e, A);
        cur1 = W(e, B1);
        tphase[e] = OPEN;
        go = e;
        stole = false;
        /* the caller's part: its list, and ready nodes of the helper's */
        do
        :: atomic { cur0 == W(e, A) -> cur0 = W(e, NONE) }; run_node(A, e)
        :: atomic { cur1 % 4 != NONE && READY(cur1 % 4, e) -> n = cur1 % 4; cur1 = W(e, NEXT1(n)) };
           stole = true; run_node(n, e)
        :: cur0 == W(e, NONE) && cur1 == W(e, NONE) -> break
        od;
        if
        :: !stole ->
            /* fast: the helper ran its whole list, the last node last */
            (done[B2] == e)
        :: else ->
            (done[A] == e && done[B1] == e && done[B2] == e);
#ifdef WAITLEFT
            if
            :: atomic { tphase[e] == OPEN -> tphase[e] = CLOSED }
            :: atomic { tphase[e] != OPEN -> skip }; (tphase[e] == LEFT)
            fi
#else
            if
            :: atomic { tphase[e] == OPEN -> tphase[e] = CLOSED }
            :: atomic { tphase[e] == LEFT -> skip }
            :: atomic { tphase[e] == JOINED -> late++ };
               if
               :: atomic { tphase[e] == JOINED -> tphase[e] = LATE }
               :: atomic { tphase[e] != JOINED -> late-- }
               fi
            fi
#endif
        fi;
        for (k : 0 .. 2) { assert(ran[e * 3 + k] == 1) }
        returned = e;
        e++
    od;
    /* dagrt_graph_state_fini, then free */
#ifndef NOLATEWAIT
    (late == 0);
#endif
    freed = true
}

#ifdef NOEPOCH
/* The claim compares the node only, and keeps whatever epoch is there. */
#define MINE(cw, e) true
#define CLAIM1(cw, n) cur1 % 4 == (n) -> cur1 = W(cur1 / 4, NEXT1(n))
#define CLAIM0(cw) cur0 % 4 == A -> cur0 = W(cur0 / 4, NONE)
#else
#define MINE(cw, e) ((cw) / 4 == (e))
#define CLAIM1(cw, n) cur1 == (cw) -> cur1 = W(me, NEXT1(n))
#define CLAIM0(cw) cur0 == (cw) -> cur0 = W(me, NONE)
#endif

proctype Helper() {
    byte t = 1, me, cw, n, was;
    bool last;
    do
    :: t > RUNS -> break
    :: else ->
        (go >= t);
        if
        :: atomic { tphase[t] == OPEN -> tphase[t] = JOINED }
        :: goto next        /* stopped lingering, or the ticket was closed */
        fi;
        me = t;             /* the ticket's epoch, not the state's */
        last = false;
        /* its own list */
        do
        :: STOP; ACCESS; cw = cur1;
           if
           :: !MINE(cw, me) -> goto leave          /* the run is over: touch it no more */
           :: else
           fi;
           n = cw % 4;
           if
           :: n == NONE -> break
           :: else
           fi;
           ACCESS;
           if
           :: READY(n, me) ->
               if
               :: atomic { CLAIM1(cw, n) };
                  ACCESS; run_node(n, me);           /* no STOP: inside the node */
                  if
                  :: NEXT1(n) == NONE -> last = true; goto leave   /* its last access */
                  :: else
                  fi
               :: atomic { !(cur1 == cw) -> skip }  /* taken meanwhile: look again */
               fi
           :: !READY(n, me) -> (READY(n, me) || cur1 != cw)   /* wait */
           fi
        od;
        /* the caller's list, for a while */
        do
        :: STOP; ACCESS; cw = cur0;
           if
           :: !MINE(cw, me) || cw % 4 == NONE -> break
           :: else
           fi;
           if
           :: atomic { CLAIM0(cw) }; ACCESS; run_node(A, me)
           :: atomic { !(cur0 == cw) -> skip }
           fi
        :: break
        od;
leave:
        STOP;
#ifdef STORELEFT
        tphase[t] = LEFT;
        was = JOINED;
#else
        atomic { was = tphase[t]; tphase[t] = LEFT };
#endif
        if
        :: was == LATE -> STOP; ACCESS; late--
        :: else
        fi;
next:
        t++
    od
}

init {
    atomic { run Caller(); run Helper() }
}
