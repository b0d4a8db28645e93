// coro_node.cpp - (language 2.2) coroutine tasks in a graph (`coro`,
// coro_node.dag through dagc --cxx): each node ends when its coroutine
// does, after it suspended (a sleep; `stream` also waits for an event that
// a sibling node sets, so a frame hangs unless a suspended coroutine's
// thread runs other nodes); every task checks its inputs ran first and
// the `on main` ones their thread; one coroutine is inside a `run`
// subgraph. Each way a frame runs: G_run, an instance started and waited
// for (blocking, and co_awaited), a pipeline; with 0 and 2 workers; the
// modes observed (tests/cxx/meson.build runs it again under
// DAGRT_PIPE=dynamic and DAGRT_SERIAL=1). Never serial: a coroutine task
// is a fiber task.
#include "dagrt_coro.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cn_gen.h"
#include "scenario.h"

using namespace std::chrono_literals;

std::atomic<long> cn_coros{0};   // coroutine bodies that reached their end

void cn_input(cn_ctx *c)
{
    dagrt_event_init(&c->ev, false);
    c->input = dagrt_thread_index(c->rt) == 0 ? 1 : 2;
}
void cn_other(cn_ctx *c)
{
    c->other = c->input == 1 ? 1 : 2;
    dagrt_event_set(&c->ev);
}
void cn_sub_use(cn_ctx *c) { c->use = c->load == 1 ? 1 : 2; }
void cn_done(cn_ctx *c)
{
    bool ok = c->stream == 1 && c->other == 1 && c->use == 1 && dagrt_thread_index(c->rt) == 0;
    c->done = ok ? 1 : 2;
}

dagrtpp::task<> cn_stream(cn_ctx *c)
{
    bool began = c->input == 1;
    if (co_await dagrtpp::co::sleep_for(c->rt, 200us))
        began = false;
    /* The sibling `other` sets it: it must run while this is suspended
     * (the C event of the context, through the awaitables' own adapter). */
    std::error_code ec = co_await dagrtpp::detail::code_awaitable([c](dagrt_async *a) noexcept {
        return dagrt_event_wait_async(c->rt, a, &c->ev, DAGRT_FOREVER, nullptr);
    });
    c->stream = began && !ec && c->other == 1 ? 1 : 2;
    cn_coros.fetch_add(1);
}

dagrtpp::task<> cn_sub_load(cn_ctx *c)
{
    bool began = c->input == 1;
    if (co_await dagrtpp::co::sleep_for(c->rt, 100us))
        began = false;
    c->load = began ? 1 : 2;
    cn_coros.fetch_add(1);
}

namespace {

void fresh(cn_ctx *c, dagrt *rt)
{
    std::memset(static_cast<void *>(c), 0, sizeof *c);
    c->rt = rt;
}

bool complete(const cn_ctx *c)
{
    return c->input == 1 && c->stream == 1 && c->other == 1 && c->load == 1 && c->use == 1 &&
           c->done == 1;
}

struct modes {
    int counts[6] = {0, 0, 0, 0, 0, 0};   // serial, plan, pipelined plan, dynamic, caller alone, other
};
void on_frame(void *user, const dagrt_frame_event *e)
{
    static const char *const names[] = {"serial", "plan", "pipelined plan", "dynamic", "caller alone"};
    auto *m = static_cast<modes *>(user);
    if (std::strcmp(e->graph, "cn") != 0)
        return;
    int k = 0;
    while (k < 5 && std::strcmp(e->mode, names[k]) != 0)
        k++;
    m->counts[k]++;
}

dagrtpp::task<int> await_cn(dagrt *rt, cn_instance_t *inst, cn_ctx *c)
{
    std::error_code ec = co_await dagrtpp::co::wait(rt, inst->state);
    co_return !ec && complete(c) ? 1 : 0;
}

} // namespace

int coro_graph_node_cxx()
{
    int bad = 0;
    const char *pipe = std::getenv("DAGRT_PIPE");
    const char *serial = std::getenv("DAGRT_SERIAL");
    bool dynamic_only = pipe && std::strcmp(pipe, "dynamic") == 0;
    bool serial_on = serial && std::strcmp(serial, "1") == 0;
    for (int workers : {0, 2}) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers;
        // Plan-mode frames are checked below: a crowded (loaded) machine
        // would rightly run them on the dynamic executor (exec/crowd.c).
        cfg.crowd_frames = DAGRT_CROWD_PLAN;
        dagrtpp::runtime rt(cfg);
        dagrt *r = rt;
        modes m;
        dagrt_observer obs{};
        obs.frame_begin = on_frame;
        EXPECT(dagrt_set_observer(r, &obs, &m) == 0);
        long before = cn_coros.load();
        cn_ctx ctx;
        /* G_run. */
        for (int rep = 0; rep < 10; rep++) {
            fresh(&ctx, r);
            EXPECT(cn_run(r, &ctx) == 0);
            EXPECT(complete(&ctx));
        }
        /* An instance: started, then waited for, and co_awaited. */
        static cn_instance_t inst;
        EXPECT(cn_instance_init(&inst) == 0);
        for (int rep = 0; rep < 10; rep++) {
            fresh(&ctx, r);
            EXPECT(cn_instance_start(r, &inst, &ctx) == 0);
            if (rep % 2) {
                EXPECT(cn_instance_wait(r, &inst) == 0);
                EXPECT(complete(&ctx));
            } else {
                EXPECT(dagrtpp::sync_wait(r, await_cn(r, &inst, &ctx)) == 1);
            }
        }
        /* A pipeline of depth 2. */
        static cn_pipeline_t p;
        EXPECT(cn_pipeline_init(&p, 2) == 0);
        cn_ctx pc[6];
        for (auto &c : pc) {
            fresh(&c, r);
            EXPECT(cn_pipeline_submit(r, &p, &c) == 0);
        }
        EXPECT(cn_pipeline_drain(r, &p) == 0);
        for (auto &c : pc)
            EXPECT(complete(&c));
        EXPECT(cn_coros.load() - before == 2 * (10 + 10 + 6));
        EXPECT(dagrt_set_observer(r, nullptr, nullptr) == 0);
        /* The modes: never serial (a coroutine task is a fiber task); with
         * workers, G_run in plan mode and started frames in pipelined plan
         * mode; without (workers 0, or DAGRT_SERIAL=1, which starts none)
         * or under DAGRT_PIPE=dynamic, every frame dynamic. */
        bool shared = workers > 0 && !serial_on;
        EXPECT(m.counts[0] == 0 && m.counts[5] == 0);
        if (shared && !dynamic_only) {
            EXPECT(m.counts[1] > 0 && m.counts[2] > 0);
        } else {
            EXPECT(m.counts[1] == 0 && m.counts[2] == 0 && m.counts[3] > 0);
        }
        if (bad || std::getenv("CORO_NODE_MODES"))
            std::fprintf(stderr, "coro_graph_node: workers %d: modes serial %d plan %d pplan %d dynamic %d alone %d\n",
                         workers, m.counts[0], m.counts[1], m.counts[2], m.counts[3], m.counts[4]);
    }
    return bad;
}
