/* scn_fork.c - scenarios for the inline fork-join (dagrt_fork,
 * dagrt_join_take; dagrt.h). See scenarios.h for how they are hosted. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dagrt.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

static dagrt *make(int workers, bool no_workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.no_workers = no_workers;
    cfg.seed = 7;
    return dagrt_create(&cfg);
}

/* ------------------------------------------------------------ tree */

/* A binary tree of forks over [lo, hi): both halves forked, joined in
 * reverse order; each leaf counts its index. Every leaf must run exactly
 * once whoever runs it: the forker taking it back, a thief, or the
 * forker's own helping in a slow join. */
typedef struct tree {
    dagrt *rt;
    _Atomic uint32_t *ran;
    _Atomic long taken;     /* joins that took their fork back */
    _Atomic long elsewhere; /* joins that found it run elsewhere */
    unsigned spin;          /* work per leaf, so that thieves find some */
} tree;

typedef struct span {
    tree *t;
    long lo, hi;
    long sum;               /* sum of the indices: a checked result */
} span;

static long tree_run(dagrt_worker *w, tree *t, long lo, long hi);

static void span_task(void *p)
{
    span *s = p;
    s->sum = tree_run(dagrt_worker_get(s->t->rt), s->t, s->lo, s->hi);
}

static long tree_run(dagrt_worker *w, tree *t, long lo, long hi)
{
    if (hi - lo == 1) {
        /* relaxed: counted and read after every join has returned. */
        atomic_fetch_add_explicit(&t->ran[lo], 1, memory_order_relaxed);
        volatile unsigned x = 0;
        for (unsigned i = 0; i < t->spin; i++)
            x += i;
        (void)x;
        return lo;
    }
    long mid = lo + (hi - lo) / 2;
    span a = {t, lo, mid, 0}, b = {t, mid, hi, 0};
    dagrt_forked fa, fb;
    dagrt_fork(w, &fa, span_task, &a);
    dagrt_fork(w, &fb, span_task, &b);
    /* relaxed: statistics only. */
    if (dagrt_join_take(w, &fb)) {
        b.sum = tree_run(w, t, b.lo, b.hi);
        atomic_fetch_add_explicit(&t->taken, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&t->elsewhere, 1, memory_order_relaxed);
    }
    if (dagrt_join_take(w, &fa)) {
        a.sum = tree_run(w, t, a.lo, a.hi);
        atomic_fetch_add_explicit(&t->taken, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&t->elsewhere, 1, memory_order_relaxed);
    }
    return a.sum + b.sum;
}

static int tree_on(int workers, bool no_workers, long n, unsigned spin, int reps)
{
    int v = 0;
    dagrt *rt = make(workers, no_workers);
    if (!rt)
        return 1;
    tree t = {rt, calloc((size_t)n, sizeof(_Atomic uint32_t)), 0, 0, spin};
    for (int r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            atomic_init(&t.ran[i], 0);
        long sum = tree_run(dagrt_worker_get(rt), &t, 0, n);
        if (sum != n * (n - 1) / 2)
            FAIL("fork tree (%d workers): sum %ld, want %ld", workers, sum, n * (n - 1) / 2);
        long bad = 0;
        for (long i = 0; i < n; i++)
            bad += atomic_load_explicit(&t.ran[i], memory_order_relaxed) != 1;
        if (bad)
            FAIL("fork tree (%d workers): %ld of %ld leaves did not run exactly once", workers, bad, n);
    }
    long joins = atomic_load(&t.taken) + atomic_load(&t.elsewhere);
    if (joins != (long)reps * 2 * (n - 1))
        FAIL("fork tree: %ld joins counted, want %ld", joins, (long)reps * 2 * (n - 1));
    /* With no other thread nothing can run a fork but its forker's join. */
    if (no_workers && atomic_load(&t.elsewhere) != 0)
        FAIL("fork tree without workers: %ld forks ran elsewhere", atomic_load(&t.elsewhere));
    dagrt_destroy(rt);
    free(t.ran);
    return v;
}

int scn_fork_tree(void)
{
    long n = scaled(1 << 15, 1 << 10);
    return tree_on(0, true, n, 0, 2) +
           tree_on(1, false, n, 20, 3) +
           tree_on(3, false, n, 20, 3);
}

/* A chain deeper than the deque's initial capacity (256): forks past it
 * take the growth path, with thieves stealing from the old buffer. */
