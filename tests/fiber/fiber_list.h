/*
 * fiber_list.h - the one list of fiber scenarios (docs/testing.md,
 * "Scenarios"): SCENARIO(group, name, Criterion timeout, flags); group
 * fiber is the switch, stacks and pool (fiber_scenarios.c, Meson test
 * `fiber`), group sync the fiber tasks and waits on a running runtime
 * (sync_scenarios.c, Meson test `fiber_sync`). SCN_TSAN: also a plain-driver
 * test in suite tsan (the register probe and the guard-page overflow switch
 * without annotations on purpose, so they stay out). Where there is no
 * Criterion (the cross builds) every other entry is a plain-driver test in
 * suite unit. The function of each entry is in fiber_table.c. One entry a
 * line: tests/scenario/meson.build reads this file too.
 */
SCENARIO(fiber, regs, 60, 0)
SCENARIO(fiber, fp, 60, SCN_TSAN)
SCENARIO(fiber, pingpong, 60, SCN_TSAN)
SCENARIO(fiber, guard, 60, 0)
SCENARIO(fiber, pool, 60, SCN_TSAN)
#if defined(_WIN32)
SCENARIO(fiber, tib, 60, SCN_WIN)
SCENARIO(fiber, unwind, 60, SCN_WIN)
SCENARIO(fiber, overflow, 60, SCN_WIN)
#endif
SCENARIO(sync, events_2_workers, 120, SCN_TSAN)
SCENARIO(sync, events_1_worker, 120, 0)
SCENARIO(sync, events_no_workers, 120, SCN_TSAN)
SCENARIO(sync, external, 120, SCN_TSAN)
SCENARIO(sync, migration, 120, SCN_TSAN)
SCENARIO(sync, exhaustion, 120, SCN_TSAN)
SCENARIO(sync, mutex, 120, SCN_TSAN)
SCENARIO(sync, sem, 120, SCN_TSAN)
SCENARIO(sync, groupwait, 120, SCN_TSAN)
SCENARIO(sync, misuse, 120, SCN_TSAN)
SCENARIO(sync, zero, 120, SCN_TSAN)
SCENARIO(sync, large, 120, SCN_TSAN)
