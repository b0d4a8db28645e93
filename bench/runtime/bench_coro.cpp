/*
 * bench_coro.cpp - C++20 coroutines (dagrt_coro.hpp) against fiber tasks,
 * side by side in one run (alternating runs, median of each):
 *
 * 1. Suspend and resume through the scheduler, ns per suspension:
 *    sem_pingpong  two parties hand a turn back and forth over two
 *                  semaphores (each acquire suspends; the release's wake
 *                  queues the other's resume as a task): coroutines
 *                  (co_await co::acquire) against fiber tasks
 *                  (dagrt_sem_acquire, which suspends the fiber);
 *    yield         queued again behind the work in sight: co_await
 *                  co::resume_on_workers against dagrt_fiber_yield.
 *    On a runtime of `workers` workers (default 0: the main thread alone
 *    runs everything in its wait, no other thread's noise). The raw
 *    context switch is bench/fiber/bench_switch's (run it beside this).
 * 2. Memory of N (10,000) reads parked at once on pipes with nothing to
 *    read, coroutines against fiber tasks (a pool of N + 16 fibers of the
 *    default stack): the process's resident memory grown while they are
 *    parked (VmRSS, /proc/self/statm), and for coroutines the bytes their
 *    frames took (operator new, counted); for fibers the stacks reserved
 *    (N x fiber_stack_size, address space). Then a cancel ends them all.
 *
 * usage: bench_coro [round_trips] [runs] [workers] [parked]
 */
#include "dagrt_coro.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <vector>

#include <unistd.h>

