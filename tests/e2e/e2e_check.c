/* e2e_check.c - what each call of a generated function checks, per frame
 * (see e2e_check.h and e2e_state.h); the modes that run frames are in
 * e2e_drive.c. */
#define _POSIX_C_SOURCE 200809L
#include "e2e_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void e2e_violation(e2e_state *s, const e2e_frame *fr, const char *fmt, ...)
{
    int n = atomic_fetch_add(&s->violations, 1);
    if (n >= 20)
        return;
    if (fr)
        fprintf(stderr, "e2e %s (%s) frame %u: ", s->g->name, s->mode, atomic_load(&fr->num));
    else
        fprintf(stderr, "e2e %s (%s): ", s->g->name, s->mode);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ------------------------------------------------------------- ordering */

static bool satisfied(e2e_state *s, e2e_frame *fr, uint32_t i);

/* The frame before fr in its pipeline while it may still be running, or
 * NULL: fr is not a pipeline frame, or the frame before was waited for
 * (then everything in it is complete). *tag: the tag of the frame before,
 * for the check after reading its slot (done_before). fr may itself be a
 * slot rewritten meanwhile (a look further back): what is read through it
 * then is thrown away by that check one level up. */
static e2e_frame *before(e2e_state *s, e2e_frame *fr, uint32_t *tag)
{
    uint32_t num = atomic_load(&fr->num);
    if (!atomic_load(&fr->linked) || num == 0)
        return NULL;
    /* `waited` before the tag: a slot is rewritten only after its frame
     * was waited for, so when the tag read is that of a rewrite (seq_cst,
     * one order for all), a load of `waited` after it sees the frame
     * waited for. */
    if (num - 1 < atomic_load(&s->waited))
        return NULL;
    e2e_frame *p = &s->fr[(num - 1) % E2E_RING];
    if (atomic_load(&p->tag) != num) {
        if (num - 1 < atomic_load(&s->waited)) {
            atomic_fetch_add(&s->stale_looks, 1);
            return NULL;   /* waited for since the check above */
        }
        e2e_violation(s, fr, "checker: the frame before is not in its slot");
        return NULL;
    }
    *tag = num;
    return p;
}

/* Whether slot p still holds the frame whose tag was `tag`: else it was
 * waited for (and complete) while we read it, and what we read there may
 * be of the frame that took its slot. Tags never come back (frame numbers
 * only grow, 0 while rewritten), so the same tag before and after means
 * nothing was rewritten in between. */
static bool unchanged(e2e_state *s, const e2e_frame *p, uint32_t tag)
{
    if (atomic_load(&p->tag) == tag)
        return true;
    atomic_fetch_add(&s->stale_looks, 1);
    return false;
}

/* Node x of the frame before fr is complete (true outside a pipeline and
 * in a pipeline's first frame: `prev` inputs are satisfied at the start). */
static bool done_before(e2e_state *s, e2e_frame *fr, uint32_t x)
{
    uint32_t tag = 0;
    e2e_frame *p = before(s, fr, &tag);
    if (!p)
        return true;
    bool ok = satisfied(s, p, x);
    return !unchanged(s, p, tag) || ok;
}

/* Its join over its inputs of this frame and its `prev` inputs. */
static bool inputs_ok(e2e_state *s, e2e_frame *fr, uint32_t i)
{
    const e2e_node *n = &s->g->nodes[i];
    uint32_t np = s->nprevs[i];
    if (n->npred == 0 && np == 0)
        return true;
    bool any = false, all = true;
    for (uint32_t k = 0; k < n->npred; k++) {
        bool ok = satisfied(s, fr, s->preds[i][k]);
        any |= ok;
        all &= ok;
    }
    for (uint32_t k = 0; k < np; k++) {
        bool ok = done_before(s, fr, s->prevs[i][k]);
        any |= ok;
        all &= ok;
    }
    return n->join == DAGRT_JOIN_OR ? any : all;
}

/* A node may begin: its join, and in a pipeline the same node of the
 * frame before is complete (a task never overlaps itself). */
static bool ready(e2e_state *s, e2e_frame *fr, uint32_t i)
{
    return inputs_ok(s, fr, i) && done_before(s, fr, i);
}

static bool when_answer(const e2e_state *s, const e2e_frame *fr, int wid);

/* The position of the first of n's predicates that says no this frame, or
 * -1 when all say yes (or it has none). */
static int first_no(const e2e_state *s, const e2e_frame *fr, const e2e_node *n)
{
    for (int k = 0; k < n->nwids; k++)
        if (!when_answer(s, fr, n->wids[k]))
            return k;
    return -1;
}

static bool skipped(const e2e_state *s, const e2e_frame *fr, const e2e_node *n)
{
    return first_no(s, fr, n) >= 0;
}

/* Whether n asks predicate w this frame (every one before it said yes);
 * *yes_unused: and its yes is not used by a run (a later one says no). */
static bool asks(const e2e_state *s, const e2e_frame *fr, const e2e_node *n, int w, bool *yes_unused)
{
    *yes_unused = false;
    for (int k = 0; k < n->nwids; k++) {
        if (n->wids[k] == w) {
            *yes_unused = when_answer(s, fr, w) && skipped(s, fr, n);
            return true;
        }
        if (!when_answer(s, fr, n->wids[k]))
            return false;
    }
    return false;
}

/* A task is complete when it ran or was skipped; a gate when it is ready.
 * A skipped task completes when its predicate has answered no; with a
 * predicate shared by several tasks the checker cannot tell whose call an
 * answer was, so then it only knows that one was made after the task was
 * ready (exact for a predicate of one task). */
static bool satisfied(e2e_state *s, e2e_frame *fr, uint32_t i)
{
    const e2e_node *n = &s->g->nodes[i];
    if (n->kind == DAGRT_NODE_GATE)
        return ready(s, fr, i);
    if (atomic_load(&fr->ns[i].done) != 0)
        return true;
    int no = first_no(s, fr, n);
    return no >= 0 && atomic_load(&fr->when_calls[n->wids[no]]) > 0 && ready(s, fr, i);
}

static void mark_done(e2e_frame *fr, uint32_t i)
{
    if (atomic_exchange(&fr->ns[i].done, 1) == 0)
        atomic_fetch_sub(&fr->pending, 1);
}

static bool candidate(const e2e_node *n, int fid, bool parallel)
{
    return n->kind == DAGRT_NODE_TASK && n->fid == fid &&
           !!(n->flags & DAGRT_NODE_PARALLEL) == parallel;
}

static int claim_pass(e2e_state *s, e2e_frame *fr, int fid, bool parallel, bool certain);

/* Whether n's `when` answers so far are surely its own: for each of its
 * predicates, the yes answers not used yet cover every task not started
 * that is ready and asks it (n included). A call of a function shared by
 * tasks with other predicates (t21 `when p`, t23 `when q`, both `call f`)
 * must not take p's yes that a third task of p (t17) asked for: t17 would
 * then run with none left. */
static bool when_certain(e2e_state *s, e2e_frame *fr, const e2e_node *n)
{
    for (int k = 0; k < n->nwids; k++) {
        int w = n->wids[k], askers = 0;
        for (uint32_t j = 0; j < s->g->nnodes; j++) {
            const e2e_node *m = &s->g->nodes[j];
            bool unused;
            if (m->kind == DAGRT_NODE_TASK && !atomic_load(&fr->ns[j].started) &&
                asks(s, fr, m, w, &unused) && ready(s, fr, j))
                askers++;
        }
        if (atomic_load(&fr->when_true[w]) < askers)
            return false;
    }
    return true;
}

/* Several tasks may share one function: the call belongs to one of them
 * that is ready and not started yet; first one whose `when` answers are
 * surely its own (when_certain), then any. */
static int claim(e2e_state *s, e2e_frame *fr, int fid, bool parallel)
{
    for (int pass = 0; pass < 2; pass++) {
        int r = claim_pass(s, fr, fid, parallel, pass == 0);
        if (r >= 0)
            return r;
    }
    return -1;
}

static int claim_pass(e2e_state *s, e2e_frame *fr, int fid, bool parallel, bool certain)
{
    for (uint32_t i = 0; i < s->g->nnodes; i++) {
        const e2e_node *n = &s->g->nodes[i];
        if (!candidate(n, fid, parallel) || atomic_load(&fr->ns[i].started) || !ready(s, fr, i))
            continue;
        if (certain && n->nwids > 0 && !when_certain(s, fr, n))
            continue;
        int zero = 0;
        if (!atomic_compare_exchange_strong(&fr->ns[i].started, &zero, 1))
            continue;
        /* A task with `when` runs only on a true answer of its predicate.
         * Predicates may be shared, so answers are counted per predicate
         * and each run uses one up. */
        int k = 0;
        for (; k < n->nwids; k++) {
            _Atomic int *yes = &fr->when_true[n->wids[k]];
            int t = atomic_load(yes);
            while (t > 0 && !atomic_compare_exchange_weak(yes, &t, t - 1))
                ;
            if (t <= 0)
                break;
        }
        if (k < n->nwids) {
            while (k-- > 0)
                atomic_fetch_add(&fr->when_true[n->wids[k]], 1);
            atomic_store(&fr->ns[i].started, 0);
            continue;
        }
        /* Frames overlap: the frame before still has tasks to finish. */
        uint32_t tag = 0;
        e2e_frame *p = before(s, fr, &tag);
        if (p && atomic_load(&p->pending) > 0 && unchanged(s, p, tag))
            atomic_fetch_add(&s->overlap, 1);
        return (int)i;
    }
    return -1;
}

static _Atomic int cross_failures;

int e2e_cross_failures(void) { return atomic_load(&cross_failures); }

/* No task of the function was ready: say which rule the call broke. */
static void not_ready(e2e_state *s, e2e_frame *fr, int fid, bool parallel, const char *what)
{
    for (uint32_t i = 0; i < s->g->nnodes; i++) {
        const e2e_node *n = &s->g->nodes[i];
        if (!candidate(n, fid, parallel) || atomic_load(&fr->ns[i].started))
            continue;
        if (inputs_ok(s, fr, i) && !done_before(s, fr, i)) {
            atomic_fetch_add(&cross_failures, 1);
            e2e_violation(s, fr, "task %s began before the same task of the frame before "
                          "had completed", n->name);
            return;
        }
    }
    e2e_violation(s, fr, "a %s function ran with no task of it ready (inputs, `prev` inputs "
                  "or its when)", what);
}

static void check_thread(e2e_state *s, e2e_frame *fr, uint32_t i)
{
    if ((s->g->nodes[i].flags & DAGRT_NODE_MAIN) && !pthread_equal(pthread_self(), s->main))
        e2e_violation(s, fr, "on-main task %s ran on another thread", s->g->nodes[i].name);
    if (s->one_thread && !pthread_equal(pthread_self(), s->main))
        e2e_violation(s, fr, "task %s ran off the main thread on a runtime without workers",
                      s->g->nodes[i].name);
}

/* --------------------------------------------------------------- delays */

static _Thread_local uint64_t tl_rng;

static uint64_t rnd(e2e_state *s)
{
    if (!tl_rng) {
        static _Atomic uint64_t next_thread = 1;
        tl_rng = (s->seed ^ (atomic_fetch_add(&next_thread, 1) * 0x9E3779B97F4A7C15ull)) | 1;
    }
    tl_rng ^= tl_rng << 13;
    tl_rng ^= tl_rng >> 7;
    tl_rng ^= tl_rng << 17;
    return tl_rng;
}

static void spin_ns(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* Mostly none, sometimes up to 4 us; the bodies of graphs named overlap* or
 * slow* take 20 to 40 us each, far above what the runtime counts as too
 * small to share (so their pipeline frames really overlap), and there a
 * task named long* takes 300 us. */
static void small_delay(e2e_state *s, const char *task)
{
    uint64_t r = rnd(s);
    if (s->slow && strncmp(task, "long", 4) == 0)
        spin_ns(300000);
    else if (s->slow)
        spin_ns(20000 + (long)((r >> 8) % 20000));
    else if (r % 3 == 0)
        spin_ns((long)((r >> 8) % 4000));
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* ----------------------------------------------------- the user functions */

/* The graph being checked; set by e2e_run_graph before it runs frames (the
 * workers see it through the runtime's spawn, which publishes with release). */
static e2e_state *current;

void e2e_state_use(e2e_state *s) { current = s; }

static e2e_state *state_of(const e2e_graph *g)
{
    e2e_state *s = current;
    if (!s || s->g != g) {
        fprintf(stderr, "e2e: a function of graph %s got the context of %s\n", g->name, s ? s->g->name : "none");
        abort();
    }
    return s;
}

/* The frame whose context a function received, or NULL (a violation): the
 * context of a frame that is not in flight. */
static e2e_frame *frame_of(e2e_state *s, uint32_t tag)
{
    e2e_frame *fr = tag ? &s->fr[(tag - 1) % E2E_RING] : NULL;
    if (!fr || atomic_load(&fr->tag) != tag) {
        e2e_violation(s, NULL, "a function got the context of frame %ld, which is not in flight",
                      (long)tag - 1);
        return NULL;
    }
    return fr;
}

void e2e_task(const e2e_graph *g, int fid, uint32_t tag)
{
    e2e_state *s = state_of(g);
    e2e_frame *fr = frame_of(s, tag);
    if (!fr)
        return;
    int i = claim(s, fr, fid, false);
    if (i < 0) {
        not_ready(s, fr, fid, false, "task");
        return;
    }
    check_thread(s, fr, (uint32_t)i);
    if (s->wait_kind[i])
        e2e_wait_run(s, fr, (uint32_t)i);   /* its name asks for a wait */
    else
        small_delay(s, g->nodes[i].name);
    mark_done(fr, (uint32_t)i);
}

size_t e2e_count(const e2e_graph *g, int fid, uint32_t tag)
{
    e2e_state *s = state_of(g);
    e2e_frame *fr = frame_of(s, tag);
    if (!fr)
        return 0;
    int i = claim(s, fr, fid, true);
    if (i < 0) {
        not_ready(s, fr, fid, true, "count");
        return 0;
    }
    atomic_fetch_add(&fr->counted[fid], 1);
    size_t c = fr->count[fid];
    /* One node per function: it completes when its range is covered;
     * shared functions complete at count time (the checker cannot tell
     * whose range a call covers). */
    if (c == 0 || s->fid_nodes[fid] > 1)
        mark_done(fr, (uint32_t)i);
    return c;
}

void e2e_range(const e2e_graph *g, int fid, uint32_t tag, size_t begin, size_t end)
{
    e2e_state *s = state_of(g);
    e2e_frame *fr = frame_of(s, tag);
    if (!fr)
        return;
    if (atomic_load(&fr->counted[fid]) == 0) {
        e2e_violation(s, fr, "range function ran before its count function");
        return;
    }
    if (begin >= end || end > fr->count[fid]) {
        e2e_violation(s, fr, "range [%lu, %lu) outside [0, %lu)", (unsigned long)begin,
                      (unsigned long)end, (unsigned long)fr->count[fid]);
        return;
    }
    if (s->one_thread && !pthread_equal(pthread_self(), s->main))
        e2e_violation(s, fr, "a piece of range function %d ran off the main thread on a runtime "
                      "without workers", fid);
    for (size_t k = begin; k < end; k++)
        atomic_fetch_add_explicit(&fr->cover[fid][k], 1, memory_order_relaxed);
    small_delay(s, "");
    size_t before_add = atomic_fetch_add(&fr->covered[fid], end - begin);
    if (s->fid_nodes[fid] == 1 && before_add + (end - begin) == fr->count[fid]) {
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].fid == fid && g->nodes[i].kind == DAGRT_NODE_TASK)
                mark_done(fr, i);
    }
}

/* The answer depends only on the frame and the predicate, so tasks sharing
 * a predicate are all skipped or all run in a frame. */
static bool when_answer(const e2e_state *s, const e2e_frame *fr, int wid)
{
    return mix((uint64_t)atomic_load(&fr->num) * 31 + (uint64_t)wid + s->seed) % 3 != 0;
}

bool e2e_when(const e2e_graph *g, int wid, uint32_t tag)
{
    e2e_state *s = state_of(g);
    e2e_frame *fr = frame_of(s, tag);
    if (!fr)
        return false;
    bool res = when_answer(s, fr, wid);
    atomic_fetch_add(&fr->when_calls[wid], 1);
    if (res) {
        atomic_fetch_add(&fr->when_true[wid], 1);
        return true;
    }
    /* A false answer skips a ready task of this predicate (see satisfied). */
    bool unused;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (asks(s, fr, &g->nodes[i], wid, &unused) && ready(s, fr, i))
            return false;
    e2e_violation(s, fr, "a when predicate ran with no task of it ready");
    return false;
}

/* ----------------------------------------------------------------- frames */

void e2e_frame_end(e2e_state *s, e2e_frame *fr, int rc)
{
    const e2e_graph *g = s->g;
    e2e_watch_progress(atomic_load(&fr->num));
    if (rc != 0)
        e2e_violation(s, fr, "the frame's run or wait returned an error (%s)", dagrt_strerror(rc));
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const e2e_node *n = &g->nodes[i];
        if (n->kind != DAGRT_NODE_TASK)
            continue;
        int done = atomic_load(&fr->ns[i].done);
        if (done == 0 && skipped(s, fr, n))
            done = 2; /* skipped: its predicate calls are counted below */
        if (done == 0)
            e2e_violation(s, fr, "task %s had not completed when the wait returned", n->name);
        if (n->nwids > 0 && done != (skipped(s, fr, n) ? 2 : 1))
            e2e_violation(s, fr, "task %s: ran or skipped against its when predicate", n->name);
        if (done == 2 && atomic_load(&fr->ns[i].started))
            e2e_violation(s, fr, "task %s ran although its when predicate said no", n->name);
        if (done == 1 && !atomic_load(&fr->ns[i].started))
            e2e_violation(s, fr, "task %s completed without running", n->name);
    }
    for (int w = 0; w < g->nwhens; w++) {
        int users = 0, unused_yes = 0;
        for (uint32_t i = 0; i < g->nnodes; i++) {
            bool unused;
            if (g->nodes[i].kind == DAGRT_NODE_TASK && asks(s, fr, &g->nodes[i], w, &unused)) {
                users++;
                unused_yes += unused;
            }
        }
        if (atomic_load(&fr->when_calls[w]) != users)
            e2e_violation(s, fr, "when predicate %d called %d times for %d tasks asking it", w,
                          atomic_load(&fr->when_calls[w]), users);
        if (atomic_load(&fr->when_true[w]) != unused_yes)
            e2e_violation(s, fr, "a true answer of when predicate %d was not followed by its task", w);
    }
    for (int f = 0; f < g->nfuncs; f++) {
        int ran = 0;
        bool parallel = false;
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].kind == DAGRT_NODE_TASK && g->nodes[i].fid == f) {
                parallel = g->nodes[i].flags & DAGRT_NODE_PARALLEL;
                ran += atomic_load(&fr->ns[i].started) != 0;
            }
        if (!parallel)
            continue;
        if (atomic_load(&fr->counted[f]) != ran)
            e2e_violation(s, fr, "count function %d called a wrong number of times", f);
        for (size_t k = 0; k < fr->count[f]; k++)
            if (atomic_load(&fr->cover[f][k]) != (uint32_t)ran) {
                e2e_violation(s, fr, "parallel range of function %d not covered exactly once", f);
                break;
            }
    }
}

