/*
 * sync_scenarios.c - fiber tasks and waits on a real runtime.
 */
#define _DEFAULT_SOURCE
#include "sync_scenarios.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dagrt.h"
#include "fiber/fiber.h"
#include "fiber_scenarios.h"

static dagrt *make_rt(int workers, int pool)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    if (workers == 0)
        cfg.no_workers = true;
    else
        cfg.workers = workers;
    cfg.fiber_pool_size = pool;
    cfg.seed = 12345;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "dagrt_create_ex: %s\n", dagrt_strerror(err));
    return rt;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

static void shuffle(int *a, int n, uint64_t *s)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_next(s) % (uint64_t)(i + 1));
        int t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

/* ------------------------------------------------ events, random orders */

enum { EV_N = 64 };

struct ev_round {
    dagrt *rt;
    dagrt_event ev[EV_N];
    long payload[EV_N];      /* written by the setter before set */
    long round;
    int order[EV_N];         /* setter order */
    atomic_int bad;
    atomic_int woke;
    atomic_int next_set;
};

struct ev_arg { struct ev_round *r; int i; };

static void ev_waiter(void *p)
{
    struct ev_arg *a = p;
    struct ev_round *r = a->r;
    if (dagrt_event_wait(r->rt, &r->ev[a->i]) != 0) atomic_fetch_add(&r->bad, 1);
    /* The setter's write before set must be visible after the wait. */
    if (r->payload[a->i] != r->round || !dagrt_event_is_set(&r->ev[a->i]))
        atomic_fetch_add(&r->bad, 1);
    atomic_fetch_add(&r->woke, 1);
}

static void ev_setter(void *p)
{
    struct ev_round *r = p;
    int k = atomic_fetch_add(&r->next_set, 1);
    int i = r->order[k];
    r->payload[i] = r->round;
    dagrt_event_set(&r->ev[i]);
}

int ss_events_random(int workers, long rounds)
{
    dagrt *rt = make_rt(workers, 0);
    if (!rt) return 1;
    struct ev_round *r = calloc(1, sizeof *r);
    struct ev_arg args[EV_N];
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int bad = 0;
    r->rt = rt;
    for (long round = 1; round <= rounds && !bad; round++) {
        r->round = round;
        atomic_store(&r->woke, 0);
        atomic_store(&r->next_set, 0);
        for (int i = 0; i < EV_N; i++) {
            dagrt_event_init(&r->ev[i], false);
            r->order[i] = i;
            args[i].r = r;
            args[i].i = i;
        }
        shuffle(r->order, EV_N, &seed);
        /* Spawn waiters and setters interleaved in a random order, some
         * setters first: sets race suspends, and some waits find the event
         * already set (the sticky path). */
        int kinds[2 * EV_N];
        for (int i = 0; i < 2 * EV_N; i++) kinds[i] = i;
        shuffle(kinds, 2 * EV_N, &seed);
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < 2 * EV_N; i++) {
            int rc = kinds[i] < EV_N
                ? dagrt_spawn_ex(rt, &g, ev_waiter, &args[kinds[i]], DAGRT_SPAWN_FIBER)
                : dagrt_spawn(rt, &g, ev_setter, r);
            if (rc != 0) bad++;
        }
        if (dagrt_group_wait(rt, &g) != 0) bad++;
        if (atomic_load(&r->woke) != EV_N) bad++;
        bad += atomic_load(&r->bad);
    }
    free(r);
    dagrt_destroy(rt);
    return bad;
}

/* ---------------------------------------------- events from outside */

struct ext {
    dagrt *rt;
    dagrt_event ev[8];
    atomic_int armed;
    atomic_int done;
    atomic_int bad;
    pthread_t main_tid;
};

static void ext_waiter(void *p)
{
    struct ext *x = p;
    for (int i = 0; i < 8; i++) {
        atomic_fetch_add(&x->armed, 1);
        if (dagrt_event_wait(x->rt, &x->ev[i]) != 0) atomic_fetch_add(&x->bad, 1);
    }
    atomic_fetch_add(&x->done, 1);
}

