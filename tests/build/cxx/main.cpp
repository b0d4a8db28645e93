// A C++ program running frame.dag's graphs through dagc --cxx output, with
// C++ context types, on a runtime owned by dagrt.hpp's dagrtpp::runtime
// (passed where the generated code takes a dagrt *); exits non-zero when
// a graph did not do its work. The CMake consumer builds it against the
// installed headers, so dagrt.hpp is found through the package.
#include <cstdio>

#include "dagrt.hpp"
#include "frame.h"

void frame_load(engine::World *w)
{
    w->values.assign(1000, 0);
    for (std::size_t i = 0; i < w->values.size(); i++)
        w->values[i] = static_cast<long>(i);
}
std::size_t frame_sum_count(engine::World *w) { return w->values.size(); }
void frame_sum(engine::World *w, std::size_t begin, std::size_t end)
{
    long s = 0;
    for (std::size_t i = begin; i < end; i++)
        s += w->values[i];
    w->total += s;
}
bool wants_check(engine::World *w) { return w->want_check; }
void frame_check(engine::World *w) { w->checked++; }
void frame_report(engine::World *w) { w->reported = w->total.load(); }

void pool_fill(engine::Pool<int, 4> &p)
{
    for (int i = 0; i < 4; i++)
        p.items[i] = i + 1;
    p.filled = 4;
}
void pool_total(engine::Pool<int, 4> &p)
{
    for (int i = 0; i < p.filled; i++)
        p.sum += p.items[i];
}

void notify_ping(const std::function<void(int)> *f) { (*f)(42); }

void shared_step(std::shared_ptr<engine::Counter> c) { c->runs++; }
void shared_tail(std::shared_ptr<engine::Counter> c) { c->runs++; }

// Each frame of `words` adds 6 for its plain tasks and 4 for `pipeline`.
void words_init(engine::Counter &c) { c.runs++; }
void words_start(engine::Counter &c) { c.runs++; }
void words_instance(engine::Counter &c) { c.runs++; }
std::size_t words_pipeline_count(engine::Counter &) { return 4; }
void words_pipeline(engine::Counter &c, std::size_t begin, std::size_t end)
{
    c.runs += static_cast<int>(end - begin);
}
void words_submit(engine::Counter &c) { c.runs++; }
void words_wait(engine::Counter &c) { c.runs++; }
void words_drain(engine::Counter &c) { c.runs++; }

void big_tick(engine::Big &b) { b.ticks++; }
void big_tock(engine::Big &b) { b.ticks++; }

// Sized by what is stored: a reference context is kept as a pointer, so
// its instance reserves no more for it than a pointer context's does, and
// neither an instance nor a pipeline grows with the referent.
static_assert(sizeof(big_instance_t::ctx) == sizeof(frame_instance_t::ctx),
              "an instance of a reference context reserves more than a pointer");
static_assert(sizeof(big_instance_t) < sizeof(engine::Big),
              "an instance of a reference context grows with the referent");
static_assert(sizeof(big_pipeline_t) < DAGRT_MAX_IN_FLIGHT * sizeof(engine::Big),
              "a pipeline of a reference context grows with the referent");

void bump_first(long v[4]) { v[0] += 1; }
void bump_second(long v[4]) { v[3] = v[0] + 1; }

