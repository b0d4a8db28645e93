/* e2e_table.c - the checker's scenario of e2e_list.h as scenario_table
 * (tests/scenario/scenario.h), linked with the generated code of one .dag
 * file (its e2e_all). Built with E2E_SERIALISE (tests/e2e/overlap.dag
 * only), it is the overlap check's negative control: it passes when that
 * check, and nothing else, failed. Built with E2E_UNLINKED (pipelines of
 * unlinked instances), the negative control of the checks across frames:
 * it passes when they failed. */
#include <stdio.h>
#include <stdlib.h>

#include "e2e_check.h"
#include "scenario.h"

static int every_graph_every_frame_checked(void)
{
    /* DAGC_E2E_FRAMES: an exact frame count (the soak sets it). */
    const char *fr = getenv("DAGC_E2E_FRAMES");
    int frames = fr && atoi(fr) > 0 ? atoi(fr) : e2e_scaled(1000);
    int v = e2e_run_all(e2e_all, e2e_nall, frames);
#if defined E2E_UNLINKED
    int x = e2e_cross_failures();
    printf("unlinked frames: %d violations, %d tasks began before the same task of the frame "
           "before had completed (want > 0)\n", v, x);
    return x > 0 ? 0 : 1;
#elif defined E2E_SERIALISE
    int o = e2e_overlap_failures();
    printf("serialised frames: %d violations, %d of them of the overlap check (want all, > 0)\n", v, o);
    return o > 0 && v == o ? 0 : 1;
#else
    return v;
#endif
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "e2e_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
