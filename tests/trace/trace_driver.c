/* trace_driver.c - plain host of the recorder's scenarios (suite tsan):
 * `trace_driver NAME`, exit status 0 when it saw no violations. */
#include "trace_scenarios.h"

int main(int argc, char **argv)
{
    return scenario_main(argc, argv, trace_scenarios);
}