static void *ext_thread(void *p)
{
    struct ext *x = p;
    for (int i = 0; i < 8; i++) {
        /* Set event i once at least one waiter may be on it; not required
         * for correctness, it only makes real suspends likely. */
        while (atomic_load(&x->armed) < i + 1) sched_yield();
        dagrt_event_set(&x->ev[i]);
    }
    return NULL;
}

int ss_external_setter(long rounds)
{
    dagrt *rt = make_rt(2, 0);
    if (!rt) return 1;
    int bad = 0;
    for (long r = 0; r < rounds; r++) {
        struct ext x;
        memset(&x, 0, sizeof x);
        x.rt = rt;
        for (int i = 0; i < 8; i++) dagrt_event_init(&x.ev[i], false);
        dagrt_group g;
        dagrt_group_init(&g);
        for (int k = 0; k < 4; k++)
            if (dagrt_spawn_ex(rt, &g, ext_waiter, &x, DAGRT_SPAWN_FIBER)) bad++;
        pthread_t th;
        pthread_create(&th, NULL, ext_thread, &x);
        /* The external thread waits too (it cannot help: it blocks). */
        if (dagrt_group_wait(rt, &g) != 0) bad++;
        pthread_join(th, NULL);
        if (atomic_load(&x.done) != 4) bad++;
        bad += atomic_load(&x.bad);
    }
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------------------------ migration */

/* glibc declares pthread_self() __attribute__((const)), so the compiler
 * reuses one call's result across a wait in the same function, and a
 * migrated fiber would see its old thread (this test caught exactly that).
 * Calling through a volatile pointer forces a fresh call each time. */
static pthread_t (*volatile thread_self)(void) = pthread_self;

struct mig {
    dagrt *rt;
    dagrt_group *g;          /* the round's group: the fiber and its spinner */
    dagrt_event ev;
    pthread_t main_tid;
    pthread_t before, after, spinner;
    atomic_int resumed;
    atomic_int spinner_in;
    int bad;
};

static void mig_spinner(void *p)
{
    struct mig *m = p;
    m->spinner = thread_self();
    atomic_store(&m->spinner_in, 1);
    dagrt_event_set(&m->ev);
    /* Hold this thread until the fiber has resumed elsewhere. Bounded so a
     * bug shows as a failure, not a hang (10 s). */
    for (long i = 0; !atomic_load(&m->resumed); i++) {
        if (i > 10L * 1000 * 1000) { m->bad++; break; }
        usleep(1);
    }
}

static void mig_fiber(void *p)
{
    struct mig *m = p;
    m->before = thread_self();
    if (dagrt_spawn(m->rt, m->g, mig_spinner, m)) m->bad++;
    if (dagrt_event_wait(m->rt, &m->ev)) m->bad++;
    /* Fresh look-ups after the wait: the thread may differ now. */
    m->after = thread_self();
    bool on_main = dagrt_on_main_thread(m->rt);
    if (on_main != (bool)pthread_equal(m->after, m->main_tid)) { m->bad++; fprintf(stderr, "migration: on_main %d wrong\n", on_main); }
    if (!dagrt_in_fiber(m->rt)) { m->bad++; fprintf(stderr, "migration: not in fiber after wait\n"); }
    if (atomic_load(&m->spinner_in) && pthread_equal(m->after, m->spinner)) { m->bad++; fprintf(stderr, "migration: resumed on the busy thread\n"); }
    atomic_store(&m->resumed, 1);
}

int ss_migration(long rounds)
{
    dagrt *rt = make_rt(2, 0);
    if (!rt) return 1;
    int bad = 0;
    long moved = 0, r = 0;
    /* Whether a round migrates depends on scheduling (a thief may run the
     * spinner before the fiber waits); on a loaded machine or under qemu
     * 30 rounds once saw none. So rounds go on, up to 50x, until one has. */
    for (; r < rounds || (moved == 0 && r < rounds * 50); r++) {
        struct mig m;
        memset(&m, 0, sizeof m);
        m.rt = rt;
        m.main_tid = pthread_self();
        dagrt_event_init(&m.ev, false);
        dagrt_group g;
        dagrt_group_init(&g);
        m.g = &g;
        if (dagrt_spawn_ex(rt, &g, mig_fiber, &m, DAGRT_SPAWN_FIBER)) bad++;
        if (dagrt_group_wait(rt, &g)) bad++;
        /* The spinner may have run before the fiber waited (then no
         * suspend); when it ran during the wait, the fiber resumed on
         * another thread than the one the spinner held. */
        bad += m.bad;
        if (!pthread_equal(m.before, m.after)) moved++;
    }
    dagrt_destroy(rt);
    if (getenv("DAGC_TEST_VERBOSE"))
        fprintf(stderr, "migration: %ld of %ld fibers resumed on another thread\n", moved, r);
    if (rounds >= 20 && moved == 0) {
        fprintf(stderr, "migration: no fiber ever resumed on another thread in %ld rounds\n", r);
        bad++;
    }
    return bad;
}

/* ----------------------------------------------------- pool exhaustion */

struct px {
    dagrt *rt;
    dagrt_event go;
    atomic_int inside;       /* fiber tasks started and not finished */
    atomic_int max_inside;
    atomic_int ran;
};

static void px_task(void *p)
{
    struct px *x = p;
    int n = atomic_fetch_add(&x->inside, 1) + 1;
    int m = atomic_load(&x->max_inside);
    while (n > m && !atomic_compare_exchange_weak(&x->max_inside, &m, n)) {}
    dagrt_event_wait(x->rt, &x->go);
    atomic_fetch_sub(&x->inside, 1);
    atomic_fetch_add(&x->ran, 1);
}

static int count_lines(FILE *f, const char *needle)
{
    char line[512];
    int n = 0;
    rewind(f);
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    return n;
}

int ss_pool_exhaustion(void)
{
    enum { POOL = 4, TASKS = 64 };
    int bad = 0;
    FILE *tmp = tmpfile();
    if (!tmp) return 1;
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);

    dagrt *rt = make_rt(2, POOL);
    if (!rt) { dup2(saved, 2); return 1; }
    struct px x;
    memset(&x, 0, sizeof x);
    x.rt = rt;
    dagrt_event_init(&x.go, false);
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < TASKS; i++)
        if (dagrt_spawn_ex(rt, &g, px_task, &x, DAGRT_SPAWN_FIBER)) bad++;
    /* Wait (bounded, 20 s) until a task found the pool exhausted: POOL
     * fibers are then suspended on `go`, which nothing has set yet. */
    for (long i = 0; rt_fiber_pending_total(rt) == 0; i++) {
        if (i > 20L * 1000 * 1000) { bad++; break; }
        usleep(1);
    }
    if (atomic_load(&x.inside) > POOL) bad++;
    dagrt_event_set(&x.go);
    if (dagrt_group_wait(rt, &g)) bad++;
    if (atomic_load(&x.ran) != TASKS) bad++;
    if (atomic_load(&x.max_inside) > POOL) bad++;
    /* A second exhaustion warns no more. */
    dagrt_event_reset(&x.go);
    unsigned long before = rt_fiber_pending_total(rt);
    for (int i = 0; i < TASKS; i++)
        if (dagrt_spawn_ex(rt, &g, px_task, &x, DAGRT_SPAWN_FIBER)) bad++;
    for (long i = 0; rt_fiber_pending_total(rt) == before; i++) {
        if (i > 20L * 1000 * 1000) { bad++; break; }
        usleep(1);
    }
    dagrt_event_set(&x.go);
    if (dagrt_group_wait(rt, &g)) bad++;
    if (atomic_load(&x.ran) != 2 * TASKS) bad++;
    dagrt_destroy(rt);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    int warnings = count_lines(tmp, "fiber pool exhausted");
    fclose(tmp);
    if (warnings != 1) {
        fprintf(stderr, "pool exhaustion: %d warnings, want 1\n", warnings);
        bad++;
    }
    if (atomic_load(&x.max_inside) > POOL) {
        fprintf(stderr, "pool exhaustion: %d fiber tasks at once, pool %d\n",
                atomic_load(&x.max_inside), POOL);
    }
    return bad;
}

