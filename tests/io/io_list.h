/*
 * io_list.h - the one list of the scenarios of waiting on the world
 * (docs/testing.md, "Scenarios"): SCENARIO(io, name, Criterion timeout,
 * flags), each the function NAME of io_scenarios.c; SCN_TSAN: also a
 * plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(io, io_cancel_nesting, 60, SCN_TSAN)
SCENARIO(io, io_cancel_cross_thread, 60, SCN_TSAN)
SCENARIO(io, io_clock, 60, SCN_TSAN)
SCENARIO(io, io_sleep_min, 60, SCN_TSAN)
SCENARIO(io, io_sleep_earlier, 60, SCN_TSAN)
SCENARIO(io, io_timed_wait, 60, SCN_TSAN)
SCENARIO(io, io_cancel_wakes, 60, SCN_TSAN)
SCENARIO(io, io_cond_hammer, 60, SCN_TSAN)
SCENARIO(io, io_cond_signals, 60, SCN_TSAN)
SCENARIO(io, io_timed_handoff, 60, SCN_TSAN)
SCENARIO(io, io_destroy_parked, 60, SCN_TSAN)
