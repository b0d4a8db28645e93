/* box2d_frame.c - middleware inside a graph node: physics.dag's physics
 * node steps Box2D's falling-hinges world (its determinism check), its
 * jobs on the same pool through integrations/box2d, with 1-3 frames in
 * flight and 0-2 workers. The node's own thread helps while Box2D's jobs
 * run (finishTask is a helping group wait); the world must reach the
 * sleep step and hash of Box2D's test/test_determinism.c, and every node
 * must see its frame's predecessors done. */
#include <stdio.h>

#include "dagrt_box2d.h"
#include "determinism.h"
#include "physics.h"
#include "scenario.h"

struct physics_world {
    b2WorldId world;
    FallingHingeData *hinges;
    bool done;               /* the hinges slept: later frames step no more (physics only) */
};

#define EXPECTED_SLEEP_STEP 274      /* Box2D's test/test_determinism.c (float) */
#define EXPECTED_HASH 0xE86690F4u

void physics_frame_input(struct physics_ctx *c)
{
    /* seq_cst: plain counters; the graph orders the nodes, these check it. */
    atomic_fetch_add(&c->frames_input, 1);
}

void step_world(struct physics_ctx *c)
{
    int n = atomic_load(&c->frames_stepped);
    if (n + 1 > atomic_load(&c->frames_input))
        atomic_fetch_add(&c->order_errors, 1);
    struct physics_world *w = c->w;
    if (!w->done) {
        b2World_Step(w->world, 1.0f / 60.0f, 4);   /* Box2D's jobs on the pool, this thread helping */
        w->done = UpdateFallingHinges(w->world, w->hinges);
    }
    atomic_store(&c->frames_stepped, n + 1);
}

void physics_frame_render(struct physics_ctx *c)
{
    int n = atomic_load(&c->frames_rendered);
    if (n + 1 > atomic_load(&c->frames_stepped))
        atomic_fetch_add(&c->order_errors, 1);
    atomic_store(&c->frames_rendered, n + 1);
}

static int one(int workers, unsigned depth)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    static dagrt_box2d tasks;
    dagrt_box2d_init(&tasks, rt);
    b2WorldDef def = b2DefaultWorldDef();
    dagrt_box2d_world_def(&tasks, &def);
    static struct physics_ctx c;
    static struct physics_world w;
    c.w = &w;
    w.world = b2CreateWorld(&def);
    FallingHingeData data = CreateFallingHinges(w.world);
    w.hinges = &data;
    w.done = false;
    atomic_store(&c.frames_input, 0);
    atomic_store(&c.frames_stepped, 0);
    atomic_store(&c.frames_rendered, 0);
    atomic_store(&c.order_errors, 0);
    static physics_frame_pipeline_t p;
    int bad = 0, r = physics_frame_pipeline_init(&p, depth);
    int frames = 0;
    /* A frame's physics may be the one that finds the hinges asleep while
     * later frames are already submitted: those step nothing. */
    for (; r == 0 && frames < 500; frames++) {
        if (frames % 8 == 0) {
            r = physics_frame_pipeline_drain(rt, &p);   /* the main thread reads done only between drains */
            if (r != 0 || w.done)
                break;
        }
        r = physics_frame_pipeline_submit(rt, &p, &c);
    }
    if (r == 0)
        r = physics_frame_pipeline_drain(rt, &p);
    if (r != 0) {
        printf("box2d_frame: workers=%d depth=%u: %s\n", workers, depth, dagrt_strerror(r));
        bad++;
    }
    b2DestroyWorld(w.world);
    if (data.sleepStep != EXPECTED_SLEEP_STEP || data.hash != EXPECTED_HASH) {
        printf("box2d_frame: workers=%d depth=%u: sleep step %d hash 0x%08X, expected %d 0x%08X\n",
               workers, depth, data.sleepStep, data.hash, EXPECTED_SLEEP_STEP, EXPECTED_HASH);
        bad++;
    }
    int fi = atomic_load(&c.frames_input), fs = atomic_load(&c.frames_stepped), fr = atomic_load(&c.frames_rendered);
    if (atomic_load(&c.order_errors) != 0 || fi != frames || fs != frames || fr != frames) {
        printf("box2d_frame: workers=%d depth=%u: %d frames, %d inputs, %d steps, %d renders, %d out of order\n",
               workers, depth, frames, fi, fs, fr, atomic_load(&c.order_errors));
        bad++;
    }
    if (dagrt_box2d_spawned(&tasks) == 0 || dagrt_box2d_inline_runs(&tasks) != 0) {
        printf("box2d_frame: workers=%d depth=%u: %lu tasks on the pool, %lu inline\n", workers, depth,
               (unsigned long)dagrt_box2d_spawned(&tasks), (unsigned long)dagrt_box2d_inline_runs(&tasks));
        bad++;
    }
    DestroyFallingHinges(&data);
    dagrt_destroy(rt);
    printf("box2d_frame: workers=%d depth=%u: %d frames, sleep step %d: %s\n", workers, depth, frames,
           data.sleepStep, bad ? "FAIL" : "ok");
    return bad;
}

static int box2d_frame(void)
{
    int bad = 0;
    for (int w = 0; w <= 2; w++)
        for (unsigned d = 1; d <= 3; d++)
            bad += one(w, d);
    return bad ? 1 : 0;
}

/* Hosted by the plain driver (tests/scenario/driver.c). */
const scenario scenario_table[] = {
    {"box2d_frame", box2d_frame, NULL},
    {NULL, NULL, NULL},
};
