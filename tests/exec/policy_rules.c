/* policy_rules.c - the run policy's verdicts (runtime/exec/policy.c) on
 * frames whose times the test makes up: the entry policy_rules of
 * exec_list.h.
 *
 * The other policy scenarios run real frames beside busy or stopped
 * threads, so a loaded machine shifts what they see, and they check
 * bounds. This one calls the rule as plan mode does around a frame
 * (rt_policy_plan_serial before it, rt_policy_after after it) with a
 * frame time it chooses, and checks each verdict exactly:
 *
 * 1. No reference stretch where the tables' costs show that sharing gains
 *    (shared frames 450 us, costs 800 us): 0 serial frames in 2,000.
 *    Without costs, the same frames run the reference stretch once: 16.
 *    With the shared frames at 700 us (over 3/4 of the costs) it runs too.
 *    And when a load slows shared frames later, it runs then. Frames as
 *    long as the slices (costs 2.4 ms): shared frames at 2.1 ms (over 3/4
 *    of the costs, under all of them) run no stretch; at 2.5 ms, one.
 * 2. The long-frame rule ("signs that the clock overrules") is gated on
 *    the tables' costs, not on serial frames a load stretched. Costs of
 *    400 us, with serial frames measured at 1.2 ms: after the stretch, a
 *    sign in the probe window starts a stretch at once. This failed when
 *    the gate was the measured 1.2 ms (tests/exec/live_scenario.c,
 *    plan_held, under a load). With costs of 2 ms the window goes on.
 *
 * 3. Short frames slower shared than serial (costs 100 us, shared 120
 *    us, serial 100 us): the reference stretch, then each probe fails and
 *    the stretch doubles: 16, 32, 64, 128, 256 serial frames.
 * 4. Long frames (costs 2 ms; serial frames 2.2 ms): shared frames
 *    slower than serial by less than 1/16 (2.25 ms) keep sharing, in
 *    windows that only keep it; by more (2.5 ms), a stretch again.
 * 5. One sign is not starved: short frames (costs 400 us, shared 250
 *    us) whose caller took the helper's list in one frame of 100 run no
 *    stretch in 2,000 frames; two such frames in a row start one (16).
 * 6. A change of executor (the crowded switch, rt_policy_crowd) ends a
 *    stretch once it has timed a serial frame: the frame after it is
 *    shared; without the change, serial.
 * 7. The first sign on long frames (costs 2 ms, shared 1.2 ms), before
 *    any stretch: a window judged against the costs' sum, which passes:
 *    no stretch in 2,000 frames. With the frames after it at 2.5 ms,
 *    stretches.
 * 8. A crowded CPU's plan frames (a runtime whose frames count as
 *    crowded: dagrt_config.crowd_frames DYNAMIC): short frames without
 *    costs (shared 24 us, serial 32 us), one in 500 held for 1 ms (26 us
 *    on average): the clock alone judges, so only the reference stretch
 *    runs (16 serial frames in 20,000). Not crowded, each held frame
 *    starts a stretch: more. And shared frames slower than serial (40
 *    us) still go serial, in stretches between windows of CROWD_WIN_NS:
 *    at least 60% of 60,000 frames.
 *
 * Checked against the changes undone: with the reference stretch taken
 * whatever the costs, (1)'s first check reads 16 serial frames; with the
 * gate on the measured serial frames, (2)'s first check reads a shared
 * frame after the sign; with the long-frame rule off, (4)'s first check
 * reads 877 serial frames and (2)'s second a stretch; with the crowded
 * rule off (the signs counted while crowded), (8)'s first check reads
 * 656 serial frames. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dagrt.h"
#include "exec/exec.h"
#include "policy_rules.h"

#define RULES_NODES 4
#define US 1000u

static dagrt_node rules_nodes[RULES_NODES];
static uint32_t rules_cost[RULES_NODES];
static dagrt_graph rules_graph;

/* A table of RULES_NODES independent tasks, each costing cost_us (0: the
 * tables carry no costs). Only the policy reads it: nothing runs it. */
static const dagrt_graph *rules_table(uint32_t cost_us)
{
    for (uint32_t i = 0; i < RULES_NODES; i++) {
        rules_nodes[i] = (dagrt_node){.name = "t"};
        rules_cost[i] = cost_us * US;
    }
    rules_graph = (dagrt_graph){.name = cost_us ? "rules_costs" : "rules",
                                .nodes = rules_nodes,
                                .nnodes = RULES_NODES,
                                .cost = cost_us ? rules_cost : NULL};
    return &rules_graph;
}

