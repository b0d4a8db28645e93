/*
 * pipe_plan.pml - pipelined plan mode's cross-frame protocol
 * (runtime/exec/pplan.c, with plan_ready and rt_plan_work in
 * runtime/exec/plan.c and the offers in runtime/exec/plan_helper.c).
 *
 * The protocol. A pipeline of depth D keeps D graph states (slots); frame F
 * runs in slot F % D, under the slot's next epoch (slots count their runs;
 * `done` words only move forward). Each node is on one of two lists, the
 * caller's (list 0) and the helper's (list 1), each with a cursor: a node
 * is claimed (a CAS on its list's cursor) only when it is ready, run, and
 * published (done[slot][node] = the frame's epoch). Ready means: its
 * inputs of its own frame are done (== epoch) and, when frame F was
 * linked (frame F-1 still in flight when F was offered), the same node and
 * its `prev` inputs of frame F-1 have reached F-1's epoch ("at or after":
 * frame F-1's slot may already be running frame F-1+D).
 * - Submit (the main thread): with D frames in flight, wait for the
 *   oldest; set the slot up (epoch, cursors, the link to the frame before)
 *   and offer it under ticket F+1: the ticket's ring entry (t, OPEN), then
 *   `go`. An entry still OPEN or JOINED for the ticket RING before is not
 *   reused: that frame runs without a helper.
 * - The helper serves tickets in order: for each ticket up to `go`, it
 *   wins the entry ((t, OPEN) to (t, JOINED), a CAS) or skips it; serving,
 *   it claims and runs ready nodes of either list (the caller's too: the
 *   caller is away between its calls) and leaves whenever it holds no
 *   node (its list done, or nothing ready for a while); leaving stores
 *   (t, LEFT). It may stop lingering at any time it has no ticket to serve.
 * - Wait (the main thread, oldest frame first): claim and run ready nodes
 *   of either list until both cursors are at their ends, and meanwhile,
 *   looking ahead, ready nodes of the frames in flight after it (the same
 *   claims, on their cursors; also while it waits for LEFT); then the ticket's
 *   end: (t, OPEN) to (t, CLOSED) by a CAS if no helper joined, else wait
 *   for (t, LEFT), or for the entry to hold a later ticket (it was then
 *   left, and reused by this same thread); then, where nodes run off the
 *   lists, the wait for their tasks (the run's group). Then the slot is
 *   the next frame's (or the user's).
 * - A node that runs off the lists (-DOFFLIST: b, a fiber node; exec/plan_off.c,
 *   "nodes that run elsewhere") is claimed as any other, but its claimer
 *   spawns a task (counted in the frame's group) and goes on at once; the
 *   task runs the node and publishes it (done = epoch), then leaves the
 *   group.
 *
 * Modelled: depth DEPTH (2; -DDEPTH=3) over FRAMES frames (3; -DFRAMES=4),
 * HELPERS helpers (1; -DHELPERS=2: a pipelined frame gets helpers of its own
 * while others still serve the frame before, rt_plan_spare_helpers, so two
 * frames' tickets are served side by side, each helper in ticket order),
 * RING (2) ring entries, so tickets reuse entries while others are open;
 * the graph  a; b after a; c after prev a  with a on the caller's list and
 * b, c on the helper's (an edge across the lists, and a `prev` input that
 * may be read late, after the frame before's slot moved on); -DORJOIN
 * makes c  after b or prev b  and puts it on the caller's list after a, so
 * that neither input is implied by its list's order (with c after b on one
 * list, any OR over b of its frame holds as soon as c's turn comes, and the
 * model would store no more states than the AND one). Checked:
 * - every node of every frame runs once, and all have ended when its
 *   wait returns;
 * - a node of frame F+1 starts only after the same node of frame F ended;
 *   b only after a of its frame; c only after a of the frame before (OR:
 *   after b of its frame or of the frame before);
 * - nobody touches a slot for frame F (claims, node runs, publications)
 *   once frame F's wait has returned;
 * - no deadlock: the only valid end state is every frame waited for.
 * Negative controls (tests/models/meson.build), each must be rejected:
 *   -DEQUALS      the frame before's `done` tested with == instead of "at or
 *                 after": a late `prev` reader finds its slot already at
 *                 the next epoch and waits forever;
 *   -DNOSAMENODE  no same-node test: a node of frame F+1 may run before the
 *                 same node of frame F;
 *   -DNOLEFT      the wait returns once every node is claimed, without
 *                 waiting for a joined helper's LEFT: the helper still runs
 *                 a node of a frame whose slot moved on;
 *   -DNOCLOSE     the wait of a frame no helper joined returns without
 *                 closing its ticket: a late helper joins a finished frame;
 *   -DNOGROUP     (with -DOFFLIST) the wait returns without waiting for the
 *                 frame's off-list tasks: one still runs and publishes its
 *                 node in a slot that moved on.
 *
 * Abstracted: node bodies (one step to start, one to end and publish), the
 * claim of two nodes by one CAS and the publication of a thread's last
 * node after its next claim (both only reorder a thread's own steps), the
 * spins and the time limits (any thread may try any ready node at any
 * time, the helper may leave at any time it holds none), `on main` (the
 * helper never claims such a node; none here), the helper's move off the
 * caller's CPU, `present` and the spawn (the caller finishes every frame
 * alone when no helper comes), and epochs wrapping (2^32 runs of a slot).
 *
 * Memory model: Promela is sequentially consistent. The decisions here are
 * RMWs on one location each (a cursor's CAS, an entry's CAS) and loads of
 * `done` words that only move forward (release stores, acquire loads): a
 * reader that sees a value sees the effects of the node that stored it,
 * and a stale read only delays readiness. The one store-then-load shape
 * (present and go, exec/plan_helper.c) is not part of this model.
 */
