/* Plain host of the end-to-end race scenarios, for the ThreadSanitizer run
 * (Criterion cannot run under TSan; see docs/testing.md). */
#include <stdio.h>
#include <stdlib.h>

#include "race_e2e.h"

int main(void)
{
    const char *fr = getenv("DAGC_E2E_FRAMES"), *sc = getenv("DAGC_TEST_SCALE");
    double k = sc && atof(sc) > 0 ? atof(sc) : 1.0;
    int frames = fr && atoi(fr) > 0 ? atoi(fr) : (int)(2000 * k) > 0 ? (int)(2000 * k) : 1;
    int v = race_e2e_sound(frames);
    int missed = race_e2e_control(5000);
    printf("%d violations in race-free graphs; negative control %s\n", v,
           missed ? "MISSED" : "caught");
    return v != 0 || missed != 0;
}
