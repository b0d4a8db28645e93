/* crowd_held.h - the run policy's verdicts on the dynamic executor while
 * the process is crowded (crowd_held.c), listed in exec_list.h, hosted by
 * tests/scenario/. */
#ifndef CROWD_HELD_H
#define CROWD_HELD_H

/* The entry crowd_held: violations seen. */
int crowd_held_scenario(void);

#endif
