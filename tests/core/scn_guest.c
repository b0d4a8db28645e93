/* scn_guest.c - guest threads (runtime/core/guest.c): threads the runtime does
 * not own that attach, help in their waits and leave. See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dagrt.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

static dagrt *guest_rt(int workers, int guests)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.guest_threads = guests;
    cfg.seed = 42;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "dagrt_create_ex: %s\n", dagrt_strerror(err));
    return rt;
}

/* A task that notes which thread ran it. */
typedef struct where {
    dagrt *rt;
    int guest_lo, guest_hi;         /* the guest slots' indices [lo, hi) */
    _Atomic long ran, on_guest, bad_index;
} where;

static void note_where(void *p)
{
    where *w = p;
    int i = dagrt_thread_index(w->rt);
    if (i < 0 || i >= dagrt_thread_count(w->rt))
        atomic_fetch_add(&w->bad_index, 1);
    if (i >= w->guest_lo && i < w->guest_hi)
        atomic_fetch_add(&w->on_guest, 1);
    for (volatile int k = 0; k < 200; k++) {
    }
    atomic_fetch_add(&w->ran, 1);
}

/* ------------------------------------------------ an attached guest helps */

typedef struct attach_arg {
    where *w;
    long n;
    int index, after, detach_rc, wait_rc;
} attach_arg;

static void *attached_waiter(void *p)
{
    attach_arg *a = p;
    dagrt *rt = a->w->rt;
    a->index = dagrt_thread_attach(rt);
    dagrt_group g;
    dagrt_group_init(&g);   /* on an attached guest's stack: the owner fast path */
    for (long i = 0; i < a->n; i++)
        dagrt_spawn(rt, &g, note_where, a->w);
    a->wait_rc = dagrt_group_wait(rt, &g);
    a->detach_rc = dagrt_thread_detach(rt);
    a->after = dagrt_thread_index(rt);
    return NULL;
}

int scn_guest_attach_helps(void)
{
    int v = 0;
    dagrt *rt = guest_rt(1, 2);
    if (!rt)
        return 1;
    where w = {rt, 2, 4, 0, 0, 0};
    /* Its own deque is where its wait looks first: it runs some itself.
     * A guest preempted right after its spawns may find the worker took
     * them all (1 run in 200 here beside two busy loops): up to 5
     * attempts, each checked in full, until one ran some on the guest. */
    for (int attempt = 0; attempt < 5 && v == 0 && atomic_load(&w.on_guest) == 0; attempt++) {
        atomic_store(&w.ran, 0);
        attach_arg a = {&w, scaled(2000, 200), -100, -100, -100, -100};
        pthread_t th;
        pthread_create(&th, NULL, attached_waiter, &a);
        pthread_join(th, NULL);
        if (a.index < 2 || a.index > 3)
            FAIL("attach returned %d, want a guest slot (2 or 3)", a.index);
        if (a.wait_rc != 0 || a.detach_rc != 0)
            FAIL("wait %d, detach %d", a.wait_rc, a.detach_rc);
        if (a.after != -1)
            FAIL("after detach the thread index is %d, want -1", a.after);
        if (atomic_load(&w.ran) != a.n || atomic_load(&w.bad_index))
            FAIL("%ld of %ld tasks ran, %ld with a bad index", atomic_load(&w.ran), a.n,
                 atomic_load(&w.bad_index));
    }
    if (v == 0 && atomic_load(&w.on_guest) == 0)
        FAIL("the attached guest ran none of the tasks it waited for, in 5 attempts");
    dagrt_destroy(rt);
    return v;
}

/* --------------------- a wait from a thread never attached helps as well */

typedef struct busy {
    _Atomic int started, release;
} busy;

static void busy_task(void *p)
{
    busy *b = p;
    atomic_store(&b->started, 1);
    while (!atomic_load(&b->release))
        sched_yield();
}

typedef struct scoped_arg {
    where *w;
    busy *b;
    long n;
    int wait_rc, before, after;
} scoped_arg;

static void *scoped_waiter(void *p)
{
    scoped_arg *a = p;
    dagrt *rt = a->w->rt;
    a->before = dagrt_thread_index(rt);
    dagrt_group *g = malloc(sizeof *g);
    dagrt_group_init(g);
    for (long i = 0; i < a->n; i++)
        dagrt_spawn(rt, g, note_where, a->w);   /* into the worker's inbox */
    a->wait_rc = dagrt_group_wait(rt, g);
    a->after = dagrt_thread_index(rt);
    atomic_store(&a->b->release, 1);
    free(g);
    return NULL;
}

