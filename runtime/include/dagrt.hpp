/*
 * dagrt.hpp - libdagrt from C++17: a header over dagrt.h (docs/runtime.md,
 * "From C++"). Nothing here is compiled into the library; the C API stays
 * the one contract.
 *
 * The namespace is dagrtpp, not dagrt: dagrt.h's runtime type is the
 * global `dagrt` (typedef struct dagrt dagrt), which every C and C++
 * caller writes as `dagrt *`, and C++ allows no namespace of the same name
 * beside it.
 *
 *     dagrtpp::runtime rt;                      // dagrt_create; dagrt_destroy at scope end
 *     dagrtpp::group g;
 *     dagrtpp::spawn(rt, g, [&] { work(); });   // no allocation: see spawn below
 *     g.wait(rt);
 *     dagrtpp::parallel_for(rt, 0, n, [&](size_t i) { v[i] *= 2; });
 *
 * Errors are std::error_code values of dagrt_category(), one per code of
 * dagrt.h's DAGRT_ERRNO_MAP (the message is dagrt_strerror's). Nothing
 * here throws unless asked: the calls return std::error_code, and
 * throw_if_error() turns one into std::system_error where exceptions are
 * on. Builds with -fno-exceptions work; the few calls that cannot return an
 * error (mutex::lock, for std::unique_lock) end the program with a message
 * there instead of throwing.
 *
 * An exception that escapes a task or a loop body has no caller to go to:
 * the task's trampoline prints "dagrt.hpp: an exception escaped a task"
 * with its what() and calls std::terminate (whose handler then names the
 * type too). Catch inside the callable what must not end the program.
 */
#ifndef DAGRT_HPP
#define DAGRT_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "dagrt.hpp needs C++17 or newer (-std=c++17); C programs use dagrt.h"
#endif

#include "dagrt.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define DAGRTPP_EXCEPTIONS 1
#else
#define DAGRTPP_EXCEPTIONS 0
#endif

/* ---------------------------------------------------------------- errors */

