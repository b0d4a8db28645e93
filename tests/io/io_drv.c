/* io_drv.c - plain driver of io_scenarios.c (Criterion cannot run under
 * TSan: docs/testing.md). usage: io_drv SCENARIO */
#include <stdio.h>
#include <string.h>

#include "io_scenarios.h"

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(void); } all[] = {
        { "cancel_nesting", io_scn_cancel_nesting },
        { "cancel_cross_thread", io_scn_cancel_cross_thread },
        { "clock", io_scn_clock },
    };
    if (argc != 2) {
        fprintf(stderr, "usage: io_drv SCENARIO\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(argv[1], all[i].name) == 0)
            return all[i].fn();
    fprintf(stderr, "io_drv: no scenario %s\n", argv[1]);
    return 2;
}
