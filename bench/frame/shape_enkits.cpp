// shape_enkits.cpp - the uneven frames (shapes.h) on enkiTS, in the forms
// bench_enkits.cpp gives the uniform frame (its comment says why the ring
// counts its own joins): a scheduler of the caller + threads - 1 task
// threads. One frame at a time: an ITaskSet of size 1 per xnode with an
// enki::Dependency per predecessor, the root launched and the sink waited
// for. Frames in flight (depth 2): two copies of the task sets, xnode x of
// a copy waiting for its predecessors and for xnode x of the frame before,
// each body counting down its successors' joins. `on main` has no meaning
// here: those tasks run on any thread.
#include <TaskScheduler.h>

#include <atomic>
#include <memory>

#include "shapes.h"

namespace {
const int D = 2;

struct enki_shape;

struct frame_node : enki::ITaskSet {
    struct shape_ctx *c = nullptr;
    int x = 0;
    enki::Dependency dep[SHAPE_MAX_XPREDS];
    void ExecuteRange(enki::TaskSetPartition, uint32_t) override { shape_xnode(c, x); }
};

struct ring_node : enki::ITaskSet {
    enki_shape *b = nullptr;
    int copy = 0, x = 0;
    std::atomic<int> join{0};
    int arm = 0;
    void ExecuteRange(enki::TaskSetPartition, uint32_t) override;
};

struct enki_shape {
    enki::TaskScheduler ts;
    frame_node one[SHAPE_MAX_X];
    ring_node ring[D][SHAPE_MAX_X];
    struct shape_ctx *slot[D] = {};
    std::atomic<long> ended{0};
    long launched = 0;
    int n = 0;

    enki_shape(struct shape_ctx *c, int threads)
    {
        enki::TaskSchedulerConfig cfg;
        cfg.numTaskThreadsToCreate = static_cast<uint32_t>(threads > 1 ? threads - 1 : 0);
        ts.Initialize(cfg);
        n = shape_xg.n;
        for (int x = 0; x < n; x++) {
            one[x].c = c;
            one[x].x = x;
            for (int k = 0; k < shape_xg.npred[x]; k++)
                one[x].SetDependency(one[x].dep[k], &one[shape_xg.pred[x][k]]);
        }
        for (int k = 0; k < D; k++)
            for (int x = 0; x < n; x++) {
                ring_node &r = ring[k][x];
                r.b = this;
                r.copy = k;
                r.x = x;
                r.arm = shape_xg.npred[x] + 1 + (x == 0);
                r.join.store(k == 0 ? r.arm - 1 : r.arm, std::memory_order_relaxed);
            }
    }

    ~enki_shape() { ts.WaitforAll(); }

    // acq_rel: the last arrival sees every earlier one's frame and passes
    // it on with its own (bench_enkits.cpp).
    void arrive(ring_node &r)
    {
        if (r.join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            r.join.store(r.arm, std::memory_order_relaxed);
            ts.AddTaskSetToPipe(&r);
        }
    }

    bool copy_complete(int k)
    {
        for (int x = 0; x < n; x++)
            if (!ring[k][x].GetIsComplete())
                return false;
        return true;
    }

    void frames(struct shape_ctx *c, long nf)
    {
        for (long f = 0; f < nf; f++) {
            struct shape_ctx *s = shape_pipe_next(c);
            int k = static_cast<int>(launched % D);
            // acquire: pairs with the sink's release increment.
            while (ended.load(std::memory_order_acquire) < launched - D + 1 || !copy_complete(k))
                ts.WaitforTask(nullptr);
            slot[k] = s;
            launched++;
            arrive(ring[k][0]);
        }
        while (ended.load(std::memory_order_acquire) < launched)
            ts.WaitforTask(nullptr);
    }
};

void ring_node::ExecuteRange(enki::TaskSetPartition, uint32_t)
{
    shape_xnode(b->slot[copy], x);
    for (int j = 0; j < shape_xg.nsucc[x]; j++)
        b->arrive(b->ring[copy][shape_xg.succ[x][j]]);
    b->arrive(b->ring[(copy + 1) % D][x]);
    if (x == b->n - 1)
        b->ended.fetch_add(1, std::memory_order_release);   // pairs with frames()'s acquire
}

enki_shape *the_shape;
} // namespace

extern "C" void shape_enki_setup(struct shape_ctx *c, int threads) { the_shape = new enki_shape(c, threads); }

extern "C" void shape_enki_frames(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        shape_frame_advance(c);
        the_shape->ts.AddTaskSetToPipe(&the_shape->one[0]);
        the_shape->ts.WaitforTask(&the_shape->one[the_shape->n - 1]);
    }
}

extern "C" void shape_enki_ring(struct shape_ctx *c, long n) { the_shape->frames(c, n); }

extern "C" void shape_enki_teardown(void)
{
    delete the_shape;
    the_shape = nullptr;
}
