/* spawn_bodies.c - the bodies of spawn.dag: fan spawns tasks of every kind
 * (the public spawn calls, fiber tasks that wait) and waits for them; the
 * rest is a little work. */
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

/* A waiter's waker: a plain task that a waiting fiber task spawns right
 * before its wait number k (from 0: the yield is wait 0), which waits for
 * the observer's word that the wait suspended (spawn_ctx.h) and then
 * wakes it: k 1 sets the event, k 2 releases the semaphore's unit. */
typedef struct waker_arg { struct spawn_fwait *r; unsigned k; } waker_arg;
static void waker_task(void *a)
{
    waker_arg *w = a;
    struct spawn_fwait *r = w->r;
    uint64_t t0 = dagrt_now_ns();
    /* acquire: pairs with spawn_fwait_note's release (its counts). */
    while (atomic_load_explicit(&r->parked, memory_order_acquire) < w->k + 1) {
        if (dagrt_now_ns() - t0 > SPAWN_WAKER_NS) {
            atomic_fetch_add_explicit(&r->c->missed, 1, memory_order_relaxed);   /* relaxed: as ran */
            break;
        }
        (void)dagrt_sleep(r->c->rt, 20000, NULL);   /* 20 us; helps meanwhile */
    }
    if (w->k == 1)
        dagrt_event_set(&r->ev);
    else
        dagrt_sem_release(&r->sem, 1);
    ran(r->c);
}

void spawn_fwait_note(const dagrt_task_event *e)
{
    struct spawn_fwait *r = spawn_fwait_of(e->fn, e->arg);
    /* release: the waker that reads it sees the slice's end reported. */
    if (r && e->suspended)
        atomic_store_explicit(&r->parked, e->slice + 1, memory_order_release);
}

/* A fiber task that waits SPAWN_FWAITS times: a yield, an event and a
 * semaphore with a deadline (far off: the unit ends it), the last two
 * ended by a waker task each. */
static void fwait(struct spawn_fwait *r)
{
    dagrt *rt = r->c->rt;
    int e = dagrt_fiber_yield(rt);
    r->waits++;
    waker_arg w1 = { r, 1 };
    e |= dagrt_spawn_inline(rt, r->g, waker_task, NULL, &w1, sizeof w1, 0);
    e |= dagrt_event_wait(rt, &r->ev);
    r->waits++;
    waker_arg w2 = { r, 2 };
    e |= dagrt_spawn_inline(rt, r->g, waker_task, NULL, &w2, sizeof w2, 0);
    e |= dagrt_sem_acquire_until(rt, &r->sem, dagrt_now_ns() + 10 * (uint64_t)SPAWN_WAKER_NS, NULL);
    r->waits++;
    if (e)
        atomic_fetch_add_explicit(&r->c->off_thread, 1000000, memory_order_relaxed);   /* relaxed: as ran */
    ran(r->c);
}

typedef struct fwait_arg { struct spawn_fwait *r; } fwait_arg;
static void fwait_task(void *a) { fwait(a); }
static void fwait_inline_task(void *a) { fwait(((fwait_arg *)a)->r); }

struct spawn_fwait *spawn_fwait_of(dagrt_fn fn, void *arg)
{
    if (fn == fwait_task)
        return arg;
    if (fn == fwait_inline_task)
        return ((fwait_arg *)arg)->r;
    return NULL;
}

void spawn_fwait_fns(dagrt_fn out[SPAWN_FWAIT])
{
    out[0] = fwait_task;
    out[1] = fwait_inline_task;
}
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
           fn == parent_task || fn == waker_task || fn == fwait_task || fn == fwait_inline_task;
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
    dagrt_task_desc fd[2] = { {fiber_task, c}, {fiber_task, c} };
    e |= dagrt_spawn_batch(rt, &g, fd, 2, DAGRT_SPAWN_FIBER);
    for (int i = 0; i < SPAWN_FWAIT; i++) {
        struct spawn_fwait *r = &c->fw[i];
        r->c = c;
        r->g = &g;
        dagrt_event_init(&r->ev, false);
        dagrt_sem_init(&r->sem, 0);
        atomic_store_explicit(&r->parked, 0, memory_order_relaxed);   /* relaxed: the spawn below publishes it */
        r->waits = r->next = r->susp = r->finals = 0;
        r->open_on = -1;
    }
    e |= dagrt_spawn_ex(rt, &g, fwait_task, &c->fw[0], DAGRT_SPAWN_FIBER);
    fwait_arg fa = { &c->fw[1] };
    e |= dagrt_spawn_inline(rt, &g, fwait_inline_task, NULL, &fa, sizeof fa, DAGRT_SPAWN_FIBER);
    e |= dagrt_group_wait(rt, &g);
    if (e)
        atomic_fetch_add_explicit(&c->off_thread, 1000000, memory_order_relaxed);   /* relaxed: as ran */
}

size_t spawner_sweep_count(struct spawn_ctx *c) { (void)c; return SPAWN_ITEMS; }
void spawner_sweep(struct spawn_ctx *c, size_t begin, size_t end) { work(c, (unsigned)(end - begin) * 4); }
void spawner_warm(struct spawn_ctx *c) { work(c, 200); }
void spawner_done(struct spawn_ctx *c) { work(c, 200); }
