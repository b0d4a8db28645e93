/* wait_scenarios.c - scenarios for cancel scopes and the clock, hosted by the
 * one scenario runner (tests/scenario: Criterion, and the plain driver for TSan). Each returns 0 or
 * prints why it failed and returns 1. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>   /* Sleep */
#endif

#include "dagrt.h"
#include "scenario.h"

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

/* A request marks the scope and everything under it, never above it. */
static int cancel_nesting(void)
{
    dagrt_cancel root, mid, leaf, other;
    dagrt_cancel_init(&root, NULL);
    dagrt_cancel_init(&mid, &root);
    dagrt_cancel_init(&leaf, &mid);
    dagrt_cancel_init(&other, &root);
    if (dagrt_cancel_requested(&root) || dagrt_cancel_requested(&mid) ||
        dagrt_cancel_requested(&leaf) || dagrt_cancel_requested(&other))
        FAIL("a fresh scope reads as cancelled");
    dagrt_cancel_request(&mid);
    if (!dagrt_cancel_requested(&mid) || !dagrt_cancel_requested(&leaf))
        FAIL("mid's request did not reach mid and its child");
    if (dagrt_cancel_requested(&root) || dagrt_cancel_requested(&other))
        FAIL("a child's request reached its parent or a sibling");
    dagrt_cancel_request(&root);
    if (!dagrt_cancel_requested(&other))
        FAIL("root's request did not reach its other child");
    if (dagrt_cancel_requested(NULL))
        FAIL("NULL (no scope) reads as cancelled");
    dagrt_cancel_request(NULL);   /* ignored, no crash */
    return 0;
}

/* A request made on another thread is seen here, with what the requester
 * wrote before it (TSan checks the ordering). */
static dagrt_cancel xs;
static int payload;

static void *requester(void *arg)
{
    (void)arg;
    payload = 42;
    dagrt_cancel_request(&xs);
    return NULL;
}

static int cancel_cross_thread(void)
{
    dagrt_cancel parent;
    dagrt_cancel_init(&parent, NULL);
    dagrt_cancel_init(&xs, &parent);
    payload = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, requester, NULL) != 0)
        FAIL("pthread_create");
    uint64_t t0 = dagrt_now_ns();
    while (!dagrt_cancel_requested(&xs)) {
        if (dagrt_now_ns() - t0 > UINT64_C(10000000000))
            FAIL("the request was not seen within 10 s");
    }
    int seen = payload;
    pthread_join(t, NULL);
    if (seen != 42)
        FAIL("the request was seen before the write made ahead of it (%d)", seen);
    if (dagrt_cancel_requested(&parent))
        FAIL("the child's request reached the parent");
    return 0;
}

/* The clock is monotonic and runs at nanosecond scale. */
static int timer_clock(void)
{
    uint64_t a = dagrt_now_ns();
#ifdef _WIN32
    Sleep(3);                              /* ms; at least 2 ms */
#else
    struct timespec ts = { 0, 2000000 };   /* 2 ms */
    nanosleep(&ts, NULL);
#endif
    uint64_t b = dagrt_now_ns();
    if (b < a + 2000000)
        FAIL("2 ms of sleep measured %llu ns", (unsigned long long)(b - a));
    if (b - a > UINT64_C(5000000000))
        FAIL("2 ms of sleep measured over 5 s: not nanoseconds");
    return 0;
}

/* ------------------------------------------ timed waits and sleeps */

#define MS UINT64_C(1000000)

/* A pause of the test's own thread (not a runtime wait). */
static void nap_us(unsigned us)
{
#ifdef _WIN32
    Sleep((us + 999) / 1000);
#else
    struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
#endif
}

static dagrt *rt_make(int workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    return dagrt_create(&cfg);
}

/* One waiting call, run by a fiber task, a plain task, the main thread or
 * a thread of its own; `res` and `ns` are what it returned and how long
 * it took. */
typedef struct call {
    dagrt *rt;
    int kind;                 /* which wait (enum below) */
    uint64_t arg_ns;          /* sleep length, or deadline offset from the call */
    dagrt_cancel *scope;
    dagrt_event *ev;
    dagrt_sem *sem;
    dagrt_mutex *mu;
    dagrt_cond *cv;
    _Atomic int started;      /* 1 once the call is about to wait */
    _Atomic int done;
    int res;
    uint64_t ns;
} call;

enum { W_SLEEP, W_EVENT, W_SEM, W_MUTEX, W_COND, W_NKINDS };
static const char *const kind_name[] = { "sleep", "event", "sem", "mutex", "cond" };

static uint64_t deadline_of(uint64_t off)
{
    return off == DAGRT_FOREVER ? DAGRT_FOREVER : dagrt_now_ns() + off;
}

