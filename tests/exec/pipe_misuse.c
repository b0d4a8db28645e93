/* pipe_misuse.c - pipeline misuse returns error codes and changes nothing
 * (part of misuse_scenario, so hosted by test_misuse.c and misuse_plain.c):
 * a depth of 0 or above DAGRT_MAX_IN_FLIGHT (DAGRT_EINVAL, also on a
 * pipeline with a frame in flight, which then drains as before); G_instance_wait
 * and G_instance_start on the instance of a pipeline's frame in flight
 * (DAGRT_EBUSY: only the pipeline waits for it); G_pipeline_submit
 * and G_pipeline_drain from inside a task, on a worker and on the main thread, of a
 * plain run and of a pipeline frame (DAGRT_ENESTED); from a second thread
 * while a frame is in flight (DAGRT_EBUSY, nothing started), and on an
 * idle pipeline (DAGRT_EPERM). And re-initialising what is in use: G_pipeline_init
 * with a frame in flight and G_instance_init on a started instance are
 * refused (DAGRT_EBUSY) and change nothing, while the first init of
 * garbage-filled storage is accepted (reinit_scenario). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "misuse.h"
#include "misuse_scenario.h"

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "pipe_misuse:%d: ", __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

void pipe_misuse_nested(struct misuse_ctx *c, int *submit_rc, int *drain_rc)
{
    *submit_rc = misuse_pipeline_submit(c->rt, c->pipe, c);
    *drain_rc = misuse_pipeline_drain(c->rt, c->pipe);
}

void pipe_misuse_spin_us(int us)
{
    double t0 = bench_now_s();
    while (bench_now_s() - t0 < us * 1e-6)
        ;
}

/* Releases a held `first` after 10 s if nothing else did: a frame held on
 * the caller inside G_pipeline_submit would otherwise hang the test. */
static _Atomic int watchdog_fired;

static void *watchdog(void *arg)
{
    struct misuse_ctx *c = arg;
    double t0 = bench_now_s();
    while (!atomic_load(&c->release) && bench_now_s() - t0 < 10.0)
        sched_yield();
    if (!atomic_load(&c->release)) {
        atomic_store(&watchdog_fired, 1);
        atomic_store(&c->release, 1);
    }
    return NULL;
}

typedef struct other {
    struct misuse_ctx *c;
    misuse_pipeline_t *p;
    bool wait_hold;            /* wait until `first` holds, release it after */
    int submit, drain;
} other;

static void *other_thread(void *arg)
{
    other *o = arg;
    while (o->wait_hold && !atomic_load(&o->c->holding))
        sched_yield();
    o->submit = misuse_pipeline_submit(o->c->rt, o->p, o->c);
    o->drain = misuse_pipeline_drain(o->c->rt, o->p);
    atomic_store(&o->c->release, 1);
    return NULL;
}

static void reset(struct misuse_ctx *c, int mode)
{
    c->mode = mode;
    c->slow = 1;
    c->nested_rc_first = c->nested_rc_second = 1;
    c->nested_drain_first = c->nested_drain_second = 1;
    atomic_store(&c->holding, 0);
    atomic_store(&c->release, 0);
    atomic_store(&c->runs, 0);
    atomic_store(&c->seconds, 0);
}

/* Re-initialising a pipeline or an instance that is in use would clear
 * the state of a frame still running (later frames then ran beside the
 * frames they follow, or the next submit hung). */