static long chain_run(dagrt_worker *w, tree *t, long lo, long hi);

static void chain_task(void *p)
{
    span *s = p;
    s->sum = chain_run(dagrt_worker_get(s->t->rt), s->t, s->lo, s->hi);
}

static long chain_run(dagrt_worker *w, tree *t, long lo, long hi)
{
    if (hi - lo == 1)
        return tree_run(w, t, lo, hi);
    span a = {t, lo, lo + 1, 0};
    dagrt_forked fa;
    dagrt_fork(w, &fa, chain_task, &a);
    long rest = chain_run(w, t, lo + 1, hi);
    if (dagrt_join_take(w, &fa))
        a.sum = chain_run(w, t, a.lo, a.hi);
    return a.sum + rest;
}

int scn_fork_deep(void)
{
    int v = 0;
    long n = 3000;
    for (int workers = 0; workers <= 2; workers += 2) {
        dagrt *rt = make(workers, workers == 0);
        if (!rt)
            return v + 1;
        tree t = {rt, calloc((size_t)n, sizeof(_Atomic uint32_t)), 0, 0, 50};
        for (int r = 0; r < 4; r++) {
            for (long i = 0; i < n; i++)
                atomic_init(&t.ran[i], 0);
            long sum = chain_run(dagrt_worker_get(rt), &t, 0, n);
            long bad = 0;
            for (long i = 0; i < n; i++)
                bad += atomic_load_explicit(&t.ran[i], memory_order_relaxed) != 1;
            if (sum != n * (n - 1) / 2 || bad)
                FAIL("fork chain of %ld (%d workers): sum %ld, %ld leaves not run once", n, workers, sum, bad);
        }
        dagrt_destroy(rt);
        free(t.ran);
    }
    return v;
}

/* ------------------------------------------------------------ mixed */

typedef struct cell {
    _Atomic int runs;
} cell;

static void cell_task(void *p)
{
    cell *c = p;
    /* relaxed: read after the joins and waits that order it. */
    atomic_fetch_add_explicit(&c->runs, 1, memory_order_relaxed);
}

/* Frames next to plain spawns and group waits, joined out of order: a
 * group wait helps and may run the forks as ordinary tasks (they are on
 * top of the deque); the joins must then find them done. */
int scn_fork_mixed(void)
{
    int v = 0;
    /* Without workers everything is deterministic: c is spawned first, so
     * the wait runs b, a (LIFO) and then c itself, and both joins find
     * their forks already run. */
    dagrt *rt = make(0, true);
    if (!rt)
        return 1;
    {
        dagrt_worker *w = dagrt_worker_get(rt);
        if (!w)
            FAIL("dagrt_worker_get on the main thread returned NULL");
        cell a = {0}, b = {0}, c = {0};
        dagrt_forked fa, fb;
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn(rt, &g, cell_task, &c);
        dagrt_fork(w, &fa, cell_task, &a);
        dagrt_fork(w, &fb, cell_task, &b);
        dagrt_group_wait(rt, &g);
        if (dagrt_join_take(w, &fa) || dagrt_join_take(w, &fb))
            FAIL("a join took back a fork that the group wait had run");
        if (atomic_load(&a.runs) != 1 || atomic_load(&b.runs) != 1 || atomic_load(&c.runs) != 1)
            FAIL("no workers: runs a %d b %d c %d, want 1 each",
                 atomic_load(&a.runs), atomic_load(&b.runs), atomic_load(&c.runs));
        /* Out of order, nothing in between: the first join (a) finds b on
         * top, runs it while helping, and takes a back. */
        cell d = {0}, e = {0};
        dagrt_forked fd, fe;
        dagrt_fork(w, &fd, cell_task, &d);
        dagrt_fork(w, &fe, cell_task, &e);
        if (!dagrt_join_take(w, &fd))
            FAIL("out-of-order join did not take back its fork");
        else
            cell_task(&d);
        if (dagrt_join_take(w, &fe))
            FAIL("fork run by an out-of-order join was taken back again");
        if (atomic_load(&d.runs) != 1 || atomic_load(&e.runs) != 1)
            FAIL("out of order: runs d %d e %d, want 1 each", atomic_load(&d.runs), atomic_load(&e.runs));
    }
    dagrt_destroy(rt);

    /* With workers: the same shapes racing thieves; every cell once. */
    rt = make(2, false);
    if (!rt)
        return v + 1;
    dagrt_worker *w = dagrt_worker_get(rt);
    long rounds = scaled(20000, 500);
    for (long r = 0; r < rounds; r++) {
        cell a = {0}, b = {0}, c = {0}, d = {0};
        dagrt_forked fa, fb, fd;
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_fork(w, &fa, cell_task, &a);
        dagrt_fork(w, &fb, cell_task, &b);
        dagrt_spawn(rt, &g, cell_task, &c);
        if (r & 1)
            dagrt_group_wait(rt, &g);
        dagrt_fork(w, &fd, cell_task, &d);
        if (dagrt_join_take(w, &fa))      /* out of order */
            cell_task(&a);
        dagrt_join(w, &fd);               /* the running form */
        if (dagrt_join_take(w, &fb))
            cell_task(&b);
        dagrt_group_wait(rt, &g);
        if (atomic_load(&a.runs) != 1 || atomic_load(&b.runs) != 1 ||
            atomic_load(&c.runs) != 1 || atomic_load(&d.runs) != 1) {
            FAIL("round %ld: runs a %d b %d c %d d %d, want 1 each", r, atomic_load(&a.runs),
                 atomic_load(&b.runs), atomic_load(&c.runs), atomic_load(&d.runs));
            break;
        }
    }
    dagrt_destroy(rt);
    return v;
}

