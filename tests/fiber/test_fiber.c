/* test_fiber.c - Criterion host for the context switch, stack and pool
 * scenarios (fiber_scenarios.c). */
#include <criterion/criterion.h>

#include "fiber_scenarios.h"

Test(fiber, switch_preserves_callee_saved_and_fp_control)
{
    cr_assert_eq(fs_regs_preserved(), 0);
}

Test(fiber, fp_control_state_is_per_fiber)
{
    cr_assert_eq(fs_fp_state_isolated(), 0);
}

Test(fiber, pingpong_1M)
{
    cr_assert_eq(fs_pingpong(fs_scaled(1000000)), 0);
}

Test(fiber, overflow_faults_in_guard_page)
{
    cr_assert_eq(fs_guard_overflow(), 0);
}

Test(fiber, pool_is_bounded_reuses_and_warns_once)
{
    cr_assert_eq(fs_pool_bounded(), 0);
}
