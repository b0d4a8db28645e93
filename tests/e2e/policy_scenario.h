/* policy_scenario.h - the executor's measured choices (policy_scenario.c),
 * hosted by Criterion (test_policy.c) and a plain driver (policy_plain.c). */
#ifndef POLICY_SCENARIO_H
#define POLICY_SCENARIO_H

/* Returns the number of failed expectations (details on stderr). */
int policy_scenario(void);

#endif
