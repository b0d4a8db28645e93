/* Plain host of the end-to-end scenario, for the ThreadSanitizer run
 * (Criterion cannot run under TSan; see docs/testing.md). */
#include <stdio.h>

#include "e2e_check.h"

int main(void)
{
    int v = e2e_run_all(e2e_all, e2e_nall, e2e_scaled(2000));
    printf("%d violations\n", v);
    return v != 0;
}
