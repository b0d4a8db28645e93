/* plan_crowded.h - plan mode's waits on a crowded CPU (plan_crowded.c),
 * listed in exec_list.h (Linux), hosted by tests/scenario/. */
#ifndef PLAN_CROWDED_H
#define PLAN_CROWDED_H

/* The entry plan_crowded: violations seen. */
int plan_crowded_scenario(void);
/* The entry dyn_leave: the dynamic executor's drainers off the caller's
 * CPU. Violations seen. */
int dyn_leave_scenario(void);
/* The entry plan_partial: plan mode keeps sharing with a worker that has
 * part of a CPU. Violations seen. */
int plan_partial_scenario(void);

#endif
