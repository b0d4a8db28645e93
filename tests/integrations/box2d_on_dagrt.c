/* box2d_on_dagrt.c - links into Box2D's own unit-test app with
 * -Wl,--wrap=b2CreateWorld, so that every world its tests create runs its
 * jobs on one libdagrt pool through integrations/box2d (the tests' own
 * workerCount kept: Box2D then spreads its work over that many tasks). */
#include <stdio.h>
#include <stdlib.h>

#include "dagrt_box2d.h"
#include "scenario.h"

b2WorldId __real_b2CreateWorld(const b2WorldDef *def);

static dagrt *the_rt;
static dagrt_box2d the_tasks;
static unsigned long worlds;

static void report(void)
{
    printf("box2d_on_dagrt: %lu worlds on libdagrt (%d threads), %lu tasks on the pool, %lu inline\n",
           worlds, dagrt_thread_count(the_rt), (unsigned long)dagrt_box2d_spawned(&the_tasks),
           (unsigned long)dagrt_box2d_inline_runs(&the_tasks));
    dagrt_destroy(the_rt);
}

b2WorldId __wrap_b2CreateWorld(const b2WorldDef *def)
{
    if (!the_rt) {   /* the first world: on the tests' main thread */
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = 2;
        the_rt = dagrt_create(&cfg);
        if (!the_rt || dagrt_box2d_init(&the_tasks, the_rt) != 0) {
            fprintf(stderr, "box2d_on_dagrt: no runtime\n");
            exit(1);
        }
        atexit(report);
    }
    b2WorldDef d = *def;
    int n = d.workerCount;
    dagrt_box2d_world_def(&the_tasks, &d);
    if (n > 0)
        d.workerCount = n;
    worlds++;
    return __real_b2CreateWorld(&d);
}

/* Box2D's own test app, its main renamed (tests/integrations/meson.build),
 * hosted by the plain driver (tests/scenario/driver.c): every test of it,
 * as `box2d_unit_tests` alone would run them. */
int box2d_tests_main(int argc, char **argv);

static int box2d_unit_tests(void)
{
    static char name[] = "box2d_unit_tests";
    char *argv[] = { name, NULL };
    return box2d_tests_main(1, argv) != 0;
}

const scenario scenario_table[] = {
    { "box2d_unit_tests", box2d_unit_tests, NULL },
    { NULL, NULL, NULL },
};