e2e_frame *e2e_frame_begin(e2e_state *s, uint32_t num, bool linked)
{
    const e2e_graph *g = s->g;
    e2e_frame *fr = &s->fr[num % E2E_RING];
    if (atomic_load(&fr->tag) != 0 && atomic_load(&fr->tag) - 1 >= atomic_load(&s->waited))
        e2e_violation(s, fr, "checker: slot reused before its frame was waited for");
    /* Empty first: a task still reading the frame that was here (a look
     * back, `before`) sees the tag change and drops what it read. */
    atomic_store(&fr->tag, 0);
    atomic_store(&fr->num, num);
    atomic_store(&fr->linked, linked);
    int pending = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        atomic_store(&fr->ns[i].started, 0);
        atomic_store(&fr->ns[i].done, 0);
        pending += g->nodes[i].kind == DAGRT_NODE_TASK && !skipped(s, fr, &g->nodes[i]);
    }
    atomic_store(&fr->pending, pending);
    for (int w = 0; w < g->nwhens; w++) {
        atomic_store(&fr->when_calls[w], 0);
        atomic_store(&fr->when_true[w], 0);
    }
    for (int f = 0; f < g->nfuncs; f++) {
        for (size_t k = 0; k < fr->count[f]; k++)
            atomic_store(&fr->cover[f][k], 0);
        /* Mostly mid-sized ranges, sometimes empty or a single item. */
        uint64_t r = mix((uint64_t)num * 7919 + (uint64_t)f * 104729 + s->seed);
        fr->count[f] = r % 10 == 0 ? 0 : r % 10 == 1 ? 1 : (size_t)(r >> 16) % E2E_MAX_COUNT;
        atomic_store(&fr->counted[f], 0);
        atomic_store(&fr->covered[f], 0);
    }
    e2e_pairs_init(fr);
    e2e_watch_progress(num);
    atomic_store(&fr->tag, num + 1);
    return fr;
}

