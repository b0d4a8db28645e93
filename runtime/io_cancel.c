/*
 * io_cancel.c - cancel scopes and the clock of "waiting on the world"
 * (docs/design/io.md). A scope is a flag and a pointer to its parent; whether
 * it is cancelled is a walk up the chain, so a child needs no
 * registration with its parent (the API has no fini to undo one) and a
 * child's request never reaches up.
 */
#include <stdatomic.h>

#include "dagrt.h"
#include "os/os.h"

#define RT_CANCEL_MAGIC 0x636e636cu   /* "cncl" */

typedef struct rt_cancel {
    uint32_t magic;
    _Atomic uint32_t requested;
    const struct rt_cancel *parent;
} rt_cancel;

_Static_assert(sizeof(rt_cancel) <= sizeof(dagrt_cancel), "dagrt_cancel too small");

static inline rt_cancel *cancel_of(const dagrt_cancel *c) { return (rt_cancel *)(uintptr_t)c; }

uint64_t dagrt_now_ns(void)
{
    return rt_os_now_ns();
}

void dagrt_cancel_init(dagrt_cancel *c, dagrt_cancel *parent)
{
    if (!c)
        return;
    rt_cancel *s = cancel_of(c);
    s->magic = RT_CANCEL_MAGIC;
    atomic_init(&s->requested, 0);
    /* A parent that is not a scope (never initialised) is ignored rather
     * than walked: the walk would read garbage. */
    s->parent = (parent && parent != c && cancel_of(parent)->magic == RT_CANCEL_MAGIC)
                    ? cancel_of(parent) : NULL;
}

void dagrt_cancel_request(dagrt_cancel *c)
{
    rt_cancel *s = cancel_of(c);
    if (!c || s->magic != RT_CANCEL_MAGIC)
        return;
    /* release: whoever sees the request (dagrt_cancel_requested's acquire)
     * also sees what the requester wrote before it. */
    atomic_store_explicit(&s->requested, 1, memory_order_release);
}

bool dagrt_cancel_requested(const dagrt_cancel *c)
{
    if (!c)
        return false;
    for (const rt_cancel *s = cancel_of(c); s; s = s->parent) {
        if (s->magic != RT_CANCEL_MAGIC)
            return false;
        /* acquire: pairs with dagrt_cancel_request's release. */
        if (atomic_load_explicit(&s->requested, memory_order_acquire))
            return true;
    }
    return false;
}
