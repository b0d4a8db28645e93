/* test_trace.c - Criterion host of the recorder's scenarios (suite unit). */
#include <criterion/criterion.h>

#include "trace_scenarios.h"

static int run(const char *name)
{
    for (const trace_scenario *s = trace_scenarios; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s->fn();
    cr_assert_fail("no scenario %s", name);
    return -1;
}

#define SCENARIO(n) \
    Test(trace, n, .timeout = 120) { cr_assert_eq(run(#n), 0, "%s: violations (see stderr)", #n); }

SCENARIO(trace_nesting)
SCENARIO(trace_fiber_slices)
SCENARIO(trace_restart)
SCENARIO(trace_cap)
SCENARIO(trace_frames)
SCENARIO(trace_errors)
SCENARIO(trace_threads)