/* ---------------------------------------------------------------- mutex */

struct mx {
    dagrt *rt;
    dagrt_mutex mu;
    long counter;            /* protected by mu */
    atomic_int inside;
    atomic_int bad;
    long per_task;
};

static void mx_body(struct mx *x, bool fiber)
{
    for (long i = 0; i < x->per_task; i++) {
        if (dagrt_mutex_lock(x->rt, &x->mu)) atomic_fetch_add(&x->bad, 1);
        if (atomic_fetch_add(&x->inside, 1) != 0) atomic_fetch_add(&x->bad, 1);
        long v = x->counter;
        if (fiber && (i & 3) == 0)
            dagrt_fiber_yield(x->rt);      /* suspended while holding it */
        x->counter = v + 1;
        atomic_fetch_sub(&x->inside, 1);
        if (dagrt_mutex_unlock(&x->mu)) atomic_fetch_add(&x->bad, 1);
    }
}
static void mx_fiber(void *p) { mx_body(p, true); }
static void mx_plain(void *p) { mx_body(p, false); }

int ss_mutex(int workers, long rounds)
{
    dagrt *rt = make_rt(workers, 0);
    if (!rt) return 1;
    struct mx x;
    memset(&x, 0, sizeof x);
    x.rt = rt;
    x.per_task = rounds;
    dagrt_mutex_init(&x.mu);
    int bad = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 16; i++)
        /* Two plain lockers (they block their thread): fewer than the
         * three task threads, so a thread stays free to resume the fiber
         * holding the lock (docs/runtime.md). */
        if (dagrt_spawn_ex(rt, &g, (i == 5 || i == 11) ? mx_plain : mx_fiber, &x,
                           (i == 5 || i == 11) ? 0 : DAGRT_SPAWN_FIBER)) bad++;
    if (dagrt_group_wait(rt, &g)) bad++;
    if (x.counter != 16 * rounds) {
        fprintf(stderr, "mutex: counter %ld, want %ld\n", x.counter, 16 * rounds);
        bad++;
    }
    if (dagrt_mutex_trylock(&x.mu) != true) bad++;
    if (dagrt_mutex_trylock(&x.mu) != false) bad++;
    if (dagrt_mutex_unlock(&x.mu) != 0) bad++;
    if (dagrt_mutex_unlock(&x.mu) != DAGRT_EPERM) bad++;   /* misuse: not locked */
    bad += atomic_load(&x.bad);
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------------------------ semaphore */

