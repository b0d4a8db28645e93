/* spawn_bodies.c - the bodies of spawn.dag: fan spawns tasks of every kind
 * (the public spawn calls) and waits for them; the rest is a little work. */
#include <string.h>

#include "spawn.h"

static void work(struct spawn_ctx *c, unsigned n)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005u + i;
    /* relaxed: a sink the optimiser cannot drop, nothing is ordered by it */
    atomic_fetch_add_explicit(&c->sink, x, memory_order_relaxed);
}

static void ran(struct spawn_ctx *c)
{
    work(c, 300);
    /* relaxed: counts read after the frame (the run's end orders them) */
    if (dagrt_thread_index(c->rt) < 0)
        atomic_fetch_add_explicit(&c->off_thread, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->ran, 1, memory_order_relaxed);
}

typedef struct small_arg { struct spawn_ctx *c; uint64_t pad; } small_arg;
typedef struct big_arg { struct spawn_ctx *c; unsigned char pad[64]; } big_arg;   /* 72 bytes */

static void plain_task(void *a) { ran(a); }
static void words_task(void *a) { ran((struct spawn_ctx *)((uintptr_t *)a)[0]); }
static void small_task(void *a) { ran(((small_arg *)a)->c); }
static void big_task(void *a) { ran(((big_arg *)a)->c); }
static void batch_task(void *a) { ran(a); }
static void hot_task(void *a) { ran(a); }
static void fiber_task(void *a) { ran(a); }
static void child_task(void *a) { ran(a); }
static void parent_task(void *a)
{
    struct spawn_ctx *c = a;
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn(c->rt, &g, child_task, c) != 0)
        child_task(c);
    ran(c);
    (void)dagrt_group_wait(c->rt, &g);
}

bool spawn_is_ours(dagrt_fn fn)
{
    return fn == plain_task || fn == words_task || fn == small_task || fn == big_task ||
           fn == batch_task || fn == hot_task || fn == fiber_task || fn == child_task ||
           fn == parent_task;
}

bool spawn_is_big(dagrt_fn fn) { return fn == big_task; }

void spawner_prep(struct spawn_ctx *c) { work(c, 200); }

void spawner_fan(struct spawn_ctx *c)
{
    dagrt *rt = c->rt;
    dagrt_group g;
    dagrt_group_init(&g);
    int e = 0;
    for (int i = 0; i < 4; i++) {
        e |= dagrt_spawn(rt, &g, plain_task, c);
        e |= dagrt_spawn_words(rt, &g, words_task, (uintptr_t)c, (uintptr_t)i);
        small_arg s = { c, (uint64_t)i };
        e |= dagrt_spawn_inline(rt, &g, small_task, NULL, &s, sizeof s, 0);
    }
    big_arg b;
    memset(&b, 0, sizeof b);
    b.c = c;
    for (int i = 0; i < 2; i++) {
        e |= dagrt_spawn_inline(rt, &g, big_task, NULL, &b, sizeof b, 0);
        e |= dagrt_spawn_ex(rt, &g, hot_task, c, DAGRT_SPAWN_HOT);
        e |= dagrt_spawn(rt, &g, parent_task, c);
    }
    dagrt_task_desc d[4] = { {batch_task, c}, {batch_task, c}, {batch_task, c}, {batch_task, c} };
    e |= dagrt_spawn_batch(rt, &g, d, 4, 0);
    e |= dagrt_spawn_ex(rt, &g, fiber_task, c, DAGRT_SPAWN_FIBER);
    e |= dagrt_group_wait(rt, &g);
    if (e)
        atomic_fetch_add_explicit(&c->off_thread, 1000000, memory_order_relaxed);   /* relaxed: as ran */
}

size_t spawner_sweep_count(struct spawn_ctx *c) { (void)c; return SPAWN_ITEMS; }
void spawner_sweep(struct spawn_ctx *c, size_t begin, size_t end) { work(c, (unsigned)(end - begin) * 4); }
void spawner_warm(struct spawn_ctx *c) { work(c, 200); }
void spawner_done(struct spawn_ctx *c) { work(c, 200); }
