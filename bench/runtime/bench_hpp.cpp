/*
 * bench_hpp.cpp - a spawn through dagrt.hpp against the C API, side by
 * side in one run (alternating runs, median of each):
 *   c_trampoline  dagrt_spawn(rt, &g, tramp, &args[i]): the C way, the
 *                 argument in caller-owned storage (an array made once)
 *   hpp_lambda    dagrtpp::spawn(rt, g, [slot, i] {...}): the same body
 *                 as a 16-byte lambda, copied into the task (no allocation)
 *   hpp_lambda80  an 80-byte lambda (the inline storage's full size)
 *   hpp_heap      an 88-byte lambda: over the storage, one operator new
 *                 per spawn (for scale; not a target)
 *   c_inline      dagrt_spawn_inline from C with the same 16 bytes: the
 *                 runtime's part of hpp_lambda without the header's
 * Each run: a task spawns N tasks into a group and waits, on a runtime of
 * one worker beside the main thread (workers = 0: the main thread alone,
 * which runs them all in its wait: the spawn's and the run's own cost,
 * no other thread's noise); ns per task (spawn, run, finish).
 * Target (issue 41): hpp_lambda within 5% of c_trampoline.
 * usage: bench_hpp [tasks_per_run] [runs] [workers]
 */
#include "dagrt.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct c_arg {
    long *slot;
    long i;
};

extern "C" void c_tramp(void *p)
{
    c_arg *a = static_cast<c_arg *>(p);
    *a->slot += a->i;
}

long N = 200000;
std::vector<long> slots;
std::vector<c_arg> args;

double now_ns()
{
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct job {
    dagrt *rt;
    int kind;
    double ns;
};

void spawner(job *j)
{
    dagrt *rt = j->rt;
    dagrtpp::group g;
    double t0 = now_ns();
    switch (j->kind) {
    case 0:
        for (long i = 0; i < N; i++)
            (void)dagrt_spawn(rt, g, c_tramp, &args[static_cast<size_t>(i)]);
        break;
    case 1:
        for (long i = 0; i < N; i++) {
            long *slot = &slots[static_cast<size_t>(i)];
            (void)dagrtpp::spawn(rt, g, [slot, i] { *slot += i; });
        }
        break;
    case 2:
        for (long i = 0; i < N; i++) {
            long *slot = &slots[static_cast<size_t>(i)];
            std::array<long, 8> pad{};
            pad[0] = i;
            (void)dagrtpp::spawn(rt, g, [slot, pad, i] { *slot += i + pad[0] - pad[7]; });
        }
        break;
    case 4:
        for (long i = 0; i < N; i++) {
            c_arg a{&slots[static_cast<size_t>(i)], i};
            (void)dagrt_spawn_inline(rt, g, c_tramp, nullptr, &a, sizeof a, 0);
        }
        break;
    default:
        for (long i = 0; i < N; i++) {
            long *slot = &slots[static_cast<size_t>(i)];
            std::array<long, 9> pad{};
            pad[0] = i;
            (void)dagrtpp::spawn(rt, g, [slot, pad, i] { *slot += i + pad[0] - pad[8]; });
        }
        break;
    }
    (void)g.wait(rt);
    j->ns = (now_ns() - t0) / static_cast<double>(N);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1)
        N = std::atol(argv[1]);
    int runs = argc > 2 ? std::atoi(argv[2]) : 21;
    int workers = argc > 3 ? std::atoi(argv[3]) : 1;
    if (N <= 0 || runs <= 0 || workers < 0) {
        std::fprintf(stderr, "usage: bench_hpp [tasks_per_run] [runs] [workers]\n");
        return 2;
    }
    slots.assign(static_cast<size_t>(N), 0);
    args.resize(static_cast<size_t>(N));
    for (long i = 0; i < N; i++)
        args[static_cast<size_t>(i)] = c_arg{&slots[static_cast<size_t>(i)], i};
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    dagrtpp::runtime rt(cfg);
    if (!rt) {
        std::fprintf(stderr, "bench_hpp: %s\n", rt.error().message().c_str());
        return 1;
    }
    const char *names[] = {"c_trampoline", "hpp_lambda", "hpp_lambda80", "hpp_heap", "c_inline"};
    std::vector<double> t[5];
    for (int r = -2; r < runs; r++) {   /* two warm-up rounds */
        for (int k = 0; k < 5; k++) {
            int kind = (r & 1) ? 4 - k : k;   /* alternate the order */
            job j{rt, kind, 0};
            dagrtpp::group g;
            (void)dagrtpp::spawn(rt, g, [&j] { spawner(&j); });
            (void)g.wait(rt);
            if (r >= 0)
                t[kind].push_back(j.ns);
        }
    }
    std::printf("bench_hpp: %ld tasks per run, %d runs, %d worker(s) + main; %s\n", N, runs, workers, BENCH_BUILD);
    std::printf("%-14s %10s %10s %8s\n", "contender", "ns/task", "best", "ratio");
    double base = median(t[0]);
    for (int k = 0; k < 5; k++)
        std::printf("%-14s %10.1f %10.1f %8.3f\n", names[k], median(t[k]),
                    *std::min_element(t[k].begin(), t[k].end()), median(t[k]) / base);
    std::printf("target: hpp_lambda / c_trampoline <= 1.05: %s\n", median(t[1]) / base <= 1.05 ? "met" : "NOT met");
    return 0;
}
