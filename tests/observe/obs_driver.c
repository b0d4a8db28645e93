/* obs_driver.c - plain host of the observer and trace scenarios (suite tsan):
 * `obs_driver NAME`, exit status 0 when it saw no violations. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "obs_scenarios.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    alarm(600);
    for (const obs_scenario *s = obs_scenarios; s->name; s++)
        if (strcmp(s->name, argv[1]) == 0) {
            int v = s->fn();
            if (v)
                fprintf(stderr, "%s: %d violations\n", s->name, v);
            return v ? 1 : 0;
        }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
