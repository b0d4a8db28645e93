/* Plain host of the end-to-end race scenarios, for the ThreadSanitizer run
 * (Criterion cannot run under TSan; see docs/testing.md). */
#include <stdio.h>
#include <stdlib.h>

#include "race_e2e.h"

int main(void)
{
    const char *fr = getenv("DAGC_E2E_FRAMES");
    int frames = fr && atoi(fr) > 0 ? atoi(fr) : 2000;
    int v = race_e2e_sound(frames);
    int missed = race_e2e_control(5000);
    printf("%d violations in race-free graphs; negative control %s\n", v,
           missed ? "MISSED" : "caught");
    return v != 0 || missed != 0;
}
