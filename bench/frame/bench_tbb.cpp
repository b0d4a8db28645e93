// bench_tbb.cpp - the frame graph as a oneTBB flow graph: a broadcast_node
// start and 32 continue_nodes, built once; each frame is try_put +
// wait_for_all. global_control caps parallelism at 2: the calling thread
// takes part in wait_for_all, so it is one of the two.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <memory>
#include <vector>

// bench_body.h is C11 (atomics); C++ needs only these two of its names.
#define BENCH_NODES 32
struct bench_ctx;
extern "C" void bench_body(struct bench_ctx *c, int idx);
extern "C" const int bench_preds[BENCH_NODES][2];
extern "C" void bench_frame_advance(struct bench_ctx *c);

namespace flow = oneapi::tbb::flow;

namespace {
struct tbb_bench {
    oneapi::tbb::global_control gc;
    flow::graph g;
    flow::broadcast_node<flow::continue_msg> start;
    std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> nodes;

    tbb_bench(struct bench_ctx *c, int threads)
        : gc(oneapi::tbb::global_control::max_allowed_parallelism, threads), start(g)
    {
        for (int i = 0; i < BENCH_NODES; i++)
            nodes.emplace_back(new flow::continue_node<flow::continue_msg>(
                g, [c, i](const flow::continue_msg &) { bench_body(c, i); }));
        for (int i = 0; i < BENCH_NODES; i++) {
            if (bench_preds[i][0] < 0)
                flow::make_edge(start, *nodes[i]);
            for (int k = 0; k < 2; k++)
                if (bench_preds[i][k] >= 0)
                    flow::make_edge(*nodes[bench_preds[i][k]], *nodes[i]);
        }
    }
};
tbb_bench *the_bench;
} // namespace

extern "C" void bench_tbb_setup(struct bench_ctx *c, int threads);
extern "C" void bench_tbb_frames(struct bench_ctx *c, long n);
extern "C" void bench_tbb_teardown(void);

extern "C" void bench_tbb_setup(struct bench_ctx *c, int threads) { the_bench = new tbb_bench(c, threads); }

extern "C" void bench_tbb_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        bench_frame_advance(c);
        the_bench->start.try_put(flow::continue_msg());
        the_bench->g.wait_for_all();
    }
}

extern "C" void bench_tbb_teardown(void)
{
    delete the_bench;
    the_bench = nullptr;
}