enum { SEM_K = 3 };
struct sm {
    dagrt *rt;
    dagrt_sem sem;
    atomic_int inside;
    atomic_int max_inside;
    atomic_int bad;
    long per_task;
};

static void sm_task(void *p)
{
    struct sm *x = p;
    for (long i = 0; i < x->per_task; i++) {
        if (dagrt_sem_acquire(x->rt, &x->sem)) atomic_fetch_add(&x->bad, 1);
        int n = atomic_fetch_add(&x->inside, 1) + 1;
        if (n > SEM_K) atomic_fetch_add(&x->bad, 1);
        int m = atomic_load(&x->max_inside);
        while (n > m && !atomic_compare_exchange_weak(&x->max_inside, &m, n)) {}
        if (dagrt_in_fiber(x->rt)) dagrt_fiber_yield(x->rt);
        atomic_fetch_sub(&x->inside, 1);
        dagrt_sem_release(&x->sem, 1);
    }
}

int ss_sem(int workers, long rounds)
{
    dagrt *rt = make_rt(workers, 0);
    if (!rt) return 1;
    struct sm x;
    memset(&x, 0, sizeof x);
    x.rt = rt;
    x.per_task = rounds;
    dagrt_sem_init(&x.sem, SEM_K);
    int bad = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 12; i++)
        if (dagrt_spawn_ex(rt, &g, sm_task, &x, (i == 3 || i == 7) ? 0 : DAGRT_SPAWN_FIBER)) bad++;
    if (dagrt_group_wait(rt, &g)) bad++;
    /* All units back: exactly K can be taken now. */
    for (int i = 0; i < SEM_K; i++) if (!dagrt_sem_tryacquire(&x.sem)) bad++;
    if (dagrt_sem_tryacquire(&x.sem)) bad++;
    dagrt_sem_release(&x.sem, SEM_K);
    bad += atomic_load(&x.bad);
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------------------ group wait in a fiber */

