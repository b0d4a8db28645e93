/*
 * cxx_list.h - the one list of the C++ headers' scenarios (dagrt.hpp;
 * runtime/include/, docs/testing.md "Scenarios"): SCENARIO(group, name,
 * Criterion timeout, flags), each int cxx_NAME(void) of cxx_scenarios.cpp.
 * SCN_TSAN: also a plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(cxx, hpp_spawn_inline, 120, SCN_TSAN)
SCENARIO(cxx, hpp_spawn_kinds, 120, SCN_TSAN)
SCENARIO(cxx, hpp_spawn_refused, 60, SCN_TSAN)
SCENARIO(cxx, hpp_parallel_for, 120, SCN_TSAN)
SCENARIO(cxx, hpp_errors, 60, SCN_TSAN)
SCENARIO(cxx, hpp_runtime_owner, 60, SCN_TSAN)
SCENARIO(cxx, hpp_sync, 120, SCN_TSAN)
SCENARIO(cxx, hpp_cancel_deadline, 60, SCN_TSAN)
SCENARIO(cxx, dagc_perframe, 120, SCN_TSAN)
