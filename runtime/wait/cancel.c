/*
 * wait/cancel.c - cancel scopes, their links, and the clock of "waiting on
 * the world" (docs/design/io.md). A scope is a flag and a pointer to its
 * parent; whether it is cancelled is a walk up the chain, so a child needs
 * no registration with its parent (the API has no fini to undo one) and a
 * child's request never reaches up. Waits register cancel links (wait/cancel.h)
 * in one list per tree, kept by its root, which a request walks for the
 * links at or below the requested scope.
 *
 * DEADLINES. A scope may carry a deadline, set at its init and fixed for
 * its life (a scope with waits attached is never initialised again). A
 * wait reads the earliest deadline on its scope's chain once, as it
 * starts (rt_cancel_deadline), and uses it as its own deadline when it
 * comes first: the wait's own timer (wait/wait.h) ends it with
 * DAGRT_ETIMEDOUT, through the same one-winner take as any timed wait
 * (the one timed wait, wait/oneshot.c, whose owners wait/sync.c and
 * wait/io.c decide it; model tests/models/timed_wait.pml). So a scope's deadline
 * adds no protocol: no timer lives in the scope (which has no fini to take
 * one down), nothing walks its links when it passes.
 */
#include <stdatomic.h>

#include "cancel.h"
#include "dagrt.h"
#include "../os/os.h"
#include "spin.h"

#define RT_CANCEL_MAGIC 0x636e636cu   /* "cncl" */

typedef struct rt_cancel {
    uint32_t magic;
    _Atomic uint32_t requested;
    struct rt_cancel *parent;
    struct rt_cancel *root;          /* the top of the parent chain (itself for a root) */
    /* The root's only: a spinlock (wait/spin.h) over the links of the
     * whole tree (held for a few list operations, never across a
     * callback), the list, and the link whose on_cancel runs now. */
    _Atomic uint32_t lock;
    rt_cancel_link *head;
    rt_cancel_link *running;
    /* Set at init, then only read (DEADLINES). */
    uint64_t deadline;
} rt_cancel;

_Static_assert(sizeof(rt_cancel) <= sizeof(dagrt_cancel), "dagrt_cancel too small");

static inline rt_cancel *cancel_of(const dagrt_cancel *c) { return (rt_cancel *)(uintptr_t)c; }

/* The root's lock over its tree's links (wait/spin.h). */
static void tree_lock(rt_cancel *r) { rt_spin_lock(&r->lock); }
static void tree_unlock(rt_cancel *r) { rt_spin_unlock(&r->lock); }

/* Takes l off the root's list (r's lock held). */
static void tree_unlink(rt_cancel *r, rt_cancel_link *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        r->head = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->attached = false;
}

/* Whether s or an ancestor is cancelled. */
static bool chain_requested(const rt_cancel *s)
{
    for (; s; s = s->parent) {
        if (s->magic != RT_CANCEL_MAGIC)
            return false;
        /* acquire: pairs with dagrt_cancel_request's release. */
        if (atomic_load_explicit(&s->requested, memory_order_acquire))
            return true;
    }
    return false;
}

/* Whether s is `top` or below it. */
static bool under(const rt_cancel *s, const rt_cancel *top)
{
    for (; s; s = s->parent)
        if (s == top)
            return true;
    return false;
}

uint64_t dagrt_now_ns(void)
{
    return rt_os_now_ns();
}

void dagrt_cancel_init(dagrt_cancel *c, dagrt_cancel *parent)
{
    dagrt_cancel_init_deadline(c, parent, DAGRT_FOREVER);
}

void dagrt_cancel_init_deadline(dagrt_cancel *c, dagrt_cancel *parent, uint64_t deadline_ns)
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
    s->root = s->parent ? s->parent->root : s;
    atomic_init(&s->lock, 0);
    s->head = NULL;
    s->running = NULL;
    s->deadline = deadline_ns;
}

uint64_t rt_cancel_deadline(const dagrt_cancel *c)
{
    uint64_t d = DAGRT_FOREVER;
    for (const rt_cancel *s = c ? cancel_of(c) : NULL; s; s = s->parent) {
        if (s->magic != RT_CANCEL_MAGIC)
            break;
        if (s->deadline < d)
            d = s->deadline;
    }
    return d;
}

uint64_t dagrt_cancel_deadline(const dagrt_cancel *c)
{
    return rt_cancel_deadline(c);
}

void dagrt_cancel_request(dagrt_cancel *c)
{
    rt_cancel *s = cancel_of(c);
    if (!c || s->magic != RT_CANCEL_MAGIC)
        return;
    /* release: whoever sees the request (dagrt_cancel_requested's acquire)
     * also sees what the requester wrote before it. */
    atomic_store_explicit(&s->requested, 1, memory_order_release);
    /* Every link at or below s. A link attached before the flag was set is
     * in the list now (attach checks the flag under the lock); one attached
     * after saw the flag and was refused. */
    rt_cancel *r = s->root;
    tree_lock(r);
    for (;;) {
        rt_cancel_link *l = r->head;
        while (l && !under(cancel_of(l->scope), s))
            l = l->next;
        if (!l)
            break;
        if (r->running) {
            /* Another request's callback runs: one at a time per tree, so
             * that detach has one slot to wait on. */
            tree_unlock(r);
            rt_os_yield();
            tree_lock(r);
            continue;
        }
        tree_unlink(r, l);
        r->running = l;
        tree_unlock(r);
        l->on_cancel(l);
        tree_lock(r);
        r->running = NULL;
    }
    tree_unlock(r);
}

bool rt_cancel_valid(const dagrt_cancel *c)
{
    return c && cancel_of(c)->magic == RT_CANCEL_MAGIC;
}

int rt_cancel_attach(dagrt_cancel *c, rt_cancel_link *l)
{
    if (!rt_cancel_valid(c))
        return DAGRT_EINVAL;
    rt_cancel *s = cancel_of(c);
    rt_cancel *r = s->root;
    tree_lock(r);
    if (chain_requested(s)) {
        tree_unlock(r);
        return DAGRT_ECANCELED;
    }
    l->scope = c;
    l->prev = NULL;
    l->next = r->head;
    if (r->head)
        r->head->prev = l;
    r->head = l;
    l->attached = true;
    tree_unlock(r);
    return 0;
}

void rt_cancel_detach(rt_cancel_link *l)
{
    rt_cancel *r = cancel_of(l->scope)->root;
    tree_lock(r);
    if (l->attached)
        tree_unlink(r, l);
    /* Taken by a request: wait until its callback is done with l. on_cancel
     * never blocks, so this is short. */
    while (r->running == l) {
        tree_unlock(r);
        rt_os_yield();
        tree_lock(r);
    }
    tree_unlock(r);
}

bool dagrt_cancel_requested(const dagrt_cancel *c)
{
    if (!c)
        return false;
    return chain_requested(cancel_of(c));
}
