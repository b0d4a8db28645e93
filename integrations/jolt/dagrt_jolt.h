/*
 * dagrt_jolt.h - Jolt Physics' JPH::JobSystem on libdagrt: Jolt's jobs run
 * as libdagrt tasks on the engine's one pool (docs/runtime.md, "Middleware
 * on the same pool"). C++17, compiled with the engine's Jolt.
 *
 *     dagrt_jolt::JobSystem jobs(rt, JPH::cMaxPhysicsJobs, JPH::cMaxPhysicsBarriers);
 *     JPH::TempAllocatorImpl temp(10 * 1024 * 1024);     // left to Jolt
 *     physics_system.Update(dt, 1, &temp, &jobs);
 *
 * Jobs come from a fixed pool of maxJobs (Jolt's own FixedSizeFreeList, as
 * its JobSystemThreadPool does), so nothing is allocated per job once
 * warm: a job whose dependencies reach zero is spawned as one task (the
 * runtime's descriptor pools), which runs it and drops its reference.
 *
 * Barriers are the adapter's own (a fixed array of maxBarriers, made at
 * construction): a barrier counts the jobs added to it and not finished,
 * and the last one to finish sets the barrier's dagrt_event. WaitForJobs
 * is a helping dagrt_event_wait: the waiting thread runs the runtime's
 * ready tasks (the barrier's jobs, and any other ready work of the pool)
 * until the count is zero, so it works with 0 workers too (the waiter
 * then runs every job itself). From a thread the runtime does not own,
 * WaitForJobs takes a guest slot for the wait when one is free
 * (cfg.guest_threads; better: attach the thread for the whole step). A
 * fiber task's wait suspends instead. Its destructor waits for the tasks
 * it spawned; the runtime must outlive the job system.
 */
#ifndef DAGRT_JOLT_H
#define DAGRT_JOLT_H

#include <Jolt/Jolt.h>

#include <Jolt/Core/FixedSizeFreeList.h>
#include <Jolt/Core/JobSystem.h>

#include <atomic>

#include "dagrt.hpp"

namespace dagrt_jolt {

class JobSystem : public JPH::JobSystem {
public:
    JPH_OVERRIDE_NEW_DELETE

    /* rt: the pool (not owned). maxJobs: jobs alive at once (Jolt's
     * cMaxPhysicsJobs for a physics system); maxBarriers: barriers alive
     * at once (cMaxPhysicsBarriers). */
    JobSystem(dagrt *rt, JPH::uint maxJobs, JPH::uint maxBarriers);
    /* Waits until every task it spawned has returned (a task drops its
     * job's reference after the job reports done). */
    ~JobSystem() override;

    /* The threads that run jobs: the workers and the thread that waits. */
    int GetMaxConcurrency() const override;
    JobHandle CreateJob(const char *inName, JPH::ColorArg inColor, const JobFunction &inJobFunction,
                        JPH::uint32 inNumDependencies = 0) override;
    /* nullptr when all maxBarriers are in use (as Jolt's own). */
    Barrier *CreateBarrier() override;
    void DestroyBarrier(Barrier *inBarrier) override;
    /* Helps until every job added to the barrier has finished. */
    void WaitForJobs(Barrier *inBarrier) override;

    dagrt *runtime() const { return rt_; }
    /* Statistics (any thread): jobs spawned on the pool; jobs run inside
     * QueueJob because the runtime had no descriptor; CreateJob calls that
     * found the job pool full and waited; WaitForJobs calls made from a
     * thread outside the runtime that found no free guest slot (they
     * block instead of helping). */
    unsigned long spawned() const { return spawned_.load(std::memory_order_relaxed); }
    unsigned long inline_runs() const { return inline_.load(std::memory_order_relaxed); }
    unsigned long pool_full() const { return full_.load(std::memory_order_relaxed); }
    unsigned long blocked_waits() const { return blocked_.load(std::memory_order_relaxed); }

protected:
    void QueueJob(Job *inJob) override;
    void QueueJobs(Job **inJobs, JPH::uint inNumJobs) override;
    void FreeJob(Job *inJob) override;

private:
    class Gate;   /* the barrier (dagrt_jolt.cpp) */

    dagrt *rt_;
    dagrtpp::group *tasks_;   /* counts the spawned tasks; off any stack (heap, once) */
    JPH::FixedSizeFreeList<Job> jobs_;
    Gate *gates_;          /* maxBarriers of them, made once */
    JPH::uint ngates_;
    /* relaxed everywhere: statistics, read by tests after the work they
     * count was waited for. */
    std::atomic<unsigned long> spawned_{0}, inline_{0}, full_{0}, blocked_{0};
};

} // namespace dagrt_jolt

#endif
