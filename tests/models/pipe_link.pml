/*
 * pipe_link.pml - a pipeline's cross-frame hand-off and the reuse of a
 * frame's state DEPTH frames later (runtime/exec_pipe.c; the interface is
 * dagrt_pipeline_submit / dagrt_pipeline_drain in dagrt.h).
 *
 * The protocol. A pipeline of depth D keeps D graph states (slots); frame N
 * runs in slot N % D. In a pipeline every node v of frame N+1 waits, beside
 * its inputs of frame N+1, for node v of frame N (same-node order) and for
 * the nodes X of frame N it names as `prev X`. So each node of frame N+1
 * has a join counter of npred + 1 + nprev (the first frame after an idle
 * pipeline: npred only). Each node of a frame also has a link word (FREE,
 * DONE, LINKED), reset with the slot.
 * - Submitting frame N (the main thread): if D frames are in flight, wait
 *   (helping: run ready nodes of any frame) for frame N-D, the slot's last
 *   user; then reset the slot's counters and link words, set frame N-1's
 *   `next` to the slot, and exchange(link[X], LINKED) for every node X of
 *   frame N-1. Where that returned DONE, X already completed, and the
 *   submitter counts X into frame N itself: X's own counter (same-node)
 *   and the counter of each node in psucc(X) (the nodes with `prev X`).
 * - Completing node X of frame N (any thread, the main one included):
 *   count down X's successors of frame N, then exchange(link[X], DONE);
 *   where that returned LINKED, frame N+1 exists and its `next` is set:
 *   count X into frame N+1 (same node and psucc(X)). Only then does the
 *   node count as done for the frame's wait (`done`, as exec_dyn.c counts a
 *   node after its completion returned).
 * - A counter that reaches 0 fires its node (AND join). Frames are waited
 *   for oldest first; a frame's wait returns when `done` reached the node
 *   count, and only then may its slot be reused (D frames later).
 * Exactly one of the submitter and the completer sees the other's mark in
 * the link word, and that one counts X into frame N+1.
 *
 * Modelled: depth DEPTH (2 by default; -DDEPTH=3) running FRAMES frames
 * (3 by default) of the graph  a; b (prev a); c after a, b  (an AND edge
 * within the frame, a `prev` edge across frames, and the same-node edges),
 * with the main thread (submitter, and helper while it waits) and WORKERS
 * (2) worker threads that run any ready node of any frame. Checked:
 * - every node of every frame starts once and ends (assert at its start,
 *   and after the drain);
 * - a node of frame N+1 starts only after the same node of frame N ended,
 *   b of frame N+1 only after a of frame N ended, c only after a and b of
 *   its own frame ended;
 * - X of frame N is counted into frame N+1 exactly once (by one side);
 * - no counter goes below zero, and no thread touches a slot's counters,
 *   link words or `next` for frame N once frame N's wait returned (the
 *   slot's owner is then frame N+D);
 * - no deadlock: the only valid end state is every frame waited for (a
 *   lost hand-off leaves the main thread blocked in a wait: invalid end
 *   state).
 * Negative controls (see meson.build), each must be rejected:
 *   -DNOEXCHANGE  both sides access the link word with a load then a store
 *                 instead of one exchange: both may read FREE (nobody
 *                 counts X: the next frame never completes) or both see
 *                 the other's mark (X counted twice);
 *   -DEARLYREUSE  the submitter reuses a slot once every node of its frame
 *                 has completed (counted its successors down) instead of
 *                 after the frame's wait: a completer may still be handing
 *                 off, and touches the slot of frame N+D;
 *   -DLATENEXT    the submitter sets frame N-1's `next` after its
 *                 exchanges: a completer that saw LINKED reads no frame.
 *
 * Abstracted: node bodies (one step to start, one to end), the ready lists
 * and helpers (a ready node is a flag any thread may claim), `on main`,
 * hot and fiber placement, OR joins, parallel nodes, the serial path for
 * tiny frames, an idle pipeline (the model drains once, at the end), and
 * depth 1 (frame N+1 reuses frame N's slot after waiting for it: no
 * frames overlap and nothing is handed off).
 *
 * Memory model: Promela runs sequentially consistent; the runtime's link
 * exchanges and counter decrements are acq_rel RMWs, and `next` and the
 * reset counters are plain stores made before the submitter's exchanges.
 * SC modelling suffices here because every cross-thread decision is made
 * by RMWs on one location: C11 gives all modifications of one atomic a
 * total order in which each RMW reads the value written just before it,
 * whatever its memory order, so which side sees the other's mark is
 * exactly as in some interleaving. What acq_rel adds is the payload: the
 * side that counts X into frame N+1 either is the submitter (its own reset
 * and `next`) having acquired the completer's release (X's effects), or is
 * the completer having acquired the submitter's release (the reset of frame
 * N+1 and `next`). The protocol has no store-then-load of different
 * locations (the store-buffering shape that needs seq_cst, as in
 * park.pml), so no weaker-than-SC outcome is left out of the model.
 */
