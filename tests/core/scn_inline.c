/* scn_inline.c - dagrt_spawn_inline and dagrt_spawn_words
 * (runtime/core/work.c): a task whose argument lives in its own descriptor. The bytes arrive whole and
 * aligned on every path a task takes (a worker's deque, the main queue,
 * the hot lane, a fiber, a thread outside the runtime's shared pool),
 * place runs once per spawn before the task, and the misuse cases are
 * refused before anything is called. See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dagrt.h"
#include "os/os.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

/* The argument: every byte of the storage used, a tag and the sum of the
 * rest to check it arrived whole. */
typedef struct inl_arg {
    atomic_long *ran;
    atomic_long *bad;
    uint32_t tag;
    unsigned char fill[DAGRT_SPAWN_INLINE_SIZE - 2 * sizeof(void *) - 2 * sizeof(uint32_t)];
    uint32_t sum;
} inl_arg;
_Static_assert(sizeof(inl_arg) == DAGRT_SPAWN_INLINE_SIZE, "inl_arg fills the storage");

static uint32_t fill_sum(const inl_arg *a)
{
    uint32_t s = a->tag;
    for (size_t i = 0; i < sizeof a->fill; i++)
        s = s * 31u + a->fill[i];
    return s;
}

static void inl_make(inl_arg *a, atomic_long *ran, atomic_long *bad, uint32_t tag)
{
    a->ran = ran;
    a->bad = bad;
    a->tag = tag;
    for (size_t i = 0; i < sizeof a->fill; i++)
        a->fill[i] = (unsigned char)(tag * 7u + i);
    a->sum = fill_sum(a);
}

