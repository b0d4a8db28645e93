/* scenarios.c - see scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/deque.h"      /* the internal headers include dagrt.h themselves */
#include "core/mpsc.h"
#include "core/core.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

double test_scale(void)
{
    const char *s = getenv("DAGC_TEST_SCALE");
    double x = s ? atof(s) : 1.0;
    return x > 0 ? x : 1.0;
}

long scaled(long n, long min)
{
    long r = (long)((double)n * test_scale());
    return r < min ? min : r;
}

static dagrt *make_rt(int workers, bool no_workers, int hot, dagrt_idle_policy idle)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.no_workers = no_workers;
    cfg.hot_workers = hot;
    cfg.idle = idle;
    cfg.seed = 42;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "dagrt_create_ex: %s\n", dagrt_strerror(err));
    return rt;
}

/* Items are small integers stored as pointers; 0 and 1 mean empty/abort. */
#define ITEM(i) ((void *)(uintptr_t)((i) + 2))
#define UNITEM(p) ((long)((uintptr_t)(p) - 2))

/* ------------------------------------------------------------ deque */

int scn_deque_lifo_fifo(void)
{
    int v = 0;
    rt_deque d;
    rt_deque_init(&d, 8);
    enum { N = 100 };
    for (long i = 0; i < N; i++)
        rt_deque_push(&d, ITEM(i));
    for (long i = N - 1; i >= 0; i--) {
        void *x = rt_deque_take(&d);
        if (x == RT_DEQUE_EMPTY || UNITEM(x) != i)
            FAIL("take: expected %ld", i);
    }
    if (rt_deque_take(&d) != RT_DEQUE_EMPTY)
        FAIL("take on empty deque returned an item");
    for (long i = 0; i < N; i++)
        rt_deque_push(&d, ITEM(i));
    for (long i = 0; i < N; i++) {
        void *x = rt_deque_steal(&d);
        if (x == RT_DEQUE_EMPTY || x == RT_DEQUE_ABORT || UNITEM(x) != i)
            FAIL("steal: expected %ld", i);
    }
    if (rt_deque_steal(&d) != RT_DEQUE_EMPTY)
        FAIL("steal on empty deque returned an item");
    rt_deque_fini(&d);
    return v;
}

int scn_deque_growth_wrap(void)
{
    int v = 0;
    rt_deque d;
    rt_deque_init(&d, 4);
    /* Move top and bottom past the capacity several times so the live
     * window wraps around the buffer, then grow in the middle of a wrap. */
    long next = 0, expect = 0;
    for (int round = 0; round < 10; round++) {
        for (int k = 0; k < 3; k++)
            rt_deque_push(&d, ITEM(next++));
        for (int k = 0; k < 3; k++) {
            void *x = rt_deque_steal(&d);
            if (x == RT_DEQUE_EMPTY || x == RT_DEQUE_ABORT || UNITEM(x) != expect)
                FAIL("wrap steal: expected %ld", expect);
            expect++;
        }
    }
    rt_deque_push(&d, ITEM(next++));
    rt_deque_push(&d, ITEM(next++));
    for (int k = 0; k < 1000; k++)   /* grows 4 -> 1024+ while wrapped */
        rt_deque_push(&d, ITEM(next++));
    /* Steal half from the top (FIFO), take the rest from the bottom (LIFO). */
    long total = next - expect, half = total / 2;
    for (long k = 0; k < half; k++) {
        void *x = rt_deque_steal(&d);
        if (x == RT_DEQUE_EMPTY || x == RT_DEQUE_ABORT || UNITEM(x) != expect)
            FAIL("grown steal: expected %ld got %ld", expect, UNITEM(x));
        expect++;
    }
    for (long want = next - 1; want >= expect; want--) {
        void *x = rt_deque_take(&d);
        if (x == RT_DEQUE_EMPTY || UNITEM(x) != want)
            FAIL("grown take: expected %ld", want);
    }
    if (rt_deque_take(&d) != RT_DEQUE_EMPTY || rt_deque_steal(&d) != RT_DEQUE_EMPTY)
        FAIL("deque not empty at the end");
    rt_deque_fini(&d);
    return v;
}

typedef struct dq_shared {
    rt_deque d;
    long n;
    _Atomic int *seen;
    _Atomic int done;
} dq_shared;

/* A thief of both deque scenarios. It asks for the owner's private tail
 * when the public part is empty (never, for an owner that only makes
 * public pushes). */
static void *dq_thief(void *p)
{
    dq_shared *s = p;
    for (;;) {
        void *x = rt_deque_steal(&s->d);
        if (x == RT_DEQUE_ABORT)
            continue;
        if (x == RT_DEQUE_EMPTY) {
            if (atomic_load(&s->done))
                break;
            if (rt_deque_has_private(&s->d))
                rt_deque_request(&s->d);
            continue;
        }
        atomic_fetch_add_explicit(&s->seen[UNITEM(x)], 1, memory_order_relaxed);
    }
    /* Drain anything left (done is set only after the owner's last push). */
    void *x;
    while ((x = rt_deque_steal(&s->d)) != RT_DEQUE_EMPTY)
        if (x != RT_DEQUE_ABORT)
            atomic_fetch_add_explicit(&s->seen[UNITEM(x)], 1, memory_order_relaxed);
    return NULL;
}

enum { DQ_THIEVES = 3 };

/* The owner's side of a deque scenario: one call per item i. */
typedef void (*dq_owner_step)(dq_shared *s, long i, uint64_t rng);

/* One owner (this thread) calling step for each of n items, three
 * thieves; then the owner drains, and every item must have been consumed
 * exactly once. Returns the violations. */
static int dq_run(const char *what, uint64_t rng, dq_owner_step step)
{
    int v = 0;
    dq_shared s;
    rt_deque_init(&s.d, 16);     /* small: forces growth under contention */
    s.n = scaled(1000000, 20000);
    s.seen = calloc((size_t)s.n, sizeof *s.seen);
    atomic_init(&s.done, 0);
    pthread_t th[DQ_THIEVES];
    for (int i = 0; i < DQ_THIEVES; i++)
        pthread_create(&th[i], NULL, dq_thief, &s);
    for (long i = 0; i < s.n; i++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        step(&s, i, rng);
    }
    void *x;
    while ((x = rt_deque_take(&s.d)) != RT_DEQUE_EMPTY)
        atomic_fetch_add_explicit(&s.seen[UNITEM(x)], 1, memory_order_relaxed);
    atomic_store(&s.done, 1);
    for (int i = 0; i < DQ_THIEVES; i++)
        pthread_join(th[i], NULL);
    long bad = 0;
    for (long i = 0; i < s.n; i++)
        if (atomic_load(&s.seen[i]) != 1 && bad++ < 5)
            FAIL("%s item %ld consumed %d times", what, i, atomic_load(&s.seen[i]));
    v += bad > 5 ? (int)(bad - 5) : 0;
    free(s.seen);
    rt_deque_fini(&s.d);
    return v;
}

static void dq_take_one(dq_shared *s)
{
    void *x = rt_deque_take(&s->d);
    if (x != RT_DEQUE_EMPTY)
        atomic_fetch_add_explicit(&s->seen[UNITEM(x)], 1, memory_order_relaxed);
}

