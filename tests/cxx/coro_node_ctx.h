/* The context of coro_node.dag (coro_node.cpp): each task writes its own
 * word (1 ran after its inputs, 2 not), readers are ordered after writers
 * by the graph's edges or by the event. The functions are declared by
 * dagc's header. */
#ifndef CORO_NODE_CTX_H
#define CORO_NODE_CTX_H
#include "dagrt.h"

struct cn_ctx {
    dagrt *rt;
    dagrt_event ev;   /* set by `other`, awaited by `stream` */
    int input, stream, other, load, use, done;
};
#endif
