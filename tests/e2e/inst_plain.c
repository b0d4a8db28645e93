/* Plain host of inst_scenario (inst_scenario.c), for ThreadSanitizer. */
#include <stdio.h>

#include "inst_scenario.h"

int main(void)
{
    int bad = inst_scenario(200);
    printf("inst: %d failed expectations\n", bad);
    return bad != 0;
}
