/*
 * exec/policy.c - the run policy: every timing rule that chooses how a
 * frame runs (exec/exec.h, "exec/policy.c"). The one choice of a frame's
 * mode (exec/choose.c) asks it; dagrt_graph_run, a started run's wait
 * (exec/exec.c) and a pipeline's frames (exec/pipe.c) report to it,
 * each with its own sign (exec/policy_signs.c);
 * its state in a graph state is graph_rt.policy, written by the caller
 * (between runs, and in its own wait: held_ns).
 *
 * - Serial when too small to share: a frame whose recent runs averaged
 *   under EXEC_SERIAL_NS_PER_NODE per node runs serial (exec/serial.c),
 *   if nothing in it must run elsewhere.
 * - The clock: a clock read can cost as much as a node's overhead (a
 *   virtualised clock), so only some frames are timed: the first
 *   EXEC_TIME_EVERY, then one in EXEC_TIME_EVERY, and the ones the
 *   starvation rule asks for. Their times enter a moving average.
 * - The starvation rule, one for every mode that shares a frame with
 *   workers (plan mode and pipelined plan frames, with their helpers; the
 *   dynamic executor's runs, started runs and dynamic pipeline frames,
 *   with their drainers): below. Each mode gives it one clock-free sign of a worker
 *   without CPU; the timing, the stretches, the probes and "slow to wake
 *   is not starved" are shared.
 */
#include "exec.h"

/* ------------------------------------------------ averages and samples */

/* 1/8 weight per sample; clamp: each sample at most `clamp` times the
 * average (0: not clamped). */
static uint64_t average(uint64_t avg, uint64_t ns, uint64_t clamp)
{
    if (avg == 0)
        return ns;
    if (clamp && ns > clamp * avg)
        ns = clamp * avg;
    return (avg * 7 + ns) / 8;
}

uint64_t rt_policy_average_clamped(uint64_t avg_ns, uint64_t ns) { return average(avg_ns, ns, 2); }

/* A frame's size (the averages that say how large a frame is: too small
 * to share, exec/choose.c; tiny nodes on a crowded CPU, exec/crowd.c):
 * each sample at most 4 times the average. A frame preempted for the
 * scheduler's slice (milliseconds) is not a larger frame: unclamped, one
 * such sample moved the uniform frame's 33 us average to about 400 us,
 * past the crowded switch's 96 us, and beside a busy loop its G_run and
 * pipelines changed executor 440-620 times a run (bench_frame --frame
 * uniform --load 1), each change ending a stretch or restarting a probe
 * window. With 4, one sample moves it at most 3/8, and a frame that
 * really grows is followed at 11/8 a sample (a hundredfold in 15). */
uint64_t rt_policy_average_size(uint64_t avg_ns, uint64_t ns) { return average(avg_ns, ns, 4); }

bool rt_policy_sampled(uint64_t frame)
{
    return frame < EXEC_TIME_EVERY || frame % EXEC_TIME_EVERY == 0;
}

bool rt_policy_small(uint64_t avg_ns, uint32_t nnodes)
{
    return avg_ns && avg_ns < (uint64_t)nnodes * EXEC_SERIAL_NS_PER_NODE;
}

/* Frames as long as the scheduler's slices ("signs that the clock
 * overrules", below). */
#define SIGN_SLICE_NS 1000000u

/* g's work by the tables' costs, ns: their sum (0: no costs). */
static uint64_t tables_work(const dagrt_graph *g)
{
    uint64_t work = 0;
    for (uint32_t i = 0; g->cost && i < g->nnodes; i++)
        work += g->cost[i];
    return work;
}

bool rt_policy_serial_ok(exec_policy *p, const dagrt_graph *g)
{
    /* The tables are const: one answer per graph, recomputed only when
     * the state runs another one. */
    if (p->serial_g != g) {
        p->serial_ok = rt_exec_serial_ok(g);
        uint64_t work = tables_work(g);
        p->work_known = work > 0;
        p->work_slices = work >= SIGN_SLICE_NS;
        p->serial_g = g;
    }
    return p->serial_ok;
}

