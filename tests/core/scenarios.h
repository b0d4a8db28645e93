/*
 * scenarios.h - the core's test scenarios (runtime/core/, and the
 * parallel-for's, runtime/pfor/). Each runs one scenario and returns
 * the number of violations it saw (0 = pass); core_list.h lists them and
 * tests/scenario/ hosts them (Criterion and the plain driver, see
 * docs/testing.md, "Scenarios"). Iteration counts scale with DAGC_TEST_SCALE.
 */
#ifndef SCENARIOS_H
#define SCENARIOS_H

#include "scenario.h"

double test_scale(void);
long scaled(long n, long min);

#define SCENARIO(group, name, secs, flags) int scn_##name(void);
#include "core_list.h"
#undef SCENARIO

#endif
