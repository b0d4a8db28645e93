#ifndef FMEM_SCENARIO_H
#define FMEM_SCENARIO_H
/* Frame memory (fmem_scenario.c): `frames` frames of each case; returns
 * the failed expectations (each printed to stderr). */
int fmem_scenario(int frames);
/* Under ASan with FMEM_UAF=1: uses a retired frame's memory, which ASan
 * must report (the process ends); else returns 0. */
int fmem_uaf(void);
#endif
