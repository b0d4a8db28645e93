/* obs_driver.c - plain host of the observer and trace scenarios (suite tsan):
 * `obs_driver NAME`, exit status 0 when it saw no violations. */
#include "obs_scenarios.h"

int main(int argc, char **argv)
{
    return scenario_main(argc, argv, obs_scenarios);
}
