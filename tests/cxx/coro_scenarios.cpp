/*
 * coro_scenarios.cpp - dagrt_coro.hpp (C++20 coroutines on the pool; the
 * C side: dagrt.h's dagrt_*_async, runtime/wait/async.c) by behaviour:
 * tasks started from the main thread, an outside thread and a coroutine,
 * results and exceptions; every wait of the sync objects, sleeps, groups
 * and cancel scopes; a continuation on the main thread; a coroutine and a
 * fiber on one event; FIFO hand-offs among asynchronous and blocking
 * waiters; misuse; dagrt_destroy with coroutines suspended (frames
 * destroyed); every I/O call on both reactors; 10,000 coroutines parked on
 * reads and timers at once, then cancelled. Listed in coro_list.h, hosted
 * by tests/scenario/ (Criterion, suite unit; the plain driver, suite
 * tsan). g++ and clang++, with and without exceptions, and the header's
 * refusal below C++20: tests/build/coro_check.sh.
 */
#include "dagrt_coro.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

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

dagrtpp::runtime make_rt(int workers, bool fallback = false)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.io_fallback = fallback;
    return dagrtpp::runtime(cfg);
}

/* Live coroutine frames of the scenarios that count them: a coroutine
 * takes a frame_count by value, whose copy in its frame lives until the
 * frame is destroyed (a local would end with the body). */
std::atomic<long> frames{0};
struct frame_count {
    frame_count() noexcept { frames.fetch_add(1, std::memory_order_relaxed); }   /* relaxed: read after waits */
    frame_count(const frame_count &) noexcept { frames.fetch_add(1, std::memory_order_relaxed); }
    frame_count(frame_count &&) noexcept { frames.fetch_add(1, std::memory_order_relaxed); }
    ~frame_count() { frames.fetch_sub(1, std::memory_order_relaxed); }
};

dagrtpp::task<int> add(dagrt *rt, int a, int b)
{
    (void)co_await dagrtpp::co::sleep_for(rt, 0ns);   /* no wait: goes on at once */
    co_return a + b;
}

dagrtpp::task<int> sum_tree(dagrt *rt, int depth)
{
    if (depth == 0)
        co_return co_await add(rt, 1, 0);
    int l = co_await sum_tree(rt, depth - 1);
    (void)co_await dagrtpp::co::sleep_for(rt, 10us);   /* suspends: resumed by a task */
    int r = co_await sum_tree(rt, depth - 1);
    co_return l + r;
}

#if DAGRTPP_EXCEPTIONS
dagrtpp::task<int> thrower(dagrt *rt)
{
    (void)co_await dagrtpp::co::sleep_for(rt, 1ms);
    if (rt)
        throw std::runtime_error("coro boom");
    co_return 0;
}
#endif

} // namespace

/* Results through co_await chains, sync_wait from the main thread and from
 * a thread outside the runtime, start + join from a coroutine, wait from
 * a plain task, and exceptions where results are taken. */
static int coro_tasks_cxx()
{
    int bad = 0;
    for (int workers : {0, 1, 3}) {
        auto rt = make_rt(workers);
        EXPECT(rt);
        dagrt *r = rt;
        EXPECT(dagrtpp::sync_wait(r, sum_tree(r, 5)) == 32);
        std::atomic<int> got{0};
        std::thread outside([&] { got = dagrtpp::sync_wait(r, sum_tree(r, 3)); });
        while (got.load() == 0)   /* with no workers, the main thread runs it */
            (void)dagrtpp::sleep_for(r, 100us);
        outside.join();
        EXPECT(got.load() == 8);
        /* A coroutine starts others and joins them, suspended meanwhile. */
        auto parent = [](dagrt *rt2) -> dagrtpp::task<int> {
            std::vector<dagrtpp::started<int>> kids;
            for (int i = 0; i < 8; i++)
                kids.push_back(dagrtpp::start(rt2, sum_tree(rt2, 2)));
            int total = 0;
            for (auto &k : kids) {
                if (!co_await k.join(rt2))
                    total += k.get();
            }
            co_return total;
        };
        EXPECT(dagrtpp::sync_wait(r, parent(r)) == 32);
        /* A detached one ends and frees its frame. (It signals with a
         * semaphore: an event's set may still touch it after a waiter's
         * lock-free look returned, so an event that goes right after its
         * wait must not be set from another thread.) */
        {
            dagrtpp::semaphore fin(0);
            auto det = [](dagrt *rt2, dagrtpp::semaphore *e, frame_count) -> dagrtpp::task<> {
                (void)co_await dagrtpp::co::sleep_for(rt2, 100us);
                e->release();
            };
            EXPECT(!dagrtpp::spawn(r, det(r, &fin, frame_count())));
            while (!fin.try_acquire())   /* a semaphore's wait blocks: sleep, which helps */
                (void)dagrtpp::sleep_for(r, 50us);
        }
        /* A started one whose handle is dropped runs on. */
        {
            dagrtpp::semaphore fin(0);
            auto one = [](dagrt *rt2, dagrtpp::semaphore *e) -> dagrtpp::task<int> {
                (void)co_await dagrtpp::co::sleep_for(rt2, 100us);
                e->release();
                co_return 1;
            };
            (void)dagrtpp::start(r, one(r, &fin));
            while (!fin.try_acquire())   /* a semaphore's wait blocks: sleep, which helps */
                (void)dagrtpp::sleep_for(r, 50us);
        }
        /* Waited for from a plain task (helps) and from a fiber task. */
        for (unsigned fl : {0u, static_cast<unsigned>(DAGRT_SPAWN_FIBER)}) {
            dagrtpp::group g;
            std::atomic<int> v{0};
            EXPECT(!dagrtpp::spawn(r, g, [&, r] {
                auto s = dagrtpp::start(r, sum_tree(r, 2));
                if (!s.wait(r))
                    v.store(s.get(), std::memory_order_relaxed);   /* relaxed: read after the group wait */
            }, fl));
            EXPECT(!g.wait(r));
            EXPECT(v.load() == 4);
        }
#if DAGRTPP_EXCEPTIONS
        bool caught = false;
        try {
            (void)dagrtpp::sync_wait(r, thrower(r));
        } catch (const std::runtime_error &e) {
            caught = std::strcmp(e.what(), "coro boom") == 0;
        }
        EXPECT(caught);
        auto catcher = [](dagrt *rt2) -> dagrtpp::task<bool> {
            try {
                (void)co_await thrower(rt2);
            } catch (const std::runtime_error &) {
                co_return true;
            }
            co_return false;
        };
        EXPECT(dagrtpp::sync_wait(r, catcher(r)));
#endif
    }
    EXPECT(frames.load() == 0);
    return bad;
}

