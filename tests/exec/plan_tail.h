/* plan_tail.h - plan mode on a frame with an `on main` tail (plan_tail.c). */
#ifndef PLAN_TAIL_H
#define PLAN_TAIL_H

/* G_run frames: the worker's helper stays through the caller's tail
 * (no sleep between frames). 0 when it holds. */
int plan_linger_scenario(void);
/* A state run with G_run, then in a pipeline: the pipeline's lists. 0
 * when it holds. */
int plan_relist_scenario(void);
/* G_run frames whose `on main` first node waits (helping): the main
 * thread leaves the plan helper in the worker's inbox. 0 when it holds. */
int plan_main_wait_scenario(void);

#endif
