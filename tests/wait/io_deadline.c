/* io_deadline.c - cancel scopes with a deadline
 * (dagrt_cancel_init_deadline): one call with a timeout for the I/O calls
 * that have no deadline of their own, and for sleeps and sync waits, from
 * every kind of caller, on both reactors (NAME_fb: the fallback); the same
 * on every system (the handle read is io_ops.h's io_pair). */
#define _GNU_SOURCE
#include "io_ops.h"

#include <pthread.h>
#include <string.h>

#define DL_NS 20000000u   /* 20 ms */

typedef struct dl_read {
    dagrt *rt;
    io_pair *p;
    dagrt_cancel *scope;   /* NULL: a scope of its own, DL_NS from its start */
    _Atomic int started;
    _Atomic int64_t result;   /* 1 while in the call */
    uint64_t ns;           /* from the scope's start to the return */
} dl_read;

static void dl_read_run(dl_read *j)
{
    char c;
    dagrt_cancel own;
    uint64_t t0 = dagrt_now_ns();
    dagrt_cancel *sc = j->scope;
    if (!sc) {
        dagrt_cancel_init_deadline(&own, NULL, t0 + DL_NS);
        sc = &own;
    }
    atomic_store(&j->started, 1);
    int64_t r = io_pair_get(j->rt, j->p, &c, sc);
    j->ns = dagrt_now_ns() - t0;
    atomic_store(&j->result, r);
}
static void dl_task(void *arg) { dl_read_run(arg); }
static void *dl_thread(void *arg) { dl_read_run(arg); return NULL; }

static int expect_timeout(const char *who, const dl_read *j)
{
    if (atomic_load(&j->result) == DAGRT_ETIMEDOUT && j->ns >= DL_NS)
        return 0;
    fprintf(stderr, "scope_deadline: %s: %lld after %llu ns\n", who, (long long)atomic_load(&j->result),
            (unsigned long long)j->ns);
    return 1;
}

typedef struct dl_wait {
    dagrt *rt;
    dagrt_cancel *scope;
    int sleep_r, event_r, sem_r;
} dl_wait;

static void dl_waits(void *arg)
{
    dl_wait *w = arg;
    dagrt_event ev;
    dagrt_event_init(&ev, false);
    dagrt_sem sem;
    dagrt_sem_init(&sem, 0);
    w->sleep_r = dagrt_sleep(w->rt, 10000000000ull, w->scope);   /* 10 s, cut short */
    w->event_r = dagrt_event_wait_until(w->rt, &ev, DAGRT_FOREVER, w->scope);
    w->sem_r = dagrt_sem_acquire_until(w->rt, &sem, DAGRT_FOREVER, w->scope);
}

/* A read of a handle that stays empty, under a scope whose deadline is 20 ms
 * away, returns DAGRT_ETIMEDOUT no earlier than the deadline: from the
 * main thread, a fiber, a plain task and a thread outside the runtime (and
 * with no worker at all, where that thread runs the due timer itself);
 * under a child of such a scope too. A sleep of 10 s, an event and a
 * semaphore wait under it end the same way; a request before the deadline
 * is DAGRT_ECANCELED; a deadline already past times out at once without
 * being a request; data there before the deadline is read. */