static void call_run(void *arg)
{
    call *c = arg;
    uint64_t t0 = dagrt_now_ns();
    atomic_store(&c->started, 1);
    switch (c->kind) {
    case W_SLEEP: c->res = dagrt_sleep(c->rt, c->arg_ns, c->scope); break;
    case W_EVENT: c->res = dagrt_event_wait_until(c->rt, c->ev, deadline_of(c->arg_ns), c->scope); break;
    case W_SEM:   c->res = dagrt_sem_acquire_until(c->rt, c->sem, deadline_of(c->arg_ns), c->scope); break;
    case W_MUTEX:
        c->res = dagrt_mutex_lock_until(c->rt, c->mu, deadline_of(c->arg_ns), c->scope);
        if (c->res == 0)
            dagrt_mutex_unlock(c->mu);
        break;
    case W_COND: {
        /* Its own mutex: the condition is never signalled unless the test
         * says so. */
        dagrt_mutex m;
        dagrt_mutex_init(&m);
        dagrt_mutex_lock(c->rt, &m);
        c->res = dagrt_cond_wait(c->rt, c->cv, &m, deadline_of(c->arg_ns), c->scope);
        if (dagrt_mutex_unlock(&m) != 0)
            c->res = 1000;   /* cond_wait returned without the mutex */
        break;
    }
    }
    c->ns = dagrt_now_ns() - t0;
    atomic_store(&c->done, 1);
}

static void *call_thread(void *arg)
{
    call_run(arg);
    return NULL;
}

enum { BY_FIBER, BY_PLAIN, BY_MAIN, BY_THREAD, BY_N };
static const char *const by_name[] = { "fiber task", "plain task", "main thread", "own thread" };

/* Runs c by `by` and waits for it. */
static int run_by(dagrt *rt, call *c, int by)
{
    c->rt = rt;
    if (by == BY_MAIN) {
        call_run(c);
        return 0;
    }
    if (by == BY_THREAD) {
        pthread_t t;
        if (pthread_create(&t, NULL, call_thread, c) != 0)
            return -1;
        pthread_join(t, NULL);
        return 0;
    }
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn_ex(rt, &g, call_run, c, by == BY_FIBER ? DAGRT_SPAWN_FIBER : 0) != 0)
        return -1;
    return dagrt_group_wait(rt, &g);
}

/* A sleep of 2 ms returns 0, no earlier than 2 ms, from every kind of
 * caller, with workers and with none (then the waiting caller itself runs
 * the timer). */
static int timer_sleep_min(void)
{
    int bad = 0;
    for (int workers = 0; workers <= 2; workers += 2) {
        dagrt *rt = rt_make(workers);
        if (!rt)
            FAIL("dagrt_create");
        for (int by = 0; by < BY_N; by++) {
            if (workers == 0 && by == BY_THREAD)
                continue;   /* below: a thread outside a runtime with no workers */
            call c = { .kind = W_SLEEP, .arg_ns = 2 * MS };
            if (run_by(rt, &c, by) != 0 || c.res != 0 || c.ns < 2 * MS) {
                fprintf(stderr, "timer_sleep_min: %d workers, %s: res %d after %llu ns\n", workers,
                        by_name[by], c.res, (unsigned long long)c.ns);
                bad++;
            }
        }
        dagrt_destroy(rt);
    }
    /* Zero workers, a sleep on a thread of its own while nobody else waits. */
    dagrt *rt = rt_make(0);
    call c = { .kind = W_SLEEP, .arg_ns = 2 * MS };
    if (!rt || run_by(rt, &c, BY_THREAD) != 0 || c.res != 0 || c.ns < 2 * MS) {
        fprintf(stderr, "timer_sleep_min: 0 workers, own thread alone: res %d after %llu ns\n",
                c.res, (unsigned long long)c.ns);
        bad++;
    }
    dagrt_destroy(rt);
    /* Many fibers sleeping different lengths at once: each no earlier than asked. */
    rt = rt_make(2);
    enum { N = 32 };
    call cs[N];
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < N; i++) {
        cs[i] = (call){ .rt = rt, .kind = W_SLEEP, .arg_ns = (uint64_t)(i % 8 + 1) * MS / 2 };
        dagrt_spawn_ex(rt, &g, call_run, &cs[i], DAGRT_SPAWN_FIBER);
    }
    dagrt_group_wait(rt, &g);
    for (int i = 0; i < N; i++)
        if (cs[i].res != 0 || cs[i].ns < cs[i].arg_ns) {
            fprintf(stderr, "timer_sleep_min: fiber %d of %d: res %d, %llu ns for %llu\n", i, N,
                    cs[i].res, (unsigned long long)cs[i].ns, (unsigned long long)cs[i].arg_ns);
            bad++;
        }
    dagrt_destroy(rt);
    return bad;
}

/* An earlier deadline added while every thread parks (the keeper asleep
 * until an hour from now) wakes one: the short sleep ends in time. With
 * two workers and with none (the main thread, waiting, keeps the timers). */
