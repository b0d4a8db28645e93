/*
 * cxx_scenarios.cpp - dagrt.hpp (runtime/include/) by behaviour: spawns of
 * every kind of callable on every path a task takes, the parallel-for's
 * two forms, the error category, the runtime owner, the sync wrappers
 * with the standard locks, cancel scopes and deadlines. Listed in
 * cxx_list.h, hosted by tests/scenario/ (Criterion, suite unit; the plain
 * driver, suite tsan). The allocation check is cxx_alloc.cpp (its own
 * program); the compile matrix and the exception's end are
 * tests/build/hpp_check.sh.
 */
#include "dagrt.hpp"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scenario.h"

using namespace std::chrono_literals;

namespace {

int scale(int n, int min)
{
    const char *s = std::getenv("DAGC_TEST_SCALE");
    double f = s ? std::atof(s) : 1.0;
    int r = static_cast<int>(n * (f > 0 ? f : 1.0));
    return r < min ? min : r;
}

/* Counts the live objects of a type, so a test sees every copy end. */
struct live_count {
    static std::atomic<long> live;
    live_count() noexcept { live.fetch_add(1, std::memory_order_relaxed); }   /* relaxed: read after waits */
    live_count(const live_count &) noexcept { live.fetch_add(1, std::memory_order_relaxed); }
    live_count(live_count &&) noexcept { live.fetch_add(1, std::memory_order_relaxed); }
    ~live_count() { live.fetch_sub(1, std::memory_order_relaxed); }
};
std::atomic<long> live_count::live{0};

/* A copy that may throw (not noexcept) but a move that cannot: spawned by
 * a copy in the caller, then moved into the task. */
struct throwing_copy {
    live_count lc;
    std::atomic<int> *hits;
    throwing_copy(std::atomic<int> *h) : hits(h) {}
    throwing_copy(const throwing_copy &o) : lc(o.lc), hits(o.hits) {}
    throwing_copy(throwing_copy &&o) noexcept : lc(std::move(o.lc)), hits(o.hits) {}
    void operator()() const { hits->fetch_add(1, std::memory_order_relaxed); }   /* relaxed: read after the wait */
};

/* A move that may throw: cannot go inline, so it is allocated. */
struct throwing_move {
    live_count lc;
    std::atomic<int> *hits;
    throwing_move(std::atomic<int> *h) : hits(h) {}
    throwing_move(const throwing_move &o) : lc(o.lc), hits(o.hits) {}
    throwing_move(throwing_move &&o) : lc(std::move(o.lc)), hits(o.hits) {}
    void operator()() const { hits->fetch_add(1, std::memory_order_relaxed); }   /* relaxed: read after the wait */
};

std::atomic<int> fn_hits{0};
void plain_function() { fn_hits.fetch_add(1, std::memory_order_relaxed); }   /* relaxed: read after the wait */

dagrt_config two_workers()
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    return cfg;
}

} // namespace

