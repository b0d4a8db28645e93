/*
 * dagrt_coro.hpp - C++20 coroutines on libdagrt's pool (docs/runtime.md,
 * "Coroutines"): a third way to run work beside plain tasks and fibers.
 * Opt-in: nothing else includes it; dagrt.hpp (C++17) stays the core.
 *
 *     dagrtpp::task<int> load(dagrt *rt, dagrt_handle fd, char *buf) {
 *         int64_t n = co_await dagrtpp::co::read(rt, fd, buf, 4096, 0);
 *         co_await dagrtpp::co::sleep_for(rt, 1ms);
 *         co_return static_cast<int>(n);
 *     }
 *     auto s = dagrtpp::start(rt, load(rt, fd, buf));   // on the workers, from any thread
 *     s.wait(rt);                                      // or: co_await s.join(rt)
 *     int n = s.get();
 *
 * A task<T> is lazy: it runs when started (start, spawn, sync_wait) or
 * when another task co_awaits it (then inline, on the awaiter's thread,
 * and the awaiter continues when it returns). Every awaitable here is one
 * of dagrt.h's asynchronous waits (dagrt_*_async): a suspended coroutine
 * holds no thread and no fiber stack, only its frame; its wait's end
 * queues a task that resumes it, on the main thread for a coroutine whose
 * continuations are flagged DAGRT_SPAWN_MAIN (start's flags, or
 * co_await co::resume_on_main(rt)), on the hot lane with DAGRT_SPAWN_HOT (and
 * for I/O calls whenever the runtime has hot workers), like a fiber's.
 * Waits return what the blocking calls return: std::error_code for the
 * sync objects, sleeps and groups; bytes (or a ready set) or a negative
 * DAGRT_E* code as int64_t for the I/O calls. dagrt_destroy with
 * coroutines suspended ends their waits with DAGRT_ECANCELED (later waits
 * answer it at once), runs them to their end and destroys the frames of
 * spawned ones, as it does for parked fibers.
 *
 * Exceptions: one that escapes a task<T> is rethrown where its result is
 * taken (co_await of it, started::get, sync_wait); one that nobody takes
 * (a spawned coroutine's, or a started one's whose handle goes without a
 * get) ends the program with a message (dagrt.hpp's rule for tasks).
 */
#ifndef DAGRT_CORO_HPP
#define DAGRT_CORO_HPP

#if !defined(__cplusplus) || __cplusplus < 202002L || !defined(__cpp_impl_coroutine)
#error "dagrt_coro.hpp needs C++20 coroutines (-std=c++20); C++17 code uses dagrt.hpp alone"
#endif

#include "dagrt.hpp"

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

namespace dagrtpp {

template <class T = void>
class task;
template <class T = void>
class started;

namespace detail {

/* What every task's promise holds besides its result. */
struct promise_base {
    std::coroutine_handle<> continuation;   /* the coroutine that co_awaits this one */
    unsigned flags = 0;                     /* its wait ends' tasks: 0, DAGRT_SPAWN_MAIN, _HOT */
    /* Who still holds the frame once it is started: the coroutine itself
     * until its end, and the started<T> handle until it goes (2), or the
     * coroutine alone (spawn: 1). The last one destroys the frame.
     * acq_rel: each side's accesses to the frame come before the other's
     * destroy. */
    std::atomic<int> refs{0};
    dagrt_event done;                       /* set at the end of a started coroutine */
#if DAGRTPP_EXCEPTIONS
    std::exception_ptr exc;
#endif
    promise_base() noexcept { dagrt_event_init(&done, false); }

