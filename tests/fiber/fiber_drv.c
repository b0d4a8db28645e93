/* fiber_drv.c - plain driver for the fiber scenarios (testing.md): the
 * `tsan` suite and the AArch64 cross run, where Criterion cannot go.
 * usage: fiber_drv [scenario...]   (no argument: all of them) */
#include <stdio.h>
#include <string.h>

#include "fiber_scenarios.h"

static int run_regs(void) { return fs_regs_preserved(); }
static int run_fp(void) { return fs_fp_state_isolated(); }
static int run_pingpong(void) { return fs_pingpong(fs_scaled(1000000)); }
static int run_guard(void) { return fs_guard_overflow(); }
static int run_pool(void) { return fs_pool_bounded(); }

static const struct { const char *name; int (*fn)(void); } scen[] = {
    { "regs", run_regs },
    { "fp", run_fp },
    { "pingpong", run_pingpong },
    { "guard", run_guard },
    { "pool", run_pool },
};
#define NSCEN (sizeof scen / sizeof scen[0])

int main(int argc, char **argv)
{
    int failed = 0;
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
