/* test_sync.c - Criterion host for the fiber task and wait scenarios
 * (sync_scenarios.c). */
#include <criterion/criterion.h>

#include "fiber_scenarios.h"
#include "sync_scenarios.h"

Test(sync, events_random_orders_2_workers) { cr_assert_eq(ss_events_random(2, fs_scaled(400)), 0); }
Test(sync, events_random_orders_1_worker) { cr_assert_eq(ss_events_random(1, fs_scaled(100)), 0); }
Test(sync, events_random_orders_no_workers) { cr_assert_eq(ss_events_random(0, fs_scaled(100)), 0); }
Test(sync, events_set_by_external_thread) { cr_assert_eq(ss_external_setter(fs_scaled(200)), 0); }
Test(sync, migration_between_workers) { cr_assert_eq(ss_migration(fs_scaled(300)), 0); }
Test(sync, pool_exhaustion_backpressure_one_warning) { cr_assert_eq(ss_pool_exhaustion(), 0); }
Test(sync, mutex_excludes_across_suspensions) { cr_assert_eq(ss_mutex(2, fs_scaled(2000)), 0); }
Test(sync, semaphore_bounds_holders) { cr_assert_eq(ss_sem(2, fs_scaled(2000)), 0); }
Test(sync, group_wait_suspends_fiber) { cr_assert_eq(ss_group_wait_in_fiber(fs_scaled(300)), 0); }
Test(sync, misuse_error_codes) { cr_assert_eq(ss_misuse(), 0); }
Test(sync, zero_workers_main_task_waits) { cr_assert_eq(ss_zero_workers_main(), 0); }
Test(sync, large_stack_fiber) { cr_assert_eq(ss_large_stack(), 0); }
