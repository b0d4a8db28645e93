// bench_tbb.cpp - the frame graph as a oneTBB flow graph: a broadcast_node
// start and 32 continue_nodes, built once; each frame is try_put +
// wait_for_all. global_control caps parallelism at 2: the calling thread
// takes part in wait_for_all, so it is one of the two.
//
// Frames in flight (the ring, bench_peers.h): BENCH_RING_DEPTH copies of the
// graph in one flow graph, frame f on copy f % depth. Node i of each copy
// also has an edge from node i of the copy before it (the frame before), and
// each copy has a gate (a continue_node) that fires when its own present
// ended (frame f - depth: the cap) and the gate of the copy before it
// launched (frame order); the gate's launcher starts the copy's frame and
// passes the turn on, until the batch's frames are all launched. The ring
// drives itself, so the caller only waits in wait_for_all, and takes part.
// Its state carries across batches: each node holds the message of the
// frame before; the next batch launches where the last one stopped.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <memory>
#include <tuple>
#include <vector>

#include "bench_peers.h"

namespace flow = oneapi::tbb::flow;
using msg = flow::continue_msg;
using node = flow::continue_node<msg>;
using launcher = flow::multifunction_node<msg, std::tuple<msg>>;

namespace {
struct tbb_bench {
    oneapi::tbb::global_control gc;
    flow::graph g;
    flow::broadcast_node<msg> start;
    std::vector<std::unique_ptr<node>> nodes;

    tbb_bench(struct bench_ctx *c, int threads)
        : gc(oneapi::tbb::global_control::max_allowed_parallelism, threads), start(g)
    {
        for (int i = 0; i < BENCH_NODES; i++)
            nodes.emplace_back(new node(g, [c, i](const msg &) { bench_body(c, i); }));
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

struct tbb_ring {
    static const int D = BENCH_RING_DEPTH;
    flow::graph g;
    struct bench_ctx *c = nullptr;       // the batch's context
    long left = 0;                       // frames of the batch not yet launched
    int next = 0;                        // the copy of the next frame to launch
    struct bench_ctx *slot[D] = {};      // each copy's frame
    std::vector<std::unique_ptr<node>> nodes[D];
    std::unique_ptr<node> gate[D];
    std::unique_ptr<launcher> launch[D];

    // Launches frame `next` on its copy: called by the copy's launcher or,
    // for a batch's first frame, by the caller (ring quiet). Frames are
    // launched in order (each gate waits for the launcher before it), so
    // the writes here never race.
    void launch_next(launcher::output_ports_type *ports)
    {
        int k = next;
        next = (next + 1) % D;
        left--;
        slot[k] = bench_pipe_next(c);
        if (ports)
            std::get<0>(*ports).try_put(msg());
        else {
            nodes[k][0]->try_put(msg());
            gate[(k + 1) % D]->try_put(msg());
        }
    }

    tbb_ring()
    {
        for (int k = 0; k < D; k++)
            for (int i = 0; i < BENCH_NODES; i++)
                nodes[k].emplace_back(new node(g, [this, k, i](const msg &) { bench_node(slot[k], i); }));
        for (int k = 0; k < D; k++) {
            gate[k].reset(new node(g, [](const msg &) {}));
            launch[k].reset(new launcher(g, flow::serial, [this](const msg &, launcher::output_ports_type &p) {
                if (left > 0)
                    launch_next(&p);
            }));
        }
        for (int k = 0; k < D; k++) {
            int before = (k + D - 1) % D, after = (k + 1) % D;
            for (int i = 0; i < BENCH_NODES; i++) {
                for (int j = 0; j < 2; j++)
                    if (bench_preds[i][j] >= 0)
                        flow::make_edge(*nodes[k][bench_preds[i][j]], *nodes[k][i]);
                flow::make_edge(*nodes[before][i], *nodes[k][i]);
            }
            flow::make_edge(*nodes[k][BENCH_NODES - 1], *gate[k]);
            flow::make_edge(*gate[k], *launch[k]);
            // The launcher starts its copy's input and hands the turn on.
            flow::make_edge(std::get<0>(launch[k]->output_ports()), *nodes[k][0]);
            flow::make_edge(std::get<0>(launch[k]->output_ports()), *gate[after]);
        }
        // The first frame's stand-ins: for copy 0, the frame before it (on
        // the last copy) has ended; for the other copies, the frame depth
        // before them. Copy 0's first frame is the caller's to launch, in
        // its gate's place (frames()), as each batch's first frame is.
        for (int i = 0; i < BENCH_NODES; i++)
            nodes[0][i]->try_put(msg());
        for (int k = 1; k < D; k++)
            gate[k]->try_put(msg());
    }

    void frames(struct bench_ctx *ctx, long n)
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

extern "C" void bench_tbb_setup(struct bench_ctx *c, int threads);
extern "C" void bench_tbb_frames(struct bench_ctx *c, long n);
extern "C" void bench_tbb_ring(struct bench_ctx *c, long n);
extern "C" void bench_tbb_teardown(void);

extern "C" void bench_tbb_setup(struct bench_ctx *c, int threads)
{
    the_bench = new tbb_bench(c, threads);
    the_ring = new tbb_ring();
}

extern "C" void bench_tbb_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        bench_frame_advance(c);
        the_bench->start.try_put(msg());
        the_bench->g.wait_for_all();
    }
}

extern "C" void bench_tbb_ring(struct bench_ctx *c, long n) { the_ring->frames(c, n); }

extern "C" void bench_tbb_teardown(void)
{
    delete the_ring;
    the_ring = nullptr;
    delete the_bench;
    the_bench = nullptr;
}