namespace dagrtpp {

/* The category of dagrt's error codes: value() is the dagrt code itself
 * (negative, DAGRT_EINVAL ...), message() its dagrt_strerror text; codes
 * with a portable meaning compare equal to std::errc's (ec ==
 * std::errc::timed_out). */
class error_category_impl final : public std::error_category {
public:
    const char *name() const noexcept override { return "dagrt"; }
    std::string message(int code) const override { return dagrt_strerror(code); }
    std::error_condition default_error_condition(int code) const noexcept override
    {
        switch (code) {
        case DAGRT_EINVAL: return std::errc::invalid_argument;
        case DAGRT_ENOMEM: return std::errc::not_enough_memory;
        case DAGRT_EBUSY: return std::errc::device_or_resource_busy;
        case DAGRT_EPERM: return std::errc::operation_not_permitted;
        case DAGRT_EIO: return std::errc::io_error;
        case DAGRT_ECANCELED: return std::errc::operation_canceled;
        case DAGRT_ETIMEDOUT: return std::errc::timed_out;
        case DAGRT_ENOENT: return std::errc::no_such_file_or_directory;
        case DAGRT_EACCES: return std::errc::permission_denied;
        case DAGRT_EBADF: return std::errc::bad_file_descriptor;
        case DAGRT_EAGAIN: return std::errc::resource_unavailable_try_again;
        case DAGRT_ECONNREFUSED: return std::errc::connection_refused;
        case DAGRT_ECONNRESET: return std::errc::connection_reset;
        case DAGRT_EPIPE: return std::errc::broken_pipe;
        case DAGRT_ENOSPC: return std::errc::no_space_on_device;
        case DAGRT_EMSGSIZE: return std::errc::message_size;
        case DAGRT_EADDRINUSE: return std::errc::address_in_use;
        case DAGRT_EISDIR: return std::errc::is_a_directory;
        case DAGRT_ENOTCONN: return std::errc::not_connected;
        case DAGRT_EEXIST: return std::errc::file_exists;
        case DAGRT_ENOTSOCK: return std::errc::not_a_socket;
        case DAGRT_EADDRNOTAVAIL: return std::errc::address_not_available;
        case DAGRT_ENETUNREACH: return std::errc::network_unreachable;
        case DAGRT_EHOSTUNREACH: return std::errc::host_unreachable;
        case DAGRT_ECONNABORTED: return std::errc::connection_aborted;
        case DAGRT_EROFS: return std::errc::read_only_file_system;
        case DAGRT_EMFILE: return std::errc::too_many_files_open;
        case DAGRT_ENOTDIR: return std::errc::not_a_directory;
        case DAGRT_EFBIG: return std::errc::file_too_large;
        default: return std::error_condition(code, *this);   /* dagrt's own: ENESTED, ... */
        }
    }
};

namespace detail {
/* The category's one object, at namespace scope and constant-initialised
 * (std::error_category's constructor is constexpr): reaching it tests no
 * guard variable, so a spawn whose error_code is dropped costs no branch. */
inline const error_category_impl category_object{};
} // namespace detail

inline const std::error_category &dagrt_category() noexcept
{
    return detail::category_object;
}

/* A dagrt return value (0 or a negative code) as an error_code; a
 * positive value (a count, a byte count) is success. */
namespace detail {
/* A success, made once: std::error_code() calls std::system_category()
 * out of line, a cost on every spawn. At namespace scope, not a function's
 * static, so that using it tests no guard variable; an inline variable is
 * initialised before anything defined after this header in a translation
 * unit, so static initialisers that spawn see it made. */
inline const std::error_code ok_code{};
} // namespace detail

inline std::error_code make_error(long long r) noexcept
{
    return r < 0 ? std::error_code(static_cast<int>(r), dagrt_category()) : detail::ok_code;
}

/* Throws std::system_error for an error (exceptions on); with
 * -fno-exceptions prints it and ends the program. For callers that want
 * exceptions: dagrtpp::throw_if_error(g.wait(rt)). */
inline void throw_if_error(const std::error_code &ec, const char *what = "dagrt")
{
    if (!ec)
        return;
#if DAGRTPP_EXCEPTIONS
    throw std::system_error(ec, what);
#else
    std::fprintf(stderr, "dagrt.hpp: %s: %s (no exceptions in this build: std::terminate)\n", what,
                 ec.message().c_str());
    std::terminate();
#endif
}

} // namespace dagrtpp

/* dagrt_error values convert to std::error_code implicitly (ADL finds
 * this in dagrt_error's namespace, the global one). */
inline std::error_code make_error_code(dagrt_error e) noexcept
{
    return std::error_code(static_cast<int>(e), dagrtpp::dagrt_category());
}
namespace std {
template <> struct is_error_code_enum<dagrt_error> : true_type {};
} // namespace std

