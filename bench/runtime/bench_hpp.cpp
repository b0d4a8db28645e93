/*
 * bench_hpp.cpp - a spawn through dagrt.hpp against the C API, side by
 * side in one process:
 *   c_trampoline  dagrt_spawn(rt, &g, tramp, &args[i]): the C way, the
 *                 argument in caller-owned storage (an array made once)
 *   c_again       c_trampoline a second time: the A/A control, whose
 *                 ratio to c_trampoline is the measurement's own noise
 *   hpp_lambda    dagrtpp::spawn(rt, g, [slot, i] {...}): the same body
 *                 as a 16-byte lambda, copied into the task (no allocation)
 *   hpp_lambda80  an 80-byte lambda (the inline storage's full size)
 *   hpp_heap      an 88-byte lambda: over the storage, one operator new
 *                 per spawn (for scale; not a target)
 *   c_inline      dagrt_spawn_inline from C with the same 16 bytes: the
 *                 runtime's part of hpp_lambda without the header's
 * One round: each contender once, in a shuffled order (a different one
 * every round), a task spawning TASKS tasks into a group and waiting, on a
 * runtime of WORKERS workers beside the main thread (0: the main thread
 * alone runs them all in its wait: the spawn's and the run's own cost, no
 * other thread's noise). Many short rounds rather than a few long ones:
 * each round's ratio to that round's c_trampoline compares runs made
 * within a millisecond of each other (same frequency, same neighbours), and
 * the median of those ratios, with its quartiles, is the figure.
 * ns per task: spawn, run, finish.
 * Target (issue 41): hpp_lambda's median ratio <= 1.05.
 * usage: bench_hpp [tasks_per_round] [rounds] [workers]
 * BENCH_HPP_ONLY=NAME runs that contender alone (no table), for perf stat
 * and perf record: instructions per task are its count over TASKS*ROUNDS.
 */
#include "dagrt.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

long N = 4000;
std::vector<long> slots;
std::vector<c_arg> args;

double now_ns()
{
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

enum { C_TRAMP, C_AGAIN, HPP_LAMBDA, HPP_LAMBDA80, HPP_HEAP, C_INLINE, NKIND };
const char *const names[NKIND] = {"c_trampoline", "c_again", "hpp_lambda", "hpp_lambda80", "hpp_heap", "c_inline"};

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
    case C_TRAMP:
    case C_AGAIN:
        for (long i = 0; i < N; i++)
            (void)dagrt_spawn(rt, g, c_tramp, &args[static_cast<size_t>(i)]);
        break;
    case HPP_LAMBDA:
        for (long i = 0; i < N; i++) {
            long *slot = &slots[static_cast<size_t>(i)];
            (void)dagrtpp::spawn(rt, g, [slot, i] { *slot += i; });
        }
        break;
    case HPP_LAMBDA80:
        for (long i = 0; i < N; i++) {
            long *slot = &slots[static_cast<size_t>(i)];
            std::array<long, 8> pad{};
            pad[0] = i;
            (void)dagrtpp::spawn(rt, g, [slot, pad, i] { *slot += i + pad[0] - pad[7]; });
        }
        break;
    case C_INLINE:
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

/* The q-quantile of v (sorted here). */
double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1)
        N = std::atol(argv[1]);
    int rounds = argc > 2 ? std::atoi(argv[2]) : 401;
    int workers = argc > 3 ? std::atoi(argv[3]) : 1;
    if (N <= 0 || rounds <= 0 || workers < 0) {
        std::fprintf(stderr, "usage: bench_hpp [tasks_per_round] [rounds] [workers]\n");
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
    if (const char *only = std::getenv("BENCH_HPP_ONLY")) {
        int k = 0;
        while (k < NKIND && std::strcmp(names[k], only) != 0)
            k++;
        if (k == NKIND) {
            std::fprintf(stderr, "bench_hpp: BENCH_HPP_ONLY: no contender %s\n", only);
            return 2;
        }
        for (int r = 0; r < rounds; r++) {
            job j{rt, k, 0};
            dagrtpp::group g;
            (void)dagrtpp::spawn(rt, g, [&j] { spawner(&j); });
            (void)g.wait(rt);
        }
        return 0;
    }
    std::vector<double> t[NKIND], ratio[NKIND];
    int order[NKIND];
    for (int k = 0; k < NKIND; k++)
        order[k] = k;
    unsigned seed = 12345;
    for (int r = -20; r < rounds; r++) {   /* 20 warm-up rounds */
        /* A new order every round (Fisher-Yates, a fixed seed: the same
         * sequence every invocation), so no contender always follows
         * the same one. */
        for (int k = NKIND - 1; k > 0; k--) {
            seed = seed * 1103515245u + 12345u;
            std::swap(order[k], order[(seed >> 16) % static_cast<unsigned>(k + 1)]);
        }
        double ns[NKIND];
        for (int k = 0; k < NKIND; k++) {
            job j{rt, order[k], 0};
            dagrtpp::group g;
            (void)dagrtpp::spawn(rt, g, [&j] { spawner(&j); });
            (void)g.wait(rt);
            ns[order[k]] = j.ns;
        }
        if (r < 0)
            continue;
        for (int k = 0; k < NKIND; k++) {
            t[k].push_back(ns[k]);
            ratio[k].push_back(ns[k] / ns[C_TRAMP]);
        }
    }
    std::printf("bench_hpp: %ld tasks per round, %d rounds, %d worker(s) + main; %s\n", N, rounds, workers,
                BENCH_BUILD);
    std::printf("%-14s %9s %9s   %7s %15s\n", "contender", "ns/task", "best", "ratio", "ratio p25-p75");
    for (int k = 0; k < NKIND; k++)
        std::printf("%-14s %9.1f %9.1f   %7.3f   %6.3f-%6.3f\n", names[k], quantile(t[k], 0.5),
                    quantile(t[k], 0.0), quantile(ratio[k], 0.5), quantile(ratio[k], 0.25),
                    quantile(ratio[k], 0.75));
    double m = quantile(ratio[HPP_LAMBDA], 0.5);
    std::printf("target: hpp_lambda / c_trampoline <= 1.05 (median of the rounds' ratios): %.3f, %s\n", m,
                m <= 1.05 ? "met" : "NOT met");
    return 0;
}
