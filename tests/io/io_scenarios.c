/* io_scenarios.c - scenarios for cancel scopes and the clock, hosted by the
 * one scenario runner (tests/scenario: Criterion, and the plain driver for TSan). Each returns 0 or
 * prints why it failed and returns 1. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "dagrt.h"
#include "scenario.h"

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

/* A request marks the scope and everything under it, never above it. */
static int io_cancel_nesting(void)
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

static int io_cancel_cross_thread(void)
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
static int io_clock(void)
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
static int io_sleep_min(void)
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
                fprintf(stderr, "io_sleep_min: %d workers, %s: res %d after %llu ns\n", workers,
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
        fprintf(stderr, "io_sleep_min: 0 workers, own thread alone: res %d after %llu ns\n",
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
            fprintf(stderr, "io_sleep_min: fiber %d of %d: res %d, %llu ns for %llu\n", i, N,
                    cs[i].res, (unsigned long long)cs[i].ns, (unsigned long long)cs[i].arg_ns);
            bad++;
        }
    dagrt_destroy(rt);
    return bad;
}

/* A timed wait on something never given returns ETIMEDOUT, no earlier than
 * its deadline; one given first returns 0 at once; a deadline already past
 * returns ETIMEDOUT without waiting. Every kind of wait, every caller. */
static int io_timed_wait(void)
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
                    fprintf(stderr, "io_timed_wait: %s by %s, %s: res %d (want %d) after %llu ns\n",
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
        fprintf(stderr, "io_timed_wait: %llu timeouts counted, want %d\n", (unsigned long long)to, 4 * BY_N + 1);
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
static int io_cancel_wakes(void)
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
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);   /* let them park */
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
                fprintf(stderr, "io_cancel_wakes: %s by %s on the child: res %d, want ECANCELED\n",
                        kind_name[k], by_name[bys[b]], onc[k][b].res);
                bad++;
            }
        }
    nanosleep(&ts, NULL);
    for (int k = 0; k < W_NKINDS; k++)
        for (int b = 0; b < BYS; b++)
            if (bys[b] != BY_PLAIN && atomic_load(&onp[k][b].done)) {
                fprintf(stderr, "io_cancel_wakes: the child's cancel ended %s by %s on the parent (res %d)\n",
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
                fprintf(stderr, "io_cancel_wakes: %s by %s on the parent: res %d, want 0\n",
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
            fprintf(stderr, "io_cancel_wakes: sleep by %s on the parent: res %d after its cancel\n",
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
        fprintf(stderr, "io_cancel_wakes: %llu cancellations counted, want 16\n", (unsigned long long)nc);
        bad++;
    }
    dagrt_destroy(rt);
    return bad;
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "io_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