namespace dagrtpp {

/* ------------------------------------------------------------ the clock */

/* dagrt_now_ns's monotonic clock as a std::chrono clock: deadlines of the
 * timed waits are its time_points. */
struct clock {
    using rep = std::int64_t;
    using period = std::nano;
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<clock>;
    static constexpr bool is_steady = true;
    static time_point now() noexcept { return time_point(duration(static_cast<rep>(dagrt_now_ns()))); }
};

namespace detail {
inline std::uint64_t deadline_ns(clock::time_point tp) noexcept
{
    if (tp == clock::time_point::max())
        return DAGRT_FOREVER;
    auto n = tp.time_since_epoch().count();
    return n < 0 ? 0 : static_cast<std::uint64_t>(n);
}
template <class Rep, class Period>
inline std::uint64_t deadline_after(const std::chrono::duration<Rep, Period> &d) noexcept
{
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    std::uint64_t now = dagrt_now_ns();
    if (ns <= 0)
        return now;
    std::uint64_t u = static_cast<std::uint64_t>(ns);
    return u >= DAGRT_FOREVER - now ? DAGRT_FOREVER : now + u;
}
} // namespace detail

/* ----------------------------------------------------------- the runtime */

/* Owns a runtime: dagrt_create in the constructor, dagrt_destroy in the
 * destructor (on the thread that created it, as dagrt_destroy requires).
 * Converts to dagrt * implicitly, so it goes wherever one does
 * (dagrt_spawn(rt, ...), generated G_run(rt, ...)). The constructors do
 * not throw: a failed create leaves it empty (!rt) with error() set.
 * Move-only; std::unique_ptr<dagrtpp::runtime> holds one too. */
class runtime {
public:
    runtime() noexcept : rt_(dagrt_create_ex(nullptr, &err_)) {}
    explicit runtime(const dagrt_config &cfg) noexcept : rt_(dagrt_create_ex(&cfg, &err_)) {}
    /* Takes over a runtime made elsewhere (nullptr: empty). */
    explicit runtime(dagrt *adopt) noexcept : rt_(adopt) {}
    runtime(const runtime &) = delete;
    runtime &operator=(const runtime &) = delete;
    runtime(runtime &&o) noexcept : err_(o.err_), rt_(o.rt_) { o.rt_ = nullptr; }
    runtime &operator=(runtime &&o) noexcept
    {
        if (this != &o) {
            reset();
            rt_ = o.rt_;
            err_ = o.err_;
            o.rt_ = nullptr;
        }
        return *this;
    }
    ~runtime() { reset(); }