bool rt_policy_timed(const graph_rt *r, bool plan)
{
    return rt_policy_sampled(r->runs) || (plan && r->policy.time_next);
}

/* ------------------------------------------- when the helper gets no CPU
 *
 * With a core kept busy by another program (a game's render or audio
 * thread, a build), plan mode's helper (exec/plan_helper.c) often does not
 * get to run when a frame is offered: the caller then runs the worker's
 * list itself, paying plan mode's claims and polls on every node, or waits
 * on a node that the preempted helper holds. Three measures say so:
 * - without a clock: the caller claimed more than half of list 1
 *   (stolen). Unloaded, a helper runs its whole list in almost every
 *   frame; starved, the caller takes most or all of it;
 * - the caller's own long waits with nothing to take (G_run: "held",
 *   plan_held below), longer than the helpers' work in the frame;
 * - with the timed frames: plan frames took longer, on average, than the
 *   serial frames did in the last serial stretch. That also catches a
 *   helper preempted while it holds a node, when the caller can only wait.
 * Either one starts a serial stretch of serial_span frames (no claim, no
 * offer; the helper stops lingering and the worker parks, so the busy
 * program and the caller each keep a core), its first frame timed afresh.
 * Then plan mode probes: the first probe frame wakes a helper, which after
 * any pause comes late, so a starved first probe is not judged yet; the
 * second one is. A good probe returns to plan mode with its average
 * restarted from the probe. A probe costs: waking the worker under load
 * can take the caller's CPU for a while, and a probe's helper may be
 * preempted holding a node. So a starved probe doubles the span, as does a
 * stretch that starts soon after a good probe (a probe that was only
 * lucky), from PLAN_SERIAL_MIN up to PLAN_SERIAL_MAX frames, and never
 * longer than about PLAN_SERIAL_NS of frames: once the load is gone, plan
 * mode is back within that time. Each sample enters an average clamped to
 * twice the average, so that one frame stretched by a preemption cannot
 * start a stretch by itself. */
/*
 * Slow to wake is not starved. A worker parked between frames (after a
 * stretch, or after its helper's linger ran out) takes its futex wake-up
 * to come back, up to about 150 us on a VM: the frame that woke it goes to
 * the caller alone, exactly as if the helper had no CPU, and a probe that
 * judged that frame would keep the graph serial on an idle machine. So a
 * frame is judged only if a helper was running (it counts itself in the
 * slot's `awake` once it has started on its worker) when the frame was
 * offered, or if the helper asked for has not started for PLAN_WAKE_NS
 * since its spawn: that one is runnable but gets no CPU (a competing
 * thread on its core, or its worker blocked in a long system call or held
 * by a task). A frame not judged leaves the rule's state as it was (a
 * probe stays a probe), so the next frame, whose helper is then lingering,
 * decides. */
#define PLAN_SERIAL_MIN 16
#define PLAN_SERIAL_MAX 4096
#define PLAN_SERIAL_NS 200000000u
/* A stretch within this many plan frames of a good probe counts as the
 * probe's failure (the span doubles). */
#define PLAN_SERIAL_SOON 256

/* The probe window: after its probe frames, a stretch's return to sharing
 * is judged by the shared frames' mean time over at least PROBE_WIN_FRAMES
 * timed frames and PROBE_WIN_NS of them (every frame timed meanwhile),
 * against the stretch's serial frames: sharing again must gain at least
 * 1/PROBE_GAIN. On a shared CPU the helper runs in bursts of the
 * scheduler's time slices (milliseconds), so one probe frame says only
 * whether the helper ran then: under a steady load (bench_frame --load 1,
 * uniform frame) three probes in five passed, and G_run shared about 800
 * frames, slower than serial, until a sign came again. The margin: each change between sharing and a
 * stretch costs a pipeline its frames in flight, waited for while a
 * preempted helper may hold one (milliseconds); sharing that only breaks
 * even does not pay for it. */
