#ifndef SHUFFLE_SCENARIO_H
#define SHUFFLE_SCENARIO_H
/* The shuffled serial switch on shuffle.dag (shuffle_scenario.c); returns
 * the failed expectations (each printed to stderr). */
int shuffle_scenario(void);
/* An OR node run at its first input (shuffle.dag's orjoin, orfixed). */
int shuffle_or_scenario(void);
/* The planted bug beside a guest that helps (shuffle.dag's engined). */
int shuffle_engine_scenario(void);
#endif
