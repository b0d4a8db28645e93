/* scn_life.c - a runtime's life and its end (runtime/core/worker.c, core/guest.c):
 * dagrt_destroy against threads outside the runtime inside its calls,
 * against waits nested on its own stack and a full fiber pool, a guest
 * thread that exits attached, and the automatic worker count. See
 * scenarios.h. Every check is by behaviour: a destroy that hangs is the
 * host's timeout (Criterion's, the plain driver's watchdog). */
#define _GNU_SOURCE
#include "scenarios.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dagrt.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

static dagrt *life_rt(int workers, int guests, int fibers, const dagrt_observer *obs, void *user)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.guest_threads = guests;
    cfg.fiber_pool_size = fibers;
    cfg.observer = obs;
    cfg.observer_user = user;
    cfg.seed = 7;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "dagrt_create_ex: %s\n", dagrt_strerror(err));
    return rt;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------- destroy with a thread outside the runtime inside a call */

#if !defined(_WIN32)   /* a pipe */
typedef struct outside {
    dagrt *rt;
    dagrt_event never;          /* nobody sets it */
    int fd;                     /* a pipe's read end nobody writes to */
    int kind;                   /* 0: a timed event wait, 1: a read, 2: a group wait */
    dagrt_group *group;
    _Atomic int inside;         /* about to make its call */
    _Atomic long rc;
} outside;

static void *outside_call(void *p)
{
    outside *o = p;
    atomic_store(&o->inside, 1);
    long rc;
    if (o->kind == 0) {
        /* Its deadline only ends the wait if destroy does not: on a
         * runtime freed under it, it would run the freed timers there. */
        rc = dagrt_event_wait_until(o->rt, &o->never, dagrt_now_ns() + 2000000000u, NULL);
    } else if (o->kind == 1) {
        char buf[16];
        rc = (long)dagrt_read(o->rt, o->fd, buf, sizeof buf, -1, NULL);
    } else {
        rc = dagrt_group_wait(o->rt, o->group);
    }
    atomic_store(&o->rc, rc);
    return NULL;
}

#endif

typedef struct gate {
    _Atomic int started, release;
} gate;

static void held_task(void *p)
{
    gate *g = p;
    atomic_store(&g->started, 1);
    while (!atomic_load(&g->release))
        sched_yield();
}

#if !defined(_WIN32)   /* a pipe */
/* A thread outside the runtime blocked in a timed event wait, a read, or a
 * group wait when destroy begins: destroy ends its call (DAGRT_ECANCELED
 * for the waits on the world; the group's tasks run, so 0 for the group
 * wait) and frees nothing until it has left: the call's result is there
 * as soon as the thread is joined, and under the sanitizers nothing of
 * the runtime is touched after it is freed. Rounds of each. */
int scn_destroy_outside_call(void)
{
    int v = 0;
    long rounds = scaled(100, 10);
    for (long r = 0; r < rounds * 3 && v == 0; r++) {
        int kind = (int)(r % 3);
        dagrt *rt = life_rt(r & 4 ? 0 : 1, kind == 2 ? 1 : 0, 0, NULL, NULL);
        if (!rt)
            return 1;
        int fds[2] = {-1, -1};
        if (kind == 1 && pipe(fds) != 0)
            return 1;
        outside o = {.rt = rt, .fd = fds[0], .kind = kind};
        dagrt_event_init(&o.never, false);
        atomic_init(&o.inside, 0);
        atomic_init(&o.rc, -1000);
        /* Not on the main thread's stack: a group there is that thread's
         * own (DAGRT_EPERM for any other waiter). */
        static dagrt_group g;
        gate hold = {0, 0};
        if (kind == 2) {
            /* The group's one task: a worker runs it, or with none the
             * waiter's guest slot or destroy. */
            dagrt_group_init(&g);
            o.group = &g;
            dagrt_spawn(rt, &g, held_task, &hold);
            atomic_store(&hold.release, 1);   /* runs to its end once it starts */
        }
        pthread_t th;
        pthread_create(&th, NULL, outside_call, &o);
        while (!atomic_load(&o.inside))
            sched_yield();
        if (r % 2)
            nap_ms(1);   /* usually inside the call by now; either way it must end */
        dagrt_destroy(rt);
        pthread_join(th, NULL);
        long rc = atomic_load(&o.rc);
        long want = kind == 2 ? 0 : DAGRT_ECANCELED;
        if (rc != want)
            FAIL("round %ld (%s, %d workers): the outside call returned %ld, want %ld", r,
                 kind == 0 ? "event wait" : kind == 1 ? "read" : "group wait", r & 4 ? 0 : 1, rc,
                 want);
        if (fds[0] >= 0) {
            close(fds[0]);
            close(fds[1]);
        }
    }
    return v;
}

