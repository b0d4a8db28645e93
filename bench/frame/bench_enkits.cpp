// bench_enkits.cpp - the frame graph on enkiTS (from the package cache:
// bench/frame/README.md), a scheduler of the caller + 1 task thread; the
// caller runs tasks while it waits.
//
// One frame at a time: its dependencies across task sets, 32 ITaskSets of
// size 1 built once, each with an enki::Dependency per predecessor;
// AddTaskSetToPipe(input) starts a frame and WaitforTask(present) waits for
// it (the launch marks every dependent as running first).
//
// Frames in flight (the ring, bench_peers.h): enkiTS's dependencies cannot
// link copies of the graph that are in flight at once (launching a task
// marks its dependents, and theirs, as running, also those of the frame
// still running beside it, and a ring of copies is a cycle it cannot walk),
// so the ring counts its joins itself, as enkiTS's CompletionAction
// example does: BENCH_RING_DEPTH copies of the 32 task sets, frame f on
// copy f % depth, and node i of a copy waits for its predecessors in the
// frame and for node i of the frame before (on the copy before it); a
// node's body ends by counting down its successors' joins and launching
// those that reach zero. The caller launches a frame's input once frame
// f - depth ended and every task set of its copy is complete again.
#include <TaskScheduler.h>

#include <atomic>
#include <memory>

#include "bench_peers.h"

namespace {
const int D = BENCH_RING_DEPTH;

struct enki_bench;

struct frame_node : enki::ITaskSet {
    struct bench_ctx *c = nullptr;
    int idx = 0;
    enki::Dependency dep[2];
    void ExecuteRange(enki::TaskSetPartition, uint32_t) override { bench_body(c, idx); }
};

struct ring_node : enki::ITaskSet {
    enki_bench *b = nullptr;
    int copy = 0, idx = 0;
    // Joins left before this node runs its copy's frame: predecessors in
    // the frame, node idx of the frame before, and for input the launch.
    std::atomic<int> join{0};
    int arm = 0;   // the join count of a frame
    void ExecuteRange(enki::TaskSetPartition, uint32_t) override;
};

struct enki_bench {
    enki::TaskScheduler ts;
    frame_node one[BENCH_NODES];
    ring_node ring[D][BENCH_NODES];
    int succ[BENCH_NODES][BENCH_NODES], nsucc[BENCH_NODES] = {};
    struct bench_ctx *slot[D] = {};
    std::atomic<long> ended{0};   // ring frames whose present ended
    long launched = 0;            // ring frames launched (the caller's)

    enki_bench(struct bench_ctx *c, int threads)
    {
        enki::TaskSchedulerConfig cfg;
        cfg.numTaskThreadsToCreate = static_cast<uint32_t>(threads - 1);
        ts.Initialize(cfg);
        for (int i = 0; i < BENCH_NODES; i++) {
            one[i].c = c;
            one[i].idx = i;
            for (int k = 0; k < 2; k++) {
                int p = bench_preds[i][k];
                if (p >= 0) {
                    one[i].SetDependency(one[i].dep[k], &one[p]);
                    succ[p][nsucc[p]++] = i;
                }
            }
        }
        for (int k = 0; k < D; k++)
            for (int i = 0; i < BENCH_NODES; i++) {
                ring_node &n = ring[k][i];
                n.b = this;
                n.copy = k;
                n.idx = i;
                n.arm = (bench_preds[i][0] >= 0) + (bench_preds[i][1] >= 0) + 1 + (i == 0);
                // Copy 0 runs the first frame: the frame before it ended.
                n.join.store(k == 0 ? n.arm - 1 : n.arm, std::memory_order_relaxed);
            }
    }

    ~enki_bench() { ts.WaitforAll(); }

    // One of a node's joins arrived; the last one re-arms it and launches
    // it. acq_rel: the last arrival sees every earlier one's frame (its
    // bodies' writes) and passes it on with its own.
    void arrive(ring_node &n)
    {
        if (n.join.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            // No join of the node's next frame can arrive before its body
            // here has ended (they all follow it), so re-arming now is safe.
            n.join.store(n.arm, std::memory_order_relaxed);
            ts.AddTaskSetToPipe(&n);
        }
    }

    void frames(struct bench_ctx *c, long n)
    {
        for (long f = 0; f < n; f++) {
            struct bench_ctx *s = bench_pipe_next(c);
            int k = static_cast<int>(launched % D);
            // acquire: pairs with present's release increment, so frame
            // f - D's bodies are done before its copy is reused.
            while (ended.load(std::memory_order_acquire) < launched - D + 1 || !copy_complete(k))
                ts.WaitforTask(nullptr);   // runs a task if there is one
            slot[k] = s;
            launched++;
            arrive(ring[k][0]);
        }
        while (ended.load(std::memory_order_acquire) < launched)
            ts.WaitforTask(nullptr);
    }

    bool copy_complete(int k)
    {
        for (int i = 0; i < BENCH_NODES; i++)
            if (!ring[k][i].GetIsComplete())
                return false;
        return true;
    }
};

void ring_node::ExecuteRange(enki::TaskSetPartition, uint32_t)
{
    bench_node(b->slot[copy], idx);
    for (int j = 0; j < b->nsucc[idx]; j++)
        b->arrive(b->ring[copy][b->succ[idx][j]]);
    b->arrive(b->ring[(copy + 1) % D][idx]);
    if (idx == BENCH_NODES - 1)
        b->ended.fetch_add(1, std::memory_order_release);   // pairs with frames()'s acquire
}

enki_bench *the_bench;
} // namespace

extern "C" void bench_enki_setup(struct bench_ctx *c, int threads);
extern "C" void bench_enki_frames(struct bench_ctx *c, long n);
extern "C" void bench_enki_ring(struct bench_ctx *c, long n);
extern "C" void bench_enki_teardown(void);

extern "C" void bench_enki_setup(struct bench_ctx *c, int threads) { the_bench = new enki_bench(c, threads); }

extern "C" void bench_enki_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        bench_frame_advance(c);
        the_bench->ts.AddTaskSetToPipe(&the_bench->one[0]);
        the_bench->ts.WaitforTask(&the_bench->one[BENCH_NODES - 1]);
    }
}

extern "C" void bench_enki_ring(struct bench_ctx *c, long n) { the_bench->frames(c, n); }

extern "C" void bench_enki_teardown(void)
{
    delete the_bench;
    the_bench = nullptr;
}
