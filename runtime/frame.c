/*
 * frame.c - inline fork-join frames (dagrt_fork / dagrt_join in dagrt.h):
 * the out-of-line halves (a fork that grows the deque, exposing the tail
 * when a thief asked or a thread is idle, a join whose frame is not on top
 * of the private tail), dagrt_worker_get, and the same API out of line for
 * compilers without the inline version.
 */
#include "scheduler.h"

/* dagrt.h's inline fork and join read the head of rt_ctx and of rt_frame
 * through their own view structs; these keep the two layouts one. */
#if defined(__GNUC__) || defined(__clang__)
#define RT_SAME_OFFSET(a, fa, b, fb) \
    _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa " moved: update dagrt.h's " #b)
RT_SAME_OFFSET(rt_ctx, deque.top, dagrt__wview, top);
RT_SAME_OFFSET(rt_ctx, deque.splitreq, dagrt__wview, splitreq);
RT_SAME_OFFSET(rt_ctx, deque.split, dagrt__wview, split);
RT_SAME_OFFSET(rt_ctx, deque.bottom, dagrt__wview, bottom);
RT_SAME_OFFSET(rt_ctx, deque.buf, dagrt__wview, buf);
RT_SAME_OFFSET(rt_ctx, fj_nidle, dagrt__wview, nidle);
RT_SAME_OFFSET(rt_deque_buf, mask, struct dagrt__dbuf, mask);
RT_SAME_OFFSET(rt_deque_buf, slot, struct dagrt__dbuf, slot);
RT_SAME_OFFSET(rt_frame, task.fn, dagrt__fview, fn);
RT_SAME_OFFSET(rt_frame, task.arg, dagrt__fview, arg);
RT_SAME_OFFSET(rt_frame, task.group, dagrt__fview, group_);
RT_SAME_OFFSET(rt_frame, task.flags, dagrt__fview, flags);
RT_SAME_OFFSET(rt_frame, group.word, dagrt__fview, word);
RT_SAME_OFFSET(rt_frame, group.owner, dagrt__fview, owner);
RT_SAME_OFFSET(rt_frame, group.local, dagrt__fview, local);
RT_SAME_OFFSET(rt_frame, group.armed, dagrt__fview, armed);
RT_SAME_OFFSET(rt_frame, group.magic, dagrt__fview, magic);
_Static_assert(sizeof(_Atomic int64_t) == sizeof(int64_t) && sizeof(_Atomic int) == sizeof(int32_t) &&
               sizeof(_Atomic(void *)) == sizeof(void *), "atomics are not plain-sized");
_Static_assert(DAGRT__FRAME_FLAGS == (RT_TASK_OWNED | RT_TASK_FRAME), "frame flags");
_Static_assert(DAGRT__GROUP_MAGIC == RT_GROUP_MAGIC, "group magic");
#endif
_Static_assert(sizeof(rt_frame) <= sizeof(dagrt_frame), "dagrt_frame too small");

dagrt_worker *dagrt_worker_get(dagrt *rt)
{
    rt_ctx *c = rt ? rt_ctx_here(rt) : NULL;
    if (!c)
        return NULL;
    /* Frames live in their thread's deque and are joined there: code on a
     * fiber (which may migrate between its fork and its join) gets NULL. */
    char here;
    uintptr_t sp = (uintptr_t)(void *)&here;
    if (sp < (uintptr_t)(void *)c->stack_lo || sp >= (uintptr_t)(void *)c->stack_hi)
        return NULL;
    return (dagrt_worker *)(void *)c;
}

/* The inline fork's rule (dagrt.h): a thief asked, or a thread is idle. */
static inline bool frame_policy_expose(rt_ctx *c)
{
    /* relaxed: hints, see dagrt_fork. */
    return atomic_load_explicit(&c->deque.splitreq, memory_order_relaxed) ||
           atomic_load_explicit(c->fj_nidle, memory_order_relaxed) > 0;
}

