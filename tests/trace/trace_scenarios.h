/* trace_scenarios.h - the recorder's scenarios, hosted twice (docs/testing.md). */
#ifndef TRACE_SCENARIOS_H
#define TRACE_SCENARIOS_H

typedef struct trace_scenario {
    const char *name;
    int (*fn)(void);   /* returns the number of violations */
} trace_scenario;

extern const trace_scenario trace_scenarios[];

#endif