static graph_rt rules_r;   /* static: zeroed, and graph_rt is large */

/* A state's rule afresh, for g on rt (a runtime only for its cfg). */
static graph_rt *fresh(dagrt *rt, const dagrt_graph *g)
{
    graph_rt *r = &rules_r;
    *r = (graph_rt){0};
    r->rt = rt;
    r->g = g;
    r->nlistw = 4;   /* the helper's list: 4 nodes; the sign takes all of them */
    rt_policy_plan_reset(&r->policy);
    return r;
}

/* One plan-mode frame as exec.c runs it: the rule says serial or shared;
 * the frame takes serial_ns or shared_ns, timed where the rule samples;
 * sign: a shared frame whose caller took the helper's whole list (the
 * clock-free sign). Returns whether it ran serial. */
static bool frame_held(graph_rt *r, uint64_t shared_ns, uint64_t serial_ns, bool sign,
                       uint64_t held_ns)
{
    bool serial = rt_policy_plan_serial(r);
    bool timed = rt_policy_timed(r, true);
    r->stolen = !serial && sign ? r->nlistw : 0;
    r->held_ns = serial ? 0 : held_ns;
    r->waking = 0;
    rt_policy_after(r, timed, timed ? (serial ? serial_ns : shared_ns) : 0, true);
    r->runs++;
    return serial;
}

static bool frame(graph_rt *r, uint64_t shared_ns, uint64_t serial_ns, bool sign)
{
    return frame_held(r, shared_ns, serial_ns, sign, 0);
}

/* Serial frames among n frames of shared_us / serial_us each, no sign. */
static int serial_frames(graph_rt *r, int n, uint64_t shared_us, uint64_t serial_us)
{
    int k = 0;
    for (int f = 0; f < n; f++)
        k += frame(r, shared_us * US, serial_us * US, false);
    return k;
}

static int expect(const char *what, int got, int want)
{
    printf("policy_rules: %s: %d serial frames (want %d)\n", what, got, want);
    if (got == want)
        return 0;
    fprintf(stderr, "policy_rules: %s: %d serial frames, want %d\n", what, got, want);
    return 1;
}

/* (1) The reference stretch. */
static int reference(dagrt *rt)
{
    int bad = 0;
    bad += expect("costs 800 us, shared 450 us", serial_frames(fresh(rt, rules_table(200)), 2000, 450, 800), 0);
    bad += expect("no costs, shared 450 us", serial_frames(fresh(rt, rules_table(0)), 2000, 450, 800), 16);
    bad += expect("costs 800 us, shared 700 us", serial_frames(fresh(rt, rules_table(200)), 2000, 700, 800), 16);
    graph_rt *r = fresh(rt, rules_table(200));
    bad += expect("costs 800 us, shared 450 us, first 500 frames", serial_frames(r, 500, 450, 800), 0);
    bad += expect("... then shared 700 us", serial_frames(r, 1500, 700, 800), 16);
    bad += expect("costs 2.4 ms, shared 2.1 ms", serial_frames(fresh(rt, rules_table(600)), 2000, 2100, 2600), 0);
    bad += expect("costs 2.4 ms, shared 2.5 ms", serial_frames(fresh(rt, rules_table(600)), 2000, 2500, 2600), 16);
    return bad;
}

/* (2) The long-frame gate. Frames shared at shared_us until the reference
 * stretch (serial frames at serial_us) has run and the probe after it
 * opened its window, then two shared frames of 5 ms with the sign: returns
 * whether the frame after it ran serial, or -1 if the stretch never came. */
static int after_sign(dagrt *rt, uint32_t cost_us, uint64_t shared_us, uint64_t serial_us)
{
    graph_rt *r = fresh(rt, rules_table(cost_us));
    int f = 0, stretch = 0;
    for (; f < 2000 && stretch == 0; f++)
        stretch += frame(r, shared_us * US, serial_us * US, false);
    if (stretch == 0)
        return -1;
    while (frame(r, shared_us * US, serial_us * US, false))   /* the rest of the stretch */
        ;
    /* The window's second and third frames: 5 ms each, the caller took
     * the helper's list (a sign counts on the second frame in a row). */
    frame(r, 5000 * US, serial_us * US, true);
    frame(r, 5000 * US, serial_us * US, true);
    return frame(r, shared_us * US, serial_us * US, false);
}