    operator dagrt *() const noexcept { return rt_; }
    dagrt *get() const noexcept { return rt_; }
    explicit operator bool() const noexcept { return rt_ != nullptr; }
    /* Why the create failed (DAGRT_EINVAL, DAGRT_ENOMEM, DAGRT_ETHREAD). */
    std::error_code error() const noexcept { return make_error(err_); }
    /* Gives the runtime up without destroying it. */
    dagrt *release() noexcept
    {
        dagrt *r = rt_;
        rt_ = nullptr;
        return r;
    }
    /* dagrt_destroy now (nothing when empty). */
    void reset() noexcept
    {
        if (rt_)
            dagrt_destroy(rt_);
        rt_ = nullptr;
    }
    int workers() const noexcept { return dagrt_worker_count(rt_); }

private:
    int err_ = 0;   /* before rt_: the constructors' create stores into it */
    dagrt *rt_;
};

/* ----------------------------------------------------- tasks and groups */

/* A wait group (dagrt_group). It belongs where it was made (the runtime
 * knows a group on a thread's stack by its address): neither copied nor
 * moved. Wait on it before it goes away: destroying one that still counts
 * a task prints that and ends the program (the task would complete freed
 * memory). */
class group {
public:
    group() noexcept { dagrt_group_init(&g_); }
    group(const group &) = delete;
    group &operator=(const group &) = delete;
    ~group()
    {
        if (dagrt_group_done(&g_) == 0) {
            std::fputs("dagrt.hpp: a dagrtpp::group went out of scope with tasks still counted "
                       "(wait on it first): std::terminate\n", stderr);
            std::terminate();
        }
    }
    /* dagrt_group_wait: helps until every task counted has finished. */
    std::error_code wait(dagrt *rt) noexcept { return make_error(dagrt_group_wait(rt, &g_)); }
    /* dagrt_group_done: true once every task counted has finished. */
    bool done() const noexcept { return dagrt_group_done(&g_) == 1; }
    dagrt_group *get() noexcept { return &g_; }
    operator dagrt_group *() noexcept { return &g_; }

private:
    dagrt_group g_;
};

namespace detail {

[[noreturn]] inline void task_threw(const char *what) noexcept
{
    std::fprintf(stderr,
                 "dagrt.hpp: an exception escaped a task (%s); a task has no caller to take it: "
                 "std::terminate\n",
                 what ? what : "not a std::exception");
    std::fflush(stderr);
    std::terminate();
}

/* Calls f(args...); an exception that escapes ends the program with a
 * message (see the top of this file). */
template <class F, class... A>
inline void call_guarded(F &f, A... a) noexcept
{
#if DAGRTPP_EXCEPTIONS
    try {
        std::invoke(f, a...);
    } catch (const std::exception &e) {
        task_threw(e.what());
    } catch (...) {
        task_threw(nullptr);
    }
#else
    std::invoke(f, a...);
#endif
}

/* A callable whose decayed copy lives in the task's own storage. */
template <class Fn>
inline constexpr bool fits_inline = sizeof(Fn) <= DAGRT_SPAWN_INLINE_SIZE &&
                                    alignof(Fn) <= DAGRT_SPAWN_INLINE_ALIGN;

/* One that dagrt_spawn_words carries: two words, at most (16 bytes on a
 * 64-bit target), and trivially copyable (checked where it is used). */
template <class Fn>
inline constexpr bool fits_words = sizeof(Fn) <= 2 * sizeof(std::uintptr_t) &&
                                   alignof(Fn) <= DAGRT_SPAWN_INLINE_ALIGN;

template <class Fn>
void run_inline(void *p) noexcept
{
    Fn *f = static_cast<Fn *>(p);
    call_guarded(*f);
    f->~Fn();
}

/* dagrt_place_fn: constructs Fn in dst from *src as an Arg&& (src NULL:
 * the spawn failed after it, so destroy it again). */
template <class Fn, class Arg>
void place(void *dst, void *src) noexcept
{
    if (src)
        ::new (dst) Fn(static_cast<Arg &&>(*static_cast<std::remove_reference_t<Arg> *>(src)));
    else
        static_cast<Fn *>(dst)->~Fn();
}

template <class Fn>
void run_heap(void *p) noexcept
{
    Fn *f = static_cast<Fn *>(p);
    call_guarded(*f);
    delete f;
}

template <class F>
int spawn_any(dagrt *rt, dagrt_group *g, F &&f, unsigned flags)
{
    using Fn = std::decay_t<F>;
    if constexpr (std::is_function_v<std::remove_reference_t<F>>) {
        return spawn_any(rt, g, &f, flags);   /* a function: spawn its pointer */
    } else if constexpr (fits_inline<Fn> && std::is_trivially_copyable_v<Fn> &&
                  std::is_trivially_destructible_v<Fn> && std::is_same_v<Fn &, std::remove_const_t<std::remove_reference_t<F>> &>) {
        /* Bytes will do: copied into the task, nothing to destroy. Up to
         * two words (fits_words: a lambda holding a pointer or two) go by
         * value to dagrt_spawn_words, dagrt_spawn's own path: no size or
         * source to check, no copy through memory (the memcpy below is
         * register moves once inlined). */
        if constexpr (fits_words<Fn>) {
            if (flags == 0) {
                std::uintptr_t w[2] = {0, 0};
                std::memcpy(w, std::addressof(f), sizeof(Fn));
                return dagrt_spawn_words(rt, g, &run_inline<Fn>, w[0], w[1]);
            }
        }
        return dagrt_spawn_inline(rt, g, &run_inline<Fn>, nullptr,
                                  const_cast<void *>(static_cast<const void *>(std::addressof(f))),
                                  sizeof(Fn), flags);
    } else if constexpr (fits_inline<Fn> && std::is_nothrow_constructible_v<Fn, F &&>) {
        /* Built in place, straight from the argument. */
        return dagrt_spawn_inline(rt, g, &run_inline<Fn>, &place<Fn, F &&>,
                                  const_cast<void *>(static_cast<const void *>(std::addressof(f))),
                                  sizeof(Fn), flags);
    } else if constexpr (fits_inline<Fn> && std::is_nothrow_move_constructible_v<Fn>) {
        /* A copy that may throw is made here, in the caller, then moved
         * into the task (which cannot throw). */
        Fn tmp(std::forward<F>(f));
        return dagrt_spawn_inline(rt, g, &run_inline<Fn>, &place<Fn, Fn &&>, std::addressof(tmp),
                                  sizeof(Fn), flags);
    } else {
        /* Too large (over DAGRT_SPAWN_INLINE_SIZE bytes or over-aligned),
         * or no non-throwing move: one operator new per spawn, freed by the
         * task after it ran. */
        Fn *p = new (std::nothrow) Fn(std::forward<F>(f));
        if (!p)
            return DAGRT_ENOMEM;
        int r = dagrt_spawn_ex(rt, g, &run_heap<Fn>, p, flags);
        if (r != 0)
            delete p;
        return r;
    }
}

} // namespace detail

/* Whether spawning a copy of an F allocates (false: it lives in the task,
 * up to DAGRT_SPAWN_INLINE_SIZE bytes at DAGRT_SPAWN_INLINE_ALIGN). */
template <class F>
inline constexpr bool spawn_allocates =
    !(detail::fits_inline<std::decay_t<F>> && std::is_nothrow_move_constructible_v<std::decay_t<F>>);

/* Spawns a copy of f (any callable taking no arguments; its result is
 * dropped), counted by g, where flags say (DAGRT_SPAWN_FIBER, _MAIN,
 * _HOT, _LARGE_STACK: dagrt_spawn_ex's). The copy lives inside the task
 * when it fits DAGRT_SPAWN_INLINE_SIZE (80) bytes at 16-byte alignment and
 * moves without throwing: no allocation, then; one that is trivially
 * copyable and at most two words (16 bytes on a 64-bit target), spawned
 * with no flags, costs what dagrt_spawn does (dagrt_spawn_words).
 * Otherwise one operator new (nothrow) per spawn. Errors: dagrt_spawn_ex's (DAGRT_EINVAL,
 * DAGRT_ENOMEM); on one, f never runs and its copy is gone. */
template <class F, class = std::enable_if_t<std::is_invocable_v<std::decay_t<F> &>>>
std::error_code spawn(dagrt *rt, group &g, F &&f, unsigned flags = 0)
{
    return make_error(detail::spawn_any(rt, g.get(), std::forward<F>(f), flags));
}
/* Fire and forget: counted by no group. */
template <class F, class = std::enable_if_t<std::is_invocable_v<std::decay_t<F> &>>>
std::error_code spawn(dagrt *rt, F &&f, unsigned flags = 0)
{
    return make_error(detail::spawn_any(rt, nullptr, std::forward<F>(f), flags));
}

/* --------------------------------------------------------- parallel-for */

/* Calls f(i) for every i in [begin, end), on any threads of rt, and
 * returns when all have run (dagrt_parallel_for; grain 0: the runtime's
 * choice). f is called through a reference, never copied, from several
 * threads at once. */
template <class F>
std::error_code parallel_for(dagrt *rt, std::size_t begin, std::size_t end, F &&f,
                             std::size_t grain = 0)
{
    using Fr = std::remove_reference_t<F>;
    auto tramp = [](void *arg, std::size_t b, std::size_t e) noexcept {
        Fr &fn = *static_cast<Fr *>(arg);
        for (std::size_t i = b; i < e; i++)
            detail::call_guarded(fn, i);
    };
    return make_error(dagrt_parallel_for(rt, begin, end, grain, tramp,
                                         const_cast<void *>(static_cast<const void *>(std::addressof(f)))));
}

/* The sub-range form: f(b, e) on disjoint sub-ranges covering [begin,
 * end), for bodies that hoist work out of the inner loop. */
template <class F>
std::error_code parallel_for_range(dagrt *rt, std::size_t begin, std::size_t end, F &&f,
                                   std::size_t grain = 0)
{
    using Fr = std::remove_reference_t<F>;
    auto tramp = [](void *arg, std::size_t b, std::size_t e) noexcept {
        detail::call_guarded(*static_cast<Fr *>(arg), b, e);
    };
    return make_error(dagrt_parallel_for(rt, begin, end, grain, tramp,
                                         const_cast<void *>(static_cast<const void *>(std::addressof(f)))));
}

/* ------------------------------------------------------- cancel scopes */

/* A cancel scope (dagrt_cancel): a parent must outlive its children, and
 * a scope every wait attached to it. Neither copied nor moved. */
class cancel_scope {
public:
    explicit cancel_scope(cancel_scope *parent = nullptr) noexcept
    {
        dagrt_cancel_init(&c_, parent ? parent->get() : nullptr);
    }
    /* With a deadline: every wait under it ends with DAGRT_ETIMEDOUT once
     * it passes (dagrt_cancel_init_deadline). */
    explicit cancel_scope(clock::time_point deadline, cancel_scope *parent = nullptr) noexcept
    {
        dagrt_cancel_init_deadline(&c_, parent ? parent->get() : nullptr, detail::deadline_ns(deadline));
    }
    cancel_scope(const cancel_scope &) = delete;
    cancel_scope &operator=(const cancel_scope &) = delete;