/*
 * Signs that the clock overrules. A worker with part of a CPU (a busy
 * thread pinned beside it, the two taking turns in the scheduler's slices)
 * gives the clock-free signs in some frames and not in others, while
 * sharing still gains on average: a helper that runs half the time runs
 * half its share. With every sign starting a stretch, such a graph ran
 * serial almost always (G_run, a root, six 400 us tasks and a sink, a busy
 * thread pinned to the worker's CPU: 286 of 300 frames serial at 3.24 ms,
 * where frames that always shared took 2.6 ms; tests/exec/plan_crowded.c,
 * plan_partial). And under a load that crowds the CPUs (bench_frame --load
 * 1, frames on the dynamic executor, judged by the clock alone), single
 * probe frames and windows of 8 judged against a stretch's serial frames
 * failed often enough that a third of a run could be stretches: the
 * layered frame's G_run 0.94-0.98x serial in those runs, 0.75-0.82 in
 * the others. So where frames are as long as the scheduler's slices (the
 * tables' costs sum to SIGN_SLICE_NS or more, or, without costs, the
 * stretch's serial frames take that long (slices, below): the stall a sign stands
 * for, a slice lost while holding a node, then costs about a frame, which
 * sharing's gain can pay; on frames of microseconds it costs dozens, and
 * the signs and the margin decide as before), the clock overrules:
 * - a probe opens its window at once (its frames judge, not one frame);
 * - a window fails only when its mean is 1/PROBE_GAIN above the serial
 *   frames' (a wrong stretch costs every frame of it the whole gain of
 *   sharing, a quarter here; sharing where it barely loses costs little),
 *   and a sign does not end it; it is still settled early once its sum
 *   can no longer pass (a frame held for milliseconds fails it at once);
 * - the timed frames' average above the serial frames' opens a window
 *   that only keeps sharing (win_keep), rather than a stretch; so does a
 *   sign once a window has passed although signs came in it (signs_ok,
 *   until the next stretch). Such a window runs at least KEEP_WIN_FRAMES
 *   frames and PROBE_WIN_NS, every one timed (with 8, two frames held for
 *   a slice failed one window in five beside the pinned busy thread, and
 *   the stretches doubled).
 * - the first sign, before any stretch has measured serial frames, where
 *   the tables' costs make the frames that long: a window that only keeps
 *   sharing, judged against the costs' sum (a serial frame takes at
 *   least that long), rather than a stretch. Beside a busy loop the
 *   game frame's first G_run frames shared at 1.2-1.3 ms with one in
 *   four or five at 2.1-5 ms (the helper late, or held), where serial
 *   frames took 2.0-2.2 ms: the first such frame started a 16-frame
 *   stretch in 24 runs of 24 (docs/benchmarks-log.md).
 * A worker with no CPU at all (stopped, or held by a long task) still
 * fails its windows where its frames hold nodes; where they do not, the
 * caller runs them alone at about serial speed, which sharing then costs
 * nothing much. A frame not timed although the rule asked (a started
 * run: never timed) is judged by its sign, as before. */
/*
 * One sign is not starved. On a machine whose CPUs are this process's
 * own, a helper still loses its CPU now and then for a moment (the
 * hypervisor's other guests, an interrupt, a kernel thread), and a frame
 * of microseconds then gives the sign; each started a stretch, or failed
 * the window it came in and doubled the next stretch. So on an idle 2-vCPU
 * VM the uniform frame's G_run (19 us frames shared, 32 us serial) saw
 * 40-63 signs per bench_frame run, and in some runs stretches of 2,048
 * and 4,096 frames: 0.84-0.99x serial where the other runs read
 * 0.59-0.65 (docs/benchmarks-log.md). A helper that lost its CPU to
 * another thread stays without it for the scheduler's slices, a
 * millisecond or more, and gives the sign in every frame meanwhile: so
 * the sign that the caller took the helper's list counts only in the
 * second judged shared frame in a row that gives it (sign_prev); a held
 * frame (a stall of a quarter of a millisecond and more, "held" below)
 * counts at once, as before. Not in a pipeline: there a starved helper's
 * frames in flight give the sign one frame in two or three (its list is
 * partly done by the time the caller reaches it), and with two in a row
 * asked for, the uniform frame's pipelines under bench_frame --load 1
 * kept sharing at 1.26-1.32x serial (1.03-1.13 with every sign). Nor where frames are as long as the slices
 * ("signs that the clock overrules"): there one sign is a helper that
 * lost its CPU for much of a frame. */
