/* Plain host of policy_scenario (policy_scenario.c), for ThreadSanitizer. */
#include <stdio.h>

#include "policy_scenario.h"

int main(void)
{
    int bad = policy_scenario();
    printf("policy: %d failed expectations\n", bad);
    return bad != 0;
}
