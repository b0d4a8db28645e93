/* Criterion host of the end-to-end race scenarios (race_e2e.h). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "race_e2e.h"

static int frames(int n)
{
    const char *e = getenv("DAGC_TEST_SCALE");
    double k = e && atof(e) > 0 ? atof(e) : 1.0;
    return (int)(n * k) > 0 ? (int)(n * k) : 1;
}

Test(races, race_free_graphs_never_overlap_conflicting_accesses, .timeout = 300)
{
    int v = race_e2e_sound(frames(2000));
    cr_assert_eq(v, 0, "%d violations (details on stderr)", v);
}

/* The checker itself: a race hidden from dagc must be caught at run time. */
Test(races, negative_control_is_caught, .timeout = 300)
{
    cr_assert_eq(race_e2e_control(5000), 0, "the checker missed a real race (see stderr)");
}
