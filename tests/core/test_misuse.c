/* test_misuse.c - API misuse that must end in an error code or a message,
 * never a crash, a hang or a silent failure (issue 11's list). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dagrt.h"

static dagrt_config fibers_cfg(size_t std, size_t large)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    c.fiber_stack_size = std;
    c.fiber_large_stack_size = large;
    return c;
}

static void set_flag(void *p) { atomic_store((atomic_int *)p, 1); }

/* A fiber task runs on a runtime made from c. */
static void expect_fiber_runs(dagrt_config c)
{
    int err = -100;
    dagrt *rt = dagrt_create_ex(&c, &err);
    cr_assert_not_null(rt, "create failed: %s", dagrt_strerror(err));
    cr_expect_eq(err, 0);
    atomic_int ran = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    cr_expect_eq(dagrt_spawn_ex(rt, &g, set_flag, &ran, DAGRT_SPAWN_FIBER), 0);
    cr_expect_eq(dagrt_spawn_ex(rt, &g, set_flag, &ran, DAGRT_SPAWN_FIBER | DAGRT_SPAWN_LARGE_STACK), 0);
    cr_expect_eq(dagrt_group_wait(rt, &g), 0);
    cr_expect_eq(atomic_load(&ran), 1);
    dagrt_destroy(rt);
}

Test(runtime_misuse, fiber_stack_sizes_that_cannot_work_are_einval)
{
    struct { size_t std, large; const char *why; } bad[] = {
        {SIZE_MAX, 0, "SIZE_MAX (the rounding overflows)"},
        {(size_t)1 << 50, 0, "1 << 50 (cannot be mapped)"},
        {0, SIZE_MAX, "large SIZE_MAX"},
        {0, (size_t)1 << 50, "large 1 << 50"},
        {1024, 0, "under the minimum"},
        {256 * 1024, 128 * 1024, "large smaller than standard"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dagrt_config c = fibers_cfg(bad[i].std, bad[i].large);
        int err = 0;
        dagrt *rt = dagrt_create_ex(&c, &err);
        cr_expect_null(rt, "%s: created", bad[i].why);
        cr_expect_eq(err, DAGRT_EINVAL, "%s: %s, not EINVAL", bad[i].why, dagrt_strerror(err));
        if (rt)
            dagrt_destroy(rt);
    }
}

Test(runtime_misuse, large_default_follows_a_raised_standard_size)
{
    /* Above the 1 MiB large default (4 MiB in sanitized builds), alone. */
    expect_fiber_runs(fibers_cfg((size_t)8 << 20, 0));
    expect_fiber_runs(fibers_cfg(0, 0));
}

typedef struct destroy_probe {
    dagrt *rt;
    atomic_int returned;
} destroy_probe;

static void destroy_from_task(void *p)
{
    destroy_probe *d = p;
    dagrt_destroy(d->rt);            /* must be refused, not hang */
    atomic_store(&d->returned, 1);
}

static void destroy_refused_on(dagrt_config c, unsigned flags)
{
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    destroy_probe d = {rt, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    cr_assert_eq(dagrt_spawn_ex(rt, &g, destroy_from_task, &d, flags), 0);
    cr_expect_eq(dagrt_group_wait(rt, &g), 0);
    cr_expect_eq(atomic_load(&d.returned), 1, "dagrt_destroy from a task did not return");
    /* The runtime is intact: it still runs work, and destroys for real. */
    atomic_int ran = 0;
    cr_expect_eq(dagrt_spawn(rt, &g, set_flag, &ran), 0);
    cr_expect_eq(dagrt_group_wait(rt, &g), 0);
    cr_expect_eq(atomic_load(&ran), 1);
    dagrt_destroy(rt);
}

Test(runtime_misuse, destroy_from_a_main_thread_task_is_refused, .timeout = 60)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    destroy_refused_on(c, DAGRT_SPAWN_MAIN);     /* the main thread runs it while it waits */
    destroy_refused_on(c, DAGRT_SPAWN_DEFAULT);  /* a worker (refused before too) */
    destroy_refused_on(c, DAGRT_SPAWN_FIBER);
    dagrt_config_init(&c);
    c.no_workers = true;                         /* only the main thread runs tasks */
    destroy_refused_on(c, DAGRT_SPAWN_DEFAULT);
    destroy_refused_on(c, DAGRT_SPAWN_FIBER);
}

/* ------------------------------------------------ fiber stack overflow */

static volatile char sink;

static int recurse(int n)
{
    volatile char pad[1024];
    pad[0] = (char)n;
    sink = pad[0];
    return n > 0 ? recurse(n + 1) + pad[1 % sizeof pad] : 0;
}

static void overflow_task(void *p)
{
    (void)p;
    sink = (char)recurse(1);
}

static void user_handler(int sig)
{
    (void)sig;
    static const char m[] = "user handler ran\n";
    ssize_t r = write(2, m, sizeof m - 1);
    (void)r;
    _exit(42);
}

/* Runs an overflowing fiber task in a child; returns its stderr in buf and
 * its wait status. mode 0: report on; 1: report on, a handler installed
 * before the runtime; 2: report off. */
static int overflow_child(int mode, char *buf, size_t cap)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        if (mode == 1) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = user_handler;
            sigaction(SIGSEGV, &sa, NULL);
        }
        dagrt_config c;
        dagrt_config_init(&c);
        c.workers = 1;
        c.fiber_stack_size = 64 * 1024;
        c.no_overflow_report = mode == 2;
        dagrt *rt = dagrt_create(&c);
        if (!rt)
            _exit(99);
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn_ex(rt, &g, overflow_task, NULL, DAGRT_SPAWN_FIBER);
        dagrt_group_wait(rt, &g);
        _exit(0);   /* not reached */
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fd[0], buf + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