    std::suspend_always initial_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept
    {
#if DAGRTPP_EXCEPTIONS
        exc = std::current_exception();
#else
        std::terminate();
#endif
    }
    /* The taker owns the exception from here on: the frame may be
     * destroyed on another thread while it is being handled. */
    void rethrow_if_failed()
    {
#if DAGRTPP_EXCEPTIONS
        if (exc)
            std::rethrow_exception(std::exchange(exc, nullptr));
#endif
    }
    /* The end of a coroutine that nobody will take a result from. */
    void unobserved_end() noexcept
    {
#if DAGRTPP_EXCEPTIONS
        if (exc) {
            try {
                std::rethrow_exception(exc);
            } catch (const std::exception &e) {
                task_threw(e.what());
            } catch (...) {
                task_threw(nullptr);
            }
        }
#endif
    }
};

/* A coroutine's continuation flags, for a wait's end (0 for a promise that
 * is not ours). */
template <class P>
inline unsigned flags_of(std::coroutine_handle<P> h) noexcept
{
    if constexpr (std::is_base_of_v<promise_base, P>)
        return h.promise().flags;
    else
        return 0;
}

template <class P>
struct final_awaiter {
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept
    {
        P &p = h.promise();
        if (p.continuation)
            return p.continuation;   /* co_awaited: its awaiter goes on here */
        /* 1: spawned, or its started handle was dropped; nobody takes its
         * result. acquire: the handle's drop is over. */
        bool alone = p.refs.load(std::memory_order_acquire) == 1;
        if (alone)
            p.unobserved_end();   /* an exception: the program ends */
        else
            dagrt_event_set(&p.done);   /* its handle may be waiting */
        /* acq_rel: see promise_base::refs. The handle may have been
         * dropped after the set without a get (its drop was not the last):
         * then this end is the last, and an exception nobody took is
         * reported here (one taken by get is no longer in the promise). */
        if (p.refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            if (!alone)
                p.unobserved_end();
            h.destroy();
        }
        return std::noop_coroutine();
    }
    void await_resume() noexcept {}
};

template <class T>
struct promise_result : promise_base {
    std::optional<T> value;
    template <class U>
    void return_value(U &&v) noexcept(std::is_nothrow_constructible_v<T, U &&>)
    {
        value.emplace(std::forward<U>(v));
    }
    T take()
    {
        rethrow_if_failed();
        return std::move(*value);
    }
};

template <>
struct promise_result<void> : promise_base {
    void return_void() noexcept {}
    void take() { rethrow_if_failed(); }
};

/* Resumes a coroutine in a task of its own (start, spawn, resume_on_*). */
inline void resume_entry(void *h) noexcept
{
    std::coroutine_handle<>::from_address(h).resume();
}

inline int resume_as_task(dagrt *rt, std::coroutine_handle<> h, unsigned flags) noexcept
{
    return dagrt_spawn_ex(rt, nullptr, &resume_entry, h.address(), flags);
}

/* An asynchronous wait of dagrt.h as an awaitable: start(rec) begins it
 * (DAGRT_PENDING, or the result now); its end resumes the coroutine. */
template <class Start>
struct async_wait {
    Start start;
    dagrt_async rec;
    std::coroutine_handle<> h;
    std::int64_t result = 0;

    static void on_end(void *self, std::int64_t r) noexcept
    {
        auto *w = static_cast<async_wait *>(self);
        w->result = r;
        w->h.resume();
    }
    bool await_ready() noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> hp) noexcept
    {
        h = hp;
        dagrt_async_init(&rec, &on_end, this, flags_of(hp));
        std::int64_t r = start(&rec);
        if (r == DAGRT_PENDING)
            return true;   /* this awaiter may be resumed (and gone) already: touch nothing */
        result = r;
        return false;
    }
};

template <class Start>
struct code_wait : async_wait<Start> {
    std::error_code await_resume() noexcept { return make_error(this->result); }
};
template <class Start>
struct value_wait : async_wait<Start> {
    std::int64_t await_resume() noexcept { return this->result; }
};
template <class Start>
code_wait<Start> code_awaitable(Start s) { return code_wait<Start>{{std::move(s), {}, {}, 0}}; }
template <class Start>
value_wait<Start> value_awaitable(Start s) { return value_wait<Start>{{std::move(s), {}, {}, 0}}; }

} // namespace detail

/* ------------------------------------------------------------ task<T> */

/* A coroutine returning T (void by default), lazy, move-only; it owns its
 * frame until it is started or co_awaited to its end. */
template <class T>
class task {
public:
    struct promise_type : detail::promise_result<T> {
        task get_return_object() noexcept
        {
            return task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        detail::final_awaiter<promise_type> final_suspend() noexcept { return {}; }
    };
    using handle = std::coroutine_handle<promise_type>;

