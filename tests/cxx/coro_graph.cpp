// coro_graph.cpp - a started graph instance and a pipeline's frames
// awaited without a thread (dagrt_graph_wait_async,
// dagrt_pipeline_wait_async; co_await dagrtpp::co::wait), over
// coro_graph.dag (`on main`, fiber, hot and parallel tasks, each checking
// that its inputs ran first). The wait's end comes only after every node,
// the `on main` ones on the main thread; the taken wait refuses the
// others; errors come at once. Every frame's mode is observed: with
// workers, started runs are in pipelined plan mode unless DAGRT_PIPE=dynamic
// (tests/cxx/meson.build runs the scenario both ways), without, dynamic.
#include "dagrt_coro.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cg_gen.h"
#include "scenario.h"

// Set by the test for one run: task a calls it in its body (then clears it).
static void (*a_hook)(cg_ctx *) = nullptr;

// The tasks (coro_graph_ctx.h): 1 ran after its inputs (and on the main
// thread if `on main`), 2 not. C linkage, as dagc's header declares them.
extern "C" {
void cg_input(cg_ctx *c) { c->input = dagrt_thread_index(c->rt) == 0 ? 1 : 2; }
void cg_a(cg_ctx *c)
{
    c->a = c->input == 1 ? 1 : 2;
    if (void (*h)(cg_ctx *) = a_hook) {
        a_hook = nullptr;
        h(c);
    }
}
void cg_b(cg_ctx *c) { c->b = c->input == 1 ? 1 : 2; }
void cg_c(cg_ctx *c) { c->c = c->input == 1 ? 1 : 2; }
size_t cg_wide_count(cg_ctx *) { return CG_WIDE; }
void cg_wide(cg_ctx *c, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i++)
        c->wide[i] = c->a == 1 ? 1 : 2;
}
void cg_d(cg_ctx *c)
{
    bool wide = true;
    for (unsigned char w : c->wide)
        wide = wide && w == 1;
    c->d = c->b == 1 && c->c == 1 && wide ? 1 : 2;
}
void cg_present(cg_ctx *c) { c->present = c->d == 1 && dagrt_thread_index(c->rt) == 0 ? 1 : 2; }
}

namespace {

void fresh(cg_ctx *c, dagrt *rt)
{
    std::memset(c, 0, sizeof *c);
    c->rt = rt;
}

// Every task ran, in order, `on main` ones on the main thread.
bool complete(const cg_ctx *c)
{
    return c->input == 1 && c->a == 1 && c->b == 1 && c->c == 1 && c->d == 1 && c->present == 1;
}

// The modes cg's frames ran in (frame_begin, on the main thread).
struct modes {
    int pplan = 0, dynamic = 0, other = 0;
    dagrt *rt = nullptr;
    int ends = 0, bad_ends = 0;   /* frame ends; ones off the main thread's own stack */
};
void on_frame(void *user, const dagrt_frame_event *e)
{
    auto *m = static_cast<modes *>(user);
    if (std::strcmp(e->graph, "cg") != 0)
        return;
    if (std::strcmp(e->mode, "pipelined plan") == 0)
        m->pplan++;
    else if (std::strcmp(e->mode, "dynamic") == 0)
        m->dynamic++;
    else
        m->other++;
}
/* A started run's end is reported by its wait: the main thread's, on its
 * own stack, even when a fiber on the main thread pumped the wait's task. */
void on_frame_end(void *user, const dagrt_frame_event *e)
{
    auto *m = static_cast<modes *>(user);
    if (std::strcmp(e->graph, "cg") != 0)
        return;
    m->ends++;
    if (dagrt_thread_index(m->rt) != 0 || dagrt_in_fiber(m->rt))
        m->bad_ends++;
}

struct end_rec {
    std::atomic<int> calls{0};
    std::atomic<long long> result{-1};
};
void on_end(void *p, int64_t r)
{
    auto *e = static_cast<end_rec *>(p);
    e->result.store(r);
    e->calls.fetch_add(1);
}

dagrtpp::task<int> await_instance(dagrt *rt, cg_instance_t *inst, cg_ctx *c)
{
    std::error_code ec = co_await dagrtpp::co::wait(rt, inst->state);
    co_return ec ? -1 : complete(c) ? 1 : 0;
}

dagrtpp::task<int> await_pipeline(dagrt *rt, cg_pipeline_t *p, cg_ctx *pc)
{
    int score = 0;
    /* At most one frame in flight: the two oldest are over. */
    if (!co_await dagrtpp::co::wait(rt, p->pipe, 1) && complete(&pc[0]) && complete(&pc[1]))
        score++;
    if (!co_await dagrtpp::co::wait(rt, p->pipe) && complete(&pc[2]))
        score++;
    /* Nothing in flight: the answer at once. */
    if (!co_await dagrtpp::co::wait(rt, p->pipe))
        score++;
    co_return score;
}

} // namespace