/* ------------------------------------------------------ state, per graph */

bool e2e_state_init(e2e_state *s, const e2e_graph *g, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->g = g;
    s->main = pthread_self();
    s->seed = seed;
    s->mode = "setup";
    s->slow = strncmp(g->name, "overlap", 7) == 0 || strncmp(g->name, "slow", 4) == 0;
    uint32_t nn = g->nnodes;
    s->preds = calloc(nn, sizeof *s->preds);
    s->prevs = calloc(nn, sizeof *s->prevs);
    s->nprevs = calloc(nn, sizeof *s->nprevs);
    uint32_t *fill = calloc(nn, sizeof *fill);
    size_t nf = (size_t)g->nfuncs + 1;
    s->fid_nodes = calloc(nf, sizeof *s->fid_nodes);
    s->wait_kind = calloc(nn + 1, sizeof *s->wait_kind);
    s->wait_arg = calloc(nn + 1, sizeof *s->wait_arg);
    s->fid_fiber = calloc(nf, sizeof *s->fid_fiber);
    if (!s->preds || !s->prevs || !s->nprevs || !fill || !s->fid_nodes || !s->wait_kind ||
        !s->wait_arg || !s->fid_fiber)
        return free(fill), false;
    for (size_t f = 0; f < nf; f++)
        s->fid_fiber[f] = true;
    for (uint32_t i = 0; i < nn; i++) {
        const e2e_node *n = &g->nodes[i];
        if (n->kind != DAGRT_NODE_TASK || (n->flags & DAGRT_NODE_PARALLEL))
            continue;   /* a range function has no body of its own to wait in */
        s->wait_kind[i] = e2e_wait_kind(n->name, &s->wait_arg[i]);
        if (n->fid >= 0 && !(n->flags & DAGRT_NODE_FIBER))
            s->fid_fiber[n->fid] = false;
    }
    for (uint32_t i = 0; i < nn; i++) {
        const uint32_t *p = g->nodes[i].prevs;
        while (p[s->nprevs[i]] != UINT32_MAX)
            s->nprevs[i]++;
        s->prevs[i] = (uint32_t *)p;
        for (uint32_t k = 0; k < s->nprevs[i]; k++)
            if (p[k] >= nn)
                e2e_violation(s, NULL, "malformed prev list at node %s", g->nodes[i].name);
        if (!(s->preds[i] = calloc(g->nodes[i].npred + 1, sizeof **s->preds)))
            return free(fill), false;
        if (g->nodes[i].fid >= 0)
            s->fid_nodes[g->nodes[i].fid]++;
    }
    for (uint32_t i = 0; i < nn; i++)
        for (uint32_t k = 0; k < g->nodes[i].nsucc; k++) {
            uint32_t t = g->succ[g->nodes[i].succ_first + k];
            if (t <= i || t >= nn || fill[t] >= g->nodes[t].npred) {
                e2e_violation(s, NULL, "malformed successor table at node %s", g->nodes[i].name);
                continue;
            }
            s->preds[t][fill[t]++] = i;
        }
    free(fill);
    for (int r = 0; r < E2E_RING; r++) {
        e2e_frame *fr = &s->fr[r];
        fr->ns = calloc(nn + 1, sizeof *fr->ns);
        fr->count = calloc(nf, sizeof *fr->count);
        fr->counted = calloc(nf, sizeof *fr->counted);
        fr->covered = calloc(nf, sizeof *fr->covered);
        fr->cover = calloc(nf, sizeof *fr->cover);
        fr->when_calls = calloc((size_t)g->nwhens + 1, sizeof *fr->when_calls);
        fr->when_true = calloc((size_t)g->nwhens + 1, sizeof *fr->when_true);
        if (!fr->ns || !fr->count || !fr->counted || !fr->covered || !fr->cover ||
            !fr->when_calls || !fr->when_true)
            return false;
        for (size_t f = 0; f < nf; f++)
            if (!(fr->cover[f] = calloc(E2E_MAX_COUNT, sizeof **fr->cover)))
                return false;
    }
    return true;
}

void e2e_state_free(e2e_state *s)
{
    size_t nf = (size_t)s->g->nfuncs + 1;
    for (int r = 0; r < E2E_RING; r++) {
        e2e_frame *fr = &s->fr[r];
        for (size_t f = 0; fr->cover && f < nf; f++)
            free(fr->cover[f]);
        free(fr->when_calls); free(fr->when_true); free(fr->cover);
        free(fr->count); free(fr->counted); free(fr->covered); free(fr->ns);
    }
    for (uint32_t i = 0; s->preds && i < s->g->nnodes; i++)
        free(s->preds[i]);
    free(s->preds); free(s->prevs); free(s->nprevs); free(s->fid_nodes);
    free(s->wait_kind); free(s->wait_arg); free(s->fid_fiber);
}