/* How much of the tail a frame exposure makes public: in fork-join the
 * oldest frame is the biggest piece of work, and one is what a thief takes,
 * so normally just that one; the frames left private are joined on the fast
 * path. One per idle thread when several are idle (at most half the tail),
 * so many thieves ramp up without a round trip each. */
static void frame_expose(rt_ctx *c)
{
    /* relaxed: the owner's own indices; the other two are hints. */
    int64_t s = atomic_load_explicit(&c->deque.split, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&c->deque.bottom, memory_order_relaxed);
    if (b <= s) {
        rt_deque_take_request(&c->deque);   /* nothing to give */
        return;
    }
    int64_t n = atomic_load_explicit(c->fj_nidle, memory_order_relaxed), half = (b - s + 1) / 2;
    n = n < 1 ? 1 : n > half ? half : n;
    rt_expose_to(c->rt, c, s + n);
}

/* The inline fork found the deque full: push with growth. */
RT_NOINLINE void dagrt__fork_slow(dagrt_worker *w, dagrt_frame *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_frame *fr = (rt_frame *)(void *)f;
    if (RT_UNLIKELY(!rt_deque_push_private(&c->deque, &fr->task))) {
        /* Out of memory: run it now; its join then finds it done. */
        fr->task.fn(fr->task.arg);
        fr->group.local = 0;
        return;
    }
    if (frame_policy_expose(c))
        frame_expose(c);
}

RT_NOINLINE void dagrt__fork_expose(dagrt_worker *w)
{
    frame_expose((rt_ctx *)(void *)w);
}

/* The frame is not on top of the private tail: it is public, was stolen,
 * or was run by this thread's own helping (or joins came out of order).
 * Help until it is ours again or done. */
RT_NOINLINE bool dagrt__join_slow(dagrt_worker *w, dagrt_frame *f)
{
    rt_ctx *c = (rt_ctx *)(void *)w;
    rt_frame *fr = (rt_frame *)(void *)f;
    for (;;) {
        if (rt_group_is_done(&fr->group, c))
            return false;
        rt_task *t = rt_find_task(c);
        if (!t)
            break;
        if (t == &fr->task)
            return true;      /* still public, nobody took it: ours again */
        if (RT_UNLIKELY(c->handoff))
            rt_handoff(c);
        rt_task_run(c, t);
    }
    /* Stolen and still running: the group wait helps, then sleeps. */
    (void)rt_group_wait_thread(c->rt, c, &fr->group);
    return false;
}

#if !defined(__GNUC__) && !defined(__clang__)
/* Other compilers get dagrt.h's inline functions out of line here. */
int dagrt_fork(dagrt_worker *w, dagrt_frame *f, dagrt_fn fn, void *arg)
{
    rt_frame *fr = (rt_frame *)(void *)f;
    if (!f || !fn) {
        if (f) {
            fr->group.owner = (rt_ctx *)(void *)w;
            atomic_init(&fr->group.word, 0);
            fr->group.local = 0;
            fr->group.armed = 0;
        }
        return DAGRT_EINVAL;
    }
    fr->task.fn = fn;
    fr->task.arg = arg;
    if (!w) {
        fn(arg);
        return 0;
    }
    rt_ctx *c = (rt_ctx *)(void *)w;
    fr->task.group = &fr->group;
    fr->task.flags = RT_TASK_OWNED | RT_TASK_FRAME;
    atomic_init(&fr->group.word, 0);
    fr->group.owner = c;
    fr->group.local = 1;
    fr->group.armed = 0;
    fr->group.magic = RT_GROUP_MAGIC;
    dagrt__fork_slow(w, f);
    return 0;
}

bool dagrt_join_take(dagrt_worker *w, dagrt_frame *f)
{
    return w && f ? dagrt__join_slow(w, f) : false;
}

void dagrt_join(dagrt_worker *w, dagrt_frame *f)
{
    if (dagrt_join_take(w, f))
        ((rt_frame *)(void *)f)->task.fn(((rt_frame *)(void *)f)->task.arg);
}
#endif