#define PROBE_WIN_FRAMES 8
#define PROBE_WIN_NS 5000000u
/*
 * A crowded CPU's plan-mode frames: the clock alone, over long windows.
 * Frames of tiny nodes stay in plan mode while the process is crowded
 * (exec/crowd.c), and there, as on the dynamic executor ("held" in
 * exec/policy_signs.c), every thread loses its CPU for the scheduler's
 * slices: a helper preempted while it holds a node holds the frame for
 * milliseconds every few hundred frames, and the caller takes a starved
 * helper's list in runs of frames, each a sign, although sharing beats
 * serial on average. Beside a busy loop (bench_frame --frame uniform
 * --load 1, 32 nodes of 1 us) G_run's plan frames took 20-26 us on
 * average, stalls included, against 30-34 us serial; frames that always
 * shared read 0.88-0.93x serial (six runs of seven), while the signs and
 * 5 ms windows (one of the load's slices, a coin toss against the 1/16
 * margin) kept four frames in five in doubling stretches: 1.00-1.08x.
 * So a G_run frame run in plan mode while the process is crowded (the
 * caller's `clock`) gives no sign: its time decides as for frames as long
 * as the slices (below: a window fails only 1/16 above the serial frames,
 * and slower frames open a window that only keeps sharing), and its probe
 * window lasts CROWD_WIN_NS, about ten of the load's slices, so that its
 * mean holds the stalls as often as they come; it fails early only at
 * twice the serial frames. The dynamic executor's frames keep
 * PROBE_WIN_NS: in the pairs tried (game and layered frames, 30 us a node
 * and more, under the same load) longer windows read no better. */
#define CROWD_WIN_NS 50000000u
#define PROBE_GAIN 16
#define KEEP_WIN_FRAMES 16
/* The reference stretch. A rule without a serial time yet (it never had a
 * stretch) has nothing to compare its shared frames with, and a helper
 * that runs, only slowly (a thread sharing its CPU), gives neither
 * clock-free sign: a pipeline's caller cannot take the nodes a running
 * helper claimed (nothing stolen), and its waits (held) are not judged.
 * Such a pipeline ran slower than its frames one at a time, for good
 * (bench_frame --load 1, docs/benchmarks-log.md). So after REF_SAMPLES
 * timed shared frames a rule runs one stretch of PLAN_SERIAL_MIN frames
 * to measure serial frames, then its probe window judges (once per
 * plan: 16 serial frames on an idle machine). 32: about
 * 200 frames (the first 8 are timed, then one in 8), so that a short run
 * pays nothing; with 8, a 60-frame pipeline (tests/exec/pipe_ahead.c)
 * spent most of its frames in the stretch and its window under
 * AddressSanitizer. Not with live costs (see plan_after).
 * Nor while the tables' costs show that sharing gains: the shared frames'
 * average at most REF_GAINS_NUM/REF_GAINS_DEN of the costs' sum, the
 * frame's work, which serial frames take at least. On an idle machine
 * the stretch cost 16 frames at twice their time once per plan (a
 * game-shaped frame's pipeline: one run of bench_frame's in five 15-25%
 * slower, docs/benchmarks-log.md). A load that slows the shared frames
 * past that later runs it then. Where frames are as long as the slices
 * (above: the probe window after the stretch fails only above 17/16 of
 * the serial frames), the whole work: shared frames that take no longer
 * than a serial frame at least takes would pass that window, so the
 * stretch costs its frames and decides nothing. That was the game frame
 * on the dynamic executor beside a busy loop: shared frames at 0.83-0.85
 * of the costs' sum, serial ones at 1.10-1.26 of it, and the stretch
 * (with the probe's doubling, 16-48 serial frames) made one or two of
 * bench_frame's first 100 ms runs 10-25% slower. Costs declared far
 * above the work keep it from running where sharing is slow: the plan,
 * built from them, is off too (live costs measure them). */
