/* e2e_check.c - see e2e_check.h. */
#define _POSIX_C_SOURCE 200809L
#include "e2e_check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_COUNT 2500u

typedef struct nstate {
    _Atomic int started;     /* body (or count) began */
    _Atomic int done;        /* 1 ran, 2 skipped by `when` */
} nstate;

typedef struct e2e_state {
    const e2e_graph *g;
    uint32_t **preds;
    nstate *ns;
    pthread_t main;
    uint64_t frame;
    uint64_t seed;
    _Atomic int violations;
    size_t *count;                 /* per fid: this frame's count */
    _Atomic int *counted;          /* per fid: count calls this frame */
    _Atomic int *when_calls;       /* per wid: predicate calls this frame */
    _Atomic int *when_true;        /* per wid: true answers not yet used by a task */
    _Atomic uint32_t **cover;      /* per fid: coverage of [0, MAX_COUNT) */
    _Atomic size_t *covered;       /* per fid: indices covered so far */
    int *fid_nodes;                /* per fid: nodes calling it */
} e2e_state;

static void violation(e2e_state *s, const char *fmt, const char *name)
{
    int n = atomic_fetch_add(&s->violations, 1);
    if (n < 20) {
        fprintf(stderr, "e2e %s frame %llu: ", s->g->name, (unsigned long long)s->frame);
        fprintf(stderr, fmt, name);
        fputc('\n', stderr);
    }
}

/* ------------------------------------------------------------- ordering */

static bool satisfied(e2e_state *s, uint32_t i);

static bool inputs_ok(e2e_state *s, uint32_t i)
{
    const e2e_node *n = &s->g->nodes[i];
    if (n->npred == 0 || (n->join == DAGRT_JOIN_OR && n->nprev))
        return true;
    bool any = false, all = true;
    for (uint32_t k = 0; k < n->npred; k++) {
        bool ok = satisfied(s, s->preds[i][k]);
        any |= ok;
        all &= ok;
    }
    return n->join == DAGRT_JOIN_OR ? any : all;
}

static bool when_answer(const e2e_state *s, int wid);

/* The position of the first of n's predicates that says no this frame, or
 * -1 when all say yes (or it has none). */
static int first_no(const e2e_state *s, const e2e_node *n)
{
    for (int k = 0; k < n->nwids; k++)
        if (!when_answer(s, n->wids[k]))
            return k;
    return -1;
}

static bool skipped(const e2e_state *s, const e2e_node *n) { return first_no(s, n) >= 0; }

/* Whether n asks predicate w this frame (every one before it said yes);
 * *yes_unused: and its yes is not used by a run (a later one says no). */
static bool asks(const e2e_state *s, const e2e_node *n, int w, bool *yes_unused)
{
    *yes_unused = false;
    for (int k = 0; k < n->nwids; k++) {
        if (n->wids[k] == w) {
            *yes_unused = when_answer(s, w) && skipped(s, n);
            return true;
        }
        if (!when_answer(s, n->wids[k]))
            return false;
    }
    return false;
}

/* A task is complete when it ran or was skipped; a gate when its inputs
 * are. A skipped task completes when its predicate has answered no; with a
 * predicate shared by several tasks the checker cannot tell whose call an
 * answer was, so then it only knows that one was made after the task's
 * inputs completed (exact for a predicate of one task). */
static bool satisfied(e2e_state *s, uint32_t i)
{
    const e2e_node *n = &s->g->nodes[i];
    if (n->kind == DAGRT_NODE_GATE)
        return inputs_ok(s, i);
    if (atomic_load(&s->ns[i].done) != 0)
        return true;
    int no = first_no(s, n);
    return no >= 0 && atomic_load(&s->when_calls[n->wids[no]]) > 0 && inputs_ok(s, i);
}

/* Several tasks may share one function: the call belongs to one of them
 * that is enabled and not started yet. */
