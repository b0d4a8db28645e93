/* fiber_drv.c - plain driver for the fiber scenarios (testing.md): the
 * `tsan` suite and the AArch64 cross run, where Criterion cannot go.
 * usage: fiber_drv [scenario...]   (no argument: all of them) */
#include <stdio.h>
#include <string.h>

#include "fiber_scenarios.h"
#include "sync_scenarios.h"

static int run_regs(void) { return fs_regs_preserved(); }
static int run_fp(void) { return fs_fp_state_isolated(); }
static int run_pingpong(void) { return fs_pingpong(fs_scaled(1000000)); }
static int run_guard(void) { return fs_guard_overflow(); }
static int run_pool(void) { return fs_pool_bounded(); }

static int run_events(void) { return ss_events_random(2, fs_scaled(400)) + ss_events_random(0, fs_scaled(50)); }
static int run_external(void) { return ss_external_setter(fs_scaled(200)); }
static int run_migration(void) { return ss_migration(fs_scaled(300)); }
static int run_exhaustion(void) { return ss_pool_exhaustion(); }
static int run_mutex(void) { return ss_mutex(2, fs_scaled(2000)); }
static int run_sem(void) { return ss_sem(2, fs_scaled(2000)); }
static int run_groupwait(void) { return ss_group_wait_in_fiber(fs_scaled(300)); }
static int run_misuse(void) { return ss_misuse(); }
static int run_zero(void) { return ss_zero_workers_main(); }
static int run_large(void) { return ss_large_stack(); }

static const struct { const char *name; int (*fn)(void); } scen[] = {
#if defined(_WIN32)
    { "tib", fs_win64_tib },
    { "unwind", fs_win64_unwind },
    { "overflow", fs_win64_overflow_report },
#endif
    { "regs", run_regs },
    { "fp", run_fp },
    { "pingpong", run_pingpong },
    { "guard", run_guard },
    { "pool", run_pool },
    { "events", run_events },
    { "external", run_external },
    { "migration", run_migration },
    { "exhaustion", run_exhaustion },
    { "mutex", run_mutex },
    { "sem", run_sem },
    { "groupwait", run_groupwait },
    { "misuse", run_misuse },
    { "zero", run_zero },
    { "large", run_large },
};
#define NSCEN (sizeof scen / sizeof scen[0])

int main(int argc, char **argv)
{
    int failed = 0;
#if defined(_WIN32)
    /* fs_guard_overflow's child: never listed, it ends in a stack overflow. */
    if (argc == 2 && strcmp(argv[1], "guard_child") == 0)
        return fs_guard_child();
    if (argc == 3 && strcmp(argv[1], "overflow_child") == 0)
        return fs_overflow_child(argv[2][0] - '0');
#endif
    for (size_t i = 0; i < NSCEN; i++) {
        int want = argc < 2;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], scen[i].name) == 0) want = 1;
        if (!want) continue;
        int v = scen[i].fn();
        printf("%-10s %s (%d violations)\n", scen[i].name, v ? "FAIL" : "ok", v);
        failed += v != 0;
    }
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < NSCEN && strcmp(argv[a], scen[i].name) != 0) i++;
        if (i == NSCEN) { fprintf(stderr, "fiber_drv: unknown scenario %s\n", argv[a]); return 2; }
    }
    return failed ? 1 : 0;
}