static int timer_sleep_earlier(void)
{
    int bad = 0;
    for (int workers = 0; workers <= 2; workers += 2) {
        dagrt *rt = rt_make(workers);
        if (!rt)
            FAIL("dagrt_create");
        dagrt_cancel stop;
        dagrt_cancel_init(&stop, NULL);
        call longc = { .rt = rt, .kind = W_SLEEP, .arg_ns = 3600 * UINT64_C(1000000000), .scope = &stop };
        call shortc = { .rt = rt, .kind = W_SLEEP, .arg_ns = 2 * MS };
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn_ex(rt, &g, call_run, &longc, DAGRT_SPAWN_FIBER);
        if (workers > 0) {
            while (!atomic_load(&longc.started))
                ;
            nap_us(20000);   /* every worker parks, one until the hour is up */
        }
        if (workers > 0) {
            /* The main thread's own sleep: nothing is spawned, so no
             * worker is woken for work; only the keeper's wake-up ends it. */
            call_run(&shortc);
        } else {
            /* Zero workers: the main thread runs both fibers while it waits
             * here, and keeps the timers meanwhile. */
            dagrt_spawn_ex(rt, &g, call_run, &shortc, DAGRT_SPAWN_FIBER);
            dagrt_event never;
            dagrt_event_init(&never, false);
            uint64_t t0 = dagrt_now_ns();
            while (!atomic_load(&shortc.done) && dagrt_now_ns() - t0 < UINT64_C(5000000000))
                dagrt_event_wait_until(rt, &never, dagrt_now_ns() + MS, NULL);
        }
        if (!atomic_load(&shortc.done) || shortc.res != 0 || shortc.ns < 2 * MS ||
            shortc.ns > UINT64_C(2000000000)) {
            fprintf(stderr, "timer_sleep_earlier: %d workers: done %d res %d after %llu ns\n", workers,
                    atomic_load(&shortc.done), shortc.res, (unsigned long long)shortc.ns);
            bad++;
        }
        dagrt_cancel_request(&stop);
        dagrt_group_wait(rt, &g);
        if (longc.res != DAGRT_ECANCELED) {
            fprintf(stderr, "timer_sleep_earlier: the hour-long sleep returned %d on its cancel\n", longc.res);
            bad++;
        }
        dagrt_destroy(rt);
    }
    return bad;
}

/* A sleep armed by a worker that stays busy afterwards, while the other
 * worker has parked with no timer queued (no keeper): the adder's wake-up
 * makes the parked worker the keeper, and the sleep ends while the busy
 * task still runs (timer.c, ARMED VERSUS PARKING; model
 * tests/models/timer_park.pml). The busy task spins until the sleep has
 * returned, giving up after 5 s: a deadline slept through shows as that.
 * The main thread waits outside the runtime, so it never keeps the timer. */
typedef struct busy_sleep {
    dagrt *rt;
    dagrt_group *xg;
    _Atomic int slept;     /* the fiber's sleep returned */
    _Atomic int gave_up;   /* the busy task spun 5 s without seeing it */
    int res;
} busy_sleep;

static void busy_spin(void *arg)
{
    busy_sleep *b = arg;
    uint64_t t0 = dagrt_now_ns();
    while (!atomic_load(&b->slept))
        if (dagrt_now_ns() - t0 > UINT64_C(5000000000)) {
            atomic_store(&b->gave_up, 1);
            return;
        }
}

static void busy_sleeper(void *arg)
{
    busy_sleep *b = arg;
    /* Into this worker's own deque: it runs it once the fiber suspends. */
    dagrt_spawn(b->rt, b->xg, busy_spin, b);
    b->res = dagrt_sleep(b->rt, 2 * MS, NULL);
    atomic_store(&b->slept, 1);
}

static int timer_sleep_busy_adder(void)
{
    int bad = 0;
    dagrt *rt = rt_make(2);
    if (!rt)
        FAIL("dagrt_create");
    for (int round = 0; round < 20 && !bad; round++) {
        nap_us(round % 4 == 0 ? 20000 : 2000);   /* both workers park (mostly) */
        dagrt_group g, xg;
        dagrt_group_init(&g);
        dagrt_group_init(&xg);
        busy_sleep b = { .rt = rt, .xg = &xg };
        if (dagrt_spawn_ex(rt, &g, busy_sleeper, &b, DAGRT_SPAWN_FIBER) != 0)
            FAIL("dagrt_spawn_ex");
        uint64_t t0 = dagrt_now_ns();
        while (!atomic_load(&b.slept) && dagrt_now_ns() - t0 < UINT64_C(10000000000))
            nap_us(500);
        dagrt_group_wait(rt, &g);
        dagrt_group_wait(rt, &xg);
        if (!atomic_load(&b.slept) || b.res != 0 || atomic_load(&b.gave_up)) {
            fprintf(stderr, "timer_sleep_busy_adder: round %d: slept %d res %d, the busy task %s\n",
                    round, atomic_load(&b.slept), b.res,
                    atomic_load(&b.gave_up) ? "gave up after 5 s (the deadline was slept through)" : "ended");
            bad++;
        }
    }
    dagrt_destroy(rt);
    return bad;
}

/* A timed wait on something never given returns ETIMEDOUT, no earlier than
 * its deadline; one given first returns 0 at once; a deadline already past
 * returns ETIMEDOUT without waiting. Every kind of wait, every caller. */
