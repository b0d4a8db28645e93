/* pipe_ahead.h - a pipeline's helper waiting for the caller's look-ahead
 * (pipe_ahead.c), listed in exec_list.h, hosted by tests/scenario/. */
#ifndef PIPE_AHEAD_H
#define PIPE_AHEAD_H

/* The entry pipe_ahead: violations seen. */
int pipe_ahead_scenario(void);

#endif