int main()
{
    dagrtpp::runtime rt;
    if (!rt)
        return 1;
    engine::World w;
    int rc = frame_run(rt, &w);
    // Beside the graphs: a lambda and a loop through dagrt.hpp.
    std::atomic<long> hpp_sum{0};
    {
        dagrtpp::group g;
        (void)dagrtpp::spawn(rt, g, [&hpp_sum] { hpp_sum += 1000; });
        (void)dagrtpp::parallel_for(rt, 0, 100, [&hpp_sum](std::size_t i) { hpp_sum += static_cast<long>(i); });
        (void)g.wait(rt);
    }
    w.want_check = false;
    w.total = 0;
    int rc2 = frame_run(rt, &w);     // `when` false: check skipped
    engine::Pool<int, 4> pool;
    int rc3 = pool_run(rt, pool);
    int got = 0;
    const std::function<void(int)> f = [&got](int v) { got = v; };
    int rc4 = notify_run(rt, &f);
    long arr[4] = {0, 0, 0, 0};
    int rc5 = bump_run(rt, arr);
    // Started runs: a pointer context (copied into the instance), a
    // reference (the referent itself), an array (its pointer), in flight
    // together.
    static frame_instance_t fi;
    static pool_instance_t pi;
    static bump_instance_t bi;
    frame_instance_init(&fi);
    pool_instance_init(&pi);
    bump_instance_init(&bi);
    engine::World w2;
    engine::Pool<int, 4> pool2;
    long arr2[4] = {0, 0, 0, 0};
    int rc6 = frame_instance_start(rt, &fi, &w2) | pool_instance_start(rt, &pi, pool2) | bump_instance_start(rt, &bi, arr2);
    int busy = frame_instance_start(rt, &fi, &w2);
    rc6 |= bump_instance_wait(rt, &bi) | pool_instance_wait(rt, &pi) | frame_instance_wait(rt, &fi);
    int never = frame_instance_wait(rt, &fi);
    // Pipelines: an owning context copied per frame (its use count is back
    // to 1 once drained), and a reference (used where it is).
    auto counter = std::make_shared<engine::Counter>();
    static shared_pipeline_t sp;
    int rc7 = shared_pipeline_init(&sp, 3);
    for (int i = 0; i < 50 && rc7 == 0; i++)
        rc7 = shared_pipeline_submit(rt, &sp, counter);
    long in_flight_uses = counter.use_count();
    rc7 |= shared_pipeline_drain(rt, &sp);
    long uses = counter.use_count();
    static pool_pipeline_t pp;
    engine::Pool<int, 4> pool3;
    int rc8 = pool_pipeline_init(&pp, 1);
    for (int i = 0; i < 3 && rc8 == 0; i++)
        rc8 = pool_pipeline_submit(rt, &pp, pool3);
    rc8 |= pool_pipeline_drain(rt, &pp);
    int bad_depth = pool_pipeline_init(&pp, DAGRT_MAX_IN_FLIGHT + 1);
    // The task functions words_start, words_wait, words_submit, ... beside
    // the entry points: one run, one started run, three pipelined frames.
    engine::Counter wc;
    static words_instance_t wi;
    words_instance_init(&wi);
    static words_pipeline_t wp;
    int rc9 = words_run(rt, wc) | words_instance_start(rt, &wi, wc) | words_instance_wait(rt, &wi) |
              words_pipeline_init(&wp, 2);
    for (int i = 0; i < 3 && rc9 == 0; i++)
        rc9 = words_pipeline_submit(rt, &wp, wc);
    rc9 |= words_pipeline_drain(rt, &wp);
    engine::Big big;
    static big_pipeline_t bp;
    int rc10 = big_pipeline_init(&bp, 2);
    for (int i = 0; i < 4 && rc10 == 0; i++)
        rc10 = big_pipeline_submit(rt, &bp, big);
    rc10 |= big_pipeline_drain(rt, &bp);
    std::printf("cxx: big %d, %d ticks (expected 8), pipeline %zu bytes, world %zu\n", rc10,
                big.ticks.load(), sizeof bp, sizeof big);
    std::printf("cxx: dagrt.hpp spawn and parallel_for sum %ld (expected 5950)\n", hpp_sum.load());
    std::printf("cxx: words %d, %d task calls (expected 50)\n", rc9, wc.runs.load());
    std::printf("cxx: pipelines %d %d, runs %d, uses %ld in flight, %ld drained, pool %d, depth %d\n",
                rc7, rc8, counter->runs.load(), in_flight_uses, uses, pool3.sum, bad_depth);
    rt.reset();
    long want = 999L * 1000 / 2;
    bool ok = rc == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0 && rc5 == 0 && w.reported == want &&
              w.checked == 1 && pool.sum == 10 && got == 42 && arr[0] == 1 && arr[3] == 2 &&
              rc6 == 0 && busy == DAGRT_EBUSY && never == DAGRT_EINVAL && w2.reported == want &&
              pool2.sum == 10 && arr2[0] == 1 && arr2[3] == 2 && rc7 == 0 && rc8 == 0 &&
              counter->runs == 100 && uses == 1 && pool3.sum == 30 && bad_depth == DAGRT_EINVAL &&
              rc9 == 0 && wc.runs == 50 && rc10 == 0 && big.ticks == 8 && hpp_sum == 1000 + 4950;
    std::printf("cxx: started runs %d (busy %d, never %d), total %ld, pool %d, array %ld %ld\n", rc6,
                busy, never, w2.reported, pool2.sum, arr2[0], arr2[3]);
    std::printf("cxx: runs %d %d %d %d %d, total %ld (expected %ld), checked %d, pool %d, ping %d,"
                " array %ld %ld: %s\n", rc, rc2, rc3, rc4, rc5, w.reported, want, w.checked, pool.sum,
                got, arr[0], arr[3], ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
