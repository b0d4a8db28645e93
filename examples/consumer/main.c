/* An out-of-tree program using an installed dagc + libdagrt (see Makefile). */
#include <stdio.h>

#include "hello.h"

void hello_load_a(struct hello_ctx *c) { for (int i = 0; i < 1000; i++) c->a[i] = i; }
void hello_load_b(struct hello_ctx *c) { for (int i = 0; i < 1000; i++) c->b[i] = 2 * i; }

size_t hello_sum_count(struct hello_ctx *c) { (void)c; return 1000; }

void hello_sum(struct hello_ctx *c, size_t begin, size_t end)
{
    long s = 0;
    for (size_t i = begin; i < end; i++)
        s += c->a[i] + c->b[i];
    atomic_fetch_add(&c->total, s);
}

void hello_report(struct hello_ctx *c) { c->reported = atomic_load(&c->total); }

int main(void)
{
    dagrt *rt = dagrt_create(NULL);
    if (!rt)
        return 1;
    static struct hello_ctx ctx;
    int rc = hello_run(rt, &ctx);
    dagrt_destroy(rt);
    printf("hello: run %s, total %ld (expected %ld)\n", rc ? dagrt_strerror(rc) : "ok",
           ctx.reported, 3L * 999 * 1000 / 2);
    return rc != 0 || ctx.reported != 3L * 999 * 1000 / 2;
}
