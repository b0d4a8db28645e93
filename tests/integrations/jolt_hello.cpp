/* jolt_hello.cpp - a HelloWorld-like Jolt scene (a floor and a pile of
 * falling spheres and boxes) stepped with Jolt's own JobSystemThreadPool
 * and with dagrt_jolt::JobSystem at 0-3 workers, and from an
 * engine thread attached as a guest: every run must bring every body to
 * the same resting position and rotation, bit for bit (Jolt is
 * deterministic across job systems and thread counts) after the same
 * number of steps (300, or fewer if all sleep), the jobs must have
 * run on the pool (none inline, the job pool never full), and after the
 * warm steps the job system allocates nothing (JPH::Allocate counted: no
 * more than Jolt's own allocations with JobSystemThreadPool). */
#include <Jolt/Jolt.h>

#include <Jolt/Core/Factory.h>
#include <Jolt/Core/JobSystemThreadPool.h>
#include <Jolt/Core/Memory.h>
#include <Jolt/Core/TempAllocator.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Collision/BroadPhase/BroadPhaseLayerInterfaceTable.h>
#include <Jolt/Physics/Collision/BroadPhase/ObjectVsBroadPhaseLayerFilterTable.h>
#include <Jolt/Physics/Collision/ObjectLayerPairFilterTable.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/Physics/Collision/Shape/SphereShape.h>
#include <Jolt/Physics/PhysicsSystem.h>
#include <Jolt/RegisterTypes.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "dagrt_jolt.h"
#include "scenario.h"

using namespace JPH;

namespace {

constexpr ObjectLayer kStatic = 0, kMoving = 1;
constexpr int kBodies = 120;
constexpr int kWarmSteps = 30;
constexpr int kMaxSteps = 300;   /* or until every body sleeps */

/* Every allocation through Jolt's hooks, counted from the warm step on. */
std::atomic<bool> counting{false};
std::atomic<unsigned long> allocs{0};
void *count_alloc(size_t n)
{
    if (counting.load(std::memory_order_relaxed))
        allocs.fetch_add(1, std::memory_order_relaxed);   /* relaxed: read after the steps */
    return std::malloc(n);
}
void *count_realloc(void *p, size_t, size_t n)
{
    if (counting.load(std::memory_order_relaxed))
        allocs.fetch_add(1, std::memory_order_relaxed);
    return std::realloc(p, n);
}
void count_free(void *p) { std::free(p); }
void *count_aligned(size_t n, size_t a)
{
    if (counting.load(std::memory_order_relaxed))
        allocs.fetch_add(1, std::memory_order_relaxed);
    void *p = nullptr;
    return posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n) == 0 ? p : nullptr;
}
void count_aligned_free(void *p) { std::free(p); }

struct RunResult {
    int steps = 0;
    std::vector<float> state;   /* position and rotation of every body at rest */
    unsigned long warm_allocs = 0;
};

/* The scene, stepped until every body sleeps. */
RunResult simulate(JobSystem *jobs, bool count_allocs)
{
    BroadPhaseLayerInterfaceTable bp(2, 2);
    bp.MapObjectToBroadPhaseLayer(kStatic, BroadPhaseLayer(0));
    bp.MapObjectToBroadPhaseLayer(kMoving, BroadPhaseLayer(1));
    ObjectLayerPairFilterTable pairs(2);
    pairs.EnableCollision(kMoving, kStatic);
    pairs.EnableCollision(kMoving, kMoving);
    ObjectVsBroadPhaseLayerFilterTable ovb(bp, 2, pairs, 2);
    PhysicsSystem ps;
    ps.Init(1024, 0, 1024, 1024, bp, ovb, pairs);
    TempAllocatorImpl temp(8 * 1024 * 1024);
    BodyInterface &bi = ps.GetBodyInterface();
    bi.CreateAndAddBody(BodyCreationSettings(new BoxShape(Vec3(50.0f, 1.0f, 50.0f)), RVec3(0, -1, 0),
                                             Quat::sIdentity(), EMotionType::Static, kStatic),
                        EActivation::DontActivate);
    std::vector<BodyID> ids;
    for (int i = 0; i < kBodies; i++) {
        /* A loose grid of columns, each body a little off the one below,
         * so they collide with each other on the way to rest. */
        float x = float(i % 6) * 1.1f - 3.0f + 0.05f * float(i % 7);
        float z = float((i / 6) % 4) * 1.1f - 2.0f;
        float y = 1.0f + float(i / 24) * 1.3f;
        RefConst<Shape> shape = (i % 3 == 0) ? RefConst<Shape>(new BoxShape(Vec3::sReplicate(0.4f)))
                                             : RefConst<Shape>(new SphereShape(0.5f));
        BodyCreationSettings s(shape, RVec3(x, y, z), Quat::sRotation(Vec3::sAxisY(), 0.1f * float(i)),
                               EMotionType::Dynamic, kMoving);
        ids.push_back(bi.CreateAndAddBody(s, EActivation::Activate));
    }
    ps.OptimizeBroadPhase();
    RunResult r;
    for (; r.steps < kMaxSteps; r.steps++) {
        if (r.steps == kWarmSteps && count_allocs) {
            allocs.store(0, std::memory_order_relaxed);
            counting.store(true, std::memory_order_relaxed);
        }
        ps.Update(1.0f / 60.0f, 1, &temp, jobs);
        if (ps.GetNumActiveBodies(EBodyType::RigidBody) == 0)
            break;
    }
    counting.store(false, std::memory_order_relaxed);
    r.warm_allocs = allocs.load(std::memory_order_relaxed);
    for (BodyID id : ids) {
        RVec3 p = bi.GetCenterOfMassPosition(id);
        Quat q = bi.GetRotation(id);
        float v[7] = {float(p.GetX()), float(p.GetY()), float(p.GetZ()), q.GetX(), q.GetY(), q.GetZ(), q.GetW()};
        r.state.insert(r.state.end(), v, v + 7);
    }
    for (BodyID id : ids) {
        bi.RemoveBody(id);
        bi.DestroyBody(id);
    }
    return r;
}

