/* The context of coro_graph.dag (coro_graph.cpp): each task writes its own
 * word (1 ran as it should, 2 ran too early or off the main thread), the
 * parallel task one byte per index; every reader is ordered after the
 * writer by the graph's edges or by the wait. The tasks' functions are
 * declared by dagc's header (C linkage). */
#ifndef CORO_GRAPH_CTX_H
#define CORO_GRAPH_CTX_H
#include <stddef.h>

#include "dagrt.h"

#define CG_WIDE 64
struct cg_ctx {
    dagrt *rt;
    int input, a, b, c, d, present;
    unsigned char wide[CG_WIDE];
};
#endif
