/*
 * exec_list.h - the one list of the executor's scenarios on hand-written
 * graphs (docs/testing.md, "Scenarios"): SCENARIO(group, name, Criterion
 * timeout, flags), each a call of exec_table.c, hosted by Criterion (suite
 * e2e) and by the plain driver (suite tsan, and the Windows cross build).
 * One entry a line: tests/scenario/meson.build reads this file too.
 */
SCENARIO(graph_run, misuse, 120, SCN_TSAN)
SCENARIO(graph_instance, inst, 300, SCN_TSAN)
SCENARIO(graph_run, policy, 300, SCN_TSAN)
SCENARIO(graph_run, policy_dyn, 300, SCN_TSAN)
SCENARIO(graph_run, policy_pipe, 300, SCN_TSAN)
SCENARIO(graph_run, plan_frames, 120, SCN_TSAN)
SCENARIO(graph_run, live_costs, 120, SCN_TSAN)
SCENARIO(graph_run, plan_takeover, 120, SCN_TSAN)
SCENARIO(graph_run, plan_held, 120, SCN_TSAN)
SCENARIO(graph_run, pipe_ahead, 120, SCN_TSAN)
SCENARIO(graph_run, policy_slow, 120, SCN_TSAN)
SCENARIO(graph_run, policy_rules, 60, SCN_TSAN)
SCENARIO(graph_run, fmem, 300, SCN_TSAN)
SCENARIO(graph_run, fcopy, 300, SCN_TSAN)
SCENARIO(graph_run, pcopy, 300, SCN_TSAN)
SCENARIO(graph_run, shuffle, 120, SCN_TSAN)
SCENARIO(graph_run, shuffle_or, 120, SCN_TSAN)
SCENARIO(graph_run, shuffle_guest, 120, SCN_TSAN)
SCENARIO(graph_run, plan_pieces, 120, SCN_TSAN)
SCENARIO(graph_run, dyn_pieces, 120, SCN_TSAN)
SCENARIO(graph_run, crowd_dyn, 120, SCN_TSAN)
SCENARIO(graph_run, crowd_held, 120, SCN_TSAN)
SCENARIO(graph_run, plan_linger, 120, SCN_TSAN)
SCENARIO(graph_run, plan_relist, 120, SCN_TSAN)
SCENARIO(graph_run, plan_main_wait, 120, SCN_TSAN)
/* Linux: tgkill (a real-time signal to one thread). */
#if defined(__linux__)
SCENARIO(graph_run, plan_stopped, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(graph_run, plan_crowded, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(graph_run, dyn_leave, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(graph_run, plan_partial, 120, SCN_TSAN|SCN_POSIX)
#endif