#endif

/* A call that a thread outside the runtime starts while destroy runs (a
 * task still holds the only worker) is refused with DAGRT_ECANCELED: it
 * does not wait for its deadline, or keep the destroy waiting. */
typedef struct late {
    dagrt *rt;
    gate *hold;
    _Atomic int destroying;
    long rc, timeouts;
} late;

static void *late_caller(void *p)
{
    late *l = p;
    while (!atomic_load(&l->destroying))
        sched_yield();
    nap_ms(5);   /* destroy has usually begun; calls made before it time out and go again */
    dagrt_event never;
    dagrt_event_init(&never, false);
    long rc = DAGRT_ETIMEDOUT;
    for (long i = 0; i < 5000 && rc == DAGRT_ETIMEDOUT; i++) {
        rc = dagrt_event_wait_until(l->rt, &never, dagrt_now_ns() + 2000000u, NULL);
        if (rc == DAGRT_ETIMEDOUT)
            l->timeouts++;
    }
    l->rc = rc;   /* no further call: the runtime may be gone once destroy returns */
    atomic_store(&l->hold->release, 1);
    return NULL;
}

int scn_destroy_outside_late(void)
{
    int v = 0;
    dagrt *rt = life_rt(1, 0, 0, NULL, NULL);
    if (!rt)
        return 1;
    gate hold = {0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    dagrt_spawn(rt, &g, held_task, &hold);
    while (!atomic_load(&hold.started))
        sched_yield();
    late l = {rt, &hold, 0, -1000, 0};
    pthread_t th;
    pthread_create(&th, NULL, late_caller, &l);
    atomic_store(&l.destroying, 1);
    dagrt_destroy(rt);   /* drains: the held task ends once the late call has returned */
    pthread_join(th, NULL);
    if (l.rc != DAGRT_ECANCELED)
        FAIL("a wait started outside the runtime during destroy returned %ld after %ld "
             "timeouts, want DAGRT_ECANCELED", l.rc, l.timeouts);
    return v;
}

/* --------------------- waits nested on the destroying thread's own stack */

typedef struct nested {
    dagrt *rt;
    dagrt_event never;
    dagrt_mutex held;           /* locked by the main thread, never unlocked */
    _Atomic int ran, on_main, cancelled, other;
} nested;

static void nested_event_wait(void *p)
{
    nested *n = p;
    atomic_fetch_add(&n->ran, 1);
    if (dagrt_thread_index(n->rt) == 0)
        atomic_fetch_add(&n->on_main, 1);
    int rc = dagrt_event_wait(n->rt, &n->never);   /* helps, then parks */
    atomic_fetch_add(rc == DAGRT_ECANCELED ? &n->cancelled : &n->other, 1);
}

static void nested_lock_wait(void *p)
{
    nested *n = p;
    atomic_fetch_add(&n->ran, 1);
    if (dagrt_thread_index(n->rt) == 0)
        atomic_fetch_add(&n->on_main, 1);
    int rc = dagrt_mutex_lock(n->rt, &n->held);   /* blocks the thread */
    atomic_fetch_add(rc == DAGRT_ECANCELED ? &n->cancelled : &n->other, 1);
    if (rc == 0)
        dagrt_mutex_unlock(&n->held);
}

typedef struct release_later {
    gate *hold;
    nested *n;
    int want_on_main;
} release_later;

static void *release_when_nested(void *p)
{
    release_later *rl = p;
    /* The worker is held until the main thread, inside destroy, has taken
     * the waiting tasks itself. */
    while (atomic_load(&rl->n->on_main) < rl->want_on_main)
        sched_yield();
    atomic_store(&rl->hold->release, 1);
    return NULL;
}

/* dagrt_destroy on the main thread runs the queued plain tasks itself;
 * each then waits for something nobody will end (an event; a mutex the
 * main thread holds), nested above destroy on the same stack. With zero
 * workers, and with one worker busy until the main thread runs them:
 * destroy still cancels the waits (DAGRT_ECANCELED) and returns. */
int scn_destroy_nested_wait(void)
{
    int v = 0;
    for (int workers = 0; workers <= 1; workers++) {
        for (int lock = 0; lock <= 1; lock++) {
            dagrt *rt = life_rt(workers, 0, 0, NULL, NULL);
            if (!rt)
                return 1;
            nested n;
            memset(&n, 0, sizeof n);
            n.rt = rt;
            dagrt_event_init(&n.never, false);
            dagrt_mutex_init(&n.held);
            if (lock && dagrt_mutex_lock(rt, &n.held) != 0)
                FAIL("locking a free mutex failed");
            gate hold = {0, 0};
            dagrt_group g;
            dagrt_group_init(&g);
            pthread_t th;
            int ntasks = lock ? 1 : 2;   /* a blocked thread runs nothing more */
            release_later rl = {&hold, &n, ntasks};
            if (workers) {
                dagrt_spawn(rt, &g, held_task, &hold);
                while (!atomic_load(&hold.started))
                    sched_yield();
                pthread_create(&th, NULL, release_when_nested, &rl);
            }
            /* Plain tasks on the main thread's deque: the worker is held,
             * so the main thread's destroy runs them, the second one nested
             * in the first one's wait. */
            for (int i = 0; i < ntasks; i++)
                dagrt_spawn(rt, &g, lock ? nested_lock_wait : nested_event_wait, &n);
            dagrt_destroy(rt);
            if (workers)
                pthread_join(th, NULL);
            if (atomic_load(&n.ran) != ntasks || atomic_load(&n.on_main) != ntasks ||
                atomic_load(&n.cancelled) != ntasks || atomic_load(&n.other) != 0)
                FAIL("%d workers, %s: %d tasks ran (%d on the main thread), %d waits cancelled, "
                     "%d ended otherwise; want %d, all cancelled", workers,
                     lock ? "mutex" : "event", atomic_load(&n.ran), atomic_load(&n.on_main),
                     atomic_load(&n.cancelled), atomic_load(&n.other), ntasks);
        }
    }
    return v;
}

/* -------------------------- parked fibers fill the pool, one more waits */

static void fiber_waiter(void *p)
{
    nested *n = p;
    atomic_fetch_add(&n->ran, 1);
    int rc = dagrt_event_wait(n->rt, &n->never);   /* suspends, holding its fiber */
    atomic_fetch_add(rc == DAGRT_ECANCELED ? &n->cancelled : &n->other, 1);
}

/* Four fiber tasks park in waits nobody ends, holding the pool's four
 * fibers; a fifth waits for a fiber. Destroy cancels the waits (the
 * fifth's too, once it gets a fiber and waits) and returns. */
int scn_destroy_fiber_pool_full(void)
{
    int v = 0;
    for (int workers = 0; workers <= 1; workers++) {
        dagrt *rt = life_rt(workers, 0, 4, NULL, NULL);
        if (!rt)
            return 1;
        nested n;
        memset(&n, 0, sizeof n);
        n.rt = rt;
        dagrt_event_init(&n.never, false);
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < 5; i++)
            dagrt_spawn_ex(rt, &g, fiber_waiter, &n, DAGRT_SPAWN_FIBER);
        dagrt_destroy(rt);
        if (atomic_load(&n.ran) != 5 || atomic_load(&n.cancelled) != 5 || atomic_load(&n.other))
            FAIL("%d workers: %d of 5 fiber tasks ran, %d waits cancelled, %d ended otherwise",
                 workers, atomic_load(&n.ran), atomic_load(&n.cancelled), atomic_load(&n.other));
    }
    return v;
}

