/*
 * live_replan.pml - live costs' re-plan of a pipeline's states between frames
 * (runtime/exec/live.c; the hand-over in runtime/exec/pipe.c,
 * dagrt_pipeline_submit; the frames as in runtime/exec/pplan.c).
 *
 * The protocol. A depth-2 pipeline runs frame f on state f % 2, each state
 * with its own plan (which node is on the caller's list, 0, and which on
 * the helper's, 1), `done` word per node and epoch. A frame started while
 * the frame before is in flight is linked after it: its node i waits for
 * node i of the frame before (that state's `done` at or after that frame's
 * epoch, read while the frame before may still run). The helper serves the
 * frames' tickets in order, running list 1 of each; the caller runs list 0
 * of a frame in its wait, frames oldest first, and waits for the helper to
 * leave the frame. A frame's state is reused two frames later, after its
 * wait. A re-plan (rt_plan_build) rewrites a state's lists and sets its
 * `done` words and epoch back to 0. The hand-over: a state is re-planned
 * only at its own frame's start, after its last frame was waited for, and
 * only once every frame in flight has been waited for too (the frame in
 * flight reads this state's `done` words); then every state of the
 * pipeline is re-planned (the same costs, the same plan) and the frame
 * starts unlinked.
 *
 * Modelled: FRAMES frames (4), the re-plan at frame REPLAN (2: frame 1 in
 * flight, frame 0 waited for); the graph: node 0 -> node 1, on lists 0 and
 * 1, swapped by each re-plan. Checked: every node runs exactly once per
 * frame, after its input in the frame and after the same node of the frame
 * before; no deadlock (the only valid end is every frame waited for).
 * Negative controls (tests/models/meson.build), each must be rejected:
 *   -DNODRAIN   the state is re-planned without waiting for the frame in
 *               flight (only its own last frame): that frame waits for
 *               `done` words the re-plan reset, while the new frame, linked
 *               after it, waits for it;
 *   -DNOWAIT    the state is re-planned before its own last frame's wait:
 *               that frame's helper and caller read different lists, and a
 *               node runs twice or never.
 */
#ifndef FRAMES
#define FRAMES 4
#endif
#ifndef REPLAN
#define REPLAN 2
#endif
#define N 2

byte done[2 * N];       /* done[s * N + i] */
byte epoch[2];
byte plan[2];           /* 0: node k on list k; 1: swapped */
bool linked[2];         /* the state's frame waits for the frame before's nodes */
byte pe[2];             /* the frame before's epoch (pprev_epoch) */
byte ran[FRAMES * N];   /* runs of node i in frame f */
bool left[FRAMES];      /* the helper left frame f */
byte offered;           /* frames offered to the helper */
byte waited;            /* frames waited for (oldest first) */

#define LISTNODE(s, k) ((plan[s] == 0) -> (k) : (1 - (k)))

/* Runs node i of frame f on state s once it is ready (its input done in
 * this frame; linked: the same node of the frame before done there). The
 * `done` words only move forward but for a re-plan's reset, so the test
 * and the run as one step lose nothing. */
inline run_node(f, s, i) {
    atomic {
        ((i == 0 || done[s * N] == epoch[s]) &&
         (!linked[s] || done[(1 - s) * N + i] >= pe[s])) ->
        assert(ran[f * N + i] == 0);
        assert(f == 0 || ran[(f - 1) * N + i] == 1);
        ran[f * N + i]++
    }
    done[s * N + i] = epoch[s]
}

/* rt_plan_build on state j: new lists, `done` and epoch back to 0. */
inline rebuild(j) {
    plan[j] = 1 - plan[j];
    done[j * N] = 0;
    done[j * N + 1] = 0;
    epoch[j] = 0
}

/* The caller's wait for the oldest frame in flight: its list, then the
 * helper's leaving. */
inline wait_oldest() {
    g = waited;
    gs = g % 2;
    gi = LISTNODE(gs, 0);
    run_node(g, gs, gi);
    left[g];
    waited++
}

active proctype caller()
{
    byte f = 0, s, g, gs, gi;
    do
    :: f < FRAMES ->
        s = f % 2;
#ifdef NOWAIT
        if
        :: f == REPLAN -> rebuild(s)
        :: else
        fi;
#endif
        if
        :: f - waited == 2 -> wait_oldest()   /* the state's own last frame */
        :: else
        fi;
#if !defined(NOWAIT)
        if
        :: f == REPLAN ->
#ifndef NODRAIN
            do
            :: f > waited -> wait_oldest()    /* every frame in flight */
            :: else -> break
            od;
            rebuild(0);
            rebuild(1)
#else
            rebuild(s)
#endif
        :: else
        fi;
#endif
        /* The frame's start (rt_pplan_start), then its offer. */
        epoch[s]++;
        linked[s] = (f > waited);
        pe[s] = epoch[1 - s];
        offered++;
        f++
    :: else -> break
    od;
    do
    :: waited < FRAMES -> wait_oldest()
    :: else -> break
    od;
    g = 0;
    do
    :: g < FRAMES * N -> assert(ran[g] == 1); g++
    :: else -> break
    od
}

active proctype helper()
{
    byte t = 0, s, i;
    do
    :: t < FRAMES ->
        t < offered;
        s = t % 2;
        i = LISTNODE(s, 1);
        run_node(t, s, i);
        left[t] = 1;
        t++
    :: else -> break
    od
}
