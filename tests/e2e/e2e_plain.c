/* Plain host of the end-to-end scenario, for the ThreadSanitizer run
 * (Criterion cannot run under TSan; see docs/testing.md). Built with
 * E2E_SERIALISE (tests/e2e/overlap.dag only), it is the overlap check's
 * negative control: it passes when that check, and nothing else, failed.
 * Built with E2E_UNLINKED (pipelines of unlinked instances), the negative
 * control of the checks across frames: it passes when they failed. */
#include <stdio.h>
#include <stdlib.h>

#include "e2e_check.h"

int main(void)
{
    /* DAGC_E2E_FRAMES: an exact frame count (the soak sets it). */
    const char *fr = getenv("DAGC_E2E_FRAMES");
    int frames = fr ? atoi(fr) : e2e_scaled(1000);
    int v = e2e_run_all(e2e_all, e2e_nall, frames > 0 ? frames : 1);
#if defined E2E_UNLINKED
    int x = e2e_cross_failures();
    printf("unlinked frames: %d violations, %d tasks began before the same task of the frame "
           "before had completed (want > 0)\n", v, x);
    return !(x > 0);
#elif defined E2E_SERIALISE
    int o = e2e_overlap_failures();
    printf("serialised frames: %d violations, %d of them of the overlap check (want all, > 0)\n", v, o);
    return !(o > 0 && v == o);
#else
    printf("%d violations\n", v);
    return v != 0;
#endif
}