Test(runtime_misuse, fiber_stack_overflow_is_named, .timeout = 60)
{
    char out[8192];
    int st = overflow_child(0, out, sizeof out);
    cr_expect(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "the overflow did not end the child");
    cr_expect_not_null(strstr(out, "fiber stack overflow"), "no report; stderr was: %s", out);
    cr_expect_not_null(strstr(out, "fiber_stack_size"), "the report names no size to raise: %s", out);
    cr_expect_not_null(strstr(out, "65536"), "the report names no stack size: %s", out);
}

Test(runtime_misuse, fiber_stack_overflow_chains_to_the_previous_handler, .timeout = 60)
{
    char out[8192];
    int st = overflow_child(1, out, sizeof out);
    cr_expect_not_null(strstr(out, "fiber stack overflow"), "no report; stderr was: %s", out);
    cr_expect_not_null(strstr(out, "user handler ran"), "the previous handler did not run: %s", out);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 42, "status %#x", st);
}

Test(runtime_misuse, fiber_stack_overflow_report_can_be_turned_off, .timeout = 60)
{
    char out[8192];
    int st = overflow_child(2, out, sizeof out);
    cr_expect(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "the overflow did not end the child");
    cr_expect_null(strstr(out, "fiber stack overflow"), "reported although off: %s", out);
}

/* ------------------------------------------- parallel-for piece sizes */

typedef struct pieces {
    size_t end, grain;
    _Atomic uint64_t covered;     /* items, summed */
    _Atomic uint64_t small;       /* pieces under grain that do not end the range */
    _Atomic uint64_t calls;
    uint64_t ns_total;            /* what the whole range costs, spread evenly */
    long double per_item_ns;
} pieces;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void piece(void *p, size_t b, size_t e)
{
    pieces *x = p;
    atomic_fetch_add(&x->covered, (uint64_t)(e - b));
    atomic_fetch_add(&x->calls, 1);
    if (e - b < x->grain && e != x->end)
        atomic_fetch_add(&x->small, 1);
    /* Cost in proportion to the share of the range, so the runtime sees
     * work worth sharing whatever the range's size. */
    uint64_t ns = (uint64_t)((long double)(e - b) * x->per_item_ns);
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

static void check_pieces(dagrt *rt, size_t end, size_t grain)
{
    pieces x = {.end = end, .grain = grain, .ns_total = 20000000};
    x.per_item_ns = (long double)x.ns_total / (long double)end;
    cr_expect_eq(dagrt_parallel_for(rt, 0, end, grain, piece, &x), 0);
    cr_expect_eq(atomic_load(&x.covered), (uint64_t)end, "range %zu grain %zu: covered %llu", end,
                 grain, (unsigned long long)atomic_load(&x.covered));
    cr_expect_eq(atomic_load(&x.small), 0, "range %zu grain %zu: %llu pieces under grain (of %llu)",
                 end, grain, (unsigned long long)atomic_load(&x.small),
                 (unsigned long long)atomic_load(&x.calls));
}

Test(runtime_misuse, parallel_for_pieces_never_under_grain, .timeout = 120)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 2;
    dagrt *rt = dagrt_create(&c);
    cr_assert_not_null(rt);
    check_pieces(rt, 1000003, 1000);
    check_pieces(rt, ((size_t)1 << 31) + 12345, 3);
    check_pieces(rt, ((size_t)1 << 33) + 7, ((size_t)3 << 30));   /* a grain over 2^30 */
    check_pieces(rt, (size_t)1 << 56, (size_t)1 << 40);
    check_pieces(rt, (size_t)1 << 56, 1);
    dagrt_destroy(rt);
}
