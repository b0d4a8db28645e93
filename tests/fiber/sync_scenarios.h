/*
 * sync_scenarios.h - fiber tasks and fiber-aware waits on a running runtime.
 * Listed in fiber_list.h (group sync), hosted by tests/scenario/. Each
 * returns the number of violations it saw.
 */
#ifndef SYNC_SCENARIOS_H
#define SYNC_SCENARIOS_H

int ss_events_random(int workers, long rounds);  /* waits vs sets in random orders */
int ss_migration(long rounds);                   /* resumes on another worker, TLS right */
int ss_pool_exhaustion(void);                    /* backpressure, one warning */
int ss_mutex(int workers, long rounds);          /* exclusion while suspended */
int ss_sem(int workers, long rounds);            /* at most K inside */
int ss_group_wait_in_fiber(long rounds);         /* dagrt_group_wait suspends */
int ss_misuse(void);                             /* error codes */
int ss_zero_workers_main(void);                  /* main-thread task waits, 0 workers */
int ss_large_stack(void);                        /* DAGRT_SPAWN_LARGE_STACK */
int ss_external_setter(long rounds);             /* events set by a non-runtime thread */

#endif
