#ifndef INST_SCENARIO_H
#define INST_SCENARIO_H
/* Runs `frames` frames of each case; returns the failed expectations
 * (each printed to stderr). */
int inst_scenario(int frames);
#endif
