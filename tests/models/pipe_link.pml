/*
 * pipe_link.pml - a pipeline's cross-frame hand-off and the reuse of a
 * frame's state DEPTH frames later (runtime/exec/pipe.c; the counters and
 * the hand-off itself are in runtime/exec/dynamic.c: input_done, same_done,
 * complete, handoff, rt_exec_cross, rt_exec_dyn_link).
 *
 * The protocol. A pipeline of depth D keeps D graph states (slots); frame N
 * runs in slot N % D. In a linked frame (one submitted while the frame
 * before it is in flight) every node v waits, beside its inputs of its own
 * frame, for node v of the frame before (same-node order) and for the nodes
 * X of the frame before that it names as `prev X`. An AND node's counter
 * starts at npred + 1 + nprev; an OR node's at npred + nprev, and the first
 * of those inputs takes one off its `arm` (from 2), the same node of the
 * frame before the other; the node fires when `arm` reaches 0. Each node of
 * a frame also has a link word (NONE, DONE, LINKED), reset with the slot.
 * - Submitting frame N (the main thread): if D frames are in flight, wait
 *   (helping: run ready nodes of any frame) for frame N-D, the slot's last
 *   user; reset the slot's counters and link words; set frame N-1's `next`
 *   to the slot, and exchange(link[X], LINKED) for every node X of frame
 *   N-1. Where that returned DONE, X already completed, and the submitter
 *   counts X into frame N itself (rt_exec_cross): X's own node (same-node)
 *   and each node in psucc(X) (the nodes with `prev X`).
 * - Completing node X of frame N (any thread, the main one included):
 *   count down X's successors of frame N, then exchange(link[X], DONE);
 *   where that returned LINKED, frame N+1 exists and `next` is set: count X
 *   into frame N+1 the same way. A gate completes where it fires, with its
 *   own hand-off, so a thread handing X off into frame N+1 may complete a
 *   gate of frame N+1 and hand that off into frame N+2, and so on. A
 *   thread adds the nodes it completed to the frame's `done` only after
 *   all of that (exec/dynamic.c's drain; rt_exec_cross for the nodes of the
 *   frames after).
 * - Frames are waited for oldest first; a frame's wait returns when `done`
 *   reached the node count (and the frame's group is empty), and only then
 *   may its slot be reused (D frames later).
 * Exactly one of the submitter and the completer sees the other's mark in
 * the link word, and that one counts X into frame N+1.
 *
 * Modelled: depth DEPTH (2 by default; -DDEPTH=3) running FRAMES frames
 * (3 by default) of the graph  a; b after prev a; c after a, b  (an AND
 * edge within the frame, a `prev` edge across frames, and the same-node
 * edges); -DGATE makes c a gate; -DORJOIN makes it  c after a or prev b
 * (an OR node with a `prev` input, its `arm`, and a late input that may
 * arrive after c ran). Threads: the main thread (submitter, and while it
 * waits it helps: it may run any ready node of any frame, which covers the
 * runtime's own frame's nodes, later frames' through ready_ahead and any
 * drainer task) and WORKERS (2) workers that run any ready node of any
 * frame. Frame 0 is the first after an idle pipeline (prev inputs satisfied
 * at the start, no link). Checked:
 * - every node of every frame starts once, and all have ended when the
 *   drain returns;
 * - a node of frame N+1 starts only after the same node of frame N ended;
 *   b of frame N+1 only after a of frame N ended; c only after a and b of
 *   its frame ended (OR: after a of its frame or b of the frame before);
 * - X of frame N is counted into frame N+1 exactly once (by one side);
 * - no counter goes below zero, and no thread touches a slot (counters,
 *   arm, link words, `next`, `done`) for frame N once frame N's wait has
 *   returned (the slot's owner is then frame N+D, or nobody after the
 *   drain: the state is the user's again);
 * - no deadlock: the only valid end state is every frame waited for (a
 *   lost hand-off leaves the main thread blocked in a wait: invalid end
 *   state).
 * Negative controls (see meson.build), each must be rejected:
 *   -DNOEXCHANGE  both sides access the link word with a load then a store
 *                 instead of one exchange: both may read NONE (nobody
 *                 counts X: the next frame never completes) or both see
 *                 the other's mark (X counted twice);
 *   -DEARLYREUSE  the submitter reuses a slot once every node of its frame
 *                 has counted its successors down, instead of after the
 *                 frame's wait: a completer may still be handing off, and
 *                 touches the slot of frame N+D;
 *   -DLATENEXT    the submitter sets frame N-1's `next` after its
 *                 exchanges: a completer that saw LINKED reads no frame.
 *   -DORJOIN -DNEWESTFIRST  the frames in flight are waited for newest
 *                 first (as a user's G_instance_wait on a pipeline's own instance
 *                 would) and their states handed back: the late `prev`
 *                 input of c of frame N+1 may still be on its way from
 *                 frame N's thread after frame N+1 completed. Waiting
 *                 oldest first is what keeps a frame's state alive for
 *                 every count into it (AND inputs are all needed for the
 *                 frame to complete, so the AND graph does not depend on
 *                 it).
 *
 * Abstracted: node bodies (one step to start, one to end), the ready lists
 * and drainers (a ready node is a flag any thread may claim, so the
 * deadlock check is about the counts, a hand-off lost or made twice, not
 * about which thread drains which list), the group
 * (a wait is `done` reaching the node count), `on main`, hot and fiber
 * placement, parallel nodes, the serial path for tiny frames, an idle
 * pipeline in the middle (the model drains once, at the end), and depth 1
 * (exec/pipe.c links a frame only after a frame still in flight, which
 * depth 1 never has: nothing is handed off).
 *
 * Memory model: Promela runs sequentially consistent; the runtime's link
 * exchanges and counter decrements are acq_rel RMWs; the reset counters
 * are plain stores and `next` a release store, made before the
 * submitter's exchanges (a completer reads `next` after its exchange saw
 * LINKED; the waiting caller's look-ahead reads it with acquire).
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
 * park.pml), so no weaker-than-SC outcome is left out of the model. The
 * reuse of a slot is ordered in the runtime by the frame's group wait
 * (every thread that ran one of its nodes has left the group); the model's
 * wait reads `done`, counted last by each such thread, in its place.
 *
 * Bounds: exhaustive search (no bit-state hashing, no compression: what
 * check.sh builds). Depth 2 over 3 or 4 frames is 0.4 to 1.5 million
 * states (under 300 MB, a few seconds of search); depth 3 over 4 frames
 * about 9 million states, 1.2 GB and 15 to 30 s of search on a loaded
 * 2-core machine.
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
#if defined(GATE) && defined(ORJOIN)
#error "pipe_link.pml: GATE or ORJOIN, not both"
#endif
#ifdef GATE
#define C_GATE 1
#else
#define C_GATE 0
#endif
#ifdef ORJOIN
#define ORJOIN_ 1
#else
#define ORJOIN_ 0
#endif
#define WORKERS 2

#define NN 3            /* nodes: a, b, c */
#define A 0
#define B 1
#define C 2
#define ALL 7           /* a bit per node */
#define NOSLOT 255

