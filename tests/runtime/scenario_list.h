/*
 * scenario_list.h - the one list of runtime scenarios (docs/testing.md):
 * RT_SCENARIO(name, timeout in seconds under Criterion, fenced). Each is
 * int scn_NAME(void), hosted by Criterion (test_runtime.c, suite unit) and by
 * the plain driver (tsan_driver.c, suite tsan); fenced 1 runs it a second
 * time in suite tsan with DAGRT_NO_MEMBARRIER=1 (the idle protocol's fenced
 * form). tests/runtime/meson.build reads this file too: one entry a line.
 */
RT_SCENARIO(deque_lifo_fifo, 30, 0)
RT_SCENARIO(deque_growth_wrap, 30, 0)
RT_SCENARIO(deque_thieves, 120, 0)
RT_SCENARIO(deque_split, 120, 0)
RT_SCENARIO(inbox_producers, 120, 0)
RT_SCENARIO(inbox_many_consumers, 120, 0)
RT_SCENARIO(spawn_tree, 120, 1)
RT_SCENARIO(fib_no_workers, 60, 0)
RT_SCENARIO(fib_1_worker, 60, 0)
RT_SCENARIO(fib_2_workers, 60, 1)
RT_SCENARIO(handles_0_workers, 60, 0)
RT_SCENARIO(handles_2_workers, 120, 0)
RT_SCENARIO(pfor_cover, 120, 0)
RT_SCENARIO(pfor_nested, 120, 0)
RT_SCENARIO(pfor_repeat, 120, 0)
RT_SCENARIO(pfor_withdraw, 120, 0)
RT_SCENARIO(pfor_offer, 120, 0)
RT_SCENARIO(park_wake, 120, 1)
RT_SCENARIO(park_wake_external, 120, 1)
RT_SCENARIO(group_wait_parks, 120, 1)
RT_SCENARIO(main_only, 60, 0)
RT_SCENARIO(hot_overtakes, 30, 0)
RT_SCENARIO(hot_worker, 60, 0)
RT_SCENARIO(destroy_in_flight, 60, 0)
RT_SCENARIO(external_threads, 60, 0)
RT_SCENARIO(spin_policy, 60, 0)
RT_SCENARIO(group_mixed, 60, 0)
RT_SCENARIO(group_armed_spawn, 60, 0)
RT_SCENARIO(frames_tree, 120, 1)
RT_SCENARIO(frames_deep, 60, 0)
RT_SCENARIO(frames_mixed, 120, 0)
RT_SCENARIO(frames_null_worker, 30, 0)
