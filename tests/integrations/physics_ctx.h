/* physics_ctx.h - the context of physics.dag: one Box2D world, stepped by
 * the graph's physics node with its jobs on the same pool. */
#ifndef PHYSICS_CTX_H
#define PHYSICS_CTX_H
#include <stdatomic.h>
#include <stdbool.h>

/* Box2D's side, in box2d_frame.c: this header needs no Box2D (the e2e
 * suite compiles every .dag of the tree with its include). */
struct physics_world;

struct physics_ctx {
    struct physics_world *w;
    /* Atomics: frame N+1's input (main) runs beside frame N's physics. */
    _Atomic int frames_input, frames_stepped, frames_rendered;
    _Atomic int order_errors;   /* a node ran before its frame's predecessor */
};

void physics_frame_input(struct physics_ctx *c);
void step_world(struct physics_ctx *c);
void physics_frame_render(struct physics_ctx *c);
#endif
