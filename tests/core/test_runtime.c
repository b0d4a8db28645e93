/* test_runtime.c - runtime API misuse tests that need no threads (the
 * scenarios' Criterion host is tests/scenario/criterion_host.c, linked into
 * the same executable). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "dagrt.h"
#include "scenarios.h"

static dagrt_config cfg_with(int workers, bool no_workers, int hot, int idle)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = workers;
    c.no_workers = no_workers;
    c.hot_workers = hot;
    c.idle = (dagrt_idle_policy)idle;
    return c;
}

Test(runtime_api, invalid_config)
{
    struct { dagrt_config c; const char *why; } bad[] = {
        {cfg_with(-2, false, 0, DAGRT_IDLE_PARK), "negative workers"},
        {cfg_with(2, false, -1, DAGRT_IDLE_PARK), "negative hot workers"},
        {cfg_with(2, false, 3, DAGRT_IDLE_PARK), "more hot workers than workers"},
        {cfg_with(0, true, 1, DAGRT_IDLE_PARK), "hot workers without workers"},
        {cfg_with(2, true, 0, DAGRT_IDLE_PARK), "no_workers with a worker count"},
        {cfg_with(1, false, 0, 7), "unknown idle policy"},
        {cfg_with(100000, false, 0, DAGRT_IDLE_PARK), "absurd worker count"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int err = 0;
        dagrt *rt = dagrt_create_ex(&bad[i].c, &err);
        cr_expect_null(rt, "%s accepted", bad[i].why);
        cr_expect_eq(err, DAGRT_EINVAL, "%s: error %d", bad[i].why, err);
        if (rt)
            dagrt_destroy(rt);
    }
    dagrt_config c = cfg_with(-3, false, 0, DAGRT_IDLE_PARK);
    cr_expect_null(dagrt_create(&c));
}

Test(runtime_api, defaults_and_counts)
{
    dagrt *rt = dagrt_create(NULL);
    cr_assert_not_null(rt);
    cr_expect_geq(dagrt_worker_count(rt), 0);
    cr_expect(dagrt_on_main_thread(rt));
    dagrt_destroy(rt);
    dagrt_config c = cfg_with(3, false, 2, DAGRT_IDLE_PARK);
    rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    cr_expect_eq(dagrt_worker_count(rt), 3);
    dagrt_destroy(rt);
    c = cfg_with(0, true, 0, DAGRT_IDLE_PARK);
    rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    cr_expect_eq(dagrt_worker_count(rt), 0);
    dagrt_destroy(rt);
    dagrt_destroy(NULL);   /* harmless */
}

static void nop(void *p) { (void)p; }

static void *pump_from_other_thread(void *p)
{
    return (void *)(intptr_t)dagrt_pump_main(p);
}

static void *publish_from_other_thread(void *p)
{
    return (void *)(intptr_t)dagrt_publish(p);
}

