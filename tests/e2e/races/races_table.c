/* races_table.c - the scenarios of races_list.h as scenario_table
 * (tests/scenario/scenario.h). */
#include <stdio.h>
#include <stdlib.h>

#include "race_e2e.h"
#include "scenario.h"

/* DAGC_E2E_FRAMES (races_long), else 2000 scaled by DAGC_TEST_SCALE. */
static int frames(void)
{
    const char *fr = getenv("DAGC_E2E_FRAMES"), *sc = getenv("DAGC_TEST_SCALE");
    if (fr && atoi(fr) > 0)
        return atoi(fr);
    double k = sc && atof(sc) > 0 ? atof(sc) : 1.0;
    return (int)(2000 * k) > 0 ? (int)(2000 * k) : 1;
}

static int race_free_graphs_never_overlap_conflicting_accesses(void)
{
    int v = race_e2e_sound(frames());
    printf("%d violations in race-free graphs\n", v);
    return v;
}

/* The checker itself: a race hidden from dagc must be caught at run time. */
static int negative_control_is_caught(void)
{
    int missed = race_e2e_control(5000);
    printf("negative control %s\n", missed ? "MISSED" : "caught");
    return missed;
}

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "races_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