/* Public pushes; the owner takes some back. */
static void dq_plain_step(dq_shared *s, long i, uint64_t rng)
{
    rt_deque_push(&s->d, ITEM(i));
    if ((rng & 3) == 0)
        dq_take_one(s);
}

int scn_deque_thieves(void)
{
    return dq_run("deque", 12345, dq_plain_step);
}

/* The split deque: the owner pushes to its private tail, exposes it at
 * random and whenever a thief asks, and takes from both ends of its side
 * (private pops without a fence, public takes racing the thieves). */
static void dq_split_step(dq_shared *s, long i, uint64_t rng)
{
    rt_deque_push_private(&s->d, ITEM(i));
    if (rt_deque_take_request(&s->d) || (rng & 15) == 0)
        rt_deque_expose(&s->d);
    if ((rng & 0x30) == 0)
        for (int k = (int)((rng >> 8) & 3); k >= 0; k--)
            dq_take_one(s);
}

int scn_deque_split(void)
{
    return dq_run("split deque", 777, dq_split_step);
}

/* ------------------------------------------------------------ inbox */

typedef struct inbox_item {
    rt_node node;       /* first: the queue links nodes */
    int producer;
    long seq;
} inbox_item;

typedef struct inbox_shared {
    rt_mpsc q;
    inbox_item *items;  /* [producers][n] */
    long n;
    int producers;
    _Atomic int producers_done;
    _Atomic long consumed;
    _Atomic int *seen;
    long *last;         /* per producer: consumers check FIFO per producer (single consumer only) */
} inbox_shared;

typedef struct inbox_arg {
    inbox_shared *s;
    int id;
} inbox_arg;

static void *inbox_producer(void *p)
{
    inbox_arg *a = p;
    inbox_shared *s = a->s;
    for (long i = 0; i < s->n; i++) {
        inbox_item *it = &s->items[(long)a->id * s->n + i];
        it->producer = a->id;
        it->seq = i;
        rt_mpsc_push(&s->q, &it->node);
    }
    atomic_fetch_add(&s->producers_done, 1);
    return NULL;
}

static int inbox_consume(inbox_shared *s, bool check_order)
{
    int v = 0;
    long total = s->n * s->producers;
    while (atomic_load(&s->consumed) < total) {
        rt_node *nd = rt_mpsc_trypop(&s->q);
        if (!nd)
            continue;
        inbox_item *it = (inbox_item *)(void *)nd;
        long idx = (long)it->producer * s->n + it->seq;
        if (atomic_fetch_add(&s->seen[idx], 1) != 0)
            FAIL("inbox item %d/%ld popped twice", it->producer, it->seq);
        if (check_order) {
            if (it->seq != s->last[it->producer] + 1)
                FAIL("inbox: producer %d order %ld after %ld", it->producer, it->seq, s->last[it->producer]);
            s->last[it->producer] = it->seq;
        }
        atomic_fetch_add(&s->consumed, 1);
    }
    return v;
}

static void *inbox_consumer(void *p)
{
    intptr_t v = inbox_consume(p, false);
    return (void *)v;
}

static int inbox_run(int consumers)
{
    int v = 0;
    enum { PRODUCERS = 4 };
    inbox_shared s;
    rt_mpsc_init(&s.q);
    s.n = scaled(250000, 5000);
    s.producers = PRODUCERS;
    s.items = calloc((size_t)(s.n * PRODUCERS), sizeof *s.items);
    s.seen = calloc((size_t)(s.n * PRODUCERS), sizeof *s.seen);
    s.last = malloc(PRODUCERS * sizeof *s.last);
    for (int i = 0; i < PRODUCERS; i++)
        s.last[i] = -1;
    atomic_init(&s.producers_done, 0);
    atomic_init(&s.consumed, 0);
    pthread_t pt[PRODUCERS], ct[4];
    inbox_arg args[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i] = (inbox_arg){&s, i};
        pthread_create(&pt[i], NULL, inbox_producer, &args[i]);
    }
    for (int i = 1; i < consumers; i++)
        pthread_create(&ct[i], NULL, inbox_consumer, &s);
    v += inbox_consume(&s, consumers == 1);
    for (int i = 1; i < consumers; i++) {
        void *r;
        pthread_join(ct[i], &r);
        v += (int)(intptr_t)r;
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(pt[i], NULL);
    long miss = 0;
    for (long i = 0; i < s.n * PRODUCERS; i++)
        if (atomic_load(&s.seen[i]) != 1)
            miss++;
    if (miss)
        FAIL("inbox: %ld items not consumed exactly once", miss);
    if (rt_mpsc_nonempty(&s.q) || rt_mpsc_trypop(&s.q))
        FAIL("inbox not empty at the end");
    free(s.items);
    free(s.seen);
    free(s.last);
    return v;
}

int scn_inbox_producers(void) { return inbox_run(1); }
int scn_inbox_many_consumers(void) { return inbox_run(3); }

/* ------------------------------------------------------- spawn tree */

typedef struct tree_ctx {
    dagrt *rt;
    _Atomic unsigned char *ran;
    int depth;
} tree_ctx;

typedef struct tree_node {
    tree_ctx *tc;
    long id;       /* heap numbering: children 2id+1, 2id+2 */
    int level;
} tree_node;

static void tree_task(void *p);

static void tree_run(tree_ctx *tc, long id, int level)
{
    atomic_fetch_add_explicit(&tc->ran[id], 1, memory_order_relaxed);
    if (level == tc->depth)
        return;
    dagrt_group g;
    dagrt_group_init(&g);
    tree_node kids[2] = {{tc, 2 * id + 1, level + 1}, {tc, 2 * id + 2, level + 1}};
    dagrt_spawn(tc->rt, &g, tree_task, &kids[0]);
    dagrt_spawn(tc->rt, &g, tree_task, &kids[1]);
    dagrt_group_wait(tc->rt, &g);
}

static void tree_task(void *p)
{
    tree_node *n = p;
    tree_run(n->tc, n->id, n->level);
}

int scn_spawn_tree(void)
{
    int v = 0;
    int depth = test_scale() < 0.5 ? 14 : 17;   /* 2^(depth+1)-1 tasks: 2^18 - 1 at scale 1 */
    long n = (1L << (depth + 1)) - 1;
    tree_ctx tc = {make_rt(2, false, 0, DAGRT_IDLE_PARK), calloc((size_t)n, 1), depth};
    if (!tc.rt)
        return 1;
    tree_run(&tc, 0, 0);
    long bad = 0;
    for (long i = 0; i < n; i++)
        if (atomic_load(&tc.ran[i]) != 1)
            bad++;
    if (bad)
        FAIL("spawn tree: %ld of %ld tasks did not run exactly once", bad, n);
    dagrt_destroy(tc.rt);
    free(tc.ran);
    return v;
}

/* -------------------------------------------------------------- fib */

typedef struct fib_arg {
    dagrt *rt;
    int n;
    long r;
} fib_arg;

