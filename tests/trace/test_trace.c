/* test_trace.c - Criterion host of the recorder's scenarios (suite unit). */
#include <criterion/criterion.h>

#include "trace_scenarios.h"

static int run(const char *name)
{
    const scenario *s = scenario_find(trace_scenarios, name);
    cr_assert_not_null(s, "no scenario %s", name);
    return s->fn();
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
SCENARIO(trace_file_kinds)
SCENARIO(trace_two_writers)
SCENARIO(trace_frame_marks)
SCENARIO(trace_speedscope)