namespace {

/* A trivially copyable callable of 12 bytes, under two words: its bytes
 * arrive whole through dagrt_spawn_words. */
struct three_ints {
    std::atomic<int> *hits;
    int a;
    void operator()() const { hits->fetch_add(a == 0x5a5a5a5a ? 1 : 1000, std::memory_order_relaxed); }
};

/* 16 bytes at 16-byte alignment: the storage's own alignment. */
struct alignas(16) aligned16 {
    std::atomic<int> *hits;
    void operator()() const
    {
        bool ok = reinterpret_cast<std::uintptr_t>(this) % 16 == 0;
        hits->fetch_add(ok ? 1 : 1000, std::memory_order_relaxed);   /* relaxed: read after the wait */
    }
};

std::atomic<int> empty_hits{0};

/* The callables of two words or less (dagrt_spawn_words when no flags;
 * dagrt_spawn_inline with flags), from the main thread, a task and a
 * fiber: each runs once with its state whole. */
int small_callables(dagrt *rt)
{
    int bad = 0;
    std::atomic<int> hits{0};
    empty_hits.store(0);
    auto spawn_all = [&hits](dagrt *r, dagrtpp::group &g, unsigned fl) {
        int b = 0;
        auto empty = [] { empty_hits.fetch_add(1, std::memory_order_relaxed); };   /* relaxed: read after the wait */
        auto one = [&hits] { hits.fetch_add(1, std::memory_order_relaxed); };
        three_ints ti{&hits, 0x5a5a5a5a};
        aligned16 al{&hits};
        static_assert(std::is_empty_v<decltype(empty)> && sizeof(one) == sizeof(void *), "sizes");
        static_assert(dagrtpp::detail::fits_words<three_ints> && dagrtpp::detail::fits_words<aligned16>,
                      "two words or less");
        b += dagrtpp::spawn(r, g, empty, fl) ? 1 : 0;
        b += dagrtpp::spawn(r, g, one, fl) ? 1 : 0;
        b += dagrtpp::spawn(r, g, ti, fl) ? 1 : 0;
        b += dagrtpp::spawn(r, g, std::move(ti), fl) ? 1 : 0;
        b += dagrtpp::spawn(r, g, al, fl) ? 1 : 0;
        const auto &cal = al;   /* a const lvalue: the same bytes */
        b += dagrtpp::spawn(r, g, cal, fl) ? 1 : 0;
        return b;
    };
    std::atomic<int> nested_bad{0};
    {
        dagrtpp::group g;
        for (unsigned fl : {0u, unsigned(DAGRT_SPAWN_HOT)})
            bad += spawn_all(rt, g, fl);
        for (unsigned fl : {0u, unsigned(DAGRT_SPAWN_FIBER)})
            EXPECT(!dagrtpp::spawn(rt, g, [&, rt] {
                dagrtpp::group inner;
                nested_bad.fetch_add(spawn_all(rt, inner, 0), std::memory_order_relaxed);
                nested_bad.fetch_add(inner.wait(rt) ? 1 : 0, std::memory_order_relaxed);
            }, fl));
        EXPECT(!g.wait(rt));
    }
    EXPECT(nested_bad.load() == 0);
    EXPECT(empty_hits.load() == 4);
    EXPECT(hits.load() == 4 * 5);
    /* Refused on the words path too: nothing runs. */
    auto one = [&hits] { hits.fetch_add(1, std::memory_order_relaxed); };
    {
        dagrtpp::group g;
        EXPECT(dagrtpp::spawn(nullptr, g, one) == DAGRT_EINVAL);
        EXPECT(!g.wait(rt));
    }
    EXPECT(hits.load() == 4 * 5);
    return bad;
}

} // namespace

/* Lambdas of every size class: captured state arrives whole, each copy
 * runs once and is destroyed (live count back to 0). */
extern "C" int cxx_hpp_spawn_inline(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    EXPECT(rt);
    int n = scale(20000, 2000);
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    {
        dagrtpp::group g;
        for (int i = 0; i < n; i++) {
            std::atomic<int> *slot = &seen[static_cast<size_t>(i)];
            switch (i % 4) {
            case 0: {   /* two words: trivially copied */
                auto f = [slot, i] { slot->fetch_add(i % 4 == 0 ? 1 : 100, std::memory_order_relaxed); };
                static_assert(!dagrtpp::spawn_allocates<decltype(f)>, "a 16-byte lambda is inline");
                EXPECT(!dagrtpp::spawn(rt, g, f));
                break;
            }
            case 1: {   /* a string and a counted object: placed, destroyed by the task */
                std::string s = "task " + std::to_string(i);
                live_count lc;
                auto f = [slot, s, lc] {
                    (void)lc;
                    slot->fetch_add(s.rfind("task ", 0) == 0 ? 1 : 100, std::memory_order_relaxed);
                };
                static_assert(!dagrtpp::spawn_allocates<decltype(f)>, "a string lambda is inline");
                EXPECT(!dagrtpp::spawn(rt, g, std::move(f)));
                break;
            }
            case 2: {   /* 80 bytes exactly: the storage's size */
                std::array<char, DAGRT_SPAWN_INLINE_SIZE - 2 * sizeof(void *)> a;
                a.fill(static_cast<char>(i));
                auto f = [slot, a, i] {
                    bool ok = true;
                    for (char c : a)
                        ok = ok && c == static_cast<char>(i);
                    slot->fetch_add(ok ? 1 : 100, std::memory_order_relaxed);
                };
                static_assert(sizeof(f) == DAGRT_SPAWN_INLINE_SIZE, "fills the storage");
                static_assert(!dagrtpp::spawn_allocates<decltype(f)>, "80 bytes is inline");
                EXPECT(!dagrtpp::spawn(rt, g, f));
                break;
            }
            default: {   /* one byte over: allocated, freed by the task */
                std::array<char, DAGRT_SPAWN_INLINE_SIZE> a;
                a.fill(static_cast<char>(i));
                live_count lc;
                auto f = [slot, a, i, lc] {
                    (void)lc;
                    slot->fetch_add(a[DAGRT_SPAWN_INLINE_SIZE - 1] == static_cast<char>(i) ? 1 : 100,
                                    std::memory_order_relaxed);
                };
                static_assert(dagrtpp::spawn_allocates<decltype(f)>, "over 80 bytes allocates");
                EXPECT(!dagrtpp::spawn(rt, g, f));
                break;
            }
            }
        }
        EXPECT(!g.wait(rt));
        EXPECT(g.done());
    }
    int wrong = 0;
    for (auto &s : seen)
        wrong += s.load() != 1;
    if (wrong)
        std::fprintf(stderr, "%d of %d tasks ran other than once, or saw torn state\n", wrong, n);
    EXPECT(wrong == 0);
    EXPECT(live_count::live.load() == 0);
    bad += small_callables(rt);
    return bad;
}

