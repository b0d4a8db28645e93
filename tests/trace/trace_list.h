/*
 * trace_list.h - the one list of the trace wing's scenarios
 * (docs/testing.md, "Scenarios"): SCENARIO(group, name, Criterion timeout,
 * flags); group trace is the recorder on its own (trace_scenarios.c,
 * Meson test `trace`), group observe the observer hooks and the recorder
 * end to end on obs.dag (obs_scenarios.c, Meson test `observe`). SCN_TSAN:
 * also a plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(trace, trace_nesting, 120, SCN_TSAN)
SCENARIO(trace, trace_fiber_slices, 120, SCN_TSAN)
SCENARIO(trace, trace_restart, 120, SCN_TSAN)
SCENARIO(trace, trace_cap, 120, SCN_TSAN)
SCENARIO(trace, trace_frames, 120, SCN_TSAN)
SCENARIO(trace, trace_errors, 120, SCN_TSAN)
SCENARIO(trace, trace_threads, 120, SCN_TSAN)
SCENARIO(trace, trace_file_kinds, 120, SCN_TSAN)
SCENARIO(trace, trace_two_writers, 120, SCN_TSAN)
SCENARIO(trace, trace_frame_marks, 120, SCN_TSAN)
SCENARIO(trace, trace_speedscope, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_api, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_env, 120, SCN_TSAN)
SCENARIO(observe, obs_balanced, 120, SCN_TSAN)
SCENARIO(observe, obs_install, 120, SCN_TSAN)
SCENARIO(observe, obs_stats, 120, SCN_TSAN)
SCENARIO(observe, obs_numbering, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_at_exit, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_env_errors, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_flows, 120, SCN_TSAN)
SCENARIO(observe, obs_frame_events, 120, SCN_TSAN)
SCENARIO(observe, obs_spawned_trace, 120, SCN_TSAN)
SCENARIO(observe, obs_spawned_hooks, 120, SCN_TSAN)
