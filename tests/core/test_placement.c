/* test_placement.c - the CPU placement policy (dagrt_config.placement):
 * NONE makes no affinity call; AUTO never changes the mask of a thread
 * whose affinity the user set. pthread_setaffinity_np is interposed (the
 * runtime is linked in statically) to count the runtime's calls. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

static atomic_int set_calls;           /* every call */
static atomic_int set_calls_on_pinned; /* calls that target `pinned` */
static pthread_t pinned;
static atomic_bool have_pinned;

int pthread_setaffinity_np(pthread_t th, size_t n, const cpu_set_t *m)
{
    static int (*real)(pthread_t, size_t, const cpu_set_t *);
    if (!real) {
        void *sym = dlsym(RTLD_NEXT, "pthread_setaffinity_np");
        memcpy(&real, &sym, sizeof real);
    }
    atomic_fetch_add(&set_calls, 1);
    if (atomic_load(&have_pinned) && pthread_equal(th, pinned))
        atomic_fetch_add(&set_calls_on_pinned, 1);
    return real ? real(th, n, m) : -1;
}

static void spin_us(unsigned us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) <
           us * 1000u);
}

static void range(void *arg, size_t b, size_t e)
{
    (void)arg;
    spin_us((unsigned)(e - b));   /* 1 us per item */
}

/* Parallel-for loops that each wake a sleeping worker: what steering and
 * leaving a waker's CPU are for. */
static void wake_loops(dagrt *rt)
{
    atomic_store_explicit(&rt->spin_ns, 0, memory_order_relaxed);   /* idlers park at once */
    for (int i = 0; i < 40; i++) {
        usleep(2000);   /* the worker goes to sleep */
        cr_assert_eq(dagrt_parallel_for(rt, 0, 200, 1, range, NULL), 0);
    }
}

static dagrt *make(dagrt_placement p)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    c.placement = p;
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    return rt;
}

Test(runtime_placement, none_makes_no_affinity_call, .timeout = 60)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one CPU: nothing to place");
    dagrt *rt = make(DAGRT_PLACEMENT_NONE);
    atomic_store(&set_calls, 0);
    wake_loops(rt);
    cr_expect_eq(atomic_load(&set_calls), 0, "%d affinity calls with placement none",
                 atomic_load(&set_calls));
    dagrt_destroy(rt);
}

typedef struct pin_probe {
    dagrt *rt;
    cpu_set_t mask;
    atomic_bool done;
} pin_probe;

static void pin_me(void *p)
{
    pin_probe *x = p;
    if (dagrt_on_main_thread(x->rt) || atomic_load(&x->done))
        return;
    pinned = pthread_self();
    /* The user's own choice of mask for this worker (through the real
     * call: it is counted before have_pinned is set). */
    cr_assert_eq(pthread_setaffinity_np(pinned, sizeof x->mask, &x->mask), 0);
    atomic_store(&have_pinned, true);
    atomic_store(&x->done, true);
}

Test(runtime_placement, auto_leaves_a_user_pinned_worker_alone, .timeout = 60)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one CPU: nothing to place");
    /* The creator runs on one CPU at dagrt_create, so the workers start
     * with that mask; the user then gives one worker every CPU: a mask
     * the runtime did not give it, which it must leave as it is. */
    cpu_set_t all, one, saved;
    cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof saved, &saved), 0);
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all)) {
            CPU_SET(i, &one);
            break;
        }
    cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    dagrt *rt = make(DAGRT_PLACEMENT_AUTO);
    cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof saved, &saved), 0);
    pin_probe x = {rt, all, false};
    /* Get the pin done on the worker (the main thread may run the task
     * itself while it waits: then try again). */
    for (int tries = 0; tries < 1000 && !atomic_load(&x.done); tries++) {
        dagrt_group g;
        dagrt_group_init(&g);
        cr_assert_eq(dagrt_spawn(rt, &g, pin_me, &x), 0);
        usleep(1000);
        cr_assert_eq(dagrt_group_wait(rt, &g), 0);
    }
    cr_assert(atomic_load(&x.done), "no task ran on the worker");
    atomic_store(&set_calls_on_pinned, 0);
    wake_loops(rt);
    cr_expect_eq(atomic_load(&set_calls_on_pinned), 0,
                 "%d affinity calls on the worker the user pinned", atomic_load(&set_calls_on_pinned));
    cpu_set_t now;
    cr_assert_eq(pthread_getaffinity_np(pinned, sizeof now, &now), 0);
    cr_expect(CPU_EQUAL(&now, &x.mask), "the pinned worker's mask changed");
    atomic_store(&have_pinned, false);
    dagrt_destroy(rt);
}

Test(runtime_placement, auto_control_moves_its_own_workers, .timeout = 60)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        cr_skip_test("one CPU: nothing to place");
    dagrt *rt = make(DAGRT_PLACEMENT_AUTO);
    atomic_store(&set_calls, 0);
    wake_loops(rt);
    /* The control for none_makes_no_affinity_call: the same loops do
     * make calls when the policy is on. */
    cr_expect_gt(atomic_load(&set_calls), 0, "the loops never moved a worker: the none test proves nothing");
    dagrt_destroy(rt);
}
