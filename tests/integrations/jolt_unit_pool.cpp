/* jolt_unit_pool.cpp - the shared pool of jolt_unit_pool.h. At exit: the
 * runtime is destroyed, and the run fails if no job ran on it (the
 * substitution did not take). */
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "dagrt.h"
#include "scenario.h"

namespace dagrt_jolt_test {

static dagrt *the_rt;
static std::atomic<unsigned long> jobs{0};

static void at_exit()
{
    unsigned long n = jobs.load(std::memory_order_relaxed);   /* relaxed: every test has finished */
    std::printf("jolt_unit_tests: %lu Jolt jobs ran on libdagrt (%d threads)\n", n,
                the_rt ? dagrt_thread_count(the_rt) : 0);
    std::fflush(stdout);
    if (the_rt)
        dagrt_destroy(the_rt);
    if (n == 0)
        std::_Exit(1);
}

dagrt *shared_runtime()
{
    if (!the_rt) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = 2;
        the_rt = dagrt_create(&cfg);
        if (!the_rt) {
            std::printf("jolt_unit_tests: dagrt_create failed\n");
            std::_Exit(1);
        }
        std::atexit(at_exit);
    }
    return the_rt;
}

void count_jobs(unsigned long n)
{
    jobs.fetch_add(n, std::memory_order_relaxed);   /* relaxed: a sum read at exit */
}

} // namespace dagrt_jolt_test

/* Jolt's own UnitTests app, its main renamed (tests/integrations/meson.build),
 * hosted by the plain driver (tests/scenario/driver.c): the doctest run
 * as `jolt_unit_tests` alone would make it. The check that jobs ran on
 * the pool is at exit, as before. */
int jolt_tests_main(int argc, char **argv);

static int jolt_unit_tests()
{
    static char name[] = "jolt_unit_tests";
    char *argv[] = { name, nullptr };
    return jolt_tests_main(1, argv) != 0;
}

const scenario scenario_table[] = {
    { "jolt_unit_tests", jolt_unit_tests, nullptr },
    { nullptr, nullptr, nullptr },
};
