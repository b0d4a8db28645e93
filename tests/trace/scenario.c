/* scenario.c - the plain driver shared by the trace and observer scenarios. */
#include "scenario.h"

#include <string.h>
#include <unistd.h>

const scenario *scenario_find(const scenario *list, const char *name)
{
    for (const scenario *s = list; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

int scenario_main(int argc, char **argv, const scenario *list)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    alarm(600);
    const scenario *s = scenario_find(list, argv[1]);
    if (!s) {
        fprintf(stderr, "unknown scenario %s\n", argv[1]);
        return 2;
    }
    int v = s->fn();
    if (v)
        fprintf(stderr, "%s: %d violations\n", s->name, v);
    return v ? 1 : 0;
}
