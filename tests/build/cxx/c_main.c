/* The tasks of c_graph.dag in C, against the header of dagc --cxx. */
#include <stdio.h>

#include "c_graph.h"

void cg_fill(struct c_ctx *c) { for (int i = 0; i < 100; i++) c->in[i] = i; }
size_t cg_twice_count(struct c_ctx *c) { (void)c; return 100; }
void cg_twice(struct c_ctx *c, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i++)
        c->out[i] = 2 * c->in[i];
}
void cg_total(struct c_ctx *c) { for (int i = 0; i < 100; i++) c->sum += c->out[i]; }

int main(void)
{
    dagrt *rt = dagrt_create(NULL);
    if (!rt)
        return 1;
    static struct c_ctx ctx;
    int rc = cg_run(rt, &ctx);
    dagrt_destroy(rt);
    printf("c context: run %d, sum %ld (expected 9900)\n", rc, ctx.sum);
    return rc != 0 || ctx.sum != 9900;
}
