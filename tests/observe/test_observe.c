/* test_observe.c - Criterion host of the observer and trace scenarios (suite unit). */
#include <criterion/criterion.h>

#include "obs_scenarios.h"

static int run(const char *name)
{
    for (const obs_scenario *s = obs_scenarios; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s->fn();
    cr_assert_fail("no scenario %s", name);
    return -1;
}

#define SCENARIO(n) \
    Test(observe, n, .timeout = 120) { cr_assert_eq(run(#n), 0, "%s: violations (see stderr)", #n); }

SCENARIO(obs_trace_api)
SCENARIO(obs_trace_env)
SCENARIO(obs_balanced)
SCENARIO(obs_install)
SCENARIO(obs_stats)