#if !defined(_WIN32)   /* Linux: masks, cgroups; Windows: FLS under Wine not yet run */
/* ---------------------------------- a guest thread that exits attached */

typedef struct stops {
    _Atomic int stopped[8];
} stops;

static void on_stop(void *user, int thread)
{
    stops *s = user;
    if (thread >= 0 && thread < 8)
        atomic_fetch_add(&s->stopped[thread], 1);
}

typedef struct exiter {
    dagrt *rt;
    int index;
    int nested;    /* attach this many times, detach none */
} exiter;

static void *attach_and_exit(void *p)
{
    exiter *e = p;
    for (int i = 0; i < e->nested; i++)
        e->index = dagrt_thread_attach(e->rt);
    return NULL;   /* exits attached */
}

/* A guest thread that exits without detaching gives its slot back: the
 * slot reports its thread's stop, another thread can take it, and
 * dagrt_destroy then really destroys (its worker stops). Several
 * runtimes in a row, as a game's level reloads would make them. */
int scn_guest_exit_attached(void)
{
    int v = 0;
    for (int level = 0; level < 4; level++) {
        stops s;
        memset(&s, 0, sizeof s);
        dagrt_observer obs;
        memset(&obs, 0, sizeof obs);
        obs.thread_stop = on_stop;
        dagrt *rt = life_rt(1, 1, 0, &obs, &s);
        if (!rt)
            return 1;
        exiter e = {rt, -100, 1 + level % 2};
        pthread_t th;
        pthread_create(&th, NULL, attach_and_exit, &e);
        pthread_join(th, NULL);
        if (e.index != 2)
            FAIL("level %d: attach returned %d, want the guest slot 2", level, e.index);
        if (atomic_load(&s.stopped[2]) != 1)
            FAIL("level %d: the exited guest's slot reported %d stops, want 1", level,
                 atomic_load(&s.stopped[2]));
        /* The slot is free again: another thread takes it. */
        exiter e2 = {rt, -100, 1};
        pthread_create(&th, NULL, attach_and_exit, &e2);
        pthread_join(th, NULL);
        if (e2.index != 2)
            FAIL("level %d: the next thread's attach returned %d, want slot 2", level, e2.index);
        dagrt_destroy(rt);
        if (atomic_load(&s.stopped[1]) != 1)
            FAIL("level %d: destroy did not stop the worker (%d stops): refused?", level,
                 atomic_load(&s.stopped[1]));
    }
    return v;
}

