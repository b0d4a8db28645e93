/*
 * exec/crowd.c - plan mode on a crowded CPU: whether this process has its
 * CPUs to itself, and the waits' nap where it has not (rt_plan_nap; exec/
 * plan.c, "a shared CPU"; docs/runtime.md, "A shared CPU").
 *
 * A plan thread that waits for a node spins: on CPUs of its own that is the
 * fastest way to see the node done. Where a thread of another program (or
 * more of our own threads than CPUs) wants the same CPUs, the spin is
 * worse than useless: the thread it waits for is queued behind the busy
 * one, often on the other CPU's run queue, and our spinning waiter keeps
 * its own CPU from taking it over (bench_frame --load 1: the pipelines used
 * the most CPU of every contender there, and ran slower than one frame at a
 * time; docs/benchmarks-log.md). Going to sleep instead lets the kernel
 * pull the queued thread onto the CPU we free at once (a CPU that goes idle
 * looks for queued work).
 *
 * The sign: the plan threads' run delay, the time each was runnable but
 * waited for a CPU (Linux's /proc/thread-self/schedstat), over windows of
 * at least CROWD_WINDOW_NS. A thread samples at the start of a long wait
 * (exec/plan.c, rt_plan_nap: it has nothing to do then and reads the
 * clock anyway), at most once per window (three system calls, a few
 * microseconds), never on a frame's path. Every plan thread samples: a
 * helper stuck beside a busy thread on its CPU waits for that CPU while
 * the caller, alone on its own, does not. A thread alone on its CPU waits
 * for it only after a wake-up, microseconds; under bench_frame --load 1
 * each of three busy threads waits a third of the time, and on a machine
 * shared with builds and tests far more. (Involuntary context switches
 * were the first sign tried: on a heavily loaded machine a thread is
 * switched out seldom, 10-50 times a second, but for long.) A window
 * with a run delay of 1/CROWD_DELAY_SHARE of it or more makes the process
 * "crowded" for CROWD_HOLD_NS: long enough that waits which stepped off
 * the CPU, and so took away the evidence (a thread that sleeps does not
 * wait for a CPU), do not go back to polling at once.
 *
 * Process-wide: crowding is the machine's, not a runtime's. The sampler's
 * state is the sampling thread's (thread-local); the answer is one relaxed
 * word that every waiter reads (a hint: a stale answer costs a nap or a
 * spin, never a node). Where the system does not say (Windows here, or
 * no schedstat), the process is never crowded: waits poll as before.
 * DAGRT_CROWDED=1 (or 0) fixes the answer, for tests and for trying it.
 * A runtime's dagrt_config.crowd_frames (PLAN, DYNAMIC) fixes its own
 * frames' executor instead (rt_crowd_now), not the process's sign.
 *
 * Frames on the dynamic executor while crowded (rt_crowd_frames): plan
 * mode's lists assume each list's thread runs; on a crowded CPU one keeps
 * losing it, and its list waits (bench_frame --load 1: plan mode turned
 * 1.18 CPUs into 0.991x serial on the layered frame, the dynamic executor,
 * where any thread takes any ready node, 0.921x). So G_run, started runs
 * and pipeline frames that would run in plan mode run on the dynamic
 * executor while the process is crowded, and go back to plan mode once it
 * has been uncrowded for CROWD_FRAMES_HOLD_NS (below). The dynamic
 * executor's threads wait blocked, not in plan_relax, so they would never
 * sample: while frames run dynamically, the caller (at each frame's
 * choice) and the drainers (at their end) sample instead, reading the
 * clock once per CROWD_TICK calls, the run delay at most once per window
 * as above.
 */
#include "exec.h"

#include <string.h>

/* Window, threshold and hold: see above. A thread alone on its CPU waits
 * for it only after a wake-up (microseconds); three busy threads on two
 * CPUs wait a third of the time each. */
#define CROWD_WINDOW_NS 10000000u
#define CROWD_DELAY_SHARE 8
#define CROWD_HOLD_NS 200000000u
/* Frames go back from the dynamic executor to plan mode only after a
 * second without a crowded window: longer than the waits' hold, because
 * the dynamic executor takes away part of the evidence (its workers park
 * instead of polling, so fewer threads want the CPUs), and each change
 * costs a pipeline its frames in flight (drained at the switch) and a
 * plan-mode frame or more under a load that may still be there. A quiet
 * machine gets plan mode back within that second. */
#define CROWD_FRAMES_HOLD_NS 1000000000u
/* While frames run dynamically, the caller and the drainers read the
 * clock for a sample once per this many calls (a clock read costs about
 * as much as an empty node's overhead on a VM). */