static int sync_timed_wait(void)
{
    int bad = 0;
    dagrt *rt = rt_make(2);
    if (!rt)
        FAIL("dagrt_create");
    for (int kind = W_EVENT; kind < W_NKINDS; kind++)
        for (int by = 0; by < BY_N; by++)
            for (int given = 0; given < 2; given++) {
                dagrt_event ev;
                dagrt_sem sem;
                dagrt_mutex mu;
                dagrt_cond cv;
                dagrt_event_init(&ev, given);
                dagrt_sem_init(&sem, given ? 1 : 0);
                dagrt_mutex_init(&mu);
                dagrt_cond_init(&cv);
                if (!given)
                    dagrt_mutex_lock(rt, &mu);   /* held by the test: the wait times out */
                if (kind == W_COND && given)
                    continue;   /* a condition is never "given" ahead: signals are not stored */
                call c = { .kind = kind, .arg_ns = 2 * MS, .ev = &ev, .sem = &sem, .mu = &mu, .cv = &cv };
                if (run_by(rt, &c, by) != 0)
                    FAIL("spawn");
                int want = given ? 0 : DAGRT_ETIMEDOUT;
                if (c.res != want || (!given && c.ns < 2 * MS)) {
                    fprintf(stderr, "sync_timed_wait: %s by %s, %s: res %d (want %d) after %llu ns\n",
                            kind_name[kind], by_name[by], given ? "given first" : "never given",
                            c.res, want, (unsigned long long)c.ns);
                    bad++;
                }
                if (!given)
                    dagrt_mutex_unlock(&mu);
                if (kind == W_SEM && given && dagrt_sem_tryacquire(&sem))
                    FAIL("the semaphore's unit was not taken");
            }
    /* A deadline in the past: ETIMEDOUT at once. */
    dagrt_event ev;
    dagrt_event_init(&ev, false);
    if (dagrt_event_wait_until(rt, &ev, dagrt_now_ns() - 1, NULL) != DAGRT_ETIMEDOUT)
        FAIL("a past deadline did not time out");
    /* A bad scope is refused. */
    dagrt_cancel junk = {{0}};
    if (dagrt_event_wait_until(rt, &ev, DAGRT_FOREVER, &junk) != DAGRT_EINVAL)
        FAIL("a scope never initialised was accepted");
    dagrt_thread_stats st[8];
    int n = dagrt_get_stats(rt, st, 8);
    uint64_t to = 0;
    for (int i = 0; i < n && i < 8; i++)
        to += st[i].wait_timeouts;
    /* 4 kinds x 4 callers that never got what they waited for, plus the past deadline. */
    if (to != 4 * BY_N + 1) {
        fprintf(stderr, "sync_timed_wait: %llu timeouts counted, want %d\n", (unsigned long long)to, 4 * BY_N + 1);
        bad++;
    }
    dagrt_destroy(rt);
    return bad;
}

/* Spawns c as a fiber task (by BY_FIBER / BY_PLAIN) or a thread; returns
 * once it has started its wait (and a little more, so it is parked). */
static int start_by(dagrt *rt, dagrt_group *g, pthread_t *t, call *c, int by)
{
    c->rt = rt;
    int r = by == BY_THREAD ? pthread_create(t, NULL, call_thread, c)
                            : dagrt_spawn_ex(rt, g, call_run, c, by == BY_FIBER ? DAGRT_SPAWN_FIBER : 0);
    if (r != 0)
        return -1;
    while (!atomic_load(&c->started))
        ;
    return 0;
}

/* A scope cancelled with a waiter parked on each kind of wait (fiber
 * tasks, plain tasks, threads of their own) wakes all of them with
 * ECANCELED; a child scope's cancel wakes its own waits and leaves the
 * parent's alone, which still end normally. */