    void request() noexcept { dagrt_cancel_request(&c_); }
    bool requested() const noexcept { return dagrt_cancel_requested(&c_); }
    /* The earliest deadline of this scope and those above it
     * (clock::time_point::max() for none). */
    clock::time_point deadline() const noexcept
    {
        std::uint64_t d = dagrt_cancel_deadline(&c_);
        return d >= static_cast<std::uint64_t>(INT64_MAX) ? clock::time_point::max()
                                                          : clock::time_point(clock::duration(static_cast<std::int64_t>(d)));
    }
    dagrt_cancel *get() noexcept { return &c_; }

private:
    dagrt_cancel c_;
};

namespace detail {
inline dagrt_cancel *scope(cancel_scope *c) noexcept { return c ? c->get() : nullptr; }
} // namespace detail

/* dagrt_sleep: 0 after d (DAGRT_ETIMEDOUT if a scope's deadline cut it
 * short), DAGRT_ECANCELED. */
template <class Rep, class Period>
std::error_code sleep_for(dagrt *rt, const std::chrono::duration<Rep, Period> &d, cancel_scope *c = nullptr)
{
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    return make_error(dagrt_sleep(rt, ns < 0 ? 0 : static_cast<std::uint64_t>(ns), detail::scope(c)));
}

/* ---------------------------------------------------------- sync objects */

/* An event (dagrt_event): set/reset, sticky. */
class event {
public:
    explicit event(bool set = false) noexcept { dagrt_event_init(&e_, set); }
    event(const event &) = delete;
    event &operator=(const event &) = delete;
    void set() noexcept { dagrt_event_set(&e_); }
    void reset() noexcept { dagrt_event_reset(&e_); }
    bool is_set() const noexcept { return dagrt_event_is_set(&e_); }
    std::error_code wait(dagrt *rt) noexcept { return make_error(dagrt_event_wait(rt, &e_)); }
    std::error_code wait_until(dagrt *rt, clock::time_point deadline, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_event_wait_until(rt, &e_, detail::deadline_ns(deadline), detail::scope(c)));
    }
    template <class Rep, class Period>
    std::error_code wait_for(dagrt *rt, const std::chrono::duration<Rep, Period> &d, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_event_wait_until(rt, &e_, detail::deadline_after(d), detail::scope(c)));
    }
    dagrt_event *get() noexcept { return &e_; }

