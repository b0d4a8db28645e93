/*
 * e2e_list.h - the checker's one scenario (e2e_check.h; docs/testing.md,
 * "Scenarios"): every graph of the one .dag file an executable is built
 * for, under 0, 1 and 3 workers, in every mode. Each graph's two
 * executables host it (tests/e2e/meson.build): Criterion (suite e2e) and
 * the plain driver (suite tsan, and the Windows cross build). The
 * function is e2e_table.c's. One entry a line: tests/scenario/meson.build
 * reads this file too.
 */
SCENARIO(e2e, every_graph_every_frame_checked, 300, SCN_TSAN)
