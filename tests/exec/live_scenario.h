/* live_scenario.h - live costs and a helper that loses its CPU
 * (live_scenario.c), listed in exec_list.h, hosted by tests/scenario/. */
#ifndef LIVE_SCENARIO_H
#define LIVE_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "dagrt.h"

/* Re-plans counted by live_frames: up to the cost change, in all, in the
 * last LIVE_QUIET frames; first: frames from the change to the first
 * re-plan seen (-1: none). */
typedef struct live_result {
    uint64_t before, all, quiet;
    int first;
} live_result;

/* `before` frames, then the cost change, then `after` frames of the live
 * graph on rt (G_run, or a depth-2 pipeline), every frame checked.
 * Returns the violations. */
int live_frames(dagrt *rt, bool pipe, int before, int after, live_result *out);

/* The entries live_costs and plan_takeover: violations seen. */
int live_costs_scenario(void);
int plan_takeover_scenario(void);
/* The worker holding the frame's last task long: the policy's "held". */
int plan_held_scenario(void);
#if defined(__linux__)
/* The worker stopped between nodes (a signal whose handler sleeps). */
int plan_stopped_scenario(void);
#endif

#endif