/* -------------------------------------------- DAGRT_WORKERS_AUTO's count */

static int auto_workers(void)
{
    dagrt *rt = life_rt(DAGRT_WORKERS_AUTO, 0, 0, NULL, NULL);
    if (!rt)
        return -100;
    int n = dagrt_worker_count(rt);
    dagrt_destroy(rt);
    return n;
}

static int mask_cpus(void)
{
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0)
        return -1;
    return CPU_COUNT(&m);
}

static void put_file(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* mkdir -p of the file's directory */
    for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = 0;
        mkdir(path, 0700);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* DAGRT_WORKERS_AUTO starts one worker per CPU the process may use, less
 * the main thread: the CPUs of its affinity mask (the test's own, then
 * one CPU; and whatever `taskset` gave the test), bounded by the cgroup
 * v2 quota (cpu.max, the smallest on the way up from the process's
 * cgroup; read under DAGRT_SYSFS_ROOT, a fake tree here). */
int scn_workers_auto(void)
{
    int v = 0;
    char dir[] = "/tmp/dagrt-sysfs-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    const char *old = getenv("DAGRT_SYSFS_ROOT");
    char *saved = old ? strdup(old) : NULL;
    setenv("DAGRT_SYSFS_ROOT", dir, 1);   /* empty: no cgroup file, no quota */
    int cpus = mask_cpus();
    if (cpus < 1)
        FAIL("sched_getaffinity failed");
    int n = auto_workers();
    if (n != cpus - 1)
        FAIL("%d CPUs in the mask, no quota: %d workers, want %d", cpus, n, cpus - 1);

    /* One CPU in the mask: no worker. */
    cpu_set_t all, one;
    sched_getaffinity(0, sizeof all, &all);
    CPU_ZERO(&one);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all)) {
            CPU_SET(i, &one);
            break;
        }
    if (sched_setaffinity(0, sizeof one, &one) == 0) {
        if ((n = auto_workers()) != 0)
            FAIL("one CPU in the mask: %d workers, want 0", n);
        sched_setaffinity(0, sizeof all, &all);
    }

    /* Quotas: the smallest on the way up, rounded down, at least one CPU. */
    struct { const char *leaf, *mid, *top; int quota; } q[] = {
        {"max 100000\n", "150000 100000\n", NULL, 1},       /* 1.5 -> 1 */
        {"50000 100000\n", NULL, NULL, 1},                  /* half a CPU -> 1 */
        {"max 100000\n", "max 100000\n", "max\n", 0},       /* no limit */
        {"garbage\n", NULL, NULL, 0},                       /* unreadable: ignored */
        {"400000 100000\n", NULL, "300000 100000\n", 3},    /* a parent bounds its child */
        {NULL, "200000 100000\n", NULL, 2},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char d[64];
        snprintf(d, sizeof d, "%s/%zu", dir, i);
        mkdir(d, 0700);
        setenv("DAGRT_SYSFS_ROOT", d, 1);
        put_file(d, "proc/self/cgroup", "1:cpu:/v1/ignored\n0::/game.slice/level\n");
        mkdir(d, 0700);
        if (q[i].leaf)
            put_file(d, "sys/fs/cgroup/game.slice/level/cpu.max", q[i].leaf);
        if (q[i].mid)
            put_file(d, "sys/fs/cgroup/game.slice/cpu.max", q[i].mid);
        if (q[i].top)
            put_file(d, "sys/fs/cgroup/cpu.max", q[i].top);
        int want = q[i].quota && q[i].quota < cpus ? q[i].quota - 1 : cpus - 1;
        if ((n = auto_workers()) != want)
            FAIL("quota case %zu (%d CPUs in the mask): %d workers, want %d", i, cpus, n, want);
    }
    if (saved) {
        setenv("DAGRT_SYSFS_ROOT", saved, 1);
        free(saved);
    } else {
        unsetenv("DAGRT_SYSFS_ROOT");
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return v;
}
#endif