struct gw { dagrt *rt; atomic_long sum; atomic_int bad; };

static void gw_leaf(void *p)
{
    struct gw *x = p;
    atomic_fetch_add(&x->sum, 1);
}

static void gw_fiber(void *p)
{
    struct gw *x = p;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 16; i++)
        if (dagrt_spawn(x->rt, &g, gw_leaf, x)) atomic_fetch_add(&x->bad, 1);
    if (dagrt_group_wait(x->rt, &g)) atomic_fetch_add(&x->bad, 1);
    /* Every child counted in g has run: the wait returned only after. */
    atomic_fetch_add(&x->sum, 1000);
}

int ss_group_wait_in_fiber(long rounds)
{
    dagrt *rt = make_rt(2, 0);
    if (!rt) return 1;
    int bad = 0;
    for (long r = 0; r < rounds; r++) {
        struct gw x;
        memset(&x, 0, sizeof x);
        x.rt = rt;
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < 8; i++)
            if (dagrt_spawn_ex(rt, &g, gw_fiber, &x, DAGRT_SPAWN_FIBER)) bad++;
        if (dagrt_group_wait(rt, &g)) bad++;
        if (atomic_load(&x.sum) != 8 * 1016) bad++;
        bad += atomic_load(&x.bad);
    }
    dagrt_destroy(rt);
    return bad;
}

/* --------------------------------------------------------------- misuse */

struct mu { dagrt *rt; int plain_rc, fiber_rc; bool plain_in, fiber_in; };
static void mu_plain(void *p)
{
    struct mu *m = p;
    m->plain_in = dagrt_in_fiber(m->rt);
    m->plain_rc = dagrt_fiber_yield(m->rt);
}
static void mu_fiber(void *p)
{
    struct mu *m = p;
    m->fiber_in = dagrt_in_fiber(m->rt);
    m->fiber_rc = dagrt_fiber_yield(m->rt);
}
static void mu_nop(void *p) { (void)p; }

int ss_misuse(void)
{
    dagrt *rt = make_rt(1, 0);
    if (!rt) return 1;
    int bad = 0;
    struct mu m = { rt, 1, 1, true, false };
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn(rt, &g, mu_plain, &m)) bad++;
    if (dagrt_spawn_ex(rt, &g, mu_fiber, &m, DAGRT_SPAWN_FIBER)) bad++;
    if (dagrt_group_wait(rt, &g)) bad++;
    if (m.plain_rc != DAGRT_ENOTFIBER || m.plain_in) bad++;   /* suspending a plain task */
    if (m.fiber_rc != 0 || !m.fiber_in) bad++;
    if (dagrt_fiber_yield(rt) != DAGRT_ENOTFIBER) bad++;       /* the main thread */
    if (dagrt_fiber_yield(NULL) != DAGRT_EINVAL) bad++;
    if (dagrt_spawn_ex(rt, NULL, mu_nop, NULL, DAGRT_SPAWN_LARGE_STACK) != DAGRT_EINVAL) bad++;
    if (dagrt_spawn_ex(rt, NULL, mu_nop, NULL, DAGRT_SPAWN_FIBER | DAGRT_SPAWN_MAIN) != DAGRT_EINVAL) bad++;
    dagrt_event e;
    memset(&e, 0, sizeof e);                                    /* never initialised */
    if (dagrt_event_wait(rt, &e) != DAGRT_EINVAL) bad++;
    dagrt_event_init(&e, true);
    if (dagrt_event_wait(NULL, &e) != DAGRT_EINVAL) bad++;
    if (dagrt_event_wait(rt, &e) != 0) bad++;                   /* sticky: returns at once */
    dagrt_mutex mx;
    memset(&mx, 0, sizeof mx);
    if (dagrt_mutex_lock(rt, &mx) != DAGRT_EINVAL) bad++;
    dagrt_sem s;
    memset(&s, 0, sizeof s);
    if (dagrt_sem_acquire(rt, &s) != DAGRT_EINVAL) bad++;
    dagrt_destroy(rt);
    return bad;
}