#ifndef DEPTH
#define DEPTH 2
#endif
#ifndef FRAMES
#define FRAMES 3
#endif
#ifndef HELPERS
#define HELPERS 1
#endif
#define RING 2
#define NN 3
#define A 0
#define B 1
#define C 2
#define NOFRAME 255

#define OPEN 0
#define JOINED 1
#define LEFT 2
#define CLOSED 3

byte epoch[DEPTH];
byte done[DEPTH * NN];          /* per slot and node: the epoch it last completed in */
byte slotframe[DEPTH];          /* the frame a slot runs, NOFRAME: none */
byte fepoch[FRAMES];
byte pe[FRAMES];                /* the epoch of the frame before, if linked */
bool linked[FRAMES];
byte cur0[FRAMES];              /* list 0: a; at 1 its end */
byte cur1[FRAMES];              /* list 1: b, c; at 2 its end */
bool started[FRAMES * NN];
bool ended[FRAMES * NN];
bool waited[FRAMES];
byte pending[FRAMES];           /* the frame's group: off-list tasks not yet over */
byte ot[RING];                  /* ring entries: ticket and phase */
byte op[RING];
byte go;
byte fticket[FRAMES];           /* 0: offered to no helper */

#define SLOT(f) ((f) % DEPTH)
#define PSLOT(f) (((f) + DEPTH - 1) % DEPTH)
#define DONE(f, i) (done[SLOT(f) * NN + (i)] == fepoch[f])
#ifdef EQUALS
#define REACHED(f, i) (done[PSLOT(f) * NN + (i)] == pe[f])
#else
#define REACHED(f, i) (done[PSLOT(f) * NN + (i)] >= pe[f])
#endif
#ifdef NOSAMENODE
#define SAME(f, i) true
#else
#define SAME(f, i) (!linked[f] || REACHED(f, i))
#endif
#define READY_A(f) SAME(f, A)
#define READY_B(f) (SAME(f, B) && DONE(f, A))
#ifdef ORJOIN
#define READY_C(f) (SAME(f, C) && (!linked[f] || DONE(f, B) || REACHED(f, B)))
#else
#define READY_C(f) (SAME(f, C) && (!linked[f] || REACHED(f, A)))
#endif
#define ENDED(f, i) ended[(f) * NN + (i)]

/* Runs node i of frame f (claimed by the calling thread). */
inline run_node(f, i)
{
    atomic {
        assert(slotframe[SLOT(f)] == f && !waited[f]);
        assert(!started[(f) * NN + i]);
        assert(f == 0 || ENDED(f - 1, i));
        assert(i != B || ENDED(f, A));
#ifdef ORJOIN
        assert(i != C || f == 0 || ENDED(f, B) || ENDED(f - 1, B));
#else
        assert(i != C || f == 0 || ENDED(f - 1, A));
#endif
        started[(f) * NN + i] = 1
    }
    atomic {
        assert(slotframe[SLOT(f)] == f && !waited[f]);
        ended[(f) * NN + i] = 1;
        done[SLOT(f) * NN + i] = fepoch[f]
    }
}

/* The lists: a (then c, -DORJOIN) on the caller's, b (then c) on the
 * helper's; each cursor's end. */
#ifdef ORJOIN
#define END0 2
#define END1 1
#else
#define END0 1
#define END1 2
#endif

/* b run off the lists (-DOFFLIST): its task, spawned by the claimer. */
proctype offtask(byte f)
{
    run_node(f, B);
    pending[f]--   /* the task's end completes its group (after the publication) */
}

/* b, claimed: run here, or spawned as a task (-DOFFLIST). */
inline run_b(f)
{
#ifdef OFFLIST
    atomic { pending[f]++; run offtask(f) }
#else
    run_node(f, B)
#endif
}

/* One claim of a ready node of frame f, from either list, if ok (blocks
 * until one is ready; the caller's loop and the helper's give it
 * alternatives). */