int scn_guest_wait_helps(void)
{
    int v = 0;
    dagrt *rt = guest_rt(1, 1);
    if (!rt)
        return 1;
    /* The one worker is kept busy until the wait returns: every task of
     * the group can only run on the waiting thread, in its guest slot. */
    busy b = {0, 0};
    dagrt_spawn(rt, NULL, busy_task, &b);
    while (!atomic_load(&b.started))
        sched_yield();
    where w = {rt, 2, 3, 0, 0, 0};
    scoped_arg a = {&w, &b, scaled(500, 50), -100, -100, -100};
    pthread_t th;
    pthread_create(&th, NULL, scoped_waiter, &a);
    pthread_join(th, NULL);
    if (a.wait_rc != 0)
        FAIL("wait returned %d", a.wait_rc);
    if (a.before != -1 || a.after != -1)
        FAIL("thread index before/after the wait %d/%d, want -1/-1", a.before, a.after);
    if (atomic_load(&w.ran) != a.n || atomic_load(&w.on_guest) != a.n)
        FAIL("%ld of %ld tasks ran, %ld in the waiter's guest slot (want all)",
             atomic_load(&w.ran), a.n, atomic_load(&w.on_guest));
    dagrt_destroy(rt);
    return v;
}

/* -------------------------------- many guests attach and leave at once */

typedef struct churn {
    dagrt *rt;
    where *w;
    long rounds;
    _Atomic long busy_refusals, bad;
} churn;

static void spawn_two(void *p)
{
    where *w = p;
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(w->rt, &g, note_where, w);
    dagrt_spawn(w->rt, &g, note_where, w);
    dagrt_group_wait(w->rt, &g);
    note_where(w);
}

static void *churner(void *p)
{
    churn *c = p;
    for (long r = 0; r < c->rounds; r++) {
        bool scoped = (r % 3) == 2;   /* every third round: a wait without attaching */
        if (!scoped) {
            int i = dagrt_thread_attach(c->rt);
            if (i == DAGRT_EBUSY) {
                atomic_fetch_add(&c->busy_refusals, 1);
                scoped = true;
            } else if (i < c->w->guest_lo || i >= c->w->guest_hi) {
                atomic_fetch_add(&c->bad, 1);
                continue;
            }
        }
        dagrt_group *g = malloc(sizeof *g);
        dagrt_group_init(g);
        for (int k = 0; k < 8; k++)
            dagrt_spawn(c->rt, g, (k & 1) ? spawn_two : note_where, c->w);
        if (dagrt_group_wait(c->rt, g) != 0)
            atomic_fetch_add(&c->bad, 1);
        free(g);
        if (!scoped && dagrt_thread_detach(c->rt) != 0)
            atomic_fetch_add(&c->bad, 1);
        if (dagrt_thread_index(c->rt) != -1)
            atomic_fetch_add(&c->bad, 1);
    }
    return NULL;
}

int scn_guest_churn(void)
{
    int v = 0;
    dagrt *rt = guest_rt(2, 2);
    if (!rt)
        return 1;
    where w = {rt, 3, 5, 0, 0, 0};
    enum { T = 5 };
    churn c = {rt, &w, scaled(400, 40), 0, 0};
    pthread_t th[T];
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, churner, &c);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    /* Per round 4 plain tasks and 4 that run 3 each. */
    long want = T * c.rounds * (4 + 4 * 3);
    if (atomic_load(&c.bad))
        FAIL("%ld bad attach/wait/detach results", atomic_load(&c.bad));
    if (atomic_load(&w.ran) != want || atomic_load(&w.bad_index))
        FAIL("%ld of %ld tasks ran, %ld with a bad index", atomic_load(&w.ran), want,
             atomic_load(&w.bad_index));
    if (atomic_load(&w.on_guest) == 0)
        FAIL("no task ran in a guest slot");
    dagrt_destroy(rt);
    return v;
}

/* ------------------------------------------ leaving while work is queued */

typedef struct leaver {
    where *w;
    dagrt_group *g;
    long n;
    int index, detach_rc;
} leaver;

static void *spawn_and_leave(void *p)
{
    leaver *l = p;
    dagrt *rt = l->w->rt;
    l->index = dagrt_thread_attach(rt);
    for (long i = 0; i < l->n; i++)
        dagrt_spawn(rt, l->g, note_where, l->w);
    l->detach_rc = dagrt_thread_detach(rt);   /* nothing run yet */
    return NULL;
}

