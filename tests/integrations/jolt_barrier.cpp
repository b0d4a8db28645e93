/* jolt_barrier.cpp - dagrt_jolt::JobSystem's barriers by behaviour, with
 * Jolt's Core only (no physics): WaitForJobs must run the runtime's other
 * ready work while it waits, not only the barrier's jobs. In each case the
 * barrier's one job J has a dependency that only a plain libdagrt task T
 * (not a Jolt job) removes, and T sits queued where only the waiting
 * thread can run it: with 0 workers on the main thread, on a worker whose
 * main thread polls without helping, on an attached guest, and on a
 * thread outside the runtime that WaitForJobs gives a guest slot for the
 * wait (there with 1 worker: T may run on either). A wait that only ran the barrier's jobs or slept would never
 * return (an alarm fails the test instead). Also: jobs added while the
 * barrier is waited on, a job finished before it was added, and the wait
 * leaves the guest slot it took. */
#include <Jolt/Jolt.h>

#include <Jolt/Core/Memory.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include "dagrt_jolt.h"
#include "scenario.h"

using namespace JPH;

namespace {

int bad = 0;
#define CHECK(cond, ...) do { if (!(cond)) { std::printf("jolt_barrier: FAIL: " __VA_ARGS__); std::printf("\n"); bad++; } } while (0)

const char *current = "";
void on_alarm(int)
{
    /* A hang is the failure this test looks for: say which case. */
    static const char msg[] = "jolt_barrier: FAIL: a WaitForJobs did not return (hung) in case: ";
    (void)!write(2, msg, sizeof msg - 1);
    size_t n = 0;
    while (current[n])
        n++;
    (void)!write(2, current, n);
    (void)!write(2, "\n", 1);
    _exit(1);
}

dagrt *make_rt(int workers, int guests)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.guest_threads = guests;
    return dagrt_create(&cfg);
}

/* The pattern: J (one dependency) in a barrier; T, a plain task, removes
 * the dependency. Returns the thread index T ran on (or -100). */
struct Pattern {
    dagrt *rt;
    dagrt_jolt::JobSystem *js;
    JobSystem::JobHandle j;
    std::atomic<int> t_thread{-100}, j_thread{-100};
};

void t_task(void *p)
{
    Pattern *pt = static_cast<Pattern *>(p);
    /* relaxed: read after the wait that ran this task (its group/barrier
     * orders it). */
    pt->t_thread.store(dagrt_thread_index(pt->rt), std::memory_order_relaxed);
    pt->j.RemoveDependency();
}

/* Runs the pattern on the calling thread: spawn T (fire and forget), then
 * WaitForJobs. Returns the calling thread's index during the wait. */
int run_pattern(Pattern &pt)
{
    pt.j = pt.js->CreateJob("J", Color::sRed, [&pt] {
        pt.j_thread.store(dagrt_thread_index(pt.rt), std::memory_order_relaxed);   /* relaxed: as t_thread */
    }, 1);
    JobSystem::Barrier *b = pt.js->CreateBarrier();
    b->AddJob(pt.j);
    int before = dagrt_thread_index(pt.rt);
    if (dagrt_spawn(pt.rt, nullptr, t_task, &pt) != 0)
        return -200;
    pt.js->WaitForJobs(b);
    pt.js->DestroyBarrier(b);
    bool done = pt.j.IsDone();
    pt.j = JobSystem::JobHandle();
    return done ? before : -300;
}

void case_main_zero_workers()
{
    current = "main thread, 0 workers";
    dagrt *rt = make_rt(0, 0);
    {
        dagrt_jolt::JobSystem js(rt, 64, 4);
        Pattern pt{rt, &js, {}};
        int me = run_pattern(pt);
        CHECK(me == 0, "%s: the wait returned %d", current, me);
        CHECK(pt.t_thread.load() == 0 && pt.j_thread.load() == 0,
              "%s: T ran on %d, J on %d (want the main thread, 0)", current, pt.t_thread.load(), pt.j_thread.load());
        CHECK(js.inline_runs() == 0 && js.spawned() == 1, "%s: %lu inline, %lu spawned", current,
              js.inline_runs(), js.spawned());
    }
    dagrt_destroy(rt);
}

/* One worker; the main thread spawns W and polls dagrt_group_done (which
 * never helps), so W's wait on the worker is the only thread to run T. */
struct WorkerCase {
    Pattern *pt;
    int me = -100;
};
void w_task(void *p)
{
    WorkerCase *wc = static_cast<WorkerCase *>(p);
    wc->me = run_pattern(*wc->pt);
}

