/*
 * dagrt_jolt.cpp - JPH::JobSystem on libdagrt (see dagrt_jolt.h).
 */
#include "dagrt_jolt.h"

#include <thread>

namespace dagrt_jolt {

JobSystem::JobSystem(dagrt *rt, JPH::uint maxJobs, JPH::uint maxBarriers)
    : JPH::JobSystemWithBarrier(maxBarriers), rt_(rt), tasks_(new dagrt_group)
{
    dagrt_group_init(tasks_);
    jobs_.Init(maxJobs, maxJobs);   /* one page: the whole pool up front */
}

JobSystem::~JobSystem()
{
    (void)dagrt_group_wait(rt_, tasks_);   /* heap group: cannot fail */
    delete tasks_;
}

int JobSystem::GetMaxConcurrency() const
{
    int w = dagrt_worker_count(rt_);
    return w > 0 ? w + 1 : 1;
}

JobSystem::JobHandle JobSystem::CreateJob(const char *inName, JPH::ColorArg inColor,
                                          const JobFunction &inJobFunction, JPH::uint32 inNumDependencies)
{
    JPH::uint32 index;
    for (;;) {
        index = jobs_.ConstructObject(inName, inColor, this, inJobFunction, inNumDependencies);
        if (index != decltype(jobs_)::cInvalidObjectIndex)
            break;
        /* Every job of the pool is alive: wait for one to be freed (Jolt's
         * own pool does the same). Size maxJobs so this never happens. */
        full_.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::yield();
    }
    Job *job = &jobs_.Get(index);
    JobHandle handle(job);   /* our reference first: the job may finish at once */
    if (inNumDependencies == 0)
        QueueJob(job);
    return handle;
}

void JobSystem::run(void *p)
{
    Job *job = static_cast<Job *>(p);
    job->Execute();
    job->Release();   /* QueueJob's reference */
}

void JobSystem::QueueJob(Job *inJob)
{
    inJob->AddRef();   /* kept until the task has run it */
    if (dagrt_spawn(rt_, tasks_, run, inJob) == 0) {
        spawned_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    inline_.fetch_add(1, std::memory_order_relaxed);
    run(inJob);   /* no descriptor: run it here rather than lose it */
}

void JobSystem::QueueJobs(Job **inJobs, JPH::uint inNumJobs)
{
    for (JPH::uint i = 0; i < inNumJobs; i++)
        QueueJob(inJobs[i]);
}

void JobSystem::FreeJob(Job *inJob)
{
    jobs_.DestructObject(inJob);
}

} // namespace dagrt_jolt
