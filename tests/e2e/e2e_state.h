/*
 * e2e_state.h - the checker's state, shared by e2e_check.c (what each
 * call of a generated function checks, and the end of a frame) and
 * e2e_drive.c (the modes that run frames). Internal to tests/e2e.
 *
 * Every record is kept per frame, in a ring of E2E_RING slots: frame f uses
 * slot f % E2E_RING. A slot is reused only after its frame was waited for
 * and checked. A task of a frame in flight may look at the frames before its
 * own, down to the oldest one not yet waited for (see `waited`), but the
 * main thread goes on meanwhile: it waits for those frames (they need
 * nothing of the task's frame) and begins later ones in their slots while
 * the task still reads them (in a pipeline of depth 4, frame N + 4 takes
 * frame N - 4's slot before frame N is waited for). So everything such a
 * task reads in another frame's slot is atomic, and it reads a slot like a
 * seqlock (e2e_check.c, `before`): the tag, which e2e_frame_begin empties
 * first and sets last, is the same before and after, or the frame was
 * waited for meanwhile, so it is complete.
 */
#ifndef E2E_STATE_H
#define E2E_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "e2e_check.h"

#define E2E_MAX_COUNT 2500u
/* Pairs of tasks of one frame that wait on each other (e2e_wait.c): a
 * condition variable's waiter and signaller, a cancel scope's waiter and
 * canceller, told apart by a pair number in their names (cw0 and cs0). */
#define E2E_PAIRS 8
#define E2E_RING (2 * E2E_DEPTHS)
_Static_assert(E2E_DEPTHS == DAGRT_MAX_IN_FLIGHT, "the checker runs every depth the runtime has");

/* seq_cst throughout the checker: a test's bookkeeping, not a protocol
 * under test, and the simplest order to reason about. */
typedef struct e2e_nstate {
    _Atomic int started;     /* body (or count) began */
    _Atomic int done;        /* 1 ran, 2 skipped by `when` */
} e2e_nstate;

/* One pair's objects in one frame (reinitialised by e2e_frame_begin, when
 * no task of the slot's old frame can still use them). */
typedef struct e2e_pair {
    dagrt_mutex m;
    dagrt_cond cv;
    _Atomic int flag;              /* set (under m) by the signaller */
    dagrt_cancel scope;            /* requested by the canceller */
} e2e_pair;

typedef struct e2e_frame {
    _Atomic uint32_t tag;          /* frame number + 1 of the frame in the slot, 0
                                      while e2e_frame_begin rewrites it */
    _Atomic uint32_t num;          /* its frame number */
    _Atomic bool linked;           /* a pipeline frame: ordered after frame num - 1 */
    _Atomic int pending;           /* tasks that will run and have not completed */
    e2e_nstate *ns;
    size_t *count;                 /* per fid: this frame's count */
    _Atomic int *counted;          /* per fid: count calls this frame */
    _Atomic int *when_calls;       /* per wid: predicate calls this frame */
    _Atomic int *when_true;        /* per wid: true answers not yet used by a task */
    _Atomic uint32_t **cover;      /* per fid: coverage of [0, E2E_MAX_COUNT) */
    _Atomic size_t *covered;       /* per fid: indices covered so far */
    e2e_pair pair[E2E_PAIRS];
} e2e_frame;

typedef struct e2e_state {
    const e2e_graph *g;
    uint32_t **preds;              /* per node: its inputs of the same frame */
    uint32_t **prevs;              /* per node: its `prev` inputs */
    uint32_t *nprevs;
    int *fid_nodes;                /* per fid: nodes calling it */
    pthread_t main;
    dagrt *rt;                     /* the runtime the frames run on (waits need it) */
    /* The runtime has no worker (0 workers, or the serial switches,
     * DAGRT_SERIAL): every task and piece must run on the main thread. */
    bool one_thread;
    int *wait_kind;                /* per node: the wait its name asks for (e2e_wait.c), 0 none */
    int *wait_arg;                 /* per node: its repeat count or pair number */
    bool *fid_fiber;               /* per fid: every task calling it is a fiber task */
    uint64_t seed;
    bool slow;                     /* a graph named overlap* or slow*: long bodies */
    const char *mode;              /* the mode running, for messages */
    _Atomic int violations;
    _Atomic uint32_t waited;       /* frames below this were waited for and checked */
    _Atomic long overlap;          /* starts of a pipeline frame's task while the
                                      frame before had tasks left to run */
    _Atomic long waits;            /* task bodies that ran a wait (e2e_wait.c) */
    _Atomic long stale_looks;      /* looks into a frame before that was waited
                                      for (and its slot rewritten) meanwhile */
    e2e_frame fr[E2E_RING];
} e2e_state;

/* e2e_wait.c: the wait a task's name asks for (its last `_` part: t3_sleep,
 * mix_condto, t7_cw0; docs/testing.md), 0 for none; *arg its number. */
int e2e_wait_kind(const char *name, int *arg);
/* Runs node i's wait in frame fr (from its body) and checks its result. */
void e2e_wait_run(e2e_state *s, e2e_frame *fr, uint32_t i);
/* Readies a frame slot's pairs (e2e_frame_begin). */
void e2e_pairs_init(e2e_frame *fr);

/* e2e_drive.c: the watchdog's note of progress (a frame began or ended). */
void e2e_watch_progress(uint32_t frame);

/* e2e_check.c */
void e2e_violation(e2e_state *s, const e2e_frame *fr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
bool e2e_state_init(e2e_state *s, const e2e_graph *g, uint64_t seed);
void e2e_state_free(e2e_state *s);
/* Makes the state the one the generated functions report to (NULL: none). */
void e2e_state_use(e2e_state *s);
/* Prepares frame `num` in its slot before it is started. */
e2e_frame *e2e_frame_begin(e2e_state *s, uint32_t num, bool linked);
/* Checks a frame once its wait returned rc (0 or an error). */
void e2e_frame_end(e2e_state *s, e2e_frame *fr, int rc);

#endif