#define NONE 0          /* link word (exec/exec.h LINK_*) */
#define DONE 1
#define LINKED 2

#define WAITING 0       /* a task in its slot */
#define READY 1
#define CLAIMED 2

#define K(s, y) ((s) * NN + (y))

byte cnt[DEPTH * NN];   /* join counters (pending) */
byte arm[DEPTH * NN];   /* an OR node's two conditions (ORJOIN: c) */
byte link[DEPTH * NN];  /* link words */
byte st[DEPTH * NN];    /* WAITING, READY (fired), CLAIMED (by a runner) */
byte next[DEPTH];       /* the slot of the frame linked after this slot's */
byte ndone[DEPTH];      /* nodes counted done (what the wait reads) */
byte owner[DEPTH];      /* the frame whose state the slot holds */

/* Observers (not part of the protocol): bit x = node x, per frame. */
byte started[FRAMES];
byte ended[FRAMES];
#ifdef EARLYREUSE
byte compl[FRAMES];     /* successors within the frame counted down */
#define COMPL(f, x) compl[f] = compl[f] | (1 << (x))
#else
#define COMPL(f, x) skip
#endif
byte handed[FRAMES];    /* counted into this frame from the one before */
bool finished = false;

/* Node y of the frame in slot s fired: a task becomes ready, a gate (g)
 * completes on the firing thread. */
inline fire(s, y, g) {
    if
    :: C_GATE && y == C -> g = 1
    :: else -> st[K(s, y)] = READY
    fi
}

/* fetch_sub(&pending, 1) (acq_rel) on node y of frame f (slot s): AND,
 * and the same-node input of an AND node; the last one fires y. */
inline dec(s, y, f, g) {
    atomic {
        assert(owner[s] == f);
        assert(cnt[K(s, y)] > 0);
        cnt[K(s, y)]--;
        if
        :: cnt[K(s, y)] == 0 -> fire(s, y, g)
        :: else -> skip
        fi
    }
}

/* fetch_sub(&arm, 1) (acq_rel): one of an OR node's two conditions. */
inline arm_dec(s, y, f, g) {
    atomic {
        assert(owner[s] == f);
        assert(arm[K(s, y)] > 0);
        arm[K(s, y)]--;
        if
        :: arm[K(s, y)] == 0 -> fire(s, y, g)
        :: else -> skip
        fi
    }
}