static int cancel_wakes(void)
{
    int bad = 0;
    dagrt *rt = rt_make(4);
    if (!rt)
        FAIL("dagrt_create");
    dagrt_cancel parent, child;
    dagrt_cancel_init(&parent, NULL);
    dagrt_cancel_init(&child, &parent);
    dagrt_event ev;
    dagrt_sem sem;
    dagrt_mutex mu;
    dagrt_cond cv;
    dagrt_event_init(&ev, false);
    dagrt_sem_init(&sem, 0);
    dagrt_mutex_init(&mu);
    dagrt_cond_init(&cv);
    dagrt_mutex_lock(rt, &mu);
    enum { BYS = 3 };   /* fiber, plain, thread */
    const int bys[BYS] = { BY_FIBER, BY_PLAIN, BY_THREAD };
    call onp[W_NKINDS][BYS], onc[W_NKINDS][BYS];
    pthread_t tp[W_NKINDS], tc[W_NKINDS];
    dagrt_group g;
    dagrt_group_init(&g);
    for (int k = 0; k < W_NKINDS; k++)
        for (int b = 0; b < BYS; b++) {
            /* Plain tasks block a worker each: 5 kinds x 2 scopes would need
             * 10; keep them to the child's waits. */
            onp[k][b] = (call){ .kind = k, .arg_ns = DAGRT_FOREVER, .scope = &parent,
                                .ev = &ev, .sem = &sem, .mu = &mu, .cv = &cv };
            onc[k][b] = onp[k][b];
            onc[k][b].scope = &child;
            if (k == W_SLEEP)
                onp[k][b].arg_ns = onc[k][b].arg_ns = 3600 * UINT64_C(1000000000);
            if (bys[b] != BY_PLAIN && start_by(rt, &g, &tp[k], &onp[k][b], bys[b]) != 0)
                FAIL("start");
            if ((bys[b] != BY_PLAIN || k < 3) && start_by(rt, &g, &tc[k], &onc[k][b], bys[b]) != 0)
                FAIL("start");
        }
    nap_us(20000);   /* let them park */
    dagrt_cancel_request(&child);
    uint64_t t0 = dagrt_now_ns();
    for (int k = 0; k < W_NKINDS; k++)
        for (int b = 0; b < BYS; b++) {
            if (bys[b] == BY_PLAIN && k >= 3)
                continue;
            while (!atomic_load(&onc[k][b].done))
                if (dagrt_now_ns() - t0 > UINT64_C(10000000000))
                    FAIL("%s by %s on the child scope was not woken by its cancel", kind_name[k], by_name[bys[b]]);
            if (onc[k][b].res != DAGRT_ECANCELED) {
                fprintf(stderr, "cancel_wakes: %s by %s on the child: res %d, want ECANCELED\n",
                        kind_name[k], by_name[bys[b]], onc[k][b].res);
                bad++;
            }
        }
    nap_us(20000);
    for (int k = 0; k < W_NKINDS; k++)
        for (int b = 0; b < BYS; b++)
            if (bys[b] != BY_PLAIN && atomic_load(&onp[k][b].done)) {
                fprintf(stderr, "cancel_wakes: the child's cancel ended %s by %s on the parent (res %d)\n",
                        kind_name[k], by_name[bys[b]], onp[k][b].res);
                bad++;
            }
    /* The parent's waits still end normally: give each what it waits for. */
    dagrt_event_set(&ev);
    dagrt_sem_release(&sem, 2);
    dagrt_mutex_unlock(&mu);
    dagrt_cond_broadcast(&cv);
    for (int k = W_EVENT; k < W_NKINDS; k++)
        for (int b = 0; b < BYS; b++) {
            if (bys[b] == BY_PLAIN)
                continue;
            while (!atomic_load(&onp[k][b].done))
                if (dagrt_now_ns() - t0 > UINT64_C(10000000000))
                    FAIL("%s by %s on the parent did not end once given", kind_name[k], by_name[bys[b]]);
            if (onp[k][b].res != 0) {
                fprintf(stderr, "cancel_wakes: %s by %s on the parent: res %d, want 0\n",
                        kind_name[k], by_name[bys[b]], onp[k][b].res);
                bad++;
            }
        }
    /* The parent's sleeps end with the parent's cancel. */
    dagrt_cancel_request(&parent);
    dagrt_group_wait(rt, &g);
    for (int k = 0; k < W_NKINDS; k++) {
        pthread_join(tc[k], NULL);
        pthread_join(tp[k], NULL);
    }
    for (int b = 0; b < BYS; b++)
        if (bys[b] != BY_PLAIN && onp[W_SLEEP][b].res != DAGRT_ECANCELED) {
            fprintf(stderr, "cancel_wakes: sleep by %s on the parent: res %d after its cancel\n",
                    by_name[bys[b]], onp[W_SLEEP][b].res);
            bad++;
        }
    /* Waits on a cancelled scope return at once. */
    if (dagrt_sleep(rt, 3600 * UINT64_C(1000000000), &child) != DAGRT_ECANCELED)
        FAIL("a sleep on a cancelled scope did not return ECANCELED");
    dagrt_thread_stats st[8];
    int n = dagrt_get_stats(rt, st, 8);
    uint64_t nc = 0;
    for (int i = 0; i < n && i < 8; i++)
        nc += st[i].wait_cancels;
    /* child: 5 kinds x fiber/thread + 3 plain = 13; parent's sleeps 2; the last one 1 */
    if (nc != 16) {
        fprintf(stderr, "cancel_wakes: %llu cancellations counted, want 16\n", (unsigned long long)nc);
        bad++;
    }
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------- condition variables */

/* A bounded queue over one mutex and two conditions: producers and
 * consumers (fiber tasks and plain tasks mixed) pass every item exactly
 * once; consumers use short deadlines, so timeouts race the signals all
 * the time and a signal lost to a timed-out waiter would hang the run. */
enum { CQ_CAP = 8, CQ_ITEMS = 20000, CQ_PROD = 3, CQ_CONS = 3 };

typedef struct cqueue {
    dagrt *rt;
    dagrt_mutex mu;
    dagrt_cond not_empty, not_full;
    int buf[CQ_CAP];
    int head, count, produced, closed;
    unsigned char seen[CQ_PROD * CQ_ITEMS];
    _Atomic int dup, timeouts, bad;
} cqueue;

static cqueue cq;

static void cq_produce(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < CQ_ITEMS; i++) {
        dagrt_mutex_lock(cq.rt, &cq.mu);
        while (cq.count == CQ_CAP)
            if (dagrt_cond_wait(cq.rt, &cq.not_full, &cq.mu, DAGRT_FOREVER, NULL) != 0)
                atomic_fetch_add(&cq.bad, 1);
        cq.buf[(cq.head + cq.count) % CQ_CAP] = id * CQ_ITEMS + i;
        cq.count++;
        dagrt_cond_signal(&cq.not_empty);
        dagrt_mutex_unlock(&cq.mu);
    }
    dagrt_mutex_lock(cq.rt, &cq.mu);
    if (++cq.produced == CQ_PROD)
        dagrt_cond_broadcast(&cq.not_empty);   /* wake every consumer to see the end */
    dagrt_mutex_unlock(&cq.mu);
}

static void cq_consume(void *arg)
{
    (void)arg;
    for (;;) {
        dagrt_mutex_lock(cq.rt, &cq.mu);
        while (cq.count == 0 && cq.produced < CQ_PROD) {
            int r = dagrt_cond_wait(cq.rt, &cq.not_empty, &cq.mu, dagrt_now_ns() + 20000, NULL);
            if (r == DAGRT_ETIMEDOUT)
                atomic_fetch_add(&cq.timeouts, 1);
            else if (r != 0)
                atomic_fetch_add(&cq.bad, 1);
        }
        if (cq.count == 0) {
            dagrt_mutex_unlock(&cq.mu);
            return;
        }
        int v = cq.buf[cq.head];
        cq.head = (cq.head + 1) % CQ_CAP;
        cq.count--;
        dagrt_cond_signal(&cq.not_full);
        dagrt_mutex_unlock(&cq.mu);
        if (v < 0 || v >= CQ_PROD * CQ_ITEMS || cq.seen[v]++)
            atomic_fetch_add(&cq.dup, 1);
    }
}

