/*
 * dagrt_box2d.c - Box2D v3's enqueueTask / finishTask on libdagrt (see
 * dagrt_box2d.h).
 */
#include <stdatomic.h>
#include <string.h>

#define DAGRT_BOX2D_INSIDE_ 1
#include "dagrt_box2d.h"

int dagrt_box2d_init(dagrt_box2d *a, dagrt *rt)
{
    if (!a || !rt)
        return DAGRT_EINVAL;
    memset(a, 0, sizeof *a);
    a->rt = rt;
    for (int i = 0; i < DAGRT_BOX2D_SLOTS; i++) {
        dagrt_group_init(&a->slot[i].group);   /* off any thread's stack: atomic counts */
        atomic_init(&a->slot[i].busy, 0);
    }
    atomic_init(&a->next, 0);
    atomic_init(&a->spawned, 0);
    atomic_init(&a->inline_runs, 0);
    return 0;
}

void dagrt_box2d_world_def(dagrt_box2d *a, b2WorldDef *def)
{
    int n = dagrt_thread_count(a->rt);
    def->workerCount = n > 0 ? n : 1;
    def->enqueueTask = dagrt_box2d_enqueue;
    def->finishTask = dagrt_box2d_finish;
    def->userTaskContext = a;
}

unsigned long dagrt_box2d_spawned(const dagrt_box2d *a)
{
    /* relaxed: a statistic. */
    return atomic_load_explicit(&((dagrt_box2d *)a)->spawned, memory_order_relaxed);
}

unsigned long dagrt_box2d_inline_runs(const dagrt_box2d *a)
{
    /* relaxed: a statistic. */
    return atomic_load_explicit(&((dagrt_box2d *)a)->inline_runs, memory_order_relaxed);
}

static void run_slot(void *arg)
{
    dagrt_box2d_slot *s = arg;
    s->task(s->context);
}

void *dagrt_box2d_enqueue(b2TaskCallback *task, void *taskContext, void *userContext)
{
    dagrt_box2d *a = userContext;
    /* relaxed: where to start looking; the CAS on busy decides. */
    unsigned start = atomic_load_explicit(&a->next, memory_order_relaxed);
    for (int k = 0; k < DAGRT_BOX2D_SLOTS; k++) {
        unsigned i = (start + (unsigned)k) % DAGRT_BOX2D_SLOTS;
        dagrt_box2d_slot *s = &a->slot[i];
        int idle = 0;
        /* acquire: the slot's last finish (release below) is done with it. */
        if (!atomic_compare_exchange_strong_explicit(&s->busy, &idle, 1, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        atomic_store_explicit(&a->next, i + 1, memory_order_relaxed);   /* a hint */
        s->task = task;
        s->context = taskContext;
        if (dagrt_spawn(a->rt, &s->group, run_slot, s) == 0) {
            /* Box2D goes back to its own loops now (the solver's
             * orchestration, the narrow phase beside the tree task) and
             * calls no runtime function until finishTask: inside a task
             * the job would stay in our private tail until then, and the
             * other threads idle (dagrt.h, dagrt_publish). */
            (void)dagrt_publish(a->rt);
            atomic_fetch_add_explicit(&a->spawned, 1, memory_order_relaxed);   /* a statistic */
            return s;
        }
        /* release: nothing of the slot is in use. */
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        break;
    }
    /* No slot or no descriptor: Box2D takes NULL as "ran inline". relaxed:
     * a statistic. */
    atomic_fetch_add_explicit(&a->inline_runs, 1, memory_order_relaxed);
    task(taskContext);
    return NULL;
}

void dagrt_box2d_finish(void *userTask, void *userContext)
{
    dagrt_box2d *a = userContext;
    dagrt_box2d_slot *s = userTask;
    if (!s)
        return;
    /* Helps on a runtime thread; polls on another (docs/runtime.md). The
     * group is valid and off the stack, so the wait cannot fail. */
    (void)dagrt_group_wait(a->rt, &s->group);
    /* release: the task's effects and our reads of the slot happen before
     * its reuse by the next enqueue (acquire CAS above). */
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}
