/*
 * scenario.h - what the trace and observer scenarios share (docs/testing.md:
 * a scenario function hosted twice, by Criterion and by a plain driver for
 * suite tsan): the table entry, EXPECT (counts a violation in the
 * scenario's local `bad`) and the plain driver's main (scenario.c).
 */
#ifndef TEST_SCENARIO_H
#define TEST_SCENARIO_H

#include <stdio.h>

typedef struct scenario {
    const char *name;
    int (*fn)(void);   /* returns the number of violations */
} scenario;

#define EXPECT(c)                                                                   \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c);        \
            bad++;                                                                  \
        }                                                                           \
    } while (0)

/* The entry NAME of LIST (ended by a NULL name), or NULL. */
const scenario *scenario_find(const scenario *list, const char *name);
/* The plain driver: `DRIVER NAME` runs scenario NAME of LIST; exit status
 * 0 when it saw no violations, 1 when it did, 2 on a usage error. */
int scenario_main(int argc, char **argv, const scenario *list);

#endif