    task() noexcept = default;
    task(task &&o) noexcept : h_(std::exchange(o.h_, {})) {}
    task &operator=(task &&o) noexcept
    {
        if (this != &o) {
            if (h_)
                h_.destroy();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    task(const task &) = delete;
    task &operator=(const task &) = delete;
    ~task()
    {
        if (h_)
            h_.destroy();
    }
    explicit operator bool() const noexcept { return static_cast<bool>(h_); }

    /* co_await t (t an rvalue or an lvalue): runs t inline until its end,
     * then this coroutine goes on with its result (or its exception). */
    auto operator co_await() && noexcept { return awaiter{h_}; }
    auto operator co_await() & noexcept { return awaiter{h_}; }

    handle release() noexcept { return std::exchange(h_, {}); }

private:
    explicit task(handle h) noexcept : h_(h) {}
    struct awaiter {
        handle h;
        bool await_ready() noexcept { return !h || h.done(); }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> parent) noexcept
        {
            h.promise().continuation = parent;
            h.promise().flags = detail::flags_of(parent);   /* its waits end where ours do */
            return h;
        }
        T await_resume() { return h.promise().take(); }
    };
    handle h_;
};

/* ------------------------------------------------------ started tasks */

/* A task running on the runtime (start): wait for it from a thread
 * (wait), or from a coroutine (co_await s.join(rt)), then take its result
 * (get). Dropping the handle before the end detaches the coroutine: it
 * runs on and its frame goes at its end. */
template <class T>
class started {
public:
    started() noexcept = default;
    started(started &&o) noexcept : h_(std::exchange(o.h_, {})) {}
    started &operator=(started &&o) noexcept
    {
        if (this != &o) {
            drop();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    ~started() { drop(); }
    explicit operator bool() const noexcept { return static_cast<bool>(h_); }

    /* Whether it has ended (get may be called). */
    bool done() const noexcept { return h_ && dagrt_event_is_set(&h_.promise().done); }
    /* Until it ends: helps on the runtime's threads, blocks elsewhere
     * (dagrt_event_wait). DAGRT_ECANCELED if dagrt_destroy ended the wait. */
    std::error_code wait(dagrt *rt) noexcept { return make_error(dagrt_event_wait(rt, &h_.promise().done)); }
    /* co_await s.join(rt): the same from a coroutine, suspended meanwhile. */
    auto join(dagrt *rt) noexcept
    {
        dagrt_event *e = &h_.promise().done;
        return detail::code_awaitable([rt, e](dagrt_async *a) noexcept {
            return dagrt_event_wait_async(rt, a, e, DAGRT_FOREVER, nullptr);
        });
    }
    /* Its result (or its exception, rethrown); only once it has ended. */
    T get() { return h_.promise().take(); }

private:
    template <class U>
    friend started<U> start(dagrt *rt, task<U> &&t, unsigned flags, std::error_code *ec);
    friend void run_node(task<void> &&t) noexcept;
    using handle = typename task<T>::handle;
    explicit started(handle h) noexcept : h_(h) {}
    void drop() noexcept
    {
        if (!h_)
            return;
        auto h = std::exchange(h_, {});
        /* acq_rel: see promise_base::refs. */
        if (h.promise().refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            h.promise().unobserved_end();   /* ended with an exception nobody took: the program ends */
            h.destroy();
        }
    }
    handle h_;
};

/* Starts t on rt's workers (flags DAGRT_SPAWN_MAIN: on the main thread,
 * and every wait's end there too; DAGRT_SPAWN_HOT: the hot lane), from
 * any thread. On an error (dagrt_spawn_ex's, in *ec) the handle is empty
 * and t never ran. */
template <class T>
started<T> start(dagrt *rt, task<T> &&t, unsigned flags = 0, std::error_code *ec = nullptr)
{
    auto h = t.release();
    if (!h) {
        if (ec)
            *ec = make_error(DAGRT_EINVAL);
        return {};
    }
    h.promise().flags = flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT);
    h.promise().refs.store(2, std::memory_order_relaxed);   /* relaxed: published by the spawn */
    int r = detail::resume_as_task(rt, h, flags);
    if (ec)
        *ec = make_error(r);
    if (r != 0) {
        h.destroy();
        return {};
    }
    return started<T>(h);
}

/* Starts t detached: its frame goes at its end (an exception escaping it
 * ends the program). Errors: dagrt_spawn_ex's (t never ran). */
inline std::error_code spawn(dagrt *rt, task<void> &&t, unsigned flags = 0)
{
    auto h = t.release();
    if (!h)
        return make_error(DAGRT_EINVAL);
    h.promise().flags = flags & (DAGRT_SPAWN_MAIN | DAGRT_SPAWN_HOT);
    h.promise().refs.store(1, std::memory_order_relaxed);   /* relaxed: published by the spawn */
    int r = detail::resume_as_task(rt, h, flags);
    if (r != 0)
        h.destroy();
    return make_error(r);
}

/* dagc's coroutine tasks (`coro`, docs/language.md): the body of such a
 * node, on the fiber of its own the node runs on. t runs here until it
 * first suspends, then the fiber parks until t's end (the thread runs
 * other nodes meanwhile; t's waits end as any coroutine's, on the workers)
 * and the node completes when this returns. An exception escaping t ends
 * the program with a message, as one escaping a node's function would.
 * Outside a graph's node (no frame, so no runtime to wait on) it ends the
 * program too. */
inline void run_node(task<void> &&t) noexcept
{
    auto h = t.release();
    if (!h)
        return;
    dagrt_frame_info fi;
    if (dagrt_get_frame(&fi) != 0 || !fi.rt) {
        h.destroy();
        std::fprintf(stderr, "dagrt_coro.hpp: run_node outside a graph's node: std::terminate\n");
        std::fflush(stderr);
        std::terminate();
    }
    h.promise().flags = 0;
    h.promise().refs.store(2, std::memory_order_relaxed);   /* relaxed: this thread runs it first */
    h.resume();   /* until it first suspends, or ends */
    started<void> s(h);
    (void)s.wait(fi.rt);   /* a fiber parks; DAGRT_ECANCELED only from dagrt_destroy, which waits for it */
    while (!s.done())
        (void)s.wait(fi.rt);
#if DAGRTPP_EXCEPTIONS
    try {
        s.get();
    } catch (const std::exception &e) {
        detail::task_threw(e.what());
    } catch (...) {
        detail::task_threw(nullptr);
    }
#else
    s.get();
#endif
}

/* start, wait, get: T from a thread (the main thread, a plain task, a
 * thread outside the runtime; not a coroutine, which co_awaits). With
 * exceptions, a failed start or wait throws std::system_error; without,
 * it ends the program with a message. */
template <class T>
T sync_wait(dagrt *rt, task<T> &&t, unsigned flags = 0)
{
    std::error_code ec;
    started<T> s = start(rt, std::move(t), flags, &ec);
    throw_if_error(ec, "dagrtpp::sync_wait: start");
    throw_if_error(s.wait(rt), "dagrtpp::sync_wait: wait");
    return s.get();
}

/* ======================================================= the awaitables
 * In dagrtpp::co (co_await dagrtpp::co::read(...)): beside dagrt.hpp's
 * blocking calls of the same names (dagrtpp::sleep_for ...), which a
 * coroutine must not make (they would hold its thread). */

/* ---------------------------------------------- where the coroutine runs */

namespace detail {
struct move_to {
    dagrt *rt;
    unsigned flags;
    int err = 0;
    bool await_ready() noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) noexcept
    {
        if constexpr (std::is_base_of_v<promise_base, P>)
            h.promise().flags = flags;
        int r = resume_as_task(rt, h, flags);
        if (r == 0)
            return true;   /* it may run on already: touch nothing of this awaiter */
        err = r;   /* not queued: go on here */
        return false;
    }
    std::error_code await_resume() noexcept { return make_error(err); }
};
} // namespace detail

namespace co {

/* co_await resume_on_main(rt): the coroutine goes on on the main thread
 * (a task of the main queue, run where the main thread helps or pumps),
 * and so do its waits' ends from then on; resume_on_workers(rt) undoes
 * it. yield(rt): queued again behind the work in sight. */
inline detail::move_to resume_on_main(dagrt *rt) noexcept { return {rt, DAGRT_SPAWN_MAIN}; }
inline detail::move_to resume_on_workers(dagrt *rt) noexcept { return {rt, 0}; }

/* ------------------------------------------------------------ the waits */

/* Each returns std::error_code: 0, DAGRT_ETIMEDOUT, DAGRT_ECANCELED
 * (the scope, or dagrt_destroy), DAGRT_EINVAL ... as the blocking call. */

template <class Rep, class Period>
auto sleep_for(dagrt *rt, const std::chrono::duration<Rep, Period> &d, cancel_scope *c = nullptr) noexcept
{
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    std::uint64_t n = ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
    dagrt_cancel *cs = detail::scope(c);
    return detail::code_awaitable([rt, n, cs](dagrt_async *a) noexcept { return dagrt_sleep_async(rt, a, n, cs); });
}
inline auto sleep_until(dagrt *rt, clock::time_point tp, cancel_scope *c = nullptr) noexcept
{
    std::uint64_t d = detail::deadline_ns(tp), now = dagrt_now_ns();
    return co::sleep_for(rt, std::chrono::nanoseconds(d > now ? static_cast<std::int64_t>(d - now) : 0), c);
}

/* A wait group's tasks all finished (dagrt_group_wait). */
inline auto wait(dagrt *rt, group &g) noexcept
{
    dagrt_group *gp = g.get();
    return detail::code_awaitable([rt, gp](dagrt_async *a) noexcept { return dagrt_group_wait_async(rt, a, gp); });
}

/* An event set (FIFO with every other waiter, fibers and threads too). */
inline auto wait(dagrt *rt, event &e, clock::time_point deadline = clock::time_point::max(),
                 cancel_scope *c = nullptr) noexcept
{
    dagrt_event *ep = e.get();
    std::uint64_t d = detail::deadline_ns(deadline);
    dagrt_cancel *cs = detail::scope(c);
    return detail::code_awaitable([rt, ep, d, cs](dagrt_async *a) noexcept {
        return dagrt_event_wait_async(rt, a, ep, d, cs);
    });
}

/* The mutex locked (0: held; unlock with m.unlock()). */
inline auto lock(mutex &m, clock::time_point deadline = clock::time_point::max(),
                 cancel_scope *c = nullptr) noexcept
{
    dagrt *rt = m.rt();
    dagrt_mutex *mp = m.get();
    std::uint64_t d = detail::deadline_ns(deadline);
    dagrt_cancel *cs = detail::scope(c);
    return detail::code_awaitable([rt, mp, d, cs](dagrt_async *a) noexcept {
        return dagrt_mutex_lock_async(rt, a, mp, d, cs);
    });
}

/* One unit of the semaphore taken. */
inline auto acquire(dagrt *rt, semaphore &s, clock::time_point deadline = clock::time_point::max(),
                    cancel_scope *c = nullptr) noexcept
{
    dagrt_sem *sp = s.get();
    std::uint64_t d = detail::deadline_ns(deadline);
    dagrt_cancel *cs = detail::scope(c);
    return detail::code_awaitable([rt, sp, d, cs](dagrt_async *a) noexcept {
        return dagrt_sem_acquire_async(rt, a, sp, d, cs);
    });
}

/* A condition wait: m held on entry and again when it returns, errors
 * included (the coroutine holds it without a std::unique_lock, which
 * would lock through the blocking call). */
inline auto wait(condition_variable &cv, mutex &m, clock::time_point deadline = clock::time_point::max(),
                 cancel_scope *c = nullptr) noexcept
{
    dagrt *rt = m.rt();
    dagrt_cond *cp = cv.get();
    dagrt_mutex *mp = m.get();
    std::uint64_t d = detail::deadline_ns(deadline);
    dagrt_cancel *cs = detail::scope(c);
    return detail::code_awaitable([rt, cp, mp, d, cs](dagrt_async *a) noexcept {
        return dagrt_cond_wait_async(rt, a, cp, mp, d, cs);
    });
}

/* A cancel scope requested, or its deadline passed (DAGRT_ECANCELED or
 * DAGRT_ETIMEDOUT; never 0): a sleep that only the scope ends. */
inline auto cancelled(dagrt *rt, cancel_scope &c) noexcept
{
    return co::sleep_for(rt, std::chrono::nanoseconds(INT64_MAX), &c);
}

/* A started graph run has ended (dagrt_graph_start; dagc's
 * G_instance_start: co_await co::wait(rt, inst.state)): its result as
 * the wait's code (0, or the run's error; DAGRT_EBUSY if another wait
 * holds it, DAGRT_EINVAL never started). The run's own part on the main
 * thread (`on main` nodes, its share of the rest) runs inside the main
 * thread's next wait or pump (dagrt_graph_wait_async): the coroutine
 * holds no thread meanwhile. */
inline auto wait(dagrt *rt, dagrt_graph_state &st) noexcept
{
    dagrt_graph_state *sp = &st;
    return detail::code_awaitable([rt, sp](dagrt_async *a) noexcept { return dagrt_graph_wait_async(rt, a, sp); });
}
/* A pipeline (dagc's G_pipeline_t: co_await co::wait(rt, p.pipe)) has at
 * most keep frames in flight, the older ones waited for (0: drained;
 * depth - 1: the next submit will not wait): the first frame error, as
 * dagrt_pipeline_drain's. The pipeline is held until then (its calls
 * answer DAGRT_EBUSY); dagrt_pipeline_wait_async. */
inline auto wait(dagrt *rt, dagrt_pipeline &p, unsigned keep = 0) noexcept
{
    dagrt_pipeline *pp = &p;
    return detail::code_awaitable([rt, pp, keep](dagrt_async *a) noexcept {
        return dagrt_pipeline_wait_async(rt, a, pp, keep);
    });
}

/* -------------------------------------------------------- the I/O calls */

/* Each returns int64_t: the blocking call's result (bytes, a ready set,
 * 0) or a negative DAGRT_E* code (make_error turns one into an
 * error_code). Buffers and addresses are the call's until it returns. */

inline auto read(dagrt *rt, dagrt_handle h, void *buf, std::size_t n, std::int64_t off, cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept { return dagrt_read_async(rt, a, h, buf, n, off, cs); });
}
inline auto write(dagrt *rt, dagrt_handle h, const void *buf, std::size_t n, std::int64_t off, cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept { return dagrt_write_async(rt, a, h, buf, n, off, cs); });
}
inline auto recvfrom(dagrt *rt, dagrt_handle s, void *buf, std::size_t n, struct sockaddr *from,
                     std::size_t *fromlen, cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept {
        return dagrt_recvfrom_async(rt, a, s, buf, n, from, fromlen, cs);
    });
}
inline auto sendto(dagrt *rt, dagrt_handle s, const void *buf, std::size_t n, const struct sockaddr *to,
                   std::size_t tolen, cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept {
        return dagrt_sendto_async(rt, a, s, buf, n, to, tolen, cs);
    });
}
/* 0 with the new connection in *out. */
inline auto accept(dagrt *rt, dagrt_handle s, dagrt_handle *out, cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept { return dagrt_accept_async(rt, a, s, out, cs); });
}
inline auto connect(dagrt *rt, dagrt_handle s, const struct sockaddr *to, std::size_t tolen,
                    cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    return detail::value_awaitable([=](dagrt_async *a) noexcept { return dagrt_connect_async(rt, a, s, to, tolen, cs); });
}
/* The ready set among events (DAGRT_POLL_*), DAGRT_ETIMEDOUT past deadline. */
inline auto poll(dagrt *rt, dagrt_handle h, unsigned events, clock::time_point deadline = clock::time_point::max(),
                 cancel_scope *c = nullptr) noexcept
{
    dagrt_cancel *cs = detail::scope(c);
    std::uint64_t d = detail::deadline_ns(deadline);
    return detail::value_awaitable([=](dagrt_async *a) noexcept { return dagrt_poll_async(rt, a, h, events, d, cs); });
}

} // namespace co
} // namespace dagrtpp

#endif
