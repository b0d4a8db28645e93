/*
 * core/fork.c - inline fork-join (dagrt_fork / dagrt_join in dagrt.h): the
 * out-of-line halves (a fork that grows the deque, exposing the tail when
 * a thief asked or a thread is idle, a join whose fork is not on top of
 * the private tail), dagrt_worker_get, and the same API out of line for
 * compilers without the inline version.
 */
#include "core.h"

/* The runtime's structures are built from dagrt.h's definitions (see
 * there); what is left to check is that the atomics they hold are plain
 * sized, and that a fork fits its storage. */
_Static_assert(sizeof(_Atomic int64_t) == sizeof(int64_t) && sizeof(_Atomic int) == sizeof(int32_t) &&
               sizeof(_Atomic(void *)) == sizeof(void *), "atomics are not plain-sized");
_Static_assert(sizeof(dagrt__forked_view) == sizeof(rt_forked), "the fork view is the fork");
_Static_assert(sizeof(rt_forked) <= sizeof(dagrt_forked), "dagrt_forked too small");

dagrt_worker *dagrt_worker_get_v(dagrt *rt, unsigned view_version)
{
    if (view_version != DAGRT_WORKER_VIEW_VERSION)
        return NULL;   /* another layout: its forks run as plain calls */
    rt_ctx *c = rt ? rt_ctx_here(rt) : NULL;
    if (!c)
        return NULL;
    /* Forks live in their thread's deque and are joined there: code on a
     * fiber (which may migrate between its fork and its join) gets NULL. */
    char here;
    uintptr_t sp = (uintptr_t)(void *)&here;
    if (sp < (uintptr_t)(void *)c->stack_lo || sp >= (uintptr_t)(void *)c->stack_hi)
        return NULL;
    return (dagrt_worker *)(void *)c;
}

/* The plain entry point, for callers of the function itself (a binary
 * built before the view was versioned has the current one). */
dagrt_worker *(dagrt_worker_get)(dagrt *rt)
{
    return dagrt_worker_get_v(rt, DAGRT_WORKER_VIEW_VERSION);
}

/* The inline fork's rule (dagrt.h): a thief asked, or a thread is idle. */
static inline bool fork_policy_expose(rt_ctx *c)
{
    /* relaxed: hints, see dagrt_fork. */
    return atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed) ||
           atomic_load_explicit(c->fj_nidle, memory_order_relaxed) > 0;
}

/* How much of the tail a fork's exposure makes public: in fork-join the
 * oldest fork is the biggest piece of work, and one is what a thief takes,
 * so normally just that one; the forks left private are joined on the fast
 * path. One per idle thread when several are idle (at most half the tail),
 * so many thieves ramp up without a round trip each. */
static void expose_forks(rt_ctx *c)
{
    /* relaxed: the owner's own indices; the other two are hints. */
    int64_t s = atomic_load_explicit(&c->deque.split, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&c->deque.bottom, memory_order_relaxed);
    if (b <= s) {
        rt_deque_take_request(&c->deque);   /* nothing to give */
        return;
    }
    /* relaxed: a hint for how much to expose. */
    int64_t n = atomic_load_explicit(c->fj_nidle, memory_order_relaxed), half = (b - s + 1) / 2;
    n = n < 1 ? 1 : n > half ? half : n;
    rt_expose_to(c->rt, c, s + n);
}

/* The inline fork found the deque full: push with growth. */
RT_NOINLINE void dagrt__fork_slow(dagrt_worker *w, dagrt_forked *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_forked *fk = (rt_forked *)(void *)f;
    if (RT_UNLIKELY(!rt_deque_push_private(&c->deque, &fk->task))) {
        /* Out of memory: run it now; its join then finds it done. */
        fk->task.fn(fk->task.arg);
        fk->group.local = 0;
        return;
    }
    if (fork_policy_expose(c))
        expose_forks(c);
}

RT_NOINLINE void dagrt__fork_expose(dagrt_worker *w)
{
    expose_forks((rt_ctx *)(void *)w);
}

/* The fork is not on top of the private tail: it is public, was stolen,
 * or was run by this thread's own helping (or joins came out of order).
 * Help until it is ours again or done. */
RT_NOINLINE bool dagrt__join_slow(dagrt_worker *w, dagrt_forked *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_forked *fk = (rt_forked *)(void *)f;
    for (;;) {
        if (rt_group_is_done(&fk->group, c))
            return false;
        rt_task *t = rt_find_task(c);
        if (!t)
            break;
        if (t == &fk->task)
            return true;      /* still public, nobody took it: ours again */
        if (RT_UNLIKELY(c->handoff))
            rt_handoff(c);
        rt_task_run(c, t);
    }
    /* Stolen and still running: the group wait helps, then sleeps. */
    (void)rt_group_wait_thread(c->rt, c, &fk->group);
    return false;
}

#if !defined(__GNUC__) && !defined(__clang__)
/* Other compilers get dagrt.h's inline functions out of line here, with
 * its one fork setup. */
int dagrt_fork(dagrt_worker *w, dagrt_forked *f, dagrt_fn fn, void *arg)
{
    dagrt__forked_view *fv = (dagrt__forked_view *)(void *)f;
    if (!f || !fn) {
        if (f)
            dagrt__fork_setup_done(fv, w);
        return DAGRT_EINVAL;
    }
    if (!w) {
        fv->task.fn = fn;
        fv->task.arg = arg;
        fn(arg);
        return 0;
    }
    dagrt__fork_setup(fv, w, fn, arg);
    dagrt__fork_slow(w, f);
    return 0;
}

bool dagrt_join_take(dagrt_worker *w, dagrt_forked *f)
{
    return w && f ? dagrt__join_slow(w, f) : false;
}

void dagrt_join(dagrt_worker *w, dagrt_forked *f)
{
    if (dagrt_join_take(w, f))
        ((rt_forked *)(void *)f)->task.fn(((rt_forked *)(void *)f)->task.arg);
}
#endif
