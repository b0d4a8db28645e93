/* policy_scenario.h - the executor's measured choices (policy_scenario.c),
 * listed in e2e_list.h, hosted by tests/scenario/. */
#ifndef POLICY_SCENARIO_H
#define POLICY_SCENARIO_H

/* Returns the number of failed expectations (details on stderr). */
int policy_scenario(void);

#endif
