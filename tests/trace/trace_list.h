/*
 * trace_list.h - the one list of the trace recorder's scenarios
 * (docs/testing.md, "Scenarios"): SCENARIO(trace, name, Criterion timeout,
 * flags), each the function NAME of trace_scenarios.c; SCN_TSAN: also a
 * plain-driver test in suite tsan. One entry a line:
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