static int sync_cond_hammer(void)
{
    int bad = 0;
    dagrt *rt = rt_make(3);
    if (!rt)
        FAIL("dagrt_create");
    memset(&cq, 0, sizeof cq);
    cq.rt = rt;
    dagrt_mutex_init(&cq.mu);
    dagrt_cond_init(&cq.not_empty);
    dagrt_cond_init(&cq.not_full);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < CQ_CONS; i++)
        dagrt_spawn_ex(rt, &g, cq_consume, NULL, i == 0 ? 0 : DAGRT_SPAWN_FIBER);
    for (int i = 0; i < CQ_PROD; i++)
        dagrt_spawn_ex(rt, &g, cq_produce, (void *)(intptr_t)i, i == 0 ? 0 : DAGRT_SPAWN_FIBER);
    dagrt_group_wait(rt, &g);
    int missing = 0;
    for (int v = 0; v < CQ_PROD * CQ_ITEMS; v++)
        missing += cq.seen[v] == 0;
    EXPECT(missing == 0);
    EXPECT(atomic_load(&cq.dup) == 0);
    EXPECT(atomic_load(&cq.bad) == 0);
    EXPECT(cq.count == 0);
    if (getenv("IO_VERBOSE"))
        fprintf(stderr, "sync_cond_hammer: %d consumer timeouts\n", atomic_load(&cq.timeouts));
    if (bad)
        fprintf(stderr, "sync_cond_hammer: %d missing, %d duplicated, %d bad returns\n", missing,
                atomic_load(&cq.dup), atomic_load(&cq.bad));
    dagrt_destroy(rt);
    return bad;
}

/* Ping-pong through one condition: each side signals right after the
 * other has released the mutex inside its wait, the window where a signal
 * is lost if the waiter queues itself too late. A lost one hangs (the
 * driver's watchdog); the deadline turns it into a failure first. */
typedef struct pingpong {
    dagrt *rt;
    dagrt_mutex mu;
    dagrt_cond cv;
    int turn, rounds;
    _Atomic int bad;
} pingpong;

static pingpong pp;

static void pp_side(void *arg)
{
    int me = (int)(intptr_t)arg;
    dagrt_mutex_lock(pp.rt, &pp.mu);
    for (int i = 0; i < pp.rounds; i++) {
        while (pp.turn != me)
            if (dagrt_cond_wait(pp.rt, &pp.cv, &pp.mu, dagrt_now_ns() + UINT64_C(5000000000), NULL) != 0) {
                atomic_fetch_add(&pp.bad, 1);
                pp.turn = me;   /* give up waiting: report, do not hang */
            }
        pp.turn = !me;
        dagrt_cond_signal(&pp.cv);
    }
    dagrt_mutex_unlock(&pp.mu);
}

static void *pp_thread(void *arg)
{
    pp_side(arg);
    return NULL;
}

/* Broadcast wakes every waiter, each with 0 and holding the mutex. */
typedef struct bcast {
    dagrt *rt;
    dagrt_mutex mu;
    dagrt_cond cv;
    int go, waiting, woken;
    _Atomic int bad;
} bcast;

static bcast bc;

static void bc_wait(void *arg)
{
    (void)arg;
    dagrt_mutex_lock(bc.rt, &bc.mu);
    bc.waiting++;
    while (!bc.go)
        if (dagrt_cond_wait(bc.rt, &bc.cv, &bc.mu, DAGRT_FOREVER, NULL) != 0)
            atomic_fetch_add(&bc.bad, 1);
    bc.woken++;
    dagrt_mutex_unlock(&bc.mu);
}

static int sync_cond_signals(void)
{
    int bad = 0;
    dagrt *rt = rt_make(2);
    if (!rt)
        FAIL("dagrt_create");
    /* Fiber against fiber, then fiber against a thread of its own. */
    for (int mode = 0; mode < 2; mode++) {
        memset(&pp, 0, sizeof pp);
        pp.rt = rt;
        pp.rounds = 20000;
        dagrt_mutex_init(&pp.mu);
        dagrt_cond_init(&pp.cv);
        dagrt_group g;
        dagrt_group_init(&g);
        pthread_t t;
        dagrt_spawn_ex(rt, &g, pp_side, (void *)(intptr_t)0, DAGRT_SPAWN_FIBER);
        if (mode == 0)
            dagrt_spawn_ex(rt, &g, pp_side, (void *)(intptr_t)1, DAGRT_SPAWN_FIBER);
        else
            pthread_create(&t, NULL, pp_thread, (void *)(intptr_t)1);
        dagrt_group_wait(rt, &g);
        if (mode == 1)
            pthread_join(t, NULL);
        if (atomic_load(&pp.bad)) {
            fprintf(stderr, "sync_cond_signals: ping-pong (%s): %d waits ended without their signal\n",
                    mode ? "fiber and thread" : "two fibers", atomic_load(&pp.bad));
            bad++;
        }
    }
    /* Broadcast to fibers, plain tasks and the waits of a thread. */
    memset(&bc, 0, sizeof bc);
    bc.rt = rt;
    dagrt_mutex_init(&bc.mu);
    dagrt_cond_init(&bc.cv);
    enum { NB = 16 };
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < NB; i++)
        dagrt_spawn_ex(rt, &g, bc_wait, NULL, i == 0 ? 0 : DAGRT_SPAWN_FIBER);
    for (;;) {
        dagrt_mutex_lock(rt, &bc.mu);
        int w = bc.waiting;
        dagrt_mutex_unlock(&bc.mu);
        if (w == NB)
            break;
        nap_us(100);
    }
    dagrt_mutex_lock(rt, &bc.mu);
    bc.go = 1;
    dagrt_cond_broadcast(&bc.cv);
    dagrt_mutex_unlock(&bc.mu);
    dagrt_group_wait(rt, &g);
    EXPECT(bc.woken == NB);
    EXPECT(atomic_load(&bc.bad) == 0);
    /* Misuse: waiting without holding the mutex. */
    dagrt_mutex m;
    dagrt_mutex_init(&m);
    EXPECT(dagrt_cond_wait(rt, &bc.cv, &m, DAGRT_FOREVER, NULL) == DAGRT_EPERM);
    dagrt_destroy(rt);
    return bad;
}

