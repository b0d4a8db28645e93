#ifndef MISUSE_SCENARIO_H
#define MISUSE_SCENARIO_H
/* Returns the number of failed expectations (printed to stderr). */
int misuse_scenario(void);
#endif
