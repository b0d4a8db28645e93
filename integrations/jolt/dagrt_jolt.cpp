/*
 * dagrt_jolt.cpp - JPH::JobSystem on libdagrt (see dagrt_jolt.h).
 *
 * THE BARRIER (Gate). `pending` counts the jobs added and not finished.
 * add() counts a job before it sets itself as the job's barrier, so the
 * job's finish (OnJobFinished, after Jolt's Job::Execute read the barrier
 * pointer) always finds it counted; a job that had finished already
 * (SetBarrier refused) is uncounted at once. Whoever brings the count to
 * zero sets `done`. The count may touch zero before the waiter arrives
 * (a job finished before the next one was added) and a set may come late
 * from a gate's previous use, so the waiter never trusts the event alone:
 * it resets it, then reads the count, and waits only while it is not zero.
 * set and reset take the event's lock, which orders them: a set before
 * the reset means its zero is visible to the read after the reset; a set
 * after it leaves the event set for the wait. Gates live in one array
 * for the job system's lifetime, and a late setter runs inside a task
 * the destructor waits for, so a gate's event outlives every call on it.
 * Model: tests/models/jolt_gate.pml (with its two negative controls).
 */
#include "dagrt_jolt.h"

#include <thread>

namespace dagrt_jolt {

class JobSystem::Gate : public JPH::JobSystem::Barrier {
public:
    JPH_OVERRIDE_NEW_DELETE

    Gate() = default;
    ~Gate() override = default;

    void AddJob(const JobHandle &inJob) override { add(inJob.GetPtr()); }
    void AddJobs(const JobHandle *inHandles, JPH::uint inNumHandles) override
    {
        for (JPH::uint i = 0; i < inNumHandles; i++)
            add(inHandles[i].GetPtr());
    }

    /* Helps (runs the runtime's ready tasks) until every job added is
     * done; see the file's comment for why the loop. */
    void wait(dagrt *rt)
    {
        for (;;) {
            /* acquire: pairs with drop's release, so the finished jobs'
             * writes are visible once the count reads zero. */
            if (pending.load(std::memory_order_acquire) == 0)
                return;
            done.reset();
            if (pending.load(std::memory_order_acquire) == 0)   /* acquire: as above */
                return;
            (void)done.wait(rt);   /* helps; an initialised event: cannot fail */
        }
    }

    bool idle() const { return pending.load(std::memory_order_relaxed) == 0; }   /* relaxed: a check after the wait */

    std::atomic<bool> in_use{false};

protected:
    void OnJobFinished(Job *) override
    {
        /* acquire fence: with add()'s release fence, around Jolt's relaxed
         * barrier pointer, makes add()'s count happen before this drop. */
        std::atomic_thread_fence(std::memory_order_acquire);
        drop();
    }

private:
    void add(Job *job)
    {
        /* relaxed: ordered before SetBarrier's store by the fence below. */
        pending.fetch_add(1, std::memory_order_relaxed);
        /* release fence: pairs with OnJobFinished's acquire fence (the
         * finisher read the pointer SetBarrier stores). */
        std::atomic_thread_fence(std::memory_order_release);
        if (!job->SetBarrier(this))
            drop();   /* finished already: never calls OnJobFinished */
    }

    void drop()
    {
        /* acq_rel: release publishes the job's effects to the waiter's
         * acquire load; acquire orders the set after every other drop. */
        if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
            done.set();
    }

    std::atomic<int> pending{0};
    dagrtpp::event done;
};

JobSystem::JobSystem(dagrt *rt, JPH::uint maxJobs, JPH::uint maxBarriers)
    : rt_(rt), tasks_(new dagrtpp::group), gates_(new Gate[maxBarriers]), ngates_(maxBarriers)
{
    jobs_.Init(maxJobs, maxJobs);   /* one page: the whole pool up front */
}

JobSystem::~JobSystem()
{
    (void)tasks_->wait(rt_);   /* heap group: cannot fail */
    delete tasks_;
    delete[] gates_;
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

JobSystem::Barrier *JobSystem::CreateBarrier()
{
    for (JPH::uint i = 0; i < ngates_; i++) {
        bool no = false;
        /* acquire: pairs with DestroyBarrier's release, so the previous
         * user's calls on the gate happen before ours. */
        if (gates_[i].in_use.compare_exchange_strong(no, true, std::memory_order_acquire,
                                                     std::memory_order_relaxed))
            return &gates_[i];
    }
    return nullptr;
}

void JobSystem::DestroyBarrier(Barrier *inBarrier)
{
    Gate *g = static_cast<Gate *>(inBarrier);
    JPH_ASSERT(g->idle());   /* Jolt's rule: wait for its jobs first */
    g->in_use.store(false, std::memory_order_release);   /* release: see CreateBarrier */
}

void JobSystem::WaitForJobs(Barrier *inBarrier)
{
    /* A thread the runtime does not own takes a guest slot for the wait,
     * so that its wait helps; with none free it blocks until the pool
     * has run the jobs. */
    bool attached = false;
    if (dagrt_thread_index(rt_) < 0) {
        attached = dagrt_thread_attach(rt_) >= 0;
        if (!attached)
            blocked_.fetch_add(1, std::memory_order_relaxed);
    }
    static_cast<Gate *>(inBarrier)->wait(rt_);
    if (attached)
        (void)dagrt_thread_detach(rt_);   /* outside any task: cannot be refused */
}

void JobSystem::QueueJob(Job *inJob)
{
    inJob->AddRef();   /* kept until the task has run it */
    auto run = [inJob] {
        inJob->Execute();
        inJob->Release();   /* QueueJob's reference */
    };
    if (!dagrtpp::spawn(rt_, *tasks_, run)) {   /* a pointer's lambda: no allocation */
        spawned_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    inline_.fetch_add(1, std::memory_order_relaxed);
    run();   /* no descriptor: run it here rather than lose it */
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
