/* obs_scenarios.h - observer and trace scenarios, hosted twice (docs/testing.md). */
#ifndef OBS_SCENARIOS_H
#define OBS_SCENARIOS_H

typedef struct obs_scenario {
    const char *name;
    int (*fn)(void);   /* returns the number of violations */
} obs_scenario;

extern const obs_scenario obs_scenarios[];

#endif