#ifndef DEPTH
#define DEPTH 2
#endif
#ifndef FRAMES
#define FRAMES 3
#endif
#if DEPTH < 2 || DEPTH > 3
#error "pipe_link.pml models depth 2 or 3 (claim's TRY list covers 3 slots)"
#endif
#define WORKERS 2

#define NN 3            /* nodes: a, b, c */
#define A 0
#define B 1
#define C 2
#define ALL 7           /* a bit per node */
#define NONE 255

#define FREE 0          /* link word */
#define DONE 1
#define LINKED 2

#define WAITING 0       /* a node in its slot */
#define READY 1
#define CLAIMED 2

byte cnt[DEPTH * NN];   /* join counters, slot s node x at s * NN + x */
byte link[DEPTH * NN];  /* link words */
byte st[DEPTH * NN];    /* WAITING, READY (fired), CLAIMED (by a runner) */
byte next[DEPTH];       /* the slot of the frame after this slot's frame */
byte ndone[DEPTH];      /* nodes whose completion returned (the wait's count) */
byte owner[DEPTH];      /* the frame whose state the slot holds */

/* Observers (not part of the protocol): bit x = node x, per frame. */
byte started[FRAMES];
byte ended[FRAMES];
byte compl[FRAMES];     /* successors within the frame counted down */
byte handed[FRAMES];    /* counted into this frame from the previous one */
bool finished = false;

inline fire(s, y) { st[(s) * NN + (y)] = READY }

/* fetch_sub(&cnt, 1) (acq_rel) on node y of the frame f in slot s; the
 * last one fires y. */
inline dec(s, y, f) {
    atomic {
        assert(owner[s] == f);
        assert(cnt[(s) * NN + (y)] > 0);
        cnt[(s) * NN + (y)]--;
        if
        :: cnt[(s) * NN + (y)] == 0 -> fire(s, y)
        :: else -> skip
        fi
    }
}

/* Node x of frame f-1 is counted into frame f (slot s): its own counter,
 * and psucc(x) (b has `prev a`). */
inline count_in(s, x, f) {
    atomic {
        assert((handed[f] & (1 << (x))) == 0);
        handed[f] = handed[f] | (1 << (x));
        dec(s, x, f)
    };
    if
    :: x == A -> dec(s, B, f)
    :: else -> skip
    fi
}

#define TRY(k) :: (k) < DEPTH * NN && st[k] == READY -> i = k

/* Take any ready node of any frame (blocks while there is none). */
inline claim(i, s, x, f) {
    atomic {
        if
        TRY(0) TRY(1) TRY(2) TRY(3) TRY(4) TRY(5)
#if DEPTH > 2
        TRY(6) TRY(7) TRY(8)
#endif
        fi;
        st[i] = CLAIMED;
        s = i / NN;
        x = i % NN;
        f = owner[s];
        i = 0
    }
}