/* Where tasks run: plain, hot, main, fiber (suspending in an event wait),
 * fire and forget, from a thread outside the runtime; function objects
 * that copy with a throw, move with a throw, plain functions. */
extern "C" int cxx_hpp_spawn_kinds(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    std::atomic<int> hits{0};
    dagrtpp::event go;
    {
        dagrtpp::group g;
        dagrt *r = rt;
        /* Fibers that suspend until the event is set. */
        for (int i = 0; i < 8; i++)
            EXPECT(!dagrtpp::spawn(rt, g, [&, r] {
                if (!dagrt_in_fiber(r) || go.wait(r))
                    hits.fetch_add(1000, std::memory_order_relaxed);
                hits.fetch_add(1, std::memory_order_relaxed);   /* relaxed: read after the wait */
            }, DAGRT_SPAWN_FIBER));
        EXPECT(!dagrtpp::spawn(rt, g, [&, r] {
            if (!dagrt_on_main_thread(r))
                hits.fetch_add(1000, std::memory_order_relaxed);
            hits.fetch_add(1, std::memory_order_relaxed);
        }, DAGRT_SPAWN_MAIN));
        EXPECT(!dagrtpp::spawn(rt, g, [&] { hits.fetch_add(1, std::memory_order_relaxed); }, DAGRT_SPAWN_HOT));
        throwing_copy tc(&hits);
        static_assert(!dagrtpp::spawn_allocates<throwing_copy>, "nothrow move: inline");
        EXPECT(!dagrtpp::spawn(rt, g, tc));            /* copied here, moved in */
        EXPECT(!dagrtpp::spawn(rt, g, std::move(tc))); /* moved in */
        throwing_move tm(&hits);
        static_assert(dagrtpp::spawn_allocates<throwing_move>, "a move that may throw allocates");
        EXPECT(!dagrtpp::spawn(rt, g, tm));
        EXPECT(!dagrtpp::spawn(rt, g, plain_function));
        EXPECT(!dagrtpp::spawn(rt, g, &plain_function));
        std::function<void()> sf = [&] { hits.fetch_add(1, std::memory_order_relaxed); };
        EXPECT(!dagrtpp::spawn(rt, g, sf));
        go.set();
        EXPECT(!g.wait(rt));
    }
    EXPECT(hits.load() == 8 + 1 + 1 + 2 + 1 + 1);
    EXPECT(fn_hits.exchange(0) == 2);
    /* From a thread that is not the runtime's, fire and forget. */
    std::atomic<int> outside{0};
    std::thread th([&] {
        for (int i = 0; i < 1000; i++) {
            std::string s(40, 'x');   /* a heap string, moved into the task */
            if (dagrtpp::spawn(rt, [&outside, s = std::move(s)] {
                    outside.fetch_add(s.size() == 40 ? 1 : 1000, std::memory_order_relaxed);
                }))
                outside.fetch_add(100000);
        }
    });
    th.join();
    for (int i = 0; i < 20000 && outside.load() < 1000; i++)
        (void)dagrtpp::sleep_for(rt, 100us);
    EXPECT(outside.load() == 1000);
    rt.reset();
    EXPECT(live_count::live.load() == 0);
    return bad;
}

