/* exec_table.c - the scenarios of exec_list.h as scenario_table
 * (tests/scenario/scenario.h). */
#include <stddef.h>
#include <stdlib.h>

#include "crowd_dyn.h"
#include "crowd_held.h"
#include "fmem_scenario.h"
#include "inst_scenario.h"
#include "live_scenario.h"
#include "misuse_scenario.h"
#include "pcopy_scenario.h"
#include "pieces_scenario.h"
#include "pipe_ahead.h"
#include "plan_crowded.h"
#include "plan_tail.h"
#include "policy_scenario.h"
#include "policy_rules.h"
#include "policy_slow.h"
#include "scenario.h"
#include "shuffle_scenario.h"

static int run_misuse(void) { return misuse_scenario(); }   /* misuse_scenario.c, pipe_misuse.c */
static int run_inst(void) { return inst_scenario(200); }    /* inst_scenario.c */
static int run_policy(void) { return policy_scenario(); }   /* policy_scenario.c */
static int run_policy_dyn(void) { return policy_dyn_scenario(); }   /* policy_dyn.c */
static int run_policy_pipe(void) { return policy_pipe_scenario(); }   /* policy_pipe.c */
static int run_plan_frames(void) { return plan_frames_scenario(); }   /* plan_frames.c */
static int run_shuffle(void) { return shuffle_scenario(); }   /* shuffle_scenario.c */
static int run_shuffle_or(void) { return shuffle_or_scenario(); }   /* shuffle_scenario.c */
static int run_shuffle_guest(void) { return shuffle_engine_scenario(); }   /* shuffle_scenario.c */
static int run_live_costs(void) { return live_costs_scenario(); }   /* live_scenario.c */
static int run_plan_takeover(void) { return plan_takeover_scenario(); }   /* live_scenario.c */
static int run_plan_held(void) { return plan_held_scenario(); }   /* live_scenario.c */
static int run_plan_pieces(void) { return plan_pieces_scenario(); }   /* pieces_scenario.c */
static int run_dyn_pieces(void) { return dyn_pieces_scenario(); }   /* pieces_scenario.c */
static int run_pipe_ahead(void) { return pipe_ahead_scenario(); }   /* pipe_ahead.c */
static int run_policy_slow(void) { return policy_slow_scenario(); }   /* policy_slow.c */
static int run_policy_rules(void) { return policy_rules_scenario(); }   /* policy_rules.c */
static int run_crowd_dyn(void) { return crowd_dyn_scenario(); }   /* crowd_dyn.c */
static int run_crowd_held(void) { return crowd_held_scenario(); }   /* crowd_held.c */
static int run_plan_linger(void) { return plan_linger_scenario(); }   /* plan_tail.c */
static int run_plan_relist(void) { return plan_relist_scenario(); }   /* plan_tail.c */
static int run_plan_main_wait(void) { return plan_main_wait_scenario(); }   /* plan_tail.c */
#if defined(__linux__)
static int run_plan_stopped(void) { return plan_stopped_scenario(); }   /* live_scenario.c */
static int run_plan_crowded(void) { return plan_crowded_scenario(); }   /* plan_crowded.c */
static int run_dyn_leave(void) { return dyn_leave_scenario(); }   /* plan_crowded.c */
static int run_plan_partial(void) { return plan_partial_scenario(); }   /* plan_crowded.c */
#endif
static int run_fmem(void) { return fmem_scenario(60); }   /* fmem_scenario.c */
/* FCOPY_FRAMES sets the frames per depth (the slow suite's soak). */
static int run_fcopy(void)
{
    const char *e = getenv("FCOPY_FRAMES");
    return fcopy_scenario(e ? atoi(e) : 3000);
}

/* (v2.2) Per-frame copies laid out by dagc: PCOPY_FRAMES frames per depth
 * (the slow suite's soak), else 1000 times DAGC_TEST_SCALE. */
static int run_pcopy(void)
{
    const char *e = getenv("PCOPY_FRAMES"), *s = getenv("DAGC_TEST_SCALE");
    int scale = s && atoi(s) > 0 ? atoi(s) : 1;
    return pcopy_scenario(e ? atoi(e) : 1000 * scale);
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, run_##name, NULL},
#include "exec_list.h"
#undef SCENARIO
    /* Not in the list: the ASan build's death test runs it by name
     * (tests/exec/meson.build). */
    {"fmem_uaf", fmem_uaf, NULL},
    {NULL, NULL, NULL},
};