Test(runtime_api, misuse_is_an_error_code)
{
    dagrt_config c = cfg_with(1, false, 0, DAGRT_IDLE_PARK);
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    dagrt_group g;
    memset(&g, 0xab, sizeof g);   /* never initialised */
    cr_expect_eq(dagrt_spawn(rt, &g, nop, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_group_wait(rt, &g), DAGRT_EINVAL);
    dagrt_group_init(&g);
    cr_expect_eq(dagrt_spawn(rt, &g, NULL, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_spawn(NULL, &g, nop, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_spawn_ex(rt, &g, nop, NULL, DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT), DAGRT_EINVAL);
    cr_expect_eq(dagrt_spawn_ex(rt, &g, nop, NULL, DAGRT_SPAWN_MAIN | DAGRT_SPAWN_FIBER), DAGRT_EINVAL);
    cr_expect_eq(dagrt_spawn_ex(rt, &g, nop, NULL, 1u << 20), DAGRT_EINVAL);
    cr_expect_eq(dagrt_group_wait(rt, &g), 0);   /* nothing was counted */
    cr_expect_eq(dagrt_group_wait(rt, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_parallel_for(rt, 0, 10, 1, NULL, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_parallel_for(NULL, 0, 10, 1, NULL, NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_pump_main(NULL), DAGRT_EINVAL);
    pthread_t th;
    void *r;
    pthread_create(&th, NULL, pump_from_other_thread, rt);
    pthread_join(th, &r);
    cr_expect_eq((int)(intptr_t)r, DAGRT_EPERM, "pump_main off the main thread");
    cr_expect_eq(dagrt_publish(NULL), DAGRT_EINVAL);
    cr_expect_eq(dagrt_publish(rt), 0);   /* main thread, nothing private */
    pthread_create(&th, NULL, publish_from_other_thread, rt);
    pthread_join(th, &r);
    cr_expect_eq((int)(intptr_t)r, 0, "publish on a thread that is not rt's: nothing to do");
    dagrt_destroy(rt);
}

Test(runtime_api, strerror_names_every_code)
{
    /* Every code of the one list, by its own value, has a distinct name;
     * values are dense from 0 down to DAGRT_ERR_LAST_ + 1 but for -7, no
     * code (it was DAGRT_EDEADLK, which no call returned). */
    static const struct { int code; const char *msg; } all[] = {
#define ONE(name, value, msg) {DAGRT_##name, msg},
        DAGRT_ERRNO_MAP(ONE)
#undef ONE
    };
    int n = (int)(sizeof all / sizeof all[0]);
    cr_expect_eq(n, -DAGRT_ERR_LAST_ - 1, "the list and DAGRT_ERR_LAST_ disagree");
    for (int i = 0; i < n; i++) {
        cr_expect_eq(all[i].code, i < 7 ? -i : -i - 1, "codes are dense from 0 (-7 unused)");
        const char *s = dagrt_strerror(all[i].code);
        cr_assert_not_null(s);
        cr_expect_str_eq(s, all[i].msg);
        cr_expect_neq(strcmp(s, "unknown error"), 0, "code %d unnamed", all[i].code);
        for (int j = 0; j < i; j++)
            cr_expect_neq(strcmp(s, all[j].msg), 0, "codes %d and %d share a name", -i, -j);
    }
    cr_expect_str_eq(dagrt_strerror(DAGRT_ERR_LAST_), "unknown error");
    cr_expect_str_eq(dagrt_strerror(-7), "unknown error");
    cr_expect_str_eq(dagrt_strerror(1), "unknown error");
    cr_expect_str_eq(dagrt_strerror(-1000), "unknown error");
}

/* workers = 0 means none, without no_workers (a "threads - 1" adapter
 * asked for one thread); the default stays one per core. */
Test(runtime_api, zero_workers_means_none)
{
    dagrt_config c;
    dagrt_config_init(&c);
    cr_expect_eq(c.workers, DAGRT_WORKERS_AUTO);
    c.workers = 0;
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    cr_expect_eq(dagrt_worker_count(rt), 0);
    cr_expect_eq(dagrt_thread_count(rt), 1);
    cr_expect_eq(dagrt_thread_index(rt), 0);
    dagrt_destroy(rt);
    dagrt_config_init(&c);
    rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    cr_expect_eq(dagrt_thread_count(rt), dagrt_worker_count(rt) + 1);
    dagrt_destroy(rt);
}

static void slow_incr(void *arg)
{
    atomic_int *x = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_fetch_add(x, 1);
}

static dagrt *idx_rt;
static void note_index(void *arg)
{
    atomic_int *slot = arg;
    atomic_store(slot, 1 + dagrt_thread_index(idx_rt));   /* 0: not one of rt's */
}

/* A done check that does not wait: not done while a task sleeps on a
 * worker, done after it, with its effect visible; misuse is refused. */
Test(runtime_api, group_done_check)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    static dagrt_group g;   /* off the stack: a handle any thread may check */
    dagrt_group_init(&g);
    cr_expect_eq(dagrt_group_done(&g), 1);
    atomic_int x = 0;
    cr_assert_eq(dagrt_spawn(rt, &g, slow_incr, &x), 0);
    cr_expect_eq(dagrt_group_done(&g), 0);
    while (dagrt_group_done(&g) == 0)
        ;   /* no waiting and no helping: the worker runs it */
    cr_expect_eq(atomic_load(&x), 1);
    cr_expect_eq(dagrt_group_wait(rt, &g), 0);
    cr_expect_eq(dagrt_group_done(NULL), DAGRT_EINVAL);
    dagrt_group bad;
    memset(&bad, 0, sizeof bad);
    cr_expect_eq(dagrt_group_done(&bad), DAGRT_EINVAL);
    /* Thread indices seen by tasks lie in [0, thread_count). */
    atomic_int seen[2] = {0, 0};
    idx_rt = rt;
    for (int i = 0; i < 2; i++) {
        dagrt_group_init(&g);
        cr_assert_eq(dagrt_spawn(rt, &g, note_index, &seen[i]), 0);
        cr_expect_eq(dagrt_group_wait(rt, &g), 0);
    }
    for (int i = 0; i < 2; i++)
        cr_expect(atomic_load(&seen[i]) >= 1 && atomic_load(&seen[i]) <= dagrt_thread_count(rt),
                  "task %d saw thread index %d", i, atomic_load(&seen[i]) - 1);
    cr_expect_eq(dagrt_thread_index(NULL), -1);
    dagrt_destroy(rt);
}
