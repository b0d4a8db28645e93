/* A program using the engine library through its public header alone. */
#include <stdio.h>

#include "engine.h"

int main(void)
{
    dagrt *rt = dagrt_create(NULL);
    if (!rt)
        return 1;
    struct engine_ctx ctx = {0, 0, 0};
    int rc = engine_frame(rt, &ctx);
    dagrt_destroy(rt);
    printf("engine: frame %d, drawn %d, presented %d, mixed %d\n", rc, ctx.drawn, ctx.presented,
           ctx.mixed);
    return rc != 0 || ctx.drawn != 1 || ctx.presented != 1 || ctx.mixed != 1;
}
