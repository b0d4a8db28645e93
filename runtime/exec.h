/*
 * exec.h - the graph executor's internals (not installed). The public part
 * is the descriptor section of dagrt.h; this header only tells the rest of
 * the runtime what the executor offers.
 */
#ifndef DAGRT_EXEC_H
#define DAGRT_EXEC_H

#include <stdbool.h>

#include "dagrt.h"

/* True while the calling thread runs the body of a graph node. */
bool dagrt__exec_in_node(void);

#endif