int coro_graph_wait_cxx()
{
    int bad = 0;
    const char *pipe = std::getenv("DAGRT_PIPE");
    const char *serial = std::getenv("DAGRT_SERIAL");
    /* DAGRT_PIPE=dynamic: no plan mode; DAGRT_SERIAL=1: no worker. */
    bool dynamic_only = (pipe && std::strcmp(pipe, "dynamic") == 0) ||
                        (serial && std::strcmp(serial, "1") == 0);
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
        m.rt = r;
        dagrt_observer obs{};
        obs.frame_begin = on_frame;
        obs.frame_end = on_frame_end;
        EXPECT(dagrt_set_observer(r, &obs, &m) == 0);
        static cg_instance_t inst;
        EXPECT(cg_instance_init(&inst) == 0);
        cg_ctx ctx;
        for (int rep = 0; rep < 20; rep++) {
            /* A coroutine on the workers awaits the instance the main
             * thread started; the main thread's wait runs its part. */
            fresh(&ctx, r);
            EXPECT(cg_instance_start(r, &inst, &ctx) == 0);
            auto s = dagrtpp::start(r, await_instance(r, &inst, &ctx));
            EXPECT(!s.wait(r));
            EXPECT(s.get() == 1);
        }
        /* The C call from the main thread: pending, and the wait is its
         * own (a blocking wait and a second one are refused) until the
         * main thread pumps. */
        fresh(&ctx, r);
        EXPECT(cg_instance_start(r, &inst, &ctx) == 0);
        end_rec er;
        dagrt_async a;
        dagrt_async_init(&a, &on_end, &er, 0);
        EXPECT(dagrt_graph_wait_async(r, &a, &inst.state) == DAGRT_PENDING);
        dagrt_async a2;
        dagrt_async_init(&a2, &on_end, &er, 0);
        EXPECT(dagrt_graph_wait_async(r, &a2, &inst.state) == DAGRT_EBUSY);
        EXPECT(cg_instance_wait(r, &inst) == DAGRT_EBUSY);
        EXPECT(cg_instance_start(r, &inst, &ctx) == DAGRT_EBUSY);
        while (er.calls.load() == 0) {
            (void)dagrt_pump_main(r);
            (void)dagrt_sleep(r, 20000, nullptr);   /* helps: runs the end's task */
        }
        EXPECT(er.calls.load() == 1 && er.result.load() == 0 && complete(&ctx));
        EXPECT(cg_instance_wait(r, &inst) == DAGRT_EINVAL);   /* waited for: idle */
        /* Without a worker a fiber task runs on the main thread: one that
         * pumps the main queue while the wait's task is in it must not
         * run the wait there (it is queued again for the main thread's own
         * stack). */
        if (workers == 0) {
            fresh(&ctx, r);
            EXPECT(cg_instance_start(r, &inst, &ctx) == 0);
            end_rec ef;
            dagrt_async_init(&a, &on_end, &ef, 0);
            std::atomic<long long> asked{0};
            std::atomic<int> pumped{-1};
            dagrtpp::group fg;
            EXPECT(!dagrtpp::spawn(r, fg, [&] {
                asked = dagrt_graph_wait_async(r, &a, &inst.state);
                pumped = dagrt_pump_main(r);
            }, DAGRT_SPAWN_FIBER));
            EXPECT(!fg.wait(r));
            EXPECT(asked.load() == DAGRT_PENDING);
            EXPECT(pumped.load() >= 1);   /* it ran the wait's task (which queued itself again) */
            while (ef.calls.load() == 0) {
                (void)dagrt_pump_main(r);
                (void)dagrt_sleep(r, 20000, nullptr);
            }
            EXPECT(ef.result.load() == 0 && complete(&ctx));
        }
        /* Asked for from inside one of the run's own nodes, whose body then
         * waits (helping, on the main thread: no worker): that wait takes
         * the main queue first, and must not run the graph's wait there (it
         * would wait for the node that holds it). Held until the node ends
         * (core/defer.c). Before that, this hung (and coro_graph_wait hung
         * now and then under TSan with DAGRT_PIPE=dynamic, a parallel
         * node's helping wait taking a worker's coroutine's wait). */
        if (workers == 0) {
            fresh(&ctx, r);
            EXPECT(cg_instance_start(r, &inst, &ctx) == 0);
            static end_rec eh;
            static dagrt_async ah;
            static std::atomic<long long> asked_in{1};
            static cg_instance_t *hinst;
            eh.calls = 0;
            hinst = &inst;
            dagrt_async_init(&ah, &on_end, &eh, 0);
            a_hook = [](cg_ctx *c) {
                asked_in = dagrt_graph_wait_async(c->rt, &ah, &hinst->state);
                (void)dagrt_sleep(c->rt, 2000, nullptr);   /* a helping wait in the node */
            };
            while (eh.calls.load() == 0) {
                (void)dagrt_pump_main(r);
                (void)dagrt_sleep(r, 20000, nullptr);
            }
            EXPECT(asked_in.load() == DAGRT_PENDING);
            EXPECT(eh.result.load() == 0 && complete(&ctx));
        }
        /* Errors at once: never started, a bad record, an outside thread. */
        EXPECT(dagrt_graph_wait_async(r, &a, &inst.state) == DAGRT_EINVAL);
        EXPECT(dagrt_graph_wait_async(r, &a, nullptr) == DAGRT_EINVAL);
        dagrt_async raw;
        std::memset(&raw, 0, sizeof raw);
        fresh(&ctx, r);
        EXPECT(cg_instance_start(r, &inst, &ctx) == 0);
        EXPECT(dagrt_graph_wait_async(r, &raw, &inst.state) == DAGRT_EINVAL);
        int64_t outside = 0;
        std::thread t([&] { outside = dagrt_graph_wait_async(r, &a, &inst.state); });
        t.join();
        EXPECT(outside == DAGRT_EPERM);
        EXPECT(cg_instance_wait(r, &inst) == 0 && complete(&ctx));   /* untouched by the refusals */
        /* A pipeline's frames: awaited down to one in flight, then all;
         * a pipeline's state is not an instance's. */
        static cg_pipeline_t p;
        EXPECT(cg_pipeline_init(&p, 3) == 0);
        for (int rep = 0; rep < 10; rep++) {
            cg_ctx pc[3];
            for (auto &c : pc)
                fresh(&c, r);
            for (auto &c : pc)
                EXPECT(cg_pipeline_submit(r, &p, &c) == 0);
            if (rep == 0)
                EXPECT(dagrt_graph_wait_async(r, &a, &p.frames[0].state) == DAGRT_EBUSY);
            EXPECT(dagrtpp::sync_wait(r, await_pipeline(r, &p, pc)) == 3);
        }
        EXPECT(cg_pipeline_drain(r, &p) == 0);
        EXPECT(dagrt_set_observer(r, nullptr, nullptr) == 0);
        /* dagrt_destroy with the wait pending: its drain runs the wait's
         * task, so the run ends with its own result and fn is called
         * before destroy returns. */
        {
            end_rec er2;
            dagrt_async a3;
            cg_ctx c2;   /* outlives the runtime: its run ends in destroy */
            static cg_instance_t inst2;
            {
                dagrtpp::runtime rt2(cfg);
                dagrt *r2 = rt2;
                fresh(&c2, r2);
                EXPECT(cg_instance_init(&inst2) == 0);
                EXPECT(cg_instance_start(r2, &inst2, &c2) == 0);
                dagrt_async_init(&a3, &on_end, &er2, 0);
                EXPECT(dagrt_graph_wait_async(r2, &a3, &inst2.state) == DAGRT_PENDING);
            }
            EXPECT(er2.calls.load() == 1 && er2.result.load() == 0 && complete(&c2));
        }
        /* The modes: pipelined plan where it may run (workers, and
         * DAGRT_PIPE not dynamic), else dynamic. */
        EXPECT(m.other == 0);
        EXPECT(m.ends > 0 && m.bad_ends == 0);
        if (workers > 0 && !dynamic_only)
            EXPECT(m.pplan > 0);
        else
            EXPECT(m.pplan == 0 && m.dynamic > 0);
    }
    return bad;
}