/* input_done: an input of node y (of its frame, or a `prev` one) done. */
inline input_done(s, y, f, g, t) {
#ifdef ORJOIN
    if
    :: y == C ->
        atomic {
            assert(owner[s] == f);
            assert(cnt[K(s, y)] > 0);
            t = cnt[K(s, y)];
            cnt[K(s, y)]--
        };
        if
        :: t == 2 -> atomic { t = 0; arm_dec(s, y, f, g) }   /* the first input */
        :: else -> t = 0                                     /* a late one */
        fi
    :: else -> dec(s, y, f, g)
    fi
#else
    dec(s, y, f, g)
#endif
}

/* same_done: node y of the frame before completed. */
inline same_done(s, y, f, g) {
#ifdef ORJOIN
    if
    :: y == C -> arm_dec(s, y, f, g)
    :: else -> dec(s, y, f, g)
    fi
#else
    dec(s, y, f, g)
#endif
}

/* rt_exec_cross: node x of frame f-1 is counted into frame f (slot s):
 * its own node, then psucc(x) (b has `prev a`; ORJOIN: c has `prev b`). */
inline cross(s, x, f, g, t) {
    atomic {
        assert((handed[f] & (1 << (x))) == 0);
        handed[f] = handed[f] | (1 << (x));
        same_done(s, x, f, g)
    };
    if
    :: x == A -> input_done(s, B, f, g, t)
#ifdef ORJOIN
    :: x == B -> input_done(s, C, f, g, t)
#endif
    :: else -> skip
    fi
}

/* The start of node x of frame f: its order. */
inline check_start(x, f) {
    assert((started[f] & (1 << (x))) == 0);
    started[f] = started[f] | (1 << (x));
    if
    :: f > 0 -> assert((ended[f - 1] & (1 << (x))) != 0)
    :: else -> skip
    fi;
    if
    :: f > 0 && x == B -> assert((ended[f - 1] & (1 << A)) != 0)
    :: else -> skip
    fi;
#ifdef ORJOIN
    if
    :: x == C -> assert(f == 0 || (ended[f] & (1 << A)) != 0 ||
                        (ended[f - 1] & (1 << B)) != 0)
    :: else -> skip
    fi
#else
    if
    :: x == C -> assert((ended[f] & 3) == 3)
    :: else -> skip
    fi
#endif
}

/* Gate c of frame f (slot s) fired on this thread (g): it completes here,
 * and so may, through its hand-off, c of the frames after. Those frames'
 * `done` is counted here, the last first (each rt_exec_cross adds its own
 * after the one it called); frame f's is the caller's. */
inline gate_chain(s, f, g, t, ns, k, cs) {
    k = 0;
    cs = s;
    do
    :: g == 1 ->
        atomic {
            g = 0;
            assert(owner[cs] == f + k);
            check_start(C, f + k);
            ended[f + k] = ended[f + k] | (1 << C);
            COMPL(f + k, C)
        };
        atomic {
            assert(owner[cs] == f + k);
            t = link[K(cs, C)];
            link[K(cs, C)] = DONE
        };
        if
        :: t == LINKED ->
            atomic { assert(owner[cs] == f + k); t = 0; ns = next[cs] };
            assert(ns != NOSLOT);
            cross(ns, C, f + k + 1, g, t);
            if
            :: g == 1 -> k++; cs = ns
            :: else -> skip
            fi
        :: else -> t = 0
        fi
    :: else -> break
    od;
    do
    :: k > 0 ->
        atomic {
            assert(owner[(f + k) % DEPTH] == f + k);
            ndone[(f + k) % DEPTH]++;
            k--
        }
    :: else -> break
    od;
    atomic { cs = 0; ns = 0 }
}

/* The completer's hand-off of node x of frame f (slot s). */
inline handoff(s, x, f, g, t, ns) {
#ifdef NOEXCHANGE
    atomic { assert(owner[s] == f); t = link[K(s, x)] };
    atomic { assert(owner[s] == f); link[K(s, x)] = DONE };
#else
    atomic {
        assert(owner[s] == f);
        t = link[K(s, x)];
        link[K(s, x)] = DONE
    };
#endif
    if
    :: t == LINKED ->
        atomic { assert(owner[s] == f); t = 0; ns = next[s] };
        assert(ns != NOSLOT);
        cross(ns, x, f + 1, g, t);
        ns = 0
    :: else -> t = 0
    fi
}

#define TRY(k) :: (k) < DEPTH * NN && st[k] == READY -> i = k

/* Take any ready task of any frame (blocks while there is none). */
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

/* Run task x of frame f (slot s), complete it and hand it off (complete():
 * its successors, its hand-off, then a gate it fired, with its own). */
