/* Criterion host of inst_scenario (inst_scenario.c). */
#include <criterion/criterion.h>

#include "inst_scenario.h"

Test(graph_instance, instances_and_started_runs, .timeout = 300)
{
    cr_assert_eq(inst_scenario(200), 0, "see stderr");
}
