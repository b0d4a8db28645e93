/*
 * inst_scenario.c - graph instances and started runs (G_instance_t,
 * G_instance_start, G_instance_wait, G_instance_run) under 0, 1 and 3 workers: two
 * instances started together; a started run progressing while its caller
 * is outside the runtime; `on main` tasks only on the starting thread and
 * only inside its waits; every task once per frame, after its inputs; and
 * misuse (EBUSY, EINVAL, ENESTED) changing nothing. Hosted by
 * test_inst.c (Criterion) and inst_plain.c (suite tsan).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "inst.h"
#include "inst_scenario.h"

static pthread_t main_thread;
static int bad;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "inst_scenario:%d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

/* seq_cst throughout: a test's bookkeeping, not a protocol under test. */
static void note(struct inst_ctx *c, int i)
{
    atomic_store(&c->began[i], atomic_fetch_add(&c->seq, 1));
    c->thread[i] = pthread_self();
    if (i == INST_A && c->victim) {
        inst_instance_t *v = c->victim;
        atomic_store(&c->nested_start, inst_instance_start(c->rt, v, c));
        atomic_store(&c->nested_wait, inst_instance_wait(c->rt, v));
    }
    bench_spin_us(i == INST_B ? 30 : 5);
    atomic_fetch_add(&c->runs[i], 1);
    atomic_store(&c->ended[i], atomic_fetch_add(&c->seq, 1));
}

void inst_a(struct inst_ctx *c) { note(c, INST_A); }
void inst_b(struct inst_ctx *c) { note(c, INST_B); }
void inst_c(struct inst_ctx *c) { note(c, INST_C); }
void inst_h(struct inst_ctx *c) { note(c, INST_H); }
void inst_m(struct inst_ctx *c) { note(c, INST_M); }
void inst_d(struct inst_ctx *c) { note(c, INST_D); }

static void reset(struct inst_ctx *c)
{
    memset(c, 0, sizeof *c);
}

static const char *const names[INST_N] = {"a", "b", "c", "h", "m", "d"};

/* One frame's record: each task once, after its inputs, m on main. */
static void check_frame(const struct inst_ctx *c, const char *what)
{
    static const int after[][2] = {{INST_B, INST_A}, {INST_C, INST_A}, {INST_H, INST_A},
                                   {INST_M, INST_B}, {INST_M, INST_C}, {INST_D, INST_M},
                                   {INST_D, INST_H}};
    for (int i = 0; i < INST_N; i++)
        EXPECT(atomic_load(&c->runs[i]) == 1, "%s: task %s ran %d times", what, names[i],
               atomic_load(&c->runs[i]));
    for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
        int t = after[k][0], p = after[k][1];
        EXPECT(atomic_load(&c->began[t]) > atomic_load(&c->ended[p]),
               "%s: %s started before its input %s ended", what, names[t], names[p]);
    }
    EXPECT(pthread_equal(c->thread[INST_M], main_thread), "%s: the on-main task m ran elsewhere",
           what);
}

/* Waits (outside the runtime) up to 10 s for task i of c to have run. */
static bool ran_meanwhile(const struct inst_ctx *c, int i)
{
    double t0 = bench_now_s();
    while (atomic_load(&c->runs[i]) == 0)
        if (bench_now_s() - t0 > 10.0)
            return false;
    return true;
}

typedef struct other_arg {
    dagrt *rt;
    inst_instance_t *inst;
    struct inst_ctx *ctx;
    int start, wait, run;
} other_arg;

static void *other_thread(void *p)
{
    other_arg *o = p;
    o->start = inst_instance_start(o->rt, o->inst, o->ctx);
    o->wait = inst_instance_wait(o->rt, o->inst);
    o->run = inst_instance_run(o->rt, o->inst, o->ctx);
    return NULL;
}