static int claim(e2e_state *s, int fid, bool parallel)
{
    for (uint32_t i = 0; i < s->g->nnodes; i++) {
        const e2e_node *n = &s->g->nodes[i];
        if (n->kind != DAGRT_NODE_TASK || n->fid != fid ||
            !!(n->flags & DAGRT_NODE_PARALLEL) != parallel)
            continue;
        if (atomic_load(&s->ns[i].started) || !inputs_ok(s, i))
            continue;
        int zero = 0;
        if (!atomic_compare_exchange_strong(&s->ns[i].started, &zero, 1))
            continue;
        /* A task with `when` runs only on a true answer of its predicate.
         * Predicates may be shared, so answers are counted per predicate
         * and each run uses one up. */
        int k = 0;
        for (; k < n->nwids; k++) {
            _Atomic int *yes = &s->when_true[n->wids[k]];
            int t = atomic_load(yes);
            while (t > 0 && !atomic_compare_exchange_weak(yes, &t, t - 1))
                ;
            if (t <= 0)
                break;
        }
        if (k < n->nwids) {
            while (k-- > 0)
                atomic_fetch_add(&s->when_true[n->wids[k]], 1);
            atomic_store(&s->ns[i].started, 0);
            continue;
        }
        return (int)i;
    }
    return -1;
}

static void check_thread(e2e_state *s, uint32_t i)
{
    if ((s->g->nodes[i].flags & DAGRT_NODE_MAIN) && !pthread_equal(pthread_self(), s->main))
        violation(s, "on-main task %s ran on another thread", s->g->nodes[i].name);
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

static void small_delay(e2e_state *s)
{
    uint64_t r = rnd(s);
    if (r % 3 != 0)
        return;
    long ns = (long)((r >> 8) % 4000);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* ----------------------------------------------------- the user functions */

/* The frame being checked; set by e2e_run_graph before it runs frames (the
 * workers see it through the runtime's spawn, which publishes with release). */
static e2e_state *current;

static e2e_state *state_of(const e2e_graph *g)
{
    e2e_state *s = current;
    if (!s || s->g != g) {
        fprintf(stderr, "e2e: a function of graph %s got the context of %s\n", g->name, s ? s->g->name : "none");
        abort();
    }
    return s;
}

void e2e_task(const e2e_graph *g, int fid)
{
    e2e_state *s = state_of(g);
    int i = claim(s, fid, false);
    if (i < 0) {
        violation(s, "a task function ran with no task of it ready (%s)", "plain");
        return;
    }
    check_thread(s, (uint32_t)i);
    small_delay(s);
    atomic_store(&s->ns[i].done, 1);
}

size_t e2e_count(const e2e_graph *g, int fid)
{
    e2e_state *s = state_of(g);
    int i = claim(s, fid, true);
    if (i < 0) {
        violation(s, "a count function ran with no parallel task of it ready (%s)", "parallel");
        return 0;
    }
    atomic_fetch_add(&s->counted[fid], 1);
    size_t c = s->count[fid];
    /* One node per function: it completes when its range is covered;
     * shared functions complete at count time (the checker cannot tell
     * whose range a call covers). */
    if (c == 0 || s->fid_nodes[fid] > 1)
        atomic_store(&s->ns[i].done, 1);
    return c;
}

void e2e_range(const e2e_graph *g, int fid, size_t begin, size_t end)
{
    e2e_state *s = state_of(g);
    if (atomic_load(&s->counted[fid]) == 0) {
        violation(s, "range function ran before its count function (%s)", "parallel");
        return;
    }
    if (begin >= end || end > s->count[fid]) {
        violation(s, "range outside [0, count) (%s)", "parallel");
        return;
    }
    for (size_t k = begin; k < end; k++)
        atomic_fetch_add_explicit(&s->cover[fid][k], 1, memory_order_relaxed);
    small_delay(s);
    size_t before = atomic_fetch_add(&s->covered[fid], end - begin);
    if (s->fid_nodes[fid] == 1 && before + (end - begin) == s->count[fid]) {
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].fid == fid && g->nodes[i].kind == DAGRT_NODE_TASK)
                atomic_store(&s->ns[i].done, 1);
    }
}

/* The answer depends only on the frame and the predicate, so tasks sharing
 * a predicate are all skipped or all run in a frame. */
