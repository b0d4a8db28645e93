/* Plain host of misuse_scenario (misuse_scenario.c), for ThreadSanitizer. */
#include <stdio.h>

#include "misuse_scenario.h"

int main(void)
{
    int bad = misuse_scenario();
    printf("misuse: %d failed expectations\n", bad);
    return bad != 0;
}