static int reinit_scenario(dagrt *rt, struct misuse_ctx *c)
{
    int bad = 0;
    pthread_t w;

    /* First init of storage full of garbage (its words look like a state
     * in use): accepted, and the pipeline and instance work. */
    static misuse_pipeline_t gp;
    static misuse_instance_t gi;
    memset(&gp, 0xa5, sizeof gp);
    memset(&gi, 0xa5, sizeof gi);
    EXPECT(misuse_pipeline_init(&gp, 2) == 0, "first init of a garbage-filled pipeline refused");
    EXPECT(misuse_instance_init(&gi) == 0, "first init of a garbage-filled instance refused");
    reset(c, 0);
    EXPECT(misuse_pipeline_submit(rt, &gp, c) == 0 && misuse_pipeline_submit(rt, &gp, c) == 0 &&
               misuse_pipeline_drain(rt, &gp) == 0 && misuse_instance_start(rt, &gi, c) == 0 &&
               misuse_instance_wait(rt, &gi) == 0,
           "a pipeline or instance from garbage-filled storage does not run");
    EXPECT(atomic_load(&c->runs) == 3, "3 frames ran %d times", atomic_load(&c->runs));

    /* A pipeline with a frame in flight: init is refused at any depth and
     * changes nothing; the frame's instance is still in flight, and the
     * drain waits for the frame. */
    static misuse_pipeline_t p;
    EXPECT(misuse_pipeline_init(&p, 2) == 0, "pipeline init failed");
    reset(c, 2);
    EXPECT(pthread_create(&w, NULL, watchdog, c) == 0, "pthread_create");
    EXPECT(misuse_pipeline_submit(rt, &p, c) == 0, "submit of a holding frame failed");
    for (unsigned d = 1; d <= DAGRT_MAX_IN_FLIGHT; d++)
        EXPECT(misuse_pipeline_init(&p, d) == DAGRT_EBUSY,
               "init (depth %u) of a pipeline with a frame in flight not refused", d);
    EXPECT(misuse_instance_wait(rt, &p.frames[0]) == DAGRT_EBUSY,
           "the frame in flight's instance was cleared by a refused init");
    EXPECT(misuse_instance_init(&p.frames[0]) == DAGRT_EBUSY,
           "init of the instance of a pipeline's frame in flight not refused");
    atomic_store(&c->release, 1);
    pthread_join(w, NULL);
    EXPECT(misuse_pipeline_drain(rt, &p) == 0, "drain after a refused init failed");
    EXPECT(atomic_load(&c->runs) == 1 && atomic_load(&c->seconds) == 1,
           "after the drain the frame ran first %d, second %d times", atomic_load(&c->runs),
           atomic_load(&c->seconds));
    /* Drained, it may be initialised again (another depth), and it runs. */
    EXPECT(misuse_pipeline_init(&p, 3) == 0, "init of a drained pipeline refused");
    reset(c, 0);
    for (int f = 0; f < 4; f++)
        EXPECT(misuse_pipeline_submit(rt, &p, c) == 0, "submit %d after the re-init failed", f);
    EXPECT(misuse_pipeline_drain(rt, &p) == 0 && atomic_load(&c->runs) == 4,
           "4 frames after the re-init ran %d times", atomic_load(&c->runs));

    /* A started instance: init is refused and changes nothing, so a second
     * G_instance_start is still refused and the wait returns the run. */
    static misuse_instance_t inst;
    EXPECT(misuse_instance_init(&inst) == 0, "instance init failed");
    reset(c, 2);
    EXPECT(pthread_create(&w, NULL, watchdog, c) == 0, "pthread_create");
    EXPECT(misuse_instance_start(rt, &inst, c) == 0, "start of a holding run failed");
    EXPECT(misuse_instance_init(&inst) == DAGRT_EBUSY, "init of a started instance not refused");
    EXPECT(misuse_instance_start(rt, &inst, c) == DAGRT_EBUSY,
           "a second G_instance_start on a started instance accepted after its init");
    atomic_store(&c->release, 1);
    pthread_join(w, NULL);
    EXPECT(misuse_instance_wait(rt, &inst) == 0, "wait after a refused init failed");
    EXPECT(atomic_load(&c->runs) == 1 && atomic_load(&c->seconds) == 1,
           "the started run ran first %d, second %d times", atomic_load(&c->runs),
           atomic_load(&c->seconds));
    /* Waited for, it may be initialised again: idle (never started), then usable. */
    EXPECT(misuse_instance_init(&inst) == 0, "init of a waited-for instance refused");
    EXPECT(misuse_instance_wait(rt, &inst) == DAGRT_EINVAL, "a re-initialised instance is not idle");
    reset(c, 0);
    EXPECT(misuse_instance_start(rt, &inst, c) == 0 && misuse_instance_wait(rt, &inst) == 0 &&
               atomic_load(&c->runs) == 1,
           "the re-initialised instance does not run");
    return bad;
}