static bool when_answer(const e2e_state *s, int wid)
{
    return mix(s->frame * 31 + (uint64_t)wid + s->seed) % 3 != 0;
}

bool e2e_when(const e2e_graph *g, int wid)
{
    e2e_state *s = state_of(g);
    bool res = when_answer(s, wid);
    atomic_fetch_add(&s->when_calls[wid], 1);
    if (res) {
        atomic_fetch_add(&s->when_true[wid], 1);
        return true;
    }
    /* A false answer skips a ready task of this predicate (see satisfied). */
    bool unused;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (asks(s, &g->nodes[i], wid, &unused) && inputs_ok(s, i))
            return false;
    violation(s, "a when predicate ran with no task of it ready (%s)", "when");
    return false;
}

/* ----------------------------------------------------------------- frames */

static void end_of_frame(e2e_state *s, int rc)
{
    const e2e_graph *g = s->g;
    if (rc != 0)
        violation(s, "G_run returned an error (%s)", dagrt_strerror(rc));
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const e2e_node *n = &g->nodes[i];
        if (n->kind != DAGRT_NODE_TASK)
            continue;
        int done = atomic_load(&s->ns[i].done);
        if (done == 0 && skipped(s, n))
            done = 2; /* skipped: its predicate calls are counted below */
        if (done == 0)
            violation(s, "task %s had not completed when G_run returned", n->name);
        if (n->nwids > 0 && done != (skipped(s, n) ? 2 : 1))
            violation(s, "task %s: ran or skipped against its when predicate", n->name);
        if (done == 2 && atomic_load(&s->ns[i].started))
            violation(s, "task %s ran although its when predicate said no", n->name);
        if (done == 1 && !atomic_load(&s->ns[i].started))
            violation(s, "task %s completed without running", n->name);
    }
    for (int w = 0; w < g->nwhens; w++) {
        int users = 0, unused_yes = 0;
        for (uint32_t i = 0; i < g->nnodes; i++) {
            bool unused;
            if (g->nodes[i].kind == DAGRT_NODE_TASK && asks(s, &g->nodes[i], w, &unused)) {
                users++;
                unused_yes += unused;
            }
        }
        if (atomic_load(&s->when_calls[w]) != users)
            violation(s, "a when predicate was not called once per task asking it (%s)", "when");
        if (atomic_load(&s->when_true[w]) != unused_yes)
            violation(s, "a true when answer was not followed by its task (%s)", "when");
    }
    for (int f = 0; f < g->nfuncs; f++) {
        int ran = 0;
        bool parallel = false;
        for (uint32_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].kind == DAGRT_NODE_TASK && g->nodes[i].fid == f) {
                parallel = g->nodes[i].flags & DAGRT_NODE_PARALLEL;
                ran += atomic_load(&s->ns[i].started) != 0;
            }
        if (!parallel)
            continue;
        if (atomic_load(&s->counted[f]) != ran)
            violation(s, "count function called a wrong number of times (%s)", "parallel");
        for (size_t k = 0; k < s->count[f]; k++)
            if (atomic_load(&s->cover[f][k]) != (uint32_t)ran) {
                violation(s, "parallel range not covered exactly once (%s)", "parallel");
                break;
            }
    }
}

static void start_frame(e2e_state *s, uint64_t frame)
{
    const e2e_graph *g = s->g;
    s->frame = frame;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        atomic_store(&s->ns[i].started, 0);
        atomic_store(&s->ns[i].done, 0);
    }
    for (int w = 0; w < g->nwhens; w++) {
        atomic_store(&s->when_calls[w], 0);
        atomic_store(&s->when_true[w], 0);
    }
    for (int f = 0; f < g->nfuncs; f++) {
        for (size_t k = 0; k < s->count[f]; k++)
            atomic_store(&s->cover[f][k], 0);
        /* Mostly mid-sized ranges, sometimes empty or a single item. */
        uint64_t r = mix(frame * 7919 + (uint64_t)f * 104729 + s->seed);
        s->count[f] = r % 10 == 0 ? 0 : r % 10 == 1 ? 1 : (size_t)(r >> 16) % MAX_COUNT;
        atomic_store(&s->counted[f], 0);
        atomic_store(&s->covered[f], 0);
    }
}

