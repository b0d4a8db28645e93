/* trace_scenarios.h - the recorder's scenarios, hosted twice (docs/testing.md). */
#ifndef TRACE_SCENARIOS_H
#define TRACE_SCENARIOS_H

#include "scenario.h"

extern const scenario trace_scenarios[];

#endif
