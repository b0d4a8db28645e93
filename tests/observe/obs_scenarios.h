/* obs_scenarios.h - observer and trace scenarios, hosted twice (docs/testing.md). */
#ifndef OBS_SCENARIOS_H
#define OBS_SCENARIOS_H

#include "scenario.h"

extern const scenario obs_scenarios[];

#endif
