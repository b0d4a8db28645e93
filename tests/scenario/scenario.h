/*
 * scenario.h - the one scenario runner of the test tree (docs/testing.md,
 * "Scenarios"). A scenario is a function that runs one check and returns
 * the number of violations it saw (0 = pass). Each suite lists its
 * scenarios once, in an X-macro file (tests/SUITE/SUITE_list.h) of lines
 *
 *     SCENARIO(group, name, Criterion timeout in seconds, flags)
 *
 * read by the suite's table (scenario_table, the C side) and by
 * tests/scenario/meson.build (the Meson tests). Two hosts run the table:
 * criterion_host.c (a Criterion Test() per entry, suite unit or e2e) and
 * driver.c (the plain driver `DRIVER [NAME...]`, suite tsan and the cross
 * builds, where Criterion cannot go).
 */
#ifndef TEST_SCENARIO_H
#define TEST_SCENARIO_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The flags of a list entry. Meson reads them by name, C never needs them:
 * they are defined only so that the lists stay valid C. */
#define SCN_TSAN   1   /* a plain-driver Meson test in suite tsan */
#define SCN_FENCED 2   /* and again with DAGRT_NO_MEMBARRIER=1 (runtime/core/idle.c) */
#define SCN_WIN    4   /* Windows only: the line sits inside #if defined(_WIN32) */
#define SCN_POSIX  8   /* not on Windows: the line sits inside #if !defined(_WIN32) */

typedef struct scenario {
    const char *name;
    int (*fn)(void);               /* returns the number of violations */
    /* Not a scenario but an entry point of a child process that a scenario
     * starts as `DRIVER NAME [ARG]` (fn is then NULL); never run by "all". */
    int (*child)(const char *arg);
} scenario;

/* Every suite's table, ended by a NULL name; one per executable. */
extern const scenario scenario_table[];

#define EXPECT(c)                                                                   \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c);        \
            bad++;                                                                  \
        }                                                                           \
    } while (0)

/* The entry NAME of LIST, or NULL. */
const scenario *scenario_find(const scenario *list, const char *name);
/* The plain driver: `DRIVER NAME...` runs the scenarios named, `DRIVER` all
 * of them, `DRIVER CHILD [ARG]` a child entry. A watchdog turns a hang (a lost
 * wake-up) into a failure. Exit status 0 when no scenario saw a violation,
 * 1 when one did, 2 on a usage error, 3 on the watchdog. */
int scenario_main(int argc, char **argv, const scenario *list);

#ifdef __cplusplus
}
#endif

#endif