inline run_node(s, x, f, g, t, ns, k, cs) {
    atomic { assert(owner[s] == f); check_start(x, f) };
    if
    :: x == A || (x == B && !ORJOIN_) ->
#ifdef ORJOIN
        ended[f] = ended[f] | (1 << x);   /* the body returned */
        input_done(s, C, f, g, t);        /* two RMWs: pending, then arm */
#ifdef EARLYREUSE
        COMPL(f, x);
#endif
#else
        /* The body returns (an observer's mark), then the first thing the
         * thread does is its successor's count: one step. */
        atomic { ended[f] = ended[f] | (1 << x); input_done(s, C, f, g, t); COMPL(f, x) }
#endif
    :: else ->
        atomic { ended[f] = ended[f] | (1 << x); COMPL(f, x) }
    fi;
    handoff(s, x, f, g, t, ns);
    if
    :: g == 1 -> gate_chain(s, f, g, t, ns, k, cs);
        atomic { assert(owner[s] == f); ndone[s] = ndone[s] + 2 }
    :: else ->
        atomic { assert(owner[s] == f); ndone[s]++ }
    fi;
    /* the runner's locals are dead now: clear them (fewer states) */
    atomic { s = 0; x = 0; f = 0 }
}
/* The wait for frame f (slot s), oldest first: helps until it returns. */
inline wait(s, f) {
    do
#ifdef EARLYREUSE
    :: compl[f] == ALL -> break
#else
    :: ndone[s] == NN -> assert(owner[s] == f); break
#endif
    :: claim(ri, rs, rx, rf) -> run_node(rs, rx, rf, rg, rt, rns, rk, rcs)
    od
}

active proctype main()
{
    byte n = 0, s, ps, x, t, ns, k, cs;
    bit g;
    byte ri, rs, rx, rf, rt, rns, rk, rcs;   /* what it runs while it waits */
    bit rg;
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
                link[K(s, x)] = NONE;
                st[K(s, x)] = WAITING;
                arm[K(s, x)] = 2;
                x++
            :: else -> break
            od;
            if
            :: n == 0 ->   /* npred; an OR node's prev input is satisfied */
                cnt[K(s, A)] = 0; cnt[K(s, B)] = 0;
                cnt[K(s, C)] = 2 - ORJOIN_
            :: else ->     /* npred + same node + nprev; OR: npred + nprev */
                cnt[K(s, A)] = 1; cnt[K(s, B)] = 2;
                cnt[K(s, C)] = 3 - ORJOIN_
            fi;
            next[s] = NOSLOT;
            ndone[s] = 0;
            x = 0
        };
        if
        :: n == 0 ->
            fire(s, A, g); fire(s, B, g);
#ifdef ORJOIN
            fire(s, C, g);
#endif
            skip
        :: else ->
            ps = (n - 1) % DEPTH;
#ifndef LATENEXT
            atomic { assert(owner[ps] == n - 1); next[ps] = s };
#endif
            do
            :: x < NN ->
#ifdef NOEXCHANGE
                atomic { assert(owner[ps] == n - 1); t = link[K(ps, x)] };
                link[K(ps, x)] = LINKED;
#else
                atomic {
                    assert(owner[ps] == n - 1);
                    t = link[K(ps, x)];
                    link[K(ps, x)] = LINKED
                };
#endif
                if
                :: t == DONE ->
                    t = 0;
                    cross(s, x, n, g, t);
                    if
                    :: g == 1 -> gate_chain(s, n, g, t, ns, k, cs);
                        atomic { assert(owner[s] == n); ndone[s]++ }
                    :: else -> skip
                    fi
                :: else -> t = 0
                fi;
                x++
            :: else -> break
            od
#ifdef LATENEXT
            ; next[ps] = s
#endif
        fi;
        atomic { n++; s = 0; ps = 0; x = 0 }   /* dead until the next frame */
    :: else -> break
    od;
    /* drain: every frame in flight, oldest first; once a frame's wait has
     * returned its state is the user's again (NOSLOT: none of the
     * pipeline's frames may touch it). */
#ifdef NEWESTFIRST
    n = FRAMES;
    do
    :: n > 0 && n + DEPTH > FRAMES -> n--; wait(n % DEPTH, n); owner[n % DEPTH] = NOSLOT
    :: else -> break
    od;
#else
    if
    :: FRAMES > DEPTH -> n = FRAMES - DEPTH
    :: else -> n = 0
    fi;
    do
    :: n < FRAMES -> wait(n % DEPTH, n); owner[n % DEPTH] = NOSLOT; n++
    :: else -> break
    od;
#endif
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
    byte i, s, x, f, t, ns, k, cs;
    bit g;
    do
    :: finished -> break
    :: claim(i, s, x, f) -> run_node(s, x, f, g, t, ns, k, cs)
    od
}
