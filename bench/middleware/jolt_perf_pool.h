/* jolt_perf_pool.h - force-included (-include) into Jolt's
 * PerformanceTest.cpp for the jolt_perf_dagrt build: after Jolt's own
 * header has been read once (#pragma once), JobSystemThreadPool means a
 * dagrt_jolt::JobSystem on a libdagrt runtime of its own with the same
 * number of workers (Jolt's count of threads besides the caller), created
 * and destroyed with it, so the app's timing loop is unchanged. */
#pragma once
#include <Jolt/Jolt.h>

#include <Jolt/Core/JobSystemThreadPool.h>

#include <cstdio>
#include <cstdlib>

#include "dagrt_jolt.h"

namespace dagrt_jolt_perf {

inline dagrt *make_runtime(int workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers < 0 ? DAGRT_WORKERS_AUTO : workers;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        std::fprintf(stderr, "jolt_perf_dagrt: dagrt_create failed\n");
        std::exit(1);
    }
    return rt;
}

/* The runtime first (a base), so it outlives the job system built on it. */
struct Runtime {
    dagrt *rt;
    explicit Runtime(int workers) : rt(make_runtime(workers)) {}
    ~Runtime() { dagrt_destroy(rt); }
};

class ThreadPool : private Runtime, public dagrt_jolt::JobSystem {
public:
    ThreadPool(JPH::uint inMaxJobs, JPH::uint inMaxBarriers, int inNumThreads = -1)
        : Runtime(inNumThreads), dagrt_jolt::JobSystem(Runtime::rt, inMaxJobs, inMaxBarriers) {}
};

} // namespace dagrt_jolt_perf

#define JobSystemThreadPool dagrt_jolt_perf::ThreadPool
