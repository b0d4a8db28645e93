/* Criterion host of misuse_scenario (misuse_scenario.c). */
#include <criterion/criterion.h>

#include "misuse_scenario.h"

Test(graph_run, misuse_returns_error_codes, .timeout = 120)
{
    cr_assert_eq(misuse_scenario(), 0, "see stderr");
}