/* A spawn the runtime refuses: the callable never runs and its copy is
 * gone (inline and allocated alike). */
extern "C" int cxx_hpp_spawn_refused(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    std::atomic<int> ran{0};
    {
        dagrtpp::group g;
        live_count lc;
        std::array<char, 200> big{};
        auto small = [&ran, lc] { (void)lc; ran++; };
        auto large = [&ran, lc, big] { (void)lc; (void)big; ran++; };
        static_assert(dagrtpp::spawn_allocates<decltype(large)>, "large allocates");
        const unsigned bad_flags[] = {DAGRT_SPAWN_MAIN | DAGRT_SPAWN_FIBER, DAGRT_SPAWN_LARGE_STACK, 1u << 12};
        for (unsigned fl : bad_flags) {
            EXPECT(dagrtpp::spawn(rt, g, small, fl) == DAGRT_EINVAL);
            EXPECT(dagrtpp::spawn(rt, g, large, fl) == DAGRT_EINVAL);
        }
        EXPECT(dagrtpp::spawn(nullptr, g, small) == std::errc::invalid_argument);
        EXPECT(!g.wait(rt));
        EXPECT(live_count::live.load() == 3);   /* lc and the two lambdas' copies: no more */
    }
    EXPECT(ran.load() == 0);
    EXPECT(live_count::live.load() == 0);
    return bad;
}

/* Both forms cover the range exactly once, from the main thread, a task
 * and a fiber; an empty range is nothing. */
extern "C" int cxx_hpp_parallel_for(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    const size_t n = static_cast<size_t>(scale(200000, 20000));
    std::vector<std::atomic<int>> v(n);
    EXPECT(!dagrtpp::parallel_for(rt, 0, n, [&](size_t i) { v[i].fetch_add(1, std::memory_order_relaxed); }));
    EXPECT(!dagrtpp::parallel_for_range(rt, 10, n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++)
            v[i].fetch_add(2, std::memory_order_relaxed);
    }, 64));
    std::atomic<int> calls{0};
    EXPECT(!dagrtpp::parallel_for(rt, 5, 5, [&](size_t) { calls++; }));
    EXPECT(calls.load() == 0);
    EXPECT(dagrtpp::parallel_for(rt, 6, 5, [&](size_t) { calls++; }) == std::errc::invalid_argument);
    /* Nested in tasks and fibers. */
    {
        dagrtpp::group g;
        dagrt *r = rt;
        for (unsigned fl : {0u, unsigned(DAGRT_SPAWN_FIBER)})
            EXPECT(!dagrtpp::spawn(rt, g, [&, r] {
                (void)dagrtpp::parallel_for(r, 0, 1000, [&](size_t i) { v[i].fetch_add(4, std::memory_order_relaxed); });
            }, fl));
        EXPECT(!g.wait(rt));
    }
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        int want = 1 + (i >= 10 ? 2 : 0) + (i < 1000 ? 8 : 0);
        wrong += v[i].load() != want;
    }
    if (wrong)
        std::fprintf(stderr, "%zu indices visited wrongly\n", wrong);
    EXPECT(wrong == 0);
    return bad;
}

/* The category is the C list's: every code's message is dagrt_strerror's,
 * the portable ones compare with std::errc, dagrt_error converts. */
