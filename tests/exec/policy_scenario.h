/* policy_scenario.h - the executor's measured choices (policy_scenario.c),
 * listed in exec_list.h, hosted by tests/scenario/. */
#ifndef POLICY_SCENARIO_H
#define POLICY_SCENARIO_H

#include <stdbool.h>

#include "dagrt.h"

/* Returns the number of failed expectations (details on stderr). */
int policy_scenario(void);
/* The same on the dynamic executor (two workers): G_run, a started
 * instance and a pipeline (policy_dyn.c). */
int policy_dyn_scenario(void);
/* A depth-2 pipeline in pipelined plan mode with two and three workers,
 * every worker held and then released (policy_pipe.c). */
int policy_pipe_scenario(void);
/* Plan mode with one worker on the benchmark's graph, every node once per
 * frame and in order (plan_frames.c). */
int plan_frames_scenario(void);

/* The benchmark graph's bodies are defined once (policy_scenario.c); a
 * scenario that checks them its own way sets this while it runs. */
struct bench_ctx;
extern void (*policy_body_hook)(struct bench_ctx *c, int idx);

/* What both scenarios do alike (policy_scenario.c). */

/* A runtime of `workers` workers, or NULL having said why (as `who`). */
dagrt *policy_rt(int workers, const char *who);

#if defined(__linux__)
/* Holds the calling thread in a system call (poll with no descriptors)
 * while frame_check_hold is set. */
void policy_hold_in_syscall(void);
/* Saves the process's CPUs and returns one other than `avoid`; -1 with
 * fewer than two. */
int policy_other_cpu(int avoid);
/* Pins the calling thread to `cpu`, or back to the saved CPUs (cpu < 0);
 * whether the system took it. */
bool policy_pin_self(int cpu);
/* A thread pinned to `cpu` spinning until policy_compete_stop(): 0, or -1
 * when it could not start. */
int policy_compete_start(int cpu);
void policy_compete_stop(void);
#endif

#endif
