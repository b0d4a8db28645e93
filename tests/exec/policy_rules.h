/* policy_rules.h - the run policy's verdicts on made-up frame times
 * (policy_rules.c), listed in exec_list.h, hosted by tests/scenario/. */
#ifndef POLICY_RULES_H
#define POLICY_RULES_H

/* The entry policy_rules: wrong verdicts seen. */
int policy_rules_scenario(void);

#endif
