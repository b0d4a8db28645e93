// shape_tbb.cpp - the uneven frames (shapes.h) as oneTBB flow graphs, in
// the forms bench_tbb.cpp gives the uniform frame (its comment says how the
// ring works): a broadcast_node start and a continue_node per xnode, built
// once, each frame try_put + wait_for_all; the ring of depth 2 is two
// copies of the graph with edges from each xnode to the same xnode of the
// next copy, and a gate and launcher per copy. global_control caps
// parallelism at `threads` (the caller takes part in wait_for_all). `on
// main` has no meaning here: those tasks run on any thread.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <memory>
#include <tuple>
#include <vector>

#include "shapes.h"

namespace flow = oneapi::tbb::flow;
using msg = flow::continue_msg;
using node = flow::continue_node<msg>;
using launcher = flow::multifunction_node<msg, std::tuple<msg>>;

namespace {
struct tbb_shape {
    oneapi::tbb::global_control gc;
    flow::graph g;
    flow::broadcast_node<msg> start;
    std::vector<std::unique_ptr<node>> nodes;

    tbb_shape(struct shape_ctx *c, int threads)
        : gc(oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads)), start(g)
    {
        for (int x = 0; x < shape_xg.n; x++)
            nodes.emplace_back(new node(g, [c, x](const msg &) { shape_xnode(c, x); }));
        flow::make_edge(start, *nodes[0]);
        for (int x = 0; x < shape_xg.n; x++)
            for (int k = 0; k < shape_xg.npred[x]; k++)
                flow::make_edge(*nodes[shape_xg.pred[x][k]], *nodes[x]);
    }
};
tbb_shape *the_shape;

struct tbb_ring {
    static const int D = 2;
    flow::graph g;
    struct shape_ctx *c = nullptr;
    long left = 0;
    int next = 0;
    struct shape_ctx *slot[D] = {};
    std::vector<std::unique_ptr<node>> nodes[D];
    std::unique_ptr<node> gate[D];
    std::unique_ptr<launcher> launch[D];

    void launch_next(launcher::output_ports_type *ports)
    {
        int k = next;
        next = (next + 1) % D;
        left--;
        slot[k] = shape_pipe_next(c);
        if (ports)
            std::get<0>(*ports).try_put(msg());
        else {
            nodes[k][0]->try_put(msg());
            gate[(k + 1) % D]->try_put(msg());
        }
    }

    tbb_ring()
    {
        const int N = shape_xg.n;
        for (int k = 0; k < D; k++)
            for (int x = 0; x < N; x++)
                nodes[k].emplace_back(new node(g, [this, k, x](const msg &) { shape_xnode(slot[k], x); }));
        for (int k = 0; k < D; k++) {
            gate[k].reset(new node(g, [](const msg &) {}));
            launch[k].reset(new launcher(g, flow::serial, [this](const msg &, launcher::output_ports_type &p) {
                if (left > 0)
                    launch_next(&p);
            }));
        }
        for (int k = 0; k < D; k++) {
            int before = (k + D - 1) % D, after = (k + 1) % D;
            for (int x = 0; x < N; x++) {
                for (int j = 0; j < shape_xg.npred[x]; j++)
                    flow::make_edge(*nodes[k][shape_xg.pred[x][j]], *nodes[k][x]);
                flow::make_edge(*nodes[before][x], *nodes[k][x]);
            }
            flow::make_edge(*nodes[k][N - 1], *gate[k]);
            flow::make_edge(*gate[k], *launch[k]);
            flow::make_edge(std::get<0>(launch[k]->output_ports()), *nodes[k][0]);
            flow::make_edge(std::get<0>(launch[k]->output_ports()), *gate[after]);
        }
        for (int x = 0; x < N; x++)
            nodes[0][x]->try_put(msg());
        for (int k = 1; k < D; k++)
            gate[k]->try_put(msg());
    }

    void frames(struct shape_ctx *ctx, long n)
    {
        if (n <= 0)
            return;
        c = ctx;
        left = n;
        launch_next(nullptr);
        g.wait_for_all();
    }
};
tbb_ring *the_ring;
} // namespace

extern "C" void shape_tbb_setup(struct shape_ctx *c, int threads)
{
    the_shape = new tbb_shape(c, threads);
    the_ring = new tbb_ring();
}

extern "C" void shape_tbb_frames(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        shape_frame_advance(c);
        the_shape->start.try_put(msg());
        the_shape->g.wait_for_all();
    }
}

extern "C" void shape_tbb_ring(struct shape_ctx *c, long n) { the_ring->frames(c, n); }

extern "C" void shape_tbb_teardown(void)
{
    delete the_ring;
    the_ring = nullptr;
    delete the_shape;
    the_shape = nullptr;
}