namespace {

std::atomic<long> new_bytes{0};

double now_ns()
{
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

long rss_bytes()
{
    std::ifstream f("/proc/self/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * sysconf(_SC_PAGESIZE);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

dagrtpp::runtime make_rt(int workers, int pool = 0)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    if (pool)
        cfg.fiber_pool_size = pool;
    return dagrtpp::runtime(cfg);
}

/* ------------------------------------------------ suspend and resume */

dagrtpp::task<> co_party(dagrt *rt, dagrtpp::semaphore *mine, dagrtpp::semaphore *other, long m, bool first)
{
    for (long i = 0; i < m; i++) {
        if (first)
            other->release();
        (void)co_await dagrtpp::co::acquire(rt, *mine);
        if (!first)
            other->release();
    }
}

double co_pingpong(int workers, long m)
{
    auto rt = make_rt(workers);
    dagrtpp::semaphore a, b;
    double t0 = now_ns();
    auto x = dagrtpp::start(rt, co_party(rt, &a, &b, m, true));
    auto y = dagrtpp::start(rt, co_party(rt, &b, &a, m, false));
    (void)x.wait(rt);
    (void)y.wait(rt);
    return (now_ns() - t0) / static_cast<double>(2 * m);
}

struct fib_arg {
    dagrt *rt;
    dagrt_sem *mine, *other;
    long m;
    bool first;
};

void fib_party(void *p)
{
    auto *a = static_cast<fib_arg *>(p);
    for (long i = 0; i < a->m; i++) {
        if (a->first)
            dagrt_sem_release(a->other, 1);
        (void)dagrt_sem_acquire(a->rt, a->mine);
        if (!a->first)
            dagrt_sem_release(a->other, 1);
    }
}

double fib_pingpong(int workers, long m)
{
    auto rt = make_rt(workers);
    dagrt_sem a, b;
    dagrt_sem_init(&a, 0);
    dagrt_sem_init(&b, 0);
    fib_arg x{rt, &a, &b, m, true}, y{rt, &b, &a, m, false};
    dagrtpp::group g;
    double t0 = now_ns();
    (void)dagrt_spawn_ex(rt, g, fib_party, &x, DAGRT_SPAWN_FIBER);
    (void)dagrt_spawn_ex(rt, g, fib_party, &y, DAGRT_SPAWN_FIBER);
    (void)g.wait(rt);
    return (now_ns() - t0) / static_cast<double>(2 * m);
}

dagrtpp::task<> co_yielder(dagrt *rt, long m)
{
    for (long i = 0; i < m; i++)
        (void)co_await dagrtpp::co::resume_on_workers(rt);
}

double co_yield_ns(int workers, long m)
{
    auto rt = make_rt(workers);
    double t0 = now_ns();
    auto x = dagrtpp::start(rt, co_yielder(rt, m));
    (void)x.wait(rt);
    return (now_ns() - t0) / static_cast<double>(m);
}

void fib_yielder(void *p)
{
    auto *a = static_cast<fib_arg *>(p);
    for (long i = 0; i < a->m; i++)
        (void)dagrt_fiber_yield(a->rt);
}

double fib_yield_ns(int workers, long m)
{
    auto rt = make_rt(workers);
    fib_arg x{rt, nullptr, nullptr, m, true};
    dagrtpp::group g;
    double t0 = now_ns();
    (void)dagrt_spawn_ex(rt, g, fib_yielder, &x, DAGRT_SPAWN_FIBER);
    (void)g.wait(rt);
    return (now_ns() - t0) / static_cast<double>(m);
}

/* ----------------------------------------------------- parked memory */

struct parked_result {
    double rss, heap;
};

dagrtpp::task<> co_reader(dagrt *rt, int fd, dagrtpp::cancel_scope *c, std::atomic<int> *parked)
{
    char b[16];
    parked->fetch_add(1, std::memory_order_relaxed);   /* relaxed: polled, then a sleep */
    (void)co_await dagrtpp::co::read(rt, fd, b, sizeof b, -1, c);
}

struct fread_arg {
    dagrt *rt;
    int fd;
    dagrt_cancel *c;
    std::atomic<int> *parked;
};

void fib_reader(void *p)
{
    auto *a = static_cast<fread_arg *>(p);
    char b[16];
    a->parked->fetch_add(1, std::memory_order_relaxed);   /* relaxed: as above */
    (void)dagrt_read(a->rt, a->fd, b, sizeof b, -1, a->c);
}

parked_result parked_run(bool fibers, int n)
{
    int fds[16][2];
    for (auto &f : fds)
        if (pipe(f) != 0)
            std::abort();
    auto rt = make_rt(1, fibers ? n + 16 : 0);
    dagrtpp::cancel_scope sc;
    std::atomic<int> parked{0};
    std::vector<fread_arg> args(static_cast<std::size_t>(n));
    /* Warm: the reactor and its first records, one read of each kind. */
    {
        dagrtpp::group g;
        fread_arg w{rt, fds[0][0], nullptr, &parked};
        (void)dagrt_write(rt, fds[0][1], "x", 1, -1, nullptr);
        (void)dagrt_spawn_ex(rt, g, fib_reader, &w, DAGRT_SPAWN_FIBER);
        (void)g.wait(rt);
        parked = 0;
    }
    long rss0 = rss_bytes();
    long heap0 = new_bytes.load();
    dagrtpp::group g;
    for (int i = 0; i < n; i++) {
        int fd = fds[i % 16][0];
        if (fibers) {
            args[static_cast<std::size_t>(i)] = {rt, fd, sc.get(), &parked};
            (void)dagrt_spawn_ex(rt, g, fib_reader, &args[static_cast<std::size_t>(i)], DAGRT_SPAWN_FIBER);
        } else {
            (void)dagrtpp::spawn(rt, co_reader(rt, fd, &sc, &parked));
        }
    }
    while (parked.load() < n)
        (void)dagrtpp::sleep_for(rt, std::chrono::milliseconds(1));
    (void)dagrtpp::sleep_for(rt, std::chrono::milliseconds(20));
    parked_result r{static_cast<double>(rss_bytes() - rss0), static_cast<double>(new_bytes.load() - heap0)};
    sc.request();
    (void)g.wait(rt);
    rt.reset();
    for (auto &f : fds) {
        close(f[0]);
        close(f[1]);
    }
    return r;
}

} // namespace

/* Counts what the coroutine frames take (and everything else: the
 * counted stretch allocates nothing else per read once warm). */
void *operator new(std::size_t n)
{
    new_bytes.fetch_add(static_cast<long>(n), std::memory_order_relaxed);   /* relaxed: a statistic */
    void *p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

int main(int argc, char **argv)
{
    long m = argc > 1 ? std::atol(argv[1]) : 100000;
    int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    int workers = argc > 3 ? std::atoi(argv[3]) : 0;
    int n = argc > 4 ? std::atoi(argv[4]) : 10000;
    std::vector<double> cp, fp, cy, fy;
    for (int r = 0; r < runs; r++) {
        cp.push_back(co_pingpong(workers, m));
        fp.push_back(fib_pingpong(workers, m));
        cy.push_back(co_yield_ns(workers, m));
        fy.push_back(fib_yield_ns(workers, m));
    }
    std::printf("suspend+resume through the scheduler, ns per suspension (median of %d runs, %ld round trips, %d workers)\n",
                runs, m, workers);
    std::printf("%-14s %10s %10s %8s\n", "", "coroutine", "fiber", "co/fiber");
    std::printf("%-14s %10.1f %10.1f %8.2f\n", "sem_pingpong", median(cp), median(fp), median(cp) / median(fp));
    std::printf("%-14s %10.1f %10.1f %8.2f\n", "yield", median(cy), median(fy), median(cy) / median(fy));

    std::vector<double> crss, cheap, frss;
    for (int r = 0; r < 3; r++) {
        auto c = parked_run(false, n);
        auto f = parked_run(true, n);
        crss.push_back(c.rss);
        cheap.push_back(c.heap);
        frss.push_back(f.rss);
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    double stack = static_cast<double>(cfg.fiber_stack_size ? cfg.fiber_stack_size : 64 * 1024);
    std::printf("\n%d reads parked at once (median of 3 runs), bytes per parked read\n", n);
    std::printf("%-28s %10s %10s %8s\n", "", "coroutine", "fiber", "co/fiber");
    std::printf("%-28s %10.0f %10.0f %8.3f\n", "resident memory grown", median(crss) / n, median(frss) / n,
                median(crss) / median(frss));
    std::printf("%-28s %10.0f %10s\n", "coroutine frames (new)", median(cheap) / n, "-");
    std::printf("%-28s %10s %10.0f\n", "fiber stack reserved", "-", stack);
    return 0;
}
