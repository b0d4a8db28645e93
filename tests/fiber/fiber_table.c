/* fiber_table.c - the fiber scenarios of fiber_list.h as scenario_table
 * (tests/scenario/scenario.h): each name's call, with its scaled counts. */
#include <stddef.h>

#include "fiber_scenarios.h"
#include "scenario.h"
#include "sync_scenarios.h"

static int run_regs(void) { return fs_regs_preserved(); }
static int run_fp(void) { return fs_fp_state_isolated(); }
static int run_pingpong(void) { return fs_pingpong(fs_scaled(1000000)); }
static int run_guard(void) { return fs_guard_overflow(); }
static int run_pool(void) { return fs_pool_bounded(); }
#if defined(_WIN32)
static int run_tib(void) { return fs_win64_tib(); }
static int run_unwind(void) { return fs_win64_unwind(); }
static int run_overflow(void) { return fs_win64_overflow_report(); }
/* The child processes of the guard and overflow scenarios (never listed:
 * each ends in a stack overflow). */
static int child_guard(const char *arg) { (void)arg; return fs_guard_child(); }
static int child_overflow(const char *arg) { return fs_overflow_child(arg[0] - '0'); }
#endif

static int run_events_2_workers(void) { return ss_events_random(2, fs_scaled(400)); }
static int run_events_1_worker(void) { return ss_events_random(1, fs_scaled(100)); }
static int run_events_no_workers(void) { return ss_events_random(0, fs_scaled(100)); }
static int run_external(void) { return ss_external_setter(fs_scaled(200)); }
static int run_migration(void) { return ss_migration(fs_scaled(300)); }
static int run_exhaustion(void) { return ss_pool_exhaustion(); }
static int run_mutex(void) { return ss_mutex(2, fs_scaled(2000)); }
static int run_sem(void) { return ss_sem(2, fs_scaled(2000)); }
static int run_groupwait(void) { return ss_group_wait_in_fiber(fs_scaled(300)); }
static int run_misuse(void) { return ss_misuse(); }
static int run_zero(void) { return ss_zero_workers_main(); }
static int run_large(void) { return ss_large_stack(); }

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, run_##name, NULL},
#include "fiber_list.h"
#undef SCENARIO
#if defined(_WIN32)
    {"guard_child", NULL, child_guard},
    {"overflow_child", NULL, child_overflow},
#endif
    {NULL, NULL, NULL},
};