int scn_guest_leave_queued(void)
{
    int v = 0;
    /* No workers: only the main thread's wait can run what the guest
     * left behind, by stealing it from the slot's deque. */
    dagrt *rt = guest_rt(0, 1);
    if (!rt)
        return 1;
    where w = {rt, 1, 2, 0, 0, 0};
    dagrt_group *g = malloc(sizeof *g);
    for (int round = 0; round < 3; round++) {
        dagrt_group_init(g);
        leaver l = {&w, g, scaled(300, 30), -100, -100};
        pthread_t th;
        pthread_create(&th, NULL, spawn_and_leave, &l);
        pthread_join(th, NULL);
        if (l.index != 1 || l.detach_rc != 0)
            FAIL("round %d: attach %d (want slot 1), detach %d", round, l.index, l.detach_rc);
        long before = atomic_load(&w.ran);
        if (dagrt_group_done(g) == 1 && l.n > 0)
            FAIL("round %d: the group is done before anyone ran its tasks", round);
        if (dagrt_group_wait(rt, g) != 0)
            FAIL("round %d: the main thread's wait failed", round);
        if (atomic_load(&w.ran) - before != l.n)
            FAIL("round %d: %ld of %ld tasks left behind ran", round,
                 atomic_load(&w.ran) - before, l.n);
    }
    free(g);
    dagrt_destroy(rt);
    return v;
}

/* ------------------------------------------- a guest's name when observed */

/* An attached guest is "dagrt-guest-k" (its slot after the workers) to an
 * observer's thread_start and in the trace file, not "dagrt-worker-N". */
typedef struct names_arg {
    dagrt *rt;
    int index;
    char start_name[32];
    int start_thread, stop_thread;
} names_arg;

static void on_start(void *user, int thread, const char *name)
{
    names_arg *n = user;
    if (thread > 1) {   /* the guest's (main 0, worker 1 report too) */
        n->start_thread = thread;
        snprintf(n->start_name, sizeof n->start_name, "%s", name);
    }
}

static void on_stop(void *user, int thread)
{
    names_arg *n = user;
    if (thread > 1)
        n->stop_thread = thread;
}

static void nothing(void *p) { (void)p; }

static void *named_guest(void *p)
{
    names_arg *n = p;
    n->index = dagrt_thread_attach(n->rt);
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(n->rt, &g, nothing, NULL);
    dagrt_group_wait(n->rt, &g);
    dagrt_thread_detach(n->rt);
    return NULL;
}

int scn_guest_names(void)
{
    int v = 0;
    dagrt *rt = guest_rt(1, 1);
    if (!rt)
        return 1;
    names_arg n = {rt, -100, "", -100, -100};
    dagrt_observer obs = {0};
    obs.thread_start = on_start;
    obs.thread_stop = on_stop;
    if (dagrt_set_observer(rt, &obs, &n) != 0 || dagrt_trace_start(rt, NULL) != 0)
        FAIL("observer / trace start refused");
    pthread_t th;
    pthread_create(&th, NULL, named_guest, &n);
    pthread_join(th, NULL);
    dagrt_trace_stop(rt);
    if (n.index != 2 || n.start_thread != 2 || n.stop_thread != 2 || strcmp(n.start_name, "dagrt-guest-1") != 0)
        FAIL("guest slot %d: thread_start(%d, \"%s\"), thread_stop(%d); want 2, \"dagrt-guest-1\", 2",
             n.index, n.start_thread, n.start_name, n.stop_thread);
    char path[64];
    snprintf(path, sizeof path, "/tmp/dagrt_guest_names_%ld.json", (long)getpid());
    if (dagrt_trace_write(rt, path) != 0) {
        FAIL("trace write to %s failed", path);
    } else {
        FILE *f = fopen(path, "r");
        static char buf[1 << 16];
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        buf[len] = 0;
        if (f)
            fclose(f);
        remove(path);
        if (!strstr(buf, "\"dagrt-guest-1\"") || !strstr(buf, "\"dagrt-worker-1\"") ||
            strstr(buf, "\"dagrt-worker-2\""))
            FAIL("the trace's thread names: want dagrt-main, dagrt-worker-1, dagrt-guest-1 (no dagrt-worker-2)");
    }
    dagrt_set_observer(rt, NULL, NULL);
    dagrt_destroy(rt);
    return v;
}

/* ---------------------------------------------------------- misuse */

typedef struct misuse_arg {
    dagrt *rt, *none;
    int no_slot, not_attached, first, nested, inner_detach, outer_detach, in_task;
} misuse_arg;

static void detach_in_task(void *p)
{
    misuse_arg *m = p;
    m->in_task = dagrt_thread_detach(m->rt);
}