int e2e_run_graph(const e2e_graph *g, dagrt *rt, int frames, uint64_t seed)
{
    e2e_state s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.main = pthread_self();
    s.seed = seed;
    s.ns = calloc(g->nnodes, sizeof *s.ns);
    s.preds = calloc(g->nnodes, sizeof *s.preds);
    uint32_t *fill = calloc(g->nnodes, sizeof *fill);
    for (uint32_t i = 0; i < g->nnodes; i++)
        s.preds[i] = calloc(g->nodes[i].npred + 1, sizeof **s.preds);
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (uint32_t k = 0; k < g->nodes[i].nsucc; k++) {
            uint32_t t = g->succ[g->nodes[i].succ_first + k];
            if (t <= i || t >= g->nnodes || fill[t] >= g->nodes[t].npred) {
                violation(&s, "malformed successor table at node %s", g->nodes[i].name);
                continue;
            }
            s.preds[t][fill[t]++] = i;
        }
    size_t nf = (size_t)g->nfuncs + 1;
    s.count = calloc(nf, sizeof *s.count);
    s.counted = calloc(nf, sizeof *s.counted);
    s.covered = calloc(nf, sizeof *s.covered);
    s.cover = calloc(nf, sizeof *s.cover);
    s.fid_nodes = calloc(nf, sizeof *s.fid_nodes);
    s.when_calls = calloc((size_t)g->nwhens + 1, sizeof *s.when_calls);
    s.when_true = calloc((size_t)g->nwhens + 1, sizeof *s.when_true);
    for (size_t f = 0; f < nf; f++)
        s.cover[f] = calloc(MAX_COUNT, sizeof **s.cover);
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].fid >= 0)
            s.fid_nodes[g->nodes[i].fid]++;

    current = &s;
    for (int f = 0; f < frames && atomic_load(&s.violations) < 20; f++) {
        start_frame(&s, (uint64_t)f);
        int rc;
        if (f % 2 == 0) {
            rc = g->run(rt);
        } else {
            rc = g->start(rt);
            /* The caller elsewhere for a moment: the run goes on. */
            for (volatile int k = 0; k < 2000; k++)
                ;
            if (rc == 0)
                rc = g->wait(rt);
        }
        end_of_frame(&s, rc);
    }

    current = NULL;
    for (size_t f = 0; f < nf; f++)
        free(s.cover[f]);
    for (uint32_t i = 0; i < g->nnodes; i++)
        free(s.preds[i]);
    free(s.when_calls); free(s.when_true);
    free(s.cover); free(s.fid_nodes); free(s.count); free(s.counted); free(s.covered);
    free(s.preds); free(s.ns); free(fill);
    return atomic_load(&s.violations);
}

int e2e_scaled(int n)
{
    const char *e = getenv("DAGC_TEST_SCALE");
    double k = e ? atof(e) : 1.0;
    if (k <= 0)
        k = 1.0;
    int v = (int)(n * k);
    return v < 1 ? 1 : v;
}

int e2e_run_all(const e2e_graph *const *graphs, size_t n, int frames)
{
    static const int workers[] = {0, 1, 3};
    int bad = 0;
    for (size_t w = 0; w < sizeof workers / sizeof workers[0]; w++) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers[w];
        cfg.no_workers = workers[w] == 0;
        cfg.hot_workers = workers[w] == 3 ? 1 : 0;
        int err = 0;
        dagrt *rt = dagrt_create_ex(&cfg, &err);
        if (!rt) {
            fprintf(stderr, "e2e: dagrt_create_ex(%d workers): %s\n", workers[w], dagrt_strerror(err));
            return bad + 1;
        }
        for (size_t i = 0; i < n; i++) {
            int v = e2e_run_graph(graphs[i], rt, frames, 0x5eed0000u + (uint64_t)w * 131 + i);
            if (v)
                fprintf(stderr, "e2e: graph %s, %d workers: %d violations\n", graphs[i]->name,
                        workers[w], v);
            bad += v;
        }
        dagrt_destroy(rt);
    }
    return bad;
}