static int scope_deadline(bool fallback)
{
    int bad = 0;
    io_pair pp, *p = &pp;
    if (io_pair_open(p) != 0)
        FAIL("pair: %s", io_os_why());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");

    dl_read m = { rt, p, NULL, 0, 1, 0 };
    dl_read_run(&m);
    bad += expect_timeout("main thread", &m);

    dl_read f = { rt, p, NULL, 0, 1, 0 }, t = f, o = f;
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_task, &f, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_spawn(rt, &g, dl_task, &t) == 0);
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, dl_thread, &o) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    pthread_join(th, NULL);
    bad += expect_timeout("fiber", &f);
    bad += expect_timeout("plain task", &t);
    bad += expect_timeout("outside thread", &o);

    /* a child scope: the parent's deadline is its own */
    dagrt_cancel parent, child;
    uint64_t t0 = dagrt_now_ns();
    dagrt_cancel_init_deadline(&parent, NULL, t0 + DL_NS);
    dagrt_cancel_init(&child, &parent);
    EXPECT(dagrt_cancel_deadline(&child) == t0 + DL_NS);
    EXPECT(dagrt_cancel_deadline(NULL) == DAGRT_FOREVER);
    dl_read c = { rt, p, &child, 0, 1, 0 };
    dl_read_run(&c);
    bad += expect_timeout("child scope", &c);
    EXPECT(!dagrt_cancel_requested(&child) && !dagrt_cancel_requested(&parent));
    /* past now: at once, and still no request */
    dl_read late = { rt, p, &child, 0, 1, 0 };
    dl_read_run(&late);
    EXPECT(atomic_load(&late.result) == DAGRT_ETIMEDOUT);

    /* a sleep, an event and a semaphore wait, in a fiber */
    dagrt_cancel ws;
    dagrt_cancel_init_deadline(&ws, NULL, dagrt_now_ns() + DL_NS);
    dl_wait w = { rt, &ws, 1, 1, 1 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_waits, &w, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(w.sleep_r == DAGRT_ETIMEDOUT && w.event_r == DAGRT_ETIMEDOUT && w.sem_r == DAGRT_ETIMEDOUT);
    /* the same from the main thread */
    dagrt_cancel_init_deadline(&ws, NULL, dagrt_now_ns() + DL_NS);
    w = (dl_wait){ rt, &ws, 1, 1, 1 };
    dl_waits(&w);
    EXPECT(w.sleep_r == DAGRT_ETIMEDOUT && w.event_r == DAGRT_ETIMEDOUT && w.sem_r == DAGRT_ETIMEDOUT);
    /* a sleep that ends before the scope's deadline: 0 */
    dagrt_cancel_init_deadline(&ws, NULL, dagrt_now_ns() + 10000000000ull);
    EXPECT(dagrt_sleep(rt, 1000000u, &ws) == 0);

    /* a request before the deadline: ECANCELED */
    dagrt_cancel rq;
    dagrt_cancel_init_deadline(&rq, NULL, dagrt_now_ns() + 10000000000ull);
    dl_read r = { rt, p, &rq, 0, 1, 0 };
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, dl_task, &r, DAGRT_SPAWN_FIBER) == 0);
    while (!atomic_load(&r.started))
        io_nap_us(100);
    io_nap_us(10000);
    dagrt_cancel_request(&rq);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    EXPECT(atomic_load(&r.result) == DAGRT_ECANCELED);

    /* data before the deadline: read */
    EXPECT(io_pair_put(p, 'd'));
    dagrt_cancel ok;
    dagrt_cancel_init_deadline(&ok, NULL, dagrt_now_ns() + 10000000000ull);
    dl_read d = { rt, p, &ok, 0, 1, 0 };
    dl_read_run(&d);
    EXPECT(atomic_load(&d.result) == 1);

    dagrt_io_stats st;
    dagrt_get_io_stats(rt, &st);
    EXPECT(st.kind[IO_PAIR_KIND].timeouts == 6);
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);

    /* no worker: a thread outside the runtime, the main thread not in it */
    rt = make_rt(fallback, 0);
    if (!rt)
        FAIL("dagrt_create");
    dl_read z = { rt, p, NULL, 0, 1, 0 };
    EXPECT(pthread_create(&th, NULL, dl_thread, &z) == 0);
    pthread_join(th, NULL);
    bad += expect_timeout("outside thread, no worker", &z);
    dagrt_destroy(rt);
    io_pair_close(p);
    return bad;
}

int io_scope_deadline(void) { return scope_deadline(false); }
int io_scope_deadline_fb(void) { return scope_deadline(true); }