static int slices(dagrt *rt)
{
    int bad = 0;
    int s = after_sign(rt, 100, 1000, 1200);
    printf("policy_rules: costs 400 us, serial measured 1.2 ms: after a sign in the window, %s\n",
           s < 0 ? "no stretch came" : s ? "serial" : "shared");
    if (s != 1) {
        fprintf(stderr, "policy_rules: costs 400 us: a sign in the probe window did not start a "
                "stretch (the long-frame rule taken from a stretched serial time)\n");
        bad++;
    }
    s = after_sign(rt, 500, 2100, 2200);   /* (shared over the costs: the reference runs) */
    printf("policy_rules: costs 2 ms: after a sign in the window, %s\n",
           s < 0 ? "no stretch came" : s ? "serial" : "shared");
    if (s != 0) {
        fprintf(stderr, "policy_rules: costs 2 ms: a sign in the probe window %s (the clock "
                "overrules there)\n", s < 0 ? "never came: no reference stretch" : "ended it");
        bad++;
    }
    return bad;
}

/* (3) Doubling stretches: the lengths of the first serial runs. */
static int doubling(dagrt *rt)
{
    graph_rt *r = fresh(rt, rules_table(25));
    int want[5] = {16, 32, 64, 128, 256}, got[5] = {0}, k = 0, bad = 0;
    bool before = false;
    for (int f = 0; f < 4000 && k < 5; f++) {
        bool serial = frame(r, 120 * US, 100 * US, false);
        if (serial)
            got[k]++;
        else if (before)
            k++;   /* a stretch ended */
        before = serial;
    }
    for (int i = 0; i < 5; i++) {
        printf("policy_rules: short frames, shared slower: stretch %d: %d frames (want %d)\n", i,
               got[i], want[i]);
        if (got[i] != want[i]) {
            fprintf(stderr, "policy_rules: stretch %d ran %d frames, want %d\n", i, got[i],
                    want[i]);
            bad++;
        }
    }
    return bad;
}

/* (4) Long frames: the clock overrules. After the reference stretch (the
 * shared frames at 2.1 ms are over the costs' 2 ms), n frames at
 * shared_us: their serial frames. */
static int long_after(dagrt *rt, uint64_t shared_us, int n)
{
    graph_rt *r = fresh(rt, rules_table(500));
    int f = 0, stretch = 0;
    for (; f < 2000 && stretch == 0; f++)
        stretch += frame(r, 2100 * US, 2200 * US, false);
    while (frame(r, 2100 * US, 2200 * US, false))
        ;
    for (int i = 0; i < 64; i++)   /* the probe window passes: 2.1 ms against 2.2 */
        frame(r, 2100 * US, 2200 * US, false);
    return stretch ? serial_frames(r, n, shared_us, 2200) : -1;
}

static int long_frames(dagrt *rt)
{
    int bad = expect("long frames, shared 2.25 ms, serial 2.2 ms", long_after(rt, 2250, 1000), 0);
    int s = long_after(rt, 2500, 1000);
    printf("policy_rules: long frames, shared 2.5 ms: %d serial frames (want some)\n", s);
    if (s <= 0) {
        fprintf(stderr, "policy_rules: long frames 1/8 slower shared than serial: %d serial "
                "frames, want some\n", s);
        bad++;
    }
    return bad;
}

/* (5) Isolated signs: frames of 250 us, a sign in every hundredth
 * (pair: and in the frame after it too); the serial frames in 2,000. */
static int signs_apart(dagrt *rt, bool pair)
{
    graph_rt *r = fresh(rt, rules_table(100));
    int k = 0;
    for (int f = 0; f < 2000; f++)
        k += frame(r, 250 * US, 400 * US, f % 100 == 50 || (pair && f % 100 == 51));
    return k;
}

static int one_sign(dagrt *rt)
{
    int bad = expect("short frames, one sign in 100 frames", signs_apart(rt, false), 0);
    int s = signs_apart(rt, true);
    printf("policy_rules: short frames, two signs in a row in 100 frames: %d serial frames (want "
           "some)\n", s);
    if (s <= 0) {
        fprintf(stderr, "policy_rules: two signs in a row started no stretch\n");
        bad++;
    }
    return bad;
}

/* (6) A stretch begun by two signs; crowd: the crowded switch changes
 * before its first frame and again after it. Returns whether the
 * stretch's second frame ran serial. */
