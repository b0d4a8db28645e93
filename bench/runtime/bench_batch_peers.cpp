// bench_batch_peers.cpp - the peers' rows of bench_batch (bench_batch.c):
// n empty tasks handed over and waited for, as oneTBB's task_group (a
// task_arena of concurrency 2: the caller takes part in the wait, as
// dagrt's main thread does) and as Taskflow's silent_async (an executor of
// 2 workers: the caller waits in wait_for_all and runs no task, the form
// bench_frame's Taskflow rows use). Each built only where its library is
// (HAVE_TBB, HAVE_TASKFLOW); the calls return the elapsed nanoseconds of
// `inner` rounds.
#include <cstddef>
#include <cstdint>
#include <ctime>

#ifdef HAVE_TBB
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif
#ifdef HAVE_TASKFLOW
#include <taskflow/taskflow.hpp>
#endif

#if defined(HAVE_TBB) || defined(HAVE_TASKFLOW)
static uint64_t now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}
#endif

extern "C" {
int bb_tbb_setup(int threads);
uint64_t bb_tbb_loop(size_t n, int inner);
void bb_tbb_teardown(void);
int bb_tf_setup(int threads);
uint64_t bb_tf_loop(size_t n, int inner);
void bb_tf_teardown(void);
}

#ifdef HAVE_TBB
static tbb::task_arena *arena;
int bb_tbb_setup(int threads)
{
    arena = new tbb::task_arena(threads);
    arena->initialize();
    return 1;
}
uint64_t bb_tbb_loop(size_t n, int inner)
{
    uint64_t t0 = 0, t1 = 0;
    arena->execute([&] {
        t0 = now_ns();
        for (int i = 0; i < inner; i++) {
            tbb::task_group g;
            for (size_t j = 0; j < n; j++)
                g.run([] {});
            g.wait();
        }
        t1 = now_ns();
    });
    return t1 - t0;
}
void bb_tbb_teardown(void) { delete arena; }
#else
int bb_tbb_setup(int) { return 0; }
uint64_t bb_tbb_loop(size_t, int) { return 0; }
void bb_tbb_teardown(void) {}
#endif

#ifdef HAVE_TASKFLOW
static tf::Executor *executor;
int bb_tf_setup(int threads)
{
    executor = new tf::Executor(static_cast<size_t>(threads));
    return 1;
}
uint64_t bb_tf_loop(size_t n, int inner)
{
    uint64_t t0 = now_ns();
    for (int i = 0; i < inner; i++) {
        for (size_t j = 0; j < n; j++)
            executor->silent_async([] {});
        executor->wait_for_all();
    }
    return now_ns() - t0;
}
void bb_tf_teardown(void) { delete executor; }
#else
int bb_tf_setup(int) { return 0; }
uint64_t bb_tf_loop(size_t, int) { return 0; }
void bb_tf_teardown(void) {}
#endif
