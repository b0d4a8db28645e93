/* crowd_dyn.h - frames on the dynamic executor while the process is
 * crowded (crowd_dyn.c), listed in exec_list.h, hosted by tests/scenario/. */
#ifndef CROWD_DYN_H
#define CROWD_DYN_H

/* The entry crowd_dyn: violations seen. */
int crowd_dyn_scenario(void);

#endif