extern "C" int cxx_hpp_errors(void)
{
    int bad = 0;
    const std::error_category &cat = dagrtpp::dagrt_category();
    EXPECT(std::strcmp(cat.name(), "dagrt") == 0);
#define CHECK_CODE_(name, value, msg) \
    EXPECT(std::error_code(value, cat).message() == std::string(msg)); \
    EXPECT(std::error_code(value, cat).message() == dagrt_strerror(value)); \
    EXPECT(std::error_code(DAGRT_##name) == std::error_code(value, cat)); \
    EXPECT(static_cast<bool>(std::error_code(DAGRT_##name)) == (value != 0));
    DAGRT_ERRNO_MAP(CHECK_CODE_)
#undef CHECK_CODE_
    std::error_code to = DAGRT_ETIMEDOUT;
    EXPECT(to == std::errc::timed_out);
    EXPECT(std::error_code(DAGRT_ECANCELED) == std::errc::operation_canceled);
    EXPECT(std::error_code(DAGRT_ENOENT) == std::errc::no_such_file_or_directory);
    EXPECT(std::error_code(DAGRT_EINVAL) == std::errc::invalid_argument);
    EXPECT(std::error_code(DAGRT_EINVAL) != std::errc::timed_out);
    EXPECT(std::error_code(DAGRT_ENESTED).default_error_condition().category() == cat);
    EXPECT(!dagrtpp::make_error(0) && !dagrtpp::make_error(42));
    EXPECT(dagrtpp::make_error(DAGRT_EBUSY) == DAGRT_EBUSY);
#if DAGRTPP_EXCEPTIONS
    bool threw = false;
    try {
        dagrtpp::throw_if_error(DAGRT_ETIMEDOUT, "wait");
    } catch (const std::system_error &e) {
        threw = e.code() == std::errc::timed_out;
    }
    EXPECT(threw);
#endif
    dagrtpp::throw_if_error(std::error_code());   /* no error: nothing */
    return bad;
}

/* The owner: create, convert, move, a refused configuration, adoption,
 * std::unique_ptr. */
extern "C" int cxx_hpp_runtime_owner(void)
{
    int bad = 0;
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = -5;
    dagrtpp::runtime refused(cfg);
    EXPECT(!refused);
    EXPECT(refused.error() == DAGRT_EINVAL);
    dagrtpp::runtime a(two_workers());
    EXPECT(a && !a.error() && a.workers() == 2);
    dagrt *raw = a;
    EXPECT(raw == a.get() && dagrt_on_main_thread(a));
    dagrtpp::runtime b(std::move(a));
    EXPECT(!a && b.get() == raw);
    std::atomic<int> ran{0};
    EXPECT(!dagrtpp::spawn(b, [&] { ran++; }));
    b = dagrtpp::runtime();   /* destroys the first (which ran the task) */
    EXPECT(ran.load() == 1);
    EXPECT(b && b.get() != nullptr);
    dagrtpp::runtime c(b.release());
    EXPECT(!b && c);
    auto u = std::make_unique<dagrtpp::runtime>(two_workers());
    EXPECT(!dagrtpp::spawn(*u, [&] { ran++; }));
    u.reset();
    EXPECT(ran.load() == 2);
    return bad;
}

/* The sync wrappers under the standard locks, between fiber tasks and
 * the main thread: a counter under dagrtpp::mutex, a queue
 * under a condition_variable, a semaphore's units, event timeouts. */
extern "C" int cxx_hpp_sync(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    dagrt *r = rt;
    dagrtpp::mutex mu(rt);
    long counter = 0;
    const int per = scale(2000, 200);
    {
        dagrtpp::group g;
        for (int t = 0; t < 8; t++)
            EXPECT(!dagrtpp::spawn(rt, g, [&] {
                for (int i = 0; i < per; i++) {
                    std::lock_guard<dagrtpp::mutex> lk(mu);
                    counter++;
                }
            }, DAGRT_SPAWN_FIBER));   /* a plain task blocking on a lock that a parked fiber was handed
                                      * could block every thread (the runtime warns): fibers only */
        for (int i = 0; i < per; i++) {
            std::unique_lock<dagrtpp::mutex> lk(mu);
            counter++;
        }
        EXPECT(!g.wait(rt));
    }
    EXPECT(counter == 9L * per);
    {
        std::unique_lock<dagrtpp::mutex> lk(mu, std::defer_lock);
        EXPECT(lk.try_lock());
        EXPECT(!mu.try_lock());
        EXPECT(!mu.try_lock_for(2ms));
        EXPECT(mu.lock_until(dagrtpp::clock::now() + 1ms) == std::errc::timed_out);
    }
    EXPECT(mu.try_lock_until(dagrtpp::clock::now() + 1s));
    mu.unlock();

    /* Producer/consumer over the condition variable. */
    dagrtpp::condition_variable cv;
    std::vector<int> q;
    bool done = false;
    long sum = 0;
    {
        dagrtpp::group g;
        EXPECT(!dagrtpp::spawn(rt, g, [&] {
            std::unique_lock<dagrtpp::mutex> lk(mu);
            for (;;) {
                if (cv.wait(lk, [&] { return !q.empty() || done; }))
                    return;
                while (!q.empty()) {
                    sum += q.back();
                    q.pop_back();
                }
                if (done)
                    return;
            }
        }, DAGRT_SPAWN_FIBER));
        for (int i = 1; i <= 100; i++) {
            {
                std::lock_guard<dagrtpp::mutex> lk(mu);
                q.push_back(i);
            }
            cv.notify_one();
        }
        {
            std::lock_guard<dagrtpp::mutex> lk(mu);
            done = true;
        }
        cv.notify_all();
        EXPECT(!g.wait(rt));
    }
    EXPECT(sum == 5050);
    {
        std::unique_lock<dagrtpp::mutex> lk(mu);
        EXPECT(cv.wait_for(lk, 1ms) == std::errc::timed_out);
        EXPECT(lk.owns_lock());
    }

    /* A semaphore of two units among fibers: never more than two inside. */
    dagrtpp::semaphore sem(2);
    std::atomic<int> inside{0}, most{0};
    {
        dagrtpp::group g;
        for (int t = 0; t < 16; t++)
            EXPECT(!dagrtpp::spawn(rt, g, [&, r] {
                if (sem.acquire(r))
                    return;
                int now = ++inside;
                int m = most.load();
                while (now > m && !most.compare_exchange_weak(m, now)) {
                }
                (void)dagrt_fiber_yield(r);
                --inside;
                sem.release();
            }, DAGRT_SPAWN_FIBER));
        EXPECT(!g.wait(rt));
    }
    EXPECT(most.load() >= 1 && most.load() <= 2);
    EXPECT(sem.try_acquire() && sem.try_acquire() && !sem.try_acquire());
    EXPECT(sem.acquire_for(rt, 1ms) == std::errc::timed_out);
    sem.release(2);

    dagrtpp::event ev;
    EXPECT(!ev.is_set());
    EXPECT(ev.wait_for(rt, 1ms) == DAGRT_ETIMEDOUT);
    EXPECT(ev.wait_until(rt, dagrtpp::clock::now()) == std::errc::timed_out);
    ev.set();
    EXPECT(ev.is_set() && !ev.wait(rt) && !ev.wait_for(rt, 1h));
    ev.reset();
    EXPECT(!ev.is_set());
    return bad;
}

/* Cancel scopes: a request ends waits below it, a deadline times them
 * out, a child's request leaves its parent alone. */
extern "C" int cxx_hpp_cancel_deadline(void)
{
    int bad = 0;
    dagrtpp::runtime rt(two_workers());
    dagrt *r = rt;
    dagrtpp::cancel_scope parent;
    dagrtpp::cancel_scope child(&parent);
    EXPECT(child.deadline() == dagrtpp::clock::time_point::max());
    dagrtpp::event never;
    std::atomic<int> cancelled{0};
    {
        dagrtpp::group g;
        for (int i = 0; i < 4; i++)
            EXPECT(!dagrtpp::spawn(rt, g, [&, r, i] {
                std::error_code ec = i % 2 ? never.wait_until(r, dagrtpp::clock::time_point::max(), &child)
                                           : dagrtpp::sleep_for(r, 1h, &child);
                if (ec == std::errc::operation_canceled)
                    cancelled++;
            }, DAGRT_SPAWN_FIBER));
        (void)dagrtpp::sleep_for(rt, 5ms);
        child.request();
        EXPECT(!g.wait(rt));
    }
    EXPECT(cancelled.load() == 4);
    EXPECT(child.requested() && !parent.requested());
    auto t0 = dagrtpp::clock::now();
    dagrtpp::cancel_scope timed(t0 + 20ms, &parent);
    EXPECT(timed.deadline() == t0 + 20ms);
    EXPECT(dagrtpp::sleep_for(rt, 1h, &timed) == std::errc::timed_out);
    EXPECT(dagrtpp::clock::now() - t0 >= 20ms);
    EXPECT(!timed.requested());
    return bad;
}

/* cxx_perframe.cpp (v2.2): the per-frame copies of dagc's C++ back end.
 * tests/build/hpp_check.sh builds these scenarios from the header alone
 * (-DCXX_HEADER_ONLY): there this one, which needs dagc's output, is left
 * out of the table (an entry without fn is not run); meson's builds run it. */
#if defined(CXX_HEADER_ONLY)
#define cxx_dagc_perframe nullptr
#else
extern "C" int cxx_dagc_perframe(void);
#endif

extern "C" const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, cxx_##name, nullptr},
#include "cxx_list.h"
#undef SCENARIO
    {nullptr, nullptr, nullptr},
};