static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    fib_arg x = {a->rt, a->n - 1, 0}, y = {a->rt, a->n - 2, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(a->rt, &g, fib_task, &x);
    dagrt_spawn(a->rt, &g, fib_task, &y);
    dagrt_group_wait(a->rt, &g);
    a->r = x.r + y.r;
}

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static int fib_on(int workers, bool no_workers)
{
    int v = 0;
    dagrt *rt = make_rt(workers, no_workers, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    int n = test_scale() < 0.5 ? 16 : 22;
    for (int rep = 0; rep < 3; rep++) {
        fib_arg a = {rt, n, 0};
        fib_task(&a);
        if (a.r != fib_serial(n))
            FAIL("fib(%d) = %ld, want %ld (workers %d)", n, a.r, fib_serial(n), workers);
    }
    dagrt_destroy(rt);
    return v;
}

int scn_fib_no_workers(void) { return fib_on(0, true); }
int scn_fib_1_worker(void) { return fib_on(1, false); }
int scn_fib_2_workers(void) { return fib_on(2, false); }

/* ---------------------------------------------------- parallel for */

typedef struct pfor_check {
    _Atomic int *hits;
    size_t begin, end;
    _Atomic int bad;
    int spin;          /* per-item busy work, so splitting happens */
} pfor_check;

static void pfor_body(void *p, size_t b, size_t e)
{
    pfor_check *c = p;
    if (b >= e || b < c->begin || e > c->end) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    for (size_t i = b; i < e; i++) {
        atomic_fetch_add_explicit(&c->hits[i - c->begin], 1, memory_order_relaxed);
        for (volatile int k = 0; k < c->spin; k++) {
        }
    }
}

static int pfor_one(dagrt *rt, size_t begin, size_t size, size_t grain, int spin)
{
    int v = 0;
    pfor_check c;
    c.hits = calloc(size + 1, sizeof *c.hits);
    c.begin = begin;
    c.end = begin + size;
    atomic_init(&c.bad, 0);
    c.spin = spin;
    int r = dagrt_parallel_for(rt, begin, begin + size, grain, pfor_body, &c);
    if (r != 0)
        FAIL("parallel_for(%zu, %zu): %s", size, grain, dagrt_strerror(r));
    if (atomic_load(&c.bad))
        FAIL("parallel_for(%zu, %zu): empty or out-of-range sub-range", size, grain);
    for (size_t i = 0; i < size; i++)
        if (atomic_load(&c.hits[i]) != 1) {
            FAIL("parallel_for(%zu, %zu): index %zu covered %d times", size, grain, i,
                 atomic_load(&c.hits[i]));
            break;
        }
    free(c.hits);
    return v;
}

int scn_pfor_cover(void)
{
    int v = 0;
    static const size_t sizes[] = {0, 1, 2, 3, 7, 63, 64, 65, 127, 1000, 1001, 4097, 33333, 100003};
    static const size_t grains[] = {0, 1, 2, 3, 5, 16, 64, 1000, 5000};
    int workers[] = {0, 1, 3};
    for (int w = 0; w < 3; w++) {
        dagrt *rt = make_rt(workers[w], workers[w] == 0, 0, DAGRT_IDLE_PARK);
        if (!rt)
            return v + 1;
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (size_t gi = 0; gi < sizeof grains / sizeof *grains; gi++) {
                size_t sz = sizes[si];
                if (test_scale() < 0.5 && sz > 5000)
                    continue;
                int spin = sz <= 5000 ? 200 : 20;
                v += pfor_one(rt, 17 + si, sz, grains[gi], spin);
            }
        /* begin > end is an error, not an empty loop. */
        if (dagrt_parallel_for(rt, 10, 5, 1, pfor_body, NULL) != DAGRT_EINVAL)
            FAIL("parallel_for with begin > end is not DAGRT_EINVAL");
        dagrt_destroy(rt);
    }
    return v;
}

/* Loops back to back with the same (fn, arg), the way a frame calls them:
 * parallel_for keeps per-thread hints (ns per item, when the last loop
 * ended) and invites, kicks, withdraws and hops on their strength. Item
 * cost changes under a fixed (fn, arg) (a hint goes stale), workers that
 * park at once (spin time 0: every loop finds them asleep, kicks fire),
 * and fn that leaves tasks of its own in the caller's deque when the loop
 * ends (the end spin must hand those to the full wait). Every index must
 * still be covered exactly once. */
typedef struct repeat_arg {
    pfor_check *c;
    dagrt *rt;
    dagrt_group *side;      /* NULL: no side tasks */
    _Atomic int side_ran;
} repeat_arg;

static void side_task(void *p)
{
    atomic_fetch_add_explicit(&((repeat_arg *)p)->side_ran, 1, memory_order_relaxed);
}

static void repeat_body(void *p, size_t b, size_t e)
{
    repeat_arg *a = p;
    pfor_body(a->c, b, e);
    if (a->side && b == a->c->begin)
        dagrt_spawn(a->rt, a->side, side_task, a);
}

static int repeat_on(dagrt *rt, int rounds, bool side)
{
    int v = 0;
    static const size_t sizes[] = {1000, 3, 5000, 64, 20000, 1000};
    static const int spins[] = {0, 200, 5, 50, 0, 1000};
    size_t maxn = 20000;
    pfor_check c;
    c.hits = calloc(maxn, sizeof *c.hits);
    repeat_arg a = {&c, rt, NULL, 0};
    for (int r = 0; r < rounds; r++) {
        size_t si = (size_t)r % (sizeof sizes / sizeof *sizes);
        size_t n = sizes[si];
        c.begin = 100;
        c.end = 100 + n;
        atomic_store(&c.bad, 0);
        c.spin = spins[si];
        for (size_t i = 0; i < n; i++)
            atomic_store_explicit(&c.hits[i], 0, memory_order_relaxed);
        dagrt_group side_g;
        dagrt_group_init(&side_g);
        a.side = side ? &side_g : NULL;
        atomic_store(&a.side_ran, 0);
        int rc = dagrt_parallel_for(rt, c.begin, c.end, 0, repeat_body, &a);
        if (rc != 0)
            FAIL("repeat round %d: %s", r, dagrt_strerror(rc));
        if (atomic_load(&c.bad))
            FAIL("repeat round %d: empty or out-of-range sub-range", r);
        for (size_t i = 0; i < n; i++)
            if (atomic_load(&c.hits[i]) != 1) {
                FAIL("repeat round %d (n %zu): index %zu covered %d times", r, n, i,
                     atomic_load(&c.hits[i]));
                break;
            }
        if (side) {
            dagrt_group_wait(rt, &side_g);
            if (atomic_load(&a.side_ran) != 1)
                FAIL("repeat round %d: side task ran %d times", r, atomic_load(&a.side_ran));
        }
    }
    free(c.hits);
    return v;
}

int scn_pfor_repeat(void)
{
    int v = 0;
    int rounds = (int)scaled(3000, 300);
    int workers[] = {1, 3};
    for (int w = 0; w < 2; w++)
        for (int park_at_once = 0; park_at_once < 2; park_at_once++) {
            dagrt *rt = make_rt(workers[w], false, 0, DAGRT_IDLE_PARK);
            if (!rt)
                return v + 1;
            if (park_at_once)
                atomic_store(&rt->spin_ns, 0);
            v += repeat_on(rt, rounds, false);
            v += repeat_on(rt, rounds / 10 + 1, true);
            dagrt_destroy(rt);
        }
    return v;
}

/* A taker that looks idle but never comes: the caller sets a share aside
 * for a polling taker (slot 1) before inviting it, and must run that share
 * itself when it takes its invitation back at the end. The only worker is
 * kept busy in a task while the idle count is faked, so every loop takes
 * that path (white box: rt->nspinning). Then the same loops with the worker
 * free and really polling, where the taker usually does come, late or not. */
typedef struct busy_arg {
    _Atomic int started, release;
} busy_arg;

static void busy_task(void *p)
{
    busy_arg *b = p;
    atomic_store_explicit(&b->started, 1, memory_order_release);
    while (!atomic_load_explicit(&b->release, memory_order_acquire))
        sched_yield();
}

int scn_pfor_withdraw(void)
{
    int v = 0;
    static const size_t sizes[] = {64, 100, 1000, 4097};
    static const size_t grains[] = {0, 1, 7, 40};
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    int rounds = (int)scaled(20, 3);
    busy_arg b = {0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn(rt, &g, busy_task, &b) != 0)
        FAIL("spawn busy task");
    while (!atomic_load_explicit(&b.started, memory_order_acquire))
        sched_yield();
    /* The worker is inside busy_task: it cannot take an invitation, and
     * the fake spinner makes every loop presplit and invite. relaxed: the
     * test's own counter games; parallel_for reads it relaxed too. */
    atomic_fetch_add_explicit(&rt->nspinning, 1, memory_order_relaxed);
    for (int r = 0; r < rounds; r++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (size_t gi = 0; gi < sizeof grains / sizeof *grains; gi++)
                v += pfor_one(rt, 5, sizes[si], grains[gi], 300);
    atomic_fetch_sub_explicit(&rt->nspinning, 1, memory_order_relaxed);
    /* Those loops offer their share first (the fake spinner says someone
     * polls), and the only thread that could take an offer was inside
     * busy_task: each must have been withdrawn. relaxed: a statistic, and
     * nobody counts now. */
    if (atomic_load_explicit(&rt->offers_taken, memory_order_relaxed) != 0)
        FAIL("%llu offers taken while the only worker was busy",
             (unsigned long long)atomic_load(&rt->offers_taken));
    atomic_store_explicit(&b.release, 1, memory_order_release);
    dagrt_group_wait(rt, &g);
    for (int r = 0; r < rounds * 10; r++)
        v += pfor_one(rt, 5, sizes[r % 4], grains[(r / 4) % 4], 300);
    dagrt_destroy(rt);
    return v;
}

/* The parallel-for's offer (runtime/pfor/share.c): a loop's first share goes to
 * a polling taker through the runtime's offer word. With the spin policy
 * the only worker polls whenever it is not helping, so loops back to back
 * must be joined by it through offers (white box: rt->offers_taken; the
 * machine may be loaded, so the test bounds the time, not the count).
 * Every index is covered exactly once, and no offer is left posted once a
 * loop has returned (rt->offer would then point into the returned loop's
 * stack frame). Offers nobody takes are withdrawn in pfor_withdraw. */
typedef struct offer_arg {
    pfor_check c;
    pthread_t caller;
    _Atomic size_t others;   /* items run by threads other than the caller */
} offer_arg;

static void offer_body(void *p, size_t b, size_t e)
{
    offer_arg *a = p;
    if (!pthread_equal(pthread_self(), a->caller))
        atomic_fetch_add_explicit(&a->others, e - b, memory_order_relaxed);
    pfor_body(&a->c, b, e);
}

int scn_pfor_offer(void)
{
    int v = 0;
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_SPIN);
    if (!rt)
        return 1;
    static const size_t sizes[] = {300, 2000, 50};
    offer_arg a;
    a.c.hits = calloc(2000, sizeof *a.c.hits);
    a.c.spin = 100;
    a.caller = pthread_self();
    int loops = 0, helped = 0;
    uint64_t t0 = rt_now_ns();
    while (helped < 50 && rt_now_ns() - t0 < 20000000000ull) {
        size_t n = sizes[loops % 3];
        a.c.begin = 7;
        a.c.end = 7 + n;
        atomic_store(&a.c.bad, 0);
        atomic_store(&a.others, 0);
        for (size_t i = 0; i < n; i++)
            atomic_store_explicit(&a.c.hits[i], 0, memory_order_relaxed);
        int rc = dagrt_parallel_for(rt, a.c.begin, a.c.end, 0, offer_body, &a);
        loops++;
        if (rc != 0)
            FAIL("offer loop %d: %s", loops, dagrt_strerror(rc));
        if (atomic_load(&a.c.bad))
            FAIL("offer loop %d: empty or out-of-range sub-range", loops);
        for (size_t i = 0; i < n; i++)
            if (atomic_load(&a.c.hits[i]) != 1) {
                FAIL("offer loop %d (n %zu): index %zu covered %d times", loops, n, i,
                     atomic_load(&a.c.hits[i]));
                break;
            }
        /* relaxed: this thread posted and withdrew every offer it made;
         * a pointer here now would be a dangling one into our frame. */
        if (atomic_load_explicit(&rt->offer, memory_order_relaxed) != NULL)
            FAIL("offer loop %d: an offer is still posted after the loop returned", loops);
        if (v)
            break;
        /* relaxed: the taker's count is ordered before its completion,
         * which the loop's return acquired. */
        uint64_t taken = atomic_load_explicit(&rt->offers_taken, memory_order_relaxed);
        helped += atomic_load(&a.others) > 0 && taken > 0;
    }
    if (helped == 0)
        FAIL("a polling worker took no offer in %d loops (%llu offers taken)", loops,
             (unsigned long long)atomic_load(&rt->offers_taken));
    free(a.c.hits);
    dagrt_destroy(rt);
    return v;
}

typedef struct nested_arg {
    dagrt *rt;
    _Atomic long *sum;
} nested_arg;

static void nested_inner(void *p, size_t b, size_t e)
{
    nested_arg *a = p;
    for (size_t i = b; i < e; i++)
        atomic_fetch_add_explicit(a->sum, (long)i, memory_order_relaxed);
}

static void nested_outer(void *p, size_t b, size_t e)
{
    nested_arg *a = p;
    for (size_t i = b; i < e; i++)
        dagrt_parallel_for(a->rt, 0, 2000, 7, nested_inner, a);
}

int scn_pfor_nested(void)
{
    int v = 0;
    dagrt *rt = make_rt(3, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    _Atomic long sum = 0;
    nested_arg a = {rt, &sum};
    size_t outer = (size_t)scaled(200, 20);
    dagrt_parallel_for(rt, 0, outer, 1, nested_outer, &a);
    long want = (long)outer * (1999L * 2000 / 2);
    if (atomic_load(&sum) != want)
        FAIL("nested parallel_for sum %ld, want %ld", atomic_load(&sum), want);
    dagrt_destroy(rt);
    return v;
}

/* ------------------------------------------------------- park / wake */

typedef struct ping {
    _Atomic int flag;
    _Atomic int on_main;
    dagrt *rt;
} ping;

static void ping_task(void *p)
{
    ping *pg = p;
    if (dagrt_on_main_thread(pg->rt))
        atomic_store(&pg->on_main, 1);
    atomic_store_explicit(&pg->flag, 1, memory_order_release);
}

/* Spin (not help) until flag, with a deadline: a lost wake-up fails the
 * test instead of hanging it. */
static bool await_flag(_Atomic int *flag, uint64_t timeout_ns)
{
    uint64_t t0 = rt_now_ns();
    for (unsigned i = 0; !atomic_load_explicit(flag, memory_order_acquire); i++) {
        if ((i & 1023) == 0 && rt_now_ns() - t0 > timeout_ns)
            return false;
    }
    return true;
}

/* 100k times: the only worker parks (spin time 0), main spawns a task that
 * main will not run (it spins, it does not help), so a worker must wake. */
static int park_wake_run(bool external, long cycles)
{
    int v = 0;
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    atomic_store(&rt->spin_ns, 0);
    for (long i = 0; i < cycles; i++) {
        ping pg = {0, 0, rt};
        dagrt_group g;
        dagrt_group_init(&g);
        int r = dagrt_spawn(rt, &g, ping_task, &pg);
        if (r) {
            FAIL("spawn: %s", dagrt_strerror(r));
            break;
        }
        if (!await_flag(&pg.flag, 10u * 1000000000u)) {
            FAIL("lost wake-up: cycle %ld never ran (external %d)", i, external);
            break;
        }
        dagrt_group_wait(rt, &g);
        if (atomic_load(&pg.on_main))
            FAIL("task ran on the main thread although main never helped");
    }
    dagrt_destroy(rt);
    return v;
}

int scn_park_wake(void) { return park_wake_run(false, scaled(100000, 10000)); }

typedef struct ext_arg {
    long cycles;
    int v;
    dagrt *rt;
} ext_arg;

static void *park_wake_ext_thread(void *p)
{
    ext_arg *a = p;
    for (long i = 0; i < a->cycles; i++) {
        ping pg = {0, 0, a->rt};
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn(a->rt, &g, ping_task, &pg);
        if (!await_flag(&pg.flag, 10u * 1000000000u)) {
            fprintf(stderr, "lost wake-up from an outside thread at cycle %ld\n", i);
            a->v++;
            break;
        }
        dagrt_group_wait(a->rt, &g);
    }
    return NULL;
}

/* The same from a thread outside the runtime (inbox path + claims). */
int scn_park_wake_external(void)
{
    dagrt *rt = make_rt(2, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    atomic_store(&rt->spin_ns, 0);
    ext_arg a = {scaled(30000, 3000), 0, rt};
    pthread_t th;
    pthread_create(&th, NULL, park_wake_ext_thread, &a);
    pthread_join(th, NULL);
    dagrt_destroy(rt);
    return a.v;
}

static void sleepy_task(void *p)
{
    (void)p;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* Main waits on a group whose task sleeps: main must park (nothing to help)
 * and be woken by the group's completion, every time. */
int scn_group_wait_parks(void)
{
    int v = 0;
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    atomic_store(&rt->spin_ns, 0);
    long n = scaled(2000, 200);
    for (long i = 0; i < n; i++) {
        dagrt_group g;
        dagrt_group_init(&g);
        ping pg = {0, 0, rt};
        /* The worker runs the sleepy task; main takes the ping or not. */
        dagrt_spawn(rt, &g, sleepy_task, NULL);
        dagrt_spawn(rt, &g, ping_task, &pg);
        int r = dagrt_group_wait(rt, &g);
        if (r)
            FAIL("group_wait: %s", dagrt_strerror(r));
        if (!atomic_load(&pg.flag))
            FAIL("group_wait returned before its tasks ran");
    }
    dagrt_destroy(rt);
    return v;
}

/* -------------------------------------------------------- main only */

typedef struct main_ctx {
    dagrt *rt;
    _Atomic int ran;
    _Atomic int off_main;
    dagrt_group *g;
} main_ctx;

static void main_only_task(void *p)
{
    main_ctx *m = p;
    if (!dagrt_on_main_thread(m->rt))
        atomic_fetch_add(&m->off_main, 1);
    atomic_fetch_add(&m->ran, 1);
}

static void spawner_task(void *p)
{
    main_ctx *m = p;
    /* From a worker: queue main-thread work. */
    for (int i = 0; i < 10; i++)
        dagrt_spawn_ex(m->rt, m->g, main_only_task, m, DAGRT_SPAWN_MAIN);
}

int scn_main_only(void)
{
    int v = 0;
    dagrt *rt = make_rt(2, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    long rounds = scaled(500, 50);
    for (long r = 0; r < rounds; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        main_ctx m = {rt, 0, 0, &g};
        for (int i = 0; i < 8; i++)
            dagrt_spawn(rt, &g, spawner_task, &m);
        dagrt_group_wait(rt, &g);
        if (atomic_load(&m.ran) != 80)
            FAIL("main-thread tasks: %d ran, want 80", atomic_load(&m.ran));
        if (atomic_load(&m.off_main))
            FAIL("%d main-thread tasks ran off the main thread", atomic_load(&m.off_main));
    }
    /* dagrt_pump_main runs what is queued, on the main thread only. */
    main_ctx m = {rt, 0, 0, NULL};
    for (int i = 0; i < 5; i++)
        dagrt_spawn_ex(rt, NULL, main_only_task, &m, DAGRT_SPAWN_MAIN);
    int n = dagrt_pump_main(rt);
    if (n != 5 || atomic_load(&m.ran) != 5)
        FAIL("pump_main ran %d (counted %d), want 5", n, atomic_load(&m.ran));
    if (dagrt_pump_main(rt) != 0)
        FAIL("pump_main on an empty queue ran something");
    dagrt_destroy(rt);
    return v;
}

/* ------------------------------------------------------------- hot lane */

typedef struct hot_ctx {
    _Atomic long seq;
    _Atomic long hot_at;
    long work;
    _Atomic int go;     /* backlog tasks wait for it: no timing in the test */
    dagrt *rt;          /* for scn_hot_worker's look at the hot lane */
    _Atomic long late;  /* backlog picks made while the hot task sat unclaimed */
    long round;         /* > 0, distinct per round */
} hot_ctx;

/* The round in which this thread last saw `go` (the main thread sets its
 * own when it stores go): every pick a thread makes after that was made
 * with the round's hot task already published. */
static _Thread_local long tls_seen_round;

static void backlog_task(void *p)
{
    hot_ctx *h = p;
    atomic_fetch_add(&h->seq, 1);
    if (h->rt && tls_seen_round == h->round) {
        /* This pick came after the hot task was published. It is only
         * allowed if another thread had claimed the hot task: the claimer
         * holds the lane's consumer lock from before our pick until after
         * it has taken the node off (n drops to 0), so "still queued and
         * nobody holds the lock" means our pick skipped a poppable hot
         * task. Reading this at our start instead of at the pick is safe:
         * n only falls in this round, and the lock is only taken to pop. */
        rt_mpsc *q = &h->rt->hot;
        if (atomic_load(&q->n) > 0 && atomic_load(&q->lock) == 0 && atomic_load(&q->n) > 0)
            atomic_fetch_add(&h->late, 1);
    }
    while (!atomic_load(&h->go))
        sched_yield();
    tls_seen_round = h->round;
    for (volatile long k = 0; k < h->work; k++) {
    }
}

static void hot_task(void *p)
{
    hot_ctx *h = p;
    atomic_store(&h->hot_at, atomic_fetch_add(&h->seq, 1));
}

/* K = 0, only the main thread: a hot task spawned after a backlog of 1000
 * ordinary ones runs first. */
int scn_hot_overtakes(void)
{
    int v = 0;
    dagrt *rt = make_rt(0, true, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    hot_ctx h = {0, -1, 10, 1, NULL, 0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 1000; i++)
        dagrt_spawn(rt, &g, backlog_task, &h);
    dagrt_spawn_ex(rt, &g, hot_task, &h, DAGRT_SPAWN_HOT);
    dagrt_group_wait(rt, &g);
    if (atomic_load(&h.hot_at) != 0)
        FAIL("hot task ran at position %ld, want 0", atomic_load(&h.hot_at));
    dagrt_destroy(rt);
    return v;
}

/* K = 1 of 2 workers: a backlog of 400 tasks is queued; the ones already
 * started hold until the hot task is spawned. From then on, no thread may
 * pick a backlog task while the hot task is still queued and unclaimed.
 * (The hot task's start position is not the test: on 2 cores the thread
 * that claimed it may be preempted before running it while the others go
 * on through the backlog; that is scheduling, not a skipped hot task.) */
int scn_hot_worker(void)
{
    int v = 0;
    dagrt *rt = make_rt(2, false, 1, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    long rounds = scaled(20, 3);
    for (long r = 0; r < rounds; r++) {
        hot_ctx h = {0, -1, 2000, 0, rt, 0, r + 1};
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < 400; i++)
            dagrt_spawn(rt, &g, backlog_task, &h);
        dagrt_spawn_ex(rt, &g, hot_task, &h, DAGRT_SPAWN_HOT);
        atomic_store(&h.go, 1);
        tls_seen_round = h.round;
        /* The workers must take the hot task themselves: the main thread
         * stays out of the race until it has run (it would win it, having
         * nothing in hand). No timing: a worker that skipped it would run
         * it once the backlog is drained, and the check below fires. */
        while (atomic_load(&h.hot_at) < 0)
            sched_yield();
        dagrt_group_wait(rt, &g);
        long at = atomic_load(&h.hot_at);
        if (at < 0 || at > 400)
            FAIL("hot task did not run exactly once (position %ld)", at);
        if (atomic_load(&h.late) != 0)
            FAIL("round %ld: %ld backlog tasks were picked while the hot task sat unclaimed",
                 r, atomic_load(&h.late));
    }
    dagrt_destroy(rt);
    return v;
}

/* ------------------------------------------------- destroy in flight */

typedef struct fan {
    dagrt *rt;
    _Atomic long *count;
    int depth;
} fan;

static void fan_task(void *p)
{
    fan *f = p;
    atomic_fetch_add(f->count, 1);
    if (f->depth > 0) {
        for (int i = 0; i < 2; i++) {
            fan *k = malloc(sizeof *k);
            *k = (fan){f->rt, f->count, f->depth - 1};
            dagrt_spawn(f->rt, NULL, fan_task, k);
        }
    }
    free(f);
}

static void main_fan_task(void *p)
{
    _Atomic long *count = p;
    atomic_fetch_add(count, 1);
}

int scn_destroy_in_flight(void)
{
    int v = 0;
    long rounds = scaled(40, 5);
    for (long r = 0; r < rounds; r++) {
        int workers = (int)(r % 3);
        dagrt *rt = make_rt(workers, workers == 0, 0, DAGRT_IDLE_PARK);
        if (!rt)
            return v + 1;
        _Atomic long count = 0;
        int depth = 10;
        for (int i = 0; i < 4; i++) {
            fan *f = malloc(sizeof *f);
            *f = (fan){rt, &count, depth};
            dagrt_spawn(rt, NULL, fan_task, f);
        }
        for (int i = 0; i < 10; i++)
            dagrt_spawn_ex(rt, NULL, main_fan_task, &count, DAGRT_SPAWN_MAIN);
        dagrt_destroy(rt);   /* runs everything spawned, then joins */
        long want = 4 * ((1L << (depth + 1)) - 1) + 10;
        if (atomic_load(&count) != want)
            FAIL("destroy with work in flight: %ld tasks ran, want %ld", atomic_load(&count), want);
    }
    return v;
}

/* --------------------------------------------------- outside threads */

typedef struct ext_shared {
    dagrt *rt;
    _Atomic long count;
    long per_thread;
} ext_shared;

static void count_task(void *p)
{
    ext_shared *s = p;
    atomic_fetch_add(&s->count, 1);
}

static void *ext_spawner(void *p)
{
    ext_shared *s = p;
    dagrt_group g;
    dagrt_group_init(&g);
    for (long i = 0; i < s->per_thread; i++) {
        dagrt_spawn(s->rt, &g, count_task, s);
        if ((i & 63) == 63)
            dagrt_group_wait(s->rt, &g);
    }
    dagrt_group_wait(s->rt, &g);
    return NULL;
}

int scn_external_threads(void)
{
    int v = 0;
    dagrt *rt = make_rt(2, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    ext_shared s = {rt, 0, scaled(20000, 2000)};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, ext_spawner, &s);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    if (atomic_load(&s.count) != 3 * s.per_thread)
        FAIL("outside threads: %ld tasks ran, want %ld", atomic_load(&s.count), 3 * s.per_thread);
    dagrt_destroy(rt);
    return v;
}

int scn_spin_policy(void)
{
    int v = 0;
    dagrt *rt = make_rt(2, false, 1, DAGRT_IDLE_SPIN);
    if (!rt)
        return 1;
    for (int rep = 0; rep < 3; rep++) {
        fib_arg a = {rt, 18, 0};
        fib_task(&a);
        if (a.r != fib_serial(18))
            FAIL("fib(18) under the spin policy = %ld", a.r);
    }
    dagrt_destroy(rt);
    return v;
}


/* ------------------------------------------------- group ownership */

typedef struct mix_ctx {
    dagrt *rt;
    dagrt_group *g;      /* on the main thread's stack: owner fast path */
    _Atomic long ran;
    _Atomic int eperm;
} mix_ctx;

static void mix_leaf(void *p)
{
    mix_ctx *m = p;
    /* A little work, so the main thread often arms its wait while tasks
     * are pending and then runs parents that spawn into the armed group. */
    for (volatile int k = 0; k < 300; k++) {
    }
    atomic_fetch_add(&m->ran, 1);
}

static void mix_parent(void *p)
{
    mix_ctx *m = p;
    atomic_fetch_add(&m->ran, 1);
    /* Spawning into the main thread's group from wherever we run: the
     * atomic side of the count, mixed with main's owner-local side. */
    dagrt_spawn(m->rt, m->g, mix_leaf, m);
    dagrt_spawn(m->rt, m->g, mix_leaf, m);
    /* Only the owner may wait on it. */
    if (!dagrt_on_main_thread(m->rt) && dagrt_group_wait(m->rt, m->g) != DAGRT_EPERM)
        atomic_fetch_add(&m->eperm, 1);   /* counts wrong answers */
}

static void *heap_group_waiter(void *p)
{
    mix_ctx *m = p;
    return (void *)(intptr_t)dagrt_group_wait(m->rt, m->g);
}

int scn_group_mixed(void)
{
    int v = 0;
    dagrt *rt = make_rt(2, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    long rounds = scaled(200, 20), n = 500;
    long eperm_total = 0;
    for (long r = 0; r < rounds; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        mix_ctx m = {rt, &g, 0, 0};
        for (long i = 0; i < n; i++)
            dagrt_spawn(rt, &g, mix_parent, &m);
        int rc = dagrt_group_wait(rt, &g);
        if (rc)
            FAIL("group_wait: %s", dagrt_strerror(rc));
        if (atomic_load(&m.ran) != 3 * n)
            FAIL("mixed group: %ld tasks ran before the wait returned, want %ld",
                 atomic_load(&m.ran), 3 * n);
        eperm_total += atomic_load(&m.eperm);
    }
    if (eperm_total)
        FAIL("%ld waits on the main thread's stack group from a worker were not DAGRT_EPERM", eperm_total);
    /* A group in heap memory has no owner: another thread may wait on it. */
    dagrt_group *hg = malloc(sizeof *hg);
    dagrt_group_init(hg);
    mix_ctx hm = {rt, hg, 0, 0};
    for (int i = 0; i < 100; i++)
        dagrt_spawn(rt, hg, mix_leaf, &hm);
    pthread_t th;
    void *res;
    pthread_create(&th, NULL, heap_group_waiter, &hm);
    pthread_join(th, &res);
    if ((int)(intptr_t)res != 0)
        FAIL("waiting on a heap group from another thread: %s", dagrt_strerror((int)(intptr_t)res));
    if (atomic_load(&hm.ran) != 100)
        FAIL("heap group: %ld ran, want 100", atomic_load(&hm.ran));
    dagrt_group_wait(rt, hg);
    free(hg);
    dagrt_destroy(rt);
    return v;
}

/* The owner spawns into its own group while its wait is armed: a task B
 * (stolen by the worker while main spins) sleeps so that main's wait has
 * armed, then sends main a main-thread task M; M, running inside main's
 * armed wait, spawns L into the same group. The wait must not return
 * before L has run. */
typedef struct armed_ctx {
    dagrt *rt;
    dagrt_group *g;
    _Atomic int b_started;
    _Atomic int l_ran;
} armed_ctx;

static void armed_l(void *p)
{
    armed_ctx *a = p;
    atomic_store(&a->l_ran, 1);
}

static void armed_m(void *p)
{
    armed_ctx *a = p;
    dagrt_spawn(a->rt, a->g, armed_l, a);
}

static void armed_b(void *p)
{
    armed_ctx *a = p;
    atomic_store(&a->b_started, 1);
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    dagrt_spawn_ex(a->rt, a->g, armed_m, a, DAGRT_SPAWN_MAIN);
}

int scn_group_armed_spawn(void)
{
    int v = 0;
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    long rounds = scaled(20, 3);
    for (long r = 0; r < rounds; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        armed_ctx a = {rt, &g, 0, 0};
        dagrt_spawn(rt, &g, armed_b, &a);
        while (!atomic_load(&a.b_started))
            ;   /* main does not help here: the worker takes B */
        dagrt_group_wait(rt, &g);
        if (!atomic_load(&a.l_ran))
            FAIL("wait returned before a task spawned into the armed group ran (round %ld)", r);
        dagrt_group_wait(rt, &g);   /* let a wrongly-early round finish */
    }
    dagrt_destroy(rt);
    return v;
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, scn_##name, NULL},
#include "core_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};

/* ------------------------------------ task handles: groups off the stack */

/* Middleware's task handle (docs/runtime.md, "Middleware on the same
 * pool"): one group per job, kept off the stack, checked with
 * dagrt_group_done (never waits) by the main thread and by a thread
 * outside the runtime, and finished in another order than spawned. The
 * payload is plain memory: a 1 from dagrt_group_done must publish it
 * (ThreadSanitizer checks the acquire in suite tsan). Also the
 * fire-and-forget of workers = 0: zero workers, no no_workers. */
#define HANDLES 48
typedef struct handle_job {
    dagrt_group g;
    long payload;            /* written by the task, read after done */
    long want;
} handle_job;
static handle_job handle_jobs[HANDLES];

static void handle_task(void *arg)
{
    handle_job *j = arg;
    long x = 0;
    for (long i = 0; i < j->want; i++)
        x += 1;
    j->payload = x;
}

typedef struct handle_poller {
    _Atomic int go;
    _Atomic int seen;        /* handles the outside thread saw done with the right payload */
    _Atomic int wrong;
} handle_poller;

static void *handle_outside(void *arg)
{
    handle_poller *p = arg;
    while (!atomic_load(&p->go))
        sched_yield();
    for (int i = HANDLES - 1; i >= 0; i--) {
        int d;
        while ((d = dagrt_group_done(&handle_jobs[i].g)) == 0)
            sched_yield();
        if (d != 1 || handle_jobs[i].payload != handle_jobs[i].want)
            atomic_fetch_add(&p->wrong, 1);
        else
            atomic_fetch_add(&p->seen, 1);
    }
    return NULL;
}

static int handles_on(int workers)
{
    int v = 0;
    dagrt *rt = make_rt(workers, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    if (dagrt_worker_count(rt) != workers)
        FAIL("workers = %d started %d", workers, dagrt_worker_count(rt));
    for (int round = 0; round < (int)scaled(20, 4); round++) {
        handle_poller p = {0, 0, 0};
        for (int i = 0; i < HANDLES; i++) {
            dagrt_group_init(&handle_jobs[i].g);
            handle_jobs[i].payload = 0;
            handle_jobs[i].want = 1000 + 37 * i + round;
        }
        pthread_t th;
        bool outside = workers > 0;   /* with no worker only waits run tasks: the poller would spin alone */
        if (outside && pthread_create(&th, NULL, handle_outside, &p) != 0) {
            FAIL("pthread_create");
            outside = false;
        }
        for (int i = 0; i < HANDLES; i++)
            if (dagrt_spawn(rt, &handle_jobs[i].g, handle_task, &handle_jobs[i]) != 0)
                FAIL("spawn %d", i);
        atomic_store(&p.go, 1);
        /* Finish in another order than spawned: odd ones first, by done
         * checks; then the even ones by helping waits, from the back. */
        for (int i = 1; i < HANDLES; i += 2) {
            if (workers == 0) {
                /* Only this thread runs tasks, inside waits: a done check
                 * alone would never see one finish. */
                if (dagrt_group_done(&handle_jobs[i].g) == 0 && dagrt_group_wait(rt, &handle_jobs[i].g) != 0)
                    FAIL("wait %d", i);
                continue;
            }
            while (dagrt_group_done(&handle_jobs[i].g) == 0)
                sched_yield();
        }
        for (int i = HANDLES - 2; i >= 0; i -= 2)
            if (dagrt_group_wait(rt, &handle_jobs[i].g) != 0)
                FAIL("wait %d", i);
        for (int i = 0; i < HANDLES; i++) {
            if (dagrt_group_done(&handle_jobs[i].g) != 1)
                FAIL("round %d: handle %d not done after its wait", round, i);
            if (handle_jobs[i].payload != handle_jobs[i].want)
                FAIL("round %d: handle %d payload %ld, want %ld", round, i, handle_jobs[i].payload, handle_jobs[i].want);
        }
        if (outside) {
            pthread_join(th, NULL);
            if (atomic_load(&p.wrong) != 0 || atomic_load(&p.seen) != HANDLES)
                FAIL("round %d: the outside thread saw %d handles done right, %d wrong", round,
                     atomic_load(&p.seen), atomic_load(&p.wrong));
        }
    }
    dagrt_destroy(rt);
    return v;
}

int scn_handles_0_workers(void) { return handles_on(0); }
int scn_handles_2_workers(void) { return handles_on(2); }

/* ------------------------------------------------ spawn, then foreign code */

/* A task that spawns and then runs code of its own that never calls the
 * runtime (what Box2D's solver does between enqueueTask and finishTask):
 * dagrt_publish must make what it spawned stealable, so the other thread
 * runs it while the spawner is still busy. The parent P runs on either
 * thread (X); it keeps the other (Y) busy in a blocker B while it spawns
 * C1 and C2 (nobody idle, so the tail policy would keep C2 private), then
 * spins without runtime calls until C2 has started. Counted by thread: C2
 * must have run on Y, not on X after P gave up (the bound only ends a
 * failing round). */
typedef struct fspin {
    dagrt *rt;
    dagrt_group kids;
    _Atomic int b_started, b_release;
    _Atomic int c2_started;
    _Atomic int p_thread, c2_thread;
    int publish;
    int gave_up;
} fspin;

static void fspin_blocker(void *p)
{
    fspin *f = p;
    atomic_store(&f->b_started, 1);
    while (!atomic_load(&f->b_release))
        sched_yield();
}

static void fspin_c1(void *p)
{
    (void)p;
}

static void fspin_c2(void *p)
{
    fspin *f = p;
    atomic_store(&f->c2_thread, dagrt_thread_index(f->rt));
    atomic_store(&f->c2_started, 1);
}

static double fspin_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fspin_parent(void *p)
{
    fspin *f = p;
    atomic_store(&f->p_thread, dagrt_thread_index(f->rt));
    dagrt_group_init(&f->kids);
    dagrt_spawn(f->rt, &f->kids, fspin_blocker, f);
    if (f->publish)
        dagrt_publish(f->rt);
    double t0 = fspin_now();
    while (!atomic_load(&f->b_started))
        if (fspin_now() - t0 > 10.0) {   /* the blocker was never stolen */
            f->gave_up = 2;
            break;
        }
    dagrt_spawn(f->rt, &f->kids, fspin_c1, f);
    dagrt_spawn(f->rt, &f->kids, fspin_c2, f);
    if (f->publish)
        dagrt_publish(f->rt);
    atomic_store(&f->b_release, 1);
    /* Foreign code: no runtime calls until C2 has started elsewhere. */
    t0 = fspin_now();
    while (!atomic_load(&f->c2_started))
        if (fspin_now() - t0 > 2.0) {
            if (!f->gave_up)
                f->gave_up = 1;
            break;
        }
    dagrt_group_wait(f->rt, &f->kids);
}

/* Launches P from a thread outside the runtime: it goes to the worker's
 * inbox, so P runs on the worker and its children are for the main thread,
 * which waits on P's group. */
typedef struct fspin_launch {
    dagrt *rt;
    dagrt_group *g;
    fspin *f;
    int r;
} fspin_launch;

static void *fspin_launcher(void *p)
{
    fspin_launch *l = p;
    l->r = dagrt_spawn(l->rt, l->g, fspin_parent, l->f);
    return NULL;
}

static int fspin_rounds(int publish, long rounds, long *ran_elsewhere, long *on_main)
{
    int v = 0;
    dagrt *rt = make_rt(1, false, 0, DAGRT_IDLE_PARK);
    if (!rt)
        return 1;
    *ran_elsewhere = 0;
    *on_main = 0;
    for (long r = 0; r < rounds; r++) {
        fspin f;
        memset(&f, 0, sizeof f);
        f.rt = rt;
        f.publish = publish;
        /* Off any thread's stack: an outside thread spawns into it. */
        static dagrt_group g;
        dagrt_group_init(&g);
        if (r & 1) {
            fspin_launch l = {rt, &g, &f, 0};
            pthread_t th;
            pthread_create(&th, NULL, fspin_launcher, &l);
            pthread_join(th, NULL);
            if (l.r)
                FAIL("spawn from an outside thread: %s", dagrt_strerror(l.r));
        } else {
            dagrt_spawn(rt, &g, fspin_parent, &f);
        }
        int e = dagrt_group_wait(rt, &g);
        if (e)
            FAIL("group_wait: %s", dagrt_strerror(e));
        if (!atomic_load(&f.c2_started))
            FAIL("round %ld: C2 never ran", r);
        if (f.gave_up == 2)
            FAIL("round %ld: the blocker was never stolen", r);
        /* Shared: C2 started on the other thread while P still spun. */
        if (!f.gave_up && atomic_load(&f.c2_thread) != atomic_load(&f.p_thread))
            (*ran_elsewhere)++;
        if (atomic_load(&f.p_thread) != 0)
            (*on_main)++;   /* P on the worker: its children ran on the waiting main thread */
    }
    dagrt_destroy(rt);
    return v;
}

int scn_publish_foreign_spin(void)
{
    int v = 0;
    long rounds = scaled(40, 8), elsewhere = 0, p_on_worker = 0;
    v += fspin_rounds(1, rounds, &elsewhere, &p_on_worker);
    if (elsewhere != rounds)
        FAIL("dagrt_publish: C2 ran on the other thread in %ld of %ld rounds", elsewhere, rounds);
    /* Odd rounds start P from an outside thread, so it runs on the worker
     * (the main thread could steal it from the inbox first: counted). */
    if (p_on_worker == 0)
        FAIL("no round ran the parent on the worker (odd rounds start it there)");
    fprintf(stderr, "publish_foreign_spin: %ld/%ld rounds shared, parent on the worker in %ld\n",
            elsewhere, rounds, p_on_worker);
    if (getenv("SCN_PUBLISH_CONTROL")) {   /* the same without dagrt_publish, reported only */
        long e0 = 0, w0 = 0;
        v += fspin_rounds(0, 4, &e0, &w0);
        fprintf(stderr, "publish_foreign_spin: without dagrt_publish %ld/4 rounds shared\n", e0);
    }
    return v;
}