static int after_change(dagrt *rt, bool crowd)
{
    graph_rt *r = fresh(rt, rules_table(100));
    for (int f = 0; f < 100; f++)
        frame(r, 250 * US, 400 * US, false);
    frame(r, 250 * US, 400 * US, true);
    frame(r, 250 * US, 400 * US, true);   /* the second sign in a row: a stretch */
    rt_policy_crowd(&r->policy, crowd);   /* no serial frame timed yet: it goes on */
    int first = frame(r, 250 * US, 400 * US, false);
    rt_policy_crowd(&r->policy, crowd);
    return first ? frame(r, 250 * US, 400 * US, false) : -1;
}

static int executor_change(dagrt *rt)
{
    int bad = expect("a stretch, the executor changed after its first frame", after_change(rt, true), 0);
    bad += expect("a stretch, the executor the same", after_change(rt, false), 1);
    return bad;
}

/* (7) Long frames (costs 2 ms), shared at 1.2 ms, a sign in frame 50,
 * then frames of after_us: the serial frames in 2,000. */
static int first_sign(dagrt *rt, uint64_t after_us)
{
    graph_rt *r = fresh(rt, rules_table(500));
    int k = 0;
    for (int f = 0; f < 2000; f++)
        k += frame(r, (f <= 50 ? 1200 : after_us) * US, 2200 * US, f == 50);
    return k;
}

static int first_signs(dagrt *rt)
{
    int bad = expect("long frames, the first sign, shared 1.2 ms", first_sign(rt, 1200), 0);
    int s = first_sign(rt, 2500);
    printf("policy_rules: long frames, the first sign, then shared 2.5 ms: %d serial frames "
           "(want some)\n", s);
    if (s <= 0) {
        fprintf(stderr, "policy_rules: shared frames over the costs after the first sign: no "
                "stretch\n");
        bad++;
    }
    return bad;
}

/* (8) Short frames on rt (no costs): shared at shared_us, serial at 32
 * us, one in 500 held for 1 ms (its time and its wait): the serial frames
 * in n. */
static int held_now_and_then(dagrt *rt, uint64_t shared_us, int n)
{
    graph_rt *r = fresh(rt, rules_table(0));
    int k = 0;
    for (int f = 1; f <= n; f++) {
        bool held = f % 500 == 0;
        k += frame_held(r, (held ? 1000 : shared_us) * US, 32 * US, false, held ? 1000 * US : 0);
    }
    return k;
}

static int crowded_clock(dagrt *rt)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 0;
    cfg.live_costs = 0;
    cfg.crowd_frames = DAGRT_CROWD_DYNAMIC;   /* its frames count as crowded */
    int err = 0;
    dagrt *crowded = dagrt_create_ex(&cfg, &err);
    if (!crowded) {
        fprintf(stderr, "policy_rules: dagrt_create_ex (crowded): %s\n", dagrt_strerror(err));
        return 1;
    }
    int bad = expect("crowded, short frames held now and then", held_now_and_then(crowded, 24, 20000),
                     16);
    int s = held_now_and_then(rt, 24, 20000);
    printf("policy_rules: not crowded, the same frames: %d serial frames (want over 16)\n", s);
    if (s <= 16) {
        fprintf(stderr, "policy_rules: not crowded, held frames started no stretch\n");
        bad++;
    }
    /* Each window of CROWD_WIN_NS shares 1,250 frames of 40 us; the
     * stretches between double up to 4,096 frames. */
    s = held_now_and_then(crowded, 40, 60000);
    printf("policy_rules: crowded, shared 40 us against 32 serial: %d serial frames in 60,000 "
           "(want at least 36,000)\n", s);
    if (s < 36000) {
        fprintf(stderr, "policy_rules: crowded, shared slower than serial: only %d serial frames "
                "in 60,000\n", s);
        bad++;
    }
    dagrt_destroy(crowded);
    return bad;
}

int policy_rules_scenario(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 0;
    cfg.live_costs = 0;   /* (live costs take the reference stretch out) */
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        fprintf(stderr, "policy_rules: dagrt_create_ex: %s\n", dagrt_strerror(err));
        return 1;
    }
    int bad = reference(rt) + slices(rt) + doubling(rt) + long_frames(rt) + one_sign(rt) +
              executor_change(rt) + first_signs(rt) + crowded_clock(rt);
    dagrt_destroy(rt);
    return bad;
}