int compare(const char *what, const RunResult &ref, const RunResult &got)
{
    bool same = got.steps == ref.steps && got.state.size() == ref.state.size() &&
                std::memcmp(got.state.data(), ref.state.data(), ref.state.size() * sizeof(float)) == 0;
    if (!same) {
        std::printf("jolt_hello: %s: at rest after %d steps, reference %d; bodies %s\n", what, got.steps,
                    ref.steps, got.state == ref.state ? "equal" : "differ");
        return 1;
    }
    return 0;
}

int check_pool(const char *what, const dagrt_jolt::JobSystem &js)
{
    if (js.spawned() == 0 || js.inline_runs() != 0 || js.pool_full() != 0) {
        std::printf("jolt_hello: %s: %lu jobs on the pool, %lu inline, %lu pool-full waits (want >0, 0, 0)\n",
                    what, js.spawned(), js.inline_runs(), js.pool_full());
        return 1;
    }
    return 0;
}

} // namespace

static int jolt_hello()
{
    Allocate = count_alloc;
    Reallocate = count_realloc;
    Free = count_free;
    AlignedAllocate = count_aligned;
    AlignedFree = count_aligned_free;
    Factory::sInstance = new Factory();
    RegisterTypes();
    int bad = 0;

    RunResult ref;
    {
        JobSystemThreadPool pool(cMaxPhysicsJobs, cMaxPhysicsBarriers, 2);
        ref = simulate(&pool, true);   /* Jolt's own allocations when warm: the bar */
    }
    std::printf("jolt_hello: JobSystemThreadPool (2 threads): %d steps, %lu allocations when warm\n",
                ref.steps, ref.warm_allocs);

    for (int workers : {0, 1, 2, 3}) {   /* 0: the main thread's waits run every job */
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers;
        dagrt *rt = dagrt_create(&cfg);
        if (!rt)
            return 1;
        unsigned long warm = 0;
        int b = 0;
        char what[64];
        std::snprintf(what, sizeof what, "libdagrt, %d workers", workers);
        {
            dagrt_jolt::JobSystem js(rt, cMaxPhysicsJobs, cMaxPhysicsBarriers);
            RunResult got = simulate(&js, true);
            warm = got.warm_allocs;
            b += compare(what, ref, got) + check_pool(what, js);
            if (warm > ref.warm_allocs) {
                std::printf("jolt_hello: %s: %lu allocations through Jolt's hooks after %d warm steps, "
                            "%lu with JobSystemThreadPool\n", what, warm, kWarmSteps, ref.warm_allocs);
                b++;
            }
            std::printf("jolt_hello: %s: %lu jobs on the pool: %s\n", what, js.spawned(), b ? "FAIL" : "ok");
        }
        dagrt_destroy(rt);
        bad += b;
    }

    /* An engine thread the runtime does not own steps the world, attached
     * as a guest: it queues the jobs on its own deque and runs them (and
     * any other ready task) while it waits. */
    {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = 1;
        cfg.guest_threads = 1;
        dagrt *rt = dagrt_create(&cfg);
        if (!rt)
            return 1;
        int b = 0;
        {
            dagrt_jolt::JobSystem js(rt, cMaxPhysicsJobs, cMaxPhysicsBarriers);
            RunResult got;
            int attach = -100, detach = -100;
            std::thread engine([&] {
                attach = dagrt_thread_attach(rt);
                got = simulate(&js, false);
                detach = dagrt_thread_detach(rt);
            });
            engine.join();
            if (attach != 2 || detach != 0) {
                std::printf("jolt_hello: guest: attach %d (want slot 2), detach %d\n", attach, detach);
                b++;
            }
            b += compare("guest thread + 1 worker", ref, got) + check_pool("guest thread + 1 worker", js);
            std::printf("jolt_hello: guest thread + 1 worker: %lu jobs on the pool: %s\n", js.spawned(),
                        b ? "FAIL" : "ok");
        }
        dagrt_destroy(rt);
        bad += b;
    }
    UnregisterTypes();
    delete Factory::sInstance;
    Factory::sInstance = nullptr;
    return bad ? 1 : 0;
}

/* Hosted by the plain driver (tests/scenario/driver.c). */
const scenario scenario_table[] = {
    {"jolt_hello", jolt_hello, nullptr},
    {nullptr, nullptr, nullptr},
};
