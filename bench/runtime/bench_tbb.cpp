// bench_tbb.cpp - the runtime workloads with oneTBB (task_group,
// parallel_for). 2 threads: a task_arena of concurrency 2 (the calling
// thread joins the arena as one of the two).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

extern "C" {
#include "workloads.h"
BW_DEFINE_RANGES
}

static void tree_node(int d)
{
    if (d == 0)
        return;
    tbb::task_group g;
    g.run([=] { tree_node(d - 1); });
    g.run([=] { tree_node(d - 1); });
    g.wait();
}

static long fib_task(int n)
{
    if (n < 2)
        return n;
    long x, y;
    tbb::task_group g;
    g.run([&] { x = fib_task(n - 1); });
    g.run([&] { y = fib_task(n - 2); });
    g.wait();
    return x + y;
}

// ctx: the arena of concurrency 2 that the loops run in.
static void par_calls(uint64_t *out, int heavy, size_t n, int calls, void *ctx)
{
    static_cast<tbb::task_arena *>(ctx)->execute([&] {
        for (int c = 0; c < calls; c++)
            tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
                [&](const tbb::blocked_range<size_t> &rg) {
                    (heavy ? bw_range_heavy : bw_range_cheap)(out, rg.begin(), rg.end());
                });
    });
}

int main(int argc, char **argv)
{
    int quick = bw_arg_quick(argc, argv);
    int reps = quick ? 3 : 7;
    uint64_t s[16];
    bw_print_info();
    int fn = 30;
    double serial = bw_time_fib_serial(fn, s, reps);   // before any thread
    printf("RESULT fib30_serial %.2f ms\n", serial / 1e6);
    tbb::task_arena a2(2), a1(1);

    int depth = 19;
    double nodes = (double)((1L << (depth + 1)) - 1);
    for (int r = -1; r < reps; r++) {
        uint64_t t0 = bw_now_ns();
        a2.execute([&] { tree_node(depth); });
        if (r >= 0)
            s[r] = bw_now_ns() - t0;
    }
    printf("RESULT spawn_tree %.1f Mtasks/s\n", nodes / ((double)bw_median(s, reps) / 1e3));

    for (int threads = 1; threads <= 2; threads++) {
        tbb::task_arena &a = threads == 1 ? a1 : a2;
        for (int r = 0; r < reps; r++) {
            long res = 0;
            uint64_t t0 = bw_now_ns();
            a.execute([&] { res = fib_task(fn); });
            s[r] = bw_now_ns() - t0;
            if (res != bw_fib_serial(fn))
                fprintf(stderr, "fib wrong\n");
        }
        char row[32];
        snprintf(row, sizeof row, "fib30_%dt", threads);
        bw_print_fib(row, (double)bw_median(s, reps), serial);
    }

    bw_pfor_table(quick, reps, par_calls, &a2);

    // Wake: enqueue one empty task into the idle arena (it runs on the
    // arena's worker: the caller does not join), wait until it ran (the
    // wait loop of every contender, bench_wait.h).
    int trips = quick ? 400 : 10000;
    uint64_t *lat = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)trips);
    std::atomic<int> flag{0};
    for (int i = 0; i < trips; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, nullptr);
        flag.store(0);
        uint64_t t0 = bw_now_ns();
        a2.enqueue([&] { flag.store(1, std::memory_order_release); });
        BENCH_WAIT_UNTIL(flag.load(std::memory_order_acquire));
        lat[i] = bw_now_ns() - t0;
    }
    printf("RESULT wake_park %.2f us\n", (double)bw_median(lat, trips) / 1000.0);
    free(lat);
    return 0;
}