#define REF_SAMPLES 32
#define REF_GAINS_NUM 3
#define REF_GAINS_DEN 4

enum { PROBE_NONE, PROBE_JUDGE, PROBE_WAKE, PROBE_WINDOW };

void rt_policy_plan_reset(exec_policy *p)
{
    p->serial_left = 0;   /* a new plan starts in plan mode */
    p->serial_span = 0;
    p->probe = PROBE_NONE;
    p->time_next = 0;
    p->signs_ok = p->win_signs = p->win_keep = 0;
    p->sign_prev = 0;
    p->plan_ns = p->serial_ns = 0;
    p->win_n = 0;
    p->wait_ns = p->held_ns = 0;
    p->since_probe = UINT32_MAX;   /* no probe yet */
}

bool rt_policy_plan_serial(graph_rt *r) { return rt_policy_stretch(r); }

static void go_serial(exec_policy *p, bool again)
{
    uint32_t span = again && p->serial_span ? 2u * p->serial_span : PLAN_SERIAL_MIN;
    /* The last stretch's frame time (or the plan frames') bounds it. */
    uint64_t frame_ns = p->serial_ns ? p->serial_ns : p->plan_ns;
    uint64_t most = frame_ns ? PLAN_SERIAL_NS / frame_ns : PLAN_SERIAL_MAX;
    if (most > PLAN_SERIAL_MAX)
        most = PLAN_SERIAL_MAX;
    if (span > most)
        span = (uint32_t)most;
    p->serial_span = (uint16_t)(span > PLAN_SERIAL_MIN ? span : PLAN_SERIAL_MIN);
    p->serial_left = p->serial_span;
    p->serial_ns = 0;       /* measured afresh, from the stretch's first frame */
    p->time_next = 1;
    p->probe = PROBE_NONE;
    p->signs_ok = 0;   /* the signs count again (see "signs that the clock overrules") */
    p->sign_prev = 0;
}

/*
 * A change of executor. On a crowded CPU frames that share run on the
 * dynamic executor (exec/crowd.c), and go back to plan mode a second after
 * the crowding ends. A stretch, or a window, judged the executor of the
 * frames before; the frames after run on the other one. So a change ends
 * a stretch (its probes follow, on the new executor) once it has timed a
 * serial frame, and a window starts afresh. It showed at startup beside a
 * busy loop: the game frame's first G_run frames ran in plan mode before
 * the crowded sign (10 ms windows of run delay) came, slower than serial
 * (2.2-2.9 ms against 2.0-2.3), and started a stretch whose window, still
 * partly in plan mode, failed; the stretch doubled, 16-48 serial frames
 * in all, while the dynamic executor's frames took 1.6-1.7 ms
 * (docs/benchmarks-log.md). */
void rt_policy_crowd(exec_policy *p, bool crowd)
{
    if (crowd == p->crowd_last)
        return;
    if (p->serial_left > 0) {
        if (p->serial_ns == 0)
            return;   /* no serial frame timed yet: asked again next frame */
        p->serial_left = 0;
        p->probe = PROBE_WAKE;   /* as at a stretch's end */
        p->time_next = 1;
    } else if (p->probe == PROBE_WINDOW) {
        p->plan_ns = 0;
        p->win_n = 0;
        p->win_signs = 0;
    }
    p->crowd_last = crowd;
}

/* The rule's frames are as long as the scheduler's slices: the clock
 * overrules the signs ("signs that the clock overrules"). By the tables'
 * costs where they have any: a load stretches measured frames, and a
 * frame of 0.4 ms measured at 1 ms and more beside a parallel test run
 * took the long-frame rule, where a 5 ms stall then no longer ended its
 * window (tests/exec/live_scenario.c, plan_held, failed one README run in
 * three). Without costs, by the stretch's measured serial frames. */
static bool slices(const exec_policy *p)
{
    return p->work_known ? p->work_slices : p->serial_ns >= SIGN_SLICE_NS;
}

/* The serial frames a window is judged against: the last stretch's; before
 * any, where frames are as long as the slices by the tables' costs, the
 * costs' sum, which a serial frame takes at least (0: none, the window
 * passes). */
