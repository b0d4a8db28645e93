/*
 * observe_list.h - the one list of the observer and trace scenarios
 * (docs/testing.md, "Scenarios"): SCENARIO(observe, name, Criterion
 * timeout, flags), each the function NAME of obs_scenarios.c; SCN_TSAN:
 * also a plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(observe, obs_trace_api, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_env, 120, SCN_TSAN)
SCENARIO(observe, obs_balanced, 120, SCN_TSAN)
SCENARIO(observe, obs_install, 120, SCN_TSAN)
SCENARIO(observe, obs_stats, 120, SCN_TSAN)
SCENARIO(observe, obs_numbering, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_at_exit, 120, SCN_TSAN)
SCENARIO(observe, obs_trace_env_errors, 120, SCN_TSAN)