private:
    dagrt_event e_;
};

/* A fiber-aware mutex (dagrt_mutex) bound to its runtime, which lock()
 * needs: Lockable (lock, try_lock, unlock) and TimedLockable
 * (try_lock_for, try_lock_until on dagrtpp::clock), so std::unique_lock,
 * std::lock_guard and std::scoped_lock work. lock() cannot return an
 * error: if the wait fails (only dagrt_destroy cancelling it), it throws
 * std::system_error, or prints it and ends the program without
 * exceptions. lock_until returns the error instead. */
class mutex {
public:
    explicit mutex(dagrt *rt) noexcept : rt_(rt) { dagrt_mutex_init(&m_); }
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;

    void lock() { throw_if_error(make_error(dagrt_mutex_lock(rt_, &m_)), "dagrtpp::mutex::lock"); }
    bool try_lock() noexcept { return dagrt_mutex_trylock(&m_); }
    void unlock() noexcept { (void)dagrt_mutex_unlock(&m_); }
    /* 0 with the lock held; DAGRT_ETIMEDOUT, DAGRT_ECANCELED without it. */
    std::error_code lock_until(clock::time_point deadline, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_mutex_lock_until(rt_, &m_, detail::deadline_ns(deadline), detail::scope(c)));
    }
    bool try_lock_until(clock::time_point deadline) noexcept { return !lock_until(deadline); }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period> &d) noexcept
    {
        return !make_error(dagrt_mutex_lock_until(rt_, &m_, detail::deadline_after(d), nullptr));
    }
    dagrt_mutex *get() noexcept { return &m_; }
    dagrt *rt() const noexcept { return rt_; }