/* --------------------------------------------------- where NULL */

typedef struct nullw {
    dagrt *rt;
    int got_null;
    long sum;
} nullw;

static void null_body(nullw *n)
{
    dagrt_worker *w = dagrt_worker_get(n->rt);
    n->got_null = w == NULL;
    /* With a NULL worker a fork runs at once and the join reports it run. */
    cell a = {0};
    dagrt_forked fa;
    dagrt_fork(w, &fa, cell_task, &a);
    int at_fork = atomic_load(&a.runs);
    bool took = dagrt_join_take(w, &fa);
    n->sum = at_fork * 10 + (took ? 1 : 0) + atomic_load(&a.runs) * 100;
}

static void null_fiber_task(void *p) { null_body(p); }

static void *null_thread(void *p)
{
    null_body(p);
    return NULL;
}

/* dagrt_worker_get is NULL on a fiber task (which may migrate between a
 * fork and its join) and on a thread outside the runtime; forks then run
 * at their fork. And misuse gets DAGRT_EINVAL, not a crash. */
int scn_fork_null_worker(void)
{
    int v = 0;
    dagrt *rt = make(1, false);
    if (!rt)
        return 1;
    nullw f = {rt, 0, 0}, e = {rt, 0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn_ex(rt, &g, null_fiber_task, &f, DAGRT_SPAWN_FIBER);
    dagrt_group_wait(rt, &g);
    pthread_t th;
    pthread_create(&th, NULL, null_thread, &e);
    pthread_join(th, NULL);
    if (!f.got_null || f.sum != 110)
        FAIL("fiber task: worker %s, fork/join record %ld (want NULL, 110)", f.got_null ? "NULL" : "set", f.sum);
    if (!e.got_null || e.sum != 110)
        FAIL("outside thread: worker %s, fork/join record %ld (want NULL, 110)", e.got_null ? "NULL" : "set", e.sum);
    if (dagrt_worker_get(NULL) != NULL)
        FAIL("dagrt_worker_get(NULL) is not NULL");
    /* Misuse: an error code, nothing forked, a join that reports "done". */
    dagrt_worker *w = dagrt_worker_get(rt);
    dagrt_forked fm;
    cell m = {0};
    if (dagrt_fork(w, &fm, NULL, &m) != DAGRT_EINVAL)
        FAIL("dagrt_fork with a NULL function did not return DAGRT_EINVAL");
    if (dagrt_join_take(w, &fm))
        FAIL("join of a fork whose fork failed took it back");
    if (dagrt_fork(w, NULL, cell_task, &m) != DAGRT_EINVAL)
        FAIL("dagrt_fork with a NULL descriptor did not return DAGRT_EINVAL");
    if (dagrt_join_take(w, NULL))
        FAIL("dagrt_join_take(w, NULL) returned true");
    if (atomic_load(&m.runs) != 0)
        FAIL("a failed fork ran its function");
    dagrt_destroy(rt);
    return v;
}
