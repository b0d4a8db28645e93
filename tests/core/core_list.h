/*
 * core_list.h - the one list of the core's scenarios, and the
 * parallel-for's (runtime/core/, runtime/pfor/; docs/testing.md,
 * "Scenarios"): SCENARIO(runtime, name, Criterion timeout, flags), each
 * int scn_NAME(void) of scenarios.c or scn_fork.c. Every entry is
 * SCN_TSAN (also a plain-driver test in suite tsan); SCN_FENCED runs it a
 * second time there with DAGRT_NO_MEMBARRIER=1 (the idle protocol's fenced
 * form, runtime/core/idle.c). One entry a line: tests/scenario/meson.build reads
 * this file too.
 */
SCENARIO(runtime, deque_lifo_fifo, 30, SCN_TSAN)
SCENARIO(runtime, deque_growth_wrap, 30, SCN_TSAN)
SCENARIO(runtime, deque_thieves, 120, SCN_TSAN)
SCENARIO(runtime, deque_split, 120, SCN_TSAN)
SCENARIO(runtime, inbox_producers, 120, SCN_TSAN)
SCENARIO(runtime, inbox_many_consumers, 120, SCN_TSAN)
SCENARIO(runtime, spawn_tree, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, spawn_inline, 120, SCN_TSAN)
SCENARIO(runtime, fib_no_workers, 60, SCN_TSAN)
SCENARIO(runtime, fib_1_worker, 60, SCN_TSAN)
SCENARIO(runtime, fib_2_workers, 60, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, handles_0_workers, 60, SCN_TSAN)
SCENARIO(runtime, handles_2_workers, 120, SCN_TSAN)
SCENARIO(runtime, pfor_cover, 120, SCN_TSAN)
SCENARIO(runtime, pfor_nested, 120, SCN_TSAN)
SCENARIO(runtime, pfor_repeat, 120, SCN_TSAN)
SCENARIO(runtime, pfor_withdraw, 120, SCN_TSAN)
SCENARIO(runtime, pfor_offer, 120, SCN_TSAN)
SCENARIO(runtime, park_wake, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, park_wake_external, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, group_wait_parks, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, main_only, 60, SCN_TSAN)
SCENARIO(runtime, hot_overtakes, 30, SCN_TSAN)
SCENARIO(runtime, hot_worker, 60, SCN_TSAN)
SCENARIO(runtime, destroy_in_flight, 60, SCN_TSAN)
SCENARIO(runtime, external_threads, 60, SCN_TSAN)
SCENARIO(runtime, spin_policy, 60, SCN_TSAN)
SCENARIO(runtime, group_mixed, 60, SCN_TSAN)
SCENARIO(runtime, group_armed_spawn, 60, SCN_TSAN)
SCENARIO(runtime, fork_tree, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, fork_deep, 60, SCN_TSAN)
SCENARIO(runtime, fork_mixed, 120, SCN_TSAN)
SCENARIO(runtime, fork_null_worker, 30, SCN_TSAN)
SCENARIO(runtime, guest_attach_helps, 60, SCN_TSAN)
SCENARIO(runtime, guest_wait_helps, 60, SCN_TSAN)
SCENARIO(runtime, guest_churn, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, guest_leave_queued, 60, SCN_TSAN)
SCENARIO(runtime, guest_misuse, 30, SCN_TSAN)
SCENARIO(runtime, guest_names, 30, SCN_TSAN)
SCENARIO(runtime, publish_foreign_spin, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, destroy_outside_late, 60, SCN_TSAN)
SCENARIO(runtime, destroy_nested_wait, 60, SCN_TSAN)
SCENARIO(runtime, destroy_fiber_pool_full, 60, SCN_TSAN)
SCENARIO(runtime, destroy_out_of_order, 60, SCN_TSAN)
SCENARIO(runtime, batch_spawn, 120, SCN_TSAN | SCN_FENCED)
SCENARIO(runtime, pfor_async, 120, SCN_TSAN)
SCENARIO(runtime, batch_oom, 60, SCN_TSAN)
SCENARIO(runtime, topology_any, 30, SCN_TSAN)
SCENARIO(runtime, serial_switch, 30, SCN_TSAN)
SCENARIO(runtime, shuffle_switch, 30, SCN_TSAN)
SCENARIO(runtime, shuffle_queues, 60, SCN_TSAN)
SCENARIO(runtime, wake_latency, 60, SCN_TSAN)
SCENARIO(runtime, pfor_bites, 60, SCN_TSAN)
/* scn_life.c's POSIX ones (a pipe; CPU masks and cgroups; the guest exit
 * hook, whose Windows half, an FLS callback, is not yet run under Wine),
 * and scn_engine.c's (fake sysfs trees, pthreads as an engine's threads,
 * masks read with sched_getaffinity). */
#if !defined(_WIN32)
SCENARIO(runtime, destroy_outside_call, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, guest_exit_attached, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, workers_auto, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, topology_real, 30, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, topology_fake, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, engine_threads, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, placement_pin, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, placement_class, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, placement_env, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(runtime, pause_resume, 60, SCN_TSAN|SCN_POSIX)
#endif