static void *misuser(void *p)
{
    misuse_arg *m = p;
    m->no_slot = dagrt_thread_attach(m->none);   /* guest_threads = 0 */
    m->not_attached = dagrt_thread_detach(m->rt);
    m->first = dagrt_thread_attach(m->rt);
    m->nested = dagrt_thread_attach(m->rt);
    m->inner_detach = dagrt_thread_detach(m->rt);
    /* The last detach from inside a task the guest runs: refused. With no
     * workers the guest's own wait runs the task. */
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(m->rt, &g, detach_in_task, m);
    dagrt_group_wait(m->rt, &g);
    m->outer_detach = dagrt_thread_detach(m->rt);
    return NULL;
}

/* dagrt_destroy while another thread is attached: refused (nothing
 * freed, the runtime still runs tasks); after the detach it destroys. */
typedef struct held_arg {
    dagrt *rt;
    _Atomic int stage;   /* 1: attached; 2: main is done with its refused destroy */
    int attach, detach;
} held_arg;

static void *held_guest(void *p)
{
    held_arg *h = p;
    h->attach = dagrt_thread_attach(h->rt);
    atomic_store(&h->stage, 1);
    while (atomic_load(&h->stage) != 2)
        sched_yield();
    h->detach = dagrt_thread_detach(h->rt);
    return NULL;
}

static void count_one(void *p)
{
    atomic_fetch_add((_Atomic int *)p, 1);
}

static int destroy_with_guest(void)
{
    int v = 0;
    dagrt *rt = guest_rt(1, 1);
    if (!rt)
        return 1;
    held_arg h = {rt, 0, -100, -100};
    pthread_t th;
    pthread_create(&th, NULL, held_guest, &h);
    while (atomic_load(&h.stage) != 1)
        sched_yield();
    dagrt_destroy(rt);   /* refused: prints an error, frees nothing */
    /* Still a runtime: its worker runs a task, a second thread can not
     * take the held slot, and the guest's detach works. */
    _Atomic int ran = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 10; i++)
        dagrt_spawn(rt, &g, count_one, &ran);
    int wr = dagrt_group_wait(rt, &g);
    if (wr != 0 || atomic_load(&ran) != 10)
        FAIL("after the refused destroy: wait %d, %d of 10 tasks ran", wr, atomic_load(&ran));
    if (dagrt_worker_count(rt) != 1)
        FAIL("after the refused destroy: worker count %d, want 1", dagrt_worker_count(rt));
    atomic_store(&h.stage, 2);
    pthread_join(th, NULL);
    if (h.attach != 2 || h.detach != 0)
        FAIL("guest: attach %d (want slot 2), detach %d", h.attach, h.detach);
    dagrt_destroy(rt);   /* now it does */
    return v;
}

int scn_guest_misuse(void)
{
    int v = 0;
    /* rt last: the thread that creates a runtime is its main thread, the
     * latest one's (dagrt_create). */
    dagrt *none = guest_rt(0, 0);
    dagrt *rt = guest_rt(0, 1);
    if (!rt || !none)
        return 1;
    if (dagrt_thread_attach(rt) != 0 || dagrt_thread_detach(rt) != 0)
        FAIL("attach/detach on the main thread should do nothing (0, 0)");
    if (dagrt_thread_attach(NULL) != DAGRT_EINVAL || dagrt_thread_detach(NULL) != DAGRT_EINVAL)
        FAIL("attach/detach of NULL should be DAGRT_EINVAL");
    misuse_arg m = {rt, none, 0, 0, 0, 0, 0, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, misuser, &m);
    pthread_join(th, NULL);
    if (m.no_slot != DAGRT_EBUSY)
        FAIL("attach with no guest slots: %d, want DAGRT_EBUSY", m.no_slot);
    if (m.not_attached != DAGRT_EPERM)
        FAIL("detach before attach: %d, want DAGRT_EPERM", m.not_attached);
    if (m.first != 1 || m.nested != 1 || m.inner_detach != 0)
        FAIL("attach %d, nested attach %d (want 1, 1), inner detach %d", m.first, m.nested,
             m.inner_detach);
    if (m.in_task != DAGRT_ENESTED)
        FAIL("the last detach inside a task: %d, want DAGRT_ENESTED", m.in_task);
    if (m.outer_detach != 0)
        FAIL("the last detach: %d", m.outer_detach);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.guest_threads = -1;
    int err = 0;
    if (dagrt_create_ex(&cfg, &err) != NULL || err != DAGRT_EINVAL)
        FAIL("guest_threads = -1 should be DAGRT_EINVAL");
    dagrt_destroy(rt);
    dagrt_destroy(none);
    v += destroy_with_guest();
    return v;
}