static uint64_t serial_ref(const exec_policy *p, const dagrt_graph *g)
{
    if (p->serial_ns || !p->work_known || !p->work_slices)
        return p->serial_ns;
    return tables_work(g);
}

/* The probe window (above): one more shared frame of g (ns: its time, 0
 * if not timed). */
static void window(exec_policy *p, const dagrt_graph *g, uint64_t ns, bool clock)
{
    p->time_next = 1;   /* every frame of the window timed */
    if (ns && p->win_n < UINT16_MAX) {
        p->plan_ns += ns;   /* the window's sum (exec_policy.plan_ns) */
        p->win_n++;
    }
    /* A shared frame's most, on average: 1/PROBE_GAIN below the serial
     * frames', or above them where frames are as long as the slices
     * (above); a window that only keeps sharing (win_keep) is longer. */
    uint64_t ref = serial_ref(p, g);
    uint64_t most = slices(p) || clock ? ref + ref / PROBE_GAIN : ref - ref / PROBE_GAIN;
    uint32_t frames = p->win_keep ? KEEP_WIN_FRAMES : PROBE_WIN_FRAMES;
    uint64_t win_ns = clock ? CROWD_WIN_NS : PROBE_WIN_NS;
    /* Settled early: a window that has its PROBE_WIN_NS closes at its
     * last frame, and its sum only grows (a frame held for milliseconds
     * fails it at once, as a sign did before). */
    bool settled = ref && p->win_n < frames && p->plan_ns >= win_ns &&
                   p->plan_ns > frames * most;
    /* A long window (clock) is settled early, after PROBE_WIN_NS, only
     * where its mean is twice the serial frames': a helper that keeps
     * holding its nodes, not the stalls that come and go. */
    settled = settled || (clock && ref && p->plan_ns >= PROBE_WIN_NS &&
                           p->plan_ns > 2 * ref * p->win_n);
    if (!settled && (p->win_n < frames || p->plan_ns < win_ns))
        return;
    if (ref && p->plan_ns > (uint64_t)p->win_n * most) {
        go_serial(p, true);   /* shared frames slower than serial: a failed probe */
        return;
    }
    p->probe = PROBE_NONE;
    p->signs_ok |= p->win_signs;   /* passed with signs: the clock decides from now on */
    p->plan_ns /= p->win_n;   /* from the sum to the average */
    p->since_probe = 0;
    p->time_next = 0;
}

/* A probe window, its first frame this one (ns: its time, 0 if not timed;
 * sign: it gave the clock-free sign). */
static void open_window(exec_policy *p, const dagrt_graph *g, uint64_t ns, bool sign, bool keep,
                        bool clock)
{
    p->probe = PROBE_WINDOW;
    p->win_keep = keep;
    p->plan_ns = 0;
    p->win_n = 0;
    p->win_signs = sign;
    window(p, g, ns, clock);
}

/* Whether the shared frames' average (p->plan_ns, outside a window) shows
 * by g's costs that sharing gains (above, REF_SAMPLES): at most 3/4 of
 * the costs' sum, or all of it where frames are as long as the slices. */
static bool gains_by_costs(const exec_policy *p, const dagrt_graph *g)
{
    uint64_t work = tables_work(g);
    if (work && p->work_slices)
        return p->plan_ns <= work;
    return work && p->plan_ns * REF_GAINS_DEN <= work * REF_GAINS_NUM;
}

/* One shared frame's end, for every mode that shares (plan mode, the
 * dynamic executor's runs, started runs and pipeline frames). ns: its
 * time, 0 if it was not timed; starved: the mode's own clock-free sign
 * that a worker got no CPU (plan mode: the caller claimed most of the
 * helper's list; the dynamic executor: the caller waited long, blocked,
 * for a node a drainer held: "held", below); at_once: the sign counts
 * in this frame alone (a held frame, a pipeline's), else only as the
 * second in a row ("one sign is not starved"); g: the frame's graph;
 * ref: the rule may run its reference stretch (above); clock: a frame
 * that ran in plan mode on a crowded CPU, G_run's or a pipeline's run
 * alone (exec/pipe.c), judged by its time alone over long windows ("a
 * crowded CPU's plan-mode frames", above). */
