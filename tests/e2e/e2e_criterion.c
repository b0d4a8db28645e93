/* Criterion host of the end-to-end scenario (see e2e_check.h). */
#include <criterion/criterion.h>

#include "e2e_check.h"

Test(e2e, every_graph_every_frame_checked, .timeout = 300)
{
    int v = e2e_run_all(e2e_all, e2e_nall, e2e_scaled(1000));
    cr_assert_eq(v, 0, "%d violations (details on stderr)", v);
}