/* Every sync object's wait from coroutines: event (set later, and its
 * deadline), mutex under contention, semaphore, condition variable,
 * group, sleep. */
static int coro_sync_waits_cxx()
{
    int bad = 0;
    for (int workers : {0, 2}) {
        auto rt = make_rt(workers);
        dagrt *r = rt;
        /* Event: set from outside the runtime wakes every waiter. */
        {
            dagrtpp::event e;
            std::atomic<int> woke{0};
            auto waiter = [](dagrt *rt2, dagrtpp::event *ev, std::atomic<int> *w) -> dagrtpp::task<> {
                if (!co_await dagrtpp::co::wait(rt2, *ev))
                    w->fetch_add(1, std::memory_order_relaxed);   /* relaxed: read after joins */
            };
            std::vector<dagrtpp::started<>> ws;
            for (int i = 0; i < 16; i++)
                ws.push_back(dagrtpp::start(r, waiter(r, &e, &woke)));
            std::thread setter([&] { std::this_thread::sleep_for(2ms); e.set(); });
            for (auto &w : ws)
                EXPECT(!w.wait(r));
            setter.join();
            EXPECT(woke.load() == 16);
            /* A set event: no suspend. Its deadline: ETIMEDOUT. */
            auto timed = [](dagrt *rt2, dagrtpp::event *ev) -> dagrtpp::task<int> {
                int score = 0;
                if (!co_await dagrtpp::co::wait(rt2, *ev))
                    score++;
                dagrtpp::event never;
                auto t0 = dagrtpp::clock::now();
                if (co_await dagrtpp::co::wait(rt2, never, t0 + 5ms) == std::errc::timed_out)
                    score++;
                if (dagrtpp::clock::now() - t0 >= 5ms)
                    score++;
                co_return score;
            };
            EXPECT(dagrtpp::sync_wait(r, timed(r, &e)) == 3);
        }
        /* Mutex: n coroutines add to a counter under it, suspending while
         * they hold it. */
        {
            dagrtpp::mutex m(r);
            long counter = 0;
            int n = scale(64, 8);
            auto adder = [](dagrt *rt2, dagrtpp::mutex *mx, long *c) -> dagrtpp::task<int> {
                int errs = 0;
                for (int i = 0; i < 20; i++) {
                    if (co_await dagrtpp::co::lock(*mx)) {
                        errs++;
                        continue;
                    }
                    long v = *c;
                    if (i % 4 == 0)
                        (void)co_await dagrtpp::co::sleep_for(rt2, 10us);   /* holding it, suspended */
                    *c = v + 1;
                    mx->unlock();
                }
                co_return errs;
            };
            std::vector<dagrtpp::started<int>> as;
            for (int i = 0; i < n; i++)
                as.push_back(dagrtpp::start(r, adder(r, &m, &counter)));
            int errs = 0;
            for (auto &a : as) {
                EXPECT(!a.wait(r));
                errs += a.get();
            }
            EXPECT(errs == 0);
            EXPECT(counter == 20L * n);
            /* A lock's deadline while another holds it. */
            EXPECT(m.try_lock());
            auto timed = [](dagrtpp::mutex *mx) -> dagrtpp::task<std::error_code> {
                co_return co_await dagrtpp::co::lock(*mx, dagrtpp::clock::now() + 2ms);
            };
            EXPECT(dagrtpp::sync_wait(r, timed(&m)) == std::errc::timed_out);
            m.unlock();
        }
        /* Semaphore: at most k inside at once. */
        {
            dagrtpp::semaphore s(3);
            std::atomic<int> inside{0}, most{0};
            auto user = [](dagrt *rt2, dagrtpp::semaphore *sm, std::atomic<int> *in, std::atomic<int> *mo)
                -> dagrtpp::task<> {
                if (co_await dagrtpp::co::acquire(rt2, *sm))
                    co_return;
                int now = in->fetch_add(1) + 1;
                int prev = mo->load();
                while (now > prev && !mo->compare_exchange_weak(prev, now)) {
                }
                (void)co_await dagrtpp::co::sleep_for(rt2, 200us);
                in->fetch_sub(1);
                sm->release();
            };
            std::vector<dagrtpp::started<>> us;
            for (int i = 0; i < 12; i++)
                us.push_back(dagrtpp::start(r, user(r, &s, &inside, &most)));
            for (auto &u : us)
                EXPECT(!u.wait(r));
            EXPECT(most.load() >= 1 && most.load() <= 3);
            EXPECT(inside.load() == 0);
            EXPECT(s.try_acquire() && s.try_acquire() && s.try_acquire() && !s.try_acquire());
        }
        /* Condition variable: a producer hands items to consumers. */
        {
            dagrtpp::mutex m(r);
            dagrtpp::condition_variable cv;
            int queue = 0, taken = 0, items = 40;
            bool over = false;
            auto consumer = [](dagrtpp::mutex *mx, dagrtpp::condition_variable *c, int *q, int *tk, bool *ov)
                -> dagrtpp::task<int> {
                int got = 0, errs = 0;
                if (co_await dagrtpp::co::lock(*mx))
                    co_return -1000;
                for (;;) {
                    while (*q == 0 && !*ov)
                        if (co_await dagrtpp::co::wait(*c, *mx))   /* m held again on return */
                            errs++;
                    if (*q == 0)
                        break;
                    (*q)--;
                    (*tk)++;
                    got++;
                }
                mx->unlock();
                co_return errs ? -errs : got;
            };
            std::vector<dagrtpp::started<int>> cs;
            for (int i = 0; i < 4; i++)
                cs.push_back(dagrtpp::start(r, consumer(&m, &cv, &queue, &taken, &over)));
            for (int i = 0; i < items; i++) {
                m.lock();
                queue++;
                m.unlock();
                cv.notify_one();
                if (i % 8 == 0)
                    (void)dagrtpp::sleep_for(r, 100us);
            }
            m.lock();
            over = true;
            m.unlock();
            cv.notify_all();
            int total = 0;
            for (auto &c : cs) {
                EXPECT(!c.wait(r));
                int g = c.get();
                EXPECT(g >= 0);
                total += g;
            }
            EXPECT(total == items && taken == items && queue == 0);
            /* Its deadline: ETIMEDOUT, and the mutex held again. */
            auto timed = [](dagrtpp::mutex *mx, dagrtpp::condition_variable *c) -> dagrtpp::task<int> {
                int score = 0;
                if (!co_await dagrtpp::co::lock(*mx))
                    score++;
                if (co_await dagrtpp::co::wait(*c, *mx, dagrtpp::clock::now() + 2ms) == std::errc::timed_out)
                    score++;
                if (!mx->try_lock())   /* held: by us */
                    score++;
                mx->unlock();
                co_return score;
            };
            EXPECT(dagrtpp::sync_wait(r, timed(&m, &cv)) == 3);
        }
        /* Group: a coroutine waits for tasks it spawned. */
        {
            auto spawner = [](dagrt *rt2) -> dagrtpp::task<int> {
                dagrtpp::group g;   /* in the frame: no owner */
                std::atomic<int> ran{0};
                for (int i = 0; i < 50; i++)
                    (void)dagrtpp::spawn(rt2, g, [&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
                std::error_code ec = co_await dagrtpp::co::wait(rt2, g);
                co_return ec ? -1 : ran.load();
            };
            EXPECT(dagrtpp::sync_wait(r, spawner(r)) == 50);
        }
        /* Sleeps: at least their length. */
        {
            auto sl = [](dagrt *rt2) -> dagrtpp::task<bool> {
                auto t0 = dagrtpp::clock::now();
                std::error_code ec = co_await dagrtpp::co::sleep_for(rt2, 3ms);
                bool ok = !ec && dagrtpp::clock::now() - t0 >= 3ms;
                ec = co_await dagrtpp::co::sleep_until(rt2, dagrtpp::clock::now() + 1ms);
                co_return ok && !ec;
            };
            EXPECT(dagrtpp::sync_wait(r, sl(r)));
        }
    }
    return bad;
}

/* Cancel scopes end every kind of wait with ECANCELED, and a scope's
 * deadline with ETIMEDOUT; cancelled() waits for the scope itself. */
static int coro_cancel_scopes_cxx()
{
    int bad = 0;
    auto rt = make_rt(2);
    dagrt *r = rt;
    dagrtpp::cancel_scope parent;
    dagrtpp::cancel_scope scope(&parent);
    dagrtpp::event never;
    dagrtpp::mutex held(r);
    EXPECT(held.try_lock());
    dagrtpp::semaphore empty(0);
    dagrtpp::condition_variable cv;
    std::atomic<int> cancelled{0}, started{0};
    auto waiter = [](dagrt *rt2, int kind, dagrtpp::cancel_scope *sc, dagrtpp::event *ev, dagrtpp::mutex *mx,
                     dagrtpp::semaphore *sm, dagrtpp::condition_variable *c, std::atomic<int> *st,
                     std::atomic<int> *cn) -> dagrtpp::task<> {
        auto forever = dagrtpp::clock::time_point::max();
        std::error_code ec;
        st->fetch_add(1);
        switch (kind) {
        case 0: ec = co_await dagrtpp::co::sleep_for(rt2, 1h, sc); break;
        case 1: ec = co_await dagrtpp::co::wait(rt2, *ev, forever, sc); break;
        case 2: ec = co_await dagrtpp::co::lock(*mx, forever, sc); break;
        case 3: ec = co_await dagrtpp::co::acquire(rt2, *sm, forever, sc); break;
        case 4: {
            dagrtpp::mutex own(rt2);
            (void)co_await dagrtpp::co::lock(own);
            ec = co_await dagrtpp::co::wait(*c, own, forever, sc);
            if (!own.try_lock())   /* held again */
                own.unlock();
            else
                ec = {};   /* not held: a failure */
            break;
        }
        default: ec = co_await dagrtpp::co::cancelled(rt2, *sc); break;
        }
        if (ec == std::errc::operation_canceled)
            cn->fetch_add(1);
    };
    std::vector<dagrtpp::started<>> ws;
    for (int k = 0; k < 6; k++)
        ws.push_back(dagrtpp::start(r, waiter(r, k, &scope, &never, &held, &empty, &cv, &started, &cancelled)));
    while (started.load() < 6)
        std::this_thread::yield();
    (void)dagrtpp::sleep_for(r, 2ms);
    scope.request();
    for (auto &w : ws)
        EXPECT(!w.wait(r));
    EXPECT(cancelled.load() == 6);
    EXPECT(!parent.requested());
    /* A requested scope answers at once. */
    auto again = [](dagrt *rt2, dagrtpp::cancel_scope *sc) -> dagrtpp::task<std::error_code> {
        co_return co_await dagrtpp::co::sleep_for(rt2, 1h, sc);
    };
    EXPECT(dagrtpp::sync_wait(r, again(r, &scope)) == std::errc::operation_canceled);
    /* A scope's deadline. */
    auto t0 = dagrtpp::clock::now();
    dagrtpp::cancel_scope timed(t0 + 3ms, &parent);
    auto dl = [](dagrt *rt2, dagrtpp::cancel_scope *sc, dagrtpp::event *ev) -> dagrtpp::task<int> {
        int score = 0;
        if (co_await dagrtpp::co::wait(rt2, *ev, dagrtpp::clock::time_point::max(), sc) == std::errc::timed_out)
            score++;
        if (co_await dagrtpp::co::cancelled(rt2, *sc) == std::errc::timed_out)
            score++;
        co_return score;
    };
    EXPECT(dagrtpp::sync_wait(r, dl(r, &timed, &never)) == 2);
    EXPECT(dagrtpp::clock::now() - t0 >= 3ms);
    held.unlock();
    return bad;
}

/* A coroutine moved to the main thread stays there across waits (its
 * ends are main-thread tasks, run where the main thread helps), and goes
 * back when asked; one started with DAGRT_SPAWN_MAIN
 * begins there. */
static int coro_on_main_cxx()
{
    int bad = 0;
    for (int workers : {0, 2}) {
        auto rt = make_rt(workers);
        dagrt *r = rt;
        auto hop = [](dagrt *rt2) -> dagrtpp::task<int> {
            int score = 0;
            if (!co_await dagrtpp::co::resume_on_main(rt2) && dagrt_thread_index(rt2) == 0)
                score++;
            for (int i = 0; i < 5; i++) {
                (void)co_await dagrtpp::co::sleep_for(rt2, 200us);
                if (dagrt_thread_index(rt2) == 0)
                    score++;
            }
            dagrtpp::event e(true);
            (void)co_await dagrtpp::co::wait(rt2, e);
            if (dagrt_thread_index(rt2) == 0)
                score++;
            /* Back to any thread (the main thread too, where it helps,
             * as a fiber's resume may). */
            if (!co_await dagrtpp::co::resume_on_workers(rt2) && !co_await dagrtpp::co::sleep_for(rt2, 200us))
                score++;
            co_return score;
        };
        /* Started from the main thread and from an outside thread; the
         * main thread helps in its wait. */
        EXPECT(dagrtpp::sync_wait(r, hop(r)) == 8);
        auto s = dagrtpp::start(r, hop(r));
        EXPECT(!s.wait(r));
        EXPECT(s.get() == 8);
        auto born = [](dagrt *rt2) -> dagrtpp::task<int> {
            int score = dagrt_thread_index(rt2) == 0;
            (void)co_await dagrtpp::co::sleep_for(rt2, 100us);
            co_return score + (dagrt_thread_index(rt2) == 0);
        };
        std::atomic<int> got{-1};
        std::thread outside([&] {
            auto s2 = dagrtpp::start(r, born(r), DAGRT_SPAWN_MAIN);
            /* Outside the runtime this blocks; the main thread runs it. */
            got = s2.wait(r) ? -2 : s2.get();
        });
        (void)dagrtpp::sleep_for(r, 1ms);
        while (got.load() == -1) {   /* the main thread runs the main queue while it pumps */
            (void)dagrt_pump_main(r);
            (void)dagrtpp::sleep_for(r, 100us);
        }
        outside.join();
        EXPECT(got.load() == 2);
    }
    return bad;
}

/* A coroutine and a fiber task waiting on one event are both woken by
 * its set; a coroutine and a fiber take turns on one mutex. */
static int coro_with_fiber_cxx()
{
    int bad = 0;
    auto rt = make_rt(2);
    dagrt *r = rt;
    for (int round = 0; round < scale(50, 5); round++) {
        dagrtpp::event e;
        std::atomic<int> woke{0};
        dagrtpp::group g;
        EXPECT(!dagrtpp::spawn(r, g, [&, r] {
            if (!e.wait(r))
                woke.fetch_add(1);
        }, DAGRT_SPAWN_FIBER));
        auto co = [](dagrt *rt2, dagrtpp::event *ev, std::atomic<int> *w) -> dagrtpp::task<> {
            if (!co_await dagrtpp::co::wait(rt2, *ev))
                w->fetch_add(1);
        };
        auto s = dagrtpp::start(r, co(r, &e, &woke));
        if (round % 2)
            (void)dagrtpp::sleep_for(r, 100us);   /* now and then both are parked first */
        e.set();
        EXPECT(!g.wait(r));
        EXPECT(!s.wait(r));
        EXPECT(woke.load() == 2);
    }
    dagrtpp::mutex m(r);
    long counter = 0;
    dagrtpp::group g;
    for (int i = 0; i < 4; i++)
        EXPECT(!dagrtpp::spawn(r, g, [&] {
            for (int k = 0; k < 100; k++) {
                std::lock_guard<dagrtpp::mutex> lk(m);
                counter++;
            }
        }, DAGRT_SPAWN_FIBER));
    auto co = [](dagrtpp::mutex *mx, long *c) -> dagrtpp::task<> {
        for (int k = 0; k < 100; k++) {
            if (co_await dagrtpp::co::lock(*mx))
                continue;
            (*c)++;
            mx->unlock();
        }
    };
    std::vector<dagrtpp::started<>> cs;
    for (int i = 0; i < 4; i++)
        cs.push_back(dagrtpp::start(r, co(&m, &counter)));
    EXPECT(!g.wait(r));
    for (auto &c : cs)
        EXPECT(!c.wait(r));
    EXPECT(counter == 800);
    return bad;
}

namespace {
struct order_rec {
    std::atomic<int> next{0}, done{0};
    int got[3] = {-1, -1, -1};
};
struct order_arg {
    order_rec *rec;
    int who;
    dagrt_mutex *m;
};
void order_end(void *p, int64_t r)
{
    auto *a = static_cast<order_arg *>(p);
    if (r == 0) {
        order_rec *rec = a->rec;
        rec->got[rec->next.fetch_add(1)] = a->who;
        (void)dagrt_mutex_unlock(a->m);
        rec->done.fetch_add(1);   /* seq_cst: after it, got[] is the reader's */
    }
}
} // namespace

/* The hand-off order of one queue: asynchronous waiters, armed in turn by
 * the main thread (each queued when its call returns DAGRT_PENDING), get
 * the mutex and the semaphore's units in that order. */
static int coro_fifo_cxx()
{
    int bad = 0;
    for (int workers : {0, 2}) {
        auto rt = make_rt(workers);
        dagrt *r = rt;
        for (int rep = 0; rep < 20; rep++) {
            dagrt_mutex m;
            dagrt_mutex_init(&m);
            EXPECT(dagrt_mutex_trylock(&m));
            order_rec rec;
            order_arg args[3];
            dagrt_async recs[3];
            for (int i = 0; i < 3; i++) {
                args[i] = {&rec, i, &m};
                dagrt_async_init(&recs[i], &order_end, &args[i], 0);
                EXPECT(dagrt_mutex_lock_async(r, &recs[i], &m, DAGRT_FOREVER, nullptr) == DAGRT_PENDING);
            }
            EXPECT(dagrt_mutex_unlock(&m) == 0);
            while (rec.done.load() < 3)
                (void)dagrt_sleep(r, 50000, nullptr);   /* helps: runs the ends queued here */
            EXPECT(rec.got[0] == 0 && rec.got[1] == 1 && rec.got[2] == 2);
            /* Every end has run: the mutex is free again. */
            while (!dagrt_mutex_trylock(&m))
                (void)dagrt_sleep(r, 50000, nullptr);
            EXPECT(dagrt_mutex_unlock(&m) == 0);
        }
    }
    return bad;
}

namespace {
/* One queue shared by asynchronous waiters (a coroutine's co::lock and
 * co::acquire are these very calls) and fiber tasks: who got the mutex or
 * a unit, in turn. */
struct mixed_rec {
    std::atomic<int> arrived{0};
    std::atomic<int> ngot{0};
    int got[4] = {-1, -1, -1, -1};
    dagrt_mutex *m = nullptr;   /* the mutex round: each holder hands it on */
};
struct mixed_arg {
    mixed_rec *rec;
    int who;
};
void mixed_end(void *p, int64_t r)
{
    auto *a = static_cast<mixed_arg *>(p);
    if (r != 0)
        return;
    mixed_rec *rec = a->rec;
    rec->got[rec->ngot.load()] = a->who;
    rec->ngot.fetch_add(1);   /* seq_cst: got[] is the next holder's, then the reader's */
    if (rec->m)
        (void)dagrt_mutex_unlock(rec->m);
}
} // namespace

/* Asynchronous waiters and fiber tasks on one queue are served in
 * arrival order: fibers 0 and 2 and asynchronous waits 1 and 3 queue in
 * that order on a held mutex, then on an empty semaphore; the mutex goes
 * 0, 1, 2, 3 (each holder hands it on), and the semaphore's units,
 * released one at a time, too. With no worker a fiber runs on the main
 * thread (in its sleep's help) until it parks, and an asynchronous call
 * queues before it returns: the order is the test's, not the scheduler's. */
static int coro_fifo_mixed_cxx()
{
    int bad = 0;
    auto rt = make_rt(0);
    dagrt *r = rt;
    for (int round = 0; round < 2; round++) {
        for (int rep = 0; rep < 10; rep++) {
            bool mutex_round = round == 0;
            dagrt_mutex m;
            dagrt_mutex_init(&m);
            dagrt_sem sem;
            dagrt_sem_init(&sem, 0);
            if (mutex_round)
                EXPECT(dagrt_mutex_trylock(&m));
            mixed_rec rec;
            rec.m = mutex_round ? &m : nullptr;
            mixed_arg args[4];
            dagrt_async recs[4];
            dagrtpp::group g;
            for (int who = 0; who < 4; who++) {
                args[who] = {&rec, who};
                if (who % 2 == 0) {
                    EXPECT(!dagrtpp::spawn(r, g, [&rec, &m, &sem, r, who, mutex_round] {
                        rec.arrived.fetch_add(1);
                        int e = mutex_round ? dagrt_mutex_lock(r, &m) : dagrt_sem_acquire(r, &sem);
                        mixed_arg self{&rec, who};
                        mixed_end(&self, e);
                    }, DAGRT_SPAWN_FIBER));
                    while (rec.arrived.load() <= who)
                        (void)dagrt_sleep(r, 10000, nullptr);   /* helps: it runs until it parks */
                } else {
                    dagrt_async_init(&recs[who], &mixed_end, &args[who], 0);
                    int64_t q = mutex_round ? dagrt_mutex_lock_async(r, &recs[who], &m, DAGRT_FOREVER, nullptr)
                                            : dagrt_sem_acquire_async(r, &recs[who], &sem, DAGRT_FOREVER, nullptr);
                    EXPECT(q == DAGRT_PENDING);
                    rec.arrived.fetch_add(1);
                }
            }
            EXPECT(rec.ngot.load() == 0);
            for (int k = 0; k < 4; k++) {
                if (mutex_round) {
                    if (k == 0)
                        EXPECT(dagrt_mutex_unlock(&m) == 0);   /* then each holder hands it on */
                } else {
                    dagrt_sem_release(&sem, 1);
                }
                while (rec.ngot.load() <= k)
                    (void)dagrt_sleep(r, 10000, nullptr);
                EXPECT(rec.got[k] == k);
                if (!mutex_round)
                    EXPECT(rec.ngot.load() == k + 1);   /* one unit, one waiter */
            }
            EXPECT(!g.wait(r));
        }
    }
    return bad;
}

namespace {
std::atomic<int> misuse_calls{0};
void misuse_end(void *, int64_t) { misuse_calls.fetch_add(1); }
} // namespace

/* Bad records, flags and threads get error codes; a wait that ends at
 * once calls nothing. */
static int coro_misuse_cxx()
{
    int bad = 0;
    auto rt = make_rt(1);
    dagrt *r = rt;
    dagrt_async a;
    std::memset(&a, 0, sizeof a);
    dagrt_event e;
    dagrt_event_init(&e, true);
    EXPECT(dagrt_event_wait_async(r, &a, &e, DAGRT_FOREVER, nullptr) == DAGRT_EINVAL);   /* never init'ed */
    dagrt_async_init(&a, &misuse_end, nullptr, DAGRT_SPAWN_FIBER);
    EXPECT(dagrt_sleep_async(r, &a, 1000, nullptr) == DAGRT_EINVAL);   /* fibers resume fibers, not this */
    dagrt_async_init(&a, nullptr, nullptr, 0);
    EXPECT(dagrt_sleep_async(r, &a, 1000, nullptr) == DAGRT_EINVAL);
    dagrt_async_init(&a, &misuse_end, nullptr, 0);
    EXPECT(dagrt_event_wait_async(nullptr, &a, &e, DAGRT_FOREVER, nullptr) == DAGRT_EINVAL);
    EXPECT(dagrt_event_wait_async(r, nullptr, &e, DAGRT_FOREVER, nullptr) == DAGRT_EINVAL);
    EXPECT(dagrt_event_wait_async(r, &a, nullptr, DAGRT_FOREVER, nullptr) == DAGRT_EINVAL);
    /* Set already, a sleep of 0, a free mutex: the answer now, no call. */
    EXPECT(dagrt_event_wait_async(r, &a, &e, DAGRT_FOREVER, nullptr) == 0);
    EXPECT(dagrt_sleep_async(r, &a, 0, nullptr) == 0);
    dagrt_mutex m;
    dagrt_mutex_init(&m);
    EXPECT(dagrt_mutex_lock_async(r, &a, &m, DAGRT_FOREVER, nullptr) == 0);
    EXPECT(dagrt_mutex_unlock(&m) == 0);
    dagrt_cond cv;
    dagrt_cond_init(&cv);
    EXPECT(dagrt_cond_wait_async(r, &a, &cv, &m, DAGRT_FOREVER, nullptr) == DAGRT_EPERM);   /* m not held */
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_group_wait_async(r, &a, &g) == 0);
    /* A past deadline: ETIMEDOUT now. */
    dagrt_event_init(&e, false);
    EXPECT(dagrt_event_wait_async(r, &a, &e, 1, nullptr) == DAGRT_ETIMEDOUT);
    /* From a thread that is not rt's. */
    int64_t outside = 0;
    std::thread t([&] { outside = dagrt_sleep_async(r, &a, 1000, nullptr); });
    t.join();
    EXPECT(outside == DAGRT_EPERM);
    EXPECT(misuse_calls.load() == 0);
    /* The C++ side: an empty task cannot start. */
    std::error_code ec;
    auto s = dagrtpp::start(r, dagrtpp::task<int>(), 0, &ec);
    EXPECT(!s && ec == std::errc::invalid_argument);
    return bad;
}

/* dagrt_destroy with coroutines suspended on every kind of wait: each
 * wait ends with ECANCELED, later waits answer it at once, every
 * coroutine runs to its end and every frame is destroyed (LSan checks the
 * rest under ASan). */
static int coro_destroy_suspended_cxx()
{
    int bad = 0;
    for (int workers : {0, 2}) {
        std::atomic<int> cancelled{0}, ended{0};
        dagrtpp::event never;
        dagrtpp::semaphore empty(0);
        {
            auto rt = make_rt(workers);
            dagrt *r = rt;
            dagrtpp::mutex held(r);
            EXPECT(held.try_lock());
            dagrtpp::condition_variable cv;
            dagrtpp::mutex cvm(r);
            auto co = [](dagrt *rt2, int kind, dagrtpp::event *ev, dagrtpp::semaphore *sm, dagrtpp::mutex *mx,
                         dagrtpp::condition_variable *c, dagrtpp::mutex *cm, std::atomic<int> *cn,
                         std::atomic<int> *en, frame_count) -> dagrtpp::task<> {
                std::error_code ec;
                switch (kind % 6) {
                case 0: ec = co_await dagrtpp::co::sleep_for(rt2, 1h); break;
                case 1: ec = co_await dagrtpp::co::wait(rt2, *ev); break;
                case 2: ec = co_await dagrtpp::co::lock(*mx); break;
                case 3: ec = co_await dagrtpp::co::acquire(rt2, *sm); break;
                case 4:
                    if (!co_await dagrtpp::co::lock(*cm)) {
                        ec = co_await dagrtpp::co::wait(*c, *cm);
                        cm->unlock();
                    }
                    break;
                default: {
                    auto child = [](dagrt *rt3, dagrtpp::event *ev2) -> dagrtpp::task<std::error_code> {
                        co_return co_await dagrtpp::co::wait(rt3, *ev2);
                    };
                    ec = co_await child(rt2, ev);
                    break;
                }
                }
                if (ec == std::errc::operation_canceled)
                    cn->fetch_add(1);
                /* Later waits are refused at once. */
                if (co_await dagrtpp::co::sleep_for(rt2, 1h) == std::errc::operation_canceled)
                    en->fetch_add(1);
            };
            int n = 60;
            for (int i = 0; i < n; i++)
                EXPECT(!dagrtpp::spawn(r, co(r, i, &never, &empty, &held, &cv, &cvm, &cancelled, &ended, frame_count())));
            /* A started one whose handle outlives the runtime. */
            auto s = dagrtpp::start(r, co(r, 1, &never, &empty, &held, &cv, &cvm, &cancelled, &ended, frame_count()));
            (void)dagrtpp::sleep_for(r, 5ms);
            EXPECT(frames.load() == n + 1);
            rt.reset();   /* dagrt_destroy */
            EXPECT(s.done());
            EXPECT(cancelled.load() == n + 1);
            EXPECT(ended.load() == n + 1);
            EXPECT(frames.load() == 1);   /* the started one's frame: its handle's */
        }
        EXPECT(frames.load() == 0);
    }
    return bad;
}

#if !defined(_WIN32)
namespace {

struct fds {
    int p[2] = {-1, -1};
    fds() { (void)!pipe(p); }
    ~fds()
    {
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
    }
};

int bound(int type, sockaddr_in *a)
{
    int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    std::memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *a;
    if (s < 0 || bind(s, reinterpret_cast<sockaddr *>(a), len) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr *>(a), &len) != 0)
        return -1;
    return s;
}

dagrtpp::task<int> io_all(dagrt *rt)
{
    int score = 0;
    /* read / write on a pipe: the read parks until the write. */
    fds f;
    char buf[64] = {0};
    auto rd = dagrtpp::start(rt, [](dagrt *rt2, int fd, char *b) -> dagrtpp::task<std::int64_t> {
        co_return co_await dagrtpp::co::read(rt2, fd, b, 64, -1);
    }(rt, f.p[0], buf));
    (void)co_await dagrtpp::co::sleep_for(rt, 1ms);
    if (co_await dagrtpp::co::write(rt, f.p[1], "hello", 5, -1) == 5)
        score |= 1 << 0;
    if (!co_await rd.join(rt) && rd.get() == 5 && std::memcmp(buf, "hello", 5) == 0)
        score |= 1 << 1;
    /* poll: nothing to read until its deadline, then readable. */
    auto t0 = dagrtpp::clock::now();
    std::int64_t pr = co_await dagrtpp::co::poll(rt, f.p[0], DAGRT_POLL_IN, t0 + 3ms);
    if (pr == DAGRT_ETIMEDOUT && dagrtpp::clock::now() - t0 >= 3ms)
        score |= 1 << 2;
    else
        std::fprintf(stderr, "poll: %lld after %lld ns\n", (long long)pr, (long long)(dagrtpp::clock::now() - t0).count());
    if (co_await dagrtpp::co::write(rt, f.p[1], "x", 1, -1) == 1 &&
        (co_await dagrtpp::co::poll(rt, f.p[0], DAGRT_POLL_IN) & DAGRT_POLL_IN))
        score |= 1 << 3;
    if (co_await dagrtpp::co::read(rt, f.p[0], buf, 64, -1) == 1)   /* one byte: not DAGRT_PENDING */
        score |= 1 << 4;
    /* A read cancelled by its scope. */
    {
        dagrtpp::cancel_scope sc;
        auto parked = dagrtpp::start(rt, [](dagrt *rt2, int fd, dagrtpp::cancel_scope *c) -> dagrtpp::task<std::int64_t> {
            char b[8];
            co_return co_await dagrtpp::co::read(rt2, fd, b, sizeof b, -1, c);
        }(rt, f.p[0], &sc));
        (void)co_await dagrtpp::co::sleep_for(rt, 1ms);
        sc.request();
        if (!co_await parked.join(rt) && parked.get() == DAGRT_ECANCELED)
            score |= 1 << 5;
    }
    /* UDP: recvfrom parks until a sendto. */
    sockaddr_in ua{}, ub{};
    int u1 = bound(SOCK_DGRAM, &ua), u2 = bound(SOCK_DGRAM, &ub);
    sockaddr_in from{};
    std::size_t fromlen = sizeof from;
    char ubuf[16] = {0};
    auto rcv = dagrtpp::start(rt, [](dagrt *rt2, int s, char *b, sockaddr_in *fr, std::size_t *fl)
                                      -> dagrtpp::task<std::int64_t> {
        co_return co_await dagrtpp::co::recvfrom(rt2, s, b, 16, reinterpret_cast<sockaddr *>(fr), fl);
    }(rt, u1, ubuf, &from, &fromlen));
    (void)co_await dagrtpp::co::sleep_for(rt, 1ms);
    if (co_await dagrtpp::co::sendto(rt, u2, "ping", 4, reinterpret_cast<sockaddr *>(&ua), sizeof ua) == 4)
        score |= 1 << 6;
    if (!co_await rcv.join(rt) && rcv.get() == 4 && std::memcmp(ubuf, "ping", 4) == 0 &&
        fromlen == sizeof(sockaddr_in) && from.sin_port == ub.sin_port)
        score |= 1 << 7;
    close(u1);
    close(u2);
    /* TCP: accept parks until a connect. */
    sockaddr_in la{};
    int l = bound(SOCK_STREAM, &la);
    (void)listen(l, 4);
    dagrt_handle acc = -1;
    auto ac = dagrtpp::start(rt, [](dagrt *rt2, int s, dagrt_handle *out) -> dagrtpp::task<std::int64_t> {
        co_return co_await dagrtpp::co::accept(rt2, s, out);
    }(rt, l, &acc));
    (void)co_await dagrtpp::co::sleep_for(rt, 1ms);
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (co_await dagrtpp::co::connect(rt, c, reinterpret_cast<sockaddr *>(&la), sizeof la) == 0)
        score |= 1 << 8;
    if (!co_await ac.join(rt) && ac.get() == 0 && acc >= 0) {
        score |= 1 << 9;
        if (co_await dagrtpp::co::write(rt, c, "tcp", 3, -1) == 3 &&
            co_await dagrtpp::co::read(rt, acc, buf, 3, -1) == 3 && std::memcmp(buf, "tcp", 3) == 0)
            score |= 1 << 10;
        close(static_cast<int>(acc));
    }
    close(c);
    close(l);
    co_return score;
}

int io_scenario(bool fallback)
{
    int bad = 0;
    for (int workers : {0, 2}) {
        auto rt = make_rt(workers, fallback);
        dagrt *r = rt;
        int sc = dagrtpp::sync_wait(r, io_all(r));
        if (sc != 0x7ff)
            std::fprintf(stderr, "io_all: 0x%x (a bit per check)\n", sc);
        EXPECT(sc == 0x7ff);
        dagrt_io_stats st;
        EXPECT(dagrt_get_io_stats(r, &st) == 0);
        EXPECT(std::strcmp(st.reactor, fallback ? "epoll" : st.reactor) == 0);
        EXPECT(st.kind[DAGRT_IO_READ].ops >= 4 && st.kind[DAGRT_IO_ACCEPT].ops == 1);
    }
    return bad;
}

/* 10,000 coroutines parked at once, half on reads of pipes with nothing
 * to read, half on hour-long sleeps, all under one scope: every one is
 * suspended (none ended), no thread waits for them; then the scope's
 * request ends every one with ECANCELED and every frame goes. */
int park_scenario(bool fallback)
{
    int bad = 0;
    int n = scale(10000, 1000);
    auto rt = make_rt(2, fallback);
    dagrt *r = rt;
    std::vector<fds> pipes(16);
    dagrtpp::cancel_scope sc;
    std::atomic<int> parked{0}, cancelled{0}, ended{0};
    auto co = [](dagrt *rt2, int i, int fd, dagrtpp::cancel_scope *c, std::atomic<int> *pk, std::atomic<int> *cn,
                 std::atomic<int> *en, frame_count) -> dagrtpp::task<> {
        char b[4];
        pk->fetch_add(1);
        std::int64_t r2 = i % 2 ? co_await dagrtpp::co::read(rt2, fd, b, sizeof b, -1, c)
                                : (co_await dagrtpp::co::sleep_for(rt2, 1h, c)).value();
        if (r2 == DAGRT_ECANCELED)
            cn->fetch_add(1);
        en->fetch_add(1);
    };
    for (int i = 0; i < n; i++)
        EXPECT(!dagrtpp::spawn(r, co(r, i, pipes[static_cast<std::size_t>(i) % pipes.size()].p[0], &sc, &parked,
                                     &cancelled, &ended, frame_count())));
    while (parked.load() < n)
        (void)dagrtpp::sleep_for(r, 1ms);
    (void)dagrtpp::sleep_for(r, 10ms);
    EXPECT(ended.load() == 0);
    EXPECT(frames.load() == n);
    sc.request();
    while (ended.load() < n)
        (void)dagrtpp::sleep_for(r, 1ms);
    EXPECT(cancelled.load() == n);
    rt.reset();
    EXPECT(frames.load() == 0);
    return bad;
}

} // namespace

static int coro_io_cxx() { return io_scenario(false); }
static int coro_io_fallback_cxx() { return io_scenario(true); }
static int coro_park_10k_cxx() { return park_scenario(false); }
static int coro_park_10k_fallback_cxx() { return park_scenario(true); }
#endif

int coro_graph_wait_cxx();   /* coro_graph.cpp */
int coro_graph_node_cxx();   /* coro_node.cpp */

/* The entries, with C linkage (g++ 12 mangles coroutine lambdas inside
 * an extern "C" function to clashing names: the bodies are C++ functions). */
#define SCENARIO(group, name, secs, flags) extern "C" int name(void) { return name##_cxx(); }
#include "coro_list.h"
#undef SCENARIO

extern "C" const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, nullptr},
#include "coro_list.h"
#undef SCENARIO
    {nullptr, nullptr, nullptr},
};