#define CROWD_TICK 16u

/* 0 not crowded, 1 crowded; 2/3: fixed by DAGRT_CROWDED (0/1) or by the
 * tests' seam (rt_crowd_fix). relaxed everywhere: a hint (above). */
static _Atomic uint32_t crowd_state;
/* When the crowded state was last confirmed (rt_now_ns; the sampler's). */
static _Atomic uint64_t crowd_seen_ns;
/* 1 while frames run on the dynamic executor (rt_crowd_frames): set with
 * a crowded window, cleared by a sample CROWD_FRAMES_HOLD_NS after the
 * last one. relaxed: a hint, as crowd_state; a stale answer runs a frame
 * in the other executor, which is correct either way (exec/pipe.c drains
 * at a change). */
static _Atomic uint32_t crowd_frames;

/* The sampling thread's last window, and its count of rt_crowd_tick calls. */
static _Thread_local uint64_t crowd_t0, crowd_d0;
static _Thread_local uint32_t crowd_ticks;

static long crowd_env(void)
{
    /* -1 not read yet; 0/1 fixed; 2 not set. Read once per process. */
    static _Atomic long cached = -1;
    long v = atomic_load_explicit(&cached, memory_order_relaxed);   /* relaxed: same answer for all */
    if (v == -1) {
        const char *e = rt_os_getenv("DAGRT_CROWDED");
        v = e && strcmp(e, "1") == 0 ? 1 : e && strcmp(e, "0") == 0 ? 0 : 2;
        atomic_store_explicit(&cached, v, memory_order_relaxed);   /* relaxed: as above */
        if (v != 2)
            atomic_store_explicit(&crowd_state, (uint32_t)(2 + v), memory_order_relaxed);
    }
    return v;
}

void rt_crowd_fix(int v)
{
    (void)crowd_env();   /* read first, so that it does not override the seam later */
    /* relaxed: a hint (above); the tests call it between frames. */
    atomic_store_explicit(&crowd_state, v < 0 ? 0u : (uint32_t)(2 + (v != 0)),
                          memory_order_relaxed);
    atomic_store_explicit(&crowd_frames, 0, memory_order_relaxed);
}

void rt_crowd_sample(uint64_t now)
{
    /* Fixed (DAGRT_CROWDED, the seam): nothing to sample. relaxed: as above. */
    if (crowd_env() != 2 || atomic_load_explicit(&crowd_state, memory_order_relaxed) >= 2)
        return;
    if (crowd_t0 != 0 && now - crowd_t0 < CROWD_WINDOW_NS)
        return;
    int64_t d = rt_os_thread_run_delay_ns();
    if (d < 0)
        return;
    if (crowd_t0 != 0) {
        /* Runnable, not running, for at least 1/CROWD_DELAY_SHARE of the
         * time since this thread's last sample (which may be long ago: it
         * samples at long waits). relaxed: hints (above); two threads'
         * samples may race (one clears what the other just set), which
         * costs a window of polling, never a node. */
        if (((uint64_t)d - crowd_d0) * CROWD_DELAY_SHARE >= now - crowd_t0) {
            atomic_store_explicit(&crowd_seen_ns, now, memory_order_relaxed);
            if (atomic_load_explicit(&crowd_state, memory_order_relaxed) != 1)
                atomic_store_explicit(&crowd_state, 1, memory_order_relaxed);
            if (atomic_load_explicit(&crowd_frames, memory_order_relaxed) != 1)
                atomic_store_explicit(&crowd_frames, 1, memory_order_relaxed);
        } else {
            uint64_t quiet = now - atomic_load_explicit(&crowd_seen_ns, memory_order_relaxed);
            if (atomic_load_explicit(&crowd_state, memory_order_relaxed) == 1 &&
                quiet > CROWD_HOLD_NS)
                atomic_store_explicit(&crowd_state, 0, memory_order_relaxed);
            if (atomic_load_explicit(&crowd_frames, memory_order_relaxed) == 1 &&
                quiet > CROWD_FRAMES_HOLD_NS)
                atomic_store_explicit(&crowd_frames, 0, memory_order_relaxed);
        }
    }
    crowd_t0 = now;
    crowd_d0 = (uint64_t)d;
}

bool rt_crowded(void)
{
    /* relaxed: a hint (above). 1: sampled crowded; 3: DAGRT_CROWDED=1. */
    return (atomic_load_explicit(&crowd_state, memory_order_relaxed) & 1) != 0;
}

void rt_crowd_tick(void)
{
    if (++crowd_ticks % CROWD_TICK == 0)
        rt_crowd_sample(rt_now_ns());
}