inline claim_run_if(f, ok)
{
    if
    :: atomic { ok && cur0[f] == 0 && READY_A(f) -> assert(slotframe[SLOT(f)] == f); cur0[f] = 1 };
       run_node(f, A)
    :: atomic { ok && cur1[f] == 0 && READY_B(f) -> assert(slotframe[SLOT(f)] == f); cur1[f] = 1 };
       run_b(f)
#ifdef ORJOIN
    :: atomic { ok && cur0[f] == 1 && READY_C(f) -> assert(slotframe[SLOT(f)] == f); cur0[f] = 2 };
       run_node(f, C)
#else
    :: atomic { ok && cur1[f] == 1 && READY_C(f) -> assert(slotframe[SLOT(f)] == f); cur1[f] = 2 };
       run_node(f, C)
#endif
    fi
}
#define claim_run(f) claim_run_if(f, true)

inline submit(f, inflight)
{
    atomic {
        assert(slotframe[SLOT(f)] == NOFRAME);
        slotframe[SLOT(f)] = f;
        epoch[SLOT(f)]++;
        fepoch[f] = epoch[SLOT(f)];
        linked[f] = inflight > 0;
        if
        :: linked[f] -> pe[f] = fepoch[f - 1]
        :: else -> skip
        fi;
        cur0[f] = 0;
        cur1[f] = 0;
        pending[f] = 0;
        /* the offer: ticket f + 1 */
        if
        :: op[(f + 1) % RING] == OPEN || op[(f + 1) % RING] == JOINED -> fticket[f] = 0
        :: else ->
            ot[(f + 1) % RING] = f + 1;
            op[(f + 1) % RING] = OPEN;
            fticket[f] = f + 1;
            go = f + 1
        fi
    }
}

/* upto: frames submitted; those after f are in flight (looked ahead into). */
inline wait(wf, upto)
{
    do
    :: cur0[wf] == END0 && cur1[wf] == END1 -> break
    :: claim_run(wf)
    :: claim_run_if(wf + 1, wf + 1 < upto)
    :: claim_run_if(wf + 2, wf + 2 < upto)
    od;
    if
    :: fticket[wf] != 0 ->
        if
        :: atomic { ot[fticket[wf] % RING] == fticket[wf] && op[fticket[wf] % RING] == OPEN ->
#ifndef NOCLOSE
                    op[fticket[wf] % RING] = CLOSED
#else
                    skip
#endif
           }
        :: atomic { ot[fticket[wf] % RING] == fticket[wf] && op[fticket[wf] % RING] != OPEN -> skip };
#ifndef NOLEFT
           /* looking ahead while the helper has not left */
           do
           :: (op[fticket[wf] % RING] == LEFT || ot[fticket[wf] % RING] != fticket[wf]) -> break
           :: claim_run_if(wf + 1, wf + 1 < upto)
           :: claim_run_if(wf + 2, wf + 2 < upto)
           od
#else
           skip
#endif
        /* The entry was offered again: the ticket was left before (an
         * entry is reused only then, seen by this same thread). */
        :: ot[fticket[wf] % RING] != fticket[wf] -> skip
        fi
    :: else -> skip
    fi;
#ifndef NOGROUP
    pending[wf] == 0;   /* the group wait */
#endif
    atomic {
        assert(ENDED(wf, A) && ENDED(wf, B) && ENDED(wf, C));
        waited[wf] = 1;
        slotframe[SLOT(wf)] = NOFRAME
    }
}

active proctype main_thread()
{
    byte f = 0, oldest = 0, inflight = 0;
    atomic {
        /* slots idle; ring entries left (ticket 0 is never offered) */
        for (f : 0 .. DEPTH - 1) { slotframe[f] = NOFRAME }
        for (f : 0 .. RING - 1) { op[f] = LEFT }
        f = 0
    }
    do
    :: f < FRAMES ->
        if
        :: inflight == DEPTH ->
            wait(oldest, f);
            oldest++;
            inflight--
        :: else -> skip
        fi;
        submit(f, inflight);
        f++;
        inflight++
    :: f == FRAMES && inflight > 0 ->
        wait(oldest, f);
        oldest++;
        inflight--
    :: f == FRAMES && inflight == 0 -> break
    od
}

active [HELPERS] proctype helper()
{
    byte next = 1, k, fr;
    bool joined;
    do
    :: next <= FRAMES && go >= next ->
        k = next % RING;
        atomic {
            if
            :: ot[k] == next && op[k] == OPEN -> op[k] = JOINED; joined = 1
            :: else -> joined = 0
            fi
        }
        if
        :: joined ->
            fr = next - 1;
            assert(slotframe[SLOT(fr)] == fr && !waited[fr]);
            do
            :: claim_run(fr)
            :: break   /* it holds no node: it may leave at any time */
            od;
            op[k] = LEFT
        :: else -> skip
        fi;
        next++
    :: next > FRAMES || go < next -> break   /* stops lingering */
    od
}