/* ------------------------------------- zero workers: the main thread helps */

struct zw { dagrt *rt; dagrt_event a, b; int order[4]; atomic_int n; atomic_int bad; };
static void zw_main_task(void *p)          /* runs on the main thread */
{
    struct zw *z = p;
    if (!dagrt_on_main_thread(z->rt)) atomic_fetch_add(&z->bad, 1);
    /* Waits for something only a fiber task (spawned later) finishes. */
    if (dagrt_event_wait(z->rt, &z->a)) atomic_fetch_add(&z->bad, 1);
    z->order[atomic_fetch_add(&z->n, 1)] = 3;
}
static void zw_fiber(void *p)
{
    struct zw *z = p;
    z->order[atomic_fetch_add(&z->n, 1)] = 1;
    if (dagrt_event_wait(z->rt, &z->b)) atomic_fetch_add(&z->bad, 1);   /* suspends */
    z->order[atomic_fetch_add(&z->n, 1)] = 2;
    dagrt_event_set(&z->a);
}
static void zw_plain(void *p)
{
    struct zw *z = p;
    z->order[atomic_fetch_add(&z->n, 1)] = 0;
    dagrt_event_set(&z->b);
}

int ss_zero_workers_main(void)
{
    dagrt *rt = make_rt(0, 0);
    if (!rt) return 1;
    int bad = 0;
    struct zw z;
    memset(&z, 0, sizeof z);
    z.rt = rt;
    dagrt_event_init(&z.a, false);
    dagrt_event_init(&z.b, false);
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn_ex(rt, &g, zw_main_task, &z, DAGRT_SPAWN_MAIN)) bad++;
    if (dagrt_spawn_ex(rt, &g, zw_fiber, &z, DAGRT_SPAWN_FIBER)) bad++;
    if (dagrt_spawn(rt, &g, zw_plain, &z)) bad++;
    if (dagrt_group_wait(rt, &g)) bad++;
    /* The fiber starts (1) and resumes (2) only after the plain task set b
     * (0, before or after the fiber started), and the main task finishes (3)
     * only after the fiber set a: 0 1 2 3 or 1 0 2 3, nothing else. */
    static const int ok[2][4] = {{0, 1, 2, 3}, {1, 0, 2, 3}};
    if (atomic_load(&z.n) != 4 ||
        (memcmp(z.order, ok[0], sizeof ok[0]) != 0 && memcmp(z.order, ok[1], sizeof ok[1]) != 0))
        bad++;
    bad += atomic_load(&z.bad);
    dagrt_destroy(rt);
    return bad;
}

/* ---------------------------------------------------------- large stack */

struct ls { dagrt *rt; size_t used; int bad; };
static void ls_task(void *p)
{
    struct ls *x = p;
    volatile unsigned char buf[512 * 1024];   /* fits only the large stack */
    for (size_t i = 0; i < sizeof buf; i += 4096) buf[i] = (unsigned char)i;
    size_t sum = 0;
    for (size_t i = 0; i < sizeof buf; i += 4096) sum += buf[i];
    x->used = sizeof buf + (sum & 0);
    dagrt_fiber_yield(x->rt);                  /* and survives a suspension */
    if (buf[4096] != (unsigned char)4096) x->bad++;
}

int ss_large_stack(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.fiber_large_stack_size = 4u << 20;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) return 1;
    struct ls x = { rt, 0, 0 };
    dagrt_group g;
    dagrt_group_init(&g);
    int bad = 0;
    if (dagrt_spawn_ex(rt, &g, ls_task, &x, DAGRT_SPAWN_FIBER | DAGRT_SPAWN_LARGE_STACK)) bad++;
    if (dagrt_group_wait(rt, &g)) bad++;
    if (x.used != 512 * 1024) bad++;
    dagrt_destroy(rt);
    return bad + x.bad;
}