void rt_policy_judge_in(exec_policy *p, const dagrt_graph *g, bool serial, bool waking,
                        bool starved_sign, bool at_once, uint64_t ns, bool ref, bool clock)
{
    if (!serial && waking)
        return;   /* slow to wake is not starved: judged by a later frame (below) */
    if (clock)
        starved_sign = false;   /* a crowded CPU's plan frame: the clock alone (above) */
    /* A frame the rule asked to be timed came untimed: its mode times none
     * (a started run), so its signs judge as if no clock could. */
    bool unclocked = p->time_next && ns == 0;
    /* Frames as long as the scheduler's slices: the clock may overrule
     * the signs (above). */
    bool overrule = (slices(p) || clock) && !unclocked;
    p->time_next = 0;
    /* One sign is not starved (above): the second in a row is; a held
     * frame's at once (a stall of PLAN_HELD_NS or PLAN_WAKE_NS and more,
     * the helper's work and twice its usual: "held", below). */
    bool twice = starved_sign && (at_once || p->sign_prev);
    p->sign_prev = !serial && starved_sign;
    if (serial) {
        if (ns)
            p->serial_ns = average(p->serial_ns, ns, 2);
        if (--p->serial_left == 0) {
            p->probe = PROBE_WAKE;
            p->time_next = 1;   /* the probes are judged by their time too */
        }
        return;
    }
    if (p->probe == PROBE_NONE) {
        if (ns)
            p->plan_ns = average(p->plan_ns, ns, 2);
        if (p->since_probe < UINT32_MAX)
            p->since_probe++;
        bool slower = ns && p->serial_ns && p->plan_ns > p->serial_ns;
        /* (Before any stretch, frames as long as the slices by their
         * costs: the costs' sum stands for the serial frames, "the
         * first sign" above.) */
        bool first = p->serial_ns == 0 && p->work_known && p->work_slices;
        if (overrule && (starved_sign ? p->signs_ok || first : slower)) {
            open_window(p, g, ns, starved_sign, true, clock);   /* the clock decides (above) */
        } else if ((overrule ? starved_sign : twice) || slower) {
            go_serial(p, p->since_probe < PLAN_SERIAL_SOON);
        } else if (ref && ns && p->serial_ns == 0 && p->since_probe == UINT32_MAX &&
                   (p->win_n < REF_SAMPLES ? ++p->win_n : p->win_n) >= REF_SAMPLES &&
                   !gains_by_costs(p, g)) {
            /* (win_n counts the samples until then: no window is open.) */
            go_serial(p, false);
        }
        return;
    }
    if (p->probe == PROBE_WINDOW) {
        if (twice && !overrule) {
            p->plan_ns = p->win_n ? p->plan_ns / p->win_n : 0;   /* (go_serial's bound) */
            go_serial(p, true);
            return;
        }
        p->win_signs |= starved_sign;   /* its mean decides (above) */
        window(p, g, ns, clock);
        return;
    }
    /* A probe. Where the clock overrules (above), its window judges at
     * once: one frame under a load says little. Else its own time
     * against the stretch's, and its sign. */
    if (overrule && ns) {
        open_window(p, g, ns, starved_sign, false, clock);
        return;
    }
    bool starved = starved_sign || (ns && p->serial_ns && ns > p->serial_ns);
    if (starved && p->probe == PROBE_WAKE) {
        p->probe = PROBE_JUDGE;
        p->time_next = 1;
    } else if (starved) {
        go_serial(p, true);
    } else {
        open_window(p, g, ns, starved_sign, false, clock);   /* passed: the window decides */
    }
}

void rt_policy_judge(graph_rt *r, bool starved_sign, bool at_once, uint64_t ns, bool ref,
                     bool clock)
{
    rt_policy_serial_ok(&r->policy, r->g);   /* (work_slices: this graph's) */
    rt_policy_judge_in(&r->policy, r->g, r->policy.was_serial, r->waking, starved_sign, at_once, ns,
                       ref, clock);
}