/* Run node x of frame f (slot s), complete it and hand it off. */
inline run_node(s, x, f, old, ns) {
    atomic {
        assert(owner[s] == f);
        assert((started[f] & (1 << x)) == 0);
        started[f] = started[f] | (1 << x);
        if
        :: f > 0 -> assert((ended[f - 1] & (1 << x)) != 0)
        :: else -> skip
        fi;
        if
        :: f > 0 && x == B -> assert((ended[f - 1] & (1 << A)) != 0)
        :: else -> skip
        fi;
        if
        :: x == C -> assert((ended[f] & 3) == 3)
        :: else -> skip
        fi
    };
    /* The body returns; then its successors in the frame are counted down
     * (compl, an observer, is set with the last of them). */
    if
    :: x != C ->
        ended[f] = ended[f] | (1 << x);
        atomic { dec(s, C, f); compl[f] = compl[f] | (1 << x) }
    :: else ->
        atomic { ended[f] = ended[f] | (1 << x); compl[f] = compl[f] | (1 << x) }
    fi;
#ifdef NOEXCHANGE
    atomic { assert(owner[s] == f); old = link[s * NN + x] };
    atomic { assert(owner[s] == f); link[s * NN + x] = DONE };
#else
    atomic {
        assert(owner[s] == f);
        old = link[s * NN + x];
        link[s * NN + x] = DONE
    };
#endif
    if
    :: old == LINKED ->
        atomic { assert(owner[s] == f); ns = next[s] };
        assert(ns != NONE);
        count_in(ns, x, f + 1)
    :: else -> skip
    fi;
    atomic {
        assert(owner[s] == f);
        ndone[s]++;
        /* the runner's locals are dead now: clear them (fewer states) */
        s = 0; x = 0; f = 0; old = 0; ns = 0
    }
}

/* The wait for frame f (slot s), oldest first: helps until it returns. */
inline wait(s, f) {
    do
#ifdef EARLYREUSE
    :: compl[f] == ALL -> break
#else
    :: ndone[s] == NN -> assert(owner[s] == f); break
#endif
    :: claim(ri, rs, rx, rf) -> run_node(rs, rx, rf, rold, rns)
    od
}

active proctype main()
{
    byte n = 0, s, ps, x, old;
    byte ri, rs, rx, rf, rold, rns;   /* the node it runs while it waits */
    do
    :: n < FRAMES ->
        s = n % DEPTH;
        if
        :: n >= DEPTH -> wait(s, n - DEPTH)
        :: else -> skip
        fi;
        owner[s] = n;   /* from here on the slot is frame n's */
        d_step {
            x = 0;
            do
            :: x < NN ->
                link[s * NN + x] = FREE;
                st[s * NN + x] = WAITING;
                x++
            :: else -> break
            od;
            if
            :: n == 0 ->
                cnt[s * NN + A] = 0; cnt[s * NN + B] = 0; cnt[s * NN + C] = 2
            :: else ->   /* npred + same node + nprev */
                cnt[s * NN + A] = 1; cnt[s * NN + B] = 2; cnt[s * NN + C] = 3
            fi;
            next[s] = NONE;
            ndone[s] = 0;
            x = 0
        };
        if
        :: n == 0 -> fire(s, A); fire(s, B)
        :: else ->
            ps = (n - 1) % DEPTH;
#ifndef LATENEXT
            atomic { assert(owner[ps] == n - 1); next[ps] = s };
#endif
            do
            :: x < NN ->
#ifdef NOEXCHANGE
                atomic { assert(owner[ps] == n - 1); old = link[ps * NN + x] };
                link[ps * NN + x] = LINKED;
#else
                atomic {
                    assert(owner[ps] == n - 1);
                    old = link[ps * NN + x];
                    link[ps * NN + x] = LINKED
                };
#endif
                if
                :: old == DONE -> count_in(s, x, n)
                :: else -> skip
                fi;
                x++
            :: else -> break
            od;
#ifdef LATENEXT
            next[ps] = s;
#endif
            x = 0
        fi;
        n++
    :: else -> break
    od;
    /* drain: every frame in flight, oldest first */
    if
    :: FRAMES > DEPTH -> n = FRAMES - DEPTH
    :: else -> n = 0
    fi;
    do
    :: n < FRAMES -> wait(n % DEPTH, n); n++
    :: else -> break
    od;
    n = 0;
    do
    :: n < FRAMES ->
        assert(started[n] == ALL && ended[n] == ALL);
        assert(n == 0 || handed[n] == ALL);
        n++
    :: else -> break
    od;
    finished = true
}

active [WORKERS] proctype worker()
{
    byte i, s, x, f, old, ns;
    do
    :: finished -> break
    :: claim(i, s, x, f) -> run_node(s, x, f, old, ns)
    od
}