/* Runtimes made on one thread and destroyed in another order than made
 * (A, B and C made; B destroyed first, then A, then C): the thread's
 * chain of current contexts (each runtime made on it remembers the one
 * before) must never lead into a destroyed runtime's memory. The
 * latest made of those left is the thread's current runtime (it knows
 * the main thread), and one made after all ends is too; dagrt_create reads the chain (it closes the thread's frame
 * memory window there), so a dangling link is a use after free: the
 * ASan+UBSan stage reports it, the default run's MALLOC_PERTURB_ makes
 * it a crash. */
int scn_destroy_out_of_order(void)
{
    int v = 0;
    for (int round = 0; round < 4; round++) {
        dagrt *rt[3];
        for (int i = 0; i < 3; i++)
            rt[i] = life_rt(1, 0, 0, NULL, NULL);
        if (!rt[0] || !rt[1] || !rt[2]) {
            FAIL("round %d: dagrt_create failed", round);
            for (int i = 2; i >= 0; i--)
                dagrt_destroy(rt[i]);
            return v;
        }
        /* Round 0: B, A, C; 1: A, B, C; 2: B, C, A; 3: C, B, A (made order). */
        static const int order[4][3] = {{1, 0, 2}, {0, 1, 2}, {1, 2, 0}, {2, 1, 0}};
        for (int k = 0; k < 3; k++) {
            dagrt_destroy(rt[order[round][k]]);
            rt[order[round][k]] = NULL;
            /* The latest made of those left is the thread's current one
             * (it knows the main thread); the others are below it. */
            int top = -1;
            for (int i = 0; i < 3; i++)
                if (rt[i])
                    top = i;
            for (int i = 0; i < 3; i++)
                if (rt[i] && dagrt_on_main_thread(rt[i]) != (i == top))
                    FAIL("round %d, after %d destroys: runtime %d %s the main thread", round,
                         k + 1, i, i == top ? "no longer knows" : "takes itself for");
        }
        dagrt *after = life_rt(1, 0, 0, NULL, NULL);
        if (!after)
            FAIL("round %d: dagrt_create after the destroys failed", round);
        else if (!dagrt_on_main_thread(after))
            FAIL("round %d: a runtime made after the destroys does not know its main thread", round);
        dagrt_destroy(after);
    }
    return v;
}
