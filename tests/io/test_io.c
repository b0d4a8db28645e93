/* test_io.c - Criterion host of io_scenarios.c. */
#include <criterion/criterion.h>

#include "io_scenarios.h"

Test(io, cancel_nesting) { cr_assert_eq(io_scn_cancel_nesting(), 0); }
Test(io, cancel_cross_thread) { cr_assert_eq(io_scn_cancel_cross_thread(), 0); }
Test(io, clock) { cr_assert_eq(io_scn_clock(), 0); }
