// bench_taskflow.cpp - the frame graph on Taskflow (the header-only library,
// from the package cache: bench/frame/README.md). An executor of 2 workers;
// the calling thread waits on a future and runs no task, so the two
// workers are the task threads.
//
// One frame at a time: its best form for a graph run again and again, a
// tf::Taskflow of 32 tasks built once and run_n(taskflow, n): the input
// task starts each run's frame. Frames in flight (the ring, bench_peers.h):
// each frame's 32 nodes as dependent_async tasks, node i after its
// predecessors in the frame and after node i of the frame before; the
// caller waits for present of frame f - BENCH_RING_DEPTH (its future)
// before it submits frame f.
#include <taskflow/taskflow.hpp>

#include <array>
#include <future>
#include <memory>

#include "bench_peers.h"

namespace {
struct tf_bench {
    tf::Executor ex;
    tf::Taskflow flow;
    struct bench_ctx *c;

    tf_bench(struct bench_ctx *ctx, int threads) : ex(static_cast<size_t>(threads)), c(ctx)
    {
        std::array<tf::Task, BENCH_NODES> t;
        for (int i = 0; i < BENCH_NODES; i++)
            t[i] = i == 0 ? flow.emplace([this] { bench_frame_advance(c); bench_body(c, 0); })
                          : flow.emplace([this, i] { bench_body(c, i); });
        for (int i = 0; i < BENCH_NODES; i++)
            for (int k = 0; k < 2; k++)
                if (bench_preds[i][k] >= 0)
                    t[bench_preds[i][k]].precede(t[i]);
    }

    void ring(struct bench_ctx *ctx, long n)
    {
        const int D = BENCH_RING_DEPTH;
        std::array<tf::AsyncTask, BENCH_NODES> last, cur;   // frame f - 1's nodes, frame f's
        std::array<std::future<void>, D> done;              // present of the frames in flight
        for (long f = 0; f < n; f++) {
            struct bench_ctx *s = bench_pipe_next(ctx);
            if (done[f % D].valid())
                done[f % D].wait();   // frame f - D ended
            for (int i = 0; i < BENCH_NODES - 1; i++) {
                auto body = [s, i] { bench_node(s, i); };
                int a = bench_preds[i][0], b = bench_preds[i][1];
                if (f == 0)
                    cur[i] = a < 0 ? ex.silent_dependent_async(body)
                           : b < 0 ? ex.silent_dependent_async(body, cur[a])
                                   : ex.silent_dependent_async(body, cur[a], cur[b]);
                else
                    cur[i] = a < 0 ? ex.silent_dependent_async(body, last[i])
                           : b < 0 ? ex.silent_dependent_async(body, last[i], cur[a])
                                   : ex.silent_dependent_async(body, last[i], cur[a], cur[b]);
            }
            const int p = BENCH_NODES - 1, a = bench_preds[p][0], b = bench_preds[p][1];
            auto present = [s] { bench_node(s, BENCH_NODES - 1); };
            auto r = f == 0 ? ex.dependent_async(present, cur[a], cur[b])
                            : ex.dependent_async(present, last[p], cur[a], cur[b]);
            cur[p] = r.first;
            done[f % D] = std::move(r.second);
            last = cur;
        }
        ex.wait_for_all();
    }
};
tf_bench *the_bench;
} // namespace

extern "C" void bench_tf_setup(struct bench_ctx *c, int threads);
extern "C" void bench_tf_frames(struct bench_ctx *c, long n);
extern "C" void bench_tf_ring(struct bench_ctx *c, long n);
extern "C" void bench_tf_teardown(void);

extern "C" void bench_tf_setup(struct bench_ctx *c, int threads) { the_bench = new tf_bench(c, threads); }

extern "C" void bench_tf_frames(struct bench_ctx *c, long n)
{
    (void)c;   // the taskflow's input task advances the context it was built with
    if (n > 0)
        the_bench->ex.run_n(the_bench->flow, static_cast<size_t>(n)).wait();
}

extern "C" void bench_tf_ring(struct bench_ctx *c, long n) { the_bench->ring(c, n); }

extern "C" void bench_tf_teardown(void)
{
    delete the_bench;
    the_bench = nullptr;
}
