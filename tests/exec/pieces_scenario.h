#ifndef PIECES_SCENARIO_H
#define PIECES_SCENARIO_H
/* A plan frame's parallel task shared with the thread that polls beside
 * it (pieces_scenario.c, pieces.dag); returns the failed expectations
 * (each printed to stderr). */
int plan_pieces_scenario(void);
/* The same on the dynamic executor (DAGRT_PIPE=dynamic, which it checks). */
int dyn_pieces_scenario(void);
#endif