static void inl_run(void *p)
{
    inl_arg *a = p;
    /* relaxed: counts read after the group wait, which orders them. */
    if (((uintptr_t)p % DAGRT_SPAWN_INLINE_ALIGN) != 0 || a->sum != fill_sum(a))
        atomic_fetch_add_explicit(a->bad, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(a->ran, 1, memory_order_relaxed);
}

static atomic_long placed;
static atomic_int empty_ran;

static void inl_run_empty_check(void *p)
{
    if (p && ((uintptr_t)p % DAGRT_SPAWN_INLINE_ALIGN) == 0)
        atomic_fetch_add_explicit(&empty_ran, 1, memory_order_relaxed);   /* relaxed: read after the wait */
}

/* place: a copy plus a mark, so the task can tell place ran before it. */
static void inl_place(void *dst, void *src)
{
    if (!src) {
        atomic_fetch_sub_explicit(&placed, 1, memory_order_relaxed);   /* relaxed: a count */
        return;
    }
    memcpy(dst, src, sizeof(inl_arg));
    ((inl_arg *)dst)->tag |= 0x80000000u;
    ((inl_arg *)dst)->sum = fill_sum(dst);
    atomic_fetch_add_explicit(&placed, 1, memory_order_relaxed);   /* relaxed: a count */
}

static void inl_run_placed(void *p)
{
    inl_arg *a = p;
    if (!(a->tag & 0x80000000u))
        atomic_fetch_add_explicit(a->bad, 1, memory_order_relaxed);   /* relaxed: see inl_run */
    inl_run(p);
}

/* A fiber task that spawns inline tasks from a fiber and waits on them
 * (suspending), then checks its own storage survived the suspension. */
typedef struct inl_fib {
    dagrt *rt;
    atomic_long *ran;
    atomic_long *bad;
    uint32_t tag;
} inl_fib;

static void inl_fiber(void *p)
{
    inl_fib f = *(inl_fib *)p;
    dagrt_group g;
    dagrt_group_init(&g);
    for (uint32_t i = 0; i < 16; i++) {
        inl_arg a;
        inl_make(&a, f.ran, f.bad, 1000 + i);
        if (dagrt_spawn_inline(f.rt, &g, inl_run, NULL, &a, sizeof a, 0) != 0)
            atomic_fetch_add_explicit(f.bad, 1, memory_order_relaxed);   /* relaxed: see inl_run */
    }
    (void)dagrt_group_wait(f.rt, &g);
    if (memcmp(p, &f, sizeof f) != 0)
        atomic_fetch_add_explicit(f.bad, 1, memory_order_relaxed);   /* relaxed: see inl_run */
    atomic_fetch_add_explicit(f.ran, 1, memory_order_relaxed);       /* relaxed: see inl_run */
}

typedef struct inl_outside {
    dagrt *rt;
    dagrt_group *g;
    atomic_long *ran, *bad;
    long n;
    long failed;
} inl_outside;

static void *inl_outside_main(void *p)
{
    inl_outside *o = p;
    for (long i = 0; i < o->n; i++) {
        inl_arg a;
        inl_make(&a, o->ran, o->bad, (uint32_t)(5000 + i));
        if (dagrt_spawn_inline(o->rt, NULL, inl_run, NULL, &a, sizeof a, 0) != 0)
            o->failed++;
    }
    return NULL;
}

/* dagrt_spawn_words: the two words arrive, at the storage's alignment. */
static atomic_long words_ran, words_bad;

static void words_run(void *p)
{
    const uintptr_t *w = p;
    /* relaxed: counts read after the group wait, which orders them. */
    if (((uintptr_t)p % DAGRT_SPAWN_INLINE_ALIGN) != 0 || w[1] != ~w[0])
        atomic_fetch_add_explicit(&words_bad, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&words_ran, 1, memory_order_relaxed);
}

typedef struct words_spawner {
    dagrt *rt;
    dagrt_group *g;   /* NULL: fire and forget */
    long n;
    long failed;
} words_spawner;

/* Spawns n words tasks (from a task, a fiber, or a thread outside). */
static void words_spawn_n(void *p)
{
    words_spawner *s = p;
    for (long i = 0; i < s->n; i++) {
        uintptr_t w0 = (uintptr_t)i * 2654435761u + 1;
        if (dagrt_spawn_words(s->rt, s->g, words_run, w0, ~w0) != 0)
            s->failed++;
    }
}

static void *words_outside_main(void *p)
{
    words_spawn_n(p);
    return NULL;
}

/* From the main thread, a task, a fiber and a thread outside the runtime;
 * the misuse cases refused. */
static int words_cases(dagrt *rt)
{
    int v = 0;
    atomic_store(&words_ran, 0);
    atomic_store(&words_bad, 0);
    long n = scaled(4000, 400);
    dagrt_group g;
    dagrt_group_init(&g);
    words_spawner from_main = {rt, &g, n, 0}, from_task = {rt, &g, n, 0}, from_fiber = {rt, &g, n, 0};
    words_spawn_n(&from_main);
    if (dagrt_spawn(rt, &g, words_spawn_n, &from_task) != 0 ||
        dagrt_spawn_ex(rt, &g, words_spawn_n, &from_fiber, DAGRT_SPAWN_FIBER) != 0)
        FAIL("words: the spawners' spawn failed");
    if (dagrt_group_wait(rt, &g) != 0)
        FAIL("words: group wait failed");
    if (from_main.failed + from_task.failed + from_fiber.failed)
        FAIL("words: %ld spawns failed", from_main.failed + from_task.failed + from_fiber.failed);
    words_spawner outside = {rt, NULL, n, 0};
    pthread_t th;
    pthread_create(&th, NULL, words_outside_main, &outside);
    pthread_join(th, NULL);
    long want = 4 * n - outside.failed;
    for (int spin = 0; atomic_load(&words_ran) < want && spin < 100000; spin++)
        dagrt_sleep(rt, 100000, NULL);
    if (outside.failed)
        FAIL("words: %ld spawns from outside failed", outside.failed);
    if (atomic_load(&words_ran) != want)
        FAIL("words: %ld of %ld tasks ran", atomic_load(&words_ran), want);
    if (atomic_load(&words_bad))
        FAIL("words: %ld tasks saw their words misaligned or wrong", atomic_load(&words_bad));
    long ran0 = atomic_load(&words_ran);
    dagrt_group bogus;
    memset(&bogus, 0, sizeof bogus);
    if (dagrt_spawn_words(rt, &bogus, words_run, 1, ~(uintptr_t)1) != DAGRT_EINVAL)
        FAIL("words: an uninitialised group accepted");
    if (dagrt_spawn_words(NULL, &g, words_run, 1, ~(uintptr_t)1) != DAGRT_EINVAL)
        FAIL("words: NULL rt accepted");
    if (dagrt_spawn_words(rt, &g, NULL, 1, ~(uintptr_t)1) != DAGRT_EINVAL)
        FAIL("words: NULL fn accepted");
    if (dagrt_group_wait(rt, &g) != 0 || dagrt_group_done(&g) != 1 || atomic_load(&words_ran) != ran0)
        FAIL("words: a refused spawn ran or stayed counted");
    return v;
}

/* Out of task memory (the system layer's seam, rt_os_alloc_refuse):
 * dagrt_spawn_words answers DAGRT_ENOMEM, the refused task neither runs
 * nor stays counted, the ones spawned before it run once each, and the
 * spawn works again once memory does. No workers: nothing frees a
 * descriptor until the main thread waits. */
static int words_oom(void)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.no_workers = true;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    atomic_store(&words_ran, 0);
    atomic_store(&words_bad, 0);
    dagrt_group g;
    dagrt_group_init(&g);
    long held = 0;
    int rc = 0;
    rt_os_alloc_refuse(true);
    while (held < 100000 && (rc = dagrt_spawn_words(rt, &g, words_run, (uintptr_t)held, ~(uintptr_t)held)) == 0)
        held++;
    rt_os_alloc_refuse(false);
    if (rc != DAGRT_ENOMEM)
        FAIL("words oom: %d after %ld spawns (want DAGRT_ENOMEM)", rc, held);
    if (dagrt_group_wait(rt, &g) != 0 || dagrt_group_done(&g) != 1)
        FAIL("words oom: group wait failed");
    if (atomic_load(&words_ran) != held || atomic_load(&words_bad))
        FAIL("words oom: %ld of %ld ran, %ld bad", atomic_load(&words_ran), held, atomic_load(&words_bad));
    if (dagrt_spawn_words(rt, &g, words_run, 7, ~(uintptr_t)7) != 0)
        FAIL("words oom: refused once memory came back");
    dagrt_group_wait(rt, &g);
    if (atomic_load(&words_ran) != held + 1)
        FAIL("words oom: the spawn after it did not run");
    dagrt_destroy(rt);
    return v;
}

