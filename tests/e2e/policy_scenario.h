/* policy_scenario.h - the executor's measured choices (policy_scenario.c),
 * listed in e2e_list.h, hosted by tests/scenario/. */
#ifndef POLICY_SCENARIO_H
#define POLICY_SCENARIO_H

/* Returns the number of failed expectations (details on stderr). */
int policy_scenario(void);
/* The same on the dynamic executor (two workers): G_run, a started
 * instance and a pipeline (policy_dyn.c). */
int policy_dyn_scenario(void);

/* The benchmark graph's bodies are defined once (policy_scenario.c); a
 * scenario that checks them its own way sets this while it runs. */
struct bench_ctx;
extern void (*policy_body_hook)(struct bench_ctx *c, int idx);

#endif
