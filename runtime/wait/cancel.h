/*
 * wait/cancel.h - cancel links: how a wait learns that its cancel scope was
 * cancelled (internal; wait/cancel.c).
 *
 * A waiter registers an rt_cancel_link on a scope for the length of its
 * wait. dagrt_cancel_request(s) calls on_cancel of every link attached to
 * s or to any scope below s, once each; links of s's ancestors and of
 * other branches are left alone.
 *
 * How the scope finds its descendants' links without knowing its children
 * (the public struct has no fini, so a child could never unregister): every
 * link lives in ONE list kept by the root of its scope's tree (the scope
 * with no parent, found once at dagrt_cancel_init), and a request walks
 * that list, taking the links whose scope has s on its parent chain.
 *
 * Lifetime rules (docs/runtime.md, "Timed waits, sleeps and cancellation"):
 *  - a scope must outlive every wait attached to it or to a scope below it
 *    (its parent chain is walked while those waits are in progress), and a
 *    parent must outlive its children;
 *  - a scope with waits attached must not be initialised again.
 *
 * on_cancel runs on the requesting thread, outside the root's lock, one at
 * a time per tree; it must not block, and must not attach or detach links
 * of the same tree. After rt_cancel_detach returns, on_cancel of that link
 * is not running and never will.
 */
#ifndef DAGRT_CANCEL_H
#define DAGRT_CANCEL_H

#include <stdbool.h>
#include <stdint.h>

#include "dagrt.h"

typedef struct rt_cancel_link {
    struct rt_cancel_link *next, *prev;   /* wait/cancel.c: the root's list */
    const dagrt_cancel *scope;            /* wait/cancel.c: set by attach */
    bool attached;                        /* wait/cancel.c: under the root's lock */
    void (*on_cancel)(struct rt_cancel_link *l);   /* set before attach */
} rt_cancel_link;

/* Registers l on c. 0, or DAGRT_ECANCELED (l not attached) when c or an
 * ancestor is cancelled already; DAGRT_EINVAL for a scope that was never
 * initialised. */
int rt_cancel_attach(dagrt_cancel *c, rt_cancel_link *l);
/* Takes l off (a no-op if a request took it already). On return, l's
 * on_cancel is not running. */
void rt_cancel_detach(rt_cancel_link *l);
/* Whether c is a scope (dagrt_cancel_init ran on it). */
bool rt_cancel_valid(const dagrt_cancel *c);
/* The earliest deadline on c's chain (c and every scope above it;
 * wait/cancel.c, DEADLINES), DAGRT_FOREVER for none or a NULL c. */
uint64_t rt_cancel_deadline(const dagrt_cancel *c);

#endif