/* --------------------------------------- timed hand-off under contention */

/* Waiters with short deadlines contend for a mutex and a semaphore; units
 * and the lock are handed over FIFO while deadlines expire. Exclusion
 * holds, every success is counted once, and no permit is lost: afterwards
 * the semaphore holds exactly its units again. */
enum { HO_TASKS = 12, HO_ROUNDS = 3000, HO_PERMITS = 3 };

typedef struct handoff {
    dagrt *rt;
    dagrt_mutex mu;
    dagrt_sem sem;
    long inside_mu, locked, counter;
    _Atomic int inside_sem, max_inside_sem;
    _Atomic long acquired, timeouts, bad;
} handoff;

static handoff ho;

static void ho_task(void *arg)
{
    unsigned x = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (int i = 0; i < HO_ROUNDS; i++) {
        x = x * 1103515245u + 12345u;
        uint64_t d = dagrt_now_ns() + (x >> 16) % 30000;   /* 0 to 30 us */
        int r = dagrt_mutex_lock_until(ho.rt, &ho.mu, d, NULL);
        if (r == 0) {
            if (ho.inside_mu++ != 0)
                atomic_fetch_add(&ho.bad, 1);
            ho.locked++;
            ho.counter++;
            ho.inside_mu--;
            dagrt_mutex_unlock(&ho.mu);
        } else if (r != DAGRT_ETIMEDOUT) {
            atomic_fetch_add(&ho.bad, 1);
        }
        r = dagrt_sem_acquire_until(ho.rt, &ho.sem, d, NULL);
        if (r == 0) {
            int in = atomic_fetch_add(&ho.inside_sem, 1) + 1;
            if (in > HO_PERMITS)
                atomic_fetch_add(&ho.bad, 1);
            atomic_fetch_add(&ho.acquired, 1);
            for (uint64_t t0 = dagrt_now_ns(); dagrt_now_ns() - t0 < 5000;)
                ;   /* hold it a little: the other waiters' deadlines expire meanwhile */
            atomic_fetch_sub(&ho.inside_sem, 1);
            dagrt_sem_release(&ho.sem, 1);
        } else if (r == DAGRT_ETIMEDOUT) {
            atomic_fetch_add(&ho.timeouts, 1);
        } else {
            atomic_fetch_add(&ho.bad, 1);
        }
    }
}

static void *ho_thread(void *arg)
{
    ho_task(arg);
    return NULL;
}

static int sync_timed_handoff(void)
{
    int bad = 0;
    dagrt *rt = rt_make(3);
    if (!rt)
        FAIL("dagrt_create");
    memset(&ho, 0, sizeof ho);
    ho.rt = rt;
    dagrt_mutex_init(&ho.mu);
    dagrt_sem_init(&ho.sem, HO_PERMITS);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < HO_TASKS; i++)
        dagrt_spawn_ex(rt, &g, ho_task, (void *)(uintptr_t)i, i % 4 == 0 ? 0 : DAGRT_SPAWN_FIBER);
    pthread_t t;
    pthread_create(&t, NULL, ho_thread, (void *)(uintptr_t)99);
    dagrt_group_wait(rt, &g);
    pthread_join(t, NULL);
    EXPECT(atomic_load(&ho.bad) == 0);
    EXPECT(ho.counter == ho.locked);
    /* Every permit is back: exactly HO_PERMITS can be taken now. */
    int got = 0;
    while (got <= HO_PERMITS && dagrt_sem_tryacquire(&ho.sem))
        got++;
    EXPECT(got == HO_PERMITS);
    if (getenv("IO_VERBOSE"))
        fprintf(stderr, "sync_timed_handoff: %ld locked, %ld acquired, %ld sem timeouts\n", ho.locked,
                atomic_load(&ho.acquired), atomic_load(&ho.timeouts));
    /* And the mutex is free. */
    EXPECT(dagrt_mutex_trylock(&ho.mu));
    if (bad)
        fprintf(stderr, "sync_timed_handoff: bad %ld, permits back %d of %d\n", atomic_load(&ho.bad), got,
                HO_PERMITS);
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------------ destroy with waits */