int pipe_misuse_scenario(dagrt *rt)
{
    int bad = 0;
    static misuse_pipeline_t p, q;
    static struct misuse_ctx c;
    c.rt = rt;

    EXPECT(misuse_pipeline_init(&p, 0) == DAGRT_EINVAL, "depth 0 accepted");
    EXPECT(misuse_pipeline_init(&p, DAGRT_MAX_IN_FLIGHT + 1) == DAGRT_EINVAL,
           "depth DAGRT_MAX_IN_FLIGHT + 1 accepted");
    EXPECT(misuse_pipeline_init(NULL, 2) == DAGRT_EINVAL, "NULL pipeline accepted");
    EXPECT(misuse_pipeline_init(&p, 2) == 0 && misuse_pipeline_init(&q, DAGRT_MAX_IN_FLIGHT) == 0,
           "valid depths refused");
    EXPECT(misuse_pipeline_submit(rt, NULL, &c) == DAGRT_EINVAL && misuse_pipeline_drain(rt, NULL) == DAGRT_EINVAL,
           "NULL pipeline accepted by submit or drain");

    /* Frames work, and a drained pipeline starts again. */
    reset(&c, 0);
    for (int f = 0; f < 5; f++)
        EXPECT(misuse_pipeline_submit(rt, &p, &c) == 0, "submit %d failed", f);
    EXPECT(misuse_pipeline_drain(rt, &p) == 0, "drain failed");
    EXPECT(atomic_load(&c.runs) == 5 && atomic_load(&c.seconds) == 5,
           "5 frames ran first %d, second %d times", atomic_load(&c.runs), atomic_load(&c.seconds));
    EXPECT(misuse_pipeline_drain(rt, &p) == 0, "drain of an idle pipeline failed");

    /* A bad depth on a pipeline with a frame in flight changes nothing:
     * the frame completes and the drain waits for it. */
    reset(&c, 2);
    pthread_t w;
    EXPECT(pthread_create(&w, NULL, watchdog, &c) == 0, "pthread_create");
    EXPECT(misuse_pipeline_submit(rt, &p, &c) == 0, "submit of a holding frame failed");
    EXPECT(!atomic_load(&watchdog_fired), "the frame was held on the caller inside G_pipeline_submit");
    EXPECT(misuse_pipeline_init(&p, 0) == DAGRT_EINVAL &&
               misuse_pipeline_init(&p, DAGRT_MAX_IN_FLIGHT + 1) == DAGRT_EINVAL,
           "bad depth accepted on a pipeline in use");
    /* The frame's instance is the pipeline's: G_instance_wait and G_instance_start on it are
     * refused (EBUSY); the pipeline's other instance is idle (EINVAL). */
    int busy = -1;
    for (int k = 0; k < 2; k++) {
        int rc = misuse_instance_wait(rt, &p.frames[k]);
        EXPECT(rc == DAGRT_EBUSY || rc == DAGRT_EINVAL, "G_instance_wait on a pipeline's instance: %d", rc);
        if (rc == DAGRT_EBUSY)
            busy = busy < 0 ? k : 2;
    }
    EXPECT(busy == 0 || busy == 1, "G_instance_wait: not exactly one of the pipeline's instances in flight");
    if (busy == 0 || busy == 1)
        EXPECT(misuse_instance_start(rt, &p.frames[busy], &c) == DAGRT_EBUSY,
               "G_instance_start on a pipeline's frame in flight accepted");
    atomic_store(&c.release, 1);
    pthread_join(w, NULL);
    EXPECT(misuse_pipeline_drain(rt, &p) == 0, "drain after a refused init failed");
    for (int k = 0; k < 2; k++)
        EXPECT(misuse_instance_wait(rt, &p.frames[k]) == DAGRT_EINVAL,
               "G_instance_wait on a pipeline's instance after the drain accepted");
    EXPECT(atomic_load(&c.runs) == 1 && atomic_load(&c.seconds) == 1,
           "the frame in flight ran first %d, second %d times", atomic_load(&c.runs),
           atomic_load(&c.seconds));

    /* From inside a task: first on a worker (or the caller), second on main. */
    reset(&c, 3);
    c.pipe = &q;
    EXPECT(misuse_run(rt, &c) == 0, "run with nested submits failed");
    EXPECT(c.nested_rc_first == DAGRT_ENESTED && c.nested_drain_first == DAGRT_ENESTED,
           "submit/drain inside `first` of a run: %d %d", c.nested_rc_first, c.nested_drain_first);
    EXPECT(c.nested_rc_second == DAGRT_ENESTED && c.nested_drain_second == DAGRT_ENESTED,
           "submit/drain inside on-main `second` of a run: %d %d", c.nested_rc_second,
           c.nested_drain_second);
    /* ...of a pipeline frame, on its own pipeline. */
    reset(&c, 3);
    c.pipe = &p;
    EXPECT(misuse_pipeline_submit(rt, &p, &c) == 0 && misuse_pipeline_drain(rt, &p) == 0,
           "a frame with nested submits failed");
    EXPECT(c.nested_rc_first == DAGRT_ENESTED && c.nested_drain_first == DAGRT_ENESTED,
           "submit/drain inside `first` of a pipeline frame: %d %d", c.nested_rc_first,
           c.nested_drain_first);
    EXPECT(c.nested_rc_second == DAGRT_ENESTED && c.nested_drain_second == DAGRT_ENESTED,
           "submit/drain inside on-main `second` of a pipeline frame: %d %d",
           c.nested_rc_second, c.nested_drain_second);
    EXPECT(atomic_load(&c.runs) == 1 && atomic_load(&c.seconds) == 1,
           "nested submits started frames: first %d, second %d times", atomic_load(&c.runs),
           atomic_load(&c.seconds));

    /* A second thread while a frame is in flight: EBUSY, nothing started. */
    for (int round = 0; round < 10; round++) {
        reset(&c, 2);
        EXPECT(misuse_pipeline_submit(rt, &p, &c) == 0, "submit of a holding frame failed");
        other o = {&c, &p, true, 1, 1};
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, other_thread, &o) == 0, "pthread_create");
        pthread_join(t, NULL);
        EXPECT(o.submit == DAGRT_EBUSY && o.drain == DAGRT_EBUSY,
               "another thread on a pipeline in flight: submit %d drain %d, want EBUSY",
               o.submit, o.drain);
        EXPECT(misuse_pipeline_drain(rt, &p) == 0, "drain after the other thread failed");
        EXPECT(atomic_load(&c.runs) == 1 && atomic_load(&c.seconds) == 1,
               "a refused submit ran a frame: first %d, second %d times", atomic_load(&c.runs),
               atomic_load(&c.seconds));
    }

    /* An idle pipeline from a thread that is not the runtime's main thread. */
    reset(&c, 0);
    other o = {&c, &p, false, 1, 1};
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, other_thread, &o) == 0, "pthread_create");
    pthread_join(t, NULL);
    EXPECT(o.submit == DAGRT_EPERM && o.drain == DAGRT_EPERM,
           "another thread on an idle pipeline: submit %d drain %d, want EPERM", o.submit,
           o.drain);
    EXPECT(atomic_load(&c.runs) == 0, "a refused submit ran a frame");
    EXPECT(misuse_pipeline_submit(rt, &p, &c) == 0 && misuse_pipeline_drain(rt, &p) == 0 &&
               atomic_load(&c.runs) == 1,
           "the pipeline is not usable after the refused calls");
    bad += reinit_scenario(rt, &c);
    return bad;
}
