/* driver.c - the plain host of a suite's scenarios (scenario.h): linked with
 * the suite's scenario_table, it is that suite's driver. */
#include "scenario.h"

int main(int argc, char **argv)
{
    return scenario_main(argc, argv, scenario_table);
}
