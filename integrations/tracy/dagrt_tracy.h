/*
 * dagrt_tracy.h - libdagrt in the Tracy profiler (wolfpld/tracy), through
 * the observer hooks (docs/runtime.md, "In Tracy"). Compile dagrt_tracy.c
 * with the Tracy client your engine builds (TracyClient.cpp with
 * TRACY_ENABLE and TRACY_FIBERS; public/ on the include path). It shows:
 *   - frame marks per graph run, named after the graph: continuous for
 *     runs one at a time (dagrt_graph_run), discontinuous for frames in
 *     flight (a set per graph state, "GRAPH #k");
 *   - a zone per node (per slice for a fiber task, per piece for a
 *     parallel task), its name the node's, its source file the graph's,
 *     its text the frame and the kind (on main, hot, fiber, parallel chunk,
 *     task);
 *   - a fiber track per fiber task: enter/leave around every resume and
 *     suspend (the waits of events, timers and I/O calls included);
 *   - plots "dagrt ready tasks" and "dagrt parked workers", sampled as
 *     workers park and wake;
 *   - a message each time the run policy changes how a graph's state runs.
 * With Tracy compiled out (no TRACY_ENABLE) nothing is installed, and the
 * runtime pays its one branch per node.
 */
#ifndef DAGRT_TRACY_H
#define DAGRT_TRACY_H

#include "dagrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The observer that drives Tracy, for dagrt_config.observer (so that
 * every thread is named in Tracy as it starts; observer_user NULL). NULL
 * when Tracy is compiled out. */
const dagrt_observer *dagrt_tracy_observer(void);

/* Or installs it on a running runtime (dagrt_set_observer: main thread,
 * between frames; threads that started before are named "dagrt-..." only
 * from their next event). 0, or dagrt_set_observer's error; 0 without
 * installing anything when Tracy is compiled out. */
int dagrt_tracy_install(dagrt *rt);

#ifdef __cplusplus
}
#endif

#endif
