/*
 * cxx_alloc.cpp - dagrt.hpp's spawn allocates nothing for a callable that
 * fits the task's storage (DAGRT_SPAWN_INLINE_SIZE bytes, a non-throwing
 * move), and one block per spawn for one that does not: every allocation
 * of the process counted (tests/fixtures/alloc_count.c) once the runtime
 * is warm. Its own program with a one-entry table, hosted by the plain
 * driver (Criterion's threads allocate too); not under the sanitizers,
 * whose allocators own malloc.
 */
#include "dagrt.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <execinfo.h>
#include <unistd.h>
#include <cstdlib>

extern "C" {
#include "alloc_count.h"
#include "scenario.h"
}

namespace {

std::atomic<long> sum{0};

std::atomic<int> ntrace{0};
size_t trace_size[64];
void *trace_pc[64][16];
int trace_n[64];
thread_local int in_hook;
void trace_alloc(size_t size)
{
    if (in_hook)
        return;
    in_hook = 1;   /* backtrace itself must not be recorded */
    int k = ntrace.fetch_add(1);
    if (k < 64) {
        trace_size[k] = size;
        trace_n[k] = backtrace(trace_pc[k], 16);
    }
    in_hook = 0;
}

/* One round: n spawns of each kind that fits, waited every 100 (so that
 * the tasks in flight, and the descriptors they hold, stay within what
 * the warm-up rounds made: the runtime's pool grows with the most tasks
 * ever in flight, a C spawn's as much as this one's). */
void round_inline(dagrt *rt, long n)
{
    dagrtpp::group g;
    std::string sso = "short";   /* fits the string's own buffer: no allocation to copy */
    for (long i = 0; i < n; i++) {
        if (i % 100 == 99)
            (void)g.wait(rt);
        (void)dagrtpp::spawn(rt, g, [i] { sum.fetch_add(i, std::memory_order_relaxed); });   /* relaxed: a sum */
        (void)dagrtpp::spawn(rt, g, [sso] { sum.fetch_add(static_cast<long>(sso.size()), std::memory_order_relaxed); });
        std::array<char, DAGRT_SPAWN_INLINE_SIZE - 8> a{};
        (void)dagrtpp::spawn(rt, g, [a, i] { sum.fetch_add(a[0] + i, std::memory_order_relaxed); },
                             (i & 1) ? DAGRT_SPAWN_FIBER : 0);
    }
    (void)g.wait(rt);
}

void round_heap(dagrt *rt, long n)
{
    dagrtpp::group g;
    for (long i = 0; i < n; i++) {
        if (i % 100 == 99)
            (void)g.wait(rt);
        std::array<char, DAGRT_SPAWN_INLINE_SIZE + 8> a{};
        (void)dagrtpp::spawn(rt, g, [a, i] { sum.fetch_add(a[0] + i, std::memory_order_relaxed); });
    }
    (void)g.wait(rt);
}

} // namespace

extern "C" int hpp_spawn_alloc(void)
{
    int bad = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    dagrtpp::runtime rt(cfg);
    EXPECT(rt);
    const long n = 5000;
    /* Every worker started (a thread's start allocates, and a loaded
     * machine may start one late): until each has run a task. */
    std::atomic<int> seen{0};
    for (int k = 0; k < 10000 && (seen.load() & 6) != 6; k++) {
        dagrtpp::group g;
        for (int t = 0; t < 8; t++)
            (void)dagrtpp::spawn(rt, g, [&seen, r = rt.get()] {
                seen.fetch_or(1 << dagrt_thread_index(r));
                auto t0 = dagrtpp::clock::now();
                while (dagrtpp::clock::now() - t0 < std::chrono::microseconds(200)) {
                }
            });
        (void)g.wait(rt);
    }
    EXPECT((seen.load() & 6) == 6);
    /* The caller's deque grows to the most tasks it ever held at once (up
     * to 300 here, beside its first 256 slots): a round in which the
     * workers stole nothing reaches that, and a measured round after warm
     * rounds in which they stole all along would grow it then (it did, 4
     * runs in 400 beside four builds). So one warm round runs with both
     * workers held in a task of their own until it ends. */
    {
        std::atomic<int> held{0};
        std::atomic<bool> go{false};
        dagrtpp::group b;
        for (int t = 0; t < 2; t++)
            (void)dagrtpp::spawn(rt, b, [&held, &go] {
                held.fetch_add(1);
                while (!go.load())
                    std::this_thread::yield();
            });
        /* The caller would run a blocker itself in a wait: none here until
         * both are held (a worker steals from the deque's other end). */
        while (held.load() < 2)
            std::this_thread::yield();
        round_inline(rt, n);
        go.store(true);
        (void)b.wait(rt);
    }
    for (int w = 0; w < 3; w++) {   /* warm: descriptor slabs, deques, fibers */
        round_inline(rt, n);
        round_heap(rt, 1000);
    }
    void *pcs[4];
    (void)backtrace(pcs, 4);   /* its first call loads the unwinder, which allocates */
    alloc_count_set_hook(getenv("HPP_ALLOC_TRACE") ? trace_alloc : nullptr);
    unsigned long a0 = alloc_count();
    round_inline(rt, n);
    unsigned long a1 = alloc_count();
    alloc_count_set_hook(nullptr);
    for (int k = 0; k < ntrace.load() && k < 64; k++)
    {
        std::fprintf(stderr, "alloc %zu:\n", trace_size[k]);
        backtrace_symbols_fd(trace_pc[k], trace_n[k], 2);
    }
    round_heap(rt, 1000);
    unsigned long a2 = alloc_count();
    if (a1 != a0)
        std::fprintf(stderr, "%lu allocations in %ld inline spawns (want 0)\n", a1 - a0, 3 * n);
    EXPECT(a1 == a0);
    if (a2 - a1 != 1000)
        std::fprintf(stderr, "%lu allocations in 1000 spawns over the storage (want 1000)\n", a2 - a1);
    EXPECT(a2 - a1 == 1000);
    return bad;
}

extern "C" const scenario scenario_table[] = {
    {"hpp_spawn_alloc", hpp_spawn_alloc, nullptr},
    {nullptr, nullptr, nullptr},
};
