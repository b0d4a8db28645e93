/* policy_slow.h - a helper that runs, only slowly (policy_slow.c), listed
 * in exec_list.h, hosted by tests/scenario/. */
#ifndef POLICY_SLOW_H
#define POLICY_SLOW_H

/* The entry policy_slow: violations seen. */
int policy_slow_scenario(void);

#endif
