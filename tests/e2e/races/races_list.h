/*
 * races_list.h - the end-to-end scenarios of the race check (race_e2e.h;
 * docs/testing.md, "Scenarios"): the race-free graphs never run
 * conflicting accesses at once, and the negative control (a race hidden
 * from dagc) is caught at run time. Hosted by Criterion (suite e2e) and
 * by the plain driver (suite tsan); the functions are races_table.c's.
 * One entry a line: tests/scenario/meson.build reads this file too.
 */
SCENARIO(races, race_free_graphs_never_overlap_conflicting_accesses, 300, SCN_TSAN)
SCENARIO(races, negative_control_is_caught, 300, SCN_TSAN)
