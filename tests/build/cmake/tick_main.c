/* tick.dag's tasks: the parent's own and the imported subgraph's. */
#include <stdio.h>

#include "tick.h"

void tick_begin(struct tick_ctx *c) { c->started++; }
void sub_step(struct tick_ctx *c) { c->stepped += c->started; }

int main(void)
{
    dagrt *rt = dagrt_create(NULL);
    if (!rt)
        return 1;
    struct tick_ctx ctx = {0, 0};
    int rc = tick_run(rt, &ctx);
    dagrt_destroy(rt);
    printf("tick: run %d, started %d, stepped %d\n", rc, ctx.started, ctx.stepped);
    return rc != 0 || ctx.started != 1 || ctx.stepped != 1;
}