/* dagrt_destroy with fibers (and a plain task) parked in sleeps, event,
 * semaphore, mutex and condition waits that nothing will end: their calls
 * return ECANCELED, the tasks finish, destroy returns (LSan in the
 * sanitizer runs checks nothing leaks). */
static call dw[W_NKINDS + 1];
static dagrt_event dw_ev;
static dagrt_sem dw_sem;
static dagrt_mutex dw_mu;
static dagrt_cond dw_cv;

static void dw_holder(void *arg)
{
    dagrt *rt = arg;
    dagrt_mutex_lock(rt, &dw_mu);   /* held, never unlocked: the mutex waiter stays */
}

static int wait_destroy_parked(void)
{
    int bad = 0;
    for (int workers = 0; workers <= 2; workers += 2) {
        dagrt *rt = rt_make(workers);
        if (!rt)
            FAIL("dagrt_create");
        dagrt_event_init(&dw_ev, false);
        dagrt_sem_init(&dw_sem, 0);
        dagrt_mutex_init(&dw_mu);
        dagrt_cond_init(&dw_cv);
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn_ex(rt, &g, dw_holder, rt, 0);
        dagrt_group_wait(rt, &g);
        for (int k = 0; k <= W_NKINDS; k++) {
            dw[k] = (call){ .rt = rt, .kind = k == W_NKINDS ? W_SLEEP : k, .arg_ns = DAGRT_FOREVER,
                            .ev = &dw_ev, .sem = &dw_sem, .mu = &dw_mu, .cv = &dw_cv };
            if (dw[k].kind == W_SLEEP)
                dw[k].arg_ns = 3600 * UINT64_C(1000000000);
            /* The last: a plain-task sleep, with workers to run it. */
            unsigned fl = k == W_NKINDS ? 0 : DAGRT_SPAWN_FIBER;
            if (k == W_NKINDS && workers == 0)
                break;
            dagrt_spawn_ex(rt, NULL, call_run, &dw[k], fl);
        }
        if (workers > 0) {
            nap_us(10000);   /* let them park (with none, destroy runs them) */
        }
        dagrt_destroy(rt);
        for (int k = 0; k <= W_NKINDS; k++) {
            if (k == W_NKINDS && workers == 0)
                break;
            if (!atomic_load(&dw[k].done) || dw[k].res != DAGRT_ECANCELED) {
                fprintf(stderr, "wait_destroy_parked: %d workers: %s (%s): done %d res %d\n", workers,
                        kind_name[dw[k].kind], k == W_NKINDS ? "plain task" : "fiber",
                        atomic_load(&dw[k].done), dw[k].res);
                bad++;
            }
        }
    }
    return bad;
}

/* ------------------------------------------- an event freed at once */

/* The completion pattern: a waiter returns from an event wait (or sees
 * is_set) and frees the event at once, while the task that set it may
 * still be inside dagrt_event_set. Here "freeing" writes a pattern over
 * the event; once the setter's task is over (its group), any byte changed
 * is an access after the waiter was entitled to free it (the set's unlock
 * after a store that readers see: runtime/wait/sync.c, EV_SETTING; the
 * model is tests/models/event_free.pml). Both forms of waiting, on 1 and
 * 2 workers; the storage is freed for real each round (ASan's report). */
#define EF_ROUNDS 20000
#define EF_PATTERN 0xA5

typedef struct ef_slot {
    dagrt_event *ev;
} ef_slot;

static void ef_set(void *arg)
{
    ef_slot *s = arg;
    dagrt_event_set(s->ev);
}

static int sync_event_free(void)
{
    int bad = 0;
    for (int workers = 1; workers <= 2; workers++) {
        dagrt *rt = rt_make(workers);
        if (!rt)
            FAIL("dagrt_create");
        for (int poll = 0; poll <= 1; poll++)
            for (int i = 0; i < EF_ROUNDS / 4; i++) {
                unsigned char *raw = malloc(sizeof(dagrt_event));
                if (!raw)
                    FAIL("out of memory");
                ef_slot slot = { (dagrt_event *)(void *)raw };
                dagrt_event_init(slot.ev, false);
                dagrt_group g;
                dagrt_group_init(&g);
                if (dagrt_spawn(rt, &g, ef_set, &slot) != 0)
                    FAIL("dagrt_spawn");
                if (poll) {
                    while (!dagrt_event_is_set(slot.ev))
                        ;
                } else if (dagrt_event_wait(rt, slot.ev) != 0) {
                    FAIL("dagrt_event_wait");
                }
                memset(raw, EF_PATTERN, sizeof(dagrt_event));   /* "freed" */
                dagrt_group_wait(rt, &g);
                for (size_t k = 0; k < sizeof(dagrt_event); k++)
                    if (raw[k] != EF_PATTERN) {
                        fprintf(stderr, "sync_event_free: %d workers, %s, round %d: byte %zu of the "
                                "event written after its waiter returned\n", workers,
                                poll ? "is_set" : "wait", i, k);
                        bad++;
                        break;
                    }
                free(raw);
            }
        dagrt_destroy(rt);
    }
    return bad;
}

/* The scenarios of the suite's other files (io_ops.c and its system side), declared from the
 * list (extern keeps the linkage of one defined static above). */
#define SCENARIO(group, name, secs, flags) extern int name(void);
#include "wait_list.h"
#undef SCENARIO

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "wait_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
