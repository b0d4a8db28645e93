/* test_os.c - the system layer (runtime/os/os.h) on its own: what the rest
 * of the runtime relies on, for every system that implements it. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/os.h"

static void add_one(void *p) { atomic_fetch_add((atomic_int *)p, 1); }

Test(runtime_os, threads_start_and_join)
{
    atomic_int n = 0;
    rt_os_thread t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(rt_os_thread_start(&t[i], add_one, &n), 0);
    for (int i = 0; i < 4; i++)
        rt_os_thread_join(&t[i]);
    cr_expect_eq(atomic_load(&n), 4);
}

Test(runtime_os, own_stack_holds_a_local)
{
    char *lo, *hi;
    char here = 0;
    if (!rt_os_thread_stack(&lo, &hi))
        cr_skip_test("stack bounds unknown on this system");
    cr_expect(&here >= lo && &here < hi, "a local at %p outside [%p, %p)", (void *)&here,
              (void *)lo, (void *)hi);
}

static rt_os_once once;
static atomic_int once_runs;
static void once_fn(void) { atomic_fetch_add(&once_runs, 1); }
static void call_once(void *p) { (void)p; rt_os_once_run(&once, once_fn); }

Test(runtime_os, once_runs_exactly_once)
{
    rt_os_thread t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(rt_os_thread_start(&t[i], call_once, NULL), 0);
    call_once(NULL);
    for (int i = 0; i < 4; i++)
        rt_os_thread_join(&t[i]);
    cr_expect_eq(atomic_load(&once_runs), 1);
}

typedef struct waiter {
    _Atomic uint32_t word;
    atomic_int woke;
} waiter;

static void wait_for_word(void *p)
{
    waiter *w = p;
    while (atomic_load(&w->word) == 0)
        rt_os_wait32(&w->word, 0);
    atomic_store(&w->woke, 1);
}

Test(runtime_os, wait32_sleeps_until_woken, .timeout = 30)
{
    waiter w = {0, 0};
    rt_os_thread t;
    cr_assert_eq(rt_os_thread_start(&t, wait_for_word, &w), 0);
    rt_os_sleep_ns(20000000);   /* let it sleep */
    cr_expect_eq(atomic_load(&w.woke), 0, "returned while the word was unchanged");
    atomic_store(&w.word, 1);
    rt_os_wake32_all(&w.word);
    rt_os_thread_join(&t);
    cr_expect_eq(atomic_load(&w.woke), 1);
    /* A wait on a word that already differs returns at once. */
    rt_os_wait32(&w.word, 0);
}

typedef struct box {
    rt_os_mutex mu;
    rt_os_cond cv;
    int value;
} box;

static void fill(void *p)
{
    box *b = p;
    rt_os_mutex_lock(&b->mu);
    b->value = 42;
    rt_os_cond_signal(&b->cv);
    rt_os_mutex_unlock(&b->mu);
}

Test(runtime_os, mutex_and_condition, .timeout = 30)
{
    box b;
    cr_assert_eq(rt_os_mutex_init(&b.mu), 0);
    cr_assert_eq(rt_os_cond_init(&b.cv), 0);
    b.value = 0;
    rt_os_thread t;
    rt_os_mutex_lock(&b.mu);
    cr_assert_eq(rt_os_thread_start(&t, fill, &b), 0);
    while (b.value == 0)
        rt_os_cond_wait(&b.cv, &b.mu);
    rt_os_mutex_unlock(&b.mu);
    rt_os_thread_join(&t);
    cr_expect_eq(b.value, 42);
    rt_os_cond_fini(&b.cv);
    rt_os_mutex_fini(&b.mu);
}

Test(runtime_os, stack_map_has_a_guard_below)
{
    size_t pg = rt_os_page_size();
    cr_assert(pg >= 4096 && (pg & (pg - 1)) == 0, "page size %zu", pg);
    size_t len = 4 * pg;
    unsigned char *m = rt_os_stack_map(len, pg);
    cr_assert_not_null(m);
    memset(m + pg, 0x5a, len - pg);   /* the usable part is writable */
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        m[pg - 1] = 1;                /* the guard's last byte */
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cr_expect(WIFSIGNALED(st), "a write to the guard page did not fault (status %#x)", st);
    rt_os_stack_unmap(m, len);
}

Test(runtime_os, cpus_and_clock)
{
    cr_expect_geq(rt_os_cpu_count(), 1);
    int c = rt_os_cpu_current();
    cr_expect(c >= -1 && c < RT_OS_CPUSET_BITS);
    uint64_t a = rt_os_now_ns();
    rt_os_sleep_ns(1000000);
    uint64_t b = rt_os_now_ns();
    cr_expect_geq(b - a, 1000000u, "the clock moved %llu ns over a 1 ms sleep",
                  (unsigned long long)(b - a));
    rt_os_cpuset s, p;
    memset(&s, 0, sizeof s);
    rt_os_cpuset_add(&s, 3);
    rt_os_cpuset_add(&s, 700);
    rt_os_cpuset_add(&s, RT_OS_CPUSET_BITS);   /* out of range: ignored */
    cr_expect(rt_os_cpuset_has(&s, 3) && rt_os_cpuset_has(&s, 700) && !rt_os_cpuset_has(&s, 4));
    cr_expect_eq(rt_os_cpuset_count(&s), 2);
    rt_os_cpuset_del(&s, 3);
    cr_expect_eq(rt_os_cpuset_count(&s), 1);
    if (rt_os_affinity_get(NULL, &s) == 0 && rt_os_affinity_process(&p) == 0) {
        cr_expect_geq(rt_os_cpuset_count(&s), 1);
        cr_expect(c < 0 || rt_os_cpuset_has(&s, c), "running on CPU %d outside its own mask", c);
        cr_expect(rt_os_affinity_set(NULL, &s) == 0, "setting the same mask back failed");
    }
}

Test(runtime_os, getenv_reads_the_environment)
{
    setenv("DAGRT_OS_TEST", "yes", 1);
    cr_expect_str_eq(rt_os_getenv("DAGRT_OS_TEST"), "yes");
    cr_expect_null(rt_os_getenv("DAGRT_OS_TEST_UNSET_12345"));
}

/* A CPU rate (a Windows job object's cap, in 1/10,000 of the machine's
 * CPUs' time) in whole CPUs: rounded down, at least 1; none (0) for no
 * rate or the whole machine. os_win32.c's job_cpus reads the rate; Wine
 * refuses the query, so only this conversion is checked here and the
 * Windows smoke's topology_any checks that a refused query caps nothing. */
Test(runtime_os, cpu_rate_in_whole_cpus)
{
    cr_assert_eq(rt_os_rate_cpus(2500, 8), 2);
    cr_assert_eq(rt_os_rate_cpus(5000, 96), 48);
    cr_assert_eq(rt_os_rate_cpus(3333, 3), 1);   /* 0.9999 CPUs: at least one */
    cr_assert_eq(rt_os_rate_cpus(1, 64), 1);
    cr_assert_eq(rt_os_rate_cpus(9999, 2), 1);
    cr_assert_eq(rt_os_rate_cpus(0, 8), 0);
    cr_assert_eq(rt_os_rate_cpus(10000, 8), 0);
    cr_assert_eq(rt_os_rate_cpus(2500, 0), 0);
}
