// shape_taskflow.cpp - the uneven frames (shapes.h) on Taskflow, in the
// forms bench_taskflow.cpp gives the uniform frame: an executor of
// `threads` workers (the caller waits and runs no task). One frame at a
// time: a tf::Taskflow of the expanded graph's tasks, built once, run with
// run_n; the root task advances the frame. Frames in flight (depth 2): each
// frame's tasks as dependent_async tasks, xnode x after its predecessors in
// the frame and after xnode x of the frame before; the caller waits for the
// sink of frame f - 2 before it submits frame f. `on main` has no meaning
// here: those tasks run on any worker.
#include <taskflow/taskflow.hpp>

#include <array>
#include <future>
#include <vector>

#include "shapes.h"

namespace {
struct tf_shape {
    tf::Executor ex;
    tf::Taskflow flow;
    struct shape_ctx *c;

    tf_shape(struct shape_ctx *ctx, int threads) : ex(static_cast<size_t>(threads)), c(ctx)
    {
        const int n = shape_xg.n;
        std::vector<tf::Task> t(static_cast<size_t>(n));
        for (int x = 0; x < n; x++)
            t[x] = x == 0 ? flow.emplace([this] { shape_frame_advance(c); shape_xnode(c, 0); })
                          : flow.emplace([this, x] { shape_xnode(c, x); });
        for (int x = 0; x < n; x++)
            for (int k = 0; k < shape_xg.npred[x]; k++)
                t[shape_xg.pred[x][k]].precede(t[x]);
    }

    void ring(struct shape_ctx *ctx, long n)
    {
        const int D = 2, N = shape_xg.n;
        std::vector<tf::AsyncTask> last(static_cast<size_t>(N)), cur(static_cast<size_t>(N)), deps;
        std::array<std::future<void>, D> done;   // the sinks of the frames in flight
        deps.reserve(SHAPE_MAX_XPREDS + 1);
        for (long f = 0; f < n; f++) {
            struct shape_ctx *s = shape_pipe_next(ctx);
            if (done[f % D].valid())
                done[f % D].wait();   // frame f - D ended
            for (int x = 0; x < N; x++) {
                deps.clear();
                if (f > 0)
                    deps.push_back(last[x]);
                for (int k = 0; k < shape_xg.npred[x]; k++)
                    deps.push_back(cur[shape_xg.pred[x][k]]);
                auto body = [s, x] { shape_xnode(s, x); };
                if (x < N - 1) {
                    cur[x] = ex.silent_dependent_async(body, deps.begin(), deps.end());
                } else {
                    auto r = ex.dependent_async(body, deps.begin(), deps.end());
                    cur[x] = r.first;
                    done[f % D] = std::move(r.second);
                }
            }
            last.swap(cur);
        }
        ex.wait_for_all();
    }
};
tf_shape *the_shape;
} // namespace

extern "C" void shape_tf_setup(struct shape_ctx *c, int threads) { the_shape = new tf_shape(c, threads); }

extern "C" void shape_tf_frames(struct shape_ctx *c, long n)
{
    (void)c;   // the root task advances the context the taskflow was built with
    if (n > 0)
        the_shape->ex.run_n(the_shape->flow, static_cast<size_t>(n)).wait();
}

extern "C" void shape_tf_ring(struct shape_ctx *c, long n) { the_shape->ring(c, n); }

extern "C" void shape_tf_teardown(void)
{
    delete the_shape;
    the_shape = nullptr;
}
