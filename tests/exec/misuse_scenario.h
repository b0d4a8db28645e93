#ifndef MISUSE_SCENARIO_H
#define MISUSE_SCENARIO_H
#include "dagrt.h"

/* Returns the number of failed expectations (printed to stderr). */
int misuse_scenario(void);

struct misuse_ctx;
/* pipe_misuse.c: the pipeline part, on misuse_scenario's runtime (two
 * workers, created on this thread). */
int pipe_misuse_scenario(dagrt *rt);
/* Mode 3 of the tasks: G_pipeline_submit and G_pipeline_drain on c->pipe from inside a task. */
void pipe_misuse_nested(struct misuse_ctx *c, int *submit_rc, int *drain_rc);
void pipe_misuse_spin_us(int us);
#endif
