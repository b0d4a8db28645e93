/* criterion_host.c - the Criterion host of a suite's scenarios (scenario.h):
 * compiled once per suite with -DSCENARIO_LIST="its list", one Test() per
 * entry, asserting zero violations. */
#include <criterion/criterion.h>

#include "scenario.h"

#ifndef SCENARIO_LIST
#  error "compile with -DSCENARIO_LIST=\"SUITE_list.h\""
#endif

static int run(const char *name)
{
    const scenario *s = scenario_find(scenario_table, name);
    cr_assert(s && s->fn, "%s is in the list but not in scenario_table", name);
    return s->fn();
}

#define SCENARIO(group, name, secs, flags)                                          \
    Test(group, name, .timeout = secs)                                              \
    {                                                                               \
        int v = run(#name);                                                         \
        cr_assert_eq(v, 0, "%s: %d violations (see stderr)", #name, v);             \
    }
#include SCENARIO_LIST
#undef SCENARIO