/* Frames of tiny nodes stay in plan mode on a crowded CPU: the dynamic
 * executor's per-node hand-offs cost more than a list's waits there
 * (bench_frame --load 1, the uniform frame of 1 us tasks, about 1 us of
 * frame per node: its pipelines took 1.23-1.85x serial on the dynamic
 * executor against 1.04-1.06x in plan mode with the waits' naps; the game
 * and layered frames, 30 us and more a node, gain). 3 us a node: between
 * the uniform frame and examples/frame's (about 4 us; under a busy loop its
 * pipelines read 1.11-1.14x one at a time with this floor and without). */
#define CROWD_DYN_NS_PER_NODE 3000u

bool rt_crowd_small(uint64_t avg_ns, uint32_t nnodes)
{
    return avg_ns != 0 && avg_ns < (uint64_t)nnodes * CROWD_DYN_NS_PER_NODE;
}

bool rt_crowd_dyn(const dagrt *rt, uint64_t avg_ns, uint32_t nnodes)
{
    return dagrt_worker_count(rt) > 0 && rt_crowd_frames(rt) && !rt_crowd_small(avg_ns, nnodes);
}

bool rt_crowd_now(const dagrt *rt)
{
    (void)crowd_env();
    /* relaxed: hints (above). Fixed for the process (DAGRT_CROWDED, the
     * seam): the fixed answer; else the runtime's own setting, or, AUTO,
     * the frames' own sampled flag, with its longer hold. */
    uint32_t s = atomic_load_explicit(&crowd_state, memory_order_relaxed);
    if (s >= 2)
        return s == 3;
    switch (rt->cfg.crowd_frames) {
    case DAGRT_CROWD_PLAN: return false;
    case DAGRT_CROWD_DYNAMIC: return true;
    default: return atomic_load_explicit(&crowd_frames, memory_order_relaxed) != 0;
    }
}

bool rt_crowd_frames(const dagrt *rt)
{
    if (!rt_crowd_now(rt))
        return false;
    /* relaxed: a hint (above). The caller samples while frames run
     * dynamically on the sampled sign (above); fixed, nothing to sample. */
    if (atomic_load_explicit(&crowd_state, memory_order_relaxed) < 2 &&
        rt->cfg.crowd_frames == DAGRT_CROWD_AUTO)
        rt_crowd_tick();
    return true;
}

/* ------------------------------------------------- the waits' nap
 *
 * rt_plan_nap (exec/exec.h; called by exec/plan.c's plan_relax and the
 * other plan-mode waits every 64 polls): the one place a plan wait steps
 * off a crowded CPU. */

/* How long a wait may last before the thread it waits for is taken for
 * one without a CPU: longer than any partner could be busy with what it
 * claimed (twice the longest node of any list), plus PLAN_OVERDUE_NS. */
static uint64_t plan_overdue_ns(const graph_rt *r)
{
    uint32_t most = 0;
    for (uint32_t k = 0; k < r->nlists && k < PLAN_LISTS; k++)
        most = r->lmaxq[k] > most ? r->lmaxq[k] : most;
    return 2ull * most * PLAN_Q_NS + PLAN_OVERDUE_NS;
}

bool rt_plan_nap(graph_rt *r, unsigned spins, uint64_t *since)
{
    if (spins < PLAN_STEAL_SPINS) {
        *since = 0;   /* a new wait (its counter started again) */
        return false;
    }
    if (*since == 0) {
        /* A long wait's first look (one clock read a wait; every waiter
         * samples, so a helper that loses its CPU says so too). */
        *since = rt_now_ns();
        rt_crowd_sample(*since);
        return false;
    }
    if (!rt_crowded())
        return false;
    uint64_t now = rt_now_ns();
    uint64_t over = plan_overdue_ns(r);
    if (over < PLAN_NAP_AFTER_NS)
        over = PLAN_NAP_AFTER_NS;
    if (now - *since <= over)
        return false;
    /* Longer naps the longer the wait (an eighth of it past the bound):
     * a thread that lost its CPU is usually gone for the scheduler's
     * slices, milliseconds, and waking every PLAN_NAP_NS then costs CPU
     * of its own; seeing the node done up to an eighth late costs at most
     * that share of a wait that was lost anyway. */
    uint64_t nap = (now - *since - over) / 8;
    nap = nap < PLAN_NAP_NS ? PLAN_NAP_NS : nap > PLAN_NAP_MAX_NS ? PLAN_NAP_MAX_NS : nap;
    rt_os_sleep_ns(nap);
    return true;
}
