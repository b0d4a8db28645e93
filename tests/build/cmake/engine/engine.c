/* The engine library: both graphs' tasks and one frame running both. */
#include "engine.h"

void render_draw(struct engine_ctx *c) { c->drawn++; }
void render_present(struct engine_ctx *c) { c->presented += c->drawn; }
void audio_mix(struct engine_ctx *c) { c->mixed++; }

int engine_frame(dagrt *rt, struct engine_ctx *ctx)
{
    int rc = render_run(rt, ctx);
    return rc != 0 ? rc : audio_run(rt, ctx);
}