static void scenario(dagrt *rt, int workers, int frames)
{
    static inst_instance_t ia, ib, ic;
    static struct inst_ctx ca, cb, cx;
    inst_instance_init(&ia);
    inst_instance_init(&ib);
    inst_instance_init(&ic);
    for (int f = 0; f < frames; f++) {
        /* Two instances started together, waited for in either order. */
        reset(&ca);
        reset(&cb);
        EXPECT(inst_instance_start(rt, &ia, &ca) == 0, "start a");
        EXPECT(inst_instance_start(rt, &ib, &cb) == 0, "start b");
        if (workers > 0) {
            /* The runs go on while this thread is outside the runtime... */
            EXPECT(ran_meanwhile(&ca, INST_C) && ran_meanwhile(&cb, INST_C),
                   "%d workers: a started run did not progress before its wait", workers);
            /* ...but their main tasks wait for this thread's waits. */
            EXPECT(atomic_load(&ca.runs[INST_M]) == 0 && atomic_load(&cb.runs[INST_M]) == 0,
                   "an on-main task ran outside the starting thread's waits");
        }
        int r1 = f % 2 ? inst_instance_wait(rt, &ib) : inst_instance_wait(rt, &ia);
        int r2 = f % 2 ? inst_instance_wait(rt, &ia) : inst_instance_wait(rt, &ib);
        EXPECT(r1 == 0 && r2 == 0, "wait: %d %d", r1, r2);
        check_frame(&ca, "instance a");
        check_frame(&cb, "instance b");

        /* A synchronous run of one instance while another is in flight,
         * then the static instance. */
        reset(&ca);
        reset(&cb);
        reset(&cx);
        EXPECT(inst_instance_start(rt, &ia, &ca) == 0, "start a (2)");
        EXPECT(inst_instance_run(rt, &ib, &cb) == 0, "instance_run b");
        check_frame(&cb, "instance_run b");
        EXPECT(inst_run(rt, &cx) == 0, "inst_run");
        check_frame(&cx, "inst_run");
        EXPECT(inst_instance_wait(rt, &ia) == 0, "wait a (2)");
        check_frame(&ca, "instance a (2)");
    }

    /* Misuse changes nothing. */
    reset(&ca);
    reset(&cb);
    EXPECT(inst_instance_wait(rt, &ic) == DAGRT_EINVAL, "wait on an instance never started");
    EXPECT(inst_instance_start(rt, &ia, &ca) == 0, "start a (3)");
    EXPECT(inst_instance_start(rt, &ia, &cb) == DAGRT_EBUSY, "a second start before the wait");
    EXPECT(inst_instance_run(rt, &ia, &cb) == DAGRT_EBUSY, "a run of a started instance");
    other_arg o = {rt, &ia, &cb, 0, 0, 0};
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, other_thread, &o) == 0, "pthread_create");
    pthread_join(t, NULL);
    EXPECT(o.start == DAGRT_EBUSY && o.wait == DAGRT_EBUSY && o.run == DAGRT_EBUSY,
           "another thread on a started instance: start %d wait %d run %d", o.start, o.wait,
           o.run);
    EXPECT(inst_instance_wait(rt, &ia) == 0, "wait a (3)");
    check_frame(&ca, "instance a after misuse");
    for (int i = 0; i < INST_N; i++)
        EXPECT(atomic_load(&cb.runs[i]) == 0, "a refused start ran task %s", names[i]);
    EXPECT(inst_instance_wait(rt, &ia) == DAGRT_EINVAL, "a second wait");
    EXPECT(inst_instance_wait(rt, NULL) == DAGRT_EINVAL && inst_instance_start(rt, NULL, &ca) == DAGRT_EINVAL,
           "NULL instance");

    /* From inside a task: ENESTED, and the victim stays idle. */
    reset(&ca);
    ca.rt = rt;
    ca.victim = &ic;
    EXPECT(inst_instance_run(rt, &ia, &ca) == 0, "run with a nested misuse");
    EXPECT(atomic_load(&ca.nested_start) == DAGRT_ENESTED &&
               atomic_load(&ca.nested_wait) == DAGRT_ENESTED,
           "from inside a task: start %d wait %d", atomic_load(&ca.nested_start),
           atomic_load(&ca.nested_wait));
    reset(&cb);
    EXPECT(inst_instance_start(rt, &ic, &cb) == 0 && inst_instance_wait(rt, &ic) == 0,
           "the nested misuse's victim is usable");
    check_frame(&cb, "victim");
}

int inst_scenario(int frames)
{
    main_thread = pthread_self();
    bad = 0;
    static const int workers[] = {0, 1, 3};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers[k];
        cfg.no_workers = workers[k] == 0;
        dagrt *rt = dagrt_create(&cfg);
        EXPECT(rt != NULL, "dagrt_create(%d workers)", workers[k]);
        if (!rt)
            continue;
        int before = bad;
        scenario(rt, workers[k], frames);
        if (bad != before)
            fprintf(stderr, "inst_scenario: %d failures with %d workers\n", bad - before,
                    workers[k]);
        dagrt_destroy(rt);
    }
    return bad;
}
