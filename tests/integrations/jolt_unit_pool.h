/* jolt_unit_pool.h - force-included (-include) into the two files of
 * Jolt's UnitTests that name JobSystemThreadPool (PhysicsTestContext.cpp,
 * Core/JobSystemTest.cpp): after Jolt's own header has been read once
 * (#pragma once), the name means a dagrt_jolt::JobSystem on one libdagrt
 * pool shared by every test, with the same constructor. So Jolt's tests
 * run their physics with every job on libdagrt, unchanged. */
#pragma once
#include <Jolt/Jolt.h>

#include <Jolt/Core/JobSystemThreadPool.h>

#include "dagrt_jolt.h"

namespace dagrt_jolt_test {

/* The pool: 2 workers, created by the first test that asks (doctest runs
 * every test on the main thread, which becomes the runtime's). */
dagrt *shared_runtime();
/* Jobs that ran on it, summed over the job systems the tests made. */
void count_jobs(unsigned long n);

class ThreadPool : public dagrt_jolt::JobSystem {
public:
    ThreadPool(JPH::uint inMaxJobs, JPH::uint inMaxBarriers, int inNumThreads = -1)
        : dagrt_jolt::JobSystem(shared_runtime(), inMaxJobs, inMaxBarriers)
    {
        (void)inNumThreads;   /* one pool for all: the tests' thread counts name its size, not a new pool */
    }
    ~ThreadPool() override { count_jobs(spawned()); }
};

} // namespace dagrt_jolt_test

#define JobSystemThreadPool dagrt_jolt_test::ThreadPool
