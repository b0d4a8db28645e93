/*
 * scenarios.h - runtime test scenarios. Each runs one scenario and returns
 * the number of violations it saw (0 = pass). Each is hosted twice (see
 * docs/testing.md): by a Criterion Test() in test_runtime.c and by the plain
 * driver tsan_driver.c (suite `tsan`), because Criterion cannot run under
 * ThreadSanitizer. Iteration counts scale with DAGC_TEST_SCALE.
 */
#ifndef SCENARIOS_H
#define SCENARIOS_H

typedef int (*scenario_fn)(void);

typedef struct scenario {
    const char *name;
    scenario_fn fn;
} scenario;

/* NULL-terminated. */
extern const scenario scenarios[];

double test_scale(void);
long scaled(long n, long min);

int scn_deque_lifo_fifo(void);
int scn_deque_growth_wrap(void);
int scn_deque_thieves(void);
int scn_deque_split(void);
int scn_inbox_producers(void);
int scn_inbox_many_consumers(void);
int scn_spawn_tree(void);
int scn_fib_no_workers(void);
int scn_fib_1_worker(void);
int scn_fib_2_workers(void);
int scn_pfor_cover(void);
int scn_pfor_nested(void);
int scn_pfor_repeat(void);
int scn_pfor_withdraw(void);
int scn_pfor_offer(void);
int scn_park_wake(void);
int scn_park_wake_external(void);
int scn_group_wait_parks(void);
int scn_main_only(void);
int scn_hot_overtakes(void);
int scn_hot_worker(void);
int scn_destroy_in_flight(void);
int scn_external_threads(void);
int scn_spin_policy(void);
int scn_group_mixed(void);
int scn_group_armed_spawn(void);
int scn_frames_tree(void);
int scn_frames_deep(void);
int scn_frames_mixed(void);
int scn_frames_null_worker(void);

#endif
