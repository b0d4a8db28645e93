/* scn_engine.c - the runtime inside an engine that owns the machine
 * (runtime/core/placement.c, core/worker.c, runtime/os/): the CPUs the
 * system grants (dagrt_get_topology on the real machine and on fake
 * sysfs trees: hybrid, SMT, 96 CPUs, a cgroup quota), workers started by
 * the engine's own thread hook, and the placement policies checked from
 * inside each worker as it starts. See scenarios.h. */
#define _GNU_SOURCE
#include "scenarios.h"

/* POSIX only (core_list.h's SCN_POSIX entries): sysfs trees, sched masks. */
#if !defined(_WIN32)

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
#include "os/os.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)
#define MAXCPU 1024

static void put_file(const char *dir, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
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

static void put_filef(const char *dir, const char *text, const char *fmt, int a)
{
    char rel[256];
    snprintf(rel, sizeof rel, fmt, a);
    put_file(dir, rel, text);
}

/* A fake tree's root under dir, DAGRT_SYSFS_ROOT pointing at it. */
static char *saved_root;
static void root_enter(const char *d)
{
    mkdir(d, 0700);
    const char *old = getenv("DAGRT_SYSFS_ROOT");
    saved_root = old ? strdup(old) : NULL;
    setenv("DAGRT_SYSFS_ROOT", d, 1);
}
static void root_leave(const char *d)
{
    if (saved_root) {
        setenv("DAGRT_SYSFS_ROOT", saved_root, 1);
        free(saved_root);
        saved_root = NULL;
    } else {
        unsetenv("DAGRT_SYSFS_ROOT");
    }
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", d);
}

static cpu_set_t real_mask(void)
{
    cpu_set_t m;
    CPU_ZERO(&m);
    sched_getaffinity(0, sizeof m, &m);
    return m;
}

/* ---------------------------------------------------------- topology */

static dagrt_cpu cpus[MAXCPU];
static int order[MAXCPU];

/* The real machine: the CPUs of the mask, each once, sorted. */
int scn_topology_real(void)
{
    int v = 0;
    cpu_set_t m = real_mask();
    dagrt_topology t;
    int n = dagrt_get_topology(&t, cpus, MAXCPU);
    if (n != CPU_COUNT(&m))
        FAIL("topology: %d CPUs, the mask has %d", n, CPU_COUNT(&m));
    if (n > 0 && (t.cpus != n || t.performance + t.efficiency != n || t.cores < 1 || t.cores > n ||
                  t.groups != 1 || t.usable < 1 || t.usable > n))
        FAIL("topology summary: cpus %d perf %d eff %d cores %d groups %d usable %d", t.cpus,
             t.performance, t.efficiency, t.cores, t.groups, t.usable);
    for (int i = 0; i < n; i++) {
        if (!CPU_ISSET(cpus[i].id, &m))
            FAIL("CPU %d is not in the mask", cpus[i].id);
        if (i > 0 && cpus[i].id <= cpus[i - 1].id)
            FAIL("not sorted at %d", i);
        if (cpus[i].core > cpus[i].id)
            FAIL("CPU %d's core %d: not the lowest sibling", cpus[i].id, cpus[i].core);
    }
    if (dagrt_get_topology(NULL, NULL, -1) != DAGRT_EINVAL || dagrt_get_topology(NULL, NULL, 4) != DAGRT_EINVAL)
        FAIL("bad arguments not refused");
    if (dagrt_get_topology(NULL, NULL, 0) != n)
        FAIL("sizing call (n 0) does not count");
    return v;
}

/* A hybrid part: 8 performance cores with two threads each (CPUs 2k and
 * 2k+1), 8 efficiency cores (16 .. 23), the kernel's PMU lists. */
static void tree_hybrid(const char *d)
{
    mkdir(d, 0700);
    put_file(d, "proc/self/status", "Name:\tgame\nCpus_allowed_list:\t0-23\n");
    put_file(d, "sys/devices/cpu_core/cpus", "0-15\n");
    put_file(d, "sys/devices/cpu_atom/cpus", "16-23\n");
    for (int c = 0; c < 24; c++) {
        char sib[32];
        if (c < 16)
            snprintf(sib, sizeof sib, "%d-%d\n", c & ~1, (c & ~1) + 1);
        else
            snprintf(sib, sizeof sib, "%d\n", c);
        put_filef(d, sib, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
    }
}

/* A server: 96 CPUs, 48 cores, siblings N and N + 48 (Linux's numbering
 * on two-thread cores), a cgroup quota of 8.5 CPUs. */
static void tree_96(const char *d, const char *allowed)
{
    mkdir(d, 0700);
    char st[128];
    snprintf(st, sizeof st, "Cpus_allowed_list:\t%s\n", allowed);
    put_file(d, "proc/self/status", st);
    for (int c = 0; c < 96; c++) {
        char sib[32];
        snprintf(sib, sizeof sib, "%d,%d\n", c % 48, c % 48 + 48);
        put_filef(d, sib, "sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
    }
    put_file(d, "proc/self/cgroup", "0::/game\n");
    put_file(d, "sys/fs/cgroup/game/cpu.max", "850000 100000\n");
}

/* big.LITTLE by capacity: 4 big (1024), 4 little (446), no SMT files. */
static void tree_arm(const char *d)
{
    mkdir(d, 0700);
    put_file(d, "proc/self/status", "Cpus_allowed_list:\t0-7\n");
    for (int c = 0; c < 8; c++)
        put_filef(d, c < 4 ? "446\n" : "1024\n", "sys/devices/system/cpu/cpu%d/cpu_capacity", c);
}

static int expect_summary(const char *what, const dagrt_topology *t, int cpus_, int cores, int perf,
                          int eff, int smt, int quota, int usable)
{
    int v = 0;
    if (t->cpus != cpus_ || t->cores != cores || t->performance != perf || t->efficiency != eff ||
        t->smt != smt || t->quota != quota || t->usable != usable || t->groups != 1)
        FAIL("%s: cpus %d cores %d perf %d eff %d smt %d quota %d usable %d groups %d; want "
             "%d %d %d %d %d %d %d 1", what, t->cpus, t->cores, t->performance, t->efficiency,
             t->smt, t->quota, t->usable, t->groups, cpus_, cores, perf, eff, smt, quota, usable);
    return v;
}

int scn_topology_fake(void)
{
    int v = 0;
    char dir[] = "/tmp/dagrt-topo-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char d[128];
    dagrt_topology t;

    /* Hybrid with SMT. */
    snprintf(d, sizeof d, "%s/hybrid", dir);
    tree_hybrid(d);
    root_enter(d);
    int n = dagrt_get_topology(&t, cpus, MAXCPU);
    v += expect_summary("hybrid", &t, 24, 16, 16, 8, 16, 0, 24);
    if (n == 24) {
        for (int i = 0; i < 24; i++) {
            int want_core = i < 16 ? (i & ~1) : i;
            int want_class = i < 16 ? DAGRT_CORE_PERFORMANCE : DAGRT_CORE_EFFICIENCY;
            if (cpus[i].id != i || cpus[i].core != want_core || cpus[i].core_class != want_class)
                FAIL("hybrid CPU %d: id %d core %d class %d", i, cpus[i].id, cpus[i].core,
                     cpus[i].core_class);
        }
        /* The placement order: one thread per performance core, then their
         * siblings, then the efficiency cores. */
        dagrt_topology_order(cpus, n, order);
        for (int i = 0; i < 24; i++) {
            int want = i < 8 ? 2 * i : i < 16 ? 2 * (i - 8) + 1 : i;
            if (cpus[order[i]].id != want) {
                FAIL("hybrid order[%d] = CPU %d, want %d", i, cpus[order[i]].id, want);
                break;
            }
        }
    } else {
        FAIL("hybrid: %d CPUs, want 24", n);
    }
    root_leave(d);

    /* 96 CPUs, SMT N / N+48, quota 8.5 -> 8. */
    snprintf(d, sizeof d, "%s/s96", dir);
    tree_96(d, "0-95");
    root_enter(d);
    n = dagrt_get_topology(&t, cpus, MAXCPU);
    v += expect_summary("96 CPUs", &t, 96, 48, 96, 0, 96, 8, 8);
    if (n == 96) {
        dagrt_topology_order(cpus, n, order);
        for (int i = 0; i < 96; i++)
            if (cpus[order[i]].id != i || cpus[i].core != i % 48) {
                FAIL("96: order[%d] = %d, core of %d = %d", i, cpus[order[i]].id, i, cpus[i].core);
                break;
            }
    }
    /* The worker count follows the quota: 8 CPUs, 7 workers. */
    dagrt *rt = dagrt_create(NULL);
    if (!rt || dagrt_worker_count(rt) != 7)
        FAIL("96 CPUs, quota 8: %d workers, want 7", rt ? dagrt_worker_count(rt) : -1);
    if (rt)
        dagrt_destroy(rt);
    root_leave(d);

    /* The same machine, the process given CPUs 40-55 (a container's set):
     * 16 CPUs, whose siblings 40-47 / 88-95 lie outside it; no SMT. */
    snprintf(d, sizeof d, "%s/s96part", dir);
    tree_96(d, "40-55");
    root_enter(d);
    n = dagrt_get_topology(&t, cpus, MAXCPU);
    v += expect_summary("96 CPUs, 40-55", &t, 16, 16, 16, 0, 0, 8, 8);
    if (n != 16 || cpus[0].id != 40 || cpus[15].id != 55 || cpus[9].core != 1)
        FAIL("40-55: %d CPUs, first %d last %d, core of 49 %d", n, cpus[0].id, cpus[n - 1].id,
             cpus[9].core);
    root_leave(d);

    /* ARM capacities. */
    snprintf(d, sizeof d, "%s/arm", dir);
    tree_arm(d);
    root_enter(d);
    n = dagrt_get_topology(&t, cpus, 3);   /* room for 3: counts all the same */
    v += expect_summary("arm", &t, 8, 8, 4, 4, 0, 0, 8);
    if (n != 8 || cpus[0].core_class != DAGRT_CORE_EFFICIENCY || cpus[2].id != 2)
        FAIL("arm: %d CPUs, CPU 0 class %d", n, cpus[0].core_class);
    n = dagrt_get_topology(&t, cpus, MAXCPU);
    if (n == 8 && (cpus[4].core_class != DAGRT_CORE_PERFORMANCE || cpus[7].core_class != DAGRT_CORE_PERFORMANCE))
        FAIL("arm: the big cores are not the performance class");
    root_leave(d);

    rmdir(dir);
    return v;
}

/* ------------------------------------------------- the engine's threads */

typedef struct engine {
    atomic_int creates, joins, fail_at;
    atomic_int seen[64];      /* spec index -> times created */
    int cpu[64], klass[64];   /* the suggestions */
    pthread_t th[64];
} engine;

typedef struct boot {
    void (*entry)(void *);
    void *arg;
} boot;

static void *engine_thread(void *p)
{
    boot b = *(boot *)p;
    free(p);
    b.entry(b.arg);
    return NULL;
}

static int engine_create(void *user, const dagrt_thread_spec *spec, void **handle)
{
    engine *e = user;
    if (atomic_load(&e->fail_at) == spec->index)
        return -1;
    if (spec->index < 1 || spec->index >= 64 || !spec->entry || !spec->name ||
        strncmp(spec->name, "dagrt-worker-", 13) != 0)
        return -2;
    boot *b = malloc(sizeof *b);
    if (!b)
        return -3;
    b->entry = spec->entry;
    b->arg = spec->arg;
    if (pthread_create(&e->th[spec->index], NULL, engine_thread, b) != 0) {
        free(b);
        return -4;
    }
    atomic_fetch_add(&e->seen[spec->index], 1);
    e->cpu[spec->index] = spec->cpu;
    e->klass[spec->index] = spec->core_class;
    atomic_fetch_add(&e->creates, 1);
    *handle = &e->th[spec->index];
    return 0;
}

static void engine_join(void *user, void *handle)
{
    engine *e = user;
    pthread_join(*(pthread_t *)handle, NULL);
    atomic_fetch_add(&e->joins, 1);
}

static _Thread_local int on_engine_thread;

static void *mark_and_boot(void *p)
{
    on_engine_thread = 1;
    return engine_thread(p);
}

static int engine_create_marked(void *user, const dagrt_thread_spec *spec, void **handle)
{
    engine *e = user;
    boot *b = malloc(sizeof *b);
    if (!b)
        return -3;
    b->entry = spec->entry;
    b->arg = spec->arg;
    if (pthread_create(&e->th[spec->index], NULL, mark_and_boot, b) != 0) {
        free(b);
        return -4;
    }
    atomic_fetch_add(&e->creates, 1);
    atomic_fetch_add(&e->seen[spec->index], 1);
    *handle = &e->th[spec->index];
    return 0;
}

static atomic_int off_engine;   /* tasks run on a worker the engine did not make */
static atomic_int ran;

static void check_thread(void *arg)
{
    dagrt *rt = arg;
    for (volatile int i = 0; i < 20000; i++)
        ;   /* long enough that the workers come for a share */
    if (dagrt_thread_index(rt) > 0 && !on_engine_thread)
        atomic_fetch_add(&off_engine, 1);
    atomic_fetch_add(&ran, 1);
}

/* Every worker is made by the engine's hook and joined by it at destroy;
 * the runtime starts no thread of its own; a hook that fails gives
 * DAGRT_ETHREAD and the workers made before are joined. */
int scn_engine_threads(void)
{
    int v = 0;
    static engine e;
    memset(&e, 0, sizeof e);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.hot_workers = 1;
    cfg.thread_create = engine_create_marked;
    cfg.thread_join = engine_join;
    cfg.thread_user = &e;
    uint64_t starts = rt_os_thread_starts();
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        return 1 + 0 * fprintf(stderr, "create: %s\n", dagrt_strerror(err));
    atomic_store(&off_engine, 0);
    atomic_store(&ran, 0);
    long per = scaled(3000, 300) / 10;
    dagrt_group g;
    dagrt_group_init(&g);
    /* Ten rounds, then more until a worker has run a task, for at most
     * 30 s: on a loaded machine (the suite's parallel tests, under ASan at
     * a tenth of the scale) the ten rounds' few milliseconds once ended
     * before a woken worker got a CPU. Which thread runs a task is the
     * scheduler's; that a worker made by the hook can run one is what is
     * checked. */
    long rounds = 0;
    uint64_t on_workers = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (long i = 0; i < per; i++)
            dagrt_spawn(rt, &g, check_thread, rt);
        dagrt_group_wait(rt, &g);
        rounds++;
        if (rounds < 10)
            continue;
        dagrt_thread_stats st[8];
        int nt = dagrt_get_stats(rt, st, 8);
        on_workers = 0;
        for (int i = 1; i < nt && i <= 3; i++)
            on_workers += st[i].tasks;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (on_workers > 0 || t1.tv_sec - t0.tv_sec > 30)
            break;
    }
    long n = per * rounds;
    dagrt_destroy(rt);
    if (atomic_load(&e.creates) != 3 || atomic_load(&e.joins) != 3)
        FAIL("engine hook: %d created, %d joined, want 3 and 3", atomic_load(&e.creates),
             atomic_load(&e.joins));
    for (int i = 1; i <= 3; i++)
        if (atomic_load(&e.seen[i]) != 1)
            FAIL("worker %d created %d times", i, atomic_load(&e.seen[i]));
    if (rt_os_thread_starts() != starts)
        FAIL("the runtime started %llu threads of its own",
             (unsigned long long)(rt_os_thread_starts() - starts));
    if (atomic_load(&ran) != n || atomic_load(&off_engine) != 0)
        FAIL("%d of %ld tasks ran, %d on a worker the engine did not make", atomic_load(&ran),
             n, atomic_load(&off_engine));
    if (on_workers == 0)
        FAIL("no task ran on the engine's workers in %ld rounds (30 s)", rounds);

    /* One hook without the other: refused. */
    cfg.thread_join = NULL;
    if (dagrt_create_ex(&cfg, &err) != NULL || err != DAGRT_EINVAL)
        FAIL("thread_create without thread_join: %d, want EINVAL", err);

    /* The third creation fails: ETHREAD, the two made are joined. */
    memset(&e, 0, sizeof e);
    atomic_store(&e.fail_at, 3);
    cfg.thread_create = engine_create;
    cfg.thread_join = engine_join;
    rt = dagrt_create_ex(&cfg, &err);
    if (rt || err != DAGRT_ETHREAD)
        FAIL("failing hook: rt %p err %d, want NULL and ETHREAD", (void *)rt, err);
    if (atomic_load(&e.creates) != 2 || atomic_load(&e.joins) != 2)
        FAIL("failing hook: %d created, %d joined, want 2 and 2", atomic_load(&e.creates),
             atomic_load(&e.joins));
    return v;
}

/* ------------------------------------------------------------ placement */

typedef struct seen_masks {
    atomic_int started;
    cpu_set_t mask[64];
    atomic_int have[64];
} seen_masks;

/* The observer's thread_start runs on the thread itself, after the
 * worker has placed itself: the mask it reads is what the worker has. */
static void note_start(void *user, int thread, const char *name)
{
    (void)name;
    seen_masks *s = user;
    if (thread < 1 || thread >= 64)
        return;
    rt_os_cpuset m;
    CPU_ZERO(&s->mask[thread]);
    if (rt_os_affinity_get(NULL, &m) == 0)
        for (int i = 0; i < RT_OS_CPUSET_BITS && i < CPU_SETSIZE; i++)
            if (rt_os_cpuset_has(&m, i))
                CPU_SET(i, &s->mask[thread]);
    atomic_store(&s->have[thread], 1);
    atomic_fetch_add(&s->started, 1);
}

static const dagrt_observer start_obs = {.thread_start = note_start};

static dagrt *placed_rt(int workers, int hot, dagrt_placement p, seen_masks *s, engine *e)
{
    memset(s, 0, sizeof *s);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.hot_workers = hot;
    cfg.placement = p;
    cfg.observer = &start_obs;
    cfg.observer_user = s;
    if (e) {
        memset(e, 0, sizeof *e);
        cfg.thread_create = engine_create;
        cfg.thread_join = engine_join;
        cfg.thread_user = e;
    }
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        fprintf(stderr, "create: %s\n", dagrt_strerror(err));
        return NULL;
    }
    while (atomic_load(&s->started) < workers)
        sched_yield();
    return rt;
}

/* Whether the system lets a thread onto cpu: a mask is no fence (the
 * thread may be moved to any CPU the cpuset allows), so ask it. */
static bool can_run_on(int cpu)
{
    cpu_set_t old = real_mask(), one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (cpu >= CPU_SETSIZE || sched_setaffinity(0, sizeof one, &one) != 0)
        return false;
    sched_setaffinity(0, sizeof old, &old);
    return true;
}

/* Worker k's mask is exactly {its CPU} (or, where the system refused,
 * unchanged and counted). */
static int check_pinned(dagrt *rt, seen_masks *s, int workers, const cpu_set_t *before,
                        const char *what)
{
    int v = 0;
    int n = dagrt_get_topology(NULL, cpus, MAXCPU);
    dagrt_topology_order(cpus, n, order);
    dagrt_thread_stats st[64];
    dagrt_get_stats(rt, st, 64);
    for (int k = 1; k <= workers; k++) {
        int want = cpus[order[k % n]].id;
        bool allowed = can_run_on(want);
        if (allowed) {
            if (CPU_COUNT(&s->mask[k]) != 1 || !CPU_ISSET(want, &s->mask[k]) || st[k].pin_refused)
                FAIL("%s: worker %d has %d CPUs (CPU %d among them: %d), want only CPU %d; refused %llu",
                     what, k, CPU_COUNT(&s->mask[k]), want, CPU_ISSET(want, &s->mask[k]) != 0, want,
                     (unsigned long long)st[k].pin_refused);
        } else if (st[k].pin_refused != 1 || !CPU_EQUAL(&s->mask[k], before)) {
            FAIL("%s: worker %d's CPU %d is not ours: refused %llu, mask kept %d", what, k, want,
                 (unsigned long long)st[k].pin_refused, CPU_EQUAL(&s->mask[k], before));
        }
    }
    return v;
}

static void touch(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* Runs a few thousand tasks: pinned workers still run everything. */
static int run_some(dagrt *rt)
{
    atomic_int n = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 2000; i++)
        dagrt_spawn(rt, &g, touch, &n);
    dagrt_group_wait(rt, &g);
    return atomic_load(&n) == 2000 ? 0 : 1;
}

/* DAGRT_PLACEMENT_PIN on whatever this process may use (the whole
 * machine, `taskset -c 0`: the meson test runs it both ways): each
 * worker, from inside, has only its CPU, in the topology's order; with
 * the engine's hook too, where the hook also got the same CPU suggested.
 * Then a fake 96-CPU tree: CPUs this machine lacks are refused, counted,
 * and the worker runs on as it was. */
int scn_placement_pin(void)
{
    int v = 0;
    static seen_masks s;
    static engine e;
    cpu_set_t before = real_mask();
    for (int pass = 0; pass < 2; pass++) {
        dagrt *rt = placed_rt(3, 0, DAGRT_PLACEMENT_PIN, &s, pass ? &e : NULL);
        if (!rt)
            return v + 1;
        v += check_pinned(rt, &s, 3, &before, pass ? "pin, engine threads" : "pin");
        if (run_some(rt))
            FAIL("pinned workers lost tasks");
        dagrt_destroy(rt);
        if (pass) {
            int n = dagrt_get_topology(NULL, cpus, MAXCPU);
            dagrt_topology_order(cpus, n, order);
            for (int k = 1; k <= 3; k++)
                if (e.cpu[k] != cpus[order[k % n]].id)
                    FAIL("hook's suggestion for worker %d: CPU %d, want %d", k, e.cpu[k],
                         cpus[order[k % n]].id);
        }
    }
    /* NONE: nobody moves. */
    dagrt *rt = placed_rt(2, 0, DAGRT_PLACEMENT_NONE, &s, NULL);
    if (rt) {
        for (int k = 1; k <= 2; k++)
            if (!CPU_EQUAL(&s.mask[k], &before))
                FAIL("placement none: worker %d's mask changed", k);
        dagrt_destroy(rt);
    }

    char dir[] = "/tmp/dagrt-pin-XXXXXX";
    if (!mkdtemp(dir))
        return v + 1;
    tree_96(dir, "0-95");
    root_enter(dir);
    rt = placed_rt(5, 0, DAGRT_PLACEMENT_PIN, &s, NULL);
    if (rt) {
        v += check_pinned(rt, &s, 5, &before, "pin, 96 fake CPUs");
        if (run_some(rt))
            FAIL("refused pins lost tasks");
        dagrt_destroy(rt);
    }
    root_leave(dir);
    return v;
}

/* DAGRT_PLACEMENT_CLASS on a fake hybrid tree whose performance class is
 * CPU 0 and efficiency class CPU 1: the hot worker keeps to 0, the other
 * to 1 (where this process may use them; else refused and counted). */
int scn_placement_class(void)
{
    int v = 0;
    static seen_masks s;
    cpu_set_t before = real_mask();
    char dir[] = "/tmp/dagrt-class-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    put_file(dir, "proc/self/status", "Cpus_allowed_list:\t0-1\n");
    put_file(dir, "sys/devices/cpu_core/cpus", "0\n");
    put_file(dir, "sys/devices/cpu_atom/cpus", "1\n");
    root_enter(dir);
    dagrt *rt = placed_rt(2, 1, DAGRT_PLACEMENT_CLASS, &s, NULL);
    if (rt) {
        dagrt_thread_stats st[4];
        dagrt_get_stats(rt, st, 4);
        for (int k = 1; k <= 2; k++) {
            int want = k == 1 ? 0 : 1;   /* worker 1 is the hot one */
            if (can_run_on(want)) {
                if (CPU_COUNT(&s.mask[k]) != 1 || !CPU_ISSET(want, &s.mask[k]) || st[k].pin_refused)
                    FAIL("class: worker %d not kept to CPU %d", k, want);
            } else if (st[k].pin_refused != 1) {
                FAIL("class: worker %d's CPU %d is not ours, refusal not counted", k, want);
            }
        }
        if (run_some(rt))
            FAIL("class placement lost tasks");
        dagrt_destroy(rt);
    }
    root_leave(dir);

    /* One class everywhere (this machine, as the system says): nobody but
     * the hot workers is moved, and those onto every CPU. */
    rt = placed_rt(2, 0, DAGRT_PLACEMENT_CLASS, &s, NULL);
    if (rt) {
        dagrt_topology t;
        dagrt_get_topology(&t, NULL, 0);
        for (int k = 1; k <= 2 && t.efficiency == 0; k++)
            if (!CPU_EQUAL(&s.mask[k], &before))
                FAIL("class on a machine of one class: worker %d moved", k);
        dagrt_destroy(rt);
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.placement = (dagrt_placement)7;
    int err = 0;
    if (dagrt_create_ex(&cfg, &err) || err != DAGRT_EINVAL)
        FAIL("placement 7 accepted");
    return v;
}

/* DAGRT_PLACEMENT, read at dagrt_create: =pin pins a runtime left at the
 * default (each worker, from inside, has only its CPU, as cfg's PIN
 * does); =none moves nobody; a program's own choice (cfg PIN) wins over
 * =none; a value it does not know fails the create with DAGRT_EINVAL. */
int scn_placement_env(void)
{
    int v = 0;
    static seen_masks s;
    cpu_set_t before = real_mask();
    setenv("DAGRT_PLACEMENT", "pin", 1);
    dagrt *rt = placed_rt(3, 0, DAGRT_PLACEMENT_AUTO, &s, NULL);
    if (!rt) {
        FAIL("DAGRT_PLACEMENT=pin: create failed");
    } else {
        v += check_pinned(rt, &s, 3, &before, "DAGRT_PLACEMENT=pin");
        if (dagrt_get_placement(rt) != DAGRT_PLACEMENT_PIN)
            FAIL("DAGRT_PLACEMENT=pin: dagrt_get_placement says %d", (int)dagrt_get_placement(rt));
        if (run_some(rt))
            FAIL("DAGRT_PLACEMENT=pin: workers lost tasks");
        dagrt_destroy(rt);
    }
    setenv("DAGRT_PLACEMENT", "none", 1);
    rt = placed_rt(2, 0, DAGRT_PLACEMENT_AUTO, &s, NULL);
    if (rt) {
        for (int k = 1; k <= 2; k++)
            if (!CPU_EQUAL(&s.mask[k], &before))
                FAIL("DAGRT_PLACEMENT=none: worker %d's mask changed", k);
        if (dagrt_get_placement(rt) != DAGRT_PLACEMENT_NONE)
            FAIL("DAGRT_PLACEMENT=none: dagrt_get_placement says %d", (int)dagrt_get_placement(rt));
        dagrt_destroy(rt);
    } else {
        FAIL("DAGRT_PLACEMENT=none: create failed");
    }
    /* The program chose PIN: the variable does not undo it. */
    rt = placed_rt(3, 0, DAGRT_PLACEMENT_PIN, &s, NULL);
    if (rt) {
        v += check_pinned(rt, &s, 3, &before, "cfg pin under DAGRT_PLACEMENT=none");
        if (dagrt_get_placement(rt) != DAGRT_PLACEMENT_PIN)
            FAIL("cfg pin under DAGRT_PLACEMENT=none: dagrt_get_placement says %d",
                 (int)dagrt_get_placement(rt));
        dagrt_destroy(rt);
    } else {
        FAIL("cfg pin under DAGRT_PLACEMENT=none: create failed");
    }
    static const char *const bad[] = {"pinned", "PIN", "2", " pin"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("DAGRT_PLACEMENT", bad[i], 1);
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = 1;
        int err = 0;
        dagrt *b = dagrt_create_ex(&cfg, &err);
        if (b || err != DAGRT_EINVAL) {
            FAIL("DAGRT_PLACEMENT=\"%s\": created (%d), want DAGRT_EINVAL", bad[i], err);
            if (b)
                dagrt_destroy(b);
        }
    }
    unsetenv("DAGRT_PLACEMENT");
    if (dagrt_get_placement(NULL) != DAGRT_PLACEMENT_AUTO)
        FAIL("dagrt_get_placement(NULL): not DAGRT_PLACEMENT_AUTO");
    return v;
}

/* ---------------------------------------------------------------- pause */

#include <sys/resource.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000u;
}

typedef struct paused_io {
    dagrt *rt;
    int fd;
    long got;
    int slept;
    atomic_int started;
} paused_io;

static void read_fiber(void *arg)
{
    paused_io *p = arg;
    char buf[16];
    atomic_fetch_add(&p->started, 1);
    p->got = (long)dagrt_read(p->rt, p->fd, buf, sizeof buf, -1, NULL);
}

static _Atomic uint64_t sleep_due;   /* the sleep's deadline, dagrt_now_ns */

static void sleep_fiber(void *arg)
{
    paused_io *p = arg;
    atomic_store(&sleep_due, dagrt_now_ns() + 200 * 1000000u);
    atomic_fetch_add(&p->started, 1);
    p->slept = dagrt_sleep(p->rt, 200 * 1000000u, NULL) == 0 ? 1 : -1;
}

static atomic_long pause_ran;
static void count_task(void *arg)
{
    (void)arg;
    for (volatile int i = 0; i < 2000; i++)
        ;
    atomic_fetch_add(&pause_ran, 1);
}

static atomic_int nested_pause;
static void pause_inside(void *arg)
{
    atomic_store(&nested_pause, dagrt_pause((dagrt *)arg));
}

static void *pause_elsewhere(void *arg)
{
    return (void *)(intptr_t)dagrt_pause((dagrt *)arg);
}

/* dagrt_pause with tasks queued, a fiber in an I/O call and one in a
 * sleep that falls due while paused: no task runs while paused, the
 * process uses (nearly) no CPU over a second, the hot worker (which
 * never sleeps otherwise) included; after dagrt_resume everything
 * finishes. Pause refuses inside a task and off the main thread. */
int scn_pause_resume(void)
{
    int v = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.hot_workers = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    paused_io p = {rt, fds[0], -100, 0, 0};
    dagrt_group io;
    dagrt_group_init(&io);
    dagrt_spawn_ex(rt, &io, read_fiber, &p, DAGRT_SPAWN_FIBER);
    dagrt_spawn_ex(rt, &io, sleep_fiber, &p, DAGRT_SPAWN_FIBER);
    while (atomic_load(&p.started) < 2)
        sched_yield();
    for (int round = 0; round < 3; round++) {
        atomic_store(&pause_ran, 0);
        dagrt_group g;
        dagrt_group_init(&g);
        long n = scaled(20000, 2000);
        for (long i = 0; i < n; i++)
            dagrt_spawn(rt, &g, count_task, NULL);
        if (dagrt_pause(rt) != 0)
            FAIL("pause failed");
        /* Paused before the sleep fell due (a slow pause, under a
         * sanitizer, may come after): it must not end while paused. */
        bool sleep_pending = dagrt_now_ns() < atomic_load(&sleep_due);
        long at = atomic_load(&pause_ran);
        uint64_t c0 = cpu_ns();
        struct timespec second = {round == 0 ? 1 : 0, round == 0 ? 0 : 100000000};
        nanosleep(&second, NULL);
        uint64_t used = cpu_ns() - c0;
        if (atomic_load(&pause_ran) != at)
            FAIL("round %d: %ld tasks ran while paused", round, atomic_load(&pause_ran) - at);
        /* Sanitizers' own threads (TSan's background thread) use a little;
         * a spinning hot worker would use the whole second. */
        if (round == 0 && used > 100000000u)
            FAIL("paused for a second, the process used %.1f ms of CPU", used / 1e6);
        if (round == 0)
            fprintf(stderr, "pause: %.2f ms of CPU over a paused second (%ld of %ld tasks ran before)\n",
                    used / 1e6, at, n);
        /* The sleep falls due during the first pause: it ends after. */
        if ((round == 0 && sleep_pending && p.slept != 0) || p.got != -100)
            FAIL("round %d: a pending wait ended while paused (slept %d, read %ld)", round, p.slept, p.got);
        if (dagrt_pause(rt) != 0)
            FAIL("a second pause is not 0");
        if (dagrt_resume(rt) != 0)
            FAIL("resume failed");
        dagrt_group_wait(rt, &g);
        if (atomic_load(&pause_ran) != n)
            FAIL("round %d: %ld of %ld tasks ran after resume", round, atomic_load(&pause_ran), n);
    }
    /* The sleep fell due while paused: it ends after resume. The read ends
     * once there is something to read. */
    if (write(fds[1], "x", 1) != 1)
        FAIL("write");
    dagrt_group_wait(rt, &io);
    if (p.slept != 1 || p.got != 1)
        FAIL("after resume: slept %d, read %ld", p.slept, p.got);
    /* Refusals. */
    dagrt_group g;
    dagrt_group_init(&g);
    atomic_store(&nested_pause, 1);
    dagrt_spawn_ex(rt, &g, pause_inside, rt, DAGRT_SPAWN_MAIN);   /* a task on the main thread */
    dagrt_group_wait(rt, &g);
    if (atomic_load(&nested_pause) != DAGRT_ENESTED)
        FAIL("pause inside a task: %d, want ENESTED", atomic_load(&nested_pause));
    /* From a task on a worker: not the main thread. */
    atomic_store(&nested_pause, 1);
    dagrt_group_init(&g);
    dagrt_spawn(rt, &g, pause_inside, rt);
    dagrt_group_wait(rt, &g);
    if (atomic_load(&nested_pause) != DAGRT_ENESTED && atomic_load(&nested_pause) != DAGRT_EPERM)
        FAIL("pause inside a task: %d, want ENESTED or EPERM", atomic_load(&nested_pause));
    pthread_t th;
    void *res = NULL;
    pthread_create(&th, NULL, pause_elsewhere, rt);
    pthread_join(th, &res);
    if ((intptr_t)res != DAGRT_EPERM)
        FAIL("pause off the main thread: %d, want EPERM", (int)(intptr_t)res);
    if (dagrt_pause(NULL) != DAGRT_EINVAL || dagrt_resume(NULL) != DAGRT_EINVAL)
        FAIL("NULL not refused");
    /* The hot workers change between frames: while paused only. A hot
     * worker never parks in its idle loop: over a burst and an idle spell
     * afterwards, the parks of the workers made hot stay as they were. */
    if (dagrt_set_hot_workers(rt, 3) != DAGRT_EBUSY)
        FAIL("set_hot_workers while running: not EBUSY");
    dagrt_pause(rt);
    if (dagrt_set_hot_workers(rt, 0) != DAGRT_EINVAL || dagrt_set_hot_workers(rt, 4) != DAGRT_EINVAL)
        FAIL("set_hot_workers out of range accepted");
    if (dagrt_set_hot_workers(rt, 3) != 0)
        FAIL("set_hot_workers(3) refused");
    dagrt_resume(rt);
    struct timespec settle = {0, 20000000};
    nanosleep(&settle, NULL);   /* back into their loops */
    dagrt_thread_stats st0[8], st1[8];
    dagrt_get_stats(rt, st0, 8);
    for (int round = 0; round < 5; round++) {
        dagrt_group_init(&g);
        for (int i = 0; i < 2000; i++)
            dagrt_spawn(rt, &g, count_task, NULL);
        dagrt_group_wait(rt, &g);
        nanosleep(&settle, NULL);
    }
    dagrt_get_stats(rt, st1, 8);
    for (int k = 1; k <= 3; k++)
        if (st1[k].parks != st0[k].parks)
            FAIL("worker %d made hot parked %llu times", k,
                 (unsigned long long)(st1[k].parks - st0[k].parks));
    dagrt_pause(rt);
    if (dagrt_set_hot_workers(rt, 1) != 0)
        FAIL("set_hot_workers(1) refused");
    dagrt_resume(rt);
    /* Destroy of a paused runtime drains it. */
    atomic_store(&pause_ran, 0);
    for (int i = 0; i < 100; i++)
        dagrt_spawn(rt, NULL, count_task, NULL);
    dagrt_pause(rt);
    dagrt_destroy(rt);
    if (atomic_load(&pause_ran) != 100)
        FAIL("destroy of a paused runtime ran %ld of 100", atomic_load(&pause_ran));
    close(fds[0]);
    close(fds[1]);
    return v;
}
#endif