void case_worker()
{
    current = "a worker, its main thread not helping";
    dagrt *rt = make_rt(1, 0);
    {
        dagrt_jolt::JobSystem js(rt, 64, 4);
        Pattern pt{rt, &js, {}};
        WorkerCase wc{&pt};
        dagrt_group *g = new dagrt_group;   /* off the stack: polled with dagrt_group_done */
        dagrt_group_init(g);
        dagrt_spawn(rt, g, w_task, &wc);
        while (dagrt_group_done(g) == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        CHECK(wc.me == 1, "%s: W ran on %d (want the worker, 1)", current, wc.me);
        CHECK(pt.t_thread.load() == 1 && pt.j_thread.load() == 1, "%s: T ran on %d, J on %d (want 1)",
              current, pt.t_thread.load(), pt.j_thread.load());
        delete g;
    }
    dagrt_destroy(rt);
}

void case_guest(bool attach)
{
    /* Not attached: 1 worker, since with none the spawns of a thread
     * outside the runtime queue for the main thread (docs/runtime.md,
     * "Threads"), which only the main thread's waits run. */
    current = attach ? "an attached guest, 0 workers" : "a thread outside the runtime, 1 worker, a free guest slot";
    int workers = attach ? 0 : 1;
    dagrt *rt = make_rt(workers, 1);
    {
        dagrt_jolt::JobSystem js(rt, 64, 4);
        Pattern pt{rt, &js, {}};
        int me = -100, att = -100, after = -100, det = -100;
        std::thread th([&] {
            if (attach)
                att = dagrt_thread_attach(rt);
            me = run_pattern(pt);
            after = dagrt_thread_index(rt);
            if (attach)
                det = dagrt_thread_detach(rt);
        });
        th.join();   /* the main thread waits outside the runtime: it runs nothing */
        if (attach) {
            CHECK(att == 1 && det == 0 && me == 1 && after == 1, "%s: attach %d detach %d, index %d/%d",
                  current, att, det, me, after);
        } else {
            /* Outside the runtime before and after: the slot was the wait's. */
            CHECK(me == -1 && after == -1, "%s: index %d before, %d after the wait (want -1)", current, me, after);
            CHECK(js.blocked_waits() == 0, "%s: the wait found no guest slot", current);
        }
        if (attach)
            CHECK(pt.t_thread.load() == 1 && pt.j_thread.load() == 1,
                  "%s: T ran on %d, J on %d (want the guest slot, 1)", current, pt.t_thread.load(),
                  pt.j_thread.load());
        else   /* T in the worker's inbox: the worker or the waiter's slot (2) */
            CHECK(pt.t_thread.load() >= 1 && pt.j_thread.load() >= 1, "%s: T ran on %d, J on %d", current,
                  pt.t_thread.load(), pt.j_thread.load());
        /* The slot is free again: another thread can attach. */
        int again = -100;
        std::thread th2([&] { again = dagrt_thread_attach(rt); if (again >= 0) dagrt_thread_detach(rt); });
        th2.join();
        CHECK(again == workers + 1, "%s: attach after the wait: %d (the slot was not given back)", current, again);
    }
    dagrt_destroy(rt);
}

/* Jobs adding jobs to the barrier while it is waited on (a chain of 200,
 * each added by its predecessor), and a job finished before it was
 * added: the wait returns only when the last one is done. */
struct Chain {
    dagrt_jolt::JobSystem *js;
    JobSystem::Barrier *b;
    std::atomic<int> ran{0};
    void next(int left)
    {
        ran.fetch_add(1, std::memory_order_relaxed);   /* relaxed: read after the wait */
        if (left == 0)
            return;
        JobSystem::JobHandle h = js->CreateJob("chain", Color::sBlue, [this, left] {
            std::this_thread::sleep_for(std::chrono::microseconds(left % 50 == 0 ? 2000 : 0));
            next(left - 1);
        });
        b->AddJob(h);
    }
};

void case_late_adds(int workers)
{
    static char what[80];
    std::snprintf(what, sizeof what, "jobs added while waited on, %d workers", workers);
    current = what;
    dagrt *rt = make_rt(workers, 0);
    {
        dagrt_jolt::JobSystem js(rt, 1024, 4);
        for (int round = 0; round < 20; round++) {
            Chain c{&js, js.CreateBarrier()};
            /* First a job that is done before it is added (with workers:
             * waited for; with none, run by a wait on another barrier). */
            JobSystem::JobHandle early = js.CreateJob("early", Color::sGreen, [] {});
            if (workers > 0) {
                while (!early.IsDone())
                    std::this_thread::yield();
            } else {
                JobSystem::Barrier *o = js.CreateBarrier();
                o->AddJob(early);
                js.WaitForJobs(o);
                js.DestroyBarrier(o);
            }
            c.b->AddJob(early);   /* count 1, then 0: the wait must not trust that zero */
            JobSystem::JobHandle first = js.CreateJob("first", Color::sGreen, [&c] { c.next(200); });
            c.b->AddJob(first);
            js.WaitForJobs(c.b);
            int ran = c.ran.load();
            js.DestroyBarrier(c.b);
            if (ran != 201) {
                CHECK(false, "%s: round %d: the wait returned after %d of 201 chained jobs", what, round, ran);
                break;
            }
        }
        CHECK(js.inline_runs() == 0, "%s: %lu jobs ran inline", what, js.inline_runs());
    }
    dagrt_destroy(rt);
}

} // namespace

static int jolt_barrier()
{
    RegisterDefaultAllocator();
    std::signal(SIGALRM, on_alarm);
    alarm(120);
    case_main_zero_workers();
    case_worker();
    case_guest(true);
    case_guest(false);
    case_late_adds(0);
    case_late_adds(1);
    case_late_adds(2);
    std::printf("jolt_barrier: %s\n", bad ? "FAIL" : "ok: every wait helped and returned");
    return bad ? 1 : 0;
}

/* Hosted by the plain driver (tests/scenario/driver.c). */
const scenario scenario_table[] = {
    {"jolt_barrier", jolt_barrier, nullptr},
    {nullptr, nullptr, nullptr},
};
