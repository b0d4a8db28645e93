/* test_observe.c - Criterion host of the observer and trace scenarios (suite unit). */
#include <criterion/criterion.h>

#include "obs_scenarios.h"

static int run(const char *name)
{
    const scenario *s = scenario_find(obs_scenarios, name);
    cr_assert_not_null(s, "no scenario %s", name);
    return s->fn();
}

#define SCENARIO(n) \
    Test(observe, n, .timeout = 120) { cr_assert_eq(run(#n), 0, "%s: violations (see stderr)", #n); }

SCENARIO(obs_trace_api)
SCENARIO(obs_trace_env)
SCENARIO(obs_balanced)
SCENARIO(obs_install)
SCENARIO(obs_stats)
SCENARIO(obs_numbering)
SCENARIO(obs_trace_at_exit)
SCENARIO(obs_trace_env_errors)
