/* Criterion host of policy_scenario (policy_scenario.c). */
#include <criterion/criterion.h>

#include "policy_scenario.h"

Test(graph_run, policy_follows_what_frames_measure, .timeout = 300)
{
    cr_assert_eq(policy_scenario(), 0, "see stderr");
}