int scn_spawn_inline(void)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    atomic_long ran = 0, bad = 0;
    atomic_store(&placed, 0);
    atomic_store(&empty_ran, 0);
    long n = scaled(20000, 2000), want = 0;
    dagrt_group g;
    dagrt_group_init(&g);

    /* Plain, hot, main-thread and fiber tasks, copied and placed. */
    static const unsigned flags[] = {0, DAGRT_SPAWN_HOT, DAGRT_SPAWN_MAIN, DAGRT_SPAWN_FIBER,
                                     DAGRT_SPAWN_FIBER | DAGRT_SPAWN_LARGE_STACK};
    for (long i = 0; i < n; i++) {
        inl_arg a;
        inl_make(&a, &ran, &bad, (uint32_t)i);
        unsigned fl = flags[i % 5];
        int r = (i & 1) ? dagrt_spawn_inline(rt, &g, inl_run_placed, inl_place, &a, sizeof a, fl)
                        : dagrt_spawn_inline(rt, &g, inl_run, NULL, &a, sizeof a, fl);
        if (r != 0)
            FAIL("spawn_inline %ld (flags %u): %s", i, fl, dagrt_strerror(r));
        else
            want++;
        memset(&a, 0xee, sizeof a);   /* the task has its own copy */
    }
    /* Fibers that spawn inline tasks and suspend in between. */
    inl_fib fibs[8];
    for (int i = 0; i < 8; i++) {
        fibs[i] = (inl_fib){rt, &ran, &bad, (uint32_t)i};
        if (dagrt_spawn_inline(rt, &g, inl_fiber, NULL, &fibs[i], sizeof fibs[i], DAGRT_SPAWN_FIBER) == 0)
            want += 17;
        else
            FAIL("fiber spawn_inline failed");
    }
    /* A thread outside the runtime: the shared pool's descriptors. */
    inl_outside o = {rt, NULL, &ran, &bad, scaled(5000, 500), 0};
    pthread_t th;
    pthread_create(&th, NULL, inl_outside_main, &o);
    pthread_join(th, NULL);
    if (o.failed)
        FAIL("%ld spawns from outside failed", o.failed);
    want += o.n - o.failed;

    if (dagrt_group_wait(rt, &g) != 0)
        FAIL("group wait failed");
    /* The outside thread's tasks are in no group: wait for the count. */
    for (int spin = 0; atomic_load(&ran) < want && spin < 100000; spin++)
        dagrt_sleep(rt, 100000, NULL);
    if (atomic_load(&ran) != want)
        FAIL("%ld of %ld inline tasks ran", atomic_load(&ran), want);
    if (atomic_load(&bad))
        FAIL("%ld inline tasks saw their storage misaligned or torn", atomic_load(&bad));
    if (atomic_load(&placed) != n / 2)
        FAIL("place ran %ld times for %ld placed spawns", atomic_load(&placed), n / 2);

    /* Misuse: refused, nothing called. */
    inl_arg a;
    inl_make(&a, &ran, &bad, 1);
    long placed0 = atomic_load(&placed);
    if (dagrt_spawn_inline(rt, &g, inl_run, NULL, &a, DAGRT_SPAWN_INLINE_SIZE + 1, 0) != DAGRT_EINVAL)
        FAIL("n over DAGRT_SPAWN_INLINE_SIZE accepted");
    if (dagrt_spawn_inline(rt, &g, inl_run, NULL, NULL, 8, 0) != DAGRT_EINVAL)
        FAIL("NULL src without place accepted");
    if (dagrt_spawn_inline(rt, &g, NULL, NULL, &a, sizeof a, 0) != DAGRT_EINVAL)
        FAIL("NULL fn accepted");
    if (dagrt_spawn_inline(NULL, &g, inl_run, NULL, &a, sizeof a, 0) != DAGRT_EINVAL)
        FAIL("NULL rt accepted");
    if (dagrt_spawn_inline(rt, &g, inl_run_placed, inl_place, &a, sizeof a,
                           DAGRT_SPAWN_MAIN | DAGRT_SPAWN_FIBER) != DAGRT_EINVAL)
        FAIL("MAIN|FIBER accepted");
    if (dagrt_spawn_inline(rt, &g, inl_run_placed, inl_place, &a, sizeof a, DAGRT_SPAWN_LARGE_STACK) != DAGRT_EINVAL)
        FAIL("LARGE_STACK without FIBER accepted");
    dagrt_group bogus;
    memset(&bogus, 0, sizeof bogus);
    if (dagrt_spawn_inline(rt, &bogus, inl_run_placed, inl_place, &a, sizeof a, 0) != DAGRT_EINVAL)
        FAIL("an uninitialised group accepted");
    if (atomic_load(&placed) != placed0)
        FAIL("place ran for a refused spawn");
    /* n == 0: no bytes, fn gets the (empty) storage. */
    if (dagrt_spawn_inline(rt, &g, inl_run_empty_check, NULL, NULL, 0, 0) != 0)
        FAIL("n == 0 refused");
    dagrt_group_wait(rt, &g);
    if (atomic_load(&empty_ran) != 1)
        FAIL("the n == 0 task did not run");
    if (dagrt_group_done(&g) != 1)
        FAIL("group not done");
    v += words_cases(rt);
    dagrt_destroy(rt);
    v += words_oom();
    return v;
}