private:
    dagrt *rt_;
    dagrt_mutex m_;
};

/* A counting semaphore (dagrt_sem), FIFO. */
class semaphore {
public:
    explicit semaphore(std::uint32_t count = 0) noexcept { dagrt_sem_init(&s_, count); }
    semaphore(const semaphore &) = delete;
    semaphore &operator=(const semaphore &) = delete;
    std::error_code acquire(dagrt *rt) noexcept { return make_error(dagrt_sem_acquire(rt, &s_)); }
    bool try_acquire() noexcept { return dagrt_sem_tryacquire(&s_); }
    std::error_code acquire_until(dagrt *rt, clock::time_point deadline, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_sem_acquire_until(rt, &s_, detail::deadline_ns(deadline), detail::scope(c)));
    }
    template <class Rep, class Period>
    std::error_code acquire_for(dagrt *rt, const std::chrono::duration<Rep, Period> &d, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_sem_acquire_until(rt, &s_, detail::deadline_after(d), detail::scope(c)));
    }
    void release(std::uint32_t n = 1) noexcept { dagrt_sem_release(&s_, n); }
    dagrt_sem *get() noexcept { return &s_; }

private:
    dagrt_sem s_;
};

/* A condition variable over dagrtpp::mutex (dagrt_cond): the lock is held
 * again on every return, errors included. */
class condition_variable {
public:
    condition_variable() noexcept { dagrt_cond_init(&c_); }
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;

    template <class Lock>
    std::error_code wait(Lock &lk) noexcept
    {
        return make_error(dagrt_cond_wait(lk.mutex()->rt(), &c_, lk.mutex()->get(), DAGRT_FOREVER, nullptr));
    }
    /* Waits until pred() holds: 0, or the error that ended the wait. */
    template <class Lock, class Pred>
    std::error_code wait(Lock &lk, Pred pred)
    {
        while (!pred()) {
            std::error_code ec = wait(lk);
            if (ec)
                return ec;
        }
        return {};
    }
    template <class Lock>
    std::error_code wait_until(Lock &lk, clock::time_point deadline, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_cond_wait(lk.mutex()->rt(), &c_, lk.mutex()->get(),
                                          detail::deadline_ns(deadline), detail::scope(c)));
    }
    template <class Lock, class Rep, class Period>
    std::error_code wait_for(Lock &lk, const std::chrono::duration<Rep, Period> &d, cancel_scope *c = nullptr) noexcept
    {
        return make_error(dagrt_cond_wait(lk.mutex()->rt(), &c_, lk.mutex()->get(),
                                          detail::deadline_after(d), detail::scope(c)));
    }
    void notify_one() noexcept { dagrt_cond_signal(&c_); }
    void notify_all() noexcept { dagrt_cond_broadcast(&c_); }
    dagrt_cond *get() noexcept { return &c_; }

private:
    dagrt_cond c_;
};

} // namespace dagrtpp

#endif
