/*
 * scenarios.h - runtime test scenarios. Each runs one scenario and returns
 * the number of violations it saw (0 = pass). Each is hosted twice (see
 * docs/testing.md): by a Criterion Test() in test_runtime.c and by the plain
 * driver tsan_driver.c (suite `tsan`), because Criterion cannot run under
 * ThreadSanitizer. Iteration counts scale with DAGC_TEST_SCALE.
 */
#ifndef SCENARIOS_H
#define SCENARIOS_H

typedef int (*scenario_fn)(void);

typedef struct scenario {
    const char *name;
    scenario_fn fn;
} scenario;

/* NULL-terminated. */
extern const scenario scenarios[];

double test_scale(void);
long scaled(long n, long min);

#define RT_SCENARIO(name, secs, fenced) int scn_##name(void);
#include "scenario_list.h"
#undef RT_SCENARIO

#endif
